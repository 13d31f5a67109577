//===- TilingUtils.cpp - shared tiling steps ------------------------------===//
//
// The tiling steps that poptorch-tile-and-vectorize's strategies share:
// slices, tile loops, peeling, and the distribution of an op's tiles over
// the cores (scf.forall).
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;

namespace mlir::poptorch::tiling {

Value sliceSource(Value v) {
  while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getResultType().getRank())
      break;
    v = slice.getSource();
  }
  return v;
}

SmallVector<LoopLikeOpInterface>
tileLoopsAround(Operation *op, llvm::function_ref<bool(Operation *)> inside) {
  SmallVector<LoopLikeOpInterface> loops;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop && inside(loop);
       loop = loop->getParentOfType<scf::ForOp>())
    loops.insert(loops.begin(), loop);
  return loops;
}

bool hasStaticLoops(linalg::LinalgOp op) {
  return llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

SmallVector<OpFoldResult> asIndexAttrs(OpBuilder &b, ArrayRef<int64_t> v) {
  return llvm::map_to_vector(
      v, [&](int64_t x) -> OpFoldResult { return b.getIndexAttr(x); });
}

SmallVector<Operation *> peelPartialTiles(RewriterBase &rewriter,
                                          ArrayRef<LoopLikeOpInterface> loops) {
  SmallVector<Operation *> partials;
  for (LoopLikeOpInterface loop : llvm::reverse(loops)) {
    auto forOp = dyn_cast<scf::ForOp>(loop.getOperation());
    if (!forOp)
      continue;
    scf::ForOp partial;
    if (succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, forOp, partial)))
      partials.push_back(partial);
  }
  return partials;
}

int64_t estimateCost(linalg::LinalgOp op) {
  auto mul = [](int64_t a, int64_t b) {
    int64_t r;
    return llvm::MulOverflow(a, b, r) ? std::numeric_limits<int64_t>::max() : r;
  };
  int64_t cost = 1;
  for (int64_t r : op.getStaticLoopRanges())
    cost = mul(cost, std::max<int64_t>(r, 1));
  int64_t bodyOps = 0;
  if (Block *body = op.getBlock())
    bodyOps = std::distance(body->begin(), body->end()) - 1; // - yield
  return mul(cost, std::max<int64_t>(bodyOps, 1));
}

bool shouldDistribute(linalg::LinalgOp op, int64_t minParallelCost) {
  return minParallelCost >= 0 && estimateCost(op) >= minParallelCost;
}

std::optional<unsigned> pickParallelLoop(linalg::LinalgOp op,
                                         ArrayRef<int64_t> tileSizes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  std::optional<unsigned> best;
  int64_t bestTrips = 1;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    int64_t t = tileSizes[d];
    if (iters[d] != utils::IteratorType::parallel || t <= 0 ||
        ShapedType::isDynamic(ranges[d]) || ranges[d] % t != 0)
      continue;
    int64_t trips = ranges[d] / t;
    if (trips >= kMinParallelTrips)
      return d;
    if (trips > bestTrips) {
      best = d;
      bestTrips = trips;
    }
  }
  return best;
}

FailureOr<scf::SCFTileAndFuseResult>
tileAndFuse(RewriterBase &rewriter, TilingInterface root,
            ArrayRef<int64_t> sizes, scf::SCFTilingOptions::LoopType loopType,
            std::function<bool(Operation *)> fuse,
            ArrayRef<int64_t> interchange) {
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(asIndexAttrs(rewriter, sizes));
  if (!interchange.empty())
    options.tilingOptions.setInterchange(interchange);
  options.tilingOptions.setLoopType(loopType);
  options.setFusionControlFn(
      [fuse](tensor::ExtractSliceOp, OpResult producer, bool)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (fuse(producer.getOwner()))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(tiled))
    return failure();
  for (OpResult res : root->getResults())
    if (Value repl = tiled->replacements.lookup(res))
      rewriter.replaceAllUsesWith(res, repl);
  return tiled;
}

FailureOr<scf::SCFTileAndFuseResult>
distributeLoop(RewriterBase &rewriter, TilingInterface root, unsigned dim,
               int64_t size, std::function<bool(Operation *)> fuse) {
  SmallVector<int64_t> sizes(root.getLoopIteratorTypes().size(), 0);
  sizes[dim] = size;
  return tileAndFuse(rewriter, root, sizes,
                     scf::SCFTilingOptions::LoopType::ForallOp, fuse);
}

FailureOr<scf::SCFTilingResult>
tileSequentially(RewriterBase &rewriter, linalg::LinalgOp op,
                 ArrayRef<int64_t> sizes, ArrayRef<int64_t> interchange) {
  scf::SCFTilingOptions options;
  options.setTileSizes(asIndexAttrs(rewriter, sizes));
  if (!interchange.empty())
    options.setInterchange(interchange);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

bool distributeAndRetile(RewriterBase &rewriter, linalg::LinalgOp op,
                         ArrayRef<int64_t> sizes, int64_t minParallelCost,
                         llvm::function_ref<void(linalg::LinalgOp)> retile,
                         std::optional<unsigned> dim,
                         std::function<bool(Operation *)> fuse) {
  if (!shouldDistribute(op, minParallelCost))
    return false;
  if (!dim)
    dim = pickParallelLoop(op, sizes);
  if (!dim)
    return false;
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      distributeLoop(rewriter, cast<TilingInterface>(op.getOperation()), *dim,
                     sizes[*dim], fuse);
  if (failed(tiled))
    return false;
  if (linalg::LinalgOp inner =
          findTiled(*tiled, [&](linalg::LinalgOp l) { return !fuse(l); }))
    retile(inner);
  return true;
}

} // namespace mlir::poptorch::tiling
