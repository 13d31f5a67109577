//===- PrepackParameters.cpp - parameters in the layout the program reads
//---===//
//
// Parameters are uploaded once per compiled model, so a permutation applied
// to a parameter (the transposed weight of every linear layer) need not run
// on every call: the argument takes the permuted type, records the
// permutation in `poptorch.permuted`, and the runtime permutes the weight
// when it uploads it.
//
// A parameter may also have uses that read only a few of its elements, by
// index: an embedding lookup (the tied embedding and LM head of a language
// model share one table). Those read the prepacked argument through the
// inverse permutation; after lowering, `poptorch-fuse-elementwise` folds the
// transpose into their `tensor.extract`s, so no copy of the table is made
// and no second copy is kept.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHPREPACKPARAMETERS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

/// Uses that gather single elements of the parameter by index, so that they
/// read any layout at the same cost: the table operand of an embedding.
static bool readsByIndex(OpOperand &use) {
  auto embedding = dyn_cast<poptorch::EmbeddingOp>(use.getOwner());
  return embedding && use.get() == embedding.getWeight();
}

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
      // Every permuting use must be the same permutation; the other uses
      // must read by index (they take the inverse permutation for free).
      // Any other use (a result, an elementwise op) needs the parameter as
      // it is.
      poptorch::PermuteOp first;
      bool packable = true;
      SmallVector<OpOperand *> byIndex;
      for (OpOperand &use : arg.getUses()) {
        if (readsByIndex(use)) {
          byIndex.push_back(&use);
          continue;
        }
        auto permute = dyn_cast<poptorch::PermuteOp>(use.getOwner());
        if (!permute || (first && permute.getDims() != first.getDims())) {
          packable = false;
          break;
        }
        first = first ? first : permute;
      }
      if (!packable || !first)
        continue;
      auto originalType = cast<RankedTensorType>(arg.getType());
      DenseI64ArrayAttr dims = first.getDimsAttr();
      arg.setType(first.getType());
      for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
        if (auto permute = dyn_cast<poptorch::PermuteOp>(user)) {
          permute.getResult().replaceAllUsesWith(arg);
          permute->erase();
        }
      }
      if (!byIndex.empty()) {
        SmallVector<int64_t> inverse(dims.size());
        for (auto [i, d] : llvm::enumerate(dims.asArrayRef()))
          inverse[d] = i;
        OpBuilder b = OpBuilder::atBlockBegin(&entry);
        Value original =
            poptorch::PermuteOp::create(b, arg.getLoc(), originalType, arg,
                                        b.getDenseI64ArrayAttr(inverse));
        for (OpOperand *use : byIndex)
          use->set(original);
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
