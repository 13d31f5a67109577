//===- ApproximateMath.cpp - vectorizable forms of libm-only math ops ---===//
//
// math.erf has no LLVM intrinsic: left alone it becomes a libm call per
// element, which forces vector code back to scalars. f32 erf is a rational
// function of x on [-4, 4] (erf(4) rounds to 1): x * P(x^2) / Q(x^2), P of
// degree 6 and Q of degree 4 in x^2, fitted here to erf's relative error
// (at most 2e-7 in exact arithmetic; evaluated in f32, at most 4.7e-7 from
// erf, 8 ulp near 1), clamped to [-1, 1]. That is 14 multiply-adds and one
// division a vector, where upstream's piecewise approximation (which other
// float types keep) selects its coefficients among three intervals: the
// exact GELU after a bf16 matmul took 27% of the matmul's time with it. The
// same holds for f32 tanh: LLVM has an intrinsic for it but no vector
// instruction, so without a vector math library it becomes one libm call per
// element (the tanh GELU of GPT-2 ran 50x slower than eager's); its rational
// approximation is a few ulp. Vector f32 exp (softmax, GELU's and SiLU's
// sigmoid) has an LLVM intrinsic but no vector instruction either: one libm
// call per element (3% of a BERT attention layer); its polynomial is within 3
// ulp (results below 2^-126 flush to 0) and keeps exp(-inf) = 0, exp(+inf) =
// inf and NaN. Scalar exp stays a libm call.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHAPPROXIMATEMATH
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {
/// f32 erf (scalar or vector) as the rational function above.
struct RationalErf : public OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](double v) -> Value {
      TypedAttr attr = rewriter.getF32FloatAttr(v);
      if (auto vec = dyn_cast<VectorType>(type))
        attr = DenseElementsAttr::get(vec, attr);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    auto polynomial = [&](Value t, ArrayRef<double> coefficients) {
      Value r = constant(coefficients.back());
      for (double c : llvm::reverse(coefficients.drop_back()))
        r = math::FmaOp::create(rewriter, loc, r, t, constant(c));
      return r;
    };
    static constexpr double kP[] = {
        1.1283791065216064,    0.19939486682415009,   0.05048026517033577,
        0.003681525820866227,  0.0001414227153873071, -1.9520230125635862e-06,
        1.9801566608634857e-08};
    static constexpr double kQ[] = {1.0, 0.5100411176681519, 0.1147594302892685,
                                    0.014302277937531471,
                                    0.0009518141159787774};
    // minimumf/maximumf keep a NaN input NaN.
    Value x = arith::MaximumFOp::create(
        rewriter, loc,
        arith::MinimumFOp::create(rewriter, loc, op.getOperand(), constant(4)),
        constant(-4));
    Value t = arith::MulFOp::create(rewriter, loc, x, x);
    // Named in order: the order of a call's arguments is unspecified.
    Value xp = arith::MulFOp::create(rewriter, loc, x, polynomial(t, kP));
    Value q = polynomial(t, kQ);
    Value r = arith::DivFOp::create(rewriter, loc, xp, q);
    r = arith::MaximumFOp::create(
        rewriter, loc, arith::MinimumFOp::create(rewriter, loc, r, constant(1)),
        constant(-1));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ApproximateMathPass
    : public poptorch::impl::PoptorchApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RationalErf>(&getContext(), /*benefit=*/2);
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateTanhPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    SmallVector<Operation *> vectorExps;
    getOperation()->walk([&](math::ExpOp exp) {
      auto type = dyn_cast<VectorType>(exp.getType());
      if (type && type.getElementType().isF32())
        vectorExps.push_back(exp);
    });
    if (vectorExps.empty())
      return;
    RewritePatternSet expPatterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        expPatterns, [](StringRef name) { return name == "math.exp"; });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(vectorExps, std::move(expPatterns),
                                       config)))
      signalPassFailure();
  }
};
} // namespace
