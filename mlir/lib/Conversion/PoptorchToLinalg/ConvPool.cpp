//===- ConvPool.cpp - convolution and pooling to linalg ------------------===//
//
// Convolution (1-, 2-, 3-D, grouped, dilated, strided, transposed):
//  * a transposed convolution becomes a regular one on the input with
//    stride-1 zeros inserted between elements and padded by
//    dilation * (kernel - 1) - padding (+ output_padding at the end), with
//    the weight flipped and its in/out channels swapped per group;
//  * a 2-D convolution that ConvolutionOp::isChannelsLastDirect accepts
//    runs as linalg.conv_2d_nhwc_hwcf on a channels-last, zero-padded copy
//    of its input (directNhwcConvolution);
//  * any other regular 1-D or 2-D convolution (groups 1) is a matmul over
//    im2col columns (im2colConvolution); 1-D is 2-D with a unit height;
//  * the input is padded, a depthwise 2-D convolution is an elementwise
//    generic, other grouped 2-D ones use conv_2d_ngchw_gfchw, 3-D a grouped
//    linalg.generic; all accumulate into the broadcast bias, in f32 for
//    f16/bf16 (as PyTorch's CPU kernels). The channels-last and im2col ones
//    read f16/bf16 operands as they are, the others f32 copies.
//
// Pooling: every pool is one windowed reduction (a linalg.generic over the
// leading dims, the output positions and the window offsets) over the input
// padded so that every window fits. Window j of a regular pool starts at
// o * stride - padding and steps by dilation; an adaptive window is
// [floor(o * in / out), ceil((o + 1) * in / out)). Window elements outside
// the input (padding, ceil_mode overhang, the tail of a shorter adaptive
// window) are masked in the body. Max pools also yield the flat index of the
// maximum in its input plane, chosen as PyTorch does (first maximum; NaN
// wins). Average pools divide by PyTorch's divisor (count_include_pad,
// ceil_mode, divisor_override), a constant table over the output positions.
// 2-D max pools whose indices are unused and 2-D f32/f64 average pools are
// instead an elementwise op over the strided windows of each kernel offset
// (pool2d; as depthwise convolutions), or for windows of more than 49
// elements linalg.pooling_nchw_max/sum, which the tiling pass splits into
// 1-D ops.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

/// Static offsets, sizes or strides for tensor slices.
static SmallVector<OpFoldResult> idx(OpBuilder &b, ArrayRef<int64_t> v) {
  return getAsIndexOpFoldResult(b.getContext(), v);
}

/// `v` with one entry per spatial dim (`v` has one entry, or none: `dflt`).
static SmallVector<int64_t> perDim(ArrayRef<int64_t> v, int64_t n,
                                   int64_t dflt) {
  if (v.empty())
    return SmallVector<int64_t>(n, dflt);
  if (v.size() == 1)
    return SmallVector<int64_t>(n, v[0]);
  return SmallVector<int64_t>(v);
}

/// Pads the trailing `lo.size()` dims of `x` by `lo` / `hi` elements of
/// `fill`; negative amounts crop. `interior[i] > 1` puts interior[i] - 1
/// fill elements between neighbours (the input of a transposed convolution).
static Value padTrailing(OpBuilder &b, Location loc, Value x,
                         ArrayRef<int64_t> lo, ArrayRef<int64_t> hi, Value fill,
                         ArrayRef<int64_t> interior = {}) {
  auto ty = getTensorType(x);
  int64_t rank = ty.getRank(), first = rank - (int64_t)lo.size();
  auto isZero = [](int64_t v) { return v == 0; };
  auto isOne = [](int64_t v) { return v == 1; };
  if (llvm::all_of(lo, isZero) && llvm::all_of(hi, isZero) &&
      llvm::all_of(interior, isOne))
    return x;
  bool simple = llvm::all_of(interior, isOne) &&
                llvm::none_of(lo, [](int64_t v) { return v < 0; }) &&
                llvm::none_of(hi, [](int64_t v) { return v < 0; });
  SmallVector<int64_t> shape(ty.getShape());
  // LLVM cannot legalize some vector ops on 16-bit floats: those keep
  // tensor.pad.
  Type elem = ty.getElementType();
  bool vectorFriendly = elem.isF32() || elem.isF64() ||
                        (elem.isInteger() && elem.getIntOrFloatBitWidth() >= 8);
  if (simple && !vectorFriendly) {
    SmallVector<OpFoldResult> loF(rank, b.getIndexAttr(0)),
        hiF(rank, b.getIndexAttr(0));
    for (size_t i = 0; i < lo.size(); ++i) {
      loF[first + i] = b.getIndexAttr(lo[i]);
      hiF[first + i] = b.getIndexAttr(hi[i]);
      shape[first + i] += lo[i] + hi[i];
    }
    return tensor::PadOp::create(b, loc, ty.clone(shape), x, loF, hiF, fill);
  }
  if (simple) {
    // A filled tensor with `x` copied into its interior: linalg ops that the
    // codegen strategy vectorizes (tensor.pad would bufferize into a scalar
    // fill loop and a strided memref.copy, an element-by-element runtime
    // call).
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        ones(rank, b.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(b.getIndexAttr(ty.getShape()[d]));
    for (size_t i = 0; i < lo.size(); ++i) {
      offsets[first + i] = b.getIndexAttr(lo[i]);
      shape[first + i] += lo[i] + hi[i];
    }
    Value dest = createFilled(b, loc, ty.clone(shape), fill);
    Value interior =
        tensor::ExtractSliceOp::create(b, loc, ty, dest, offsets, sizes, ones);
    Value copied = linalg::CopyOp::create(b, loc, x, interior).getResult(0);
    return tensor::InsertSliceOp::create(b, loc, copied, dest, offsets, sizes,
                                         ones);
  }
  // Insert the (strided) input into a filled tensor, then crop.
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(ty.getShape()[d]));
  bool crop = false;
  for (size_t i = 0; i < lo.size(); ++i) {
    int64_t d = first + i, s = interior.empty() ? 1 : interior[i];
    int64_t len = ty.getShape()[d] == 0 ? 0 : (ty.getShape()[d] - 1) * s + 1;
    shape[d] = len + std::max<int64_t>(lo[i], 0) + std::max<int64_t>(hi[i], 0);
    offsets[d] = b.getIndexAttr(std::max<int64_t>(lo[i], 0));
    strides[d] = b.getIndexAttr(s);
    crop |= lo[i] < 0 || hi[i] < 0;
  }
  Value dest = createFilled(b, loc, ty.clone(shape), fill);
  Value result =
      tensor::InsertSliceOp::create(b, loc, x, dest, offsets, sizes, strides);
  if (!crop)
    return result;
  SmallVector<OpFoldResult> cropOffsets(rank, b.getIndexAttr(0)), cropSizes,
      ones(rank, b.getIndexAttr(1));
  SmallVector<int64_t> cropShape(shape);
  for (size_t i = 0; i < lo.size(); ++i) {
    int64_t d = first + i;
    int64_t l = std::max<int64_t>(-lo[i], 0), h = std::max<int64_t>(-hi[i], 0);
    cropOffsets[d] = b.getIndexAttr(l);
    cropShape[d] = shape[d] - l - h;
  }
  for (int64_t s : cropShape)
    cropSizes.push_back(b.getIndexAttr(s));
  return tensor::ExtractSliceOp::create(b, loc, ty.clone(cropShape), result,
                                        cropOffsets, cropSizes, ones);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

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
/// 1, 1) and an optional `bias` (F): a matmul per image, weight (F, C) x
/// image (C, H*W) -> (F, H*W), written in place into the (N, F, H*W)
/// result, which is already (N, F, H, W): no im2col copy of the input and
/// no transpose of the result (at batch 8 both copied every activation of
/// MobileNetV2's pointwise convolutions). A loop over the images, not one
/// contraction over (n, f, p, c): the register-blocked matmul kernel of
/// poptorch-tile-and-vectorize wants the matmul alone.
static Value pointwiseConvolution(OpBuilder &b, Location loc, Value input,
                                  Value weight, Value bias,
                                  RankedTensorType accTy) {
  ArrayRef<int64_t> out = accTy.getShape();
  int64_t n = out[0], f = out[1], p = out[2] * out[3];
  int64_t c = getTensorType(input).getShape()[1];
  Type elem = accTy.getElementType();
  Value w = reshapeTensor(b, loc, weight, {f, c});
  auto imageTy =
      RankedTensorType::get({c, p}, getTensorType(input).getElementType());
  auto planeTy = RankedTensorType::get({f, p}, elem);
  // weight x `image` + bias, computed into `plane`.
  auto matmul = [&](OpBuilder &b, Location loc, Value image, Value plane) {
    Value init = accumulatorInit(b, loc, bias, plane, {1});
    return linalg::MatmulOp::create(b, loc, TypeRange{planeTy},
                                    ValueRange{w, image}, ValueRange{init})
        .getResult(0);
  };
  if (n == 1)
    return reshapeTensor(b, loc,
                         matmul(b, loc, reshapeTensor(b, loc, input, {c, p}),
                                createEmpty(b, loc, planeTy)),
                         out);
  Value x = reshapeTensor(b, loc, input, {n, c, p});
  Value lb = arith::ConstantIndexOp::create(b, loc, 0),
        ub = arith::ConstantIndexOp::create(b, loc, n),
        one = arith::ConstantIndexOp::create(b, loc, 1);
  Value result =
      scf::ForOp::create(
          b, loc, lb, ub, one,
          ValueRange{
              createEmpty(b, loc, RankedTensorType::get({n, f, p}, elem))},
          [&](OpBuilder &b, Location loc, Value i, ValueRange iter) {
            SmallVector<OpFoldResult> off = {i, b.getIndexAttr(0),
                                             b.getIndexAttr(0)};
            SmallVector<OpFoldResult> ones = idx(b, {1, 1, 1});
            Value image = tensor::ExtractSliceOp::create(
                b, loc, imageTy, x, off, idx(b, {1, c, p}), ones);
            Value plane = tensor::ExtractSliceOp::create(
                b, loc, planeTy, iter[0], off, idx(b, {1, f, p}), ones);
            Value mm = matmul(b, loc, image, plane);
            scf::YieldOp::create(
                b, loc,
                tensor::InsertSliceOp::create(b, loc, mm, iter[0], off,
                                              idx(b, {1, f, p}), ones)
                    .getResult());
          })
          .getResult(0);
  return reshapeTensor(b, loc, result, out);
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
        b, loc, winTy, input, winOff, idx(b, {n, c, oh, ow}),
        idx(b, {1, 1, stride[0], stride[1]}));
    SmallVector<OpFoldResult> off = {b.getIndexAttr(0), i, j,
                                     b.getIndexAttr(0)},
                              sz = idx(b, {c, 1, 1, np}),
                              ones = idx(b, {1, 1, 1, 1});
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
    SmallVector<OpFoldResult> off = idx(b, {0, 0, 0, np}),
                              sz = idx(b, {c, kh, kw, cols - np}),
                              ones = idx(b, {1, 1, 1, 1});
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
        b, loc, RankedTensorType::get({f, np}, elem), mm, idx(b, {0, 0}),
        idx(b, {f, np}), idx(b, {1, 1}));
  if (n == 1)
    return reshapeTensor(b, loc, mm, {1, f, oh, ow});
  Value perImage = reshapeTensor(b, loc, mm, {f, n, oh, ow});
  return linalg::TransposeOp::create(b, loc, perImage,
                                     createEmpty(b, loc, accTy),
                                     ArrayRef<int64_t>{1, 0, 2, 3})
      ->getResult(0);
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
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> inS = getTensorType(input).getShape();
  // The channels-last copy keeps the input's type (f16/bf16 too); the
  // convolution extends it into the f32 accumulator.
  Type elem = getTensorType(input).getElementType();
  int64_t n = inS[0], c = inS[1], h = inS[2], w = inS[3];
  int64_t f = accTy.getShape()[1], oh = accTy.getShape()[2],
          ow = accTy.getShape()[3];
  // The layout change is an elementwise generic writing straight into the
  // interior of the padded tensor, so that poptorch-fuse-elementwise merges
  // the op producing the input (a batch norm and activation) into it.
  auto paddedTy = RankedTensorType::get(
      {n, h + 2 * padding[0], w + 2 * padding[1], c}, elem);
  auto interiorTy = RankedTensorType::get({n, h, w, c}, elem);
  bool padded = padding[0] > 0 || padding[1] > 0;
  Value dest =
      padded ? createFilled(b, loc, paddedTy, createScalar(b, loc, elem, 0.0))
             : createEmpty(b, loc, paddedTy);
  SmallVector<OpFoldResult> off = idx(b, {0, padding[0], padding[1], 0}),
                            sz = idx(b, {n, h, w, c}),
                            ones = idx(b, {1, 1, 1, 1});
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

  auto back = weight.getDefiningOp<linalg::TransposeOp>();
  Value hwcf = back && back.getPermutation() == ArrayRef<int64_t>{3, 2, 0, 1}
                   ? Value(back.getInput())
                   : transposeTensor(b, loc, weight, {2, 3, 1, 0});
  auto outTy = RankedTensorType::get({n, oh, ow, f}, accTy.getElementType());
  Value init =
      accumulatorInit(b, loc, bias, createEmpty(b, loc, outTy), {0, 1, 2});
  Value r = linalg::Conv2DNhwcHwcfOp::create(
                b, loc, TypeRange{outTy}, ValueRange{x, hwcf}, ValueRange{init},
                b.getI64TensorAttr(stride), b.getI64TensorAttr(dilation))
                .getResult(0);
  return transposeTensor(b, loc, r, {0, 3, 1, 2});
}

/// Depthwise convolutions and 2-D pools with at most this many window
/// elements (ConvNeXt's 7x7) are elementwise ops over their windowTaps;
/// larger windows are named ops, split into 1-D ones by the tiling. The 7x7
/// depthwise convolutions of ConvNeXt-tiny as 1-D convolutions cost it
/// 20-25% of its time (Zen 3: 99.6 -> 80.0 ms at batch 1, 812 -> 622 ms at
/// batch 8, with 25 here).
static constexpr int64_t kMaxWindowTaps = 49;

/// The KH*KW windows that an (N, C, OH, OW) output reads from an already
/// padded (N, C, Hp, Wp) `input`, row-major over the kernel offsets: tap
/// (i, j) is the strided slice of the element at offset (i, j) of every
/// output pixel's window. An elementwise op over the taps vectorizes along
/// the output width (a strided read is one load and a shuffle), where a
/// named windowed op with a stride is tiled into scalar 1-D ops.
static SmallVector<Value> windowTaps(OpBuilder &b, Location loc, Value input,
                                     ArrayRef<int64_t> out,
                                     ArrayRef<int64_t> kernel,
                                     ArrayRef<int64_t> stride,
                                     ArrayRef<int64_t> dilation) {
  auto tapTy =
      RankedTensorType::get(out, getTensorType(input).getElementType());
  SmallVector<Value> taps;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j)
      taps.push_back(tensor::ExtractSliceOp::create(
          b, loc, tapTy, input,
          idx(b, {0, 0, i * dilation[0], j * dilation[1]}), idx(b, out),
          idx(b, {1, 1, stride[0], stride[1]})));
  return taps;
}

/// A depthwise 2-D convolution (groups = input = output channels) of an
/// already padded input (N, C, Hp, Wp) with weight (C, 1, KH, KW) and an
/// optional per-channel `bias` (C) into a new tensor of type `outTy` (N, C,
/// OH, OW): one elementwise linalg.generic over the output whose operands
/// are the KH*KW strided input windows (one per kernel offset), the KH*KW
/// per-channel weights and the bias. Every map is a projected permutation,
/// so the op vectorizes along the output width like any elementwise op, and
/// the following batch norm and activation fuse into it. Its init is never
/// read: a zero-filled init that the sum started from made the fused op keep
/// the convolution's own result too (a fill, a copy and a dead store of the
/// whole activation per call).
static Value depthwiseConvolution(OpBuilder &b, Location loc, Value input,
                                  Value weight, Value bias,
                                  RankedTensorType outTy,
                                  ArrayRef<int64_t> stride,
                                  ArrayRef<int64_t> dilation) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> wS = getTensorType(weight).getShape();
  Type elem = outTy.getElementType();
  int64_t c = outTy.getShape()[1];
  SmallVector<Value> windows = windowTaps(b, loc, input, outTy.getShape(),
                                          wS.drop_front(2), stride, dilation);
  SmallVector<Value> weights;
  for (int64_t i = 0; i < wS[2]; ++i)
    for (int64_t j = 0; j < wS[3]; ++j)
      weights.push_back(tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get({c}, elem), weight,
          idx(b, {0, 0, i, j}), idx(b, {c, 1, 1, 1}), idx(b, {1, 1, 1, 1})));
  AffineMap identity = b.getMultiDimIdentityMap(4);
  AffineMap channel = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
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
  return linalg::GenericOp::create(
             b, loc, TypeRange{outTy}, ins,
             ValueRange{createEmpty(b, loc, outTy)}, maps,
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value acc = bias ? args[2 * taps] : Value();
               for (int64_t t = 0; t < taps; ++t)
                 acc = multiplyAdd(nb, nloc, args[t], args[taps + t], acc);
               linalg::YieldOp::create(nb, nloc, acc);
             })
      .getResult(0);
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
                                                stride2, dilation2));
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

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// One spatial dim of a pool: the input and output sizes, and either a
/// regular window (kernel, stride, padding, dilation) or an adaptive one.
struct Window {
  int64_t in, out;
  int64_t kernel = 1, stride = 1, pad = 0, dilation = 1;
  bool adaptive = false;

  /// Start of window `o` in unpadded input coordinates.
  int64_t start(int64_t o) const {
    return adaptive ? (o * in) / out : o * stride - pad;
  }
  /// One past the last input position window `o` may read.
  int64_t end(int64_t o) const {
    return adaptive ? ((o + 1) * in + out - 1) / out
                    : start(o) + dilation * (kernel - 1) + 1;
  }
  /// Adaptive windows: the longest one.
  static int64_t adaptiveKernel(int64_t in, int64_t out) {
    Window w{in, out};
    w.adaptive = true;
    int64_t k = 1;
    for (int64_t o = 0; o < out; ++o)
      k = std::max(k, w.end(o) - w.start(o));
    return k;
  }
};

enum class PoolKind { Max, Sum };

/// One step of a max pool as PyTorch's kernels take it: `x` replaces the
/// running maximum `acc` when x > acc or x is NaN (the first maximum, the last
/// NaN) or, with indices, when no element was taken yet (`at` < 0); never
/// where `valid` is false (null: always valid). Returns the new maximum and,
/// with indices (`at` non-null), the new index: `position` cast to i64.
static std::pair<Value, Value> takeMax(OpBuilder &b, Location loc, Value x,
                                       Value acc, Value at, Value position,
                                       Value valid) {
  Value take;
  if (isa<FloatType>(x.getType()))
    take = arith::OrIOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, acc),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x));
  else
    take = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, acc);
  Type i64 = b.getI64Type();
  if (at)
    take = arith::OrIOp::create(
        b, loc, take,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at,
                              createScalar(b, loc, i64, 0)));
  if (valid)
    take = arith::AndIOp::create(b, loc, take, valid);
  Value max = arith::SelectOp::create(b, loc, take, x, acc);
  if (!at)
    return {max, Value()};
  return {max, arith::SelectOp::create(
                   b, loc, take,
                   arith::IndexCastOp::create(b, loc, i64, position), at)};
}

/// The windowed reduction described in the file header. `input` is
/// (lead..., spatial...) with one Window per spatial dim; the result is
/// (lead..., out...) in `accElem` (Sum) or the input's type (Max, with the
/// i64 indices when `withIndices`).
static SmallVector<Value> windowReduce(OpBuilder &b, Location loc, Value input,
                                       ArrayRef<Window> wins, PoolKind kind,
                                       bool withIndices, Type accElem) {
  MLIRContext *ctx = b.getContext();
  auto inTy = getTensorType(input);
  Type elem = inTy.getElementType();
  int64_t rank = inTy.getRank(), s = wins.size(), lead = rank - s;
  int64_t nLoops = lead + 2 * s;

  SmallVector<int64_t> lo, hi, outShape(inTy.getShape().take_front(lead));
  SmallVector<bool> masked;
  for (const Window &w : wins) {
    int64_t l = w.adaptive ? 0 : w.pad;
    int64_t last = w.out > 0 ? w.start(w.out - 1) + l : 0;
    int64_t span = w.adaptive ? w.kernel : w.dilation * (w.kernel - 1) + 1;
    int64_t h = std::max<int64_t>(0, last + span - (w.in + l));
    lo.push_back(l);
    hi.push_back(h);
    masked.push_back(w.adaptive ? w.in % w.out != 0 : (l > 0 || h > 0));
    outShape.push_back(w.out);
  }
  Value padded =
      padTrailing(b, loc, input, lo, hi, createScalar(b, loc, elem, 0.0));

  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inE, outE;
  for (int64_t i = 0; i < lead; ++i) {
    inE.push_back(d(i));
    outE.push_back(d(i));
  }
  for (int64_t j = 0; j < s; ++j) {
    const Window &w = wins[j];
    AffineExpr o = d(lead + j), k = d(lead + s + j);
    inE.push_back(w.adaptive ? (o * w.in).floorDiv(w.out) + k
                             : o * w.stride + k * w.dilation);
    outE.push_back(o);
  }
  // The window operand (never read) gives the window loops their ranges.
  SmallVector<AffineExpr> winE;
  SmallVector<int64_t> winShape;
  for (int64_t j = 0; j < s; ++j) {
    winE.push_back(d(lead + s + j));
    winShape.push_back(wins[j].kernel);
  }
  Value window = tensor::EmptyOp::create(b, loc, winShape, elem);
  AffineMap outMap = AffineMap::get(nLoops, 0, outE, ctx);
  SmallVector<AffineMap> maps = {AffineMap::get(nLoops, 0, inE, ctx),
                                 AffineMap::get(nLoops, 0, winE, ctx), outMap};
  SmallVector<utils::IteratorType> iters(lead + s,
                                         utils::IteratorType::parallel);
  iters.append(s, utils::IteratorType::reduction);

  Type resElem = kind == PoolKind::Max ? elem : accElem;
  auto resTy = RankedTensorType::get(outShape, resElem);
  SmallVector<Value> inits = {
      createFilled(b, loc, resTy,
                   kind == PoolKind::Max ? createLowest(b, loc, elem)
                                         : createScalar(b, loc, accElem, 0.0))};
  SmallVector<Type> resTypes = {resTy};
  if (withIndices) {
    auto idxTy = RankedTensorType::get(outShape, b.getI64Type());
    inits.push_back(
        createFilled(b, loc, idxTy, createScalar(b, loc, b.getI64Type(), -1)));
    resTypes.push_back(idxTy);
    maps.push_back(outMap);
  }

  auto generic = linalg::GenericOp::create(
      b, loc, resTypes, ValueRange{padded, window}, inits, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, nloc, v).getResult();
        };
        Value valid, flat = cst(0);
        for (int64_t j = 0; j < s; ++j) {
          const Window &w = wins[j];
          Value o = linalg::IndexOp::create(nb, nloc, lead + j);
          Value k = linalg::IndexOp::create(nb, nloc, lead + s + j);
          Value p, ok;
          if (w.adaptive) {
            Value start = arith::DivUIOp::create(
                nb, nloc, arith::MulIOp::create(nb, nloc, o, cst(w.in)),
                cst(w.out));
            p = arith::AddIOp::create(nb, nloc, start, k);
            if (masked[j]) {
              Value o1 = arith::AddIOp::create(nb, nloc, o, cst(1));
              Value end = arith::DivUIOp::create(
                  nb, nloc,
                  arith::AddIOp::create(
                      nb, nloc, arith::MulIOp::create(nb, nloc, o1, cst(w.in)),
                      cst(w.out - 1)),
                  cst(w.out));
              ok = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult, p,
                                         end);
            }
          } else {
            // Padded coordinate, then the unpadded one (may be negative).
            Value pp = arith::AddIOp::create(
                nb, nloc, arith::MulIOp::create(nb, nloc, o, cst(w.stride)),
                arith::MulIOp::create(nb, nloc, k, cst(w.dilation)));
            p = arith::SubIOp::create(nb, nloc, pp, cst(w.pad));
            if (masked[j]) {
              Value ge = arith::CmpIOp::create(
                  nb, nloc, arith::CmpIPredicate::sge, p, cst(0));
              Value lt = arith::CmpIOp::create(
                  nb, nloc, arith::CmpIPredicate::slt, p, cst(w.in));
              ok = arith::AndIOp::create(nb, nloc, ge, lt);
            }
          }
          if (ok)
            valid = valid ? arith::AndIOp::create(nb, nloc, valid, ok) : ok;
          flat = arith::AddIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, flat, cst(w.in)), p);
        }
        Value x = args[0], acc = args[2];
        if (kind == PoolKind::Sum) {
          Value xe = convertScalar(nb, nloc, x, accElem, false, false);
          if (valid)
            xe = arith::SelectOp::create(nb, nloc, valid, xe,
                                         createScalar(nb, nloc, accElem, 0.0));
          Value sum =
              isa<FloatType>(accElem)
                  ? arith::AddFOp::create(nb, nloc, acc, xe).getResult()
                  : arith::AddIOp::create(nb, nloc, acc, xe).getResult();
          linalg::YieldOp::create(nb, nloc, sum);
          return;
        }
        auto [max, at] = takeMax(nb, nloc, x, acc,
                                 withIndices ? args[3] : Value(), flat, valid);
        SmallVector<Value> yields = {max};
        if (withIndices)
          yields.push_back(at);
        linalg::YieldOp::create(nb, nloc, yields);
      });
  return SmallVector<Value>(generic.getResults());
}

/// (C, H, W) inputs are lowered as (1, C, H, W) by the named 2-D pools.
static Value toNchw(OpBuilder &b, Location loc, Value input) {
  auto inTy = getTensorType(input);
  if (inTy.getRank() == 4)
    return input;
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, inTy.getShape());
  return reshapeTensor(b, loc, input, shape);
}

static bool isPoolableElement(Type elem) {
  if (isa<FloatType>(elem))
    return true;
  auto it = dyn_cast<IntegerType>(elem);
  return it && it.isSignless() && it.getWidth() > 1;
}

static SmallVector<Window>
regularWindows(RankedTensorType inTy, RankedTensorType resTy,
               ArrayRef<int64_t> kernelAttr, ArrayRef<int64_t> strideAttr,
               ArrayRef<int64_t> paddingAttr, ArrayRef<int64_t> dilationAttr,
               int64_t s) {
  auto kernel = perDim(kernelAttr, s, 1);
  auto stride = perDim(strideAttr.empty() ? kernelAttr : strideAttr, s, 1);
  auto padding = perDim(paddingAttr, s, 0);
  auto dilation = perDim(dilationAttr, s, 1);
  int64_t first = inTy.getRank() - s;
  SmallVector<Window> wins;
  for (int64_t j = 0; j < s; ++j) {
    Window w{inTy.getShape()[first + j], resTy.getShape()[first + j]};
    w.kernel = kernel[j];
    w.stride = stride[j];
    w.pad = padding[j];
    w.dilation = dilation[j];
    wins.push_back(w);
  }
  return wins;
}

static SmallVector<Window> adaptiveWindows(RankedTensorType inTy,
                                           RankedTensorType resTy, int64_t s) {
  int64_t first = inTy.getRank() - s;
  SmallVector<Window> wins;
  for (int64_t j = 0; j < s; ++j) {
    Window w{inTy.getShape()[first + j], resTy.getShape()[first + j]};
    w.adaptive = true;
    w.kernel = w.out > 0 ? Window::adaptiveKernel(w.in, w.out) : 1;
    wins.push_back(w);
  }
  return wins;
}

/// The input of a regular 2-D pool as (N, C, Hp, Wp), padded with `padValue`
/// as far as the windows of its output (N, C, OH, OW) read.
struct PaddedPool2d {
  Value padded;
  SmallVector<int64_t> outShape, kernel, stride, dilation;
};
static PaddedPool2d padPool2d(OpBuilder &b, Location loc, Value input,
                              ArrayRef<Window> wins, Value padValue) {
  PaddedPool2d p;
  Value nchw = toNchw(b, loc, input);
  p.outShape.append(getTensorType(nchw).getShape().take_front(2).begin(),
                    getTensorType(nchw).getShape().take_front(2).end());
  SmallVector<int64_t> lo, hi;
  for (const Window &w : wins) {
    p.outShape.push_back(w.out);
    p.kernel.push_back(w.kernel);
    p.stride.push_back(w.stride);
    p.dilation.push_back(w.dilation);
    lo.push_back(w.pad);
    int64_t needed = (w.out - 1) * w.stride + w.dilation * (w.kernel - 1) + 1 -
                     (w.in + w.pad);
    hi.push_back(std::max<int64_t>(0, needed));
  }
  p.padded = padTrailing(b, loc, nchw, lo, hi, padValue);
  return p;
}

/// A regular 2-D pool (max, NaN-propagating as in PyTorch, or sum) of a
/// (C, H, W) or (N, C, H, W) `input`, padded with the lowest value or zero:
/// an elementwise op over its windowTaps (the first tap starts, the init is
/// never read), or for windows of more than kMaxWindowTaps elements
/// linalg.pooling_nchw_max/sum, which poptorch-tile-and-vectorize splits
/// into 1-D ops. The result is (N, C, OH, OW).
static Value pool2d(OpBuilder &b, Location loc, Value input,
                    ArrayRef<Window> wins, PoolKind kind) {
  Type elem = getTensorType(input).getElementType();
  bool max = kind == PoolKind::Max;
  Value padValue =
      max ? createLowest(b, loc, elem) : createScalar(b, loc, elem, 0.0);
  PaddedPool2d p = padPool2d(b, loc, input, wins, padValue);
  ArrayRef<int64_t> outShape = p.outShape, kernel = p.kernel;
  if (kernel[0] * kernel[1] <= kMaxWindowTaps)
    return createElementwiseGeneric(
        b, loc,
        windowTaps(b, loc, p.padded, outShape, kernel, p.stride, p.dilation),
        outShape, elem,
        [&](OpBuilder &nb, Location nloc, ValueRange taps) -> Value {
          Value acc = taps[0];
          for (Value x : taps.drop_front()) {
            if (!max)
              acc = arith::AddFOp::create(nb, nloc, acc, x);
            else if (isa<FloatType>(elem))
              acc = arith::MaximumFOp::create(nb, nloc, acc, x);
            else
              acc = arith::MaxSIOp::create(nb, nloc, acc, x);
          }
          return acc;
        });
  auto poolTy = RankedTensorType::get(outShape, elem);
  Value window = tensor::EmptyOp::create(b, loc, kernel, elem);
  Value init = createFilled(b, loc, poolTy, padValue);
  auto strides = getI64Elements(b, p.stride);
  auto dilations = getI64Elements(b, p.dilation);
  if (max)
    return linalg::PoolingNchwMaxOp::create(
               b, loc, TypeRange{poolTy}, ValueRange{p.padded, window},
               ValueRange{init}, strides, dilations)
        .getResult(0);
  return linalg::PoolingNchwSumOp::create(b, loc, TypeRange{poolTy},
                                          ValueRange{p.padded, window},
                                          ValueRange{init}, strides, dilations)
      .getResult(0);
}

/// A regular 2-D float max pool of at most kMaxWindowTaps window elements
/// with its indices (what training saves for the backward): like pool2d, an
/// elementwise op over the window taps, with two results, the maximum and
/// the flat input position (h * W + w) that PyTorch's kernel picks: the
/// first valid element, then any greater one or any NaN. A tap in the
/// padding is never taken (the output position comes from linalg.index).
/// It vectorizes along the output width; the reduction form
/// (windowReduce) runs one scalar at a time.
static std::pair<Value, Value> maxPool2dWithIndices(OpBuilder &b, Location loc,
                                                    Value input,
                                                    ArrayRef<Window> wins) {
  Type elem = getTensorType(input).getElementType();
  PaddedPool2d p = padPool2d(b, loc, input, wins, createLowest(b, loc, elem));
  SmallVector<Value> taps =
      windowTaps(b, loc, p.padded, p.outShape, p.kernel, p.stride, p.dilation);
  Type i64 = b.getI64Type();
  auto valTy = RankedTensorType::get(p.outShape, elem);
  auto idxTy = RankedTensorType::get(p.outShape, i64);
  SmallVector<AffineMap> maps(taps.size() + 2, b.getMultiDimIdentityMap(4));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{valTy, idxTy}, taps,
      ValueRange{createEmpty(b, loc, valTy), createEmpty(b, loc, idxTy)}, maps,
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nloc, v);
        };
        // The input coordinate of tap offset k along window `d` at output
        // position o, and whether some output reads it in the padding.
        auto coordinate = [&](int64_t d, Value o, int64_t k,
                              Value &valid) -> Value {
          const Window &w = wins[d];
          int64_t first = k * w.dilation - w.pad;
          int64_t last = (w.out - 1) * w.stride + first;
          Value c = arith::AddIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, o, cst(w.stride)),
              cst(first));
          auto require = [&](arith::CmpIPredicate pred, int64_t bound) {
            Value ok = arith::CmpIOp::create(nb, nloc, pred, c, cst(bound));
            valid = valid ? arith::AndIOp::create(nb, nloc, valid, ok) : ok;
          };
          if (first < 0)
            require(arith::CmpIPredicate::sge, 0);
          if (last >= w.in)
            require(arith::CmpIPredicate::slt, w.in);
          return c;
        };
        Value oh = linalg::IndexOp::create(nb, nloc, 2);
        Value ow = linalg::IndexOp::create(nb, nloc, 3);
        // f16/bf16 taps are compared in f32 (exactly): LLVM cannot legalize
        // a bf16 comparison on hosts whose bf16 is a native type (those with
        // AVX512-BF16).
        Type work = elem.getIntOrFloatBitWidth() < 32 ? nb.getF32Type() : elem;
        Value acc = createLowest(nb, nloc, work);
        Value at = createScalar(nb, nloc, i64, -1);
        for (int64_t i = 0, t = 0; i < p.kernel[0]; ++i)
          for (int64_t j = 0; j < p.kernel[1]; ++j, ++t) {
            Value x = args[t], valid;
            if (work != elem)
              x = arith::ExtFOp::create(nb, nloc, work, x);
            Value h = coordinate(0, oh, i, valid);
            Value w = coordinate(1, ow, j, valid);
            Value flat = arith::AddIOp::create(
                nb, nloc, arith::MulIOp::create(nb, nloc, h, cst(wins[1].in)),
                w);
            std::tie(acc, at) = takeMax(nb, nloc, x, acc, at, flat, valid);
          }
        if (work != elem)
          acc = arith::TruncFOp::create(nb, nloc, elem, acc);
        linalg::YieldOp::create(nb, nloc, ValueRange{acc, at});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// Max pools, regular and adaptive.
template <typename OpTy>
struct MaxPoolLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  static SmallVector<Window> windows(OpTy op) {
    auto inTy = getTensorType(op.getInput());
    auto resTy = getTensorType(op.getResult());
    constexpr int64_t s = OpTy::kSpatialDims;
    if constexpr (std::is_same_v<OpTy, AdaptiveMaxPool2dOp> ||
                  std::is_same_v<OpTy, AdaptiveMaxPool3dOp>)
      return adaptiveWindows(inTy, resTy, s);
    else
      return regularWindows(inTy, resTy, op.getKernelSize(), op.getStride(),
                            op.getPadding(), op.getDilation(), s);
  }

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resTy = getTensorType(op.getResult());
    Type elem = resTy.getElementType();
    if (!isPoolableElement(elem))
      return op.emitOpError("element type ")
             << elem << " is not supported; use a float or signed integer type";
    SmallVector<Window> wins = windows(op);
    if (llvm::any_of(wins, [](const Window &w) { return w.out == 0; })) {
      rewriter.replaceOp(
          op, {createEmpty(rewriter, loc, resTy),
               createEmpty(rewriter, loc, getTensorType(op.getIndices()))});
      return success();
    }
    bool regular2d = wins.size() == 2 && !wins[0].adaptive;
    if (regular2d && op.getIndices().use_empty()) {
      Value pooled =
          pool2d(rewriter, loc, adaptor.getInput(), wins, PoolKind::Max);
      rewriter.replaceOp(
          op, {reshapeTensor(rewriter, loc, pooled, resTy.getShape()),
               createEmpty(rewriter, loc, getTensorType(op.getIndices()))});
      return success();
    }
    if (regular2d && isa<FloatType>(elem) &&
        wins[0].kernel * wins[1].kernel <= kMaxWindowTaps) {
      auto [pooled, indices] =
          maxPool2dWithIndices(rewriter, loc, adaptor.getInput(), wins);
      rewriter.replaceOp(
          op, {reshapeTensor(rewriter, loc, pooled, resTy.getShape()),
               reshapeTensor(rewriter, loc, indices, resTy.getShape())});
      return success();
    }
    SmallVector<Value> r = windowReduce(rewriter, loc, adaptor.getInput(), wins,
                                        PoolKind::Max, true, elem);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Sum pooling, then the division by PyTorch's divisor per output position.
static Value averagePool(OpBuilder &b, Location loc, Value input,
                         ArrayRef<Window> wins, RankedTensorType resTy,
                         ArrayRef<double> divisors) {
  Type elem = resTy.getElementType();
  Type acc = getComputeType(elem);
  Value sum;
  bool named = wins.size() == 2 && !wins[0].adaptive && acc == elem &&
               isa<FloatType>(elem);
  if (named) {
    sum = reshapeTensor(b, loc, pool2d(b, loc, input, wins, PoolKind::Sum),
                        resTy.getShape());
  } else {
    sum = windowReduce(b, loc, input, wins, PoolKind::Sum, false, acc)[0];
  }
  ArrayRef<int64_t> outShape = resTy.getShape();
  int64_t s = wins.size();
  auto divide = [&](OpBuilder &nb, Location nloc, Value x, Value dv) -> Value {
    Value q = isa<FloatType>(acc)
                  ? arith::DivFOp::create(nb, nloc, x, dv).getResult()
                  : arith::DivSIOp::create(nb, nloc, x, dv).getResult();
    return convertScalar(nb, nloc, q, elem, false, false);
  };
  bool uniform =
      llvm::all_of(divisors, [&](double d) { return d == divisors[0]; });
  if (uniform) {
    double dv = divisors.empty() ? 1.0 : divisors[0];
    return createElementwiseGeneric(
        b, loc, ValueRange{sum}, outShape, elem,
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return divide(nb, nloc, args[0], createScalar(nb, nloc, acc, dv));
        });
  }
  auto tableTy = RankedTensorType::get(outShape.take_back(s), acc);
  SmallVector<Attribute> values;
  for (double dv : divisors)
    values.push_back(isa<FloatType>(acc)
                         ? (Attribute)b.getFloatAttr(acc, dv)
                         : (Attribute)b.getIntegerAttr(acc, (int64_t)dv));
  Value table = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(tableTy, values));
  return createElementwiseGeneric(
      b, loc, ValueRange{sum, table}, outShape, elem,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return divide(nb, nloc, args[0], args[1]);
      });
}

/// Calls `fn` with each output position (row-major over the windows).
static void forEachPosition(ArrayRef<Window> wins,
                            function_ref<void(ArrayRef<int64_t>)> fn) {
  SmallVector<int64_t> pos(wins.size(), 0);
  int64_t total = 1;
  for (const Window &w : wins)
    total *= w.out;
  for (int64_t i = 0; i < total; ++i) {
    int64_t r = i;
    for (int64_t j = wins.size(); j-- > 0;) {
      pos[j] = r % wins[j].out;
      r /= wins[j].out;
    }
    fn(pos);
  }
}

template <typename OpTy>
struct AvgPoolLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resTy = getTensorType(op.getResult());
    Type elem = resTy.getElementType();
    if (!isPoolableElement(elem))
      return op.emitOpError("average pooling of element type ")
             << elem << " is not supported; use a float or signed integer";
    // (An I64Attr reads as unsigned: a negative divisor is signed.)
    std::optional<int64_t> override;
    if (std::optional<uint64_t> d = op.getDivisorOverride())
      override = static_cast<int64_t>(*d);
    if (override && *override == 0)
      return op.emitOpError("divisor_override must be non-zero");
    auto inTy = getTensorType(op.getInput());
    SmallVector<Window> wins =
        regularWindows(inTy, resTy, op.getKernelSize(), op.getStride(),
                       op.getPadding(), {}, OpTy::kSpatialDims);
    if (resTy.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmpty(rewriter, loc, resTy));
      return success();
    }
    // PyTorch's divisor: the window clipped to input + padding
    // (count_include_pad) or to the input alone.
    SmallVector<double> divisors;
    forEachPosition(wins, [&](ArrayRef<int64_t> pos) {
      if (override) {
        divisors.push_back((double)*override);
        return;
      }
      int64_t full = 1, inside = 1;
      for (auto [j, w] : llvm::enumerate(wins)) {
        int64_t start = w.start(pos[j]);
        int64_t end = std::min(start + w.kernel, w.in + w.pad);
        full *= end - start;
        inside *= std::min(end, w.in) - std::max<int64_t>(start, 0);
      }
      divisors.push_back(op.getCountIncludePad() ? full : inside);
    });
    rewriter.replaceOp(op, averagePool(rewriter, loc, adaptor.getInput(), wins,
                                       resTy, divisors));
    return success();
  }
};

template <typename OpTy>
struct AdaptiveAvgPoolLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resTy = getTensorType(op.getResult());
    Type elem = resTy.getElementType();
    if (!isa<FloatType>(elem))
      return op.emitOpError("adaptive average pooling of element type ")
             << elem << " is not supported; use a float type";
    if (resTy.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmpty(rewriter, loc, resTy));
      return success();
    }
    SmallVector<Window> wins = adaptiveWindows(getTensorType(op.getInput()),
                                               resTy, OpTy::kSpatialDims);
    // Dividing sizes: a regular pool (kernel = stride = in / out).
    if (llvm::all_of(wins, [](const Window &w) { return w.in % w.out == 0; }))
      for (Window &w : wins) {
        w.adaptive = false;
        w.kernel = w.stride = w.in / w.out;
      }
    SmallVector<double> divisors;
    forEachPosition(wins, [&](ArrayRef<int64_t> pos) {
      int64_t n = 1;
      for (auto [j, w] : llvm::enumerate(wins))
        n *= w.adaptive ? w.end(pos[j]) - w.start(pos[j]) : w.kernel;
      divisors.push_back(n);
    });
    rewriter.replaceOp(op, averagePool(rewriter, loc, adaptor.getInput(), wins,
                                       resTy, divisors));
    return success();
  }
};

} // namespace

void mlir::poptorch::populateConvPoolPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvolutionLowering, Im2colWindowsLowering,
               MaxPoolLowering<MaxPool2dOp>, MaxPoolLowering<MaxPool3dOp>,
               MaxPoolLowering<AdaptiveMaxPool2dOp>,
               MaxPoolLowering<AdaptiveMaxPool3dOp>,
               AvgPoolLowering<AvgPool2dOp>, AvgPoolLowering<AvgPool3dOp>,
               AdaptiveAvgPoolLowering<AdaptiveAvgPool2dOp>,
               AdaptiveAvgPoolLowering<AdaptiveAvgPool3dOp>>(
      patterns.getContext());
}
