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
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"
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
    register-sized blocks, vectorizes the tiles and the elementwise ops, and
    marks the outermost tile loops parallel so that they use every core.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::tensor::TensorDialect",
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::ub::UBDialect"
  ];
}

#endif // POPTORCH_TRANSFORMS_PASSES_TD
