//===- ApproximateMath.cpp - vectorizable forms of libm-only math ops ---===//
//
// math.erf has no LLVM intrinsic: left alone it becomes a libm call per
// element, which forces vector code back to scalars. Its polynomial
// approximation is plain arith on vectors (f32 error ~1 ulp-range, well inside
// torch.testing's float32 tolerance). The same holds for f32 tanh: LLVM has
// an intrinsic for it but no vector instruction, so without a vector math
// library it becomes one libm call per element (the tanh GELU of GPT-2 ran
// 50x slower than eager's); its rational approximation is a few ulp.
// Vector f32 exp (softmax, GELU's and SiLU's sigmoid) has an LLVM intrinsic
// but no vector instruction either: one libm call per element (3% of a BERT
// attention layer); its polynomial is within 3 ulp (results below 2^-126
// flush to 0) and keeps exp(-inf) = 0,
// exp(+inf) = inf and NaN. Scalar exp stays a libm call.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHAPPROXIMATEMATH
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {
struct ApproximateMathPass
    : public poptorch::impl::PoptorchApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
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
