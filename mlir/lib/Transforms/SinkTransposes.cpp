//===- SinkTransposes.cpp - compute in the layout a transpose reads -------===//
//
// poptorch-sink-transposes: a convolution runs channels-last
// (Convolution.cpp) and its result is transposed back to the model's NCHW;
// the batch norm, ReLU and residual add after it then computed in NCHW, and
// the next convolution copied their result to channels-last again: two
// layout changes of every activation per layer.
//
// This pass moves each `linalg.transpose` down past the ops that read it,
// so that they compute in its input's layout and the transpose reaches the
// next op that wants the other layout, where the two cancel:
//
//  * an all-parallel generic that reads the transpose through a permutation
//    computes in the transpose's input layout (its loops reordered, its
//    result transposed back after it) when more of its full-size inputs are
//    (or are about to be, see pendingPermutation) transposes read in that
//    order than not, and every reader of its result can take the transpose
//    in turn; a batch norm's per-channel scale is a broadcast and does not
//    count. The next convolution's channels-last copy then reads the
//    result as it is;
//  * a reduction in that case computes in the input's loop order;
//  * a generic reading the transpose through a broadcast reads the input
//    through the composed map;
//  * an expand_shape, a collapse_shape that keeps each group contiguous in
//    the input, and an insert_slice into a fresh (filled) tensor whose
//    readers can take the transpose (a padded input for a channels-last
//    convolution, not the windows of a pool) apply to the transpose's
//    input, and the transpose moves after them;
//  * a transpose of a transpose becomes one transpose (none for identity).
//
// Any other reader keeps the transpose, which then stays; the readers that
// can take it still do, except reductions, which would read in an order
// that vectorizes worse while the transpose is written anyway. Named ops
// (linalg.copy, linalg.reduce, ...) become generics when they take it;
// contractions and convolutions keep their transposed operands.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHSINKTRANSPOSES
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// The inverse of a permutation.
SmallVector<int64_t> invert(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inv(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inv[p] = i;
  return inv;
}

/// The indexing map that reads a transpose's input where `map` read the
/// transpose: result[i] = input[j] with j[perm[i]] = i, so input dim k is
/// read at what result dim invert(perm)[k] was.
AffineMap readThroughTranspose(AffineMap map, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inv = invert(perm);
  SmallVector<AffineExpr> exprs;
  for (int64_t k = 0; k < (int64_t)perm.size(); ++k)
    exprs.push_back(map.getResult(inv[k]));
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs,
                        map.getContext());
}

/// For a generic reading a transpose through the permutation `map`: the
/// loop that indexes each dim of the transpose's input (sigma[k] is the
/// loop of input dim k).
SmallVector<int64_t> loopsOfInputDims(AffineMap map, ArrayRef<int64_t> perm) {
  AffineMap read = readThroughTranspose(map, perm);
  SmallVector<int64_t> sigma;
  for (AffineExpr e : read.getResults())
    sigma.push_back(cast<AffineDimExpr>(e).getPosition());
  return sigma;
}

bool isContractionOrConvolution(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && (linalg::isaContractionOpInterface(linalgOp) ||
                      linalg::isaConvolutionOpInterface(linalgOp));
}

/// A tensor.empty, or a linalg.fill of one: a fresh tensor that can be made
/// in any layout.
bool isFreshTensor(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    v = fill.getOutputs()[0];
  return v.getDefiningOp<tensor::EmptyOp>() != nullptr;
}

/// The same fresh tensor in another shape.
Value freshTensorLike(OpBuilder &b, Location loc, Value v,
                      ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return linalg::FillOp::create(b, loc, fill.getInputs(), empty).getResult(0);
  return empty;
}

SmallVector<int64_t> permuteShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return out;
}

/// For a collapse_shape of a transpose: the groups of the transpose's input
/// (in its order) and, for each group of the collapse, the position of its
/// group among them; none when a group's dims are not consecutive there.
std::optional<
    std::pair<SmallVector<ReassociationIndices>, SmallVector<int64_t>>>
collapseThroughTranspose(ArrayRef<ReassociationIndices> groups,
                         ArrayRef<int64_t> perm) {
  SmallVector<std::pair<int64_t, int64_t>> starts; // (input start, group)
  for (auto [g, group] : llvm::enumerate(groups)) {
    for (auto [a, b] : llvm::zip(group, llvm::drop_begin(group)))
      if (perm[b] != perm[a] + 1)
        return std::nullopt;
    starts.push_back({perm[group.front()], (int64_t)g});
  }
  llvm::sort(starts);
  SmallVector<ReassociationIndices> inputGroups;
  SmallVector<int64_t> position(groups.size());
  for (auto [pos, start] : llvm::enumerate(starts)) {
    const ReassociationIndices &group = groups[start.second];
    ReassociationIndices in;
    for (int64_t d : group)
      in.push_back(perm[d]);
    inputGroups.push_back(in);
    position[start.second] = pos;
  }
  return std::make_pair(inputGroups, position);
}

/// How far canSink looks ahead through generics that would compute in
/// another order (each one's readers must take the transpose after it),
/// and how many such generics one question may visit in all: a value read
/// by several ops, each read by several, would otherwise be explored once
/// per path. Past either limit the answer is no, and the transpose stays.
constexpr int kMaxLookahead = 24;
constexpr int kLookaheadBudget = 512;
thread_local int lookaheadBudget = kLookaheadBudget;

bool allUsesCanSink(Value v, ArrayRef<int64_t> perm, int depth = 0);

/// How far pendingPermutation looks back through generics.
constexpr int kMaxLookback = 4;

/// The permutation of the transpose that `v` is or will be: a transpose's,
/// or, for an all-parallel generic writing its result in loop order that
/// reads such a value through a permutation in another order, the
/// transpose back after it once it computes in that order. The two inputs
/// of a residual add then count alike while only one has moved yet.
std::optional<SmallVector<int64_t>> pendingPermutation(Value v, int depth) {
  if (auto t = v.getDefiningOp<linalg::TransposeOp>())
    return SmallVector<int64_t>(t.getPermutation());
  auto op = v.getDefiningOp<linalg::GenericOp>();
  if (!op || depth >= kMaxLookback || op.getNumReductionLoops() != 0 ||
      op.getNumDpsInits() != 1 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap m = op.getMatchingIndexingMap(in);
    if (!m.isPermutation())
      continue;
    if (std::optional<SmallVector<int64_t>> p =
            pendingPermutation(in->get(), depth + 1)) {
      SmallVector<int64_t> sigma = loopsOfInputDims(m, *p);
      if (!llvm::equal(sigma, llvm::seq<int64_t>(0, sigma.size())))
        return invert(sigma);
    }
  }
  return std::nullopt;
}

/// The loop order (sigma[k]: the loop of dim k of the transposed tensor)
/// in which `op` computes when `operand` becomes a transpose by `perm` of
/// what it reads: the identity when its order stays, none when it cannot
/// take the transpose. A read through a permutation in another order
/// recomputes the op in that order when more of its full-size inputs are
/// transposes read in that order than not (a batch norm's per-channel scale
/// is a broadcast and does not count); an all-parallel op then writes its
/// result in that order, transposed back after it, so its own readers must
/// take that transpose in turn. Otherwise the op keeps its order and the
/// transpose before it: reading it fused in, a vector of one layout is
/// gathered from the other element by element.
std::optional<SmallVector<int64_t>> computeOrder(linalg::LinalgOp op,
                                                 OpOperand *operand,
                                                 ArrayRef<int64_t> perm,
                                                 int depth) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (!map.isProjectedPermutation())
    return std::nullopt;
  int64_t n = op.getNumLoops();
  SmallVector<int64_t> identity = llvm::to_vector(llvm::seq<int64_t>(0, n));
  if (!map.isPermutation())
    return identity; // a broadcast read
  SmallVector<int64_t> sigma = loopsOfInputDims(map, perm);
  if (sigma == identity)
    return identity;
  if (op.getNumDpsInits() != 1 || depth >= kMaxLookahead ||
      --lookaheadBudget < 0)
    return std::nullopt;
  bool reduction = op.getNumReductionLoops() != 0;
  if (!reduction &&
      (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
       op.payloadUsesValueFromOperand(op.getDpsInitOperand(0))))
    return std::nullopt;
  int64_t same = 0, other = 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap m = op.getMatchingIndexingMap(in);
    if (!m.isPermutation())
      continue;
    std::optional<SmallVector<int64_t>> p =
        in->get() == operand->get() ? SmallVector<int64_t>(perm)
                                    : pendingPermutation(in->get(), 0);
    if (p && loopsOfInputDims(m, *p) == sigma)
      ++same;
    else
      ++other;
  }
  if (same <= other ||
      (!reduction &&
       !allUsesCanSink(op->getResult(0), invert(sigma), depth + 1)))
    return std::nullopt;
  return sigma;
}

/// Whether the op that reads `use` can take a transpose by `perm` of what
/// it reads. A generic only through a projected permutation (one that reads
/// windows, an im2col's gather, would read the other layout element by
/// element) and as computeOrder says. An insert_slice only when what reads
/// its result can take the transpose after it too: the windows of a padded
/// input (a depthwise convolution's, a pool's) would read a transposed copy
/// of the whole padded tensor.
bool canSink(OpOperand &use, ArrayRef<int64_t> perm, int depth) {
  Operation *user = use.getOwner();
  if (isa<linalg::TransposeOp>(user))
    return true;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
    return expand.getResultType().hasStaticShape();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
    return collapseThroughTranspose(collapse.getReassociationIndices(), perm)
        .has_value();
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(user))
    return use.getOperandNumber() == 0 && insert.hasUnitStride() &&
           insert.getSourceType().getRank() == insert.getDestType().getRank() &&
           insert.getDestType().hasStaticShape() &&
           llvm::all_of(insert.getStaticOffsets(),
                        [](int64_t o) { return !ShapedType::isDynamic(o); }) &&
           isFreshTensor(insert.getDest()) &&
           allUsesCanSink(insert.getResult(), perm, depth);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
  if (!linalgOp || isContractionOrConvolution(user) ||
      !linalgOp.hasPureTensorSemantics() || !linalgOp.isDpsInput(&use) ||
      !isa<linalg::GenericOp, linalg::ReduceOp, linalg::CopyOp, linalg::MapOp,
           linalg::BroadcastOp>(user))
    return false;
  // A named op is decided as the generic it becomes.
  return computeOrder(linalgOp, &use, perm, depth).has_value();
}

bool allUsesCanSink(Value v, ArrayRef<int64_t> perm, int depth) {
  return !v.use_empty() && llvm::all_of(v.getUses(), [&](OpOperand &use) {
    return canSink(use, perm, depth);
  });
}

/// `op` computing in the loop order `sigma` (see computeOrder), reading the
/// transposes of that order's inputs directly. An all-parallel one writes
/// its result in that order, transposed back into its init after it.
void recompute(PatternRewriter &rewriter, linalg::GenericOp op,
               ArrayRef<int64_t> sigma) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  int64_t n = sigma.size();
  SmallVector<int64_t> sigmaInv = invert(sigma);
  // Old loop i is new loop sigmaInv[i].
  SmallVector<AffineExpr> oldLoops;
  for (int64_t i = 0; i < n; ++i)
    oldLoops.push_back(getAffineDimExpr(sigmaInv[i], ctx));
  AffineMap toOld = AffineMap::get(n, 0, oldLoops, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap m = op.getMatchingIndexingMap(in);
    auto t = in->get().getDefiningOp<linalg::TransposeOp>();
    if (t && m.isPermutation() &&
        loopsOfInputDims(m, t.getPermutation()) == sigma) {
      inputs.push_back(t.getInput());
      maps.push_back(
          readThroughTranspose(m, t.getPermutation()).compose(toOld));
    } else {
      inputs.push_back(in->get());
      maps.push_back(m.compose(toOld));
    }
  }
  SmallVector<utils::IteratorType> oldIterators = op.getIteratorTypesArray(),
                                   iterators;
  for (int64_t k = 0; k < n; ++k)
    iterators.push_back(oldIterators[sigma[k]]);
  Value init = op.getDpsInitOperand(0)->get();
  bool reduction = op.getNumReductionLoops() != 0;
  Value newInit = init;
  if (reduction) {
    maps.push_back(
        op.getMatchingIndexingMap(op.getDpsInitOperand(0)).compose(toOld));
  } else {
    maps.push_back(AffineMap::getMultiDimIdentityMap(n, ctx));
    auto initType = cast<RankedTensorType>(init.getType());
    newInit = tensor::EmptyOp::create(rewriter, loc,
                                      permuteShape(initType.getShape(), sigma),
                                      initType.getElementType());
  }
  auto generic =
      linalg::GenericOp::create(rewriter, loc, TypeRange{newInit.getType()},
                                inputs, ValueRange{newInit}, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                              generic.getRegion().begin());
  if (reduction) {
    rewriter.replaceOp(op, generic->getResults());
    return;
  }
  // Result dim i is loop i, computed as dim sigmaInv[i].
  auto back = linalg::TransposeOp::create(rewriter, loc, generic.getResult(0),
                                          init, sigmaInv);
  rewriter.replaceOp(op, back->getResults());
}

/// Whether `op` copies its one input unchanged, in the same order, into a
/// slice of another tensor (a convolution's channels-last copy into the
/// interior of its padded input, once the transpose it read is gone).
/// Canonicalization would erase such a generic, leaving an insert_slice of
/// the input that bufferizes into a strided memref.copy; as a linalg.copy it
/// is vectorized, or its producer computes into the slice.
bool isIdentityCopyIntoSlice(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !op.getDpsInits()[0].getDefiningOp<tensor::ExtractSliceOp>())
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return op.getBody()->getOperations().size() == 1 &&
         yield.getValues()[0] == op.getBody()->getArgument(0) &&
         op.getDpsInputs()[0].getType() == op.getResultTypes()[0];
}

/// Moves the transpose `op` below the ops that read it.
struct SinkTranspose : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    ArrayRef<int64_t> perm = op.getPermutation();
    Value input = op.getInput();
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      rewriter.replaceOp(op, input);
      return success();
    }
    Value result = op->getResult(0);
    // The readers that can take the transpose; it stays for the others.
    // When it stays, a reduction reads it as it is: computed in the other
    // order, a reduction over the innermost dim (a layer norm's over the
    // channels of a channels-last image) becomes one over a middle dim,
    // which vectorizes worse, and the transpose is written anyway.
    SmallVector<OpOperand *> uses;
    bool stays = false;
    for (OpOperand &use : result.getUses()) {
      lookaheadBudget = kLookaheadBudget;
      if (canSink(use, perm, 0))
        uses.push_back(&use);
      else
        stays = true;
    }
    if (stays)
      llvm::erase_if(uses, [](OpOperand *use) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(use->getOwner());
        return linalgOp && linalgOp.getNumReductionLoops() != 0;
      });
    if (uses.empty())
      return failure();
    auto inputType = cast<RankedTensorType>(input.getType());
    // Each reader in turn; one reading the transpose twice is rewritten
    // once for both reads.
    SmallVector<Operation *> users;
    for (OpOperand *use : uses)
      if (!llvm::is_contained(users, use->getOwner()))
        users.push_back(use->getOwner());
    for (Operation *user : users) {
      rewriter.setInsertionPoint(user);
      Location loc = user->getLoc();
      if (auto t = dyn_cast<linalg::TransposeOp>(user)) {
        SmallVector<int64_t> composed;
        for (int64_t q : t.getPermutation())
          composed.push_back(perm[q]);
        rewriter.replaceOpWithNewOp<linalg::TransposeOp>(t, input, t.getInit(),
                                                         composed);
        continue;
      }
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
        auto groups = expand.getReassociationIndices();
        ArrayRef<int64_t> outShape = expand.getResultType().getShape();
        SmallVector<int64_t> inv = invert(perm), start(perm.size());
        SmallVector<ReassociationIndices> newGroups;
        SmallVector<int64_t> newShape;
        for (int64_t k = 0; k < (int64_t)perm.size(); ++k) {
          start[k] = newShape.size();
          ReassociationIndices group;
          for (int64_t d : groups[inv[k]]) {
            group.push_back(newShape.size());
            newShape.push_back(outShape[d]);
          }
          newGroups.push_back(group);
        }
        SmallVector<int64_t> newPerm(outShape.size());
        for (auto [i, group] : llvm::enumerate(groups))
          for (auto [t, d] : llvm::enumerate(group))
            newPerm[d] = start[perm[i]] + t;
        auto type = RankedTensorType::get(newShape, inputType.getElementType());
        Value expanded = tensor::ExpandShapeOp::create(rewriter, loc, type,
                                                       input, newGroups);
        Value init = tensor::EmptyOp::create(rewriter, loc, outShape,
                                             inputType.getElementType());
        rewriter.replaceOpWithNewOp<linalg::TransposeOp>(expand, expanded, init,
                                                         newPerm);
        continue;
      }
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user)) {
        auto [groups, position] =
            *collapseThroughTranspose(collapse.getReassociationIndices(), perm);
        Value collapsed =
            tensor::CollapseShapeOp::create(rewriter, loc, input, groups);
        Value init = tensor::EmptyOp::create(
            rewriter, loc, collapse.getResultType().getShape(),
            inputType.getElementType());
        rewriter.replaceOpWithNewOp<linalg::TransposeOp>(collapse, collapsed,
                                                         init, position);
        continue;
      }
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user)) {
        SmallVector<int64_t> inv = invert(perm);
        ArrayRef<int64_t> destShape = insert.getDestType().getShape();
        Value dest = freshTensorLike(rewriter, loc, insert.getDest(),
                                     permuteShape(destShape, inv));
        SmallVector<OpFoldResult> offsets = getAsIndexOpFoldResult(
            rewriter.getContext(),
            permuteShape(insert.getStaticOffsets(), inv));
        SmallVector<OpFoldResult> sizes =
            getAsIndexOpFoldResult(rewriter.getContext(), inputType.getShape());
        SmallVector<OpFoldResult> strides(perm.size(),
                                          rewriter.getIndexAttr(1));
        // The interior written by a linalg.copy (as padding is everywhere),
        // which is vectorized, or which the producer of `input` computes
        // into (poptorch-fuse-elementwise): a bare insert_slice bufferizes
        // into a strided memref.copy, element by element at run time.
        Value interior = tensor::ExtractSliceOp::create(
            rewriter, loc, cast<RankedTensorType>(input.getType()), dest,
            offsets, sizes, strides);
        Value copied =
            linalg::CopyOp::create(rewriter, loc, input, interior).getResult(0);
        Value inserted = tensor::InsertSliceOp::create(
            rewriter, loc, copied, dest, offsets, sizes, strides);
        Value init = tensor::EmptyOp::create(rewriter, loc, destShape,
                                             inputType.getElementType());
        rewriter.replaceOpWithNewOp<linalg::TransposeOp>(insert, inserted, init,
                                                         perm);
        continue;
      }
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic) {
        FailureOr<linalg::GenericOp> g =
            linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(user));
        if (failed(g))
          return failure(); // not reached: canSink accepts generalizable ops
        generic = *g;
      }
      // The reads of the transpose that can take it (see canSink).
      SmallVector<OpOperand *> reads;
      for (OpOperand *in : generic.getDpsInputOperands())
        if (in->get() == result &&
            generic.getMatchingIndexingMap(in).isProjectedPermutation())
          reads.push_back(in);
      lookaheadBudget = kLookaheadBudget;
      std::optional<SmallVector<int64_t>> sigma =
          computeOrder(generic, reads.front(), perm, 0);
      if (!sigma)
        continue; // a generalized named op that keeps the transpose
      if (!llvm::equal(*sigma, llvm::seq<int64_t>(0, sigma->size()))) {
        recompute(rewriter, generic, *sigma);
        continue;
      }
      // Read the transpose's input through the composed map.
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      rewriter.modifyOpInPlace(generic, [&] {
        for (OpOperand *in : reads) {
          maps[in->getOperandNumber()] =
              readThroughTranspose(maps[in->getOperandNumber()], perm);
          in->set(input);
        }
        generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      if (isIdentityCopyIntoSlice(generic))
        rewriter.replaceOpWithNewOp<linalg::CopyOp>(
            generic, generic.getDpsInputs()[0], generic.getDpsInits()[0]);
    }
    if (result.use_empty())
      rewriter.eraseOp(op);
    return success();
  }
};

struct SinkTransposesPass
    : public poptorch::impl::PoptorchSinkTransposesBase<SinkTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
