//===- FuseElementwise.cpp - elementwise fusion that keeps contractions ---===//
//
// poptorch-fuse-elementwise: upstream's elementwise fusion and reshape
// propagation, except that contractions and named convolutions are never
// rewritten. Upstream `linalg-fuse-elementwise-ops` folds reshapes into them
// by expansion, which turns linalg.matmul into a linalg.generic that the
// codegen strategy no longer recognises as a matmul, and fuses elementwise
// producers into a generic contraction (poptorch-pack-weights' panel
// matmuls), which then recomputes them for every column tile.
//
// An all-parallel generic reading a contraction's result through an
// expand_shape (the bias and activation after a linear layer on a 3-D input,
// whose matmul runs on the input's rows collapsed), and nothing else along
// the expanded dims, has its loops collapsed to the contraction's, so that it
// reads the result as it is: the tiling pass then computes it on the
// accumulator still in registers. Not when it writes into part of a larger
// tensor (a padded input) in a way the collapse would not keep contiguous.
//
// Element reads (`tensor.extract`) from a transposed tensor read the
// transpose's input instead, so a gather never materializes a transpose; a
// transpose read only by an elementwise op fuses into it.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHFUSEELEMENTWISE
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

/// Ops whose identity the codegen strategy relies on: contractions (named
/// or generic) and named convolutions.
static bool isContractionOrConvolution(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp)
    return false;
  return linalg::isaContractionOpInterface(linalgOp) ||
         (!isa<linalg::GenericOp>(op) &&
          linalg::isaConvolutionOpInterface(linalgOp));
}

/// Folding the collapse_shape that produces `operand` into its consumer
/// expands the consumer's loops over the collapsed dims. A reduction loop
/// split in two (a layer norm's mean over 48 x 16 instead of 768, after the
/// matmul before it went into weight panels) tiles and vectorizes poorly: a
/// vector of the whole 2-D block, flattened element group by element group.
static bool splitsReduction(OpOperand *operand) {
  auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!collapse || !consumer || consumer.getNumReductionLoops() == 0)
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  SmallVector<utils::IteratorType> iterators = consumer.getIteratorTypesArray();
  for (auto [i, group] : llvm::enumerate(collapse.getReassociationIndices())) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
    if (group.size() > 1 && dim &&
        iterators[dim.getPosition()] == utils::IteratorType::reduction)
      return true;
  }
  return false;
}

/// Producers with more inputs than this are not fused into a consumer that
/// reads them transposed (see transposesManyInputs).
static constexpr unsigned kMaxTransposedInputs = 8;

/// Whether fusing the producer of `operand` into its consumer would read
/// more than kMaxTransposedInputs of the producer's inputs through a
/// transposition: the consumer reads `operand` through a permutation (a
/// transpose fused into it), which fusion composes with every input map of
/// the producer, and each transposed input is tiled in squares transposed
/// in registers. A depthwise convolution's window taps before an NCHW ->
/// NHWC permute and a layer norm made one such square per tap: a bf16 5x5
/// one did not compile in minutes, a 3x3 one took 12 s.
static bool transposesManyInputs(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer ||
      producer.getNumDpsInputs() <= kMaxTransposedInputs)
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  return map.isPermutation() && !map.isIdentity();
}

/// Whether `v` is read only by contractions, directly or through reshapes.
static bool onlyContractionsRead(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUsers(), [](Operation *user) {
    return isContractionOrConvolution(user) ||
           (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user) &&
            onlyContractionsRead(user->getResult(0)));
  });
}

/// Whether `op` is an expanding reshape that only contractions read: a view
/// of an operand in the layout a contraction reads it in
/// (poptorch-pack-weights' A viewed as M x (K / 2) x 2 for a weight in pairs
/// of rows), possibly behind a collapse that the reshape propagation moved
/// after it. Its producer keeps its own shape: expanded, an elementwise
/// producer would iterate innermost over the pair, two elements per vector.
static bool isContractionOperandView(Operation *op) {
  return isa<tensor::ExpandShapeOp>(op) &&
         onlyContractionsRead(op->getResult(0));
}

/// Whether fusing the producer of `operand` would compute a division or a
/// math function (a batch norm's rsqrt(var + eps) * gamma) once per element
/// of a consumer that broadcasts the producer's smaller result (over the
/// pixels of a channels-last image) instead of once per element of its own.
static bool recomputesPerBroadcast(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer ||
      producer.getNumLoops() >= consumer.getNumLoops() ||
      consumer.getMatchingIndexingMap(operand).isPermutation())
    return false;
  return llvm::any_of(producer.getBody()->getOperations(), [](Operation &op) {
    return isa<arith::DivFOp>(op) || op.getDialect()->getNamespace() == "math";
  });
}

/// Fuse (or fold a reshape) across `operand` only when neither side is a
/// contraction/convolution or a view for one, and only when the producer
/// has no other user (so fusion never duplicates work).
static bool shouldFuse(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || isContractionOrConvolution(producer) ||
      isContractionOrConvolution(operand->getOwner()) ||
      isContractionOperandView(operand->getOwner()))
    return false;
  if (splitsReduction(operand) || transposesManyInputs(operand) ||
      recomputesPerBroadcast(operand))
    return false;
  return producer->hasOneUse();
}

/// Whether the slice `op` (an extract_slice or insert_slice of a tensor of
/// the same rank) spans each of `groups` contiguously: unit strides, and
/// every dim of a group but its first whole, so that the group collapses
/// into one dim of the sliced tensor.
template <typename SliceOp>
static bool keepsGroupsContiguous(SliceOp op,
                                  ArrayRef<ReassociationIndices> groups) {
  RankedTensorType full = op.getSourceType(), part = op.getResultType();
  if constexpr (std::is_same_v<SliceOp, tensor::InsertSliceOp>)
    std::swap(full, part);
  if (full.getRank() != part.getRank() || !op.hasUnitStride())
    return false;
  for (const ReassociationIndices &group : groups)
    for (int64_t d : llvm::drop_begin(group))
      if (part.getDimSize(d) != full.getDimSize(d))
        return false;
  return true;
}

/// Whether `operand` is a contraction's result (its only use) expanded for an
/// all-parallel generic whose other inputs do not vary along the expanded
/// dims: a linear layer's bias and activation on a 3-D input, (B * S, N)
/// viewed as (B, S, N). Collapsing the generic's loops to the contraction's
/// makes it the contraction's one elementwise consumer (see
/// getFusableConsumer in poptorch-tile-and-vectorize), which runs on the
/// accumulator in registers instead of reading the result back from memory.
/// An input read along those dims (a residual) would be read collapsed: the
/// layers of a transformer would then pass their activations on collapsed,
/// except the first, which reads them as the model gives them, and
/// poptorch-outline-repeats would no longer see the first layer as a repeat
/// of the others.
static bool isExpandedContractionResult(OpOperand *operand) {
  auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!expand || !consumer || consumer.getNumReductionLoops() != 0 ||
      !expand->hasOneUse() || !expand.getSrc().hasOneUse())
    return false;
  auto contraction = expand.getSrc().getDefiningOp<linalg::LinalgOp>();
  if (!contraction || !linalg::isaContractionOpInterface(contraction))
    return false;
  // The generic's loops over the dims that the expand splits.
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  llvm::SmallDenseSet<unsigned> expandedLoops;
  for (const ReassociationIndices &group : expand.getReassociationIndices()) {
    if (group.size() < 2)
      continue;
    for (int64_t d : group)
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(d)))
        expandedLoops.insert(dim.getPosition());
  }
  if (!llvm::none_of(consumer.getDpsInputOperands(), [&](OpOperand *in) {
        return in != operand && llvm::any_of(expandedLoops, [&](unsigned loop) {
                 return consumer.getMatchingIndexingMap(in).isFunctionOfDim(
                     loop);
               });
      }))
    return false;
  // Collapsed, a generic that writes into the interior of a larger tensor
  // (a padded input, as a batch norm and ReLU before a convolution do) would
  // compute into a temporary and make a strided copy of it, unless each
  // group of expanded dims stays contiguous in what it writes. That is
  // checked where the generic writes in the result's own order; another
  // order (channels-last for the next convolution) is not collapsed.
  if (consumer.getNumDpsInits() != 1)
    return false;
  bool sameOrder =
      consumer.getMatchingIndexingMap(operand) ==
      consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0));
  auto groups = expand.getReassociationIndices();
  if (auto slice = consumer.getDpsInitOperand(0)
                       ->get()
                       .getDefiningOp<tensor::ExtractSliceOp>();
      slice && !(sameOrder && keepsGroupsContiguous(slice, groups)))
    return false;
  for (Operation *user : consumer->getUsers())
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(user);
        insert && !(sameOrder && keepsGroupsContiguous(insert, groups)))
      return false;
  return true;
}

namespace {
/// An element read (`tensor.extract`, a gather's body) from a transposed
/// tensor reads the transpose's input at the permuted position: the
/// transpose is never materialized for a gather (an embedding that reads a
/// prepacked, transposed table).
struct ExtractFromTranspose : public OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getTensor().getDefiningOp<linalg::TransposeOp>();
    if (!transpose)
      return failure();
    // result[i_0, ..., i_n] = input[j] with j[perm[k]] = i_k.
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<Value> indices(perm.size());
    for (auto [k, p] : llvm::enumerate(perm))
      indices[p] = op.getIndices()[k];
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, transpose.getInput(),
                                                   indices);
    return success();
  }
};

/// A transpose whose only user is an elementwise generic (the batch norm
/// after a convolution of several images, whose matmul yields (F, N, H, W))
/// becomes a generic itself, so that elementwise fusion folds it into the
/// user's indexing map: one pass over the tensor instead of two.
struct GeneralizeTransposeIntoElementwise
    : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasOneUse() || !op.hasPureTensorSemantics())
      return failure();
    auto user = dyn_cast<linalg::GenericOp>(*op->getUsers().begin());
    if (!user || user.getNumReductionLoops() != 0 ||
        !llvm::is_contained(user.getDpsInputs(), op->getResult(0)))
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// A 1-D input of a generic expanded with unit dims that the generic reads at
/// index 0 (a batch norm's per-channel scale, (C) -> (C, 1, 1), broadcast
/// over an image) is read unexpanded when its one dim is the innermost loop:
/// in channels-last order, where C is the vectorized dim, the (C, 1, 1)
/// tensor was read one element at a time, the (C) one is a contiguous vector.
struct ReadUnitExpandedInputUnexpanded
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto expand = in->get().getDefiningOp<tensor::ExpandShapeOp>();
      if (!expand || !expand.getResultType().hasStaticShape() ||
          expand.getSrcType().getRank() != 1)
        continue;
      AffineMap map = op.getMatchingIndexingMap(in);
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      // Only a read along the innermost loop, the one that becomes the
      // vector: a vector read of the (C) tensor is then contiguous. A lower
      // rank input read across the vector instead (a per-row value) lowers
      // to one broadcast per element, far worse than the unit-dim read. So:
      // one dim read by the innermost loop, every other a unit dim read at 0.
      auto inner = rewriter.getAffineDimExpr(op.getNumLoops() - 1);
      int64_t readByInner = 0;
      bool othersUnitAtZero = true;
      for (auto [d, e] : llvm::enumerate(map.getResults())) {
        if (e == inner) {
          ++readByInner;
          continue;
        }
        auto c = dyn_cast<AffineConstantExpr>(e);
        othersUnitAtZero &= shape[d] == 1 && c && c.getValue() == 0;
      }
      if (readByInner != 1 || !othersUnitAtZero)
        continue;
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[in->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, inner, op.getContext());
      rewriter.modifyOpInPlace(op, [&] {
        in->set(expand.getSrc());
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};

/// A linalg.copy of the only result of an elementwise generic (a batch norm
/// and ReLU6 copied into the interior of a zero-padded tensor, the input of
/// a depthwise convolution) becomes the generic writing into the copy's
/// destination: one pass over the tensor instead of two. The generic moves
/// down to the copy, after the destination is made. (Elementwise fusion may
/// give it a tensor.empty again, as it does every op that does not read its
/// init; poptorch-distinct-buffers then computes such a value into the
/// slice of the fill that it is inserted into.)
struct ComputeIntoCopyDestination : public OpRewritePattern<linalg::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    if (!copy.hasPureTensorSemantics())
      return failure();
    Value input = copy.getInputs()[0];
    auto producer = input.getDefiningOp<linalg::GenericOp>();
    if (!producer || !input.hasOneUse() || producer->getNumResults() != 1 ||
        producer.getNumReductionLoops() != 0 ||
        producer->getBlock() != copy->getBlock() ||
        isContractionOrConvolution(producer))
      return failure();
    OpOperand *init = producer.getDpsInitOperand(0);
    if (producer.payloadUsesValueFromOperand(init) ||
        input.getType() != copy.getResultTypes()[0])
      return failure();
    rewriter.moveOpBefore(producer, copy);
    rewriter.modifyOpInPlace(producer,
                             [&] { init->set(copy.getOutputs()[0]); });
    rewriter.replaceOp(copy, producer->getResults());
    return success();
  }
};

struct FuseElementwisePass
    : public poptorch::impl::PoptorchFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    patterns.add<ExtractFromTranspose, GeneralizeTransposeIntoElementwise,
                 ReadUnitExpandedInputUnexpanded, ComputeIntoCopyDestination>(
        ctx);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // After fusion, so that the epilogue is whole; on its own, so that the
    // expansion above does not expand the collapsed generic again.
    RewritePatternSet epilogues(ctx);
    linalg::populateFoldReshapeOpsByCollapsingPatterns(
        epilogues, isExpandedContractionResult);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(epilogues, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(epilogues, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(epilogues))))
      signalPassFailure();
  }
};
} // namespace
