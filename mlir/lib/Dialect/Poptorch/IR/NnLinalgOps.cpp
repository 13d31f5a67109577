//===- NnLinalgOps.cpp - verifiers of the nn-linalg (round 2) ops ---------===//
//
// The ops of the nn-linalg block of PoptorchOps.td: addbmm, glu, trace,
// cross, renorm, max_unpool2d/3d, col2im, cdist, pdist, embedding_bag,
// weight_norm, grid_sampler. The capture takes result types from PyTorch's
// shape inference; these checks catch table rows or decompositions that
// disagree with it, and reject the configurations poptorch does not compile.
//
//===----------------------------------------------------------------------===//
#include "VerifyUtils.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.h"

using namespace mlir;
using namespace mlir::poptorch;

static LogicalResult sameElementType(Operation *op, ValueRange values) {
  Type elem = rtt(op->getResult(0)).getElementType();
  for (Value v : values)
    if (rtt(v).getElementType() != elem)
      return op->emitOpError("operands must have the result's element type ")
             << elem << ", got " << rtt(v).getElementType();
  return success();
}

static LogicalResult floatOnly(Operation *op) {
  if (!isa<FloatType>(rtt(op->getResult(0)).getElementType()))
    return op->emitOpError("needs a floating-point result");
  return success();
}

LogicalResult AddbmmOp::verify() {
  auto l = rtt(getLhs()), r = rtt(getRhs());
  if (l.getRank() != 3 || r.getRank() != 3)
    return emitOpError("batch1 and batch2 must be 3-D");
  if (l.getShape()[0] != r.getShape()[0] || l.getShape()[2] != r.getShape()[1])
    return emitOpError("batch or contraction sizes differ");
  if (getType().getShape() !=
      ArrayRef<int64_t>{l.getShape()[1], r.getShape()[2]})
    return emitOpError(
        "result must be (n, p) for batches (b, n, m), (b, m, p)");
  return sameElementType(*this, {getInput(), getLhs(), getRhs()});
}

LogicalResult GluOp::verify() {
  auto in = rtt(getInput());
  if (failed(checkDim(*this, getDim(), in.getRank())) || in.getRank() == 0)
    return emitOpError("needs an input of rank >= 1 and a dim in range");
  if (in.getShape()[getDim()] % 2)
    return emitOpError("halves dim ") << getDim() << " of odd size";
  return floatOnly(*this);
}

LogicalResult TraceOp::verify() {
  if (rtt(getInput()).getRank() != 2 || getType().getRank() != 0)
    return emitOpError("takes a 2-D input to a 0-d result");
  return success();
}

LogicalResult CrossOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(checkDim(*this, getDim(), rank)) ||
      getType().getShape()[getDim()] != 3)
    return emitOpError("dim ") << getDim() << " must have size 3";
  for (Value v : {getLhs(), getRhs()})
    if (rtt(v).getRank() != rank)
      return emitOpError("operands must have the result's rank");
  return sameElementType(*this, {getLhs(), getRhs()});
}

LogicalResult RenormOp::verify() {
  if (failed(checkDim(*this, getDim(), rtt(getInput()).getRank())))
    return failure();
  if (getMaxnorm().convertToDouble() < 0)
    return emitOpError("maxnorm must be non-negative");
  if (getP().convertToDouble() <= 0)
    return emitOpError("p must be positive");
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  return floatOnly(*this);
}

template <typename OpTy> static LogicalResult verifyMaxUnpool(OpTy op, int n) {
  auto in = rtt(op.getInput()), out = op.getType();
  if (in.getRank() != n + 1 && in.getRank() != n + 2)
    return op.emitOpError("input must be (N,) C and ") << n << " spatial dims";
  if (rtt(op.getIndices()).getShape() != in.getShape() ||
      !isa<IntegerType>(rtt(op.getIndices()).getElementType()))
    return op.emitOpError("indices must be integers of the input's shape");
  if (out.getRank() != in.getRank() ||
      out.getShape().drop_back(n) != in.getShape().drop_back(n))
    return op.emitOpError("result must keep the input's batch and channels");
  return sameElementType(op, {op.getInput()});
}
LogicalResult MaxUnpool2dOp::verify() { return verifyMaxUnpool(*this, 2); }
LogicalResult MaxUnpool3dOp::verify() { return verifyMaxUnpool(*this, 3); }

LogicalResult Col2imOp::verify() {
  auto in = rtt(getInput()), out = getType();
  if ((in.getRank() != 2 && in.getRank() != 3) ||
      out.getRank() != in.getRank() + 1)
    return emitOpError("takes (N,) C*kH*kW, L columns to (N,) C, H, W");
  for (ArrayRef<int64_t> a :
       {getKernelSize(), getDilation(), getPadding(), getStride()})
    if (a.size() != 2)
      return emitOpError("kernel_size, dilation, padding and stride need 2 "
                         "entries each");
  int64_t k = getKernelSize()[0] * getKernelSize()[1];
  int64_t cin = in.getShape()[in.getRank() - 2];
  if (k <= 0 || cin % k || cin / k != out.getShape()[out.getRank() - 3])
    return emitOpError("input rows ") << cin << " are not C * kH * kW";
  return sameElementType(*this, {getInput()});
}

LogicalResult CdistOp::verify() {
  auto l = rtt(getLhs()), r = rtt(getRhs());
  if (l.getRank() < 2 || r.getRank() < 2 ||
      l.getShape().back() != r.getShape().back())
    return emitOpError("operands must be (.., P, M) and (.., R, M)");
  if (getP().convertToDouble() < 0)
    return emitOpError("p must be non-negative");
  if (failed(sameElementType(*this, {getLhs(), getRhs()})))
    return failure();
  return floatOnly(*this);
}

LogicalResult PdistOp::verify() {
  auto in = rtt(getInput());
  if (in.getRank() != 2)
    return emitOpError("input must be 2-D");
  int64_t n = in.getShape()[0];
  if (getType().getShape() != ArrayRef<int64_t>{n * (n - 1) / 2})
    return emitOpError("result must hold the n (n - 1) / 2 pairs");
  if (getP().convertToDouble() < 0)
    return emitOpError("p must be non-negative");
  if (failed(sameElementType(*this, {getInput()})))
    return failure();
  return floatOnly(*this);
}

LogicalResult EmbeddingBagOp::verify() {
  auto w = rtt(getWeight()), idx = rtt(getIndices()), off = rtt(getOffsets());
  if (w.getRank() != 2 || idx.getRank() != 1 || off.getRank() != 1)
    return emitOpError("needs a 2-D weight and 1-D indices and offsets");
  if (!isa<IntegerType>(idx.getElementType()) ||
      !isa<IntegerType>(off.getElementType()))
    return emitOpError("indices and offsets must be integers");
  if (getMode() < 0 || getMode() > 2)
    return emitOpError("mode must be 0 (sum), 1 (mean) or 2 (max)");
  int64_t bags = off.getShape()[0] - (getIncludeLastOffset() ? 1 : 0);
  if (getType().getShape() != ArrayRef<int64_t>{bags, w.getShape()[1]})
    return emitOpError("result must be (bags, embedding dim)");
  if (Value psw = getPerSampleWeights()) {
    if (getMode() != 0)
      return emitOpError("per_sample_weights are only supported with mode sum");
    if (rtt(psw).getShape() != idx.getShape())
      return emitOpError("per_sample_weights must have the indices' shape");
    if (failed(sameElementType(*this, {psw})))
      return failure();
  }
  if (failed(sameElementType(*this, {getWeight()})))
    return failure();
  return floatOnly(*this);
}

LogicalResult WeightNormOp::verify() {
  auto v = rtt(getV());
  if (v.getRank() == 0 || failed(checkDim(*this, getDim(), v.getRank())))
    return emitOpError("dim must be a dim of v");
  if (getResult().getType() != v)
    return emitOpError("result type must equal v's type");
  if (v.getRank() == 1)
    return emitOpError("of a 1-D v is not supported (PyTorch's shape "
                       "inference gives its norm another shape than its CPU "
                       "kernel): use v * g / v.abs()");
  SmallVector<int64_t> normShape(v.getRank(), 1);
  normShape[getDim()] = v.getShape()[getDim()];
  if (rtt(getNorm()).getShape() != ArrayRef<int64_t>(normShape))
    return emitOpError("norm must keep only dim ") << getDim();
  if (failed(sameElementType(*this, {getV(), getG()})))
    return failure();
  return floatOnly(*this);
}

LogicalResult GridSamplerOp::verify() {
  auto in = rtt(getInput()), grid = rtt(getGrid()), out = getType();
  int64_t spatial = in.getRank() - 2;
  if (spatial != 2 && spatial != 3)
    return emitOpError("input must be (N, C, H, W) or (N, C, D, H, W)");
  if (grid.getRank() != in.getRank() || grid.getShape().back() != spatial ||
      grid.getShape()[0] != in.getShape()[0])
    return emitOpError("grid must be (N, ..., ") << spatial << ")";
  if (out.getRank() != in.getRank() ||
      out.getShape().take_front(2) != in.getShape().take_front(2) ||
      out.getShape().drop_front(2) != grid.getShape().drop_front().drop_back())
    return emitOpError("result must be (N, C) and the grid's spatial dims");
  if (getInterpolationMode() != 0 && getInterpolationMode() != 1)
    return emitOpError("interpolation mode ")
           << getInterpolationMode()
           << " is not supported (bicubic is not): use mode='bilinear' or "
              "'nearest'";
  if (getPaddingMode() < 0 || getPaddingMode() > 2)
    return emitOpError("padding_mode must be zeros, border or reflection");
  if (failed(sameElementType(*this, {getInput(), getGrid()})))
    return failure();
  return floatOnly(*this);
}
