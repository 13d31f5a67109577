//===- MetaKernels.cpp - C++ shape functions for captured aten ops ------===//
//
// See MetaKernels.h. Each hand-written function below states the eager CPU
// kernel whose results it describes, and returns false (the dispatcher's
// Meta kernel runs instead, with torch's own error messages) for arguments
// it does not describe exactly.
//
//===----------------------------------------------------------------------===//
#include "MetaKernels.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MetaFunctions.h>
#include <ATen/ScalarOps.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace poptorch {
namespace {

using torch::jit::Stack;
using Kernel = bool (*)(Stack &);

/// Replaces the arguments on `s` by the results `r` (a tensor or a tuple of
/// them; in-place and out= kernels return references to their arguments).
template <typename R> bool results(Stack &s, const R &r) {
  s.clear();
  if constexpr (std::is_convertible_v<const R &, const at::Tensor &>) {
    s.emplace_back(at::Tensor(r));
  } else {
    std::apply([&](const auto &...t) { (s.emplace_back(at::Tensor(t)), ...); },
               r);
  }
  return true;
}

at::Tensor emptyMeta(at::IntArrayRef sizes, at::ScalarType dtype,
                     at::MemoryFormat format = at::MemoryFormat::Contiguous) {
  return at::detail::empty_meta(sizes, dtype, format);
}

/// A Python number as the binary Tensor kernels see it (what the eager
/// Scalar overloads pass them).
at::Tensor wrapped(const at::Scalar &s) {
  at::Tensor t = c10::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

bool isF32OrF64(const at::Tensor &t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble;
}

/// Undefined, or a 1-D tensor of `n` elements of `dtype`.
bool isParameter(const std::optional<at::Tensor> &t, int64_t n,
                 at::ScalarType dtype) {
  return !t || !t->defined() ||
         (t->dim() == 1 && t->size(0) == n && t->scalar_type() == dtype);
}

//===----------------------------------------------------------------------===//
// Elementwise ops whose eager kernels call structured ones
//===----------------------------------------------------------------------===//

// relu: eager's CPU relu is clamp_min(self, 0). Bool is rejected by torch.
bool relu(Stack &s) {
  at::Tensor self = s[0].toTensor();
  if (self.scalar_type() == at::kBool)
    return false;
  return results(s, at::meta::clamp_min(self, 0));
}

bool reluInplace(Stack &s) {
  at::Tensor self = s[0].toTensor();
  if (self.scalar_type() == at::kBool)
    return false;
  return results(s, at::meta::clamp_min_(self, 0));
}

// hardtanh: eager writes clamp(self, min, max) into an empty_like(self),
// which has clamp's layout for the dense inputs traced here; integer inputs
// take torch's own path (it converts the bounds).
bool hardtanh(Stack &s) {
  at::Tensor self = s[0].toTensor();
  if (!at::isFloatingType(self.scalar_type()) ||
      !self.is_non_overlapping_and_dense())
    return false;
  return results(s, at::meta::clamp(self, s[1].toScalar(), s[2].toScalar()));
}

bool hardtanhInplace(Stack &s) {
  at::Tensor self = s[0].toTensor();
  if (!at::isFloatingType(self.scalar_type()))
    return false;
  return results(s, at::meta::clamp_(self, s[1].toScalar(), s[2].toScalar()));
}

const std::unordered_map<std::string, Kernel> &kernels();

// The Scalar overloads of the binary ops: eager calls the Tensor overload
// with the scalar as a wrapped number; rsub(self, other, alpha) is
// sub(other, self, alpha). Both become the Tensor overload's structured
// kernel on rewritten arguments.
bool viaTensorOverload(Stack &s, const char *tensorOverload, bool swap) {
  if (!s[1].isTensor())
    s[1] = wrapped(s[1].toScalar());
  if (swap)
    std::swap(s[0], s[1]);
  return kernels().at(tensorOverload)(s);
}

// masked_fill: eager clones the broadcast of self and mask contiguously and
// fills it. Only a bool mask and a value of self's kind.
bool maskedFillArgsOk(const at::Tensor &self, const at::Tensor &mask,
                      bool valueIsFloating) {
  return mask.scalar_type() == at::kBool &&
         (at::isFloatingType(self.scalar_type()) ||
          (at::isIntegralType(self.scalar_type(), /*includeBool=*/false) &&
           !valueIsFloating));
}

bool maskedFill(Stack &s) {
  at::Tensor self = s[0].toTensor(), mask = s[1].toTensor();
  bool floatingValue;
  if (s[2].isTensor()) {
    const at::Tensor &v = s[2].toTensor();
    if (v.dim() != 0)
      return false;
    floatingValue = at::isFloatingType(v.scalar_type());
  } else {
    floatingValue = s[2].toScalar().isFloatingPoint();
  }
  if (!maskedFillArgsOk(self, mask, floatingValue))
    return false;
  std::vector<int64_t> shape = at::infer_size(self.sizes(), mask.sizes());
  return results(s, emptyMeta(shape, self.scalar_type()));
}

//===----------------------------------------------------------------------===//
// Ops with only Python Meta kernels
//===----------------------------------------------------------------------===//

// embedding: eager is weight.index_select(0, indices.reshape(-1)) viewed as
// indices' shape + [embedding dim], contiguous.
bool embedding(Stack &s) {
  at::Tensor weight = s[0].toTensor(), indices = s[1].toTensor();
  if (weight.dim() != 2 ||
      (indices.scalar_type() != at::kLong && indices.scalar_type() != at::kInt))
    return false;
  std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(weight.size(1));
  return results(s, emptyMeta(shape, weight.scalar_type()));
}

// native_layer_norm: a contiguous output like input, and the mean and rstd
// over the normalized dims kept as 1s. Single and double precision only
// (reduced-precision inputs keep their statistics in float).
bool nativeLayerNorm(Stack &s) {
  at::Tensor input = s[0].toTensor();
  std::vector<int64_t> normalized = s[1].toIntVector();
  auto weight = s[2].toOptional<at::Tensor>();
  auto bias = s[3].toOptional<at::Tensor>();
  int64_t n = normalized.size(), axis = input.dim() - n;
  if (!isF32OrF64(input) || n == 0 || axis < 0 ||
      !input.sizes().slice(axis).equals(normalized))
    return false;
  for (const auto &p : {weight, bias})
    if (p && p->defined() &&
        (p->sizes() != at::IntArrayRef(normalized) ||
         p->scalar_type() != input.scalar_type()))
      return false;
  std::vector<int64_t> stats(input.sizes().begin(),
                             input.sizes().begin() + axis);
  stats.resize(input.dim(), 1);
  at::ScalarType t = input.scalar_type();
  return results(s, std::make_tuple(emptyMeta(input.sizes(), t),
                                    emptyMeta(stats, t), emptyMeta(stats, t)));
}

// native_batch_norm and _native_batch_norm_legit_no_training: an output in
// input's memory format and per-channel statistics. Inputs dense in their
// suggested format, with parameters of their dtype.
bool batchNorm(Stack &s, size_t statsArgs) {
  at::Tensor input = s[0].toTensor();
  if (!isF32OrF64(input) || input.dim() < 2)
    return false;
  at::MemoryFormat format = input.suggest_memory_format();
  if (!input.is_contiguous(format))
    return false;
  int64_t c = input.size(1);
  for (size_t i = 1; i <= statsArgs; ++i)
    if (!isParameter(s[i].toOptional<at::Tensor>(), c, input.scalar_type()))
      return false;
  at::ScalarType t = input.scalar_type();
  return results(s, std::make_tuple(emptyMeta(input.sizes(), t, format),
                                    emptyMeta({c}, t), emptyMeta({c}, t)));
}
bool nativeBatchNorm(Stack &s) { return batchNorm(s, 4); }

// convolution, not transposed: torch's Meta kernel returns a contiguous
// tensor of input's dtype, whatever the input's memory format.
bool convolution(Stack &s) {
  at::Tensor input = s[0].toTensor(), weight = s[1].toTensor();
  auto bias = s[2].toOptional<at::Tensor>();
  std::vector<int64_t> stride = s[3].toIntVector(),
                       padding = s[4].toIntVector(),
                       dilation = s[5].toIntVector();
  bool transposed = s[6].toBool();
  int64_t groups = s[8].toInt();
  int64_t spatial = input.dim() - 2;
  if (transposed || spatial < 1 || weight.dim() != input.dim() ||
      !at::isFloatingType(input.scalar_type()) ||
      weight.scalar_type() != input.scalar_type() || groups < 1 ||
      weight.size(1) < 1 || input.size(1) != weight.size(1) * groups ||
      weight.size(0) % groups != 0 ||
      !isParameter(bias, weight.size(0), input.scalar_type()))
    return false;
  auto at = [&](const std::vector<int64_t> &v, int64_t i) {
    return v.size() == 1 ? v[0] : v[i];
  };
  for (const auto *v : {&stride, &padding, &dilation})
    if (v->size() != 1 && static_cast<int64_t>(v->size()) != spatial)
      return false;
  std::vector<int64_t> shape = {input.size(0), weight.size(0)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t st = at(stride, i), pad = at(padding, i), dil = at(dilation, i);
    if (st < 1 || pad < 0 || dil < 1)
      return false;
    int64_t extent =
        input.size(2 + i) + 2 * pad - dil * (weight.size(2 + i) - 1);
    if (extent < 1)
      return false;
    shape.push_back((extent - 1) / st + 1);
  }
  return results(s, emptyMeta(shape, input.scalar_type()));
}

// scaled_dot_product_attention: query's shape with value's last dim,
// contiguous. Query, key and value of one floating dtype with equal leading
// dims, and a mask that broadcasts to the scores.
bool sdpa(Stack &s) {
  at::Tensor q = s[0].toTensor(), k = s[1].toTensor(), v = s[2].toTensor();
  auto mask = s[3].toOptional<at::Tensor>();
  bool gqa = s[7].toBool();
  int64_t d = q.dim();
  if (gqa || d < 2 || k.dim() != d || v.dim() != d ||
      !at::isFloatingType(q.scalar_type()) ||
      k.scalar_type() != q.scalar_type() ||
      v.scalar_type() != q.scalar_type() ||
      q.sizes().slice(0, d - 2) != k.sizes().slice(0, d - 2) ||
      v.sizes().slice(0, d - 2) != k.sizes().slice(0, d - 2) ||
      q.size(-1) != k.size(-1) || k.size(-2) != v.size(-2))
    return false;
  std::vector<int64_t> scores(q.sizes().begin(), q.sizes().end());
  scores.back() = k.size(-2);
  if (mask && mask->defined()) {
    if (mask->dim() > d || (mask->scalar_type() != at::kBool &&
                            mask->scalar_type() != q.scalar_type()))
      return false;
    for (int64_t i = 1; i <= mask->dim(); ++i)
      if (mask->size(-i) != 1 && mask->size(-i) != scores[d - i])
        return false;
  }
  std::vector<int64_t> shape(q.sizes().begin(), q.sizes().end());
  shape.back() = v.size(-1);
  return results(s, emptyMeta(shape, q.scalar_type()));
}

const std::unordered_map<std::string, Kernel> &kernels() {
  static const auto *table = [] {
    auto *m = new std::unordered_map<std::string, Kernel>{
#include "generated/MetaKernels.inc"
    };
    const std::pair<const char *, Kernel> handWritten[] = {
        {"aten::relu", relu},
        {"aten::relu_", reluInplace},
        {"aten::hardtanh", hardtanh},
        {"aten::hardtanh_", hardtanhInplace},
        {"aten::add.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::add.Tensor", false);
         }},
        {"aten::add_.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::add_.Tensor", false);
         }},
        {"aten::sub.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::sub.Tensor", false);
         }},
        {"aten::sub_.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::sub_.Tensor", false);
         }},
        {"aten::mul.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::mul.Tensor", false);
         }},
        {"aten::mul_.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::mul_.Tensor", false);
         }},
        {"aten::div.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::div.Tensor", false);
         }},
        {"aten::div_.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::div_.Tensor", false);
         }},
        {"aten::rsub.Tensor",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::sub.Tensor", true);
         }},
        {"aten::rsub.Scalar",
         [](Stack &s) {
           return viaTensorOverload(s, "aten::sub.Tensor", true);
         }},
        {"aten::masked_fill.Scalar", maskedFill},
        {"aten::masked_fill.Tensor", maskedFill},
        {"aten::embedding", embedding},
        {"aten::native_layer_norm", nativeLayerNorm},
        {"aten::native_batch_norm", nativeBatchNorm},
        {"aten::_native_batch_norm_legit_no_training", nativeBatchNorm},
        {"aten::convolution", convolution},
        {"aten::scaled_dot_product_attention", sdpa},
    };
    for (const auto &[name, fn] : handWritten)
      if (!m->emplace(name, fn).second)
        throw std::logic_error(std::string("two C++ Meta kernels for ") + name);
    return m;
  }();
  return *table;
}

std::string describe(const c10::IValue &v) {
  std::ostringstream os;
  if (v.isTensor() && v.toTensor().defined()) {
    const at::Tensor &t = v.toTensor();
    os << t.scalar_type() << t.sizes() << " strides " << t.strides();
  } else {
    os << v.tagKind();
  }
  return os.str();
}

/// Equal dtype and sizes, and equal strides in every dim of more than one
/// element (a unit dim's stride has no meaning, and neither has any stride of
/// a tensor with no elements: every reshape of it is a view).
bool sameMeta(const c10::IValue &a, const c10::IValue &b) {
  if (a.isTensor() != b.isTensor())
    return false;
  if (!a.isTensor())
    return true;
  const at::Tensor &x = a.toTensor(), &y = b.toTensor();
  if (x.defined() != y.defined())
    return false;
  if (!x.defined())
    return true;
  if (x.scalar_type() != y.scalar_type() || x.sizes() != y.sizes())
    return false;
  if (x.numel() == 0)
    return true;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (x.size(i) > 1 && x.stride(i) != y.stride(i))
      return false;
  return true;
}

/// The results of `op` run by its CPU kernel on zeroed CPU tensors laid out
/// as the Meta arguments are (empty when it fails): what the shape functions
/// describe, where torch's Meta kernel gives other strides (copysign's Python
/// Meta kernel returns contiguous strides for a permuted input; eager keeps
/// the permutation).
Stack onCpu(const c10::OperatorHandle &op, Stack arguments) {
  for (c10::IValue &a : arguments)
    if (a.isTensor() && a.toTensor().defined() && a.toTensor().is_meta()) {
      const at::Tensor &m = a.toTensor();
      a = at::empty_strided(m.sizes(), m.strides(),
                            m.options().device(c10::kCPU))
              .zero_();
    }
  try {
    op.callBoxed(arguments);
  } catch (const std::exception &) {
    return {};
  }
  return arguments;
}

bool checkEnabled = [] {
  const char *env = std::getenv("POPTORCH_CHECK_META");
  return env && std::string(env) == "1";
}();

} // namespace

bool checkCppMeta() { return checkEnabled; }
void setCheckCppMeta(bool on) { checkEnabled = on; }

bool runCppMeta(const c10::OperatorHandle &op, Stack &stack,
                const std::function<Stack()> &freshArguments) {
  const c10::OperatorName &name = op.operator_name();
  auto it = kernels().find(name.overload_name.empty()
                               ? name.name
                               : name.name + "." + name.overload_name);
  if (it == kernels().end())
    return false;
  Stack reference;
  if (checkEnabled)
    reference = freshArguments();
  if (!it->second(stack))
    return false;
  if (!checkEnabled)
    return true;
  op.callBoxed(reference);
  auto agrees = [&](const Stack &ref) {
    bool same = ref.size() == stack.size();
    for (size_t i = 0; same && i < stack.size(); ++i)
      same = sameMeta(stack[i], ref[i]);
    return same;
  };
  if (!agrees(reference) && !agrees(onCpu(op, freshArguments()))) {
    std::ostringstream os;
    os << "POPTORCH_CHECK_META: poptorch's C++ shape function for " << it->first
       << " disagrees with torch's Meta kernel:";
    for (size_t i = 0; i < std::max(stack.size(), reference.size()); ++i)
      os << "\n  result " << i << ": poptorch "
         << (i < stack.size() ? describe(stack[i]) : "none") << ", torch "
         << (i < reference.size() ? describe(reference[i]) : "none");
    throw std::logic_error(os.str());
  }
  return true;
}

} // namespace poptorch
