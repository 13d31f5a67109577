//===- Utils.cpp - tensor and scalar builders for the linalg lowering -----===//
//
// The helpers every op family uses: constants, PyTorch's scalar conversion
// rules, empty/filled tensors, reshapes and broadcasts on static shapes.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/Patterns.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::poptorch;

bool mlir::poptorch::isUnsignedInteger(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && it.isUnsigned();
}

bool mlir::poptorch::hasUnsignedSemantics(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && (it.isUnsigned() || it.getWidth() == 1);
}

Type mlir::poptorch::toSignlessType(Type t) {
  if (auto it = dyn_cast<IntegerType>(t); it && !it.isSignless())
    return IntegerType::get(t.getContext(), it.getWidth());
  return t;
}

Type mlir::poptorch::getComputeType(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  return t;
}

Value mlir::poptorch::createScalar(OpBuilder &b, Location loc, Type type,
                                   double v) {
  TypedAttr attr;
  if (isa<FloatType>(type))
    attr = b.getFloatAttr(type, v);
  else if (type.isInteger(1))
    attr = b.getIntegerAttr(type, v != 0.0 ? 1 : 0);
  else
    attr = b.getIntegerAttr(type, static_cast<int64_t>(v));
  return arith::ConstantOp::create(b, loc, attr);
}

Value mlir::poptorch::createLowest(OpBuilder &b, Location loc, Type type,
                                   bool isUnsigned) {
  if (isa<FloatType>(type))
    return createScalar(b, loc, type, -std::numeric_limits<double>::infinity());
  auto it = cast<IntegerType>(type);
  if (it.getWidth() == 1 || isUnsigned)
    return createScalar(b, loc, type, 0);
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, APInt::getSignedMinValue(it.getWidth())));
}

Value mlir::poptorch::createHighest(OpBuilder &b, Location loc, Type type,
                                    bool isUnsigned) {
  if (isa<FloatType>(type))
    return createScalar(b, loc, type, std::numeric_limits<double>::infinity());
  unsigned w = cast<IntegerType>(type).getWidth();
  APInt v = (isUnsigned || w == 1) ? APInt::getMaxValue(w)
                                   : APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

Value mlir::poptorch::createExtremum(OpBuilder &b, Location loc, Value x,
                                     Value y, bool isMax, bool isUnsigned) {
  if (isa<FloatType>(x.getType()))
    return isMax ? (Value)arith::MaximumFOp::create(b, loc, x, y)
                 : (Value)arith::MinimumFOp::create(b, loc, x, y);
  if (x.getType().isInteger(1))
    return isMax ? (Value)arith::OrIOp::create(b, loc, x, y)
                 : (Value)arith::AndIOp::create(b, loc, x, y);
  if (isUnsigned)
    return isMax ? (Value)arith::MaxUIOp::create(b, loc, x, y)
                 : (Value)arith::MinUIOp::create(b, loc, x, y);
  return isMax ? (Value)arith::MaxSIOp::create(b, loc, x, y)
               : (Value)arith::MinSIOp::create(b, loc, x, y);
}

Value mlir::poptorch::convertScalar(OpBuilder &b, Location loc, Value v,
                                    Type dst, bool srcUnsigned,
                                    bool dstUnsigned) {
  Type src = v.getType();
  if (src == dst)
    return v;
  auto srcF = dyn_cast<FloatType>(src);
  auto dstF = dyn_cast<FloatType>(dst);
  if (srcF && dstF) {
    if (srcF.getWidth() < dstF.getWidth())
      return arith::ExtFOp::create(b, loc, dst, v);
    if (srcF.getWidth() > dstF.getWidth())
      return arith::TruncFOp::create(b, loc, dst, v);
    // f16 <-> bf16: go through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, dst, wide);
  }
  if (dst.isInteger(1)) {
    // x -> bool is x != 0 (NaN is true, as in PyTorch).
    if (srcF)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   createScalar(b, loc, src, 0.0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 createScalar(b, loc, src, 0.0));
  }
  srcUnsigned |= src.isInteger(1);
  if (dstF) {
    if (srcUnsigned)
      return arith::UIToFPOp::create(b, loc, dst, v);
    return arith::SIToFPOp::create(b, loc, dst, v);
  }
  auto dstI = cast<IntegerType>(dst);
  if (srcF) {
    // Truncation toward zero; unsigned targets wrap like a C++ cast through
    // a wide signed integer.
    if (dstUnsigned && dstI.getWidth() < 64) {
      Value wide = arith::FPToSIOp::create(b, loc, b.getI64Type(), v);
      return arith::TruncIOp::create(b, loc, dst, wide);
    }
    return arith::FPToSIOp::create(b, loc, dst, v);
  }
  auto srcI = cast<IntegerType>(src);
  if (srcI.getWidth() < dstI.getWidth()) {
    if (srcUnsigned)
      return arith::ExtUIOp::create(b, loc, dst, v);
    return arith::ExtSIOp::create(b, loc, dst, v);
  }
  if (srcI.getWidth() > dstI.getWidth())
    return arith::TruncIOp::create(b, loc, dst, v);
  return v;
}

Value mlir::poptorch::createEmpty(OpBuilder &b, Location loc,
                                  RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value mlir::poptorch::createFilled(OpBuilder &b, Location loc,
                                   RankedTensorType type, Value scalar) {
  Value empty = createEmpty(b, loc, type);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

Value mlir::poptorch::transposeTensor(OpBuilder &b, Location loc, Value v,
                                      ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  auto src = getTensorType(v);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(src.getDimSize(p));
  Value init = createEmpty(b, loc, src.clone(shape));
  return linalg::TransposeOp::create(b, loc, v, init, perm)->getResult(0);
}

static SmallVector<ReassociationIndices> allInOne(int64_t rank) {
  ReassociationIndices all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  return {all};
}

Value mlir::poptorch::reshapeTensor(OpBuilder &b, Location loc, Value v,
                                    ArrayRef<int64_t> shape) {
  auto src = getTensorType(v);
  if (src.getShape() == shape)
    return v;
  auto dst = src.clone(shape);
  if (src.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, dst, v,
                                         ArrayRef<ReassociationIndices>{});
  if (dst.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, dst, v,
                                           ArrayRef<ReassociationIndices>{});
  if (src.getRank() > dst.getRank())
    if (auto re = getReassociationIndicesForReshape(src, dst))
      return tensor::CollapseShapeOp::create(b, loc, dst, v, *re);
  if (src.getRank() < dst.getRank())
    if (auto re = getReassociationIndicesForReshape(dst, src))
      return tensor::ExpandShapeOp::create(b, loc, dst, v, *re);
  Value flat = v;
  if (src.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc, src.clone({src.getNumElements()}), v, allInOne(src.getRank()));
  if (dst.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, dst, flat,
                                       allInOne(dst.getRank()));
}

Value mlir::poptorch::broadcastTensor(OpBuilder &b, Location loc, Value v,
                                      ArrayRef<int64_t> shape) {
  auto src = getTensorType(v);
  if (src.getShape() == shape)
    return v;
  int64_t off = shape.size() - src.getRank();
  SmallVector<int64_t> keptShape;
  SmallVector<bool> kept(shape.size(), false);
  for (int64_t j = 0; j < src.getRank(); ++j) {
    int64_t s = src.getShape()[j];
    if (s == 1 && shape[off + j] != 1)
      continue;
    keptShape.push_back(s);
    kept[off + j] = true;
  }
  Value input = reshapeTensor(b, loc, v, keptShape);
  SmallVector<int64_t> added;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!kept[i])
      added.push_back(i);
  if (added.empty())
    return input;
  Value init = createEmpty(b, loc, src.clone(shape));
  return linalg::BroadcastOp::create(b, loc, input, init, added)->getResult(0);
}

AffineMap mlir::poptorch::getBroadcastMap(MLIRContext *ctx,
                                          ArrayRef<int64_t> from,
                                          ArrayRef<int64_t> to) {
  int64_t off = to.size() - from.size();
  SmallVector<AffineExpr> exprs;
  for (size_t j = 0; j < from.size(); ++j) {
    if (from[j] == 1 && to[off + j] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(off + j, ctx));
  }
  return AffineMap::get(to.size(), 0, exprs, ctx);
}

Value mlir::poptorch::scalarToSignless(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  if (!isUnsignedInteger(t))
    return v;
  return UnrealizedConversionCastOp::create(b, loc, toSignlessType(t), v)
      .getResult(0);
}

Value mlir::poptorch::scalarFromSignless(OpBuilder &b, Location loc, Value v,
                                         Type type) {
  if (v.getType() == type)
    return v;
  return UnrealizedConversionCastOp::create(b, loc, type, v).getResult(0);
}

Value mlir::poptorch::createElementwiseGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> shape,
    Type resultElem,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  MLIRContext *ctx = b.getContext();
  // A splat constant input (a Python scalar operand: x * 0.5) is a constant
  // of the body, not a tensor read per element, which the formulas and the
  // folders see.
  SmallVector<TypedAttr> splats;
  SmallVector<Value> tensors;
  SmallVector<AffineMap> maps;
  for (Value in : inputs) {
    DenseElementsAttr dense;
    Type elem = getTensorType(in).getElementType();
    if (matchPattern(in, m_Constant(&dense)) && dense.isSplat() &&
        (isa<FloatType>(elem) || elem.isSignlessInteger())) {
      splats.push_back(dense.getSplatValue<TypedAttr>());
      continue;
    }
    splats.push_back(nullptr);
    tensors.push_back(in);
    maps.push_back(getBroadcastMap(ctx, getTensorType(in).getShape(), shape));
  }
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  SmallVector<utils::IteratorType> iters(shape.size(),
                                         utils::IteratorType::parallel);
  auto resTy = RankedTensorType::get(shape, resultElem);
  Value init = createEmpty(b, loc, resTy);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resTy}, tensors, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> elems;
        unsigned next = 0;
        for (TypedAttr splat : splats)
          elems.push_back(
              splat ? arith::ConstantOp::create(nb, nloc, splat).getResult()
                    : args[next++]);
        Value r = fn(nb, nloc, elems);
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

Value mlir::poptorch::castTensor(OpBuilder &b, Location loc, Value v,
                                 Type elemType) {
  auto srcTy = getTensorType(v);
  Type srcElem = srcTy.getElementType();
  if (srcElem == elemType)
    return v;
  bool srcUnsigned = isUnsignedInteger(srcElem);
  bool dstUnsigned = isUnsignedInteger(elemType);
  Type dstSignless = toSignlessType(elemType);
  return createElementwiseGeneric(
      b, loc, ValueRange{v}, srcTy.getShape(), elemType,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value x = scalarToSignless(nb, nloc, args[0]);
        Value r =
            convertScalar(nb, nloc, x, dstSignless, srcUnsigned, dstUnsigned);
        return scalarFromSignless(nb, nloc, r, elemType);
      });
}

Value mlir::poptorch::toSignlessTensor(OpBuilder &b, Location loc, Value v) {
  Type elem = getTensorType(v).getElementType();
  if (!isUnsignedInteger(elem))
    return v;
  return castTensor(b, loc, v, toSignlessType(elem));
}

DenseIntElementsAttr mlir::poptorch::getI64Elements(OpBuilder &b,
                                                    ArrayRef<int64_t> values) {
  auto ty = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
  return DenseIntElementsAttr::get(ty, values);
}

Value mlir::poptorch::createIndexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType resTy, ValueRange inputs,
    ArrayRef<AffineMap> maps,
    function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)> fn) {
  // Nothing to compute (and zero-size index tensors need no reads).
  if (resTy.getNumElements() == 0)
    return createEmpty(b, loc, resTy);
  int64_t rank = resTy.getRank();
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init = createEmpty(b, loc, resTy);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resTy}, inputs, ValueRange{init}, allMaps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> ivs;
        for (int64_t i = 0; i < rank; ++i)
          ivs.push_back(linalg::IndexOp::create(nb, nloc, i));
        Value r = fn(nb, nloc, ivs, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

Value mlir::poptorch::indexFromElement(OpBuilder &b, Location loc, Value elem,
                                       int64_t size) {
  Type t = elem.getType();
  Value v = scalarToSignless(b, loc, elem);
  Type i64 = b.getI64Type();
  if (t.getIntOrFloatBitWidth() < 64)
    v = hasUnsignedSemantics(t) ? (Value)arith::ExtUIOp::create(b, loc, i64, v)
                                : (Value)arith::ExtSIOp::create(b, loc, i64, v);
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
  Value n = arith::ConstantIntOp::create(b, loc, i64, size);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
  v = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, v, n),
                              v);
  Value last =
      arith::ConstantIntOp::create(b, loc, i64, std::max<int64_t>(size - 1, 0));
  v = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, v, last),
                             zero);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}
