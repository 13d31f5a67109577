//===- FuseElementwise.cpp - elementwise fusion that keeps contractions ---===//
//
// poptorch-fuse-elementwise: upstream's elementwise fusion and reshape
// propagation, except that named contractions and convolutions are never
// rewritten. Upstream `linalg-fuse-elementwise-ops` folds reshapes into them
// by expansion, which turns linalg.matmul into a linalg.generic that the
// codegen strategy no longer recognises as a matmul.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHFUSEELEMENTWISE
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

/// Named ops whose identity the codegen strategy relies on.
static bool isNamedContractionOrConvolution(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || isa<linalg::GenericOp>(op))
    return false;
  return linalg::isaContractionOpInterface(linalgOp) ||
         linalg::isaConvolutionOpInterface(linalgOp);
}

/// Fuse (or fold a reshape) across `operand` only when neither side is a
/// named contraction/convolution, and only when the producer has no other
/// user (so fusion never duplicates work).
static bool shouldFuse(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || isNamedContractionOrConvolution(producer) ||
      isNamedContractionOrConvolution(operand->getOwner()))
    return false;
  return producer->hasOneUse();
}

namespace {
struct FuseElementwisePass
    : public poptorch::impl::PoptorchFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
