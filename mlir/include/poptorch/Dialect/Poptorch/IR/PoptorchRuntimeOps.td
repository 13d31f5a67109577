//===- PoptorchRuntimeOps.td - ops of the compiled program -*- tablegen -*-===//
//
// Ops that the compiler creates on the way to LLVM and that are never
// captured from torch (so they are not in the op table): a parallel loop
// handed to the task runtime (csrc/bridge/TaskRuntime.cpp). See
// mlir/lib/Transforms/ParallelLoops.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_RUNTIME_OPS_TD
#define POPTORCH_RUNTIME_OPS_TD

def Poptorch_ParallelForOp : Poptorch_Op<"parallel_for",
    [RecursiveMemoryEffects]> {
  let summary = "iterations 0 .. n-1 of a loop, shared out among the team";
  let description = [{
    Runs its region on ranges [begin, end) of the iterations 0 .. `iterations`
    - 1, as the task runtime shares them out among the threads of the call:
    the entry block's two i64 arguments are `begin` and `end`. Every range is
    run exactly once and the op returns when all have run; ranges may run in
    any order and at the same time, so iterations must not depend on each
    other. poptorch-parallel-loops creates it from an scf.forall. The region
    may use values from above; it keeps its body through the conversion to the
    LLVM dialect, after which poptorch-outline-parallel makes it a function
    that the runtime's `poptorch_parallel_for` calls.
  }];
  let arguments = (ins I64:$iterations);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = "$iterations $body attr-dict";
  let hasVerifier = 1;
}

def Poptorch_ParallelYieldOp : Poptorch_Op<"parallel_yield",
    [Pure, Terminator, HasParent<"ParallelForOp">]> {
  let summary = "ends a range of a poptorch.parallel_for";
  let assemblyFormat = "attr-dict";
}

#endif // POPTORCH_RUNTIME_OPS_TD
