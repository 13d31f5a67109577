//===- Pipeline.cpp - the compile pipeline as textual stages -------------===//
//
// The one place that says what the compiler runs, in the textual form that
// poptorch-opt accepts, so every stage can be dumped and replayed.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"

#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

using namespace mlir;

namespace {

/// Ops below this estimated cost (see poptorch-tile-and-vectorize) run
/// sequentially. While parallel loops ran on the MLIR async runtime's own
/// pool, whose workers sleep when idle, a loop under ~1 ms of work lost
/// 50-70 us waking the idle second vCPU, and in make bench eager's and ONNX
/// Runtime's spinning threads held that core: the threshold had to be 2^25
/// (MLP b8 took 4.9 ms instead of 1.1 with 2^23). Programs now run on torch's
/// own intra-op threads, whose team stays awake for the call
/// (csrc/bridge/TaskRuntime.cpp). Re-measured then (2026-11-30,
/// side_by_side.py --env, medians of 20 calls; 2^25 / 2^21 / 2^17): MLP b8
/// 0.79 / 0.37 / 0.36 ms, MobileNetV2 b1 13.9 / 10.8 / 10.4 ms, b8 - / 73.6 /
/// 70.5 ms, ResNet-18 b1 31.0 / 30.8 / 29.8 ms.
constexpr int64_t kMinParallelCost = int64_t(1) << 17;

/// A program whose ops add up to less than this runs on one thread
/// (min-program-parallel-cost): a call with a parallel loop needs the second
/// thread scheduled during it, and a tiny program gains little. With
/// parallel loops the MLP at batch 1 (ops of 1.6e6 and 2.1e6, 0.16 ms alone
/// against 0.29 on one thread) ran at 1.9 ms (0.23x eager) in one make bench
/// run, where ONNX Runtime's spinning threads held the cores (the benchmark
/// has since turned its spinning off; any busy second core does the same);
/// at batch 8 (2.9e7 in all) it keeps its parallel loops. Per op instead
/// (2^22 for every op) would cost ResNet-18 b1 6% and MobileNetV2 b8 8%.
/// 2^23 -> 2^21 (2026-12-01) once the benchmark's peers no longer spun: the
/// MLP at batch 1 (3.7e6 in all, but 7 MB of weights read per call) in
/// suite.py with eager, Inductor and ONNX Runtime interleaved, two runs each,
/// one thread / two: 0.66 / 0.39 ms and 0.55 / 0.36 ms (0.96x / 1.46x and
/// 0.88x / 1.11x eager).
constexpr int64_t kMinProgramParallelCost = int64_t(1) << 21;

/// The width of the host's vector registers: 512 with AVX-512, else 256
/// (AVX2; x86-64 hosts without it still get correct, slower code).
int64_t hostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512f") ? 512 : 256;
}

/// Whether the host has AVX512-BF16's dot products (vdpbf16ps): Intel from
/// Cooper Lake and Sapphire Rapids, AMD from Zen 4.
bool hostHasBF16Dot() {
  return llvm::sys::getHostCPUFeatures().lookup("avx512bf16");
}

/// The text after `name=` in POPTORCH_TILE_OPTIONS (see below), up to the
/// next space, if it names that option.
std::optional<llvm::StringRef> tileOptionValue(llvm::StringRef name) {
  const char *env = std::getenv("POPTORCH_TILE_OPTIONS");
  llvm::StringRef options = env ? env : "";
  size_t at = options.find((name + "=").str());
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  return options.drop_front(at + name.size() + 1).take_until(llvm::isSpace);
}

/// The vector width the code generator targets: the host's, or the
/// vector-bits of POPTORCH_TILE_OPTIONS when it names one, so that weight
/// panels and register blocks agree.
int64_t targetVectorBits() {
  int64_t bits;
  if (std::optional<llvm::StringRef> value = tileOptionValue("vector-bits"))
    if (!value->take_while(llvm::isDigit).getAsInteger(10, bits))
      return bits;
  return hostVectorBits();
}

/// Whether the code generator uses AVX512-BF16's dot products: the host's
/// answer, or the bf16-dot of POPTORCH_TILE_OPTIONS when it names one, so
/// that weights are laid out in pairs (poptorch-pack-weights' bf16-pairs)
/// exactly when the register tiles read them as pairs.
bool targetBF16Dot() {
  if (std::optional<llvm::StringRef> value = tileOptionValue("bf16-dot"))
    return value->starts_with("true") || value->starts_with("1");
  return hostHasBF16Dot();
}

/// The options of poptorch-tile-and-vectorize: min-parallel-cost, or the text
/// of POPTORCH_TILE_OPTIONS when set (e.g. "min-parallel-cost=67108864
/// pack-rhs=false"), for measuring the code generator's choices side by side
/// (benchmarks/side_by_side.py --env). The stage text, and so the executable
/// cache key, carries them.
std::string tileAndVectorizeStage() {
  std::string options =
      "min-parallel-cost=" + std::to_string(kMinParallelCost) +
      " min-program-parallel-cost=" + std::to_string(kMinProgramParallelCost);
  if (const char *env = std::getenv("POPTORCH_TILE_OPTIONS"))
    options = env;
  if (options.find("vector-bits") == std::string::npos)
    options += " vector-bits=" + std::to_string(targetVectorBits());
  if (options.find("bf16-dot") == std::string::npos)
    options += targetBF16Dot() ? " bf16-dot=true" : " bf16-dot=false";
  return "builtin.module(poptorch-tile-and-vectorize{" + options +
         "}, canonicalize, cse)";
}

/// scf.forall loops of the tiling pass become calls of the task runtime
/// (csrc/bridge/TaskRuntime.cpp), which runs ranges of their iterations on a
/// team of torch's intra-op threads per call (ParallelLoops.cpp). The async
/// ops of overlapping pipeline stages become coroutines of the same runtime.
std::string parallelLoopsToRuntime() {
  return "func.func(poptorch-parallel-loops), async-to-async-runtime, "
         "async-runtime-ref-counting, async-runtime-ref-counting-opt, "
         "convert-async-to-llvm, ";
}

} // namespace

std::vector<std::pair<std::string, std::string>>
mlir::poptorch::getCompilePipelineStages() {
  return {
      {"decompose",
       "builtin.module(func.func(poptorch-decompose, canonicalize, cse, "
       "poptorch-prepack-parameters), poptorch-prepack-stage-parameters)"},
      {"to-linalg",
       "builtin.module(convert-poptorch-to-linalg, canonicalize, cse, "
       "func.func(poptorch-sink-transposes, "
       "poptorch-pack-weights{vector-bits=" +
           std::to_string(targetVectorBits()) +
           (targetBF16Dot() ? " bf16-pairs=true" : "") +
           "}, poptorch-fuse-elementwise, poptorch-split-padding), "
           "canonicalize, cse, "
           "poptorch-outline-repeats)"},
      {"tile-and-vectorize", tileAndVectorizeStage()},
      {"bufferize",
       // The caller's tensors (inputs, weights) are never written: a
       // result that would update one in place gets its own buffer.
       "builtin.module(func.func(poptorch-distinct-buffers), "
       "poptorch-readonly-arguments, "
       "one-shot-bufferize{bufferize-function-boundaries "
       // The device-iteration loop carries buffer updates whose new value
       // lives in a new buffer.
       "allow-return-allocs-from-loops "
       "function-boundary-type-conversion=identity-layout-map}, "
       // A returned reshape of a buffer becomes the buffer, which the next
       // pass replaces with the caller's instead of copying into it.
       "func.func(poptorch-return-allocations), "
       "buffer-results-to-out-params{modify-public-functions "
       "hoist-static-allocs}, "
       // A register tile's packed panel or accumulator allocated in a
       // sequential loop is allocated once per task instead: below the
       // buffer pool's size those are malloc/free pairs, 3-5% of MobileNetV2
       // b8's cycles inside glibc when made per reduction step. The hoisting
       // stops at parallel loops, whose tasks need buffers of their own.
       "func.func(buffer-loop-hoisting), "
       // The deallocation pipeline canonicalizes before and after its
       // passes: another canonicalize on each side changed nothing (BERT's
       // module came out byte for byte the same) and cost 10% of the stage.
       "buffer-deallocation-pipeline, poptorch-buffer-live-ranges, "
       "poptorch-verify-readonly-arguments)"},
      // convert-math-to-libm unrolls vector math ops without an LLVM
      // intrinsic (asinh, erfc, f64 erf, ...) into vector ops: it runs before
      // convert-vector-to-llvm.
      {"to-llvm",
       "builtin.module(poptorch-overlap-stages, poptorch-outline-kernels, "
       "poptorch-approximate-math, poptorch-strided-reads, "
       // bf16 truncations in integer ops: x86 LLVM cannot legalize a vector
       // fptrunc to bfloat.
       "func.func(arith-expand{include-bf16=true}), "
       "func.func(convert-linalg-to-loops, "
       "convert-vector-to-scf{full-unroll=true}), " +
           parallelLoopsToRuntime() +
           // The conversions that work inside one function run nested, so
           // that the context's threads share the functions out; only those
           // that add declarations or change signatures (math-to-libm,
           // memref, cf, func) run on the module. MobileNetV2 b8's module
           // came out byte for byte the same as with every pass on the
           // module, and the passes after convert-async-to-llvm took 1.65 /
           // 1.80 s instead of 2.63 / 2.36 s (poptorch-opt, two alternating
           // runs on 2 cores).
           "func.func(lower-affine, convert-scf-to-cf, "
           "expand-strided-metadata, lower-affine, convert-math-to-llvm), "
           "convert-math-to-libm, "
           "func.func(convert-vector-to-llvm{enable-x86vector=true}), "
           // Buffers come from the runtime's pool (csrc/bridge/BufferPool):
           // a program allocates the same sizes on every call.
           "finalize-memref-to-llvm{use-generic-functions=true}, "
           "func.func(convert-arith-to-llvm, convert-ub-to-llvm, "
           "convert-index-to-llvm), "
           "convert-cf-to-llvm, convert-func-to-llvm, "
           "llvm.func(reconcile-unrealized-casts), poptorch-outline-parallel, "
           "poptorch-kernel-codegen)"},
  };
}

void mlir::poptorch::registerAllPoptorchDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<PoptorchDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

namespace mlir::poptorch {
void registerPrepackStageParametersPass(); // PipelineStages.cpp
} // namespace mlir::poptorch

std::pair<std::string, std::string> mlir::poptorch::getOutlineStagesStage() {
  return {"outline-stages", "builtin.module(poptorch-outline-stages)"};
}

void mlir::poptorch::registerPoptorchPassesAndPipelines() {
  registerPoptorchPasses();
  registerPrepackStageParametersPass();
  auto stages = getCompilePipelineStages();
  stages.push_back(getOutlineStagesStage());
  for (auto &[name, text] : stages) {
    std::string full = "poptorch-stage-" + name;
    std::string inner = text;
    PassPipelineRegistration<>(
        full, "poptorch compile stage `" + name + "`",
        [inner](OpPassManager &pm) {
          // Stage text is `builtin.module(...)`; parse its body into pm.
          StringRef body = StringRef(inner)
                               .drop_front(strlen("builtin.module("))
                               .drop_back();
          if (failed(parsePassPipeline(body, pm)))
            llvm::report_fatal_error("invalid built-in pipeline text");
        });
  }
}
