//===- PoptorchDialect.cpp - dialect registration, verifiers, folders -----===//
#include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.h"
#include "VerifyUtils.h"
#include "poptorch/Dialect/Poptorch/IR/Broadcast.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

#include "poptorch/Dialect/Poptorch/IR/PoptorchElementwiseSignatures.h.inc"

using namespace mlir;
using namespace mlir::poptorch;

#include "poptorch/Dialect/Poptorch/IR/PoptorchOpsDialect.cpp.inc"

void PoptorchDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "poptorch/Dialect/Poptorch/IR/PoptorchOps.cpp.inc"
      >();
}

/// Operands other than bool conditions share one element type; the result
/// has it too, or is bool for comparisons and logical ops (the op table's
/// `result="bool"` and `bool_operands`, generated into this header).
LogicalResult mlir::OpTrait::poptorch::verifyElementwiseOp(Operation *op) {
  auto resTy = cast<RankedTensorType>(op->getResult(0).getType());
  StringRef name = op->getName().stripDialect();
  bool boolResult = mlir::poptorch::elementwiseHasBoolResult(name);
  Type common = boolResult ? Type() : resTy.getElementType();
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    auto ty = rtt(v);
    Type elem = ty.getElementType();
    if (mlir::poptorch::elementwiseOperandIsBool(name, i)) {
      if (!elem.isInteger(1))
        return op->emitOpError("operand #")
               << i << " must be a bool (i1) tensor, got " << elem;
    } else if (!common) {
      common = elem;
    } else if (elem != common) {
      if (boolResult)
        return op->emitOpError("operand element types ")
               << common << " and " << elem
               << " differ (the capture casts both to their common type)";
      return op->emitOpError("operand element type ")
             << elem << " differs from the result element type " << common
             << " (the capture inserts poptorch.cast for type promotion)";
    }
    if (!broadcastsTo(ty.getShape(), resTy.getShape()))
      return op->emitOpError("operand shape ")
             << ty << " does not broadcast to the result shape " << resTy;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Constants, casts, identities
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from result type " << getType();
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult CastOp::verify() {
  if (rtt(getInput()).getShape() != getType().getShape())
    return emitOpError("cast must not change the shape");
  return success();
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (!getTrain() || getP().convertToDouble() == 0.0)
    return getInput();
  return {};
}

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (p < 0.0 || p > 1.0)
    return emitOpError("probability ") << p << " is not in [0, 1]";
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  return success();
}

LogicalResult ClampOp::verify() {
  for (Value v : {getInput(), getMin(), getMax()}) {
    if (!v)
      continue;
    auto ty = rtt(v);
    if (ty.getElementType() != getType().getElementType())
      return emitOpError("input, bounds and result must share one element "
                         "type (the capture casts them to the result type)");
    if (!broadcastsTo(ty.getShape(), getType().getShape()))
      return emitOpError("operand shape ")
             << ty << " does not broadcast to the result shape " << getType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  auto l = rtt(getLhs()), r = rtt(getRhs());
  if (l.getRank() == 0 || r.getRank() == 0)
    return emitOpError("operands must be at least 1-D");
  Type elem = l.getElementType(), res = getType().getElementType();
  // f16/bf16 operands may give their f32 accumulator unrounded (a linear
  // layer's bias is added before the one rounding, as eager's addmm does).
  if (elem != r.getElementType() ||
      (elem != res && !((elem.isF16() || elem.isBF16()) && res.isF32())))
    return emitOpError("operands and result must share one element type "
                       "(or f16/bf16 operands an f32 result)");
  int64_t k1 = l.getShape().back();
  int64_t k2 =
      r.getRank() == 1 ? r.getShape()[0] : r.getShape()[r.getRank() - 2];
  if (k1 != k2)
    return emitOpError("contraction sizes differ: ") << k1 << " vs " << k2;
  return success();
}

LogicalResult LinearOp::verify() {
  auto in = rtt(getInput()), w = rtt(getWeight());
  if (w.getRank() != 2 && w.getRank() != 1)
    return emitOpError("weight must be 1-D or 2-D");
  if (in.getRank() == 0 || in.getShape().back() != w.getShape().back())
    return emitOpError("input features ")
           << (in.getRank() ? in.getShape().back() : 0)
           << " differ from weight features " << w.getShape().back();
  return success();
}

LogicalResult AddmmOp::verify() {
  Type elem = getType().getElementType();
  for (Value v : {getInput(), getLhs(), getRhs()})
    if (rtt(v).getElementType() != elem)
      return emitOpError("operands must share the result element type ")
             << elem << ", got " << rtt(v).getElementType()
             << " (PyTorch requires mat1 and mat2 of the same dtype: cast the "
                "input or the module, e.g. model.to(input.dtype))";
  return success();
}

LogicalResult SdpaOp::verify() {
  auto q = rtt(getQuery()), k = rtt(getKey()), v = rtt(getValue());
  if (q.getRank() < 2 || k.getRank() != q.getRank() ||
      v.getRank() != q.getRank())
    return emitOpError("query, key and value must have the same rank >= 2");
  if (q.getShape().back() != k.getShape().back())
    return emitOpError("query and key embedding sizes differ");
  if (getDropoutP().convertToDouble() != 0.0)
    return emitOpError(
        "dropout inside attention is only supported in training, "
        "which poptorch does not compile; use dropout_p=0");
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult ConvolutionOp::verify() {
  auto in = rtt(getInput()), w = rtt(getWeight());
  int64_t spatial = in.getRank() - 2;
  if (spatial < 1 || w.getRank() != in.getRank())
    return emitOpError(
        "input and weight must both be N, C, spatial... tensors");
  for (auto [name, arr] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"stride", getStride()},
        {"padding", getPadding()},
        {"dilation", getDilation()}})
    if ((int64_t)arr.size() != spatial && arr.size() != 1)
      return emitOpError() << name << " must have " << spatial << " entries";
  if (getGroups() < 1)
    return emitOpError("groups must be at least 1");
  // PyTorch's weight is (C_out, C_in/groups, k...) for a convolution and
  // (C_in, C_out/groups, k...) for a transposed one.
  if (getTransposed()) {
    if (in.getShape()[1] != w.getShape()[0])
      return emitOpError("input channels ")
             << in.getShape()[1] << " != transposed weight in-channels "
             << w.getShape()[0];
  } else if (in.getShape()[1] != w.getShape()[1] * getGroups()) {
    return emitOpError("input channels ")
           << in.getShape()[1] << " != weight in-channels " << w.getShape()[1]
           << " * groups " << getGroups();
  }
  return success();
}

/// Pools over the trailing `kSpatialDims` dims of a (N,) C, spatial... input;
/// window parameters have one entry (for every dim) or one per dim.
template <typename PoolOp> static LogicalResult verifyPoolInput(PoolOp op) {
  constexpr int64_t spatial = PoolOp::kSpatialDims;
  auto in = rtt(op.getInput());
  if (in.getRank() != spatial + 1 && in.getRank() != spatial + 2)
    return op.emitOpError("input must be (N,) C and ")
           << spatial << " spatial dims";
  if (rtt(op.getResult()).getRank() != in.getRank())
    return op.emitOpError("result rank must equal the input rank");
  return success();
}

template <typename PoolOp>
static LogicalResult verifyWindows(PoolOp op, ArrayRef<int64_t> kernel,
                                   ArrayRef<int64_t> stride,
                                   ArrayRef<int64_t> padding) {
  constexpr int64_t spatial = PoolOp::kSpatialDims;
  if (failed(verifyPoolInput(op)))
    return failure();
  for (auto [name, arr] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"kernel_size", kernel},
        {"stride", stride},
        {"padding", padding}})
    if ((int64_t)arr.size() != spatial && arr.size() != 1)
      return op.emitOpError()
             << name << " must have 1 or " << spatial << " entries";
  for (size_t i = 0; i < padding.size(); ++i)
    if (padding[i] * 2 > kernel[kernel.size() == 1 ? 0 : i])
      return op.emitOpError(
          "padding should be at most half of the kernel size");
  return success();
}

template <typename PoolOp> static LogicalResult verifyIndices(PoolOp op) {
  auto idx = rtt(op.getIndices());
  if (idx.getShape() != rtt(op.getResult()).getShape() ||
      !idx.getElementType().isInteger(64))
    return op.emitOpError("indices must be i64 with the result's shape");
  return success();
}

LogicalResult MaxPool2dOp::verify() {
  if (failed(verifyWindows(*this, getKernelSize(), getStride(), getPadding())))
    return failure();
  return verifyIndices(*this);
}
LogicalResult MaxPool3dOp::verify() {
  if (failed(verifyWindows(*this, getKernelSize(), getStride(), getPadding())))
    return failure();
  return verifyIndices(*this);
}
LogicalResult AvgPool2dOp::verify() {
  return verifyWindows(*this, getKernelSize(), getStride(), getPadding());
}
LogicalResult AvgPool3dOp::verify() {
  return verifyWindows(*this, getKernelSize(), getStride(), getPadding());
}
template <typename PoolOp> static LogicalResult verifyAdaptive(PoolOp op) {
  if (failed(verifyPoolInput(op)))
    return failure();
  if ((int64_t)op.getOutputSize().size() != PoolOp::kSpatialDims)
    return op.emitOpError("output_size must have ")
           << PoolOp::kSpatialDims << " entries";
  return success();
}
LogicalResult AdaptiveAvgPool2dOp::verify() { return verifyAdaptive(*this); }
LogicalResult AdaptiveAvgPool3dOp::verify() { return verifyAdaptive(*this); }
LogicalResult AdaptiveMaxPool2dOp::verify() {
  if (failed(verifyAdaptive(*this)))
    return failure();
  return verifyIndices(*this);
}
LogicalResult AdaptiveMaxPool3dOp::verify() {
  if (failed(verifyAdaptive(*this)))
    return failure();
  return verifyIndices(*this);
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax, reductions
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  if (!getTraining() && (!getMean() || !getVar()))
    return emitOpError(
        "running_mean and running_var are required in inference");
  if (rtt(getInput()).getRank() < 2)
    return emitOpError("input must be at least 2-D (N, C, ...)");
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto shape = rtt(getInput()).getShape();
  auto ns = getNormalizedShape();
  if (ns.size() > shape.size() || !llvm::equal(ns, shape.take_back(ns.size())))
    return emitOpError("normalized_shape must match the trailing input dims");
  return success();
}

template <typename OpTy> static LogicalResult verifySoftmax(OpTy op) {
  if (op.getInput().getType() != op.getType())
    return op.emitOpError("result type must equal the input type");
  return checkDim(op, op.getDim(), rtt(op.getInput()).getRank());
}
LogicalResult SoftmaxOp::verify() { return verifySoftmax(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmax(*this); }

template <typename OpTy> static LogicalResult verifyReduce(OpTy op) {
  int64_t rank = rtt(op.getInput()).getRank();
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : op.getDims()) {
    if (failed(checkDim(op, d, rank)))
      return failure();
    if (!seen.insert(d).second)
      return op.emitOpError("dim ") << d << " appears more than once";
  }
  int64_t expected = op.getKeepdim() ? rank : rank - (int64_t)seen.size();
  if (rank == 0)
    expected = 0;
  if (op.getType().getRank() != expected)
    return op.emitOpError("result rank ")
           << op.getType().getRank() << " should be " << expected;
  return success();
}
LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult ReshapeOp::verify() {
  auto in = rtt(getInput());
  if (in.getNumElements() != getType().getNumElements())
    return emitOpError("cannot reshape ") << in << " to " << getType();
  if (in.getElementType() != getType().getElementType())
    return emitOpError("reshape must not change the element type");
  return success();
}

bool ConvolutionOp::isChannelsLastDirect() {
  auto in = dyn_cast<RankedTensorType>(getInput().getType());
  auto w = dyn_cast<RankedTensorType>(getWeight().getType());
  auto res = dyn_cast<RankedTensorType>(getResult().getType());
  if (!in || !w || !res || getTransposed() || getGroups() != 1 ||
      in.getRank() != 4 || w.getRank() != 4 || !in.hasStaticShape() ||
      !w.hasStaticShape() || !res.hasStaticShape() ||
      res.getNumElements() == 0 ||
      !(in.getElementType().isF32() || in.getElementType().isBF16() ||
        in.getElementType().isF16()) ||
      w.getElementType() != in.getElementType())
    return false;
  ArrayRef<int64_t> s = w.getShape(), r = res.getShape();
  return (s[1] % 8 == 0 || s[1] < 8) && (s[2] * s[3] > 1 || s[0] % 16 == 0) &&
         r[0] * r[2] * r[3] >= 128;
}

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  for (auto [i, d] : llvm::enumerate(getDims()))
    if ((int64_t)i != d)
      return {};
  return getInput();
}

LogicalResult PermuteOp::verify() {
  auto in = rtt(getInput());
  auto dims = getDims();
  if ((int64_t)dims.size() != in.getRank())
    return emitOpError("dims must list every input dim");
  llvm::SmallSet<int64_t, 8> seen;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (failed(checkDim(*this, d, in.getRank())) || !seen.insert(d).second)
      return emitOpError("dims is not a permutation");
    if (getType().getShape()[i] != in.getShape()[d])
      return emitOpError("result shape does not match the permutation");
  }
  return success();
}

LogicalResult TransposeOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (failed(checkDim(*this, getDim0(), rank)) ||
      failed(checkDim(*this, getDim1(), rank)))
    return failure();
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult ExpandOp::verify() {
  if (!broadcastsTo(rtt(getInput()).getShape(), getType().getShape()))
    return emitOpError("cannot expand ")
           << getInput().getType() << " to " << getType();
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() && getStart() == 0 && getStep() == 1)
    return getInput();
  return {};
}

LogicalResult SliceOp::verify() {
  auto in = rtt(getInput());
  if (failed(checkDim(*this, getDim(), in.getRank())))
    return failure();
  if (getStep() < 1)
    return emitOpError("step must be positive");
  int64_t size = in.getShape()[getDim()];
  int64_t len = getType().getShape()[getDim()];
  if (getStart() < 0 || getStart() > size ||
      (len > 0 && getStart() + (len - 1) * getStep() >= size))
    return emitOpError("slice [") << getStart() << " +" << len << " x"
                                  << getStep() << "] exceeds size " << size;
  return success();
}

LogicalResult SliceInsertOp::verify() {
  auto in = rtt(getInput()), src = rtt(getSource());
  if (getType() != in)
    return emitOpError("result type must equal the input type");
  if (src.getElementType() != in.getElementType() ||
      src.getRank() != in.getRank())
    return emitOpError("source must have the input's element type and rank");
  if (failed(checkDim(*this, getDim(), in.getRank())))
    return failure();
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != getDim() && src.getShape()[d] != in.getShape()[d])
      return emitOpError("source dim ") << d << " must equal the input's";
  if (getStep() < 1)
    return emitOpError("step must be positive");
  int64_t size = in.getShape()[getDim()];
  int64_t len = src.getShape()[getDim()];
  if (getStart() < 0 || getStart() > size ||
      (len > 0 && getStart() + (len - 1) * getStep() >= size))
    return emitOpError("slice [") << getStart() << " +" << len << " x"
                                  << getStep() << "] exceeds size " << size;
  return success();
}

LogicalResult SelectOp::verify() {
  auto in = rtt(getInput());
  if (failed(checkDim(*this, getDim(), in.getRank())))
    return failure();
  if (getIndex() < 0 || getIndex() >= in.getShape()[getDim()])
    return emitOpError("index ") << getIndex() << " is out of range";
  return success();
}

LogicalResult CatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  int64_t rank = getType().getRank();
  if (failed(checkDim(*this, getDim(), rank)))
    return failure();
  int64_t total = 0;
  for (Value v : getInputs()) {
    auto ty = rtt(v);
    if (ty.getRank() != rank ||
        ty.getElementType() != getType().getElementType())
      return emitOpError("inputs must have the result's rank and element type");
    total += ty.getShape()[getDim()];
  }
  if (total != getType().getShape()[getDim()])
    return emitOpError("concatenated size ") << total << " differs from result";
  return success();
}

LogicalResult EmbeddingOp::verify() {
  auto w = rtt(getWeight()), idx = rtt(getIndices());
  if (w.getRank() != 2)
    return emitOpError("weight must be 2-D");
  if (!isa<IntegerType>(idx.getElementType()))
    return emitOpError("indices must be integers");
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement: reordering, padding, indexing, resampling
//===----------------------------------------------------------------------===//

static LogicalResult verifySameElementType(Operation *op, Value in,
                                           Value result) {
  if (rtt(in).getElementType() != rtt(result).getElementType())
    return op->emitOpError("result element type must equal the input's");
  return success();
}

static LogicalResult verifyDims(Operation *op, ArrayRef<int64_t> dims,
                                int64_t rank) {
  for (int64_t d : dims)
    if (failed(checkDim(op, d, rank)))
      return failure();
  return success();
}

LogicalResult FlipOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  return verifyDims(*this, getDims(), rtt(getInput()).getRank());
}

LogicalResult RollOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  if (!getDims().empty() && getDims().size() != getShifts().size())
    return emitOpError("shifts and dims must have the same length");
  if (getDims().empty() && getShifts().size() != 1)
    return emitOpError("a roll of the flattened tensor takes one shift");
  return verifyDims(*this, getDims(), rtt(getInput()).getRank());
}

LogicalResult TileOp::verify() {
  auto in = rtt(getInput()).getShape(), out = getType().getShape();
  if (in.size() > out.size())
    return emitOpError("result rank must be at least the input rank");
  int64_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] == 0 ? out[off + i] != 0 : out[off + i] % in[i] != 0)
      return emitOpError("result dim ") << off + i << " is not a multiple of "
                                        << "input dim " << i;
  return verifySameElementType(*this, getInput(), getResult());
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  // No padding in any mode is the input itself (HF's TF-style "same"
  // padding pads every 1x1 convolution's input by zeros).
  if (getInput().getType() == getType() &&
      llvm::all_of(getPad(), [](int64_t p) { return p == 0; }))
    return getInput();
  return {};
}

LogicalResult PadOp::verify() {
  auto in = rtt(getInput()).getShape(), out = getType().getShape();
  auto pad = getPad();
  if (pad.size() % 2 || pad.size() / 2 > in.size() || in.size() != out.size())
    return emitOpError("pad must hold (before, after) pairs for trailing dims");
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    size_t d = in.size() - 1 - k;
    if (out[d] != in[d] + pad[2 * k] + pad[2 * k + 1] || out[d] < 0)
      return emitOpError("result dim ") << d << " does not match the padding";
    if (getMode() == "reflect" &&
        (pad[2 * k] >= in[d] || pad[2 * k + 1] >= in[d]))
      return emitOpError("reflect padding must be smaller than the dim");
    if (getMode() == "circular" &&
        (pad[2 * k] > in[d] || pad[2 * k + 1] > in[d]))
      return emitOpError("circular padding must be at most the dim");
  }
  if (getMode() != "reflect" && getMode() != "replicate" &&
      getMode() != "circular" && getMode() != "constant")
    return emitOpError("mode must be constant, reflect, replicate or circular");
  if ((getMode() == "constant") != (getValue() != nullptr) ||
      (getValue() &&
       (rtt(getValue()).getRank() != 0 ||
        rtt(getValue()).getElementType() != getType().getElementType())))
    return emitOpError("constant padding (only) takes a 0-d value of the "
                       "input's element type");
  return verifySameElementType(*this, getInput(), getResult());
}

LogicalResult TriangleOp::verify() {
  if (getInput().getType() != getType() || getType().getRank() < 2)
    return emitOpError("input and result must be one type of rank >= 2");
  return success();
}

LogicalResult DiagonalOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (failed(checkDim(*this, getDim1(), rank)) ||
      failed(checkDim(*this, getDim2(), rank)) || getDim1() == getDim2())
    return emitOpError("dim1 and dim2 must be distinct dims of the input");
  if (getType().getRank() != rank - 1)
    return emitOpError("result rank must be the input rank - 1");
  return verifySameElementType(*this, getInput(), getResult());
}

LogicalResult DiagEmbedOp::verify() {
  int64_t rank = getType().getRank();
  int64_t d1 = (int64_t)getDim1() < 0 ? getDim1() + rank : getDim1();
  int64_t d2 = (int64_t)getDim2() < 0 ? getDim2() + rank : getDim2();
  if (failed(checkDim(*this, d1, rank)) || failed(checkDim(*this, d2, rank)) ||
      d1 == d2)
    return emitOpError("dim1 and dim2 must be distinct dims of the result");
  if (rtt(getInput()).getRank() != rank - 1)
    return emitOpError("result rank must be the input rank + 1");
  return verifySameElementType(*this, getInput(), getResult());
}

LogicalResult UnfoldOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (failed(checkDim(*this, getDim(), rank)))
    return failure();
  if (getStep() < 1 || getSize() < 0)
    return emitOpError("step must be positive and size non-negative");
  if (getType().getRank() != rank + 1)
    return emitOpError("result rank must be the input rank + 1");
  return verifySameElementType(*this, getInput(), getResult());
}

LogicalResult ChannelShuffleOp::verify() {
  auto in = rtt(getInput());
  if (in.getRank() < 2 || getGroups() < 1 || in.getShape()[1] % getGroups())
    return emitOpError("groups must divide the channels (dim 1)");
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  return success();
}

LogicalResult Im2colOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (rank != 3 && rank != 4)
    return emitOpError("input must be (N,) C, H, W");
  for (auto arr : {getKernelSize(), getDilation(), getPadding(), getStride()})
    if (arr.size() != 2)
      return emitOpError("kernel_size, dilation, padding and stride need 2 "
                         "entries");
  return verifySameElementType(*this, getInput(), getResult());
}

static LogicalResult verifyIndexType(Operation *op, Value index) {
  if (!isa<IntegerType>(rtt(index).getElementType()) ||
      rtt(index).getElementType().isInteger(1))
    return op->emitOpError("indices must be integers");
  return success();
}

LogicalResult GatherOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (failed(checkDim(*this, getDim(), rank)) ||
      failed(verifyIndexType(*this, getIndex())))
    return failure();
  if (rtt(getIndex()).getShape() != getType().getShape())
    return emitOpError("result shape must equal the index shape");
  return verifySameElementType(*this, getInput(), getResult());
}

LogicalResult IndexOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (getIndices().size() != getDims().size() || getDims().empty())
    return emitOpError("needs one index tensor per indexed dim");
  for (Value v : getIndices())
    if (failed(verifyIndexType(*this, v)))
      return failure();
  for (size_t i = 0; i < getDims().size(); ++i)
    if (failed(checkDim(*this, getDims()[i], rank)) ||
        (i && getDims()[i] <= getDims()[i - 1]))
      return emitOpError("dims must be increasing input dims");
  return verifySameElementType(*this, getInput(), getResult());
}

LogicalResult TakeOp::verify() {
  if (failed(verifyIndexType(*this, getIndex())))
    return failure();
  if (rtt(getIndex()).getShape() != getType().getShape())
    return emitOpError("result shape must equal the index shape");
  return verifySameElementType(*this, getInput(), getResult());
}

LogicalResult ScatterOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (failed(checkDim(*this, getDim(), rank)) ||
      failed(verifyIndexType(*this, getIndex())))
    return failure();
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  if (rtt(getSrc()).getElementType() != getType().getElementType())
    return emitOpError("src must have the input's element type");
  if (!llvm::is_contained(ArrayRef<StringRef>{"none", "sum", "prod", "mean",
                                              "amax", "amin", "add",
                                              "multiply"},
                          getReduce()))
    return emitOpError("unknown reduction ") << getReduce();
  return success();
}

LogicalResult IndexPutOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  if (getIndices().size() != getDims().size() || getDims().empty())
    return emitOpError("needs one index tensor per indexed dim");
  for (size_t i = 0; i < getDims().size(); ++i)
    if (failed(checkDim(*this, getDims()[i], rank)) ||
        failed(verifyIndexType(*this, getIndices()[i])) ||
        (i && getDims()[i] <= getDims()[i - 1]))
      return emitOpError("dims must be increasing input dims");
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  if (rtt(getValues()).getElementType() != getType().getElementType())
    return emitOpError("values must have the input's element type");
  return success();
}

LogicalResult MaskedScatterOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  if (!broadcastsTo(rtt(getMask()).getShape(), getType().getShape()))
    return emitOpError("mask must broadcast to the input shape");
  return verifySameElementType(*this, getSource(), getResult());
}

LogicalResult UpsampleOp::verify() {
  auto in = rtt(getInput()), out = getType();
  int64_t spatial = in.getRank() - 2;
  if (spatial < 1 || spatial > 3 || out.getRank() != in.getRank() ||
      in.getShape().take_front(2) != out.getShape().take_front(2))
    return emitOpError("input and result must be N, C, spatial... with 1-3 "
                       "spatial dims and equal N, C");
  StringRef mode = getMode();
  // linear_aa / cubic_aa: antialiased (decomposed in DecomposeNnLinalg.cpp)
  bool antialias = mode == "linear_aa" || mode == "cubic_aa";
  if (mode != "nearest" && mode != "nearest_exact" && mode != "linear" &&
      mode != "cubic" && !antialias)
    return emitOpError("mode must be nearest, nearest_exact, linear, cubic, "
                       "linear_aa or cubic_aa");
  if ((mode == "linear" || mode == "cubic" || antialias) &&
      !isa<FloatType>(in.getElementType()))
    return emitOpError("interpolation needs a floating-point tensor");
  if ((mode == "cubic" || antialias) && spatial != 2)
    return emitOpError("cubic and antialiased interpolation are 2-D");
  return verifySameElementType(*this, getInput(), getResult());
}

//===----------------------------------------------------------------------===//
// Runtime ops
//===----------------------------------------------------------------------===//

LogicalResult ParallelForOp::verify() {
  Region &body = getBody();
  if (body.empty())
    return emitOpError("needs a body");
  Block &entry = body.front();
  Type i64 = IntegerType::get(getContext(), 64);
  if (entry.getNumArguments() != 2 || entry.getArgument(0).getType() != i64 ||
      entry.getArgument(1).getType() != i64)
    return emitOpError("body's entry block must take the range's begin and "
                       "end as two i64 arguments");
  return success();
}

#define GET_OP_CLASSES
#include "poptorch/Dialect/Poptorch/IR/PoptorchOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

template <typename OpTy> static LogicalResult verifyRandom(OpTy op) {
  auto state = rtt(op.getState());
  if (state.getShape() != ArrayRef<int64_t>{2} ||
      !state.getElementType().isInteger(64))
    return op.emitOpError("the random state must be tensor<2xi64>");
  Type elem = op.getType().getElementType();
  if (isa<ComplexType>(elem))
    return op.emitOpError("random ") << elem << " results are not supported";
  return success();
}
LogicalResult RandUniformOp::verify() { return verifyRandom(*this); }
LogicalResult RandNormalOp::verify() { return verifyRandom(*this); }
LogicalResult RandExponentialOp::verify() { return verifyRandom(*this); }
LogicalResult RandBernoulliOp::verify() { return verifyRandom(*this); }
LogicalResult RandIntOp::verify() { return verifyRandom(*this); }
// ---- search-stats-random-special (round 2)
LogicalResult RandCauchyOp::verify() { return verifyRandom(*this); }
LogicalResult RandLogNormalOp::verify() { return verifyRandom(*this); }
LogicalResult RandGeometricOp::verify() { return verifyRandom(*this); }
// ---- end search-stats-random-special (round 2)
