//===- Broadcast.h - numpy/PyTorch broadcasting of static shapes ---------===//
#ifndef POPTORCH_DIALECT_POPTORCH_IR_BROADCAST_H
#define POPTORCH_DIALECT_POPTORCH_IR_BROADCAST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>

namespace mlir::poptorch {

/// The shape two operands broadcast to (trailing-aligned; a 1 stretches).
/// Assumes the shapes are compatible.
inline llvm::SmallVector<int64_t> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                  llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// Whether `from` broadcasts to `to`: trailing-aligned, each dim equal or 1.
inline bool broadcastsTo(llvm::ArrayRef<int64_t> from,
                         llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i])
      return false;
  return true;
}

} // namespace mlir::poptorch

#endif // POPTORCH_DIALECT_POPTORCH_IR_BROADCAST_H
