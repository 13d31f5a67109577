//===- MetaKernels.h - C++ shape functions for captured aten ops --------===//
//
// The tracer learns each captured op's result dtypes, sizes and strides from
// its Meta kernel. torch registers Python Meta kernels
// (torch._meta_registrations) over the C++ ones, and the first of them to
// run in a process imports sympy and torch._dynamo: 1.1-1.8 s of the first
// compile, more than tracing and compiling a small model takes. The ops
// poptorch captures get their results here, in C++, without Python:
//  * torch's own structured C++ Meta kernels (at::meta::), called directly
//    (generated/MetaKernels.inc, from the op table: every captured overload
//    with a structured kernel whose parameters match its schema);
//  * shape functions for common ops that only have Python Meta kernels
//    (convolution, batch and layer norm, embedding, relu, ...), each for the
//    argument combinations it can describe exactly; the rest fall back.
// An op without either runs its Meta kernel through the dispatcher, as
// before. POPTORCH_CHECK_META=1 (or _C.check_meta_kernels(True)) also runs
// the dispatcher's kernel and fails on any difference in dtype, sizes or
// strides: the test suite's check of these functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <functional>

namespace poptorch {

/// Replaces `stack` (the arguments of `op`, as Meta tensors) by its results
/// computed in C++ and returns true, or returns false and leaves `stack`
/// alone when there is no C++ shape function for these arguments. When
/// checking, `freshArguments` gives the arguments again for the dispatcher.
bool runCppMeta(const c10::OperatorHandle &op, torch::jit::Stack &stack,
                const std::function<torch::jit::Stack()> &freshArguments);

/// Whether every C++ result is checked against the dispatcher's Meta kernel
/// (initially POPTORCH_CHECK_META=1).
bool checkCppMeta();
void setCheckCppMeta(bool on);

} // namespace poptorch
