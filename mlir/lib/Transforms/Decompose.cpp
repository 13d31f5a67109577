//===- Decompose.cpp - poptorch -> simpler poptorch ---------------------===//
//
// poptorch-decompose: rewrites composite ops (linear, addmm, clamp, layer_norm,
// batch_norm, softmax, log_softmax, _safe_softmax, sdpa, reduce_mean,
// transpose, pow with a constant exponent eager special-cases) into
// matmul, elementwise, reduction and data-movement poptorch ops, so that the
// lowering to linalg only handles the core and the elementwise pieces fuse.
// Normalisations and softmax on f16/bf16 compute in f32, as PyTorch's CPU
// kernels do.
//
//===----------------------------------------------------------------------===//
#include "DecomposeBuilder.h"
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>
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
using namespace mlir::poptorch::decompose;

namespace {

struct DecomposeTranspose : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = typeOf(op.getInput()).getRank();
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
    auto inTy = typeOf(input), wTy = typeOf(weight);
    SmallVector<int64_t> mmShape(inTy.getShape().drop_back());
    if (wTy.getRank() == 2) {
      // weight^T as a permute; the lowering sees matmul(x, permute(w)).
      auto wtTy = wTy.clone({wTy.getShape()[1], wTy.getShape()[0]});
      weight = PermuteOp::create(rewriter, loc, wtTy, weight,
                                 ArrayRef<int64_t>{1, 0});
      mmShape.push_back(wTy.getShape()[0]);
    }
    // f16/bf16 products stay in their f32 accumulator for the bias and are
    // rounded once, as eager's linear does (a rounded product plus bias can
    // be a whole ulp of the product off near cancellation).
    Ops o{rewriter, loc};
    Type elem = op.getType().getElementType();
    Type acc = op.getBias() ? computeElem(elem) : elem;
    Value result = MatmulOp::create(
        rewriter, loc, RankedTensorType::get(mmShape, acc), input, weight);
    if (Value bias = op.getBias())
      result = o.cast(o.add(result, o.cast(bias, acc)), elem);
    if (result.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A batched matmul whose rhs is one matrix broadcast over the batch
/// (torch.matmul of a non-contiguous (B, M, K) input, a transposed
/// activation, with a (K, N) weight: it expands the weight to (B, K, N) and
/// calls bmm) is one (B*M, K) x (K, N) matmul. Kept batched, the weight was
/// copied B times per call and every batch re-packed its copy
/// (nn.MultiheadAttention's in-projection at sequence 128: a third of
/// nn.TransformerEncoder's time at batch 8).
struct MatmulOfBroadcastRhs : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getRhs().getDefiningOp<ExpandOp>();
    if (!expand)
      return failure();
    RankedTensorType lhsTy = typeOf(op.getLhs()), rhsTy = typeOf(op.getRhs()),
                     srcTy = typeOf(expand.getInput()), resTy = op.getType();
    int64_t rank = lhsTy.getRank();
    if (rank < 3 || rhsTy.getRank() != rank || resTy.getRank() != rank ||
        !lhsTy.hasStaticShape() || !srcTy.hasStaticShape() ||
        !resTy.hasStaticShape())
      return failure();
    // The expanded matrix: every dim of the source before its last two is 1.
    ArrayRef<int64_t> src = srcTy.getShape();
    if (src.size() < 2 ||
        llvm::any_of(src.drop_back(2), [](int64_t d) { return d != 1; }))
      return failure();
    // The lhs is not broadcast itself: its batch dims are the result's.
    ArrayRef<int64_t> lhs = lhsTy.getShape(), res = resTy.getShape();
    if (lhs.drop_back(2) != res.drop_back(2))
      return failure();
    int64_t k = lhs[rank - 1], n = src.back();
    if (k == 0 || llvm::is_contained(lhs, 0))
      return failure();
    int64_t rows = lhsTy.getNumElements() / k;
    Location loc = op.getLoc();
    Value a =
        ReshapeOp::create(rewriter, loc, lhsTy.clone({rows, k}), op.getLhs());
    Value b = expand.getInput();
    if (src.size() != 2)
      b = ReshapeOp::create(rewriter, loc, srcTy.clone({k, n}), b);
    Value mm = MatmulOp::create(rewriter, loc, resTy.clone({rows, n}), a, b);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, resTy, mm);
    return success();
  }
};

struct DecomposeAddmm : public OpRewritePattern<AddmmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddmmOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Ops o{rewriter, loc};
    RankedTensorType resTy = op.getType();
    Type elem = resTy.getElementType();
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    // f16/bf16 products stay in their f32 accumulator until the one
    // rounding at the end, as in eager's addmm.
    Type acc = computeElem(elem);
    Value mm = MatmulOp::create(rewriter, loc, resTy.clone(acc), op.getLhs(),
                                op.getRhs());
    if (alpha != 1.0)
      mm = o.mul(mm, o.cst(acc, alpha));
    // beta == 0 ignores the input entirely (NaN/inf there do not propagate).
    if (beta == 0.0) {
      rewriter.replaceOp(op, o.cast(mm, elem));
      return success();
    }
    Value input = o.cast(op.getInput(), acc);
    if (beta != 1.0)
      input = o.mul(input, o.cst(acc, beta));
    rewriter.replaceOp(op, o.cast(o.add(input, mm), elem));
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
    Ops o{rewriter, loc};
    Value r = op.getInput();
    if (Value lo = op.getMin())
      r = o.max(r, lo);
    if (Value hi = op.getMax())
      r = o.min(r, hi);
    if (r.getType() != op.getType())
      r = ExpandOp::create(rewriter, loc, op.getType(), r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// x ** e for the constant exponents eager's CPU pow kernel computes without
/// pow: 0.5 and -0.5 are sqrt and rsqrt (they differ from pow at -inf and -0:
/// sqrt(-inf) is NaN where pow(-inf, 0.5) is +inf), 2 and 3 multiplications,
/// -1 and -2 reciprocals, computed in the compute type and rounded once (a
/// float16 x ** 3 as in eager). x ** 3 in GPT-2's GELU was a libm call per
/// element.
struct PowOfConstant : public OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PowOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getLhs();
    auto constant = op.getRhs().getDefiningOp<ConstantOp>();
    auto values = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                           : DenseElementsAttr();
    if (!values || !values.isSplat() || x.getType() != op.getType() ||
        !isa<FloatType>(values.getElementType()) ||
        !isa<FloatType>(getElementTypeOrSelf(x.getType())))
      return failure();
    double e = values.getSplatValue<APFloat>().convertToDouble();
    Ops o{rewriter, op.getLoc()};
    if (e == 0.5 || e == -0.5) {
      rewriter.replaceOp(op, e > 0 ? o.un<SqrtOp>(x) : o.un<RsqrtOp>(x));
      return success();
    }
    if (e != 2.0 && e != 3.0 && e != -1.0 && e != -2.0)
      return failure();
    Type elem = getElementTypeOrSelf(x.getType()), ce = computeElem(elem);
    Value c = o.cast(x, ce);
    Value r = std::abs(e) == 1.0 ? c : o.mul(c, c);
    if (e == 3.0)
      r = o.mul(r, c);
    if (e < 0)
      r = o.div(o.cst(ce, 1.0), r);
    rewriter.replaceOp(op, o.cast(r, elem));
    return success();
  }
};

struct DecomposeLayerNorm : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Ops o{rewriter, loc};
    auto inTy = typeOf(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "layer_norm needs a float type");
    Type ce = computeElem(elem);
    int64_t rank = inTy.getRank();
    int64_t k = op.getNormalizedShape().size();
    auto dims = llvm::to_vector(llvm::seq<int64_t>(rank - k, rank));

    Value x = o.cast(op.getInput(), ce);
    Value mean = o.reduce<ReduceMeanOp>(x, dims, true);
    Value d = o.sub(x, mean);
    Value var = o.reduce<ReduceMeanOp>(o.mul(d, d), dims, true);
    Value eps = o.cst(ce, op.getEps().convertToDouble());
    Value rstd = o.un<RsqrtOp>(o.add(var, eps));
    Value y = o.mul(d, rstd);
    if (Value w = op.getWeight())
      y = o.mul(y, o.cast(w, ce));
    if (Value b = op.getBias())
      y = o.add(y, o.cast(b, ce));
    y = o.cast(y, op.getType().getElementType());
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
    Ops o{rewriter, loc};
    auto inTy = typeOf(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "batch_norm needs a float type");
    Type ce = computeElem(elem);
    // y = x * scale + shift with scale = weight / sqrt(var + eps) and
    // shift = bias - mean * scale, per channel (as PyTorch's CPU kernel).
    // Training mode normalises with the batch's statistics: the mean and
    // the biased variance over every dim but the channels.
    Value mean, var;
    if (batchStats) {
      SmallVector<int64_t> dims = {0};
      for (int64_t d = 2; d < inTy.getRank(); ++d)
        dims.push_back(d);
      Value x = o.cast(op.getInput(), ce);
      Value m = o.reduce<ReduceMeanOp>(x, dims, true);
      Value d = o.sub(x, m);
      Value v = o.reduce<ReduceMeanOp>(o.mul(d, d), dims, true);
      mean = o.reshape(m, {inTy.getShape()[1]});
      var = o.reshape(v, {inTy.getShape()[1]});
    } else {
      var = o.cast(op.getVar(), ce);
      mean = o.cast(op.getMean(), ce);
    }
    Value eps = o.cst(ce, op.getEps().convertToDouble());
    Value scale = o.un<RsqrtOp>(o.add(var, eps));
    if (Value w = op.getWeight())
      scale = o.mul(scale, o.cast(w, ce));
    Value shift = o.un<NegOp>(o.mul(mean, scale));
    if (Value b = op.getBias())
      shift = o.add(shift, o.cast(b, ce));

    // (C) -> (C, 1, ..., 1) so that it broadcasts against (N, C, ...).
    SmallVector<int64_t> chanShape(inTy.getRank() - 1, 1);
    chanShape[0] = inTy.getShape()[1];
    auto toChan = [&](Value v) { return o.reshape(v, chanShape); };
    Value x = o.cast(op.getInput(), ce);
    Value y = o.add(o.mul(x, toChan(scale)), toChan(shift));
    y = o.cast(y, op.getType().getElementType());
    if (y.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    rewriter.replaceOp(op, y);
    return success();
  }
};

enum class SoftmaxKind { Plain, Log, Safe };

/// Shared by softmax, log_softmax and _safe_softmax: x - max, exp, sum (in
/// compute type).
template <typename OpTy, SoftmaxKind kind>
struct DecomposeSoftmax : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Ops o{rewriter, loc};
    auto inTy = typeOf(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "softmax needs a float type");
    Type ce = computeElem(elem);
    SmallVector<int64_t> dims;
    if (inTy.getRank() > 0)
      dims.push_back(op.getDim());
    Value x = o.cast(op.getInput(), ce);
    Value max = o.reduce<ReduceMaxOp>(x, dims, true);
    Value shifted = o.sub(x, max);
    Value e = o.un<ExpOp>(shifted);
    Value sum = o.reduce<ReduceSumOp>(e, dims, true);
    Value y;
    if constexpr (kind == SoftmaxKind::Log)
      y = o.sub(shifted, o.un<LogOp>(sum));
    else
      y = o.div(e, sum);
    if constexpr (kind == SoftmaxKind::Safe)
      // A row of -inf only (a fully masked attention row) gives 0, not NaN:
      // its max is -inf.
      y = o.where(
          o.cmp<EqOp>(max, o.cst(ce, -std::numeric_limits<double>::infinity())),
          o.cst(ce, 0.0), y);
    rewriter.replaceOp(op, o.cast(y, elem));
    return success();
  }
};

/// Attention computes one head at a time (the heads shared among the
/// program's threads) when a head's scores (f32) take more than
/// kHeadAttentionBytes: the scores then stay in the core's cache through
/// the softmax and the second matmul, and the ops of a head need no
/// synchronisation between threads. Smaller attention (a decoding step)
/// runs as batched ops over every head. Above kAttentionBlockBytes a head
/// is computed in blocks of query rows of at most that size.
constexpr int64_t kHeadAttentionBytes = 16 << 10;
constexpr int64_t kAttentionBlockBytes = 1 << 20;

/// The loop has at least this many iterations where the rows allow, so
/// that every thread gets some (one head is split into blocks of rows).
constexpr int64_t kMinAttentionIterations = 8;

/// The query rows per block of attention over `heads` heads with `l` query
/// and `s` key positions (`l` for whole heads), or 0 when attention runs as
/// batched ops. A divisor of `l` of at least half the largest block is
/// preferred (no remainder block); else a multiple of 8, the register
/// blocks' rows.
static int64_t queryBlockRows(int64_t heads, int64_t l, int64_t s) {
  constexpr int64_t bytes = 4; // scores and softmax compute in f32 or wider
  if (l * s * bytes <= kHeadAttentionBytes)
    return 0;
  int64_t most = std::max<int64_t>(kAttentionBlockBytes / (s * bytes), 8);
  int64_t blocks = llvm::divideCeil(kMinAttentionIterations, heads);
  most = std::max<int64_t>(std::min(most, l / blocks), 8);
  if (most >= l)
    return l;
  for (int64_t rows = most; 2 * rows >= most; --rows)
    if (l % rows == 0)
      return rows;
  return most / 8 * 8;
}

/// Attention as a parallel loop over the heads (every leading dim of the
/// result) and blocks of `rows` query rows: one iteration computes one block
/// of scores (rows x s), its masks, its softmax and its rows of the result,
/// so that the scores are written and read back in the core's cache rather
/// than in memory (Whisper's encoder: 1500 x 1500 scores per head, 9 MB,
/// five passes). The iterations run on the program's threads, each op of an
/// iteration on one thread. `q` is already scaled; `kt` is the key
/// transposed; `heads` the product of the result's leading dims, whose size
/// 1 dims broadcast. Rows that do not fill a block take a loop of their own.
static Value blockedAttention(PatternRewriter &rewriter, SdpaOp op, Value q,
                              Value kt, ArrayRef<Value> masks, int64_t heads,
                              int64_t rows) {
  Location loc = op.getLoc();
  auto resultTy = cast<RankedTensorType>(op.getType());
  int64_t rank = resultTy.getRank();
  ArrayRef<int64_t> batch = resultTy.getShape().drop_back(2);
  int64_t l = resultTy.getShape()[rank - 2];
  int64_t ev = resultTy.getShape()[rank - 1];
  int64_t s = typeOf(kt).getShape().back();
  Type scoreElem = typeOf(q).getElementType();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };

  // One loop over heads x `blocks` blocks of `blockRows` rows from `first`.
  auto loop = [&](Value result, int64_t first, int64_t blockRows,
                  int64_t blocks) -> Value {
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(heads),
                               rewriter.getIndexAttr(blocks)},
        ValueRange{result}, std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value head = forall.getInductionVar(0);
    OpFoldResult row = rewriter.getIndexAttr(first);
    if (blocks > 1)
      row = arith::AddIOp::create(
                rewriter, loc, index(first),
                arith::MulIOp::create(rewriter, loc, forall.getInductionVar(1),
                                      index(blockRows)))
                .getResult();
    // The position of the head along each leading dim.
    SmallVector<OpFoldResult> at(batch.size(), rewriter.getIndexAttr(0));
    for (int64_t d = batch.size() - 1; d >= 0; --d) {
      if (batch[d] == 1)
        continue;
      Value n = index(batch[d]);
      at[d] = arith::RemUIOp::create(rewriter, loc, head, n).getResult();
      head = arith::DivUIOp::create(rewriter, loc, head, n);
    }
    // The matrix of `x` for this head (its leading dims right-aligned with
    // the result's), with this block's rows unless it has one row.
    auto matrix = [&](Value x, bool blockOfRows) -> Value {
      ArrayRef<int64_t> shape = typeOf(x).getShape();
      int64_t xr = shape.size();
      SmallVector<OpFoldResult> off, size, step(xr, rewriter.getIndexAttr(1));
      for (int64_t d = 0; d < xr - 2; ++d) {
        off.push_back(shape[d] == 1 ? rewriter.getIndexAttr(0)
                                    : at[d + (rank - xr)]);
        size.push_back(rewriter.getIndexAttr(1));
      }
      int64_t r = shape[xr - 2];
      bool sliced = blockOfRows && r != 1;
      off.push_back(sliced ? row : rewriter.getIndexAttr(0));
      size.push_back(rewriter.getIndexAttr(sliced ? blockRows : r));
      off.push_back(rewriter.getIndexAttr(0));
      size.push_back(rewriter.getIndexAttr(shape[xr - 1]));
      auto ty = RankedTensorType::get({sliced ? blockRows : r, shape[xr - 1]},
                                      typeOf(x).getElementType());
      return tensor::ExtractSliceOp::create(rewriter, loc, ty, x, off, size,
                                            step);
    };
    Ops o{rewriter, loc};
    Value qBlock = matrix(q, true), ktHead = matrix(kt, false);
    Value scores = MatmulOp::create(
        rewriter, loc, RankedTensorType::get({blockRows, s}, scoreElem), qBlock,
        ktHead);
    for (Value mask : masks)
      scores = o.add(scores, matrix(mask, true));
    auto scoresTy = typeOf(scores);
    Value attn = SafeSoftmaxOp::create(rewriter, loc, scoresTy, scores, 1);
    Value vHead = matrix(op.getValue(), false);
    Value out = MatmulOp::create(
        rewriter, loc,
        RankedTensorType::get({blockRows, ev}, resultTy.getElementType()), attn,
        vHead);
    SmallVector<OpFoldResult> off(at),
        size(batch.size(), rewriter.getIndexAttr(1)),
        step(rank, rewriter.getIndexAttr(1));
    off.append({row, rewriter.getIndexAttr(0)});
    size.append({rewriter.getIndexAttr(blockRows), rewriter.getIndexAttr(ev)});
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, out, forall.getRegionIterArgs()[0], off, size, step);
    return forall.getResult(0);
  };
  Value result = tensor::EmptyOp::create(rewriter, loc, resultTy.getShape(),
                                         resultTy.getElementType());
  int64_t full = l / rows, tail = l % rows;
  if (full)
    result = loop(result, 0, rows, full);
  if (tail)
    result = loop(result, full * rows, tail, 1);
  return result;
}

struct DecomposeSdpa : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Ops o{rewriter, loc};
    auto qTy = typeOf(op.getQuery()), kTy = typeOf(op.getKey());
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
    // The scale applies to q (l x e) rather than to the scores (l x s): a
    // smaller pass, and exact for the usual power-of-two 1/sqrt(e).
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt((double)e);
    Value q = o.mul(op.getQuery(), o.cst(elem, scale));
    // The masks, as terms added to the scores.
    SmallVector<Value, 2> masks;
    if (Value mask = op.getMask()) {
      Type maskElem = typeOf(mask).getElementType();
      if (maskElem.isInteger(1))
        // keep where true: log(1) = 0, log(0) = -inf.
        masks.push_back(o.un<LogOp>(o.cast(mask, elem)));
      else
        masks.push_back(o.cast(mask, elem));
    }
    if (op.getIsCausal()) {
      // Lower-triangular (top-left aligned) mask as PyTorch builds it.
      auto maskTy = RankedTensorType::get({l, s}, elem);
      SmallVector<Attribute> values;
      double ninf = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < l; ++i)
        for (int64_t j = 0; j < s; ++j)
          values.push_back(rewriter.getFloatAttr(elem, j <= i ? 0.0 : ninf));
      masks.push_back(ConstantOp::create(
          rewriter, loc, maskTy, DenseElementsAttr::get(maskTy, values)));
    }
    // Scores of the result's leading dims (v may broadcast them further).
    SmallVector<int64_t> blockedScores(
        typeOf(op.getResult()).getShape().drop_back(2));
    blockedScores.append({l, s});
    int64_t heads = 1;
    for (int64_t d : ArrayRef<int64_t>(blockedScores).drop_back(2))
      heads *= d;
    if (int64_t rows = queryBlockRows(heads, l, s);
        rows && llvm::all_of(masks, [&](Value m) {
          return broadcastsTo(typeOf(m).getShape(), blockedScores);
        })) {
      for (Value &mask : masks)
        if (ArrayRef<int64_t> shape = typeOf(mask).getShape(); shape.size() < 2)
          mask = o.reshape(mask, {1, shape.empty() ? 1 : shape[0]});
      rewriter.replaceOp(
          op, blockedAttention(rewriter, op, q, kt, masks, heads, rows));
      return success();
    }
    Value scores =
        MatmulOp::create(rewriter, loc, qTy.clone(scoreShape), q, kt);
    for (Value mask : masks)
      scores = o.add(scores, mask);
    auto scoresTy = typeOf(scores);
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
    Ops o{rewriter, loc};
    auto inTy = typeOf(op.getInput());
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem))
      return rewriter.notifyMatchFailure(op, "mean needs a float type");
    Type ce = computeElem(elem);
    double count = Ops::count(op.getInput(), op.getDims());
    Value x = o.cast(op.getInput(), ce);
    auto sumTy = op.getType().clone(ce);
    Value sum = ReduceSumOp::create(rewriter, loc, sumTy, x, op.getDims(),
                                    op.getKeepdim());
    Value mean = o.div(sum, o.cst(ce, count));
    rewriter.replaceOp(op, o.cast(mean, elem));
    return success();
  }
};

/// The weight (O, I, kH, kW) of a convolution that the lowering computes in
/// channels-last layout becomes permute(permute(w) to (kH, kW, I, O)) back
/// to (O, I, kH, kW): the lowering reads the inner, channels-last value, and
/// poptorch-prepack-parameters applies the inner permute to a parameter at
/// upload instead of on every call.
struct ChannelsLastConvolutionWeight : public OpRewritePattern<ConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;
  static constexpr int64_t kToHwio[] = {2, 3, 1, 0};
  static constexpr int64_t kFromHwio[] = {3, 2, 0, 1};
  LogicalResult matchAndRewrite(ConvolutionOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.isChannelsLastDirect())
      return rewriter.notifyMatchFailure(op, "not a channels-last kernel");
    if (auto p = op.getWeight().getDefiningOp<PermuteOp>();
        p && p.getDims() == ArrayRef<int64_t>(kFromHwio))
      return rewriter.notifyMatchFailure(op, "weight already channels-last");
    Ops o{rewriter, op.getLoc()};
    Value w = o.permute(o.permute(op.getWeight(), kToHwio), kFromHwio);
    rewriter.modifyOpInPlace(op, [&] { op.getWeightMutable().assign(w); });
    return success();
  }
};

/// A convolution of a zero-padded input, padded alike on both sides of each
/// spatial dim, pads the input itself: pad(x, zeros) then convolution with
/// padding p becomes one convolution with padding p + pad, which the lowering
/// pads in the layout it computes in (Hugging Face's TF-style "same" padding
/// is an explicit pad before an unpadded convolution).
struct ConvolutionOfZeroPadded : public OpRewritePattern<ConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvolutionOp op,
                                PatternRewriter &rewriter) const override {
    auto pad = op.getInput().getDefiningOp<PadOp>();
    if (op.getTransposed() || !pad || pad.getMode() != "constant")
      return rewriter.notifyMatchFailure(op, "input is not constant-padded");
    auto value = pad.getValue().getDefiningOp<ConstantOp>();
    auto splat = value ? dyn_cast<SplatElementsAttr>(value.getValue())
                       : SplatElementsAttr();
    if (!splat || !(isa<FloatType>(splat.getElementType())
                        ? splat.getSplatValue<APFloat>().isPosZero()
                        : splat.getSplatValue<APInt>().isZero()))
      return rewriter.notifyMatchFailure(op, "padding value is not +0");
    int64_t spatial =
        cast<RankedTensorType>(op.getInput().getType()).getRank() - 2;
    ArrayRef<int64_t> p = pad.getPad();
    if ((int64_t)p.size() > 2 * spatial)
      return rewriter.notifyMatchFailure(op, "pads the channels");
    SmallVector<int64_t> padding(op.getPadding());
    if ((int64_t)padding.size() != spatial)
      padding.assign(spatial, padding.front());
    for (size_t k = 0; k < p.size() / 2; ++k) {
      if (p[2 * k] != p[2 * k + 1] || p[2 * k] < 0)
        return rewriter.notifyMatchFailure(op, "asymmetric or cropping pad");
      padding[spatial - 1 - k] += p[2 * k];
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(pad.getInput());
      op.setPadding(padding);
    });
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
               DecomposeSoftmax<SoftmaxOp, SoftmaxKind::Plain>,
               DecomposeSoftmax<LogSoftmaxOp, SoftmaxKind::Log>,
               DecomposeSoftmax<SafeSoftmaxOp, SoftmaxKind::Safe>,
               DecomposeSdpa, DecomposeReduceMean, PowOfConstant>(
      patterns.getContext());
  // Not a decomposition: a matmul of copies of one matrix as the matmul of
  // that matrix.
  patterns.add<MatmulOfBroadcastRhs>(patterns.getContext());
  // Not a decomposition: the layout a convolution's lowering reads its
  // weight in, asked for here so that prepacking can provide it.
  patterns.add<ChannelsLastConvolutionWeight>(patterns.getContext());
  // Not a decomposition: a zero pad before a convolution as its padding.
  patterns.add<ConvolutionOfZeroPadded>(patterns.getContext());
  populateReductionDecomposePatterns(patterns);
  populateNnLinalgDecomposePatterns(patterns);
}
