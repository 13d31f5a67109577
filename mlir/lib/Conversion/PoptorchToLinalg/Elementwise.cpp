//===- Elementwise.cpp - elementwise ops, casts and constants to linalg ---===//
//
// Every op with the elementwise trait goes through ONE pattern: a
// linalg.generic with numpy-broadcasting indexing maps whose body is the op's
// scalar formula, generated from the op table into ElementwiseFormulas.inc
// and written against the ScalarBuilder below. Also: cast, constant, dropout.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchElementwiseSignatures.h.inc"

#include <string>

using namespace mlir;
using namespace mlir::poptorch;

namespace {

/// Builds scalar arithmetic in a linalg body for one element type, picking the
/// float or integer arith/math op. f16/bf16 formulas are evaluated in f32 by
/// the caller, so `type` is f32, f64 or a signless integer here. Comparisons
/// return i1; the bitwise helpers work on any integer width, i1 included.
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
  // Comparisons (i1 results). Ordered float predicates are false with a NaN
  // operand; `ne` is unordered (true with NaN), as in PyTorch.
  Value eq(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
               arith::CmpIPredicate::eq, x, y);
  }
  Value ne(Value x, Value y) {
    return cmp(arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne,
               arith::CmpIPredicate::ne, x, y);
  }
  Value lt(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
               arith::CmpIPredicate::ult, x, y);
  }
  Value le(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
               arith::CmpIPredicate::ule, x, y);
  }
  Value gt(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
               arith::CmpIPredicate::ugt, x, y);
  }
  Value ge(Value x, Value y) {
    return cmp(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
               arith::CmpIPredicate::uge, x, y);
  }
  /// `c ? x : y` for an i1 `c`.
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  // Bitwise ops on integers of the values' own width (logical for i1).
  Value bitAnd(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bitOr(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value bitXor(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  Value bitNot(Value x) {
    unsigned width = x.getType().getIntOrFloatBitWidth();
    Value ones = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(x.getType(), APInt::getAllOnes(width)));
    return arith::XOrIOp::create(b, loc, x, ones);
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
  Value cmp(arith::CmpFPredicate f, arith::CmpIPredicate si,
            arith::CmpIPredicate ui, Value x, Value y) {
    // By the values' type: formulas may compare i1 results of comparisons.
    if (isa<FloatType>(x.getType()))
      return arith::CmpFOp::create(b, loc, f, x, y);
    bool u = isUnsigned || x.getType().isInteger(1);
    return arith::CmpIOp::create(b, loc, u ? ui : si, x, y);
  }
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
    Type compute = getComputeType(toSignlessType(operandElem));
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

} // namespace

void mlir::poptorch::populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering, CastLowering, ConstantLowering,
               DropoutLowering>(patterns.getContext());
}
