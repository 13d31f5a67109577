//===- Elementwise.cpp - elementwise ops, casts and constants to linalg ---===//
//
// Every op with the elementwise trait goes through ONE pattern: a
// linalg.generic with numpy-broadcasting indexing maps whose body is the op's
// scalar formula, generated from the op table into ElementwiseFormulas.inc
// and written against the ScalarBuilder below. Also: cast, constant, dropout.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include <string>

using namespace mlir;
using namespace mlir::poptorch;

namespace {

/// Builds scalar arithmetic in a linalg body for one element type, picking the
/// float or integer arith/math op. f16/bf16 formulas are evaluated in f32 by
/// the caller, so `type` is f32, f64 or a signless integer here.
class ScalarBuilder {
public:
  ScalarBuilder(OpBuilder &b, Location loc, Operation *op, Type type,
                bool isUnsigned)
      : b(b), loc(loc), op(op), type(type),
        isUnsigned(isUnsigned || type.isInteger(1)) {}

  Value add(Value x, Value y) {
    if (isFloat())
      return arith::AddFOp::create(b, loc, x, y);
    if (isBool()) // bool + bool is logical or in PyTorch
      return arith::OrIOp::create(b, loc, x, y);
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) {
    if (isFloat())
      return arith::SubFOp::create(b, loc, x, y);
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (isFloat())
      return arith::MulFOp::create(b, loc, x, y);
    if (isBool())
      return arith::AndIOp::create(b, loc, x, y);
    return arith::MulIOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) {
    if (isFloat())
      return arith::DivFOp::create(b, loc, x, y);
    if (isUnsigned)
      return arith::DivUIOp::create(b, loc, x, y);
    return arith::DivSIOp::create(b, loc, x, y);
  }
  /// NaN-propagating, like torch.maximum / relu.
  Value max(Value x, Value y) {
    if (isFloat())
      return arith::MaximumFOp::create(b, loc, x, y);
    if (isUnsigned)
      return arith::MaxUIOp::create(b, loc, x, y);
    return arith::MaxSIOp::create(b, loc, x, y);
  }
  Value min(Value x, Value y) {
    if (isFloat())
      return arith::MinimumFOp::create(b, loc, x, y);
    if (isUnsigned)
      return arith::MinUIOp::create(b, loc, x, y);
    return arith::MinSIOp::create(b, loc, x, y);
  }
  Value neg(Value x) {
    if (isFloat())
      return arith::NegFOp::create(b, loc, x);
    return arith::SubIOp::create(b, loc, cst(0.0), x);
  }
  Value abs(Value x) {
    if (isFloat())
      return math::AbsFOp::create(b, loc, x);
    if (isUnsigned)
      return x;
    return math::AbsIOp::create(b, loc, x);
  }
  // Float-only functions: the pattern rejects integer types for the ops that
  // use them (isFloatOnlyElementwise).
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value log(Value x) { return math::LogOp::create(b, loc, x); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value rsqrt(Value x) { return math::RsqrtOp::create(b, loc, x); }
  Value erf(Value x) { return math::ErfOp::create(b, loc, x); }
  Value tanh(Value x) { return math::TanhOp::create(b, loc, x); }
  Value pow(Value x, Value y) { return math::PowFOp::create(b, loc, x, y); }

  Value cst(double v) { return createScalar(b, loc, type, v); }

  double attrF(StringRef name) {
    if (auto a = dyn_cast_or_null<FloatAttr>(op->getAttr(name)))
      return a.getValueAsDouble();
    return 1.0; // the only float attribute (alpha) defaults to 1
  }
  std::string attrS(StringRef name) {
    if (auto a = dyn_cast_or_null<StringAttr>(op->getAttr(name)))
      return a.getValue().str();
    return "none"; // the only string attribute (approximate) defaults to none
  }

private:
  bool isFloat() const { return isa<FloatType>(type); }
  bool isBool() const { return type.isInteger(1); }

  OpBuilder &b;
  Location loc;
  Operation *op;
  Type type;
  bool isUnsigned;
};

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
    if (!isa<FloatType, IntegerType>(elem))
      return op->emitOpError("element type ")
             << elem << " is not supported; use a float or integer type";
    if (!isa<FloatType>(elem) && isFloatOnlyElementwise(name))
      return op->emitOpError("is only defined for floating-point tensors, got ")
             << elem << "; cast the operands to a float type first";

    bool isUnsigned = isUnsignedInteger(elem);
    Type storage = toSignlessType(elem);
    Type compute = getComputeType(storage);
    Value result = createElementwiseGeneric(
        rewriter, loc, operands, resTy.getShape(), elem,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          SmallVector<Value> xs;
          for (Value a : args)
            xs.push_back(convertScalar(b, nloc, scalarToSignless(b, nloc, a),
                                       compute, false, false));
          ScalarBuilder sb(b, nloc, op, compute, isUnsigned);
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
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
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

} // namespace

void mlir::poptorch::populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering, CastLowering, ConstantLowering,
               DropoutLowering>(patterns.getContext());
}
