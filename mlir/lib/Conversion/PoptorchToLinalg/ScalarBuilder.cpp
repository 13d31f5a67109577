//===- ScalarBuilder.cpp - arithmetic and elementary scalar functions -----===//
//
// The ScalarBuilder methods that map to arith / math ops, plus the integer
// and float rules that eager PyTorch's CPU kernels define beyond them
// (Python-style floor division and modulo, saturating shifts, integer
// powers, accurate expm1 / log1p). Integer division never traps: a zero
// divisor gives -1 (quotients) or the dividend (remainders), where eager
// raises ZeroDivisionError.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/ScalarBuilder.h"
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::poptorch;

ScalarBuilder::ScalarBuilder(OpBuilder &b, Location loc, Operation *op,
                             Type type, Type storage, bool isUnsigned)
    : b(b), loc(loc), op(op), type(type), storage(storage),
      isUnsigned(isUnsigned || type.isInteger(1)) {}

bool ScalarBuilder::isFloat() const { return isa<FloatType>(type); }
bool ScalarBuilder::isBool() const { return type.isInteger(1); }

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

Value ScalarBuilder::add(Value x, Value y) {
  if (isFloat())
    return arith::AddFOp::create(b, loc, x, y);
  if (isBool()) // bool + bool is logical or in PyTorch
    return arith::OrIOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value ScalarBuilder::sub(Value x, Value y) {
  if (isFloat())
    return arith::SubFOp::create(b, loc, x, y);
  return arith::SubIOp::create(b, loc, x, y);
}

Value ScalarBuilder::mul(Value x, Value y) {
  if (isFloat())
    return arith::MulFOp::create(b, loc, x, y);
  if (isBool())
    return arith::AndIOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

/// Integer quotient and remainder truncated toward zero, without the traps
/// of x / 0 and INT_MIN / -1: a zero divisor gives quotient -1 and
/// remainder x; INT_MIN / -1 wraps to INT_MIN.
static std::pair<Value, Value> divRemInt(OpBuilder &b, Location loc, Value x,
                                         Value y, bool isUnsigned) {
  Type t = x.getType();
  Value zero = createScalar(b, loc, t, 0);
  Value one = createScalar(b, loc, t, 1);
  Value allOnes = arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(t, APInt::getAllOnes(t.getIntOrFloatBitWidth())));
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  if (isUnsigned) {
    Value safe = arith::SelectOp::create(b, loc, isZero, one, y);
    Value q = arith::DivUIOp::create(b, loc, x, safe);
    Value r = arith::RemUIOp::create(b, loc, x, safe);
    return {arith::SelectOp::create(b, loc, isZero, allOnes, q),
            arith::SelectOp::create(b, loc, isZero, x, r)};
  }
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, allOnes);
  Value special = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  Value safe = arith::SelectOp::create(b, loc, special, one, y);
  Value q = arith::DivSIOp::create(b, loc, x, safe);
  Value r = arith::RemSIOp::create(b, loc, x, safe);
  Value negX = arith::SubIOp::create(b, loc, zero, x);
  q = arith::SelectOp::create(b, loc, isMinusOne, negX, q);
  q = arith::SelectOp::create(b, loc, isZero, allOnes, q);
  r = arith::SelectOp::create(b, loc, isMinusOne, zero, r);
  r = arith::SelectOp::create(b, loc, isZero, x, r);
  return {q, r};
}

Value ScalarBuilder::div(Value x, Value y) {
  if (isFloat())
    return arith::DivFOp::create(b, loc, x, y);
  return divRemInt(b, loc, x, y, isUnsigned).first;
}

Value ScalarBuilder::floorDiv(Value x, Value y) {
  if (!isFloat()) {
    auto [q, r] = divRemInt(b, loc, x, y, isUnsigned);
    if (isUnsigned)
      return q;
    // Truncation rounds up when the signs differ and the division is
    // inexact (and the divisor is not 0, whose quotient stays -1).
    Value signsDiffer = ne(lt(x, cst(0)), lt(y, cst(0)));
    Value adjust = bitAnd(bitAnd(signsDiffer, ne(r, cst(0))), ne(y, cst(0)));
    return select(adjust, sub(q, cst(1)), q);
  }
  // Eager's div_floor_floating: the quotient of the exact remainder
  // (a - fmod(a, b)) / b, corrected to the floor and rounded to the nearest
  // integer; x / 0 is IEEE's; a zero quotient keeps the sign of a / b.
  Value mod = fmod(x, y);
  Value q = div(sub(x, mod), y);
  Value fix = bitAnd(ne(mod, cst(0)), ne(lt(y, cst(0)), lt(mod, cst(0))));
  q = select(fix, sub(q, cst(1)), q);
  Value fl = floor(q);
  fl = select(gt(sub(q, fl), cst(0.5)), add(fl, cst(1)), fl);
  Value trueDiv = div(x, y);
  Value zero = copysign(cst(0), trueDiv);
  Value r = select(ne(q, cst(0)), fl, zero);
  return select(eq(y, cst(0)), trueDiv, r);
}

Value ScalarBuilder::fmod(Value x, Value y) {
  if (isFloat())
    return arith::RemFOp::create(b, loc, x, y);
  return divRemInt(b, loc, x, y, isUnsigned).second;
}

Value ScalarBuilder::remainder(Value x, Value y) {
  Value r = fmod(x, y);
  if (!isFloat() && isUnsigned)
    return r;
  Value fix = bitAnd(ne(r, cst(0)), ne(lt(r, cst(0)), lt(y, cst(0))));
  return select(fix, add(r, y), r);
}

Value ScalarBuilder::max(Value x, Value y) {
  if (isFloat())
    return arith::MaximumFOp::create(b, loc, x, y);
  // A bool is 0 or 1, not 0 or -1 as a signed i1.
  if (isUnsigned || x.getType().isInteger(1))
    return arith::MaxUIOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value ScalarBuilder::min(Value x, Value y) {
  if (isFloat())
    return arith::MinimumFOp::create(b, loc, x, y);
  // A bool is 0 or 1, not 0 or -1 as a signed i1.
  if (isUnsigned || x.getType().isInteger(1))
    return arith::MinUIOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}

Value ScalarBuilder::fmax(Value x, Value y) {
  if (isFloat())
    return arith::MaxNumFOp::create(b, loc, x, y);
  return max(x, y);
}

Value ScalarBuilder::fmin(Value x, Value y) {
  if (isFloat())
    return arith::MinNumFOp::create(b, loc, x, y);
  return min(x, y);
}

Value ScalarBuilder::neg(Value x) {
  if (isFloat())
    return arith::NegFOp::create(b, loc, x);
  return arith::SubIOp::create(b, loc, cst(0.0), x);
}

Value ScalarBuilder::abs(Value x) {
  if (isFloat())
    return math::AbsFOp::create(b, loc, x);
  if (isUnsigned)
    return x;
  // Not math.absi: its LLVM lowering rejects n-D vectors. abs(INT_MIN)
  // wraps to INT_MIN, as in eager.
  return select(lt(x, cst(0)), neg(x), x);
}

Value ScalarBuilder::sign(Value x) {
  if (isBool())
    return x;
  Value pos = select(gt(x, cst(0)), cst(1), cst(0));
  return select(lt(x, cst(0)), cst(-1), pos);
}

Value ScalarBuilder::pow(Value x, Value y) {
  if (isFloat())
    return math::PowFOp::create(b, loc, x, y);
  // Exponentiation by squaring over every bit of the exponent: wraps like
  // eager's loop, and has no data-dependent control flow (vectorizes).
  unsigned width = type.getIntOrFloatBitWidth();
  Value result = cst(1);
  Value base = x;
  Value oneBit = createScalar(b, loc, type, 1);
  for (unsigned i = 0; i < width; ++i) {
    Value shifted =
        i == 0
            ? y
            : arith::ShRUIOp::create(b, loc, y, createScalar(b, loc, type, i));
    Value bit = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, shifted, oneBit), cst(0));
    result = select(bit, mul(result, base), result);
    if (i + 1 < width)
      base = mul(base, base);
  }
  if (isUnsigned)
    return result;
  // Negative exponents: 1 ** y = 1, (-1) ** y = +-1, anything else 0.
  Value odd = ne(bitAnd(y, cst(1)), cst(0));
  Value minusOne = select(odd, cst(-1), cst(1));
  Value negative =
      select(eq(x, cst(1)), cst(1), select(eq(x, cst(-1)), minusOne, cst(0)));
  return select(lt(y, cst(0)), negative, result);
}

Value ScalarBuilder::gcd(Value x, Value y) {
  // Euclid's algorithm on |x|, |y|: a loop, so ops using it stay scalar.
  Value a0 = abs(x), b0 = abs(y);
  Type t = type;
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{t, t}, ValueRange{a0, b0},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value cond =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ne, args[0],
                                  createScalar(nb, nloc, t, 0));
        scf::ConditionOp::create(nb, nloc, cond, args);
      },
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        auto [q, r] = divRemInt(nb, nloc, args[1], args[0], isUnsigned);
        (void)q;
        scf::YieldOp::create(nb, nloc, ValueRange{r, args[0]});
      });
  return loop.getResult(1);
}

Value ScalarBuilder::lcm(Value x, Value y) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (!isUnsigned && width < 32) {
    // Eager's |x / gcd * y| is evaluated in C++'s int: the product of int8
    // or int16 values wraps only when the result is narrowed.
    Type i32 = b.getI32Type();
    ScalarBuilder wide(b, loc, op, i32, storage, false);
    Value r = wide.lcm(convertScalar(b, loc, x, i32, false, false),
                       convertScalar(b, loc, y, i32, false, false));
    return convertScalar(b, loc, r, type, false, false);
  }
  Value g = gcd(x, y);
  Value isZero = eq(g, cst(0));
  Value safe = select(isZero, cst(1), g);
  Value l = abs(mul(div(x, safe), y));
  return select(isZero, cst(0), l);
}

//===----------------------------------------------------------------------===//
// Comparisons and predicates
//===----------------------------------------------------------------------===//

Value ScalarBuilder::cmp(arith::CmpFPredicate f, arith::CmpIPredicate si,
                         arith::CmpIPredicate ui, Value x, Value y) {
  // By the values' type: formulas may compare i1 results of comparisons.
  if (isa<FloatType>(x.getType()))
    return arith::CmpFOp::create(b, loc, f, x, y);
  bool u = (isUnsigned && x.getType() == type) || x.getType().isInteger(1);
  return arith::CmpIOp::create(b, loc, u ? ui : si, x, y);
}

Value ScalarBuilder::eq(Value x, Value y) {
  return cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
             arith::CmpIPredicate::eq, x, y);
}
Value ScalarBuilder::ne(Value x, Value y) {
  return cmp(arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne,
             arith::CmpIPredicate::ne, x, y);
}
Value ScalarBuilder::lt(Value x, Value y) {
  return cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
             arith::CmpIPredicate::ult, x, y);
}
Value ScalarBuilder::le(Value x, Value y) {
  return cmp(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
             arith::CmpIPredicate::ule, x, y);
}
Value ScalarBuilder::gt(Value x, Value y) {
  return cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
             arith::CmpIPredicate::ugt, x, y);
}
Value ScalarBuilder::ge(Value x, Value y) {
  return cmp(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
             arith::CmpIPredicate::uge, x, y);
}

Value ScalarBuilder::isnan(Value x) {
  if (!isFloat())
    return boolean(false);
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
}

Value ScalarBuilder::isinf(Value x) {
  if (!isFloat())
    return boolean(false);
  return eq(abs(x), cst(std::numeric_limits<double>::infinity()));
}

Value ScalarBuilder::isposinf(Value x) {
  if (!isFloat())
    return boolean(false);
  return eq(x, cst(std::numeric_limits<double>::infinity()));
}

Value ScalarBuilder::isneginf(Value x) {
  if (!isFloat())
    return boolean(false);
  return eq(x, cst(-std::numeric_limits<double>::infinity()));
}

Value ScalarBuilder::signbit(Value x) {
  if (!isFloat())
    return isUnsigned ? boolean(false) : lt(x, cst(0));
  unsigned width = type.getIntOrFloatBitWidth();
  Type bits = b.getIntegerType(width);
  Value i = arith::BitcastOp::create(b, loc, bits, x);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                               createScalar(b, loc, bits, 0));
}

Value ScalarBuilder::select(Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}

//===----------------------------------------------------------------------===//
// Bit operations
//===----------------------------------------------------------------------===//

Value ScalarBuilder::bitAnd(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value ScalarBuilder::bitOr(Value x, Value y) {
  return arith::OrIOp::create(b, loc, x, y);
}
Value ScalarBuilder::bitXor(Value x, Value y) {
  return arith::XOrIOp::create(b, loc, x, y);
}
Value ScalarBuilder::bitNot(Value x) {
  unsigned width = x.getType().getIntOrFloatBitWidth();
  Value ones = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(x.getType(), APInt::getAllOnes(width)));
  return arith::XOrIOp::create(b, loc, x, ones);
}

Value ScalarBuilder::shl(Value x, Value y) {
  // A negative amount is a huge unsigned one: both give 0.
  unsigned width = type.getIntOrFloatBitWidth();
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, y,
                                        createScalar(b, loc, type, width));
  Value safe = select(inRange, y, cst(0));
  return select(inRange, arith::ShLIOp::create(b, loc, x, safe), cst(0));
}

Value ScalarBuilder::shr(Value x, Value y) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (isUnsigned) {
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, y,
                                          createScalar(b, loc, type, width));
    Value safe = select(inRange, y, cst(0));
    return select(inRange, arith::ShRUIOp::create(b, loc, x, safe), cst(0));
  }
  // Out-of-range (or negative) amounts shift by width - 1: the sign fill.
  Value last = createScalar(b, loc, type, width - 1);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, y, last);
  return arith::ShRSIOp::create(b, loc, x, select(inRange, y, last));
}

//===----------------------------------------------------------------------===//
// Rounding
//===----------------------------------------------------------------------===//

Value ScalarBuilder::floor(Value x) {
  return isFloat() ? Value(math::FloorOp::create(b, loc, x)) : x;
}
Value ScalarBuilder::ceil(Value x) {
  return isFloat() ? Value(math::CeilOp::create(b, loc, x)) : x;
}
Value ScalarBuilder::trunc(Value x) {
  return isFloat() ? Value(math::TruncOp::create(b, loc, x)) : x;
}
Value ScalarBuilder::round(Value x) {
  return isFloat() ? Value(math::RoundEvenOp::create(b, loc, x)) : x;
}

//===----------------------------------------------------------------------===//
// Elementary functions
//===----------------------------------------------------------------------===//

Value ScalarBuilder::exp(Value x) { return math::ExpOp::create(b, loc, x); }
Value ScalarBuilder::exp2(Value x) { return math::Exp2Op::create(b, loc, x); }
Value ScalarBuilder::log(Value x) { return math::LogOp::create(b, loc, x); }
Value ScalarBuilder::log2(Value x) { return math::Log2Op::create(b, loc, x); }
Value ScalarBuilder::log10(Value x) { return math::Log10Op::create(b, loc, x); }
Value ScalarBuilder::sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
Value ScalarBuilder::rsqrt(Value x) { return math::RsqrtOp::create(b, loc, x); }
Value ScalarBuilder::sin(Value x) { return math::SinOp::create(b, loc, x); }
Value ScalarBuilder::cos(Value x) { return math::CosOp::create(b, loc, x); }
Value ScalarBuilder::tan(Value x) { return math::TanOp::create(b, loc, x); }
Value ScalarBuilder::asin(Value x) { return math::AsinOp::create(b, loc, x); }
Value ScalarBuilder::acos(Value x) { return math::AcosOp::create(b, loc, x); }
Value ScalarBuilder::atan(Value x) { return math::AtanOp::create(b, loc, x); }
Value ScalarBuilder::atan2(Value y, Value x) {
  return math::Atan2Op::create(b, loc, y, x);
}
Value ScalarBuilder::sinh(Value x) { return math::SinhOp::create(b, loc, x); }
Value ScalarBuilder::cosh(Value x) { return math::CoshOp::create(b, loc, x); }
Value ScalarBuilder::tanh(Value x) { return math::TanhOp::create(b, loc, x); }
Value ScalarBuilder::asinh(Value x) { return math::AsinhOp::create(b, loc, x); }
Value ScalarBuilder::acosh(Value x) { return math::AcoshOp::create(b, loc, x); }
Value ScalarBuilder::atanh(Value x) { return math::AtanhOp::create(b, loc, x); }
Value ScalarBuilder::erf(Value x) { return math::ErfOp::create(b, loc, x); }
Value ScalarBuilder::erfc(Value x) { return math::ErfcOp::create(b, loc, x); }
Value ScalarBuilder::copysign(Value x, Value y) {
  return math::CopySignOp::create(b, loc, x, y);
}

// The math dialect's expm1 / log1p lower to exp(x) - 1 and log(1 + x), which
// lose every digit near 0; these are Kahan's and Goldberg's corrections.
Value ScalarBuilder::expm1(Value x) {
  Value u = exp(x);
  Value um1 = sub(u, cst(1));
  Value scaled = div(mul(um1, x), log(u));
  Value r = select(eq(um1, cst(-1)), cst(-1), scaled);
  r = select(eq(u, cst(1)), x, r);
  return select(isposinf(u), u, r);
}

Value ScalarBuilder::log1p(Value x) {
  Value u = add(cst(1), x);
  Value d = sub(u, cst(1));
  Value r = mul(log(u), div(x, d));
  r = select(eq(d, cst(0)), x, r);
  return select(isposinf(u), u, r);
}

Value ScalarBuilder::hypot(Value x, Value y) {
  return callLibm("hypot", {x, y});
}

Type ScalarBuilder::storageBitsType() const {
  return IntegerType::get(b.getContext(), storage.getIntOrFloatBitWidth());
}

Value ScalarBuilder::nextafter(Value x, Value y) {
  // On the bits of the tensor's own type: one step away from or toward zero
  // along the sign-magnitude encoding.
  Value xs = convertScalar(b, loc, x, storage, false, false);
  Type bits = storageBitsType();
  unsigned width = bits.getIntOrFloatBitWidth();
  Value xi = arith::BitcastOp::create(b, loc, bits, xs);
  Value one = createScalar(b, loc, bits, 1);
  Value away = eq(gt(y, x), gt(x, cst(0)));
  Value stepped = select(away, arith::AddIOp::create(b, loc, xi, one),
                         arith::SubIOp::create(b, loc, xi, one));
  // From zero: the smallest subnormal with y's sign.
  Value ySign = arith::AndIOp::create(
      b, loc,
      arith::BitcastOp::create(b, loc, bits,
                               convertScalar(b, loc, y, storage, false, false)),
      arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(bits, APInt::getSignMask(width))));
  Value fromZero = arith::OrIOp::create(b, loc, ySign, one);
  Value r = select(eq(x, cst(0)), fromZero, stepped);
  Value rf = arith::BitcastOp::create(b, loc, storage, r);
  Value res = convertScalar(b, loc, rf, type, false, false);
  res = select(eq(x, y), y, res);
  Value anyNan = bitOr(isnan(x), isnan(y));
  return select(anyNan, add(x, y), res);
}

Value ScalarBuilder::ldexp(Value x, Value y) { return mul(x, exp2(y)); }

Value ScalarBuilder::callLibm(StringRef name, ValueRange args) {
  if (type.isF16() || type.isBF16()) {
    ScalarBuilder wide(b, loc, op, b.getF32Type(), storage, false);
    SmallVector<Value> wideArgs;
    for (Value a : args)
      wideArgs.push_back(
          convertScalar(b, loc, a, b.getF32Type(), false, false));
    return convertScalar(b, loc, wide.callLibm(name, wideArgs), type, false,
                         false);
  }
  std::string symbol = name.str();
  if (type.isF32())
    symbol += "f";
  auto module = op->getParentOfType<ModuleOp>();
  auto fn = module.lookupSymbol<func::FuncOp>(symbol);
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<Type> inputs(args.size(), type);
    fn = func::FuncOp::create(b, loc, symbol,
                              b.getFunctionType(inputs, TypeRange{type}));
    fn.setPrivate();
  }
  return func::CallOp::create(b, loc, fn, args).getResult(0);
}

//===----------------------------------------------------------------------===//
// Constants and attributes
//===----------------------------------------------------------------------===//

Value ScalarBuilder::cst(double v) { return createScalar(b, loc, type, v); }

Value ScalarBuilder::boolean(bool v) {
  return createScalar(b, loc, b.getI1Type(), v ? 1 : 0);
}

Value ScalarBuilder::maxFinite() {
  if (auto ft = dyn_cast<FloatType>(storage)) {
    APFloat m = APFloat::getLargest(ft.getFloatSemantics());
    bool lossy;
    m.convert(llvm::APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
              &lossy);
    return cst(m.convertToDouble());
  }
  unsigned width = type.getIntOrFloatBitWidth();
  APInt m =
      isUnsigned ? APInt::getMaxValue(width) : APInt::getSignedMaxValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, m));
}

Value ScalarBuilder::lowestFinite() {
  if (isFloat())
    return neg(maxFinite());
  unsigned width = type.getIntOrFloatBitWidth();
  APInt m =
      isUnsigned ? APInt::getMinValue(width) : APInt::getSignedMinValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, m));
}

double ScalarBuilder::attrF(StringRef name) {
  return cast<FloatAttr>(op->getAttr(name)).getValueAsDouble();
}

int64_t ScalarBuilder::attrI(StringRef name) {
  return cast<IntegerAttr>(op->getAttr(name)).getInt();
}

std::string ScalarBuilder::attrS(StringRef name) {
  return cast<StringAttr>(op->getAttr(name)).getValue().str();
}

bool ScalarBuilder::hasAttr(StringRef name) {
  return static_cast<bool>(op->getAttr(name));
}
