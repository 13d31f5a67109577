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
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

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

  LogicalResult rewrite(func::FuncOp old) {
    MLIRContext *ctx = &getContext();
    Location loc = old.getLoc();
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

    auto loop = scf::ForOp::create(b, loc, c0, cIters, c1, inits);
    // poptorch-outline-kernels outlines the kernels inside, not the loop.
    loop->setAttr("poptorch.device_loop", b.getUnitAttr());
    if (!loop.getBody()->empty()) // the default yield of a loop without values
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
      if (isInput(old, i)) {
        auto microBatch = cast<RankedTensorType>(old.getArgumentTypes()[i]);
        SmallVector<OpFoldResult> offsets, sizes, strides;
        sliceOf(b, microBatch, iv, replica, offsets, sizes, strides);
        v = tensor::ExtractSliceOp::create(b, loc, microBatch, v, offsets,
                                           sizes, strides);
      }
      map.map(old.getArgument(i), v);
    }
    for (Operation &op : old.front().without_terminator())
      b.clone(op, map);

    SmallVector<Value> yields;
    // Outputs: summed, or inserted at position (i + 1) / period - 1 when
    // (i + 1) is a multiple of the period.
    for (auto [k, r] : llvm::enumerate(outputs)) {
      Value out = map.lookupOrDefault(ret.getOperand(r));
      Value acc = carried[k];
      if (sum) {
        // In place into the accumulator: bufferization wants each yielded
        // value equivalent to its iter_arg.
        yields.push_back(
            linalg::AddOp::create(b, loc, ValueRange{acc, out}, acc)
                .getResult(0));
        continue;
      }
      auto insertAt = [&](OpBuilder &ib, Value pos) {
        auto outType = cast<RankedTensorType>(out.getType());
        SmallVector<OpFoldResult> offsets{pos}, sizes{ib.getIndexAttr(1)};
        for (int64_t d : outType.getShape()) {
          offsets.push_back(ib.getIndexAttr(0));
          sizes.push_back(ib.getIndexAttr(d));
        }
        SmallVector<OpFoldResult> strides(offsets.size(), ib.getIndexAttr(1));
        return tensor::InsertSliceOp::create(ib, loc, out, acc, offsets, sizes,
                                             strides)
            .getResult();
      };
      if (period == 1) {
        yields.push_back(insertAt(b, iv));
        continue;
      }
      Value next = arith::AddIOp::create(b, loc, iv, c1);
      Value cPeriod = arith::ConstantIndexOp::create(b, loc, period);
      Value rem = arith::RemUIOp::create(b, loc, next, cPeriod);
      Value isKept =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, c0);
      auto ifOp = scf::IfOp::create(
          b, loc, isKept,
          [&](OpBuilder &tb, Location l) {
            Value pos = arith::SubIOp::create(
                tb, l, arith::DivUIOp::create(tb, l, next, cPeriod), c1);
            scf::YieldOp::create(tb, l, insertAt(tb, pos));
          },
          [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, acc); });
      yields.push_back(ifOp.getResult(0));
    }
    // Updates: a written input goes back into its slice, a buffer is replaced.
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

    old.erase();
    fn.setSymName("main");
    return success();
  }
};

} // namespace
