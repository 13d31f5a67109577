//===- PoptorchOps.td - poptorch op definitions ------------*- tablegen -*-===//
//
// The structural ops of the dialect (linear algebra, convolution, pooling,
// normalisation, reductions, data movement). Pure elementwise ops are
// generated from the op table into PoptorchElementwiseOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_OPS_TD
#define POPTORCH_OPS_TD

include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

def Poptorch_Tensor : RankedTensorOf<[AnyType]>;
def Poptorch_BoolTensor : RankedTensorOf<[I1]>;

include "poptorch/Dialect/Poptorch/IR/PoptorchElementwiseOps.td"
include "poptorch/Dialect/Poptorch/IR/PoptorchRuntimeOps.td"

//===----------------------------------------------------------------------===//
// Constants, casts, identities
//===----------------------------------------------------------------------===//

def Poptorch_ConstantOp : Poptorch_Op<"constant", [Pure, ConstantLike]> {
  let summary = "a constant tensor (model constants and Python scalars)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "attr-dict $value `:` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_CastOp : Poptorch_Op<"cast", [Pure]> {
  let summary = "element type conversion with PyTorch's rounding rules";
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_DropoutOp : Poptorch_Op<"dropout", [Pure]> {
  let summary = "dropout; the identity when not training";
  let arguments = (ins Poptorch_Tensor:$input, F64Attr:$p, BoolAttr:$train);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_ClampOp : Poptorch_Op<"clamp", [Pure, AttrSizedOperandSegments]> {
  let summary = "min(max(input, min), max), NaN-propagating; absent bounds are unbounded";
  let description = [{
    torch.clamp: a NaN in the input or in a bound gives NaN; where min > max the
    result is max. Input and bounds broadcast to the result shape. Decomposed
    into poptorch.maximum and poptorch.minimum.
  }];
  let arguments = (ins Poptorch_Tensor:$input, Optional<Poptorch_Tensor>:$min,
                       Optional<Poptorch_Tensor>:$max);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input (`min` $min^)? (`max` $max^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Poptorch_MatmulOp : Poptorch_Op<"matmul", [Pure]> {
  let summary = "torch.matmul semantics (1-D promotion, batch broadcasting)";
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_LinearOp : Poptorch_Op<"linear", [Pure]> {
  let summary = "input @ weight^T + bias";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$weight,
                       Optional<Poptorch_Tensor>:$bias);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Poptorch_AddmmOp : Poptorch_Op<"addmm", [Pure]> {
  let summary = "beta * input + alpha * (lhs @ rhs)";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Poptorch_SdpaOp : Poptorch_Op<"sdpa", [Pure]> {
  let summary = "scaled dot-product attention (torch.nn.functional semantics)";
  let arguments = (ins Poptorch_Tensor:$query, Poptorch_Tensor:$key, Poptorch_Tensor:$value,
                       Optional<Poptorch_Tensor>:$mask,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout_p,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW, as PyTorch)
//===----------------------------------------------------------------------===//

def Poptorch_ConvolutionOp : Poptorch_Op<"convolution", [Pure]> {
  let summary = "N-d convolution, NC(D)HW layout, weight O I/groups kH kW";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$weight,
                       Optional<Poptorch_Tensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$transposed,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the lowering computes this convolution directly in
    /// channels-last layout, reading its weight as (kH, kW, I, O)
    /// (Convolution.cpp): f32, f16 or bf16 (input and weight alike), 2-D,
    /// groups 1, not transposed, a window larger than one pixel or output
    /// channels in whole blocks of 16 (a pointwise convolution with fewer
    /// fills its vectors of channels poorly: NCHW keeps the pixels in
    /// them), input channels in whole blocks of 8 or fewer than 8 (an
    /// image's colour planes) and at least 128 output pixels (fewer
    /// reuse each weight too little: im2col's matmul was faster).
    /// poptorch-decompose then gives its weight that layout through a
    /// permute, which poptorch-prepack-parameters applies to a parameter
    /// once, at upload.
    bool isChannelsLastDirect();
  }];
}

// ---- convolution, pooling and normalisation family (ops-nn): N-d pools, one
// TableGen class per kind with the number of spatial dims (an aten pool's
// kernel_size may have one entry, and a rank-4 input is either batched 2-D or
// unbatched 3-D, so the op says which).

class Poptorch_MaxPoolOp<string mnemonic, int spatial> : Poptorch_Op<mnemonic, [Pure]> {
  let summary = "max pooling with the flat index of each maximum in its input plane";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Poptorch_Tensor:$result, Poptorch_Tensor:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result) `,` type($indices)";
  let hasVerifier = 1;
  let extraClassDeclaration = "static constexpr int kSpatialDims = " # spatial # ";";
}
def Poptorch_MaxPool2dOp : Poptorch_MaxPoolOp<"max_pool2d", 2>;
def Poptorch_MaxPool3dOp : Poptorch_MaxPoolOp<"max_pool3d", 3>;

class Poptorch_AvgPoolOp<string mnemonic, int spatial> : Poptorch_Op<mnemonic, [Pure]> {
  let summary = "average pooling (count_include_pad, ceil_mode, divisor_override)";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = "static constexpr int kSpatialDims = " # spatial # ";";
}
def Poptorch_AvgPool2dOp : Poptorch_AvgPoolOp<"avg_pool2d", 2>;
def Poptorch_AvgPool3dOp : Poptorch_AvgPoolOp<"avg_pool3d", 3>;

class Poptorch_AdaptiveAvgPoolOp<string mnemonic, int spatial> : Poptorch_Op<mnemonic, [Pure]> {
  let summary = "adaptive average pooling: window i is [floor(i*in/out), ceil((i+1)*in/out))";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$output_size);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = "static constexpr int kSpatialDims = " # spatial # ";";
}
def Poptorch_AdaptiveAvgPool2dOp : Poptorch_AdaptiveAvgPoolOp<"adaptive_avg_pool2d", 2>;
def Poptorch_AdaptiveAvgPool3dOp : Poptorch_AdaptiveAvgPoolOp<"adaptive_avg_pool3d", 3>;

class Poptorch_AdaptiveMaxPoolOp<string mnemonic, int spatial> : Poptorch_Op<mnemonic, [Pure]> {
  let summary = "adaptive max pooling with the flat index of each maximum in its input plane";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$output_size);
  let results = (outs Poptorch_Tensor:$result, Poptorch_Tensor:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result) `,` type($indices)";
  let hasVerifier = 1;
  let extraClassDeclaration = "static constexpr int kSpatialDims = " # spatial # ";";
}
def Poptorch_AdaptiveMaxPool2dOp : Poptorch_AdaptiveMaxPoolOp<"adaptive_max_pool2d", 2>;
def Poptorch_AdaptiveMaxPool3dOp : Poptorch_AdaptiveMaxPoolOp<"adaptive_max_pool3d", 3>;

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

def Poptorch_BatchNormOp : Poptorch_Op<"batch_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "batch normalisation with running statistics (inference)";
  let arguments = (ins Poptorch_Tensor:$input, Optional<Poptorch_Tensor>:$weight,
                       Optional<Poptorch_Tensor>:$bias, Optional<Poptorch_Tensor>:$mean,
                       Optional<Poptorch_Tensor>:$var,
                       DefaultValuedAttr<BoolAttr, "false">:$training, F64Attr:$eps);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? (`mean` $mean^)? (`var` $var^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Poptorch_LayerNormOp : Poptorch_Op<"layer_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "layer normalisation over the trailing normalized_shape dims";
  let arguments = (ins Poptorch_Tensor:$input, Optional<Poptorch_Tensor>:$weight,
                       Optional<Poptorch_Tensor>:$bias,
                       DenseI64ArrayAttr:$normalized_shape, F64Attr:$eps);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Poptorch_SoftmaxLikeOp<string mnemonic> : Poptorch_Op<mnemonic, [Pure]> {
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
def Poptorch_SoftmaxOp : Poptorch_SoftmaxLikeOp<"softmax"> {
  let summary = "softmax along `dim`";
}
def Poptorch_LogSoftmaxOp : Poptorch_SoftmaxLikeOp<"log_softmax"> {
  let summary = "log-softmax along `dim`";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Poptorch_ReduceOp<string mnemonic> : Poptorch_Op<mnemonic, [Pure]> {
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
def Poptorch_ReduceSumOp : Poptorch_ReduceOp<"reduce_sum"> {
  let summary = "sum over `dims`";
}
def Poptorch_ReduceMeanOp : Poptorch_ReduceOp<"reduce_mean"> {
  let summary = "mean over `dims`";
}
def Poptorch_ReduceMaxOp : Poptorch_ReduceOp<"reduce_max"> {
  let summary = "maximum over `dims` (NaN-propagating)";
}

//===----------------------------------------------------------------------===//
// Reductions, scans, sorting and losses (family: reductions). Verifiers in
// lib/Dialect/Poptorch/IR/ReductionOps.cpp; lowered in
// lib/Conversion/PoptorchToLinalg/{Reductions,ScanSort}.cpp or decomposed in
// lib/Transforms/DecomposeReductions.cpp.
//===----------------------------------------------------------------------===//

def Poptorch_ReduceMinOp : Poptorch_ReduceOp<"reduce_min"> {
  let summary = "minimum over `dims` (NaN-propagating)";
}
def Poptorch_ReduceProdOp : Poptorch_ReduceOp<"reduce_prod"> {
  let summary = "product over `dims`";
}
def Poptorch_ReduceAllOp : Poptorch_ReduceOp<"reduce_all"> {
  let summary = "true where every element over `dims` is nonzero (bool or uint8 result)";
}
def Poptorch_ReduceAnyOp : Poptorch_ReduceOp<"reduce_any"> {
  let summary = "true where some element over `dims` is nonzero (bool or uint8 result)";
}
def Poptorch_NansumOp : Poptorch_ReduceOp<"nansum"> {
  let summary = "sum over `dims` with NaN counted as zero";
}
def Poptorch_CountNonzeroOp : Poptorch_ReduceOp<"count_nonzero"> {
  let summary = "number of nonzero elements over `dims` (int64 result)";
}
def Poptorch_LogsumexpOp : Poptorch_ReduceOp<"logsumexp"> {
  let summary = "log(sum(exp(x))) over `dims`, computed stably";
}

def Poptorch_VectorNormOp : Poptorch_Op<"vector_norm", [Pure]> {
  let summary = "the `ord`-norm over `dims` (0, inf, -inf or any p)";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<F64Attr, "2.0">:$ord,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Poptorch_VarianceOp<string mnemonic, dag res>
    : Poptorch_Op<mnemonic, [Pure]> {
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<F64Attr, "1.0">:$correction,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = res;
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let hasVerifier = 1;
}
def Poptorch_VarOp : Poptorch_VarianceOp<"var", (outs Poptorch_Tensor:$result)> {
  let summary = "variance over `dims`: sum((x - mean)^2) / max(N - correction, 0)";
}
def Poptorch_StdOp : Poptorch_VarianceOp<"std", (outs Poptorch_Tensor:$result)> {
  let summary = "standard deviation over `dims` (sqrt of poptorch.var)";
}
def Poptorch_VarMeanOp : Poptorch_VarianceOp<"var_mean",
    (outs Poptorch_Tensor:$result, Poptorch_Tensor:$mean)> {
  let summary = "variance and mean over `dims`";
}
def Poptorch_StdMeanOp : Poptorch_VarianceOp<"std_mean",
    (outs Poptorch_Tensor:$result, Poptorch_Tensor:$mean)> {
  let summary = "standard deviation and mean over `dims`";
}

def Poptorch_AminmaxOp : Poptorch_Op<"aminmax", [Pure]> {
  let summary = "minimum and maximum over `dims` (NaN-propagating)";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Poptorch_Tensor:$min, Poptorch_Tensor:$max);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let hasVerifier = 1;
}

// Arg-reductions along one dim (or over the flattened input when `dim` is
// absent): the first index of the extreme value; a NaN is the extreme value.
class Poptorch_ArgReduceOp<string mnemonic, dag res>
    : Poptorch_Op<mnemonic, [Pure]> {
  let arguments = (ins Poptorch_Tensor:$input, OptionalAttr<I64Attr>:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = res;
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let hasVerifier = 1;
}
def Poptorch_MaxDimOp : Poptorch_ArgReduceOp<"max_dim",
    (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices)> {
  let summary = "maximum along `dim` and its first index";
}
def Poptorch_MinDimOp : Poptorch_ArgReduceOp<"min_dim",
    (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices)> {
  let summary = "minimum along `dim` and its first index";
}
def Poptorch_ArgmaxOp : Poptorch_ArgReduceOp<"argmax",
    (outs Poptorch_Tensor:$indices)> {
  let summary = "first index of the maximum along `dim`";
}
def Poptorch_ArgminOp : Poptorch_ArgReduceOp<"argmin",
    (outs Poptorch_Tensor:$indices)> {
  let summary = "first index of the minimum along `dim`";
}
def Poptorch_MaxOp : Poptorch_ArgReduceOp<"max", (outs Poptorch_Tensor:$values)> {
  let summary = "maximum of all elements (NaN-propagating); an error on empty input";
}
def Poptorch_MinOp : Poptorch_ArgReduceOp<"min", (outs Poptorch_Tensor:$values)> {
  let summary = "minimum of all elements (NaN-propagating); an error on empty input";
}
def Poptorch_MedianDimOp : Poptorch_ArgReduceOp<"median_dim",
    (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices)> {
  let summary = "lower median along `dim` and its index (NaN if any)";
}
def Poptorch_MedianOp : Poptorch_ArgReduceOp<"median",
    (outs Poptorch_Tensor:$values)> {
  let summary = "lower median (NaN if any)";
}

// Inclusive scans along `dim`, in order (as PyTorch's CPU kernels).
class Poptorch_ScanOp<string mnemonic, dag res>
    : Poptorch_Op<mnemonic, [Pure]> {
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim);
  let results = res;
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let hasVerifier = 1;
}
def Poptorch_CumsumOp : Poptorch_ScanOp<"cumsum", (outs Poptorch_Tensor:$result)> {
  let summary = "cumulative sum along `dim`";
}
def Poptorch_CumprodOp : Poptorch_ScanOp<"cumprod", (outs Poptorch_Tensor:$result)> {
  let summary = "cumulative product along `dim`";
}
def Poptorch_LogcumsumexpOp : Poptorch_ScanOp<"logcumsumexp",
    (outs Poptorch_Tensor:$result)> {
  let summary = "log of the cumulative sum of exp along `dim`, computed stably";
}
def Poptorch_CummaxOp : Poptorch_ScanOp<"cummax",
    (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices)> {
  let summary = "running maximum along `dim` and its (last) index";
}
def Poptorch_CumminOp : Poptorch_ScanOp<"cummin",
    (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices)> {
  let summary = "running minimum along `dim` and its (last) index";
}

def Poptorch_SortOp : Poptorch_Op<"sort", [Pure]> {
  let summary = "stable sort along `dim`; the results keep the first k of the order";
  let description = [{
    Values and int64 indices of the stable sort of `input` along `dim`
    (NaN is larger than every number, as in PyTorch). The results may be
    shorter than the input along `dim` (torch.topk): they hold the first
    entries of the sorted order.
  }];
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$descending);
  let results = (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let hasVerifier = 1;
}

def Poptorch_KthvalueOp : Poptorch_Op<"kthvalue", [Pure]> {
  let summary = "the k-th smallest value along `dim` and its index";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$k, I64Attr:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let hasVerifier = 1;
}

def Poptorch_SafeSoftmaxOp : Poptorch_SoftmaxLikeOp<"safe_softmax"> {
  let summary = "softmax along `dim`; 0 where the whole slice is -inf";
}

// Losses (forward), reduction: 0 none, 1 mean, 2 sum. `operands` are the
// optional weights after input and target.
class Poptorch_LossOp<string mnemonic, dag attrs, dag operands = (ins),
                      dag res = (outs Poptorch_Tensor:$result),
                      list<Trait> traits = []>
    : Poptorch_Op<mnemonic, !listconcat([Pure], traits)> {
  let arguments = !con((ins Poptorch_Tensor:$input, Poptorch_Tensor:$target),
                       operands,
                       (ins DefaultValuedAttr<I64Attr, "1">:$reduction), attrs);
  let results = res;
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}
def Poptorch_MseLossOp : Poptorch_LossOp<"mse_loss", (ins)> {
  let summary = "(input - target)^2";
}
def Poptorch_SmoothL1LossOp : Poptorch_LossOp<"smooth_l1_loss",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$beta)> {
  let summary = "|d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta";
}
def Poptorch_HuberLossOp : Poptorch_LossOp<"huber_loss",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$delta)> {
  let summary = "|d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta)";
}
def Poptorch_SoftMarginLossOp : Poptorch_LossOp<"soft_margin_loss", (ins)> {
  let summary = "log(1 + exp(-target * input))";
}
def Poptorch_BinaryCrossEntropyOp : Poptorch_LossOp<"binary_cross_entropy", (ins),
    (ins Optional<Poptorch_Tensor>:$weight)> {
  let summary = "-weight (t log(x) + (1 - t) log(1 - x)), logs clamped at -100";
  let assemblyFormat = [{
    $input `,` $target (`weight` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
}
def Poptorch_MultiMarginLossOp : Poptorch_LossOp<"multi_margin_loss",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$p, DefaultValuedAttr<F64Attr, "1.0">:$margin),
    (ins Optional<Poptorch_Tensor>:$weight)> {
  let summary = "multi-class hinge loss over the last dim, class indices in target";
  let assemblyFormat = [{
    $input `,` $target (`weight` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
}
def Poptorch_NllLossOp : Poptorch_LossOp<"nll_loss",
    (ins DefaultValuedAttr<I64Attr, "-100">:$ignore_index),
    (ins Optional<Poptorch_Tensor>:$weight),
    (outs Poptorch_Tensor:$result, Poptorch_Tensor:$total_weight)> {
  let summary = "negative log likelihood, classes along dim 1 (dim 0 for 1-D input)";
  let assemblyFormat = [{
    $input `,` $target (`weight` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
}
def Poptorch_MultilabelMarginLossOp : Poptorch_LossOp<"multilabel_margin_loss", (ins),
    (ins), (outs Poptorch_Tensor:$result, Poptorch_Tensor:$is_target)> {
  let summary = "multi-class multi-label hinge loss; target lists classes, ended by -1";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Poptorch_ReshapeOp : Poptorch_Op<"reshape", [Pure]> {
  let summary = "row-major reshape to the result type's shape";
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_PermuteOp : Poptorch_Op<"permute", [Pure]> {
  let summary = "result dim i is input dim dims[i]";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_TransposeOp : Poptorch_Op<"transpose", [Pure]> {
  let summary = "swap two dimensions";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim0, I64Attr:$dim1);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_ExpandOp : Poptorch_Op<"expand", [Pure]> {
  let summary = "broadcast to the result type's shape (numpy rules)";
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_SliceOp : Poptorch_Op<"slice", [Pure]> {
  let summary = "strided slice along `dim`; the length is the result's";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim, I64Attr:$start,
                       DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_SliceInsertOp : Poptorch_Op<"slice_insert", [Pure]> {
  let summary = "input with `source` written at start + i * step along `dim`";
  let description = [{
    The inverse of poptorch.slice: `source` has the input's shape except
    along `dim`, where its length is the number of positions written. A
    strided update of a view (`x[::2] += y`) is one such op instead of a
    concatenation of every element and gap.
  }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$source,
                       I64Attr:$dim, I64Attr:$start,
                       DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $source `into` $input attr-dict `:` type($source) `into` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Poptorch_SelectOp : Poptorch_Op<"select", [Pure]> {
  let summary = "take index `index` along `dim`, dropping that dim";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim, I64Attr:$index);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_CatOp : Poptorch_Op<"cat", [Pure]> {
  let summary = "concatenate along `dim`";
  let arguments = (ins Variadic<Poptorch_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_EmbeddingOp : Poptorch_Op<"embedding", [Pure]> {
  let summary = "gather rows of `weight` by integer `indices`";
  let arguments = (ins Poptorch_Tensor:$weight, Poptorch_Tensor:$indices);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$weight `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Random numbers (ops-nn family)
//===----------------------------------------------------------------------===//

// Counter-based: element i of the op with stream number `stream` is a
// function of (seed, call counter, stream, i) -- a splitmix64 mix -- so the
// ops vectorize, never fold, and the program's random state (an i64 argument
// [seed, calls] that each call advances) reseeds without recompiling.
class Poptorch_RandomOp<string mnemonic, string what> : Poptorch_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins Poptorch_Tensor:$state, Optional<Poptorch_Tensor>:$p,
                       DefaultValuedAttr<F64Attr, "0.0">:$a, OptionalAttr<F64Attr>:$b,
                       I64Attr:$stream);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $state (`p` $p^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}
def Poptorch_RandUniformOp : Poptorch_RandomOp<"rand_uniform", "uniform in [a, b) (b defaults to 1)">;
def Poptorch_RandNormalOp : Poptorch_RandomOp<"rand_normal", "normal with mean a and std b (default 1)">;
def Poptorch_RandExponentialOp : Poptorch_RandomOp<"rand_exponential", "exponential with rate a">;
def Poptorch_RandBernoulliOp : Poptorch_RandomOp<"rand_bernoulli", "1 with probability p (tensor) or a, else 0">;
def Poptorch_RandIntOp : Poptorch_RandomOp<"rand_int", "integers uniform in [a, b) (b defaults to the dtype's range)">;
// Data movement: reordering, padding, indexing, resampling (ops-move family)
//===----------------------------------------------------------------------===//

def Poptorch_FlipOp : Poptorch_Op<"flip", [Pure]> {
  let summary = "reverse the order of elements along `dims`";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_RollOp : Poptorch_Op<"roll", [Pure]> {
  let summary = "rotate elements by `shifts[i]` along `dims[i]` (no dims: the flattened tensor)";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$shifts,
                       DenseI64ArrayAttr:$dims);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_TileOp : Poptorch_Op<"tile", [Pure]> {
  let summary = "Tensor.repeat: each result dim repeats the aligned input dim (leading dims are new)";
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_PadOp : Poptorch_Op<"pad", [Pure]> {
  let summary = "constant / reflect / replicate / circular padding of the trailing dims";
  let description = [{
    `pad` is in torch.nn.functional.pad order: (before, after) pairs starting
    from the last dim. Negative entries crop. Constant padding fills with the
    0-d `value`.
  }];
  let arguments = (ins Poptorch_Tensor:$input, Optional<Poptorch_Tensor>:$value,
                       DenseI64ArrayAttr:$pad, StrAttr:$mode);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input (`value` $value^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Poptorch_TriangleOp : Poptorch_Op<"triangle", [Pure]> {
  let summary = "tril / triu: zero the elements above (below, if `upper`) diagonal `diagonal`";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$diagonal,
                       DefaultValuedAttr<BoolAttr, "false">:$upper);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_DiagonalOp : Poptorch_Op<"diagonal", [Pure]> {
  let summary = "the diagonal `offset` of the (dim1, dim2) planes, appended as the last dim";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$offset, I64Attr:$dim1,
                       I64Attr:$dim2);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_DiagEmbedOp : Poptorch_Op<"diag_embed", [Pure]> {
  let summary = "the last input dim on diagonal `offset` of new (dim1, dim2) planes, zero elsewhere";
  let description = [{ Negative dim1 / dim2 count from the end of the result's dims. }];
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$offset, I64Attr:$dim1,
                       I64Attr:$dim2);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_UnfoldOp : Poptorch_Op<"unfold", [Pure]> {
  let summary = "Tensor.unfold: windows of `size` every `step` along `dim`, window as last dim";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim, I64Attr:$size, I64Attr:$step);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_ChannelShuffleOp : Poptorch_Op<"channel_shuffle", [Pure]> {
  let summary = "dim 1 viewed as (groups, C / groups), transposed and flattened";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$groups);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_Im2colOp : Poptorch_Op<"im2col", [Pure]> {
  let summary = "torch.nn.functional.unfold: sliding (N,) C, H, W blocks as columns";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$stride);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_GatherOp : Poptorch_Op<"gather", [Pure]> {
  let summary = "torch.gather: result[i] = input[i with dim replaced by index[i]]";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$index, I64Attr:$dim);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input `,` $index attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_IndexOp : Poptorch_Op<"index", [Pure]> {
  let summary = "advanced indexing: input dims `dims` indexed by broadcast integer tensors";
  let description = [{
    PyTorch's rules: the index tensors broadcast together; if the indexed
    dims are adjacent, the broadcast shape replaces them in place, otherwise
    it comes first. Negative indices count from the end. Out-of-range
    indices computed by the model are clamped (the capture checks constant
    ones).
  }];
  let arguments = (ins Poptorch_Tensor:$input, Variadic<Poptorch_Tensor>:$indices,
                       DenseI64ArrayAttr:$dims);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input `[` $indices `]` attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_TakeOp : Poptorch_Op<"take", [Pure]> {
  let summary = "torch.take: elements of the flattened input at `index`";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$index);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input `,` $index attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_ScatterOp : Poptorch_Op<"scatter", [Pure]> {
  let summary = "torch.scatter / scatter_reduce: src[i] combined into input at index[i] along dim";
  let description = [{
    `reduce` is none (assignment), sum (or add), prod (or multiply), mean,
    amax or amin;
    `include_self` = false reduces only over the scattered values. `src` may
    be a 0-d tensor (scatter.value). Runs sequentially in index order.
  }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$index, Poptorch_Tensor:$src,
                       I64Attr:$dim, DefaultValuedAttr<StrAttr, "\"none\"">:$reduce,
                       DefaultValuedAttr<BoolAttr, "true">:$include_self);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input `[` $index `]` `=` $src attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Poptorch_IndexPutOp : Poptorch_Op<"index_put", [Pure]> {
  let summary = "input with values written (or added) at advanced indices of dims `dims`";
  let description = [{
    The indexed region is the result of poptorch.index with the same indices;
    `values` broadcasts to it and is multiplied by `alpha` when accumulating.
  }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$values,
                       Variadic<Poptorch_Tensor>:$indices, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<BoolAttr, "false">:$accumulate,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input `[` $indices `]` `=` $values attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Poptorch_MaskedScatterOp : Poptorch_Op<"masked_scatter", [Pure]> {
  let summary = "consecutive elements of `source` written where `mask` is true (row-major)";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_BoolTensor:$mask,
                       Poptorch_Tensor:$source);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input `,` $mask `,` $source attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_UpsampleOp : Poptorch_Op<"upsample", [Pure]> {
  let summary = "interpolation of the trailing spatial dims to the result's size";
  let description = [{
    `mode`: nearest, nearest_exact, linear (1-3 spatial dims) or cubic (2).
    `scale_*` are the user's scale factors (torch uses 1 / scale for the
    source coordinates when given, else input / output size); `scale_w` is
    the last dim, `scale_h` the one before, `scale_d` the one before that.
  }];
  let arguments = (ins Poptorch_Tensor:$input, StrAttr:$mode,
                       DefaultValuedAttr<BoolAttr, "false">:$align_corners,
                       OptionalAttr<F64Attr>:$scale_d, OptionalAttr<F64Attr>:$scale_h,
                       OptionalAttr<F64Attr>:$scale_w);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

// ---- PopTorch helpers (blocks): run-time printing (poptorch.ipu_print_tensor)

def Poptorch_PrintTensorOp : Poptorch_Op<"print_tensor",
    [MemoryEffects<[MemWrite]>, AllTypesMatch<["input", "result"]>]> {
  let summary = "prints the input's value when the program runs; returns the input";
  let description = [{
    Lowered to a call of the runtime's `poptorch_print_tensor_<type>` (see
    csrc/bridge/Program.cpp) with the input's buffer and the title. It writes
    to stdout, so it is never removed as dead code.
  }];
  let arguments = (ins Poptorch_Tensor:$input, StrAttr:$title);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

// ---- ops without a lowering: PyTorch's own CPU kernel, called when the program runs

def Poptorch_HostKernelOp : Poptorch_Op<"host_kernel", [Pure]> {
  let summary = "an aten op computed by PyTorch's CPU kernel when the program runs";
  let description = [{
    The capture's answer to an aten op that has no lowering (poptorch.explain
    and docs/ops.md list them as "host kernel"). `call` describes the call:
    the operator and its arguments, each tensor argument an index into
    `inputs` (csrc/HostKernels.h has the format). Lowered to a call of the
    runtime's `poptorch_host_kernel_<n>` with the description, a read-only
    view of each input's buffer and a fresh buffer per result; the runtime
    runs the op on CPU tensors over those buffers and copies its results
    into them. Shapes and dtypes are static (the capture's Meta results).
  }];
  let arguments = (ins Variadic<Poptorch_Tensor>:$inputs, StrAttr:$op, StrAttr:$call);
  let results = (outs Variadic<Poptorch_Tensor>:$results);
  let assemblyFormat = "$op `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)";
}

//===----------------------------------------------------------------------===//
// nn-linalg (round 2) (ops-a family): composite nn and linear-algebra ops,
// decomposed by poptorch-decompose (mlir/lib/Transforms/DecomposeNnLinalg.cpp)
// into matmul, elementwise, reduction and data-movement ops; verifiers in
// mlir/lib/Dialect/Poptorch/IR/NnLinalgOps.cpp.
//===----------------------------------------------------------------------===//

def Poptorch_AddbmmOp : Poptorch_Op<"addbmm", [Pure]> {
  let summary = "beta * input + alpha * sum over the batch of lhs[b] @ rhs[b]";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Poptorch_GluOp : Poptorch_Op<"glu", [Pure]> {
  let summary = "gated linear unit: a * sigmoid(b) with a, b the halves of `dim`";
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$dim);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_TraceOp : Poptorch_Op<"trace", [Pure]> {
  let summary = "the sum of the main diagonal of a 2-D tensor";
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_CrossOp : Poptorch_Op<"cross", [Pure]> {
  let summary = "3-vector cross product along `dim` (operands broadcast)";
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs, I64Attr:$dim);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_RenormOp : Poptorch_Op<"renorm", [Pure]> {
  let summary = "each slice along `dim` whose p-norm exceeds maxnorm scaled to maxnorm";
  let arguments = (ins Poptorch_Tensor:$input, F64Attr:$p, I64Attr:$dim, F64Attr:$maxnorm);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Poptorch_MaxUnpoolOp<string mnemonic, int n> : Poptorch_Op<mnemonic, [Pure]> {
  let summary = "inverse of max_pool" # n # "d: input values written at their flat "
                "`indices` in zero output planes (the result's trailing " # n # " dims)";
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$indices);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}
def Poptorch_MaxUnpool2dOp : Poptorch_MaxUnpoolOp<"max_unpool2d", 2>;
def Poptorch_MaxUnpool3dOp : Poptorch_MaxUnpoolOp<"max_unpool3d", 3>;

def Poptorch_Col2imOp : Poptorch_Op<"col2im", [Pure]> {
  let summary = "torch.nn.functional.fold: (N,) C*kH*kW, L columns summed into (N,) C, H, W";
  let arguments = (ins Poptorch_Tensor:$input, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$stride);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_CdistOp : Poptorch_Op<"cdist", [Pure]> {
  let summary = "p-norm distances between the rows of lhs (.., P, M) and rhs (.., R, M)";
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs, F64Attr:$p);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_PdistOp : Poptorch_Op<"pdist", [Pure]> {
  let summary = "p-norm distances between rows i < j of an (N, M) input, row-major pairs";
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "2.0">:$p);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Poptorch_EmbeddingBagOp : Poptorch_Op<"embedding_bag", [Pure]> {
  let summary = "sum / mean / max of the embedding rows of each bag of `indices`";
  let description = [{
    Bag b holds indices[offsets[b] : offsets[b + 1]] (the last bag runs to the
    end; with `include_last_offset` the last offset only closes it). `mode` is
    0 sum, 1 mean, 2 max; `per_sample_weights` scale the rows (sum only);
    indices equal to `padding_idx` (>= 0) are left out. Empty bags are 0.
  }];
  let arguments = (ins Poptorch_Tensor:$weight, Poptorch_Tensor:$indices,
                       Poptorch_Tensor:$offsets, Optional<Poptorch_Tensor>:$per_sample_weights,
                       DefaultValuedAttr<I64Attr, "0">:$mode,
                       DefaultValuedAttr<BoolAttr, "false">:$include_last_offset,
                       DefaultValuedAttr<I64Attr, "-1">:$padding_idx);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = [{
    $weight `,` $indices `,` $offsets (`weights` $per_sample_weights^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Poptorch_WeightNormOp : Poptorch_Op<"weight_norm", [Pure]> {
  let summary = "v * g / ||v|| (the 2-norm over every dim but `dim`), and that norm";
  let arguments = (ins Poptorch_Tensor:$v, Poptorch_Tensor:$g, I64Attr:$dim);
  let results = (outs Poptorch_Tensor:$result, Poptorch_Tensor:$norm);
  let assemblyFormat = "$v `,` $g attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_GridSamplerOp : Poptorch_Op<"grid_sampler", [Pure]> {
  let summary = "torch.nn.functional.grid_sample of (N, C, [D,] H, W) at grid (N, .., 2 or 3)";
  let description = [{
    `interpolation_mode` 0 bilinear (trilinear in 3-D), 1 nearest;
    `padding_mode` 0 zeros, 1 border, 2 reflection (PyTorch's enums).
  }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$grid,
                       I64Attr:$interpolation_mode, I64Attr:$padding_mode,
                       BoolAttr:$align_corners);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input `,` $grid attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ---- search-stats-random-special (round 2)
//===----------------------------------------------------------------------===//

def Poptorch_SearchsortedOp : Poptorch_Op<"searchsorted", [Pure]> {
  let summary = "insertion positions of `values` in the sorted last dim of `sorted`";
  let description = [{
    torch.searchsorted / torch.bucketize: for each value, the number of
    entries of its row of `sorted` (the whole of a 1-D `sorted`, else the row
    with the same leading indices) that come before it: `b < v` (left) or
    `b <= v` (`right` or `side` = "right"), with NaN after every number as
    in eager's binary search. The result is int64 or int32.
  }];
  let arguments = (ins Poptorch_Tensor:$sorted, Poptorch_Tensor:$values,
                       DefaultValuedAttr<BoolAttr, "false">:$right,
                       OptionalAttr<StrAttr>:$side);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$sorted `,` $values attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_IsinOp : Poptorch_Op<"isin", [Pure]> {
  let summary = "whether each element occurs in `test` (negated with `invert`)";
  let arguments = (ins Poptorch_Tensor:$elements, Poptorch_Tensor:$test,
                       DefaultValuedAttr<BoolAttr, "false">:$invert);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "$elements `,` $test attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Poptorch_HistcOp : Poptorch_Op<"histc", [Pure]> {
  let summary = "histogram of the elements in `bins` equal bins over [min, max]";
  let description = [{
    torch.histc: elements outside [min, max] and NaN are not counted; the
    last bin includes max. With min == max the range is the data's own
    (widened by 1 on both sides if that is a single value).
  }];
  let arguments = (ins Poptorch_Tensor:$input, I64Attr:$bins,
                       DefaultValuedAttr<F64Attr, "0.0">:$min,
                       DefaultValuedAttr<F64Attr, "0.0">:$max);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
def Poptorch_NanmedianDimOp : Poptorch_ArgReduceOp<"nanmedian_dim",
    (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices)> {
  let summary = "lower median of the non-NaN values along `dim` and its index";
}
def Poptorch_NanmedianOp : Poptorch_ArgReduceOp<"nanmedian",
    (outs Poptorch_Tensor:$values)> {
  let summary = "lower median of the non-NaN values (NaN if there are none)";
}
def Poptorch_ModeOp : Poptorch_ArgReduceOp<"mode",
    (outs Poptorch_Tensor:$values, Poptorch_Tensor:$indices)> {
  let summary = "most frequent value along `dim` (the smallest on ties) and its last index";
}
def Poptorch_FrexpOp : Poptorch_Op<"frexp", [Pure]> {
  let summary = "mantissa in [0.5, 1) (by magnitude) and int exponent with x = m * 2^e";
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$mantissa, Poptorch_Tensor:$exponent);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
  let hasVerifier = 1;
}
def Poptorch_RandCauchyOp : Poptorch_RandomOp<"rand_cauchy", "Cauchy with median a and scale b">;
def Poptorch_RandLogNormalOp : Poptorch_RandomOp<"rand_log_normal", "exp of a normal with mean a and std b">;
def Poptorch_RandGeometricOp : Poptorch_RandomOp<"rand_geometric", "geometric: trials up to the first success with probability a">;
// ---- end search-stats-random-special (round 2)

#endif // POPTORCH_OPS_TD
