//===- TileConvolutions.cpp - convolutions and poolings -------------------===//
//
// NCHW convolutions and poolings tiled to one output row and a block of
// columns and channels; channels-last convolutions tiled into register
// blocks of output pixels by output channels, their weights packed per
// block. Both decomposed to 1-D ops for the vectorizer.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace mlir::poptorch::tiling {

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

bool isConvolutionLike(linalg::LinalgOp op) {
  return !isa<linalg::GenericOp>(op) && linalg::isaConvolutionOpInterface(op);
}

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

} // namespace mlir::poptorch::tiling
