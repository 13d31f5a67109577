//===- HostKernels.h - aten ops run by PyTorch's CPU kernels at run time -===//
//
// An aten op that has no lowering is captured as poptorch.host_kernel: the
// compiled program calls back into PyTorch, which runs the op's CPU kernel
// on the program's buffers. The op's `call` attribute describes the call as
// text (no NUL bytes):
//
//   <operator name>\n<overload>\n<input dtypes>\n<result dtypes>\n<arguments>
//
// dtypes are c10::ScalarType numbers separated by ','; the arguments are one
// encoded value per schema argument: `N` none, `b0`/`b1`, `i<int>;`,
// `d<hex float>;`, `s<length>:<bytes>`, `T<k>;` the k-th input, `U` an
// undefined tensor, `D` a device (the CPU when it runs), `L<n>;` a list of
// n values (its element type comes from the schema). An argument the op
// writes (out=, in place) is a result buffer: `O<j>;` the j-th, or
// `I<j>:<k>;` the j-th given the value of input k first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <optional>
#include <string>
#include <vector>

namespace poptorch {

struct HostKernelCall {
  std::string call;               // the `call` attribute
  std::vector<at::Tensor> inputs; // the tensor arguments, in T<k> order
};

/// The description of `op(args...)` as a host kernel producing `results`
/// (the Meta results), or why it cannot be one.
std::optional<HostKernelCall>
describeHostKernel(const c10::OperatorHandle &op,
                   const std::vector<c10::IValue> &args,
                   const std::vector<c10::IValue> &results, std::string &why);

/// While alive, ops on CPU tensors run their CPU kernels directly, whatever
/// the thread is doing (inside functionalization while tracing, say).
class PlainCpuDispatch {
public:
  PlainCpuDispatch()
      : exclude(c10::DispatchKeySet(
            {c10::DispatchKey::Functionalize,
             c10::DispatchKey::FuncTorchDynamicLayerFrontMode,
             c10::DispatchKey::FuncTorchDynamicLayerBackMode,
             c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot,
             c10::DispatchKey::PreDispatch})) {}

private:
  c10::impl::ExcludeDispatchKeyGuard exclude;
  c10::InferenceMode inference;
};

/// Registers the runtime with the bridge (once, at module import).
void registerHostKernelRuntime();

} // namespace poptorch
