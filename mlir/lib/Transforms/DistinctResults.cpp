//===- DistinctResults.cpp - one buffer per function result -------------===//
//
// Results become caller-provided buffers (buffer-results-to-out-params), one
// per result. When CSE makes two results the same value, each result still
// needs its own buffer: later duplicates get an explicit copy.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHDISTINCTRESULTS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {
struct DistinctResultsPass
    : public poptorch::impl::PoptorchDistinctResultsBase<DistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || seen.insert(v).second)
          continue;
        Value init = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(),
                                             type.getElementType());
        operand.set(
            linalg::CopyOp::create(b, ret.getLoc(), v, init).getResult(0));
      }
    });
  }
};
} // namespace
