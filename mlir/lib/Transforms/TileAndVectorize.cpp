//===- TileAndVectorize.cpp - codegen strategy for linalg ops -----------===//
//
// poptorch-tile-and-vectorize: the CPU codegen strategy, on tensors, before
// bufferization.
//
// * Contractions (anything linalg::inferContractionDims accepts: matmul,
//   batch_matmul, and generics with several m/batch dims) are tiled into
//   register blocks (mr x nr accumulators: 8 x 32 f32 = 16 zmm with AVX-512,
//   6 x 16 = 12 ymm with AVX2; the vector-bits option names the target) with
//   their fill and a single elementwise consumer (bias, relu, ...) fused
//   into the tile loops. The reduction is tiled by kt, every tile is
//   vectorized, the accumulator transfers are hoisted out of the k loop and
//   vector.contract is lowered to outer products (FMAs), or for bf16 with
//   bf16-dot to AVX512-BF16 dot products (LowerVectors.cpp).
// * Channels-last convolutions are tiled into register blocks of 8 output
//   pixels by 32 output channels (AVX2: 6 by 16), the blocks of output channels
//   outermost, with the window and blocks of 8 input channels as inner loops;
//   NCHW convolutions and poolings to one output row and a block of output
//   columns and channels. Both are decomposed to 1-D ops and vectorized.
// * Every other linalg op (elementwise chains, transposes, reductions) is
//   tiled to one vector-sized block of its innermost loop and vectorized.
//
// Partial tiles are vectorized with masks; ops that the vectorizer rejects
// stay tiled and are lowered to loops later.
//
// This file is the pass and the order of its steps; each strategy is a
// file of its own (see TileAndVectorize.h).
//
// Multi-core: an op whose estimated cost reaches min-parallel-cost first gets
// one parallel tile loop as an scf.forall (its outermost parallel loop that
// divides evenly and has enough trips; the contraction's fill and consumer
// are fused into it), and the strategy above then runs on the op inside it.
// The forall becomes an scf.parallel after bufferization and the runtime
// splits its iterations among the workers. Cheaper ops stay sequential:
// waking the workers costs microseconds.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <numeric>

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHTILEANDVECTORIZE
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace mlir::poptorch::tiling {

thread_local VectorTarget target;

VectorTarget targetFor(int64_t vectorBits) {
  return vectorBits == 512 ? VectorTarget{16, 8, 32} : VectorTarget{8, 6, 16};
}

} // namespace mlir::poptorch::tiling

using namespace mlir::poptorch::tiling;

namespace {

/// How many times one call of the program runs `op`: the trip counts of the
/// loops around it, times the runs of the calls of its function (pipeline
/// stages, repeated runs of ops: poptorch-outline-repeats). Nothing if a
/// loop's trip count is unknown or the count overflows. `functionRuns`
/// caches the runs of each private function.
std::optional<int64_t>
timesRun(Operation *op, ModuleOp module,
         DenseMap<Operation *, std::optional<int64_t>> &functionRuns) {
  int64_t runs = 1;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(p)) {
      std::optional<APInt> n = loop.getStaticTripCount();
      if (!n || llvm::MulOverflow(runs, n->getSExtValue(), runs))
        return std::nullopt;
    }
    if (auto loop = dyn_cast<scf::ForallOp>(p)) {
      if (!loop.isNormalized())
        return std::nullopt;
      for (int64_t trips : loop.getStaticUpperBound())
        if (ShapedType::isDynamic(trips) ||
            llvm::MulOverflow(runs, trips, runs))
          return std::nullopt;
    }
    auto fn = dyn_cast<func::FuncOp>(p);
    if (!fn || fn.isPublic())
      continue;
    if (!functionRuns.contains(fn)) {
      std::optional<int64_t> calls = 0;
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(fn, module))
        for (const SymbolTable::SymbolUse &use : *uses) {
          std::optional<int64_t> n =
              timesRun(use.getUser(), module, functionRuns);
          if (!calls || !n || llvm::AddOverflow(*calls, *n, *calls))
            calls = std::nullopt;
        }
      functionRuns[fn] = calls;
    }
    std::optional<int64_t> calls = functionRuns.lookup(fn);
    if (!calls || llvm::MulOverflow(runs, *calls, runs))
      return std::nullopt;
    break;
  }
  return runs;
}

struct TileAndVectorizePass
    : public poptorch::impl::PoptorchTileAndVectorizeBase<
          TileAndVectorizePass> {
  using PoptorchTileAndVectorizeBase::PoptorchTileAndVectorizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (vectorBits != 512 && vectorBits != 256) {
      module.emitError() << "poptorch-tile-and-vectorize: vector-bits must "
                            "be 512 (AVX-512) or 256 (AVX2), not "
                         << int64_t(vectorBits);
      return signalPassFailure();
    }
    target = targetFor(vectorBits);
    target.bf16Dot = bf16Dot;
    IRRewriter rewriter(&getContext());
    int64_t parallelCost = minParallelCost;
    if (minProgramParallelCost > 0) {
      int64_t total = 0;
      DenseMap<Operation *, std::optional<int64_t>> functionRuns;
      module.walk([&](linalg::LinalgOp op) {
        // An op counts once per time a call of the program runs it.
        std::optional<int64_t> runs = timesRun(op, module, functionRuns);
        int64_t cost;
        if (hasStaticLoops(op) && runs &&
            !llvm::MulOverflow(estimateCost(op), *runs, cost) &&
            !llvm::AddOverflow(total, cost, total))
          return WalkResult::advance();
        total = std::numeric_limits<int64_t>::max();
        return WalkResult::interrupt();
      });
      if (total < minProgramParallelCost)
        parallelCost = -1;
    }
    module.walk([&](func::FuncOp func) {
      tileFunction(rewriter, func, parallelCost, packRhs);
    });
    // Static tile shapes (after peeling) must reach the linalg ops and the
    // loop-carried tensors before vectorization, so that full tiles
    // vectorize without masks.
    OpPassManager cleanup(ModuleOp::getOperationName());
    cleanup.addPass(createCanonicalizerPass());
    cleanup.addPass(createCSEPass());
    if (failed(runPipeline(cleanup, module)))
      return signalPassFailure();
    module.walk([&](func::FuncOp func) {
      vectorizeAllIn(rewriter, func);
      poptorch::hoistAndLowerVectors(func, target.lanes, bf16Dot);
    });
  }

  static void tileFunction(RewriterBase &rewriter, func::FuncOp func,
                           int64_t minParallelCost, bool packRhs) {
    // Ops at function level, or in the program's own loops (an im2col's
    // sequential loop over kernel offsets, blocked attention's parallel loop
    // over heads): what is inside a tile loop has been handled, and the tile
    // loops made here are not among `ownLoops`. An op in a parallel loop of
    // the program runs on one thread: it gets no parallel loop of its own.
    llvm::SmallPtrSet<Operation *, 8> ownLoops;
    func.walk([&](Operation *loop) {
      if (isa<scf::ForOp, scf::ForallOp>(loop))
        ownLoops.insert(loop);
    });
    auto parallelCostOf = [&](linalg::LinalgOp op) {
      return op->getParentOfType<scf::ForallOp>() ? -1 : minParallelCost;
    };
    auto topLevel = [&](auto pred) {
      SmallVector<linalg::LinalgOp> ops;
      func.walk([&](linalg::LinalgOp l) {
        for (Operation *p = l->getParentOp(); p != func; p = p->getParentOp())
          if (!ownLoops.contains(p))
            return;
        // A producer fused into the tiles of its consumer (the fill of a
        // contraction's or convolution's output) is left without users:
        // tiling it would be work for canonicalization to throw away.
        if (l.hasPureTensorSemantics() && !l->use_empty() && pred(l))
          ops.push_back(l);
      });
      return ops;
    };
    for (linalg::LinalgOp op : topLevel([](linalg::LinalgOp l) {
           return !isa<linalg::FillOp>(l) && !isConvolutionLike(l) &&
                  l.getNumReductionLoops() > 0;
         }))
      tileAsContraction(rewriter, op, parallelCostOf(op), packRhs);
    for (linalg::LinalgOp op : topLevel(isConvolutionLike))
      tileConvolution(rewriter, op, parallelCostOf(op), packRhs);
    // What is still at function level (including contraction-shaped ops
    // without an n dim, e.g. sums of squares) takes the generic path.
    for (linalg::LinalgOp op :
         topLevel([](linalg::LinalgOp l) { return !isConvolutionLike(l); }))
      tileGeneric(rewriter, op, parallelCostOf(op));
  }
};

} // namespace
