//===- Pooling.cpp - pools to linalg --------------------------------------===//
//
// Every pool is one windowed reduction (a linalg.generic over the
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

using namespace mlir;
using namespace mlir::poptorch;

namespace {

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

void mlir::poptorch::populatePoolingPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering<MaxPool2dOp>, MaxPoolLowering<MaxPool3dOp>,
               MaxPoolLowering<AdaptiveMaxPool2dOp>,
               MaxPoolLowering<AdaptiveMaxPool3dOp>,
               AvgPoolLowering<AvgPool2dOp>, AvgPoolLowering<AvgPool3dOp>,
               AdaptiveAvgPoolLowering<AdaptiveAvgPool2dOp>,
               AdaptiveAvgPoolLowering<AdaptiveAvgPool3dOp>>(
      patterns.getContext());
}
