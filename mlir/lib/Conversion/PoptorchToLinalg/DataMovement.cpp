//===- DataMovement.cpp - reshapes, views and gathers to tensor/linalg ----===//
//
// reshape -> collapse/expand_shape, permute/transpose -> linalg.transpose,
// expand -> linalg.broadcast, slice/select -> tensor.extract_slice,
// cat -> tensor.insert_slice chain, embedding -> linalg.generic with
// tensor.extract.
// Constant padding -> a fill with the input inserted into its interior.
// flip, roll, tile, other pads, triangle, diagonal, diag_embed, unfold,
// channel_shuffle and im2col are gathers: one linalg.generic over the result
// whose body computes the source position from the loop indices and reads it
// with tensor.extract (positions outside the input give zero where the op
// says so).
// None of these computes on elements, so every element type (ui8 too) works.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/IndexMath.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

struct ReshapeLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, op.getLoc(), adaptor.getInput(),
                                     op.getType().getShape()));
    return success();
  }
};

struct PermuteLowering : public OpConversionPattern<PermuteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, transposeTensor(rewriter, op.getLoc(),
                                           adaptor.getInput(), op.getDims()));
    return success();
  }
};

struct TransposeLowering : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t rank = getTensorType(op.getInput()).getRank();
    if (rank == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    auto perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[op.getDim0()], perm[op.getDim1()]);
    rewriter.replaceOp(
        op, transposeTensor(rewriter, op.getLoc(), adaptor.getInput(), perm));
    return success();
  }
};

struct ExpandLowering : public OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, broadcastTensor(rewriter, op.getLoc(),
                                           adaptor.getInput(),
                                           op.getType().getShape()));
    return success();
  }
};

struct SliceLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resTy = op.getType();
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t i = 0; i < resTy.getRank(); ++i) {
      bool isDim = i == (int64_t)op.getDim();
      offsets.push_back(rewriter.getIndexAttr(isDim ? op.getStart() : 0));
      sizes.push_back(rewriter.getIndexAttr(resTy.getShape()[i]));
      strides.push_back(rewriter.getIndexAttr(isDim ? op.getStep() : 1));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, resTy, adaptor.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct SliceInsertLowering : public OpConversionPattern<SliceInsertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceInsertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcTy = getTensorType(adaptor.getSource());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t i = 0; i < srcTy.getRank(); ++i) {
      bool isDim = i == (int64_t)op.getDim();
      offsets.push_back(rewriter.getIndexAttr(isDim ? op.getStart() : 0));
      sizes.push_back(rewriter.getIndexAttr(srcTy.getShape()[i]));
      strides.push_back(rewriter.getIndexAttr(isDim ? op.getStep() : 1));
    }
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, adaptor.getSource(), adaptor.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct SelectLowering : public OpConversionPattern<SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inTy = getTensorType(adaptor.getInput());
    if (inTy.getRank() == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t i = 0; i < inTy.getRank(); ++i) {
      bool isDim = i == (int64_t)op.getDim();
      offsets.push_back(rewriter.getIndexAttr(isDim ? op.getIndex() : 0));
      sizes.push_back(rewriter.getIndexAttr(isDim ? 1 : inTy.getShape()[i]));
      strides.push_back(rewriter.getIndexAttr(1));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), adaptor.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct CatLowering : public OpConversionPattern<CatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    int64_t dim = op.getDim();
    if (adaptor.getInputs().size() == 1) {
      rewriter.replaceOp(op, adaptor.getInputs()[0]);
      return success();
    }
    Value result = createEmpty(rewriter, loc, resTy);
    int64_t offset = 0;
    for (Value in : adaptor.getInputs()) {
      auto ty = getTensorType(in);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t i = 0; i < resTy.getRank(); ++i) {
        offsets.push_back(rewriter.getIndexAttr(i == dim ? offset : 0));
        sizes.push_back(rewriter.getIndexAttr(ty.getShape()[i]));
        strides.push_back(rewriter.getIndexAttr(1));
      }
      result = tensor::InsertSliceOp::create(rewriter, loc, in, result, offsets,
                                             sizes, strides);
      offset += ty.getShape()[dim];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct EmbeddingLowering : public OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Value weight = adaptor.getWeight();
    Value indices = adaptor.getIndices();
    auto idxTy = getTensorType(indices);
    bool idxUnsigned = hasUnsignedSemantics(idxTy.getElementType());
    int64_t rank = resTy.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i + 1 < rank; ++i)
      idxExprs.push_back(getAffineDimExpr(i, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, idxExprs, ctx),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value init = createEmpty(rewriter, loc, resTy);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resTy}, ValueRange{indices}, ValueRange{init},
        maps, iters, [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value idx = scalarToSignless(b, nloc, args[0]);
          Value row = idxUnsigned ? (Value)arith::IndexCastUIOp::create(
                                        b, nloc, b.getIndexType(), idx)
                                  : (Value)arith::IndexCastOp::create(
                                        b, nloc, b.getIndexType(), idx);
          Value col = linalg::IndexOp::create(b, nloc, rank - 1);
          Value v =
              tensor::ExtractOp::create(b, nloc, weight, ValueRange{row, col});
          linalg::YieldOp::create(b, nloc, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// A gather from `input` into a result of type `resTy`: `src` maps the
/// result position to the input position and an optional "in bounds"
/// condition (positions out of bounds are clamped and give zero).
static Value gatherFrom(
    OpBuilder &b, Location loc, Value input, RankedTensorType resTy,
    function_ref<Value(IndexMath &, ValueRange, SmallVector<Value> &)> src,
    Value fill = {}) {
  auto inShape = getTensorType(input).getShape();
  return createIndexedGeneric(
      b, loc, resTy, {}, {},
      [&](OpBuilder &nb, Location nloc, ValueRange ivs, ValueRange) {
        IndexMath m{nb, nloc};
        SmallVector<Value> pos;
        Value valid = src(m, ivs, pos);
        if (valid)
          for (auto [i, p] : llvm::enumerate(pos))
            p = m.clamp(p, inShape[i]);
        Value v = tensor::ExtractOp::create(nb, nloc, input, pos);
        if (valid && fill)
          return m.select(
              valid, v,
              tensor::ExtractOp::create(nb, nloc, fill, ValueRange{}));
        return valid ? m.selectOrZero(valid, v) : v;
      });
}

template <typename OpTy>
struct GatherLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto in = getTensorType(input).getShape();
    RankedTensorType resTy = op.getType();
    Value fill;
    if constexpr (std::is_same_v<OpTy, PadOp>)
      fill = adaptor.getValue();
    rewriter.replaceOp(
        op, gatherFrom(
                rewriter, op.getLoc(), input, resTy,
                [&](IndexMath &m, ValueRange ivs, SmallVector<Value> &pos) {
                  return source(op, m, in, resTy.getShape(), ivs, pos);
                },
                fill));
    return success();
  }

  /// The input position of result position `ivs`; returns a validity
  /// condition, or null when every position is in bounds.
  static Value source(OpTy op, IndexMath &m, ArrayRef<int64_t> in,
                      ArrayRef<int64_t> out, ValueRange ivs,
                      SmallVector<Value> &pos);
};

template <>
Value GatherLowering<FlipOp>::source(FlipOp op, IndexMath &m,
                                     ArrayRef<int64_t> in, ArrayRef<int64_t>,
                                     ValueRange ivs, SmallVector<Value> &pos) {
  pos.assign(ivs.begin(), ivs.end());
  for (int64_t d : op.getDims())
    if (!in.empty())
      pos[d] = m.sub(m.c(in[d] - 1), ivs[d]);
  return {};
}

template <>
Value GatherLowering<RollOp>::source(RollOp op, IndexMath &m,
                                     ArrayRef<int64_t> in, ArrayRef<int64_t>,
                                     ValueRange ivs, SmallVector<Value> &pos) {
  auto rolled = [&](Value i, int64_t shift, int64_t size) {
    if (size == 0)
      return i;
    int64_t s = ((shift % size) + size) % size;
    return m.rem(m.add(i, size - s), size);
  };
  pos.assign(ivs.begin(), ivs.end());
  if (!op.getDims().empty()) {
    for (auto [shift, d] : llvm::zip(op.getShifts(), op.getDims()))
      pos[d] = rolled(ivs[d], shift, in[d]);
    return {};
  }
  // The flattened tensor rolls: linearize, roll, delinearize.
  int64_t numel = 1;
  for (int64_t s : in)
    numel *= s;
  Value lin = m.c(0);
  for (auto [i, s] : llvm::enumerate(in))
    lin = m.add(m.mul(lin, s), ivs[i]);
  lin = rolled(lin, op.getShifts()[0], numel);
  for (int64_t i = in.size(); i-- > 0;) {
    pos[i] = in[i] ? m.rem(lin, in[i]) : lin;
    lin = m.div(lin, std::max<int64_t>(in[i], 1));
  }
  return {};
}

template <>
Value GatherLowering<TileOp>::source(TileOp, IndexMath &m, ArrayRef<int64_t> in,
                                     ArrayRef<int64_t> out, ValueRange ivs,
                                     SmallVector<Value> &pos) {
  int64_t off = out.size() - in.size();
  for (size_t j = 0; j < in.size(); ++j)
    pos.push_back(in[j] == out[off + j] ? ivs[off + j]
                                        : m.rem(ivs[off + j], in[j]));
  return {};
}

template <>
Value GatherLowering<PadOp>::source(PadOp op, IndexMath &m,
                                    ArrayRef<int64_t> in, ArrayRef<int64_t>,
                                    ValueRange ivs, SmallVector<Value> &pos) {
  pos.assign(ivs.begin(), ivs.end());
  auto pad = op.getPad();
  StringRef mode = op.getMode();
  Value valid;
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    size_t d = in.size() - 1 - k;
    int64_t n = in[d];
    Value j = m.add(ivs[d], -pad[2 * k]);
    if (mode == "constant") {
      Value inside = m.inRange(j, n);
      valid = valid ? m.land(valid, inside) : inside;
    } else if (mode == "replicate") {
      j = m.clamp(j, n);
    } else if (mode == "reflect") {
      // -j before the start, 2 (n - 1) - j past the end.
      j = m.select(m.lt(j, m.c(0)), m.sub(m.c(0), j), j);
      j = m.select(m.ge(j, m.c(n)), m.sub(m.c(2 * (n - 1)), j), j);
    } else { // circular
      // Negative pads crop first; the wrap is within what is kept, the
      // [lo, hi) of the dim (torch's _pad_circular).
      int64_t lo = std::max<int64_t>(0, -pad[2 * k]);
      int64_t hi = n - std::max<int64_t>(0, -pad[2 * k + 1]);
      j = m.add(ivs[d], -std::max<int64_t>(0, pad[2 * k]) + lo);
      j = m.select(m.lt(j, m.c(lo)), m.add(j, hi - lo), j);
      j = m.select(m.ge(j, m.c(hi)), m.add(j, lo - hi), j);
    }
    pos[d] = j;
  }
  return valid;
}

template <>
Value GatherLowering<TriangleOp>::source(TriangleOp op, IndexMath &m,
                                         ArrayRef<int64_t> in,
                                         ArrayRef<int64_t>, ValueRange ivs,
                                         SmallVector<Value> &pos) {
  pos.assign(ivs.begin(), ivs.end());
  size_t r = in.size();
  // col - row against the diagonal: tril keeps <=, triu keeps >=.
  Value diff = m.sub(ivs[r - 1], ivs[r - 2]);
  Value k = m.c(op.getDiagonal());
  return op.getUpper() ? m.ge(diff, k) : m.ge(k, diff);
}

template <>
Value GatherLowering<DiagonalOp>::source(DiagonalOp op, IndexMath &m,
                                         ArrayRef<int64_t> in,
                                         ArrayRef<int64_t>, ValueRange ivs,
                                         SmallVector<Value> &pos) {
  int64_t d1 = op.getDim1(), d2 = op.getDim2(), off = op.getOffset();
  Value k = ivs.back();
  size_t next = 0;
  for (int64_t d = 0; d < (int64_t)in.size(); ++d) {
    if (d == d1)
      pos.push_back(m.add(k, std::max<int64_t>(-off, 0)));
    else if (d == d2)
      pos.push_back(m.add(k, std::max<int64_t>(off, 0)));
    else
      pos.push_back(ivs[next++]);
  }
  return {};
}

template <>
Value GatherLowering<DiagEmbedOp>::source(DiagEmbedOp op, IndexMath &m,
                                          ArrayRef<int64_t> in,
                                          ArrayRef<int64_t> out, ValueRange ivs,
                                          SmallVector<Value> &pos) {
  int64_t rank = out.size(), off = op.getOffset();
  int64_t d1 = (int64_t)op.getDim1() < 0 ? op.getDim1() + rank : op.getDim1();
  int64_t d2 = (int64_t)op.getDim2() < 0 ? op.getDim2() + rank : op.getDim2();
  for (int64_t d = 0; d < rank; ++d)
    if (d != d1 && d != d2)
      pos.push_back(ivs[d]);
  // (a, b) in the (dim1, dim2) plane is on the diagonal when b - a = offset.
  Value a = ivs[d1], b = ivs[d2];
  pos.push_back(off >= 0 ? a : b);
  return m.eq(m.sub(b, a), m.c(off));
}

template <>
Value GatherLowering<UnfoldOp>::source(UnfoldOp op, IndexMath &m,
                                       ArrayRef<int64_t> in, ArrayRef<int64_t>,
                                       ValueRange ivs,
                                       SmallVector<Value> &pos) {
  if (in.empty())
    return {};
  ValueRange head = ivs.drop_back();
  pos.assign(head.begin(), head.end());
  int64_t d = op.getDim();
  pos[d] = m.add(m.mul(ivs[d], op.getStep()), ivs.back());
  return {};
}

template <>
Value GatherLowering<ChannelShuffleOp>::source(
    ChannelShuffleOp op, IndexMath &m, ArrayRef<int64_t> in, ArrayRef<int64_t>,
    ValueRange ivs, SmallVector<Value> &pos) {
  // Output channel a * groups + b is input channel b * (C / groups) + a.
  int64_t g = op.getGroups(), perGroup = in[1] / g;
  pos.assign(ivs.begin(), ivs.end());
  pos[1] = m.add(m.mul(m.rem(ivs[1], g), perGroup), m.div(ivs[1], g));
  return {};
}

template <>
Value GatherLowering<Im2colOp>::source(Im2colOp op, IndexMath &m,
                                       ArrayRef<int64_t> in, ArrayRef<int64_t>,
                                       ValueRange ivs,
                                       SmallVector<Value> &pos) {
  bool batched = in.size() == 4;
  int64_t H = in[in.size() - 2], W = in.back();
  auto k = op.getKernelSize(), dil = op.getDilation(), pad = op.getPadding(),
       st = op.getStride();
  int64_t ow = (W + 2 * pad[1] - dil[1] * (k[1] - 1) - 1) / st[1] + 1;
  Value r = ivs[batched ? 1 : 0], l = ivs[batched ? 2 : 1];
  Value c = m.div(r, k[0] * k[1]);
  Value ki = m.rem(m.div(r, k[1]), k[0]), kj = m.rem(r, k[1]);
  Value oy = m.div(l, ow), ox = m.rem(l, ow);
  Value y = m.add(m.add(m.mul(oy, st[0]), -pad[0]), m.mul(ki, dil[0]));
  Value x = m.add(m.add(m.mul(ox, st[1]), -pad[1]), m.mul(kj, dil[1]));
  if (batched)
    pos.push_back(ivs[0]);
  pos.append({c, y, x});
  return m.land(m.inRange(y, H), m.inRange(x, W));
}

/// Constant padding by non-negative amounts of a float or (8-bit or wider)
/// integer tensor: the input copied into the interior of a filled tensor
/// (padTrailing), the form the convolution and pool lowerings give their own
/// padding. An elementwise producer then writes into the interior, and
/// poptorch-split-padding can split the windows that read it, where a gather
/// (GatherLowering<PadOp>, for the other pads) is a pass of its own.
struct ConstantPadLowering : public OpConversionPattern<PadOp> {
  ConstantPadLowering(MLIRContext *ctx)
      : OpConversionPattern<PadOp>(ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> pad = op.getPad();
    Type elem = op.getType().getElementType();
    if (op.getMode() != "constant" ||
        llvm::any_of(pad, [](int64_t p) { return p < 0; }) ||
        !(isa<FloatType>(elem) ||
          (elem.isInteger() && elem.getIntOrFloatBitWidth() >= 8)))
      return rewriter.notifyMatchFailure(op, "left to the gather");
    // `pad` runs from the last dim backwards; padTrailing's from the first
    // padded dim forwards.
    size_t n = pad.size() / 2;
    SmallVector<int64_t> lo(n), hi(n);
    for (size_t k = 0; k < n; ++k) {
      lo[n - 1 - k] = pad[2 * k];
      hi[n - 1 - k] = pad[2 * k + 1];
    }
    Value fill = tensor::ExtractOp::create(rewriter, op.getLoc(),
                                           adaptor.getValue(), ValueRange{});
    rewriter.replaceOp(op, padTrailing(rewriter, op.getLoc(),
                                       adaptor.getInput(), lo, hi, fill));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<
      ReshapeLowering, PermuteLowering, TransposeLowering, ExpandLowering,
      SliceLowering, SliceInsertLowering, SelectLowering, CatLowering,
      EmbeddingLowering, GatherLowering<FlipOp>, GatherLowering<RollOp>,
      GatherLowering<TileOp>, GatherLowering<PadOp>, GatherLowering<TriangleOp>,
      GatherLowering<DiagonalOp>, GatherLowering<DiagEmbedOp>,
      GatherLowering<UnfoldOp>, GatherLowering<ChannelShuffleOp>,
      GatherLowering<Im2colOp>, ConstantPadLowering>(patterns.getContext());
}
