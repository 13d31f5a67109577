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

#include <ATen/core/Tensor.h>
#include <ATen/ops/_to_copy_native.h>
#include <Python.h>
#include <frameobject.h>

#include <sstream>
#include <unordered_map>

namespace poptorch {

using namespace poptorch_bridge;

namespace {

enum class ArgKind {
  Tensor, OptTensor, TensorList, Scalar, F64, I64, Bool, Str, Ints, Dim, Dims, Index,
  ReversedDims
};
enum class Promote { None, Result };
/// Functional overloads return new tensors; in-place ones write `self`;
/// out= ones write their `out` arguments.
enum class Mode { Functional, Inplace, Out };

struct ArgSpec {
  ArgKind kind;
  const char *aten;   // aten argument name ("" when not taken from one)
  const char *name;   // dialect operand / attribute name
  const char *extra;  // kind-specific detail
};

struct OpSpec {
  const char *name;
  const char *overload;
  Mode mode;
  const char *dialectOp;  // "" for identities
  Promote promote;
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

Tracer *gCurrent = nullptr;

ElemType elemTypeOf(at::ScalarType t, const std::string &opName) {
  switch (t) {
  case at::kFloat: return ElemType::F32;
  case at::kDouble: return ElemType::F64;
  case at::kHalf: return ElemType::F16;
  case at::kBFloat16: return ElemType::BF16;
  case at::kBool: return ElemType::Bool;
  case at::kChar: return ElemType::I8;
  case at::kByte: return ElemType::U8;
  case at::kShort: return ElemType::I16;
  case at::kInt: return ElemType::I32;
  case at::kLong: return ElemType::I64;
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
  if (v.isList() && v.toList().elementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<std::optional<at::Tensor>> out;
    for (const c10::IValue &e : v.toListRef())
      out.push_back(e.isTensor() ? std::optional<at::Tensor>(fn(e.toTensor())) : std::nullopt);
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

Tracer::Tracer(std::vector<std::string> sourceExcludes) : excludes(std::move(sourceExcludes)) {}
Tracer::~Tracer() {
  if (gCurrent == this)
    gCurrent = nullptr;
}

Tracer *Tracer::current() { return gCurrent; }
void Tracer::activate() {
  TORCH_CHECK(!gCurrent || gCurrent == this,
              "poptorch: another model is already being traced; tracing cannot nest");
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

void Tracer::bindValue(const at::Tensor &t, ValueId v) {
  values.insert_or_assign(t.unsafeGetTensorImpl(), TracedValue(t)).first->second.value = v;
}

void Tracer::bindPoison(const at::Tensor &t, const std::string &reason) {
  values.insert_or_assign(t.unsafeGetTensorImpl(), TracedValue(t)).first->second.poisonReason =
      reason;
}

void Tracer::addArgument(const at::Tensor &t, const std::string &name, const std::string &role) {
  TORCH_CHECK(isIpu(t), "poptorch: arguments must be ipu tensors");
  ValueId v = builder.addArgument(tensorTypeOf(t, name), name, role);
  bindValue(t, v);
  argIndexOfValue[v] = numArgs++;
}

at::Tensor Tracer::constantOf(const at::Tensor &t) {
  return isIpu(t) ? hostAlias(t) : t;
}

ValueId Tracer::valueOf(const at::Tensor &t, std::optional<at::ScalarType> dtype,
                        const std::string &opName) {
  at::ScalarType want = dtype.value_or(t.scalar_type());
  if (TracedValue *e = lookup(t)) {
    if (!e->poisonReason.empty())
      fail(opName, e->poisonReason);
    if (want == t.scalar_type())
      return e->value;
    TensorType to = builder.typeOf(e->value);
    to.dtype = elemTypeOf(want, opName);
    return builder.addOp("poptorch.cast", {{e->value}}, {}, {to}, sourceLocation())[0];
  }
  at::Tensor host = constantOf(t).to(want).contiguous();
  return builder.addConstant(tensorTypeOf(host, opName), host.data_ptr());
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
  throw std::runtime_error("poptorch: " + opName + " at " + describe(sourceLocation()) +
                           ": " + message);
}

void Tracer::checkReadable(const at::Tensor &t, const std::string &what) {
  TracedValue *e = lookup(t);
  if (!e)
    return; // a constant: its data is real
  throw std::runtime_error(
      "poptorch: " + what + " at " + describe(sourceLocation()) +
      " needs the value of a tensor computed by the model, which is not known while "
      "tracing. Keep data-dependent Python logic and host reads outside the model, "
      "or express it with tensor ops (e.g. torch.where).");
}

//===----------------------------------------------------------------------===//
// Capture
//===----------------------------------------------------------------------===//

std::vector<c10::IValue> Tracer::runOnMeta(const c10::OperatorHandle &op,
                                           const std::vector<c10::IValue> &args) {
  torch::jit::Stack stack;
  for (const c10::IValue &a : args)
    stack.push_back(mapTensors(a, [](const at::Tensor &t) -> at::Tensor {
      if (!t.defined() || (t.device().is_cpu() && t.dim() == 0))
        return t; // keep Python scalars as CPU wrapped numbers (type promotion)
      return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
    }));
  try {
    op.callBoxed(stack);
  } catch (const std::exception &e) {
    fail(opDisplayName(op), std::string("invalid arguments: ") + e.what());
  }
  return stack;
}

void Tracer::foldOnHost(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  size_t nargs = op.schema().arguments().size();
  std::vector<at::Tensor> ipuInputs;
  for (auto it = stack->end() - nargs; it != stack->end(); ++it) {
    forEachTensor(*it, [&](const at::Tensor &t) {
      if (isIpu(t))
        ipuInputs.push_back(t);
    });
    *it = mapTensors(*it, [](const at::Tensor &t) { return hostAlias(t); });
  }
  op.callBoxed(stack);
  size_t nret = op.schema().returns().size();
  for (auto it = stack->end() - nret; it != stack->end(); ++it) {
    *it = mapTensors(*it, [&](const at::Tensor &r) -> at::Tensor {
      if (!r.defined())
        return r;
      for (const at::Tensor &in : ipuInputs)
        if (in.data_ptr() == r.data_ptr() && in.sizes() == r.sizes() &&
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
  if (std::getenv("POPTORCH_TRACE_OPS"))
    fprintf(stderr, "[poptorch:TRACE] %s %s\n", opName.c_str(),
            anyTraced ? "captured" : (random ? "random" : "evaluated on the host"));
  if (!anyTraced && !random)
    return foldOnHost(op, stack);

  if (schema.name() == "aten::_to_copy" && args[3].isDevice() &&
      args[3].toDevice().type() != c10::DeviceType::IPU)
    checkReadable(args[0].toTensor(), "moving a tensor to " + args[3].toDevice().str() +
                                          " inside the model");
  ++opCount;
  const OpSpec *spec = findSpec(schema.operator_name());
  SourceLoc loc = sourceLocation();
  std::vector<c10::IValue> metaOut = runOnMeta(op, args);
  torch::jit::drop(*stack, nargs);

  auto pushOutputs = [&](const std::vector<ValueId> &ids, const std::string &reason) {
    // In-place and out= forms: the written arguments take the new values.
    std::vector<at::Tensor> written;
    if (spec && spec->mode == Mode::Inplace)
      written.push_back(args[0].toTensor());
    if (spec && spec->mode == Mode::Out)
      for (size_t i = 0; i < nargs; ++i)
        if (schema.arguments()[i].is_out())
          written.push_back(args[i].toTensor());
    if (!written.empty() && reason.empty()) {
      for (size_t i = 0; i < written.size(); ++i) {
        at::Tensor w = written[i];
        const at::Tensor &mt = metaOut.at(i).toTensor();
        if (w.sizes() != mt.sizes())
          w.resize_(mt.sizes());
        if (i < ids.size())
          bindValue(w, ids[i]);
        else
          bindPoison(w, "output " + std::to_string(i) + " of " + opName +
                            " is not computed by poptorch");
        stack->push_back(w);
      }
      return;
    }
    for (size_t i = 0; i < metaOut.size(); ++i) {
      const c10::IValue &m = metaOut[i];
      if (!m.isTensor()) {
        stack->push_back(m);
        continue;
      }
      const at::Tensor &mt = m.toTensor();
      at::Tensor out = emptyIpu(mt.sizes(), mt.strides(), mt.scalar_type());
      if (i < ids.size())
        bindValue(out, ids[i]);
      else
        bindPoison(out, reason.empty() ? "output " + std::to_string(i) + " of " + opName +
                                             " is not computed by poptorch"
                                       : reason);
      stack->push_back(out);
    }
  };

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

  auto argIndex = [&](const char *name) -> int {
    auto idx = schema.argumentIndexWithName(name);
    if (!idx)
      throw std::runtime_error("poptorch internal error: no argument " + std::string(name) +
                               " in " + opName);
    return static_cast<int>(*idx);
  };
  auto argOf = [&](const char *name) -> const c10::IValue & { return args[argIndex(name)]; };

  std::optional<at::ScalarType> operandDtype;
  const at::Tensor &firstOut = metaOut.at(0).toTensor();
  if (spec->promote == Promote::Result)
    operandDtype = firstOut.scalar_type();

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
  auto addAttr = [&](const char *name, AttrValue v) { attrs.emplace_back(name, std::move(v)); };
  for (const ArgSpec &a : spec->args) {
    const c10::IValue *iv = *a.aten ? &argOf(a.aten) : nullptr;
    AttrValue attr;
    switch (a.kind) {
    case ArgKind::Tensor:
      operands.push_back({valueOf(iv->toTensor(), operandDtype, opName)});
      break;
    case ArgKind::OptTensor:
      if (iv->isNone())
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
    case ArgKind::Scalar: {
      at::Tensor s = at::scalar_tensor(iv->toScalar(),
                                       at::TensorOptions().dtype(firstOut.scalar_type()));
      operands.push_back({builder.addConstant(tensorTypeOf(s, opName), s.data_ptr())});
      break;
    }
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
      attr.kind = AttrValue::I64;
      attr.i = normalizeDim(iv->toInt(), rank);
      addAttr(a.name, attr);
      break;
    case ArgKind::Dims:
      attr.kind = AttrValue::Ints;
      if (iv && !iv->isNone())
        for (int64_t d : iv->toIntVector())
          attr.ints.push_back(normalizeDim(d, rank));
      if (attr.ints.empty() && (!iv || iv->isNone() || rank > 0) &&
          std::string(a.name) == "dims" && spec->dialectOp != std::string("poptorch.permute"))
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
    case ArgKind::ReversedDims:
      attr.kind = AttrValue::Ints;
      for (int64_t d = rank; d-- > 0;)
        attr.ints.push_back(d);
      addAttr(a.name, attr);
      break;
    }
  }

  std::vector<TensorType> resultTypes;
  for (int i = 0; i < spec->results; ++i)
    resultTypes.push_back(tensorTypeOf(metaOut.at(i).toTensor(), opName));
  std::vector<ValueId> ids;
  try {
    ids = builder.addOp(spec->dialectOp, operands, attrs, resultTypes, loc);
  } catch (const CompileError &e) {
    fail(opName, std::string("cannot be captured as ") + spec->dialectOp + ": " + e.what());
  }
  pushOutputs(ids, "");
}

at::Tensor &Tracer::captureCopy(at::Tensor &self, const at::Tensor &src) {
  if (!isIpu(self)) {
    checkReadable(src, "copying a tensor to the host (Tensor.cpu(), .numpy(), .tolist() or "
                       "printing)");
    self.copy_(hostAlias(src));
    return self;
  }
  TracedValue *dst = lookup(self);
  if (!isTraced(src)) {
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
      // Writing into a model argument (a buffer update after functionalization):
      // the argument's identity is kept, the new value becomes a result.
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

std::optional<at::Tensor> Tracer::captureView(const at::Tensor &self, c10::IntArrayRef sizes,
                                              c10::IntArrayRef strides, int64_t offset,
                                              const char *opName) {
  if (!isTraced(self))
    return std::nullopt;
  ++opCount;
  ValueId in = valueOf(self, std::nullopt, opName);
  TensorType to = builder.typeOf(in);
  to.shape = sizes.vec();
  at::Tensor out = emptyIpu(sizes, c10::contiguous_strides(sizes), self.scalar_type());
  // Traced values are logically contiguous: the view is a row-major reshape
  // when its strides are contiguous, or a permutation of the input's dims.
  bool contiguous = offset == self.storage_offset() &&
                    c10::IntArrayRef(c10::contiguous_strides(sizes)) == strides;
  if (contiguous && c10::multiply_integers(sizes) == self.numel()) {
    bindValue(out, builder.addOp("poptorch.reshape", {{in}}, {}, {to}, sourceLocation())[0]);
    return out;
  }
  if (offset == self.storage_offset() && sizes.size() == static_cast<size_t>(self.dim()) &&
      self.is_contiguous()) {
    std::vector<int64_t> perm;
    for (size_t i = 0; i < sizes.size(); ++i)
      for (int64_t d = 0; d < self.dim(); ++d)
        if (self.stride(d) == strides[i] && self.size(d) == sizes[i] &&
            std::find(perm.begin(), perm.end(), d) == perm.end()) {
          perm.push_back(d);
          break;
        }
    if (perm.size() == sizes.size()) {
      AttrValue dims;
      dims.kind = AttrValue::Ints;
      dims.ints = perm;
      bindValue(out, builder.addOp("poptorch.permute", {{in}}, {{"dims", dims}}, {to},
                                   sourceLocation())[0]);
      return out;
    }
  }
  fail(opName, "a strided view of a traced tensor that is neither a reshape nor a "
               "permutation; use contiguous ops (reshape, permute, slicing) instead");
}

void Tracer::finish(const std::vector<at::Tensor> &outputs) {
  if (!unsupported.empty()) {
    std::ostringstream os;
    os << "poptorch: the model uses " << unsupported.size()
       << " unsupported operation" << (unsupported.size() > 1 ? "s" : "") << ":\n";
    for (const std::string &key : unsupportedOrder) {
      const UnsupportedOp &u = unsupported[key];
      os << "  " << u.schema << " at " << u.location;
      if (u.count > 1)
        os << " (" << u.count << " times)";
      os << "\n";
    }
    os << "See docs/ops.md for the supported ops. Replace these ops in the model, compute "
          "them outside it, or add them to the op table (docs/developer.md).";
    throw std::runtime_error(os.str());
  }
  std::vector<ValueId> outs;
  for (const at::Tensor &t : outputs)
    outs.push_back(valueOf(t, std::nullopt, "<model output>"));
  std::vector<std::pair<int64_t, ValueId>> updates(bufferUpdates.begin(), bufferUpdates.end());
  for (auto &[arg, v] : updates)
    updateArgs.push_back(arg);
  try {
    builder.finish(outs, updates);
  } catch (const CompileError &e) {
    throw std::runtime_error(std::string("poptorch: ") + e.what());
  }
}

} // namespace poptorch
