//===- Passes.h - poptorch passes and pipelines -------------------------===//
#ifndef POPTORCH_TRANSFORMS_PASSES_H
#define POPTORCH_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.h"

#include <string>

namespace mlir::poptorch {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "poptorch/Transforms/Passes.h.inc"

/// Registers our passes and the named pipelines `poptorch-stage-<name>` for
/// each stage of getCompilePipelineStages() and getOutlineStagesStage().
void registerPoptorchPassesAndPipelines();

/// The textual pipelines, stage by stage, exactly as the compiler runs them.
/// Each element is {stage name, pipeline text}.
std::vector<std::pair<std::string, std::string>> getCompilePipelineStages();

/// The stage that runs first when pipeline stages overlap
/// (PipelinedExecution): {"outline-stages", pipeline text}.
std::pair<std::string, std::string> getOutlineStagesStage();

/// The rewrites of poptorch-decompose (composite ops into core poptorch ops),
/// for passes that want to apply them together with their own patterns.
void populatePoptorchDecomposePatterns(RewritePatternSet &patterns);

/// The columns of the register block that poptorch-tile-and-vectorize gives
/// a contraction with `m` rows on a target with `vectorBits`-wide registers
/// (the width of the panels poptorch-pack-weights lays weights out in).
int64_t contractionBlockColumns(int64_t m, int64_t vectorBits);

/// Registers every dialect the pipelines use, so tools can parse any stage.
void registerAllPoptorchDialects(DialectRegistry &registry);

} // namespace mlir::poptorch

#endif // POPTORCH_TRANSFORMS_PASSES_H
