//===- Tracer.cpp - capture of dispatched ops into the poptorch dialect -===//
//
// Driven by the generated capture table (csrc/generated/CaptureTable.inc):
// for each captured aten overload it names the dialect op and how each
// operand and attribute is taken from the aten arguments. Shapes and dtypes
// of results come from re-dispatching the op on Meta tensors. Ops whose
// tensor inputs are all known at trace time are evaluated on the host and
// become constants. Unsupported ops are collected and reported together.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"
#include "Device.h"
#include "HostKernels.h"
#include "MetaCache.h"
#include "MetaKernels.h"

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

enum class ArgKind {
  Tensor,
  OptTensor,
  TensorList,
  Scalar,
  OptScalar,
  Mask,
  F64,
  I64,
  Bool,
  Str,
  Ints,
  Dim,
  Dims,
  Index,
  ReversedDims,
  RandomState,
  Const,
  Indices,
  IndexList,
  LitStr,
  LitBool
};
/// How tensor and scalar operands (not masks) are cast before the dialect op:
/// not at all, to the result dtype, or to their common dtype
/// (`at::result_type` of the inputs: comparisons, whose result is bool).
enum class Promote { None, Result, Common };
/// Functional overloads return new tensors; in-place ones write `self`;
/// out= ones write their `out` arguments.
enum class Mode { Functional, Inplace, Out };

struct ArgSpec {
  ArgKind kind;
  const char *aten;  // aten argument name ("" when not taken from one)
  const char *name;  // dialect operand / attribute name
  const char *extra; // kind-specific detail
};

struct OpSpec {
  const char *name;
  const char *overload;
  Mode mode;
  const char *dialectOp; // "" for identities
  Promote promote;
  bool boolResult; // the dialect op yields bool; cast when the written tensor
                   // is not
  int results;
  std::vector<ArgSpec> args;
};

const std::vector<OpSpec> &captureTable() {
  static const std::vector<OpSpec> table = {
#include "generated/CaptureTable.inc"
  };
  return table;
}

const OpSpec *findSpec(const c10::OperatorName &name) {
  static const auto *index = [] {
    auto *m = new std::unordered_map<std::string, const OpSpec *>();
    for (const OpSpec &s : captureTable())
      (*m)[std::string(s.name) + "." + s.overload] = &s;
    return m;
  }();
  auto it = index->find(name.name + "." + name.overload_name);
  return it == index->end() ? nullptr : it->second;
}

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

namespace {

bool isIpu(const at::Tensor &t) {
  return t.defined() && t.device().type() == c10::DeviceType::IPU;
}

/// The value of a wrapped number (a Python scalar that takes part in an op as
/// a 0-d CPU tensor), read without dispatching a host op.
c10::Scalar wrappedNumberValue(const at::Tensor &t) {
  const void *p = t.const_data_ptr();
  switch (t.scalar_type()) {
  case at::kDouble:
    return *static_cast<const double *>(p);
  case at::kLong:
    return *static_cast<const int64_t *>(p);
  case at::kBool:
    return *static_cast<const bool *>(p);
  case at::kComplexDouble:
    return *static_cast<const c10::complex<double> *>(p);
  default:
    return t.item();
  }
}

/// Whether `op` with these arguments is `_to_copy` to a device other than the
/// ipu (Tensor.cpu(), .tolist(), printing).
template <typename It>
bool copiesToHost(const c10::OperatorHandle &op, It args) {
  if (op.schema().name() != "aten::_to_copy")
    return false;
  const c10::IValue &device = args[3];
  return device.isDevice() && device.toDevice().type() != c10::DeviceType::IPU;
}

template <typename Fn> void forEachTensor(const c10::IValue &v, Fn &&fn) {
  if (v.isTensor()) {
    fn(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor &t : v.toTensorList().vec())
      fn(t);
  } else if (v.isList()) {
    for (const c10::IValue &e : v.toListRef())
      if (e.isTensor())
        fn(e.toTensor());
  }
}

/// Maps every tensor inside `v` through `fn`, keeping the IValue's shape.
template <typename Fn> c10::IValue mapTensors(const c10::IValue &v, Fn &&fn) {
  if (v.isTensor())
    return fn(v.toTensor());
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor &t : v.toTensorList().vec())
      out.push_back(fn(t));
    return out;
  }
  if (v.isList() &&
      v.toList().elementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<std::optional<at::Tensor>> out;
    for (const c10::IValue &e : v.toListRef())
      out.push_back(e.isTensor() ? std::optional<at::Tensor>(fn(e.toTensor()))
                                 : std::nullopt);
    return out;
  }
  if (v.isDevice() && v.toDevice().type() == c10::DeviceType::IPU)
    return c10::IValue(c10::Device(c10::kCPU));
  return v;
}

int64_t normalizeDim(int64_t d, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  return d < 0 ? d + r : d;
}

} // namespace

const std::vector<const char *> &capturedOpNames() {
  static const auto *names = [] {
    auto *v = new std::vector<const char *>();
    static std::vector<std::string> storage;
    storage.reserve(captureTable().size());
    for (const OpSpec &s : captureTable()) {
      std::string n = s.name;
      if (*s.overload)
        n += std::string(".") + s.overload;
      storage.push_back(n);
    }
    for (auto &s : storage)
      v->push_back(s.c_str());
    return v;
  }();
  return *names;
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
      fail(opName, e->poisonReason);
    if (want == t.scalar_type())
      return e->value;
    if (at::isComplexType(want) || t.is_complex())
      return hostCast(t, e->value, want, opName);
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

ValueId Tracer::hostCast(const at::Tensor &t, ValueId value,
                         at::ScalarType dtype, const std::string &opName) {
  // To or from a complex dtype (pairs of the real one): torch's own cast.
  static const c10::OperatorHandle toCopy =
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::_to_copy", "");
  std::vector<c10::IValue> args{
      t,     dtype,        c10::IValue(), c10::IValue(), c10::IValue(),
      false, c10::IValue()};
  at::Tensor result =
      at::empty(t.sizes(), at::TensorOptions(c10::kMeta).dtype(dtype));
  std::string why;
  std::optional<HostKernelCall> call =
      describeHostKernel(toCopy, args, {result}, why);
  if (!call)
    fail(opName, "cannot cast " + std::string(c10::toString(t.scalar_type())) +
                     " to " + c10::toString(dtype) + ": " + why);
  AttrValue name, text;
  name.kind = text.kind = AttrValue::Str;
  name.s = "aten::_to_copy";
  text.s = call->call;
  return builder.addOp("poptorch.host_kernel", {{value}},
                       {{"op", name}, {"call", text}},
                       {tensorTypeOf(result, opName)}, sourceLocation())[0];
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
  return loc;
}

std::string Tracer::describe(const SourceLoc &loc) const {
  if (loc.file.empty())
    return "<unknown location>";
  return loc.file + ":" + std::to_string(loc.line);
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

//===----------------------------------------------------------------------===//
// The op log (TRACE lines, poptorch.explain, golden checks)
//===----------------------------------------------------------------------===//

namespace {
std::function<void(const std::string &)> &traceSink() {
  static auto *sink = new std::function<void(const std::string &)>();
  return *sink;
}

TypeRecord typeOf(const at::Tensor &t) {
  if (!t.defined())
    return {};
  return TypeRecord{t.scalar_type(), c10::SmallVector<int64_t, 5>(
                                         t.sizes().begin(), t.sizes().end())};
}
} // namespace

std::string typeText(const TypeRecord &t) {
  if (!t.dtype)
    return "none";
  std::string s = std::string(c10::toString(*t.dtype)) + "[";
  for (size_t i = 0; i < t.sizes.size(); ++i)
    s += (i ? ", " : "") + std::to_string(t.sizes[i]);
  return s + "]";
}

void setTraceSink(std::function<void(const std::string &)> sink) {
  traceSink() = std::move(sink);
}

/// Records one dispatched op in the tracer's op log when it is done (its
/// outputs are then on the stack) and sends its TRACE line to the sink.
class OpLogScope {
public:
  OpLogScope(Tracer &tracer, const c10::OperatorHandle &op,
             const std::string &name, const std::vector<c10::IValue> &args,
             const char *status, const char *dialectOp)
      : tracer(tracer), stack(nullptr), exceptions(std::uncaught_exceptions()),
        nret(op.schema().returns().size()) {
    record.name = name;
    record.status = status;
    record.dialectOp = dialectOp;
    bool logging = static_cast<bool>(traceSink());
    if (std::string_view(status) != "host" || logging)
      record.loc = tracer.sourceLocation();
    // A wrapped number (the Python scalar of `x * 0.5`) is a scalar in the
    // op's arguments as Python sees them (record.args), not an input.
    for (const c10::IValue &a : args)
      forEachTensor(a, [&](const at::Tensor &t) {
        if (t.unsafeGetTensorImpl()->is_wrapped_number())
          return;
        TracedValue *v = tracer.lookup(t);
        record.inputs.push_back(v ? v->value : -1);
        record.inputTypes.push_back(typeOf(t));
      });
    if (tracer.recordArgs)
      record.args = args;
  }
  void setStack(torch::jit::Stack *s) { stack = s; }
  void setStatus(const char *status) { record.status = status; }
  const poptorch_bridge::SourceLoc &location() const { return record.loc; }
  ~OpLogScope() {
    if (std::uncaught_exceptions() > exceptions)
      record.status = "error";
    else if (stack && stack->size() >= nret)
      for (auto it = stack->end() - nret; it != stack->end(); ++it)
        forEachTensor(*it, [&](const at::Tensor &t) {
          TracedValue *v = tracer.lookup(t);
          record.outputs.push_back(v ? v->value : -1);
          record.outputTypes.push_back(typeOf(t));
        });
    if (traceSink()) {
      auto values = [](const std::vector<ValueId> &ids,
                       const std::vector<TypeRecord> &types) {
        std::string s = "(";
        for (size_t i = 0; i < ids.size(); ++i)
          s += (i ? ", " : "") +
               (ids[i] >= 0 ? "v" + std::to_string(ids[i]) : "const") + ": " +
               typeText(types[i]);
        return s + ")";
      };
      std::string line = record.name + " " + std::string(record.status) +
                         " at " + tracer.describe(record.loc) + " " +
                         values(record.inputs, record.inputTypes) + " -> " +
                         values(record.outputs, record.outputTypes);
      try {
        traceSink()(line);
      } catch (...) {
      }
    }
    tracer.ops.push_back(std::move(record));
  }

private:
  Tracer &tracer;
  torch::jit::Stack *stack;
  int exceptions;
  size_t nret;
  OpRecord record;
};

//===----------------------------------------------------------------------===//
// Capture
//===----------------------------------------------------------------------===//

std::vector<c10::IValue> Tracer::runOnMeta(const c10::OperatorHandle &op,
                                           const std::vector<c10::IValue> &args,
                                           bool staticShape) {
  if (op.hasTag(at::Tag::dynamic_output_shape) && !staticShape)
    fail(opDisplayName(op),
         "its output shape depends on the values of its inputs, which a "
         "compiled program cannot have; compute it outside the model "
         "(or use a fixed-shape alternative such as torch.where)");
  // Meta results are memoized (MetaCache.h): Meta outputs only carry
  // metadata and are only read, so sharing them between calls is safe.
  MetaCache &cache = MetaCache::forThisThread();
  std::optional<std::string> key = MetaCache::keyOf(op, args);
  if (key)
    if (const std::vector<c10::IValue> *hit = cache.find(*key))
      return *hit;
  std::vector<c10::IValue> out = callOnMeta(op, args);
  if (key)
    cache.insert(std::move(*key), out);
  return out;
}

namespace {

/// `aten::<view>_copy`: the name functionalization gives a view op.
bool isViewCopyName(std::string_view name) {
  return name.size() > 5 && name.substr(name.size() - 5) == "_copy";
}

} // namespace

std::optional<c10::OperatorHandle> viewOpOf(const c10::OperatorHandle &op) {
  const c10::OperatorName &name = op.schema().operator_name();
  std::string_view base(name.name);
  if (!isViewCopyName(base))
    return std::nullopt;
  auto view = c10::Dispatcher::singleton().findOp(
      {std::string(base.substr(0, base.size() - 5)), name.overload_name});
  if (!view)
    return std::nullopt;
  const auto &returns = view->schema().returns();
  if (returns.size() != 1 || !returns[0].alias_info() ||
      returns[0].type()->kind() != c10::TypeKind::TensorType)
    return std::nullopt;
  return view;
}

namespace {

/// For a functional scatter (scatter, scatter_add, scatter_reduce,
/// index_add, index_copy, index_fill, index_reduce) whose index has no
/// elements: its self.
std::optional<at::Tensor>
scatterOfNoIndices(const c10::OperatorHandle &op,
                   const std::vector<c10::IValue> &args) {
  static const std::set<std::string, std::less<>> scatters = {
      "aten::scatter",     "aten::scatter_add", "aten::scatter_reduce",
      "aten::index_add",   "aten::index_copy",  "aten::index_fill",
      "aten::index_reduce"};
  const c10::FunctionSchema &schema = op.schema();
  if (!scatters.count(schema.name()))
    return std::nullopt;
  auto index = schema.argumentIndexWithName("index");
  if (!index || !args[*index].isTensor() ||
      args[*index].toTensor().numel() != 0 || !args[0].isTensor())
    return std::nullopt;
  return args[0].toTensor();
}

} // namespace

std::vector<c10::IValue>
Tracer::eagerViewGeometry(const c10::OperatorHandle &op,
                          const std::vector<c10::IValue> &args) {
  std::optional<c10::OperatorHandle> view = viewOpOf(op);
  if (!view)
    return {};
  try {
    return runOnMeta(*view, args, false);
  } catch (const std::exception &) {
    return {}; // no Meta geometry: contiguous, as before
  }
}

std::vector<c10::IValue>
Tracer::callOnMeta(const c10::OperatorHandle &op,
                   const std::vector<c10::IValue> &args) {
  auto metaArguments = [&] {
    torch::jit::Stack stack;
    for (const c10::IValue &a : args)
      if (a.isDevice() && a.toDevice().type() == c10::DeviceType::IPU)
        stack.push_back(c10::Device(c10::kMeta)); // e.g. _to_copy(device=ipu)
      else
        stack.push_back(mapTensors(a, [](const at::Tensor &t) -> at::Tensor {
          // Python scalars stay CPU wrapped numbers (type promotion); other
          // CPU 0-d tensors (masked_fill's `value`) must be on the device,
          // like `self`.
          if (!t.defined() || (t.device().is_cpu() &&
                               t.unsafeGetTensorImpl()->is_wrapped_number()))
            return t;
          return at::empty_strided(t.sizes(), t.strides(),
                                   t.options().device(c10::kMeta));
        }));
    return stack;
  };
  torch::jit::Stack stack = metaArguments();
  try {
    // C++ shape functions first (MetaKernels.h): torch's Python Meta kernels
    // import sympy and torch._dynamo the first time one runs.
    if (runCppMeta(op, stack, metaArguments)) {
    } else if (op.schema().name() == "aten::convolution_overrideable") {
      // It has no Meta kernel; aten::convolution has its schema and shapes.
      static const c10::OperatorHandle conv =
          c10::Dispatcher::singleton().findSchemaOrThrow("aten::convolution",
                                                         "");
      conv.callBoxed(stack);
    } else {
      op.callBoxed(stack);
    }
  } catch (pybind11::error_already_set &e) {
    // Ctrl-C while a Python Meta kernel runs is the user's, not the op's:
    // it goes on as the KeyboardInterrupt it is.
    bool interrupted;
    {
      pybind11::gil_scoped_acquire gil;
      interrupted = e.matches(PyExc_KeyboardInterrupt);
    }
    if (interrupted)
      throw;
    fail(opDisplayName(op), std::string("invalid arguments: ") + e.what());
  } catch (const c10::Error &e) {
    std::string what = e.what_without_backtrace();
    if (what.find("no fake impl or Meta kernel registered") !=
        std::string::npos)
      throw NoMetaKernel(opDisplayName(op) + " has no Meta kernel");
    // A C++ Meta kernel's message, without the C++ backtrace.
    fail(opDisplayName(op), "invalid arguments: " + what);
  } catch (const std::exception &e) {
    fail(opDisplayName(op), std::string("invalid arguments: ") + e.what());
  }
  return stack;
}

void Tracer::foldOnHost(const c10::OperatorHandle &op,
                        torch::jit::Stack *stack) {
  const auto &schemaArgs = op.schema().arguments();
  size_t nargs = schemaArgs.size();
  bool hostDevice = copiesToHost(op, stack->end() - nargs);
  std::vector<at::Tensor> ipuInputs;
  // Tensors the op writes (in-place self, out=) run on a CPU copy: an out=
  // kernel may resize its output (arange.out, linspace.out), which the
  // fixed-size host alias of an ipu tensor cannot do. The result is copied
  // back into the ipu tensor, resized first.
  std::vector<std::pair<at::Tensor, at::Tensor>> written; // ipu, CPU copy
  for (size_t i = 0; i < nargs; ++i) {
    c10::IValue &arg = *(stack->end() - nargs + i);
    const c10::AliasInfo *alias = schemaArgs[i].alias_info();
    if (alias && alias->isWrite() && arg.isTensor() && isIpu(arg.toTensor())) {
      at::Tensor cpu = hostAlias(arg.toTensor()).clone();
      written.emplace_back(arg.toTensor(), cpu);
      arg = cpu;
      continue;
    }
    forEachTensor(arg, [&](const at::Tensor &t) {
      if (isIpu(t))
        ipuInputs.push_back(t);
    });
    arg = mapTensors(arg, [](const at::Tensor &t) { return hostAlias(t); });
  }
  op.callBoxed(stack);
  for (auto &[ipu, cpu] : written) {
    if (ipu.sizes() != cpu.sizes())
      ipu.resize_(cpu.sizes());
    hostAlias(ipu).copy_(cpu);
    values.erase(ipu.unsafeGetTensorImpl()); // now a known constant
  }
  size_t nret = op.schema().returns().size();
  for (auto it = stack->end() - nret; it != stack->end(); ++it) {
    *it = mapTensors(*it, [&](const at::Tensor &r) -> at::Tensor {
      // Results are ipu tensors, except where the op moved the data to
      // another device (Tensor.cpu() of a constant or of a value read).
      if (!r.defined() || hostDevice)
        return r;
      for (const auto &[ipu, cpu] : written)
        if (r.unsafeGetTensorImpl() == cpu.unsafeGetTensorImpl())
          return ipu;
      for (const at::Tensor &in : ipuInputs)
        // (Empty tensors all have a null data pointer: not the same tensor.)
        if (in.data_ptr() == r.data_ptr() && r.numel() > 0 &&
            in.scalar_type() == r.scalar_type() && in.sizes() == r.sizes() &&
            in.strides() == r.strides()) {
          values.erase(in.unsafeGetTensorImpl()); // now a known constant
          return in;
        }
      at::Tensor out = emptyIpu(r.sizes(), r.strides(), r.scalar_type());
      hostAlias(out).copy_(r);
      return out;
    });
  }
}

void Tracer::capture(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  const c10::FunctionSchema &schema = op.schema();
  if (!isViewCopyName(schema.name()) && expandedViews.empty())
    return captureOp(op, stack);
  size_t nargs = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - nargs, stack->end());
  captureOp(op, stack);
  if (schema.returns().size() == 1 && stack->back().isTensor())
    followExpandedViews(op, args, stack->back().toTensor());
}

void Tracer::captureOp(const c10::OperatorHandle &op,
                       torch::jit::Stack *stack) {
  const c10::FunctionSchema &schema = op.schema();
  const std::string opName = opDisplayName(op);
  size_t nargs = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - nargs, stack->end());

  bool anyTraced = false;
  std::string poison;
  for (const c10::IValue &a : args)
    forEachTensor(a, [&](const at::Tensor &t) {
      if (TracedValue *e = lookup(t)) {
        anyTraced = true;
        if (!e->poisonReason.empty() && poison.empty())
          poison = e->poisonReason;
      }
    });
  bool random = op.hasTag(at::Tag::nondeterministic_seeded);
  const OpSpec *logSpec = findSpec(schema.operator_name());
  OpLogScope logScope(*this, op, opName, args,
                      !anyTraced        ? (random ? "random" : "host")
                      : !logSpec        ? "unsupported"
                      : !poison.empty() ? "poisoned"
                                        : "captured",
                      logSpec ? logSpec->dialectOp : "");
  logScope.setStack(stack);
  if (!anyTraced && !random)
    return foldOnHost(op, stack);

  if (copiesToHost(op, args.begin())) {
    // Tensor.cpu(), .tolist(), .numpy(), printing: the tensor's value for
    // these inputs, guarded; the copy itself then runs on the host.
    readValue(args[0].toTensor(),
              "aten::_to_copy to " + args[3].toDevice().str() +
                  " (Tensor.cpu(), .tolist(), .numpy() or printing)");
    logScope.setStatus("read");
    return foldOnHost(op, stack);
  }
  ++opCount;
  if (std::optional<at::Tensor> self = scatterOfNoIndices(op, args)) {
    // Writes nothing: the result is self, laid out as eager's clone of it.
    // (PyTorch skips its shape checks for an empty index too: the Meta
    // kernels of index_add and scatter refuse sources eager accepts.)
    ValueId v = valueOf(*self, std::nullopt, opName);
    torch::jit::drop(*stack, nargs);
    at::Tensor layout = at::empty_like(at::empty_strided(
        self->sizes(), self->strides(), self->options().device(c10::kMeta)));
    at::Tensor out =
        emptyIpu(self->sizes(), layout.strides(), self->scalar_type());
    bindValue(out, v);
    stack->push_back(out);
    return;
  }
  const OpSpec *spec = logSpec;
  const SourceLoc &loc = logScope.location();
  // x[mask] with a mask the model computed: its shape depends on the mask's
  // values, so it runs as a host kernel like nonzero (below).
  bool computedMask = false;
  if (spec && schema.name() == "aten::index" && hostKernels && evaluator)
    for (const c10::IValue &e : args.at(1).toListRef())
      if (e.isTensor() && e.toTensor().defined() &&
          (e.toTensor().scalar_type() == at::kBool ||
           e.toTensor().scalar_type() == at::kByte) &&
          isTraced(e.toTensor()))
        computedMask = true;
  if (computedMask)
    spec = nullptr;
  bool indexList = false;
  if (spec)
    for (const ArgSpec &a : spec->args)
      if (a.kind == ArgKind::IndexList) {
        expandMaskIndices(args[*schema.argumentIndexWithName(a.aten)], opName);
        indexList = true;
      }
  // An op whose result shape depends on its inputs' values (nonzero,
  // masked_select, unique) and has no lowering: its shapes for the values
  // being traced, and a host kernel that checks them on every call.
  bool valueShapes = op.hasTag(at::Tag::dynamic_output_shape) && !spec &&
                     poison.empty() && hostKernels && evaluator;
  std::vector<c10::IValue> metaOut;
  if (valueShapes) {
    metaOut = shapesFromValues(op, args, opName);
  } else {
    try {
      metaOut = runOnMeta(op, args, indexList);
    } catch (const NoMetaKernel &e) {
      // Without a Meta kernel to give its result shapes (geqrf, histogram),
      // an op without a lowering gets them from its CPU kernel run on the
      // values being traced, checked by its host kernel like those above.
      if (spec || !poison.empty() || !hostKernels || !evaluator)
        fail(opName, std::string(e.what()) +
                         ", so its result shapes are unknown while tracing");
      valueShapes = true;
      metaOut = shapesFromValues(op, args, opName);
    }
  }
  torch::jit::drop(*stack, nargs);
  // The result of a functionalized view (`expand_copy` for `expand`) takes
  // the view's strides, as eager's has: torch decides from strides whether a
  // later reshape is a view or a copy, and a view would see a later in-place
  // update of its base (x.expand(3, 4).reshape(12) is a copy in eager).
  std::vector<c10::IValue> viewOut = eagerViewGeometry(op, args);
  // Complex values have no lowering: an op that reads or makes one runs as
  // a host kernel (views of them are captured: see mapView).
  if (spec) {
    bool complex = false;
    auto note = [&](const at::Tensor &t) {
      complex |= t.defined() && t.is_complex();
    };
    for (const c10::IValue &a : args)
      forEachTensor(a, note);
    for (const c10::IValue &m : metaOut)
      forEachTensor(m, note);
    if (complex)
      spec = nullptr;
  }

  // An op whose results all have no elements computes nothing, whatever its
  // operands are: each result is an empty constant, so no lowering and no
  // kernel ever sees a zero-size result (a 0 x 5 by 5 x 10 matmul, an empty
  // slice or split piece, an op on an empty input).
  bool resultsEmpty = false;
  for (const c10::IValue &m : metaOut) {
    if (m.isTensorList() || (m.isTensor() && m.toTensor().numel() != 0)) {
      resultsEmpty = false;
      break;
    }
    resultsEmpty |= m.isTensor();
  }

  auto pushOutputs = [&](const std::vector<ValueId> &ids,
                         const std::string &reason) {
    auto bindResult = [&](const at::Tensor &t, size_t index) {
      if (index < ids.size())
        bindValue(t, ids[index]);
      else
        bindPoison(t, !reason.empty()
                          ? reason
                          : "output " + std::to_string(index) + " of " +
                                opName + " is not computed by poptorch");
    };
    // The arguments the op writes (self of in-place ops, out= arguments), by
    // the schema, so that unsupported ops poison them too: the j-th takes the
    // op's j-th value, and returns aliasing them return them.
    std::vector<size_t> writtenArgs;
    for (size_t i = 0; i < nargs; ++i) {
      const c10::AliasInfo *alias = schema.arguments()[i].alias_info();
      if (alias && alias->isWrite() && args[i].isTensor() &&
          args[i].toTensor().defined())
        writtenArgs.push_back(i);
    }
    auto writtenArgOfReturn = [&](size_t r) -> std::optional<size_t> {
      const c10::AliasInfo *alias = schema.returns()[r].alias_info();
      if (alias && alias->isWrite())
        for (size_t i : writtenArgs)
          if (*schema.arguments()[i].alias_info() == *alias)
            return i;
      return std::nullopt;
    };
    for (size_t r = 0; r < metaOut.size(); ++r)
      if (auto i = writtenArgOfReturn(r)) {
        at::Tensor w = args[*i].toTensor();
        const at::Tensor &mt = metaOut[r].toTensor();
        if (w.sizes() != mt.sizes())
          w.resize_(mt.sizes());
      }
    for (size_t j = 0; j < writtenArgs.size(); ++j) {
      bindResult(args[writtenArgs[j]].toTensor(), j);
      if (j < ids.size())
        propagateWrite(args[writtenArgs[j]].toTensor(), opName.c_str());
    }
    for (size_t r = 0; r < metaOut.size(); ++r) {
      const c10::IValue &m = metaOut[r];
      if (auto i = writtenArgOfReturn(r)) {
        stack->push_back(args[*i]);
        continue;
      }
      if (!m.isTensor()) {
        stack->push_back(m);
        continue;
      }
      const at::Tensor &mt = m.toTensor();
      at::IntArrayRef strides = mt.strides();
      if (r < viewOut.size() && viewOut[r].isTensor() &&
          viewOut[r].toTensor().sizes() == mt.sizes())
        strides = viewOut[r].toTensor().strides();
      at::Tensor out = emptyIpu(mt.sizes(), strides, mt.scalar_type());
      bindResult(out, writtenArgs.empty() ? r : ids.size());
      stack->push_back(out);
    }
  };

  // (Not for shapes that depend on values: the host kernel checks them.)
  if (resultsEmpty && !valueShapes) {
    std::vector<ValueId> ids;
    for (const c10::IValue &m : metaOut)
      if (m.isTensor())
        ids.push_back(
            builder.addConstant(tensorTypeOf(m.toTensor(), opName), nullptr));
    return pushOutputs(ids, "");
  }

  // PyTorch's CPU kernel runs the op when the program runs; false (with
  // `why`) for ops it cannot run that way.
  // The results of the op computed by PyTorch's CPU kernel when the program
  // runs; none (with `why`) for ops it cannot run that way.
  auto emitHostKernel =
      [&](std::string &why) -> std::optional<std::vector<ValueId>> {
    std::optional<HostKernelCall> call =
        describeHostKernel(op, args, metaOut, why);
    if (!call)
      return std::nullopt;
    std::vector<ValueId> inputs;
    for (const at::Tensor &t : call->inputs)
      inputs.push_back(valueOf(t, std::nullopt, opName));
    std::vector<TensorType> types;
    for (const c10::IValue &m : metaOut)
      types.push_back(tensorTypeOf(m.toTensor(), opName));
    AttrValue name, text;
    name.kind = text.kind = AttrValue::Str;
    name.s = opName;
    text.s = call->call;
    try {
      return builder.addOp("poptorch.host_kernel", {inputs},
                           {{"op", name}, {"call", text}}, types, loc);
    } catch (const CompileError &e) {
      fail(opName,
           std::string("cannot be captured as a host kernel: ") + e.what());
    }
  };
  auto captureHostKernel = [&](std::string &why) -> bool {
    std::optional<std::vector<ValueId>> results = emitHostKernel(why);
    if (!results)
      return false;
    {
      const std::vector<ValueId> &ids = *results;
      logScope.setStatus("host_kernel");
      if (valueShapes)
        for (size_t r = 0; r < metaOut.size(); ++r) {
          // Checked by the host kernel itself (its result must fit the
          // buffer): `expected` has the shape and dtype.
          Guard g;
          g.what = "the shape of result " + std::to_string(r) + " of " + opName;
          g.location = describe(loc);
          g.inProgram = true;
          g.value = ids[r]; // a result, so that the check is never dead code
          g.expected =
              at::empty(metaOut[r].toTensor().sizes(),
                        metaOut[r].toTensor().options().device(c10::kCPU));
          guardList.push_back(std::move(g));
        }
      pushOutputs(ids, "");
      return true;
    }
  };

  if (!spec && poison.empty() && hostKernels) {
    // No lowering.
    std::string why;
    if (captureHostKernel(why))
      return;
    hostKernelRefusals[opName] = why;
  } else if (!spec && !hostKernels) {
    hostKernelRefusals[opName] = "Options().hostKernels(False)";
  }
  if (!spec || !poison.empty()) {
    if (!spec) {
      std::string key = opName + " at " + describe(loc);
      auto it = unsupported.find(key);
      if (it != unsupported.end()) {
        it->second.count++;
      } else {
        unsupported[key] = UnsupportedOp{opName, describe(loc)};
        unsupportedOrder.push_back(key);
      }
      poison = "produced by unsupported " + opName + " at " + describe(loc);
    }
    return pushOutputs({}, poison);
  }

  if (schema.name() == "aten::native_batch_norm" && args[5].toBool() &&
      args[3].isTensor() && args[3].toTensor().defined())
    // Eager updates the running statistics in place, which the op's schema
    // does not declare: functionalization cannot see that write.
    ignoredEffects.push_back(
        {opName, describe(loc),
         "batch normalisation in training mode (training=True) does not "
         "update the running statistics here; eager PyTorch does. Use "
         "model.eval() (inferenceModel does), or update them outside the "
         "model"});
  if (schema.name() == "aten::cat") {
    // Tensors with no elements add nothing: torch.cat's legacy rule skips
    // 1-D ones whatever the rank of the others (the empty cache tensor that
    // HF's DynamicCache concatenates with 4-D key/value states), and the
    // others are empty along the cat dim (q[..., rotary_dim:] when the
    // rotary dim is the head dim). The Meta kernel has checked the shapes.
    c10::List<at::Tensor> kept;
    for (const at::Tensor &t : args[0].toTensorList().vec())
      if (t.numel() != 0)
        kept.push_back(t);
    args[0] = kept;
  }

  auto argIndex = [&](const char *name) -> int {
    auto idx = schema.argumentIndexWithName(name);
    if (!idx)
      throw std::runtime_error("poptorch internal error: no argument " +
                               std::string(name) + " in " + opName);
    return static_cast<int>(*idx);
  };
  auto argOf = [&](const char *name) -> const c10::IValue & {
    return args[argIndex(name)];
  };

  std::optional<at::ScalarType> operandDtype;
  const at::Tensor &firstOut = metaOut.at(0).toTensor();
  if (spec->promote == Promote::Result)
    operandDtype = firstOut.scalar_type();
  if (spec->promote == Promote::Common) {
    // Python scalars arrive as wrapped numbers, which take part as scalars.
    at::native::ResultTypeState state;
    auto update = [&](const at::Tensor &t) {
      if (t.defined())
        state = at::native::update_result_type_state(t, state);
    };
    for (const ArgSpec &a : spec->args) {
      if (!*a.aten)
        continue;
      const c10::IValue &iv = argOf(a.aten);
      if ((a.kind == ArgKind::Tensor || a.kind == ArgKind::OptTensor) &&
          iv.isTensor())
        update(iv.toTensor());
      else if (a.kind == ArgKind::TensorList)
        for (const at::Tensor &t : iv.toTensorList().vec())
          update(t);
      else if ((a.kind == ArgKind::Scalar || a.kind == ArgKind::OptScalar) &&
               iv.isScalar())
        state = at::native::update_result_type_state(iv.toScalar(), state);
    }
    operandDtype = at::native::result_type(state);
  }
  auto scalarOperand = [&](const c10::Scalar &v) {
    return scalarConstant(v, operandDtype.value_or(firstOut.scalar_type()),
                          opName);
  };

  // Identity ops: the result is the (first) operand's value.
  if (!*spec->dialectOp) {
    const c10::IValue &in = argOf(spec->args.at(0).aten);
    ValueId v = valueOf(in.toTensor(), firstOut.scalar_type(), opName);
    return pushOutputs({v}, "");
  }

  // The rank of the first tensor operand, for dim normalisation.
  int64_t rank = 0;
  for (const ArgSpec &a : spec->args) {
    if (a.kind == ArgKind::Tensor) {
      rank = argOf(a.aten).toTensor().dim();
      break;
    }
    if (a.kind == ArgKind::TensorList) {
      auto list = argOf(a.aten).toTensorList();
      rank = list.size() ? list.get(0).dim() : 0;
      break;
    }
  }
  const at::Tensor *firstTensor = nullptr;
  for (const ArgSpec &a : spec->args)
    if (a.kind == ArgKind::Tensor) {
      firstTensor = &argOf(a.aten).toTensor();
      break;
    }

  std::vector<std::vector<ValueId>> operands;
  std::vector<std::pair<std::string, AttrValue>> attrs;
  auto addAttr = [&](const char *name, AttrValue v) {
    attrs.emplace_back(name, std::move(v));
  };
  for (const ArgSpec &a : spec->args) {
    const c10::IValue *iv = *a.aten ? &argOf(a.aten) : nullptr;
    AttrValue attr;
    switch (a.kind) {
    case ArgKind::Tensor:
      operands.push_back({valueOf(iv->toTensor(), operandDtype, opName)});
      break;
    case ArgKind::OptTensor:
      // C++ callers pass an absent optional tensor as an undefined Tensor.
      if (iv->isNone() || !iv->toTensor().defined())
        operands.push_back({});
      else
        operands.push_back({valueOf(iv->toTensor(), operandDtype, opName)});
      break;
    case ArgKind::TensorList: {
      std::vector<ValueId> group;
      for (const at::Tensor &t : iv->toTensorList().vec())
        group.push_back(valueOf(t, operandDtype, opName));
      operands.push_back(group);
      break;
    }
    case ArgKind::Scalar:
      operands.push_back({scalarOperand(iv->toScalar())});
      break;
    case ArgKind::OptScalar:
      if (iv->isNone())
        operands.push_back({});
      else
        operands.push_back({scalarOperand(iv->toScalar())});
      break;
    case ArgKind::Mask:
      operands.push_back({valueOf(iv->toTensor(), at::kBool, opName)});
      break;
    case ArgKind::F64:
      if (iv->isNone())
        break;
      attr.kind = AttrValue::F64;
      attr.f = iv->isScalar() ? iv->toScalar().toDouble() : iv->toDouble();
      addAttr(a.name, attr);
      break;
    case ArgKind::I64:
      if (iv->isNone())
        break;
      attr.kind = AttrValue::I64;
      attr.i = iv->toInt();
      addAttr(a.name, attr);
      break;
    case ArgKind::Bool:
      attr.kind = AttrValue::Bool;
      attr.b = iv->toBool();
      addAttr(a.name, attr);
      break;
    case ArgKind::Str:
      if (iv->isNone()) // `str?`: the dialect attribute's default
        break;
      attr.kind = AttrValue::Str;
      attr.s = iv->toStringRef();
      addAttr(a.name, attr);
      break;
    case ArgKind::Ints:
      attr.kind = AttrValue::Ints;
      attr.ints = iv->toIntVector();
      if (attr.ints.empty() && *a.extra)
        attr.ints = argOf(a.extra).toIntVector();
      addAttr(a.name, attr);
      break;
    case ArgKind::Dim:
      if (iv->isNone()) // `int? dim=None`: the op's default (all dims)
        break;
      attr.kind = AttrValue::I64;
      attr.i = normalizeDim(iv->toInt(), rank);
      addAttr(a.name, attr);
      break;
    case ArgKind::Dims:
      attr.kind = AttrValue::Ints;
      if (iv && iv->isInt()) // `int dim` of a reduction over one dim
        attr.ints.push_back(normalizeDim(iv->toInt(), rank));
      else if (iv && !iv->isNone())
        for (int64_t d : iv->toIntVector())
          attr.ints.push_back(normalizeDim(d, rank));
      if (attr.ints.empty() && std::string(a.extra) == "all")
        for (int64_t d = 0; d < rank; ++d)
          attr.ints.push_back(d);
      addAttr(a.name, attr);
      break;
    case ArgKind::Index: {
      int64_t dim = normalizeDim(argOf(a.extra).toInt(), rank);
      int64_t size = firstTensor ? firstTensor->size(dim) : 0;
      int64_t v = iv->isNone() ? 0 : iv->toInt();
      if (v < 0)
        v += size;
      attr.kind = AttrValue::I64;
      attr.i = std::min(std::max<int64_t>(v, 0), size);
      addAttr(a.name, attr);
      break;
    }
    case ArgKind::RandomState:
      operands.push_back({randomState()});
      attr.kind = AttrValue::I64;
      attr.i = randomStreams++;
      addAttr("stream", attr);
      break;
    case ArgKind::ReversedDims:
      attr.kind = AttrValue::Ints;
      for (int64_t d = rank; d-- > 0;)
        attr.ints.push_back(d);
      addAttr(a.name, attr);
      break;
    case ArgKind::LitStr:
      attr.kind = AttrValue::Str;
      attr.s = a.extra;
      addAttr(a.name, attr);
      break;
    case ArgKind::LitBool:
      attr.kind = AttrValue::Bool;
      attr.b = std::string(a.extra) == "true";
      addAttr(a.name, attr);
      break;
    case ArgKind::Const:
      operands.push_back({scalarOperand(c10::Scalar(std::stod(a.extra)))});
      break;
    case ArgKind::Indices: {
      // Positions along dim `extra` of the first operand (all of its
      // elements when `extra` is empty).
      const at::Tensor &t = iv->toTensor();
      int64_t size = firstTensor->numel();
      if (*a.extra) {
        int64_t dim = normalizeDim(argOf(a.extra).toInt(), rank);
        size = firstTensor->dim() ? firstTensor->size(dim) : 1;
      }
      checkIndexRange(t, size, opName);
      operands.push_back({valueOf(t, std::nullopt, opName)});
      break;
    }
    case ArgKind::IndexList: {
      // `Tensor?[]` of advanced indexing: the present index tensors, and as
      // attribute `extra` the input dims they index (masks are already
      // expanded into their nonzero positions).
      std::vector<ValueId> group;
      attr.kind = AttrValue::Ints;
      int64_t d = 0;
      for (const c10::IValue &e : iv->toListRef()) {
        if (e.isTensor() && e.toTensor().defined()) {
          const at::Tensor &t = e.toTensor();
          checkIndexRange(t, d < firstTensor->dim() ? firstTensor->size(d) : 0,
                          opName);
          group.push_back(valueOf(t, std::nullopt, opName));
          attr.ints.push_back(d);
        }
        ++d;
      }
      operands.push_back(group);
      addAttr(a.extra, attr);
      break;
    }
    }
  }

  if (schema.name() == "aten::scaled_dot_product_attention")
    expandGroupedKeyValues(args, operands, loc);

  std::vector<TensorType> resultTypes;
  for (int i = 0; i < spec->results; ++i)
    resultTypes.push_back(tensorTypeOf(metaOut.at(i).toTensor(), opName));
  // In-place and out= forms of bool-valued ops write tensors of any dtype.
  std::optional<TensorType> castTo;
  if (spec->boolResult && resultTypes.at(0).dtype != ElemType::Bool) {
    castTo = resultTypes[0];
    resultTypes[0].dtype = ElemType::Bool;
  }
  std::vector<ValueId> ids;
  try {
    ids = builder.addOp(spec->dialectOp, operands, attrs, resultTypes, loc);
    if (castTo)
      ids[0] =
          builder.addOp("poptorch.cast", {{ids[0]}}, {}, {*castTo}, loc)[0];
    // Results the lowering does not compute (native_layer_norm's mean and
    // rstd) come from the op's CPU kernel, which is dead code (removed)
    // unless the model uses them.
    bool writes = false;
    for (const c10::Argument &a : schema.arguments())
      writes |= a.alias_info() && a.alias_info()->isWrite();
    std::string why;
    if (ids.size() < metaOut.size() && hostKernels && !writes)
      if (std::optional<std::vector<ValueId>> all = emitHostKernel(why))
        ids.insert(ids.end(), all->begin() + ids.size(), all->end());
  } catch (const CompileError &e) {
    // The lowering refuses these arguments (grid_sample's bicubic mode, say):
    // PyTorch's kernel runs the op instead, where it can.
    std::string refusal = std::string("cannot be captured as ") +
                          spec->dialectOp + ": " + e.what();
    std::string why, first = e.what();
    first = first.substr(0, first.find('\n'));
    if (hostKernels && captureHostKernel(why)) {
      loweringRefusals.emplace(opName, first);
      return;
    }
    fail(opName,
         refusal + (why.empty()
                        ? ""
                        : " (and it is not a host kernel: " + why + ")"));
  }
  pushOutputs(ids, "");
}

void Tracer::checkIndexRange(const at::Tensor &t, int64_t size,
                             const std::string &opName) {
  // Indices computed by the model cannot be checked: the program wraps
  // negative ones and clamps the rest into range (docs/ops.md). Constant
  // indices are checked here, as eager PyTorch checks them.
  if (isTraced(t) || t.numel() == 0)
    return;
  if (!at::isIntegralType(t.scalar_type(), /*includeBool=*/false))
    fail(opName, "indices must be integers, got " +
                     std::string(c10::toString(t.scalar_type())));
  at::Tensor host = constantOf(t);
  int64_t lo = host.min().item<int64_t>(), hi = host.max().item<int64_t>();
  if (lo < -size || hi >= size)
    fail(opName, "index " + std::to_string(lo < -size ? lo : hi) +
                     " is out of bounds for size " + std::to_string(size));
}

void Tracer::expandMaskIndices(c10::IValue &indices,
                               const std::string &opName) {
  // x[mask] is x[mask.nonzero().unbind(1)]: a constant mask becomes its
  // index tensors, so the result shape is static. A mask computed by the
  // model would make the shape depend on its values.
  c10::List<std::optional<at::Tensor>> out;
  bool changed = false;
  for (const c10::IValue &e : indices.toListRef()) {
    if (!e.isTensor() || !e.toTensor().defined()) {
      out.push_back(std::nullopt);
      continue;
    }
    at::Tensor t = e.toTensor();
    if (t.scalar_type() != at::kBool && t.scalar_type() != at::kByte) {
      out.push_back(t);
      continue;
    }
    if (isTraced(t))
      fail(opName,
           "indexing with a boolean mask computed by the model gives a "
           "result whose shape depends on the mask's values, which a "
           "compiled program cannot have; use torch.where(mask, x, other) "
           "or masked_fill, or build the mask from constants");
    at::Tensor nz = at::nonzero(constantOf(t));
    for (int64_t k = 0; k < t.dim(); ++k)
      out.push_back(nz.select(1, k).contiguous());
    changed = true;
  }
  if (changed)
    indices = out;
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
