//===- ReductionOps.cpp - verifiers of reductions, scans, sorts, losses ---===//
//
// The ops of the reductions family (see the block of PoptorchOps.td): each
// result has the shape that PyTorch gives it; the capture takes the result
// types from PyTorch's own shape inference, so a mismatch here is a bug in a
// table row or a decomposition.
//
//===----------------------------------------------------------------------===//
#include "VerifyUtils.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::poptorch;

/// The shape of a reduction of `in` over `dims` (none: all).
static SmallVector<int64_t> reducedShape(RankedTensorType in,
                                         ArrayRef<int64_t> dims, bool keepdim) {
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    bool reduced = dims.empty() || llvm::is_contained(dims, i);
    if (!reduced)
      shape.push_back(in.getShape()[i]);
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

static LogicalResult verifyReduction(Operation *op, Value input,
                                     ArrayRef<int64_t> dims, bool keepdim,
                                     ValueRange results) {
  auto in = rtt(input);
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    if (failed(checkDim(op, d, in.getRank())))
      return failure();
    if (!seen.insert(d).second)
      return op->emitOpError("dim ") << d << " appears more than once";
  }
  SmallVector<int64_t> expected = reducedShape(in, dims, keepdim);
  for (Value r : results)
    if (rtt(r).getShape() != ArrayRef<int64_t>(expected))
      return op->emitOpError("result shape ")
             << rtt(r) << " should have shape of rank " << expected.size()
             << " reducing " << in;
  return success();
}

template <typename OpTy> static LogicalResult verifyReduceOp(OpTy op) {
  if (op.getDims().empty() && rtt(op.getInput()).getRank() > 0)
    return op.emitOpError("needs at least one dim");
  return verifyReduction(op, op.getInput(), op.getDims(), op.getKeepdim(),
                         op->getResults());
}

LogicalResult ReduceMinOp::verify() { return verifyReduceOp(*this); }
LogicalResult ReduceProdOp::verify() { return verifyReduceOp(*this); }
LogicalResult ReduceAllOp::verify() { return verifyReduceOp(*this); }
LogicalResult ReduceAnyOp::verify() { return verifyReduceOp(*this); }
LogicalResult NansumOp::verify() { return verifyReduceOp(*this); }
LogicalResult CountNonzeroOp::verify() { return verifyReduceOp(*this); }
LogicalResult LogsumexpOp::verify() { return verifyReduceOp(*this); }
LogicalResult VectorNormOp::verify() { return verifyReduceOp(*this); }
LogicalResult AminmaxOp::verify() { return verifyReduceOp(*this); }

template <typename OpTy> static LogicalResult verifyVariance(OpTy op) {
  if (!isa<FloatType>(rtt(op.getInput()).getElementType()))
    return op.emitOpError("needs a floating-point input");
  return verifyReduceOp(op);
}
LogicalResult VarOp::verify() { return verifyVariance(*this); }
LogicalResult StdOp::verify() { return verifyVariance(*this); }
LogicalResult VarMeanOp::verify() { return verifyVariance(*this); }
LogicalResult StdMeanOp::verify() { return verifyVariance(*this); }

/// Values keep the input's element type, indices are int64.
static LogicalResult verifyValuesIndices(Operation *op, Type inElem,
                                         Value values, Value indices) {
  if (values && rtt(values).getElementType() != inElem)
    return op->emitOpError("values must have the input element type ")
           << inElem;
  if (indices && !rtt(indices).getElementType().isInteger(64))
    return op->emitOpError("indices must be int64");
  return success();
}

template <typename OpTy> static LogicalResult verifyArgReduce(OpTy op) {
  auto in = rtt(op.getInput());
  SmallVector<int64_t> dims;
  if (auto d = op.getDim()) {
    if (failed(checkDim(op, *d, in.getRank())))
      return failure();
    if (in.getRank() > 0)
      dims.push_back(*d);
  }
  // As PyTorch: there is no extreme value (or median) of nothing.
  bool empty =
      dims.empty() ? in.getNumElements() == 0 : in.getShape()[dims[0]] == 0;
  if (empty && !isa<MedianOp, NanmedianOp>(op.getOperation()))
    return op.emitOpError("cannot reduce an empty ")
           << (dims.empty() ? "tensor" : "dim")
           << " (PyTorch raises here too); use a reduction with an identity "
              "such as torch.amax over a nonempty dim";
  if (failed(verifyReduction(op, op.getInput(), dims, op.getKeepdim(),
                             op->getResults())))
    return failure();
  Value values, indices;
  if (op->getNumResults() == 2) {
    values = op->getResult(0);
    indices = op->getResult(1);
  } else if (isa<ArgmaxOp, ArgminOp>(op.getOperation())) {
    indices = op->getResult(0);
  } else {
    values = op->getResult(0);
  }
  return verifyValuesIndices(op, in.getElementType(), values, indices);
}
LogicalResult MaxDimOp::verify() { return verifyArgReduce(*this); }
LogicalResult MinDimOp::verify() { return verifyArgReduce(*this); }
LogicalResult ArgmaxOp::verify() { return verifyArgReduce(*this); }
LogicalResult ArgminOp::verify() { return verifyArgReduce(*this); }
LogicalResult MedianDimOp::verify() { return verifyArgReduce(*this); }
LogicalResult MaxOp::verify() {
  if (getDim())
    return emitOpError("the full max takes no dim");
  return verifyArgReduce(*this);
}
LogicalResult MinOp::verify() {
  if (getDim())
    return emitOpError("the full min takes no dim");
  return verifyArgReduce(*this);
}
LogicalResult MedianOp::verify() {
  if (getDim())
    return emitOpError("the full median takes no dim");
  return verifyArgReduce(*this);
}

template <typename OpTy> static LogicalResult verifyScan(OpTy op) {
  auto in = rtt(op.getInput());
  if (failed(checkDim(op, op.getDim(), in.getRank())))
    return failure();
  for (Value r : op->getResults())
    if (rtt(r).getShape() != in.getShape())
      return op.emitOpError("results must have the input shape");
  if (op->getNumResults() == 2)
    return verifyValuesIndices(op, in.getElementType(), op->getResult(0),
                               op->getResult(1));
  if (rtt(op->getResult(0)).getElementType() != in.getElementType())
    return op.emitOpError("the result must have the input element type (the "
                          "capture casts the input to the result dtype)");
  return success();
}
LogicalResult CumsumOp::verify() { return verifyScan(*this); }
LogicalResult CumprodOp::verify() { return verifyScan(*this); }
LogicalResult LogcumsumexpOp::verify() { return verifyScan(*this); }
LogicalResult CummaxOp::verify() { return verifyScan(*this); }
LogicalResult CumminOp::verify() { return verifyScan(*this); }

LogicalResult SortOp::verify() {
  auto in = rtt(getInput());
  int64_t dim = getDim();
  if (failed(checkDim(*this, dim, in.getRank())))
    return failure();
  auto v = rtt(getValues());
  if (v.getShape() != rtt(getIndices()).getShape() ||
      v.getRank() != in.getRank())
    return emitOpError("values and indices must have the input's rank");
  for (int64_t i = 0; i < in.getRank(); ++i) {
    bool ok = i == dim ? v.getShape()[i] <= in.getShape()[i]
                       : v.getShape()[i] == in.getShape()[i];
    if (!ok)
      return emitOpError("result shape ") << v << " does not fit " << in;
  }
  return verifyValuesIndices(*this, in.getElementType(), getValues(),
                             getIndices());
}

LogicalResult KthvalueOp::verify() {
  auto in = rtt(getInput());
  int64_t n = in.getRank() ? in.getShape()[getDim()] : 1;
  if (getK() < 1 || getK() > n)
    return emitOpError("k = ") << getK() << " is out of range [1, " << n << "]";
  if (failed(verifyReduction(*this, getInput(),
                             in.getRank()
                                 ? SmallVector<int64_t>{(int64_t)getDim()}
                                 : SmallVector<int64_t>{},
                             getKeepdim(), getResults())))
    return failure();
  return verifyValuesIndices(*this, in.getElementType(), getValues(),
                             getIndices());
}

LogicalResult SafeSoftmaxOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  return checkDim(*this, getDim(), rtt(getInput()).getRank());
}

template <typename OpTy> static LogicalResult verifyLoss(OpTy op) {
  int64_t r = op.getReduction();
  if (r < 0 || r > 2)
    return op.emitOpError("reduction ")
           << r << " is not 0 (none), 1 (mean) or 2 (sum)";
  if (r != 0 && rtt(op->getResult(0)).getRank() != 0)
    return op.emitOpError("a reduced loss is 0-d");
  return success();
}
LogicalResult MseLossOp::verify() { return verifyLoss(*this); }
LogicalResult SmoothL1LossOp::verify() { return verifyLoss(*this); }
LogicalResult HuberLossOp::verify() { return verifyLoss(*this); }
LogicalResult SoftMarginLossOp::verify() { return verifyLoss(*this); }
LogicalResult BinaryCrossEntropyOp::verify() { return verifyLoss(*this); }
LogicalResult MultiMarginLossOp::verify() { return verifyLoss(*this); }
LogicalResult NllLossOp::verify() { return verifyLoss(*this); }
LogicalResult MultilabelMarginLossOp::verify() { return verifyLoss(*this); }

//===----------------------------------------------------------------------===//
// ---- search-stats-random-special (round 2)
//===----------------------------------------------------------------------===//

LogicalResult SearchsortedOp::verify() {
  auto sorted = rtt(getSorted()), values = rtt(getValues());
  auto res = rtt(getResult());
  if (sorted.getRank() < 1)
    return emitOpError("the sorted sequence must have at least one dim");
  if (sorted.getRank() > 1 &&
      (sorted.getRank() != values.getRank() ||
       sorted.getShape().drop_back() != values.getShape().drop_back()))
    return emitOpError("the leading dims of the sorted sequence must equal "
                       "those of the values");
  if (sorted.getElementType() != values.getElementType())
    return emitOpError("the sorted sequence and the values must have one "
                       "element type");
  if (res.getShape() != values.getShape())
    return emitOpError("result shape must equal the values' shape");
  if (!res.getElementType().isInteger(64) &&
      !res.getElementType().isInteger(32))
    return emitOpError("result must be int64 or int32");
  if (auto side = getSide(); side && *side != "left" && *side != "right")
    return emitOpError("side must be left or right, got ") << *side;
  return success();
}

LogicalResult IsinOp::verify() {
  if (rtt(getElements()).getElementType() != rtt(getTest()).getElementType())
    return emitOpError("elements and test elements must have one type");
  if (rtt(getResult()).getShape() != rtt(getElements()).getShape())
    return emitOpError("result shape must equal the elements' shape");
  return success();
}

LogicalResult HistcOp::verify() {
  auto res = rtt(getResult());
  if (getBins() < 1)
    return emitOpError("bins must be positive, got ") << getBins();
  if (res.getRank() != 1 || res.getShape()[0] != getBins())
    return emitOpError("result must be 1-D with `bins` elements");
  if (res.getElementType() != rtt(getInput()).getElementType())
    return emitOpError("result element type must equal the input's");
  if (getMin().convertToDouble() > getMax().convertToDouble())
    return emitOpError("min must not exceed max");
  return success();
}

LogicalResult NanmedianDimOp::verify() { return verifyArgReduce(*this); }
LogicalResult NanmedianOp::verify() {
  if (getDim())
    return emitOpError("the full nanmedian takes no dim");
  return verifyArgReduce(*this);
}
LogicalResult ModeOp::verify() { return verifyArgReduce(*this); }

LogicalResult FrexpOp::verify() {
  auto in = rtt(getInput());
  if (!isa<FloatType>(in.getElementType()))
    return emitOpError("needs a floating-point input");
  if (getMantissa().getType() != in)
    return emitOpError("the mantissa must have the input's type");
  if (rtt(getExponent()).getShape() != in.getShape() ||
      !rtt(getExponent()).getElementType().isInteger(32))
    return emitOpError("the exponent must be int32 of the input's shape");
  return success();
}
