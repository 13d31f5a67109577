//===- TracerCapture.cpp - capture of one dispatched op -----------------===//
//
// Driven by the generated capture table (csrc/generated/CaptureTable.inc):
// for each captured aten overload it names the dialect op and how each
// operand and attribute is taken from the aten arguments. Shapes and dtypes
// of results come from C++ shape functions or re-dispatching the op on Meta
// tensors. Ops whose tensor inputs are all known at trace time are evaluated
// on the host and become constants; ops without a lowering run as host
// kernels; unsupported ops are collected and reported together. The op log
// (TRACE lines, poptorch.explain) records every op.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "HostKernels.h"
#include "MetaCache.h"
#include "MetaKernels.h"
#include "Tracer.h"
#include "TracerSupport.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/TypeProperties.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>
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
            std::string::npos ||
        what.find("with arguments from the 'Meta' backend") !=
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

/// Ops that are decomposed although the op table lowers them:
///  * calls whose effects the lowering does not reproduce. Batch
///    normalisation in training mode writes the running statistics in place
///    (which its schema does not declare) and returns the saved statistics the
///    backward reads; its decomposition does both with captured ops;
///  * transposed convolutions, which the lowering computes as a regular
///    convolution over a zero-interleaved input: the decomposition
///    (python/poptorch/_decompositions.py) is one stride-1 convolution per
///    phase of the stride, with no product of an inserted zero. It declines
///    (returns None) where the lowering is kept, as for 3-D.
static bool decomposedDespiteLowering(const c10::FunctionSchema &schema,
                                      const torch::jit::Stack &stack) {
  int64_t flag;
  if (schema.name() == "aten::native_batch_norm")
    flag = 5; // training
  else if (schema.name() == "aten::convolution")
    flag = 6; // transposed
  else
    return false;
  const c10::IValue &v = stack[stack.size() - schema.arguments().size() + flag];
  return v.isBool() && v.toBool();
}

void Tracer::capture(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  const c10::FunctionSchema &schema = op.schema();
  if (decomposer &&
      (!findSpec(schema.operator_name()) ||
       decomposedDespiteLowering(schema, *stack)) &&
      std::find_if(decomposing.begin(), decomposing.end(),
                   [&](auto *o) { return *o == op; }) == decomposing.end()) {
    bool anyTraced = false;
    for (auto it = stack->end() - schema.arguments().size(); it != stack->end();
         ++it)
      forEachTensor(*it,
                    [&](const at::Tensor &t) { anyTraced |= isTraced(t); });
    if (anyTraced) {
      decomposing.push_back(&op);
      bool done = false;
      try {
        done = decomposer(op, stack);
      } catch (...) {
        decomposing.pop_back();
        throw;
      }
      decomposing.pop_back();
      if (done)
        return;
    }
  }
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
        if (e->outOfScope)
          fail(opName, "uses a tensor " + e->poisonReason);
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
    if (m.isTensor() && !m.toTensor().defined())
      continue; // not computed (an output mask's false)
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
    // The ids of the results in order: one per defined tensor (those of a
    // tensor list result are consecutive; an undefined result, the false of
    // an output mask, has none).
    size_t next = 0;
    for (size_t r = 0; r < metaOut.size(); ++r) {
      const c10::IValue &m = metaOut[r];
      if (auto i = writtenArgOfReturn(r)) {
        stack->push_back(args[*i]);
        continue;
      }
      if (m.isTensorList()) {
        c10::List<at::Tensor> outs;
        std::vector<at::Tensor> metas = m.toTensorList().vec();
        for (size_t k = 0; k < metas.size(); ++k) {
          at::Tensor out = emptyIpu(metas[k].sizes(), metas[k].strides(),
                                    metas[k].scalar_type());
          bindResult(out, writtenArgs.empty() ? next++ : ids.size());
          outs.push_back(out);
        }
        stack->push_back(outs);
        continue;
      }
      if (!m.isTensor() || !m.toTensor().defined()) {
        stack->push_back(m);
        continue;
      }
      const at::Tensor &mt = m.toTensor();
      at::IntArrayRef strides = mt.strides();
      if (r < viewOut.size() && viewOut[r].isTensor() &&
          viewOut[r].toTensor().sizes() == mt.sizes())
        strides = viewOut[r].toTensor().strides();
      at::Tensor out = emptyIpu(mt.sizes(), strides, mt.scalar_type());
      bindResult(out, writtenArgs.empty() ? next++ : ids.size());
      stack->push_back(out);
    }
  };

  // (Not for shapes that depend on values: the host kernel checks them.)
  if (resultsEmpty && !valueShapes) {
    std::vector<ValueId> ids;
    for (const c10::IValue &m : metaOut)
      if (m.isTensor() && m.toTensor().defined())
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
    return emitHostKernelOp(op, args, metaOut, loc, why);
  };
  auto captureHostKernel = [&](std::string &why) -> bool {
    std::optional<std::vector<ValueId>> results = emitHostKernel(why);
    if (!results)
      return false;
    {
      const std::vector<ValueId> &ids = *results;
      logScope.setStatus("host_kernel");
      if (valueShapes) {
        size_t r = 0; // the host kernel's result (tensor lists flattened)
        for (const c10::IValue &m : metaOut)
          forEachTensor(m, [&](const at::Tensor &t) {
            // Checked by the host kernel itself (its result must fit the
            // buffer): `expected` has the shape and dtype.
            Guard g;
            g.what =
                "the shape of result " + std::to_string(r) + " of " + opName;
            g.location = describe(loc);
            g.inProgram = true;
            g.value = ids[r]; // a result: the check is never dead code
            g.expected = at::empty(t.sizes(), t.options().device(c10::kCPU));
            guardList.push_back(std::move(g));
            ++r;
          });
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
      checkNotInRegion(opName,
                       "draws random numbers, which a loop body or a branch "
                       "cannot do here (each iteration would draw the same "
                       "numbers). Draw them before the loop and pass them in");
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

std::optional<std::vector<ValueId>>
Tracer::emitHostKernelOp(const c10::OperatorHandle &op,
                         const std::vector<c10::IValue> &args,
                         const std::vector<c10::IValue> &results,
                         const SourceLoc &loc, std::string &why) {
  std::optional<HostKernelCall> call =
      describeHostKernel(op, args, results, why);
  if (!call)
    return std::nullopt;
  const std::string opName = opDisplayName(op);
  std::vector<ValueId> inputs;
  for (const at::Tensor &t : call->inputs)
    inputs.push_back(valueOf(t, std::nullopt, opName));
  std::vector<TensorType> types;
  for (const c10::IValue &m : results)
    forEachTensor(m, [&](const at::Tensor &t) {
      if (t.defined())
        types.push_back(tensorTypeOf(t, opName));
    });
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

} // namespace poptorch
