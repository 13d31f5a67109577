//===- DeviceIterations.cpp - the device-iteration loop -------------------===//
//
// PopTorch runs `deviceIterations` micro-batches per call inside the device
// program (Poplar's Repeat). Tracing captures one micro-batch as @main; this
// pass rewrites @main into the loop over iterations: inputs gain
// [iterations, replicas] leading dimensions and are sliced per iteration,
// buffer updates are loop-carried, and outputs are stacked or summed as
// outputMode says. Replicas are separate invocations of the program that
// pass their index in a trailing `tensor<i64>` argument (the runtime runs
// them on separate threads), so each replica reads its own slices.
//
// When poptorch-outline-stages made @main a chain of pipeline-stage calls,
// `pipeline=true` builds a software pipeline instead of the plain loop: at
// step t, stage k runs micro-batch t - k (fill: steps 0 .. S-2, the
// steady-state loop: S-1 .. N-1, drain: N .. N+S-2), every stage reading
// what the stage before it handed on in step t - 1, so the calls of one step
// are independent (poptorch-overlap-stages runs them concurrently). Where
// that is not possible or not worth it the stages are inlined back and run
// one after another; @main's `poptorch.pipeline` says which and why.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHDEVICEITERATIONS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

bool isInput(func::FuncOp f, unsigned i) {
  auto role = f.getArgAttrOfType<StringAttr>(i, "poptorch.role");
  return role && role.getValue() == "input";
}

/// offsets [i, r, 0...], sizes [1, 1, shape...] of a per-micro-batch slice of
/// a `[iterations, replicas, shape...]` tensor.
void sliceOf(OpBuilder &b, RankedTensorType microBatch, Value i, Value r,
             SmallVectorImpl<OpFoldResult> &offsets,
             SmallVectorImpl<OpFoldResult> &sizes,
             SmallVectorImpl<OpFoldResult> &strides) {
  offsets.assign({OpFoldResult(i), OpFoldResult(r)});
  sizes.assign(2, b.getIndexAttr(1));
  for (int64_t d : microBatch.getShape()) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(d));
  }
  strides.assign(offsets.size(), b.getIndexAttr(1));
}

func::FuncOp calleeOf(func::CallOp call) {
  return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
}

/// The stage calls of @main in order, when its body is exactly the chain
/// poptorch-outline-stages builds (calls, then the return); else empty.
SmallVector<func::CallOp> stageCalls(func::FuncOp main) {
  SmallVector<func::CallOp> calls;
  for (Operation &op : main.front().without_terminator()) {
    auto call = dyn_cast<func::CallOp>(op);
    func::FuncOp callee = call ? calleeOf(call) : func::FuncOp();
    if (!callee || !callee->hasAttr("poptorch.pipeline_stage"))
      return {};
    calls.push_back(call);
  }
  return calls;
}

/// Inlines the stage calls back into @main (the sequential schedule).
void inlineStages(ArrayRef<func::CallOp> calls) {
  for (func::CallOp call : calls) {
    func::FuncOp callee = calleeOf(call);
    OpBuilder b(call);
    IRMapping map;
    map.map(callee.getArguments(), call.getOperands());
    for (Operation &op : callee.front().without_terminator())
      b.clone(op, map);
    auto ret = cast<func::ReturnOp>(callee.front().getTerminator());
    for (auto [r, v] : llvm::zip(call.getResults(), ret.getOperands()))
      r.replaceAllUsesWith(map.lookupOrDefault(v));
    call.erase();
    callee.erase();
  }
}

std::string argName(func::FuncOp f, unsigned i) {
  if (auto n = f.getArgAttrOfType<StringAttr>(i, "poptorch.name"))
    return n.str();
  return "argument " + std::to_string(i);
}

struct DeviceIterationsPass
    : public poptorch::impl::PoptorchDeviceIterationsBase<
          DeviceIterationsPass> {
  using PoptorchDeviceIterationsBase::PoptorchDeviceIterationsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("poptorch-device-iterations needs a @main with a body");
      return signalPassFailure();
    }
    if (iterations < 1 || replicas < 1 || period < 1 ||
        iterations % period != 0) {
      main.emitError("poptorch-device-iterations: iterations (")
          << iterations << ") must be a multiple of period (" << period
          << "), replicas (" << replicas << ") at least 1";
      return signalPassFailure();
    }
    if (failed(rewrite(main)))
      signalPassFailure();
  }

  /// Why the stages cannot overlap (empty: they can).
  std::string whySequential(func::FuncOp main,
                            MutableArrayRef<func::CallOp> calls) {
    if (iterations < int64_t(calls.size()))
      return "deviceIterations (" + std::to_string(iterations) +
             ") is less than the number of stages (" +
             std::to_string(calls.size()) + ")";
    for (auto [k, call] : llvm::enumerate(calls)) {
      bool parallel = false;
      calleeOf(call).walk([&](scf::ForallOp) { parallel = true; });
      if (parallel)
        return "stage " + std::to_string(k) +
               " has ops large enough to use every core on their own "
               "(above min-parallel-cost), so overlapping stages would "
               "only compete for the cores";
    }
    for (auto [k, call] : llvm::enumerate(calls))
      for (Value o : call.getOperands()) {
        auto r = dyn_cast<OpResult>(o);
        if (r && (k == 0 || r.getOwner() != calls[k - 1]))
          return "stage " + std::to_string(k) +
                 " reads a value that is not handed on by the stage before it";
      }
    // A buffer written by a stage must be read by that stage only: it is
    // carried from one micro-batch to the next within the stage.
    auto ret = cast<func::ReturnOp>(main.front().getTerminator());
    for (unsigned r = 0; r < main.getNumResults(); ++r) {
      auto a = main.getResultAttrOfType<IntegerAttr>(r, "poptorch.updates");
      if (!a)
        continue;
      unsigned arg = a.getInt();
      if (isInput(main, arg))
        return "the input " + argName(main, arg) + " is written in place";
      auto writer = cast<OpResult>(ret.getOperand(r)).getOwner();
      for (auto [k, call] : llvm::enumerate(calls))
        if (call != writer &&
            llvm::is_contained(call.getOperands(), main.getArgument(arg)))
          return "the buffer " + argName(main, arg) + " is read by stage " +
                 std::to_string(k) + " and written by stage " +
                 std::to_string(llvm::find(calls, cast<func::CallOp>(writer)) -
                                calls.begin());
    }
    return "";
  }

  /// The software pipeline over the stage calls (see the file comment).
  /// `inits`: the accumulators of `outputs`, then the buffers `updates`
  /// write (at carriedIndex).
  void buildPipeline(
      OpBuilder &b, func::FuncOp old, func::FuncOp fn,
      MutableArrayRef<func::CallOp> calls, ArrayRef<Value> inits,
      ArrayRef<unsigned> outputs,
      ArrayRef<std::pair<unsigned, unsigned>> updates,
      const DenseMap<unsigned, unsigned> &carriedIndex,
      function_ref<Value(OpBuilder &, Value, unsigned, Value)> sliceInput,
      function_ref<Value(OpBuilder &, Value, Value, Value)> accumulate) {
    Location loc = old.getLoc();
    int64_t numStages = calls.size();
    auto ret = cast<func::ReturnOp>(old.front().getTerminator());
    // What each old call result feeds: the next stage, @main results.
    SmallVector<SmallVector<unsigned>> handIdx(numStages);
    for (int64_t k = 0; k + 1 < numStages; ++k)
      for (OpResult r : calls[k]->getResults())
        if (llvm::any_of(r.getUsers(),
                         [&](Operation *u) { return u == calls[k + 1]; }))
          handIdx[k].push_back(r.getResultNumber());
    DenseMap<unsigned, int64_t> outputPos; // @main result -> accumulator
    for (auto [p, r] : llvm::enumerate(outputs))
      outputPos[r] = p;
    DenseMap<unsigned, unsigned> updateArg(updates.begin(), updates.end());

    // The state between steps.
    SmallVector<Value> accs(inits.take_front(outputs.size()));
    DenseMap<unsigned, Value> bufs; // written argument -> its latest value
    for (auto [r, arg] : updates)
      bufs[arg] = inits[carriedIndex.lookup(arg)];
    SmallVector<DenseMap<unsigned, Value>> handed(numStages);

    auto pack = [&] {
      SmallVector<Value> vs(accs);
      for (auto [r, arg] : updates)
        vs.push_back(bufs[arg]);
      for (int64_t k = 0; k + 1 < numStages; ++k)
        for (unsigned j : handIdx[k])
          vs.push_back(handed[k][j]);
      return vs;
    };
    auto unpack = [&](ValueRange vs) {
      unsigned n = 0;
      for (Value &acc : accs)
        acc = vs[n++];
      for (auto [r, arg] : updates)
        bufs[arg] = vs[n++];
      for (int64_t k = 0; k + 1 < numStages; ++k)
        for (unsigned j : handIdx[k])
          handed[k][j] = vs[n++];
    };

    // Step t: stages lo..hi run micro-batches t - k. All calls first (they
    // only read the state of step t - 1), then the outputs and buffers.
    auto step = [&](OpBuilder &sb, Value t, int64_t lo, int64_t hi) {
      auto before = handed;
      SmallVector<std::pair<func::CallOp, Value>> made; // call, micro-batch
      for (int64_t k = lo; k <= hi; ++k) {
        Value m =
            k == 0 ? t
                   : arith::SubIOp::create(
                         sb, loc, t, arith::ConstantIndexOp::create(sb, loc, k))
                         .getResult();
        SmallVector<Value> operands;
        for (Value o : calls[k].getOperands()) {
          if (auto arg = dyn_cast<BlockArgument>(o)) {
            unsigned i = arg.getArgNumber();
            Value v = bufs.count(i) ? bufs[i] : fn.getArgument(i);
            operands.push_back(isInput(old, i) ? sliceInput(sb, v, i, m) : v);
            continue;
          }
          operands.push_back(
              before[k - 1][cast<OpResult>(o).getResultNumber()]);
        }
        auto call = func::CallOp::create(sb, loc, calls[k].getCallee(),
                                         calls[k].getResultTypes(), operands);
        made.push_back({call, m});
        for (unsigned j : handIdx[k])
          handed[k][j] = call.getResult(j);
      }
      for (auto [n, k] : llvm::enumerate(llvm::seq_inclusive(lo, hi))) {
        auto [call, m] = made[n];
        for (OpOperand &use : ret->getOpOperands()) {
          auto r = dyn_cast<OpResult>(use.get());
          if (!r || r.getOwner() != calls[k])
            continue;
          unsigned res = use.getOperandNumber();
          Value v = call.getResult(r.getResultNumber());
          if (auto it = outputPos.find(res); it != outputPos.end())
            accs[it->second] = accumulate(sb, accs[it->second], v, m);
          else
            bufs[updateArg.lookup(res)] = v;
        }
      }
    };
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };

    for (int64_t t = 0; t + 1 < numStages; ++t) // fill
      step(b, cst(t), 0, t);
    auto loop = scf::ForOp::create(b, loc, cst(numStages - 1), cst(iterations),
                                   cst(1), pack());
    loop->setAttr("poptorch.device_loop", b.getUnitAttr());
    if (!loop.getBody()->empty())
      loop.getBody()->getTerminator()->erase();
    {
      OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
      unpack(loop.getRegionIterArgs());
      step(lb, loop.getInductionVar(), 0, numStages - 1);
      scf::YieldOp::create(lb, loc, pack());
    }
    b.setInsertionPointAfter(loop);
    unpack(loop.getResults());
    for (int64_t t = iterations; t + 1 < iterations + numStages; ++t) // drain
      step(b, cst(t), t - iterations + 1, numStages - 1);

    SmallVector<Value> results(accs);
    for (auto [r, arg] : updates)
      results.push_back(bufs[arg]);
    func::ReturnOp::create(b, loc, results);
  }

  LogicalResult rewrite(func::FuncOp old) {
    MLIRContext *ctx = &getContext();
    Location loc = old.getLoc();
    SmallVector<func::CallOp> calls = stageCalls(old);
    std::string schedule;
    if (calls.size() > 1) {
      std::string why = pipeline ? whySequential(old, calls)
                                 : "PipelinedExecution was not asked for";
      schedule = why.empty() ? "overlapped" : "sequential: " + why;
      if (!why.empty()) {
        inlineStages(calls);
        calls.clear();
      }
    } else if (!calls.empty()) {
      inlineStages(calls);
      calls.clear();
    }
    auto ret = cast<func::ReturnOp>(old.front().getTerminator());
    unsigned numArgs = old.getNumArguments();

    // Results: the outputs, then one update per written argument.
    SmallVector<unsigned> outputs;
    SmallVector<std::pair<unsigned, unsigned>> updates; // (result, arg)
    for (unsigned r = 0; r < old.getNumResults(); ++r) {
      if (auto a = old.getResultAttrOfType<IntegerAttr>(r, "poptorch.updates"))
        updates.push_back({r, unsigned(a.getInt())});
      else
        outputs.push_back(r);
    }

    // The new signature.
    int64_t kept = sum ? 1 : iterations / period;
    SmallVector<Type> argTypes;
    for (unsigned i = 0; i < numArgs; ++i) {
      auto t = cast<RankedTensorType>(old.getArgumentTypes()[i]);
      if (isInput(old, i)) {
        SmallVector<int64_t> shape{iterations, replicas};
        llvm::append_range(shape, t.getShape());
        argTypes.push_back(RankedTensorType::get(shape, t.getElementType()));
      } else {
        argTypes.push_back(t);
      }
    }
    bool hasReplicaArg = replicas > 1;
    auto i64Scalar = RankedTensorType::get({}, IntegerType::get(ctx, 64));
    if (hasReplicaArg)
      argTypes.push_back(i64Scalar);
    SmallVector<Type> resultTypes;
    for (unsigned r : outputs) {
      auto t = cast<RankedTensorType>(old.getResultTypes()[r]);
      if (sum) {
        if (t.getElementType().isInteger(1))
          return old.emitError("OutputMode.Sum cannot sum output ")
                 << r << " (a bool tensor); return it as an integer tensor";
        resultTypes.push_back(t);
        continue;
      }
      SmallVector<int64_t> shape{kept};
      llvm::append_range(shape, t.getShape());
      resultTypes.push_back(RankedTensorType::get(shape, t.getElementType()));
    }
    for (auto [r, arg] : updates)
      resultTypes.push_back(argTypes[arg]);

    OpBuilder b(old);
    auto fn = func::FuncOp::create(b, loc, "main_with_loop",
                                   b.getFunctionType(argTypes, resultTypes));
    // Keep the argument attributes (role, name), the update markers and the
    // C interface.
    for (unsigned i = 0; i < numArgs; ++i)
      fn.setArgAttrs(i, old.getArgAttrDict(i));
    if (hasReplicaArg) {
      fn.setArgAttr(numArgs, "poptorch.role", b.getStringAttr("replica"));
      fn.setArgAttr(numArgs, "poptorch.name", b.getStringAttr("replica"));
    }
    for (auto [k, u] : llvm::enumerate(updates))
      fn.setResultAttr(outputs.size() + k, "poptorch.updates",
                       b.getI64IntegerAttr(u.second));
    for (NamedAttribute a : old->getDiscardableAttrs())
      fn->setAttr(a.getName(), a.getValue());
    if (!schedule.empty())
      fn->setAttr("poptorch.pipeline", b.getStringAttr(schedule));

    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value cIters = arith::ConstantIndexOp::create(b, loc, iterations);
    Value replica = c0;
    if (hasReplicaArg) {
      Value idx = tensor::ExtractOp::create(b, loc, entry->getArgument(numArgs),
                                            ValueRange{});
      replica = arith::IndexCastOp::create(b, loc, b.getIndexType(), idx);
    }

    // Loop-carried values: one accumulator per output, then every written
    // argument (so that iteration i + 1 reads what iteration i wrote).
    SmallVector<Value> inits;
    for (auto [k, r] : llvm::enumerate(outputs)) {
      auto t = cast<RankedTensorType>(resultTypes[k]);
      if (sum)
        inits.push_back(arith::ConstantOp::create(
            b, loc, cast<TypedAttr>(b.getZeroAttr(t))));
      else
        inits.push_back(
            tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType()));
    }
    DenseMap<unsigned, unsigned> carriedIndex; // arg -> iter_arg position
    for (auto [r, arg] : updates) {
      carriedIndex[arg] = inits.size();
      inits.push_back(entry->getArgument(arg));
    }

    // The slice of input `i` that micro-batch `m` reads.
    auto sliceInput = [&](OpBuilder &ib, Value v, unsigned i, Value m) {
      auto microBatch = cast<RankedTensorType>(old.getArgumentTypes()[i]);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      sliceOf(ib, microBatch, m, replica, offsets, sizes, strides);
      return tensor::ExtractSliceOp::create(ib, loc, microBatch, v, offsets,
                                            sizes, strides)
          .getResult();
    };
    // Output `out` of micro-batch `m` into accumulator `acc`: summed, or
    // inserted at position (m + 1) / period - 1 when (m + 1) is a multiple
    // of the period.
    auto accumulate = [&](OpBuilder &ib, Value acc, Value out, Value m) {
      if (sum) {
        // In place into the accumulator: bufferization wants each yielded
        // value equivalent to its iter_arg.
        return Value(linalg::AddOp::create(ib, loc, ValueRange{acc, out}, acc)
                         .getResult(0));
      }
      auto insertAt = [&](OpBuilder &ob, Value pos) {
        auto outType = cast<RankedTensorType>(out.getType());
        SmallVector<OpFoldResult> offsets{pos}, sizes{ob.getIndexAttr(1)};
        for (int64_t d : outType.getShape()) {
          offsets.push_back(ob.getIndexAttr(0));
          sizes.push_back(ob.getIndexAttr(d));
        }
        SmallVector<OpFoldResult> strides(offsets.size(), ob.getIndexAttr(1));
        return tensor::InsertSliceOp::create(ob, loc, out, acc, offsets, sizes,
                                             strides)
            .getResult();
      };
      if (period == 1)
        return Value(insertAt(ib, m));
      Value next = arith::AddIOp::create(ib, loc, m, c1);
      Value cPeriod = arith::ConstantIndexOp::create(ib, loc, period);
      Value rem = arith::RemUIOp::create(ib, loc, next, cPeriod);
      Value isKept =
          arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, rem, c0);
      auto ifOp = scf::IfOp::create(
          ib, loc, isKept,
          [&](OpBuilder &tb, Location l) {
            Value pos = arith::SubIOp::create(
                tb, l, arith::DivUIOp::create(tb, l, next, cPeriod), c1);
            scf::YieldOp::create(tb, l, insertAt(tb, pos));
          },
          [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, acc); });
      return Value(ifOp.getResult(0));
    };

    if (!calls.empty()) {
      buildPipeline(b, old, fn, calls, inits, outputs, updates, carriedIndex,
                    sliceInput, accumulate);
    } else {
      auto loop = scf::ForOp::create(b, loc, c0, cIters, c1, inits);
      // poptorch-outline-kernels outlines the kernels inside, not the loop.
      loop->setAttr("poptorch.device_loop", b.getUnitAttr());
      if (!loop.getBody()->empty()) // the default yield of a loop w/o values
        loop.getBody()->getTerminator()->erase();
      b.setInsertionPointToStart(loop.getBody());
      Value iv = loop.getInductionVar();
      auto carried = loop.getRegionIterArgs();

      // The micro-batch arguments of the captured body.
      IRMapping map;
      for (unsigned i = 0; i < numArgs; ++i) {
        Value v = entry->getArgument(i);
        if (auto it = carriedIndex.find(i); it != carriedIndex.end())
          v = carried[it->second];
        if (isInput(old, i))
          v = sliceInput(b, v, i, iv);
        map.map(old.getArgument(i), v);
      }
      for (Operation &op : old.front().without_terminator())
        b.clone(op, map);

      SmallVector<Value> yields;
      for (auto [k, r] : llvm::enumerate(outputs))
        yields.push_back(accumulate(
            b, carried[k], map.lookupOrDefault(ret.getOperand(r)), iv));
      // Updates: a written input goes back into its slice, a buffer is
      // replaced.
      for (auto [r, arg] : updates) {
        Value update = map.lookupOrDefault(ret.getOperand(r));
        if (isInput(old, arg)) {
          auto microBatch = cast<RankedTensorType>(old.getArgumentTypes()[arg]);
          SmallVector<OpFoldResult> offsets, sizes, strides;
          sliceOf(b, microBatch, iv, replica, offsets, sizes, strides);
          update = tensor::InsertSliceOp::create(b, loc, update,
                                                 carried[carriedIndex[arg]],
                                                 offsets, sizes, strides);
        }
        yields.push_back(update);
      }
      scf::YieldOp::create(b, loc, yields);

      b.setInsertionPointAfter(loop);
      func::ReturnOp::create(b, loc, loop.getResults());
    }

    old.erase();
    fn.setSymName("main");
    return success();
  }
};

} // namespace
