//===- TileAndVectorize.cpp - codegen strategy for linalg ops -----------===//
//
// poptorch-tile-and-vectorize: the CPU codegen strategy, on tensors, before
// bufferization.
//
// * Contractions (anything linalg::inferContractionDims accepts: matmul,
//   batch_matmul, and generics with several m/batch dims) are tiled into
//   register blocks (mr x nr accumulators: 8 x 32 f32 = 16 zmm with AVX-512,
//   6 x 16 = 12 ymm with AVX2; the vector-bits option names the target) with
//   their fill and a single elementwise consumer (bias, relu, ...) fused
//   into the tile loops. The reduction is tiled by kt, every tile is
//   vectorized, the accumulator transfers are hoisted out of the k loop and
//   vector.contract is lowered to outer products (FMAs), or for bf16 with
//   bf16-dot to AVX512-BF16 dot products (LowerVectors.cpp).
// * Channels-last convolutions are tiled into register blocks of 8 output
//   pixels by 32 output channels (AVX2: 6 by 16), the blocks of output channels
//   outermost, with the window and blocks of 8 input channels as inner loops;
//   NCHW convolutions and poolings to one output row and a block of output
//   columns and channels. Both are decomposed to 1-D ops and vectorized.
// * Every other linalg op (elementwise chains, transposes, reductions) is
//   tiled to one vector-sized block of its innermost loop and vectorized.
//
// Partial tiles are vectorized with masks; ops that the vectorizer rejects
// stay tiled and are lowered to loops later.
//
// Multi-core: an op whose estimated cost reaches min-parallel-cost first gets
// one parallel tile loop as an scf.forall (its outermost parallel loop that
// divides evenly and has enough trips; the contraction's fill and consumer
// are fused into it), and the strategy above then runs on the op inside it.
// The forall becomes an scf.parallel after bufferization and the runtime
// splits its iterations among the workers. Cheaper ops stay sequential:
// waking the workers costs microseconds.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <numeric>

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHTILEANDVECTORIZE
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// The target's vector registers (the pass's vector-bits option), set for
/// the duration of one run of the pass.
struct VectorTarget {
  /// f32 lanes of one register: 16 (AVX-512) or 8 (AVX2).
  int64_t lanes = 16;
  /// Rows of a contraction's register block (a block of output pixels for
  /// a channels-last convolution). Its columns are two registers wide, so
  /// that 2 x rows accumulators leave registers for the operands: 16 of 32
  /// with AVX-512 (8 rows), 12 of 16 with AVX2 (6 rows).
  int64_t rows = 8;
  /// Vector registers: 32 (AVX-512) or 16 (AVX2). A block for a short m is
  /// wider, within the same share of them.
  int64_t registers = 32;
  /// Whether bf16 register tiles become AVX512-BF16 dot products (the
  /// pass's bf16-dot option).
  bool bf16Dot = false;
};
thread_local VectorTarget target;

VectorTarget targetFor(int64_t vectorBits) {
  return vectorBits == 512 ? VectorTarget{16, 8, 32} : VectorTarget{8, 6, 16};
}

/// Columns of the register block of a contraction whose row block has `mr`
/// rows: two registers by t.rows rows keeps 16 (AVX-512) or 12 (AVX2)
/// accumulators in registers; short m (batch-1/8 linear layers) widens the
/// block so that enough independent FMA chains hide the latency.
int64_t blockColumns(int64_t mr, const VectorTarget &t) {
  return mr >= 6   ? 2 * t.lanes
         : mr >= 3 ? t.registers / 8 * t.lanes
                   : t.registers / 4 * t.lanes;
}

/// Rows of the register blocks over `extent` rows (a channels-last
/// convolution's output pixels along the width), at most target.rows; the
/// rows that no block divides make one partial block. A block of r rows
/// keeps 2r accumulators, and an FMA's result is ready 4 cycles later on
/// each of the 2 FMA ports, so every step over the reduction takes about
/// max(r, 4) cycles: fewer than 4 rows leave the ports idle. Smaller blocks
/// are taken when they save more than 1/16 of the sum over the blocks (each
/// block re-reads the weights from cache). AVX2's 6-row blocks over a width
/// of 7 cost 6 + 4 against 4 + 4 for 4-row blocks, and over 14 cost 6 + 6 +
/// 4 against 5 + 5 + 4 (ResNet-18's 3x3 convolutions on 7x7 and 14x14:
/// 10-13% more GFLOP/s at batch 8); over 56, 9 x 6 + 4 = 58 stays (4-row
/// blocks would take 56, within 1/16, and measured no faster).
int64_t blockRows(int64_t extent) {
  constexpr int64_t kLatencyRows = 4;
  auto steps = [&](int64_t r) {
    int64_t rest = extent % r;
    return extent / r * std::max(r, kLatencyRows) +
           (rest ? std::max(rest, kLatencyRows) : 0);
  };
  int64_t best = std::min(extent, target.rows);
  for (int64_t r = best - 1; r >= kLatencyRows; --r)
    if (steps(r) * 16 < steps(best) * 15)
      best = r;
  return best;
}

/// Largest vector (in elements) that one tile of a non-contraction op may
/// use; bigger iteration spaces are tiled further.
constexpr int64_t kMaxVectorElems = 4096;

/// A transposing tile's input rows may step over at most this many elements
/// of short trailing dims (see tileGeneric): each row is then read with that
/// stride, one load per element.
constexpr int64_t kMaxShortTransposeElems = 16;

/// B operands of contractions whose rows are at least this far apart get
/// their column tiles packed (packRhsPanel): unpacked, the k x nr panel is
/// one cache line out of every row of B, and rows a power of two (or a small
/// multiple of one) apart fall into a few cache sets, so that the panel that
/// every row tile re-reads does not stay in L1 or even L2. Until 2026-12-01
/// the panels of contractions split among the workers were never packed
/// (their B was already a slice of the task's columns, which the check took
/// for whole rows). Measured then on a Zen 3 host (AVX2, side_by_side.py,
/// both cores, medians of 20 interleaved calls), unpacked -> packed with
/// rows from 1 KB: 512^3 110 -> 148 GFLOP/s (torch 131), 128x768 @
/// 768x16384 37 -> 105 (torch 76); BERT b1 216 -> 192 ms, GPT-2 375 -> 352.
/// Rows from 4 KB (the old threshold, chosen while the bug hid the panels
/// that matter) left 512^3 and BERT's 768-wide weights unpacked; from 0 B
/// was no better than 1 KB (GPT-2 358 ms).
constexpr int64_t kMinPackedRowBytes = 1024;

/// Contractions whose reduction is at least this long, with an unpacked B,
/// run their reduction in blocks (reductionBlock, tileBlockedReduction).
/// Measured (2026-11-30, BERT's second feed-forward matmul, 1024x3072 @
/// 3072x768, both cores, medians of 15 calls): 145 GFLOP/s with the whole
/// reduction in each register tile, 179 with it split in two matmuls of 1536
/// and an add, 182 in four.
constexpr int64_t kMinBlockedReduction = 2048;

/// A parallel loop with fewer trips than this is only taken when no outer
/// one has as many: two blocks per worker (2 cores) balance uneven work.
constexpr int64_t kMinParallelTrips = 4;

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// The tensor that `v` is a slice of, through the unit-stride, rank-keeping
/// slices of the tilings around it (a parallel task's columns, a register
/// tile); `v` itself if it is no such slice.
Value sliceSource(Value v) {
  while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getResultType().getRank())
      break;
    v = slice.getSource();
  }
  return v;
}

/// The scf.for loops around `op` that `inside` accepts, outermost first
/// (the tile loops made around it, up to the first loop that is not).
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

/// Constant upper bounds of the loop ranges of `op` (the tile sizes, for a
/// partial tile): the vector sizes for masked vectorization.
FailureOr<SmallVector<int64_t>> getLoopUpperBounds(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [d, r] : llvm::enumerate(ranges)) {
    if (!ShapedType::isDynamic(r))
      continue;
    // Find an operand dimension indexed by loop d and bound it.
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (!dim || dim.getPosition() != d)
          continue;
        FailureOr<int64_t> ub = ValueBoundsConstraintSet::computeConstantBound(
            presburger::BoundType::UB, {operand.get(), (int64_t)pos},
            /*stopCondition=*/nullptr, /*closedUB=*/true);
        if (succeeded(ub)) {
          r = *ub;
          break;
        }
      }
      if (!ShapedType::isDynamic(r))
        break;
    }
    if (ShapedType::isDynamic(r))
      return failure();
  }
  return ranges;
}

/// Vectorizes `op`, masked when its shape is dynamic. Leaves it alone (to be
/// lowered to loops later) when the vectorizer cannot handle it.
void vectorizeIfPossible(RewriterBase &rewriter, linalg::LinalgOp op) {
  // Bool tensors are stored one byte per element (torch.bool's layout, and
  // what scalar i1 loads and stores use), but LLVM packs vector<N x i1>
  // loads and stores into bits: ops that read or write i1 tensors stay scalar.
  auto isBoolTensor = [](Value v) {
    auto t = dyn_cast<ShapedType>(v.getType());
    return t && t.getElementType().isInteger(1);
  };
  if (llvm::any_of(op->getOperands(), isBoolTensor) ||
      llvm::any_of(op->getResults(), isBoolTensor))
    return;
  // (Also a body that gathers from one: its tensor.extract would become a
  // vector read of i1, bits where the tensor has bytes.)
  bool gathersBool = false;
  op->walk([&](tensor::ExtractOp extract) {
    gathersBool |= isBoolTensor(extract.getTensor());
  });
  if (gathersBool)
    return;
  SmallVector<int64_t> sizes;
  bool isContraction = op.getNumReductionLoops() > 0 &&
                       succeeded(linalg::inferContractionDims(op));
  if (!hasStaticLoops(op)) {
    // Masked contractions lower to poor code: their partial tiles (peeled
    // off by the tiling) stay scalar loops.
    if (isContraction)
      return;
    FailureOr<SmallVector<int64_t>> ub = getLoopUpperBounds(op);
    if (failed(ub))
      return;
    sizes = *ub;
  }
  // Whole untiled ops would become huge vectors (and a huge LLVM module):
  // counted in whole registers along the innermost loop.
  SmallVector<int64_t> shape(sizes.empty() ? op.getStaticLoopRanges() : sizes);
  int64_t elems = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    elems *= d + 1 == shape.size() ? roundUp(shape[d], target.lanes) : shape[d];
  if (elems > 4 * kMaxVectorElems)
    return;
  if (failed(linalg::vectorizeOpPrecondition(
          op, sizes, SmallVector<bool>(sizes.size(), false))))
    return;
  // A gather of one element (a 0-d op reading a tensor.extract) would become
  // a vector.gather of 0-d vectors, which is invalid: it stays scalar.
  if (op.getNumLoops() == 0 &&
      !op->getRegion(0).getOps<tensor::ExtractOp>().empty())
    return;
  rewriter.setInsertionPoint(op);
  SmallVector<bool> scalable(sizes.size(), false);
  FailureOr<linalg::VectorizationResult> result =
      linalg::vectorize(rewriter, op, sizes, scalable,
                        /*vectorizeNDExtract=*/false,
                        /*flatten1DDepthwiseConv=*/false,
                        /*assumeDynamicDimsMatchVecSizes=*/false,
                        /*createNamedContraction=*/isContraction);
  if (failed(result))
    return;
  if (result->replacements.empty())
    rewriter.eraseOp(op);
  else
    rewriter.replaceOp(op, result->replacements);
}

/// The inner loop of a contraction's reduction over pairs of k: two
/// reduction loops (kp, kr), kr of 2 and the last index of every input (a
/// bf16 matmul whose weight poptorch-pack-weights laid out for AVX512-BF16's
/// dot products, its A read as (m, K / 2, 2)). The pair stays whole in every
/// tile, and kp is the loop that the reduction is tiled and blocked along.
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

/// The reduction loop that a contraction is tiled along: the outer loop of a
/// pair (pairedReductionLoop), else the innermost reduction loop.
unsigned tiledReductionLoop(linalg::LinalgOp op,
                            const linalg::ContractionDimensions &dims) {
  return pairedReductionLoop(op, dims) ? dims.k[0] : dims.k.back();
}

/// A register tile of a generic contraction with unit loops (a panel
/// matmul's tile has one panel: (m, 1, nr, k)) as the named op it is once
/// they are dropped (rank-reducing slices of its operands), or `op` as it
/// is. The vectorizer makes a generic contraction's operands one vector of
/// the whole iteration space each, which the contraction lowering unrolled
/// into a horizontal sum per output element; a linalg.matmul's operands
/// keep their shapes and become a register tile of FMAs.
linalg::LinalgOp asNamedContraction(RewriterBase &rewriter,
                                    linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || op.getNumReductionLoops() == 0 || !hasStaticLoops(op))
    return op;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return op;
  // The innermost m, n and k loops stay, unit or not: a one-row tile is a
  // 1 x nr matmul, not a matrix-vector product (whose vectorization reads B
  // transposed). Both loops of a paired reduction stay.
  bool paired = pairedReductionLoop(op, *dims).has_value();
  SmallVector<unsigned> unit;
  for (auto [d, range] : llvm::enumerate(op.getStaticLoopRanges()))
    if (range == 1 && d != dims->m.back() && d != dims->n.back() &&
        d != dims->k.back() && !(paired && d == dims->k[0]))
      unit.push_back(d);
  if (unit.empty())
    return op;
  linalg::ControlDropUnitDims options;
  options.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  options.controlFn = [&](Operation *) { return unit; };
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::DropUnitDimsResult> dropped =
      linalg::dropUnitDims(rewriter, generic, options);
  if (failed(dropped))
    return op;
  rewriter.replaceOp(generic, dropped->replacements);
  auto reduced = dyn_cast<linalg::GenericOp>(dropped->resultOp.getOperation());
  if (!reduced)
    return cast<linalg::LinalgOp>(dropped->resultOp.getOperation());
  // (The insertion point was before the op just replaced: the named op takes
  // the reduced op's place, before the insert_slice of its result.)
  rewriter.setInsertionPoint(reduced);
  FailureOr<linalg::LinalgOp> named =
      linalg::specializeGenericOp(rewriter, reduced);
  return succeeded(named) ? *named : cast<linalg::LinalgOp>(*reduced);
}

/// Vectorizes a register tile of a contraction over pairs of k (see
/// pairedReductionLoop) as one vector.contract of its operands read whole,
/// in their own shapes, which LowerVectors.cpp's ContractToBF16Dot makes
/// dot products of. (The generic vectorizer would read every operand
/// broadcast to the whole iteration space.) Fails, changing nothing, for any
/// other op.
LogicalResult vectorizePairedContraction(RewriterBase &rewriter,
                                         linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || !pairedReductionLoop(op, *dims) ||
      !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  // Each operand is read whole. The inputs' two innermost dims (a pair and
  // the dim outside it) are read as one, from a collapsed view: the rows of
  // pairs that the dot products take, which the lowering's shape casts of
  // the operands then fold into.
  auto read = [&](Value tensor, bool mergeInner) -> Value {
    auto type = cast<RankedTensorType>(tensor.getType());
    Type elem = type.getElementType();
    Value pad = ub::PoisonOp::create(rewriter, loc, elem);
    if (!mergeInner)
      return vector::TransferReadOp::create(
          rewriter, loc, VectorType::get(type.getShape(), elem), tensor,
          SmallVector<Value>(type.getRank(), zero), pad,
          SmallVector<bool>(type.getRank(), true));
    int64_t rank = type.getRank();
    SmallVector<ReassociationIndices> inner;
    for (int64_t d = 0; d + 2 < rank; ++d)
      inner.push_back({d});
    inner.push_back({rank - 2, rank - 1});
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc, tensor, inner);
    auto flatType = cast<RankedTensorType>(flat.getType());
    Value rows = vector::TransferReadOp::create(
        rewriter, loc, VectorType::get(flatType.getShape(), elem), flat,
        SmallVector<Value>(rank - 1, zero), pad,
        SmallVector<bool>(rank - 1, true));
    return vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get(type.getShape(), elem), rows);
  };
  Value init = op.getDpsInitOperand(0)->get();
  SmallVector<Attribute> iterators;
  for (utils::IteratorType it : op.getIteratorTypesArray())
    iterators.push_back(vector::IteratorTypeAttr::get(
        rewriter.getContext(), it == utils::IteratorType::parallel
                                   ? vector::IteratorType::parallel
                                   : vector::IteratorType::reduction));
  Value sum = vector::ContractionOp::create(
      rewriter, loc, read(op.getDpsInputOperand(0)->get(), true),
      read(op.getDpsInputOperand(1)->get(), true), read(init, false),
      rewriter.getAffineMapArrayAttr(op.getIndexingMapsArray()),
      rewriter.getArrayAttr(iterators));
  auto initType = cast<RankedTensorType>(init.getType());
  auto write = vector::TransferWriteOp::create(
      rewriter, loc, sum, init, SmallVector<Value>(initType.getRank(), zero),
      SmallVector<bool>(initType.getRank(), true));
  rewriter.replaceOp(op, write.getResult());
  return success();
}

void vectorizeAllIn(RewriterBase &rewriter, Operation *root) {
  SmallVector<linalg::LinalgOp> ops;
  root->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (linalg::LinalgOp op : ops) {
    linalg::LinalgOp tile = asNamedContraction(rewriter, op);
    if (failed(vectorizePairedContraction(rewriter, tile)))
      vectorizeIfPossible(rewriter, tile);
  }
}

/// Splits each tile loop whose step does not divide its trip count into a
/// main loop of full (static) tiles and one partial iteration. Inner loops
/// first: the partial iteration of an outer loop then gets the inner loop
/// already split, and its full tiles stay static too.
/// Returns the partial iterations' loops.
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

//===----------------------------------------------------------------------===//
// Distribution over cores
//===----------------------------------------------------------------------===//

/// The cost that min-parallel-cost is compared with: iteration points times
/// the scalar ops of the body (a matmul point is a multiply and an add).
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

/// The loop to run in parallel, given the tile size of every loop (0: not
/// tiled): a parallel loop whose tile divides it (full tiles keep static
/// shapes for the vectorizer) and that runs at least twice. The outermost
/// one with kMinParallelTrips trips wins, else the one with most trips.
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

/// Tiles `root` by `sizes` in loops of `loopType`, fusing into them the
/// producers that `fuse` accepts, and replaces `root`'s uses by the result.
FailureOr<scf::SCFTileAndFuseResult>
tileAndFuse(RewriterBase &rewriter, TilingInterface root,
            ArrayRef<int64_t> sizes, scf::SCFTilingOptions::LoopType loopType,
            std::function<bool(Operation *)> fuse,
            ArrayRef<int64_t> interchange = {}) {
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

/// Tiles loop `dim` of `root` by `size` with an scf.forall, fusing into it
/// the producers that `fuse` accepts, and replaces `root` by the result.
FailureOr<scf::SCFTileAndFuseResult>
distributeLoop(RewriterBase &rewriter, TilingInterface root, unsigned dim,
               int64_t size, std::function<bool(Operation *)> fuse) {
  SmallVector<int64_t> sizes(root.getLoopIteratorTypes().size(), 0);
  sizes[dim] = size;
  return tileAndFuse(rewriter, root, sizes,
                     scf::SCFTilingOptions::LoopType::ForallOp, fuse);
}

/// Tiles `op` with `sizes` in sequential scf.for loops and replaces it.
FailureOr<scf::SCFTilingResult>
tileSequentially(RewriterBase &rewriter, linalg::LinalgOp op,
                 ArrayRef<int64_t> sizes, ArrayRef<int64_t> interchange = {}) {
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

/// The op of `tiled` (a tiled root or fused producer) that `pred` accepts.
template <typename Pred>
linalg::LinalgOp findTiled(const scf::SCFTileAndFuseResult &tiled, Pred pred) {
  for (Operation *t : tiled.tiledAndFusedOps)
    if (auto l = dyn_cast<linalg::LinalgOp>(t); l && pred(l))
      return l;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Register-tile sizes for every loop of a contraction, and the reduction
/// tile. All batch dims and outer m dims get 1; the innermost m and the n
/// dims form the accumulator block.
struct ContractionTiles {
  SmallVector<int64_t> parallel;  // per loop; 0 for reduction loops
  SmallVector<int64_t> reduction; // per loop; 0 for parallel loops
  bool packRhs = true;            // see packRhsPanel
};

/// When `op` is worth running on every core, tiles one of its parallel loops
/// (of tile size `sizes[dim]`) with scf.forall and hands the tile to `retile`,
/// which tiles it further on one core. Returns true if it did.
bool distributeAndRetile(
    RewriterBase &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> sizes,
    int64_t minParallelCost, llvm::function_ref<void(linalg::LinalgOp)> retile,
    std::optional<unsigned> dim = std::nullopt,
    std::function<bool(Operation *)> fuse = [](Operation *) { return false; }) {
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
void tileGeneric(RewriterBase &rewriter, linalg::LinalgOp op,
                 int64_t minParallelCost);

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

/// Packs the slice that `operand` of `op` reads (a block of columns of a
/// wider tensor, through the slices of the tilings around it) into a
/// contiguous buffer, once per iteration of the loops it depends on, before
/// the loops of `loops` (the tile loops around `op`, outermost first) that
/// reuse it. Unpacked, each row of the block is a few elements out of every
/// row of the tensor: see kMinPackedRowBytes.
linalg::LinalgOp packPanel(RewriterBase &rewriter, linalg::LinalgOp op,
                           OpOperand *operand,
                           ArrayRef<LoopLikeOpInterface> loops,
                           int64_t minRowBytes = kMinPackedRowBytes) {
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

//===----------------------------------------------------------------------===//
// Convolutions and poolings (NCHW, and channels-last convolutions)
//===----------------------------------------------------------------------===//

bool isConvolutionLike(linalg::LinalgOp op) {
  return !isa<linalg::GenericOp>(op) && linalg::isaConvolutionOpInterface(op);
}

/// Tiles a 2-D NCHW convolution/pooling to one output row (and one kernel
/// row) and a block of output columns and channels, so that upstream's
/// decomposition produces 1-D ops that vectorize along the output width.
/// Loop orders: conv_2d_nchw_fchw (n, f, oh, ow, c, kh, kw),
/// conv_2d_ngchw_gfchw (n, g, f, oh, ow, c, kh, kw), pooling_nchw_*
/// (n, c, oh, ow, kh, kw). A channels-last conv_2d_nhwc_hwcf (n, oh, ow, f,
/// kh, kw, c) gets register blocks of 8 output pixels by 32 output channels
/// (AVX2: 6 by 16) instead, like a matmul's.
void tileConvolution(RewriterBase &rewriter, linalg::LinalgOp op,
                     int64_t minParallelCost, bool packRhs) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto owTile = [](int64_t ow) {
    // Largest block of at most two registers that divides the width (no
    // partial tiles: the 1-D conv vectorizer wants static shapes).
    for (int64_t c = std::min<int64_t>(ow, 2 * target.lanes); c > 1; --c)
      if (ow % c == 0)
        return c;
    return int64_t(1);
  };
  // The input channels are a loop of blocks of 8: the vectorized body of one
  // block is 8 x kw x (output channel block) FMAs; unrolling all channels
  // instead makes the code (and LLVM's time) grow with the channel count.
  auto cTile = [](int64_t c) -> int64_t { return c > 8 && c % 8 == 0 ? 8 : 0; };
  SmallVector<int64_t> sizes;
  if (isa<linalg::Conv2DNchwFchwOp>(op))
    sizes = {1,
             std::min<int64_t>(ranges[1], target.lanes / 2),
             1,
             owTile(ranges[3]),
             cTile(ranges[4]),
             1,
             0};
  else if (isa<linalg::Conv2DNgchwGfchwOp>(op))
    sizes = {1,
             1,
             std::min<int64_t>(ranges[2], target.lanes / 2),
             1,
             owTile(ranges[4]),
             cTile(ranges[5]),
             1,
             0};
  else if (isa<linalg::Conv2DNhwcHwcfOp>(op)) {
    // (n, oh, ow, f, kh, kw, c): a register block of target.rows output
    // pixels along the width by two registers of output channels (AVX-512:
    // 8 x 32, 16 accumulators), over blocks of 8 input channels. Blocks that
    // do not divide leave a partial block, peeled off below.
    sizes = {1,
             1,
             blockRows(ranges[2]),
             std::min<int64_t>(ranges[3], 2 * target.lanes),
             1,
             1,
             cTile(ranges[6])};
  } else if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op))
    sizes = {1, 1, 1, owTile(ranges[3]), 1, 0};
  else
    return;
  bool nhwc = isa<linalg::Conv2DNhwcHwcfOp>(op);
  // Channel blocks that do not divide leave dynamic tiles: use 1 instead.
  for (unsigned d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1 && ranges[d] % sizes[d] != 0 &&
        !(nhwc && (d == 2 || d == 3)))
      sizes[d] = 1;

  // Channels-last: the blocks of output channels are the outermost loop, so
  // that a block's weights (KH x KW x C x 32) stay in cache while every
  // output pixel passes; they are the parallel loop when there are enough
  // of them, so that each core reads only its own blocks' weights.
  std::optional<unsigned> parallelDim;
  SmallVector<int64_t> interchange;
  if (nhwc) {
    interchange = {3, 0, 1, 2, 4, 5, 6};
    if (ranges[3] % sizes[3] == 0 && ranges[3] / sizes[3] >= kMinParallelTrips)
      parallelDim = 3;
  }
  // Channels-last: the fill of the output joins every tile, so that each
  // register block starts from the fill's constant instead of reading back
  // a whole output that a separate pass zeroed (12.8 MB per call for
  // MobileNetV2's first convolution at batch 8).
  auto fuseFill = [nhwc](Operation *p) {
    return nhwc && isa<linalg::FillOp>(p);
  };
  if (distributeAndRetile(
          rewriter, op, sizes, minParallelCost,
          [&](linalg::LinalgOp inner) {
            tileConvolution(rewriter, inner, /*minParallelCost=*/-1, packRhs);
          },
          parallelDim, fuseFill))
    return;
  // The output block first, then the window and channel loops inside it:
  // those loops then carry only the block, whose accumulators the hoisting
  // keeps in registers across them.
  SmallVector<int64_t> parallelSizes(sizes), reductionSizes(sizes.size(), 0);
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      std::swap(parallelSizes[d], reductionSizes[d]);
  FailureOr<scf::SCFTileAndFuseResult> tiled = tileAndFuse(
      rewriter, cast<TilingInterface>(op.getOperation()), parallelSizes,
      scf::SCFTilingOptions::LoopType::ForOp, fuseFill, interchange);
  if (failed(tiled) || tiled->loops.empty())
    return;
  if (op->use_empty())
    rewriter.eraseOp(op);
  // Partial pixel and channel blocks (channels-last only) become loops of
  // their own with static shapes, which the 1-D vectorizer needs. A peeled
  // inner loop stays inside the outer ones: only outermost nests are walked.
  SmallVector<Operation *> nests = {tiled->loops.front().getOperation()};
  if (nhwc)
    for (Operation *partial : peelPartialTiles(rewriter, tiled->loops))
      if (!nests.front()->isAncestor(partial))
        nests.push_back(partial);
  for (Operation *nest : nests) {
    SmallVector<linalg::LinalgOp> blocks;
    nest->walk([&](linalg::LinalgOp l) {
      if (isConvolutionLike(l))
        blocks.push_back(l);
    });
    for (linalg::LinalgOp block : blocks) {
      // Channels-last: the weights of a block of output channels (KH x KW
      // x C x 2 registers) are packed once per block, before the pixel
      // loops that reuse them. Unpacked, their rows are all F channels
      // apart; packed even from F = 64 (rows 256 bytes apart) they stay in
      // cache: ResNet-18 b8 348 -> 244 ms on an AVX2 host, against 266 ms
      // with kMinPackedRowBytes (F from 256).
      if (nhwc && packRhs)
        packPanel(
            rewriter, block, block.getDpsInputOperand(1),
            tileLoopsAround(
                block, [&](Operation *loop) { return nest->isAncestor(loop); }),
            /*minRowBytes=*/0);
      (void)tileSequentially(rewriter, block, reductionSizes);
    }
    // Decompose the tiled 2-D ops into 1-D ones (drops the unit kh/oh dims).
    RewritePatternSet decompose(op->getContext());
    linalg::populateDecomposeConvolutionPatterns(decompose);
    (void)applyPatternsGreedily(nest, std::move(decompose));
  }
}

//===----------------------------------------------------------------------===//
// Everything else: elementwise, transposes, broadcasts, reductions
//===----------------------------------------------------------------------===//

/// Whether loop `d` of `op` is the fastest-varying dim of every input that
/// it indexes: the dims after it in the input (in the tensor it is a slice
/// of, whose strides the slice keeps) all have one element.
static bool isFastestDimOfInputs(linalg::LinalgOp op, unsigned d) {
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(d, op->getContext()));
    if (!pos)
      continue; // broadcast along d
    Value v = in->get();
    while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (slice.getSourceType().getRank() != slice.getType().getRank())
        return false;
      v = slice.getSource();
    }
    auto type = dyn_cast<ShapedType>(v.getType());
    if (!type || !type.hasStaticShape())
      return false;
    for (int64_t size : type.getShape().drop_front(*pos + 1))
      if (size != 1)
        return false;
  }
  return true;
}

void tileGeneric(RewriterBase &rewriter, linalg::LinalgOp op,
                 int64_t minParallelCost) {
  if (!hasStaticLoops(op))
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned nLoops = ranges.size();
  // Nothing to tile without loops or with an empty one (a reduction over an
  // empty dim just yields its init).
  if (nLoops == 0 || llvm::is_contained(ranges, 0))
    return;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  // Reductions stay whole (up to the vector budget, innermost first, the
  // innermost loop counted in whole registers: a reduction over dims ending
  // in a unit dim is one register per element); parallel loops are tiled to
  // 1 except the innermost one, which becomes the vector.
  SmallVector<int64_t> sizes(nLoops, 1);
  int64_t elems = 1;
  // A reduction over outer dims that keeps the innermost one (a column sum:
  // the bias gradient of a linear layer, summed over batch and sequence) is a
  // loop over the reduced dims, each step adding a row of vectors: kept whole,
  // it became one vector per reduced element, transposed into place element
  // by element (8192 extracts for an 8 x 64 x 16 tile).
  bool outerReduction =
      iters.back() == utils::IteratorType::parallel &&
      llvm::is_contained(iters, utils::IteratorType::reduction);
  for (int d = nLoops - 1; d >= 0 && !outerReduction; --d)
    if (iters[d] == utils::IteratorType::reduction) {
      bool innermost = d == (int)nLoops - 1;
      int64_t extent = innermost ? roundUp(ranges[d], target.lanes) : ranges[d];
      if (extent * elems <= kMaxVectorElems) {
        sizes[d] = 0;
        elems *= extent;
      } else if (innermost) {
        // A long row (a softmax over a 50257-word vocabulary) is reduced in
        // chunks of 16 registers, not element by element: the scalar loop
        // made GPT-2's loss 15% of its training step.
        sizes[d] = 16 * target.lanes;
        elems = sizes[d];
      } else {
        sizes[d] = 1;
      }
    }
  // The vector runs along the innermost parallel loop, or past trailing unit
  // loops along the innermost one of more than one trip where that is the
  // fastest-varying dim of every input too (a (576, 8, 3136, 1) im2col
  // transpose in a convolution's kernel gradient: with the unit loop as the
  // vector, one scalar at a time). Where an input varies faster along
  // another dim (the strided windows of a depthwise convolution with a 1x1
  // output), the vector would be a gather of one load per element.
  auto isParallel = [&](int d) {
    return iters[d] == utils::IteratorType::parallel;
  };
  int innerParallel = -1;
  for (int d = nLoops - 1; d >= 0 && innerParallel < 0; --d)
    if (isParallel(d))
      innerParallel = d;
  if (innerParallel >= 0 && ranges[innerParallel] == 1) {
    int wide = -1;
    for (int d = innerParallel - 1; d >= 0 && wide < 0; --d)
      if (isParallel(d) && ranges[d] > 1)
        wide = d;
    if (wide >= 0 && isFastestDimOfInputs(op, wide))
      innerParallel = wide;
  }
  if (innerParallel >= 0) {
    int64_t r = ranges[innerParallel];
    int64_t budget = std::max<int64_t>(kMaxVectorElems / elems, 1);
    int64_t want = std::min<int64_t>(4 * target.lanes, budget);
    // Whole rows when they fit; else a multiple of the lane count. A
    // parallel loop outside the reduced ones (a per-channel sum over batch
    // and pixels: a convolution's bias gradient, batch norm's statistics)
    // is not the vector's fast dim: past the budget it is tiled to one
    // element, whose unit dim the reduction drops. Rounded up to the lanes
    // it made 8 x 16 x 8 x 8 tiles that the reduction transposed element by
    // element (17 s of LLVM code generation for one such sum).
    if (innerParallel != (int)nLoops - 1 && budget < target.lanes)
      want = 1;
    sizes[innerParallel] = r <= want ? 0
                           : want == 1
                               ? 1
                               : roundUp(std::min(want, r), target.lanes);
    if (sizes[innerParallel] >= r)
      sizes[innerParallel] = 0;
  }
  // A transposing read (an input whose fastest-varying dim is another loop
  // than the output's) would load each vector element from another cache
  // line. Square target.lanes x target.lanes tiles instead read whole rows of
  // the input and transpose them in registers (vector.transpose, shuffles).
  // Input dims after the square's that are short (a kernel's 3 x 3 window in
  // a (F, C, KH, KW) -> (KH, KW, C, F) weight re-layout, 9 elements apart in
  // C) become the innermost tile loops, so that the rows a square reads stay
  // in cache for all of them: with the vector along F, every element was a
  // load from another row 18 KB away, all in two sets of the L1 cache.
  // (When the output's fastest dim is a unit dim, the 16x16 transpose
  // lowering does not apply: the vectors run along innerParallel.)
  SmallVector<int64_t> interchange;
  bool unitInnermost = innerParallel < (int)nLoops - 1 && ranges.back() == 1;
  if (innerParallel >= 0 && elems == 1 && !unitInnermost)
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      if (map.getNumResults() == 0)
        continue;
      SmallVector<unsigned> shortDims;
      int64_t shortElems = 1;
      std::optional<unsigned> square;
      for (AffineExpr e : llvm::reverse(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        if (!dim)
          break;
        unsigned d = dim.getPosition();
        if (ranges[d] >= target.lanes || (int)d == innerParallel ||
            !isParallel(d)) {
          square = d;
          break;
        }
        shortDims.push_back(d);
        shortElems *= ranges[d];
      }
      if (!square || (int)*square == innerParallel || !isParallel(*square) ||
          ranges[*square] % target.lanes != 0 ||
          ranges[innerParallel] % target.lanes != 0 ||
          shortElems > kMaxShortTransposeElems)
        continue;
      sizes[*square] = target.lanes;
      sizes[innerParallel] = target.lanes;
      for (unsigned d : shortDims)
        sizes[d] = 1;
      if (!shortDims.empty()) {
        for (unsigned d = 0; d < nLoops; ++d)
          if (!llvm::is_contained(shortDims, d))
            interchange.push_back(d);
        interchange.append(shortDims.rbegin(), shortDims.rend());
      }
      break;
    }
  if (llvm::none_of(sizes, [](int64_t s) { return s != 0; }))
    return;
  if (distributeAndRetile(
          rewriter, op, sizes, minParallelCost, [&](linalg::LinalgOp inner) {
            tileGeneric(rewriter, inner, /*minParallelCost=*/-1);
          }))
    return;
  FailureOr<scf::SCFTilingResult> tiled =
      tileSequentially(rewriter, op, sizes, interchange);
  if (succeeded(tiled))
    peelPartialTiles(rewriter, tiled->loops);
}

/// How many times one call of the program runs `op`: the trip counts of the
/// loops around it, times the runs of the calls of its function (pipeline
/// stages, repeated runs of ops: poptorch-outline-repeats). Nothing if a
/// loop's trip count is unknown or the count overflows. `functionRuns`
/// caches the runs of each private function.
std::optional<int64_t>
timesRun(Operation *op, ModuleOp module,
         DenseMap<Operation *, std::optional<int64_t>> &functionRuns) {
  int64_t runs = 1;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(p)) {
      std::optional<APInt> n = loop.getStaticTripCount();
      if (!n || llvm::MulOverflow(runs, n->getSExtValue(), runs))
        return std::nullopt;
    }
    auto fn = dyn_cast<func::FuncOp>(p);
    if (!fn || fn.isPublic())
      continue;
    if (!functionRuns.contains(fn)) {
      std::optional<int64_t> calls = 0;
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(fn, module))
        for (const SymbolTable::SymbolUse &use : *uses) {
          std::optional<int64_t> n =
              timesRun(use.getUser(), module, functionRuns);
          if (!calls || !n || llvm::AddOverflow(*calls, *n, *calls))
            calls = std::nullopt;
        }
      functionRuns[fn] = calls;
    }
    std::optional<int64_t> calls = functionRuns.lookup(fn);
    if (!calls || llvm::MulOverflow(runs, *calls, runs))
      return std::nullopt;
    break;
  }
  return runs;
}

struct TileAndVectorizePass
    : public poptorch::impl::PoptorchTileAndVectorizeBase<
          TileAndVectorizePass> {
  using PoptorchTileAndVectorizeBase::PoptorchTileAndVectorizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (vectorBits != 512 && vectorBits != 256) {
      module.emitError() << "poptorch-tile-and-vectorize: vector-bits must "
                            "be 512 (AVX-512) or 256 (AVX2), not "
                         << int64_t(vectorBits);
      return signalPassFailure();
    }
    target = targetFor(vectorBits);
    target.bf16Dot = bf16Dot;
    IRRewriter rewriter(&getContext());
    int64_t parallelCost = minParallelCost;
    if (minProgramParallelCost > 0) {
      int64_t total = 0;
      DenseMap<Operation *, std::optional<int64_t>> functionRuns;
      module.walk([&](linalg::LinalgOp op) {
        // An op counts once per time a call of the program runs it.
        std::optional<int64_t> runs = timesRun(op, module, functionRuns);
        int64_t cost;
        if (hasStaticLoops(op) && runs &&
            !llvm::MulOverflow(estimateCost(op), *runs, cost) &&
            !llvm::AddOverflow(total, cost, total))
          return WalkResult::advance();
        total = std::numeric_limits<int64_t>::max();
        return WalkResult::interrupt();
      });
      if (total < minProgramParallelCost)
        parallelCost = -1;
    }
    module.walk([&](func::FuncOp func) {
      tileFunction(rewriter, func, parallelCost, packRhs);
    });
    // Static tile shapes (after peeling) must reach the linalg ops and the
    // loop-carried tensors before vectorization, so that full tiles
    // vectorize without masks.
    OpPassManager cleanup(ModuleOp::getOperationName());
    cleanup.addPass(createCanonicalizerPass());
    cleanup.addPass(createCSEPass());
    if (failed(runPipeline(cleanup, module)))
      return signalPassFailure();
    module.walk([&](func::FuncOp func) {
      vectorizeAllIn(rewriter, func);
      poptorch::hoistAndLowerVectors(func, target.lanes, bf16Dot);
    });
  }

  static void tileFunction(RewriterBase &rewriter, func::FuncOp func,
                           int64_t minParallelCost, bool packRhs) {
    // Ops at function level, or in the program's own sequential loops (an
    // im2col's loop over kernel offsets): what is inside a tile loop has
    // been handled, and the tile loops made here are not among `ownLoops`.
    llvm::SmallPtrSet<Operation *, 8> ownLoops;
    func.walk([&](scf::ForOp loop) { ownLoops.insert(loop); });
    auto topLevel = [&](auto pred) {
      SmallVector<linalg::LinalgOp> ops;
      func.walk([&](linalg::LinalgOp l) {
        for (Operation *p = l->getParentOp(); p != func; p = p->getParentOp())
          if (!ownLoops.contains(p))
            return;
        // A producer fused into the tiles of its consumer (the fill of a
        // contraction's or convolution's output) is left without users:
        // tiling it would be work for canonicalization to throw away.
        if (l.hasPureTensorSemantics() && !l->use_empty() && pred(l))
          ops.push_back(l);
      });
      return ops;
    };
    for (linalg::LinalgOp op : topLevel([](linalg::LinalgOp l) {
           return !isa<linalg::FillOp>(l) && !isConvolutionLike(l) &&
                  l.getNumReductionLoops() > 0;
         }))
      if (std::optional<ContractionTiles> t = chooseContractionTiles(op)) {
        t->packRhs = packRhs;
        tileContraction(rewriter, op, *t, minParallelCost);
      }
    for (linalg::LinalgOp op : topLevel(isConvolutionLike))
      tileConvolution(rewriter, op, minParallelCost, packRhs);
    // What is still at function level (including contraction-shaped ops
    // without an n dim, e.g. sums of squares) takes the generic path.
    for (linalg::LinalgOp op :
         topLevel([](linalg::LinalgOp l) { return !isConvolutionLike(l); }))
      tileGeneric(rewriter, op, minParallelCost);
  }
};

} // namespace

int64_t mlir::poptorch::contractionBlockColumns(int64_t m, int64_t vectorBits) {
  VectorTarget t = targetFor(vectorBits);
  return blockColumns(std::min(m, t.rows), t);
}
