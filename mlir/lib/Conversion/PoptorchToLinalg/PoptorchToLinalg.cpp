//===- PoptorchToLinalg.cpp - the conversion pass -----------------------===//
//
// convert-poptorch-to-linalg: composite ops are first decomposed (the same
// rewrites as poptorch-decompose, so the pass also works on its own), then a
// partial conversion with the poptorch dialect illegal applies the patterns
// of each op family (Elementwise, LinearAlgebra, Convolution, Pooling,
// Reductions, DataMovement). An op that a pattern rejects gets one error naming
// what is unsupported; the generic "failed to legalize" that would follow is
// dropped.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"
#include "poptorch/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_CONVERTPOPTORCHTOLINALG
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;
using namespace mlir::poptorch;

namespace {
struct ConvertPoptorchToLinalgPass
    : public poptorch::impl::ConvertPoptorchToLinalgBase<
          ConvertPoptorchToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    {
      RewritePatternSet decompose(ctx);
      populatePoptorchDecomposePatterns(decompose);
      (void)applyPatternsGreedily(module, std::move(decompose));
    }

    ConversionTarget target(*ctx);
    target.addIllegalDialect<PoptorchDialect>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           scf::SCFDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });

    RewritePatternSet patterns(ctx);
    populateElementwisePatterns(patterns);
    populateLinearAlgebraPatterns(patterns);
    populateConvolutionPatterns(patterns);
    populatePoolingPatterns(patterns);
    populateRandomPatterns(patterns);
    populateReductionPatterns(patterns);
    populateDataMovementPatterns(patterns);
    populateIndexingPatterns(patterns);
    populateResamplePatterns(patterns);
    populateDebuggingPatterns(patterns);
    populateHostKernelPatterns(patterns);

    // Our patterns already said why an op cannot be lowered; drop the
    // driver's generic follow-up error at the same location.
    llvm::DenseSet<Location> reported;
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      if (StringRef(diag.str()).starts_with("failed to legalize") &&
          reported.contains(diag.getLocation()))
        return success();
      reported.insert(diag.getLocation());
      return failure();
    });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
