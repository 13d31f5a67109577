//===- ParallelLoops.cpp - parallel loops as calls of the task runtime ----===//
//
// A parallel loop of a kernel runs its iterations on the threads of the
// program call (csrc/bridge/TaskRuntime.cpp). Upstream's async-parallel-for
// made each loop a recursive dispatch function and a coroutine per block,
// each taking every memref's whole descriptor, and LLVM inlined the loop body
// into both: MobileNetV2 at batch 8 had 67K LLVM instructions after O3, about
// half of them in coroutines and dispatchers (24K of 59K with the body kept
// out of line), compiled on every cold start. Here a loop is two steps:
//
//   poptorch-parallel-loops (before the conversion to LLVM) numbers the
//   iterations of an outermost scf.forall and makes it a
//   poptorch.parallel_for whose body runs a range of them;
//
//   poptorch-outline-parallel (after it) moves each body into a function of
//   (values from above, begin, end) and calls the runtime's
//   poptorch_parallel_for with it, which shares the ranges out.
//
// The body stays in its function through the conversion, so the conversion
// passes need to know nothing about it, and the values it reads from above
// are LLVM values by the time they are packed: a memref is passed as the
// fields of its descriptor the body reads (usually the aligned pointer), a
// constant is cloned into the body.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <vector>

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHPARALLELLOOPS
#define GEN_PASS_DEF_POPTORCHOUTLINEPARALLEL
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// scf.forall -> poptorch.parallel_for
//===----------------------------------------------------------------------===//

/// A buffer of static shape that each iteration of `loop` (the iterations of
/// one range of a parallel loop, run in turn by one thread) allocates and
/// frees is allocated once for the range. Below the buffer pool's size these
/// are malloc/free pairs: a register tile's packed panel, allocated for each
/// of the 12544 / 32 column tasks of MobileNetV2's first 1x1 convolutions,
/// kept glibc's allocator at 3-5% of the network's cycles.
void hoistIterationBuffers(RewriterBase &rewriter, scf::ForOp loop) {
  Block *body = loop.getBody();
  for (auto alloc :
       llvm::make_early_inc_range(body->getOps<memref::AllocOp>())) {
    if (!alloc->getOperands().empty())
      continue;
    // Exactly one dealloc, in the body itself (not a conditional one).
    auto deallocs = llvm::filter_to_vector(alloc->getUsers(), [](Operation *u) {
      return isa<memref::DeallocOp>(u);
    });
    if (deallocs.size() != 1 || deallocs.front()->getBlock() != body)
      continue;
    rewriter.moveOpBefore(alloc, loop);
    rewriter.moveOpAfter(deallocs.front(), loop);
  }
}

/// Replaces `forall` (bufferized, no results) with a poptorch.parallel_for
/// over the product of its trip counts. Iteration k of the new loop is the
/// forall's iteration whose induction variables are k in row-major order.
LogicalResult toParallelFor(RewriterBase &rewriter, scf::ForallOp forall) {
  auto inParallel = forall.getTerminator();
  if (forall.getNumResults() != 0 || !inParallel.getYieldingOps().empty())
    return forall.emitOpError(
        "has tensor results: poptorch-parallel-loops runs after bufferization");
  Location loc = forall.getLoc();
  rewriter.setInsertionPoint(forall);
  SmallVector<Value> lbs = getValueOrCreateConstantIndexOp(
      rewriter, loc, forall.getMixedLowerBound());
  SmallVector<Value> ubs = getValueOrCreateConstantIndexOp(
      rewriter, loc, forall.getMixedUpperBound());
  SmallVector<Value> steps =
      getValueOrCreateConstantIndexOp(rewriter, loc, forall.getMixedStep());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> trips;
  Value total = one;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    Value span = rewriter.createOrFold<arith::SubIOp>(loc, ub, lb);
    // An empty dimension (ub <= lb) has no iterations, not a negative count.
    span = rewriter.createOrFold<arith::MaxSIOp>(loc, span, zero);
    trips.push_back(rewriter.createOrFold<arith::CeilDivSIOp>(loc, span, step));
    total = rewriter.createOrFold<arith::MulIOp>(loc, total, trips.back());
  }
  Type i64 = rewriter.getI64Type();
  Value iterations = rewriter.createOrFold<arith::IndexCastOp>(loc, i64, total);

  auto parallel = poptorch::ParallelForOp::create(rewriter, loc, iterations);
  Block *entry =
      rewriter.createBlock(&parallel.getBody(), {}, {i64, i64}, {loc, loc});
  Type index = rewriter.getIndexType();
  Value begin =
      arith::IndexCastOp::create(rewriter, loc, index, entry->getArgument(0));
  Value end =
      arith::IndexCastOp::create(rewriter, loc, index, entry->getArgument(1));
  auto loop = scf::ForOp::create(rewriter, loc, begin, end, one);
  poptorch::ParallelYieldOp::create(rewriter, loc);

  rewriter.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> ivs(trips.size());
  Value rest = loop.getInductionVar();
  for (int64_t d = trips.size() - 1; d >= 0; --d) {
    Value k = d == 0
                  ? rest
                  : rewriter.createOrFold<arith::RemUIOp>(loc, rest, trips[d]);
    Value scaled = rewriter.createOrFold<arith::MulIOp>(loc, k, steps[d]);
    ivs[d] = rewriter.createOrFold<arith::AddIOp>(loc, lbs[d], scaled);
    if (d > 0)
      rest = rewriter.createOrFold<arith::DivUIOp>(loc, rest, trips[d]);
  }
  Block *body = forall.getBody();
  rewriter.eraseOp(inParallel);
  rewriter.inlineBlockBefore(body, loop.getBody()->getTerminator(), ivs);
  rewriter.eraseOp(forall);
  hoistIterationBuffers(rewriter, loop);
  return success();
}

struct ParallelLoopsPass
    : public poptorch::impl::PoptorchParallelLoopsBase<ParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> outermost;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ForallOp forall) {
      outermost.push_back(forall);
      return WalkResult::skip();
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : outermost) {
      // One level of parallelism: the team is already busy with the outer
      // loop's ranges.
      SmallVector<scf::ForallOp> nested;
      forall.getBody()->walk(
          [&](scf::ForallOp inner) { nested.push_back(inner); });
      for (scf::ForallOp inner : nested) {
        rewriter.setInsertionPoint(inner);
        if (failed(scf::forallToForLoop(rewriter, inner)))
          return signalPassFailure();
      }
      if (failed(toParallelFor(rewriter, forall)))
        return signalPassFailure();
    }
    // createOrFold leaves the constants it folded through.
    getOperation().walk([](arith::ConstantOp constant) {
      if (constant.use_empty())
        constant.erase();
    });
  }
};

//===----------------------------------------------------------------------===//
// poptorch.parallel_for -> a body function and a runtime call
//===----------------------------------------------------------------------===//

constexpr llvm::StringLiteral kRuntimeEntry = "poptorch_parallel_for";

/// Rewrites what `region` reads from above so that less crosses into it:
/// operand-free, side-effect-free ops (constants, addresses of globals) are
/// cloned into it, and of an aggregate that the region only takes fields of,
/// those fields are taken before `op` instead. Repeats until nothing changes
/// (a field may itself be an aggregate).
void narrowCaptures(Operation *op, Region &region) {
  for (bool changed = true; changed;) {
    changed = false;
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(region, above);
    for (Value value : above) {
      Operation *def = value.getDefiningOp();
      if (def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
          def->getNumResults() == 1 && isMemoryEffectFree(def)) {
        OpBuilder builder = OpBuilder::atBlockBegin(&region.front());
        Operation *copy = builder.clone(*def);
        replaceAllUsesInRegionWith(value, copy->getResult(0), region);
        changed = true;
        continue;
      }
      if (!isa<LLVM::LLVMStructType, LLVM::LLVMArrayType>(value.getType()))
        continue;
      SmallVector<LLVM::ExtractValueOp> fields;
      bool onlyFields = true;
      for (Operation *user : value.getUsers()) {
        if (!region.isAncestor(user->getParentRegion()))
          continue;
        auto field = dyn_cast<LLVM::ExtractValueOp>(user);
        if (!field || field.getContainer() != value) {
          onlyFields = false;
          break;
        }
        fields.push_back(field);
      }
      if (!onlyFields || fields.empty())
        continue;
      OpBuilder builder(op);
      std::map<std::vector<int64_t>, Value> outside;
      for (LLVM::ExtractValueOp field : fields) {
        ArrayRef<int64_t> position = field.getPosition();
        Value &taken =
            outside[std::vector<int64_t>(position.begin(), position.end())];
        if (!taken)
          taken = LLVM::ExtractValueOp::create(builder, field.getLoc(), value,
                                               position);
        field.replaceAllUsesWith(taken);
        field.erase();
      }
      changed = true;
    }
  }
}

struct OutlineParallelPass
    : public poptorch::impl::PoptorchOutlineParallelBase<OutlineParallelPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<poptorch::ParallelForOp> loops;
    module.walk([&](poptorch::ParallelForOp op) { loops.push_back(op); });
    if (loops.empty())
      return;
    MLIRContext *ctx = &getContext();
    ptrType = LLVM::LLVMPointerType::get(ctx);
    i64Type = IntegerType::get(ctx, 64);
    SymbolTable symbols(module);
    runtime = symbols.lookup<LLVM::LLVMFuncOp>(kRuntimeEntry);
    if (!runtime) {
      auto builder = OpBuilder::atBlockEnd(module.getBody());
      runtime = LLVM::LLVMFuncOp::create(
          builder, module.getLoc(), kRuntimeEntry,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                      {ptrType, ptrType, i64Type}));
    }
    for (poptorch::ParallelForOp op : loops)
      if (failed(outline(op, symbols)))
        return signalPassFailure();
  }

  LogicalResult outline(poptorch::ParallelForOp op, SymbolTable &symbols) {
    auto parent = op->getParentOfType<LLVM::LLVMFuncOp>();
    if (!parent)
      return op.emitOpError("is not in an llvm.func: poptorch-outline-parallel "
                            "runs after the conversion to the LLVM dialect");
    Region &region = op.getBody();
    narrowCaptures(op, region);
    llvm::SetVector<Value> captures;
    getUsedValuesDefinedAbove(region, captures);
    SmallVector<Type> types;
    for (Value value : captures)
      types.push_back(value.getType());
    MLIRContext *ctx = op.getContext();
    auto frameType = LLVM::LLVMStructType::getLiteral(ctx, types);
    Location loc = op.getLoc();
    // The address of the frame's field i, for the body's loads and the
    // caller's stores.
    auto field = [&](OpBuilder &b, Value frame, size_t i) -> Value {
      return LLVM::GEPOp::create(
          b, loc, ptrType, frameType, frame,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    };

    // The body: (frame, begin, end), the values from above loaded from the
    // frame at the top of what was the region's entry block.
    OpBuilder builder(parent);
    builder.setInsertionPointAfter(parent);
    auto body = LLVM::LLVMFuncOp::create(
        builder, loc, (parent.getSymName() + "_parallel").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptrType, i64Type, i64Type}),
        LLVM::Linkage::Internal);
    symbols.insert(body); // renames it if the name is taken
    body.getBody().takeBody(region);
    Block &entry = body.getBody().front();
    Value frame = entry.insertArgument(0u, ptrType, loc);
    builder.setInsertionPointToStart(&entry);
    for (auto [i, value] : llvm::enumerate(captures)) {
      Value loaded = LLVM::LoadOp::create(builder, loc, value.getType(),
                                          field(builder, frame, i));
      replaceAllUsesInRegionWith(value, loaded, body.getBody());
    }
    SmallVector<poptorch::ParallelYieldOp> yields;
    body.walk([&](poptorch::ParallelYieldOp y) { yields.push_back(y); });
    for (poptorch::ParallelYieldOp y : yields) {
      OpBuilder at(y);
      LLVM::ReturnOp::create(at, y.getLoc(), ValueRange{});
      y.erase();
    }

    // The call: the frame is a stack slot of the caller, filled in place of
    // the loop.
    builder.setInsertionPointToStart(&parent.getBody().front());
    Value count = LLVM::ConstantOp::create(builder, loc, i64Type, 1);
    Value slot =
        LLVM::AllocaOp::create(builder, loc, ptrType, frameType, count);
    builder.setInsertionPoint(op);
    for (auto [i, value] : llvm::enumerate(captures))
      LLVM::StoreOp::create(builder, loc, value, field(builder, slot, i));
    Value function = LLVM::AddressOfOp::create(builder, loc, body);
    LLVM::CallOp::create(builder, loc, runtime,
                         ValueRange{function, slot, op.getIterations()});
    op.erase();
    return success();
  }

  LLVM::LLVMFuncOp runtime;
  Type ptrType;
  Type i64Type;
};

} // namespace
