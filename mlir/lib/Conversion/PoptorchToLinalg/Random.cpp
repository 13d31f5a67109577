//===- Random.cpp - counter-based random numbers -------------------------===//
//
// Every random op becomes one all-parallel linalg.generic: element i (the
// row-major index) draws 64 bits as splitmix64(key + (i + 1) * golden) with
// key = splitmix64(seed ^ splitmix64(calls * K1 + stream * K2)), where
// [seed, calls] is the program's random state argument and `stream` numbers
// the random ops of the program. The bits are a function of those numbers
// only: the same seed gives the same numbers in every process, each call
// (calls advances) and each op (stream) gets fresh ones, and the body
// vectorizes like any elementwise op. Not torch's CPU generator: the values
// differ from eager, their distributions do not.
//
//   uniform     a + u * (b - a), u = top 53 (f64) or 24 bits / 2^n in [0, 1)
//   normal      a + b * sqrt(-2 ln u1) cos(2 pi u2) (Box-Muller on the two
//               32-bit halves, u1 in (0, 1])
//   exponential -ln(1 - u) / a
//   bernoulli   u < p ? 1 : 0
//   int         a + bits mod (b - a)
//   cauchy      a + b tan(pi (u - 1/2))
//   log_normal  exp(normal(a, b))
//   geometric   max(ceil(ln(1 - u) / ln(1 - a)), 1)
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include <cmath>

using namespace mlir;
using namespace mlir::poptorch;

namespace {

enum class Distribution {
  Uniform,
  Normal,
  Exponential,
  Bernoulli,
  Int,
  Cauchy,
  LogNormal,
  Geometric
};

/// splitmix64's finaliser on an i64 value.
static Value mix64(OpBuilder &b, Location loc, Value x) {
  auto c = [&](uint64_t v) {
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(b.getI64Type(), v))
        .getResult();
  };
  auto xorShift = [&](Value v, int s) {
    return arith::XOrIOp::create(b, loc, v,
                                 arith::ShRUIOp::create(b, loc, v, c(s)))
        .getResult();
  };
  x = xorShift(x, 30);
  x = arith::MulIOp::create(b, loc, x, c(0xBF58476D1CE4E5B9ULL));
  x = xorShift(x, 27);
  x = arith::MulIOp::create(b, loc, x, c(0x94D049BB133111EBULL));
  return xorShift(x, 31);
}

static Value i64Const(OpBuilder &b, Location loc, uint64_t v) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(b.getI64Type(), v));
}

/// u in [0, 1) from the top bits of `bits`, in `ft` (f64: 53 bits, else 24).
static Value unitFloat(OpBuilder &b, Location loc, Value bits, FloatType ft) {
  int keep = ft.isF64() ? 53 : 24;
  Value top = arith::ShRUIOp::create(b, loc, bits, i64Const(b, loc, 64 - keep));
  Value f = arith::UIToFPOp::create(b, loc, ft, top);
  return arith::MulFOp::create(
      b, loc, f, createScalar(b, loc, ft, std::ldexp(1.0, -keep)));
}

template <typename OpTy, Distribution D>
struct RandomLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Type elem = resTy.getElementType();
    bool isFloat = isa<FloatType>(elem);
    if constexpr (D != Distribution::Bernoulli && D != Distribution::Int)
      if (!isFloat)
        return op.emitOpError("this distribution needs a float result, got ")
               << elem;
    // Compute in f64 for f64 results, else f32.
    FloatType ft = elem.isF64() ? (FloatType)rewriter.getF64Type()
                                : (FloatType)rewriter.getF32Type();
    double a = op.getA().convertToDouble();
    std::optional<double> bAttr;
    if (op.getB())
      bAttr = op.getB()->convertToDouble();

    // The per-op key, from the state [seed, calls] and the stream number.
    Value state = adaptor.getState();
    auto idx = [&](int64_t i) {
      return arith::ConstantIndexOp::create(rewriter, loc, i).getResult();
    };
    Value seed = tensor::ExtractOp::create(rewriter, loc, state, idx(0));
    Value calls = tensor::ExtractOp::create(rewriter, loc, state, idx(1));
    Value salt = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, calls,
                              i64Const(rewriter, loc, 0xD1B54A32D192ED03ULL)),
        i64Const(rewriter, loc,
                 (uint64_t)op.getStream() * 0x8CB92BA72F3D8DD7ULL +
                     0x632BE59BD9B4E019ULL));
    Value key = mix64(
        rewriter, loc,
        arith::XOrIOp::create(rewriter, loc, seed, mix64(rewriter, loc, salt)));

    ArrayRef<int64_t> shape = resTy.getShape();
    SmallVector<Value> inputs;
    if (Value p = adaptor.getP())
      inputs.push_back(p);
    Type elemSignless = toSignlessType(elem);
    Value result = createElementwiseGeneric(
        rewriter, loc, inputs, shape, elem,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          // Row-major element index.
          Value lin = arith::ConstantIndexOp::create(b, l, 0);
          for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
            lin = arith::AddIOp::create(
                b, l,
                arith::MulIOp::create(
                    b, l, lin, arith::ConstantIndexOp::create(b, l, shape[d])),
                linalg::IndexOp::create(b, l, d));
          Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), lin);
          Value ctr = arith::MulIOp::create(
              b, l, arith::AddIOp::create(b, l, i, i64Const(b, l, 1)),
              i64Const(b, l, 0x9E3779B97F4A7C15ULL));
          Value bits = mix64(b, l, arith::AddIOp::create(b, l, key, ctr));
          Value v;
          if constexpr (D == Distribution::Int) {
            // [a, b): b defaults to 2^mantissa for floats, the max + 1 for
            // integers (random_() semantics).
            double hi;
            if (bAttr)
              hi = *bAttr;
            else if (auto f = dyn_cast<FloatType>(elem))
              hi = std::ldexp(1.0, f.getFPMantissaWidth());
            else
              hi = isUnsignedInteger(elem)
                       ? std::ldexp(1.0, elem.getIntOrFloatBitWidth())
                       : std::ldexp(1.0, elem.getIntOrFloatBitWidth() - 1);
            uint64_t range = (uint64_t)(hi - a);
            if (range == 0)
              range = 1;
            Value r = arith::RemUIOp::create(b, l, bits, i64Const(b, l, range));
            v = arith::AddIOp::create(b, l, r, i64Const(b, l, (int64_t)a));
            return scalarFromSignless(
                b, l, convertScalar(b, l, v, elemSignless, false, false), elem);
          } else {
            Value u = unitFloat(b, l, bits, ft);
            Value one = createScalar(b, l, ft, 1.0);
            if constexpr (D == Distribution::Uniform) {
              double hi = bAttr.value_or(1.0);
              v = arith::AddFOp::create(
                  b, l, createScalar(b, l, ft, a),
                  arith::MulFOp::create(b, l, u,
                                        createScalar(b, l, ft, hi - a)));
            } else if constexpr (D == Distribution::Cauchy) {
              // a + b tan(pi (u - 1/2))
              Value t = math::TanOp::create(
                  b, l,
                  arith::MulFOp::create(
                      b, l,
                      arith::SubFOp::create(b, l, u,
                                            createScalar(b, l, ft, 0.5)),
                      createScalar(b, l, ft, M_PI)));
              v = arith::AddFOp::create(
                  b, l, createScalar(b, l, ft, a),
                  arith::MulFOp::create(
                      b, l, t, createScalar(b, l, ft, bAttr.value_or(1.0))));
            } else if constexpr (D == Distribution::Geometric) {
              // ceil(ln(1 - u) / ln(1 - p)), at least 1
              Value k = arith::DivFOp::create(
                  b, l,
                  math::LogOp::create(b, l,
                                      arith::SubFOp::create(b, l, one, u)),
                  createScalar(b, l, ft, std::log1p(-a)));
              v = arith::MaximumFOp::create(b, l, math::CeilOp::create(b, l, k),
                                            one);
            } else if constexpr (D == Distribution::Normal ||
                                 D == Distribution::LogNormal) {
              // Two uniforms from the two 32-bit halves.
              Value lo32 = arith::AndIOp::create(b, l, bits,
                                                 i64Const(b, l, 0xFFFFFFFFULL));
              Value hi32 =
                  arith::ShRUIOp::create(b, l, bits, i64Const(b, l, 32));
              double scale = std::ldexp(1.0, -32);
              Value u1 = arith::MulFOp::create(
                  b, l,
                  arith::UIToFPOp::create(
                      b, l, ft,
                      arith::AddIOp::create(b, l, hi32, i64Const(b, l, 1))),
                  createScalar(b, l, ft, scale));
              Value u2 = arith::MulFOp::create(
                  b, l, arith::UIToFPOp::create(b, l, ft, lo32),
                  createScalar(b, l, ft, scale));
              Value radius = math::SqrtOp::create(
                  b, l,
                  arith::MulFOp::create(b, l, createScalar(b, l, ft, -2.0),
                                        math::LogOp::create(b, l, u1)));
              Value angle = arith::MulFOp::create(
                  b, l, u2, createScalar(b, l, ft, 2.0 * M_PI));
              Value z = arith::MulFOp::create(b, l, radius,
                                              math::CosOp::create(b, l, angle));
              v = arith::AddFOp::create(
                  b, l, createScalar(b, l, ft, a),
                  arith::MulFOp::create(
                      b, l, z, createScalar(b, l, ft, bAttr.value_or(1.0))));
              if constexpr (D == Distribution::LogNormal)
                v = math::ExpOp::create(b, l, v);
            } else if constexpr (D == Distribution::Exponential) {
              Value lg = math::LogOp::create(
                  b, l, arith::SubFOp::create(b, l, one, u));
              v = arith::DivFOp::create(b, l, arith::NegFOp::create(b, l, lg),
                                        createScalar(b, l, ft, a));
            } else {
              Value p = args.empty()
                            ? createScalar(b, l, ft, a)
                            : convertScalar(
                                  b, l, scalarToSignless(b, l, args[0]), ft,
                                  isUnsignedInteger(args[0].getType()), false);
              Value hit =
                  arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, u, p);
              v = arith::SelectOp::create(b, l, hit, one,
                                          createScalar(b, l, ft, 0.0));
            }
            return scalarFromSignless(b, l,
                                      convertScalar(b, l, v, elemSignless,
                                                    false,
                                                    isUnsignedInteger(elem)),
                                      elem);
          }
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::poptorch::populateRandomPatterns(RewritePatternSet &patterns) {
  patterns.add<RandomLowering<RandUniformOp, Distribution::Uniform>,
               RandomLowering<RandNormalOp, Distribution::Normal>,
               RandomLowering<RandExponentialOp, Distribution::Exponential>,
               RandomLowering<RandBernoulliOp, Distribution::Bernoulli>,
               RandomLowering<RandIntOp, Distribution::Int>,
               RandomLowering<RandCauchyOp, Distribution::Cauchy>,
               RandomLowering<RandLogNormalOp, Distribution::LogNormal>,
               RandomLowering<RandGeometricOp, Distribution::Geometric>>(
      patterns.getContext());
}
