//===- Convolution.cpp - convolutions to linalg ---------------------------===//
//
// Convolution (1-, 2-, 3-D, grouped, dilated, strided, transposed):
//  * a transposed convolution (3-D, or torch._convolution's: the tracer
//    decomposes the other 1-D and 2-D ones into stride-1 convolutions of
//    the stride's phases, python/poptorch/_decompositions.py) becomes a
//    regular one on the input with stride-1 zeros inserted between elements
//    and padded by dilation * (kernel - 1) - padding (+ output_padding at
//    the end), with the weight flipped and its in/out channels swapped per
//    group;
//  * a 2-D convolution that ConvolutionOp::isChannelsLastDirect accepts
//    runs as linalg.conv_2d_nhwc_hwcf on a channels-last, zero-padded copy
//    of its input (directNhwcConvolution), a pointwise one over 64 channels
//    or more as a matmul of the pixels' channels; a depthwise one with
//    channels in whole blocks of 8 and at most 16 taps runs channels-last
//    as an elementwise generic vectorized along the channels. The transposes
//    from and to the model's NCHW around each cancel between consecutive
//    layers (poptorch-sink-transposes);
//  * any other regular 1-D or 2-D convolution (groups 1) is a matmul over
//    im2col columns (im2colConvolution); 1-D is 2-D with a unit height;
//  * the input is padded, a depthwise 2-D convolution is an elementwise
//    generic, other grouped 2-D ones use conv_2d_ngchw_gfchw, 3-D a grouped
//    linalg.generic; all accumulate into the broadcast bias, in f32 for
//    f16/bf16 (as PyTorch's CPU kernels). The channels-last and im2col ones
//    read f16/bf16 operands as they are, the others f32 copies.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

/// Multiply-accumulate in a linalg body (float or signless integer); the
/// product alone when there is no `acc` yet.
static Value multiplyAdd(OpBuilder &b, Location loc, Value x, Value w,
                         Value acc) {
  bool isFloat = isa<FloatType>(x.getType());
  Value product = isFloat ? (Value)arith::MulFOp::create(b, loc, x, w)
                          : (Value)arith::MulIOp::create(b, loc, x, w);
  if (!acc)
    return product;
  return isFloat ? (Value)arith::AddFOp::create(b, loc, acc, product)
                 : (Value)arith::AddIOp::create(b, loc, acc, product);
}

/// The accumulator a convolution starts from, in `dest`: the bias (F)
/// broadcast along `dims`, or zeros.
static Value accumulatorInit(OpBuilder &b, Location loc, Value bias, Value dest,
                             ArrayRef<int64_t> dims) {
  if (bias)
    return linalg::BroadcastOp::create(b, loc, bias, dest, dims)->getResult(0);
  Value zero = createScalar(b, loc, getTensorType(dest).getElementType(), 0.0);
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{dest})
      .getResult(0);
}

/// A grouped N-d convolution as one linalg.generic over
/// (n, g, f, out..., c, k...): input (N, G, C/G, in...), weight
/// (G, F, C/G, k...), init (N, G, F, out...).
static Value genericGroupedConv(OpBuilder &b, Location loc, Value in5, Value w5,
                                Value init5, ArrayRef<int64_t> stride,
                                ArrayRef<int64_t> dilation) {
  MLIRContext *ctx = b.getContext();
  int64_t s = stride.size(), nLoops = 4 + 2 * s;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inE = {d(0), d(1), d(3 + s)},
                          wE = {d(1), d(2), d(3 + s)},
                          outE = {d(0), d(1), d(2)};
  for (int64_t j = 0; j < s; ++j) {
    inE.push_back(d(3 + j) * stride[j] + d(4 + s + j) * dilation[j]);
    wE.push_back(d(4 + s + j));
    outE.push_back(d(3 + j));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(nLoops, 0, inE, ctx),
                                 AffineMap::get(nLoops, 0, wE, ctx),
                                 AffineMap::get(nLoops, 0, outE, ctx)};
  SmallVector<utils::IteratorType> iters(3 + s, utils::IteratorType::parallel);
  iters.append(1 + s, utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init5.getType()}, ValueRange{in5, w5},
             ValueRange{init5}, maps, iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc, multiplyAdd(nb, nloc, args[0], args[1], args[2]));
             })
      .getResult(0);
}

/// A convolution of an already padded input (stride, dilation, groups) into
/// `init` (N, O, out...), whose element type it computes in.
static Value convolve(OpBuilder &b, Location loc, Value input, Value weight,
                      Value init, ArrayRef<int64_t> stride,
                      ArrayRef<int64_t> dilation, int64_t groups) {
  auto inTy = getTensorType(input), wTy = getTensorType(weight);
  auto initTy = getTensorType(init);
  int64_t spatial = inTy.getRank() - 2;
  if (spatial == 1) {
    // 1-D is 2-D with a unit height.
    auto unitH = [&](Value v) {
      ArrayRef<int64_t> s = getTensorType(v).getShape();
      return reshapeTensor(b, loc, v, {s[0], s[1], 1, s[2]});
    };
    Value r = convolve(b, loc, unitH(input), unitH(weight), unitH(init),
                       {1, stride[0]}, {1, dilation[0]}, groups);
    return reshapeTensor(b, loc, r, initTy.getShape());
  }
  auto strides = getI64Elements(b, stride);
  auto dilations = getI64Elements(b, dilation);
  if (spatial == 2 && groups == 1)
    return linalg::Conv2DNchwFchwOp::create(
               b, loc, TypeRange{initTy}, ValueRange{input, weight},
               ValueRange{init}, strides, dilations)
        .getResult(0);
  // Grouped: (N, G, C/G, ...), (G, O/G, C/G, ...), (N, G, O/G, ...).
  auto split = [&](Value v, int64_t dim, bool groupFirst) {
    ArrayRef<int64_t> s = getTensorType(v).getShape();
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < (int64_t)s.size(); ++i) {
      if (i == dim) {
        shape.push_back(groups);
        shape.push_back(s[i] / groups);
      } else {
        shape.push_back(s[i]);
      }
    }
    (void)groupFirst;
    return reshapeTensor(b, loc, v, shape);
  };
  Value in5 = split(input, 1, true), w5 = split(weight, 0, true),
        init5 = split(init, 1, true);
  Value r;
  if (spatial == 2)
    r = linalg::Conv2DNgchwGfchwOp::create(
            b, loc, TypeRange{init5.getType()}, ValueRange{in5, w5},
            ValueRange{init5}, strides, dilations)
            .getResult(0);
  else
    r = genericGroupedConv(b, loc, in5, w5, init5, stride, dilation);
  (void)wTy;
  return reshapeTensor(b, loc, r, initTy.getShape());
}

/// A 1x1 stride-1 convolution (groups 1) of (N, C, H, W) with weight (F, C,
/// 1, 1) and an optional `bias` (F): the contraction over (n, f, p, c) of
/// weight (F, C) and images (N, C, H*W) into (N, F, H*W), which is already
/// (N, F, H, W): no im2col copy of the input and no transpose of the result
/// (at batch 8 both copied every activation of MobileNetV2's pointwise
/// convolutions). poptorch-tile-and-vectorize tiles it as a matmul per image
/// (n is an outer column dim); as one op rather than a loop of matmuls, it
/// takes an elementwise consumer (the batch norm after it) into its register
/// tiles. One image is a plain matmul.
static Value pointwiseConvolution(OpBuilder &b, Location loc, Value input,
                                  Value weight, Value bias,
                                  RankedTensorType accTy) {
  ArrayRef<int64_t> out = accTy.getShape();
  int64_t n = out[0], f = out[1], p = out[2] * out[3];
  int64_t c = getTensorType(input).getShape()[1];
  Type elem = accTy.getElementType();
  Value w = reshapeTensor(b, loc, weight, {f, c});
  if (n == 1) {
    auto planeTy = RankedTensorType::get({f, p}, elem);
    Value init =
        accumulatorInit(b, loc, bias, createEmpty(b, loc, planeTy), {1});
    Value image = reshapeTensor(b, loc, input, {c, p});
    Value mm = linalg::MatmulOp::create(b, loc, TypeRange{planeTy},
                                        ValueRange{w, image}, ValueRange{init})
                   .getResult(0);
    return reshapeTensor(b, loc, mm, out);
  }
  Value x = reshapeTensor(b, loc, input, {n, c, p});
  MLIRContext *ctx = b.getContext();
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(1), d(3)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)};
  SmallVector<utils::IteratorType> iters(3, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value init = accumulatorInit(
      b, loc, bias, createEmpty(b, loc, RankedTensorType::get({n, f, p}, elem)),
      {0, 2});
  Value r =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{w, x}, ValueRange{init},
          maps, iters,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            // Narrower operands (f16/bf16) extend into the accumulator.
            auto extend = [&](Value v) {
              return convertScalar(nb, nloc, v, elem, false, false);
            };
            linalg::YieldOp::create(nb, nloc,
                                    multiplyAdd(nb, nloc, extend(args[0]),
                                                extend(args[1]), args[2]));
          })
          .getResult(0);
  return reshapeTensor(b, loc, r, out);
}

/// A 2-D convolution (groups 1) of an already padded input (N, C, Hp, Wp)
/// as one matmul: weight (F, C*KH*KW) x col (C*KH*KW, N*OH*OW) -> (F,
/// N*OH*OW), plus `bias` (F) or nothing. Column (n, y, x) of col (im2col)
/// holds the input window of output pixel (y, x) of image n; it is built by
/// a loop over the KH*KW kernel offsets, each a strided copy of the input
/// (1x1 stride-1 kernels are pointwiseConvolution instead). The columns are
/// padded with zeros to whole register tiles of the matmul (16, or 32 above
/// 32), which would otherwise leave a scalar remainder. The matmul is the
/// register-blocked kernel of poptorch-tile-and-vectorize; its result drops the
/// padding and goes back to (N, F, OH, OW).
static Value im2colConvolution(OpBuilder &b, Location loc, Value input,
                               Value weight, Value bias,
                               ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> dilation,
                               RankedTensorType accTy) {
  ArrayRef<int64_t> inS = getTensorType(input).getShape();
  ArrayRef<int64_t> wS = getTensorType(weight).getShape();
  int64_t n = inS[0], c = inS[1], f = wS[0], kh = wS[2], kw = wS[3];
  if (kh == 1 && kw == 1 && stride[0] == 1 && stride[1] == 1)
    return pointwiseConvolution(b, loc, input, weight, bias, accTy);
  // The columns keep the input's type (f16/bf16 too: the matmul extends
  // them into its f32 accumulator).
  Type elem = accTy.getElementType(),
       colElem = getTensorType(input).getElementType();
  int64_t oh = accTy.getShape()[2], ow = accTy.getShape()[3];
  int64_t k = c * kh * kw, np = n * oh * ow;
  int64_t cols = np <= 32 ? (np + 15) / 16 * 16 : (np + 31) / 32 * 32;
  Value col = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{c, kh, kw, cols}, colElem);
  auto winTy = RankedTensorType::get({n, c, oh, ow}, colElem);
  auto flatTy = RankedTensorType::get({c, np}, colElem);
  // Window element (i, j) of every output pixel, written in place into its
  // row block of col, for kernel offset t = i * KW + j. One loop over the
  // offsets, not KH*KW copies of its body: a 7x7 stem had 49 copies,
  // chained through col, whose in-place analysis in one-shot-bufferize
  // grew with the square of the chain (ResNet-18: 1.05 s of its compile),
  // and each copy became a parallel loop of its own.
  auto copyWindow = [&](OpBuilder &b, Location loc, OpFoldResult i,
                        OpFoldResult j, Value col) {
    auto scaled = [&](OpFoldResult v, int64_t factor) -> OpFoldResult {
      if (factor == 1)
        return v;
      if (std::optional<int64_t> k = getConstantIntValue(v))
        return b.getIndexAttr(*k * factor);
      return arith::MulIOp::create(
                 b, loc, cast<Value>(v),
                 arith::ConstantIndexOp::create(b, loc, factor))
          .getResult();
    };
    SmallVector<OpFoldResult> winOff = {b.getIndexAttr(0), b.getIndexAttr(0),
                                        scaled(i, dilation[0]),
                                        scaled(j, dilation[1])};
    Value win = tensor::ExtractSliceOp::create(
        b, loc, winTy, input, winOff, indexAttrs(b, {n, c, oh, ow}),
        indexAttrs(b, {1, 1, stride[0], stride[1]}));
    SmallVector<OpFoldResult> off = {b.getIndexAttr(0), i, j,
                                     b.getIndexAttr(0)},
                              sz = indexAttrs(b, {c, 1, 1, np}),
                              ones = indexAttrs(b, {1, 1, 1, 1});
    Value dst =
        tensor::ExtractSliceOp::create(b, loc, flatTy, col, off, sz, ones);
    dst = reshapeTensor(b, loc, dst, {c, n, oh, ow});
    Value moved = linalg::TransposeOp::create(b, loc, win, dst,
                                              ArrayRef<int64_t>{1, 0, 2, 3})
                      ->getResult(0);
    return tensor::InsertSliceOp::create(b, loc,
                                         reshapeTensor(b, loc, moved, {c, np}),
                                         col, off, sz, ones)
        .getResult();
  };
  if (kh * kw == 1) {
    col = copyWindow(b, loc, b.getIndexAttr(0), b.getIndexAttr(0), col);
  } else {
    Value lb = arith::ConstantIndexOp::create(b, loc, 0),
          ub = arith::ConstantIndexOp::create(b, loc, kh * kw),
          one = arith::ConstantIndexOp::create(b, loc, 1),
          kwV = arith::ConstantIndexOp::create(b, loc, kw);
    col = scf::ForOp::create(
              b, loc, lb, ub, one, ValueRange{col},
              [&](OpBuilder &b, Location loc, Value t, ValueRange iter) {
                OpFoldResult
                    i = arith::DivUIOp::create(b, loc, t, kwV).getResult(),
                    j = arith::RemUIOp::create(b, loc, t, kwV).getResult();
                scf::YieldOp::create(b, loc, copyWindow(b, loc, i, j, iter[0]));
              })
              .getResult(0);
  }
  if (cols > np) {
    SmallVector<OpFoldResult> off = indexAttrs(b, {0, 0, 0, np}),
                              sz = indexAttrs(b, {c, kh, kw, cols - np}),
                              ones = indexAttrs(b, {1, 1, 1, 1});
    auto padTy = RankedTensorType::get({c, kh, kw, cols - np}, colElem);
    Value pad =
        tensor::ExtractSliceOp::create(b, loc, padTy, col, off, sz, ones);
    pad = linalg::FillOp::create(b, loc,
                                 ValueRange{createScalar(b, loc, colElem, 0.0)},
                                 ValueRange{pad})
              .getResult(0);
    col = tensor::InsertSliceOp::create(b, loc, pad, col, off, sz, ones);
  }
  col = reshapeTensor(b, loc, col, {k, cols});
  auto mmTy = RankedTensorType::get({f, cols}, elem);
  Value init = accumulatorInit(b, loc, bias, createEmpty(b, loc, mmTy), {1});
  Value mm = linalg::MatmulOp::create(
                 b, loc, TypeRange{mmTy},
                 ValueRange{reshapeTensor(b, loc, weight, {f, k}), col},
                 ValueRange{init})
                 .getResult(0);
  if (cols > np)
    mm = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({f, np}, elem), mm, indexAttrs(b, {0, 0}),
        indexAttrs(b, {f, np}), indexAttrs(b, {1, 1}));
  if (n == 1)
    return reshapeTensor(b, loc, mm, {1, f, oh, ow});
  Value perImage = reshapeTensor(b, loc, mm, {f, n, oh, ow});
  return linalg::TransposeOp::create(b, loc, perImage,
                                     createEmpty(b, loc, accTy),
                                     ArrayRef<int64_t>{1, 0, 2, 3})
      ->getResult(0);
}

/// The fewest input channels of a channels-last pointwise (1x1, stride 1)
/// convolution computed as a matmul rather than by the convolution tiles.
/// Measured at batch 8 on a Zen 4 host against the convolution tiles:
/// ResNet-50 (pointwise over 64 to 2048 channels) 1.4% faster with all of
/// them matmuls, MobileNetV2 29% slower (its expansions read 16 and 24
/// channels, so each output is a dot product of 16 or 24 terms).
constexpr int64_t kMinPointwiseMatmulChannels = 64;

/// The most window taps of a depthwise convolution computed channels-last.
/// There each tap's weights are a vector of channels, read once per output
/// vector unless they stay in registers: ConvNeXt's 7 x 7 (49 taps) ran at
/// half the speed of the (N, C, H, W) form, whose weights are one scalar per
/// channel and tap; MobileNetV2's 3 x 3 (9) gained.
constexpr int64_t kMaxChannelsLastTaps = 16;

/// The input (N, C, H, W) as a zero-padded channels-last (N, H + 2 ph,
/// W + 2 pw, C). The layout change is an elementwise generic writing
/// straight into the interior of the padded tensor, so that
/// poptorch-fuse-elementwise merges the op producing the input (a batch
/// norm and activation) into it, and a transpose from channels-last before
/// it (poptorch-sink-transposes) makes it a plain copy.
static Value channelsLastPadded(OpBuilder &b, Location loc, Value input,
                                ArrayRef<int64_t> padding) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> inS = getTensorType(input).getShape();
  Type elem = getTensorType(input).getElementType();
  int64_t n = inS[0], c = inS[1], h = inS[2], w = inS[3];
  auto paddedTy = RankedTensorType::get(
      {n, h + 2 * padding[0], w + 2 * padding[1], c}, elem);
  auto interiorTy = RankedTensorType::get({n, h, w, c}, elem);
  bool padded = padding[0] > 0 || padding[1] > 0;
  Value dest =
      padded ? createFilled(b, loc, paddedTy, createScalar(b, loc, elem, 0.0))
             : createEmpty(b, loc, paddedTy);
  SmallVector<OpFoldResult> off = indexAttrs(b, {0, padding[0], padding[1], 0}),
                            sz = indexAttrs(b, {n, h, w, c}),
                            ones = indexAttrs(b, {1, 1, 1, 1});
  Value interior = padded ? tensor::ExtractSliceOp::create(b, loc, interiorTy,
                                                           dest, off, sz, ones)
                                .getResult()
                          : dest;
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d0, d3, d1, d2}, ctx),
                                 AffineMap::getMultiDimIdentityMap(4, ctx)};
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  Value x = linalg::GenericOp::create(
                b, loc, TypeRange{interiorTy}, ValueRange{input},
                ValueRange{interior}, maps, iters,
                [](OpBuilder &b, Location loc, ValueRange args) {
                  linalg::YieldOp::create(b, loc, args[0]);
                })
                .getResult(0);
  if (padded)
    x = tensor::InsertSliceOp::create(b, loc, x, dest, off, sz, ones);
  return x;
}

/// A 2-D convolution (groups 1, see ConvolutionOp::isChannelsLastDirect)
/// computed directly in channels-last layout, with no im2col matrix: the
/// input (N, C, H, W) goes to a zero-padded (N, Hp, Wp, C), and
/// linalg.conv_2d_nhwc_hwcf accumulates every output pixel's F channels over
/// the window with the weight (KH, KW, C, F), which poptorch-decompose made
/// `weight` a permute of. The result (N, OH, OW, F), `bias` (F) included,
/// goes back to (N, F, OH, OW) through a transpose that the consumer (a
/// batch norm) reads through.
static Value directNhwcConvolution(OpBuilder &b, Location loc, Value input,
                                   ArrayRef<int64_t> padding, Value weight,
                                   Value bias, ArrayRef<int64_t> stride,
                                   ArrayRef<int64_t> dilation,
                                   RankedTensorType accTy) {
  // The channels-last copy keeps the input's type (f16/bf16 too); the
  // convolution extends it into the f32 accumulator.
  int64_t n = getTensorType(input).getShape()[0];
  int64_t f = accTy.getShape()[1], oh = accTy.getShape()[2],
          ow = accTy.getShape()[3];
  Value x = channelsLastPadded(b, loc, input, padding);

  auto back = weight.getDefiningOp<linalg::TransposeOp>();
  Value hwcf = back && back.getPermutation() == ArrayRef<int64_t>{3, 2, 0, 1}
                   ? Value(back.getInput())
                   : transposeTensor(b, loc, weight, {2, 3, 1, 0});
  auto outTy = RankedTensorType::get({n, oh, ow, f}, accTy.getElementType());
  Value init =
      accumulatorInit(b, loc, bias, createEmpty(b, loc, outTy), {0, 1, 2});
  ArrayRef<int64_t> k = getTensorType(hwcf).getShape();
  if (k[0] == 1 && k[1] == 1 && stride[0] == 1 && stride[1] == 1 &&
      k[2] >= kMinPointwiseMatmulChannels) {
    // A pointwise convolution over enough input channels is a matmul of the
    // pixels' channels, (N * H * W, C) x (C, F), register-blocked as any
    // matmul.
    int64_t pixels = n * oh * ow, c = k[2];
    Value mm = linalg::MatmulOp::create(
                   b, loc,
                   TypeRange{RankedTensorType::get({pixels, f},
                                                   accTy.getElementType())},
                   ValueRange{reshapeTensor(b, loc, x, {pixels, c}),
                              reshapeTensor(b, loc, hwcf, {c, f})},
                   ValueRange{reshapeTensor(b, loc, init, {pixels, f})})
                   .getResult(0);
    return transposeTensor(b, loc, reshapeTensor(b, loc, mm, {n, oh, ow, f}),
                           {0, 3, 1, 2});
  }
  Value r = linalg::Conv2DNhwcHwcfOp::create(
                b, loc, TypeRange{outTy}, ValueRange{x, hwcf}, ValueRange{init},
                b.getI64TensorAttr(stride), b.getI64TensorAttr(dilation))
                .getResult(0);
  return transposeTensor(b, loc, r, {0, 3, 1, 2});
}

/// A depthwise 2-D convolution (groups = input = output channels) of an
/// already padded input with weight (C, 1, KH, KW) and an optional
/// per-channel `bias` (C) into a new tensor of type `outTy` (N, C, OH, OW):
/// one elementwise linalg.generic over the output whose operands are the
/// KH*KW strided input windows (one per kernel offset), the KH*KW
/// per-channel weights and the bias. Every map is a projected permutation,
/// so the op vectorizes like any elementwise op, and the following batch
/// norm and activation fuse into it. Its init is never read: a zero-filled
/// init that the sum started from made the fused op keep the convolution's
/// own result too (a fill, a copy and a dead store of the whole activation
/// per call). Channels-last (the input (N, Hp, Wp, C), see
/// channelsLastPadded), it computes (N, OH, OW, C), vectorized along the
/// channels, and is transposed back; otherwise (N, C, Hp, Wp) along the
/// output width.
static Value depthwiseConvolution(OpBuilder &b, Location loc, Value input,
                                  Value weight, Value bias,
                                  RankedTensorType outTy,
                                  ArrayRef<int64_t> stride,
                                  ArrayRef<int64_t> dilation,
                                  bool channelsLast) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> wS = getTensorType(weight).getShape();
  Type elem = outTy.getElementType();
  ArrayRef<int64_t> o = outTy.getShape();
  int64_t c = o[1];
  SmallVector<Value> windows;
  RankedTensorType computeTy = outTy;
  if (channelsLast) {
    computeTy = RankedTensorType::get({o[0], o[2], o[3], c}, elem);
    for (int64_t i = 0; i < wS[2]; ++i)
      for (int64_t j = 0; j < wS[3]; ++j)
        windows.push_back(tensor::ExtractSliceOp::create(
            b, loc, computeTy.clone(getTensorType(input).getElementType()),
            input, indexAttrs(b, {0, i * dilation[0], j * dilation[1], 0}),
            indexAttrs(b, computeTy.getShape()),
            indexAttrs(b, {1, stride[0], stride[1], 1})));
  } else {
    windows = windowTaps(b, loc, input, o, wS.drop_front(2), stride, dilation);
  }
  // Each tap's weights as a (C) vector: contiguous for a channels-last op,
  // so from the weight transposed to (KH, KW, C); a (C) slice of the
  // (C, 1, KH, KW) weight would be gathered element by element.
  Type wElem = getTensorType(weight).getElementType();
  Value perTap =
      channelsLast
          ? transposeTensor(b, loc,
                            reshapeTensor(b, loc, weight, {c, wS[2], wS[3]}),
                            {1, 2, 0})
          : reshapeTensor(b, loc, weight, {c, wS[2], wS[3]});
  SmallVector<Value> weights;
  for (int64_t i = 0; i < wS[2]; ++i)
    for (int64_t j = 0; j < wS[3]; ++j)
      weights.push_back(tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get({c}, wElem), perTap,
          indexAttrs(b, channelsLast ? SmallVector<int64_t>{i, j, 0}
                                     : SmallVector<int64_t>{0, i, j}),
          indexAttrs(b, channelsLast ? SmallVector<int64_t>{1, 1, c}
                                     : SmallVector<int64_t>{c, 1, 1}),
          indexAttrs(b, {1, 1, 1})));
  AffineMap identity = b.getMultiDimIdentityMap(4);
  AffineMap channel =
      AffineMap::get(4, 0, {getAffineDimExpr(channelsLast ? 3 : 1, ctx)}, ctx);
  SmallVector<AffineMap> maps(windows.size(), identity);
  maps.append(weights.size(), channel);
  SmallVector<Value> ins(windows);
  ins.append(weights);
  if (bias) {
    ins.push_back(bias);
    maps.push_back(channel);
  }
  maps.push_back(identity);
  int64_t taps = windows.size();
  Value r =
      linalg::GenericOp::create(
          b, loc, TypeRange{computeTy}, ins,
          ValueRange{createEmpty(b, loc, computeTy)}, maps,
          SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value acc = bias ? args[2 * taps] : Value();
            for (int64_t t = 0; t < taps; ++t)
              acc = multiplyAdd(nb, nloc, args[t], args[taps + t], acc);
            linalg::YieldOp::create(nb, nloc, acc);
          })
          .getResult(0);
  return channelsLast ? transposeTensor(b, loc, r, {0, 3, 1, 2}) : r;
}

/// The weight of the regular convolution equivalent to a transposed one:
/// (C_in, C_out/g, k...) -> (C_out, C_in/g, k...), spatially flipped.
static Value transposedConvWeight(OpBuilder &b, Location loc, Value weight,
                                  int64_t groups) {
  auto wTy = getTensorType(weight);
  ArrayRef<int64_t> ws = wTy.getShape();
  int64_t s = ws.size() - 2, cin = ws[0], cout = ws[1];
  SmallVector<int64_t> w5Shape = {groups, cin / groups, cout};
  SmallVector<int64_t> outShape = {groups, cout, cin / groups};
  for (int64_t j = 0; j < s; ++j) {
    w5Shape.push_back(ws[2 + j]);
    outShape.push_back(ws[2 + j]);
  }
  Value w5 = reshapeTensor(b, loc, weight, w5Shape);
  // A gather (tensor.extract) rather than a reversing indexing map, which
  // the tiling pass cannot slice.
  int64_t nLoops = 3 + s;
  auto outTy = RankedTensorType::get(outShape, wTy.getElementType());
  Value flipped =
      linalg::GenericOp::create(
          b, loc, TypeRange{outTy}, ValueRange{},
          ValueRange{createEmpty(b, loc, outTy)},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(nLoops)},
          SmallVector<utils::IteratorType>(nLoops,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nloc, ValueRange) {
            SmallVector<Value> idx;
            for (int64_t i : {0, 2, 1})
              idx.push_back(linalg::IndexOp::create(nb, nloc, i));
            for (int64_t j = 0; j < s; ++j)
              idx.push_back(arith::SubIOp::create(
                  nb, nloc,
                  arith::ConstantIndexOp::create(nb, nloc, ws[2 + j] - 1),
                  linalg::IndexOp::create(nb, nloc, 3 + j)));
            linalg::YieldOp::create(
                nb, nloc,
                tensor::ExtractOp::create(nb, nloc, w5, idx).getResult());
          })
          .getResult(0);
  SmallVector<int64_t> result = {groups * cout, cin / groups};
  result.append(ws.begin() + 2, ws.end());
  return reshapeTensor(b, loc, flipped, result);
}

/// im2col of a float tensor as a copy of windows: the input zero-padded, then
/// one linalg.generic over (N, C, KH, KW, OH, OW) reading the padded input at
/// (n, c, oh * stride + kh * dilation, ow * stride + kw * dilation), an affine
/// map without bounds checks, so that the copy along OW is a strided (at
/// stride 1 a contiguous) run that LLVM vectorizes; the (N, C*KH*KW, OH*OW)
/// result is that tensor collapsed. (The gather form, with a bounds check and
/// a division per element, was 10% of a ResNet-18 training step: its kernel
/// gradients' columns.) Integer tensors keep the gather (DataMovement.cpp).
struct Im2colWindowsLowering : public OpConversionPattern<Im2colOp> {
  Im2colWindowsLowering(MLIRContext *ctx)
      : OpConversionPattern(ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(Im2colOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto inTy = getTensorType(x);
    Type elem = inTy.getElementType();
    if (!isa<FloatType>(elem) || !inTy.hasStaticShape() ||
        op.getType().getNumElements() == 0)
      return failure();
    bool batched = inTy.getRank() == 4;
    if (!batched)
      x = reshapeTensor(
          rewriter, loc, x,
          {1, inTy.getDimSize(0), inTy.getDimSize(1), inTy.getDimSize(2)});
    ArrayRef<int64_t> shape = getTensorType(x).getShape();
    auto k = op.getKernelSize(), dil = op.getDilation(), pad = op.getPadding(),
         st = op.getStride();
    int64_t oh = (shape[2] + 2 * pad[0] - dil[0] * (k[0] - 1) - 1) / st[0] + 1;
    int64_t ow = (shape[3] + 2 * pad[1] - dil[1] * (k[1] - 1) - 1) / st[1] + 1;
    Value zero = createScalar(rewriter, loc, elem, 0.0);
    x = padTrailing(rewriter, loc, x, {pad[0], pad[1]}, {pad[0], pad[1]}, zero);
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr n, c, kh, kw, y, w;
    bindDims(ctx, n, c, kh, kw, y, w);
    AffineMap read = AffineMap::get(
        6, 0, {n, c, y * st[0] + kh * dil[0], w * st[1] + kw * dil[1]}, ctx);
    SmallVector<int64_t> windows = {shape[0], shape[1], k[0], k[1], oh, ow};
    auto winTy = RankedTensorType::get(windows, elem);
    Value init = createEmpty(rewriter, loc, winTy);
    auto copy = linalg::GenericOp::create(
        rewriter, loc, TypeRange{winTy}, ValueRange{x}, ValueRange{init},
        ArrayRef<AffineMap>{read, rewriter.getMultiDimIdentityMap(6)},
        SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, copy.getResult(0),
                                         op.getType().getShape()));
    return success();
  }
};

struct ConvolutionLowering : public OpConversionPattern<ConvolutionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvolutionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Type elem = resTy.getElementType();
    auto inTy = getTensorType(adaptor.getInput());
    int64_t spatial = inTy.getRank() - 2;
    if (spatial < 1 || spatial > 3)
      return op.emitOpError("only 1-D, 2-D and 3-D convolutions are "
                            "supported; got input rank ")
             << inTy.getRank();
    if (!(isa<FloatType>(elem) ||
          (isa<IntegerType>(elem) && cast<IntegerType>(elem).isSignless() &&
           !elem.isInteger(1))))
      return op.emitOpError("convolution of element type ")
             << elem << " is not supported; use a float or signed integer";
    auto stride = perDim(op.getStride(), spatial, 1);
    auto dilation = perDim(op.getDilation(), spatial, 1);
    auto padding = perDim(op.getPadding(), spatial, 0);
    int64_t groups = op.getGroups();
    Type acc = getComputeType(elem);
    // Regular 1-D and 2-D convolutions (channels-last or im2col) read f16/bf16
    // operands as they are: their contraction extends them into the f32
    // accumulator (bf16 ones run on AVX512-BF16 dot products where the host
    // has them). The others compute on f32 copies.
    Type operandElem =
        !op.getTransposed() && groups == 1 && spatial <= 2 ? elem : acc;
    Value input = castTensor(rewriter, loc, adaptor.getInput(), operandElem);
    Value weight = castTensor(rewriter, loc, adaptor.getWeight(), operandElem);
    ArrayRef<int64_t> ks = getTensorType(weight).getShape().drop_front(2);
    Value zero = createScalar(rewriter, loc, operandElem, 0.0);
    if (op.getTransposed()) {
      auto outPad = perDim(op.getOutputPadding().value_or(ArrayRef<int64_t>{}),
                           spatial, 0);
      SmallVector<int64_t> lo, hi;
      for (int64_t j = 0; j < spatial; ++j) {
        lo.push_back(dilation[j] * (ks[j] - 1) - padding[j]);
        hi.push_back(lo.back() + outPad[j]);
      }
      weight = transposedConvWeight(rewriter, loc, weight, groups);
      input = padTrailing(rewriter, loc, input, lo, hi, zero, stride);
      stride.assign(spatial, 1);
    } else {
      if (op.isChannelsLastDirect()) {
        Value bias = adaptor.getBias()
                         ? castTensor(rewriter, loc, adaptor.getBias(), acc)
                         : Value();
        Value r =
            directNhwcConvolution(rewriter, loc, input, padding, weight, bias,
                                  stride, dilation, resTy.clone(acc));
        rewriter.replaceOp(op, castTensor(rewriter, loc, r, elem));
        return success();
      }
      ArrayRef<int64_t> wS = getTensorType(weight).getShape();
      ArrayRef<int64_t> inS = getTensorType(input).getShape();
      if (spatial == 2 && groups > 1 && groups == wS[0] && wS[1] == 1 &&
          inS[1] == groups && groups % 8 == 0 &&
          ShapedType::getNumElements(ks) <= kMaxChannelsLastTaps &&
          resTy.getNumElements() > 0 && isa<FloatType>(acc) &&
          getTensorType(input).hasStaticShape()) {
        // Depthwise, channels-last: the channels are the vector, whatever
        // the image width (7 to 112 in MobileNetV2).
        Value bias = adaptor.getBias()
                         ? castTensor(rewriter, loc, adaptor.getBias(), acc)
                         : Value();
        Value r = depthwiseConvolution(
            rewriter, loc, channelsLastPadded(rewriter, loc, input, padding),
            weight, bias, resTy.clone(acc), stride, dilation,
            /*channelsLast=*/true);
        rewriter.replaceOp(op, castTensor(rewriter, loc, r, elem));
        return success();
      }
      input = padTrailing(rewriter, loc, input, padding, padding, zero);
    }
    int64_t o = getTensorType(weight).getShape()[0];
    if (o % groups != 0)
      return op.emitOpError("output channels ")
             << o << " are not divisible by groups " << groups;

    auto accTy = resTy.clone(acc);
    // The 1-D and 2-D kernels below run on 2-D views: a 1-D convolution is a
    // 2-D one of height 1.
    auto as4d = [&](Value v) {
      ArrayRef<int64_t> s = getTensorType(v).getShape();
      return spatial == 2
                 ? v
                 : reshapeTensor(rewriter, loc, v, {s[0], s[1], 1, s[2]});
    };
    SmallVector<int64_t> stride2 = stride, dilation2 = dilation;
    if (spatial == 1) {
      stride2.insert(stride2.begin(), 1);
      dilation2.insert(dilation2.begin(), 1);
    }
    Value bias = adaptor.getBias()
                     ? castTensor(rewriter, loc, adaptor.getBias(), acc)
                     : Value();
    // The result of a kernel on the 2-D view, back in the op's shape.
    SmallVector<int64_t> shape4(accTy.getShape());
    if (spatial == 1)
      shape4.insert(shape4.begin() + 2, 1);
    auto acc4Ty = RankedTensorType::get(shape4, acc);
    auto replaceWith4d = [&](Value r) {
      r = reshapeTensor(rewriter, loc, r, accTy.getShape());
      rewriter.replaceOp(op, castTensor(rewriter, loc, r, elem));
      return success();
    };
    // Regular 1-D and 2-D convolutions are matmuls over im2col.
    if (groups == 1 && spatial <= 2 && resTy.getNumElements() > 0 &&
        getTensorType(input).getNumElements() > 0)
      return replaceWith4d(im2colConvolution(rewriter, loc, as4d(input),
                                             as4d(weight), bias, stride2,
                                             dilation2, acc4Ty));
    ArrayRef<int64_t> wShape = getTensorType(weight).getShape();
    if (groups > 1 && groups == o && wShape[1] == 1 && spatial <= 2 &&
        getTensorType(input).getShape()[1] == groups &&
        ShapedType::getNumElements(ks) <= kMaxWindowTaps &&
        resTy.getNumElements() > 0)
      // Depthwise, as an elementwise op over the output.
      return replaceWith4d(depthwiseConvolution(rewriter, loc, as4d(input),
                                                as4d(weight), bias, acc4Ty,
                                                stride2, dilation2,
                                                /*channelsLast=*/false));
    SmallVector<int64_t> dims = {0};
    for (int64_t j = 0; j < spatial; ++j)
      dims.push_back(2 + j);
    Value init = accumulatorInit(rewriter, loc, bias,
                                 createEmpty(rewriter, loc, accTy), dims);
    Value result =
        convolve(rewriter, loc, input, weight, init, stride, dilation, groups);
    rewriter.replaceOp(op, castTensor(rewriter, loc, result, elem));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateConvolutionPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvolutionLowering, Im2colWindowsLowering>(
      patterns.getContext());
}
