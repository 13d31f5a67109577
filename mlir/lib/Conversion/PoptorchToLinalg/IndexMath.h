//===- IndexMath.h - index arithmetic for gathers and scatters -----------===//
//
// Short names for the `index` arithmetic that the data-movement, indexing
// and resampling lowerings compute source positions with (signed, since
// padding and interpolation positions go below zero before clamping).
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_CONVERSION_POPTORCHTOLINALG_INDEXMATH_H
#define POPTORCH_CONVERSION_POPTORCHTOLINALG_INDEXMATH_H

#include "Conversion/PoptorchToLinalg/Patterns.h"

namespace mlir::poptorch {

struct IndexMath {
  OpBuilder &b;
  Location loc;

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, c(y)) : x; }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) { return y == 1 ? x : mul(x, c(y)); }
  Value div(Value x, int64_t y) {
    return y == 1 ? x : (Value)arith::DivSIOp::create(b, loc, x, c(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemSIOp::create(b, loc, x, c(y));
  }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value ge(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  Value land(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  /// x clamped into [0, size - 1].
  Value clamp(Value x, int64_t size) {
    return max(min(x, c(std::max<int64_t>(size - 1, 0))), c(0));
  }
  /// x in [0, size).
  Value inRange(Value x, int64_t size) {
    return land(ge(x, c(0)), lt(x, c(size)));
  }
  /// `value` where `cond`, else the zero of its type (any element type).
  Value selectOrZero(Value cond, Value value) {
    Type t = value.getType();
    Value v = scalarToSignless(b, loc, value);
    Value zero = createScalar(b, loc, v.getType(), 0.0);
    return scalarFromSignless(b, loc, select(cond, v, zero), t);
  }
};

} // namespace mlir::poptorch

#endif // POPTORCH_CONVERSION_POPTORCHTOLINALG_INDEXMATH_H
