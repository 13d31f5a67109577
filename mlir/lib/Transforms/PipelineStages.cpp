//===- PipelineStages.cpp - pipeline stages as functions, run overlapped -===//
//
// PipelinedExecution runs micro-batch i of stage s while stage s - 1 runs
// micro-batch i + 1. Three pieces make that happen:
//
// - poptorch-outline-stages (before poptorch-decompose, while the captured
//   ops still carry `poptorch.stage`): each stage of @main becomes a
//   function, and @main is the chain of their calls. Later passes lower the
//   stage functions like any other function.
// - poptorch-device-iterations{pipeline=true} (DeviceIterations.cpp) builds
//   the software pipeline from the chain: fill, a steady-state loop in which
//   every stage runs once per step on its own micro-batch, drain.
// - poptorch-overlap-stages (here, after bufferization): the stage calls of
//   one step touch disjoint buffers, so all but one become async.execute
//   tasks of the async runtime's worker pool and the step awaits them.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Async/IR/Async.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHOUTLINESTAGES
#define GEN_PASS_DEF_POPTORCHOVERLAPSTAGES
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

constexpr StringLiteral kStageAttr = "poptorch.stage";
constexpr StringLiteral kPipelineStage = "poptorch.pipeline_stage";

bool isFreeConstant(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->hasTrait<OpTrait::ConstantLike>();
}

struct OutlineStagesPass
    : public poptorch::impl::PoptorchOutlineStagesBase<OutlineStagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal() || !main.getBody().hasOneBlock())
      return;
    Block &body = main.front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    // The stage of every op: its own, but never earlier than its operands'
    // (an op without a stage joins its operands' latest stage). Constants
    // belong to no stage (-1): each stage that uses one gets a copy.
    DenseMap<Operation *, int64_t> stageOf;
    std::set<int64_t> ids;
    for (Operation &op : body.without_terminator()) {
      if (isFreeConstant(&op)) {
        stageOf[&op] = -1;
        continue;
      }
      int64_t s = 0;
      if (auto a = op.getAttrOfType<IntegerAttr>(kStageAttr))
        s = a.getInt();
      llvm::SetVector<Value> used(op.getOperands().begin(),
                                  op.getOperands().end());
      getUsedValuesDefinedAbove(op.getRegions(), used);
      for (Value v : used)
        if (Operation *def = v.getDefiningOp())
          s = std::max(s, stageOf.lookup(def));
      stageOf[&op] = s;
      ids.insert(s);
    }
    if (ids.size() < 2)
      return;
    // Dense stage indices.
    DenseMap<int64_t, int64_t> dense;
    for (int64_t id : ids)
      dense[id] = dense.size();
    for (auto &[op, s] : stageOf)
      if (s >= 0)
        s = dense[s];
    int64_t numStages = ids.size();

    // What each stage reads: @main arguments, constants, values of earlier
    // stages (the last stage that reads each), and which results it returns.
    SmallVector<llvm::SetVector<unsigned>> argsOf(numStages);
    SmallVector<llvm::SetVector<Operation *>> constantsOf(numStages);
    SmallVector<SmallVector<Operation *>> opsOf(numStages);
    llvm::MapVector<Value, int64_t> lastUse; // crossing value -> last stage
    auto stageOfValue = [&](Value v) -> int64_t {
      Operation *def = v.getDefiningOp();
      return def ? stageOf.lookup(def) : -1;
    };
    auto use = [&](Value v, int64_t k) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        argsOf[k].insert(arg.getArgNumber());
        return;
      }
      Operation *def = v.getDefiningOp();
      if (stageOf.lookup(def) < 0) {
        constantsOf[k].insert(def);
        return;
      }
      if (stageOf.lookup(def) < k)
        lastUse[v] = std::max(lastUse.lookup(v), k);
    };
    for (Operation &op : body.without_terminator()) {
      int64_t k = stageOf.lookup(&op);
      if (k < 0)
        continue;
      opsOf[k].push_back(&op);
      llvm::SetVector<Value> used(op.getOperands().begin(),
                                  op.getOperands().end());
      getUsedValuesDefinedAbove(op.getRegions(), used);
      for (Value v : used)
        use(v, k);
    }
    // Each @main result comes out of the stage that computes it; arguments
    // and constants returned as they are come out of the first stage.
    SmallVector<SmallVector<unsigned>> resultsOf(numStages);
    for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
      int64_t k = std::max<int64_t>(stageOfValue(v), 0);
      use(v, k);
      resultsOf[k].push_back(j);
    }

    // The values stage k hands on to stage k + 1: everything computed in
    // stages <= k that a stage > k reads.
    SmallVector<SmallVector<Value>> handedOn(numStages);
    for (auto &[v, last] : lastUse)
      for (int64_t k = stageOfValue(v); k < last; ++k)
        handedOn[k].push_back(v);

    OpBuilder b(main);
    SmallVector<func::FuncOp> fns;
    for (int64_t k = 0; k < numStages; ++k) {
      SmallVector<Type> argTypes, resultTypes;
      for (unsigned i : argsOf[k])
        argTypes.push_back(main.getArgument(i).getType());
      if (k > 0)
        for (Value v : handedOn[k - 1])
          argTypes.push_back(v.getType());
      for (Value v : handedOn[k])
        resultTypes.push_back(v.getType());
      for (unsigned j : resultsOf[k])
        resultTypes.push_back(ret.getOperand(j).getType());
      auto fn = func::FuncOp::create(b, main.getLoc(),
                                     ("main_stage" + Twine(k)).str(),
                                     b.getFunctionType(argTypes, resultTypes));
      fn.setPrivate();
      fn->setAttr(kPipelineStage, b.getI64IntegerAttr(k));
      for (auto [n, j] : llvm::enumerate(resultsOf[k]))
        fn.setResultAttr(handedOn[k].size() + n, "poptorch.result",
                         b.getI64IntegerAttr(j));
      Block *entry = fn.addEntryBlock();
      IRMapping map;
      unsigned a = 0;
      for (unsigned i : argsOf[k])
        map.map(main.getArgument(i), entry->getArgument(a++));
      if (k > 0)
        for (Value v : handedOn[k - 1])
          map.map(v, entry->getArgument(a++));
      OpBuilder fb = OpBuilder::atBlockBegin(entry);
      for (Operation *c : constantsOf[k])
        fb.clone(*c, map);
      for (Operation *op : opsOf[k])
        fb.clone(*op, map);
      SmallVector<Value> rets;
      for (Value v : handedOn[k])
        rets.push_back(map.lookup(v));
      for (unsigned j : resultsOf[k])
        rets.push_back(map.lookup(ret.getOperand(j)));
      func::ReturnOp::create(fb, main.getLoc(), rets);
      fns.push_back(fn);
    }

    // @main becomes the chain of calls.
    b.setInsertionPoint(ret);
    SmallVector<Value> newResults(ret.getNumOperands());
    ValueRange previous;
    for (int64_t k = 0; k < numStages; ++k) {
      SmallVector<Value> operands;
      for (unsigned i : argsOf[k])
        operands.push_back(main.getArgument(i));
      llvm::append_range(operands, previous);
      auto call = func::CallOp::create(b, main.getLoc(), fns[k], operands);
      previous = call.getResults().take_front(handedOn[k].size());
      for (auto [n, j] : llvm::enumerate(resultsOf[k]))
        newResults[j] = call.getResult(handedOn[k].size() + n);
    }
    ret->setOperands(newResults);
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(body.getOperations()))) {
      if (isa<func::CallOp, func::ReturnOp>(op))
        continue;
      op.dropAllUses();
      op.erase();
    }
  }
};

/// poptorch-prepack-parameters across the stage calls: a parameter of @main
/// that only stage functions read, each through the same permutation, takes
/// the permuted type in @main and in the stage functions.
/// (Declared here rather than in Passes.td: registered by
/// registerPrepackStageParametersPass.)
struct PrepackStageParametersPass
    : public PassWrapper<PrepackStageParametersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepackStageParametersPass)
  StringRef getArgument() const override {
    return "poptorch-prepack-stage-parameters";
  }
  StringRef getDescription() const override {
    return "poptorch-prepack-parameters through the calls of pipeline stages";
  }
  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    bool changed = false;
    for (BlockArgument arg : main.getArguments()) {
      unsigned index = arg.getArgNumber();
      auto role = main.getArgAttrOfType<StringAttr>(index, "poptorch.role");
      if (!role || role.getValue() != "parameter" || arg.use_empty() ||
          main.getArgAttr(index, "poptorch.permuted"))
        continue;
      // Every use: a stage call whose callee argument is only permuted, the
      // same way everywhere.
      SmallVector<BlockArgument> calleeArgs;
      poptorch::PermuteOp first;
      bool ok = true;
      for (OpOperand &use : arg.getUses()) {
        auto call = dyn_cast<func::CallOp>(use.getOwner());
        auto callee = call ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                                 call, call.getCalleeAttr())
                           : func::FuncOp();
        if (!callee || !callee->hasAttr(kPipelineStage)) {
          ok = false;
          break;
        }
        BlockArgument inner = callee.getArgument(use.getOperandNumber());
        for (Operation *user : inner.getUsers()) {
          auto permute = dyn_cast<poptorch::PermuteOp>(user);
          if (!permute || (first && permute.getDims() != first.getDims())) {
            ok = false;
            break;
          }
          first = first ? first : permute;
        }
        calleeArgs.push_back(inner);
      }
      if (!ok || !first)
        continue;
      Type type = first.getType();
      DenseI64ArrayAttr dims = first.getDimsAttr();
      for (BlockArgument inner : calleeArgs) {
        inner.setType(type);
        for (Operation *user : llvm::make_early_inc_range(inner.getUsers())) {
          user->getResult(0).replaceAllUsesWith(inner);
          user->erase();
        }
        auto callee = cast<func::FuncOp>(inner.getOwner()->getParentOp());
        callee.setType(FunctionType::get(&getContext(),
                                         callee.front().getArgumentTypes(),
                                         callee.getResultTypes()));
      }
      arg.setType(type);
      main.setArgAttr(index, "poptorch.permuted", dims);
      changed = true;
    }
    if (changed)
      main.setType(FunctionType::get(&getContext(),
                                     main.front().getArgumentTypes(),
                                     main.getResultTypes()));
  }
};

/// The buffer a memref is a view of.
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(def)) {
      v = cast.getSource();
      continue;
    }
    break;
  }
  return v;
}

bool isStageCall(Operation &op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call || call.getNumResults() != 0)
    return false;
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  return callee && callee->hasAttr(kPipelineStage);
}

struct OverlapStagesPass
    : public poptorch::impl::PoptorchOverlapStagesBase<OverlapStagesPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<async::AsyncDialect>();
  }

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal())
        fn.walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      visit(*block);
  }

  void visit(Block &block) {
    SmallVector<func::CallOp> group;
    llvm::SmallDenseSet<Value> buffers; // the group's buffers
    // Deallocations of the group's buffers, moved after its awaits.
    SmallVector<Operation *> deferred;
    auto flush = [&] {
      Operation *last = group.empty() ? nullptr : group.back().getOperation();
      if (group.size() > 1)
        last = overlap(group);
      for (Operation *dealloc : deferred) {
        dealloc->moveAfter(last);
        last = dealloc;
      }
      group.clear();
      buffers.clear();
      deferred.clear();
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isStageCall(op)) {
        auto call = cast<func::CallOp>(op);
        SmallVector<Value> mine;
        for (Value v : call.getOperands())
          if (isa<BaseMemRefType>(v.getType()))
            mine.push_back(rootOf(v));
        if (llvm::any_of(mine, [&](Value r) { return buffers.contains(r); }))
          flush();
        group.push_back(call);
        buffers.insert(mine.begin(), mine.end());
        continue;
      }
      // Views and allocations may sit between the calls of a group, and
      // deallocations (poptorch-buffer-live-ranges frees each buffer after
      // its last use): those of the group's buffers move after its awaits.
      // Any other effect (a copy) waits for the group first.
      if (op.getNumRegions() == 0 && op.getNumResults() > 0 &&
          (isMemoryEffectFree(&op) || isa<memref::AllocOp>(op)))
        continue;
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        if (buffers.contains(rootOf(dealloc.getMemref())))
          deferred.push_back(dealloc);
        continue;
      }
      flush();
    }
    flush();
  }

  /// All calls but the last become tasks; the last runs here; then wait.
  /// Returns the last await.
  Operation *overlap(MutableArrayRef<func::CallOp> group) {
    SmallVector<Value> tokens;
    for (func::CallOp call : group.drop_back()) {
      OpBuilder b(call);
      Location loc = call.getLoc();
      auto exec = async::ExecuteOp::create(
          b, loc, TypeRange{}, ValueRange{}, ValueRange{},
          [&](OpBuilder &eb, Location l, ValueRange) {
            eb.clone(*call);
            async::YieldOp::create(eb, l, ValueRange{});
          });
      tokens.push_back(exec.getToken());
      call.erase();
    }
    OpBuilder b(group.back()->getBlock(),
                std::next(group.back()->getIterator()));
    Operation *last = group.back();
    for (Value token : tokens)
      last = async::AwaitOp::create(b, group.back().getLoc(), token);
    return last;
  }
};

} // namespace

namespace mlir::poptorch {
void registerPrepackStageParametersPass() {
  PassRegistration<PrepackStageParametersPass>();
}
} // namespace mlir::poptorch
