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

/// Qualified names ("aten::add.Tensor") of every op in the capture table.
const std::vector<const char *> &capturedOpNames();

} // namespace poptorch
