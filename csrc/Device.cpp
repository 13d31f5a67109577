//===- Device.cpp - the "ipu" device: allocator, guard, eager kernels ---===//
//
// IPU tensors live in host memory (our "device" runs programs on the host
// CPU). Outside tracing every op on them runs through PyTorch's CPU
// fallback; while a Tracer is active every op is captured instead (see
// Tracer.cpp). Copies and views are implemented here because both modes
// need them.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "Tracer.h"

#include <ATen/EmptyTensor.h>
#include <ATen/InferSize.h>
#include <ATen/TensorUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_conj_native.h>
#include <ATen/ops/_neg_view_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/take_along_dim_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>

namespace poptorch {

namespace {

constexpr size_t kAlignment = 64;

void ipuFree(void *p) { std::free(p); }

struct IpuAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void *p = nullptr;
    if (n > 0) {
      size_t rounded = (n + kAlignment - 1) / kAlignment * kAlignment;
      p = std::aligned_alloc(kAlignment, rounded);
      TORCH_CHECK(p, "poptorch: out of host memory allocating ", n,
                  " bytes for an ipu tensor");
    }
    return {p, p, &ipuFree, c10::Device(c10::DeviceType::IPU, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &ipuFree; }
  void copy_data(void *dest, const void *src,
                 std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

IpuAllocator gAllocator;

struct IpuGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::IPU; }
  c10::Device exchangeDevice(c10::Device) const override {
    return {c10::DeviceType::IPU, 0};
  }
  c10::Device getDevice() const override { return {c10::DeviceType::IPU, 0}; }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() <= 0,
                "poptorch: there is one ipu device (ipu:0); got ", d);
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
};

} // namespace

c10::Allocator *ipuAllocator() { return &gAllocator; }

at::Tensor hostAlias(const at::Tensor &t) {
  if (!t.defined() || t.device().type() != c10::DeviceType::IPU)
    return t;
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(),
                       t.options().device(c10::kCPU));
}

at::Tensor emptyIpu(c10::IntArrayRef sizes, c10::IntArrayRef strides,
                    at::ScalarType dtype) {
  return at::detail::empty_strided_generic(
      sizes, strides, &gAllocator, c10::DispatchKeySet(c10::DispatchKey::IPU),
      dtype);
}

at::Tensor ipuAliasOf(const at::Tensor &cpu) {
  TORCH_CHECK(cpu.device().is_cpu() && cpu.layout() == at::kStrided,
              "poptorch: only a strided CPU tensor can be aliased on the ipu");
  const c10::Storage &from = cpu.storage();
  auto *owner = new c10::Storage(from);
  c10::DataPtr data(
      from.mutable_data(), owner,
      [](void *ctx) { delete static_cast<c10::Storage *>(ctx); },
      c10::Device(c10::DeviceType::IPU, 0));
  c10::Storage storage(c10::Storage::use_byte_size_t(), from.nbytes(),
                       std::move(data), &gAllocator, /*resizable=*/true);
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::IPU),
      cpu.dtype());
  t.unsafeGetTensorImpl()->set_sizes_and_strides(cpu.sizes(), cpu.strides(),
                                                 cpu.storage_offset());
  return t;
}

namespace {

void checkDevice(std::optional<at::Device> device) {
  TORCH_CHECK(!device || device->index() <= 0,
              "poptorch: there is one ipu device (ipu:0); got ", *device);
}

at::Tensor ipuEmpty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                    std::optional<at::Layout>, std::optional<at::Device> device,
                    std::optional<bool>,
                    std::optional<at::MemoryFormat> memoryFormat) {
  checkDevice(device);
  return at::detail::empty_generic(
      size, &gAllocator, c10::DispatchKeySet(c10::DispatchKey::IPU),
      dtype.value_or(at::get_default_dtype_as_scalartype()), memoryFormat);
}

at::Tensor ipuEmptyStrided(c10::IntArrayRef size, c10::IntArrayRef stride,
                           std::optional<at::ScalarType> dtype,
                           std::optional<at::Layout>,
                           std::optional<at::Device> device,
                           std::optional<bool>) {
  checkDevice(device);
  return emptyIpu(size, stride,
                  dtype.value_or(at::get_default_dtype_as_scalartype()));
}

// Every copy that involves an ipu tensor lands here (ipu has the highest
// backend priority of the two operands).
at::Tensor &ipuCopy(at::Tensor &self, const at::Tensor &src,
                    bool /*non_blocking*/) {
  if (Tracer *tracer = Tracer::current())
    return tracer->captureCopy(self, src);
  hostAlias(self).copy_(hostAlias(src));
  return self;
}

at::Tensor ipuCopyFrom(const at::Tensor &self, const at::Tensor &dst,
                       bool nonBlocking) {
  at::Tensor d = dst;
  ipuCopy(d, self, nonBlocking);
  return dst;
}

at::Tensor ipuCopyFromAndResize(const at::Tensor &self, const at::Tensor &dst) {
  at::Tensor d = dst;
  if (d.sizes() != self.sizes())
    d.resize_(self.sizes());
  ipuCopy(d, self, false);
  return dst;
}

const at::Tensor &ipuResize(const at::Tensor &self, c10::IntArrayRef size,
                            std::optional<at::MemoryFormat>) {
  int64_t numel = c10::multiply_integers(size);
  size_t needed = (numel + self.storage_offset()) * self.element_size();
  c10::StorageImpl *storage =
      self.unsafeGetTensorImpl()->storage().unsafeGetStorageImpl();
  if (needed > storage->nbytes()) {
    c10::DataPtr fresh = gAllocator.allocate(needed);
    if (storage->nbytes() > 0)
      std::memcpy(fresh.get(), storage->data(), storage->nbytes());
    storage->set_data_ptr_noswap(std::move(fresh));
    storage->set_nbytes(needed);
  }
  self.unsafeGetTensorImpl()->set_sizes_contiguous(size);
  return self;
}

at::Scalar ipuLocalScalarDense(const at::Tensor &self) {
  if (Tracer *tracer = Tracer::current())
    return tracer
        ->readValue(self, "aten::_local_scalar_dense (Tensor.item(), bool(), "
                          "int(), float() or Python control flow on a tensor)")
        .item();
  return hostAlias(self).item();
}

void ipuFallback(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  if (Tracer *tracer = Tracer::current())
    return tracer->capture(op, stack);
  if (op.schema().name() == "aten::_to_copy") {
    // The CPU fallback itself moves tensors with _to_copy: use the generic
    // implementation (empty + copy_) instead of recursing.
    auto args = torch::jit::pop(*stack, 7);
    at::Tensor r = at::native::_to_copy(
        args[0].toTensor(), args[1].toOptional<at::ScalarType>(),
        args[2].toOptional<at::Layout>(), args[3].toOptional<at::Device>(),
        args[4].toOptional<bool>(), args[5].toBool(),
        args[6].toOptional<at::MemoryFormat>());
    stack->push_back(std::move(r));
    return;
  }
  at::native::cpu_fallback(op, stack);
}

at::Tensor ipuView(const at::Tensor &self, c10::IntArrayRef size) {
  if (Tracer *tracer = Tracer::current()) {
    auto sizes = at::infer_size(size, self.numel());
    // The view's strides in self's memory, as eager's view computes them
    // (traced tensors keep eager's layouts: permuted, with gaps, expanded).
    std::optional<std::vector<int64_t>> strides =
        at::detail::computeStride(self.sizes(), self.strides(), sizes);
    TORCH_CHECK(strides.has_value(),
                "view size is not compatible with input tensor's size and "
                "stride (at least one dimension spans across two contiguous "
                "subspaces). Use .reshape(...) instead.");
    if (auto r = tracer->captureReshape(self, sizes, *strides, "aten::view"))
      return *r;
    at::Tensor view = at::native::view(self, size);
    tracer->noteView(view, self, view.sizes(), view.strides(),
                     view.storage_offset());
    return view;
  }
  return at::native::view(self, size);
}

at::Tensor ipuReshapeAlias(const at::Tensor &self, c10::IntArrayRef size,
                           c10::IntArrayRef stride) {
  if (Tracer *tracer = Tracer::current())
    if (auto r =
            tracer->captureReshape(self, size, stride, "aten::_reshape_alias"))
      return *r;
  return at::native::_reshape_alias(self, size, stride);
}

at::Tensor ipuAsStrided(const at::Tensor &self, c10::IntArrayRef size,
                        c10::IntArrayRef stride,
                        std::optional<int64_t> offset) {
  if (Tracer *tracer = Tracer::current()) {
    if (auto r = tracer->captureView(self, size, stride,
                                     offset.value_or(self.storage_offset()),
                                     "aten::as_strided"))
      return *r;
    // A view of a constant: writing into it (a composite op's kernel filling
    // the tensor it made) may make the constant a traced value.
    at::Tensor view =
        at::native::as_strided_tensorimpl(self, size, stride, offset);
    tracer->noteView(view, self, view.sizes(), view.strides(),
                     view.storage_offset());
    return view;
  }
  return at::native::as_strided_tensorimpl(self, size, stride, offset);
}

// alias (what transpose(d, d) and other no-op views return) makes its view
// without as_strided: while tracing, the view of a traced tensor is captured
// like any other, else the new tensor's memory would be read as a constant.
at::Tensor ipuAlias(const at::Tensor &self) {
  if (Tracer *tracer = Tracer::current())
    if (auto r = tracer->captureView(self, self.sizes(), self.strides(),
                                     self.storage_offset(), "aten::alias"))
      return *r;
  return at::native::alias(self);
}

// In-place view ops (squeeze_, unsqueeze_, transpose_, t_) all end here.
const at::Tensor &ipuAsStridedInplace(const at::Tensor &self,
                                      c10::SymIntArrayRef size,
                                      c10::SymIntArrayRef stride,
                                      std::optional<c10::SymInt> offset) {
  if (Tracer *tracer = Tracer::current()) {
    auto sizes = C10_AS_INTARRAYREF_SLOW(size);
    auto strides = C10_AS_INTARRAYREF_SLOW(stride);
    int64_t off = offset ? offset->expect_int() : self.storage_offset();
    if (tracer->captureViewInplace(self, sizes, strides, off,
                                   "aten::as_strided_"))
      return self;
  }
  return at::native::as_strided__symint(self, size, stride, std::move(offset));
}

// Functionalization turns a write into a view into `<view>_scatter`; their
// composite kernels would write into a backend view, which traced values
// do not alias, so they are captured whole.
template <const char *ViewOp, const char *ViewOverload>
void ipuScatter(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  if (Tracer *tracer = Tracer::current())
    return tracer->captureScatter(op, ViewOp, ViewOverload, stack);
  at::native::cpu_fallback(op, stack);
}
constexpr char kSelect[] = "aten::select", kInt[] = "int";
constexpr char kSlice[] = "aten::slice", kTensor[] = "Tensor";
constexpr char kAsStrided[] = "aten::as_strided", kNone[] = "";
constexpr char kDiagonal[] = "aten::diagonal";

// Functionalization turns `split`, `chunk` and `unbind` into their `_copy`
// variants, whose composite kernels clone each piece contiguously. While
// tracing, the pieces of the view op are already new tensors (the tracer's
// views, see Tracer::captureView) with eager's strides, which decide whether
// a later reshape of a piece is a view or a copy: they are returned as they
// are. (A select or a slice keeps its strides the same way.)
void ipuListViewCopy(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  const c10::OperatorName &name = op.schema().operator_name();
  std::string view = name.name.substr(0, name.name.size() - 5); // no "_copy"
  c10::Dispatcher::singleton()
      .findSchemaOrThrow(view.c_str(), name.overload_name.c_str())
      .callBoxed(stack);
  if (Tracer::current())
    return;
  std::vector<at::Tensor> pieces = stack->back().toTensorVector();
  for (at::Tensor &piece : pieces)
    piece = piece.clone(at::MemoryFormat::Contiguous);
  stack->back() = c10::IValue(pieces);
}

at::Tensor ipuFunctionalCopy(const at::Tensor &self, const at::Tensor &src,
                             bool nonBlocking) {
  if (Tracer *tracer = Tracer::current())
    return tracer->captureFunctionalCopy(self, src);
  at::Tensor out = self.clone();
  out.copy_(src, nonBlocking);
  return out;
}

// take_along_dim's composite kernel refuses indices on another device, and an
// index the model builds while tracing (torch.tensor([...])) is a CPU
// constant, as it is in eager, where both are on the CPU.
at::Tensor ipuTakeAlongDim(const at::Tensor &self, const at::Tensor &indices,
                           std::optional<int64_t> dim) {
  bool move = Tracer::current() && indices.device().is_cpu();
  return at::native::take_along_dim(
      self, move ? indices.to(self.device()) : indices, dim);
}

// view_as_real and view_as_complex of a traced tensor are its value as it
// is: the program holds a complex tensor as its (real, imaginary) pairs.
// `view` is the eager view of `self`.
at::Tensor reinterpreted(const at::Tensor &self, const at::Tensor &view) {
  if (Tracer *tracer = Tracer::current())
    if (auto r = tracer->captureReinterpret(self, view.sizes(), view.strides(),
                                            view.scalar_type()))
      return *r;
  return view;
}

at::Tensor ipuViewAsReal(const at::Tensor &self) {
  return reinterpreted(self, at::native::view_as_real(self));
}

at::Tensor ipuViewAsComplex(const at::Tensor &self) {
  return reinterpreted(self, at::native::view_as_complex(self));
}

// torch.equal answers a Python bool: while tracing, a value read (guarded)
// where the shapes agree. (It has no Meta kernel to trace it otherwise.)
bool ipuEqual(const at::Tensor &self, const at::Tensor &other) {
  if (!self.sizes().equals(other.sizes()))
    return false;
  if (Tracer::current())
    return at::eq(self, other).all().item<bool>();
  return at::equal(hostAlias(self), hostAlias(other));
}

// conj() and the negative view of complex tensors are lazy in eager (a bit
// on the view, resolved by the kernels that read it). A traced tensor's
// value is its logical value, so while tracing they are the physical ops.
at::Tensor ipuConj(const at::Tensor &self) {
  if (Tracer::current())
    return at::_conj_physical(self);
  return at::native::_conj(self);
}

at::Tensor ipuNegView(const at::Tensor &self) {
  if (Tracer::current())
    return at::neg(self);
  return at::native::_neg_view(self);
}

// scaled_dot_product_attention asks the backend which fused kernel to use;
// ours is the math decomposition (matmul, softmax, ...), which we capture.
void ipuFusedSdpChoice(const c10::OperatorHandle &op,
                       torch::jit::Stack *stack) {
  torch::jit::drop(*stack, op.schema().arguments().size());
  stack->push_back(c10::IValue(int64_t{0})); // sdp::SDPBackend::math
}

// Autograd's formula for a convolution on a backend other than CPU/CUDA is
// convolution_backward_overrideable, whose default kernel throws: it is
// aten::convolution_backward with the bias gradient's size (the output
// channels) made explicit.
void ipuConvolutionBackwardOverrideable(const c10::OperatorHandle &op,
                                        torch::jit::Stack *stack) {
  static const c10::OperatorHandle target =
      c10::Dispatcher::singleton().findSchemaOrThrow(
          "aten::convolution_backward", "");
  std::vector<c10::IValue> args =
      torch::jit::pop(*stack, op.schema().arguments().size());
  // (grad_output, input, weight, stride, padding, dilation, transposed,
  //  output_padding, groups, output_mask)
  const at::Tensor &weight = args[2].toTensor();
  bool transposed = args[6].toBool();
  int64_t groups = args[8].toInt();
  c10::List<bool> mask = args[9].toBoolList();
  c10::IValue biasSizes;
  if (mask.get(2))
    biasSizes = c10::IValue(std::vector<int64_t>{
        transposed ? weight.size(1) * groups : weight.size(0)});
  for (size_t i = 0; i < args.size(); ++i) {
    if (i == 3)
      stack->push_back(biasSizes);
    stack->push_back(std::move(args[i]));
  }
  if (Tracer *tracer = Tracer::current())
    return tracer->capture(target, stack);
  at::native::cpu_fallback(target, stack);
}

} // namespace

void registerCaptureKernel(torch::Library &m, const char *qualifiedName) {
  m.impl(qualifiedName,
         torch::CppFunction::makeFromBoxedFunction<&ipuFallback>());
}

} // namespace poptorch

REGISTER_ALLOCATOR(c10::DeviceType::IPU, &poptorch::gAllocator);
C10_REGISTER_GUARD_IMPL(IPU, poptorch::IpuGuardImpl);

TORCH_LIBRARY_IMPL(_, IPU, m) {
  m.fallback(
      torch::CppFunction::makeFromBoxedFunction<&poptorch::ipuFallback>());
}

TORCH_LIBRARY_IMPL(aten, IPU, m) {
  m.impl("empty.memory_format", &poptorch::ipuEmpty);
  m.impl("empty_strided", &poptorch::ipuEmptyStrided);
  m.impl("copy_", &poptorch::ipuCopy);
  m.impl("_copy_from", &poptorch::ipuCopyFrom);
  m.impl("_copy_from_and_resize", &poptorch::ipuCopyFromAndResize);
  m.impl("resize_", &poptorch::ipuResize);
  m.impl("_local_scalar_dense", &poptorch::ipuLocalScalarDense);
  m.impl("view", &poptorch::ipuView);
  m.impl("as_strided", &poptorch::ipuAsStrided);
  m.impl("as_strided_", &poptorch::ipuAsStridedInplace);
  m.impl("alias", &poptorch::ipuAlias);
  m.impl("_conj", &poptorch::ipuConj);
  m.impl("equal", &poptorch::ipuEqual);
  m.impl("view_as_real", &poptorch::ipuViewAsReal);
  m.impl("view_as_complex", &poptorch::ipuViewAsComplex);
  m.impl("_neg_view", &poptorch::ipuNegView);
  m.impl("select_scatter",
         torch::CppFunction::makeFromBoxedFunction<
             &poptorch::ipuScatter<poptorch::kSelect, poptorch::kInt>>());
  m.impl("slice_scatter",
         torch::CppFunction::makeFromBoxedFunction<
             &poptorch::ipuScatter<poptorch::kSlice, poptorch::kTensor>>());
  m.impl("as_strided_scatter",
         torch::CppFunction::makeFromBoxedFunction<
             &poptorch::ipuScatter<poptorch::kAsStrided, poptorch::kNone>>());
  m.impl("diagonal_scatter",
         torch::CppFunction::makeFromBoxedFunction<
             &poptorch::ipuScatter<poptorch::kDiagonal, poptorch::kNone>>());
  m.impl("_reshape_alias", &poptorch::ipuReshapeAlias);
  m.impl("take_along_dim", &poptorch::ipuTakeAlongDim);
  m.impl("copy", &poptorch::ipuFunctionalCopy);
  for (const char *name :
       {"split_copy.Tensor", "split_with_sizes_copy", "unbind_copy.int"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<
                     &poptorch::ipuListViewCopy>());
  m.impl("_fused_sdp_choice", torch::CppFunction::makeFromBoxedFunction<
                                  &poptorch::ipuFusedSdpChoice>());
  m.impl("convolution_backward_overrideable",
         torch::CppFunction::makeFromBoxedFunction<
             &poptorch::ipuConvolutionBackwardOverrideable>());
  for (const char *name : poptorch::capturedOpNames())
    poptorch::registerCaptureKernel(m, name);
}
