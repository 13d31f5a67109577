//===- Device.h - the "ipu" device ----------------------------------------===//
#pragma once

#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

namespace poptorch {

c10::Allocator *ipuAllocator();

/// A CPU tensor sharing the memory of an ipu tensor (ipu memory is host
/// memory). Returns other tensors unchanged.
at::Tensor hostAlias(const at::Tensor &t);

/// A new uninitialised ipu tensor.
at::Tensor emptyIpu(c10::IntArrayRef sizes, c10::IntArrayRef strides,
                    at::ScalarType dtype);

/// An ipu tensor sharing the memory of CPU tensor `cpu` (kept alive by it),
/// for parameters and buffers while tracing: their values are never read or
/// written then (the tracer binds them to arguments, captures every op on
/// them and refuses host reads), so copying them (BERT: 440 MB, 0.18 s) is
/// not needed.
at::Tensor ipuAliasOf(const at::Tensor &cpu);

/// Qualified names ("aten::add.Tensor") of every op in the capture table.
const std::vector<const char *> &capturedOpNames();

} // namespace poptorch
