//===- TaskRuntime.h - The async runtime of compiled programs ---*- C++ -*-===//
//
// Compiled programs run their parallel loops through poptorch_parallel_for
// (a function that runs a range of the iterations, and their count), and
// overlapped pipeline stages as tasks of the MLIR async dialect's runtime API
// (mlirAsyncRuntime*: tokens, values, groups, execute and await). This is
// poptorch's implementation of both. A program call
// runs on a team of threads that the embedder provides (under torch: its
// intra-op threads, see setTeamRunner); the team's threads run the queued
// tasks, and a thread that has to wait runs queued tasks meanwhile. When
// the call returns, every thread of the team has left the program's code.
//
//===----------------------------------------------------------------------===//

#ifndef POPTORCH_BRIDGE_TASKRUNTIME_H
#define POPTORCH_BRIDGE_TASKRUNTIME_H

#include "llvm/ADT/StringMap.h"

#include <cstdint>

namespace poptorch_bridge {

/// One member's share of a team: called once per member with a range of
/// member indices [begin, end); the member given index 0 runs the program.
using TeamBody = void (*)(void *context, int64_t begin, int64_t end);

/// Runs `body` over the member indices [0, n) of a team of threads, where n
/// is the team's size (1 runs everything on the caller), and returns when
/// every call of `body` has returned.
using TeamRunner = void (*)(TeamBody body, void *context);

/// Sets the team runner of every later program call. The default runs a
/// team of one: the caller alone.
void setTeamRunner(TeamRunner runner);

/// Adds poptorch_parallel_for and the async runtime API (mlirAsyncRuntime*)
/// to `map`, by symbol name.
void addTaskRuntimeSymbols(llvm::StringMap<void *> &map);

/// Calls `entry(args)` on a team (see setTeamRunner); every member sees
/// `context` as callContext() while it works for this call.
void runOnTeam(void (*entry)(void **), void **args, void *context);

/// The context of the program call this thread works for, or null.
void *callContext();

/// Makes `context` this thread's call context while it lives (a call that
/// runs on the calling thread alone, without a team).
class ScopedCallContext {
public:
  explicit ScopedCallContext(void *context);
  ~ScopedCallContext();
  ScopedCallContext(const ScopedCallContext &) = delete;
  ScopedCallContext &operator=(const ScopedCallContext &) = delete;

private:
  void *outer;
};

} // namespace poptorch_bridge

#endif // POPTORCH_BRIDGE_TASKRUNTIME_H
