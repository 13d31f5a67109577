//===- TaskRuntime.cpp - The async runtime of compiled programs -----------===//
//
// The async dialect lowers a parallel loop to coroutines: the loop's blocks
// are tasks handed over with mlirAsyncRuntimeExecute, each completes a token,
// and the caller awaits the group of tokens. The reference implementation
// (libmlir_async_runtime) runs tasks on a process-wide pool of its own, one
// thread per core, which sleeps when idle. Under torch that made two pools
// on two cores: right after an eager op, torch's OpenMP threads keep
// spinning on the cores our workers wanted (a small model at batch 8 ran at
// 0.83x eager in make bench and 1.3x alone), and every parallel loop paid
// for waking a sleeping worker.
//
// Here a program call is a team: the embedder's runner (under torch,
// at::parallel_for over its intra-op threads) calls teamBody once per
// member; member 0 runs the program, the others run queued tasks until it
// is done. A thread that blocks in an await runs queued tasks meanwhile, so
// a team of one (torch.set_num_threads(1), or a call from inside another
// parallel region) still completes every task. Idle members spin briefly
// before they sleep. The call returns once every member has left the
// program's code, so a program may be freed as soon as its call returns.
//
// A parallel loop of a kernel is not a coroutine: the kernel calls
// poptorch_parallel_for with a function that runs a range of the loop's
// iterations (mlir/lib/Transforms/ParallelLoops.cpp). The caller cuts the
// iterations into chunks, queues one helper per other member, and claims
// chunks with its helpers until none is left.
//
// Tokens, values and groups follow the reference semantics: a token or a
// value starts with two references (the task's and the caller's), a group
// with one; awaiters registered with Await*AndExecute run on the thread that
// completes what they wait for.
//
//===----------------------------------------------------------------------===//

#include "TaskRuntime.h"

#include "llvm/ADT/SmallVector.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace poptorch_bridge {
namespace {

using CoroHandle = void *;
using CoroResume = void (*)(void *);

/// How long an idle member spins (running any task that appears) before it
/// sleeps. Sleeping and being woken costs a parallel loop 50-70 us on these
/// VMs (the idle vCPU halts); a program's serial stretches between two
/// parallel loops are mostly shorter than this.
constexpr std::chrono::microseconds kSpinTime{200};

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

//===----------------------------------------------------------------------===//
// Teams
//===----------------------------------------------------------------------===//

struct Team {
  std::mutex mu;
  std::condition_variable cv;
  // Queued tasks, first in first out from `head` (guarded by mu). Emptied
  // whenever the last is taken, so the inline room holds what a call queues
  // at once and a call allocates nothing for its queue.
  llvm::SmallVector<std::pair<CoroHandle, CoroResume>, 16> queue;
  size_t head = 0;
  std::atomic<int64_t> queued{0};
  std::atomic<int> sleepers{0};
  std::atomic<bool> done{false};
};

/// The team of the program call this thread works for.
thread_local Team *currentTeam = nullptr;
/// The embedder's context of that call (runOnTeam, ScopedCallContext).
thread_local void *currentCall = nullptr;

bool runQueuedTask(Team &team) {
  if (team.queued.load(std::memory_order_acquire) == 0)
    return false;
  std::pair<CoroHandle, CoroResume> task;
  {
    std::lock_guard<std::mutex> lock(team.mu);
    if (team.queue.empty())
      return false;
    task = team.queue[team.head++];
    if (team.head == team.queue.size()) {
      team.queue.clear();
      team.head = 0;
    }
    team.queued.fetch_sub(1, std::memory_order_relaxed);
  }
  task.second(task.first);
  return true;
}

void enqueue(CoroHandle handle, CoroResume resume) {
  Team *team = currentTeam;
  if (!team) {
    // Not in a program call (nothing here does that): run it now.
    resume(handle);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(team->mu);
    team->queue.emplace_back(handle, resume);
    team->queued.fetch_add(1, std::memory_order_release);
  }
  if (team->sleepers.load(std::memory_order_seq_cst) > 0)
    team->cv.notify_one();
}

/// Wakes the sleeping members of this thread's team: something they may be
/// waiting for completed. The completion is a seq_cst store made before this
/// seq_cst load of `sleepers`; a member going to sleep increments `sleepers`
/// before it checks its condition, so one of the two sees the other.
void wakeTeam() {
  Team *team = currentTeam;
  if (team && team->sleepers.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(team->mu);
    team->cv.notify_all();
  }
}

/// Returns once `ready()`, running queued tasks of this thread's team
/// meanwhile.
template <typename Ready> void waitUntil(Ready ready) {
  Team *team = currentTeam;
  if (!team) {
    while (!ready())
      std::this_thread::yield();
    return;
  }
  auto idleSince = std::chrono::steady_clock::now();
  unsigned spins = 0;
  while (!ready()) {
    if (runQueuedTask(*team)) {
      spins = 0;
      idleSince = std::chrono::steady_clock::now();
      continue;
    }
    cpuRelax();
    if (++spins % 64 != 0 ||
        std::chrono::steady_clock::now() - idleSince < kSpinTime)
      continue;
    std::unique_lock<std::mutex> lock(team->mu);
    team->sleepers.fetch_add(1, std::memory_order_seq_cst);
    team->cv.wait(lock, [&] { return ready() || !team->queue.empty(); });
    team->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    spins = 0;
    idleSince = std::chrono::steady_clock::now();
  }
}

struct TeamCall {
  void (*entry)(void **);
  void **args;
  void *context;
  Team team;
};

void teamBody(void *context, int64_t begin, int64_t /*end*/) {
  auto *call = static_cast<TeamCall *>(context);
  Team &team = call->team;
  Team *outer = currentTeam;
  currentTeam = &team;
  ScopedCallContext scope(call->context);
  if (begin == 0) {
    call->entry(call->args);
    team.done.store(true, std::memory_order_seq_cst);
    wakeTeam();
  }
  // Members leave when the program has returned and no task is left (the
  // program awaits all it starts, so none normally is).
  waitUntil([&] {
    return team.done.load(std::memory_order_seq_cst) &&
           team.queued.load(std::memory_order_acquire) == 0;
  });
  currentTeam = outer;
}

void runAlone(TeamBody body, void *context) { body(context, 0, 1); }

std::atomic<TeamRunner> &teamRunner() {
  static std::atomic<TeamRunner> runner{&runAlone};
  return runner;
}

//===----------------------------------------------------------------------===//
// Tokens, values and groups
//===----------------------------------------------------------------------===//

struct RefCounted {
  explicit RefCounted(int64_t refs) : refs(refs) {}
  virtual ~RefCounted() = default;
  void addRef(int64_t n) { refs.fetch_add(n, std::memory_order_relaxed); }
  void dropRef(int64_t n) {
    if (refs.fetch_sub(n, std::memory_order_acq_rel) == n)
      delete this;
  }
  std::atomic<int64_t> refs;
};

/// Something to run when an object completes.
struct Awaiter {
  void (*fn)(void *, void *);
  void *a;
  void *b;
};

void resumeAwaiter(void *handle, void *resume) {
  reinterpret_cast<CoroResume>(resume)(handle);
}

enum State : int8_t { kPending = 0, kAvailable = 1, kError = 2 };

/// An async.token, or an async.value with its payload.
struct Completable final : RefCounted {
  Completable() : RefCounted(2) {}
  std::atomic<int8_t> state{kPending};
  std::mutex mu;
  llvm::SmallVector<Awaiter, 1> awaiters; // guarded by mu
  std::vector<std::byte> storage;
  bool isDone() const {
    return state.load(std::memory_order_seq_cst) != kPending;
  }
};

struct Group final : RefCounted {
  explicit Group(int64_t size) : RefCounted(1), pending(size) {}
  std::atomic<int64_t> pending;
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> rank{0};
  std::mutex mu;
  llvm::SmallVector<Awaiter, 1> awaiters; // guarded by mu
};

void *handOut(RefCounted *object) { return object; }
Completable *asCompletable(void *p) {
  return static_cast<Completable *>(static_cast<RefCounted *>(p));
}
Group *asGroup(void *p) {
  return static_cast<Group *>(static_cast<RefCounted *>(p));
}

void runAll(llvm::SmallVector<Awaiter, 1> &awaiters) {
  for (const Awaiter &a : awaiters)
    a.fn(a.a, a.b);
}

void complete(Completable *c, State state) {
  llvm::SmallVector<Awaiter, 1> awaiters;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    c->state.store(state, std::memory_order_seq_cst);
    awaiters.swap(c->awaiters);
  }
  runAll(awaiters);
  wakeTeam();
  c->dropRef(1); // the reference held for the task that completes it
}

void groupMemberDone(Group *group, bool error) {
  if (error)
    group->errors.fetch_add(1, std::memory_order_relaxed);
  if (group->pending.fetch_sub(1, std::memory_order_seq_cst) != 1)
    return;
  llvm::SmallVector<Awaiter, 1> awaiters;
  {
    std::lock_guard<std::mutex> lock(group->mu);
    awaiters.swap(group->awaiters);
  }
  runAll(awaiters);
  wakeTeam();
}

/// Runs `awaiter` now if `isDone()` (checked under `mu`), else queues it in
/// `awaiters`.
template <typename IsDone>
void runOrQueue(std::mutex &mu, llvm::SmallVector<Awaiter, 1> &awaiters,
                IsDone isDone, Awaiter awaiter) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!isDone()) {
      awaiters.push_back(awaiter);
      return;
    }
  }
  awaiter.fn(awaiter.a, awaiter.b);
}

//===----------------------------------------------------------------------===//
// The C API that lowered async code calls
//===----------------------------------------------------------------------===//

void apiAddRef(void *object, int64_t n) {
  static_cast<RefCounted *>(object)->addRef(n);
}
void apiDropRef(void *object, int64_t n) {
  static_cast<RefCounted *>(object)->dropRef(n);
}
void *apiCreateToken() { return handOut(new Completable()); }
void *apiCreateValue(int64_t size) {
  auto *value = new Completable();
  value->storage.resize(size);
  return handOut(value);
}
void *apiCreateGroup(int64_t size) { return handOut(new Group(size)); }

int64_t apiAddTokenToGroup(void *tokenPtr, void *groupPtr) {
  Completable *token = asCompletable(tokenPtr);
  Group *group = asGroup(groupPtr);
  int64_t rank = group->rank.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(token->mu);
    if (!token->isDone()) {
      group->addRef(1); // kept until the token completes
      token->awaiters.push_back(
          Awaiter{[](void *g, void *t) {
                    groupMemberDone(
                        static_cast<Group *>(g),
                        static_cast<Completable *>(t)->state.load() == kError);
                    static_cast<Group *>(g)->dropRef(1);
                  },
                  group, token});
      return rank;
    }
  }
  groupMemberDone(group, token->state.load() == kError);
  return rank;
}

void apiEmplace(void *object) { complete(asCompletable(object), kAvailable); }
void apiSetError(void *object) { complete(asCompletable(object), kError); }
bool apiIsError(void *object) {
  return asCompletable(object)->state.load() == kError;
}
bool apiIsGroupError(void *group) { return asGroup(group)->errors.load() > 0; }

void apiAwait(void *object) {
  Completable *c = asCompletable(object);
  waitUntil([c] { return c->isDone(); });
}
void apiAwaitAllInGroup(void *groupPtr) {
  Group *group = asGroup(groupPtr);
  waitUntil(
      [group] { return group->pending.load(std::memory_order_seq_cst) == 0; });
}

std::byte *apiGetValueStorage(void *value) {
  return asCompletable(value)->storage.data();
}

void apiExecute(CoroHandle handle, CoroResume resume) {
  enqueue(handle, resume);
}

void apiAwaitAndExecute(void *object, CoroHandle handle, CoroResume resume) {
  Completable *c = asCompletable(object);
  runOrQueue(
      c->mu, c->awaiters, [c] { return c->isDone(); },
      Awaiter{&resumeAwaiter, handle, reinterpret_cast<void *>(resume)});
}

void apiAwaitAllInGroupAndExecute(void *groupPtr, CoroHandle handle,
                                  CoroResume resume) {
  Group *group = asGroup(groupPtr);
  runOrQueue(
      group->mu, group->awaiters,
      [group] { return group->pending.load(std::memory_order_seq_cst) == 0; },
      Awaiter{&resumeAwaiter, handle, reinterpret_cast<void *>(resume)});
}

int64_t apiNumWorkerThreads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

void apiPrintCurrentThreadId() {
  std::cout << "Current thread id: " << std::this_thread::get_id() << std::endl;
}

//===----------------------------------------------------------------------===//
// Parallel loops
//===----------------------------------------------------------------------===//

using ParallelBody = void (*)(void *, int64_t, int64_t);

/// Chunks per thread of a parallel loop: more than one, so that a thread
/// slowed by the host (or by a longer chunk) leaves its share to the others.
/// The same oversharding as upstream's async-parallel-for below 4 workers,
/// which this replaced.
constexpr int64_t kChunksPerWorker = 8;

struct ParallelLoop {
  ParallelBody body;
  void *frame;
  int64_t iterations;
  int64_t chunk;
  int64_t chunks;
  std::atomic<int64_t> next{0};
  // Queued helpers that have not finished; the loop lives on its caller's
  // stack until this is 0.
  std::atomic<int64_t> helpers{0};
};

void runChunks(ParallelLoop &loop) {
  for (int64_t c;
       (c = loop.next.fetch_add(1, std::memory_order_relaxed)) < loop.chunks;) {
    int64_t begin = c * loop.chunk;
    loop.body(loop.frame, begin, std::min(begin + loop.chunk, loop.iterations));
  }
}

void runHelper(void *loopPtr) {
  auto *loop = static_cast<ParallelLoop *>(loopPtr);
  runChunks(*loop);
  // The last touch of the loop: its caller may return right after.
  loop->helpers.fetch_sub(1, std::memory_order_seq_cst);
  wakeTeam();
}

void apiParallelFor(ParallelBody body, void *frame, int64_t iterations) {
  if (iterations <= 0)
    return;
  int64_t workers = apiNumWorkerThreads();
  if (!currentTeam || iterations == 1 || workers == 1) {
    body(frame, 0, iterations);
    return;
  }
  int64_t chunks = std::min(iterations, workers * kChunksPerWorker);
  int64_t chunk = (iterations + chunks - 1) / chunks;
  ParallelLoop loop{body, frame, iterations, chunk,
                    (iterations + chunk - 1) / chunk};
  int64_t helpers = std::min(workers - 1, loop.chunks - 1);
  loop.helpers.store(helpers, std::memory_order_relaxed);
  for (int64_t h = 0; h < helpers; ++h)
    enqueue(&loop, &runHelper);
  runChunks(loop);
  // Every chunk has been claimed; the helpers finish theirs (a helper that no
  // other member took runs here, finding nothing left).
  waitUntil([&] { return loop.helpers.load(std::memory_order_seq_cst) == 0; });
}

} // namespace

void setTeamRunner(TeamRunner runner) {
  teamRunner().store(runner ? runner : &runAlone);
}

void runOnTeam(void (*entry)(void **), void **args, void *context) {
  TeamCall call{entry, args, context, {}};
  teamRunner().load()(&teamBody, &call);
}

void *callContext() { return currentCall; }

ScopedCallContext::ScopedCallContext(void *context) : outer(currentCall) {
  currentCall = context;
}
ScopedCallContext::~ScopedCallContext() { currentCall = outer; }

void addTaskRuntimeSymbols(llvm::StringMap<void *> &map) {
  auto add = [&](const char *name, auto *fn) {
    map[name] = reinterpret_cast<void *>(fn);
  };
  add("mlirAsyncRuntimeAddRef", &apiAddRef);
  add("mlirAsyncRuntimeDropRef", &apiDropRef);
  add("mlirAsyncRuntimeCreateToken", &apiCreateToken);
  add("mlirAsyncRuntimeCreateValue", &apiCreateValue);
  add("mlirAsyncRuntimeCreateGroup", &apiCreateGroup);
  add("mlirAsyncRuntimeAddTokenToGroup", &apiAddTokenToGroup);
  add("mlirAsyncRuntimeEmplaceToken", &apiEmplace);
  add("mlirAsyncRuntimeEmplaceValue", &apiEmplace);
  add("mlirAsyncRuntimeSetTokenError", &apiSetError);
  add("mlirAsyncRuntimeSetValueError", &apiSetError);
  add("mlirAsyncRuntimeIsTokenError", &apiIsError);
  add("mlirAsyncRuntimeIsValueError", &apiIsError);
  add("mlirAsyncRuntimeIsGroupError", &apiIsGroupError);
  add("mlirAsyncRuntimeAwaitToken", &apiAwait);
  add("mlirAsyncRuntimeAwaitValue", &apiAwait);
  add("mlirAsyncRuntimeAwaitAllInGroup", &apiAwaitAllInGroup);
  add("mlirAsyncRuntimeGetValueStorage", &apiGetValueStorage);
  add("mlirAsyncRuntimeExecute", &apiExecute);
  add("mlirAsyncRuntimeAwaitTokenAndExecute", &apiAwaitAndExecute);
  add("mlirAsyncRuntimeAwaitValueAndExecute", &apiAwaitAndExecute);
  add("mlirAsyncRuntimeAwaitAllInGroupAndExecute",
      &apiAwaitAllInGroupAndExecute);
  add("mlirAsyncRuntimGetNumWorkerThreads", &apiNumWorkerThreads);
  add("mlirAsyncRuntimePrintCurrentThreadId", &apiPrintCurrentThreadId);
  add("poptorch_parallel_for", &apiParallelFor);
}

} // namespace poptorch_bridge
