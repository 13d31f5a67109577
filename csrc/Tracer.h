//===- Tracer.h - capture of dispatched ops into the poptorch dialect ---===//
#pragma once

#include "bridge/Bridge.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/intrusive_ptr.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace poptorch {

using poptorch_bridge::ValueId;
struct ViewMap;

/// An op that has no Meta kernel (Tracer::callOnMeta).
struct NoMetaKernel : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the tracer knows about one ipu tensor.
/// Ipu tensors that are not in the tracer's map are constants: their memory
/// holds their value.
struct TracedValue {
  explicit TracedValue(const at::Tensor &t) : owner(t.getIntrusivePtr()) {}
  c10::weak_intrusive_ptr<c10::TensorImpl> owner;
  ValueId value = -1;       // a traced value, or
  std::string poisonReason; // produced by an unsupported op, or
  /// computed inside a poptorch.for_loop / poptorch.cond region that has
  /// ended (poisonReason says where): any use is an error.
  bool outOfScope = false;
};

struct UnsupportedOp {
  std::string schema;
  std::string location;
  int count = 1;
};

/// A tensor's dtype and shape in the op log, formatted only when read
/// (typeText): formatting every op's types while tracing cost about a
/// tenth of the capture time.
struct TypeRecord {
  std::optional<at::ScalarType> dtype; // none: an undefined tensor
  c10::SmallVector<int64_t, 5> sizes;
};

/// "Float[2, 3]", or "none" for an undefined tensor.
std::string typeText(const TypeRecord &t);

/// One op that reached the ipu device while tracing, for the TRACE log,
/// poptorch.explain and the golden checks (python/poptorch/_debug.py).
struct OpRecord {
  std::string name; // aten::add.Tensor
  // captured, host, read (a value read while tracing: guarded),
  // host_kernel (no lowering: PyTorch's CPU kernel at run time), random,
  // unsupported, poisoned, error (string literals)
  const char *status = "";
  const char *dialectOp = ""; // the op table's ("" for identities)
  poptorch_bridge::SourceLoc loc;
  std::vector<ValueId> inputs, outputs; // per tensor; -1: not a traced value
  std::vector<TypeRecord> inputTypes, outputTypes;
  std::vector<c10::IValue> args; // the aten arguments, if recordArgs
};

/// A value the model read while tracing (Tensor.item(), bool(t), .tolist(),
/// .cpu()): the program was specialised on it, so every call checks it.
struct Guard {
  ValueId value = -1;    // the program computes it (a result), or
  int64_t argument = -1; // it is this argument of @main
  at::Tensor expected;   // the value seen while tracing (CPU)
  std::string what;      // the op that read it
  std::string location;  // the model's source line
  int64_t result = -1;   // @main's result holding it (set by finish)
  /// A result shape checked inside the program (by the host kernel of an op
  /// whose shapes depend on values): `expected` holds the sizes.
  bool inProgram = false;
};

/// A traced value that is a view of the memory of a tensor B that was
/// expanded (`B.expand(...)`, `broadcast_to`, and the views of those), with
/// its geometry in B's memory (TracerViews.cpp, followExpandedViews).
struct ExpandedView {
  ValueId root = -1;  // B's value
  ValueId image = -1; // B's value after the writes into this view so far
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

/// Computes values of the program so far for the inputs being traced:
/// compiles `module` (whose @main returns the values), runs it on `args`
/// (@main's arguments, CPU tensors) and writes the values into `results`.
using Evaluator = std::function<void(const std::string &module,
                                     const std::vector<at::Tensor> &args,
                                     const std::vector<at::Tensor> &results)>;

/// The dialect's element type of a torch dtype; an error naming `opName` for
/// dtypes the dialect has none of.
poptorch_bridge::ElemType elemTypeOf(at::ScalarType t,
                                     const std::string &opName);
/// The dialect's type of a tensor of these sizes and dtype. A complex tensor
/// is typed as its (real, imaginary) pairs, a trailing dim of 2 of the real
/// dtype (torch.view_as_real): ops on complex tensors run as host kernels,
/// and program buffers hold complex values in that layout.
poptorch_bridge::TensorType tensorTypeOf(c10::IntArrayRef sizes,
                                         at::ScalarType dtype,
                                         const std::string &opName);
poptorch_bridge::TensorType tensorTypeOf(const at::Tensor &t,
                                         const std::string &opName);
/// "aten::add.Tensor".
std::string opDisplayName(const c10::OperatorHandle &op);
/// The view op of a functionalized view op (`aten::select` for
/// `aten::select_copy.int`) whose one result is a view of its input.
std::optional<c10::OperatorHandle> viewOpOf(const c10::OperatorHandle &op);

/// Where TRACE lines go (set from Python by poptorch.setLogLevel); none: off.
void setTraceSink(std::function<void(const std::string &)> sink);

/// One tracing session: every op dispatched to the ipu device while it is
/// active is recorded into a GraphBuilder. A tracer is active on the thread
/// that activated it, only: each thread traces its own model.
class Tracer {
public:
  explicit Tracer(std::vector<std::string> sourceExcludes);
  ~Tracer();

  static Tracer *current();
  void activate();
  void deactivate();

  /// Registers an ipu tensor as a function argument.
  void addArgument(const at::Tensor &t, const std::string &name,
                   const std::string &role);
  /// Ends tracing: `outputs` become the results. Throws if any op was
  /// unsupported (listing all of them) or an output cannot be produced.
  /// Returns the number of results before the mutated arguments' new values
  /// and, for each output, the index of the function result holding it
  /// (results are distinct values, so outputs may share one).
  std::pair<int64_t, std::vector<int64_t>>
  finish(const std::vector<at::Tensor> &outputs);
  std::string moduleText(bool debugInfo) const {
    return builder.print(debugInfo);
  }
  /// For each result after the user outputs: the argument it writes back.
  const std::vector<int64_t> &bufferUpdateArgs() const { return updateArgs; }
  size_t numOps() const { return opCount; }
  /// Every op dispatched while tracing, in order.
  const std::vector<OpRecord> &opLog() const { return ops; }
  /// poptorch.NameScope: ops captured inside carry the names (outermost
  /// first) in their locations.
  void pushNameScope(const std::string &name) { nameScopes.push_back(name); }
  void popNameScope() {
    if (!nameScopes.empty())
      nameScopes.pop_back();
  }
  /// Ops with a lowering that refused the model's arguments, run as host
  /// kernels instead: op name -> why.
  const std::map<std::string, std::string> &loweringRefused() const {
    return loweringRefusals;
  }
  /// Keep each op's arguments in the op log (golden checks).
  void setRecordArgs(bool on) { recordArgs = on; }
  /// The module with `values` appended to @main's results (those that are
  /// op results), and the ids appended.
  std::pair<std::string, std::vector<ValueId>>
  moduleTextWithValues(const std::vector<ValueId> &values) const {
    return builder.printWithValues(values);
  }
  /// The argument index of the random state [seed, calls] (-1 when the
  /// program draws no random numbers); each call returns it advanced.
  int64_t randomStateArg() const { return randomArg; }
  /// Ops captured from now on belong to this block, stage, ipu and phase
  /// (poptorch.BeginBlock / Block): they carry `poptorch.block`, ...
  /// With `backfill`, the ops captured so far get them too.
  void setBlock(const std::string &block, int64_t stage, int64_t ipu,
                int64_t phase, bool backfill);
  /// poptorch.ipu_print_tensor: `t` is printed with `title` when the program
  /// runs; `t` then holds the print op's result (the same value).
  void printTensor(const at::Tensor &t, const std::string &title);
  /// The traced value of `t` (poptorch.getIpuTensorId), -1 if it has none.
  ValueId valueIdOf(const at::Tensor &t);

  /// poptorch.for_loop (TracerControlFlow.cpp): opens a loop of `count`
  /// iterations over `inputs`; returns the tensors the body takes (its
  /// iteration arguments). Ops traced until endForLoop form the body.
  std::vector<at::Tensor> beginForLoop(const std::vector<at::Tensor> &inputs,
                                       int64_t count);
  /// Closes the loop whose body returned `outputs`; returns its results.
  std::vector<at::Tensor> endForLoop(const std::vector<at::Tensor> &outputs);
  /// poptorch.cond: opens the then branch on `cond` (a one-element bool
  /// tensor); returns stand-ins for `thenInputs` that the branch may write.
  std::vector<at::Tensor> beginIf(const at::Tensor &cond,
                                  const std::vector<at::Tensor> &thenInputs);
  /// Closes the then branch (which returned `thenOutputs`), opens the else
  /// branch; returns stand-ins for `elseInputs`.
  std::vector<at::Tensor> elseBranch(const std::vector<at::Tensor> &thenOutputs,
                                     const std::vector<at::Tensor> &elseInputs);
  /// Closes the conditional; returns its results.
  std::vector<at::Tensor> endIf(const std::vector<at::Tensor> &elseOutputs);

  // Entry points from the device kernels.
  void capture(const c10::OperatorHandle &op, torch::jit::Stack *stack);
  at::Tensor &captureCopy(at::Tensor &self, const at::Tensor &src);
  /// aten::copy (the functional copy_): src's value cast and expanded to
  /// self's, laid out like self.
  at::Tensor captureFunctionalCopy(const at::Tensor &self,
                                   const at::Tensor &src);
  void checkReadable(const at::Tensor &t, const std::string &what);
  /// The value of `t` for the inputs being traced (a CPU tensor). A value
  /// the model computed is evaluated (setEvaluator), guarded (guards()) and
  /// from then on a constant of the trace.
  at::Tensor readValue(const at::Tensor &t, const std::string &what);
  void setEvaluator(Evaluator e) { evaluator = std::move(e); }
  /// The value of `t` for the inputs being traced, without a guard.
  at::Tensor evaluate(const at::Tensor &t, const std::string &what);
  /// The results of `op(args)` for the values being traced, as Meta
  /// tensors (ops whose result shapes depend on values).
  std::vector<c10::IValue>
  shapesFromValues(const c10::OperatorHandle &op,
                   const std::vector<c10::IValue> &args,
                   const std::string &opName);
  /// Replaces `op(args)` on the stack by its results computed from other
  /// ops (a decomposition, which dispatches them to the device and so has
  /// them captured); false when it has none.
  using Decomposer =
      std::function<bool(const c10::OperatorHandle &, torch::jit::Stack *)>;
  /// Ops without a lowering are offered to `d` before they become host
  /// kernels (Module.cpp: torch._decomp's decompositions of backward ops).
  void setDecomposer(Decomposer d) { decomposer = std::move(d); }
  /// Whether ops without a lowering become poptorch.host_kernel (PyTorch's
  /// CPU kernel at run time) instead of unsupported ops.
  void setHostKernels(bool on) { hostKernels = on; }
  /// Every value read while tracing, in order; after finish(), each holds
  /// the result or argument that the runtime checks.
  const std::vector<Guard> &guards() const { return guardList; }
  /// Fails when constant indices fall outside [-size, size).
  void checkIndexRange(const at::Tensor &t, int64_t size,
                       const std::string &opName);
  /// Replaces constant bool masks in a `Tensor?[]` of indices by their
  /// nonzero positions; masks computed by the model are an error (with
  /// host kernels, capture runs such an index as one instead).
  void expandMaskIndices(c10::IValue &indices, const std::string &opName);
  /// `aten::<view>_scatter(self, src, ...)` (what functionalization emits for
  /// a write into a view): self with src written into view(self, ...).
  void captureScatter(const c10::OperatorHandle &op, const char *viewOp,
                      const char *viewOverload, torch::jit::Stack *stack);
  /// A view of a traced tensor that reached the backend without
  /// functionalization (inside a composite op's decomposition): captured as
  /// the equivalent reshape or permute. Returns nullopt for untraced tensors.
  /// A view that is a reshape of self's value (aten::view, _reshape_alias),
  /// with the strides of eager's view.
  std::optional<at::Tensor> captureReshape(const at::Tensor &self,
                                           c10::IntArrayRef sizes,
                                           c10::IntArrayRef strides,
                                           const char *opName);
  std::optional<at::Tensor> captureView(const at::Tensor &self,
                                        c10::IntArrayRef sizes,
                                        c10::IntArrayRef strides,
                                        int64_t offset, const char *opName);
  /// view_as_real / view_as_complex of a traced tensor: the same value (a
  /// complex tensor is held as its pairs), seen with `dtype` and eager's
  /// geometry of the view. Returns nullopt for untraced tensors.
  std::optional<at::Tensor> captureReinterpret(const at::Tensor &self,
                                               c10::IntArrayRef sizes,
                                               c10::IntArrayRef strides,
                                               at::ScalarType dtype);
  /// `view` (sizes, strides, offset) is a view of `base`'s memory that a
  /// composite op's kernel took below functionalization (block_diag's
  /// narrow(...).copy_(part) into the zeros it made): a later write into the
  /// view is a write into `base` (propagateWrite).
  void noteView(const at::Tensor &view, const at::Tensor &base,
                c10::IntArrayRef sizes, c10::IntArrayRef strides,
                int64_t offset);
  /// The in-place form (as_strided_, which squeeze_, unsqueeze_, transpose_
  /// and t_ use): `self` takes the view's value. Returns false for untraced
  /// tensors.
  bool captureViewInplace(const at::Tensor &self, c10::IntArrayRef sizes,
                          c10::IntArrayRef strides, int64_t offset,
                          const char *opName);

private:
  friend class OpLogScope;
  void captureOp(const c10::OperatorHandle &op, torch::jit::Stack *stack);
  TracedValue *lookup(const at::Tensor &t);
  std::optional<ValueId> viewValue(const at::Tensor &self,
                                   c10::IntArrayRef sizes,
                                   c10::IntArrayRef strides, int64_t offset,
                                   const char *opName);
  ViewMap mapView(const at::Tensor &self, c10::IntArrayRef sizes,
                  c10::IntArrayRef strides, int64_t offset,
                  const char *opName) const;
  ViewMap mapGappedView(const at::Tensor &self, ViewMap map,
                        c10::IntArrayRef sizes, c10::IntArrayRef strides,
                        int64_t offset, const char *opName) const;
  /// Writes through views of an expanded tensor (`y.expand(3, n)[1] = v`,
  /// which writes y in eager): functionalization rebuilds y arithmetically,
  /// as y + sum_to(mutated - y), which makes NaN of an inf in y and loses a
  /// small write into a large value. Called after each captured op, this
  /// follows expands and the views of them; captureScatter computes the
  /// written y directly (expandedWrite), and the sum_to formula's result is
  /// bound to it.
  void followExpandedViews(const c10::OperatorHandle &op,
                           const std::vector<c10::IValue> &args,
                           const at::Tensor &out);
  /// What the scatter `op(self, src, args...)` writes into an expanded
  /// tensor's memory: self's ExpandedView with the written image, if self is
  /// one and the write is exact.
  std::optional<ExpandedView>
  expandedWrite(const std::vector<c10::IValue> &args,
                const c10::OperatorHandle &viewOp, const std::string &opName,
                const poptorch_bridge::SourceLoc &loc);
  /// The view op `viewOp(meta, rest...)` on a Meta tensor laid out as
  /// (sizes, strides, offset).
  at::Tensor viewOnMeta(const c10::OperatorHandle &viewOp,
                        c10::ArrayRef<c10::IValue> rest, c10::IntArrayRef sizes,
                        c10::IntArrayRef strides, int64_t offset,
                        at::ScalarType dtype);
  /// After `view` was written (copy_, an in-place op): its base, if noteView
  /// knows one, takes the written value too.
  void propagateWrite(const at::Tensor &view, const char *opName);
  /// The view's value, read from the base's value.
  ValueId readView(const ViewMap &map, ValueId base,
                   const poptorch_bridge::SourceLoc &loc);
  /// The base's value after writing `value` into the view.
  ValueId writeView(const ViewMap &map, ValueId base, ValueId value,
                    const char *opName, const poptorch_bridge::SourceLoc &loc);
  ValueId
  emit(const char *op, ValueId in, std::vector<int64_t> shape,
       std::vector<std::pair<std::string, poptorch_bridge::AttrValue>> attrs,
       const poptorch_bridge::SourceLoc &loc);
  /// scaled_dot_product_attention(..., enable_gqa=True): key and value heads
  /// repeated to the query's (operands 1 and 2).
  void expandGroupedKeyValues(const std::vector<c10::IValue> &args,
                              std::vector<std::vector<ValueId>> &operands,
                              const poptorch_bridge::SourceLoc &loc);
  ValueId emitPermute(ValueId in, const std::vector<int64_t> &dims,
                      const poptorch_bridge::SourceLoc &loc);
  ValueId emitSlice(ValueId in, int64_t dim, int64_t start, int64_t step,
                    int64_t len, const poptorch_bridge::SourceLoc &loc);
  bool isTraced(const at::Tensor &t);
  void bindValue(const at::Tensor &t, ValueId v);
  void bindPoison(const at::Tensor &t, const std::string &reason);
  /// The value of `t` converted to `dtype` (constants are converted on the
  /// host at trace time, traced values through poptorch.cast).
  ValueId valueOf(const at::Tensor &t, std::optional<at::ScalarType> dtype,
                  const std::string &opName);
  at::Tensor constantOf(const at::Tensor &t);
  /// Tensor `t` cast to `dtype` by torch's CPU kernel at run time: the casts
  /// to and from complex dtypes.
  ValueId hostCast(const at::Tensor &t, at::ScalarType dtype,
                   const std::string &opName);
  /// `op(args...)` as poptorch.host_kernel (PyTorch's CPU kernel runs it
  /// when the program runs), `results` its Meta results (tensor lists
  /// flattened): the values of its results, or none (with `why`) for an op
  /// that cannot run that way.
  std::optional<std::vector<ValueId>>
  emitHostKernelOp(const c10::OperatorHandle &op,
                   const std::vector<c10::IValue> &args,
                   const std::vector<c10::IValue> &results,
                   const poptorch_bridge::SourceLoc &loc, std::string &why);
  /// A constant scalar holding `v` converted to `dtype` the way eager's
  /// kernels convert scalars (the cast of a tensor copy, which wraps: int8 +
  /// 300 adds 44, not the checked Scalar::to).
  ValueId scalarConstant(const c10::Scalar &v, at::ScalarType dtype,
                         const std::string &opName);
  poptorch_bridge::SourceLoc sourceLocation() const;
  std::string describe(const poptorch_bridge::SourceLoc &loc) const;
  /// The error listing every unsupported op seen so far.
  std::string unsupportedReport() const;
  [[noreturn]] void fail(const std::string &opName,
                         const std::string &message) const;

  void foldOnHost(const c10::OperatorHandle &op, torch::jit::Stack *stack);
  /// `staticShape`: the op's result shape is known from its arguments even
  /// though the op is tagged dynamic_output_shape (advanced indexing without
  /// bool masks).
  /// For a functionalized view op (`<view>_copy`), the view op run on Meta
  /// tensors (its result has eager's strides); empty for any other op.
  std::vector<c10::IValue>
  eagerViewGeometry(const c10::OperatorHandle &op,
                    const std::vector<c10::IValue> &args);
  std::vector<c10::IValue> runOnMeta(const c10::OperatorHandle &op,
                                     const std::vector<c10::IValue> &args,
                                     bool staticShape = false);
  std::vector<c10::IValue> callOnMeta(const c10::OperatorHandle &op,
                                      const std::vector<c10::IValue> &args);

  /// noteView's views of memory: view -> its base and its geometry.
  struct MemoryView {
    // (The view's own weak reference keeps its address from being reused.)
    c10::weak_intrusive_ptr<c10::TensorImpl> view, base;
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
  };
  std::unordered_map<c10::TensorImpl *, MemoryView> memoryViews;
  /// followExpandedViews' state: values that are views of an expanded
  /// tensor's memory; the expanded tensors (B's value -> a Meta tensor with
  /// B's layout); and the partial results of functionalization's inverse of
  /// expand, B + sum_to(mutated - B), with the view they undo.
  std::unordered_map<ValueId, ExpandedView> expandedViews;
  std::unordered_map<ValueId, at::Tensor> expandedBases;
  std::unordered_map<ValueId, ExpandedView> expandInverses;
  /// Where each functionalized view (`<view>_copy`) comes from: its input
  /// and how (the op and its other arguments).
  struct ViewOrigin {
    ValueId parent;
    std::string how;
  };
  std::unordered_map<ValueId, ViewOrigin> viewOrigins;
  /// Whether two values are the same views of one value.
  bool sameView(ValueId a, ValueId b) const;

  /// An open poptorch.for_loop or poptorch.cond (TracerControlFlow.cpp).
  struct OpenRegion {
    const char *what;   // "poptorch.for_loop", "poptorch.cond"
    ValueId firstValue; // values from here on are the region's
    std::map<int64_t, ValueId> bufferUpdates; // when it opened
    std::vector<at::Tensor> thenOutputs;      // cond: the then branch's
    std::vector<at::Tensor> inputs;           // for_loop: its inputs
  };
  std::vector<OpenRegion> regions;
  /// Fails with `message` when a region is open (ops whose values or
  /// effects cannot be inside a loop or a branch).
  void checkNotInRegion(const std::string &opName, const std::string &message);
  /// The innermost open region, which must be a `what` (an internal error
  /// otherwise: the Python API opens and closes them in pairs).
  OpenRegion &innermost(const char *what);
  /// Ends the region's tracing: checks that it wrote no argument and
  /// poisons the tensors that hold its values.
  void closeRegion(const OpenRegion &region);
  /// The values of region results `outputs` (checked against `expected`'s
  /// shapes and dtypes when given).
  std::vector<ValueId> regionResults(const std::vector<at::Tensor> &outputs,
                                     const std::vector<at::Tensor> *expected,
                                     const std::string &what,
                                     const std::string &against);
  /// New ipu tensors like `like`, bound to `ids`.
  std::vector<at::Tensor> boundTensors(const std::vector<at::Tensor> &like,
                                       const std::vector<ValueId> &ids);
  /// The model-facing names of @main's arguments, by index.
  std::vector<std::string> argNames;

  poptorch_bridge::GraphBuilder builder;
  std::unordered_map<c10::TensorImpl *, TracedValue> values;
  std::vector<std::string> excludes;
  std::map<std::string, UnsupportedOp> unsupported;
  std::vector<std::string> unsupportedOrder;
  std::map<int64_t, ValueId> bufferUpdates; // arg index -> new value
  std::unordered_map<ValueId, int64_t> argIndexOfValue;
  /// The argument tensors (what copy_ into an argument writes).
  std::unordered_map<c10::TensorImpl *, int64_t> argIndexOfTensor;
  std::vector<int64_t> updateArgs;
  int64_t numArgs = 0;
  size_t opCount = 0;
  std::vector<OpRecord> ops;
  std::vector<std::string> nameScopes;
  bool recordArgs = false;
  /// The random state argument, added by the first random op.
  ValueId randomState();
  ValueId randomValue = -1;
  int64_t randomArg = -1;
  int64_t randomStreams = 0;
  /// @main's arguments (CPU tensors: their values for this trace).
  std::vector<at::Tensor> argValues;
  Evaluator evaluator;
  Decomposer decomposer;
  /// The ops being decomposed (a decomposition that calls its own op gets
  /// the host kernel).
  std::vector<const c10::OperatorHandle *> decomposing;
  std::vector<Guard> guardList;
  bool hostKernels = true;
  /// Why an op without a lowering could not be a host kernel (for the
  /// unsupported-op error).
  std::map<std::string, std::string> hostKernelRefusals;
  /// Ops run as host kernels because their lowering refused the arguments
  /// the model gave: op name -> the first refusal.
  std::map<std::string, std::string> loweringRefusals;
};

} // namespace poptorch
