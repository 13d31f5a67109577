//===- ConvPool.cpp - convolution and pooling to named linalg ops ---------===//
//
// NCHW convolution -> tensor.pad + linalg.conv_2d_nchw_fchw (groups == 1) or
// linalg.conv_2d_ngchw_gfchw (grouped and depthwise), accumulating into the
// broadcast bias. Pools -> tensor.pad + linalg.pooling_nchw_max/sum, with
// PyTorch's divisors for average pooling (count_include_pad, ceil_mode,
// divisor_override).
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

/// A 2-entry parameter from a 1- or 2-entry attribute.
static SmallVector<int64_t, 2> pair(ArrayRef<int64_t> v) {
  if (v.size() == 1)
    return {v[0], v[0]};
  return {v[0], v[1]};
}

/// Pads the two spatial dims of an NCHW tensor with `value`.
static Value padSpatial(OpBuilder &b, Location loc, Value input,
                        ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                        Value value) {
  if (llvm::all_of(low, [](int64_t x) { return x == 0; }) &&
      llvm::all_of(high, [](int64_t x) { return x == 0; }))
    return input;
  auto ty = getTensorType(input);
  SmallVector<int64_t> lo = {0, 0, low[0], low[1]};
  SmallVector<int64_t> hi = {0, 0, high[0], high[1]};
  SmallVector<int64_t> shape(ty.getShape());
  for (int i = 0; i < 4; ++i)
    shape[i] += lo[i] + hi[i];
  SmallVector<OpFoldResult> loF, hiF;
  for (int i = 0; i < 4; ++i) {
    loF.push_back(b.getIndexAttr(lo[i]));
    hiF.push_back(b.getIndexAttr(hi[i]));
  }
  return tensor::PadOp::create(b, loc, ty.clone(shape), input, loF, hiF, value);
}

/// Extra high padding so that every window of the output (including the
/// partial windows of ceil_mode) lies inside the padded input.
static SmallVector<int64_t, 2>
highPadding(ArrayRef<int64_t> inSize, ArrayRef<int64_t> outSize,
            ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
            ArrayRef<int64_t> dilation, ArrayRef<int64_t> pad) {
  SmallVector<int64_t, 2> hi;
  for (int i = 0; i < 2; ++i) {
    int64_t needed =
        (outSize[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1;
    hi.push_back(std::max<int64_t>(0, needed - (inSize[i] + pad[i])));
  }
  return hi;
}

struct ConvolutionLowering : public OpConversionPattern<ConvolutionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvolutionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Type elem = resTy.getElementType();
    auto inTy = getTensorType(adaptor.getInput());
    auto wTy = getTensorType(adaptor.getWeight());
    if (op.getTransposed())
      return op.emitOpError("transposed convolution (conv_transpose) is not "
                            "supported yet; use a regular convolution");
    if (inTy.getRank() != 4)
      return op.emitOpError("only 2-D convolution on (N, C, H, W) input is "
                            "supported; got rank ")
             << inTy.getRank() << " (reshape 1-D/3-D cases to 2-D)";
    if (!isa<FloatType>(elem))
      return op.emitOpError(
                 "only floating-point convolution is supported, got ")
             << elem;
    auto stride = pair(op.getStride()), dilation = pair(op.getDilation()),
         padding = pair(op.getPadding());
    int64_t groups = op.getGroups();
    int64_t n = inTy.getShape()[0], c = inTy.getShape()[1];
    int64_t o = wTy.getShape()[0];
    if (o % groups != 0)
      return op.emitOpError("output channels ")
             << o << " are not divisible by groups " << groups;
    ArrayRef<int64_t> outShape = resTy.getShape();

    Value zero = createScalar(rewriter, loc, elem, 0.0);
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), padding, padding, zero);
    Value init;
    if (Value bias = adaptor.getBias())
      init = linalg::BroadcastOp::create(rewriter, loc, bias,
                                         createEmpty(rewriter, loc, resTy),
                                         ArrayRef<int64_t>{0, 2, 3})
                 ->getResult(0);
    else
      init = createFilled(rewriter, loc, resTy, zero);
    auto strides = getI64Elements(rewriter, stride);
    auto dilations = getI64Elements(rewriter, dilation);

    Value result;
    if (groups == 1) {
      result = linalg::Conv2DNchwFchwOp::create(
                   rewriter, loc, TypeRange{resTy},
                   ValueRange{input, adaptor.getWeight()}, ValueRange{init},
                   strides, dilations)
                   .getResult(0);
    } else {
      auto pTy = getTensorType(input);
      Value in5 = reshapeTensor(
          rewriter, loc, input,
          {n, groups, c / groups, pTy.getShape()[2], pTy.getShape()[3]});
      ArrayRef<int64_t> ws = wTy.getShape();
      Value w5 = reshapeTensor(rewriter, loc, adaptor.getWeight(),
                               {groups, o / groups, ws[1], ws[2], ws[3]});
      SmallVector<int64_t> out5 = {n, groups, o / groups, outShape[2],
                                   outShape[3]};
      Value init5 = reshapeTensor(rewriter, loc, init, out5);
      Value conv =
          linalg::Conv2DNgchwGfchwOp::create(
              rewriter, loc, TypeRange{init5.getType()}, ValueRange{in5, w5},
              ValueRange{init5}, strides, dilations)
              .getResult(0);
      result = reshapeTensor(rewriter, loc, conv, outShape);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Shared structure of the pools: (C, H, W) inputs are lowered as (1, C, H, W).
struct PoolOperands {
  Value input;                 // NCHW
  RankedTensorType resultType; // NCHW
};

static PoolOperands toNchw(OpBuilder &b, Location loc, Value input,
                           RankedTensorType resTy) {
  auto inTy = getTensorType(input);
  if (inTy.getRank() == 4)
    return {input, resTy};
  SmallVector<int64_t> inShape = {1}, outShape = {1};
  inShape.append(inTy.getShape().begin(), inTy.getShape().end());
  outShape.append(resTy.getShape().begin(), resTy.getShape().end());
  return {reshapeTensor(b, loc, input, inShape), resTy.clone(outShape)};
}

struct MaxPool2dLowering : public OpConversionPattern<MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MaxPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = op.getType().getElementType();
    if (!isa<FloatType, IntegerType>(elem) || isUnsignedInteger(elem) ||
        elem.isInteger(1))
      return op.emitOpError("element type ")
             << elem << " is not supported; use a float or signed integer type";
    auto kernel = pair(op.getKernelSize()), stride = pair(op.getStride()),
         padding = pair(op.getPadding()), dilation = pair(op.getDilation());
    PoolOperands p = toNchw(rewriter, loc, adaptor.getInput(), op.getType());
    ArrayRef<int64_t> inShape = getTensorType(p.input).getShape();
    ArrayRef<int64_t> outShape = p.resultType.getShape();
    auto high = highPadding(inShape.drop_front(2), outShape.drop_front(2),
                            kernel, stride, dilation, padding);
    Value lowest = createLowest(rewriter, loc, elem);
    Value input = padSpatial(rewriter, loc, p.input, padding, high, lowest);
    Value window = tensor::EmptyOp::create(rewriter, loc, kernel, elem);
    Value init = createFilled(rewriter, loc, p.resultType, lowest);
    Value pooled =
        linalg::PoolingNchwMaxOp::create(
            rewriter, loc, TypeRange{p.resultType}, ValueRange{input, window},
            ValueRange{init}, getI64Elements(rewriter, stride),
            getI64Elements(rewriter, dilation))
            .getResult(0);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, pooled, op.getType().getShape()));
    return success();
  }
};

/// Sum pooling of an NCHW tensor, divided by a per-output-position divisor
/// (an (OH, OW) table; a scalar when uniform).
static Value sumPoolAndDivide(OpBuilder &b, Location loc, Value input,
                              RankedTensorType resTy, ArrayRef<int64_t> kernel,
                              ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding,
                              ArrayRef<double> divisors) {
  Type elem = resTy.getElementType();
  ArrayRef<int64_t> inShape = getTensorType(input).getShape();
  ArrayRef<int64_t> outShape = resTy.getShape();
  SmallVector<int64_t> ones = {1, 1};
  auto high = highPadding(inShape.drop_front(2), outShape.drop_front(2), kernel,
                          stride, ones, padding);
  Value zero = createScalar(b, loc, elem, 0.0);
  Value padded = padSpatial(b, loc, input, padding, high, zero);
  Value window = tensor::EmptyOp::create(b, loc, kernel, elem);
  Value init = createFilled(b, loc, resTy, zero);
  Value sum =
      linalg::PoolingNchwSumOp::create(
          b, loc, TypeRange{resTy}, ValueRange{padded, window},
          ValueRange{init}, getI64Elements(b, stride), getI64Elements(b, ones))
          .getResult(0);
  bool uniform =
      llvm::all_of(divisors, [&](double d) { return d == divisors[0]; });
  if (uniform) {
    double d = divisors.empty() ? 1.0 : divisors[0];
    return createElementwiseGeneric(
        b, loc, ValueRange{sum}, outShape, elem,
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return arith::DivFOp::create(nb, nloc, args[0],
                                       createScalar(nb, nloc, elem, d));
        });
  }
  auto tableTy = RankedTensorType::get(outShape.drop_front(2), elem);
  SmallVector<Attribute> values;
  for (double d : divisors)
    values.push_back(b.getFloatAttr(elem, d));
  Value table = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(tableTy, values));
  return createElementwiseGeneric(
      b, loc, ValueRange{sum, table}, outShape, elem,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return arith::DivFOp::create(nb, nloc, args[0], args[1]);
      });
}

struct AvgPool2dLowering : public OpConversionPattern<AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = op.getType().getElementType();
    if (!isa<FloatType>(elem))
      return op.emitOpError("only floating-point average pooling is "
                            "supported, got ")
             << elem;
    auto kernel = pair(op.getKernelSize()), stride = pair(op.getStride()),
         padding = pair(op.getPadding());
    std::optional<uint64_t> override = op.getDivisorOverride();
    if (override && *override == 0)
      return op.emitOpError("divisor_override must be non-zero");
    PoolOperands p = toNchw(rewriter, loc, adaptor.getInput(), op.getType());
    ArrayRef<int64_t> inShape = getTensorType(p.input).getShape();
    ArrayRef<int64_t> outShape = p.resultType.getShape();

    // PyTorch's divisor: the window clipped to input + padding
    // (count_include_pad) or to the input alone.
    SmallVector<double> divisors;
    for (int64_t oh = 0; oh < outShape[2]; ++oh) {
      for (int64_t ow = 0; ow < outShape[3]; ++ow) {
        if (override) {
          divisors.push_back((double)*override);
          continue;
        }
        int64_t idx[2] = {oh, ow};
        int64_t full = 1, inside = 1;
        for (int i = 0; i < 2; ++i) {
          int64_t size = inShape[2 + i];
          int64_t start = idx[i] * stride[i] - padding[i];
          int64_t end = std::min(start + kernel[i], size + padding[i]);
          full *= end - start;
          inside *= std::min(end, size) - std::max<int64_t>(start, 0);
        }
        divisors.push_back(op.getCountIncludePad() ? full : inside);
      }
    }
    Value result = sumPoolAndDivide(rewriter, loc, p.input, p.resultType,
                                    kernel, stride, padding, divisors);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, result, op.getType().getShape()));
    return success();
  }
};

struct AdaptiveAvgPool2dLowering
    : public OpConversionPattern<AdaptiveAvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AdaptiveAvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = op.getType().getElementType();
    if (!isa<FloatType>(elem))
      return op.emitOpError("only floating-point average pooling is "
                            "supported, got ")
             << elem;
    PoolOperands p = toNchw(rewriter, loc, adaptor.getInput(), op.getType());
    ArrayRef<int64_t> inShape = getTensorType(p.input).getShape();
    ArrayRef<int64_t> outShape = p.resultType.getShape();
    SmallVector<int64_t> kernel;
    for (int i = 0; i < 2; ++i) {
      int64_t in = inShape[2 + i], out = outShape[2 + i];
      if (out <= 0 || in % out != 0)
        return op.emitOpError("output size ")
               << outShape[2] << "x" << outShape[3]
               << " must divide the input size " << inShape[2] << "x"
               << inShape[3]
               << "; other adaptive windows are not supported yet (use "
                  "avg_pool2d with an explicit kernel)";
      kernel.push_back(in / out);
    }
    SmallVector<int64_t> zeros = {0, 0};
    SmallVector<double> divisors = {(double)(kernel[0] * kernel[1])};
    Value result = sumPoolAndDivide(rewriter, loc, p.input, p.resultType,
                                    kernel, kernel, zeros, divisors);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, result, op.getType().getShape()));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateConvPoolPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvolutionLowering, MaxPool2dLowering, AvgPool2dLowering,
               AdaptiveAvgPool2dLowering>(patterns.getContext());
}
