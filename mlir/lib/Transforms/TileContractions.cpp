//===- TileContractions.cpp - register tiles of contractions --------------===//
//
// Contractions (anything linalg::inferContractionDims accepts) tiled into
// register blocks of accumulators, with their fill and one elementwise
// consumer fused; their B panels packed per call; their reduction tiled
// and, for long ones, blocked; the expensive ones first split among the
// cores.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <numeric>

using namespace mlir;

namespace mlir::poptorch::tiling {

/// Contractions whose reduction is at least this long, with an unpacked B,
/// run their reduction in blocks (reductionBlock, tileBlockedReduction).
/// Measured (2026-11-30, BERT's second feed-forward matmul, 1024x3072 @
/// 3072x768, both cores, medians of 15 calls): 145 GFLOP/s with the whole
/// reduction in each register tile, 179 with it split in two matmuls of 1536
/// and an add, 182 in four.
constexpr int64_t kMinBlockedReduction = 2048;

/// Columns of the register block of a contraction whose row block has `mr`
/// rows: two registers by t.rows rows keeps 16 (AVX-512) or 12 (AVX2)
/// accumulators in registers; short m (batch-1/8 linear layers) widens the
/// block so that enough independent FMA chains hide the latency.
int64_t blockColumns(int64_t mr, const VectorTarget &t) {
  return mr >= 6   ? 2 * t.lanes
         : mr >= 3 ? t.registers / 8 * t.lanes
                   : t.registers / 4 * t.lanes;
}

/// Register-tile sizes for every loop of a contraction, and the reduction
/// tile. All batch dims and outer m dims get 1; the innermost m and the n
/// dims form the accumulator block.
struct ContractionTiles {
  SmallVector<int64_t> parallel;  // per loop; 0 for reduction loops
  SmallVector<int64_t> reduction; // per loop; 0 for parallel loops
  bool packRhs = true;            // see packRhsPanel
};

std::optional<unsigned>
pairedReductionLoop(linalg::LinalgOp op,
                    const linalg::ContractionDimensions &dims) {
  if (dims.k.size() != 2 || !hasStaticLoops(op) ||
      op.getStaticLoopRanges()[dims.k[1]] != 2)
    return std::nullopt;
  AffineExpr kr = getAffineDimExpr(dims.k[1], op->getContext());
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (map.getNumResults() == 0 || map.getResults().back() != kr)
      return std::nullopt;
  }
  return dims.k[1];
}

unsigned tiledReductionLoop(linalg::LinalgOp op,
                            const linalg::ContractionDimensions &dims) {
  return pairedReductionLoop(op, dims) ? dims.k[0] : dims.k.back();
}

std::optional<ContractionTiles> chooseContractionTiles(linalg::LinalgOp op) {
  // A generic reading through sums of loop indices (a 3-D convolution's
  // windows) is no matmul: its window loops are none of m, n, k, and left
  // whole they made the whole op one vector. It takes the generic path.
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty() ||
      !hasStaticLoops(op) ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) {
        return m.isProjectedPermutation(/*allowZeroInResults=*/true);
      }))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned nLoops = ranges.size();
  // Every loop is tiled, to 1 unless chosen below.
  ContractionTiles t{SmallVector<int64_t>(nLoops, 0),
                     SmallVector<int64_t>(nLoops, 0)};
  for (auto [d, iter] : llvm::enumerate(op.getIteratorTypesArray()))
    (iter == utils::IteratorType::parallel ? t.parallel : t.reduction)[d] = 1;

  std::optional<unsigned> pair = pairedReductionLoop(op, *dims);
  unsigned mDim = dims->m.back(), nDim = dims->n.back(),
           kDim = tiledReductionLoop(op, *dims);
  int64_t m = ranges[mDim], n = ranges[nDim], k = ranges[kDim] * (pair ? 2 : 1);
  int64_t lanes = target.lanes;
  int64_t mr = std::min<int64_t>(m, target.rows);
  int64_t nrWanted = blockColumns(mr, target);
  int64_t nr = n <= nrWanted ? n : nrWanted;
  if (n > nrWanted && n < nrWanted + lanes)
    nr = nrWanted; // avoid a sliver: one masked remainder tile
  int64_t kt = 1;
  for (int64_t c : {8, 4, 2})
    if (k % c == 0) {
      kt = c;
      break;
    }
  t.parallel[mDim] = mr;
  t.parallel[nDim] = nr;
  if (pair) {
    // kt is even, or k is odd and no pair form was made.
    t.reduction[kDim] = kt / 2;
    t.reduction[*pair] = 0;
  } else {
    t.reduction[kDim] = kt;
  }
  return t;
}

/// A single all-parallel generic consuming `op`'s result with an identity
/// map, the same iteration space and nothing else in between: it can run in
/// the contraction's tile loop on the accumulator still in registers.
linalg::GenericOp getFusableConsumer(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return nullptr;
  OpOperand &use = *op->getResult(0).getUses().begin();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || consumer.getNumReductionLoops() != 0 ||
      consumer.getNumDpsInits() != 1 || !hasStaticLoops(consumer) ||
      !consumer.getMatchingIndexingMap(&use).isIdentity() ||
      !consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0))
           .isIdentity())
    return nullptr;
  return consumer;
}

bool isTiledContraction(linalg::LinalgOp l) {
  return !isa<linalg::FillOp>(l) && l.getNumReductionLoops() > 0 &&
         (linalg::isaContractionOpInterface(l) ||
          succeeded(linalg::inferContractionDims(l)));
}

void tileContractionForRegisters(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const ContractionTiles &tiles);

/// Register-tiles `inner`, a slice of a contraction made by an outer tiling
/// (a parallel task or a reduction block), with tiles chosen for its own
/// shape and the packing choice of the whole op.
void retileForRegisters(RewriterBase &rewriter, linalg::LinalgOp inner,
                        bool packRhs) {
  if (std::optional<ContractionTiles> t = chooseContractionTiles(inner)) {
    t->packRhs = packRhs;
    tileContractionForRegisters(rewriter, inner, *t);
  }
}

/// The reduction block of `op` (see kMinBlockedReduction): a divisor of its
/// reduction of 256-768, or 0 to keep the reduction whole. With the whole
/// reduction in every register tile, each 8-row tile streams its rows of A
/// (8 x k) and the whole k x 32 block of B through the caches; in blocks, a
/// block of B stays in L2 for all row tiles. Only for a B that is not packed
/// (rows less than kMinPackedRowBytes apart): packRhsPanel packs per column
/// tile of the whole reduction.
int64_t reductionBlock(linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) ||
      (dims->k.size() != 1 && !pairedReductionLoop(op, *dims)) ||
      dims->m.empty() || op.getNumDpsInputs() != 2 || !hasStaticLoops(op))
    return 0;
  int64_t k = op.getStaticLoopRanges()[dims->k.front()] * dims->k.size();
  if (k < kMinBlockedReduction)
    return 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (llvm::any_of(dims->m,
                     [&](unsigned d) { return map.isFunctionOfDim(d); }))
      continue;
    auto ty = dyn_cast<RankedTensorType>(sliceSource(in->get()).getType());
    if (!ty || ty.getRank() < 2 || ty.isDynamicDim(ty.getRank() - 1) ||
        !ty.getElementType().isIntOrFloat() ||
        ty.getShape().back() * ty.getElementType().getIntOrFloatBitWidth() /
                8 >=
            kMinPackedRowBytes)
      return 0;
  }
  for (int64_t kc = 768; kc >= 256; kc -= 8)
    if (k % kc == 0)
      return kc;
  return 0;
}

/// Tiles the reduction of `op` into blocks of `kc` (a sequential loop that
/// accumulates into the result) and register-tiles each block. Returns
/// false, changing nothing, if it cannot.
bool tileBlockedReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                          int64_t kc, bool packRhs) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return false;
  SmallVector<int64_t> sizes(op.getNumLoops(), 0);
  // (A paired reduction is blocked along its pairs.)
  sizes[dims->k.front()] = kc / dims->k.size();
  FailureOr<scf::SCFTilingResult> blocked =
      tileSequentially(rewriter, op, sizes);
  if (failed(blocked) || blocked->tiledOps.empty())
    return false;
  if (auto inner = dyn_cast<linalg::LinalgOp>(blocked->tiledOps.front()))
    retileForRegisters(rewriter, inner, packRhs);
  return true;
}

void tileContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                     ContractionTiles tiles, int64_t minParallelCost);

/// Splits `op` along a parallel loop that its register tile does not divide
/// (GPT-2's 50257 vocabulary columns in tiles of 16 or 32, 128 rows in tiles
/// of 6) into the whole tiles and the rest, and tiles each part on its own:
/// the first can then run in parallel with static task shapes. The n loop
/// is tried first, then the m loops, outermost last. Returns false, changing
/// nothing, if no such loop has kMinParallelTrips whole tiles.
bool splitForParallel(RewriterBase &rewriter, linalg::LinalgOp op,
                      const ContractionTiles &tiles, int64_t minParallelCost) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return false;
  SmallVector<unsigned> candidates(dims->n.rbegin(), dims->n.rend());
  candidates.append(dims->m.rbegin(), dims->m.rend());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d : candidates) {
    int64_t t = tiles.parallel[d];
    if (t <= 0 || ranges[d] % t == 0 || ranges[d] / t < kMinParallelTrips)
      continue;
    // The accumulator's fill is split too: each part fills its own slice of
    // the destination, a producer that its tiles fuse (a slice of the whole
    // fill would be filled in a pass of its own and read back).
    auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    if (fill && !fill->getResult(0).hasOneUse())
      fill = nullptr;
    rewriter.setInsertionPoint(op);
    auto [whole, rest] =
        linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()), d,
                        rewriter.getIndexAttr(ranges[d] / t * t));
    if (!whole)
      return false;
    if (fill)
      rewriter.replaceAllUsesWith(fill->getResult(0), fill.getOutputs()[0]);
    for (TilingInterface part : {whole, rest}) {
      auto l = dyn_cast_or_null<linalg::LinalgOp>(part.getOperation());
      if (!l)
        continue;
      if (fill) {
        OpOperand *init = l.getDpsInitOperand(0);
        rewriter.setInsertionPoint(l);
        auto partFill = linalg::FillOp::create(
            rewriter, fill.getLoc(), fill.getInputs()[0], init->get());
        rewriter.modifyOpInPlace(l, [&] { init->set(partFill.getResult(0)); });
      }
      if (std::optional<ContractionTiles> partTiles =
              chooseContractionTiles(l)) {
        partTiles->packRhs = tiles.packRhs;
        tileContraction(rewriter, l, *partTiles, minParallelCost);
      }
    }
    if (fill)
      rewriter.eraseOp(fill);
    return true;
  }
  return false;
}

/// Register-tiles `op`; an expensive one first gets a parallel loop over
/// whole register tiles (with its fill and consumer), inside which the
/// register tiling runs on the slice.
void tileContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                     ContractionTiles tiles, int64_t minParallelCost) {
  if (!shouldDistribute(op, minParallelCost))
    return tileContractionForRegisters(rewriter, op, tiles);
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Split the columns among the workers when they are enough: each then
  // keeps its own blocks of B in cache (see rootLoopsNOuter), and B is read
  // (and packed, see packRhsPanel) once in all. Columns that the register
  // tile does not divide (a 50257-token vocabulary head) are split into the
  // whole tiles, run in parallel, and the rest.
  std::optional<unsigned> dim;
  if (succeeded(dims) && !dims->n.empty()) {
    unsigned n = dims->n.back();
    int64_t t = tiles.parallel[n];
    if (t > 0 && ranges[n] / t >= kMinParallelTrips) {
      if (ranges[n] % t == 0)
        dim = n;
      else if (splitForParallel(rewriter, op, tiles, minParallelCost))
        return;
    }
  }
  if (!dim)
    dim = pickParallelLoop(op, tiles.parallel);
  if (!dim) {
    if (!splitForParallel(rewriter, op, tiles, minParallelCost))
      tileContractionForRegisters(rewriter, op, tiles);
    return;
  }

  linalg::GenericOp consumer = getFusableConsumer(op);
  TilingInterface root = cast<TilingInterface>(op.getOperation());
  unsigned rootDim = *dim;
  if (consumer) {
    // The consumer's loops are the contraction's output dims, in order.
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    std::optional<unsigned> pos =
        outMap.getResultPosition(rewriter.getAffineDimExpr(*dim));
    if (!pos)
      return tileContractionForRegisters(rewriter, op, tiles);
    root = cast<TilingInterface>(consumer.getOperation());
    rootDim = *pos;
  }
  // Each parallel task takes a chunk of whole register tiles. Along n one
  // register tile is enough (the task reuses its column block of B across
  // every row). Along m the chunk must hold many row tiles: inside a task the
  // column loop runs outside the row loop, so a task of mr rows would stream
  // all of B from memory for those few rows (GPT-2's 50257-column head: B is
  // 154 MB) where a chunk of m/4 rows reads it four times in all.
  int64_t chunk = tiles.parallel[*dim];
  if (succeeded(dims) && llvm::is_contained(dims->m, *dim)) {
    int64_t tilesAlong = ranges[*dim] / chunk;
    for (int64_t tasks = kMinParallelTrips; tasks <= tilesAlong; tasks *= 2)
      if (tilesAlong % tasks == 0) {
        chunk *= tilesAlong / tasks;
        break;
      }
  }
  Operation *contraction = op.getOperation();
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      distributeLoop(rewriter, root, rootDim, chunk, [&](Operation *p) {
        return p == contraction || isa<linalg::FillOp>(p);
      });
  if (failed(tiled))
    return tileContractionForRegisters(rewriter, op, tiles);
  linalg::LinalgOp inner = findTiled(*tiled, isTiledContraction);
  if (!inner)
    return;
  if (int64_t kc = reductionBlock(inner)) {
    // The accumulator's fill and the consumer that joined the task cannot
    // run inside a block of the reduction: they become ops of their own in
    // the task, tiled like any elementwise op.
    SmallVector<linalg::LinalgOp> others;
    for (Operation *t : tiled->tiledAndFusedOps)
      if (auto l = dyn_cast<linalg::LinalgOp>(t); l && l != inner)
        others.push_back(l);
    if (tileBlockedReduction(rewriter, inner, kc, tiles.packRhs)) {
      for (linalg::LinalgOp other : others)
        tileGeneric(rewriter, other, /*minParallelCost=*/-1);
      return;
    }
  }
  retileForRegisters(rewriter, inner, tiles.packRhs);
}

/// The tile loop order of the contraction `op` (or of its fused `consumer`,
/// whose loops are the contraction's output dims): the root's loops with
/// the n dims moved before the m dims (batch dims stay outermost, the
/// reduction innermost). Empty when the order is unchanged.
SmallVector<int64_t> rootLoopsNOuter(linalg::LinalgOp op, Operation *consumer) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return {};
  SmallVector<unsigned> rootDims; // contraction loop of each root loop
  if (consumer) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    for (AffineExpr e : outMap.getResults())
      rootDims.push_back(cast<AffineDimExpr>(e).getPosition());
  } else {
    for (unsigned d = 0; d < op.getNumLoops(); ++d)
      rootDims.push_back(d);
  }
  auto rank = [&](unsigned d) {
    if (llvm::is_contained(dims->batch, d))
      return 0;
    if (llvm::is_contained(dims->n, d))
      return 1;
    if (llvm::is_contained(dims->m, d))
      return 2;
    return 3;
  };
  SmallVector<int64_t> order(rootDims.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return rank(rootDims[a]) < rank(rootDims[b]);
  });
  for (auto [i, o] : llvm::enumerate(order))
    if ((int64_t)i != o)
      return order;
  return {};
}

/// With bf16 dot products, the panel of a bf16 register tile's B (`slice`,
/// k x nr of sizes `sizes`, k even and nr whole registers) is packed in
/// pairs of rows, (k / 2) x nr x 2, as poptorch-pack-weights lays out bf16
/// weights: `op`, an (m, n, k) matmul tile, becomes the contraction over
/// (m, n, kp, kr) of A viewed as mr x (k / 2) x 2 and that panel, whose
/// register tiles give the dot products B's registers without interleaving
/// rows (a wide B's per-call panels: a tied vocabulary head, im2col
/// columns). Returns the new contraction, or null (changing nothing) when
/// `op` is not such a tile.
linalg::LinalgOp packPanelInPairs(RewriterBase &rewriter, linalg::LinalgOp op,
                                  OpOperand *operand,
                                  tensor::ExtractSliceOp slice,
                                  ArrayRef<OpFoldResult> sizes) {
  std::optional<int64_t> k = getConstantIntValue(sizes.front()),
                         nr = getConstantIntValue(sizes.back());
  RankedTensorType sliceTy = slice.getResultType();
  if (!target.bf16Dot || !sliceTy.getElementType().isBF16() ||
      sizes.size() != 2 || !k || !nr || *k % 2 != 0 ||
      *nr % target.lanes != 0 || op.getNumLoops() != 3 ||
      op.getNumDpsInputs() != 2 || operand->getOperandNumber() != 1 ||
      !op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op))
    return nullptr;
  Value a = op.getDpsInputOperand(0)->get();
  auto aTy = cast<RankedTensorType>(a.getType());
  if (aTy.isDynamicDim(0))
    return nullptr;
  // Loops (m, n, k): A(m, k), B(k, n), C(m, n).
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr m, n, kk;
  bindDims(ctx, m, n, kk);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(3, 0, {m, kk}, ctx) ||
      maps[1] != AffineMap::get(3, 0, {kk, n}, ctx) ||
      maps[2] != AffineMap::get(3, 0, {m, n}, ctx))
    return nullptr;
  Location loc = slice.getLoc();
  Type bf16 = sliceTy.getElementType();
  // The panel, (k / 2) x 2 nr viewed as (k / 2) x nr x 2: its row kp
  // interleaves rows 2 kp and 2 kp + 1 of the block, one vector of each.
  // (A slice of a partial tile has the static sizes that the peeling made.)
  Value block = slice.getResult();
  auto blockTy = RankedTensorType::get({*k, *nr}, bf16);
  if (block.getType() != blockTy)
    block = tensor::CastOp::create(rewriter, loc, blockTy, block);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  Value zero = idx(0), one = idx(1), two = idx(2);
  Value pad = ub::PoisonOp::create(rewriter, loc, bf16);
  Value rows = tensor::EmptyOp::create(
      rewriter, loc, SmallVector<int64_t>{*k / 2, 2 * *nr}, bf16);
  auto interleave = scf::ForOp::create(
      rewriter, loc, zero, idx(*k / 2), one, ValueRange{rows},
      [&](OpBuilder &b, Location l, Value kp, ValueRange iter) {
        Value even = arith::MulIOp::create(b, l, kp, two);
        Value odd = arith::AddIOp::create(b, l, even, one);
        auto row = [&](Value at) -> Value {
          return vector::TransferReadOp::create(
              b, l, VectorType::get({*nr}, bf16), block, ValueRange{at, zero},
              pad, ArrayRef<bool>{true});
        };
        Value pair = vector::InterleaveOp::create(b, l, row(even), row(odd));
        Value written = vector::TransferWriteOp::create(b, l, pair, iter[0],
                                                        ValueRange{kp, zero},
                                                        ArrayRef<bool>{true})
                            .getResult();
        scf::YieldOp::create(b, l, written);
      });
  Value panel = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({*k / 2, *nr, 2}, bf16),
      interleave.getResult(0), SmallVector<ReassociationIndices>{{0}, {1, 2}});
  // The contraction reading it, with A viewed in pairs along k.
  rewriter.setInsertionPoint(op);
  Value aPairs = tensor::ExpandShapeOp::create(
      rewriter, op.getLoc(),
      RankedTensorType::get({aTy.getDimSize(0), *k / 2, 2},
                            aTy.getElementType()),
      a, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  AffineExpr pm, pn, kp, kr;
  bindDims(ctx, pm, pn, kp, kr);
  SmallVector<AffineMap> pairedMaps = {AffineMap::get(4, 0, {pm, kp, kr}, ctx),
                                       AffineMap::get(4, 0, {kp, pn, kr}, ctx),
                                       AffineMap::get(4, 0, {pm, pn}, ctx)};
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto paired = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), ValueRange{aPairs, panel},
      ValueRange{op.getDpsInitOperand(0)->get()}, pairedMaps, iterators);
  IRMapping none;
  op->getRegion(0).cloneInto(&paired.getRegion(), none);
  rewriter.replaceOp(op, paired->getResults());
  return cast<linalg::LinalgOp>(paired.getOperation());
}

linalg::LinalgOp packPanel(RewriterBase &rewriter, linalg::LinalgOp op,
                           OpOperand *operand,
                           ArrayRef<LoopLikeOpInterface> loops,
                           int64_t minRowBytes) {
  auto slice = operand->get().getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.hasUnitStride())
    return op;
  // The tensor that the block is a slice of, through the slices of outer
  // tilings (a parallel task's columns).
  auto srcTy = cast<RankedTensorType>(sliceSource(slice.getSource()).getType());
  RankedTensorType sliceTy = slice.getResultType();
  // Only rows at least kMinPackedRowBytes apart are worth the copy (see
  // there); whole rows are contiguous already.
  Type elem = srcTy.getElementType();
  if (srcTy.getRank() < 2 || sliceTy.getRank() < 2 ||
      ShapedType::isDynamic(srcTy.getShape().back()) ||
      sliceTy.getShape().back() == srcTy.getShape().back() ||
      !elem.isIntOrFloat() ||
      srcTy.getShape().back() * elem.getIntOrFloatBitWidth() / 8 < minRowBytes)
    return op;
  // Hoist the slice (and the index arithmetic it needs) out of every loop
  // around it that it does not depend on. It may be outside them already
  // (made by an outer, parallel tiling).
  for (LoopLikeOpInterface loop : llvm::reverse(loops)) {
    if (!loop->isProperAncestor(slice))
      break;
    (void)moveLoopInvariantCode(loop);
    if (loop->isProperAncestor(slice))
      break;
  }
  // Reuse: a loop around `op`, and not around the slice, must run more than
  // once.
  if (llvm::none_of(loops, [&](LoopLikeOpInterface loop) {
        auto forOp = dyn_cast<scf::ForOp>(loop.getOperation());
        if (!forOp || forOp->isProperAncestor(slice))
          return false;
        std::optional<APInt> trips = forOp.getStaticTripCount();
        return !trips || trips->getSExtValue() > 1;
      }))
    return op;
  // The panel: a copy of the slice into a fresh tensor, row by row (one
  // vector of its columns each), read by `op` instead of the slice.
  Location loc = slice.getLoc();
  rewriter.setInsertionPointAfter(slice);
  // Sizes the peeling made constant give the panel a static type.
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, slice.getResult());
  for (OpFoldResult &size : sizes)
    if (auto v = dyn_cast<Value>(size))
      if (FailureOr<int64_t> c = ValueBoundsConstraintSet::computeConstantBound(
              presburger::BoundType::EQ, v);
          succeeded(c))
        size = rewriter.getIndexAttr(*c);
  if (linalg::LinalgOp paired =
          packPanelInPairs(rewriter, op, operand, slice, sizes))
    return paired;
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, sizes, sliceTy.getElementType());
  auto copy = linalg::CopyOp::create(rewriter, loc, slice.getResult(), empty);
  rewriter.modifyOpInPlace(op, [&] { operand->set(copy.getResult(0)); });
  SmallVector<int64_t> rowTiles(sliceTy.getRank(), 1);
  rowTiles.back() = 0;
  (void)tileSequentially(rewriter, cast<linalg::LinalgOp>(copy.getOperation()),
                         rowTiles);
  return op;
}

/// Packs the block of B (the operand without m dims) that one column tile of
/// the contraction `tc` reads, before the row tiles that reuse it (`loops`:
/// column loops outside the row loops). Unpacked, the k x nr block is nr
/// elements out of every row of B: for a wide B (im2col columns, a
/// vocabulary head) each k step of the micro-kernel touches a new page.
linalg::LinalgOp packRhsPanel(RewriterBase &rewriter, linalg::LinalgOp tc,
                              ArrayRef<LoopLikeOpInterface> loops) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(tc);
  if (failed(dims) || tc.getNumDpsInputs() != 2)
    return tc;
  for (OpOperand *in : tc.getDpsInputOperands()) {
    AffineMap map = tc.getMatchingIndexingMap(in);
    if (llvm::none_of(dims->m,
                      [&](unsigned d) { return map.isFunctionOfDim(d); }))
      return packPanel(rewriter, tc, in, loops);
  }
  return tc;
}

void tileContractionForRegisters(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const ContractionTiles &tiles) {
  // Tile sizes of the root in its own loop order.
  linalg::GenericOp consumer = getFusableConsumer(op);
  SmallVector<int64_t> rootSizes;
  TilingInterface root;
  if (consumer) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    for (AffineExpr e : outMap.getResults())
      rootSizes.push_back(tiles.parallel[cast<AffineDimExpr>(e).getPosition()]);
    root = cast<TilingInterface>(consumer.getOperation());
  } else {
    rootSizes = tiles.parallel;
    root = cast<TilingInterface>(op.getOperation());
  }

  // Loop order: the n (column) tile loops outside the m (row) ones. A block
  // of nr columns of B (k x nr) then stays in cache while every row block
  // of A streams past it; the other order streams all of B once per mr
  // rows, and nr = 4 mr.
  SmallVector<int64_t> interchange =
      rootLoopsNOuter(op, consumer ? consumer.getOperation() : nullptr);

  // Only the contraction and the fill of its accumulator join the tile
  // loop; recomputing other producers (transposes, broadcasts) per tile
  // would repeat their work.
  Operation *contraction = op.getOperation();
  FailureOr<scf::SCFTileAndFuseResult> tiled = tileAndFuse(
      rewriter, root, rootSizes, scf::SCFTilingOptions::LoopType::ForOp,
      [contraction](Operation *p) {
        return p == contraction || isa<linalg::FillOp>(p);
      },
      interchange);
  if (failed(tiled))
    return;

  // Peel first: the full tiles then have static shapes, and so have their
  // packed panels. Then pack and tile the reduction of every copy of the
  // tiled contraction (the full tiles' and each partial tile's).
  SmallVector<Operation *> nests = peelPartialTiles(rewriter, tiled->loops);
  if (!tiled->loops.empty())
    nests.push_back(tiled->loops.front());
  llvm::SetVector<Operation *> contractions;
  for (Operation *nest : nests)
    nest->walk([&](linalg::LinalgOp l) {
      if (isTiledContraction(l))
        contractions.insert(l);
    });
  if (tiled->loops.empty())
    if (linalg::LinalgOp l = findTiled(*tiled, isTiledContraction))
      contractions.insert(l);
  auto inNest = [&](Operation *loop) {
    return llvm::any_of(nests, [&](Operation *n) {
      return n == loop || n->isProperAncestor(loop);
    });
  };
  for (Operation *op : contractions) {
    auto tiledContraction = cast<linalg::LinalgOp>(op);
    SmallVector<int64_t> reduction = tiles.reduction;
    if (tiles.packRhs) {
      linalg::LinalgOp packed =
          packRhsPanel(rewriter, tiledContraction, tileLoopsAround(op, inNest));
      if (packed != tiledContraction) {
        // Packed in pairs (packPanelInPairs): the tile is now a contraction
        // over (m, n, kp, kr), with reduction tiles of its own.
        tiledContraction = packed;
        if (std::optional<ContractionTiles> t = chooseContractionTiles(packed))
          reduction = t->reduction;
      }
    }
    scf::SCFTilingOptions kOptions;
    kOptions.setTileSizes(asIndexAttrs(rewriter, reduction));
    rewriter.setInsertionPoint(tiledContraction);
    FailureOr<scf::SCFTilingResult> kTiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(tiledContraction.getOperation()),
        kOptions);
    if (succeeded(kTiled))
      rewriter.replaceOp(tiledContraction, kTiled->replacements);
  }
}

bool tileAsContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                       int64_t minParallelCost, bool packRhs) {
  std::optional<ContractionTiles> t = chooseContractionTiles(op);
  if (!t)
    return false;
  t->packRhs = packRhs;
  tileContraction(rewriter, op, *t, minParallelCost);
  return true;
}

} // namespace mlir::poptorch::tiling

int64_t mlir::poptorch::contractionBlockColumns(int64_t m, int64_t vectorBits) {
  tiling::VectorTarget t = tiling::targetFor(vectorBits);
  return tiling::blockColumns(std::min(m, t.rows), t);
}
