//===- TileAndVectorize.h - poptorch-tile-and-vectorize internals -------===//
//
// The pieces of poptorch-tile-and-vectorize (TileAndVectorize.cpp: the pass
// and its strategy), one file each: TilingUtils.cpp (tiling and
// distribution over the cores), TileContractions.cpp, TileConvolutions.cpp,
// TileGeneric.cpp (everything else), Vectorize.cpp, and after
// vectorization LowerVectors.cpp. What this header declares is shared
// between them; the rest of each file is its own.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_TRANSFORMS_TILEANDVECTORIZE_H
#define POPTORCH_TRANSFORMS_TILEANDVECTORIZE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <functional>
#include <optional>

namespace mlir::poptorch {

/// After vectorization (LowerVectors.cpp): hoists register tiles'
/// accumulators out of their reduction loops and lowers the vector ops of
/// `func` for registers of `lanes` f32 lanes; with `bf16Dot`, contractions
/// of bfloat16 matrices become AVX512-BF16 dot products.
void hoistAndLowerVectors(func::FuncOp func, int64_t lanes, bool bf16Dot);

namespace tiling {

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
extern thread_local VectorTarget target;

/// The target with registers of `vectorBits` (512 or 256).
VectorTarget targetFor(int64_t vectorBits);

/// Largest vector (in elements) that one tile of a non-contraction op may
/// use; bigger iteration spaces are tiled further.
constexpr int64_t kMaxVectorElems = 4096;

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

/// A parallel loop with fewer trips than this is only taken when no outer
/// one has as many: two blocks per worker (2 cores) balance uneven work.
constexpr int64_t kMinParallelTrips = 4;

inline int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

//===----------------------------------------------------------------------===//
// TilingUtils.cpp
//===----------------------------------------------------------------------===//

/// The tensor that `v` is a slice of, through the unit-stride, rank-keeping
/// slices of the tilings around it (a parallel task's columns, a register
/// tile); `v` itself if it is no such slice.
Value sliceSource(Value v);

/// The scf.for loops around `op` that `inside` accepts, outermost first
/// (the tile loops made around it, up to the first loop that is not).
SmallVector<LoopLikeOpInterface>
tileLoopsAround(Operation *op, llvm::function_ref<bool(Operation *)> inside);

bool hasStaticLoops(linalg::LinalgOp op);

SmallVector<OpFoldResult> asIndexAttrs(OpBuilder &b, ArrayRef<int64_t> v);

/// Splits each tile loop whose step does not divide its trip count into a
/// main loop of full (static) tiles and one partial iteration. Inner loops
/// first: the partial iteration of an outer loop then gets the inner loop
/// already split, and its full tiles stay static too.
/// Returns the partial iterations' loops.
SmallVector<Operation *> peelPartialTiles(RewriterBase &rewriter,
                                          ArrayRef<LoopLikeOpInterface> loops);

/// The cost that min-parallel-cost is compared with: iteration points times
/// the scalar ops of the body (a matmul point is a multiply and an add).
int64_t estimateCost(linalg::LinalgOp op);

bool shouldDistribute(linalg::LinalgOp op, int64_t minParallelCost);

/// The loop to run in parallel, given the tile size of every loop (0: not
/// tiled): a parallel loop whose tile divides it (full tiles keep static
/// shapes for the vectorizer) and that runs at least twice. The outermost
/// one with kMinParallelTrips trips wins, else the one with most trips.
std::optional<unsigned> pickParallelLoop(linalg::LinalgOp op,
                                         ArrayRef<int64_t> tileSizes);

/// Tiles `root` by `sizes` in loops of `loopType`, fusing into them the
/// producers that `fuse` accepts, and replaces `root`'s uses by the result.
FailureOr<scf::SCFTileAndFuseResult>
tileAndFuse(RewriterBase &rewriter, TilingInterface root,
            ArrayRef<int64_t> sizes, scf::SCFTilingOptions::LoopType loopType,
            std::function<bool(Operation *)> fuse,
            ArrayRef<int64_t> interchange = {});

/// Tiles loop `dim` of `root` by `size` with an scf.forall, fusing into it
/// the producers that `fuse` accepts, and replaces `root` by the result.
FailureOr<scf::SCFTileAndFuseResult>
distributeLoop(RewriterBase &rewriter, TilingInterface root, unsigned dim,
               int64_t size, std::function<bool(Operation *)> fuse);

/// Tiles `op` with `sizes` in sequential scf.for loops and replaces it.
FailureOr<scf::SCFTilingResult>
tileSequentially(RewriterBase &rewriter, linalg::LinalgOp op,
                 ArrayRef<int64_t> sizes, ArrayRef<int64_t> interchange = {});

/// The op of `tiled` (a tiled root or fused producer) that `pred` accepts.
template <typename Pred>
linalg::LinalgOp findTiled(const scf::SCFTileAndFuseResult &tiled, Pred pred) {
  for (Operation *t : tiled.tiledAndFusedOps)
    if (auto l = dyn_cast<linalg::LinalgOp>(t); l && pred(l))
      return l;
  return nullptr;
}

/// When `op` is worth running on every core, tiles one of its parallel loops
/// (of tile size `sizes[dim]`) with scf.forall and hands the tile to `retile`,
/// which tiles it further on one core. Returns true if it did.
bool distributeAndRetile(
    RewriterBase &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> sizes,
    int64_t minParallelCost, llvm::function_ref<void(linalg::LinalgOp)> retile,
    std::optional<unsigned> dim = std::nullopt,
    std::function<bool(Operation *)> fuse = [](Operation *) { return false; });

//===----------------------------------------------------------------------===//
// TileContractions.cpp
//===----------------------------------------------------------------------===//

/// The inner loop of a contraction's reduction over pairs of k: two
/// reduction loops (kp, kr), kr of 2 and the last index of every input (a
/// bf16 matmul whose weight poptorch-pack-weights laid out for AVX512-BF16's
/// dot products, its A read as (m, K / 2, 2)). The pair stays whole in every
/// tile, and kp is the loop that the reduction is tiled and blocked along.
std::optional<unsigned>
pairedReductionLoop(linalg::LinalgOp op,
                    const linalg::ContractionDimensions &dims);

/// The reduction loop that a contraction is tiled along: the outer loop of a
/// pair (pairedReductionLoop), else the innermost reduction loop.
unsigned tiledReductionLoop(linalg::LinalgOp op,
                            const linalg::ContractionDimensions &dims);

/// Packs the slice that `operand` of `op` reads (a block of columns of a
/// wider tensor, through the slices of the tilings around it) into a
/// contiguous buffer, once per iteration of the loops it depends on, before
/// the loops of `loops` (the tile loops around `op`, outermost first) that
/// reuse it. Unpacked, each row of the block is a few elements out of every
/// row of the tensor: see kMinPackedRowBytes.
linalg::LinalgOp packPanel(RewriterBase &rewriter, linalg::LinalgOp op,
                           OpOperand *operand,
                           ArrayRef<LoopLikeOpInterface> loops,
                           int64_t minRowBytes = kMinPackedRowBytes);

/// Tiles `op` as a contraction (register tiles, packing, distribution over
/// the cores) when it is one whose tiles can be chosen; returns whether it
/// was.
bool tileAsContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                       int64_t minParallelCost, bool packRhs);

//===----------------------------------------------------------------------===//
// TileConvolutions.cpp
//===----------------------------------------------------------------------===//

/// A named convolution or pooling (a generic never is one here).
bool isConvolutionLike(linalg::LinalgOp op);

/// Tiles a 2-D NCHW convolution/pooling to one output row (and one kernel
/// row) and a block of output columns and channels, so that upstream's
/// decomposition produces 1-D ops that vectorize along the output width.
/// Loop orders: conv_2d_nchw_fchw (n, f, oh, ow, c, kh, kw),
/// conv_2d_ngchw_gfchw (n, g, f, oh, ow, c, kh, kw), pooling_nchw_*
/// (n, c, oh, ow, kh, kw). A channels-last conv_2d_nhwc_hwcf (n, oh, ow, f,
/// kh, kw, c) gets register blocks of 8 output pixels by 32 output channels
/// (AVX2: 6 by 16) instead, like a matmul's.
void tileConvolution(RewriterBase &rewriter, linalg::LinalgOp op,
                     int64_t minParallelCost, bool packRhs);

//===----------------------------------------------------------------------===//
// TileGeneric.cpp
//===----------------------------------------------------------------------===//

/// Tiles `op` to one vector-sized block of its innermost parallel loop (an
/// expensive one first gets a parallel loop over the cores).
void tileGeneric(RewriterBase &rewriter, linalg::LinalgOp op,
                 int64_t minParallelCost);

//===----------------------------------------------------------------------===//
// Vectorize.cpp
//===----------------------------------------------------------------------===//

/// Vectorizes every linalg op in `root` that the vectorizer can handle.
void vectorizeAllIn(RewriterBase &rewriter, Operation *root);

} // namespace tiling
} // namespace mlir::poptorch

#endif // POPTORCH_TRANSFORMS_TILEANDVECTORIZE_H
