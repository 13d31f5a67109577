//===- DecomposeNnLinalg.cpp - nn and linear-algebra ops -> simpler ops ---===//
//
// Part of poptorch-decompose (populated from Decompose.cpp): the composite
// ops of the nn-linalg (round 2) block become matmul, elementwise, reduction
// and data-movement ops:
//   addbmm      -> addmm on the batch folded into the contraction
//   matmul over an empty contraction, empty slices -> zeros
//   glu         -> two slices, sigmoid, mul
//   trace       -> diagonal, reduce_sum
//   cross       -> rolls along the 3-vector dim, mul, sub
//   renorm      -> vector_norm, where, mul
//   max_unpool  -> scatter into zero planes
//   col2im      -> index (a constant map from output pixels and kernel
//                  positions to columns) and reduce_sum over the kernel
//   cdist/pdist -> row differences and vector_norm
//   embedding_bag -> embedding, bag ids by comparing positions with the
//                  offsets, scatter (sum / amax) per bag
//   weight_norm -> vector_norm, div, mul
//   grid_sampler -> per-corner flat indices and weights (elementwise), gather
//   upsample (linear_aa / cubic_aa) -> two matmuls with constant weights
// f16/bf16 compute in f32 and round once, as PyTorch's CPU kernels do.
//
//===----------------------------------------------------------------------===//
#include "DecomposeBuilder.h"
#include "poptorch/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>
#include <optional>

namespace mlir::poptorch {
void populateNnLinalgDecomposePatterns(RewritePatternSet &patterns);
} // namespace mlir::poptorch

using namespace mlir;
using namespace mlir::poptorch;
using namespace mlir::poptorch::decompose;

namespace {

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

/// Zeros for a matmul over an empty contraction (the tiled lowering assumes
/// at least one step of the reduction) and a slice with no elements
/// (tensor.extract_slice rejects offset 0 into a size-0 dim).
template <typename OpTy> struct ZerosWhenEmpty : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    bool empty;
    if constexpr (std::is_same_v<OpTy, MatmulOp>)
      empty = typeOf(op.getLhs()).getShape().back() == 0;
    else
      empty = op.getType().getNumElements() == 0;
    if (!empty)
      return failure();
    Ops o{rewriter, op.getLoc()};
    rewriter.replaceOp(
        op, o.zeros(op.getType().getShape(), op.getType().getElementType()));
    return success();
  }
};

/// addbmm: sum_b lhs[b] @ rhs[b] = lhs' @ rhs' with lhs' = (n, B*m) the
/// batches side by side and rhs' = (B*m, p) stacked, so one addmm.
struct DecomposeAddbmm : public OpRewritePattern<AddbmmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddbmmOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto l = typeOf(op.getLhs()).getShape(), r = typeOf(op.getRhs()).getShape();
    Value lhs =
        o.reshape(o.permute(op.getLhs(), {1, 0, 2}), {l[1], l[0] * l[2]});
    Value rhs = o.reshape(op.getRhs(), {r[0] * r[1], r[2]});
    rewriter.replaceOpWithNewOp<AddmmOp>(op, op.getType(), op.getInput(), lhs,
                                         rhs, op.getBetaAttr(),
                                         op.getAlphaAttr());
    return success();
  }
};

struct DecomposeGlu : public OpRewritePattern<GluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GluOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Type elem = op.getType().getElementType();
    Value x = o.cast(op.getInput(), computeElem(elem));
    int64_t dim = op.getDim(), half = typeOf(x).getShape()[dim] / 2;
    Value a = o.slice(x, dim, 0, half), g = o.slice(x, dim, half, half);
    rewriter.replaceOp(op, o.cast(o.mul(a, o.un<SigmoidOp>(g)), elem));
    return success();
  }
};

struct DecomposeTrace : public OpRewritePattern<TraceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TraceOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = o.cast(op.getInput(), op.getType().getElementType());
    auto s = typeOf(x).getShape();
    auto diagTy = typeOf(x).clone({std::min(s[0], s[1])});
    Value diag = DiagonalOp::create(rewriter, op.getLoc(), diagTy, x, 0, 0, 1);
    rewriter.replaceOp(op, o.reduce<ReduceSumOp>(diag, {0}, false));
    return success();
  }
};

/// r[i] = a[i+1] b[i+2] - a[i+2] b[i+1] (indices mod 3): rolls by 2 and 1.
struct DecomposeCross : public OpRewritePattern<CrossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value a = op.getLhs(), b = op.getRhs();
    int64_t d = op.getDim();
    Value r = o.sub(o.mul(o.roll(a, 2, d), o.roll(b, 1, d)),
                    o.mul(o.roll(a, 1, d), o.roll(b, 2, d)));
    rewriter.replaceOp(op, o.expand(r, op.getType().getShape()));
    return success();
  }
};

/// As PyTorch: the norm and the factor in the accumulation type, the
/// product in the input's.
struct DecomposeRenorm : public OpRewritePattern<RenormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RenormOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    Type elem = op.getType().getElementType(), ce = computeElem(elem);
    double maxnorm = op.getMaxnorm().convertToDouble();
    Value norm =
        o.norm(o.cast(x, ce), Ops::allBut(typeOf(x).getRank(), op.getDim()),
               op.getP().convertToDouble(), true);
    Value factor =
        o.where(o.cmp<GtOp>(norm, o.cst(ce, maxnorm)),
                o.div(o.cst(ce, maxnorm), o.addC(norm, 1e-7)), o.cst(ce, 1.0));
    rewriter.replaceOp(op, o.mul(x, o.cast(factor, elem)));
    return success();
  }
};

/// Each (batch, channel) plane flattened; the values scattered at their
/// indices into zeros (in input order, so the last duplicate wins as in
/// eager).
template <typename OpTy, int n>
struct DecomposeMaxUnpool : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto in = typeOf(op.getInput()), out = op.getType();
    int64_t planes = product(in.getShape().drop_back(n));
    int64_t inPlane = product(in.getShape().take_back(n));
    int64_t outPlane = product(out.getShape().take_back(n));
    Value x = o.reshape(op.getInput(), {planes, inPlane});
    Value idx = o.reshape(o.cast(op.getIndices(), rewriter.getI64Type()),
                          {planes, inPlane});
    Value zero = o.zeros({planes, outPlane}, in.getElementType());
    Value r = ScatterOp::create(rewriter, op.getLoc(), zero.getType(), zero,
                                idx, x, 1, "none", true);
    rewriter.replaceOp(op, o.reshape(r, out.getShape()));
    return success();
  }
};

/// fold: output pixel (y, x) sums, over kernel positions k = (i, j), the
/// column l whose window puts k at (y, x), if any. A constant (K, H*W) map
/// gives l, or L (a zero column appended) where no window does; one index op
/// gathers (.., C, K, H*W) and a sum over K folds it.
struct DecomposeCol2im : public OpRewritePattern<Col2imOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Col2imOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto in = typeOf(op.getInput()), out = op.getType();
    ArrayRef<int64_t> ks = op.getKernelSize(), dil = op.getDilation(),
                      pad = op.getPadding(), st = op.getStride();
    int64_t rank = out.getRank();
    int64_t h = out.getShape()[rank - 2], w = out.getShape()[rank - 1];
    int64_t c = out.getShape()[rank - 3];
    int64_t k = ks[0] * ks[1], l = in.getShape().back();
    int64_t lh = (h + 2 * pad[0] - dil[0] * (ks[0] - 1) - 1) / st[0] + 1;
    int64_t lw = (w + 2 * pad[1] - dil[1] * (ks[1] - 1) - 1) / st[1] + 1;
    if (lh < 0 || lw < 0 || lh * lw != l)
      return rewriter.notifyMatchFailure(op, "column count mismatch");
    SmallVector<int64_t> map;
    for (int64_t ki = 0; ki < ks[0]; ++ki)
      for (int64_t kj = 0; kj < ks[1]; ++kj)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t x = 0; x < w; ++x) {
            int64_t py = y + pad[0] - ki * dil[0],
                    px = x + pad[1] - kj * dil[1];
            bool ok = py >= 0 && px >= 0 && py % st[0] == 0 &&
                      px % st[1] == 0 && py / st[0] < lh && px / st[1] < lw;
            map.push_back(ok ? (py / st[0]) * lw + px / st[1] : l);
          }
    SmallVector<int64_t> lead(out.getShape().drop_back(3));
    auto with = [&](std::initializer_list<int64_t> tail) {
      SmallVector<int64_t> s(lead);
      s.append(tail);
      return s;
    };
    Value x = o.reshape(op.getInput(), with({c, k, l}));
    auto padTy = in.clone(with({c, k, l + 1}));
    x = PadOp::create(rewriter, op.getLoc(), padTy, x,
                      o.cst(in.getElementType(), 0.0), ArrayRef<int64_t>{0, 1},
                      "constant");
    Value kIdx = o.iota(k, 0, 2), lIdx = o.i64s({k, h * w}, map);
    int64_t r = lead.size();
    Value g = IndexOp::create(
        rewriter, op.getLoc(), in.clone(with({c, k, h * w})), x,
        ValueRange{kIdx, lIdx}, ArrayRef<int64_t>{r + 1, r + 2});
    Value sum = o.reduce<ReduceSumOp>(g, {r + 1}, false);
    rewriter.replaceOp(op, o.reshape(sum, out.getShape()));
    return success();
  }
};

/// ||lhs[.., p, :] - rhs[.., r, :]||: the rows broadcast against each other.
struct DecomposeCdist : public OpRewritePattern<CdistOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CdistOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto l = typeOf(op.getLhs()), r = typeOf(op.getRhs());
    SmallVector<int64_t> ls(l.getShape()), rs(r.getShape());
    ls.insert(ls.end() - 1, 1);
    rs.insert(rs.end() - 2, 1);
    if (l.getShape().back() == 0) { // no coordinates: every distance is 0
      rewriter.replaceOp(op,
                         o.zeros(op.getType().getShape(), l.getElementType()));
      return success();
    }
    Value d = o.sub(o.reshape(op.getLhs(), ls), o.reshape(op.getRhs(), rs));
    int64_t last = typeOf(d).getRank() - 1;
    Value n = o.norm(d, {last}, op.getP().convertToDouble(), false);
    rewriter.replaceOp(op, o.expand(n, op.getType().getShape()));
    return success();
  }
};

struct DecomposePdist : public OpRewritePattern<PdistOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PdistOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto in = typeOf(op.getInput());
    int64_t n = in.getShape()[0], m = in.getShape()[1];
    SmallVector<int64_t> is, js;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) {
        is.push_back(i);
        js.push_back(j);
      }
    int64_t pairs = is.size();
    if (pairs == 0 || m == 0) {
      rewriter.replaceOp(op, o.zeros({pairs}, in.getElementType()));
      return success();
    }
    auto rowsTy = in.clone({pairs, m});
    Value a = EmbeddingOp::create(rewriter, op.getLoc(), rowsTy, op.getInput(),
                                  o.i64s({pairs}, is));
    Value b = EmbeddingOp::create(rewriter, op.getLoc(), rowsTy, op.getInput(),
                                  o.i64s({pairs}, js));
    rewriter.replaceOp(
        op, o.norm(o.sub(a, b), {1}, op.getP().convertToDouble(), false));
    return success();
  }
};

/// The bag of index i is (the number of offsets <= i) - 1; rows are gathered
/// by embedding and combined per bag with a scatter (sum or amax). Mean
/// divides by the bag's count of non-padding indices; empty bags give 0.
struct DecomposeEmbeddingBag : public OpRewritePattern<EmbeddingBagOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingBagOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Type i64 = rewriter.getI64Type();
    Type elem = op.getType().getElementType(), ce = computeElem(elem);
    int64_t bags = op.getType().getShape()[0], dim = op.getType().getShape()[1];
    int64_t len = typeOf(op.getIndices()).getShape()[0];
    Value idx = o.cast(op.getIndices(), i64);
    Value offs = o.slice(o.cast(op.getOffsets(), i64), 0, 0, bags);
    SmallVector<int64_t> positions;
    for (int64_t i = 0; i < len; ++i)
      positions.push_back(i);
    Value started = o.cast(
        o.cmp<LeOp>(o.reshape(offs, {1, bags}), o.i64s({len, 1}, positions)),
        i64);
    Value bag = o.max(o.addC(o.reduce<ReduceSumOp>(started, {1}, false), -1),
                      o.cst(i64, 0.0));
    Value bagIdx = o.expand(o.reshape(bag, {len, 1}), {len, dim});

    auto rowsTy = RankedTensorType::get({len, dim}, ce);
    Value rows = EmbeddingOp::create(rewriter, op.getLoc(), rowsTy,
                                     o.cast(op.getWeight(), ce), idx);
    if (Value psw = op.getPerSampleWeights())
      rows = o.mul(rows, o.reshape(o.cast(psw, ce), {len, 1}));
    int64_t mode = op.getMode(), padding = op.getPaddingIdx();
    Value valid; // (len, 1) bool, absent without padding_idx
    if (padding >= 0)
      valid = o.reshape(o.cmp<NeOp>(idx, o.cst(i64, padding)), {len, 1});
    // The number of (non-padding) indices per bag, for mean and max.
    Value count;
    if (mode != 0) {
      Value one = o.expand(o.cst(ce, 1.0), {len});
      if (valid)
        one = o.cast(o.reshape(valid, {len}), ce);
      Value zero = o.zeros({bags}, ce);
      count = ScatterOp::create(rewriter, op.getLoc(), zero.getType(), zero,
                                bag, one, 0, "sum", true);
      count = o.reshape(count, {bags, 1});
    }
    Value zero = o.zeros({bags, dim}, ce);
    Value r;
    if (mode == 2) {
      if (valid)
        rows = o.where(valid, rows,
                       o.cst(ce, -std::numeric_limits<double>::infinity()));
      r = ScatterOp::create(rewriter, op.getLoc(), zero.getType(), zero, bagIdx,
                            rows, 0, "amax", false);
      if (valid)
        r = o.where(o.cmp<GtOp>(count, o.cst(ce, 0.0)), r, o.cst(ce, 0.0));
    } else {
      if (valid)
        rows = o.where(valid, rows, o.cst(ce, 0.0));
      r = ScatterOp::create(rewriter, op.getLoc(), zero.getType(), zero, bagIdx,
                            rows, 0, "sum", true);
      if (mode == 1)
        r = o.div(r, o.max(count, o.cst(ce, 1.0)));
    }
    rewriter.replaceOp(op, o.cast(r, elem));
    return success();
  }
};

/// w = v * (g / ||v||), the 2-norm over every dim but `dim`, in the
/// accumulation type; the norm is the second result.
struct DecomposeWeightNorm : public OpRewritePattern<WeightNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WeightNormOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto vTy = typeOf(op.getV());
    Type elem = vTy.getElementType(), ce = computeElem(elem);
    Value v = o.cast(op.getV(), ce);
    Value norm = o.norm(v, Ops::allBut(vTy.getRank(), op.getDim()), 2.0, true);
    Value w = o.mul(v, o.div(o.cast(op.getG(), ce), norm));
    auto normTy = op.getNorm().getType();
    rewriter.replaceOp(op, {o.expand(o.cast(w, elem), vTy.getShape()),
                            o.reshape(o.cast(norm, normTy.getElementType()),
                                      normTy.getShape())});
    return success();
  }
};

/// grid_sample as PyTorch's CPU kernel: per spatial axis the grid coordinate
/// is unnormalised (and clipped or reflected for border / reflection
/// padding); each of the 2^n corners (1 for nearest) is a flat index into
/// the input plane and a weight; corners outside the input count 0.
struct DecomposeGridSampler : public OpRewritePattern<GridSamplerOp> {
  using OpRewritePattern::OpRewritePattern;

  /// reflect_coordinates: c reflected into [min, min + span].
  static Value reflect(Ops &o, Value c, double min, double span) {
    Type ce = typeOf(c).getElementType();
    if (span <= 0)
      return o.mul(c, o.cst(ce, 0.0));
    Value a = o.un<AbsOp>(o.addC(c, -min));
    Value flips = o.un<TruncOp>(o.div(a, o.cst(ce, 2 * span)));
    Value extra = o.sub(a, o.mulC(flips, 2 * span));
    Value r = o.min(extra, o.sub(o.cst(ce, 2 * span), extra));
    return o.addC(r, min);
  }

  LogicalResult matchAndRewrite(GridSamplerOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto inTy = typeOf(op.getInput()), gridTy = typeOf(op.getGrid());
    // f16/bf16 in their own type, rounding after every step, as PyTorch's
    // vectorized kernel does (its coordinates round too).
    Type elem = inTy.getElementType(), ce = elem;
    Type i64 = rewriter.getI64Type();
    int64_t n = inTy.getRank() - 2;
    int64_t batch = inTy.getShape()[0], chans = inTy.getShape()[1];
    ArrayRef<int64_t> sizes = inTy.getShape().drop_front(2);
    int64_t plane = product(sizes);
    int64_t points = product(gridTy.getShape().drop_front().drop_back());
    bool align = op.getAlignCorners();
    int64_t padding = op.getPaddingMode();
    bool nearest = op.getInterpolationMode() == 1;

    Value grid = o.reshape(o.cast(op.getGrid(), ce), {batch, points, n});
    Value input = o.reshape(o.cast(op.getInput(), ce), {batch, chans, plane});
    // The source coordinate along each spatial axis (D, H, W order; the
    // grid's last dim is x, y, z), shaped (N, 1, points).
    SmallVector<Value> coords;
    for (int64_t a = 0; a < n; ++a) {
      double size = sizes[a];
      Value c = o.reshape(o.slice(grid, 2, n - 1 - a, 1), {batch, 1, points});
      c = align ? o.mulC(o.addC(c, 1.0), (size - 1) / 2)
                : o.addC(o.mulC(o.addC(c, 1.0), size / 2), -0.5);
      if (padding == 2)
        c = align ? reflect(o, c, 0, size - 1) : reflect(o, c, -0.5, size);
      if (padding != 0)
        c = o.min(o.max(c, o.cst(ce, 0.0)), o.cst(ce, size - 1));
      coords.push_back(c);
    }
    SmallVector<Value> base, w0, w1;
    for (Value c : coords) {
      if (nearest) {
        base.push_back(o.un<RoundOp>(c));
        continue;
      }
      Value lo = o.un<FloorOp>(c);
      base.push_back(lo);
      w0.push_back(o.sub(o.addC(lo, 1.0), c));
      w1.push_back(o.sub(c, lo));
    }
    Value acc;
    int64_t corners = nearest ? 1 : (1 << n);
    for (int64_t corner = 0; corner < corners; ++corner) {
      Value flat, inside, weight;
      for (int64_t a = 0; a < n; ++a) {
        bool upper = (corner >> (n - 1 - a)) & 1;
        double size = sizes[a];
        Value pos = upper ? o.addC(base[a], 1.0) : base[a];
        Value ok = o.andOf(o.cmp<GeOp>(pos, o.cst(ce, 0.0)),
                           o.cmp<LeOp>(pos, o.cst(ce, size - 1)));
        inside = inside ? o.andOf(inside, ok) : ok;
        Value clamped = o.min(o.max(pos, o.cst(ce, 0.0)), o.cst(ce, size - 1));
        Value p = o.cast(clamped, i64);
        flat = flat ? o.add(o.mul(flat, o.cst(i64, size)), p) : p;
      }
      // Weights multiply x first, then y, then z, as PyTorch's kernel.
      if (!nearest)
        for (int64_t a = n - 1; a >= 0; --a) {
          bool upper = (corner >> (n - 1 - a)) & 1;
          Value wa = upper ? w1[a] : w0[a];
          weight = weight ? o.mul(weight, wa) : wa;
        }
      Value index = o.expand(flat, {batch, chans, points});
      Value v = GatherOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get({batch, chans, points}, ce), input, index, 2);
      if (weight)
        v = o.mul(v, weight);
      Value term = o.where(inside, v, o.cst(ce, 0.0));
      acc = acc ? o.add(acc, term) : term;
    }
    rewriter.replaceOp(op,
                       o.reshape(o.cast(acc, elem), op.getType().getShape()));
    return success();
  }
};

/// Antialiased resampling (upsample modes linear_aa and cubic_aa, from
/// _upsample_bilinear2d_aa / _upsample_bicubic2d_aa): separable, the last dim
/// first and then the one before, as PyTorch's kernel; each pass is a matmul
/// with a constant (out, in) matrix of the filter weights that PyTorch's
/// _compute_index_ranges_weights gives each output (normalised to sum 1).
struct DecomposeUpsampleAntialias : public OpRewritePattern<UpsampleOp> {
  using OpRewritePattern::OpRewritePattern;

  static double filter(double x, bool cubic) {
    x = std::abs(x);
    if (!cubic)
      return x < 1.0 ? 1.0 - x : 0.0;
    const double a = -0.5; // Keys' bicubic convolution, as PyTorch's aa
    if (x < 1.0)
      return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2.0)
      return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
  }

  /// The (out, in) weights, or none where they are the identity.
  static std::optional<SmallVector<double>> weights(int64_t in, int64_t out,
                                                    bool align,
                                                    FloatAttr scaleAttr,
                                                    bool cubic) {
    double given = scaleAttr ? scaleAttr.getValueAsDouble() : 0.0;
    double scale = align ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                   : given > 0 ? 1.0 / given
                               : double(in) / double(out);
    double half = cubic ? 2.0 : 1.0;
    double support = scale >= 1.0 ? half * scale : half;
    double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
    SmallVector<double> m(out * in, 0.0);
    bool identity = in == out;
    for (int64_t i = 0; i < out; ++i) {
      double center = scale * (i + 0.5);
      int64_t lo =
          std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
      int64_t size =
          std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) -
          lo;
      double total = 0.0;
      for (int64_t j = 0; j < size; ++j) {
        double w = filter((j + lo - center + 0.5) * invscale, cubic);
        m[i * in + lo + j] = w;
        total += w;
      }
      for (int64_t j = 0; j < size; ++j) {
        if (total != 0.0)
          m[i * in + lo + j] /= total;
        identity &= m[i * in + lo + j] == (lo + j == i ? 1.0 : 0.0);
      }
    }
    if (identity)
      return std::nullopt;
    return m;
  }

  LogicalResult matchAndRewrite(UpsampleOp op,
                                PatternRewriter &rewriter) const override {
    StringRef mode = op.getMode();
    if (mode != "linear_aa" && mode != "cubic_aa")
      return failure();
    Ops o{rewriter, op.getLoc()};
    bool cubic = mode == "cubic_aa", align = op.getAlignCorners();
    auto inTy = typeOf(op.getInput());
    Type elem = inTy.getElementType(), ce = computeElem(elem);
    int64_t rank = inTy.getRank();
    auto constant = [&](ArrayRef<int64_t> shape, ArrayRef<double> values) {
      auto ty = RankedTensorType::get(shape, ce);
      SmallVector<Attribute> attrs;
      for (double v : values)
        attrs.push_back(rewriter.getFloatAttr(ce, v));
      return ConstantOp::create(rewriter, op.getLoc(), ty,
                                DenseElementsAttr::get(ty, attrs));
    };
    Value x = o.cast(op.getInput(), ce);
    SmallVector<int64_t> shape(inTy.getShape());
    // The last dim: x (.., in) @ w^T (in, out).
    int64_t inW = inTy.getShape()[rank - 1],
            outW = op.getType().getShape()[rank - 1];
    if (auto w = weights(inW, outW, align, op.getScaleWAttr(), cubic)) {
      SmallVector<double> t(inW * outW);
      for (int64_t i = 0; i < outW; ++i)
        for (int64_t j = 0; j < inW; ++j)
          t[j * outW + i] = (*w)[i * inW + j];
      shape[rank - 1] = outW;
      x = MatmulOp::create(rewriter, op.getLoc(),
                           RankedTensorType::get(shape, ce), x,
                           constant({inW, outW}, t));
    }
    // The dim before: w (out, in) @ x (.., in, W).
    int64_t inH = inTy.getShape()[rank - 2],
            outH = op.getType().getShape()[rank - 2];
    if (auto w = weights(inH, outH, align, op.getScaleHAttr(), cubic)) {
      shape[rank - 2] = outH;
      x = MatmulOp::create(rewriter, op.getLoc(),
                           RankedTensorType::get(shape, ce),
                           constant({outH, inH}, *w), x);
    }
    rewriter.replaceOp(op, o.cast(x, elem));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateNnLinalgDecomposePatterns(
    RewritePatternSet &patterns) {
  patterns.add<ZerosWhenEmpty<MatmulOp>, ZerosWhenEmpty<SliceOp>,
               DecomposeAddbmm, DecomposeGlu, DecomposeTrace, DecomposeCross,
               DecomposeRenorm, DecomposeMaxUnpool<MaxUnpool2dOp, 2>,
               DecomposeMaxUnpool<MaxUnpool3dOp, 3>, DecomposeCol2im,
               DecomposeCdist, DecomposePdist, DecomposeEmbeddingBag,
               DecomposeWeightNorm, DecomposeGridSampler,
               DecomposeUpsampleAntialias>(patterns.getContext());
}
