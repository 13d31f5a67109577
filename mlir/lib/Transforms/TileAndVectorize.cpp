//===- TileAndVectorize.cpp - codegen strategy for linalg ops -----------===//
#include "poptorch/Transforms/Passes.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHTILEANDVECTORIZE
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {
struct TileAndVectorizePass
    : public poptorch::impl::PoptorchTileAndVectorizeBase<TileAndVectorizePass> {
  void runOnOperation() override {}
};
} // namespace
