//===- DecomposeBuilder.h - builders for the poptorch-decompose patterns --===//
//
// The IR-building helpers shared by the poptorch-decompose patterns
// (Decompose.cpp, DecomposeReductions.cpp, DecomposeNnLinalg.cpp): poptorch
// ops created with the result types PyTorch would give them (broadcast
// shapes, i1 comparisons, reduced shapes), constants and casts.
//
//===----------------------------------------------------------------------===//
#ifndef POPTORCH_LIB_TRANSFORMS_DECOMPOSEBUILDER_H
#define POPTORCH_LIB_TRANSFORMS_DECOMPOSEBUILDER_H

#include "poptorch/Dialect/Poptorch/IR/Broadcast.h"
#include "poptorch/Dialect/Poptorch/IR/PoptorchDialect.h"

#include "mlir/IR/PatternMatch.h"

#include <type_traits>

namespace mlir::poptorch::decompose {

inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// f16/bf16 compute in f32 (and round once), as PyTorch's CPU kernels do.
inline Type computeElem(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  return t;
}

/// Builders of poptorch ops with the result types PyTorch would give them.
struct Ops {
  PatternRewriter &b;
  Location loc;

  //===--- constants and casts ---===//

  /// A 0-d constant; elementwise ops broadcast it like a scalar.
  Value cst(Type elem, double v) {
    auto ty = RankedTensorType::get({}, elem);
    Attribute attr;
    if (isa<FloatType>(elem))
      attr = b.getFloatAttr(elem, v);
    else if (elem.isInteger(1))
      attr = b.getIntegerAttr(elem, v != 0.0);
    else
      attr = b.getIntegerAttr(elem, static_cast<int64_t>(v));
    return ConstantOp::create(b, loc, ty, DenseElementsAttr::get(ty, attr));
  }
  /// A zero-filled tensor (a splat constant).
  Value zeros(ArrayRef<int64_t> shape, Type elem) {
    return expand(cst(elem, 0.0), shape);
  }
  /// An int64 constant of `shape` holding `values` (row-major).
  Value i64s(ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    auto ty = RankedTensorType::get(shape, b.getI64Type());
    SmallVector<APInt> v;
    for (int64_t x : values)
      v.push_back(APInt(64, x, /*isSigned=*/true));
    return ConstantOp::create(b, loc, ty, DenseElementsAttr::get(ty, v));
  }
  /// 0, 1, ..., n-1 (int64) laid out along `dim` of a rank-`rank` tensor.
  Value iota(int64_t n, int64_t dim, int64_t rank) {
    SmallVector<int64_t> shape(std::max<int64_t>(rank, 1), 1);
    shape[dim] = n;
    return i64s(shape, llvm::to_vector(llvm::seq<int64_t>(0, n)));
  }
  Value cast(Value v, Type elem) {
    auto ty = typeOf(v);
    if (ty.getElementType() == elem)
      return v;
    return CastOp::create(b, loc, ty.clone(elem), v);
  }

  //===--- data movement ---===//

  Value reshape(Value v, ArrayRef<int64_t> shape) {
    auto ty = typeOf(v);
    if (ty.getShape() == shape)
      return v;
    return ReshapeOp::create(b, loc, ty.clone(shape), v);
  }
  Value expand(Value v, ArrayRef<int64_t> shape) {
    auto ty = typeOf(v);
    if (ty.getShape() == shape)
      return v;
    return ExpandOp::create(b, loc, ty.clone(shape), v);
  }
  Value permute(Value v, ArrayRef<int64_t> perm) {
    auto ty = typeOf(v);
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(ty.getShape()[p]);
    return PermuteOp::create(b, loc, ty.clone(shape), v, perm);
  }
  Value slice(Value v, int64_t dim, int64_t start, int64_t len) {
    auto ty = typeOf(v);
    SmallVector<int64_t> shape(ty.getShape());
    if (start == 0 && len == shape[dim])
      return v;
    shape[dim] = len;
    return SliceOp::create(b, loc, ty.clone(shape), v, dim, start, 1);
  }
  Value roll(Value v, int64_t shift, int64_t dim) {
    return RollOp::create(b, loc, v.getType(), v, ArrayRef<int64_t>{shift},
                          ArrayRef<int64_t>{dim});
  }

  //===--- elementwise ---===//

  RankedTensorType bcast(Value x, Value y, Type elem) {
    return RankedTensorType::get(
        broadcastShapes(typeOf(x).getShape(), typeOf(y).getShape()), elem);
  }
  /// A binary op in x's element type (add/sub with alpha 1).
  template <typename OpTy> Value bin(Value x, Value y) {
    auto ty = bcast(x, y, typeOf(x).getElementType());
    if constexpr (std::is_same_v<OpTy, AddOp> || std::is_same_v<OpTy, SubOp>)
      return OpTy::create(b, loc, ty, x, y, llvm::APFloat(1.0));
    else
      return OpTy::create(b, loc, ty, x, y);
  }
  /// A comparison (i1 result).
  template <typename OpTy> Value cmp(Value x, Value y) {
    return OpTy::create(b, loc, bcast(x, y, b.getI1Type()), x, y);
  }
  template <typename OpTy> Value un(Value x) {
    return OpTy::create(b, loc, x.getType(), x);
  }
  Value add(Value x, Value y) { return bin<AddOp>(x, y); }
  Value sub(Value x, Value y) { return bin<SubOp>(x, y); }
  Value mul(Value x, Value y) { return bin<MulOp>(x, y); }
  Value div(Value x, Value y) { return bin<DivOp>(x, y); }
  Value max(Value x, Value y) { return bin<MaximumOp>(x, y); }
  Value min(Value x, Value y) { return bin<MinimumOp>(x, y); }
  Value andOf(Value x, Value y) { return bin<BitwiseAndOp>(x, y); }
  /// `x` plus / times a scalar `c` (in x's element type).
  Value addC(Value x, double c) {
    return add(x, cst(typeOf(x).getElementType(), c));
  }
  Value mulC(Value x, double c) {
    return mul(x, cst(typeOf(x).getElementType(), c));
  }
  Value where(Value c, Value x, Value y) {
    auto shape = broadcastShapes(
        broadcastShapes(typeOf(c).getShape(), typeOf(x).getShape()),
        typeOf(y).getShape());
    return WhereOp::create(
        b, loc, RankedTensorType::get(shape, typeOf(x).getElementType()), c, x,
        y);
  }
  Value isNaN(Value x) { return cmp<NeOp>(x, x); }
  Value notOf(Value x) { return un<LogicalNotOp>(x); }

  //===--- reductions ---===//

  /// The shape of `ty` reduced over `dims`, keeping them as size 1 or not.
  static SmallVector<int64_t>
  reducedShape(RankedTensorType ty, ArrayRef<int64_t> dims, bool keepdim) {
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < ty.getRank(); ++i) {
      if (!llvm::is_contained(dims, i))
        shape.push_back(ty.getShape()[i]);
      else if (keepdim)
        shape.push_back(1);
    }
    return shape;
  }
  /// A reduction over `dims` (none on rank 0), keeping them as size 1 or not.
  template <typename OpTy>
  Value reduce(Value x, ArrayRef<int64_t> dims, bool keepdim,
               Type elem = Type()) {
    auto ty = typeOf(x);
    SmallVector<int64_t> ds =
        ty.getRank() ? SmallVector<int64_t>(dims) : SmallVector<int64_t>{};
    auto resTy = RankedTensorType::get(reducedShape(ty, ds, keepdim),
                                       elem ? elem : ty.getElementType());
    return OpTy::create(b, loc, resTy, x, ds, keepdim);
  }
  /// The `ord`-norm over `dims` (|x| when there are none).
  Value norm(Value x, ArrayRef<int64_t> dims, double ord, bool keepdim) {
    if (dims.empty())
      return un<AbsOp>(x);
    auto ty = typeOf(x);
    return VectorNormOp::create(b, loc,
                                ty.clone(reducedShape(ty, dims, keepdim)), x,
                                dims, llvm::APFloat(ord), keepdim);
  }
  static SmallVector<int64_t> allDims(Value x) {
    return llvm::to_vector(llvm::seq<int64_t>(0, typeOf(x).getRank()));
  }
  /// Every dim of a rank-`rank` tensor but `dim`.
  static SmallVector<int64_t> allBut(int64_t rank, int64_t dim) {
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim)
        dims.push_back(d);
    return dims;
  }
  /// The number of elements that a reduction over `dims` folds.
  static double count(Value x, ArrayRef<int64_t> dims) {
    auto ty = typeOf(x);
    double n = 1;
    if (ty.getRank())
      for (int64_t d : dims)
        n *= ty.getShape()[d];
    return n;
  }
};

} // namespace mlir::poptorch::decompose

#endif // POPTORCH_LIB_TRANSFORMS_DECOMPOSEBUILDER_H
