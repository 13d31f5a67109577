//===- Decompose.cpp - poptorch -> simpler poptorch ---------------------===//
//
// poptorch-decompose: rewrites composite ops (linear, addmm, clamp, layer_norm,
// batch_norm, softmax, log_softmax, sdpa, reduce_mean, transpose) into
// matmul, elementwise, reduction and data-movement poptorch ops, so that the
// lowering to linalg only handles the core and the elementwise pieces fuse.
// Normalisations and softmax on f16/bf16 compute in f32, as PyTorch's CPU
// kernels do.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "poptorch/Dialect/Poptorch/IR/Broadcast.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHDECOMPOSE
#include "poptorch/Transforms/Passes.h.inc"

void populatePoptorchDecomposePatterns(RewritePatternSet &patterns);
void populateReductionDecomposePatterns(RewritePatternSet &patterns);
void populateNnLinalgDecomposePatterns(RewritePatternSet &patterns);
} // namespace mlir::poptorch

using namespace mlir;
using namespace mlir::poptorch;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A 0-d poptorch.constant; elementwise ops broadcast it like a scalar.
Value scalar(PatternRewriter &b, Location loc, Type elem, double v) {
  auto ty = RankedTensorType::get({}, elem);
  Attribute attr;
  if (isa<FloatType>(elem))
    attr = b.getFloatAttr(elem, v);
  else
    attr = b.getIntegerAttr(elem, static_cast<int64_t>(v));
  return ConstantOp::create(b, loc, ty, DenseElementsAttr::get(ty, attr));
}

/// f16/bf16 normalisations compute in f32.
Type computeType(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  return t;
}

Value castTo(PatternRewriter &b, Location loc, Value v, Type elem) {
  auto ty = tensorType(v);
  if (ty.getElementType() == elem)
    return v;
  return CastOp::create(b, loc, ty.clone(elem), v);
}

template <typename OpTy>
Value binary(PatternRewriter &b, Location loc, Value x, Value y) {
  auto xt = tensorType(x);
  auto ty = xt.clone(broadcastShapes(xt.getShape(), tensorType(y).getShape()));
  if constexpr (std::is_same_v<OpTy, AddOp> || std::is_same_v<OpTy, SubOp>)
    return OpTy::create(b, loc, ty, x, y, llvm::APFloat(1.0));
  else
    return OpTy::create(b, loc, ty, x, y);
}

template <typename OpTy>
Value unary(PatternRewriter &b, Location loc, Value x) {
  return OpTy::create(b, loc, x.getType(), x);
}

/// A reduction over `dims` that keeps them as size-1 dims.
template <typename OpTy>
Value reduceKeep(PatternRewriter &b, Location loc, Value x,
                 ArrayRef<int64_t> dims) {
  auto ty = tensorType(x);
  SmallVector<int64_t> shape(ty.getShape());
  for (int64_t d : dims)
    shape[d] = 1;
  return OpTy::create(b, loc, ty.clone(shape), x, dims, /*keepdim=*/true);
}

struct DecomposeTranspose : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = tensorType(op.getInput()).getRank();
    if (rank == 0) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    auto perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[op.getDim0()], perm[op.getDim1()]);
    rewriter.replaceOpWithNewOp<PermuteOp>(op, op.getType(), op.getInput(),
                                           perm);
    return success();
  }
};

struct DecomposeLinear : public OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput(), weight = op.getWeight();
    auto inTy = tensorType(input), wTy = tensorType(weight);
    SmallVector<int64_t> mmShape(inTy.getShape().drop_back());
    if (wTy.getRank() == 2) {
      // weight^T as a permute; the lowering sees matmul(x, permute(w)).
      auto wtTy = wTy.clone({wTy.getShape()[1], wTy.getShape()[0]});
      weight = PermuteOp::create(rewriter, loc, wtTy, weight,
                                 ArrayRef<int64_t>{1, 0});
      mmShape.push_back(wTy.getShape()[0]);
    }
    auto mmTy = op.getType().clone(mmShape);
    Value mm = MatmulOp::create(rewriter, loc, mmTy, input, weight);
    Value result = mm;
    if (Value bias = op.getBias())
      result = AddOp::create(rewriter, loc, op.getType(), mm, bias,
                             llvm::APFloat(1.0));
    if (result.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DecomposeAddmm : public OpRewritePattern<AddmmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddmmOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Type elem = resTy.getElementType();
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    Value mm = MatmulOp::create(rewriter, loc, resTy, op.getLhs(), op.getRhs());
    if (alpha != 1.0)
      mm = MulOp::create(rewriter, loc, resTy, mm,
                         scalar(rewriter, loc, elem, alpha));
    // beta == 0 ignores the input entirely (NaN/inf there do not propagate).
    if (beta == 0.0) {
      rewriter.replaceOp(op, mm);
      return success();
    }
    Value input = op.getInput();
    if (beta != 1.0)
      input = binary<MulOp>(rewriter, loc, input,
                            scalar(rewriter, loc, elem, beta));
    rewriter.replaceOpWithNewOp<AddOp>(op, resTy, input, mm,
                                       llvm::APFloat(1.0));
    return success();
  }
};

/// clamp(x, lo, hi) = minimum(maximum(x, lo), hi): NaN-propagating like
/// torch.clamp, and hi wins where lo > hi.
struct DecomposeClamp : public OpRewritePattern<ClampOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClampOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value r = op.getInput();
    if (Value lo = op.getMin())
      r = binary<MaximumOp>(rewriter, loc, r, lo);
    if (Value hi = op.getMax())
      r = binary<MinimumOp>(rewriter, loc, r, hi);
    if (r.getType() != op.getType())
      r = ExpandOp::create(rewriter, loc, op.getType(), r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct DecomposeLayerNorm : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inTy = tensorType(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "layer_norm needs a float type");
    Type ce = computeType(elem);
    int64_t rank = inTy.getRank();
    int64_t k = op.getNormalizedShape().size();
    auto dims = llvm::to_vector(llvm::seq<int64_t>(rank - k, rank));

    Value x = castTo(rewriter, loc, op.getInput(), ce);
    Value mean = reduceKeep<ReduceMeanOp>(rewriter, loc, x, dims);
    Value d = binary<SubOp>(rewriter, loc, x, mean);
    Value var = reduceKeep<ReduceMeanOp>(
        rewriter, loc, binary<MulOp>(rewriter, loc, d, d), dims);
    Value eps = scalar(rewriter, loc, ce, op.getEps().convertToDouble());
    Value rstd =
        unary<RsqrtOp>(rewriter, loc, binary<AddOp>(rewriter, loc, var, eps));
    Value y = binary<MulOp>(rewriter, loc, d, rstd);
    if (Value w = op.getWeight())
      y = binary<MulOp>(rewriter, loc, y, castTo(rewriter, loc, w, ce));
    if (Value b = op.getBias())
      y = binary<AddOp>(rewriter, loc, y, castTo(rewriter, loc, b, ce));
    y = castTo(rewriter, loc, y, op.getType().getElementType());
    if (y.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct DecomposeBatchNorm : public OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    bool batchStats = op.getTraining();
    if (!batchStats && (!op.getMean() || !op.getVar()))
      return rewriter.notifyMatchFailure(op, "needs inference statistics");
    Location loc = op.getLoc();
    auto inTy = tensorType(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "batch_norm needs a float type");
    Type ce = computeType(elem);
    // y = x * scale + shift with scale = weight / sqrt(var + eps) and
    // shift = bias - mean * scale, per channel (as PyTorch's CPU kernel).
    // Training mode normalises with the batch's statistics: the mean and
    // the biased variance over every dim but the channels.
    Value mean, var;
    if (batchStats) {
      SmallVector<int64_t> dims = {0};
      for (int64_t d = 2; d < inTy.getRank(); ++d)
        dims.push_back(d);
      auto statTy = RankedTensorType::get({inTy.getShape()[1]}, ce);
      Value x = castTo(rewriter, loc, op.getInput(), ce);
      Value m = reduceKeep<ReduceMeanOp>(rewriter, loc, x, dims);
      Value d = binary<SubOp>(rewriter, loc, x, m);
      Value v = reduceKeep<ReduceMeanOp>(
          rewriter, loc, binary<MulOp>(rewriter, loc, d, d), dims);
      mean = ReshapeOp::create(rewriter, loc, statTy, m);
      var = ReshapeOp::create(rewriter, loc, statTy, v);
    } else {
      var = castTo(rewriter, loc, op.getVar(), ce);
      mean = castTo(rewriter, loc, op.getMean(), ce);
    }
    Value eps = scalar(rewriter, loc, ce, op.getEps().convertToDouble());
    Value scale =
        unary<RsqrtOp>(rewriter, loc, binary<AddOp>(rewriter, loc, var, eps));
    if (Value w = op.getWeight())
      scale = binary<MulOp>(rewriter, loc, scale, castTo(rewriter, loc, w, ce));
    Value shift =
        unary<NegOp>(rewriter, loc, binary<MulOp>(rewriter, loc, mean, scale));
    if (Value b = op.getBias())
      shift = binary<AddOp>(rewriter, loc, shift, castTo(rewriter, loc, b, ce));

    // (C) -> (C, 1, ..., 1) so that it broadcasts against (N, C, ...).
    int64_t c = inTy.getShape()[1];
    SmallVector<int64_t> chanShape(inTy.getRank() - 1, 1);
    chanShape[0] = c;
    auto chanTy = RankedTensorType::get(chanShape, ce);
    auto toChan = [&](Value v) -> Value {
      if (tensorType(v).getShape() == ArrayRef<int64_t>(chanShape))
        return v;
      return ReshapeOp::create(rewriter, loc, chanTy, v);
    };
    Value x = castTo(rewriter, loc, op.getInput(), ce);
    Value y = binary<AddOp>(rewriter, loc,
                            binary<MulOp>(rewriter, loc, x, toChan(scale)),
                            toChan(shift));
    y = castTo(rewriter, loc, y, op.getType().getElementType());
    if (y.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// Shared by softmax and log_softmax: x - max, exp, sum (in compute type).
template <typename OpTy, bool isLog>
struct DecomposeSoftmax : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inTy = tensorType(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "softmax needs a float type");
    Type ce = computeType(elem);
    SmallVector<int64_t> dims;
    if (inTy.getRank() > 0)
      dims.push_back(op.getDim());
    Value x = castTo(rewriter, loc, op.getInput(), ce);
    Value max = reduceKeep<ReduceMaxOp>(rewriter, loc, x, dims);
    Value shifted = binary<SubOp>(rewriter, loc, x, max);
    Value e = unary<ExpOp>(rewriter, loc, shifted);
    Value sum = reduceKeep<ReduceSumOp>(rewriter, loc, e, dims);
    Value y;
    if constexpr (isLog)
      y = binary<SubOp>(rewriter, loc, shifted,
                        unary<LogOp>(rewriter, loc, sum));
    else
      y = binary<DivOp>(rewriter, loc, e, sum);
    rewriter.replaceOp(op, castTo(rewriter, loc, y, elem));
    return success();
  }
};

struct DecomposeSdpa : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto qTy = tensorType(op.getQuery()), kTy = tensorType(op.getKey());
    Type elem = qTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "sdpa needs a float type");
    if (op.getDropoutP().convertToDouble() != 0.0)
      return rewriter.notifyMatchFailure(op, "dropout in attention");
    int64_t rank = qTy.getRank();
    int64_t l = qTy.getShape()[rank - 2], e = qTy.getShape()[rank - 1];
    int64_t s = kTy.getShape()[rank - 2];

    auto perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    SmallVector<int64_t> ktShape(kTy.getShape());
    std::swap(ktShape[rank - 1], ktShape[rank - 2]);
    Value kt =
        PermuteOp::create(rewriter, loc, kTy.clone(ktShape), op.getKey(), perm);
    SmallVector<int64_t> scoreShape = broadcastShapes(
        qTy.getShape().drop_back(2), kTy.getShape().drop_back(2));
    scoreShape.append({l, s});
    Value scores = MatmulOp::create(rewriter, loc, qTy.clone(scoreShape),
                                    op.getQuery(), kt);
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt((double)e);
    scores = binary<MulOp>(rewriter, loc, scores,
                           scalar(rewriter, loc, elem, scale));
    if (Value mask = op.getMask()) {
      Type maskElem = tensorType(mask).getElementType();
      Value additive;
      if (maskElem.isInteger(1))
        // keep where true: log(1) = 0, log(0) = -inf.
        additive =
            unary<LogOp>(rewriter, loc, castTo(rewriter, loc, mask, elem));
      else
        additive = castTo(rewriter, loc, mask, elem);
      scores = binary<AddOp>(rewriter, loc, scores, additive);
    }
    if (op.getIsCausal()) {
      // Lower-triangular (top-left aligned) mask as PyTorch builds it.
      auto maskTy = RankedTensorType::get({l, s}, elem);
      SmallVector<Attribute> values;
      double ninf = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < l; ++i)
        for (int64_t j = 0; j < s; ++j)
          values.push_back(rewriter.getFloatAttr(elem, j <= i ? 0.0 : ninf));
      Value causal = ConstantOp::create(rewriter, loc, maskTy,
                                        DenseElementsAttr::get(maskTy, values));
      scores = binary<AddOp>(rewriter, loc, scores, causal);
    }
    auto scoresTy = tensorType(scores);
    // As PyTorch's math kernel: a fully masked row attends to nothing (0).
    Value attn = SafeSoftmaxOp::create(rewriter, loc, scoresTy, scores,
                                       scoresTy.getRank() - 1);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), attn,
                                          op.getValue());
    return success();
  }
};

struct DecomposeReduceMean : public OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inTy = tensorType(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "mean needs a float type");
    Type ce = computeType(elem);
    double count = 1;
    for (int64_t d : op.getDims())
      if (inTy.getRank() > 0)
        count *= inTy.getShape()[d];
    Value x = castTo(rewriter, loc, op.getInput(), ce);
    auto sumTy = op.getType().clone(ce);
    Value sum = ReduceSumOp::create(rewriter, loc, sumTy, x, op.getDims(),
                                    op.getKeepdim());
    Value mean =
        binary<DivOp>(rewriter, loc, sum, scalar(rewriter, loc, ce, count));
    rewriter.replaceOp(op, castTo(rewriter, loc, mean, elem));
    return success();
  }
};

struct PoptorchDecomposePass
    : public poptorch::impl::PoptorchDecomposeBase<PoptorchDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePoptorchDecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::poptorch::populatePoptorchDecomposePatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeTranspose, DecomposeLinear, DecomposeAddmm,
               DecomposeClamp, DecomposeLayerNorm, DecomposeBatchNorm,
               DecomposeSoftmax<SoftmaxOp, false>,
               DecomposeSoftmax<LogSoftmaxOp, true>, DecomposeSdpa,
               DecomposeReduceMean>(patterns.getContext());
  populateReductionDecomposePatterns(patterns);
  populateNnLinalgDecomposePatterns(patterns);
}
