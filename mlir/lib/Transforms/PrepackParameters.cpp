//===- PrepackParameters.cpp - parameters in the layout the program reads
//---===//
//
// Parameters are uploaded once per compiled model, so a permutation applied
// to a parameter (the transposed weight of every linear layer) need not run
// on every call: the argument takes the permuted type, records the
// permutation in `poptorch.permuted`, and the runtime permutes the weight
// when it uploads it.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHPREPACKPARAMETERS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {
struct PrepackParametersPass
    : public poptorch::impl::PoptorchPrepackParametersBase<
          PrepackParametersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.front();
    bool changed = false;
    for (BlockArgument arg : entry.getArguments()) {
      unsigned index = arg.getArgNumber();
      auto role = func.getArgAttrOfType<StringAttr>(index, "poptorch.role");
      if (!role || role.getValue() != "parameter" || arg.use_empty() ||
          func.getArgAttr(index, "poptorch.permuted"))
        continue;
      // Every use must be the same permutation; any other use (a result,
      // another op) needs the parameter as it is.
      poptorch::PermuteOp first;
      bool allSame = true;
      for (Operation *user : arg.getUsers()) {
        auto permute = dyn_cast<poptorch::PermuteOp>(user);
        if (!permute || (first && permute.getDims() != first.getDims())) {
          allSame = false;
          break;
        }
        first = first ? first : permute;
      }
      if (!allSame)
        continue;
      DenseI64ArrayAttr dims = first.getDimsAttr();
      arg.setType(first.getType());
      for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
        user->getResult(0).replaceAllUsesWith(arg);
        user->erase();
      }
      func.setArgAttr(index, "poptorch.permuted", dims);
      changed = true;
    }
    if (changed)
      func.setType(FunctionType::get(&getContext(), entry.getArgumentTypes(),
                                     func.getResultTypes()));
  }
};
} // namespace
