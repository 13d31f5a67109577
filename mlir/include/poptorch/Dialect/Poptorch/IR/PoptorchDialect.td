//===- PoptorchDialect.td - the poptorch dialect -----------*- tablegen -*-===//
//
// The `poptorch` dialect: tensor-level ops with value semantics, one step
// below aten. Every op works on builtin ranked tensors with static shapes.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_DIALECT_TD
#define POPTORCH_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Poptorch_Dialect : Dialect {
  let name = "poptorch";
  let summary = "Captured PyTorch programs with value semantics";
  let description = [{
    Ops captured from the PyTorch dispatcher by poptorch's tracer. Views and
    in-place ops are already functional; operands of elementwise ops already
    have the op's compute element type (the tracer inserts `poptorch.cast`).
  }];
  let cppNamespace = "::mlir::poptorch";
  let hasConstantMaterializer = 0;
}

class Poptorch_Op<string mnemonic, list<Trait> traits = []>
    : Op<Poptorch_Dialect, mnemonic, traits>;

// Marker trait for ops whose lowering is the elementwise scalar formula
// generated from the op table.
def Poptorch_ElementwiseTrait : NativeOpTrait<"poptorch::ElementwiseOpTrait">;

#endif // POPTORCH_DIALECT_TD
