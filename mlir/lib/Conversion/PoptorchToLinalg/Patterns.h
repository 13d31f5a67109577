//===- Patterns.h - private helpers of the poptorch-to-linalg lowering ----===//
//
// Shared by the op-family files of this folder: small builders for tensors
// (empty, fill, reshape, broadcast, element conversion) and one
// `populate…Patterns` entry point per family.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_CONVERSION_POPTORCHTOLINALG_PATTERNS_H
#define POPTORCH_CONVERSION_POPTORCHTOLINALG_PATTERNS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.h"

namespace mlir::poptorch {

//===----------------------------------------------------------------------===//
// Types and scalars
//===----------------------------------------------------------------------===//

inline RankedTensorType getTensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// True for `ui8` and friends: arith only computes on signless integers, so
/// compute ops reinterpret such values as signless and remember the signedness.
bool isUnsignedInteger(Type t);

/// Integer types whose values are non-negative: unsigned ones and i1 (bool).
bool hasUnsignedSemantics(Type t);

/// The signless type of the same width for unsigned integers, else `t`.
Type toSignlessType(Type t);

/// f16/bf16 compute in f32 (as PyTorch's CPU kernels do); others as is.
Type getComputeType(Type t);

/// A scalar arith.constant of `type` (float or integer) with value `v`.
Value createScalar(OpBuilder &b, Location loc, Type type, double v);

/// The lowest value of `type`: -inf for floats, the signed minimum for ints
/// (0 for i1, and for signless ints holding unsigned values: `isUnsigned`).
Value createLowest(OpBuilder &b, Location loc, Type type,
                   bool isUnsigned = false);
/// The highest value of `type`: +inf, the signed maximum for ints (the
/// unsigned maximum for `isUnsigned`), true for i1.
Value createHighest(OpBuilder &b, Location loc, Type type,
                    bool isUnsigned = false);

/// The larger (`isMax`) or smaller of two scalars of a signless type:
/// NaN-propagating for floats, or / and for i1, unsigned for `isUnsigned`.
Value createExtremum(OpBuilder &b, Location loc, Value x, Value y, bool isMax,
                     bool isUnsigned);

/// Converts one scalar with PyTorch's rules (float->int truncates toward zero,
/// x->bool is x != 0, bool->x is 0/1). `srcUnsigned`/`dstUnsigned` carry the
/// signedness of the (signless) integer values.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type dst,
                    bool srcUnsigned, bool dstUnsigned);

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type);

/// tensor.empty + linalg.fill with `scalar`.
Value createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar);

/// Row-major reshape with tensor.collapse_shape / tensor.expand_shape: one op
/// when the reshape is a pure collapse or expansion, else via 1-D.
Value reshapeTensor(OpBuilder &b, Location loc, Value v,
                    ArrayRef<int64_t> shape);

/// linalg.transpose of `v` by `perm` (result dim i is input dim perm[i]);
/// `v` itself for the identity permutation.
Value transposeTensor(OpBuilder &b, Location loc, Value v,
                      ArrayRef<int64_t> perm);

/// Numpy broadcast of `v` to `shape` (linalg.broadcast after dropping the
/// size-1 dims that broadcast).
Value broadcastTensor(OpBuilder &b, Location loc, Value v,
                      ArrayRef<int64_t> shape);

/// Indexing map of an operand of shape `from` read by a loop nest over `to`
/// under numpy broadcasting (broadcast size-1 dims read index 0).
AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> from,
                          ArrayRef<int64_t> to);

/// Elementwise conversion of a tensor to `elemType` (see convertScalar).
Value castTensor(OpBuilder &b, Location loc, Value v, Type elemType);

/// Reinterprets an unsigned-integer tensor as the signless integers arith
/// computes on (the same bits); others unchanged.
Value toSignlessTensor(OpBuilder &b, Location loc, Value v);

/// Inside a linalg body, reinterprets an unsigned-integer scalar as the
/// signless integer arith computes on (and back). tensor.bitcast does not
/// bufferize, so this is a scalar builtin.unrealized_conversion_cast, which
/// disappears in the LLVM lowering where both are the same iN.
Value scalarToSignless(OpBuilder &b, Location loc, Value v);
Value scalarFromSignless(OpBuilder &b, Location loc, Value v, Type type);

/// A linalg.generic over `shape` whose body applies `fn` to one element of
/// each input (inputs broadcast to `shape`) and yields a `resultElem`.
Value createElementwiseGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> shape,
    Type resultElem, function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// DenseI64 elements of `tensor<Nxi64>`, as the strides/dilations of the
/// named linalg convolution and pooling ops.
DenseIntElementsAttr getI64Elements(OpBuilder &b, ArrayRef<int64_t> values);

/// A linalg.generic over `resTy` whose body `fn` gets the loop indices (as
/// `index` values) and one element of each of `inputs` (read through `maps`,
/// one per input) and returns the result element. Gathers read other tensors
/// with tensor.extract at positions computed from the indices.
Value createIndexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType resTy, ValueRange inputs,
    ArrayRef<AffineMap> maps,
    function_ref<Value(OpBuilder &, Location, ValueRange ivs, ValueRange args)>
        fn);

/// An element of an integer index tensor as an `index` in [0, size):
/// negative values count from the end, out-of-range ones are clamped (a
/// compiled program cannot raise; constant indices are checked at capture).
Value indexFromElement(OpBuilder &b, Location loc, Value elem, int64_t size);

//===----------------------------------------------------------------------===//
// Windows (Windows.cpp): shared by Convolution.cpp and Pooling.cpp
//===----------------------------------------------------------------------===//

/// Static offsets, sizes or strides for tensor slices.
SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> v);

/// `v` with one entry per spatial dim (`v` has one entry, or none: `dflt`).
SmallVector<int64_t> perDim(ArrayRef<int64_t> v, int64_t n, int64_t dflt);

/// Pads the trailing `lo.size()` dims of `x` by `lo` / `hi` elements of
/// `fill`; negative amounts crop. `interior[i] > 1` puts interior[i] - 1
/// fill elements between neighbours (the input of a transposed convolution).
Value padTrailing(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> lo,
                  ArrayRef<int64_t> hi, Value fill,
                  ArrayRef<int64_t> interior = {});

/// Depthwise convolutions and 2-D pools with at most this many window
/// elements (ConvNeXt's 7x7) are elementwise ops over their windowTaps;
/// larger windows are named ops, split into 1-D ones by the tiling. The 7x7
/// depthwise convolutions of ConvNeXt-tiny as 1-D convolutions cost it
/// 20-25% of its time (Zen 3: 99.6 -> 80.0 ms at batch 1, 812 -> 622 ms at
/// batch 8, with 25 here).
inline constexpr int64_t kMaxWindowTaps = 49;

/// The KH*KW windows that an (N, C, OH, OW) output reads from an already
/// padded (N, C, Hp, Wp) `input`, row-major over the kernel offsets: tap
/// (i, j) is the strided slice of the element at offset (i, j) of every
/// output pixel's window. An elementwise op over the taps vectorizes along
/// the output width (a strided read is one load and a shuffle), where a
/// named windowed op with a stride is tiled into scalar 1-D ops.
SmallVector<Value> windowTaps(OpBuilder &b, Location loc, Value input,
                              ArrayRef<int64_t> out, ArrayRef<int64_t> kernel,
                              ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> dilation);

//===----------------------------------------------------------------------===//
// Pattern entry points, one per op family
//===----------------------------------------------------------------------===//

void populateElementwisePatterns(RewritePatternSet &patterns);
void populateLinearAlgebraPatterns(RewritePatternSet &patterns);
void populateConvolutionPatterns(RewritePatternSet &patterns);
void populatePoolingPatterns(RewritePatternSet &patterns);
void populateRandomPatterns(RewritePatternSet &patterns);
void populateReductionPatterns(RewritePatternSet &patterns);
/// Scans and sorts (ScanSort.cpp); added by populateReductionPatterns.
void populateScanSortPatterns(RewritePatternSet &patterns);
void populateDataMovementPatterns(RewritePatternSet &patterns);
void populateIndexingPatterns(RewritePatternSet &patterns);
void populateResamplePatterns(RewritePatternSet &patterns);
void populateDebuggingPatterns(RewritePatternSet &patterns);
void populateHostKernelPatterns(RewritePatternSet &patterns);

/// A read-only view of a tensor's buffer in whatever layout it has, as an
/// unranked memref, for the runtime's functions.
Value readOnlyBuffer(OpBuilder &b, Location loc, Value tensor);

/// A NUL-terminated constant global holding `text` (one per distinct text,
/// named `prefix` + n) as a memref<*xi8>, for the runtime's functions.
Value stringConstant(OpBuilder &b, Location loc, ModuleOp module,
                     StringRef prefix, StringRef text);

/// The rewrites of `poptorch-decompose` (defined in
/// lib/Transforms/Decompose.cpp); the lowering runs them first so that it
/// also accepts composite ops when run on its own.
void populatePoptorchDecomposePatterns(RewritePatternSet &patterns);

} // namespace mlir::poptorch

#endif // POPTORCH_CONVERSION_POPTORCHTOLINALG_PATTERNS_H
