//===- ScalarBuilder.h - scalar formulas of the elementwise ops ---*- C++
//-*-===//
//
// The vocabulary of the op table's scalar formulas (optable/ops.py): each
// method builds one scalar function inside a linalg body for the compute
// element type of the op, with PyTorch's semantics for that type (NaN
// propagation, integer division and remainder with Python's sign rules,
// shifts that saturate like eager's kernels, ...).
//
// ScalarBuilder.cpp holds arithmetic, comparisons, bit operations and the
// elementary functions; SpecialFunctions.cpp the special functions that the
// math dialect lacks (digamma, erfinv, Bessel functions, ...), written as
// straight-line arith so that they vectorize.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_CONVERSION_POPTORCHTOLINALG_SCALARBUILDER_H
#define POPTORCH_CONVERSION_POPTORCHTOLINALG_SCALARBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::poptorch {

/// Builds scalar arithmetic in a linalg body for one element type, picking
/// the float or integer arith/math op. f16/bf16 formulas are evaluated in f32
/// (`type`; `storage` is the tensor's own element type, for its limits and
/// bit patterns), so `type` is f32, f64 or a signless integer. Comparisons
/// return i1; the bitwise helpers work on any integer width, i1 included.
/// Methods documented "float" are only reached for float types: the lowering
/// rejects integer operands of the ops marked `float_only` in the table.
class ScalarBuilder {
public:
  ScalarBuilder(OpBuilder &b, Location loc, Operation *op, Type type,
                Type storage, bool isUnsigned);

  //===--------------------------------------------------------------------===//
  // Arithmetic (any type; bool arithmetic is logical)
  //===--------------------------------------------------------------------===//
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  /// True division for floats, truncating division for integers.
  Value div(Value x, Value y);
  /// Division rounded toward negative infinity (torch.floor_divide).
  Value floorDiv(Value x, Value y);
  /// C's fmod: the remainder has the sign of the dividend (torch.fmod).
  Value fmod(Value x, Value y);
  /// Python's modulo: the remainder has the sign of the divisor
  /// (torch.remainder).
  Value remainder(Value x, Value y);
  /// NaN-propagating, like torch.maximum / relu.
  Value max(Value x, Value y);
  Value min(Value x, Value y);
  /// NaN-ignoring (C's fmax / fmin), like torch.fmax / torch.fmin.
  Value fmax(Value x, Value y);
  Value fmin(Value x, Value y);
  Value neg(Value x);
  Value abs(Value x);
  /// -1, 0 or 1 (0 for NaN), in the operand type.
  Value sign(Value x);
  /// x ** y: C's pow for floats; for integers exponentiation by squaring
  /// with wrap-around, and for negative exponents eager's rule (1 ** y = 1,
  /// (-1) ** y = +-1, anything else 0).
  Value pow(Value x, Value y);
  /// Greatest common divisor / least common multiple of integers (always
  /// non-negative).
  Value gcd(Value x, Value y);
  Value lcm(Value x, Value y);

  //===--------------------------------------------------------------------===//
  // Comparisons (i1 results). Ordered float predicates are false with a NaN
  // operand; `ne` is unordered (true with NaN), as in PyTorch.
  //===--------------------------------------------------------------------===//
  Value eq(Value x, Value y);
  Value ne(Value x, Value y);
  Value lt(Value x, Value y);
  Value le(Value x, Value y);
  Value gt(Value x, Value y);
  Value ge(Value x, Value y);
  /// Predicates of floats (false for integers).
  Value isnan(Value x);
  Value isinf(Value x);
  Value isposinf(Value x);
  Value isneginf(Value x);
  /// The sign bit is set (-0.0 and negative NaNs included; x < 0 for
  /// integers).
  Value signbit(Value x);
  /// `c ? x : y` for an i1 `c`.
  Value select(Value c, Value x, Value y);

  //===--------------------------------------------------------------------===//
  // Bit operations on integers of the values' own width (logical for i1)
  //===--------------------------------------------------------------------===//
  Value bitAnd(Value x, Value y);
  Value bitOr(Value x, Value y);
  Value bitXor(Value x, Value y);
  Value bitNot(Value x);
  /// x << y; 0 when y is negative or at least the bit width (eager's rule).
  Value shl(Value x, Value y);
  /// x >> y, arithmetic for signed types; a shift by a negative amount or by
  /// the bit width or more fills with the sign bit (0 for unsigned types).
  Value shr(Value x, Value y);

  //===--------------------------------------------------------------------===//
  // Rounding (the identity on integers)
  //===--------------------------------------------------------------------===//
  Value floor(Value x);
  Value ceil(Value x);
  Value trunc(Value x);
  /// Round half to even (torch.round, C's nearbyint).
  Value round(Value x);

  //===--------------------------------------------------------------------===//
  // Elementary functions (float)
  //===--------------------------------------------------------------------===//
  Value exp(Value x);
  Value exp2(Value x);
  /// exp(x) - 1 without cancellation near 0.
  Value expm1(Value x);
  Value log(Value x);
  Value log2(Value x);
  Value log10(Value x);
  /// log(1 + x) without cancellation near 0.
  Value log1p(Value x);
  Value sqrt(Value x);
  Value rsqrt(Value x);
  Value sin(Value x);
  Value cos(Value x);
  Value tan(Value x);
  Value asin(Value x);
  Value acos(Value x);
  Value atan(Value x);
  Value atan2(Value y, Value x);
  Value sinh(Value x);
  Value cosh(Value x);
  Value tanh(Value x);
  Value asinh(Value x);
  Value acosh(Value x);
  Value atanh(Value x);
  Value erf(Value x);
  Value erfc(Value x);
  Value copysign(Value x, Value y);
  /// sqrt(x^2 + y^2) without overflow (C's hypot).
  Value hypot(Value x, Value y);
  /// The next representable value of the tensor's own type after x toward
  /// y (computed on the storage type's bits, f16/bf16 included).
  Value nextafter(Value x, Value y);
  /// x * 2^y (y integral).
  Value ldexp(Value x, Value y);

  //===--------------------------------------------------------------------===//
  // Special functions (float; SpecialFunctions.cpp)
  //===--------------------------------------------------------------------===//
  /// log|Gamma(x)| (C's lgamma).
  Value lgamma(Value x);
  /// d/dx log Gamma(x).
  Value digamma(Value x);
  /// d^2/dx^2 log Gamma(x).
  Value trigamma(Value x);
  /// Inverse error function.
  Value erfinv(Value x);
  /// Modified Bessel functions of the first kind of order 0 and 1, and their
  /// exponentially scaled forms (exp(-|x|) I(x)).
  Value i0(Value x);
  Value i0e(Value x);
  Value i1(Value x);
  Value i1e(Value x);
  /// The inverse of the standard normal CDF.
  Value ndtri(Value x);
  /// Hurwitz zeta function zeta(x, q).
  Value zeta(Value x, Value q);
  /// Multivariate log-gamma of dimension p.
  Value mvlgamma(Value x, int64_t p);
  /// The orthogonal polynomial `kind` of degree n (a float operand, truncated
  /// to an integer like eager): chebyshev_{t,u,v,w},
  /// shifted_chebyshev_{t,u,v,w}, hermite_h, hermite_he, laguerre_l,
  /// legendre_p. The three-term recurrence runs in a loop bounded by n, with
  /// eager's closed forms and special cases.
  Value orthogonalPolynomial(StringRef kind, Value x, Value n);
  /// Scaled complementary error function exp(x^2) erfc(x) (computed in f64).
  Value erfcx(Value x);
  /// log of the standard normal CDF (computed in f64).
  Value logNdtr(Value x);

  //===--------------------------------------------------------------------===//
  // Constants and attributes
  //===--------------------------------------------------------------------===//
  /// `v` in the compute type (truncated toward zero for integers).
  Value cst(double v);
  /// i1 constants.
  Value boolean(bool v);
  /// The largest finite value of the tensor's element type / its lowest.
  Value maxFinite();
  Value lowestFinite();

  /// Attributes of the op (the op table's `attrs`; defaults are filled in
  /// when the op is built).
  double attrF(StringRef name);
  int64_t attrI(StringRef name);
  std::string attrS(StringRef name);
  bool hasAttr(StringRef name);

  Type getType() const { return type; }
  bool isFloat() const;
  bool isBool() const;
  bool isUnsignedInt() const { return isUnsigned; }

private:
  Value cmp(arith::CmpFPredicate f, arith::CmpIPredicate si,
            arith::CmpIPredicate ui, Value x, Value y);
  /// A call to the C math library function `name` (with the `f` suffix for
  /// f32), declared in the module on first use.
  Value callLibm(StringRef name, ValueRange args);
  /// Chebyshev series sum_i c_i T_i(x/2) as evaluated by Cephes' chbevl.
  Value chebyshev(Value x, ArrayRef<double> coefficients);
  /// Polynomial c_0 x^n + ... + c_n (coefficients from the highest power).
  Value polynomial(Value x, ArrayRef<double> coefficients);
  /// The signless integer type of the storage type's width.
  Type storageBitsType() const;

  OpBuilder &b;
  Location loc;
  Operation *op;
  Type type;
  Type storage;
  bool isUnsigned;
};

} // namespace mlir::poptorch

#endif // POPTORCH_CONVERSION_POPTORCHTOLINALG_SCALARBUILDER_H
