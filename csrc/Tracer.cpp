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

TensorType tensorTypeOf(const at::Tensor &t, const std::string &opName) {
  return TensorType{t.sizes().vec(), elemTypeOf(t.scalar_type(), opName)};
}

std::string opDisplayName(const c10::OperatorHandle &op) {
  const auto &n = op.schema().operator_name();
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

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
    TensorType to = builder.typeOf(e->value);
    to.dtype = elemTypeOf(want, opName);
    return builder.addOp("poptorch.cast", {{e->value}}, {}, {to},
                         sourceLocation())[0];
  }
  // A Python scalar (`x * 0.5`) is converted without a host tensor op: at one
  // per traced op, the dispatch of `.to()` was a quarter of the capture time.
  if (t.unsafeGetTensorImpl()->is_wrapped_number())
    return scalarConstant(wrappedNumberValue(t), want, opName);
  at::Tensor host = constantOf(t).to(want).contiguous();
  return builder.addConstant(tensorTypeOf(host, opName), host.data_ptr());
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
  for (const c10::IValue &a : args)
    stack.push_back(mapTensors(a, [&](const at::Tensor &t) -> at::Tensor {
      if (!t.defined())
        return t;
      return isIpu(t) ? evaluate(t, opName) : t;
    }));
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

std::vector<c10::IValue>
Tracer::eagerViewGeometry(const c10::OperatorHandle &op,
                          const std::vector<c10::IValue> &args) {
  const c10::OperatorName &name = op.schema().operator_name();
  std::string_view base(name.name);
  if (base.size() <= 5 || base.substr(base.size() - 5) != "_copy")
    return {};
  auto view = c10::Dispatcher::singleton().findOp(
      {std::string(base.substr(0, base.size() - 5)), name.overload_name});
  if (!view)
    return {};
  const auto &returns = view->schema().returns();
  if (returns.size() != 1 || !returns[0].alias_info() ||
      returns[0].type()->kind() != c10::TypeKind::TensorType)
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
    // A C++ Meta kernel's message, without the C++ backtrace.
    fail(opDisplayName(op),
         std::string("invalid arguments: ") + e.what_without_backtrace());
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
  std::vector<c10::IValue> metaOut = valueShapes
                                         ? shapesFromValues(op, args, opName)
                                         : runOnMeta(op, args, indexList);
  torch::jit::drop(*stack, nargs);
  // The result of a functionalized view (`expand_copy` for `expand`) takes
  // the view's strides, as eager's has: torch decides from strides whether a
  // later reshape is a view or a copy, and a view would see a later in-place
  // update of its base (x.expand(3, 4).reshape(12) is a copy in eager).
  std::vector<c10::IValue> viewOut = eagerViewGeometry(op, args);

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
    for (size_t j = 0; j < writtenArgs.size(); ++j)
      bindResult(args[writtenArgs[j]].toTensor(), j);
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

  if (!spec && poison.empty() && hostKernels) {
    // No lowering: PyTorch's CPU kernel runs it when the program runs.
    std::string why;
    if (auto call = describeHostKernel(op, args, metaOut, why)) {
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
      std::vector<ValueId> ids;
      try {
        ids = builder.addOp("poptorch.host_kernel", {inputs},
                            {{"op", name}, {"call", text}}, types, loc);
      } catch (const CompileError &e) {
        fail(opName,
             std::string("cannot be captured as a host kernel: ") + e.what());
      }
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
      return pushOutputs(ids, "");
    }
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
  } catch (const CompileError &e) {
    fail(opName, std::string("cannot be captured as ") + spec->dialectOp +
                     ": " + e.what());
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
  bool intoArgument =
      dst && dst->value >= 0 && argIndexOfValue.count(dst->value) != 0;
  if (!isTraced(src) && !intoArgument) {
    hostAlias(self).copy_(constantOf(src));
    if (dst)
      values.erase(self.unsafeGetTensorImpl());
    return self;
  }
  ValueId v = valueOf(src, self.scalar_type(), "copy_");
  if (src.sizes() != self.sizes()) {
    TensorType to = builder.typeOf(v);
    to.shape = self.sizes().vec();
    v = builder.addOp("poptorch.expand", {{v}}, {}, {to}, sourceLocation())[0];
  }
  if (dst && dst->value >= 0) {
    auto it = argIndexOfValue.find(dst->value);
    if (it != argIndexOfValue.end()) {
      // Writing into a model argument (a buffer update after
      // functionalization): the argument's identity is kept, the new value
      // becomes a result.
      int64_t arg = it->second;
      bufferUpdates[arg] = v;
      bindValue(self, v);
      argIndexOfValue[v] = arg;
      return self;
    }
  }
  bindValue(self, v);
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

//===----------------------------------------------------------------------===//
// Views that reach the backend (inside composite ops' decompositions)
//===----------------------------------------------------------------------===//

/// How a strided view (sizes, strides, offset) of a dense tensor reads its
/// logical value: bring the value into memory order (`order`, giving a
/// contiguous Q of shape S), then either reshape it (`reshapeOnly`), or take
/// a strided range (start, step, len) of every dim of Q, permute the ranged
/// dims into view order (`perm`), reshape to `unexpanded` and broadcast to
/// `sizes`.
struct ViewMap {
  std::vector<int64_t> order, S;
  bool reshapeOnly = false;
  std::vector<int64_t> start, step, len, perm, permutedShape, unexpanded, sizes;
  bool broadcast = false;
  /// Any other view of dense memory (overlapping windows, a diagonal, an
  /// offset that is not a slice start): the flat position in Q of each of
  /// the view's elements, row-major.
  std::vector<int64_t> positions;
  /// A position of numel(Q): memory between the elements of a tensor with
  /// gaps, read as zero (see mapGappedView).
  bool gapsReadAsZero = false;
  /// The expanded (stride 0) dims of the base, whose elements share memory:
  /// read at index 0 before anything else (Q is the unexpanded value).
  std::vector<int64_t> unexpandedBase;
};

namespace {

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int64_t> inversePermutation(const std::vector<int64_t> &p) {
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

AttrValue intsAttr(std::vector<int64_t> values) {
  AttrValue a;
  a.kind = AttrValue::Ints;
  a.ints = std::move(values);
  return a;
}

AttrValue i64Attr(int64_t value) {
  AttrValue a;
  a.kind = AttrValue::I64;
  a.i = value;
  return a;
}

/// The memory offsets (from `base`) of a strided view's elements, row-major.
std::vector<int64_t> viewOffsets(c10::IntArrayRef sizes,
                                 c10::IntArrayRef strides, int64_t base) {
  const int64_t m = static_cast<int64_t>(sizes.size());
  const int64_t numel = c10::multiply_integers(sizes);
  std::vector<int64_t> offsets;
  offsets.reserve(numel);
  std::vector<int64_t> index(m, 0);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t p = base;
    for (int64_t i = 0; i < m; ++i)
      p += index[i] * strides[i];
    offsets.push_back(p);
    for (int64_t i = m; i-- > 0;)
      if (++index[i] < sizes[i])
        break;
      else
        index[i] = 0;
  }
  return offsets;
}

/// Why the tracer refuses a strided view, with what to do instead.
std::string viewRefusal(c10::IntArrayRef sizes, c10::IntArrayRef strides,
                        const std::string &why) {
  return "a strided view of a traced tensor (sizes " + c10::str(sizes) +
         ", strides " + c10::str(strides) + ") " + why +
         "; use reshape, permute, slicing or expand instead";
}

} // namespace

/// mapView of a tensor whose memory has gaps (a select, a stepped slice: the
/// eager layout of such a view, which tracing keeps so that a later reshape
/// is a view or a copy as in eager). Each memory offset of the view is
/// translated into the dense layout of `self`'s value (Q); a view that is a
/// strided range there is mapped as a view of that dense layout, any other
/// reads its elements by position. Memory in the gaps is not `self`'s: a view
/// that reads it is refused.
ViewMap Tracer::mapGappedView(const at::Tensor &self, ViewMap map,
                              c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              int64_t offset, const char *opName) const {
  auto refuse = [&](const std::string &why) {
    fail(opName, viewRefusal(sizes, strides, why));
  };
  const std::vector<int64_t> &S = map.S;
  const int64_t n = static_cast<int64_t>(S.size());
  auto contiguousStrides = c10::contiguous_strides(S);
  std::vector<int64_t> C(contiguousStrides.begin(), contiguousStrides.end());
  std::vector<int64_t> P(n); // the memory strides of Q's dims
  int64_t extent = 1;        // memory spanned by the dims inside k
  for (int64_t k = n; k-- > 0;) {
    P[k] = self.stride(map.order[k]);
    if (S[k] == 1)
      continue;
    if (P[k] < extent)
      refuse("of a tensor with overlapping memory");
    extent += P[k] * (S[k] - 1);
  }
  // The offset in Q of the element at memory offset `p` (from self's start).
  auto toDense = [&](int64_t p) -> std::optional<int64_t> {
    if (p < 0)
      return std::nullopt;
    int64_t d = 0;
    for (int64_t k = 0; k < n; ++k) {
      if (S[k] == 1)
        continue;
      int64_t i = p / P[k];
      if (i >= S[k])
        return std::nullopt;
      p -= i * P[k];
      d += i * C[k];
    }
    if (p != 0)
      return std::nullopt;
    return d;
  };
  const int64_t rem = offset - self.storage_offset();
  const int64_t m = static_cast<int64_t>(sizes.size());
  std::optional<int64_t> base = toDense(rem);
  std::vector<int64_t> dense(m);
  auto unitStrides = c10::contiguous_strides(sizes);
  bool ranged = base.has_value();
  for (int64_t i = 0; i < m && ranged; ++i) {
    if (sizes[i] == 1 || strides[i] == 0) {
      dense[i] = sizes[i] == 1 ? unitStrides[i] : 0;
      continue;
    }
    std::optional<int64_t> next = toDense(rem + strides[i]);
    std::optional<int64_t> last = toDense(rem + (sizes[i] - 1) * strides[i]);
    ranged = next && last && *next > *base &&
             *last - *base == (sizes[i] - 1) * (*next - *base);
    if (ranged)
      dense[i] = *next - *base;
  }
  if (ranged) {
    // The same view of the value laid out densely, in the same dim order.
    std::vector<int64_t> denseOfSelf(n);
    for (int64_t k = 0; k < n; ++k)
      denseOfSelf[map.order[k]] = C[k];
    at::Tensor standIn = at::empty_strided(self.sizes(), denseOfSelf,
                                           self.options().device(c10::kMeta));
    return mapView(standIn, sizes, dense, *base, opName);
  }
  // The tensor's whole memory as one dim (what torch's clone_preserve_strides
  // copies, to view it again with the same layout): its gaps hold no value of
  // the tensor and read as zero. Any other view into the gaps is refused.
  const bool wholeMemory =
      m == 1 && strides[0] == 1 && rem == 0 &&
      sizes[0] * static_cast<int64_t>(self.element_size()) ==
          static_cast<int64_t>(self.storage().nbytes());
  const int64_t numelQ = c10::multiply_integers(S);
  for (int64_t p : viewOffsets(sizes, strides, rem)) {
    std::optional<int64_t> d = toDense(p);
    if (!d && !wholeMemory)
      refuse("that reads memory between or outside the tensor's elements");
    map.positions.push_back(d.value_or(numelQ));
    map.gapsReadAsZero |= !d;
  }
  return map;
}

ViewMap Tracer::mapView(const at::Tensor &self, c10::IntArrayRef sizes,
                        c10::IntArrayRef strides, int64_t offset,
                        const char *opName) const {
  auto unsupportedView = [&](const std::string &why) {
    fail(opName, viewRefusal(sizes, strides, why));
  };
  // An expanded base (stride 0 along a dim of size > 1: the same value all
  // along it) is mapped as its unexpanded value, index 0 of those dims.
  std::vector<int64_t> expanded;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.size(d) > 1 && self.stride(d) == 0)
      expanded.push_back(d);
  if (!expanded.empty()) {
    std::vector<int64_t> unexpanded = self.sizes().vec();
    int64_t extent = self.storage_offset() + 1;
    for (int64_t d : expanded)
      unexpanded[d] = 1;
    for (int64_t d = 0; d < self.dim(); ++d)
      extent += (unexpanded[d] - 1) * self.stride(d);
    at::Tensor standIn =
        at::empty({extent}, self.options().device(c10::kMeta))
            .as_strided(unexpanded, self.strides(), self.storage_offset());
    ViewMap map = mapView(standIn, sizes, strides, offset, opName);
    map.unexpandedBase = std::move(expanded);
    return map;
  }
  ViewMap map;
  map.sizes = sizes.vec();
  const int64_t n = self.dim();
  map.order = iota(n);
  std::stable_sort(map.order.begin(), map.order.end(),
                   [&](int64_t a, int64_t b) {
                     if (self.size(a) == 1 || self.size(b) == 1)
                       return false; // unit dims have no meaningful stride:
                                     // keep them in place
                     return self.stride(a) > self.stride(b);
                   });
  for (int64_t d : map.order)
    map.S.push_back(self.size(d));
  const std::vector<int64_t> &S = map.S;
  auto contiguousStrides = c10::contiguous_strides(S);
  std::vector<int64_t> C(contiguousStrides.begin(), contiguousStrides.end());
  bool gaps = false;
  for (int64_t k = 0; k < n; ++k)
    gaps |= S[k] > 1 && self.stride(map.order[k]) != C[k];
  if (gaps)
    return mapGappedView(self, map, sizes, strides, offset, opName);

  int64_t rem = offset - self.storage_offset();
  int64_t numel = c10::multiply_integers(sizes);
  // A view that is not a slice, permutation or broadcast of Q reads its
  // elements by position (as as_strided's definition says).
  auto gatherView = [&](const std::string &why) {
    map.positions = viewOffsets(sizes, strides, offset - self.storage_offset());
    for (int64_t p : map.positions)
      if (p < 0 || p >= self.numel())
        unsupportedView(why + " and reads memory outside the tensor");
    return map;
  };
  if (rem < 0)
    return gatherView("that starts before the tensor");
  if (rem == 0 && numel == self.numel() &&
      c10::IntArrayRef(c10::contiguous_strides(sizes)) == strides) {
    map.reshapeOnly = true;
    return map;
  }
  if (numel == 0)
    unsupportedView("with no elements");

  // Each view dim of size > 1 is a broadcast (stride 0) or a strided range
  // of one dim of Q; the offset gives the start in every dim of Q (the dims
  // of Q that the view does not range over are selected at that start).
  map.start.assign(n, 0);
  map.step.assign(n, 1);
  map.len.assign(n, 1);
  std::vector<int64_t> viewDimOf(n, -1);
  for (int64_t k = 0; k < n; ++k)
    if (S[k] > 1) {
      map.start[k] = rem / C[k];
      rem -= map.start[k] * C[k];
      if (map.start[k] >= S[k])
        return gatherView("that starts past the end of dim " +
                          std::to_string(map.order[k]));
    }
  if (rem != 0)
    return gatherView("with an unaligned offset");
  const int64_t m = static_cast<int64_t>(sizes.size());
  for (int64_t i = 0; i < m; ++i) {
    if (sizes[i] == 1)
      continue;
    if (strides[i] == 0) {
      map.broadcast = true;
      continue;
    }
    // The only candidate is the dim of Q with the largest stride <= the
    // view's (a larger step would run past the end of that dim).
    int64_t k = 0;
    while (k < n && (S[k] == 1 || C[k] > strides[i]))
      ++k;
    if (k == n || viewDimOf[k] >= 0 || strides[i] % C[k] != 0 ||
        map.start[k] + (sizes[i] - 1) * (strides[i] / C[k]) >= S[k]) {
      map.broadcast = false;
      return gatherView("that is not a slice, permutation or broadcast of it");
    }
    viewDimOf[k] = i;
    map.step[k] = strides[i] / C[k];
    map.len[k] = sizes[i];
  }
  // Ranged dims in view order, then the (now unit) selected dims.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < n; ++k)
      if (viewDimOf[k] == i)
        map.perm.push_back(k);
  for (int64_t k = 0; k < n; ++k)
    if (viewDimOf[k] < 0)
      map.perm.push_back(k);
  for (int64_t k : map.perm)
    map.permutedShape.push_back(map.len[k]);
  for (int64_t i = 0; i < m; ++i)
    map.unexpanded.push_back(sizes[i] > 1 && strides[i] == 0 ? 1 : sizes[i]);
  return map;
}

ValueId Tracer::emit(const char *op, ValueId in, std::vector<int64_t> shape,
                     std::vector<std::pair<std::string, AttrValue>> attrs,
                     const SourceLoc &loc) {
  TensorType to = builder.typeOf(in);
  if (to.shape == shape && (std::string(op) == "poptorch.reshape" ||
                            std::string(op) == "poptorch.expand"))
    return in;
  to.shape = std::move(shape);
  return builder.addOp(op, {{in}}, attrs, {to}, loc)[0];
}

void Tracer::expandGroupedKeyValues(const std::vector<c10::IValue> &args,
                                    std::vector<std::vector<ValueId>> &operands,
                                    const SourceLoc &loc) {
  // scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal, scale,
  // enable_gqa): with grouped-query attention each key/value head serves
  // q_heads / kv_heads consecutive query heads, as repeat_interleave on dim
  // -3 would make them: [.., Hkv, S, D] -> [.., Hkv, G, S, D] -> [.., Hq, S,
  // D].
  if (args.size() < 8 || !args[7].isBool() || !args[7].toBool())
    return;
  const at::Tensor &q = args[0].toTensor();
  if (q.dim() < 3)
    return;
  int64_t heads = q.size(-3);
  for (size_t i : {size_t(1), size_t(2)}) {
    const at::Tensor &t = args[i].toTensor();
    int64_t kvHeads = t.size(-3);
    if (kvHeads == heads || kvHeads == 0 || heads % kvHeads != 0)
      continue;
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    std::vector<int64_t> grouped(shape);
    grouped.insert(grouped.end() - 2, 1);
    ValueId v = emit("poptorch.reshape", operands[i].at(0), grouped, {}, loc);
    grouped[grouped.size() - 3] = heads / kvHeads;
    v = emit("poptorch.expand", v, grouped, {}, loc);
    shape[shape.size() - 3] = heads;
    operands[i] = {emit("poptorch.reshape", v, shape, {}, loc)};
  }
}

ValueId Tracer::emitPermute(ValueId in, const std::vector<int64_t> &dims,
                            const SourceLoc &loc) {
  if (dims == iota(static_cast<int64_t>(dims.size())))
    return in;
  std::vector<int64_t> shape, from = builder.typeOf(in).shape;
  for (int64_t d : dims)
    shape.push_back(from[d]);
  return emit("poptorch.permute", in, shape, {{"dims", intsAttr(dims)}}, loc);
}

ValueId Tracer::emitSlice(ValueId in, int64_t dim, int64_t start, int64_t step,
                          int64_t len, const SourceLoc &loc) {
  std::vector<int64_t> shape = builder.typeOf(in).shape;
  if (start == 0 && step == 1 && len == shape[dim])
    return in;
  shape[dim] = len;
  return emit("poptorch.slice", in, shape,
              {{"dim", i64Attr(dim)},
               {"start", i64Attr(start)},
               {"step", i64Attr(step)}},
              loc);
}

ValueId Tracer::readView(const ViewMap &map, ValueId base,
                         const SourceLoc &loc) {
  for (int64_t d : map.unexpandedBase)
    base = emitSlice(base, d, 0, 1, 1, loc);
  ValueId v = emitPermute(base, map.order, loc);
  if (map.reshapeOnly)
    return emit("poptorch.reshape", v, map.sizes, {}, loc);
  if (!map.positions.empty()) {
    int64_t n = static_cast<int64_t>(map.positions.size());
    int64_t numelQ = c10::multiply_integers(map.S);
    ValueId flat = emit("poptorch.reshape", v, {numelQ}, {}, loc);
    if (map.gapsReadAsZero) {
      TensorType zeroType = builder.typeOf(flat);
      zeroType.shape = {1};
      std::vector<char> zero(elemSize(zeroType.dtype), 0);
      ValueId gap = builder.addConstant(zeroType, zero.data());
      zeroType.shape = {numelQ + 1};
      flat = builder.addOp("poptorch.cat", {{flat, gap}}, {{"dim", i64Attr(0)}},
                           {zeroType}, loc)[0];
    }
    ValueId index =
        builder.addConstant({{n}, ElemType::I64}, map.positions.data());
    TensorType to = builder.typeOf(flat);
    to.shape = {n};
    v = builder.addOp("poptorch.index", {{flat}, {index}},
                      {{"dims", intsAttr({0})}}, {to}, loc)[0];
    return emit("poptorch.reshape", v, map.sizes, {}, loc);
  }
  for (size_t k = 0; k < map.S.size(); ++k)
    v = emitSlice(v, k, map.start[k], map.step[k], map.len[k], loc);
  v = emitPermute(v, map.perm, loc);
  v = emit("poptorch.reshape", v, map.unexpanded, {}, loc);
  return emit("poptorch.expand", v, map.sizes, {}, loc);
}

ValueId Tracer::writeView(const ViewMap &map, ValueId base, ValueId value,
                          const char *opName, const SourceLoc &loc) {
  if (map.broadcast || !map.unexpandedBase.empty())
    fail(opName,
         "writes into a broadcast (expanded) view, which is not supported");
  if (!map.positions.empty())
    fail(opName, "writes into a strided view that is not a slice, "
                 "permutation or broadcast of its base, which is not "
                 "supported; write into a slice, or build the result with "
                 "index_put or scatter");
  ValueId q = emitPermute(base, map.order, loc);
  if (map.reshapeOnly)
    return emitPermute(emit("poptorch.reshape", value, map.S, {}, loc),
                       inversePermutation(map.order), loc);
  ValueId w = emit("poptorch.reshape", value, map.permutedShape, {}, loc);
  w = emitPermute(w, inversePermutation(map.perm), loc);
  // Insert w into q one dim of Q at a time: along dim k, the region of q at
  // start + i * step (i < len) is replaced by the result of inserting w into
  // that region along the remaining dims.
  std::function<ValueId(ValueId, size_t)> insert = [&](ValueId into,
                                                       size_t k) -> ValueId {
    if (k == map.S.size())
      return w;
    int64_t size = builder.typeOf(into).shape[k];
    int64_t start = map.start[k], step = map.step[k], len = map.len[k];
    ValueId region = emitSlice(into, k, start, step, len, loc);
    ValueId middle = insert(region, k + 1);
    if (start == 0 && step == 1 && len == size)
      return middle;
    if (step != 1)
      return builder.addOp("poptorch.slice_insert", {{into}, {middle}},
                           {{"dim", i64Attr(k)},
                            {"start", i64Attr(start)},
                            {"step", i64Attr(step)}},
                           {builder.typeOf(into)}, loc)[0];
    std::vector<ValueId> pieces;
    if (start > 0)
      pieces.push_back(emitSlice(into, k, 0, 1, start, loc));
    pieces.push_back(middle);
    int64_t end = start + len;
    if (end < size)
      pieces.push_back(emitSlice(into, k, end, 1, size - end, loc));
    TensorType to = builder.typeOf(into);
    return builder.addOp("poptorch.cat", {pieces}, {{"dim", i64Attr(k)}}, {to},
                         loc)[0];
  };
  return emitPermute(insert(q, 0), inversePermutation(map.order), loc);
}

std::optional<ValueId> Tracer::viewValue(const at::Tensor &self,
                                         c10::IntArrayRef sizes,
                                         c10::IntArrayRef strides,
                                         int64_t offset, const char *opName) {
  if (!isTraced(self))
    return std::nullopt;
  ++opCount;
  if (c10::multiply_integers(sizes) == 0) // reads nothing, wherever it starts
    return builder.addConstant(
        TensorType{sizes.vec(), elemTypeOf(self.scalar_type(), opName)},
        nullptr);
  ViewMap map = mapView(self, sizes, strides, offset, opName);
  return readView(map, valueOf(self, std::nullopt, opName), sourceLocation());
}

void Tracer::captureScatter(const c10::OperatorHandle &op, const char *viewOp,
                            const char *viewOverload,
                            torch::jit::Stack *stack) {
  const c10::FunctionSchema &schema = op.schema();
  const std::string opName = opDisplayName(op);
  size_t nargs = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - nargs, stack->end());
  const at::Tensor self = args[0].toTensor(), src = args[1].toTensor();
  if (!isTraced(self) && !isTraced(src))
    return foldOnHost(op, stack);
  ++opCount;
  // `x_scatter(self, src, args...)` writes src into `x(self, args...)`: take
  // that view's geometry from the view op run on a Meta tensor shaped like
  // self and laid out as its value is (densely; self itself carries the
  // strides of the eager view it stands for, see eagerViewGeometry).
  at::Tensor meta =
      at::empty_strided(self.sizes(), c10::contiguous_strides(self.sizes()),
                        self.options().device(c10::kMeta));
  torch::jit::Stack viewStack{meta};
  viewStack.insert(viewStack.end(), args.begin() + 2, args.end());
  c10::Dispatcher::singleton()
      .findSchemaOrThrow(viewOp, viewOverload)
      .callBoxed(viewStack);
  const at::Tensor view = viewStack.at(0).toTensor();
  SourceLoc loc = sourceLocation();
  ValueId result;
  if (view.numel() == 0) {
    // Writing into no elements (x[n:] = v with n the size) leaves self.
    result = valueOf(self, std::nullopt, opName);
  } else {
    ViewMap map = mapView(meta, view.sizes(), view.strides(),
                          view.storage_offset(), opName.c_str());
    result = writeView(map, valueOf(self, std::nullopt, opName),
                       valueOf(src, self.scalar_type(), opName), opName.c_str(),
                       loc);
  }
  torch::jit::drop(*stack, nargs);
  at::Tensor out = emptyIpu(self.sizes(), c10::contiguous_strides(self.sizes()),
                            self.scalar_type());
  bindValue(out, result);
  stack->push_back(out);
}

std::optional<at::Tensor> Tracer::captureView(const at::Tensor &self,
                                              c10::IntArrayRef sizes,
                                              c10::IntArrayRef strides,
                                              int64_t offset,
                                              const char *opName) {
  std::optional<ValueId> v = viewValue(self, sizes, strides, offset, opName);
  if (!v)
    return std::nullopt;
  // The view's value, laid out as eager's view is (gaps and broadcasts
  // included), so that what a later reshape does is what eager does.
  at::Tensor out = emptyIpu(sizes, strides, self.scalar_type());
  bindValue(out, *v);
  return out;
}

std::optional<at::Tensor> Tracer::captureReshape(const at::Tensor &self,
                                                 c10::IntArrayRef sizes,
                                                 c10::IntArrayRef strides,
                                                 const char *opName) {
  if (!isTraced(self))
    return std::nullopt;
  if (c10::multiply_integers(sizes) == 0)
    return captureView(self, sizes, strides, self.storage_offset(), opName);
  ++opCount;
  ValueId v = emit("poptorch.reshape", valueOf(self, std::nullopt, opName),
                   sizes.vec(), {}, sourceLocation());
  at::Tensor out = emptyIpu(sizes, strides, self.scalar_type());
  bindValue(out, v);
  return out;
}

bool Tracer::captureViewInplace(const at::Tensor &self, c10::IntArrayRef sizes,
                                c10::IntArrayRef strides, int64_t offset,
                                const char *opName) {
  std::optional<ValueId> v = viewValue(self, sizes, strides, offset, opName);
  if (!v)
    return false;
  // `self` now holds the view's value, laid out as eager's view is (see
  // captureView) where its memory holds that layout, else contiguously.
  int64_t needed = offset + 1;
  for (size_t i = 0; i < sizes.size(); ++i)
    needed += sizes[i] == 0 ? 0 : (sizes[i] - 1) * strides[i];
  c10::TensorImpl *impl = self.unsafeGetTensorImpl();
  if (c10::multiply_integers(sizes) > 0 &&
      needed * self.element_size() <=
          static_cast<int64_t>(impl->storage().nbytes())) {
    impl->set_sizes_and_strides(sizes, strides);
    impl->set_storage_offset(offset);
  } else {
    impl->set_sizes_contiguous(sizes);
  }
  bindValue(self, *v);
  return true;
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
