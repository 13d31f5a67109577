//===- Resample.cpp - upsampling (interpolation) to linalg ---------------===//
//
// poptorch.upsample is one linalg.generic over the result: for each spatial
// dim the body computes source taps (positions and weights) with PyTorch's
// CPU formulas (area_pixel_compute_scale / _source_index, nearest_idx,
// cubic convolution with A = -0.75) in the same precision (float, or
// double for float64), reads the taps with tensor.extract and sums them.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/IndexMath.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

struct Tap {
  Value index;  // `index` in [0, size)
  Value weight; // compute-type scalar, null for nearest
};

struct UpsampleLowering : public OpConversionPattern<UpsampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UpsampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto inTy = getTensorType(input);
    auto in = inTy.getShape();
    RankedTensorType resTy = op.getType();
    auto out = resTy.getShape();
    int64_t rank = in.size(), spatial = rank - 2;
    Type elem = inTy.getElementType();
    StringRef mode = op.getMode();
    bool align = op.getAlignCorners();
    // Scale attributes by spatial dim (d, h, w aligned to the end).
    SmallVector<std::optional<double>> scales(spatial);
    std::optional<APFloat> attrs[3] = {op.getScaleD(), op.getScaleH(),
                                       op.getScaleW()};
    for (int64_t s = 0; s < spatial; ++s)
      if (auto a = attrs[3 - spatial + s])
        scales[s] = a->convertToDouble();
    bool dbl = elem.isF64();

    rewriter.replaceOp(
        op,
        createIndexedGeneric(
            rewriter, op.getLoc(), resTy, {}, {},
            [&](OpBuilder &b, Location loc, ValueRange ivs,
                ValueRange) -> Value {
              IndexMath m{b, loc};
              Type ct = dbl ? (Type)b.getF64Type() : (Type)b.getF32Type();
              auto fc = [&](Type t, double v) {
                return createScalar(b, loc, t, v);
              };
              auto toFloat = [&](Value i, Type t) -> Value {
                Value v = arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
                return arith::SIToFPOp::create(b, loc, t, v);
              };
              auto floorToIndex = [&](Value f) -> Value {
                Value fl = math::FloorOp::create(b, loc, f);
                Value v = arith::FPToSIOp::create(b, loc, b.getI64Type(), fl);
                return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
              };
              SmallVector<SmallVector<Tap>> taps(spatial);
              for (int64_t s = 0; s < spatial; ++s) {
                int64_t d = 2 + s, n = in[d], o = out[d];
                Value i = ivs[d];
                auto scaleValue = [&](bool f32Only) -> double {
                  // compute_scales_value<T>, rounded to T.
                  double v =
                      scales[s] && *scales[s] > 0
                          ? 1.0 / *scales[s]
                          : (f32Only || !dbl ? (double)((float)n / (float)o)
                                             : (double)n / (double)o);
                  return f32Only || !dbl ? (double)(float)v : v;
                };
                if (mode == "nearest" || mode == "nearest_exact") {
                  Value idx;
                  if (n == o) {
                    idx = i;
                  } else if (mode == "nearest" && o == 2 * n) {
                    idx = m.div(i, 2);
                  } else {
                    double sc = scaleValue(true);
                    Type f32 = b.getF32Type();
                    Value src;
                    if (mode == "nearest") {
                      src = arith::MulFOp::create(b, loc, toFloat(i, f32),
                                                  fc(f32, sc));
                    } else {
                      // (i + 0.5) * scale in double, then floorf.
                      Type f64 = b.getF64Type();
                      Value p = arith::MulFOp::create(
                          b, loc,
                          arith::AddFOp::create(b, loc, toFloat(i, f64),
                                                fc(f64, 0.5)),
                          fc(f64, sc));
                      src = arith::TruncFOp::create(b, loc, f32, p);
                    }
                    idx = m.min(floorToIndex(src), m.c(n - 1));
                  }
                  taps[s].push_back({idx, Value()});
                  continue;
                }
                bool cubic = mode == "cubic";
                double sc = align ? (o > 1 ? (dbl ? (double)(n - 1) / (o - 1)
                                                  : (double)((float)(n - 1) /
                                                             (float)(o - 1)))
                                           : 0.0)
                                  : scaleValue(false);
                Value fi = toFloat(i, ct);
                Value real =
                    align ? (Value)arith::MulFOp::create(b, loc, fc(ct, sc), fi)
                          : (Value)arith::SubFOp::create(
                                b, loc,
                                arith::MulFOp::create(
                                    b, loc, fc(ct, sc),
                                    arith::AddFOp::create(b, loc, fi,
                                                          fc(ct, 0.5))),
                                fc(ct, 0.5));
                if (!align && !cubic)
                  real = arith::MaximumFOp::create(b, loc, real, fc(ct, 0.0));
                Value i0 = floorToIndex(real);
                if (!cubic)
                  i0 = m.min(i0, m.c(n - 1));
                Value t = arith::SubFOp::create(b, loc, real, toFloat(i0, ct));
                if (!cubic) {
                  t = arith::MinimumFOp::create(
                      b, loc, arith::MaximumFOp::create(b, loc, t, fc(ct, 0.0)),
                      fc(ct, 1.0));
                  Value i1 = m.select(m.lt(i0, m.c(n - 1)), m.add(i0, 1), i0);
                  Value w0 = arith::SubFOp::create(b, loc, fc(ct, 1.0), t);
                  taps[s].push_back({i0, w0});
                  taps[s].push_back({i1, t});
                  continue;
                }
                // Cubic convolution (A = -0.75) at distances 1 + t, t,
                // 1 - t, 2 - t.
                double A = -0.75;
                auto mul = [&](Value x, Value y) -> Value {
                  return arith::MulFOp::create(b, loc, x, y);
                };
                auto addc = [&](Value x, double c) -> Value {
                  return arith::AddFOp::create(b, loc, x, fc(ct, c));
                };
                auto conv1 = [&](Value x) { // ((A+2)x - (A+3)) x x + 1
                  return addc(
                      mul(mul(addc(mul(fc(ct, A + 2), x), -(A + 3)), x), x),
                      1.0);
                };
                auto conv2 = [&](Value x) { // ((A x - 5A) x + 8A) x - 4A
                  return addc(
                      mul(addc(mul(addc(mul(fc(ct, A), x), -5 * A), x), 8 * A),
                          x),
                      -4 * A);
                };
                Value x2 = arith::SubFOp::create(b, loc, fc(ct, 1.0), t);
                Value w[4] = {conv2(addc(t, 1.0)), conv1(t), conv1(x2),
                              conv2(addc(x2, 1.0))};
                for (int k = 0; k < 4; ++k)
                  taps[s].push_back({m.clamp(m.add(i0, k - 1), n), w[k]});
              }
              // Sum over the product of the taps of every spatial dim.
              Value acc;
              SmallVector<size_t> choice(spatial, 0);
              while (true) {
                SmallVector<Value> pos{ivs[0], ivs[1]};
                Value w;
                for (int64_t s = 0; s < spatial; ++s) {
                  const Tap &tap = taps[s][choice[s]];
                  pos.push_back(tap.index);
                  if (tap.weight)
                    w = w ? mul2(b, loc, w, tap.weight) : tap.weight;
                }
                Value v = tensor::ExtractOp::create(b, loc, input, pos);
                if (!w)
                  return v; // nearest: one tap
                Value x = convertScalar(b, loc, v, ct, false, false);
                Value term = mul2(b, loc, w, x);
                acc = acc ? (Value)arith::AddFOp::create(b, loc, acc, term)
                          : term;
                int64_t s = spatial - 1;
                while (s >= 0 && ++choice[s] == taps[s].size())
                  choice[s--] = 0;
                if (s < 0)
                  break;
              }
              return convertScalar(b, loc, acc, elem, false, false);
            }));
    return success();
  }

  static Value mul2(OpBuilder &b, Location loc, Value x, Value y) {
    return arith::MulFOp::create(b, loc, x, y);
  }
};

} // namespace

void mlir::poptorch::populateResamplePatterns(RewritePatternSet &patterns) {
  patterns.add<UpsampleLowering>(patterns.getContext());
}
