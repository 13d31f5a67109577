//===- Decompose.cpp - poptorch -> simpler poptorch ---------------------===//
#include "poptorch/Transforms/Passes.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHDECOMPOSE
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;
using namespace mlir::poptorch;

namespace {
struct PoptorchDecomposePass
    : public poptorch::impl::PoptorchDecomposeBase<PoptorchDecomposePass> {
  void runOnOperation() override {}
};
} // namespace
