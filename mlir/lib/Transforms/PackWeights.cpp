//===- PackWeights.cpp - matmul weights in panels of block columns -------===//
//
// A linear layer's weight reaches the program as a K x N parameter (already
// transposed at upload by poptorch-prepack-parameters). A register tile of
// the matmul reads an nr-column strip of it: nr elements out of every row,
// rows N elements apart, so each k step touches a new page and the hardware
// prefetchers, which stop at page boundaries, do not help. Large matmuls
// copy each strip into a panel per call (poptorch-tile-and-vectorize's
// packRhsPanel) and amortize the copy over their row tiles; a skinny one
// (batch 1 or 8) has one row tile, nothing to amortize a copy over, and
// streamed the weight at a third of the bandwidth the caches give.
//
// Parameters are uploaded once, so the strips can be laid out contiguously
// then: the argument becomes (N / nr) x K x nr and each matmul a contraction
// over (m, panel, column, k) that reads panel p where it read columns
// [p nr, (p + 1) nr). The result is the matmul's, expanded to
// M x (N / nr) x nr and collapsed back (both free); elementwise consumers
// (bias, activation) take the expanded shape in poptorch-fuse-elementwise
// and still join the contraction's register tiles.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHPACKWEIGHTS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// A use of a weight as the B operand of a plain (untransposed,
/// unbroadcast) linalg.matmul on tensors.
linalg::MatmulOp matmulReadingAsRhs(OpOperand &use) {
  auto mm = dyn_cast<linalg::MatmulOp>(use.getOwner());
  if (!mm || mm.hasUserDefinedMaps() || !mm.hasPureTensorSemantics() ||
      use.getOperandNumber() != 1)
    return nullptr;
  return mm;
}

/// The panel width for `weight` (K x N, static), or 0 if it is not packed:
/// every use must be a matmul's B, all of them with the same register block
/// columns, and N a multiple of them wider than one block.
int64_t panelColumns(BlockArgument weight, int64_t vectorBits) {
  auto ty = dyn_cast<RankedTensorType>(weight.getType());
  if (!ty || ty.getRank() != 2 || !ty.hasStaticShape() ||
      !ty.getElementType().isIntOrFloat() || weight.use_empty())
    return 0;
  int64_t nr = 0;
  for (OpOperand &use : weight.getUses()) {
    linalg::MatmulOp mm = matmulReadingAsRhs(use);
    auto lhsTy = mm ? dyn_cast<RankedTensorType>(mm.getInputs()[0].getType())
                    : RankedTensorType();
    if (!lhsTy || lhsTy.isDynamicDim(0))
      return 0;
    int64_t cols =
        poptorch::contractionBlockColumns(lhsTy.getDimSize(0), vectorBits);
    if (nr && cols != nr)
      return 0;
    nr = cols;
  }
  int64_t n = ty.getDimSize(1);
  return n > nr && n % nr == 0 ? nr : 0;
}

/// Replaces `mm` (A: M x K, B: K x N) by the contraction reading B from
/// `panels` ((N / nr) x K x nr, or in pairs of rows (N / nr) x (K / 2) x nr
/// x 2), with the matmul's own body (its casts of float16/bfloat16 inputs to
/// the accumulator's type included).
void rewriteAsPanelContraction(RewriterBase &rewriter, linalg::MatmulOp mm,
                               Value panels) {
  Location loc = mm.getLoc();
  auto panelTy = cast<RankedTensorType>(panels.getType());
  bool paired = panelTy.getRank() == 4;
  Value init = mm.getDpsInits()[0];
  auto initTy = cast<RankedTensorType>(init.getType());
  SmallVector<ReassociationIndices> splitColumns = {{0}, {1, 2}};
  auto init3Ty = RankedTensorType::get(
      {initTy.getDimSize(0), panelTy.getDimSize(0), panelTy.getDimSize(2)},
      initTy.getElementType());
  rewriter.setInsertionPoint(mm);
  Value init3 =
      tensor::ExpandShapeOp::create(rewriter, loc, init3Ty, init, splitColumns);
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  Value lhs = mm.getInputs()[0];
  if (paired) {
    // Loops (m, p, j, kp, kr): A viewed as (M, K / 2, 2) (kp, kr),
    // panels(p, kp, j, kr), result(m, p, j).
    AffineExpr m, p, j, kp, kr;
    bindDims(ctx, m, p, j, kp, kr);
    maps = {AffineMap::get(5, 0, {m, kp, kr}, ctx),
            AffineMap::get(5, 0, {p, kp, j, kr}, ctx),
            AffineMap::get(5, 0, {m, p, j}, ctx)};
    iterators.append(2, utils::IteratorType::reduction);
    auto lhsTy = cast<RankedTensorType>(lhs.getType());
    lhs = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({lhsTy.getDimSize(0), lhsTy.getDimSize(1) / 2, 2},
                              lhsTy.getElementType()),
        lhs, splitColumns);
  } else {
    // Loops (m, p, j, k): A(m, k), panels(p, k, j), result(m, p, j).
    AffineExpr m, p, j, k;
    bindDims(ctx, m, p, j, k);
    maps = {AffineMap::get(4, 0, {m, k}, ctx),
            AffineMap::get(4, 0, {p, k, j}, ctx),
            AffineMap::get(4, 0, {m, p, j}, ctx)};
    iterators.push_back(utils::IteratorType::reduction);
  }
  auto contraction = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init3Ty}, ValueRange{lhs, panels},
      ValueRange{init3}, maps, iterators);
  IRMapping none;
  mm->getRegion(0).cloneInto(&contraction.getRegion(), none);
  Value result = tensor::CollapseShapeOp::create(
      rewriter, loc, initTy, contraction.getResult(0), splitColumns);
  rewriter.replaceOp(mm, result);
}

struct PackWeightsPass
    : public poptorch::impl::PoptorchPackWeightsBase<PackWeightsPass> {
  using PoptorchPackWeightsBase::PoptorchPackWeightsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.isPublic())
      return;
    if (vectorBits != 512 && vectorBits != 256) {
      func.emitError() << "poptorch-pack-weights: vector-bits must be 512 or "
                          "256, not "
                       << int64_t(vectorBits);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    bool changed = false;
    for (BlockArgument arg : func.front().getArguments()) {
      unsigned index = arg.getArgNumber();
      auto role = func.getArgAttrOfType<StringAttr>(index, "poptorch.role");
      if (!role || role.getValue() != "parameter" ||
          func.getArgAttr(index, "poptorch.packed_shape"))
        continue;
      int64_t nr = panelColumns(arg, vectorBits);
      if (!nr)
        continue;
      auto ty = cast<RankedTensorType>(arg.getType());
      int64_t k = ty.getDimSize(0), n = ty.getDimSize(1);
      // The layout, from the parameter as the model holds it: viewed as
      // `shape`, then permuted. A transposed linear weight (N x K, marked
      // permuted [1, 0]) is viewed as (N / nr) x nr x K; a K x N parameter
      // as K x (N / nr) x nr.
      auto permuted =
          func.getArgAttrOfType<DenseI64ArrayAttr>(index, "poptorch.permuted");
      bool transposed =
          permuted && permuted.asArrayRef() == ArrayRef<int64_t>{1, 0};
      if (permuted && !transposed)
        continue;
      SmallVector<int64_t> shape = transposed
                                       ? SmallVector<int64_t>{n / nr, nr, k}
                                       : SmallVector<int64_t>{k, n / nr, nr};
      SmallVector<int64_t> perm = transposed ? SmallVector<int64_t>{0, 2, 1}
                                             : SmallVector<int64_t>{1, 0, 2};
      SmallVector<int64_t> packed = {n / nr, k, nr};
      // In pairs of rows for the dot products: (N / nr) x (K / 2) x nr x 2,
      // from the parameter viewed as (N / nr) x nr x (K / 2) x 2 or
      // (K / 2) x 2 x (N / nr) x nr.
      if (bf16Pairs && ty.getElementType().isBF16() && k % 2 == 0) {
        shape = transposed ? SmallVector<int64_t>{n / nr, nr, k / 2, 2}
                           : SmallVector<int64_t>{k / 2, 2, n / nr, nr};
        perm = transposed ? SmallVector<int64_t>{0, 2, 1, 3}
                          : SmallVector<int64_t>{2, 0, 3, 1};
        packed = {n / nr, k / 2, nr, 2};
      }
      arg.setType(RankedTensorType::get(packed, ty.getElementType()));
      for (OpOperand &use : llvm::make_early_inc_range(arg.getUses()))
        rewriteAsPanelContraction(rewriter, matmulReadingAsRhs(use), arg);
      func.setArgAttr(index, "poptorch.packed_shape",
                      rewriter.getDenseI64ArrayAttr(shape));
      func.setArgAttr(index, "poptorch.permuted",
                      rewriter.getDenseI64ArrayAttr(perm));
      changed = true;
    }
    if (changed)
      func.setType(FunctionType::get(&getContext(),
                                     func.front().getArgumentTypes(),
                                     func.getResultTypes()));
  }
};

} // namespace
