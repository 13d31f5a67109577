//===- ReturnAllocations.cpp - return reshaped buffers as allocations -----===//
//
// buffer-results-to-out-params{hoist-static-allocs} turns a function that
// returns a memref.alloc of its body into one that computes into the buffer
// its caller passes; a returned view of an allocation is copied into that
// buffer instead. Bufferization returns such views whenever the op computing
// a result works on a reshape of it: a linear layer on (B, S, K) computes
// (B * S, N) and returns it expanded, and the outlined layers of a
// transformer or a ConvNeXt stage return their last linear layer's result,
// one full copy of the activations per layer. Here the buffer is allocated
// in the returned shape and viewed in the old shape (flattened, then
// expanded) by the ops that computed into it.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHRETURNALLOCATIONS
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

/// The value that a chain of expand/collapse reshapes starts from.
Value reshapeRoot(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(op))
      v = expand.getSrc();
    else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(op))
      v = collapse.getSrc();
    else
      break;
  }
  return v;
}

/// Whether `type` is a static, contiguous memref of rank 1 or more.
bool isWholeBuffer(MemRefType type) {
  return type && type.hasStaticShape() && type.getRank() > 0 &&
         type.getLayout().isIdentity();
}

/// One reassociation group of all `rank` dims.
SmallVector<ReassociationIndices> allDims(int64_t rank) {
  ReassociationIndices group;
  for (int64_t i = 0; i < rank; ++i)
    group.push_back(i);
  return {group};
}

struct ReturnAllocationsPass
    : public poptorch::impl::PoptorchReturnAllocationsBase<
          ReturnAllocationsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret)
      return;
    SmallVector<Value> roots;
    for (Value v : ret.getOperands())
      roots.push_back(reshapeRoot(v));
    for (auto [i, operand] : llvm::enumerate(ret->getOpOperands())) {
      Value root = roots[i];
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      auto alloc = root.getDefiningOp<memref::AllocOp>();
      if (root == operand.get() || !alloc || alloc->getBlock() != &body ||
          !isWholeBuffer(type) || !isWholeBuffer(alloc.getType()) ||
          llvm::count(roots, root) != 1)
        continue;
      OpBuilder b(alloc);
      Location loc = alloc.getLoc();
      auto whole = memref::AllocOp::create(b, loc, type, ValueRange{},
                                           alloc.getAlignmentAttr());
      // The old shape, for the ops that computed into the old buffer.
      Value view = whole;
      if (type.getRank() > 1)
        view = memref::CollapseShapeOp::create(b, loc, view,
                                               allDims(type.getRank()));
      MemRefType oldType = alloc.getType();
      if (oldType.getRank() > 1)
        view = memref::ExpandShapeOp::create(b, loc, oldType.getShape(), view,
                                             allDims(oldType.getRank()));
      alloc.replaceAllUsesWith(view);
      alloc.erase();
      operand.set(whole);
    }
  }
};
} // namespace
