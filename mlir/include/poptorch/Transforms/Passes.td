//===- Passes.td - poptorch passes -------------------------*- tablegen -*-===//
#ifndef POPTORCH_TRANSFORMS_PASSES_TD
#define POPTORCH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PoptorchDecompose : Pass<"poptorch-decompose", "func::FuncOp"> {
  let summary = "Decompose composite poptorch ops into simpler poptorch ops";
  let description = [{
    Rewrites linear, addmm, layer_norm, batch_norm, softmax, log_softmax,
    sdpa, reduce_mean and transpose into matmul, elementwise, reduction and
    data-movement ops, so that the lowering to linalg only handles the core.
    Attention whose scores per head do not fit in cache becomes an scf.for
    over heads and blocks of query rows (slices of tensors).
  }];
  let dependentDialects = ["::mlir::poptorch::PoptorchDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ConvertPoptorchToLinalg : Pass<"convert-poptorch-to-linalg", "ModuleOp"> {
  let summary = "Lower the poptorch dialect to linalg, tensor, arith and math";
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    // loops (gcd, zeta) and C library calls (lgamma, hypot) in scalar formulas
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    // poptorch.print_tensor: a call with the input's buffer
    "::mlir::bufferization::BufferizationDialect", "::mlir::memref::MemRefDialect"
  ];
}

def PoptorchFuseElementwise : Pass<"poptorch-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse elementwise linalg ops, keeping contractions and convolutions named";
  let description = [{
    Upstream elementwise fusion and reshape-by-expansion propagation, with a
    control function that never rewrites a contraction (matmul,
    batch_matmul, ..., or a linalg.generic contraction such as
    poptorch-pack-weights' panel matmuls) or a named convolution/pooling op,
    so that poptorch-tile-and-vectorize can still match them and producers
    are not recomputed per tile. A producer is fused only into its single
    user, and a collapse_shape is not folded into a consumer whose reduction
    it would split (a layer norm over 48 x 16 instead of 768 columns
    vectorizes poorly). A `tensor.extract` of a `linalg.transpose`
    reads the transpose's input at the permuted position (a gather never
    materializes a transpose).
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::affine::AffineDialect"
  ];
}

def PoptorchSinkTransposes : Pass<"poptorch-sink-transposes", "func::FuncOp"> {
  let summary = "Move transposes below the ops that read them, so those compute in the transposed input's layout";
  let description = [{
    A `linalg.transpose` whose every reader can take it moves below them:
    an all-parallel generic reading it through a permutation computes in the
    transpose's input layout (loops reordered, result transposed back) when
    more of its full-size inputs are such transposes than not and its own
    readers can take the transpose after it; other generics read the
    transpose's input through the composed indexing map; expand_shape,
    contiguous collapse_shape and insert_slice into a fresh (filled) tensor
    apply to the transpose's input; transposes of transposes compose. A
    convolution net's activations and gradients then stay in the
    channels-last layout of its convolutions between them. Contractions and
    convolutions keep their transposed operands.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def PoptorchSplitPadding : Pass<"poptorch-split-padding", "func::FuncOp"> {
  let summary = "Split elementwise reads of padded tensors into unpadded regions";
  let description = [{
    A padded tensor (a constant fill with a value inserted into its
    interior, as the lowering pads the input of a depthwise convolution or
    a pool) read by an all-parallel linalg.generic through static slices
    (the strided windows of each kernel offset) is never materialized: the
    generic is split into regions of its iteration space in which every
    such slice lies wholly inside the inserted value, and reads it
    directly, or wholly in the padding, and is the pad constant in the
    body. The regions write their slices of the result. The fill, the copy
    into its interior and their memory traffic are gone.

    Only padded tensors of at least min-padded-bytes are split: one that
    stays in the caches is cheap to fill, and the edge regions (a column of
    an NCHW plane is one element per row, computed without vectors) cost
    more than the fill saves.
  }];
  let options = [
    Option<"minPaddedBytes", "min-padded-bytes", "int64_t",
           /*default=*/"8 << 20",
           "Split only reads of padded tensors of at least this many bytes">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def PoptorchTileAndVectorize : Pass<"poptorch-tile-and-vectorize", "ModuleOp"> {
  let summary = "Tile linalg contractions and convolutions for the cache and vectorize them";
  let description = [{
    Tiles contractions (matmul / batch_matmul) and convolutions into
    register-sized blocks and vectorizes the tiles and the elementwise ops.
    Ops whose estimated cost reaches `min-parallel-cost` get their outermost
    parallel tile loop (one that divides evenly and runs at least twice) as
    an `scf.forall`, which later becomes an `scf.parallel` run on every
    core; cheaper ops keep sequential `scf.for` loops, since waking worker
    threads costs more than they would save.
  }];
  let options = [
    Option<"minParallelCost", "min-parallel-cost", "int64_t",
           /*default=*/"int64_t(1) << 28",
           "Smallest estimated cost (iteration points times scalar ops per "
           "point) at which an op's outermost tile loop runs in parallel; "
           "0 parallelizes everything, -1 nothing">,
    Option<"minProgramParallelCost", "min-program-parallel-cost", "int64_t",
           /*default=*/"0",
           "A module whose ops' estimated costs add up to less than this "
           "keeps every op sequential: its whole call is too short to gain "
           "from a second thread, which would have to be scheduled for it">,
    Option<"packRhs", "pack-rhs", "bool", /*default=*/"true",
           "Copy the k x nr block of B that a column tile of a contraction "
           "reads (the weights of a block of output channels of a "
           "channels-last convolution) into a contiguous panel before the "
           "row tiles (pixel tiles) that reuse it">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers: 512 (AVX-512: 16 f32 "
           "lanes, 32 registers) or 256 (AVX2: 8 lanes, 16 registers). It "
           "sets the vector sizes and the register blocks of contractions "
           "and convolutions; the compiler passes the host's">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "Lower contractions of bfloat16 matrices into an f32 accumulator "
           "to AVX512-BF16 dot products (vdpbf16ps) instead of widening "
           "FMAs; the compiler passes whether the host has them">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::tensor::TensorDialect",
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::ub::UBDialect", "::mlir::x86vector::X86VectorDialect"
  ];
}

def PoptorchOutlineRepeats : Pass<"poptorch-outline-repeats", "ModuleOp"> {
  let summary = "Make each run of ops that repeats back to back one function, called once per repeat";
  let description = [{
    On tensors, after elementwise fusion: in every block of every function,
    the longest saving run of k >= 2 back-to-back instances of the same ops
    (at least 8, not counting constants and tensor.empty) that read their
    values the same way becomes a private function `@<function>_repeat`,
    and each instance a `func.call` of it. Constants and empty tensors an
    instance reads are cloned into the function; every other value from
    before the instance is an argument; what later ops read is a result.
    The instances start where the fewest values cross the cut (between two
    transformer layers, only the hidden state). Tiling, vectorization and
    bufferization then do each layer's work once instead of once per layer.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def PoptorchOutlineKernels : Pass<"poptorch-outline-kernels", "ModuleOp"> {
  let summary = "Outline each loop nest of every function into a kernel function, one per distinct body";
  let description = [{
    After bufferization, every top-level loop nest (scf.for, scf.forall,
    scf.parallel) or linalg op without results of a function becomes
    a private `func.func @__kernel_N` taking the memrefs and scalars it uses
    (constants are cloned in), called in its place. Kernels with the same
    body (the same op on the same types, e.g. the layers of a transformer)
    become one function, so LLVM optimizes and compiles each distinct kernel
    once, and no single function grows with the model: code generation time
    follows the number of distinct kernels, not of ops. Kernels are marked
    kept out of line (see poptorch-kernel-codegen). The device-iteration
    loop (`poptorch.device_loop`) is not a kernel; the kernels inside it are.
    Kernels are marked `poptorch.kernel` and what calls them
    `poptorch.glue`, for poptorch-kernel-codegen.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def PoptorchParallelLoops : Pass<"poptorch-parallel-loops", "func::FuncOp"> {
  let summary = "Turn each outermost scf.forall into a poptorch.parallel_for";
  let description = [{
    After bufferization: the iterations of an outermost `scf.forall` (with no
    results) are numbered 0 .. n-1 in row-major order of its induction
    variables, and the loop becomes a `poptorch.parallel_for` over n
    iterations whose body runs a range of them with an `scf.for`, computing
    the induction variables from the iteration's number. A forall nested in
    another becomes a sequential loop. The task runtime decides at run time
    how to cut the iterations into ranges among the threads of the call.
  }];
  let dependentDialects = [
    "::mlir::poptorch::PoptorchDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def PoptorchOutlineParallel : Pass<"poptorch-outline-parallel", "ModuleOp"> {
  let summary = "Make each poptorch.parallel_for a function the task runtime calls";
  let description = [{
    After the conversion to the LLVM dialect: the body of every
    `poptorch.parallel_for` becomes a private
    `llvm.func @<function>_parallel_N(!llvm.ptr, i64, i64)` that reads the
    values it uses from above from a struct (its first argument) and runs
    the range given by the other two. The loop becomes a store of those
    values into a stack struct and a call of the runtime's
    `poptorch_parallel_for(body, struct, iterations)`. Constants are cloned
    into the body instead, and of an LLVM struct (a memref descriptor) that
    the body only reads fields of, only those fields are passed. Each body is
    compiled once, called through a pointer: no coroutines, and no copy of
    the body inlined into a dispatcher.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PoptorchKernelCodegen : Pass<"poptorch-kernel-codegen", "ModuleOp"> {
  let summary = "Set LLVM code generation attributes of kernels and glue";
  let description = [{
    After func-to-llvm: kernels (`poptorch.kernel`) are `no_inline`, so that
    LLVM does not paste them back into their callers; the glue that calls
    them (`poptorch.glue`: allocations, views and calls in one long basic
    block) is `no_inline optimize_none`, compiled by LLVM's fast instruction
    selector, since optimizing it gains nothing at run time and its
    selection DAG is what made code generation grow faster than the model.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PoptorchApproximateMath : Pass<"poptorch-approximate-math"> {
  let summary = "Replace math ops that have no LLVM intrinsic by polynomial approximations";
  let description = [{
    Rewrites math.erf and f32 math.tanh (scalar or vector), and vector f32
    math.exp, into arith ops, so that vectorized elementwise code stays
    vectorized instead of becoming one libm call per element (LLVM's tanh and
    exp intrinsics have no vector instruction either).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect"];
}

def PoptorchStridedReads : Pass<"poptorch-strided-reads"> {
  let summary = "Read vectors along a strided memref dimension as one load and a shuffle";
  let description = [{
    A vector.transfer_read whose vector runs along a memref dimension of
    static stride 2 to 8 (the input windows of stride-2 convolutions and
    pooling, the im2col copies of strided convolutions) would lower to one
    scalar load per element. It becomes a contiguous vector.load of the
    span the elements lie in, and a vector.shuffle that picks every
    stride-th element. The span ends at the last element read, so the load
    stays inside the buffer.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def PoptorchDistinctBuffers : Pass<"poptorch-distinct-buffers", "func::FuncOp"> {
  let summary = "Give values that CSE merged their own buffers before bufferization";
  let description = [{
    CSE merges equal values that bufferization then has to share, and it
    resolves each conflict with copies. Two cases are undone here:

    * Every result of a function becomes its own caller-provided buffer.
      When two results are the same SSA value, the later ones are replaced
      by a linalg.copy so that bufferization gives each its buffer.
    * A fill (an op computing a tensor from tensor.empty and constants
      only, e.g. the zero border of a padded convolution input) that more
      than one tensor.insert_slice writes into: every insert after the first
      gets its own clone of the fill, and the producer of the inserted
      value, which computes in place into an extract_slice of the fill at
      the same position, is redirected to the clone. Recomputing a fill
      costs one write of the buffer; sharing it cost three copies.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def PoptorchReadonlyArguments : Pass<"poptorch-readonly-arguments", "ModuleOp"> {
  let summary = "Mark the caller's tensors read-only for bufferization";
  let description = [{
    Every tensor argument of a function that carries `poptorch.role` (the
    inputs, parameters, buffers, random state and replica index of @main)
    is memory the caller owns: the runtime passes the user's input tensors
    and the device copies of the weights to the program without copying.
    This pass marks each such argument `bufferization.writable = false`, so
    that one-shot bufferization computes a result that would update one in
    place (index_add, scatter, index_put, ...) into a new buffer instead.
    A model's writes to its buffers and inputs are results of the program
    (`poptorch.updates`) that the runtime stores; the program itself never
    writes an argument. poptorch-verify-readonly-arguments checks the
    outcome after bufferization.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def PoptorchReturnAllocations
    : Pass<"poptorch-return-allocations", "func::FuncOp"> {
  let summary = "Return a reshaped view of a buffer the function allocates as the buffer";
  let description = [{
    After bufferization, before buffer-results-to-out-params: a result that
    is a chain of memref.expand_shape / memref.collapse_shape over a static
    memref.alloc of the function's body (a linear layer's (B * S, N) result
    returned as (B, S, N), the last op of a repeated layer) gets the buffer
    allocated in the returned shape, viewed in the old one by its other
    users. buffer-results-to-out-params{hoist-static-allocs} replaces only a
    returned allocation itself with the caller's buffer, and copied a view
    into it: now the function computes into the caller's buffer. A result
    whose buffer another result also views is left alone.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def PoptorchBufferLiveRanges : Pass<"poptorch-buffer-live-ranges"> {
  let summary = "Allocate each buffer at its first use, free it after its last, compute results in place";
  let description = [{
    After the deallocation pipeline, which frees a buffer at the end of the
    block that allocates it: in every block, each `memref.alloc` moves down
    to just before the first op that uses the buffer, and each unconditional
    `memref.dealloc` of a buffer allocated in the same block moves up to just
    after the last op that uses the buffer or any value that may alias it
    (views, results and region arguments of the ops it is passed to). A
    buffer whose address escapes (returned, or taken as an integer) keeps its
    deallocation. The buffer pool then reuses freed buffers within one call,
    and a program holds at once only the buffers that are live, not all of
    them.

    Before that, a buffer allocated only to be copied into a result buffer of
    a public function (an argument without `poptorch.role` that nothing else
    uses: a training step's new weights and optimizer state) and not used
    after the copy is replaced by the result buffer, and the copy removed.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def PoptorchVerifyReadonlyArguments
    : Pass<"poptorch-verify-readonly-arguments", "ModuleOp"> {
  let summary = "Reject a bufferized program that writes memory its caller owns";
  let description = [{
    After bufferization: follows each memref argument that carries
    `poptorch.role` through every view of it (subviews, casts, reshapes,
    transposes), into the functions it is passed to and through loop-carried
    values, and fails on any op that writes or frees such memory, naming the
    op, its source location and the argument. An op on that memory whose
    effects are unknown is reported the same way: a write must be ruled out,
    not assumed away.
  }];
}

def PoptorchPrepackParameters : Pass<"poptorch-prepack-parameters", "func::FuncOp"> {
  let summary = "Take parameters in the layout the program reads them in";
  let description = [{
    A parameter argument (`poptorch.role = "parameter"`) whose only uses are
    one and the same `poptorch.permute` becomes an argument of the permuted
    type, marked `poptorch.permuted = array<i64: dims>`; the runtime applies
    the permutation once, when it uploads the weights, instead of on every
    call (the transposed weight of every linear layer). Embedding lookups
    of the parameter do not prevent it (a table tied with a linear head):
    they read the prepacked argument through the inverse `poptorch.permute`,
    which poptorch-fuse-elementwise folds into their element reads.
  }];
}

def PoptorchPackWeights : Pass<"poptorch-pack-weights", "func::FuncOp"> {
  let summary = "Lay out the weights of matmuls in panels of their register block's columns";
  let description = [{
    A parameter argument of a public function (`poptorch.role =
    "parameter"`) of type K x N whose only uses are as the B operand of
    `linalg.matmul`s (a linear layer's prepacked, transposed weight) becomes
    an argument of type (N / nr) x K x nr: panel p holds columns
    [p nr, (p + 1) nr), each row of it contiguous. nr is the column width of
    the register block poptorch-tile-and-vectorize gives the matmul (see
    contractionBlockColumns), so a register tile streams one contiguous
    panel: read in place, every row of a K x N weight is a new page for the
    nr columns that a tile reads, and a skinny (batch 1 or 8) matmul cannot
    reuse a per-call packed copy. Each matmul becomes a `linalg.generic`
    contraction over (m, panel, column, k) into its result expanded to
    M x (N / nr) x nr. The argument is marked `poptorch.packed_shape` (the
    shape the runtime views the original parameter as) and
    `poptorch.permuted` (the permutation of that view), which the runtime
    applies when it uploads the weights. Weights with N not a multiple of nr
    wider than one register block are left as they are.

    With `bf16-pairs` (set where poptorch-tile-and-vectorize's `bf16-dot`
    is), a bfloat16 weight with an even K is laid out in pairs of rows,
    (N / nr) x (K / 2) x nr x 2: element (p, kp, j, r) is row 2 kp + r of
    column p nr + j, the order in which AVX512-BF16's dot products take a
    register of B. The matmul becomes a contraction over (m, panel, column,
    kp, kr) with A viewed as M x (K / 2) x 2, and its register tiles read
    each row of pairs with one load instead of interleaving two rows of B.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers: 512 or 256 (see "
           "poptorch-tile-and-vectorize)">,
    Option<"bf16Pairs", "bf16-pairs", "bool", /*default=*/"false",
           "Lay out bfloat16 weights in pairs of rows of K for AVX512-BF16 "
           "dot products (see poptorch-tile-and-vectorize's bf16-dot)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def PoptorchDeviceIterations : Pass<"poptorch-device-iterations", "ModuleOp"> {
  let summary = "Wrap @main in the device-iteration loop (the Poplar Repeat analog)";
  let description = [{
    The captured @main computes one micro-batch. This pass turns it into a
    program that runs `iterations` micro-batches in an scf.for: every input
    argument becomes `[iterations, replicas, <micro-batch shape>]` and each
    iteration reads its slice (for replica `r`, read from an extra trailing
    `tensor<i64>` argument with `poptorch.role = "replica"` when
    `replicas` > 1). Buffer updates (`poptorch.updates`) are loop-carried, so
    iteration i + 1 sees the buffers iteration i wrote. Outputs are
    collected as PopTorch's outputMode says: every `period`-th iteration's
    output stacked along a new leading dimension of size
    `iterations / period` (All: period 1, Final: period = iterations,
    EveryN: period N), or, with `sum`, added up over all iterations.
    The compiler runs it after tile-and-vectorize, so the body it wraps is
    already optimized for one micro-batch.
  }];
  let options = [
    Option<"iterations", "iterations", "int64_t", "1",
           "Device iterations per call">,
    Option<"replicas", "replicas", "int64_t", "1",
           "Replication factor (the size of the replica dimension of inputs)">,
    Option<"period", "period", "int64_t", "1",
           "Keep the outputs of every period-th iteration">,
    Option<"sum", "sum", "bool", "false",
           "Sum the outputs over the iterations instead of stacking them">,
    Option<"pipeline", "pipeline", "bool", "false",
           "Overlap the pipeline stages (calls of poptorch-outline-stages' "
           "functions) across micro-batches; otherwise they are inlined and "
           "run one after another">
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def PoptorchOutlineStages : Pass<"poptorch-outline-stages", "ModuleOp"> {
  let summary = "Outline each pipeline stage of @main into a function";
  let description = [{
    The captured ops carry `poptorch.stage` (poptorch.BeginBlock / Block).
    When @main has ops on two or more stages, each stage becomes a private
    function `@main_stage<k>` (`poptorch.pipeline_stage = k`, k dense from
    0) and @main calls them in order. Stage k's arguments are the @main
    arguments it reads, then the values stage k - 1 hands on; its results
    are the values it hands on to stage k + 1 (a value used by a later stage
    passes through the stages in between), then the @main results it
    computes (`poptorch.result = <index>`). Constants are cloned into the
    stages that use them; an op without a stage runs in the latest stage of
    its operands. poptorch-device-iterations later either overlaps the
    stages across micro-batches or inlines them back.
  }];
}

def PoptorchOverlapStages : Pass<"poptorch-overlap-stages", "ModuleOp"> {
  let summary = "Run independent stage calls of one pipeline step concurrently";
  let description = [{
    Runs after bufferization. In every block of the public functions,
    consecutive calls of pipeline-stage functions whose memref operands
    share no underlying buffer (through views) form a group, as long as
    only side-effect-free ops (views, allocations) sit between them; every
    call of a group but the last becomes an `async.execute` (a task of the
    async runtime's worker pool), the last runs on the calling thread, and
    the group ends by awaiting the tasks. Any op with memory effects ends a
    group first, so the program's order of effects is kept.
  }];
}

def PoptorchTestBreak : Pass<"poptorch-test-break", "ModuleOp"> {
  let summary = "Test-only: break the lowering of one op on purpose";
  let description = [{
    For the debugging tools' tests (docs/debugging.md). `mode=fail` makes the
    pass fail on the `index`-th op named `op` (a failing pass, for failure
    reproducers); `mode=perturb` negates that op's first result (a wrong
    lowering, for golden bisection); `mode=invalid` replaces that result with
    a `poptorch.neg` without operands, which does not verify (the pass
    itself succeeds: a pass that leaves invalid IR behind). Compile runs put
    it in front of the
    pipeline when POPTORCH_TEST_BREAK=<mode>:<op>[:<index>] is set.
  }];
  let options = [
    Option<"opName", "op", "std::string", "\"\"", "the op to break">,
    Option<"mode", "mode", "std::string", "\"fail\"", "fail, perturb or invalid">,
    Option<"index", "index", "int64_t", "0", "which occurrence of the op">,
  ];
}

#endif // POPTORCH_TRANSFORMS_PASSES_TD
