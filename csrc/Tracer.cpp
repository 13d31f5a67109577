//===- Tracer.cpp - a tracing session: values, arguments, reads, finish --===//
//
// What the tracer knows about the ipu tensors of one trace (traced values,
// constants, poisoned results), the arguments of @main, values read while
// tracing (guards), copies into arguments, and the module it finishes.
// How one dispatched op is captured is TracerCapture.cpp; views and writes
// into them are TracerViews.cpp.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"
#include "Device.h"
#include "HostKernels.h"
#include "MetaCache.h"
#include "MetaKernels.h"
#include "TracerSupport.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/_to_copy_native.h>
#include <Python.h>
#include <frameobject.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

namespace poptorch {

using namespace poptorch_bridge;

namespace {
// The tracer of this thread: threads trace independently, and ops a thread
// runs eagerly on ipu tensors are never captured by another thread's trace.
thread_local Tracer *gCurrent = nullptr;

} // namespace

ElemType elemTypeOf(at::ScalarType t, const std::string &opName) {
  switch (t) {
  case at::kFloat:
    return ElemType::F32;
  case at::kDouble:
    return ElemType::F64;
  case at::kHalf:
    return ElemType::F16;
  case at::kBFloat16:
    return ElemType::BF16;
  case at::kBool:
    return ElemType::Bool;
  case at::kChar:
    return ElemType::I8;
  case at::kByte:
    return ElemType::U8;
  case at::kShort:
    return ElemType::I16;
  case at::kInt:
    return ElemType::I32;
  case at::kLong:
    return ElemType::I64;
  default:
    throw std::runtime_error("poptorch: " + opName + " uses dtype " +
                             std::string(c10::toString(t)) +
                             ", which poptorch does not support");
  }
}

TensorType tensorTypeOf(c10::IntArrayRef sizes, at::ScalarType dtype,
                        const std::string &opName) {
  if (!at::isComplexType(dtype))
    return TensorType{sizes.vec(), elemTypeOf(dtype, opName)};
  // A complex tensor is its pairs (real, imaginary): torch.view_as_real's
  // layout, with the same memory.
  std::vector<int64_t> shape = sizes.vec();
  shape.push_back(2);
  return TensorType{std::move(shape),
                    elemTypeOf(c10::toRealValueType(dtype), opName)};
}

TensorType tensorTypeOf(const at::Tensor &t, const std::string &opName) {
  return tensorTypeOf(t.sizes(), t.scalar_type(), opName);
}

std::string opDisplayName(const c10::OperatorHandle &op) {
  const auto &n = op.schema().operator_name();
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

Tracer::Tracer(std::vector<std::string> sourceExcludes)
    : excludes(std::move(sourceExcludes)) {}
Tracer::~Tracer() {
  if (gCurrent == this)
    gCurrent = nullptr;
}

Tracer *Tracer::current() { return gCurrent; }
void Tracer::activate() {
  if (gCurrent && gCurrent != this)
    throw std::runtime_error(
        "poptorch: another model is already being traced; tracing "
        "cannot nest (call compiled models outside the traced one)");
  gCurrent = this;
}
void Tracer::deactivate() {
  if (gCurrent == this)
    gCurrent = nullptr;
}

//===----------------------------------------------------------------------===//
// Value bookkeeping
//===----------------------------------------------------------------------===//

TracedValue *Tracer::lookup(const at::Tensor &t) {
  if (!isIpu(t))
    return nullptr;
  auto it = values.find(t.unsafeGetTensorImpl());
  if (it == values.end())
    return nullptr;
  // A freed tensor's address can be reused by a new one: check identity.
  if (it->second.owner.expired()) {
    values.erase(it);
    return nullptr;
  }
  return &it->second;
}

bool Tracer::isTraced(const at::Tensor &t) { return lookup(t) != nullptr; }

void Tracer::setBlock(const std::string &block, int64_t stage, int64_t ipu,
                      int64_t phase, bool backfill) {
  checkNotInRegion("poptorch.Block",
                   "starts a block, which a loop body or a branch cannot do "
                   "(the whole loop or conditional runs in one stage). Start "
                   "the block before it");
  using poptorch_bridge::AttrValue;
  auto str = [](const std::string &s) {
    AttrValue a;
    a.kind = AttrValue::Str;
    a.s = s;
    return a;
  };
  auto i64 = [](int64_t i) {
    AttrValue a;
    a.kind = AttrValue::I64;
    a.i = i;
    return a;
  };
  builder.setStamp({{"poptorch.block", str(block)},
                    {"poptorch.stage", i64(stage)},
                    {"poptorch.ipu", i64(ipu)},
                    {"poptorch.phase", i64(phase)}},
                   backfill);
}

void Tracer::printTensor(const at::Tensor &t, const std::string &title) {
  const std::string opName = "poptorch.ipu_print_tensor";
  if (!isIpu(t))
    fail(opName, "expects a tensor of the model (an ipu tensor while tracing)");
  ValueId in = valueOf(t, std::nullopt, opName);
  poptorch_bridge::AttrValue text;
  text.kind = poptorch_bridge::AttrValue::Str;
  text.s = title;
  ValueId out =
      builder.addOp("poptorch.print_tensor", {{in}}, {{"title", text}},
                    {builder.typeOf(in)}, sourceLocation())[0];
  bindValue(t, out);
}

ValueId Tracer::valueIdOf(const at::Tensor &t) {
  TracedValue *v = lookup(t);
  return v ? v->value : -1;
}

void Tracer::bindValue(const at::Tensor &t, ValueId v) {
  values.insert_or_assign(t.unsafeGetTensorImpl(), TracedValue(t))
      .first->second.value = v;
}

void Tracer::bindPoison(const at::Tensor &t, const std::string &reason) {
  values.insert_or_assign(t.unsafeGetTensorImpl(), TracedValue(t))
      .first->second.poisonReason = reason;
}

ValueId Tracer::randomState() {
  if (randomValue < 0) {
    randomValue = builder.addArgument({{2}, ElemType::I64},
                                      "poptorch.random_state", "random");
    randomArg = numArgs++;
    argNames.resize(numArgs);
    argNames.back() = "the random state";
    argIndexOfValue[randomValue] = randomArg;
    argValues.push_back(at::zeros({2}, at::kLong)); // not read (readValue)
  }
  return randomValue;
}

void Tracer::addArgument(const at::Tensor &t, const std::string &name,
                         const std::string &role) {
  TORCH_CHECK(isIpu(t), "poptorch: arguments must be ipu tensors");
  ValueId v = builder.addArgument(tensorTypeOf(t, name), name, role);
  bindValue(t, v);
  argIndexOfTensor[t.unsafeGetTensorImpl()] = numArgs;
  argIndexOfValue[v] = numArgs++;
  argNames.resize(numArgs);
  argNames.back() = name;
  // (An input traced with its layout has strides; programs read dense values.)
  argValues.push_back(hostAlias(t).contiguous());
}

at::Tensor Tracer::constantOf(const at::Tensor &t) {
  return isIpu(t) ? hostAlias(t) : t;
}

ValueId Tracer::valueOf(const at::Tensor &t,
                        std::optional<at::ScalarType> dtype,
                        const std::string &opName) {
  at::ScalarType want = dtype.value_or(t.scalar_type());
  if (TracedValue *e = lookup(t)) {
    if (!e->poisonReason.empty())
      fail(opName, e->outOfScope ? "uses a tensor " + e->poisonReason
                                 : e->poisonReason);
    if (want == t.scalar_type())
      return e->value;
    if (at::isComplexType(want) || t.is_complex())
      return hostCast(t, want, opName);
    TensorType to = builder.typeOf(e->value);
    to.dtype = elemTypeOf(want, opName);
    return builder.addOp("poptorch.cast", {{e->value}}, {}, {to},
                         sourceLocation())[0];
  }
  // A Python scalar (`x * 0.5`) is converted without a host tensor op: at one
  // per traced op, the dispatch of `.to()` was a quarter of the capture time.
  if (t.unsafeGetTensorImpl()->is_wrapped_number())
    return scalarConstant(wrappedNumberValue(t), want, opName);
  at::Tensor host =
      constantOf(t).to(want).resolve_conj().resolve_neg().contiguous();
  return builder.addConstant(tensorTypeOf(host, opName), host.data_ptr());
}

ValueId Tracer::hostCast(const at::Tensor &t, at::ScalarType dtype,
                         const std::string &opName) {
  // To or from a complex dtype (pairs of the real one): torch's own cast.
  static const c10::OperatorHandle toCopy =
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::_to_copy", "");
  std::vector<c10::IValue> args{
      t,     dtype,        c10::IValue(), c10::IValue(), c10::IValue(),
      false, c10::IValue()};
  at::Tensor result =
      at::empty(t.sizes(), at::TensorOptions(c10::kMeta).dtype(dtype));
  std::string why;
  std::optional<std::vector<ValueId>> cast =
      emitHostKernelOp(toCopy, args, {result}, sourceLocation(), why);
  if (!cast)
    fail(opName, "cannot cast " + std::string(c10::toString(t.scalar_type())) +
                     " to " + c10::toString(dtype) + ": " + why);
  return cast->front();
}

ValueId Tracer::scalarConstant(const c10::Scalar &v, at::ScalarType dtype,
                               const std::string &opName) {
  if (v.isComplex() || at::isComplexType(dtype)) {
    at::Tensor s =
        at::scalar_tensor(v, at::TensorOptions().dtype(v.type())).to(dtype);
    return builder.addConstant(tensorTypeOf(s, opName), s.data_ptr());
  }
  alignas(8) unsigned char bytes[8];
  AT_DISPATCH_ALL_TYPES_AND3(
      at::kHalf, at::kBFloat16, at::kBool, dtype, "scalarConstant", [&] {
        scalar_t c = v.isFloatingPoint() ? c10::convert<scalar_t>(v.toDouble())
                     : v.isBoolean()     ? c10::convert<scalar_t>(v.toBool())
                                         : c10::convert<scalar_t>(v.toLong());
        std::memcpy(bytes, &c, sizeof(c));
      });
  return builder.addConstant(TensorType{{}, elemTypeOf(dtype, opName)}, bytes);
}

//===----------------------------------------------------------------------===//
// Source locations and errors
//===----------------------------------------------------------------------===//

SourceLoc Tracer::sourceLocation() const {
  SourceLoc loc;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyFrameObject *frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    std::string f = file ? file : "";
    Py_DECREF(code);
    bool excluded = f.empty() || f[0] == '<';
    for (const std::string &ex : excludes)
      excluded = excluded || f.find(ex) != std::string::npos;
    if (!excluded) {
      loc.file = f;
      loc.line = PyFrame_GetLineNumber(frame);
      Py_DECREF(frame);
      break;
    }
    PyFrameObject *back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  PyGILState_Release(gil);
  for (const std::string &name : nameScopes)
    loc.scope += (loc.scope.empty() ? "" : "/") + name;
  return loc;
}

std::string Tracer::describe(const SourceLoc &loc) const {
  std::string where = loc.file.empty()
                          ? "<unknown location>"
                          : loc.file + ":" + std::to_string(loc.line);
  return loc.scope.empty() ? where : where + " (in " + loc.scope + ")";
}

void Tracer::fail(const std::string &opName, const std::string &message) const {
  throw std::runtime_error("poptorch: " + opName + " at " +
                           describe(sourceLocation()) + ": " + message);
}

void Tracer::checkReadable(const at::Tensor &t, const std::string &what) {
  TracedValue *e = lookup(t);
  if (!e)
    return; // a constant: its data is real
  throw std::runtime_error("poptorch: " + what + " at " +
                           describe(sourceLocation()) +
                           " needs the value of a tensor computed by the "
                           "model, which is not known while "
                           "tracing. Keep data-dependent Python logic and host "
                           "reads outside the model, "
                           "or express it with tensor ops (e.g. torch.where).");
}

at::Tensor Tracer::evaluate(const at::Tensor &t, const std::string &what) {
  TracedValue *e = lookup(t);
  if (!e)
    return constantOf(t);
  if (!e->poisonReason.empty())
    fail(what, "needs the value of a tensor " + e->poisonReason);
  auto arg = argIndexOfValue.find(e->value);
  if (arg != argIndexOfValue.end())
    return argValues.at(arg->second);
  checkNotInRegion(what, "needs the value of a tensor the model computed, "
                         "which cannot be read inside a loop body or a "
                         "branch. Read it before the loop or conditional, or "
                         "keep the logic in tensor ops (torch.where)");
  at::Tensor value = at::empty(t.sizes(), t.options().device(c10::kCPU));
  auto [text, added] = builder.printWithValues({e->value});
  // The evaluator runs Python (compile and run): nothing it does is traced.
  gCurrent = nullptr;
  try {
    evaluator(text, argValues, {value});
  } catch (const std::exception &ex) {
    gCurrent = this;
    fail(what,
         std::string("computing the value it reads failed: ") + ex.what());
  }
  gCurrent = this;
  return value;
}

std::vector<c10::IValue>
Tracer::shapesFromValues(const c10::OperatorHandle &op,
                         const std::vector<c10::IValue> &args,
                         const std::string &opName) {
  checkNotInRegion(opName,
                   "has result shapes that depend on the values of its "
                   "arguments, which a loop body or a branch cannot have");
  torch::jit::Stack stack;
  for (size_t i = 0; i < args.size(); ++i) {
    // An out= argument the kernel resizes: a new tensor, not a value.
    const c10::AliasInfo *alias = op.schema().arguments()[i].alias_info();
    bool out =
        alias && alias->isWrite() && op.schema().arguments()[i].kwarg_only();
    stack.push_back(mapTensors(args[i], [&](const at::Tensor &t) -> at::Tensor {
      if (!t.defined())
        return t;
      if (out)
        return at::empty({0}, t.options().device(c10::kCPU));
      return isIpu(t) ? evaluate(t, opName) : t;
    }));
  }
  {
    PlainCpuDispatch plain;
    try {
      op.callBoxed(&stack);
    } catch (const c10::Error &e) {
      fail(opName,
           std::string("invalid arguments: ") + e.what_without_backtrace());
    }
  }
  for (c10::IValue &r : stack)
    r = mapTensors(r, [](const at::Tensor &t) -> at::Tensor {
      return t.defined() ? at::empty(t.sizes(), t.options().device(c10::kMeta))
                         : t;
    });
  return stack;
}

at::Tensor Tracer::readValue(const at::Tensor &t, const std::string &what) {
  TracedValue *e = lookup(t);
  if (!e)
    return constantOf(t); // a constant: its data is real
  std::string where = describe(sourceLocation());
  if (!e->poisonReason.empty()) {
    if (!unsupported.empty()) // the usual report, which lists that op too
      throw std::runtime_error(unsupportedReport() + "\n" + what + " at " +
                               where + " needs the value of a tensor " +
                               e->poisonReason + ".");
    fail(what, "needs the value of a tensor " + e->poisonReason);
  }
  if (!evaluator)
    checkReadable(t, what);
  if (randomArg >= 0 && builder.dependsOnArgument(e->value, randomArg))
    fail(what, "needs the value of a tensor computed from random numbers, "
               "which differ from call to call, so the program cannot be "
               "specialised on it. Draw the numbers outside the model, or "
               "keep the decision in tensor ops (torch.where).");
  Guard g;
  g.what = what;
  g.location = where;
  auto arg = argIndexOfValue.find(e->value);
  if (arg != argIndexOfValue.end()) {
    // An argument read as it is: the runtime checks the argument itself.
    g.argument = arg->second;
    g.expected = argValues.at(arg->second).clone();
    guardList.push_back(std::move(g));
    return guardList.back().expected;
  }
  g.value = e->value;
  g.expected = evaluate(t, what);
  // From here on the tensor is a constant of this trace: the guard checks
  // that the program's value is this one.
  hostAlias(t).copy_(g.expected);
  values.erase(t.unsafeGetTensorImpl());
  guardList.push_back(std::move(g));
  return guardList.back().expected;
}

at::Tensor &Tracer::captureCopy(at::Tensor &self, const at::Tensor &src) {
  if (!isIpu(self)) {
    checkReadable(
        src,
        "copying a tensor to the host (Tensor.cpu(), .numpy(), .tolist() or "
        "printing)");
    self.copy_(hostAlias(src));
    return self;
  }
  TracedValue *dst = lookup(self);
  // A program argument (a parameter or buffer the model assigns, an input
  // it writes) shares the caller's memory: a constant written into it is a
  // value of the program, never a write into that memory while tracing.
  // The argument is the tensor, not its value: a clone of an input holds the
  // input's value (identity ops share values), and writing the clone
  // (linalg.matrix_power(x, 0) copies the identity into x.clone()) leaves
  // the input alone.
  auto argument = argIndexOfTensor.find(self.unsafeGetTensorImpl());
  bool intoArgument = argument != argIndexOfTensor.end();
  if (!isTraced(src) && !intoArgument) {
    hostAlias(self).copy_(constantOf(src));
    if (dst)
      values.erase(self.unsafeGetTensorImpl());
    propagateWrite(self, "aten::copy_");
    return self;
  }
  if (TracedValue *e = lookup(src); intoArgument && e && e->outOfScope)
    fail("copy_",
         "the model writes " + argNames.at(argument->second) +
             " in place inside a loop body or a branch (its new value was " +
             e->poisonReason +
             "). A loop body or a branch cannot write the model's buffers, "
             "parameters or inputs: pass the tensor in as one of "
             "poptorch.for_loop's inputs and write the value it returns after "
             "the loop");
  ValueId v = valueOf(src, self.scalar_type(), "copy_");
  if (src.sizes() != self.sizes()) {
    TensorType to = builder.typeOf(v);
    to.shape = self.sizes().vec();
    v = builder.addOp("poptorch.expand", {{v}}, {}, {to}, sourceLocation())[0];
  }
  if (intoArgument) {
    // Writing into a model argument (a buffer update after
    // functionalization): the argument's identity is kept, the new value
    // becomes a result.
    int64_t arg = argument->second;
    bufferUpdates[arg] = v;
    bindValue(self, v);
    argIndexOfValue[v] = arg;
    return self;
  }
  bindValue(self, v);
  propagateWrite(self, "aten::copy_");
  return self;
}

at::Tensor Tracer::captureFunctionalCopy(const at::Tensor &self,
                                         const at::Tensor &src) {
  // (torch's composite kernel clones self's whole memory to keep its
  // strides: with gaps, memory that holds none of self's values.)
  at::Tensor out =
      at::has_internal_overlap(self) == at::MemOverlap::Yes
          ? emptyIpu(self.sizes(), c10::contiguous_strides(self.sizes()),
                     self.scalar_type())
          : emptyIpu(self.sizes(), self.strides(), self.scalar_type());
  captureCopy(out, src);
  return out;
}

std::string Tracer::unsupportedReport() const {
  std::ostringstream os;
  os << "poptorch: the model uses " << unsupported.size()
     << " unsupported operation" << (unsupported.size() > 1 ? "s" : "")
     << ":\n";
  for (const std::string &key : unsupportedOrder) {
    const UnsupportedOp &u = unsupported.at(key);
    os << "  " << u.schema << " at " << u.location;
    if (u.count > 1)
      os << " (" << u.count << " times)";
    auto refusal = hostKernelRefusals.find(u.schema);
    if (refusal != hostKernelRefusals.end() && !refusal->second.empty())
      os << " (not a host kernel: " << refusal->second << ")";
    os << "\n";
  }
  os << "See docs/ops.md for the supported ops. Replace these ops in the "
        "model, compute "
        "them outside it, or add them to the op table (docs/developer.md).";
  return os.str();
}

std::pair<int64_t, std::vector<int64_t>>
Tracer::finish(const std::vector<at::Tensor> &outputs) {
  if (!unsupported.empty())
    throw std::runtime_error(unsupportedReport());
  // Every result is a distinct value: an output that repeats another output
  // or is the new value of a mutated argument is served from that result
  // (returning one value twice is also what the bufferization pipeline
  // cannot handle). Mutated arguments come last, as GraphBuilder expects.
  std::vector<ValueId> values;
  for (const at::Tensor &t : outputs)
    values.push_back(valueOf(t, std::nullopt, "<model output>"));
  if (randomValue >= 0) {
    // Each call advances the call counter: [seed, calls + 1].
    int64_t step[2] = {0, 1};
    ValueId one = builder.addConstant({{2}, ElemType::I64}, step);
    bufferUpdates[randomArg] =
        builder.addOp("poptorch.add", {{randomValue}, {one}}, {},
                      {{{2}, ElemType::I64}}, sourceLocation())[0];
  }
  std::unordered_map<ValueId, int64_t> updateIndex;
  for (const auto &[arg, v] : bufferUpdates)
    updateIndex.emplace(v, static_cast<int64_t>(updateIndex.size()));
  std::vector<ValueId> outs;
  std::unordered_map<ValueId, int64_t> outIndex;
  for (ValueId v : values)
    if (!updateIndex.count(v) && outIndex.emplace(v, outs.size()).second)
      outs.push_back(v);
  // The values read while tracing are results too: each call checks them.
  for (Guard &g : guardList)
    if (g.value >= 0 && !updateIndex.count(g.value) &&
        outIndex.emplace(g.value, outs.size()).second)
      outs.push_back(g.value);
  auto resultOf = [&](ValueId v) {
    auto u = updateIndex.find(v);
    return u != updateIndex.end()
               ? static_cast<int64_t>(outs.size()) + u->second
               : outIndex.at(v);
  };
  std::vector<int64_t> resultOfOutput;
  for (ValueId v : values)
    resultOfOutput.push_back(resultOf(v));
  for (Guard &g : guardList)
    if (g.value >= 0)
      g.result = resultOf(g.value);
  std::vector<std::pair<int64_t, ValueId>> updates(bufferUpdates.begin(),
                                                   bufferUpdates.end());
  for (auto &[arg, v] : updates)
    updateArgs.push_back(arg);
  try {
    builder.finish(outs, updates);
  } catch (const CompileError &e) {
    throw std::runtime_error(std::string("poptorch: ") + e.what());
  }
  return {static_cast<int64_t>(outs.size()), resultOfOutput};
}

} // namespace poptorch
