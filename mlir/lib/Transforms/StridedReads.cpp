//===- StridedReads.cpp - strided vector reads as load + shuffle ----------===//
//
// The windows of a stride-2 convolution or pooling read every second element
// of a row. As a vector.transfer_read of a memref whose innermost stride is 2,
// that lowers to one scalar load and insertelement per element: the stride-2
// depthwise convolutions of MobileNetV2 spent a fifth of the network's time
// there. Reading the contiguous span the elements lie in and shuffling out
// every stride-th lane is a few vector loads and permutes instead.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHSTRIDEDREADS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// Strides worth a shuffle: beyond 8 the span holds mostly unused lanes.
constexpr int64_t kMaxStride = 8;

/// A strided memref's memory as a flat unit-stride memref: the element at
/// `indices` is `flat[linear]`, and the `extent(innerStride)` elements from
/// there lie in `flat`.
struct FlatBuffer {
  Value flat, linear, innerStride;
};

FlatBuffer flatBuffer(PatternRewriter &rewriter, Location loc, Value base,
                      ValueRange indices,
                      llvm::function_ref<Value(Value)> extent) {
  auto memref = cast<MemRefType>(base.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, base);
  Value linear = meta.getOffset();
  for (auto [i, index] : llvm::enumerate(indices)) {
    Value term =
        arith::MulIOp::create(rewriter, loc, index, meta.getStrides()[i]);
    linear = arith::AddIOp::create(rewriter, loc, linear, term);
  }
  Value innerStride = meta.getStrides().back();
  Value size =
      arith::AddIOp::create(rewriter, loc, linear, extent(innerStride));
  auto flatType =
      MemRefType::get({ShapedType::kDynamic}, memref.getElementType(), nullptr,
                      memref.getMemorySpace());
  Value flat = memref::ReinterpretCastOp::create(
      rewriter, loc, flatType, meta.getBaseBuffer(),
      /*offset=*/rewriter.getIndexAttr(0),
      /*sizes=*/ArrayRef<OpFoldResult>{size},
      /*strides=*/ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
  return {flat, linear, innerStride};
}

/// A read of one element, a 0-d vector (x[::2][1] read by an elementwise op)
/// or a broadcast of it (x[0, 2::3] - y with y of shape (1, 5): every vector
/// dim broadcast), is a scalar load and a broadcast: the vector lowering has no
/// 0-d read of a strided memref, which convert-vector-to-scf makes of such a
/// broadcast.
struct OneElementTransferRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    if (read.getMask() || !isa<MemRefType>(read.getBase().getType()))
      return failure();
    AffineMap map = read.getPermutationMap();
    int64_t rank = read.getVectorType().getRank();
    for (int64_t d = 0; d < rank; ++d) {
      auto c = dyn_cast<AffineConstantExpr>(map.getResult(d));
      if (!c || c.getValue() != 0 || !read.isDimInBounds(d))
        return failure();
    }
    Value scalar = memref::LoadOp::create(rewriter, read.getLoc(),
                                          read.getBase(), read.getIndices());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(read, read.getVectorType(),
                                                     scalar);
    return success();
  }
};

struct StridedTransferRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto memref = dyn_cast<MemRefType>(read.getBase().getType());
    VectorType vec = read.getVectorType();
    // Bools are stored one byte per element but vector<N x i1> loads are
    // bit-packed: such reads stay as they are.
    // A 0-d vector (a read of one element of a 0-d view) has no dimension
    // to stride along.
    if (!memref || read.getMask() || vec.isScalable() || vec.getRank() == 0 ||
        memref.getRank() == 0 || memref.getElementType().isInteger(1))
      return failure();
    // Only the innermost vector dimension may be longer than 1, and it must
    // run along the innermost memref dimension, in bounds.
    ArrayRef<int64_t> shape = vec.getShape();
    if (llvm::any_of(shape.drop_back(), [](int64_t d) { return d != 1; }))
      return failure();
    if (!read.getPermutationMap().isMinorIdentity() ||
        read.getPermutationMap().getNumResults() != vec.getRank() ||
        !read.isDimInBounds(vec.getRank() - 1))
      return failure();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(memref.getStridesAndOffset(strides, offset)))
      return failure();
    int64_t stride = strides.back();
    int64_t n = shape.back();
    if (ShapedType::isDynamic(stride) || stride < 2 || stride > kMaxStride ||
        n < 2)
      return failure();
    // The other vector dimensions (all 1) must be in bounds too.
    for (unsigned d = 0; d + 1 < vec.getRank(); ++d)
      if (!read.isDimInBounds(d))
        return failure();

    Location loc = read.getLoc();
    int64_t span = (n - 1) * stride + 1;
    FlatBuffer buffer = flatBuffer(
        rewriter, loc, read.getBase(), read.getIndices(), [&](Value) {
          return arith::ConstantIndexOp::create(rewriter, loc, span);
        });
    auto spanType = VectorType::get({span}, memref.getElementType());
    Value loaded = vector::LoadOp::create(rewriter, loc, spanType, buffer.flat,
                                          ValueRange{buffer.linear});
    SmallVector<int64_t> lanes;
    for (int64_t i = 0; i < n; ++i)
      lanes.push_back(i * stride);
    Value picked =
        vector::ShuffleOp::create(rewriter, loc, loaded, loaded, lanes);
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(read, vec, picked);
    return success();
  }
};

/// A vector.gather from a memref whose innermost stride is not 1 (x[::3] then
/// gather) has no LLVM lowering: it gathers from the flat buffer instead, at
/// the indices scaled by the stride.
struct StridedGather : OpRewritePattern<vector::GatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::GatherOp gather,
                                PatternRewriter &rewriter) const override {
    auto memref = dyn_cast<MemRefType>(gather.getBase().getType());
    VectorType indexType = gather.getIndices().getType();
    if (!memref || memref.getRank() == 0 || indexType.getRank() != 1)
      return failure();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(memref.getStridesAndOffset(strides, offset)) ||
        strides.back() == 1)
      return failure();
    Location loc = gather.getLoc();
    // (The buffer reaches one past the last element of the innermost dim.)
    FlatBuffer buffer = flatBuffer(
        rewriter, loc, gather.getBase(), gather.getOffsets(),
        [&](Value innerStride) -> Value {
          Value innermost = memref::DimOp::create(
              rewriter, loc, gather.getBase(), memref.getRank() - 1);
          return arith::MulIOp::create(rewriter, loc, innermost, innerStride);
        });
    Type element = indexType.getElementType();
    Value stride = buffer.innerStride;
    if (!element.isIndex())
      stride = arith::IndexCastOp::create(rewriter, loc, element, stride);
    Value strideVector =
        vector::BroadcastOp::create(rewriter, loc, indexType, stride);
    Value scaled =
        arith::MulIOp::create(rewriter, loc, gather.getIndices(), strideVector);
    rewriter.replaceOpWithNewOp<vector::GatherOp>(
        gather, gather.getVectorType(), buffer.flat, ValueRange{buffer.linear},
        scaled, gather.getMask(), gather.getPassThru());
    return success();
  }
};

struct StridedReadsPass
    : public poptorch::impl::PoptorchStridedReadsBase<StridedReadsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedTransferRead, OneElementTransferRead, StridedGather>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // A transfer whose vector ends in unit dims after a wider one (a tile of
    // a copy into (576, 8, 3136, 1)) is unrolled by convert-vector-to-scf
    // into one scalar access per element; without them it is one vector
    // access. (Not one of unit dims only: that would become a 0-d transfer,
    // which convert-vector-to-scf leaves alone.)
    SmallVector<Operation *> trailingUnit;
    getOperation()->walk([&](VectorTransferOpInterface xfer) {
      ArrayRef<int64_t> shape = xfer.getVectorType().getShape();
      if (shape.size() > 1 && shape.back() == 1 &&
          llvm::any_of(shape, [](int64_t s) { return s > 1; }))
        trailingUnit.push_back(xfer);
    });
    RewritePatternSet dropUnit(&getContext());
    vector::populateDropInnerMostUnitDimsXferOpPatterns(dropUnit);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(trailingUnit, std::move(dropUnit), config);
  }
};
} // namespace
