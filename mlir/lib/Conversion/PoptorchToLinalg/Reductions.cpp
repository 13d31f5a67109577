//===- Reductions.cpp - reductions and arg-reductions to linalg -----------===//
//
// reduce_{sum,mean,max,min,prod,all,any}: linalg.reduce over the reduced
// dims, then tensor.expand_shape for keepdim. f16/bf16 sums and products
// accumulate in f32 (as PyTorch's CPU kernels do); max/min propagate NaN
// (arith.maximumf / minimumf); unsigned integers compare unsigned; all/any
// reduce `x != 0` and give bool (or uint8, as PyTorch for uint8 inputs).
// reduce_mean is normally decomposed into reduce_sum + div first, but is
// lowered here too.
//
// max_dim / min_dim / argmax / argmin: one linalg.generic with a value and an
// index accumulator, reducing along one dim in order: a strictly better value
// (or the first NaN) replaces the accumulator, so ties keep the first index
// as in eager PyTorch.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, All, Any };

template <typename OpTy, ReduceKind opKind>
struct ReduceLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Value input = adaptor.getInput();
    auto inTy = getTensorType(input);
    Type elem = inTy.getElementType();
    // The product of booleans is their logical and.
    const ReduceKind kind = opKind == ReduceKind::Prod && elem.isInteger(1)
                                ? ReduceKind::All
                                : opKind;
    bool logical = kind == ReduceKind::All || kind == ReduceKind::Any;
    if (!isa<FloatType, IntegerType>(elem))
      return op.emitOpError("element type ") << elem << " is not supported";
    if (kind == ReduceKind::Mean && !isa<FloatType>(elem))
      return op.emitOpError("mean of integer type ")
             << elem << " is not defined; cast to a float type first";
    if (kind == ReduceKind::Sum && elem.isInteger(1))
      return op.emitOpError("sum of booleans must be computed in an integer "
                            "type; cast the input to int64 first");

    SmallVector<int64_t> dims(op.getDims());
    llvm::sort(dims);
    if (inTy.getRank() == 0 || dims.empty()) {
      Value x = input;
      if (logical)
        x = castTensor(rewriter, loc, x, rewriter.getI1Type());
      x = castTensor(rewriter, loc, x, resTy.getElementType());
      rewriter.replaceOp(op, reshapeTensor(rewriter, loc, x, resTy.getShape()));
      return success();
    }

    bool isUnsigned = isUnsignedInteger(elem);
    Type acc;
    Value x;
    if (logical) {
      acc = rewriter.getI1Type();
      x = castTensor(rewriter, loc, input, acc);
    } else if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
      acc = toSignlessType(elem);
      x = toSignlessTensor(rewriter, loc, input);
    } else {
      acc = getComputeType(toSignlessType(elem));
      x = castTensor(rewriter, loc, toSignlessTensor(rewriter, loc, input),
                     acc);
    }
    SmallVector<int64_t> reducedShape;
    int64_t count = 1;
    for (int64_t i = 0; i < inTy.getRank(); ++i) {
      if (llvm::is_contained(dims, i))
        count *= inTy.getShape()[i];
      else
        reducedShape.push_back(inTy.getShape()[i]);
    }
    Value identity;
    switch (kind) {
    case ReduceKind::Max:
      identity = createLowest(rewriter, loc, acc, isUnsigned);
      break;
    case ReduceKind::Min:
      identity = createHighest(rewriter, loc, acc, isUnsigned);
      break;
    case ReduceKind::Prod:
    case ReduceKind::All:
      identity = createScalar(rewriter, loc, acc, 1.0);
      break;
    default:
      identity = createScalar(rewriter, loc, acc, 0.0);
    }
    Value init = createFilled(
        rewriter, loc, RankedTensorType::get(reducedShape, acc), identity);
    bool isFloat = isa<FloatType>(acc);
    Value reduced =
        linalg::ReduceOp::create(
            rewriter, loc, ValueRange{x}, ValueRange{init}, dims,
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value a = args[0], c = args[1], r;
              switch (kind) {
              case ReduceKind::Sum:
              case ReduceKind::Mean:
                r = isFloat ? (Value)arith::AddFOp::create(b, nloc, a, c)
                            : (Value)arith::AddIOp::create(b, nloc, a, c);
                break;
              case ReduceKind::Prod:
                r = isFloat ? (Value)arith::MulFOp::create(b, nloc, a, c)
                            : (Value)arith::MulIOp::create(b, nloc, a, c);
                break;
              case ReduceKind::All:
                r = arith::AndIOp::create(b, nloc, a, c);
                break;
              case ReduceKind::Any:
                r = arith::OrIOp::create(b, nloc, a, c);
                break;
              case ReduceKind::Max:
              case ReduceKind::Min:
                r = createExtremum(b, nloc, a, c, kind == ReduceKind::Max,
                                   isUnsigned);
                break;
              }
              linalg::YieldOp::create(b, nloc, r);
            })
            .getResult(0);
    if (kind == ReduceKind::Mean)
      reduced = createElementwiseGeneric(
          rewriter, loc, ValueRange{reduced}, reducedShape, acc,
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            return arith::DivFOp::create(
                b, nloc, args[0], createScalar(b, nloc, acc, (double)count));
          });
    // Back to the result type; unsigned bits are reinterpreted, not converted.
    reduced = castTensor(rewriter, loc, reduced, resTy.getElementType());
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, loc, reduced, resTy.getShape()));
    return success();
  }
};

/// Compares two scalars of a (signless) element type for the arg-reductions
/// and sorts: `a < b` (or `a > b`), ordered, so false with NaN.
Value compareScalars(OpBuilder &b, Location loc, Value a, Value c, bool greater,
                     bool isUnsigned) {
  if (isa<FloatType>(a.getType()))
    return arith::CmpFOp::create(
        b, loc, greater ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
        a, c);
  bool u = isUnsigned || a.getType().isInteger(1);
  arith::CmpIPredicate pred =
      greater ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
              : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
  return arith::CmpIOp::create(b, loc, pred, a, c);
}

Value isNaN(OpBuilder &b, Location loc, Value v) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
}

/// max_dim / min_dim / argmax / argmin.
template <typename OpTy, bool isMax>
struct ArgReduceLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto inTy = getTensorType(input);
    Type elem = inTy.getElementType();
    if (!isa<FloatType, IntegerType>(elem))
      return op.emitOpError("element type ") << elem << " is not supported";
    bool isUnsigned = isUnsignedInteger(elem);
    // No dim: over the flattened input.
    int64_t dim = 0;
    if (op.getDim() && inTy.getRank() > 0)
      dim = *op.getDim();
    else
      input = reshapeTensor(rewriter, loc, input, {inTy.getNumElements()});
    Value x = toSignlessTensor(rewriter, loc, input);
    // f16/bf16 compare in f32 (exact; LLVM has no bf16 compares on x86).
    x = castTensor(rewriter, loc, x,
                   getComputeType(getTensorType(x).getElementType()));
    auto xTy = getTensorType(x);
    Type acc = xTy.getElementType();
    int64_t rank = xTy.getRank();

    SmallVector<int64_t> outShape;
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (int64_t i = 0; i < rank; ++i) {
      iters.push_back(i == dim ? utils::IteratorType::reduction
                               : utils::IteratorType::parallel);
      if (i != dim) {
        outShape.push_back(xTy.getShape()[i]);
        outExprs.push_back(getAffineDimExpr(i, ctx));
      }
    }
    AffineMap inMap = rewriter.getMultiDimIdentityMap(rank);
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    Type i64 = rewriter.getI64Type();
    Value initV =
        createFilled(rewriter, loc, RankedTensorType::get(outShape, acc),
                     isMax ? createLowest(rewriter, loc, acc, isUnsigned)
                           : createHighest(rewriter, loc, acc, isUnsigned));
    Value initI =
        createFilled(rewriter, loc, RankedTensorType::get(outShape, i64),
                     createScalar(rewriter, loc, i64, 0));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{initV.getType(), initI.getType()},
        ValueRange{x}, ValueRange{initV, initI},
        ArrayRef<AffineMap>{inMap, outMap, outMap}, iters,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value v = args[0], best = args[1], bestI = args[2];
          Value better = compareScalars(b, nloc, v, best, isMax, isUnsigned);
          if (isa<FloatType>(acc)) {
            Value firstNaN = arith::AndIOp::create(
                b, nloc, isNaN(b, nloc, v),
                arith::XOrIOp::create(b, nloc, isNaN(b, nloc, best),
                                      createScalar(b, nloc, b.getI1Type(), 1)));
            better = arith::OrIOp::create(b, nloc, better, firstNaN);
          }
          Value idx = arith::IndexCastOp::create(
              b, nloc, i64, linalg::IndexOp::create(b, nloc, dim));
          linalg::YieldOp::create(
              b, nloc,
              ValueRange{arith::SelectOp::create(b, nloc, better, v, best),
                         arith::SelectOp::create(b, nloc, better, idx, bestI)});
        });
    SmallVector<Value> results;
    for (auto [i, r] : llvm::enumerate(op->getResults())) {
      auto ty = cast<RankedTensorType>(r.getType());
      bool indices = ty.getElementType().isInteger(64) &&
                     (op->getNumResults() == 1 || i == 1);
      Value v = generic.getResult(indices ? 1 : 0);
      if (!indices)
        v = castTensor(rewriter, loc, v, ty.getElementType());
      results.push_back(reshapeTensor(rewriter, loc, v, ty.getShape()));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::poptorch::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<
      ReduceLowering<ReduceSumOp, ReduceKind::Sum>,
      ReduceLowering<ReduceMeanOp, ReduceKind::Mean>,
      ReduceLowering<ReduceMaxOp, ReduceKind::Max>,
      ReduceLowering<ReduceMinOp, ReduceKind::Min>,
      ReduceLowering<ReduceProdOp, ReduceKind::Prod>,
      ReduceLowering<ReduceAllOp, ReduceKind::All>,
      ReduceLowering<ReduceAnyOp, ReduceKind::Any>,
      ArgReduceLowering<MaxDimOp, true>, ArgReduceLowering<MinDimOp, false>,
      ArgReduceLowering<ArgmaxOp, true>, ArgReduceLowering<ArgminOp, false>>(
      patterns.getContext());
  populateScanSortPatterns(patterns);
}
