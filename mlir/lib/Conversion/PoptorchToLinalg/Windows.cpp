//===- Windows.cpp - padding and window taps of convolutions and pools ----===//
//
// The helpers that Convolution.cpp and Pooling.cpp share (declared in
// Patterns.h): per-dim attribute lists, constant padding of trailing dims,
// and the strided taps of a window.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::poptorch;

SmallVector<OpFoldResult> mlir::poptorch::indexAttrs(OpBuilder &b,
                                                     ArrayRef<int64_t> v) {
  return getAsIndexOpFoldResult(b.getContext(), v);
}

SmallVector<int64_t> mlir::poptorch::perDim(ArrayRef<int64_t> v, int64_t n,
                                            int64_t dflt) {
  if (v.empty())
    return SmallVector<int64_t>(n, dflt);
  if (v.size() == 1)
    return SmallVector<int64_t>(n, v[0]);
  return SmallVector<int64_t>(v);
}

Value mlir::poptorch::padTrailing(OpBuilder &b, Location loc, Value x,
                                  ArrayRef<int64_t> lo, ArrayRef<int64_t> hi,
                                  Value fill, ArrayRef<int64_t> interior) {
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

SmallVector<Value> mlir::poptorch::windowTaps(OpBuilder &b, Location loc,
                                              Value input,
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
          indexAttrs(b, {0, 0, i * dilation[0], j * dilation[1]}),
          indexAttrs(b, out), indexAttrs(b, {1, 1, stride[0], stride[1]})));
  return taps;
}
