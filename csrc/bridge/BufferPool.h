//===- BufferPool.h - Reused heap buffers for compiled programs -*- C++ -*-===//
//
// Compiled programs allocate their intermediate buffers through
// finalize-memref-to-llvm's generic allocation functions
// (_mlir_memref_to_llvm_alloc and friends), which resolve to this pool.
//
//===----------------------------------------------------------------------===//

#ifndef POPTORCH_BRIDGE_BUFFERPOOL_H
#define POPTORCH_BRIDGE_BUFFERPOOL_H

#include "llvm/ADT/StringMap.h"

#include <cstddef>

namespace poptorch_bridge {

/// Adds the allocation functions compiled code calls to `map`, by symbol name.
void addBufferPoolSymbols(llvm::StringMap<void *> &map);

/// Bytes held by the pool for reuse (for tests and diagnostics).
size_t bufferPoolCachedBytes();

} // namespace poptorch_bridge

#endif // POPTORCH_BRIDGE_BUFFERPOOL_H
