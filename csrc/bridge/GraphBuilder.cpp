//===- GraphBuilder.cpp - build the captured poptorch module ------------===//
//
// MLIR side of capture: turns the tracer's generic "op name + operands +
// attributes + result types" records into dialect ops with OperationState,
// so no per-op C++ exists here; the verifier checks every op as it is built.
//
//===----------------------------------------------------------------------===//
#include "Bridge.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Verifier.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>
#include <optional>

using namespace mlir;

namespace poptorch_bridge {

size_t elemSize(ElemType t) {
  switch (t) {
  case ElemType::F64:
  case ElemType::I64:
    return 8;
  case ElemType::F32:
  case ElemType::I32:
    return 4;
  case ElemType::F16:
  case ElemType::BF16:
  case ElemType::I16:
    return 2;
  default:
    return 1;
  }
}

const char *elemName(ElemType t) {
  static const char *names[] = {"float32", "float64", "float16", "bfloat16",
                                "bool",    "int8",    "uint8",   "int16",
                                "int32",   "int64"};
  return names[static_cast<int>(t)];
}

static Type toMlir(MLIRContext *ctx, ElemType t) {
  switch (t) {
  case ElemType::F32:
    return Float32Type::get(ctx);
  case ElemType::F64:
    return Float64Type::get(ctx);
  case ElemType::F16:
    return Float16Type::get(ctx);
  case ElemType::BF16:
    return BFloat16Type::get(ctx);
  case ElemType::Bool:
    return IntegerType::get(ctx, 1);
  case ElemType::I8:
    return IntegerType::get(ctx, 8);
  case ElemType::U8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case ElemType::I16:
    return IntegerType::get(ctx, 16);
  case ElemType::I32:
    return IntegerType::get(ctx, 32);
  case ElemType::I64:
    return IntegerType::get(ctx, 64);
  }
  return {};
}

static ElemType fromMlir(Type t) {
  if (t.isF32())
    return ElemType::F32;
  if (t.isF64())
    return ElemType::F64;
  if (t.isF16())
    return ElemType::F16;
  if (t.isBF16())
    return ElemType::BF16;
  auto it = cast<IntegerType>(t);
  switch (it.getWidth()) {
  case 1:
    return ElemType::Bool;
  case 8:
    return it.isUnsigned() ? ElemType::U8 : ElemType::I8;
  case 16:
    return ElemType::I16;
  case 32:
    return ElemType::I32;
  default:
    return ElemType::I64;
  }
}

struct GraphBuilder::Impl {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  Block *body = nullptr;
  std::vector<Value> values;
  std::string diagnostics;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::pair<std::string, AttrValue>> stamp;
  /// Scalar constants made since the stamp last changed, by element type and
  /// bits: a model's Python scalars (`x * 0.5`, add's alpha) repeat, and
  /// each is one op of the function's body however often it is used.
  std::map<std::pair<ElemType, uint64_t>, ValueId> scalars;
  /// The open regions of poptorch.for_loop / poptorch.cond, innermost last:
  /// the scf op, the block ops went into before it, and the scalar constants
  /// visible there (those made inside a region are not visible outside).
  struct OpenRegion {
    Operation *op;
    Block *outer;
    std::map<std::pair<ElemType, uint64_t>, ValueId> outerScalars;
    SmallVector<Type> thenTypes; // scf.if: the then branch's yield types
  };
  std::vector<OpenRegion> regions;

  Impl() {
    ctx.loadDialect<func::FuncDialect, poptorch::PoptorchDialect,
                    scf::SCFDialect, arith::ArithDialect,
                    tensor::TensorDialect>();
    handler =
        std::make_unique<ScopedDiagnosticHandler>(&ctx, [this](Diagnostic &d) {
          if (!diagnostics.empty())
            diagnostics += "\n";
          diagnostics += d.str();
          for (auto &note : d.getNotes())
            diagnostics += "\n  note: " + note.str();
          return success();
        });
    OpBuilder b(&ctx);
    module = ModuleOp::create(UnknownLoc::get(&ctx));
    b.setInsertionPointToEnd(module->getBody());
    func = func::FuncOp::create(b, UnknownLoc::get(&ctx), "main",
                                b.getFunctionType({}, {}));
    func->setAttr("llvm.emit_c_interface", UnitAttr::get(&ctx));
    body = func.addEntryBlock();
  }

  /// Leaves the innermost region (ops go where they went before it, with
  /// the scalar constants seen there); the ids of `op`'s results.
  std::vector<ValueId> closeRegion(Operation *op) {
    body = regions.back().outer;
    scalars = std::move(regions.back().outerScalars);
    regions.pop_back();
    std::vector<ValueId> results;
    for (Value r : op->getResults())
      results.push_back(add(r));
    return results;
  }

  RankedTensorType tensorType(const TensorType &t) {
    return RankedTensorType::get(t.shape, toMlir(&ctx, t.dtype));
  }

  ValueId add(Value v) {
    values.push_back(v);
    return static_cast<ValueId>(values.size() - 1);
  }

  Value get(ValueId id) {
    if (id < 0 || id >= static_cast<ValueId>(values.size()) || !values[id])
      throw CompileError("internal error: unknown value id");
    return values[id];
  }

  Location loc(const SourceLoc &l) {
    Location at = l.file.empty()
                      ? Location(UnknownLoc::get(&ctx))
                      : Location(FileLineColLoc::get(&ctx, l.file, l.line, 0));
    // A name scope is the location's name: loc("encoder/attn"(file:line)).
    return l.scope.empty()
               ? at
               : Location(NameLoc::get(StringAttr::get(&ctx, l.scope), at));
  }

  Attribute attr(const AttrValue &a) {
    Builder b(&ctx);
    switch (a.kind) {
    case AttrValue::F64:
      return b.getF64FloatAttr(a.f);
    case AttrValue::I64:
      return b.getI64IntegerAttr(a.i);
    case AttrValue::Bool:
      return b.getBoolAttr(a.b);
    case AttrValue::Str:
      return b.getStringAttr(a.s);
    case AttrValue::Ints:
      return b.getDenseI64ArrayAttr(a.ints);
    }
    return {};
  }
};

GraphBuilder::GraphBuilder() : impl(std::make_unique<Impl>()) {}
GraphBuilder::~GraphBuilder() = default;

ValueId GraphBuilder::addArgument(const TensorType &type,
                                  const std::string &name,
                                  const std::string &role) {
  Builder b(&impl->ctx);
  Value arg = impl->body->addArgument(impl->tensorType(type),
                                      NameLoc::get(b.getStringAttr(name)));
  // The function type is fixed up in finish(); record the attributes now.
  unsigned idx = impl->body->getNumArguments() - 1;
  impl->func.setType(b.getFunctionType(impl->body->getArgumentTypes(), {}));
  impl->func.setArgAttr(idx, "poptorch.name", b.getStringAttr(name));
  impl->func.setArgAttr(idx, "poptorch.role", b.getStringAttr(role));
  return impl->add(arg);
}

ValueId GraphBuilder::addConstant(const TensorType &type, const void *data) {
  size_t es = elemSize(type.dtype);
  int64_t n = type.numel();
  const char *bytes = static_cast<const char *>(data);
  std::optional<std::pair<ElemType, uint64_t>> scalarKey;
  if (type.shape.empty() && es <= sizeof(uint64_t)) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes, es);
    if (type.dtype == ElemType::Bool)
      bits = bits != 0;
    scalarKey = {type.dtype, bits};
    auto it = impl->scalars.find(*scalarKey);
    if (it != impl->scalars.end())
      return it->second;
  }
  RankedTensorType ty = impl->tensorType(type);
  bool splat = n > 0;
  for (int64_t i = 1; i < n && splat; ++i)
    splat = std::memcmp(bytes, bytes + i * es, es) == 0;
  DenseElementsAttr value;
  if (type.dtype == ElemType::Bool) {
    SmallVector<bool> bits;
    for (int64_t i = 0; i < (splat ? 1 : n); ++i)
      bits.push_back(bytes[i] != 0);
    value = DenseElementsAttr::get(ty, ArrayRef<bool>(bits));
  } else {
    value = DenseElementsAttr::getFromRawBuffer(
        ty, llvm::ArrayRef<char>(bytes, (splat ? 1 : n) * es));
  }
  OpBuilder b(&impl->ctx);
  b.setInsertionPointToEnd(impl->body);
  auto op = poptorch::ConstantOp::create(b, UnknownLoc::get(&impl->ctx), ty,
                                         cast<ElementsAttr>(value));
  for (auto &[attrName, v] : impl->stamp)
    op->setAttr(attrName, impl->attr(v));
  ValueId id = impl->add(op.getResult());
  if (scalarKey)
    impl->scalars.emplace(*scalarKey, id);
  return id;
}

void GraphBuilder::setStamp(
    std::vector<std::pair<std::string, AttrValue>> attrs, bool backfill) {
  impl->stamp = std::move(attrs);
  impl->scalars.clear(); // constants carry the stamp of their block
  if (!backfill || impl->stamp.empty())
    return;
  for (Operation &op : *impl->body) {
    if (op.hasAttr(impl->stamp.front().first))
      continue;
    for (auto &[attrName, v] : impl->stamp)
      op.setAttr(attrName, impl->attr(v));
  }
}

bool GraphBuilder::hasOp(const std::string &opName) const {
  return RegisteredOperationName::lookup(opName, &impl->ctx).has_value();
}

std::vector<ValueId>
GraphBuilder::addOp(const std::string &opName,
                    const std::vector<std::vector<ValueId>> &operandGroups,
                    const std::vector<std::pair<std::string, AttrValue>> &attrs,
                    const std::vector<TensorType> &resultTypes,
                    const SourceLoc &srcLoc) {
  auto name = RegisteredOperationName::lookup(opName, &impl->ctx);
  if (!name)
    throw CompileError("internal error: no dialect op " + opName);
  Location loc = impl->loc(srcLoc);
  OperationState state(loc, *name);
  std::vector<int32_t> segments;
  for (auto &group : operandGroups) {
    segments.push_back(static_cast<int32_t>(group.size()));
    for (ValueId v : group)
      state.addOperands(impl->get(v));
  }
  Builder b(&impl->ctx);
  if (name->hasTrait<OpTrait::AttrSizedOperandSegments>())
    state.addAttribute("operandSegmentSizes", b.getDenseI32ArrayAttr(segments));
  for (auto &[attrName, value] : attrs)
    state.addAttribute(attrName, impl->attr(value));
  for (auto &[attrName, value] : impl->stamp)
    state.addAttribute(attrName, impl->attr(value));
  for (auto &t : resultTypes)
    state.addTypes(impl->tensorType(t));
  OpBuilder ob(&impl->ctx);
  ob.setInsertionPointToEnd(impl->body);
  Operation *op = ob.create(state);
  impl->diagnostics.clear();
  if (failed(verify(op, /*verifyRecursively=*/false))) {
    std::string msg = impl->diagnostics;
    op->erase();
    throw CompileError(msg.empty() ? "invalid " + opName : msg);
  }
  std::vector<ValueId> ids;
  for (Value r : op->getResults())
    ids.push_back(impl->add(r));
  return ids;
}

TensorType GraphBuilder::typeOf(ValueId v) const {
  auto ty = cast<RankedTensorType>(impl->get(v).getType());
  return TensorType{
      std::vector<int64_t>(ty.getShape().begin(), ty.getShape().end()),
      fromMlir(ty.getElementType())};
}

void GraphBuilder::finish(
    const std::vector<ValueId> &outputs,
    const std::vector<std::pair<int64_t, ValueId>> &bufferUpdates) {
  if (!impl->regions.empty())
    throw CompileError("internal error: a control-flow region is still open");
  OpBuilder b(&impl->ctx);
  b.setInsertionPointToEnd(impl->body);
  SmallVector<Value> results;
  for (ValueId v : outputs)
    results.push_back(impl->get(v));
  for (auto &[arg, v] : bufferUpdates)
    results.push_back(impl->get(v));
  func::ReturnOp::create(b, UnknownLoc::get(&impl->ctx), results);
  SmallVector<Type> types;
  for (Value v : results)
    types.push_back(v.getType());
  impl->func.setType(b.getFunctionType(impl->body->getArgumentTypes(), types));
  for (size_t i = 0; i < bufferUpdates.size(); ++i)
    impl->func.setResultAttr(outputs.size() + i, "poptorch.updates",
                             b.getI64IntegerAttr(bufferUpdates[i].first));
  // Host kernels whose results nothing reads (the extra results of an op
  // whose lowering computes only the first, see Tracer::captureOp) are not
  // part of the program.
  llvm::DenseMap<Value, size_t> idOf;
  for (auto [i, v] : llvm::enumerate(impl->values))
    if (v)
      idOf[v] = i;
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*impl->body)))
    if (op.getName().getStringRef() == "poptorch.host_kernel" &&
        op.use_empty()) {
      for (Value r : op.getResults())
        if (auto it = idOf.find(r); it != idOf.end())
          impl->values[it->second] = Value();
      op.erase();
    }
  impl->diagnostics.clear();
  if (failed(verify(*impl->module)))
    throw CompileError("captured module is invalid:\n" + impl->diagnostics);
}

/// Makes `block` end in `scf.yield values` (replacing the yield a builder
/// may have added).
static void setYield(MLIRContext *ctx, Block *block, ValueRange values) {
  if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
    block->back().erase();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(block);
  scf::YieldOp::create(b, UnknownLoc::get(ctx), values);
}

std::vector<ValueId>
GraphBuilder::beginForLoop(int64_t count, const std::vector<ValueId> &inits,
                           const SourceLoc &srcLoc) {
  OpBuilder b(&impl->ctx);
  b.setInsertionPointToEnd(impl->body);
  Location loc = impl->loc(srcLoc);
  SmallVector<Value> initValues;
  for (ValueId v : inits)
    initValues.push_back(impl->get(v));
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value lb = cst(0), ub = cst(count), step = cst(1);
  auto loop = scf::ForOp::create(b, loc, lb, ub, step, initValues);
  for (auto &[attrName, v] : impl->stamp)
    loop->setAttr(attrName, impl->attr(v));
  Block *body = loop.getBody();
  if (!body->empty())
    body->back().erase(); // endForLoop adds the yield
  impl->regions.push_back({loop, impl->body, impl->scalars, {}});
  impl->scalars.clear();
  impl->body = body;
  std::vector<ValueId> args;
  for (Value arg : loop.getRegionIterArgs())
    args.push_back(impl->add(arg));
  return args;
}

std::vector<ValueId>
GraphBuilder::endForLoop(const std::vector<ValueId> &yields) {
  if (impl->regions.empty() || !isa<scf::ForOp>(impl->regions.back().op))
    throw CompileError("internal error: no open loop");
  auto loop = cast<scf::ForOp>(impl->regions.back().op);
  SmallVector<Value> values;
  for (ValueId v : yields)
    values.push_back(impl->get(v));
  if (values.size() != loop.getNumRegionIterArgs())
    throw CompileError(
        "internal error: loop yields the wrong number of values");
  for (auto [value, arg] : llvm::zip(values, loop.getRegionIterArgs()))
    if (value.getType() != arg.getType())
      throw CompileError("internal error: loop yield type mismatch");
  setYield(&impl->ctx, loop.getBody(), values);
  return impl->closeRegion(loop);
}

void GraphBuilder::beginIf(ValueId cond, const SourceLoc &srcLoc) {
  Value c = impl->get(cond);
  auto ty = cast<RankedTensorType>(c.getType());
  if (ty.getRank() != 0 || !ty.getElementType().isInteger(1))
    throw CompileError("internal error: the condition must be a 0-d bool");
  OpBuilder b(&impl->ctx);
  b.setInsertionPointToEnd(impl->body);
  Location loc = impl->loc(srcLoc);
  Value bit = tensor::ExtractOp::create(b, loc, c, ValueRange{});
  // Created without results; endIf rebuilds it with the branches' types.
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, bit,
                                /*withElseRegion=*/true);
  for (auto &[attrName, v] : impl->stamp)
    ifOp->setAttr(attrName, impl->attr(v));
  impl->regions.push_back({ifOp, impl->body, impl->scalars, {}});
  impl->scalars.clear();
  impl->body = ifOp.thenBlock();
  impl->body->back().erase();
}

void GraphBuilder::elseBranch(const std::vector<ValueId> &thenYields) {
  if (impl->regions.empty() || !isa<scf::IfOp>(impl->regions.back().op))
    throw CompileError("internal error: no open conditional");
  auto ifOp = cast<scf::IfOp>(impl->regions.back().op);
  SmallVector<Value> values;
  for (ValueId v : thenYields)
    values.push_back(impl->get(v));
  setYield(&impl->ctx, ifOp.thenBlock(), values);
  impl->regions.back().thenTypes.assign(ValueRange(values).getTypes().begin(),
                                        ValueRange(values).getTypes().end());
  impl->scalars.clear();
  impl->body = ifOp.elseBlock();
  impl->body->back().erase();
}

std::vector<ValueId>
GraphBuilder::endIf(const std::vector<ValueId> &elseYields) {
  if (impl->regions.empty() || !isa<scf::IfOp>(impl->regions.back().op) ||
      impl->body != cast<scf::IfOp>(impl->regions.back().op).elseBlock())
    throw CompileError("internal error: no open else branch");
  auto ifOp = cast<scf::IfOp>(impl->regions.back().op);
  SmallVector<Value> values;
  for (ValueId v : elseYields)
    values.push_back(impl->get(v));
  if (SmallVector<Type>(ValueRange(values).getTypes()) !=
      impl->regions.back().thenTypes)
    throw CompileError("internal error: branch yield type mismatch");
  setYield(&impl->ctx, ifOp.elseBlock(), values);
  OpBuilder b(ifOp);
  auto typed =
      scf::IfOp::create(b, ifOp.getLoc(), impl->regions.back().thenTypes,
                        ifOp.getCondition(), /*withElseRegion=*/true);
  typed->setAttrs(ifOp->getAttrs());
  for (Region *r : {&typed.getThenRegion(), &typed.getElseRegion()})
    r->getBlocks().clear();
  typed.getThenRegion().takeBody(ifOp.getThenRegion());
  typed.getElseRegion().takeBody(ifOp.getElseRegion());
  ifOp->erase();
  return impl->closeRegion(typed);
}

ValueId GraphBuilder::nextValueId() const {
  return static_cast<ValueId>(impl->values.size());
}

bool GraphBuilder::dependsOnArgument(ValueId v, int64_t arg) const {
  if (v < 0 || v >= static_cast<ValueId>(impl->values.size()) || arg < 0 ||
      arg >= static_cast<int64_t>(impl->body->getNumArguments()))
    return false;
  Value target = impl->body->getArgument(arg);
  SmallVector<Value> work{impl->values[v]};
  llvm::DenseSet<Operation *> seen;
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    if (cur == target)
      return true;
    Operation *def = cur.getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    // Operands of the op and of anything nested in its regions.
    def->walk([&](Operation *op) {
      for (Value operand : op->getOperands())
        work.push_back(operand);
    });
  }
  return false;
}

std::string GraphBuilder::print(bool debugInfo) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  if (debugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  impl->module->print(os, flags);
  return s;
}

std::pair<std::string, std::vector<ValueId>>
GraphBuilder::printWithValues(const std::vector<ValueId> &values) const {
  IRMapping map;
  OwningOpRef<ModuleOp> clone =
      cast<ModuleOp>(impl->module->getOperation()->clone(map));
  auto main = clone->lookupSymbol<func::FuncOp>("main");
  Block &body = main.getBody().front();
  Operation *ret =
      body.empty() || !body.back().hasTrait<OpTrait::IsTerminator>()
          ? nullptr
          : &body.back();
  if (!ret) {
    // Still tracing: the function so far, returning only `values`.
    OpBuilder b(&impl->ctx);
    b.setInsertionPointToEnd(&body);
    ret = func::ReturnOp::create(b, UnknownLoc::get(&impl->ctx), ValueRange{});
    main.setType(b.getFunctionType(body.getArgumentTypes(), {}));
  }
  SmallVector<Value> operands(ret->getOperands());
  std::vector<ValueId> added;
  for (ValueId id : values) {
    if (id < 0 || id >= static_cast<ValueId>(impl->values.size()))
      continue;
    Value v = map.lookupOrNull(impl->values[id]);
    if (!v || isa<BlockArgument>(v))
      continue;
    operands.push_back(v);
    if (failed(main.insertResult(main.getNumResults(), v.getType(),
                                 DictionaryAttr())))
      throw CompileError("internal error: cannot add a result to @main");
    added.push_back(id);
  }
  ret->setOperands(operands);
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  clone->print(os, flags);
  return {s, added};
}

} // namespace poptorch_bridge
