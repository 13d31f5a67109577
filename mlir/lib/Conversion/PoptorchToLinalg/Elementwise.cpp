//===- Elementwise.cpp - elementwise ops, casts and constants to linalg ---===//
//
// Every op with the elementwise trait goes through ONE pattern: a
// linalg.generic with numpy-broadcasting indexing maps whose body is the op's
// scalar formula, generated from the op table into ElementwiseFormulas.inc
// and written against the ScalarBuilder (ScalarBuilder.h). Also: cast,
// constant, dropout.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"
#include "Conversion/PoptorchToLinalg/ScalarBuilder.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchElementwiseSignatures.h.inc"

#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::poptorch;

namespace {

#include "Conversion/PoptorchToLinalg/ElementwiseFormulas.inc"

struct ElementwiseLowering : public ConversionPattern {
  ElementwiseLowering(MLIRContext *ctx)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::poptorch::ElementwiseOpTrait>())
      return failure();
    Location loc = op->getLoc();
    auto resTy = cast<RankedTensorType>(op->getResult(0).getType());
    Type elem = resTy.getElementType();
    StringRef name = op->getName().stripDialect();
    // The formula computes in the operands' type (the result's, except for
    // bool-valued ops); bool operands (conditions) stay i1.
    Type operandElem = elem;
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      if (!elementwiseOperandIsBool(name, i)) {
        operandElem = getTensorType(v).getElementType();
        break;
      }
    for (Type t : {elem, operandElem})
      if (!isa<FloatType, IntegerType>(t))
        return op->emitOpError("element type ")
               << t << " is not supported; use a float or integer type";
    if (!isa<FloatType>(operandElem) && isFloatOnlyElementwise(name))
      return op->emitOpError("is only defined for floating-point tensors, got ")
             << operandElem << "; cast the operands to a float type first";
    if (isa<FloatType>(operandElem) && isIntOnlyElementwise(name))
      return op->emitOpError(
                 "is only defined for integer and bool tensors, got ")
             << operandElem;

    bool isUnsigned = isUnsignedInteger(operandElem);
    Type storage = toSignlessType(elem);
    Type compute = computesInReducedType(name)
                       ? toSignlessType(operandElem)
                       : getComputeType(toSignlessType(operandElem));
    Value result = createElementwiseGeneric(
        rewriter, loc, operands, resTy.getShape(), elem,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          SmallVector<Value> xs;
          for (auto [i, a] : llvm::enumerate(args)) {
            Value v = scalarToSignless(b, nloc, a);
            if (!elementwiseOperandIsBool(name, i))
              v = convertScalar(b, nloc, v, compute, false, false);
            xs.push_back(v);
          }
          ScalarBuilder sb(b, nloc, op, compute, toSignlessType(operandElem),
                           isUnsigned);
          Value r = buildElementwiseFormula(op, sb, xs);
          r = convertScalar(b, nloc, r, storage, false, false);
          return scalarFromSignless(b, nloc, r, elem);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CastLowering : public OpConversionPattern<CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    for (Type t : {getTensorType(op.getInput()).getElementType(),
                   op.getType().getElementType()})
      if (!isa<FloatType, IntegerType>(t))
        return op.emitOpError("cannot convert element type ")
               << t << "; only float and integer types are supported";
    rewriter.replaceOp(op, castTensor(rewriter, op.getLoc(), adaptor.getInput(),
                                      op.getType().getElementType()));
    return success();
  }
};

struct ConstantLowering : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value)
      return op.emitOpError("constant value has no type");
    Type elem = op.getType().getElementType();
    if (!isUnsignedInteger(elem)) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
      return success();
    }
    // arith.constant is signless: build the bits as a signless constant and
    // reinterpret each element, as the elementwise lowering does for uint8.
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return op.emitOpError("unsigned constants must be dense");
    Location loc = op.getLoc();
    Value bits = arith::ConstantOp::create(rewriter, loc,
                                           dense.bitcast(toSignlessType(elem)));
    rewriter.replaceOp(
        op, createElementwiseGeneric(
                rewriter, loc, ValueRange{bits}, op.getType().getShape(), elem,
                [&](OpBuilder &b, Location nloc, ValueRange args) {
                  return scalarFromSignless(b, nloc, args[0], elem);
                }));
    return success();
  }
};

struct DropoutLowering : public OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getTrain() && op.getP().convertToDouble() != 0.0)
      return op.emitOpError(
          "in training mode is not supported (poptorch compiles inference "
          "only); call model.eval() before compiling");
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// ---- search-stats-random-special (round 2): frexp
//===----------------------------------------------------------------------===//

/// torch.frexp: x = mantissa * 2^exponent with |mantissa| in [0.5, 1), read
/// off the bits of x in f64 (exact for every float type; subnormals are
/// scaled by 2^54 first); 0, infinities and NaN give (x, 0).
struct FrexpLowering : public OpConversionPattern<FrexpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FrexpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto mantTy = op.getMantissa().getType();
    auto expTy = op.getExponent().getType();
    if (!isa<FloatType>(mantTy.getElementType()))
      return op.emitOpError("needs a floating-point input");
    auto parts = [&](OpBuilder &b, Location l, Value in,
                     bool wantExponent) -> Value {
      Type f64 = b.getF64Type(), i64 = b.getI64Type();
      ScalarBuilder d(b, l, op, f64, f64, false);
      ScalarBuilder ib(b, l, op, i64, i64, false);
      Value x = convertScalar(b, l, in, f64, false, false);
      Value sub = d.lt(d.abs(x), d.cst(0x1p-1022));
      Value y = d.select(sub, d.mul(x, d.cst(0x1p54)), x);
      Value bits = arith::BitcastOp::create(b, l, i64, y);
      Value field = ib.bitAnd(arith::ShRUIOp::create(b, l, bits, ib.cst(52)),
                              ib.cst(0x7ff));
      Value special =
          d.bitOr(d.eq(x, d.cst(0)), d.bitOr(d.isinf(x), d.isnan(x)));
      if (wantExponent) {
        Value e =
            ib.sub(field, ib.select(sub, ib.cst(1022 + 54), ib.cst(1022)));
        e = ib.select(special, ib.cst(0), e);
        return convertScalar(b, l, e, expTy.getElementType(), false, false);
      }
      auto bitsCst = [&](uint64_t v) -> Value {
        return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(int64_t(v)));
      };
      Value cleared = ib.bitAnd(bits, bitsCst(~(uint64_t(0x7ff) << 52)));
      Value m = arith::BitcastOp::create(
          b, l, f64, ib.bitOr(cleared, bitsCst(uint64_t(1022) << 52)));
      m = d.select(special, x, m);
      return convertScalar(b, l, m, mantTy.getElementType(), false, false);
    };
    Value input = adaptor.getInput();
    Value mant = createElementwiseGeneric(
        rewriter, loc, ValueRange{input}, mantTy.getShape(),
        mantTy.getElementType(), [&](OpBuilder &b, Location l, ValueRange a) {
          return parts(b, l, a[0], false);
        });
    Value exp = createElementwiseGeneric(
        rewriter, loc, ValueRange{input}, expTy.getShape(),
        expTy.getElementType(), [&](OpBuilder &b, Location l, ValueRange a) {
          return parts(b, l, a[0], true);
        });
    rewriter.replaceOp(op, {mant, exp});
    return success();
  }
};

} // namespace

void mlir::poptorch::populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering, CastLowering, ConstantLowering,
               DropoutLowering, FrexpLowering>(patterns.getContext());
}
