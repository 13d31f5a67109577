//===- Indexing.cpp - gathers and scatters by index tensors --------------===//
//
// gather, index (advanced indexing) and take read the input at positions
// taken from index tensors: one linalg.generic over the result with
// tensor.extract. scatter, index_put and masked_scatter write (or reduce)
// at such positions, which linalg cannot express: they are an scf.for nest
// over the updates carrying the result tensor (tensor.extract /
// tensor.insert, in place after bufferization), in PyTorch's order, so that
// later writes to one position win as in eager.
//
// Index values computed by the model are wrapped (negative) and clamped
// into range: a compiled program cannot raise. Constant indices are checked
// at capture time.
//
//===----------------------------------------------------------------------===//
#include "Conversion/PoptorchToLinalg/IndexMath.h"
#include "poptorch/Dialect/Poptorch/IR/Broadcast.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::poptorch;

namespace {

/// Where advanced indexing puts things: the index tensors broadcast to
/// `bcast`; its dims sit at `start` of the region (the result of
/// poptorch.index), in place of the indexed dims if those are adjacent,
/// else first. `nB` is the number of region dims the broadcast shape takes.
struct IndexedRegion {
  SmallVector<int64_t> shape;
  int64_t start = 0, nB = 0;
  SmallVector<int64_t> inputDimOfRegionDim; // -1 for broadcast dims
};

static IndexedRegion indexedRegion(ArrayRef<int64_t> in, ArrayRef<int64_t> dims,
                                   ValueRange indices,
                                   std::optional<int64_t> resultRank) {
  SmallVector<int64_t> bcast;
  for (Value v : indices) {
    auto s = getTensorType(v).getShape();
    SmallVector<int64_t> next(std::max(bcast.size(), s.size()), 1);
    for (size_t i = 0; i < next.size(); ++i) {
      int64_t a = i < next.size() - bcast.size()
                      ? 1
                      : bcast[i - (next.size() - bcast.size())];
      int64_t b =
          i < next.size() - s.size() ? 1 : s[i - (next.size() - s.size())];
      next[i] = a == 1 ? b : a;
    }
    bcast = next;
  }
  bool adjacent = dims.back() - dims.front() + 1 == (int64_t)dims.size();
  IndexedRegion r;
  r.start = adjacent ? dims.front() : 0;
  r.nB = resultRank ? *resultRank - ((int64_t)in.size() - (int64_t)dims.size())
                    : (int64_t)bcast.size();
  // index_select with a 0-d index keeps the dim (size 1).
  SmallVector<int64_t> bshape(r.nB, 1);
  for (size_t i = 0; i < bcast.size() && i < bshape.size(); ++i)
    bshape[bshape.size() - 1 - i] = bcast[bcast.size() - 1 - i];
  SmallVector<int64_t> rest;
  for (int64_t d = 0; d < (int64_t)in.size(); ++d)
    if (!llvm::is_contained(dims, d))
      rest.push_back(d);
  auto addRest = [&](auto begin, auto end) {
    for (auto it = begin; it != end; ++it) {
      r.shape.push_back(in[*it]);
      r.inputDimOfRegionDim.push_back(*it);
    }
  };
  auto split = llvm::find_if(rest, [&](int64_t d) { return d > r.start; });
  if (!adjacent)
    split = rest.begin();
  addRest(rest.begin(), split);
  for (int64_t s : bshape) {
    r.shape.push_back(s);
    r.inputDimOfRegionDim.push_back(-1);
  }
  addRest(split, rest.end());
  return r;
}

/// The indexing map reading index tensor `v` at region position (numpy
/// broadcasting into the broadcast dims).
static AffineMap indexTensorMap(MLIRContext *ctx, Value v,
                                const IndexedRegion &r) {
  auto s = getTensorType(v).getShape();
  SmallVector<AffineExpr> exprs;
  int64_t first = r.start + r.nB - (int64_t)s.size();
  for (size_t j = 0; j < s.size(); ++j) {
    int64_t d = first + j;
    exprs.push_back(s[j] == 1 && r.shape[d] != 1 ? getAffineConstantExpr(0, ctx)
                                                 : getAffineDimExpr(d, ctx));
  }
  return AffineMap::get(r.shape.size(), 0, exprs, ctx);
}

/// The input position of region position `ivs`, with `idx[k]` the element
/// of index tensor k there.
static SmallVector<Value> indexedPosition(OpBuilder &b, Location loc,
                                          ArrayRef<int64_t> in,
                                          ArrayRef<int64_t> dims,
                                          const IndexedRegion &r,
                                          ValueRange ivs, ValueRange idx) {
  SmallVector<Value> pos(in.size());
  for (auto [i, d] : llvm::enumerate(r.inputDimOfRegionDim))
    if (d >= 0)
      pos[d] = ivs[i];
  for (auto [k, d] : llvm::enumerate(dims))
    pos[d] = indexFromElement(b, loc, idx[k], in[d]);
  return pos;
}

struct TorchGatherLowering : public OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto in = getTensorType(input).getShape();
    int64_t dim = op.getDim();
    RankedTensorType resTy = op.getType();
    if (in.empty()) {
      // Every index of a 0-d input (0 or -1: torch checks) reads its value.
      rewriter.replaceOp(
          op, broadcastTensor(rewriter, op.getLoc(), input, resTy.getShape()));
      return success();
    }
    AffineMap id = rewriter.getMultiDimIdentityMap(resTy.getRank());
    rewriter.replaceOp(
        op, createIndexedGeneric(
                rewriter, op.getLoc(), resTy, {adaptor.getIndex()}, {id},
                [&](OpBuilder &b, Location loc, ValueRange ivs,
                    ValueRange args) -> Value {
                  SmallVector<Value> pos(ivs);
                  pos[dim] = indexFromElement(b, loc, args[0], in[dim]);
                  return tensor::ExtractOp::create(b, loc, input, pos);
                }));
    return success();
  }
};

struct IndexLowering : public OpConversionPattern<IndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto in = getTensorType(input).getShape();
    RankedTensorType resTy = op.getType();
    if (in.empty()) {
      // index_select of a 0-d input: every index (0 or -1) reads its value.
      rewriter.replaceOp(
          op, broadcastTensor(rewriter, op.getLoc(), input, resTy.getShape()));
      return success();
    }
    IndexedRegion r =
        indexedRegion(in, op.getDims(), adaptor.getIndices(), resTy.getRank());
    if (ArrayRef<int64_t>(r.shape) != resTy.getShape())
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    SmallVector<AffineMap> maps;
    for (Value v : adaptor.getIndices())
      maps.push_back(indexTensorMap(rewriter.getContext(), v, r));
    rewriter.replaceOp(
        op, createIndexedGeneric(
                rewriter, op.getLoc(), resTy, adaptor.getIndices(), maps,
                [&](OpBuilder &b, Location loc, ValueRange ivs,
                    ValueRange args) -> Value {
                  return tensor::ExtractOp::create(
                      b, loc, input,
                      indexedPosition(b, loc, in, op.getDims(), r, ivs, args));
                }));
    return success();
  }
};

/// The position in a tensor of `shape` of row-major linear index `lin`.
static SmallVector<Value> delinearize(IndexMath &m, Value lin,
                                      ArrayRef<int64_t> shape) {
  SmallVector<Value> pos(shape.size());
  for (int64_t i = shape.size(); i-- > 0;) {
    pos[i] = m.rem(lin, std::max<int64_t>(shape[i], 1));
    lin = m.div(lin, std::max<int64_t>(shape[i], 1));
  }
  return pos;
}

struct TakeLowering : public OpConversionPattern<TakeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TakeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto inTy = getTensorType(input);
    RankedTensorType resTy = op.getType();
    AffineMap id = rewriter.getMultiDimIdentityMap(resTy.getRank());
    rewriter.replaceOp(
        op, createIndexedGeneric(
                rewriter, op.getLoc(), resTy, {adaptor.getIndex()}, {id},
                [&](OpBuilder &b, Location loc, ValueRange,
                    ValueRange args) -> Value {
                  IndexMath m{b, loc};
                  Value lin =
                      indexFromElement(b, loc, args[0], inTy.getNumElements());
                  return tensor::ExtractOp::create(
                      b, loc, input, delinearize(m, lin, inTy.getShape()));
                }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Scatters
//===----------------------------------------------------------------------===//

/// A sequential loop nest over `shape` carrying `inits`.
static SmallVector<Value>
loopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange inits,
         function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange,
                                         ValueRange)>
             body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t s : shape) {
    lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, s));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, inits,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs, ValueRange iters) {
        return body(nb, nloc, ivs, iters);
      });
  return nest.results;
}

/// The reduction `reduce` of two signless scalars of element type `elem`.
static Value combine(OpBuilder &b, Location loc, StringRef reduce, Value acc,
                     Value v, Type elem) {
  if (reduce == "amax" || reduce == "amin")
    return createExtremum(b, loc, acc, v, reduce == "amax",
                          isUnsignedInteger(elem));
  if (isa<FloatType>(elem))
    return reduce == "prod" ? (Value)arith::MulFOp::create(b, loc, acc, v)
                            : (Value)arith::AddFOp::create(b, loc, acc, v);
  if (elem.isInteger(1))
    return reduce == "prod" ? (Value)arith::AndIOp::create(b, loc, acc, v)
                            : (Value)arith::OrIOp::create(b, loc, acc, v);
  return reduce == "prod" ? (Value)arith::MulIOp::create(b, loc, acc, v)
                          : (Value)arith::AddIOp::create(b, loc, acc, v);
}

/// The identity of `reduce` as a signless scalar of element type `elem`.
static Value reduceIdentity(OpBuilder &b, Location loc, StringRef reduce,
                            Type elem) {
  Type t = toSignlessType(elem);
  if (reduce == "prod")
    return createScalar(b, loc, t, 1.0);
  if (reduce == "amax")
    return createLowest(b, loc, t, isUnsignedInteger(elem));
  if (reduce == "amin")
    return createHighest(b, loc, t, isUnsignedInteger(elem));
  return createScalar(b, loc, t, 0.0);
}

/// One element of `src`: the 0-d value, or the element at `ivs` (numpy
/// broadcasting of `src` into a loop over `shape`).
static Value readBroadcast(OpBuilder &b, Location loc, Value src,
                           ArrayRef<int64_t> shape, ValueRange ivs) {
  auto s = getTensorType(src).getShape();
  SmallVector<Value> pos;
  int64_t off = shape.size() - s.size();
  for (size_t j = 0; j < s.size(); ++j)
    pos.push_back(s[j] == 1 && shape[off + j] != 1
                      ? (Value)arith::ConstantIndexOp::create(b, loc, 0)
                      : ivs[off + j]);
  return tensor::ExtractOp::create(b, loc, src, pos);
}

/// `dest` with `fn(old element)` written at `pos` (signless in and out).
static Value updateAt(OpBuilder &b, Location loc, Value dest, ValueRange pos,
                      function_ref<Value(Value)> fn) {
  Type elem = getTensorType(dest).getElementType();
  Value old = scalarToSignless(
      b, loc, tensor::ExtractOp::create(b, loc, dest, pos).getResult());
  Value v = scalarFromSignless(b, loc, fn(old), elem);
  return tensor::InsertOp::create(b, loc, v, dest, pos);
}

/// Scatter of the values that `at(ivs)` yields (position, signless value)
/// for every point of `updates` into `input`, reduced with `reduce` ("none"
/// assigns); without `includeSelf` the written positions start from the
/// reduction's identity, and "mean" divides by the number of values.
static Value scatterReduce(OpBuilder &b, Location loc, Value input,
                           ArrayRef<int64_t> updates, StringRef reduce,
                           bool includeSelf,
                           function_ref<std::pair<SmallVector<Value>, Value>(
                               OpBuilder &, Location, ValueRange)>
                               at) {
  auto ty = getTensorType(input);
  Type elem = ty.getElementType();
  if (reduce == "none")
    return loopNest(
        b, loc, updates, {input},
        [&](OpBuilder &nb, Location nloc, ValueRange ivs,
            ValueRange it) -> SmallVector<Value> {
          auto [pos, v] = at(nb, nloc, ivs);
          return {updateAt(nb, nloc, it[0], pos, [&](Value) { return v; })};
        })[0];
  Value dest = input;
  if (!includeSelf)
    dest = loopNest(b, loc, updates, {dest},
                    [&](OpBuilder &nb, Location nloc, ValueRange ivs,
                        ValueRange it) -> SmallVector<Value> {
                      auto pos = at(nb, nloc, ivs).first;
                      return {updateAt(nb, nloc, it[0], pos, [&](Value) {
                        return reduceIdentity(nb, nloc, reduce, elem);
                      })};
                    })[0];
  bool mean = reduce == "mean";
  SmallVector<Value> inits{dest};
  auto countTy = ty.clone(b.getI64Type());
  if (mean)
    inits.push_back(createFilled(
        b, loc, countTy, createScalar(b, loc, b.getI64Type(), includeSelf)));
  SmallVector<Value> res = loopNest(
      b, loc, updates, inits,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs,
          ValueRange it) -> SmallVector<Value> {
        auto [pos, v] = at(nb, nloc, ivs);
        SmallVector<Value> out{updateAt(nb, nloc, it[0], pos, [&](Value old) {
          return combine(nb, nloc, reduce, old, v, elem);
        })};
        if (mean)
          out.push_back(updateAt(nb, nloc, it[1], pos, [&](Value n) {
            return arith::AddIOp::create(
                nb, nloc, n, createScalar(nb, nloc, nb.getI64Type(), 1));
          }));
        return out;
      });
  if (!mean)
    return res[0];
  // sum / count where count > 0 (floor division for integers, as PyTorch).
  bool isFloat = isa<FloatType>(elem), u = isUnsignedInteger(elem);
  return createElementwiseGeneric(
      b, loc, {res[0], res[1]}, ty.getShape(), elem,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value sum = scalarToSignless(nb, nloc, args[0]);
        Value n = args[1];
        Value one = createScalar(nb, nloc, nb.getI64Type(), 1);
        Value zero = createScalar(nb, nloc, nb.getI64Type(), 0);
        n = arith::SelectOp::create(
            nb, nloc,
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, n, zero),
            one, n);
        Type st = sum.getType();
        Value r;
        if (isFloat) {
          Type ct = getComputeType(st);
          Value s = convertScalar(nb, nloc, sum, ct, false, false);
          Value c = convertScalar(nb, nloc, n, ct, false, false);
          r = convertScalar(nb, nloc, arith::DivFOp::create(nb, nloc, s, c), st,
                            false, false);
        } else {
          Value c = convertScalar(nb, nloc, n, st, false, u);
          r = u ? (Value)arith::DivUIOp::create(nb, nloc, sum, c)
                : (Value)arith::FloorDivSIOp::create(nb, nloc, sum, c);
        }
        return scalarFromSignless(nb, nloc, r, args[0].getType());
      });
}

struct ScatterLowering : public OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput(), index = adaptor.getIndex(),
          src = adaptor.getSrc();
    auto in = getTensorType(input).getShape();
    auto idxShape = getTensorType(index).getShape();
    bool scalarSrc = getTensorType(src).getRank() == 0;
    int64_t dim = op.getDim();
    StringRef reduce = op.getReduce();
    reduce = reduce == "add" ? "sum" : reduce == "multiply" ? "prod" : reduce;
    rewriter.replaceOp(
        op,
        scatterReduce(
            rewriter, op.getLoc(), input, idxShape, reduce, op.getIncludeSelf(),
            [&](OpBuilder &b, Location loc, ValueRange ivs) {
              SmallVector<Value> pos(ivs);
              if (!in.empty()) {
                Value i = tensor::ExtractOp::create(b, loc, index, ivs);
                pos[dim] = indexFromElement(b, loc, i, in[dim]);
              }
              Value v = tensor::ExtractOp::create(
                  b, loc, src, scalarSrc ? ValueRange{} : ivs);
              return std::make_pair(pos, scalarToSignless(b, loc, v));
            }));
    return success();
  }
};

struct IndexPutLowering : public OpConversionPattern<IndexPutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IndexPutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput(), values = adaptor.getValues();
    Type elem = getTensorType(input).getElementType();
    // PyTorch indexes dim 0 of a 0-d tensor as that of a 1-element vector
    // (index_add, index_copy and index_fill of a scalar).
    bool scalar = getTensorType(input).getRank() == 0;
    if (scalar)
      input = tensor::ExpandShapeOp::create(
          rewriter, op.getLoc(), RankedTensorType::get({1}, elem), input,
          ArrayRef<ReassociationIndices>{});
    auto in = getTensorType(input).getShape();
    auto dims = op.getDims();
    ValueRange indices = adaptor.getIndices();
    IndexedRegion r = indexedRegion(in, dims, indices, std::nullopt);
    // index_add / index_copy of a 0-d index address a region with one dim.
    if (getTensorType(values).getRank() > (int64_t)r.shape.size())
      r = indexedRegion(in, dims, indices, getTensorType(values).getRank());
    if (!broadcastsTo(getTensorType(values).getShape(), r.shape))
      return rewriter.notifyMatchFailure(op, "values do not broadcast");
    double alpha = op.getAlpha().convertToDouble();
    bool accumulate = op.getAccumulate();
    Value result = scatterReduce(
        rewriter, op.getLoc(), input, r.shape, accumulate ? "sum" : "none",
        true, [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Value> idx;
          for (Value v : indices) {
            SmallVector<AffineExpr> exprs;
            AffineMap map = indexTensorMap(b.getContext(), v, r);
            SmallVector<Value> at;
            for (AffineExpr e : map.getResults())
              at.push_back(
                  isa<AffineConstantExpr>(e)
                      ? (Value)arith::ConstantIndexOp::create(b, loc, 0)
                      : ivs[cast<AffineDimExpr>(e).getPosition()]);
            idx.push_back(tensor::ExtractOp::create(b, loc, v, at));
          }
          auto pos = indexedPosition(b, loc, in, dims, r, ivs, idx);
          Value v = scalarToSignless(
              b, loc, readBroadcast(b, loc, values, r.shape, ivs));
          if (accumulate && alpha != 1.0)
            v = isa<FloatType>(elem)
                    ? (Value)arith::MulFOp::create(
                          b, loc, v, createScalar(b, loc, v.getType(), alpha))
                    : (Value)arith::MulIOp::create(
                          b, loc, v, createScalar(b, loc, v.getType(), alpha));
          return std::make_pair(pos, v);
        });
    if (scalar)
      result = tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(), op.getType(), result,
          ArrayRef<ReassociationIndices>{});
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MaskedScatterLowering : public OpConversionPattern<MaskedScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskedScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), mask = adaptor.getMask(),
          source = adaptor.getSource();
    auto shape = getTensorType(input).getShape();
    auto srcShape = getTensorType(source).getShape();
    int64_t srcNumel = getTensorType(source).getNumElements();
    if (srcNumel == 0) {
      rewriter.replaceOp(op, input);
      return success();
    }
    // Row-major over the input, a counter of the source elements taken.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> res =
        loopNest(rewriter, loc, shape, {input, zero},
                 [&](OpBuilder &b, Location nloc, ValueRange ivs,
                     ValueRange it) -> SmallVector<Value> {
                   IndexMath m{b, nloc};
                   Value take = readBroadcast(b, nloc, mask, shape, ivs);
                   Value n = it[1];
                   Value v = tensor::ExtractOp::create(
                       b, nloc, source,
                       delinearize(m, m.min(n, m.c(srcNumel - 1)), srcShape));
                   Value old = tensor::ExtractOp::create(b, nloc, it[0], ivs);
                   Value dest = tensor::InsertOp::create(
                       b, nloc, m.select(take, v, old), it[0], ivs);
                   return {dest, m.select(take, m.add(n, 1), n)};
                 });
    rewriter.replaceOp(op, res[0]);
    return success();
  }
};

} // namespace

void mlir::poptorch::populateIndexingPatterns(RewritePatternSet &patterns) {
  patterns.add<TorchGatherLowering, IndexLowering, TakeLowering,
               ScatterLowering, IndexPutLowering, MaskedScatterLowering>(
      patterns.getContext());
}
