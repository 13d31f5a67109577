//===- Reductions.cpp - reduce_sum / reduce_max / reduce_mean to linalg ---===//
//
// linalg.reduce over the reduced dims, then tensor.expand_shape for keepdim.
// f16/bf16 sums accumulate in f32 (as PyTorch's CPU kernels do); max
// propagates NaN (arith.maximumf). reduce_mean is normally decomposed into
// reduce_sum + div first, but is lowered here too.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

enum class ReduceKind { Sum, Mean, Max };

template <typename OpTy, ReduceKind kind>
struct ReduceLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Value input = adaptor.getInput();
    auto inTy = getTensorType(input);
    Type elem = inTy.getElementType();
    if (!isa<FloatType, IntegerType>(elem) || isUnsignedInteger(elem))
      return op.emitOpError("element type ")
             << elem << " is not supported; cast to a float or signed "
             << "integer type first";
    if (kind == ReduceKind::Mean && !isa<FloatType>(elem))
      return op.emitOpError("mean of integer type ")
             << elem << " is not defined; cast to a float type first";
    if (kind == ReduceKind::Sum && elem.isInteger(1))
      return op.emitOpError("sum of booleans must be computed in an integer "
                            "type; cast the input to int64 first");

    SmallVector<int64_t> dims(op.getDims());
    llvm::sort(dims);
    if (inTy.getRank() == 0 || dims.empty()) {
      rewriter.replaceOp(op,
                         reshapeTensor(rewriter, loc, input, resTy.getShape()));
      return success();
    }

    Type acc = kind == ReduceKind::Max ? elem : getComputeType(elem);
    Value x = castTensor(rewriter, loc, input, acc);
    SmallVector<int64_t> reducedShape;
    int64_t count = 1;
    for (int64_t i = 0; i < inTy.getRank(); ++i) {
      if (llvm::is_contained(dims, i))
        count *= inTy.getShape()[i];
      else
        reducedShape.push_back(inTy.getShape()[i]);
    }
    Value identity = kind == ReduceKind::Max
                         ? createLowest(rewriter, loc, acc)
                         : createScalar(rewriter, loc, acc, 0.0);
    Value init = createFilled(
        rewriter, loc, RankedTensorType::get(reducedShape, acc), identity);
    bool isFloat = isa<FloatType>(acc);
    bool isBool = acc.isInteger(1);
    Value reduced =
        linalg::ReduceOp::create(
            rewriter, loc, ValueRange{x}, ValueRange{init}, dims,
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value r;
              if (kind != ReduceKind::Max)
                r = isFloat ? (Value)arith::AddFOp::create(b, nloc, args[0],
                                                           args[1])
                            : (Value)arith::AddIOp::create(b, nloc, args[0],
                                                           args[1]);
              else if (isFloat)
                r = arith::MaximumFOp::create(b, nloc, args[0], args[1]);
              else if (isBool)
                r = arith::OrIOp::create(b, nloc, args[0], args[1]);
              else
                r = arith::MaxSIOp::create(b, nloc, args[0], args[1]);
              linalg::YieldOp::create(b, nloc, r);
            })
            .getResult(0);
    if (kind == ReduceKind::Mean)
      reduced = createElementwiseGeneric(
          rewriter, loc, ValueRange{reduced}, reducedShape, acc,
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            return arith::DivFOp::create(
                b, nloc, args[0], createScalar(b, nloc, acc, (double)count));
          });
    reduced = castTensor(rewriter, loc, reduced, resTy.getElementType());
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, loc, reduced, resTy.getShape()));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ReduceSumOp, ReduceKind::Sum>,
               ReduceLowering<ReduceMeanOp, ReduceKind::Mean>,
               ReduceLowering<ReduceMaxOp, ReduceKind::Max>>(
      patterns.getContext());
}
