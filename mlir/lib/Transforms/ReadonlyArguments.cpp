//===- ReadonlyArguments.cpp - the caller's memory is never written -------===//
//
// The runtime hands the user's input tensors and the device copies of the
// weights to a program without copying them, so a program that writes an
// argument corrupts the caller's data (an index_add bufferized in place into
// its input added again on every call). Two passes make that impossible:
//
// * poptorch-readonly-arguments, before one-shot bufferization: every tensor
//   argument with a `poptorch.role` is `bufferization.writable = false`, so a
//   result that would update it in place gets a buffer of its own.
// * poptorch-verify-readonly-arguments, after bufferization: every op that
//   reaches such an argument's memory, through views, calls and loop-carried
//   values, must be known not to write or free it.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHREADONLYARGUMENTS
#define GEN_PASS_DEF_POPTORCHVERIFYREADONLYARGUMENTS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kRole = "poptorch.role";

struct ReadonlyArguments
    : poptorch::impl::PoptorchReadonlyArgumentsBase<ReadonlyArguments> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (isa<TensorType>(func.getArgumentTypes()[i]) &&
            func.getArgAttr(i, kRole))
          func.setArgAttr(
              i, bufferization::BufferizationDialect::kWritableAttrName,
              b.getBoolAttr(false));
  }
};

/// Walks the memory of one caller-owned argument and reports the ops that
/// may write or free it.
class ArgumentMemory {
public:
  ArgumentMemory(ModuleOp module, func::FuncOp func, unsigned index)
      : symbols(module), func(func), index(index) {}

  LogicalResult check() {
    push(func.getArgument(index));
    bool ok = true;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (OpOperand &use : v.getUses())
        ok &= succeeded(visit(use));
    }
    return success(ok);
  }

private:
  void push(Value v) {
    if (isa<BaseMemRefType>(v.getType()) && seen.insert(v).second)
      worklist.push_back(v);
  }

  InFlightDiagnostic fail(Operation *op, StringRef what) {
    auto role = func.getArgAttrOfType<StringAttr>(index, kRole);
    auto name = func.getArgAttrOfType<StringAttr>(index, "poptorch.name");
    InFlightDiagnostic d = op->emitOpError() << what << " argument #" << index
                                             << " of @" << func.getSymName();
    if (name)
      d << " ('" << name.getValue() << "'";
    else
      d << " (";
    d << (name ? ", " : "") << "poptorch.role = " << role.getValue() << ")";
    d << ", memory its caller owns; the program must compute into a buffer "
         "of its own";
    return d;
  }

  LogicalResult visit(OpOperand &use) {
    Operation *user = use.getOwner();
    Value v = use.get();
    // Views of the memory: their results are the same memory.
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == v)
        for (Value r : user->getResults())
          push(r);
      return success();
    }
    if (isa<memref::CastOp, UnrealizedConversionCastOp,
            bufferization::ToTensorOp>(user)) {
      for (Value r : user->getResults())
        push(r);
      return success();
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal()) {
        push(callee.getArgument(use.getOperandNumber()));
        return success();
      }
      // External functions are the runtime's helpers (poptorch.print_tensor's
      // printer), which only read.
      return success();
    }
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      if (OpResult r = loop.getTiedLoopResult(&use)) {
        push(loop.getTiedLoopRegionIterArg(&use));
        push(r);
      }
      return success();
    }
    if (isa<scf::YieldOp>(user)) {
      Operation *parent = user->getParentOp();
      if (parent->getNumResults() > use.getOperandNumber())
        push(parent->getResult(use.getOperandNumber()));
      if (auto loop = dyn_cast<scf::ForOp>(parent))
        push(loop.getRegionIterArgs()[use.getOperandNumber()]);
      return success();
    }
    if (isa<func::ReturnOp>(user))
      return success(); // a result that is the argument: the caller copies it
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects) {
      if (user->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return success(); // its nested ops' uses are visited on their own
      return fail(user, "cannot be shown not to write");
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &e : instances) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      // An effect on no particular value may touch any memory.
      if (e.getValue() && e.getValue() != v)
        continue;
      return fail(user,
                  isa<MemoryEffects::Free>(e.getEffect()) ? "frees" : "writes");
    }
    return success();
  }

  SymbolTable symbols;
  func::FuncOp func;
  unsigned index;
  SmallVector<Value> worklist;
  llvm::DenseSet<Value> seen;
};

struct VerifyReadonlyArguments
    : poptorch::impl::PoptorchVerifyReadonlyArgumentsBase<
          VerifyReadonlyArguments> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    for (auto func : module.getOps<func::FuncOp>())
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (!func.isExternal() && func.getArgAttr(i, kRole) &&
            isa<BaseMemRefType>(func.getArgumentTypes()[i]))
          ok &= succeeded(ArgumentMemory(module, func, i).check());
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
