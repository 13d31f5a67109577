//===- Program.cpp - run the pipeline and JIT the result ----------------===//
//
// The Poplar analog: parses a captured module, runs the textual pipeline
// stage by stage (printing each stage's module for dumps and replay only
// when asked) and compiles the LLVM dialect at O3 for the host CPU, split
// into parts compiled on parallel threads and linked by an ORC LLJIT. Calls
// go through the packed C interface of @main.
//
// Parallel loops call the async runtime API, implemented by TaskRuntime.cpp
// and defined in every program's dylib by hand; a program that calls it runs
// on a team of threads (runOnTeam), which has left the program's code when
// the call returns.
//
//===----------------------------------------------------------------------===//
#include "Bridge.h"
#include "BufferPool.h"
#include "TaskRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "poptorch/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <utility>

using namespace mlir;

namespace poptorch_bridge {

std::vector<std::pair<std::string, std::string>> pipelineStages() {
  return poptorch::getCompilePipelineStages();
}

namespace {

std::mutex &registryMutex() {
  static std::mutex m;
  return m;
}
std::set<class JitProgram *> &liveProgramsSet() {
  static auto *s = new std::set<JitProgram *>();
  return *s;
}

void initOnce() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    registerAllPasses();
    poptorch::registerPoptorchPassesAndPipelines();
    return true;
  }();
  (void)done;
}

//===----------------------------------------------------------------------===//
// poptorch.ipu_print_tensor's runtime: poptorch_print_tensor_<type>(data,
// title), called by the compiled program with unranked memrefs (each passed
// as rank + pointer to the ranked descriptor: allocated, aligned, offset,
// sizes[rank], strides[rank]). Prints "<title>: <values>" on stdout, in
// PyTorch's nested-bracket layout; tensors over 1000 elements show the first
// and last 3 entries of each dimension (PopTorch's summarise_threshold and
// edge_items defaults).
//===----------------------------------------------------------------------===//

struct DescriptorView {
  const char *base = nullptr; // aligned + offset, in elements of `elemSize`
  std::vector<int64_t> sizes, strides;
};

DescriptorView viewOf(int64_t rank, void *descriptor, size_t elemSize) {
  auto *words = static_cast<int64_t *>(descriptor);
  DescriptorView v;
  const char *aligned = reinterpret_cast<const char *>(words[1]);
  v.base = aligned + words[2] * static_cast<int64_t>(elemSize);
  v.sizes.assign(words + 3, words + 3 + rank);
  v.strides.assign(words + 3 + rank, words + 3 + 2 * rank);
  return v;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | ((112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

template <typename T> std::string formatElement(const char *p) {
  char buf[64];
  if constexpr (std::is_same_v<T, bool>) {
    return *reinterpret_cast<const uint8_t *>(p) ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<T>) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    std::snprintf(buf, sizeof(buf), "%.8g", static_cast<double>(v));
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  }
  return buf;
}

struct Half {};
struct BFloat16 {};
template <> std::string formatElement<Half>(const char *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  float f = halfToFloat(h);
  return formatElement<float>(reinterpret_cast<const char *>(&f));
}
template <> std::string formatElement<BFloat16>(const char *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return formatElement<float>(reinterpret_cast<const char *>(&f));
}

template <typename T> constexpr size_t storageSize() {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return 2;
  else if constexpr (std::is_same_v<T, bool>)
    return 1;
  else
    return sizeof(T);
}

template <typename T>
void formatTensor(std::string &out, const DescriptorView &v, size_t dim,
                  const char *p, bool summarise, int indent) {
  if (dim == v.sizes.size()) {
    out += formatElement<T>(p);
    return;
  }
  constexpr int64_t kEdge = 3;
  int64_t n = v.sizes[dim];
  out += "[";
  for (int64_t i = 0; i < n; ++i) {
    if (summarise && n > 2 * kEdge && i == kEdge) {
      out += dim + 1 == v.sizes.size()
                 ? "..., "
                 : "...,\n" + std::string(indent + 1, ' ');
      i = n - kEdge;
    }
    formatTensor<T>(out, v, dim + 1,
                    p + i * v.strides[dim] *
                            static_cast<int64_t>(storageSize<T>()),
                    summarise, indent + 1);
    if (i + 1 < n)
      out += dim + 1 == v.sizes.size() ? ", "
                                       : ",\n" + std::string(indent + 1, ' ');
  }
  out += "]";
}

template <typename T>
void printTensorRuntime(int64_t rank, void *data, int64_t titleRank,
                        void *title) {
  DescriptorView v = viewOf(rank, data, storageSize<T>());
  DescriptorView t = viewOf(titleRank, title, 1);
  int64_t numel = 1;
  for (int64_t d : v.sizes)
    numel *= d;
  std::string text = t.base;
  text += text.empty() ? "" : ": ";
  formatTensor<T>(text, v, 0, v.base, numel > 1000,
                  static_cast<int>(text.size()));
  text += "\n";
  static std::mutex m; // replicas print from their own threads
  std::lock_guard<std::mutex> lock(m);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

/// The runtime functions compiled programs may call, by symbol name.
void addPoptorchRuntimeSymbols(llvm::StringMap<void *> &map) {
  using Fn = void (*)(int64_t, void *, int64_t, void *);
  auto add = [&](const char *suffix, Fn fn) {
    map[std::string("poptorch_print_tensor_") + suffix] =
        reinterpret_cast<void *>(fn);
  };
  add("f32", &printTensorRuntime<float>);
  add("f64", &printTensorRuntime<double>);
  add("f16", &printTensorRuntime<Half>);
  add("bf16", &printTensorRuntime<BFloat16>);
  add("i1", &printTensorRuntime<bool>);
  add("i8", &printTensorRuntime<int8_t>);
  add("ui8", &printTensorRuntime<uint8_t>);
  add("i16", &printTensorRuntime<int16_t>);
  add("i32", &printTensorRuntime<int32_t>);
  add("i64", &printTensorRuntime<int64_t>);
}

//===----------------------------------------------------------------------===//
// poptorch.host_kernel's entry points: `poptorch_host_kernel_<n>_<k>` takes n
// unranked memrefs (2n words) whatever their element types; every k of one n
// is the same function, which hands the words to the runner.
//===----------------------------------------------------------------------===//

std::atomic<HostKernelRunner> gHostKernelRunner{nullptr};

/// What one program call's host kernels reported (hostKernelFailed): its
/// context (callContext()) while it runs.
struct CallFailures {
  std::mutex mu;
  std::string first; // guarded by mu
  bool failed = false;
};

template <size_t> using Word = intptr_t;
template <typename Seq> struct HostKernelEntry;
template <size_t... I> struct HostKernelEntry<std::index_sequence<I...>> {
  static void call(Word<I>... words) {
    const intptr_t packed[] = {words..., 0};
    HostKernelRunner runner = gHostKernelRunner.load();
    if (runner)
      runner(static_cast<int64_t>(sizeof...(I) / 2), packed);
    else
      hostKernelFailed("no host kernel runtime is registered");
  }
};

constexpr size_t kMaxHostKernelArgs = 48;

template <size_t... N>
std::array<void *, sizeof...(N)>
makeHostKernelEntries(std::index_sequence<N...>) {
  return {reinterpret_cast<void *>(
      &HostKernelEntry<std::make_index_sequence<2 * N>>::call)...};
}

const std::array<void *, kMaxHostKernelArgs> &hostKernelEntries() {
  static const auto entries =
      makeHostKernelEntries(std::make_index_sequence<kMaxHostKernelArgs>());
  return entries;
}

/// Resolves `poptorch_host_kernel_<n>_<k>` (any k) when the JIT links.
class HostKernelSymbols : public llvm::orc::DefinitionGenerator {
public:
  llvm::Error
  tryToGenerate(llvm::orc::LookupState &, llvm::orc::LookupKind,
                llvm::orc::JITDylib &jd, llvm::orc::JITDylibLookupFlags,
                const llvm::orc::SymbolLookupSet &symbols) override {
    llvm::orc::SymbolMap found;
    for (const auto &[name, flags] : symbols) {
      llvm::StringRef s = *name;
      unsigned n = 0;
      if (!s.consume_front("poptorch_host_kernel_") ||
          s.consumeInteger(10, n) || n >= kMaxHostKernelArgs)
        continue;
      found[name] = {llvm::orc::ExecutorAddr::fromPtr(hostKernelEntries()[n]),
                     llvm::JITSymbolFlags::Exported};
    }
    if (found.empty())
      return llvm::Error::success();
    return jd.define(llvm::orc::absoluteSymbols(std::move(found)));
  }
};

/// The runtime functions compiled programs call, by symbol name: the async
/// runtime API (TaskRuntime.cpp), the buffer pool and poptorch's own.
const llvm::StringMap<void *> &runtimeSymbols() {
  static const auto *symbols = [] {
    auto *map = new llvm::StringMap<void *>();
    addTaskRuntimeSymbols(*map);
    addPoptorchRuntimeSymbols(*map);
    addBufferPoolSymbols(*map);
    return map;
  }();
  return *symbols;
}

/// Whether any of `objects` calls the task runtime (parallel loops, or the
/// async runtime of overlapped stages): such a program runs on a team
/// (runOnTeam).
bool usesTasks(const std::vector<std::string> &objects) {
  for (const std::string &object : objects) {
    auto file = llvm::object::ObjectFile::createObjectFile(
        llvm::MemoryBufferRef(object, "program"));
    if (!file) {
      llvm::consumeError(file.takeError());
      return true;
    }
    for (const llvm::object::SymbolRef &sym : (*file)->symbols()) {
      auto name = sym.getName();
      if (!name) {
        llvm::consumeError(name.takeError());
        continue;
      }
      if (name->starts_with("mlirAsyncRuntime") ||
          *name == "poptorch_parallel_for")
        return true;
    }
  }
  return false;
}

std::string toText(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os, OpPrintingFlags().enableDebugInfo(true, /*prettyForm=*/false));
  return s;
}

//===----------------------------------------------------------------------===//
// Executable cache: the object code of a compiled program on disk.
//
// An entry is one file: magic, the cache key it was written for, the
// argument layouts (metadata the runtime needs), the pipeline schedule
// (`poptorch.pipeline`, for the fallback warning of a loaded program), the
// object files that compileToObjects produced, and an xxh3 checksum of all
// of it. Anything that does not check out (another key, wrong length, bad
// checksum, an object the JIT linker rejects) is reported as a reason and the
// caller recompiles.
//===----------------------------------------------------------------------===//

// 02: a list of object files (one per part compiled in parallel); 03: the
// pipeline schedule; 04: argument layouts (a view shape and a permutation)
// instead of permutations.
constexpr char kCacheMagic[8] = {'P', 'T', 'E', 'X', 'E', 'C', '0', '4'};

void putU64(std::string &out, uint64_t v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof(v));
}

bool getU64(llvm::StringRef &in, uint64_t &v) {
  if (in.size() < sizeof(v))
    return false;
  std::memcpy(&v, in.data(), sizeof(v));
  in = in.drop_front(sizeof(v));
  return true;
}

bool getBytes(llvm::StringRef &in, llvm::StringRef &bytes) {
  uint64_t n;
  if (!getU64(in, n) || in.size() < n)
    return false;
  bytes = in.take_front(n);
  in = in.drop_front(n);
  return true;
}

std::string encodeLayouts(const std::vector<ArgumentLayout> &layouts) {
  std::string out;
  auto putList = [&](const std::vector<int64_t> &list) {
    putU64(out, list.size());
    for (int64_t d : list)
      putU64(out, uint64_t(d));
  };
  putU64(out, layouts.size());
  for (const ArgumentLayout &l : layouts) {
    putList(l.shape);
    putList(l.perm);
  }
  return out;
}

bool decodeLayouts(llvm::StringRef in, std::vector<ArgumentLayout> &layouts) {
  auto getList = [&](std::vector<int64_t> &list) {
    uint64_t m;
    if (!getU64(in, m) || m > in.size())
      return false;
    for (uint64_t i = 0; i < m; ++i) {
      uint64_t d;
      if (!getU64(in, d))
        return false;
      list.push_back(int64_t(d));
    }
    return true;
  };
  uint64_t n;
  if (!getU64(in, n) || n > in.size())
    return false;
  layouts.assign(n, {});
  for (ArgumentLayout &l : layouts)
    if (!getList(l.shape) || !getList(l.perm))
      return false;
  return in.empty();
}

/// Writes an entry atomically (temporary file, then rename), so that a
/// concurrent reader never sees half an entry. Failures only lose the cache.
void writeCacheEntry(const CompileOptions &o,
                     const std::vector<std::string> &objects,
                     const std::vector<ArgumentLayout> &layouts,
                     const std::string &schedule) {
  std::string data(kCacheMagic, sizeof(kCacheMagic));
  auto putBytes = [&](llvm::StringRef b) {
    putU64(data, b.size());
    data.append(b.data(), b.size());
  };
  putBytes(o.cacheKey);
  putBytes(encodeLayouts(layouts));
  putBytes(schedule);
  putU64(data, objects.size());
  for (const std::string &object : objects)
    putBytes(object);
  putU64(data, cacheChecksum(data));
  (void)writeFileAtomically(o.cachePath, data);
}

/// Reads and checks an entry; on failure returns false and says why.
bool readCacheEntry(const CompileOptions &o, std::vector<std::string> &objects,
                    std::vector<ArgumentLayout> &layouts, std::string &schedule,
                    std::string &why) {
  auto buffer = llvm::MemoryBuffer::getFile(o.cachePath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    why = "no cache entry";
    return false;
  }
  llvm::StringRef all = (*buffer)->getBuffer();
  if (all.size() < sizeof(kCacheMagic) + 8 ||
      !all.starts_with(llvm::StringRef(kCacheMagic, sizeof(kCacheMagic)))) {
    why = "the cache entry is not a poptorch executable";
    return false;
  }
  llvm::StringRef body = all.drop_back(8), tail = all.take_back(8);
  uint64_t checksum, count;
  getU64(tail, checksum);
  llvm::StringRef in = body.drop_front(sizeof(kCacheMagic)), key, meta,
                  pipeline;
  bool ok = getBytes(in, key) && getBytes(in, meta) && getBytes(in, pipeline) &&
            getU64(in, count) && count <= in.size();
  std::vector<llvm::StringRef> parts;
  for (uint64_t i = 0; ok && i < count; ++i) {
    llvm::StringRef obj;
    ok = getBytes(in, obj);
    parts.push_back(obj);
  }
  if (!ok || !in.empty()) {
    why = "the cache entry is truncated or malformed";
    return false;
  }
  if (key != o.cacheKey) {
    why = "the cache entry was written for another model, compiler or CPU";
    return false;
  }
  if (checksum != cacheChecksum(body)) {
    why = "the cache entry is corrupted (checksum mismatch)";
    return false;
  }
  if (!decodeLayouts(meta, layouts)) {
    why = "the cache entry's metadata is malformed";
    return false;
  }
  objects.assign(parts.begin(), parts.end());
  schedule = pipeline.str();
  return true;
}

//===----------------------------------------------------------------------===//
// LLVM code generation: the LLVM dialect to object files, in parallel.
//
// After kernel outlining a program is a few hundred functions: the distinct
// kernels (optimized at the requested level) and the glue that calls them
// (optnone). The LLVM module is split into parts of about equal estimated
// cost (twice as many as threads: the costs are estimates, and a thread
// that finishes early takes the next part); each part is optimized and
// compiled to an object file on a thread of its own with its own
// LLVMContext and TargetMachine (like LTO's parallel code generation), and
// the JIT links the object files into one dylib. The executable cache
// stores them.
//===----------------------------------------------------------------------===//

/// The name the JIT looks up: the packed wrapper of @main's C interface.
constexpr const char *kPackedMain = "_mlir__mlir_ciface_main";

/// `void _mlir__mlir_ciface_main(void **args)`: loads each argument from
/// args[i] and calls `_mlir_ciface_main` (what ExecutionEngine's packed
/// interface does).
void addPackedMain(llvm::Module &m) {
  llvm::Function *fn = m.getFunction("_mlir_ciface_main");
  if (!fn)
    return;
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), b.getPtrTy(), false);
  auto *packed = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, kPackedMain, m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", packed));
  llvm::Value *list = packed->getArg(0);
  llvm::SmallVector<llvm::Value *> args;
  for (llvm::Argument &arg : fn->args()) {
    llvm::Value *slot =
        b.CreateConstGEP1_64(b.getPtrTy(), list, arg.getArgNo());
    args.push_back(
        b.CreateLoad(arg.getType(), b.CreateLoad(b.getPtrTy(), slot)));
  }
  llvm::Value *result = b.CreateCall(fn, args);
  if (!result->getType()->isVoidTy()) {
    llvm::Value *slot =
        b.CreateConstGEP1_64(b.getPtrTy(), list, fn->arg_size());
    b.CreateStore(result, b.CreateLoad(b.getPtrTy(), slot));
  }
  b.CreateRetVoid();
}

/// Threads for code generation: POPTORCH_COMPILE_THREADS, or else the
/// cores this process may use.
unsigned codegenThreads() {
  if (const char *env = std::getenv("POPTORCH_COMPILE_THREADS")) {
    unsigned n = 0;
    if (llvm::StringRef(env).getAsInteger(10, n) || n == 0 || n > 256)
      throw CompileError("POPTORCH_COMPILE_THREADS must be a number of "
                         "threads from 1 to 256, not `" +
                         std::string(env) + "`");
    return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

/// LLVM's default pipeline at `optLevel` for `tm`'s CPU, without the SLP
/// vectorizer: the kernels arrive vectorized (poptorch-tile-and-vectorize),
/// and SLP found nothing to gain in them while taking 30% of the
/// optimization time (ResNet-18 at batch 8: opt -O3 4.0 s, 2.8 s without
/// it; the models' and GEMM/convolution speeds unchanged, side_by_side.py).
void optimizeModule(llvm::Module &m, int optLevel, llvm::TargetMachine &tm) {
  llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O0;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = false;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // Without StandardInstrumentations nothing skips optnone functions: the
  // glue goes through O3 too, and "optimize_none" only selects the fast
  // instruction selector for it. Skipping O3 on the glue
  // (OptNoneInstrumentation) saved no measurable time on BERT or MobileNetV2,
  // and unoptimized glue returned a wrong sign for a 0-d bf16 copysign
  // (computed in the glue).
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

/// Loads and stores of bfloat vectors whose length is not a power of two
/// move the same bits as vectors of i16, and do so. LLVM 22's X86
/// instruction selection aborts on some of them on AVX512-BF16 hosts ("Do
/// not know how to soft promote this operator's operand": a copy of
/// 8k + 1 bfloat, the 17-column remainder tile of GPT-2's 50257-column LM
/// head in bfloat16). After optimization, which would fold the casts back.
void bfloatVectorMemoryAsI16(llvm::Module &m) {
  // The i16 vector of the same bits, for an odd-length bfloat vector type.
  auto bits = [](llvm::Type *t) -> llvm::FixedVectorType * {
    auto *v = llvm::dyn_cast<llvm::FixedVectorType>(t);
    if (!v || !v->getElementType()->isBFloatTy() ||
        llvm::isPowerOf2_32(v->getNumElements()))
      return nullptr;
    return llvm::FixedVectorType::get(llvm::Type::getInt16Ty(t->getContext()),
                                      v->getNumElements());
  };
  for (llvm::Function &f : m)
    for (llvm::Instruction &i :
         llvm::make_early_inc_range(llvm::instructions(f))) {
      llvm::IRBuilder<> b(&i);
      if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&i)) {
        llvm::FixedVectorType *type = bits(load->getType());
        if (!type)
          continue;
        llvm::LoadInst *raw =
            b.CreateAlignedLoad(type, load->getPointerOperand(),
                                load->getAlign(), load->isVolatile());
        raw->setAAMetadata(load->getAAMetadata());
        load->replaceAllUsesWith(b.CreateBitCast(raw, load->getType()));
      } else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&i)) {
        llvm::Value *v = store->getValueOperand();
        llvm::FixedVectorType *type = bits(v->getType());
        if (!type)
          continue;
        b.CreateAlignedStore(b.CreateBitCast(v, type),
                             store->getPointerOperand(), store->getAlign(),
                             store->isVolatile())
            ->setAAMetadata(store->getAAMetadata());
      } else {
        continue;
      }
      i.eraseFromParent();
    }
}

/// Optimizes `m` at `optLevel` and compiles it to an object file.
llvm::Expected<std::string> optimizeAndEmit(llvm::Module &m, int optLevel,
                                            llvm::TargetMachine &tm) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(tm.getTargetTriple());
  optimizeModule(m, optLevel, tm);
  bfloatVectorMemoryAsI16(m);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  pm.run(m);
  return std::string(buffer.begin(), buffer.end());
}

/// A function's estimated code generation cost: its instructions, those of
/// the optnone glue (fast instruction selection, no optimization) at a
/// quarter (measured with llc on BERT: 13 against 55 us per instruction).
uint64_t codegenCost(const llvm::Function &f) {
  uint64_t n = f.getInstructionCount() + 1;
  return f.hasOptNone() ? n / 4 + 1 : n;
}

/// Splits `m` into at most `parts` modules of about equal cost (largest
/// function first, into the cheapest part), as bitcode: each is read into
/// its own LLVMContext by the thread that compiles it. Local symbols become
/// hidden globals so that the parts link with each other.
std::vector<llvm::SmallVector<char, 0>> splitModule(llvm::Module &m,
                                                    unsigned parts) {
  unsigned anonymous = 0;
  for (llvm::GlobalValue &gv : m.global_values()) {
    if (!gv.hasLocalLinkage())
      continue;
    if (!gv.hasName())
      gv.setName("__poptorch_local" + std::to_string(anonymous++));
    gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
    gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  std::vector<llvm::Function *> fns;
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      fns.push_back(&f);
  std::stable_sort(fns.begin(), fns.end(), [](auto *a, auto *b) {
    return codegenCost(*a) > codegenCost(*b);
  });
  parts = std::max(1u, std::min<unsigned>(parts, fns.size()));
  std::vector<uint64_t> load(parts, 0);
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> partOf;
  for (llvm::Function *f : fns) {
    unsigned p = std::min_element(load.begin(), load.end()) - load.begin();
    load[p] += codegenCost(*f);
    partOf[f] = p;
  }
  std::vector<llvm::SmallVector<char, 0>> out(parts);
  for (unsigned p = 0; p < parts; ++p) {
    llvm::ValueToValueMapTy map;
    // Global variables (constants) are defined in part 0.
    std::unique_ptr<llvm::Module> part =
        llvm::CloneModule(m, map, [&](const llvm::GlobalValue *gv) {
          auto it = partOf.find(gv);
          return it == partOf.end() ? p == 0 : it->second == p;
        });
    llvm::raw_svector_ostream os(out[p]);
    llvm::WriteBitcodeToFile(*part, os);
  }
  return out;
}

/// The LLVM dialect module to object files: one per part, compiled on
/// codegenThreads() threads.
std::vector<std::string> compileToObjects(ModuleOp module, int optLevel,
                                          std::string &diags) {
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    throw CompileError("cannot detect the host CPU for the JIT");
  // O3 for real programs; debug builds (golden bisection) may ask for less.
  tmBuilder->setCodeGenOptLevel(optLevel >= 3
                                    ? llvm::CodeGenOptLevel::Aggressive
                                : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                : llvm::CodeGenOptLevel::None);
  auto newTargetMachine = [&] {
    auto tm = tmBuilder->createTargetMachine();
    if (!tm)
      throw CompileError("cannot create a target machine for the host CPU: " +
                         llvm::toString(tm.takeError()));
    return std::move(*tm);
  };

  // poptorch's own argument and result attributes (names, roles, layouts)
  // have no LLVM meaning: left on, the translation reports each of them as
  // an unhandled parameter attribute (MobileNetV2: 167 MB of diagnostics
  // text and 2.5 s).
  module.walk([](LLVM::LLVMFuncOp fn) {
    auto strip = [](ArrayAttr all) -> ArrayAttr {
      if (!all)
        return all;
      SmallVector<Attribute> kept;
      for (Attribute a : all) {
        SmallVector<NamedAttribute> attrs;
        for (NamedAttribute na : cast<DictionaryAttr>(a))
          if (!na.getName().getValue().starts_with("poptorch."))
            attrs.push_back(na);
        kept.push_back(DictionaryAttr::get(all.getContext(), attrs));
      }
      return ArrayAttr::get(all.getContext(), kept);
    };
    if (ArrayAttr args = fn.getArgAttrsAttr())
      fn.setArgAttrsAttr(strip(args));
    if (ArrayAttr results = fn.getResAttrsAttr())
      fn.setResAttrsAttr(strip(results));
  });
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    throw CompileError("cannot translate the program to LLVM IR:\n" + diags);
  addPackedMain(*llvmModule);
  unsigned threads = codegenThreads();
  std::vector<std::string> objects;
  if (threads == 1) {
    auto tm = newTargetMachine();
    auto object = optimizeAndEmit(*llvmModule, optLevel, *tm);
    if (!object)
      throw CompileError("LLVM code generation failed: " +
                         llvm::toString(object.takeError()));
    objects.push_back(std::move(*object));
    return objects;
  }

  // More parts than threads: the costs are estimates, and a thread that
  // finishes early takes the next part.
  std::vector<llvm::SmallVector<char, 0>> bitcode =
      splitModule(*llvmModule, 2 * threads);
  llvmModule.reset();
  objects.resize(bitcode.size());
  std::vector<std::string> errors(bitcode.size());
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (unsigned t = 0; t < std::min<size_t>(threads, bitcode.size()); ++t)
    machines.push_back(newTargetMachine());
  std::atomic<size_t> next{0};
  auto work = [&](llvm::TargetMachine &tm) {
    for (size_t i; (i = next++) < bitcode.size();) {
      // Nothing may escape a thread of the pool (an LLVM fatal error is a
      // CompileError thrown here, see installFatalErrorHandlers).
      try {
        llvm::LLVMContext ctx;
        auto part = llvm::parseBitcodeFile(
            llvm::MemoryBufferRef(
                llvm::StringRef(bitcode[i].data(), bitcode[i].size()), "part"),
            ctx);
        if (!part) {
          errors[i] = llvm::toString(part.takeError());
          continue;
        }
        auto object = optimizeAndEmit(**part, optLevel, tm);
        if (!object)
          errors[i] = llvm::toString(object.takeError());
        else
          objects[i] = std::move(*object);
      } catch (const std::exception &e) {
        errors[i] = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < machines.size(); ++t)
    pool.emplace_back(work, std::ref(*machines[t]));
  work(*machines[0]);
  for (std::thread &t : pool)
    t.join();
  for (const std::string &e : errors)
    if (!e.empty())
      throw CompileError("LLVM code generation failed: " + e);
  return objects;
}

/// The pipeline's stages, with the device-iteration loop after
/// tile-and-vectorize when the program runs more than one micro-batch per
/// call: the body is tiled and vectorized for one micro-batch as a function
/// of its own, and the loop then wraps the optimized body.
std::vector<std::pair<std::string, std::string>>
stagesFor(const CompileOptions &options) {
  std::vector<std::pair<std::string, std::string>> stages;
  if (options.pipelineStages)
    stages.push_back(poptorch::getOutlineStagesStage());
  for (auto &stage : poptorch::getCompilePipelineStages()) {
    stages.push_back(stage);
    if (stage.first == "tile-and-vectorize" && !options.deviceLoop.empty())
      stages.emplace_back("device-loop",
                          "builtin.module(" + options.deviceLoop + ")");
  }
  return stages;
}

/// The module `op` belongs to (the outermost op).
Operation *topLevel(Operation *op) {
  while (Operation *parent = op->getParentOp())
    op = parent;
  return op;
}

/// Nested pass managers run as one "adaptor" pass per nesting.
bool isAdaptor(Pass *pass) {
  return pass->getName().starts_with("Pipeline Collection");
}

std::string textualPass(Pass *pass) {
  std::string s;
  llvm::raw_string_ostream os(s);
  pass->printAsTextualPipeline(os);
  return s;
}

/// `func.func(a{x=1}, b)` -> `func.func-a+b`: a file-name-safe pass name.
std::string fileSafeName(const std::string &pipeline) {
  std::string out;
  int braces = 0;
  for (char c : pipeline) {
    if (c == '{')
      ++braces;
    else if (c == '}')
      --braces;
    else if (braces > 0 || c == ' ' || c == ')')
      continue;
    else if (c == '(')
      out += '-';
    else if (c == ',')
      out += '+';
    else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
             c == '_' || c == '.')
      out += c;
    else
      out += '_';
  }
  if (out.size() > 80)
    out.resize(80);
  return out;
}

/// `file:line` of the first file location inside `loc`, or "".
std::string sourceLine(Location loc) {
  std::string out;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      out = f.getFilename().str() + ":" + std::to_string(f.getLine());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return out;
}

/// Records every top-level pass: its time and, on request, the module after
/// it. Nested passes (inside `func.func(...)`) run once per function, so
/// the group they form is the unit that gets a snapshot.
class PassRecorder : public PassInstrumentation {
public:
  PassRecorder(std::string stage, bool snapshot,
               std::vector<PassRecord> &records)
      : stage(std::move(stage)), snapshot(snapshot), records(records) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (op->getParentOp() == nullptr && depth++ == 0)
      start = std::chrono::steady_clock::now();
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    if (op->getParentOp() == nullptr)
      --depth;
  }
  // A pass may run a dynamic pipeline on the module (canonicalize inside
  // poptorch-tile-and-vectorize): only the outermost pass gets a record.
  void runAfterPass(Pass *pass, Operation *op) override {
    if (op->getParentOp() != nullptr || --depth != 0)
      return;
    PassRecord r;
    r.stage = stage;
    r.pipeline = textualPass(pass);
    r.name = fileSafeName(r.pipeline);
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (snapshot) {
      // Unchanged IR (a fingerprint is far cheaper than printing) keeps
      // the previous text, as print-ir-after-change does.
      OperationFingerPrint print(op);
      if (!last || *last != print)
        lastText = toText(op);
      last = print;
      r.text = lastText;
    }
    records.push_back(std::move(r));
  }

private:
  std::string stage;
  bool snapshot;
  std::vector<PassRecord> &records;
  std::chrono::steady_clock::time_point start;
  int depth = 0;
  std::optional<OperationFingerPrint> last;
  std::string lastText;
};

/// Used when a stage fails: replays it with the module printed before every
/// pass (nested ones included), and keeps the one that entered the first
/// pass that failed.
class FailureRecorder : public PassInstrumentation {
public:
  void runBeforePass(Pass *pass, Operation *op) override {
    if (failedPass.empty() && !isAdaptor(pass))
      lastText = toText(topLevel(op));
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    if (!failedPass.empty() || isAdaptor(pass))
      return;
    failedPass = textualPass(pass);
    // The nesting from the module down to the op the pass ran on.
    std::string pipeline = failedPass;
    for (Operation *o = op; o->getParentOp(); o = o->getParentOp())
      pipeline = o->getName().getStringRef().str() + "(" + pipeline + ")";
    failedPipeline = "builtin.module(" + pipeline + ")";
    textBefore = lastText;
  }

  std::string lastText;
  std::string failedPass;
  std::string failedPipeline;
  std::string textBefore;
};

/// The stages to run: the pipeline, behind the test-only breaker when
/// POPTORCH_TEST_BREAK=<fail|perturb>:<op>[:<index>] is set.
std::vector<std::pair<std::string, std::string>>
stagesToRun(const CompileOptions &options) {
  auto stages = stagesFor(options);
  if (const char *spec = std::getenv("POPTORCH_TEST_BREAK")) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(spec).split(parts, ':');
    if (parts.size() >= 2) {
      std::string pass =
          "builtin.module(poptorch-test-break{mode=" + parts[0].str() +
          " op=" + parts[1].str() +
          (parts.size() > 2 ? " index=" + parts[2].str() : "") + "})";
      stages.insert(stages.begin(), {"test-break", pass});
    }
  }
  return stages;
}

/// Whether the module is verified after every pass rather than once after
/// each stage: when the passes are snapshot (dumps, TRACE logs), or with
/// POPTORCH_VERIFY_EACH=1 (the test suite sets it). Verifying after each of
/// the ~40 passes took 0.85 of MobileNetV2 b8's 2.2 s of MLIR passes
/// (poptorch-opt --verify-each against --verify-each=false), BERT b1's 0.18
/// of 0.53 s. A stage whose result does not verify is run again, verified
/// after every pass, to name the pass that broke it (reproduceFailure).
bool verifyEachPass(const CompileOptions &options) {
  const char *env = std::getenv("POPTORCH_VERIFY_EACH");
  return options.snapshotPasses || (env && std::string(env) != "0");
}

void addStagePasses(PassManager &pm, const std::string &name,
                    const std::string &text) {
  std::string err;
  llvm::raw_string_ostream es(err);
  // Stage texts are `builtin.module(<passes>)`: add <passes> to pm.
  llvm::StringRef body(text);
  if (!body.consume_front("builtin.module(") || !body.consume_back(")"))
    throw CompileError("stage " + name + " is not a builtin.module pipeline");
  if (failed(parsePassPipeline(body, pm, es)))
    throw CompileError("invalid pipeline for stage " + name + ": " + err);
}

/// The error of a failing stage: the failing pass, the op and its source
/// line, and a reproducer (the module that entered the pass, written to
/// the dump folder or a new temp folder, plus the poptorch-opt command).
std::string reproduceFailure(MLIRContext &ctx, const std::string &stage,
                             const std::string &stageText,
                             const std::string &stageInput,
                             const std::string &firstDiags,
                             const CompileOptions &options) {
  std::string generic = "stage `" + stage + "` failed:\n" + firstDiags +
                        "\nreplay with: poptorch-opt <previous stage>.mlir "
                        "--pass-pipeline='" +
                        stageText + "'";
  std::optional<Location> errLoc;
  std::string errText; // the first error and its notes
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (!errLoc && d.getSeverity() == DiagnosticSeverity::Error) {
      errLoc = d.getLocation();
      errText = d.str();
      for (auto &note : d.getNotes())
        errText += "\n" + note.str();
    }
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(stageInput, &ctx);
  if (!module)
    return generic;
  PassManager pm(&ctx, ModuleOp::getOperationName());
  addStagePasses(pm, stage, stageText);
  auto recorderOwned = std::make_unique<FailureRecorder>();
  FailureRecorder *recorder = recorderOwned.get();
  pm.addInstrumentation(std::move(recorderOwned));
  if (succeeded(pm.run(*module)) || recorder->failedPass.empty())
    return generic;

  // The op the first error points at, found in the module before the pass.
  std::string opDesc;
  if (errLoc) {
    OwningOpRef<ModuleOp> before =
        parseSourceString<ModuleOp>(recorder->textBefore, &ctx);
    // Several ops can share the user's line: prefer the one the error names.
    std::string first, named;
    if (before)
      before->walk([&](Operation *op) {
        if (op->getLoc() != *errLoc || !named.empty())
          return;
        std::string name = op->getName().getStringRef().str();
        if (first.empty())
          first = name;
        if (errText.find("\"" + name + "\"") != std::string::npos ||
            errText.find("'" + name + "'") != std::string::npos ||
            errText.find(" " + name) != std::string::npos)
          named = name;
      });
    if (!named.empty() || !first.empty())
      opDesc = "`" + (named.empty() ? first : named) + "`";
    std::string line = sourceLine(*errLoc);
    if (!line.empty())
      opDesc += (opDesc.empty() ? "" : " ") + std::string("at ") + line;
  }

  std::string dir = options.dumpDir;
  llvm::SmallString<128> tmp;
  if (dir.empty()) {
    if (llvm::sys::fs::createUniqueDirectory("poptorch-repro", tmp))
      return generic;
    dir = tmp.str().str();
  }
  llvm::sys::fs::create_directories(dir);
  std::string name = fileSafeName(recorder->failedPass);
  std::string path = dir + "/failed-" + stage + "-" + name + ".mlir";
  std::string command = "poptorch-opt " + path + " --pass-pipeline='" +
                        recorder->failedPipeline + "'";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return generic;
    os << recorder->textBefore;
    llvm::raw_fd_ostream sh(dir + "/reproduce.sh", ec);
    if (!ec)
      sh << "#!/bin/sh\n# the failing pass of stage `" << stage
         << "`, on the module that entered it\n"
         << command << "\n";
  }
  return "pass `" + recorder->failedPass + "` (stage `" + stage + "`) failed" +
         (opDesc.empty() ? "" : " on " + opDesc) + ":\n" + firstDiags +
         "\nthe module that entered the pass: " + path +
         "\nreproduce with: " + command;
}

class JitProgram final : public Program {
public:
  JitProgram() {
    std::lock_guard<std::mutex> lock(registryMutex());
    liveProgramsSet().insert(this);
  }
  ~JitProgram() override {
    {
      std::lock_guard<std::mutex> lock(registryMutex());
      liveProgramsSet().erase(this);
    }
  }

  /// Frees the code once the calls in flight (other threads') have left it;
  /// later calls throw ProgramReleased. A call still running after 10 s keeps
  /// its code (leaked: the process is exiting).
  void release() {
    released.store(true);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (inFlight.load() > 0) {
      if (std::chrono::steady_clock::now() > deadline)
        return;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    entryPoint = nullptr;
    loaded.reset();
  }

  void compile(const std::string &moduleText, const CompileOptions &options) {
    initOnce();
    if (!options.cachePath.empty()) {
      std::string why;
      if (loadFromCache(moduleText, options, why))
        return;
      if (why != "no cache entry")
        originText = "recompiled: " + why;
    }
    DialectRegistry registry;
    poptorch::registerAllPoptorchDialects(registry);
    MLIRContext ctx(registry);
    ctx.disableMultithreading();
    std::string diags;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (!diags.empty())
        diags += "\n";
      llvm::raw_string_ostream os(diags);
      os << d.getLocation() << ": " << d.str();
      for (auto &note : d.getNotes())
        os << "\n  note: " << note.getLocation() << ": " << note.str();
      return success();
    });

    auto clock = std::chrono::steady_clock::now;
    auto t0 = clock();
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(moduleText, &ctx);
    if (!module)
      throw CompileError("cannot parse the captured module:\n" + diags);
    stageTexts.emplace_back("captured", moduleText);
    stageTimes.emplace_back("parse", seconds(clock() - t0));

    // The module after each stage is printed only when the passes are
    // snapshot (dumps, TRACE logs); otherwise stages() prints it by
    // replaying the pipeline when first asked.
    ranStages = stagesToRun(options);
    textsComplete = options.snapshotPasses;
    bool verifyEach = verifyEachPass(options);
    for (auto &[name, text] : ranStages) {
      auto ts = clock();
      PassManager pm(&ctx, ModuleOp::getOperationName());
      pm.enableVerifier(verifyEach);
      addStagePasses(pm, name, text);
      pm.addInstrumentation(std::make_unique<PassRecorder>(
          name, options.snapshotPasses, passRecords));
      diags.clear();
      if (failed(pm.run(*module)) ||
          (!verifyEach && failed(verify(module->getOperation())))) {
        std::string failedDiags = diags;
        std::string input =
            options.snapshotPasses
                ? stageTexts.back().second
                : replayStages(stageTimes.size() - 1).back().second;
        throw CompileError(
            reproduceFailure(ctx, name, text, input, failedDiags, options));
      }
      stageTimes.emplace_back(name, seconds(clock() - ts));
      if (options.snapshotPasses)
        stageTexts.emplace_back(name, toText(module->getOperation()));
      recordArgumentLayouts(*module);
      recordPipelineSchedule(*module);
    }

    auto tj = clock();
    std::vector<std::string> objects =
        compileToObjects(*module, options.optLevel, diags);
    std::string why;
    if (!link(objects, "<compiled>", why))
      throw CompileError("JIT compilation failed: " + why + "\n" + diags);
    stageTimes.emplace_back("jit", seconds(clock() - tj));
    if (!options.cachePath.empty())
      writeCacheEntry(options, objects, layouts, schedule);
  }

  /// Loads the cached object code. Never throws: any problem is a reason to
  /// recompile.
  bool loadFromCache(const std::string &moduleText,
                     const CompileOptions &options, std::string &why) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> objects;
    std::vector<ArgumentLayout> argLayouts;
    std::string pipeline;
    if (!readCacheEntry(options, objects, argLayouts, pipeline, why))
      return false;
    if (!link(objects, options.cachePath, why)) {
      why = "the cached object code cannot be linked: " + why;
      return false;
    }
    layouts = std::move(argLayouts);
    schedule = std::move(pipeline);
    stageTexts.emplace_back("captured", moduleText);
    stageTimes.emplace_back("load-cache",
                            seconds(std::chrono::steady_clock::now() - t0));
    originText = "loaded";
    return true;
  }

  /// With POPTORCH_PERF_MAP=1 every function the JIT links (kernels
  /// included, whatever their linkage) is appended to /tmp/perf-<pid>.map,
  /// the file `perf report` reads to name JIT code.
  class PerfMapPlugin : public llvm::orc::ObjectLinkingLayer::Plugin {
  public:
    void modifyPassConfig(llvm::orc::MaterializationResponsibility &,
                          llvm::jitlink::LinkGraph &,
                          llvm::jitlink::PassConfiguration &config) override {
      config.PostFixupPasses.push_back([](llvm::jitlink::LinkGraph &g) {
        static std::mutex mutex;
        std::lock_guard<std::mutex> lock(mutex);
        std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
        FILE *f = std::fopen(path.c_str(), "a");
        if (!f)
          return llvm::Error::success();
        for (auto *sym : g.defined_symbols())
          if (sym->hasName() && sym->isCallable() && sym->getSize())
            std::fprintf(f, "%llx %llx %s\n",
                         (unsigned long long)sym->getAddress().getValue(),
                         (unsigned long long)sym->getSize(),
                         std::string(*sym->getName()).c_str());
        std::fclose(f);
        return llvm::Error::success();
      });
    }
    llvm::Error
    notifyFailed(llvm::orc::MaterializationResponsibility &) override {
      return llvm::Error::success();
    }
    llvm::Error notifyRemovingResources(llvm::orc::JITDylib &,
                                        llvm::orc::ResourceKey) override {
      return llvm::Error::success();
    }
    void notifyTransferringResources(llvm::orc::JITDylib &,
                                     llvm::orc::ResourceKey,
                                     llvm::orc::ResourceKey) override {}
  };

  /// Links object files into an ORC LLJIT against the runtime symbols (the
  /// async runtime, poptorch's own, the MLIR runner utils and the process's
  /// libm and libc) and looks up the packed @main. On failure says why.
  bool link(const std::vector<std::string> &objects, llvm::StringRef name,
            std::string &why) {
    auto fail = [&](llvm::Error err) {
      why = llvm::toString(std::move(err));
      loaded.reset();
      return false;
    };
    auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!tmBuilder)
      return fail(tmBuilder.takeError());
    auto jit = llvm::orc::LLJITBuilder()
                   .setJITTargetMachineBuilder(std::move(*tmBuilder))
                   .create();
    if (!jit)
      return fail(jit.takeError());
    loaded = std::move(*jit);
    static const bool perfMap = [] {
      const char *env = std::getenv("POPTORCH_PERF_MAP");
      return env && *env && std::strcmp(env, "0") != 0;
    }();
    if (perfMap)
      if (auto *layer = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(
              &loaded->getObjLinkingLayer()))
        layer->addPlugin(std::make_unique<PerfMapPlugin>());
    llvm::orc::JITDylib &jd = loaded->getMainJITDylib();
    llvm::orc::SymbolMap runtime;
    for (const auto &entry : runtimeSymbols())
      runtime[loaded->mangleAndIntern(entry.getKey())] = {
          llvm::orc::ExecutorAddr::fromPtr(entry.getValue()),
          llvm::JITSymbolFlags::Exported};
    if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(runtime))))
      return fail(std::move(err));
    // libm, libc and the MLIR runner utils come from the process.
    static const bool utilsLoaded = [] {
      std::string utils =
          std::string(POPTORCH_MLIR_LIB_DIR) + "/libmlir_c_runner_utils.so";
      if (llvm::sys::fs::exists(utils))
        llvm::sys::DynamicLibrary::LoadLibraryPermanently(utils.c_str());
      return true;
    }();
    (void)utilsLoaded;
    auto process =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            loaded->getDataLayout().getGlobalPrefix());
    if (!process)
      return fail(process.takeError());
    jd.addGenerator(std::move(*process));
    jd.addGenerator(std::make_unique<HostKernelSymbols>());
    for (const std::string &object : objects)
      if (auto err = loaded->addObjectFile(
              llvm::MemoryBuffer::getMemBufferCopy(object, name)))
        return fail(std::move(err));
    auto sym = loaded->lookup(kPackedMain);
    if (!sym)
      return fail(sym.takeError());
    if (auto err = loaded->initialize(jd))
      return fail(std::move(err));
    entryPoint = sym->toPtr<void (*)(void **)>();
    tasks = usesTasks(objects);
    return true;
  }

  void run(const std::vector<BufferRef> &inputs,
           const std::vector<BufferRef> &outputs) override {
    // released is set before inFlight is read (release), inFlight counted
    // before released is read (here): one of the two sees the other.
    inFlight.fetch_add(1);
    struct Leave {
      std::atomic<int> &n;
      ~Leave() { n.fetch_sub(1); }
    } leave{inFlight};
    if (released.load() || !entryPoint)
      throw ProgramReleased();
    // One memref descriptor per argument: {alloc, aligned, offset, sizes,
    // strides}.
    std::vector<std::vector<int64_t>> descs;
    descs.reserve(inputs.size() + outputs.size());
    auto addDesc = [&](const BufferRef &b) {
      std::vector<int64_t> d(3 + 2 * b.shape.size());
      d[0] = d[1] = reinterpret_cast<int64_t>(b.data);
      d[2] = 0;
      int64_t stride = 1;
      size_t r = b.shape.size();
      for (size_t i = 0; i < r; ++i)
        d[3 + i] = b.shape[i];
      for (size_t i = r; i-- > 0;) {
        d[3 + r + i] = stride;
        stride *= b.shape[i];
      }
      descs.push_back(std::move(d));
    };
    for (auto &b : inputs)
      addDesc(b);
    for (auto &b : outputs)
      addDesc(b);
    std::vector<void *> descPtrs(descs.size());
    std::vector<void *> args(descs.size());
    for (size_t i = 0; i < descs.size(); ++i) {
      descPtrs[i] = descs[i].data();
      args[i] = &descPtrs[i];
    }
    CallFailures failures;
    if (tasks) {
      runOnTeam(entryPoint, args.data(), &failures);
    } else {
      ScopedCallContext scope(&failures);
      entryPoint(args.data());
    }
    if (failures.failed)
      throw CompileError(failures.first);
  }

  const std::vector<std::pair<std::string, std::string>> &
  stages() const override {
    if (!textsComplete) {
      textsComplete = true;
      stageTexts = replayStages(ranStages.size());
    }
    return stageTexts;
  }
  const std::vector<ArgumentLayout> &argumentLayouts() const override {
    return layouts;
  }
  const std::vector<std::pair<std::string, double>> &timings() const override {
    return stageTimes;
  }
  const std::string &origin() const override { return originText; }
  const std::string &pipelineSchedule() const override { return schedule; }
  const std::vector<PassRecord> &passes() const override { return passRecords; }

private:
  static double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  }

  std::unique_ptr<llvm::orc::LLJIT> loaded; // the linked program
  void (*entryPoint)(void **) = nullptr;    // the packed @main
  std::atomic<int> inFlight{0};             // calls running now
  std::atomic<bool> released{false};        // by releaseAllPrograms
  bool tasks = false;                       // whether it calls the runtime
  std::string originText = "compiled";
  // The captured module and, once printed, the module after each stage.
  mutable std::vector<std::pair<std::string, std::string>> stageTexts;
  mutable bool textsComplete = true;
  std::vector<std::pair<std::string, std::string>> ranStages;

  /// The captured module and the module after each of the first `count`
  /// stages, by running them again (the pipeline is deterministic).
  std::vector<std::pair<std::string, std::string>>
  replayStages(size_t count) const {
    std::vector<std::pair<std::string, std::string>> texts{stageTexts.front()};
    DialectRegistry registry;
    poptorch::registerAllPoptorchDialects(registry);
    MLIRContext ctx(registry);
    ctx.disableMultithreading();
    ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(texts.front().second, &ctx);
    for (size_t i = 0; module && i < count && i < ranStages.size(); ++i) {
      PassManager pm(&ctx, ModuleOp::getOperationName());
      addStagePasses(pm, ranStages[i].first, ranStages[i].second);
      if (failed(pm.run(*module)))
        break;
      texts.emplace_back(ranStages[i].first, toText(module->getOperation()));
    }
    return texts;
  }
  std::vector<std::pair<std::string, double>> stageTimes;
  std::vector<PassRecord> passRecords;
  std::vector<ArgumentLayout> layouts;
  std::string schedule;

  /// Reads the schedule poptorch-device-iterations records on @main
  /// (`poptorch.pipeline`), if any.
  void recordPipelineSchedule(ModuleOp module) {
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (auto attr = main ? main->getAttrOfType<StringAttr>("poptorch.pipeline")
                         : StringAttr())
      schedule = attr.str();
  }

  /// Reads `poptorch.packed_shape` and `poptorch.permuted` from @main's
  /// arguments while @main is still a func.func (the LLVM lowering drops
  /// argument attributes).
  void recordArgumentLayouts(ModuleOp module) {
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main)
      return;
    layouts.assign(main.getNumArguments(), {});
    auto read = [&](unsigned i, llvm::StringRef name,
                    std::vector<int64_t> &out) {
      if (auto dims = main.getArgAttrOfType<DenseI64ArrayAttr>(i, name))
        out.assign(dims.asArrayRef().begin(), dims.asArrayRef().end());
    };
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      read(i, "poptorch.packed_shape", layouts[i].shape);
      read(i, "poptorch.permuted", layouts[i].perm);
    }
  }
};

} // namespace

Program::~Program() = default;

std::unique_ptr<Program> Program::compile(const std::string &moduleText,
                                          const CompileOptions &options) {
  auto p = std::make_unique<JitProgram>();
  p->compile(moduleText, options);
  // A compile frees most of what it allocated (the MLIR and LLVM contexts):
  // give the heap's free pages back, or the process keeps them (200 models
  // compiled and dropped: RSS +9 % without this, +2 % with it).
  malloc_trim(0);
  return p;
}

std::string hostCpuDescription() {
  std::string out = llvm::sys::getHostCPUName().str();
  auto features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> on;
  for (auto &f : features)
    if (f.getValue())
      on.push_back(f.getKey().str());
  std::sort(on.begin(), on.end());
  for (auto &f : on)
    out += "," + f;
  return out;
}

uint64_t cacheChecksum(std::string_view data) {
  return llvm::xxh3_64bits(llvm::StringRef(data.data(), data.size()));
}

bool writeFileAtomically(const std::string &path, const std::string &data) {
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return false;
    os << data;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return false;
  }
  return true;
}

void installFatalErrorHandlers() {
  static bool done = [] {
    // LLVM calls these outside its locks; the frames thrown through (built
    // without exceptions) leak what they hold, which is what a compile that
    // failed this way costs.
    llvm::install_fatal_error_handler(
        [](void *, const char *reason, bool) {
          throw CompileError(std::string("LLVM fatal error: ") + reason);
        },
        nullptr);
    llvm::install_bad_alloc_error_handler(
        [](void *, const char *, bool) { throw std::bad_alloc(); }, nullptr);
    return true;
  }();
  (void)done;
}

void releaseAllPrograms() {
  std::lock_guard<std::mutex> lock(registryMutex());
  for (JitProgram *p : liveProgramsSet())
    p->release();
}

void setHostKernelRunner(HostKernelRunner runner) {
  gHostKernelRunner = runner;
}

void hostKernelFailed(const std::string &message) {
  auto *failures = static_cast<CallFailures *>(callContext());
  if (!failures) { // not inside a program call: nobody to report it to
    llvm::errs() << "poptorch internal error: a host kernel failed outside a "
                    "program call: "
                 << message << "\n";
    return;
  }
  std::lock_guard<std::mutex> lock(failures->mu);
  if (!failures->failed) {
    failures->failed = true;
    failures->first = message;
  }
}

} // namespace poptorch_bridge
