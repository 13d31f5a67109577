//===- LinearAlgebra.cpp - matmul to named linalg contractions ------------===//
//
// poptorch.matmul (torch.matmul semantics) becomes linalg.matmul or
// linalg.batch_matmul, the named ops that poptorch-tile-and-vectorize
// matches. linear, addmm and sdpa reach here already decomposed to matmul.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"
#include "poptorch/Dialect/Poptorch/IR/Broadcast.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t p = 1;
  for (int64_t s : shape)
    p *= s;
  return p;
}

struct MatmulLowering : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Type elem = resTy.getElementType();
    if (!isa<FloatType, IntegerType>(elem) || isUnsignedInteger(elem) ||
        elem.isInteger(1))
      return op.emitOpError("element type ")
             << elem
             << " is not supported; cast to a float or signed integer type";

    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lt = getTensorType(lhs), rt = getTensorType(rhs);
    // float16/bfloat16 products accumulate in float32 (linalg.matmul extends
    // its inputs to the accumulator's type) and round once, like eager.
    Type acc = getComputeType(elem);
    Value zero = createScalar(rewriter, loc, acc, 0.0);

    // 1-D operands are promoted to matrices (and the dim dropped at the end
    // by the final reshape to the result type). A dot product becomes a
    // (1, K) @ (K, 1) linalg.matmul too: poptorch-tile-and-vectorize handles
    // matmul, while linalg.dot's 0-d accumulator does not vectorize there.
    if (lt.getRank() == 1)
      lhs = reshapeTensor(rewriter, loc, lhs, {1, lt.getShape()[0]});
    if (rt.getRank() == 1)
      rhs = reshapeTensor(rewriter, loc, rhs, {rt.getShape()[0], 1});
    lt = getTensorType(lhs);
    rt = getTensorType(rhs);
    int64_t m = lt.getShape()[lt.getRank() - 2];
    int64_t k = lt.getShape().back();
    int64_t n = rt.getShape().back();
    ArrayRef<int64_t> lb = lt.getShape().drop_back(2);
    ArrayRef<int64_t> rb = rt.getShape().drop_back(2);

    Value result;
    if (rb.empty()) {
      // (B..., M, K) @ (K, N): one matrix product over the flattened rows,
      // which keeps the weight un-broadcast.
      int64_t rows = product(lb) * m;
      Value l2 = reshapeTensor(rewriter, loc, lhs, {rows, k});
      Value init = createFilled(rewriter, loc,
                                RankedTensorType::get({rows, n}, acc), zero);
      result =
          linalg::MatmulOp::create(rewriter, loc, TypeRange{init.getType()},
                                   ValueRange{l2, rhs}, ValueRange{init})
              .getResult(0);
    } else {
      SmallVector<int64_t> batch = broadcastShapes(lb, rb);
      int64_t bsz = product(batch);
      auto prep = [&](Value v, int64_t d0, int64_t d1) {
        SmallVector<int64_t> full(batch);
        full.append({d0, d1});
        // f16/bf16 operands stay narrow: the register tiles extend them (or
        // run bf16 on AVX512-BF16 dot products, LowerVectors.cpp).
        Value bc = broadcastTensor(rewriter, loc, v, full);
        return reshapeTensor(rewriter, loc, bc, {bsz, d0, d1});
      };
      Value l3 = prep(lhs, m, k);
      Value r3 = prep(rhs, k, n);
      Value init = createFilled(rewriter, loc,
                                RankedTensorType::get({bsz, m, n}, acc), zero);
      result = linalg::BatchMatmulOp::create(
                   rewriter, loc, TypeRange{init.getType()}, ValueRange{l3, r3},
                   ValueRange{init})
                   .getResult(0);
    }
    result = reshapeTensor(rewriter, loc, result, resTy.getShape());
    rewriter.replaceOp(op, castTensor(rewriter, loc, result, elem));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateLinearAlgebraPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MatmulLowering>(patterns.getContext());
}
