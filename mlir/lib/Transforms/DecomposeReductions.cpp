//===- DecomposeReductions.cpp - reductions and losses -> simpler ops -----===//
//
// Part of poptorch-decompose (populated from Decompose.cpp): the composite
// ops of the reductions family become core reductions (reduce_sum/max/min/
// any, argmax, sort), elementwise and data-movement ops:
//   nansum, count_nonzero, logsumexp, var/std(_mean), vector_norm, aminmax,
//   kthvalue, median(_dim) and the forward losses (mse,
//   smooth_l1, huber, soft_margin, binary_cross_entropy,
//   multi_margin, nll, multilabel_margin).
// f16/bf16 compute in f32 and round once, as PyTorch's CPU kernels do.
// Class indices are matched with a one-hot comparison against an iota, so a
// gather is a masked sum (exact: one term is nonzero).
//
//===----------------------------------------------------------------------===//
#include "DecomposeBuilder.h"
#include "poptorch/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::poptorch {
void populateReductionDecomposePatterns(RewritePatternSet &patterns);
} // namespace mlir::poptorch

using namespace mlir;
using namespace mlir::poptorch;
using namespace mlir::poptorch::decompose;

namespace {

/// The loss reduction: 0 none, 1 mean, 2 sum.
Value reduceLoss(Ops &o, Value l, int64_t reduction) {
  if (reduction == 0)
    return l;
  if (reduction == 1)
    return o.reduce<ReduceMeanOp>(l, o.allDims(l), false);
  return o.reduce<ReduceSumOp>(l, o.allDims(l), false);
}

/// Replaces `op` by `values` reshaped to its results' shapes (the first
/// op->getNumResults() of them).
LogicalResult replaceReshaped(PatternRewriter &rewriter, Ops &o, Operation *op,
                              ArrayRef<Value> values) {
  SmallVector<Value> results;
  for (auto [v, r] : llvm::zip(values, op->getResults()))
    results.push_back(o.reshape(v, typeOf(r).getShape()));
  rewriter.replaceOp(op, results);
  return success();
}

/// The input of a per-dim statistic: rank 0 and `dim`-less ops work on the
/// flattened input along dim 0.
std::pair<Value, int64_t> statInput(Ops &o, Value x,
                                    std::optional<uint64_t> d) {
  auto ty = typeOf(x);
  if (d && ty.getRank() > 0)
    return {x, (int64_t)*d};
  return {o.reshape(x, {ty.getNumElements()}), 0};
}

struct DecomposeNansum : public OpRewritePattern<NansumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NansumOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    Type elem = typeOf(x).getElementType();
    if (isa<FloatType>(elem))
      x = o.where(o.isNaN(x), o.cst(elem, 0.0), x);
    rewriter.replaceOpWithNewOp<ReduceSumOp>(op, op.getType(), x, op.getDims(),
                                             op.getKeepdim());
    return success();
  }
};

struct DecomposeCountNonzero : public OpRewritePattern<CountNonzeroOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CountNonzeroOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    Value nz = o.cmp<NeOp>(x, o.cst(typeOf(x).getElementType(), 0.0));
    rewriter.replaceOpWithNewOp<ReduceSumOp>(
        op, op.getType(), o.cast(nz, op.getType().getElementType()),
        op.getDims(), op.getKeepdim());
    return success();
  }
};

struct DecomposeLogsumexp : public OpRewritePattern<LogsumexpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogsumexpOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Type elem = op.getType().getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "logsumexp needs a float type");
    Type ce = computeElem(elem);
    Value x = o.cast(op.getInput(), ce);
    // PyTorch: the max is taken as 0 where it is infinite.
    Value m = o.reduce<ReduceMaxOp>(x, op.getDims(), true);
    Value inf = o.cst(ce, std::numeric_limits<double>::infinity());
    m = o.where(o.cmp<EqOp>(o.un<AbsOp>(m), inf), o.cst(ce, 0.0), m);
    Value s =
        o.reduce<ReduceSumOp>(o.un<ExpOp>(o.sub(x, m)), op.getDims(), true);
    Value r = o.add(o.un<LogOp>(s), m);
    r = o.reshape(o.cast(r, elem), op.getType().getShape());
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// var, std, var_mean, std_mean: two passes (mean, then squared deviations).
template <typename OpTy, bool isStd, bool withMean>
struct DecomposeVariance : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto resTy = cast<RankedTensorType>(op->getResult(0).getType());
    Type elem = resTy.getElementType();
    Type ce = computeElem(elem);
    Value x = o.cast(op.getInput(), ce);
    SmallVector<int64_t> dims(op.getDims());
    Value mean = o.reduce<ReduceMeanOp>(x, dims, true);
    Value d = o.sub(x, mean);
    Value ss = o.reduce<ReduceSumOp>(o.mul(d, d), dims, true);
    double n = o.count(x, dims);
    double divisor = std::max(n - op.getCorrection().convertToDouble(), 0.0);
    Value r = o.div(ss, o.cst(ce, divisor));
    if (isStd)
      r = o.un<SqrtOp>(r);
    SmallVector<Value> results{o.cast(r, elem)};
    if (withMean)
      results.push_back(o.cast(mean, elem));
    return replaceReshaped(rewriter, o, op, results);
  }
};

struct DecomposeVectorNorm : public OpRewritePattern<VectorNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(VectorNormOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Type elem = op.getType().getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "vector_norm needs a float type");
    Type ce = computeElem(elem);
    Value x = o.cast(op.getInput(), ce);
    SmallVector<int64_t> dims(op.getDims());
    bool keep = op.getKeepdim();
    double p = op.getOrd().convertToDouble();
    Value a = o.un<AbsOp>(x), r;
    if (std::isinf(p) && p > 0)
      r = o.reduce<ReduceMaxOp>(a, dims, keep);
    else if (std::isinf(p))
      r = o.reduce<ReduceMinOp>(a, dims, keep);
    else if (p == 0.0)
      r = o.reduce<ReduceSumOp>(o.cast(o.cmp<NeOp>(x, o.cst(ce, 0.0)), ce),
                                dims, keep);
    else if (p == 1.0)
      r = o.reduce<ReduceSumOp>(a, dims, keep);
    else if (p == 2.0)
      r = o.un<SqrtOp>(o.reduce<ReduceSumOp>(o.mul(x, x), dims, keep));
    else
      r = o.bin<PowOp>(
          o.reduce<ReduceSumOp>(o.bin<PowOp>(a, o.cst(ce, p)), dims, keep),
          o.cst(ce, 1.0 / p));
    rewriter.replaceOp(op, o.reshape(o.cast(r, elem), op.getType().getShape()));
    return success();
  }
};

/// max / min of all elements: the reduction (checked nonempty by the verifier).
template <typename OpTy, typename ReduceTy>
struct DecomposeFullExtreme : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    rewriter.replaceOp(
        op, o.reshape(o.reduce<ReduceTy>(x, o.allDims(x), op.getKeepdim()),
                      op.getType().getShape()));
    return success();
  }
};

struct DecomposeAminmax : public OpRewritePattern<AminmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AminmaxOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value mn =
        o.reduce<ReduceMinOp>(op.getInput(), op.getDims(), op.getKeepdim());
    Value mx =
        o.reduce<ReduceMaxOp>(op.getInput(), op.getDims(), op.getKeepdim());
    return replaceReshaped(rewriter, o, op, {mn, mx});
  }
};

/// The k-th (1-based) smallest along `dim` and its index, keeping `dim` as
/// size 1: the first k of a stable sort, then the last of them.
std::pair<Value, Value> kthAlong(Ops &o, Value x, int64_t k, int64_t dim) {
  auto ty = typeOf(x);
  SmallVector<int64_t> shape(ty.getShape());
  shape[dim] = k;
  auto sort =
      SortOp::create(o.b, o.loc, ty.clone(shape),
                     ty.clone(shape).clone(o.b.getI64Type()), x, dim, false);
  shape[dim] = 1;
  auto pick = [&](Value v) -> Value {
    auto vt = typeOf(v);
    return SliceOp::create(o.b, o.loc, vt.clone(shape), v, dim, k - 1, 1);
  };
  return {pick(sort.getValues()), pick(sort.getIndices())};
}

struct DecomposeKthvalue : public OpRewritePattern<KthvalueOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KthvalueOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    if (typeOf(x).getRank() == 0) {
      rewriter.replaceOp(op, {x, o.cst(rewriter.getI64Type(), 0.0)});
      return success();
    }
    auto [v, i] = kthAlong(o, x, op.getK(), op.getDim());
    return replaceReshaped(rewriter, o, op, {v, i});
  }
};

/// median / median_dim and nanmedian / nanmedian_dim: the lower median along
/// `dim` (of the flattened input without one); NaN for an empty input, as
/// torch.median. median: NaN (and the first NaN's index) where the slice has
/// a NaN. nanmedian: the sort puts NaN last, so the lower median of the c
/// non-NaN values of a slice is its sorted entry (c - 1) / 2 (entry 0, a
/// NaN, when c = 0), gathered per slice. Integers have no NaN: both are the
/// k-th value.
template <typename OpTy, bool ignoreNaN>
struct DecomposeMedian : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    auto [x, dim] = statInput(o, op.getInput(), op.getDim());
    auto ty = typeOf(x);
    Type elem = ty.getElementType();
    int64_t n = ty.getShape()[dim];
    if (n == 0) {
      if (op->getNumResults() != 1 || !isa<FloatType>(elem))
        return rewriter.notifyMatchFailure(op, "median of an empty slice");
      rewriter.replaceOp(op, o.cst(elem, std::nan("")));
      return success();
    }
    Value v, i;
    if (!isa<FloatType>(elem)) {
      std::tie(v, i) = kthAlong(o, x, (n - 1) / 2 + 1, dim);
    } else if (ignoreNaN) {
      Type i64 = rewriter.getI64Type();
      auto sort =
          SortOp::create(rewriter, o.loc, ty, ty.clone(i64), x, dim, false);
      Value count =
          o.reduce<ReduceSumOp>(o.cast(o.notOf(o.isNaN(x)), i64), {dim}, true);
      Value pos = o.bin<FloorDivideOp>(
          o.max(o.sub(count, o.cst(i64, 1)), o.cst(i64, 0)), o.cst(i64, 2));
      auto pick = [&](Value from) -> Value {
        return GatherOp::create(
            rewriter, o.loc, typeOf(pos).clone(typeOf(from).getElementType()),
            from, pos, rewriter.getI64IntegerAttr(dim));
      };
      v = pick(sort.getValues());
      i = pick(sort.getIndices());
    } else {
      std::tie(v, i) = kthAlong(o, x, (n - 1) / 2 + 1, dim);
      Value nan = o.isNaN(x);
      Value has = o.reduce<ReduceAnyOp>(nan, {dim}, true);
      auto idxTy = typeOf(has).clone(rewriter.getI64Type());
      Value first = ArgmaxOp::create(rewriter, o.loc, idxTy, nan,
                                     rewriter.getI64IntegerAttr(dim),
                                     rewriter.getBoolAttr(true));
      v = o.where(has, o.cst(elem, std::nan("")), v);
      i = o.where(has, first, i);
    }
    return replaceReshaped(rewriter, o, op, {v, i});
  }
};

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// The elementwise losses: a function of (input, target) in the compute
/// type, then the reduction.
template <typename OpTy>
struct DecomposePointwiseLoss : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Type elem = op.getType().getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "losses need a float type");
    Type ce = computeElem(elem);
    Value x = o.cast(op.getInput(), ce), t = o.cast(op.getTarget(), ce);
    auto c = [&](double v) { return o.cst(ce, v); };
    Value l;
    if constexpr (std::is_same_v<OpTy, MseLossOp>) {
      Value d = o.sub(x, t);
      l = o.mul(d, d);
    } else if constexpr (std::is_same_v<OpTy, SmoothL1LossOp> ||
                         std::is_same_v<OpTy, HuberLossOp>) {
      Value d = o.sub(x, t);
      Value ad = o.un<AbsOp>(d);
      double beta;
      if constexpr (std::is_same_v<OpTy, SmoothL1LossOp>)
        beta = op.getBeta().convertToDouble();
      else
        beta = op.getDelta().convertToDouble();
      Value sq = o.mul(o.mul(d, d), c(0.5));
      if constexpr (std::is_same_v<OpTy, SmoothL1LossOp>) {
        if (beta == 0.0)
          l = ad;
        else
          l = o.where(o.cmp<LtOp>(ad, c(beta)), o.div(sq, c(beta)),
                      o.sub(ad, c(0.5 * beta)));
      } else {
        l = o.where(o.cmp<LtOp>(ad, c(beta)), sq,
                    o.mul(c(beta), o.sub(ad, c(0.5 * beta))));
      }
    } else if constexpr (std::is_same_v<OpTy, SoftMarginLossOp>) {
      l = o.un<LogOp>(o.add(c(1.0), o.un<ExpOp>(o.un<NegOp>(o.mul(t, x)))));
    } else {
      static_assert(std::is_same_v<OpTy, BinaryCrossEntropyOp>);
      // (t - 1) * max(log(1 - x), -100) - t * max(log(x), -100)
      Value lo = o.bin<MaximumOp>(o.un<LogOp>(o.sub(c(1.0), x)), c(-100.0));
      Value lx = o.bin<MaximumOp>(o.un<LogOp>(x), c(-100.0));
      l = o.sub(o.mul(o.sub(t, c(1.0)), lo), o.mul(t, lx));
    }
    if constexpr (std::is_same_v<OpTy, BinaryCrossEntropyOp>)
      if (Value w = op.getWeight())
        l = o.mul(l, o.cast(w, ce));
    l = reduceLoss(o, l, op.getReduction());
    l = o.cast(l, elem);
    if (typeOf(l).getShape() != op.getType().getShape())
      l = ExpandOp::create(rewriter, o.loc, op.getType(), l);
    rewriter.replaceOp(op, l);
    return success();
  }
};

/// Picks the entry of class `t` along `dim` of `x` (shape of x with `dim`
/// kept as 1), where `onehot` marks it; 0 where no class matches.
Value pickClass(Ops &o, Value onehot, Value x, int64_t dim) {
  Value zero = o.cst(typeOf(x).getElementType(), 0.0);
  return o.reduce<ReduceSumOp>(o.where(onehot, x, zero), {dim}, true);
}

struct DecomposeNllLoss : public OpRewritePattern<NllLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NllLossOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput(), t = op.getTarget();
    auto xTy = typeOf(x);
    Type elem = xTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "nll_loss needs a float type");
    Type ce = computeElem(elem);
    x = o.cast(x, ce);
    int64_t rank = xTy.getRank();
    int64_t cdim = rank == 1 ? 0 : 1;
    // target with a size-1 class dim, so that it broadcasts against x.
    SmallVector<int64_t> tShape(xTy.getShape());
    tShape[cdim] = 1;
    t = o.reshape(o.cast(t, rewriter.getI64Type()), tShape);
    Value valid = o.cmp<NeOp>(
        t, o.cst(rewriter.getI64Type(), (double)op.getIgnoreIndex()));
    Value onehot = o.bin<LogicalAndOp>(
        o.cmp<EqOp>(o.iota(xTy.getShape()[cdim], cdim, rank), t), valid);
    Value picked = pickClass(o, onehot, x, cdim);
    Value w;
    if (Value weight = op.getWeight()) {
      SmallVector<int64_t> wShape(rank, 1);
      wShape[cdim] = xTy.getShape()[cdim];
      w = pickClass(o, onehot, o.reshape(o.cast(weight, ce), wShape), cdim);
    } else {
      w = pickClass(o, onehot, o.cst(ce, 1.0), cdim);
    }
    Value l = o.un<NegOp>(o.mul(picked, w));
    Value total = o.reduce<ReduceSumOp>(w, o.allDims(w), false);
    int64_t red = op.getReduction();
    if (red == 0) {
      l = o.reshape(l, op.getResult().getType().getShape());
    } else {
      l = o.reduce<ReduceSumOp>(l, o.allDims(l), false);
      if (red == 1)
        l = o.div(l, total);
    }
    rewriter.replaceOp(
        op,
        {o.cast(l, elem), o.reshape(o.cast(total, elem),
                                    op.getTotalWeight().getType().getShape())});
    return success();
  }
};

struct DecomposeMultiMarginLoss : public OpRewritePattern<MultiMarginLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MultiMarginLossOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    auto xTy = typeOf(x);
    Type elem = op.getType().getElementType();
    double p = op.getP().convertToDouble();
    if (!isa<FloatType>(elem) || (p != 1.0 && p != 2.0))
      return rewriter.notifyMatchFailure(op, "p must be 1 or 2 (float input)");
    Type ce = computeElem(elem);
    x = o.cast(x, ce);
    int64_t rank = std::max<int64_t>(xTy.getRank(), 1);
    x = o.reshape(x, rank == 1 ? SmallVector<int64_t>{xTy.getNumElements()}
                               : SmallVector<int64_t>(xTy.getShape()));
    int64_t cdim = rank - 1, c = typeOf(x).getShape()[cdim];
    SmallVector<int64_t> tShape(typeOf(x).getShape());
    tShape[cdim] = 1;
    Value t = o.reshape(o.cast(op.getTarget(), rewriter.getI64Type()), tShape);
    Value onehot = o.cmp<EqOp>(o.iota(c, cdim, rank), t);
    Value xt = pickClass(o, onehot, x, cdim);
    Value z = o.add(o.sub(o.cst(ce, op.getMargin().convertToDouble()), xt), x);
    Value zero = o.cst(ce, 0.0);
    Value h = o.where(o.cmp<GtOp>(z, zero), p == 1.0 ? z : o.mul(z, z), zero);
    h = o.where(onehot, zero, h);
    if (Value w = op.getWeight())
      h = o.mul(h, pickClass(o, onehot, o.reshape(o.cast(w, ce), {c}), cdim));
    Value l = o.div(o.reduce<ReduceSumOp>(h, {cdim}, false), o.cst(ce, c));
    l = reduceLoss(o, l, op.getReduction());
    rewriter.replaceOp(op, o.reshape(o.cast(l, elem), op.getType().getShape()));
    return success();
  }
};

struct DecomposeMultilabelMarginLoss
    : public OpRewritePattern<MultilabelMarginLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MultilabelMarginLossOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    auto xTy = typeOf(x);
    Type elem = xTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "needs a float input");
    Type ce = computeElem(elem);
    Type i64 = rewriter.getI64Type();
    int64_t c = xTy.getRank() ? xTy.getShape().back() : 1;
    int64_t n = xTy.getNumElements() / std::max<int64_t>(c, 1);
    x = o.reshape(o.cast(x, ce), {n, c});
    Value t = o.reshape(o.cast(op.getTarget(), i64), {n, c});
    // Targets before the first -1 are valid (k < first negative position).
    Value neg = o.cmp<LtOp>(t, o.cst(i64, 0.0));
    Value anyNeg = o.reduce<ReduceAnyOp>(neg, {1}, true);
    Value firstNeg = ArgmaxOp::create(
        rewriter, o.loc, RankedTensorType::get({n, 1}, i64), neg,
        rewriter.getI64IntegerAttr(1), rewriter.getBoolAttr(true));
    Value end = o.where(anyNeg, firstNeg, o.cst(i64, (double)c));
    Value valid = o.cmp<LtOp>(o.iota(c, 1, 2), end); // (n, c) over k
    // count[n, j] = #{valid k : t[n, k] == j}, over (n, k, j).
    Value match = o.bin<LogicalAndOp>(
        o.cmp<EqOp>(o.reshape(t, {n, c, 1}), o.iota(c, 2, 3)),
        o.reshape(valid, {n, c, 1}));
    Value count = o.reduce<ReduceSumOp>(o.cast(match, ce), {1}, false);
    Value isTarget = o.cast(o.cmp<GtOp>(count, o.cst(ce, 0.0)), ce); // (n, c)
    // sum over (j, d) of count[j] (1 - isTarget[d]) max(0, 1 - x[j] + x[d]).
    Value z = o.add(o.sub(o.cst(ce, 1.0), o.reshape(x, {n, c, 1})),
                    o.reshape(x, {n, 1, c}));
    Value h = o.bin<MaximumOp>(z, o.cst(ce, 0.0));
    h = o.mul(h, o.reshape(count, {n, c, 1}));
    h = o.mul(h, o.reshape(o.sub(o.cst(ce, 1.0), isTarget), {n, 1, c}));
    Value l = o.div(o.reduce<ReduceSumOp>(h, {1, 2}, false), o.cst(ce, c));
    SmallVector<int64_t> perSample(xTy.getShape());
    if (!perSample.empty())
      perSample.pop_back();
    l = o.reshape(l, perSample);
    l = reduceLoss(o, l, op.getReduction());
    rewriter.replaceOp(
        op, {o.reshape(o.cast(l, elem), op.getResult().getType().getShape()),
             o.reshape(o.cast(isTarget, elem),
                       op.getIsTarget().getType().getShape())});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// ---- search-stats-random-special (round 2): nanmedian, mode
//===----------------------------------------------------------------------===//

/// mode: count[i] = #{j : x[j] == x[i]} along dim (a pairwise comparison);
/// the value is the smallest of those with the top count, the index the last
/// position holding it (eager's sort-and-scan on slices of its kernel).
struct DecomposeMode : public OpRewritePattern<ModeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ModeOp op,
                                PatternRewriter &rewriter) const override {
    Ops o{rewriter, op.getLoc()};
    Value x = op.getInput();
    auto ty = typeOf(x);
    Type i64 = rewriter.getI64Type();
    if (ty.getRank() == 0) {
      rewriter.replaceOp(op, {x, o.cst(i64, 0.0)});
      return success();
    }
    int64_t dim = op.getDim() ? (int64_t)*op.getDim() : ty.getRank() - 1;
    int64_t n = ty.getShape()[dim];
    Type elem = ty.getElementType();
    SmallVector<int64_t> a(ty.getShape()), b(ty.getShape());
    a.insert(a.begin() + dim + 1, 1);
    b.insert(b.begin() + dim, 1);
    Value same = o.cmp<EqOp>(o.reshape(x, a), o.reshape(x, b));
    Value count = o.reduce<ReduceSumOp>(o.cast(same, i64), {dim + 1}, false);
    Value top = o.cmp<EqOp>(count, o.reduce<ReduceMaxOp>(count, {dim}, true));
    // the largest value of the type stands in for the others
    Value largest;
    auto scalarTy = RankedTensorType::get({}, elem);
    if (isa<FloatType>(elem)) {
      largest = o.cst(elem, std::numeric_limits<double>::infinity());
    } else {
      unsigned w = elem.getIntOrFloatBitWidth();
      APInt m = elem.isUnsignedInteger() || w == 1
                    ? APInt::getMaxValue(w)
                    : APInt::getSignedMaxValue(w);
      largest = ConstantOp::create(rewriter, o.loc, scalarTy,
                                   DenseElementsAttr::get(scalarTy, m));
    }
    Value v = o.reduce<ReduceMinOp>(o.where(top, x, largest), {dim}, true);
    Value idx = o.reduce<ReduceMaxOp>(o.where(o.cmp<EqOp>(x, v),
                                              o.iota(n, dim, ty.getRank()),
                                              o.cst(i64, -1)),
                                      {dim}, true);
    return replaceReshaped(rewriter, o, op, {v, idx});
  }
};
// ---- end search-stats-random-special (round 2)
} // namespace

void mlir::poptorch::populateReductionDecomposePatterns(
    RewritePatternSet &patterns) {
  patterns.add<
      DecomposeNansum, DecomposeCountNonzero, DecomposeLogsumexp,
      DecomposeVariance<VarOp, false, false>,
      DecomposeVariance<StdOp, true, false>,
      DecomposeVariance<VarMeanOp, false, true>,
      DecomposeVariance<StdMeanOp, true, true>, DecomposeVectorNorm,
      DecomposeAminmax, DecomposeKthvalue,
      DecomposeFullExtreme<MaxOp, ReduceMaxOp>,
      DecomposeFullExtreme<MinOp, ReduceMinOp>,
      DecomposeMedian<MedianOp, false>, DecomposeMedian<MedianDimOp, false>,
      DecomposePointwiseLoss<MseLossOp>, DecomposePointwiseLoss<SmoothL1LossOp>,
      DecomposePointwiseLoss<HuberLossOp>,
      DecomposePointwiseLoss<SoftMarginLossOp>,
      DecomposePointwiseLoss<BinaryCrossEntropyOp>, DecomposeNllLoss,
      DecomposeMultiMarginLoss, DecomposeMultilabelMarginLoss>(
      patterns.getContext());
  // ---- search-stats-random-special (round 2)
  patterns.add<DecomposeMedian<NanmedianOp, true>,
               DecomposeMedian<NanmedianDimOp, true>, DecomposeMode>(
      patterns.getContext());
}
