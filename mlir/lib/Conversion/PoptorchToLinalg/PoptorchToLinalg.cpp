//===- PoptorchToLinalg.cpp - the conversion pass -----------------------===//
#include "poptorch/Transforms/Passes.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_CONVERTPOPTORCHTOLINALG
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {
struct ConvertPoptorchToLinalgPass
    : public poptorch::impl::ConvertPoptorchToLinalgBase<ConvertPoptorchToLinalgPass> {
  void runOnOperation() override {}
};
} // namespace
