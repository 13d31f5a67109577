//===- TestBreak.cpp - test-only: a deliberately broken lowering --------===//
//
// The debugging tools (failure reproducers, golden bisection) are tested
// against a compiler that is broken on purpose: this pass fails on, negates
// the result of, or leaves invalid IR at one chosen op. It never runs unless
// asked for (POPTORCH_TEST_BREAK, read by csrc/bridge/Program.cpp).
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHTESTBREAK
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {
struct TestBreakPass
    : public poptorch::impl::PoptorchTestBreakBase<TestBreakPass> {
  using PoptorchTestBreakBase::PoptorchTestBreakBase;

  void runOnOperation() override {
    Operation *target = nullptr;
    int64_t seen = 0;
    getOperation()->walk([&](Operation *op) {
      if (!target && op->getName().getStringRef() == opName && seen++ == index)
        target = op;
    });
    if (!target)
      return;
    if (mode == "fail") {
      target->emitError() << "poptorch-test-break: deliberate failure on "
                          << opName;
      return signalPassFailure();
    }
    if ((mode != "perturb" && mode != "invalid") ||
        target->getNumResults() == 0) {
      target->emitError() << "poptorch-test-break: unknown mode " << mode;
      return signalPassFailure();
    }
    Value result = target->getResult(0);
    OpBuilder b(target->getContext());
    b.setInsertionPointAfter(target);
    OperationState state(target->getLoc(), "poptorch.neg");
    if (mode == "perturb")
      state.addOperands(result);
    state.addTypes(result.getType());
    Operation *neg = b.create(state);
    result.replaceAllUsesExcept(neg->getResult(0), neg);
  }
};
} // namespace
