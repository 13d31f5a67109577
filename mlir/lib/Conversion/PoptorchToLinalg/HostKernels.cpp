//===- HostKernels.cpp - poptorch.host_kernel to a runtime call ----------===//
//
// An aten op without a lowering runs as PyTorch's own CPU kernel when the
// program runs. poptorch.host_kernel becomes a call of
// `poptorch_host_kernel_<n>_<k>(call, inputs..., results...)`: `call` is the
// op's description (a constant global, NUL-terminated), each input a
// read-only view of its buffer (any layout), each result a fresh buffer the
// runtime fills. Every argument is an unranked memref (rank + descriptor
// pointer); `n` is their number, `k` tells apart declarations of different
// element types. The runtime (csrc/HostKernels.cpp) resolves every
// `poptorch_host_kernel_<n>_*` symbol to its function for `n` arguments.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

struct HostKernelLowering : OpConversionPattern<HostKernelOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HostKernelOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();

    SmallVector<Value> args{stringConstant(
        rewriter, loc, module, "__poptorch_host_kernel_call_", op.getCall())};
    for (Value input : adaptor.getInputs())
      args.push_back(readOnlyBuffer(rewriter, loc, input));
    SmallVector<Value> buffers;
    for (Type t : op.getResultTypes()) {
      auto type = cast<RankedTensorType>(t);
      auto memref = MemRefType::get(type.getShape(), type.getElementType());
      Value buffer = memref::AllocOp::create(rewriter, loc, memref);
      buffers.push_back(buffer);
      args.push_back(memref::CastOp::create(
          rewriter, loc, UnrankedMemRefType::get(type.getElementType(), 0),
          buffer));
    }

    // One declaration per distinct signature.
    SmallVector<Type> types;
    for (Value a : args)
      types.push_back(a.getType());
    FunctionType fnType = rewriter.getFunctionType(types, {});
    std::string callee;
    for (int k = 0;; ++k) {
      callee = "poptorch_host_kernel_" + std::to_string(args.size()) + "_" +
               std::to_string(k);
      auto existing = module.lookupSymbol<func::FuncOp>(callee);
      if (!existing) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(module.getBody());
        func::FuncOp::create(rewriter, loc, callee, fnType).setPrivate();
        break;
      }
      if (existing.getFunctionType() == fnType)
        break;
    }
    func::CallOp::create(rewriter, loc, callee, TypeRange{}, args);

    SmallVector<Value> results;
    for (auto [buffer, t] : llvm::zip(buffers, op.getResultTypes()))
      results.push_back(bufferization::ToTensorOp::create(
          rewriter, loc, t, buffer, /*restrict=*/true, /*writable=*/true));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::poptorch::populateHostKernelPatterns(RewritePatternSet &patterns) {
  patterns.add<HostKernelLowering>(patterns.getContext());
}
