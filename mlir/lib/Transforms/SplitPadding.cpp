//===- SplitPadding.cpp - elementwise reads of padded tensors, unpadded ---===//
//
// poptorch-split-padding: the lowering pads the input of a depthwise
// convolution or a pool (a fill of the pad constant with the input copied
// into its interior) and reads every kernel offset's window as a strided
// slice of the padded tensor. The padded tensor costs a fill and a copy of
// the whole input per call: MobileNetV2 at batch 8 spent about 12% of its
// time filling the borders of its depthwise inputs.
//
// An all-parallel generic reading such slices is split instead into boxes
// of its iteration space, cut along each loop where one of the slices
// crosses the border of the interior: in every box, each slice lies wholly
// in the inserted value (and reads it directly, through a slice of its own)
// or wholly in the padding (and becomes the pad constant in the body). For
// a 3x3 stride-1 convolution padded by 1 that is the interior of the output,
// four edges and four corners; the interior box reads no padding at all.
// Each box computes into its slice of the generic's init, which the next box
// writes into, so the boxes bufferize into one buffer.
//
// Only padded tensors of at least min-padded-bytes are split. The edge boxes
// of an NCHW plane include one-column ones, one element per row and no
// vectors; a padded tensor that stays in the caches is cheaper to fill.
// Measured on MobileNetV2 at batch 8 (Zen 4, medians of three alternating
// processes of 60 calls): splitting every padded input 34.2 ms, none 35.4,
// those of 8 MiB or more (its four largest, 13-40 MB) 32.4.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHSPLITPADDING
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// More boxes than this are not worth their compile time: the generic
/// keeps its padded input. A 7x7 window padded by 3 makes 49 boxes of 49
/// slices each: ConvNeXt-tiny at batch 8 (Zen 3) then spent 10 s in
/// one-shot bufferization, and ran 4% faster (598.6 against 622.3 ms).
constexpr int64_t kMaxBoxes = 25;

/// A constant-padded tensor of `bytes`: `interior` inserted at `offsets` into
/// a fill of `pad`.
struct Padded {
  Value interior;
  TypedAttr pad;
  SmallVector<int64_t> offsets;
  int64_t bytes; // of the padded tensor
};

/// The value `v` is a copy of (a linalg.copy's result is its input), or `v`.
Value throughCopy(Value v) {
  if (auto copy = v.getDefiningOp<linalg::CopyOp>())
    if (copy.hasPureTensorSemantics())
      return copy.getInputs()[0];
  return v;
}

/// `v` as a padded tensor, when it is the static, unit-stride, rank-keeping
/// insert of a value into a linalg.fill of a constant (or a splat constant).
/// A linalg.copy into the interior is looked through.
std::optional<Padded> matchPadded(Value v) {
  auto insert = v.getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || !insert.hasUnitStride() ||
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !insert.getSourceType().hasStaticShape())
    return std::nullopt;
  std::optional<SmallVector<int64_t>> offsets =
      getConstantIntValues(insert.getMixedOffsets());
  if (!offsets)
    return std::nullopt;
  Padded p;
  p.offsets = *offsets;
  Value dest = insert.getDest();
  if (auto fill = dest.getDefiningOp<linalg::FillOp>()) {
    if (!fill.hasPureTensorSemantics() ||
        !matchPattern(fill.getInputs()[0], m_Constant(&p.pad)))
      return std::nullopt;
  } else {
    DenseElementsAttr splat;
    if (!matchPattern(dest, m_Constant(&splat)) || !splat.isSplat())
      return std::nullopt;
    p.pad = cast<TypedAttr>(splat.getSplatValue<Attribute>());
  }
  p.interior = throughCopy(insert.getSource());
  p.bytes = insert.getDestType().getNumElements() *
            insert.getDestType().getElementTypeBitWidth() / 8;
  return p;
}

/// An input of the generic that is a static, rank-keeping slice of a padded
/// tensor, read along loop `loops[d]` in its dim d.
struct PaddedRead {
  OpOperand *operand;
  Padded source;
  SmallVector<int64_t> offsets, strides;
  SmallVector<unsigned> loops;
  /// Per dim, the range of loop positions [first, last) whose element lies
  /// in the interior.
  SmallVector<std::pair<int64_t, int64_t>> inside;
};

/// Ceiling division rounding towards +infinity for any sign of `a`.
int64_t ceilDiv(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

std::optional<PaddedRead> matchPaddedRead(linalg::GenericOp op,
                                          OpOperand *operand,
                                          ArrayRef<int64_t> ranges) {
  auto slice = operand->get().getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice ||
      slice.getSourceType().getRank() != slice.getResultType().getRank())
    return std::nullopt;
  std::optional<Padded> padded = matchPadded(slice.getSource());
  if (!padded)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> offsets =
      getConstantIntValues(slice.getMixedOffsets());
  std::optional<SmallVector<int64_t>> strides =
      getConstantIntValues(slice.getMixedStrides());
  if (!offsets || !strides)
    return std::nullopt;
  PaddedRead read{operand, *padded, *offsets, *strides, {}, {}};
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (!map.isProjectedPermutation())
    return std::nullopt;
  ArrayRef<int64_t> interior =
      cast<RankedTensorType>(padded->interior.getType()).getShape();
  for (unsigned d = 0; d < map.getNumResults(); ++d) {
    unsigned loop = map.getDimPosition(d);
    int64_t lo = padded->offsets[d], hi = lo + interior[d];
    int64_t off = read.offsets[d], s = read.strides[d], n = ranges[loop];
    if (s <= 0)
      return std::nullopt;
    // Position o reads element off + o * s: inside for lo <= it < hi.
    int64_t first = std::clamp<int64_t>(ceilDiv(lo - off, s), 0, n);
    int64_t last = std::clamp<int64_t>(ceilDiv(hi - off, s), first, n);
    read.loops.push_back(loop);
    read.inside.push_back({first, last});
  }
  return read;
}

/// Splits `op` into boxes (see the file comment). Fails, changing nothing,
/// when it reads no padded tensor or is not an all-parallel generic of
/// static shape whose maps are projected permutations (and permutations for
/// its results, so that the boxes tile them), or when a padded tensor it
/// reads is smaller than `minPaddedBytes`.
LogicalResult splitPaddedReads(RewriterBase &rewriter, linalg::GenericOp op,
                               int64_t minPaddedBytes) {
  if (!op.hasPureTensorSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() || op.hasDynamicShape() ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return failure();
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true) ||
        (op.isDpsInit(&operand) && !map.isPermutation()))
      return failure();
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::vector<PaddedRead> reads;
  for (OpOperand *in : op.getDpsInputOperands())
    if (std::optional<PaddedRead> read = matchPaddedRead(op, in, ranges))
      reads.push_back(std::move(*read));
  if (reads.empty())
    return failure();
  if (llvm::any_of(reads, [&](const PaddedRead &r) {
        return r.source.bytes < minPaddedBytes;
      }))
    return failure();

  // The cuts along every loop: where some read enters or leaves the
  // interior.
  unsigned nLoops = ranges.size();
  SmallVector<SmallVector<int64_t>> cuts(nLoops);
  for (unsigned l = 0; l < nLoops; ++l)
    cuts[l] = {0, ranges[l]};
  for (const PaddedRead &read : reads)
    for (auto [loop, inside] : llvm::zip(read.loops, read.inside)) {
      cuts[loop].push_back(inside.first);
      cuts[loop].push_back(inside.second);
    }
  int64_t boxes = 1;
  for (SmallVector<int64_t> &c : cuts) {
    llvm::sort(c);
    c.erase(std::unique(c.begin(), c.end()), c.end());
    boxes *= c.size() - 1;
  }
  if (boxes > kMaxBoxes || boxes == 0)
    return failure();

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> results(op.getDpsInits());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Box b's position along each loop, as an index into that loop's cuts.
  SmallVector<int64_t> box(nLoops, 0);
  for (int64_t b = 0; b < boxes; ++b) {
    SmallVector<int64_t> lo(nLoops), size(nLoops);
    for (unsigned l = 0; l < nLoops; ++l) {
      lo[l] = cuts[l][box[l]];
      size[l] = cuts[l][box[l] + 1] - lo[l];
    }
    // The slice of `v` (read through `map`) that the box covers, or `v`
    // when it is all of it.
    auto sliceOf = [&](Value v, AffineMap map) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> offsets, sizes;
      for (auto [d, e] : llvm::enumerate(map.getResults())) {
        // A constant result reads a unit dim at 0 (a batch norm's (C, 1, 1)
        // parameters).
        auto dim = dyn_cast<AffineDimExpr>(e);
        offsets.push_back(dim ? lo[dim.getPosition()] : 0);
        sizes.push_back(dim ? size[dim.getPosition()] : type.getDimSize(d));
      }
      if (ArrayRef<int64_t>(sizes) == type.getShape())
        return v;
      return tensor::ExtractSliceOp::create(
          rewriter, loc, v, getAsIndexOpFoldResult(op.getContext(), offsets),
          getAsIndexOpFoldResult(op.getContext(), sizes),
          getAsIndexOpFoldResult(op.getContext(),
                                 SmallVector<int64_t>(sizes.size(), 1)));
    };
    SmallVector<Value> ins, outs;
    SmallVector<AffineMap> boxMaps;
    // Block arguments of the inputs that read padding, with their constant.
    SmallVector<std::pair<unsigned, TypedAttr>> padArgs;
    for (OpOperand *in : op.getDpsInputOperands()) {
      unsigned i = in->getOperandNumber();
      auto read = llvm::find_if(
          reads, [&](const PaddedRead &r) { return r.operand == in; });
      if (read == reads.end()) {
        // The window at the interior's own offset is the inserted value
        // itself (canonicalization folds its slice): read past the copy.
        Value v = throughCopy(in->get());
        ins.push_back(isa<RankedTensorType>(v.getType()) ? sliceOf(v, maps[i])
                                                         : v);
        boxMaps.push_back(maps[i]);
        continue;
      }
      bool inside = true;
      SmallVector<int64_t> offsets, sizes;
      for (auto [d, loop] : llvm::enumerate(read->loops)) {
        auto [first, last] = read->inside[d];
        inside &= first <= lo[loop] && lo[loop] + size[loop] <= last;
        offsets.push_back(read->offsets[d] + lo[loop] * read->strides[d] -
                          read->source.offsets[d]);
        sizes.push_back(size[loop]);
      }
      if (!inside) {
        padArgs.push_back({i, read->source.pad});
        continue;
      }
      ins.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, read->source.interior,
          getAsIndexOpFoldResult(op.getContext(), offsets),
          getAsIndexOpFoldResult(op.getContext(), sizes),
          getAsIndexOpFoldResult(op.getContext(), read->strides)));
      boxMaps.push_back(maps[i]);
    }
    for (auto [r, result] : llvm::enumerate(results)) {
      AffineMap map = maps[op.getNumDpsInputs() + r];
      outs.push_back(sliceOf(result, map));
      boxMaps.push_back(map);
    }
    SmallVector<Type> types;
    for (Value out : outs)
      types.push_back(out.getType());
    auto boxOp = linalg::GenericOp::create(rewriter, loc, types, ins, outs,
                                           boxMaps, op.getIteratorTypesArray());
    rewriter.cloneRegionBefore(op.getRegion(), boxOp.getRegion(),
                               boxOp.getRegion().end());
    Block *body = boxOp.getBody();
    rewriter.setInsertionPointToStart(body);
    for (auto [i, pad] : llvm::reverse(padArgs)) {
      BlockArgument arg = body->getArgument(i);
      rewriter.replaceAllUsesWith(
          arg, arith::ConstantOp::create(rewriter, loc, pad));
      body->eraseArgument(i);
    }
    rewriter.setInsertionPoint(op);
    for (auto [r, out] : llvm::enumerate(outs)) {
      if (out == results[r]) {
        results[r] = boxOp->getResult(r);
        continue;
      }
      auto sliceOp = out.getDefiningOp<tensor::ExtractSliceOp>();
      results[r] = tensor::InsertSliceOp::create(
          rewriter, loc, boxOp->getResult(r), results[r],
          sliceOp.getMixedOffsets(), sliceOp.getMixedSizes(),
          sliceOp.getMixedStrides());
    }
    // The next box, the last loop fastest.
    for (int l = nLoops - 1; l >= 0; --l) {
      if (++box[l] + 1 < (int64_t)cuts[l].size())
        break;
      box[l] = 0;
    }
  }
  rewriter.replaceOp(op, results);
  return success();
}

struct SplitPaddingPass
    : public poptorch::impl::PoptorchSplitPaddingBase<SplitPaddingPass> {
  using PoptorchSplitPaddingBase::PoptorchSplitPaddingBase;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics)
      (void)splitPaddedReads(rewriter, op, minPaddedBytes);
  }
};
} // namespace
