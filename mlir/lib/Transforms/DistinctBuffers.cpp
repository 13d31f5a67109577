//===- DistinctBuffers.cpp - undo CSE merges that bufferization copies ----===//
//
// CSE merges equal values; bufferization then has to share one buffer between
// their users and resolves every conflict with a copy. This pass undoes the two
// merges that cost copies:
//
// * a value returned twice (each result is its own caller-provided buffer):
//   later duplicates get an explicit copy;
// * a fill (computed from tensor.empty and constants only) that several
//   tensor.insert_slice ops write into, as the zero borders of padded
//   convolution inputs of the same shape are: each insert after the first gets
//   a clone of the fill, and the in-place producer of the inserted value is
//   redirected to an extract_slice of that clone.
//
// It also undoes one rewrite of elementwise fusion: a fused op that does not
// read its init gets a tensor.empty there, so a value computed to be inserted
// into a fill (the channels-last input of a convolution, written into the
// zero-padded tensor) would be computed into a temporary and copied. Its init
// becomes the slice of the fill that the insert writes.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHDISTINCTBUFFERS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// Later results that repeat an earlier one become copies of it.
void copyRepeatedResults(func::FuncOp func) {
  func.walk([](func::ReturnOp ret) {
    llvm::SmallDenseSet<Value> seen;
    OpBuilder b(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || seen.insert(v).second)
        continue;
      Value init = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(),
                                           type.getElementType());
      operand.set(
          linalg::CopyOp::create(b, ret.getLoc(), v, init).getResult(0));
    }
  });
}

/// Whether `v` is computed from tensor.empty and constants only, by an op
/// without side effects: cloning it recomputes the same value.
bool isFill(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumResults() != 1 || !isMemoryEffectFree(op))
    return false;
  auto fromEmpty = [](Value operand) {
    return !isa<TensorType>(operand.getType()) ||
           operand.getDefiningOp<tensor::EmptyOp>();
  };
  if (!llvm::all_of(op->getOperands(), fromEmpty))
    return false;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return llvm::all_of(captured, fromEmpty);
}

/// The operand through which `v` was computed in place: the tied init of a
/// destination-style op or of a loop. Null when there is none.
OpOperand *tiedInit(Value v) {
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return nullptr;
  Operation *op = result.getOwner();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.getTiedOpOperand(result);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return &loop.getInitArgsMutable()[result.getResultNumber()];
  if (auto forall = dyn_cast<scf::ForallOp>(op))
    return &forall.getOutputsMutable()[result.getResultNumber()];
  return nullptr;
}

/// `v` with the reshapes that produced it looked through; they are appended
/// to `path` when given.
Value throughReshapes(Value v, llvm::SmallVectorImpl<Operation *> *path) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
      break;
    if (path)
      path->push_back(op);
    v = op->getOperand(0);
  }
  return v;
}

/// The operand through which the value `insert` writes was computed in place
/// into an extract_slice of `fill` at the position `insert` writes, and the
/// ops from that operand back to the extract_slice (reshapes, then the
/// extract_slice). Null when the value was not computed that way.
OpOperand *inPlaceSource(tensor::InsertSliceOp insert, Value fill,
                         llvm::SmallVectorImpl<Operation *> &path) {
  Value v = insert.getSource();
  while (OpOperand *init = tiedInit(throughReshapes(v, nullptr))) {
    path.clear();
    auto extract = throughReshapes(init->get(), &path)
                       .getDefiningOp<tensor::ExtractSliceOp>();
    if (extract && extract.getSource() == fill &&
        extract.getMixedOffsets() == insert.getMixedOffsets() &&
        extract.getMixedSizes() == insert.getMixedSizes() &&
        extract.getMixedStrides() == insert.getMixedStrides()) {
      path.push_back(extract);
      return init;
    }
    v = init->get();
  }
  return nullptr;
}

/// The operand through which the value `insert` writes was computed in
/// place into a fresh tensor.empty (elementwise fusion gives a fused op that
/// never reads its init a tensor.empty): computed into the slice of the
/// destination that `insert` writes instead, it needs no copy. The value may
/// reach `insert` through collapse_shapes (a channel dim computed in blocks,
/// (N, C / 32, 32, H, W), inserted as (N, C, H, W)): they are appended to
/// `collapses`, and the slice is expanded back for the init. Null when the
/// value was not computed that way.
OpOperand *emptySource(tensor::InsertSliceOp insert,
                       llvm::SmallVectorImpl<Operation *> &collapses) {
  Value v = insert.getSource();
  while (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    collapses.push_back(collapse);
    v = collapse.getSrc();
  }
  Value computed = v;
  OpOperand *last = nullptr;
  while (OpOperand *init = tiedInit(v)) {
    last = init;
    v = init->get();
  }
  if (!last || !v.getDefiningOp<tensor::EmptyOp>() ||
      v.getType() != computed.getType())
    return nullptr;
  return last;
}

/// Makes `source` (see emptySource) an extract_slice of `dest` at the place
/// `insert` writes, expanded back through `collapses`, when `dest` is
/// defined before the op that reads it. (Expanding a dim of a strided slice
/// is a view; collapsing dims of one in general is not, so only collapses are
/// undone.)
void computeInPlace(OpOperand *source, tensor::InsertSliceOp insert, Value dest,
                    llvm::ArrayRef<Operation *> collapses) {
  Operation *owner = source->getOwner(), *def = dest.getDefiningOp();
  if (!def || def->getBlock() != owner->getBlock() ||
      !def->isBeforeInBlock(owner))
    return;
  OpBuilder b(owner);
  Value init = tensor::ExtractSliceOp::create(
      b, insert.getLoc(), insert.getSourceType(), dest,
      insert.getMixedOffsets(), insert.getMixedSizes(),
      insert.getMixedStrides());
  for (Operation *op : collapses) {
    auto collapse = cast<tensor::CollapseShapeOp>(op);
    init =
        tensor::ExpandShapeOp::create(b, insert.getLoc(), collapse.getSrcType(),
                                      init, collapse.getReassociationIndices());
  }
  source->set(init);
}

/// Whether the op computes in place into `operand`: it is the tied init of
/// one of the op's results.
bool writesInto(OpOperand &operand) {
  return llvm::any_of(operand.getOwner()->getResults(),
                      [&](OpResult r) { return tiedInit(r) == &operand; });
}

/// Every op after the first that writes into a shared fill gets a clone of
/// the fill instead.
void unshareFills(func::FuncOp func) {
  llvm::SmallVector<Value> fills;
  func.walk([&](Operation *op) {
    if (op->getNumResults() == 1 && !op->getResult(0).use_empty() &&
        isFill(op->getResult(0)))
      fills.push_back(op->getResult(0));
  });
  for (Value fill : fills) {
    // Only writers in the fill's block: the clones go right after it.
    Operation *fillOp = fill.getDefiningOp();
    llvm::SmallVector<OpOperand *> writers;
    for (OpOperand &use : fill.getUses())
      if (use.getOwner()->getBlock() == fillOp->getBlock() && writesInto(use))
        writers.push_back(&use);
    if (writers.empty())
      continue;
    llvm::sort(writers, [](OpOperand *a, OpOperand *b) {
      return a->getOwner()->isBeforeInBlock(b->getOwner());
    });
    // The first writer keeps the fill, every later one gets a clone. A value
    // computed into a tensor.empty is computed into its writer's slice.
    for (auto [i, writer] : llvm::enumerate(writers)) {
      auto insert = dyn_cast<tensor::InsertSliceOp>(writer->getOwner());
      Value target = fill;
      llvm::SmallVector<Operation *> path;
      OpOperand *inPlace = nullptr;
      if (i > 0) {
        OpBuilder b(fillOp);
        IRMapping map;
        for (Value operand : fillOp->getOperands())
          if (auto empty = operand.getDefiningOp<tensor::EmptyOp>())
            map.map(operand, b.clone(*empty)->getResult(0));
        b.setInsertionPointAfter(fillOp);
        target = b.clone(*fillOp, map)->getResult(0);
        inPlace = insert ? inPlaceSource(insert, fill, path) : nullptr;
        if (inPlace) {
          // The extract_slice and reshapes may be shared with other writers
          // (CSE again): this one gets its own, reading the clone.
          IRMapping slice;
          slice.map(fill, target);
          for (Operation *op : llvm::reverse(path)) {
            b.setInsertionPoint(op);
            b.clone(*op, slice);
          }
          inPlace->set(slice.lookup(path.front()->getResult(0)));
        }
      }
      if (!inPlace && insert) {
        llvm::SmallVector<Operation *> collapses;
        if (OpOperand *source = emptySource(insert, collapses))
          computeInPlace(source, insert, target, collapses);
      }
      writer->set(target);
    }
  }
}

struct DistinctBuffersPass
    : public poptorch::impl::PoptorchDistinctBuffersBase<DistinctBuffersPass> {
  void runOnOperation() override {
    copyRepeatedResults(getOperation());
    unshareFills(getOperation());
  }
};
} // namespace
