//===- TracerSupport.h - helpers shared by the tracer's files ------------===//
//
// Internal to csrc/Tracer*.cpp: predicates and walks over the IValues of a
// dispatched op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <optional>

namespace poptorch {

inline bool isIpu(const at::Tensor &t) {
  return t.defined() && t.device().type() == c10::DeviceType::IPU;
}

/// The value of a wrapped number (a Python scalar that takes part in an op as
/// a 0-d CPU tensor), read without dispatching a host op.
inline c10::Scalar wrappedNumberValue(const at::Tensor &t) {
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

inline int64_t normalizeDim(int64_t d, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  return d < 0 ? d + r : d;
}

} // namespace poptorch
