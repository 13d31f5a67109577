//===- TileAndVectorize.h - poptorch-tile-and-vectorize internals -------===//
//
// The steps of poptorch-tile-and-vectorize that live in files of their own.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_TRANSFORMS_TILEANDVECTORIZE_H
#define POPTORCH_TRANSFORMS_TILEANDVECTORIZE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::poptorch {

/// After vectorization (LowerVectors.cpp): hoists register tiles'
/// accumulators out of their reduction loops and lowers the vector ops of
/// `func` for registers of `lanes` f32 lanes; with `bf16Dot`, contractions
/// of bfloat16 matrices become AVX512-BF16 dot products.
void hoistAndLowerVectors(func::FuncOp func, int64_t lanes, bool bf16Dot);

} // namespace mlir::poptorch

#endif // POPTORCH_TRANSFORMS_TILEANDVECTORIZE_H
