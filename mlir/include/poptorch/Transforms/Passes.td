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
  }];
  let dependentDialects = ["::mlir::poptorch::PoptorchDialect"];
}

def ConvertPoptorchToLinalg : Pass<"convert-poptorch-to-linalg", "ModuleOp"> {
  let summary = "Lower the poptorch dialect to linalg, tensor, arith and math";
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    // loops (gcd, zeta) and C library calls (lgamma, hypot) in scalar formulas
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect"
  ];
}

def PoptorchFuseElementwise : Pass<"poptorch-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse elementwise linalg ops, keeping contractions and convolutions named";
  let description = [{
    Upstream elementwise fusion and reshape-by-expansion propagation, with a
    control function that never rewrites a named contraction (matmul,
    batch_matmul, ...) or convolution/pooling op, so that
    poptorch-tile-and-vectorize can still match them. A producer is fused
    only into its single user.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::affine::AffineDialect"
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
           "0 parallelizes everything, -1 nothing">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::tensor::TensorDialect",
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::ub::UBDialect"
  ];
}

def PoptorchApproximateMath : Pass<"poptorch-approximate-math"> {
  let summary = "Replace math ops that have no LLVM intrinsic by polynomial approximations";
  let description = [{
    Rewrites math.erf (scalar or vector) into arith ops, so that vectorized
    elementwise code stays vectorized instead of becoming one libm call per
    element.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect"];
}

def PoptorchDistinctResults : Pass<"poptorch-distinct-results", "func::FuncOp"> {
  let summary = "Copy function results that repeat an earlier result";
  let description = [{
    Every result of a function becomes its own caller-provided buffer. When
    two results are the same SSA value (e.g. after CSE), the later ones are
    replaced by a linalg.copy so that bufferization gives each its buffer.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def PoptorchPrepackParameters : Pass<"poptorch-prepack-parameters", "func::FuncOp"> {
  let summary = "Take parameters in the layout the program reads them in";
  let description = [{
    A parameter argument (`poptorch.role = "parameter"`) whose only uses are
    one and the same `poptorch.permute` becomes an argument of the permuted
    type, marked `poptorch.permuted = array<i64: dims>`; the runtime applies
    the permutation once, when it uploads the weights, instead of on every
    call (the transposed weight of every linear layer).
  }];
}

#endif // POPTORCH_TRANSFORMS_PASSES_TD
