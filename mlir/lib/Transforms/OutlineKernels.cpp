//===- OutlineKernels.cpp - one function per distinct loop nest ----------===//
//
// Code generation time grows faster than linearly with the size of a
// function, and a model repeats the same kernels (a transformer's layers
// differ only in their weights). This pass outlines every top-level loop nest
// of every function (the entry points, pipeline stages and repeated runs of
// ops, see OutlineRepeats.cpp) into a private kernel function, then keeps one
// function per distinct body: the printed form of the function (without
// locations) is the key.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHOUTLINEKERNELS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

bool isKernel(Operation &op) {
  return op.getNumResults() == 0 && !op.hasAttr("poptorch.device_loop") &&
         isa<scf::ForOp, scf::ForallOp, scf::ParallelOp, linalg::LinalgOp>(op);
}

struct OutlineKernelsPass
    : public poptorch::impl::PoptorchOutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable table(module);
    symbols = &table;
    // Every function with a body is glue at this point: the entry points,
    // the pipeline stages and the repeated runs (poptorch-outline-repeats).
    for (func::FuncOp fn : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (!fn.isExternal()) {
        for (Block &block : fn.getBody())
          visit(block);
        fn->setAttr("poptorch.glue", UnitAttr::get(&getContext()));
      }
  }

  void visit(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isKernel(op)) {
        outline(op);
        continue;
      }
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          visit(inner);
    }
  }

  void outline(Operation &op) {
    ModuleOp module = getOperation();
    // What the kernel reads from outside: its operands and the values its
    // regions use. Constants are cloned in (they are part of the kernel's
    // identity and let LLVM fold them); everything else is an argument.
    llvm::SetVector<Value> used(op.getOperands().begin(),
                                op.getOperands().end());
    getUsedValuesDefinedAbove(op.getRegions(), used);
    SmallVector<Value> args;
    SmallVector<Operation *> constants;
    for (Value v : used) {
      Operation *def = v.getDefiningOp();
      if (def && def->getNumOperands() == 0 &&
          def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else
        args.push_back(v);
    }

    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto type = b.getFunctionType(ValueRange(args).getTypes(), {});
    auto fn = func::FuncOp::create(b, op.getLoc(), "__kernel", type);
    fn.setPrivate();
    fn->setAttr("poptorch.kernel", b.getUnitAttr());
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(args, entry->getArguments()))
      map.map(v, arg);
    for (Operation *c : constants)
      b.clone(*c, map);
    b.clone(op, map);
    func::ReturnOp::create(b, op.getLoc());

    // Still named "__kernel": the printed function is the key.
    std::string key;
    {
      llvm::raw_string_ostream os(key);
      fn->print(os, OpPrintingFlags().useLocalScope());
    }
    auto [it, inserted] = kernels.try_emplace(key, fn);
    if (inserted)
      symbols->insert(fn); // gives it a unique name
    else
      fn.erase();
    OpBuilder call(&op);
    func::CallOp::create(call, op.getLoc(), it->second, args);
    op.erase();
  }

  llvm::StringMap<func::FuncOp> kernels;
  SymbolTable *symbols = nullptr;
};

} // namespace

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHKERNELCODEGEN
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

namespace {
struct KernelCodegenPass
    : public poptorch::impl::PoptorchKernelCodegenBase<KernelCodegenPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      if (fn->hasAttr("poptorch.kernel") || fn->hasAttr("poptorch.glue"))
        fn.setNoInline(true);
      if (fn->hasAttr("poptorch.glue"))
        fn.setOptimizeNone(true);
      fn->removeAttr("poptorch.kernel");
      fn->removeAttr("poptorch.glue");
    }
  }
};
} // namespace
