//===- TileGeneric.cpp - other linalg ops ---------------------------------===//
//
// Every linalg op that is neither a contraction nor a convolution tiled to
// one vector-sized block of its innermost parallel loop, with its
// reductions whole where they fit; transposing reads tiled in squares that
// are transposed in registers.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"

using namespace mlir;

namespace mlir::poptorch::tiling {

/// A transposing tile's input rows may step over at most this many elements
/// of short trailing dims (see tileGeneric): each row is then read with that
/// stride, one load per element.
constexpr int64_t kMaxShortTransposeElems = 16;

/// A tile that keeps reductions whole and that an input reads transposed is
/// transposed in registers element by element: at most this many elements.
constexpr int64_t kMaxTransposedReductionElems = 256;

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

/// The elements of the tile of `op` with `sizes` (0: the whole loop) when an
/// input reads it transposed or broadcast across its fastest-varying dim
/// (the innermost loop of more than one trip in the tile is not the
/// innermost such dim of the input), else 0.
static int64_t transposedTileElems(linalg::LinalgOp op,
                                   ArrayRef<int64_t> ranges,
                                   ArrayRef<int64_t> sizes) {
  auto extent = [&](unsigned d) {
    return sizes[d] == 0 ? ranges[d] : sizes[d];
  };
  int fastest = -1;
  int64_t elems = 1;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    elems *= extent(d);
    if (extent(d) > 1)
      fastest = d;
  }
  if (fastest < 0)
    return 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    for (AffineExpr e :
         llvm::reverse(op.getMatchingIndexingMap(in).getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim)
        return elems; // a window's index sum: not read along the tile's rows
      if (extent(dim.getPosition()) == 1)
        continue;
      if ((int)dim.getPosition() != fastest)
        return elems;
      break;
    }
  }
  return 0;
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
  // A whole reduction with a transposing read (ConvNeXt's final pooling: the
  // residual sum in (N, C, H, W) and the block's output channels-last,
  // averaged over 7 x 7 pixels): the vector along the channels made 32 x 7 x
  // 7 tiles transposed element by element (35000 lines of LLVM IR, 3.2 s of
  // its code generation). One channel at a time reads 49 strided elements.
  if (elems > 1 &&
      transposedTileElems(op, ranges, sizes) > kMaxTransposedReductionElems)
    for (unsigned d = 0; d < nLoops; ++d)
      if (isParallel(d))
        sizes[d] = 1;
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
      // An input that does not vary along the vector (a depthwise
      // convolution's per-channel weights) is one element broadcast, not a
      // transposing read.
      if (map.getNumResults() == 0 || !map.isFunctionOfDim(innerParallel))
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

} // namespace mlir::poptorch::tiling
