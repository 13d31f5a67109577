//===- ScanSort.cpp - scans and sorts to linalg ---------------------------===//
//
// Both are "pairwise" linalg.generic ops: the loops of the result plus one
// extra reduction loop over the scanned / sorted dim, so that they stay in
// linalg (tiled and parallelised like every other op) at O(n^2) work per
// slice along the dim:
//
// * cumsum / cumprod / logcumsumexp / cummax / cummin: result[i] folds
//   input[j] for j = 0..i in order, so the result equals PyTorch's sequential
//   CPU kernels (which accumulate f32 in f64 and f16/bf16 in f32, as here).
//   cummax/cummin take the later index on ties and keep the latest NaN.
// * sort: the rank of each element (how many elements come before it in the
//   stable order, NaN after every number) is a counting reduction; a second
//   generic gathers, for each output position p < k, the element of rank p.
//   topk and kthvalue keep the first k positions.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include <limits>

using namespace mlir;
using namespace mlir::poptorch;

namespace {

using PairwiseBody = function_ref<SmallVector<Value>(
    OpBuilder &, Location, ValueRange args, Value pos, Value extra)>;

/// A linalg.generic whose loops are the dims of `inits` (rank r) plus an
/// extra reduction loop r. Input k reads its dim `dim` at the extra loop when
/// `atExtra[k]`, else at loop `dim`. The body gets the inputs and the
/// accumulators, and the two positions (loop `dim` and the extra loop) as
/// i64.
SmallVector<Value> createPairwiseGeneric(OpBuilder &b, Location loc,
                                         int64_t dim, ValueRange inputs,
                                         ArrayRef<bool> atExtra,
                                         ValueRange inits, PairwiseBody body) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = getTensorType(inits[0]).getRank();
  SmallVector<AffineMap> maps;
  for (auto [in, extra] : llvm::zip(inputs, atExtra)) {
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i == dim && extra ? rank : i, ctx));
    maps.push_back(AffineMap::get(rank + 1, 0, exprs, ctx));
  }
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < rank; ++i)
    outExprs.push_back(getAffineDimExpr(i, ctx));
  for (size_t i = 0; i < inits.size(); ++i)
    maps.push_back(AffineMap::get(rank + 1, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iters(rank + 1,
                                         utils::IteratorType::parallel);
  iters[rank] = utils::IteratorType::reduction;
  SmallVector<Type> types;
  for (Value v : inits)
    types.push_back(v.getType());
  auto generic = linalg::GenericOp::create(
      b, loc, types, inputs, inits, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Type i64 = nb.getI64Type();
        Value pos = arith::IndexCastOp::create(
            nb, nloc, i64, linalg::IndexOp::create(nb, nloc, dim));
        Value extra = arith::IndexCastOp::create(
            nb, nloc, i64, linalg::IndexOp::create(nb, nloc, rank));
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args, pos, extra));
      });
  return SmallVector<Value>(generic.getResults());
}

Value isNaN(OpBuilder &b, Location loc, Value v) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
}

Value notOf(OpBuilder &b, Location loc, Value v) {
  return arith::XOrIOp::create(b, loc, v,
                               createScalar(b, loc, b.getI1Type(), 1.0));
}

/// `a` comes before `c` in ascending order with NaN last (ordered compare
/// for numbers; for integers signed or unsigned).
Value lessNaNLast(OpBuilder &b, Location loc, Value a, Value c,
                  bool isUnsigned) {
  if (isa<FloatType>(a.getType())) {
    Value lt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a, c);
    Value nanAfter = arith::AndIOp::create(
        b, loc, notOf(b, loc, isNaN(b, loc, a)), isNaN(b, loc, c));
    return arith::OrIOp::create(b, loc, lt, nanAfter);
  }
  bool u = isUnsigned || a.getType().isInteger(1);
  return arith::CmpIOp::create(
      b, loc, u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt, a, c);
}

/// `a` and `c` are equal in that order (NaN equals NaN).
Value equalNaN(OpBuilder &b, Location loc, Value a, Value c) {
  if (isa<FloatType>(a.getType()))
    return arith::OrIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a, c),
        arith::AndIOp::create(b, loc, isNaN(b, loc, a), isNaN(b, loc, c)));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, c);
}

/// The accumulator type of PyTorch's CPU scans (at::acc_type<T, false>).
Type scanAccType(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  if (isa<FloatType>(t))
    return Float64Type::get(t.getContext());
  return IntegerType::get(t.getContext(), 64);
}

/// Reinterprets unsigned integers as signless (the same bits).
Value signless(OpBuilder &b, Location loc, Value v) {
  Type elem = getTensorType(v).getElementType();
  if (!isUnsignedInteger(elem))
    return v;
  return castTensor(b, loc, v, toSignlessType(elem));
}

/// Rank-0 operands are scanned / sorted as 1-element vectors.
Value atLeast1D(OpBuilder &b, Location loc, Value v) {
  if (getTensorType(v).getRank() > 0)
    return v;
  return reshapeTensor(b, loc, v, {1});
}

enum class ScanKind { Sum, Prod, LogSumExp, Max, Min };

template <typename OpTy, ScanKind kind>
struct ScanLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Type elem = getTensorType(input).getElementType();
    if (!isa<FloatType, IntegerType>(elem))
      return op.emitOpError("element type ") << elem << " is not supported";
    if (kind == ScanKind::LogSumExp && !isa<FloatType>(elem))
      return op.emitOpError("needs a floating-point input");
    bool isUnsigned = isUnsignedInteger(elem);
    int64_t dim = op.getDim();
    Value x = atLeast1D(rewriter, loc, signless(rewriter, loc, input));
    auto xTy = getTensorType(x);
    bool isArg = kind == ScanKind::Max || kind == ScanKind::Min;
    // f16/bf16 compare in f32 (exact; LLVM has no bf16 compares on x86).
    Type acc = isArg ? getComputeType(xTy.getElementType()) : scanAccType(elem);
    x = castTensor(rewriter, loc, x, acc);
    bool isFloat = isa<FloatType>(acc);
    Type i64 = rewriter.getI64Type();

    Value identity;
    if (kind == ScanKind::Sum)
      identity = createScalar(rewriter, loc, acc, 0.0);
    else if (kind == ScanKind::Prod)
      identity = createScalar(rewriter, loc, acc, 1.0);
    else if (kind == ScanKind::LogSumExp)
      identity = createScalar(rewriter, loc, acc,
                              -std::numeric_limits<double>::infinity());
    else if (kind == ScanKind::Max)
      identity = isUnsigned ? createScalar(rewriter, loc, acc, 0.0)
                            : createLowest(rewriter, loc, acc);
    else if (isFloat)
      identity = createScalar(rewriter, loc, acc,
                              std::numeric_limits<double>::infinity());
    else
      identity = arith::ConstantOp::create(
          rewriter, loc,
          rewriter.getIntegerAttr(
              acc,
              (isUnsigned || acc.isInteger(1))
                  ? APInt::getMaxValue(acc.getIntOrFloatBitWidth())
                  : APInt::getSignedMaxValue(acc.getIntOrFloatBitWidth())));
    SmallVector<Value> inits{createFilled(
        rewriter, loc, RankedTensorType::get(xTy.getShape(), acc), identity)};
    if (isArg)
      inits.push_back(createFilled(rewriter, loc, xTy.clone(i64),
                                   createScalar(rewriter, loc, i64, 0)));

    SmallVector<Value> results = createPairwiseGeneric(
        rewriter, loc, dim, ValueRange{x}, {true}, inits,
        [&](OpBuilder &b, Location nloc, ValueRange args, Value i,
            Value j) -> SmallVector<Value> {
          Value v = args[0], a = args[1];
          Value live =
              arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::sle, j, i);
          if (isArg) {
            // PyTorch: if (isnan(x) || (!isnan(out) && x >= out)) take x.
            Value take;
            if (isFloat)
              take = arith::OrIOp::create(
                  b, nloc, isNaN(b, nloc, v),
                  arith::CmpFOp::create(b, nloc,
                                        kind == ScanKind::Max
                                            ? arith::CmpFPredicate::OGE
                                            : arith::CmpFPredicate::OLE,
                                        v, a));
            else {
              bool u = isUnsigned || acc.isInteger(1);
              auto pred = kind == ScanKind::Max
                              ? (u ? arith::CmpIPredicate::uge
                                   : arith::CmpIPredicate::sge)
                              : (u ? arith::CmpIPredicate::ule
                                   : arith::CmpIPredicate::sle);
              take = arith::CmpIOp::create(b, nloc, pred, v, a);
            }
            take = arith::AndIOp::create(b, nloc, live, take);
            return {arith::SelectOp::create(b, nloc, take, v, a),
                    arith::SelectOp::create(b, nloc, take, j, args[2])};
          }
          Value r;
          if (kind == ScanKind::Sum)
            r = isFloat ? (Value)arith::AddFOp::create(b, nloc, a, v)
                        : (Value)arith::AddIOp::create(b, nloc, a, v);
          else if (kind == ScanKind::Prod)
            r = isFloat ? (Value)arith::MulFOp::create(b, nloc, a, v)
                        : (Value)arith::MulIOp::create(b, nloc, a, v);
          else {
            // PyTorch's _log_add_exp_helper: equal infinities stay, else
            // max + log1p(exp(min - max)) (NaN-propagating).
            Value mx = arith::MaximumFOp::create(b, nloc, a, v);
            Value mn = arith::MinimumFOp::create(b, nloc, a, v);
            Value sum = arith::AddFOp::create(
                b, nloc, mx,
                math::Log1pOp::create(
                    b, nloc,
                    math::ExpOp::create(
                        b, nloc, arith::SubFOp::create(b, nloc, mn, mx))));
            Value inf = createScalar(b, nloc, acc,
                                     std::numeric_limits<double>::infinity());
            Value isInf =
                arith::CmpFOp::create(b, nloc, arith::CmpFPredicate::OEQ,
                                      math::AbsFOp::create(b, nloc, v), inf);
            Value same =
                arith::CmpFOp::create(b, nloc, arith::CmpFPredicate::OEQ, a, v);
            r = arith::SelectOp::create(
                b, nloc, arith::AndIOp::create(b, nloc, isInf, same), v, sum);
          }
          return {arith::SelectOp::create(b, nloc, live, r, a)};
        });

    SmallVector<Value> replacements;
    for (auto [k, r] : llvm::enumerate(op->getResults())) {
      auto ty = cast<RankedTensorType>(r.getType());
      Value v = results[k];
      if (k == 0)
        v = castTensor(rewriter, loc, v, ty.getElementType());
      replacements.push_back(reshapeTensor(rewriter, loc, v, ty.getShape()));
    }
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

struct SortLowering : public OpConversionPattern<SortOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SortOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Type elem = getTensorType(input).getElementType();
    if (!isa<FloatType, IntegerType>(elem))
      return op.emitOpError("element type ") << elem << " is not supported";
    bool isUnsigned = isUnsignedInteger(elem);
    bool descending = op.getDescending();
    int64_t dim = op.getDim();
    Value x = atLeast1D(rewriter, loc, signless(rewriter, loc, input));
    // f16/bf16 compare in f32 (exact; LLVM has no bf16 compares on x86).
    x = castTensor(rewriter, loc, x,
                   getComputeType(getTensorType(x).getElementType()));
    auto xTy = getTensorType(x);
    Type acc = xTy.getElementType();
    Type i64 = rewriter.getI64Type();

    // rank[i] = #{j : x[j] comes before x[i]} in the stable order.
    Value zeros = createFilled(rewriter, loc, xTy.clone(i64),
                               createScalar(rewriter, loc, i64, 0));
    Value rank =
        createPairwiseGeneric(
            rewriter, loc, dim, ValueRange{x, x}, {false, true},
            ValueRange{zeros},
            [&](OpBuilder &b, Location nloc, ValueRange args, Value i,
                Value j) -> SmallVector<Value> {
              Value xi = args[0], xj = args[1];
              Value before = descending
                                 ? lessNaNLast(b, nloc, xi, xj, isUnsigned)
                                 : lessNaNLast(b, nloc, xj, xi, isUnsigned);
              Value tie = arith::AndIOp::create(
                  b, nloc, equalNaN(b, nloc, xi, xj),
                  arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::slt, j,
                                        i));
              before = arith::OrIOp::create(b, nloc, before, tie);
              return {arith::AddIOp::create(
                  b, nloc, args[2],
                  arith::ExtUIOp::create(b, nloc, i64, before))};
            })
            .front();

    // out[p] = x[i] where rank[i] == p, for the first k positions.
    auto valuesTy = op.getValues().getType();
    SmallVector<int64_t> outShape(valuesTy.getShape());
    if (outShape.empty())
      outShape.push_back(1);
    Value initV =
        createFilled(rewriter, loc, RankedTensorType::get(outShape, acc),
                     createScalar(rewriter, loc, acc, 0.0));
    Value initI =
        createFilled(rewriter, loc, RankedTensorType::get(outShape, i64),
                     createScalar(rewriter, loc, i64, 0));
    SmallVector<Value> gathered = createPairwiseGeneric(
        rewriter, loc, dim, ValueRange{x, rank}, {true, true},
        ValueRange{initV, initI},
        [&](OpBuilder &b, Location nloc, ValueRange args, Value p,
            Value i) -> SmallVector<Value> {
          Value match = arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::eq,
                                              args[1], p);
          return {arith::SelectOp::create(b, nloc, match, args[0], args[2]),
                  arith::SelectOp::create(b, nloc, match, i, args[3])};
        });
    Value values =
        castTensor(rewriter, loc, gathered[0], valuesTy.getElementType());
    rewriter.replaceOp(
        op, {reshapeTensor(rewriter, loc, values, valuesTy.getShape()),
             reshapeTensor(rewriter, loc, gathered[1],
                           op.getIndices().getType().getShape())});
    return success();
  }
};

} // namespace

void mlir::poptorch::populateScanSortPatterns(RewritePatternSet &patterns) {
  patterns.add<ScanLowering<CumsumOp, ScanKind::Sum>,
               ScanLowering<CumprodOp, ScanKind::Prod>,
               ScanLowering<LogcumsumexpOp, ScanKind::LogSumExp>,
               ScanLowering<CummaxOp, ScanKind::Max>,
               ScanLowering<CumminOp, ScanKind::Min>, SortLowering>(
      patterns.getContext());
}
