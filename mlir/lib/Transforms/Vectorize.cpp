//===- Vectorize.cpp - vectorization of tiles -----------------------------===//
//
// The last step of poptorch-tile-and-vectorize before the vector lowering:
// every tiled linalg op is vectorized, masked when its shape is dynamic, a
// contraction's register tile as a vector.contract of its operands in
// their own shapes.
//
//===----------------------------------------------------------------------===//
#include "TileAndVectorize.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;

namespace mlir::poptorch::tiling {

/// Constant upper bounds of the loop ranges of `op` (the tile sizes, for a
/// partial tile): the vector sizes for masked vectorization.
FailureOr<SmallVector<int64_t>> getLoopUpperBounds(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [d, r] : llvm::enumerate(ranges)) {
    if (!ShapedType::isDynamic(r))
      continue;
    // Find an operand dimension indexed by loop d and bound it.
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (!dim || dim.getPosition() != d)
          continue;
        FailureOr<int64_t> ub = ValueBoundsConstraintSet::computeConstantBound(
            presburger::BoundType::UB, {operand.get(), (int64_t)pos},
            /*stopCondition=*/nullptr, /*closedUB=*/true);
        if (succeeded(ub)) {
          r = *ub;
          break;
        }
      }
      if (!ShapedType::isDynamic(r))
        break;
    }
    if (ShapedType::isDynamic(r))
      return failure();
  }
  return ranges;
}

/// Vectorizes `op`, masked when its shape is dynamic. Leaves it alone (to be
/// lowered to loops later) when the vectorizer cannot handle it.
void vectorizeIfPossible(RewriterBase &rewriter, linalg::LinalgOp op) {
  // Bool tensors are stored one byte per element (torch.bool's layout, and
  // what scalar i1 loads and stores use), but LLVM packs vector<N x i1>
  // loads and stores into bits: ops that read or write i1 tensors stay scalar.
  auto isBoolTensor = [](Value v) {
    auto t = dyn_cast<ShapedType>(v.getType());
    return t && t.getElementType().isInteger(1);
  };
  if (llvm::any_of(op->getOperands(), isBoolTensor) ||
      llvm::any_of(op->getResults(), isBoolTensor))
    return;
  // (Also a body that gathers from one: its tensor.extract would become a
  // vector read of i1, bits where the tensor has bytes.)
  bool gathersBool = false;
  op->walk([&](tensor::ExtractOp extract) {
    gathersBool |= isBoolTensor(extract.getTensor());
  });
  if (gathersBool)
    return;
  SmallVector<int64_t> sizes;
  bool isContraction = op.getNumReductionLoops() > 0 &&
                       succeeded(linalg::inferContractionDims(op));
  if (!hasStaticLoops(op)) {
    // Masked contractions lower to poor code: their partial tiles (peeled
    // off by the tiling) stay scalar loops.
    if (isContraction)
      return;
    FailureOr<SmallVector<int64_t>> ub = getLoopUpperBounds(op);
    if (failed(ub))
      return;
    sizes = *ub;
  }
  // Whole untiled ops would become huge vectors (and a huge LLVM module):
  // counted in whole registers along the innermost loop.
  SmallVector<int64_t> shape(sizes.empty() ? op.getStaticLoopRanges() : sizes);
  int64_t elems = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    elems *= d + 1 == shape.size() ? roundUp(shape[d], target.lanes) : shape[d];
  if (elems > 4 * kMaxVectorElems)
    return;
  if (failed(linalg::vectorizeOpPrecondition(
          op, sizes, SmallVector<bool>(sizes.size(), false))))
    return;
  // A gather of one element (a 0-d op reading a tensor.extract) would become
  // a vector.gather of 0-d vectors, which is invalid: it stays scalar.
  if (op.getNumLoops() == 0 &&
      !op->getRegion(0).getOps<tensor::ExtractOp>().empty())
    return;
  rewriter.setInsertionPoint(op);
  SmallVector<bool> scalable(sizes.size(), false);
  FailureOr<linalg::VectorizationResult> result =
      linalg::vectorize(rewriter, op, sizes, scalable,
                        /*vectorizeNDExtract=*/false,
                        /*flatten1DDepthwiseConv=*/false,
                        /*assumeDynamicDimsMatchVecSizes=*/false,
                        /*createNamedContraction=*/isContraction);
  if (failed(result))
    return;
  if (result->replacements.empty())
    rewriter.eraseOp(op);
  else
    rewriter.replaceOp(op, result->replacements);
}

/// A register tile of a generic contraction with unit loops (a panel
/// matmul's tile has one panel: (m, 1, nr, k)) as the named op it is once
/// they are dropped (rank-reducing slices of its operands), or `op` as it
/// is. The vectorizer makes a generic contraction's operands one vector of
/// the whole iteration space each, which the contraction lowering unrolled
/// into a horizontal sum per output element; a linalg.matmul's operands
/// keep their shapes and become a register tile of FMAs.
linalg::LinalgOp asNamedContraction(RewriterBase &rewriter,
                                    linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || op.getNumReductionLoops() == 0 || !hasStaticLoops(op))
    return op;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return op;
  // The innermost m, n and k loops stay, unit or not: a one-row tile is a
  // 1 x nr matmul, not a matrix-vector product (whose vectorization reads B
  // transposed). Both loops of a paired reduction stay.
  bool paired = pairedReductionLoop(op, *dims).has_value();
  SmallVector<unsigned> unit;
  for (auto [d, range] : llvm::enumerate(op.getStaticLoopRanges()))
    if (range == 1 && d != dims->m.back() && d != dims->n.back() &&
        d != dims->k.back() && !(paired && d == dims->k[0]))
      unit.push_back(d);
  if (unit.empty())
    return op;
  linalg::ControlDropUnitDims options;
  options.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  options.controlFn = [&](Operation *) { return unit; };
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::DropUnitDimsResult> dropped =
      linalg::dropUnitDims(rewriter, generic, options);
  if (failed(dropped))
    return op;
  rewriter.replaceOp(generic, dropped->replacements);
  auto reduced = dyn_cast<linalg::GenericOp>(dropped->resultOp.getOperation());
  if (!reduced)
    return cast<linalg::LinalgOp>(dropped->resultOp.getOperation());
  // (The insertion point was before the op just replaced: the named op takes
  // the reduced op's place, before the insert_slice of its result.)
  rewriter.setInsertionPoint(reduced);
  FailureOr<linalg::LinalgOp> named =
      linalg::specializeGenericOp(rewriter, reduced);
  return succeeded(named) ? *named : cast<linalg::LinalgOp>(*reduced);
}

/// Vectorizes a register tile of a contraction over pairs of k (see
/// pairedReductionLoop) as one vector.contract of its operands read whole,
/// in their own shapes, which LowerVectors.cpp's ContractToBF16Dot makes
/// dot products of. (The generic vectorizer would read every operand
/// broadcast to the whole iteration space.) Fails, changing nothing, for any
/// other op.
LogicalResult vectorizePairedContraction(RewriterBase &rewriter,
                                         linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || !pairedReductionLoop(op, *dims) ||
      !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  // Each operand is read whole. The inputs' two innermost dims (a pair and
  // the dim outside it) are read as one, from a collapsed view: the rows of
  // pairs that the dot products take, which the lowering's shape casts of
  // the operands then fold into.
  auto read = [&](Value tensor, bool mergeInner) -> Value {
    auto type = cast<RankedTensorType>(tensor.getType());
    Type elem = type.getElementType();
    Value pad = ub::PoisonOp::create(rewriter, loc, elem);
    if (!mergeInner)
      return vector::TransferReadOp::create(
          rewriter, loc, VectorType::get(type.getShape(), elem), tensor,
          SmallVector<Value>(type.getRank(), zero), pad,
          SmallVector<bool>(type.getRank(), true));
    int64_t rank = type.getRank();
    SmallVector<ReassociationIndices> inner;
    for (int64_t d = 0; d + 2 < rank; ++d)
      inner.push_back({d});
    inner.push_back({rank - 2, rank - 1});
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc, tensor, inner);
    auto flatType = cast<RankedTensorType>(flat.getType());
    Value rows = vector::TransferReadOp::create(
        rewriter, loc, VectorType::get(flatType.getShape(), elem), flat,
        SmallVector<Value>(rank - 1, zero), pad,
        SmallVector<bool>(rank - 1, true));
    return vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get(type.getShape(), elem), rows);
  };
  Value init = op.getDpsInitOperand(0)->get();
  SmallVector<Attribute> iterators;
  for (utils::IteratorType it : op.getIteratorTypesArray())
    iterators.push_back(vector::IteratorTypeAttr::get(
        rewriter.getContext(), it == utils::IteratorType::parallel
                                   ? vector::IteratorType::parallel
                                   : vector::IteratorType::reduction));
  Value sum = vector::ContractionOp::create(
      rewriter, loc, read(op.getDpsInputOperand(0)->get(), true),
      read(op.getDpsInputOperand(1)->get(), true), read(init, false),
      rewriter.getAffineMapArrayAttr(op.getIndexingMapsArray()),
      rewriter.getArrayAttr(iterators));
  auto initType = cast<RankedTensorType>(init.getType());
  auto write = vector::TransferWriteOp::create(
      rewriter, loc, sum, init, SmallVector<Value>(initType.getRank(), zero),
      SmallVector<bool>(initType.getRank(), true));
  rewriter.replaceOp(op, write.getResult());
  return success();
}

void vectorizeAllIn(RewriterBase &rewriter, Operation *root) {
  SmallVector<linalg::LinalgOp> ops;
  root->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (linalg::LinalgOp op : ops) {
    linalg::LinalgOp tile = asNamedContraction(rewriter, op);
    if (failed(vectorizePairedContraction(rewriter, tile)))
      vectorizeIfPossible(rewriter, tile);
  }
}

} // namespace mlir::poptorch::tiling
