//===- Bridge.h - torch-free interface between capture and MLIR ---------===//
//
// The torch side (csrc/*.cpp) and the MLIR side (csrc/bridge/*.cpp) meet
// only through these plain C++ types, so that no translation unit includes
// both torch and MLIR headers (they disagree on exceptions and flags).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace poptorch_bridge {

enum class ElemType : uint8_t {
  F32,
  F64,
  F16,
  BF16,
  Bool,
  I8,
  U8,
  I16,
  I32,
  I64
};

size_t elemSize(ElemType t);
const char *elemName(ElemType t);

struct TensorType {
  std::vector<int64_t> shape;
  ElemType dtype = ElemType::F32;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  bool operator==(const TensorType &o) const {
    return shape == o.shape && dtype == o.dtype;
  }
};

using ValueId = int64_t;

struct AttrValue {
  enum Kind { F64, I64, Bool, Str, Ints } kind = I64;
  double f = 0;
  int64_t i = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;
};

struct SourceLoc {
  std::string file;
  int line = 0;
  std::string scope; // poptorch.NameScope names, outermost first, '/'-joined
};

/// Raised for anything the MLIR side rejects (verifier, pass, JIT).
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Raised by Program::run once releaseAllPrograms has run (interpreter exit).
struct ProgramReleased : CompileError {
  ProgramReleased()
      : CompileError("the program was released (the interpreter is exiting)") {}
};

/// Builds the captured `func.func @main` of a `poptorch` dialect module.
class GraphBuilder {
public:
  GraphBuilder();
  ~GraphBuilder();

  /// role: "input", "parameter" or "buffer"; name: a user-facing name.
  ValueId addArgument(const TensorType &type, const std::string &name,
                      const std::string &role);
  /// A dense constant; `data` holds numel * elemSize bytes, row-major.
  ValueId addConstant(const TensorType &type, const void *data);
  /// Creates the dialect op `opName` (e.g. "poptorch.add"). One operand group
  /// per ODS operand (0 or 1 values for optional operands, n for variadic).
  /// Throws CompileError with the verifier's message when the op is invalid.
  std::vector<ValueId>
  addOp(const std::string &opName,
        const std::vector<std::vector<ValueId>> &operandGroups,
        const std::vector<std::pair<std::string, AttrValue>> &attrs,
        const std::vector<TensorType> &resultTypes, const SourceLoc &loc);
  /// Attributes added to every op created from now on (the current block,
  /// stage, ipu and phase: `poptorch.block`, `poptorch.stage`, ...). With
  /// `backfill`, ops created before that carry none of them get them too.
  void setStamp(std::vector<std::pair<std::string, AttrValue>> attrs,
                bool backfill);
  /// True if `opName` is a registered op of the dialect.
  bool hasOp(const std::string &opName) const;
  TensorType typeOf(ValueId v) const;
  /// Finishes the function: returns `outputs`, then the new value of every
  /// mutated buffer (each result carries `poptorch.updates = <arg index>`).
  void finish(const std::vector<ValueId> &outputs,
              const std::vector<std::pair<int64_t, ValueId>> &bufferUpdates);
  /// The module as text (with source locations when `debugInfo`).
  std::string print(bool debugInfo) const;
  /// The module with `values` appended to @main's results (arguments are
  /// skipped), and the ids appended. Before finish(), @main returns only
  /// `values` (the program so far, for values read while tracing).
  std::pair<std::string, std::vector<ValueId>>
  printWithValues(const std::vector<ValueId> &values) const;
  /// True if `v` is computed from argument `arg`.
  bool dependsOnArgument(ValueId v, int64_t arg) const;

  // Control flow (poptorch.for_loop, poptorch.cond): ops created between
  // begin and end go into the region's block. Values created inside a region
  // are visible only there (the tracer poisons tensors holding them).
  /// Opens `scf.for %i = 0 to count iter_args(inits)`; returns the ids of
  /// the body's iteration arguments.
  std::vector<ValueId> beginForLoop(int64_t count,
                                    const std::vector<ValueId> &inits,
                                    const SourceLoc &loc);
  /// Closes the innermost loop, its body yielding `yields` (their types must
  /// be the iteration arguments'); returns the loop's results.
  std::vector<ValueId> endForLoop(const std::vector<ValueId> &yields);
  /// Opens `scf.if` on the one-element bool tensor `cond`: ops go into the
  /// then branch until elseBranch, then into the else branch until endIf.
  void beginIf(ValueId cond, const SourceLoc &loc);
  void elseBranch(const std::vector<ValueId> &thenYields);
  /// Closes the innermost conditional; both branches' yields must have the
  /// same types. Returns its results.
  std::vector<ValueId> endIf(const std::vector<ValueId> &elseYields);
  /// The number of values so far: ids at or above it are made later.
  ValueId nextValueId() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// A memref argument for a compiled program: contiguous row-major data.
struct BufferRef {
  void *data;
  std::vector<int64_t> shape;
};

struct CompileOptions {
  /// Dumps (and where a failing pass writes its reproducer); empty: no
  /// dumps, reproducers go to a new temp folder.
  std::string dumpDir;
  /// Passes run right after the tile-and-vectorize stage as stage
  /// "device-loop" (the poptorch-device-iterations pass with its options);
  /// empty: none.
  std::string deviceLoop;
  /// PipelinedExecution: poptorch-outline-stages runs first (stage
  /// "outline-stages"), so that deviceLoop's pass can overlap the stages.
  bool pipelineStages = false;
  /// Executable cache (Options.enableExecutableCaching): the entry's file and
  /// the key it must record. A valid entry is loaded instead of compiling; a
  /// missing, stale or damaged one is (re)written after compiling.
  std::string cachePath;
  std::string cacheKey;
  bool printStageTimings = false;
  /// Keep the module text after every top-level pass (dumps, TRACE logs).
  bool snapshotPasses = false;
  /// LLVM optimization level of the JIT (0-3).
  int optLevel = 3;
};

/// One top-level pass of the pipeline (a `func.func(...)` group counts as one).
struct PassRecord {
  std::string stage;    // the pipeline stage it belongs to
  std::string pipeline; // its textual form, `builtin.module(<this>)` runs it
  std::string name;     // a file-name-safe short name
  double seconds = 0;
  std::string text; // the module after it; empty unless snapshotPasses
};

/// How a program reads one argument: the caller views the tensor as `shape`
/// (empty: its own shape), then permutes that view by `perm` (empty: none),
/// and passes it contiguous. A linear layer's transposed weight is
/// {{}, {1, 0}}; one laid out in panels of nr columns {{N / nr, nr, K},
/// {0, 2, 1}}.
struct ArgumentLayout {
  std::vector<int64_t> shape, perm;
};

/// A JIT-compiled program. Thread-compatible; `run` may be called repeatedly.
class Program {
public:
  /// Parses `moduleText` (a captured module), runs every pipeline stage and
  /// JIT-compiles the result.
  static std::unique_ptr<Program> compile(const std::string &moduleText,
                                          const CompileOptions &options);
  virtual ~Program();
  /// Runs `main`: inputs in argument order, then one buffer per result.
  virtual void run(const std::vector<BufferRef> &inputs,
                   const std::vector<BufferRef> &outputs) = 0;
  /// Stage name and module text after it, in pipeline order ("captured" first).
  virtual const std::vector<std::pair<std::string, std::string>> &
  stages() const = 0;
  /// Seconds spent per stage, including "jit".
  virtual const std::vector<std::pair<std::string, double>> &
  timings() const = 0;
  /// Every top-level pass that ran, in order.
  virtual const std::vector<PassRecord> &passes() const = 0;
  /// For each argument of @main: the layout the program expects the caller
  /// to have given it (poptorch-prepack-parameters, poptorch-pack-weights).
  virtual const std::vector<ArgumentLayout> &argumentLayouts() const = 0;
  /// How the executable was obtained: "compiled", "loaded" (from the cache),
  /// or "recompiled: <why the cache entry was rejected>".
  virtual const std::string &origin() const = 0;
  /// The schedule poptorch-device-iterations chose for pipeline stages
  /// (@main's `poptorch.pipeline`: "overlapped" or "sequential: <why>");
  /// empty without stages or when loaded from the cache.
  virtual const std::string &pipelineSchedule() const = 0;
};

/// The host CPU (name and features) the JIT compiles for: part of the cache
/// key, since object code for one CPU may not run on another.
std::string hostCpuDescription();

/// Releases every live JIT engine; called at interpreter exit so that no
/// ExecutionEngine outlives LLVM's static destructors. Calls in flight on
/// other threads finish first; later calls throw ProgramReleased.
void releaseAllPrograms();

/// Makes LLVM's fatal errors (report_fatal_error: a failed instruction
/// selection, a broken invariant of a pass) CompileErrors thrown where they
/// happen, and its allocation failures std::bad_alloc, instead of ending the
/// process. Installed once, when the extension loads.
void installFatalErrorHandlers();

/// poptorch.host_kernel's runtime (csrc/HostKernels.cpp): called by a
/// running program with its `n` unranked memref arguments as 2n words
/// (rank, descriptor pointer): the op's description, its inputs, then its
/// results. Must not throw: it reports a failure with hostKernelFailed.
using HostKernelRunner = void (*)(int64_t n, const intptr_t *words);
void setHostKernelRunner(HostKernelRunner runner);
/// Records that a host kernel failed during the program call this thread
/// works for; Program::run throws the call's first failure when the program
/// returns (each call its own, whatever the threads running at once).
void hostKernelFailed(const std::string &message);

/// The pipeline as (stage, textual pass pipeline) pairs.
std::vector<std::pair<std::string, std::string>> pipelineStages();

/// The checksum that poptorch's cache files (executable entries, Meta
/// results) end with: xxh3 of everything before it.
uint64_t cacheChecksum(std::string_view data);

/// Writes `data` to `path` atomically (a temporary file beside it, then a
/// rename), creating the folders above it, so that a concurrent reader never
/// sees half a file. Returns false if it could not: a cache only misses the
/// file.
bool writeFileAtomically(const std::string &path, const std::string &data);

} // namespace poptorch_bridge
