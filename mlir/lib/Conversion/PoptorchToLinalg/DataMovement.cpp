//===- DataMovement.cpp - reshapes, views and gathers to tensor/linalg ----===//
//
// reshape -> collapse/expand_shape, permute/transpose -> linalg.transpose,
// expand -> linalg.broadcast, slice/select -> tensor.extract_slice,
// cat -> tensor.insert_slice chain, embedding -> linalg.generic with
// tensor.extract.
// None of these computes on elements, so every element type (ui8 too) works.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

struct ReshapeLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, op.getLoc(), adaptor.getInput(),
                                     op.getType().getShape()));
    return success();
  }
};

static Value transpose(OpBuilder &b, Location loc, Value input,
                       RankedTensorType resTy, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return input;
  Value init = createEmpty(b, loc, resTy);
  return linalg::TransposeOp::create(b, loc, input, init, perm)->getResult(0);
}

struct PermuteLowering : public OpConversionPattern<PermuteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), adaptor.getInput(),
                                     op.getType(), op.getDims()));
    return success();
  }
};

struct TransposeLowering : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t rank = getTensorType(op.getInput()).getRank();
    if (rank == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    auto perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[op.getDim0()], perm[op.getDim1()]);
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), adaptor.getInput(),
                                     op.getType(), perm));
    return success();
  }
};

struct ExpandLowering : public OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, broadcastTensor(rewriter, op.getLoc(),
                                           adaptor.getInput(),
                                           op.getType().getShape()));
    return success();
  }
};

struct SliceLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resTy = op.getType();
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t i = 0; i < resTy.getRank(); ++i) {
      bool isDim = i == (int64_t)op.getDim();
      offsets.push_back(rewriter.getIndexAttr(isDim ? op.getStart() : 0));
      sizes.push_back(rewriter.getIndexAttr(resTy.getShape()[i]));
      strides.push_back(rewriter.getIndexAttr(isDim ? op.getStep() : 1));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, resTy, adaptor.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct SelectLowering : public OpConversionPattern<SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inTy = getTensorType(adaptor.getInput());
    if (inTy.getRank() == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t i = 0; i < inTy.getRank(); ++i) {
      bool isDim = i == (int64_t)op.getDim();
      offsets.push_back(rewriter.getIndexAttr(isDim ? op.getIndex() : 0));
      sizes.push_back(rewriter.getIndexAttr(isDim ? 1 : inTy.getShape()[i]));
      strides.push_back(rewriter.getIndexAttr(1));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), adaptor.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct CatLowering : public OpConversionPattern<CatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    int64_t dim = op.getDim();
    if (adaptor.getInputs().size() == 1) {
      rewriter.replaceOp(op, adaptor.getInputs()[0]);
      return success();
    }
    Value result = createEmpty(rewriter, loc, resTy);
    int64_t offset = 0;
    for (Value in : adaptor.getInputs()) {
      auto ty = getTensorType(in);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t i = 0; i < resTy.getRank(); ++i) {
        offsets.push_back(rewriter.getIndexAttr(i == dim ? offset : 0));
        sizes.push_back(rewriter.getIndexAttr(ty.getShape()[i]));
        strides.push_back(rewriter.getIndexAttr(1));
      }
      result = tensor::InsertSliceOp::create(rewriter, loc, in, result, offsets,
                                             sizes, strides);
      offset += ty.getShape()[dim];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct EmbeddingLowering : public OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Value weight = adaptor.getWeight();
    Value indices = adaptor.getIndices();
    auto idxTy = getTensorType(indices);
    bool idxUnsigned = hasUnsignedSemantics(idxTy.getElementType());
    int64_t rank = resTy.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i + 1 < rank; ++i)
      idxExprs.push_back(getAffineDimExpr(i, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, idxExprs, ctx),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value init = createEmpty(rewriter, loc, resTy);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resTy}, ValueRange{indices}, ValueRange{init},
        maps, iters, [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value idx = scalarToSignless(b, nloc, args[0]);
          Value row = idxUnsigned ? (Value)arith::IndexCastUIOp::create(
                                        b, nloc, b.getIndexType(), idx)
                                  : (Value)arith::IndexCastOp::create(
                                        b, nloc, b.getIndexType(), idx);
          Value col = linalg::IndexOp::create(b, nloc, rank - 1);
          Value v =
              tensor::ExtractOp::create(b, nloc, weight, ValueRange{row, col});
          linalg::YieldOp::create(b, nloc, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns
      .add<ReshapeLowering, PermuteLowering, TransposeLowering, ExpandLowering,
           SliceLowering, SelectLowering, CatLowering, EmbeddingLowering>(
          patterns.getContext());
}
