//===- PoptorchDialect.h - the poptorch dialect ---------------------------===//
#ifndef POPTORCH_DIALECT_POPTORCH_IR_POPTORCHDIALECT_H
#define POPTORCH_DIALECT_POPTORCH_IR_POPTORCHDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "poptorch/Dialect/Poptorch/IR/PoptorchOpsDialect.h.inc"

namespace mlir::OpTrait::poptorch {
/// Verifies the contract of elementwise ops: operands broadcast (numpy rules)
/// to the result shape and share one element type, which the result has too.
LogicalResult verifyElementwiseOp(Operation *op);

template <typename ConcreteType>
class ElementwiseOpTrait : public TraitBase<ConcreteType, ElementwiseOpTrait> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyElementwiseOp(op);
  }
};
} // namespace mlir::OpTrait::poptorch

#define GET_OP_CLASSES
#include "poptorch/Dialect/Poptorch/IR/PoptorchOps.h.inc"

#endif // POPTORCH_DIALECT_POPTORCH_IR_POPTORCHDIALECT_H
