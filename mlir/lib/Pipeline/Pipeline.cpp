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

using namespace mlir;

std::vector<std::pair<std::string, std::string>>
mlir::poptorch::getCompilePipelineStages() {
  return {
      {"decompose", "builtin.module(func.func(poptorch-decompose, canonicalize, cse))"},
      {"to-linalg", "builtin.module(convert-poptorch-to-linalg, canonicalize, cse, "
                    "func.func(poptorch-fuse-elementwise), canonicalize, cse)"},
      {"tile-and-vectorize", "builtin.module(poptorch-tile-and-vectorize, canonicalize, cse)"},
      {"bufferize",
       "builtin.module(one-shot-bufferize{bufferize-function-boundaries "
       "function-boundary-type-conversion=identity-layout-map}, "
       "buffer-results-to-out-params{modify-public-functions hoist-static-allocs}, "
       "canonicalize, buffer-deallocation-pipeline, canonicalize)"},
      {"to-llvm",
       "builtin.module(func.func(convert-linalg-to-loops, "
       "convert-vector-to-scf{full-unroll=true}), "
       "convert-scf-to-openmp, lower-affine, convert-scf-to-cf, "
       "expand-strided-metadata, lower-affine, convert-vector-to-llvm, "
       "convert-math-to-llvm, convert-math-to-libm, finalize-memref-to-llvm, "
       "convert-arith-to-llvm, convert-ub-to-llvm, convert-openmp-to-llvm, "
       "convert-cf-to-llvm, "
       "convert-func-to-llvm, convert-index-to-llvm, reconcile-unrealized-casts)"},
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

void mlir::poptorch::registerPoptorchPassesAndPipelines() {
  registerPoptorchPasses();
  for (auto &[name, text] : getCompilePipelineStages()) {
    std::string full = "poptorch-stage-" + name;
    std::string inner = text;
    PassPipelineRegistration<>(
        full, "poptorch compile stage `" + name + "`",
        [inner](OpPassManager &pm) {
          // Stage text is `builtin.module(...)`; parse its body into pm.
          StringRef body = StringRef(inner).drop_front(strlen("builtin.module("))
                               .drop_back();
          if (failed(parsePassPipeline(body, pm)))
            llvm::report_fatal_error("invalid built-in pipeline text");
        });
  }
}
