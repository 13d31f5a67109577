//===- poptorch-opt.cpp - replay any poptorch pipeline stage ------------===//
//
// The mlir-opt of this project: our dialect and passes plus exactly the
// upstream dialects and passes the compile pipeline uses, so every dumped
// stage can be parsed and every stage of the pipeline replayed by hand.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "poptorch/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::poptorch::registerPoptorchPassesAndPipelines();
  mlir::DialectRegistry registry;
  mlir::poptorch::registerAllPoptorchDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "poptorch optimizer driver\n", registry));
}
