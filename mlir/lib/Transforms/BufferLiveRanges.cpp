//===- BufferLiveRanges.cpp - allocate late, free early -------------------===//
//
// Ownership-based deallocation frees a buffer at the end of the block that
// allocates it, and bufferization allocates where the tensor's value was
// defined before it was hoisted. In a program's glue, a straight line of
// thousands of ops, every intermediate buffer then lived until the program
// returned: a BERT-base training step held all of its 3.4 GiB of
// activations, gradients and temporaries at once, and its first call spent
// 12 s of system time clearing fresh pages. Here, in every block, each
// memref.alloc moves down to just before the first op that uses it, and each
// unconditional memref.dealloc of a buffer allocated in the same block moves
// up to just after the last op that uses the buffer or any view of it, so
// that the buffer pool (csrc/bridge/BufferPool.cpp) hands freed buffers to
// later allocations of the same call.
//
//===----------------------------------------------------------------------===//
#include "poptorch/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::poptorch {
#define GEN_PASS_DEF_POPTORCHBUFFERLIVERANGES
#include "poptorch/Transforms/Passes.h.inc"
} // namespace mlir::poptorch

using namespace mlir;

namespace {

bool isBuffer(Value v) { return isa<BaseMemRefType>(v.getType()); }

/// Every value that may refer to the memory of `buffer`: views of it, results
/// of ops it is passed to, the region arguments and results of ops that
/// carry it (loops, branches, async regions), transitively. Fails when the
/// memory may be reached some other way: a returned buffer, or an op that
/// takes its address as an integer.
FailureOr<llvm::SetVector<Value>> aliasesOf(Value buffer) {
  llvm::SetVector<Value> aliases;
  aliases.insert(buffer);
  auto addCarried = [&](Operation *op) {
    for (Value r : op->getResults())
      if (isBuffer(r))
        aliases.insert(r);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isBuffer(arg))
            aliases.insert(arg);
  };
  for (size_t i = 0; i < aliases.size(); ++i) {
    for (Operation *user : aliases[i].getUsers()) {
      if (isa<memref::DeallocOp>(user))
        continue;
      if (isa<memref::ExtractAlignedPointerAsIndexOp,
              memref::ExtractStridedMetadataOp>(user))
        return failure();
      if (user->hasTrait<OpTrait::IsTerminator>()) {
        Operation *parent = user->getParentOp();
        if (!parent || isa<FunctionOpInterface>(parent))
          return failure(); // returned: the caller may use it
        addCarried(parent);
        continue;
      }
      addCarried(user);
    }
  }
  return aliases;
}

/// Moves the deallocation of a buffer allocated in its block to just after
/// the last op of the block that uses the buffer.
void freeEarly(memref::DeallocOp dealloc) {
  Value buffer = dealloc.getMemref();
  Block *block = dealloc->getBlock();
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != block)
    return;
  FailureOr<llvm::SetVector<Value>> aliases = aliasesOf(buffer);
  if (failed(aliases))
    return;
  Operation *last = alloc;
  for (Value v : *aliases)
    for (Operation *user : v.getUsers()) {
      if (user == dealloc.getOperation())
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      // Used outside the block, or by a task that may still run after its
      // op (the async dialect comes later, poptorch-overlap-stages): left.
      if (!inBlock || inBlock->getName().getDialectNamespace() == "async")
        return;
      if (inBlock == dealloc.getOperation() ||
          dealloc->isBeforeInBlock(inBlock))
        return; // used after the dealloc: not ours to reason about
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
    }
  if (last->getNextNode() != dealloc.getOperation())
    dealloc->moveAfter(last);
}

/// Moves an allocation to just before the first op of its block that uses
/// it (its views all come after that op).
void allocateLate(memref::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Operation *first = nullptr;
  for (Operation *user : alloc->getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock)
      return;
    if (!first || inBlock->isBeforeInBlock(first))
      first = inBlock;
  }
  if (first && alloc->getNextNode() != first)
    alloc->moveBefore(first);
}

/// `copy` of a buffer allocated in its block into a result buffer of a
/// public function (an argument that is not one of the caller's inputs or
/// weights, which carry `poptorch.role`, and that nothing else uses): the
/// buffer becomes the result buffer, and the copy goes. A training step
/// computed each new weight and optimizer state into a buffer of its own and
/// copied it into its result: BERT-base, 1 GiB copied per step.
void computeIntoResult(memref::CopyOp copy) {
  auto result = dyn_cast<BlockArgument>(copy.getTarget());
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!result || !alloc || alloc->getBlock() != copy->getBlock() ||
      alloc.getType() != result.getType() || !result.hasOneUse())
    return;
  auto fn = dyn_cast<FunctionOpInterface>(result.getOwner()->getParentOp());
  if (!fn || !fn.isPublic() ||
      result.getOwner() != &fn.getFunctionBody().front() ||
      fn.getArgAttr(result.getArgNumber(), "poptorch.role"))
    return;
  FailureOr<llvm::SetVector<Value>> aliases = aliasesOf(alloc);
  if (failed(aliases))
    return;
  Block *block = copy->getBlock();
  SmallVector<Operation *> deallocs;
  for (Value v : *aliases)
    for (Operation *user : v.getUsers()) {
      if (user == copy.getOperation())
        continue;
      if (isa<memref::DeallocOp>(user)) {
        deallocs.push_back(user);
        continue;
      }
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || !inBlock->isBeforeInBlock(copy))
        return; // used after the copy: its final value is the copy's
    }
  for (Operation *dealloc : deallocs)
    dealloc->erase();
  copy->erase();
  alloc.getResult().replaceAllUsesWith(result);
  alloc->erase();
}

struct BufferLiveRangesPass
    : public poptorch::impl::PoptorchBufferLiveRangesBase<
          BufferLiveRangesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      computeIntoResult(copy);
    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
      else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
        deallocs.push_back(dealloc);
    });
    for (memref::AllocOp alloc : allocs)
      allocateLate(alloc);
    for (memref::DeallocOp dealloc : deallocs)
      freeEarly(dealloc);
  }
};

} // namespace
