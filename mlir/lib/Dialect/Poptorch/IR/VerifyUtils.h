//===- VerifyUtils.h - helpers shared by the poptorch op verifiers --------===//
#ifndef POPTORCH_LIB_DIALECT_POPTORCH_IR_VERIFYUTILS_H
#define POPTORCH_LIB_DIALECT_POPTORCH_IR_VERIFYUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace mlir::poptorch {

inline RankedTensorType rtt(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// `dim` indexes a rank-`rank` tensor (a 0-d tensor has dim 0, as PyTorch).
inline LogicalResult checkDim(Operation *op, int64_t dim, int64_t rank,
                              StringRef what = "dim") {
  if (dim < 0 || dim >= std::max<int64_t>(rank, 1))
    return op->emitOpError()
           << what << " " << dim << " is out of range for rank " << rank;
  return success();
}

} // namespace mlir::poptorch

#endif // POPTORCH_LIB_DIALECT_POPTORCH_IR_VERIFYUTILS_H
