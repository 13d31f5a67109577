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
    Value x = atLeast1D(rewriter, loc, toSignlessTensor(rewriter, loc, input));
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
      identity = createLowest(rewriter, loc, acc, isUnsigned);
    else
      identity = createHighest(rewriter, loc, acc, isUnsigned);
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
    Value x = atLeast1D(rewriter, loc, toSignlessTensor(rewriter, loc, input));
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

//===----------------------------------------------------------------------===//
// ---- search-stats-random-special (round 2): searchsorted, isin, histc.
// Each result element folds over the elements of a second operand (the row
// of the sorted sequence, all test elements, all inputs) in one
// linalg.generic with an extra reduction loop, like the pairwise scans.
//===----------------------------------------------------------------------===//

/// The identity map of the result's dims within rank + 1 loops.
AffineMap resultMap(MLIRContext *ctx, int64_t rank) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank + 1, 0, exprs, ctx);
}

/// A generic over the dims of `init` plus one reduction loop (the last)
/// over `over`'s dim `overDim`: `over` is read at (its leading dims from the
/// result's, when `batched`) and the reduction loop; `with` (maps given) per
/// result element.
Value createFoldGeneric(
    OpBuilder &b, Location loc, Value over, bool batched, ValueRange with,
    ArrayRef<AffineMap> withMaps, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = getTensorType(init).getRank();
  int64_t overRank = getTensorType(over).getRank();
  SmallVector<AffineExpr> overExprs;
  for (int64_t i = 0; i + 1 < overRank; ++i)
    overExprs.push_back(getAffineDimExpr(batched ? i : 0, ctx));
  overExprs.push_back(getAffineDimExpr(rank, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, overExprs, ctx)};
  maps.append(withMaps.begin(), withMaps.end());
  maps.push_back(resultMap(ctx, rank));
  SmallVector<utils::IteratorType> iters(rank + 1,
                                         utils::IteratorType::parallel);
  iters[rank] = utils::IteratorType::reduction;
  SmallVector<Value> inputs{over};
  inputs.append(with.begin(), with.end());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

/// Signless, f16/bf16 widened to f32 (exact for comparisons).
Value comparable(OpBuilder &b, Location loc, Value v) {
  v = toSignlessTensor(b, loc, v);
  return castTensor(b, loc, v,
                    getComputeType(getTensorType(v).getElementType()));
}

struct SearchsortedLowering : public OpConversionPattern<SearchsortedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SearchsortedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = getTensorType(adaptor.getValues()).getElementType();
    if (!isa<FloatType, IntegerType>(elem))
      return op.emitOpError("element type ") << elem << " is not supported";
    bool isUnsigned = isUnsignedInteger(elem) || elem.isInteger(1);
    bool right = op.getRight() || op.getSide() == "right";
    Value sorted = comparable(rewriter, loc, adaptor.getSorted());
    Value values = atLeast1D(rewriter, loc,
                             comparable(rewriter, loc, adaptor.getValues()));
    auto resTy = op.getType();
    Type out = resTy.getElementType();
    int64_t rank = getTensorType(values).getRank();
    Value init = createFilled(
        rewriter, loc,
        RankedTensorType::get(getTensorType(values).getShape(), out),
        createScalar(rewriter, loc, out, 0));
    MLIRContext *ctx = rewriter.getContext();
    bool batched = getTensorType(sorted).getRank() > 1;
    Value count = createFoldGeneric(
        rewriter, loc, sorted, batched, ValueRange{values},
        {resultMap(ctx, rank)}, init,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value s = args[0], v = args[1];
          // eager's binary search moves right past s unless s >= v (left) /
          // s > v (right): NaN values go to the end
          Value before;
          if (auto ft = dyn_cast<FloatType>(s.getType())) {
            // eager's binary search sees a NaN entry (sorted last) as +inf
            s = arith::SelectOp::create(
                b, nloc, isNaN(b, nloc, s),
                createScalar(b, nloc, ft,
                             std::numeric_limits<double>::infinity()),
                s);
            before = arith::CmpFOp::create(b, nloc,
                                           right ? arith::CmpFPredicate::ULE
                                                 : arith::CmpFPredicate::ULT,
                                           s, v);
          } else {
            before = arith::CmpIOp::create(
                b, nloc,
                right ? (isUnsigned ? arith::CmpIPredicate::ule
                                    : arith::CmpIPredicate::sle)
                      : (isUnsigned ? arith::CmpIPredicate::ult
                                    : arith::CmpIPredicate::slt),
                s, v);
          }
          return arith::AddIOp::create(
              b, nloc, args[2], arith::ExtUIOp::create(b, nloc, out, before));
        });
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, loc, count, resTy.getShape()));
    return success();
  }
};

struct IsinLowering : public OpConversionPattern<IsinOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IsinOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = getTensorType(adaptor.getElements()).getElementType();
    if (!isa<FloatType, IntegerType>(elem))
      return op.emitOpError("element type ") << elem << " is not supported";
    bool invert = op.getInvert();
    Value elements = atLeast1D(
        rewriter, loc, comparable(rewriter, loc, adaptor.getElements()));
    Value test = comparable(rewriter, loc, adaptor.getTest());
    test = reshapeTensor(rewriter, loc, test,
                         {getTensorType(test).getNumElements()});
    int64_t rank = getTensorType(elements).getRank();
    Type i1 = rewriter.getI1Type();
    Value init = createFilled(
        rewriter, loc,
        RankedTensorType::get(getTensorType(elements).getShape(), i1),
        createScalar(rewriter, loc, i1, invert ? 1 : 0));
    Value found = createFoldGeneric(
        rewriter, loc, test, false, ValueRange{elements},
        {resultMap(rewriter.getContext(), rank)}, init,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value t = args[0], e = args[1];
          Value same;
          if (isa<FloatType>(t.getType()))
            same = arith::CmpFOp::create(b, nloc,
                                         invert ? arith::CmpFPredicate::UNE
                                                : arith::CmpFPredicate::OEQ,
                                         e, t);
          else
            same = arith::CmpIOp::create(b, nloc,
                                         invert ? arith::CmpIPredicate::ne
                                                : arith::CmpIPredicate::eq,
                                         e, t);
          if (invert)
            return arith::AndIOp::create(b, nloc, args[2], same);
          return arith::OrIOp::create(b, nloc, args[2], same);
        });
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, found, op.getType().getShape()));
    return success();
  }
};

struct HistcLowering : public OpConversionPattern<HistcOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(HistcOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = op.getType().getElementType();
    if (!isa<FloatType>(elem))
      return op.emitOpError("needs a floating-point input, got ") << elem;
    MLIRContext *ctx = rewriter.getContext();
    // eager's histogram kernel computes in the input's own type
    Type t = getComputeType(elem);
    Value x = castTensor(rewriter, loc, adaptor.getInput(), t);
    x = reshapeTensor(rewriter, loc, x, {getTensorType(x).getNumElements()});
    auto scalarTy = RankedTensorType::get({}, t);
    double mn = op.getMin().convertToDouble(),
           mx = op.getMax().convertToDouble();
    auto castToElem = [&](double v) {
      // the edges are in the input's own type
      bool lossy;
      APFloat f(v);
      f.convert(cast<FloatType>(elem).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lossy);
      f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lossy);
      return f.convertToDouble();
    };
    Value lo, hi;
    if (mn != mx) {
      lo = createFilled(rewriter, loc, scalarTy,
                        createScalar(rewriter, loc, t, castToElem(mn)));
      hi = createFilled(rewriter, loc, scalarTy,
                        createScalar(rewriter, loc, t, castToElem(mx)));
    } else {
      // the data's range (min == max: widened by 1 on each side)
      auto extreme = [&](bool isMax) {
        double inf = std::numeric_limits<double>::infinity();
        Value init =
            createFilled(rewriter, loc, scalarTy,
                         createScalar(rewriter, loc, t, isMax ? -inf : inf));
        return createFoldGeneric(
            rewriter, loc, x, false, ValueRange{}, {}, init,
            [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
              if (isMax)
                return arith::MaximumFOp::create(b, nloc, args[0], args[1]);
              return arith::MinimumFOp::create(b, nloc, args[0], args[1]);
            });
      };
      lo = extreme(false);
      hi = extreme(true);
      auto widen = [&](Value v, double by) {
        return createElementwiseGeneric(
            rewriter, loc, ValueRange{lo, hi, v}, {}, t,
            [&](OpBuilder &b, Location nloc, ValueRange a) -> Value {
              Value eq = arith::CmpFOp::create(
                  b, nloc, arith::CmpFPredicate::OEQ, a[0], a[1]);
              Value moved = arith::AddFOp::create(b, nloc, a[2],
                                                  createScalar(b, nloc, t, by));
              return arith::SelectOp::create(b, nloc, eq, moved, a[2]);
            });
      };
      Value lo2 = widen(lo, -1), hi2 = widen(hi, 1);
      lo = lo2;
      hi = hi2;
    }
    int64_t bins = op.getBins();
    Value init = createFilled(rewriter, loc, RankedTensorType::get({bins}, t),
                              createScalar(rewriter, loc, t, 0));
    auto scalarMap = AffineMap::get(2, 0, {}, ctx);
    Value hist = createFoldGeneric(
        rewriter, loc, x, false, ValueRange{lo, hi}, {scalarMap, scalarMap},
        init, [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value v = args[0], l = args[1], h = args[2];
          Value in = arith::AndIOp::create(
              b, nloc,
              arith::CmpFOp::create(b, nloc, arith::CmpFPredicate::OGE, v, l),
              arith::CmpFOp::create(b, nloc, arith::CmpFPredicate::OLE, v, h));
          // pos = int((v - lo) * bins / (hi - lo)), the last bin closed; in
          // the input's type, so f16/bf16 round after every step as eager
          auto r = [&](Value x) -> Value {
            if (t == elem)
              return x;
            Value narrow = arith::TruncFOp::create(b, nloc, elem, x);
            return arith::ExtFOp::create(b, nloc, t, narrow);
          };
          Value scaled = r(arith::DivFOp::create(
              b, nloc,
              r(arith::MulFOp::create(b, nloc,
                                      r(arith::SubFOp::create(b, nloc, v, l)),
                                      createScalar(b, nloc, t, double(bins)))),
              r(arith::SubFOp::create(b, nloc, h, l))));
          Type i64 = b.getI64Type();
          Value safe = arith::SelectOp::create(b, nloc, in, scaled,
                                               createScalar(b, nloc, t, 0));
          Value pos = arith::FPToSIOp::create(b, nloc, i64, safe);
          Value last = createScalar(b, nloc, i64, double(bins - 1));
          pos = arith::MinSIOp::create(b, nloc, pos, last);
          Value bin = arith::IndexCastOp::create(
              b, nloc, i64, linalg::IndexOp::create(b, nloc, 0));
          Value hit = arith::AndIOp::create(
              b, nloc, in,
              arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::eq, pos,
                                    bin));
          return arith::AddFOp::create(
              b, nloc, args[3],
              arith::SelectOp::create(b, nloc, hit, createScalar(b, nloc, t, 1),
                                      createScalar(b, nloc, t, 0)));
        });
    rewriter.replaceOp(op, castTensor(rewriter, loc, hist, elem));
    return success();
  }
};
} // namespace

void mlir::poptorch::populateScanSortPatterns(RewritePatternSet &patterns) {
  patterns.add<ScanLowering<CumsumOp, ScanKind::Sum>,
               ScanLowering<CumprodOp, ScanKind::Prod>,
               ScanLowering<LogcumsumexpOp, ScanKind::LogSumExp>,
               ScanLowering<CummaxOp, ScanKind::Max>,
               ScanLowering<CumminOp, ScanKind::Min>, SortLowering,
               SearchsortedLowering, IsinLowering, HistcLowering>(
      patterns.getContext());
}
