//===- TracerViews.cpp - views of traced tensors and writes into them ----===//
//
// Traced tensors keep eager's layouts (sizes, strides, offset), so a view is
// a region of its base's memory. A ViewMap says how such a region reads the
// base's value (slices, a permutation, a broadcast, or positions), and how a
// write into it (functionalization's `<view>_scatter`) makes the base's new
// value.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "Tracer.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

namespace poptorch {

using namespace poptorch_bridge;

/// How a strided view (sizes, strides, offset) of a dense tensor reads its
/// logical value: bring the value into memory order (`order`, giving a
/// contiguous Q of shape S), then either reshape it (`reshapeOnly`), or take
/// a strided range (start, step, len) of every dim of Q, permute the ranged
/// dims into view order (`perm`), reshape to `unexpanded` and broadcast to
/// `sizes`.
struct ViewMap {
  std::vector<int64_t> order, S;
  bool reshapeOnly = false;
  std::vector<int64_t> start, step, len, perm, permutedShape, unexpanded, sizes;
  bool broadcast = false;
  /// Any other view of dense memory (overlapping windows, a diagonal, an
  /// offset that is not a slice start): the flat position in Q of each of
  /// the view's elements, row-major.
  std::vector<int64_t> positions;
  /// A position of numel(Q): memory between the elements of a tensor with
  /// gaps, read as zero (see mapGappedView).
  bool gapsReadAsZero = false;
  /// The expanded (stride 0) dims of the base, whose elements share memory:
  /// read at index 0 before anything else (Q is the unexpanded value).
  std::vector<int64_t> unexpandedBase;
};

namespace {

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int64_t> inversePermutation(const std::vector<int64_t> &p) {
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

AttrValue intsAttr(std::vector<int64_t> values) {
  AttrValue a;
  a.kind = AttrValue::Ints;
  a.ints = std::move(values);
  return a;
}

AttrValue i64Attr(int64_t value) {
  AttrValue a;
  a.kind = AttrValue::I64;
  a.i = value;
  return a;
}

/// The memory offsets (from `base`) of a strided view's elements, row-major.
std::vector<int64_t> viewOffsets(c10::IntArrayRef sizes,
                                 c10::IntArrayRef strides, int64_t base) {
  const int64_t m = static_cast<int64_t>(sizes.size());
  const int64_t numel = c10::multiply_integers(sizes);
  std::vector<int64_t> offsets;
  offsets.reserve(numel);
  std::vector<int64_t> index(m, 0);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t p = base;
    for (int64_t i = 0; i < m; ++i)
      p += index[i] * strides[i];
    offsets.push_back(p);
    for (int64_t i = m; i-- > 0;)
      if (++index[i] < sizes[i])
        break;
      else
        index[i] = 0;
  }
  return offsets;
}

/// Why the tracer refuses a strided view, with what to do instead.
std::string viewRefusal(c10::IntArrayRef sizes, c10::IntArrayRef strides,
                        const std::string &why) {
  return "a strided view of a traced tensor (sizes " + c10::str(sizes) +
         ", strides " + c10::str(strides) + ") " + why +
         "; use reshape, permute, slicing or expand instead";
}

} // namespace

/// mapView of a tensor whose memory has gaps (a select, a stepped slice: the
/// eager layout of such a view, which tracing keeps so that a later reshape
/// is a view or a copy as in eager). Each memory offset of the view is
/// translated into the dense layout of `self`'s value (Q); a view that is a
/// strided range there is mapped as a view of that dense layout, any other
/// reads its elements by position. Memory in the gaps is not `self`'s: a view
/// that reads it is refused.
ViewMap Tracer::mapGappedView(const at::Tensor &self, ViewMap map,
                              c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              int64_t offset, const char *opName) const {
  auto refuse = [&](const std::string &why) {
    fail(opName, viewRefusal(sizes, strides, why));
  };
  const std::vector<int64_t> &S = map.S;
  const int64_t n = static_cast<int64_t>(S.size());
  auto contiguousStrides = c10::contiguous_strides(S);
  std::vector<int64_t> C(contiguousStrides.begin(), contiguousStrides.end());
  std::vector<int64_t> P(n); // the memory strides of Q's dims
  int64_t extent = 1;        // memory spanned by the dims inside k
  for (int64_t k = n; k-- > 0;) {
    P[k] = self.stride(map.order[k]);
    if (S[k] == 1)
      continue;
    if (P[k] < extent)
      refuse("of a tensor with overlapping memory");
    extent += P[k] * (S[k] - 1);
  }
  // The offset in Q of the element at memory offset `p` (from self's start).
  auto toDense = [&](int64_t p) -> std::optional<int64_t> {
    if (p < 0)
      return std::nullopt;
    int64_t d = 0;
    for (int64_t k = 0; k < n; ++k) {
      if (S[k] == 1)
        continue;
      int64_t i = p / P[k];
      if (i >= S[k])
        return std::nullopt;
      p -= i * P[k];
      d += i * C[k];
    }
    if (p != 0)
      return std::nullopt;
    return d;
  };
  const int64_t rem = offset - self.storage_offset();
  const int64_t m = static_cast<int64_t>(sizes.size());
  std::optional<int64_t> base = toDense(rem);
  std::vector<int64_t> dense(m);
  auto unitStrides = c10::contiguous_strides(sizes);
  bool ranged = base.has_value();
  for (int64_t i = 0; i < m && ranged; ++i) {
    if (sizes[i] == 1 || strides[i] == 0) {
      dense[i] = sizes[i] == 1 ? unitStrides[i] : 0;
      continue;
    }
    std::optional<int64_t> next = toDense(rem + strides[i]);
    std::optional<int64_t> last = toDense(rem + (sizes[i] - 1) * strides[i]);
    ranged = next && last && *next > *base &&
             *last - *base == (sizes[i] - 1) * (*next - *base);
    if (ranged)
      dense[i] = *next - *base;
  }
  if (ranged) {
    // The same view of the value laid out densely, in the same dim order.
    std::vector<int64_t> denseOfSelf(n);
    for (int64_t k = 0; k < n; ++k)
      denseOfSelf[map.order[k]] = C[k];
    at::Tensor standIn = at::empty_strided(self.sizes(), denseOfSelf,
                                           self.options().device(c10::kMeta));
    return mapView(standIn, sizes, dense, *base, opName);
  }
  // The tensor's whole memory as one dim (what torch's clone_preserve_strides
  // copies, to view it again with the same layout): its gaps hold no value of
  // the tensor and read as zero. Any other view into the gaps is refused.
  const bool wholeMemory =
      m == 1 && strides[0] == 1 && rem == 0 &&
      sizes[0] * static_cast<int64_t>(self.element_size()) ==
          static_cast<int64_t>(self.storage().nbytes());
  const int64_t numelQ = c10::multiply_integers(S);
  for (int64_t p : viewOffsets(sizes, strides, rem)) {
    std::optional<int64_t> d = toDense(p);
    if (!d && !wholeMemory)
      refuse("that reads memory between or outside the tensor's elements");
    map.positions.push_back(d.value_or(numelQ));
    map.gapsReadAsZero |= !d;
  }
  return map;
}

ViewMap Tracer::mapView(const at::Tensor &self, c10::IntArrayRef sizes,
                        c10::IntArrayRef strides, int64_t offset,
                        const char *opName) const {
  auto unsupportedView = [&](const std::string &why) {
    fail(opName, viewRefusal(sizes, strides, why));
  };
  if (self.is_complex()) {
    // A complex value is its (real, imaginary) pairs: map the same view of
    // the real elements (torch.view_as_real of both).
    auto pairs = [](c10::IntArrayRef s, c10::IntArrayRef st, int64_t off) {
      std::vector<int64_t> sizes2 = s.vec(), strides2;
      for (int64_t x : st)
        strides2.push_back(2 * x);
      sizes2.push_back(2);
      strides2.push_back(1);
      return std::make_tuple(sizes2, strides2, 2 * off);
    };
    auto [selfSizes, selfStrides, selfOffset] =
        pairs(self.sizes(), self.strides(), self.storage_offset());
    int64_t extent = selfOffset + 1;
    for (size_t d = 0; d < selfSizes.size(); ++d)
      extent += selfSizes[d] == 0 ? 0 : (selfSizes[d] - 1) * selfStrides[d];
    at::Tensor standIn =
        at::empty({extent},
                  at::TensorOptions(c10::kMeta)
                      .dtype(c10::toRealValueType(self.scalar_type())))
            .as_strided(selfSizes, selfStrides, selfOffset);
    auto [viewSizes, viewStrides, viewOffset] = pairs(sizes, strides, offset);
    return mapView(standIn, viewSizes, viewStrides, viewOffset, opName);
  }
  // An expanded base (stride 0 along a dim of size > 1: the same value all
  // along it) is mapped as its unexpanded value, index 0 of those dims.
  std::vector<int64_t> expanded;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.size(d) > 1 && self.stride(d) == 0)
      expanded.push_back(d);
  if (!expanded.empty()) {
    std::vector<int64_t> unexpanded = self.sizes().vec();
    int64_t extent = self.storage_offset() + 1;
    for (int64_t d : expanded)
      unexpanded[d] = 1;
    for (int64_t d = 0; d < self.dim(); ++d)
      extent += (unexpanded[d] - 1) * self.stride(d);
    at::Tensor standIn =
        at::empty({extent}, self.options().device(c10::kMeta))
            .as_strided(unexpanded, self.strides(), self.storage_offset());
    ViewMap map = mapView(standIn, sizes, strides, offset, opName);
    map.unexpandedBase = std::move(expanded);
    return map;
  }
  ViewMap map;
  map.sizes = sizes.vec();
  const int64_t n = self.dim();
  map.order = iota(n);
  // The dims of size > 1 by decreasing stride; unit dims have no meaningful
  // stride and keep their places. (One comparator that called a unit dim
  // equivalent to every other dim was no ordering: a transposed bmm result
  // (1, 4, 16) with strides (64, 1, 4) kept its order, and a view of it was
  // refused as overlapping.)
  std::vector<int64_t> moving;
  for (int64_t d = 0; d < n; ++d)
    if (self.size(d) != 1)
      moving.push_back(d);
  std::vector<int64_t> sorted = moving;
  std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t a, int64_t b) {
    return self.stride(a) > self.stride(b);
  });
  for (size_t i = 0; i < moving.size(); ++i)
    map.order[moving[i]] = sorted[i];
  for (int64_t d : map.order)
    map.S.push_back(self.size(d));
  const std::vector<int64_t> &S = map.S;
  auto contiguousStrides = c10::contiguous_strides(S);
  std::vector<int64_t> C(contiguousStrides.begin(), contiguousStrides.end());
  bool gaps = false;
  for (int64_t k = 0; k < n; ++k)
    gaps |= S[k] > 1 && self.stride(map.order[k]) != C[k];
  if (gaps)
    return mapGappedView(self, map, sizes, strides, offset, opName);

  int64_t rem = offset - self.storage_offset();
  int64_t numel = c10::multiply_integers(sizes);
  // A view that is not a slice, permutation or broadcast of Q reads its
  // elements by position (as as_strided's definition says).
  auto gatherView = [&](const std::string &why) {
    map.positions = viewOffsets(sizes, strides, offset - self.storage_offset());
    for (int64_t p : map.positions)
      if (p < 0 || p >= self.numel())
        unsupportedView(why + " and reads memory outside the tensor");
    return map;
  };
  if (rem < 0)
    return gatherView("that starts before the tensor");
  if (rem == 0 && numel == self.numel() &&
      c10::IntArrayRef(c10::contiguous_strides(sizes)) == strides) {
    map.reshapeOnly = true;
    return map;
  }
  if (numel == 0)
    unsupportedView("with no elements");

  // Each view dim of size > 1 is a broadcast (stride 0) or a strided range
  // of one dim of Q; the offset gives the start in every dim of Q (the dims
  // of Q that the view does not range over are selected at that start).
  map.start.assign(n, 0);
  map.step.assign(n, 1);
  map.len.assign(n, 1);
  std::vector<int64_t> viewDimOf(n, -1);
  for (int64_t k = 0; k < n; ++k)
    if (S[k] > 1) {
      map.start[k] = rem / C[k];
      rem -= map.start[k] * C[k];
      if (map.start[k] >= S[k])
        return gatherView("that starts past the end of dim " +
                          std::to_string(map.order[k]));
    }
  if (rem != 0)
    return gatherView("with an unaligned offset");
  const int64_t m = static_cast<int64_t>(sizes.size());
  for (int64_t i = 0; i < m; ++i) {
    if (sizes[i] == 1)
      continue;
    if (strides[i] == 0) {
      map.broadcast = true;
      continue;
    }
    // The only candidate is the dim of Q with the largest stride <= the
    // view's (a larger step would run past the end of that dim).
    int64_t k = 0;
    while (k < n && (S[k] == 1 || C[k] > strides[i]))
      ++k;
    if (k == n || viewDimOf[k] >= 0 || strides[i] % C[k] != 0 ||
        map.start[k] + (sizes[i] - 1) * (strides[i] / C[k]) >= S[k]) {
      map.broadcast = false;
      return gatherView("that is not a slice, permutation or broadcast of it");
    }
    viewDimOf[k] = i;
    map.step[k] = strides[i] / C[k];
    map.len[k] = sizes[i];
  }
  // Ranged dims in view order, then the (now unit) selected dims.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < n; ++k)
      if (viewDimOf[k] == i)
        map.perm.push_back(k);
  for (int64_t k = 0; k < n; ++k)
    if (viewDimOf[k] < 0)
      map.perm.push_back(k);
  for (int64_t k : map.perm)
    map.permutedShape.push_back(map.len[k]);
  for (int64_t i = 0; i < m; ++i)
    map.unexpanded.push_back(sizes[i] > 1 && strides[i] == 0 ? 1 : sizes[i]);
  return map;
}

ValueId Tracer::emit(const char *op, ValueId in, std::vector<int64_t> shape,
                     std::vector<std::pair<std::string, AttrValue>> attrs,
                     const SourceLoc &loc) {
  TensorType to = builder.typeOf(in);
  if (to.shape == shape && (std::string(op) == "poptorch.reshape" ||
                            std::string(op) == "poptorch.expand"))
    return in;
  to.shape = std::move(shape);
  return builder.addOp(op, {{in}}, attrs, {to}, loc)[0];
}

void Tracer::expandGroupedKeyValues(const std::vector<c10::IValue> &args,
                                    std::vector<std::vector<ValueId>> &operands,
                                    const SourceLoc &loc) {
  // scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal, scale,
  // enable_gqa): with grouped-query attention each key/value head serves
  // q_heads / kv_heads consecutive query heads, as repeat_interleave on dim
  // -3 would make them: [.., Hkv, S, D] -> [.., Hkv, G, S, D] -> [.., Hq, S,
  // D].
  if (args.size() < 8 || !args[7].isBool() || !args[7].toBool())
    return;
  const at::Tensor &q = args[0].toTensor();
  if (q.dim() < 3)
    return;
  int64_t heads = q.size(-3);
  for (size_t i : {size_t(1), size_t(2)}) {
    const at::Tensor &t = args[i].toTensor();
    int64_t kvHeads = t.size(-3);
    if (kvHeads == heads || kvHeads == 0 || heads % kvHeads != 0)
      continue;
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    std::vector<int64_t> grouped(shape);
    grouped.insert(grouped.end() - 2, 1);
    ValueId v = emit("poptorch.reshape", operands[i].at(0), grouped, {}, loc);
    grouped[grouped.size() - 3] = heads / kvHeads;
    v = emit("poptorch.expand", v, grouped, {}, loc);
    shape[shape.size() - 3] = heads;
    operands[i] = {emit("poptorch.reshape", v, shape, {}, loc)};
  }
}

ValueId Tracer::emitPermute(ValueId in, const std::vector<int64_t> &dims,
                            const SourceLoc &loc) {
  if (dims == iota(static_cast<int64_t>(dims.size())))
    return in;
  std::vector<int64_t> shape, from = builder.typeOf(in).shape;
  for (int64_t d : dims)
    shape.push_back(from[d]);
  return emit("poptorch.permute", in, shape, {{"dims", intsAttr(dims)}}, loc);
}

ValueId Tracer::emitSlice(ValueId in, int64_t dim, int64_t start, int64_t step,
                          int64_t len, const SourceLoc &loc) {
  std::vector<int64_t> shape = builder.typeOf(in).shape;
  if (start == 0 && step == 1 && len == shape[dim])
    return in;
  shape[dim] = len;
  return emit("poptorch.slice", in, shape,
              {{"dim", i64Attr(dim)},
               {"start", i64Attr(start)},
               {"step", i64Attr(step)}},
              loc);
}

ValueId Tracer::readView(const ViewMap &map, ValueId base,
                         const SourceLoc &loc) {
  for (int64_t d : map.unexpandedBase)
    base = emitSlice(base, d, 0, 1, 1, loc);
  ValueId v = emitPermute(base, map.order, loc);
  if (map.reshapeOnly)
    return emit("poptorch.reshape", v, map.sizes, {}, loc);
  if (!map.positions.empty()) {
    int64_t n = static_cast<int64_t>(map.positions.size());
    int64_t numelQ = c10::multiply_integers(map.S);
    ValueId flat = emit("poptorch.reshape", v, {numelQ}, {}, loc);
    if (map.gapsReadAsZero) {
      TensorType zeroType = builder.typeOf(flat);
      zeroType.shape = {1};
      std::vector<char> zero(elemSize(zeroType.dtype), 0);
      ValueId gap = builder.addConstant(zeroType, zero.data());
      zeroType.shape = {numelQ + 1};
      flat = builder.addOp("poptorch.cat", {{flat, gap}}, {{"dim", i64Attr(0)}},
                           {zeroType}, loc)[0];
    }
    ValueId index =
        builder.addConstant({{n}, ElemType::I64}, map.positions.data());
    TensorType to = builder.typeOf(flat);
    to.shape = {n};
    v = builder.addOp("poptorch.index", {{flat}, {index}},
                      {{"dims", intsAttr({0})}}, {to}, loc)[0];
    return emit("poptorch.reshape", v, map.sizes, {}, loc);
  }
  for (size_t k = 0; k < map.S.size(); ++k)
    v = emitSlice(v, k, map.start[k], map.step[k], map.len[k], loc);
  v = emitPermute(v, map.perm, loc);
  v = emit("poptorch.reshape", v, map.unexpanded, {}, loc);
  return emit("poptorch.expand", v, map.sizes, {}, loc);
}

ValueId Tracer::writeView(const ViewMap &map, ValueId base, ValueId value,
                          const char *opName, const SourceLoc &loc) {
  if (map.broadcast || !map.unexpandedBase.empty())
    fail(opName,
         "writes into a broadcast (expanded) view, which is not supported");
  ValueId q = emitPermute(base, map.order, loc);
  if (!map.positions.empty()) {
    // A view read by position (a diagonal, an as_strided): the value is
    // written at those positions of the base laid out densely. Positions
    // in the gaps, or twice the same one, have no meaning in eager either.
    std::vector<int64_t> sorted = map.positions;
    std::sort(sorted.begin(), sorted.end());
    if (map.gapsReadAsZero ||
        std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      fail(opName, "writes into a strided view whose elements overlap or lie "
                   "outside its base, which is not supported; build the "
                   "result with index_put or scatter");
    int64_t n = static_cast<int64_t>(map.positions.size());
    int64_t numelQ = c10::multiply_integers(map.S);
    ValueId flat = emit("poptorch.reshape", q, {numelQ}, {}, loc);
    ValueId index =
        builder.addConstant({{n}, ElemType::I64}, map.positions.data());
    ValueId values = emit("poptorch.reshape", value, {n}, {}, loc);
    ValueId written = builder.addOp(
        "poptorch.index_put", {{flat}, {values}, {index}},
        {{"dims", intsAttr({0})}}, {builder.typeOf(flat)}, loc)[0];
    return emitPermute(emit("poptorch.reshape", written, map.S, {}, loc),
                       inversePermutation(map.order), loc);
  }
  if (map.reshapeOnly)
    return emitPermute(emit("poptorch.reshape", value, map.S, {}, loc),
                       inversePermutation(map.order), loc);
  ValueId w = emit("poptorch.reshape", value, map.permutedShape, {}, loc);
  w = emitPermute(w, inversePermutation(map.perm), loc);
  // Insert w into q one dim of Q at a time: along dim k, the region of q at
  // start + i * step (i < len) is replaced by the result of inserting w into
  // that region along the remaining dims.
  std::function<ValueId(ValueId, size_t)> insert = [&](ValueId into,
                                                       size_t k) -> ValueId {
    if (k == map.S.size())
      return w;
    int64_t size = builder.typeOf(into).shape[k];
    int64_t start = map.start[k], step = map.step[k], len = map.len[k];
    ValueId region = emitSlice(into, k, start, step, len, loc);
    ValueId middle = insert(region, k + 1);
    if (start == 0 && step == 1 && len == size)
      return middle;
    if (step != 1)
      return builder.addOp("poptorch.slice_insert", {{into}, {middle}},
                           {{"dim", i64Attr(k)},
                            {"start", i64Attr(start)},
                            {"step", i64Attr(step)}},
                           {builder.typeOf(into)}, loc)[0];
    std::vector<ValueId> pieces;
    if (start > 0)
      pieces.push_back(emitSlice(into, k, 0, 1, start, loc));
    pieces.push_back(middle);
    int64_t end = start + len;
    if (end < size)
      pieces.push_back(emitSlice(into, k, end, 1, size - end, loc));
    TensorType to = builder.typeOf(into);
    return builder.addOp("poptorch.cat", {pieces}, {{"dim", i64Attr(k)}}, {to},
                         loc)[0];
  };
  return emitPermute(insert(q, 0), inversePermutation(map.order), loc);
}

std::optional<ValueId> Tracer::viewValue(const at::Tensor &self,
                                         c10::IntArrayRef sizes,
                                         c10::IntArrayRef strides,
                                         int64_t offset, const char *opName) {
  if (!isTraced(self))
    return std::nullopt;
  ++opCount;
  if (c10::multiply_integers(sizes) == 0) // reads nothing, wherever it starts
    return builder.addConstant(tensorTypeOf(sizes, self.scalar_type(), opName),
                               nullptr);
  ViewMap map = mapView(self, sizes, strides, offset, opName);
  return readView(map, valueOf(self, std::nullopt, opName), sourceLocation());
}

at::Tensor Tracer::viewOnMeta(const c10::OperatorHandle &viewOp,
                              c10::ArrayRef<c10::IValue> rest,
                              c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              int64_t offset, at::ScalarType dtype) {
  int64_t extent = offset + 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    extent += sizes[d] == 0 ? 0 : (sizes[d] - 1) * strides[d];
  at::Tensor meta =
      at::empty({extent}, at::TensorOptions(c10::kMeta).dtype(dtype))
          .as_strided(sizes, strides, offset);
  torch::jit::Stack stack{meta};
  stack.insert(stack.end(), rest.begin(), rest.end());
  viewOp.callBoxed(stack);
  return stack.at(0).toTensor();
}

void Tracer::captureScatter(const c10::OperatorHandle &op, const char *viewOp,
                            const char *viewOverload,
                            torch::jit::Stack *stack) {
  const c10::FunctionSchema &schema = op.schema();
  const std::string opName = opDisplayName(op);
  size_t nargs = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - nargs, stack->end());
  const at::Tensor self = args[0].toTensor(), src = args[1].toTensor();
  if (!isTraced(self) && !isTraced(src))
    return foldOnHost(op, stack);
  ++opCount;
  // `x_scatter(self, src, args...)` writes src into `x(self, args...)`: take
  // that view's geometry from the view op run on a Meta tensor shaped like
  // self and laid out as its value is (densely; self itself carries the
  // strides of the eager view it stands for, see eagerViewGeometry).
  const c10::OperatorHandle &view =
      c10::Dispatcher::singleton().findSchemaOrThrow(viewOp, viewOverload);
  at::Tensor written =
      viewOnMeta(view, c10::ArrayRef(args).slice(2), self.sizes(),
                 c10::contiguous_strides(self.sizes()), 0, self.scalar_type());
  SourceLoc loc = sourceLocation();
  ValueId result;
  if (written.numel() == 0) {
    // Writing into no elements (x[n:] = v with n the size) leaves self.
    result = valueOf(self, std::nullopt, opName);
  } else {
    at::Tensor meta =
        at::empty_strided(self.sizes(), c10::contiguous_strides(self.sizes()),
                          self.options().device(c10::kMeta));
    ViewMap map = mapView(meta, written.sizes(), written.strides(),
                          written.storage_offset(), opName.c_str());
    result = writeView(map, valueOf(self, std::nullopt, opName),
                       valueOf(src, self.scalar_type(), opName), opName.c_str(),
                       loc);
    if (auto e = expandedWrite(args, view, opName, loc))
      expandedViews[result] = std::move(*e);
  }
  torch::jit::drop(*stack, nargs);
  at::Tensor out = emptyIpu(self.sizes(), c10::contiguous_strides(self.sizes()),
                            self.scalar_type());
  bindValue(out, result);
  stack->push_back(out);
}

//===----------------------------------------------------------------------===//
// Writes through views of expanded tensors
//===----------------------------------------------------------------------===//
//
// Eager's `y.expand(3, n)[1].add_(v)` writes y's memory, which every row of
// the expanded view shares. Functionalization sees a write into a view of
// the expand (`select_scatter(expand_copy(y), row, 0, 1)`, the mutated view
// M) and then rebuilds y with expand's inverse, y + sum_to(M - y): inf - inf
// is NaN where y holds an inf, and a write of 1 into 1e20 is lost. The
// tracer knows where each view of the expand lies in y's memory
// (ExpandedView), so a scatter into one computes y's written value (its
// image) directly, and the inverse's add is bound to that image.

namespace {

/// Whether two elements of a strided view share memory: sorted by stride,
/// each dim must step past everything the dims inside it span.
bool viewOverlaps(c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  std::vector<std::pair<int64_t, int64_t>> dims; // stride, size
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1)
      dims.emplace_back(strides[d], sizes[d]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 0; // the largest offset the inner dims reach
  for (const auto &[stride, size] : dims) {
    if (stride <= span)
      return true;
    span += (size - 1) * stride;
  }
  return false;
}

bool isOp(const c10::OperatorHandle &op, std::string_view name,
          std::string_view overload) {
  const c10::OperatorName &n = op.schema().operator_name();
  return n.name == name && n.overload_name == overload;
}

bool alphaIsOne(const std::vector<c10::IValue> &args) {
  return args.size() < 3 || !args[2].isScalar() || args[2].toScalar().equal(1);
}

} // namespace

bool Tracer::sameView(ValueId a, ValueId b) const {
  while (a != b) {
    auto x = viewOrigins.find(a), y = viewOrigins.find(b);
    if (x == viewOrigins.end() || y == viewOrigins.end() ||
        x->second.how != y->second.how)
      return false;
    a = x->second.parent;
    b = y->second.parent;
  }
  return true;
}

void Tracer::followExpandedViews(const c10::OperatorHandle &op,
                                 const std::vector<c10::IValue> &args,
                                 const at::Tensor &out) {
  ValueId outId = valueIdOf(out);
  if (outId < 0 || args.empty() || !args[0].isTensor())
    return;
  const at::Tensor &in = args[0].toTensor();
  ValueId inId = valueIdOf(in);
  if (inId < 0)
    return;
  std::string_view name = op.schema().name();
  std::optional<c10::OperatorHandle> viewOp = viewOpOf(op);
  if (viewOp) {
    // Functionalization replays the views from the base before it undoes
    // them: the replayed view is the same value as the first.
    std::ostringstream how;
    how << opDisplayName(op);
    for (size_t i = 1; i < args.size(); ++i)
      how << ", " << args[i];
    viewOrigins[outId] = {inId, how.str()};
  }
  if (name == "aten::expand_copy") {
    // A base whose own elements share memory (already expanded) is left to
    // functionalization's formula.
    if (viewOverlaps(in.sizes(), in.strides()))
      return;
    at::Tensor meta =
        viewOnMeta(*viewOp, c10::ArrayRef(args).slice(1), in.sizes(),
                   in.strides(), in.storage_offset(), in.scalar_type());
    expandedBases[inId] =
        meta.as_strided(in.sizes(), in.strides(), in.storage_offset());
    expandedViews[outId] = {inId, inId, meta.sizes().vec(),
                            meta.strides().vec(), meta.storage_offset()};
    return;
  }
  if (expandedViews.empty())
    return;
  if (name == "aten::add" && isOp(op, name, "Tensor") && alphaIsOne(args) &&
      args[1].isTensor() && out.sizes() == in.sizes() &&
      out.scalar_type() == in.scalar_type()) {
    auto term = expandInverses.find(valueIdOf(args[1].toTensor()));
    if (term != expandInverses.end() && sameView(term->second.root, inId))
      bindValue(out, term->second.image); // B + sum_to(M - B): B written
    return;
  }
  auto inverse = expandInverses.find(inId);
  if (inverse != expandInverses.end()) {
    // sum_to's reduction, and its reshape or copy.
    if (name == "aten::sum" || name == "aten::view_copy" ||
        name == "aten::_unsafe_view" || name == "aten::clone")
      expandInverses[outId] = inverse->second;
    return;
  }
  if (name == "aten::sub" && isOp(op, name, "Tensor") && alphaIsOne(args) &&
      args[1].isTensor()) {
    const at::Tensor &base = args[1].toTensor();
    ValueId baseId = valueIdOf(base);
    auto view = expandedViews.find(inId);
    if (view != expandedViews.end() && sameView(view->second.root, baseId)) {
      expandInverses[outId] = view->second; // M - B, M written by scatters
      return;
    }
    if (in.numel() != base.numel() || in.scalar_type() != base.scalar_type())
      return;
    for (const auto &[root, layout] : expandedBases)
      if (sameView(root, baseId)) {
        // An expand that broadcast nothing (B.expand_as(B), B[None]) written
        // whole by an in-place op: M holds B's elements once each.
        ExpandedView e{root};
        e.image = emit("poptorch.reshape", inId, base.sizes().vec(), {},
                       sourceLocation());
        expandInverses[outId] = std::move(e);
        return;
      }
    return;
  }
  auto view = expandedViews.find(inId);
  if (!viewOp || view == expandedViews.end() ||
      name == "aten::as_strided_copy") // (its offset is absolute)
    return;
  ExpandedView e = view->second;
  at::Tensor meta = viewOnMeta(*viewOp, c10::ArrayRef(args).slice(1), e.sizes,
                               e.strides, e.offset, in.scalar_type());
  e.sizes = meta.sizes().vec();
  e.strides = meta.strides().vec();
  e.offset = meta.storage_offset();
  expandedViews[outId] = std::move(e);
}

std::optional<ExpandedView>
Tracer::expandedWrite(const std::vector<c10::IValue> &args,
                      const c10::OperatorHandle &viewOp,
                      const std::string &opName, const SourceLoc &loc) {
  const at::Tensor &self = args[0].toTensor(), &src = args[1].toTensor();
  auto found = expandedViews.find(valueIdOf(self));
  if (found == expandedViews.end() || isOp(viewOp, "aten::as_strided", ""))
    return std::nullopt;
  ExpandedView e = found->second;
  at::Tensor written = viewOnMeta(viewOp, c10::ArrayRef(args).slice(2), e.sizes,
                                  e.strides, e.offset, self.scalar_type());
  // Writing back what a view of the same memory holds (the outer scatters
  // of a write through a chain of views) leaves the image as src's.
  auto from = expandedViews.find(valueIdOf(src));
  if (from != expandedViews.end() && sameView(from->second.root, e.root) &&
      written.sizes() == c10::IntArrayRef(from->second.sizes) &&
      written.strides() == c10::IntArrayRef(from->second.strides) &&
      written.storage_offset() == from->second.offset) {
    e.image = from->second.image;
    return e;
  }
  // A write into memory that several of the view's elements share is
  // refused by eager; functionalization's formula stays.
  if (viewOverlaps(written.sizes(), written.strides()))
    return std::nullopt;
  ViewMap map;
  try {
    map = mapView(expandedBases.at(e.root), written.sizes(), written.strides(),
                  written.storage_offset(), opName.c_str());
  } catch (const std::exception &) {
    return std::nullopt;
  }
  if (map.broadcast || !map.positions.empty() || !map.unexpandedBase.empty())
    return std::nullopt;
  e.image = writeView(map, e.image, valueOf(src, self.scalar_type(), opName),
                      opName.c_str(), loc);
  return e;
}

std::optional<at::Tensor> Tracer::captureView(const at::Tensor &self,
                                              c10::IntArrayRef sizes,
                                              c10::IntArrayRef strides,
                                              int64_t offset,
                                              const char *opName) {
  std::optional<ValueId> v = viewValue(self, sizes, strides, offset, opName);
  if (!v)
    return std::nullopt;
  // The view's value, laid out as eager's view is (gaps and broadcasts
  // included), so that what a later reshape does is what eager does.
  at::Tensor out = emptyIpu(sizes, strides, self.scalar_type());
  bindValue(out, *v);
  noteView(out, self, sizes, strides, offset);
  return out;
}

std::optional<at::Tensor> Tracer::captureReinterpret(const at::Tensor &self,
                                                     c10::IntArrayRef sizes,
                                                     c10::IntArrayRef strides,
                                                     at::ScalarType dtype) {
  if (!isTraced(self))
    return std::nullopt;
  ++opCount;
  at::Tensor out = emptyIpu(sizes, strides, dtype);
  bindValue(out, valueOf(self, std::nullopt,
                         at::isComplexType(dtype) ? "aten::view_as_complex"
                                                  : "aten::view_as_real"));
  return out;
}

void Tracer::noteView(const at::Tensor &view, const at::Tensor &base,
                      c10::IntArrayRef sizes, c10::IntArrayRef strides,
                      int64_t offset) {
  if (view.unsafeGetTensorImpl() == base.unsafeGetTensorImpl())
    return;
  memoryViews.insert_or_assign(
      view.unsafeGetTensorImpl(),
      MemoryView{
          c10::weak_intrusive_ptr<c10::TensorImpl>(view.getIntrusivePtr()),
          c10::weak_intrusive_ptr<c10::TensorImpl>(base.getIntrusivePtr()),
          sizes.vec(), strides.vec(), offset});
}

void Tracer::propagateWrite(const at::Tensor &view, const char *opName) {
  auto it = memoryViews.find(view.unsafeGetTensorImpl());
  if (it == memoryViews.end())
    return;
  c10::intrusive_ptr<c10::TensorImpl> impl = it->second.base.lock();
  if (!impl)
    return;
  at::Tensor base(std::move(impl));
  // (Between untraced tensors the write went to memory, which both read.)
  if (!isTraced(base) && !isTraced(view))
    return;
  const MemoryView geometry = it->second;
  SourceLoc loc = sourceLocation();
  ViewMap map =
      mapView(base, geometry.sizes, geometry.strides, geometry.offset, opName);
  ValueId written =
      writeView(map, valueOf(base, std::nullopt, opName),
                valueOf(view, base.scalar_type(), opName), opName, loc);
  bindValue(base, written);
  propagateWrite(base, opName);
}

std::optional<at::Tensor> Tracer::captureReshape(const at::Tensor &self,
                                                 c10::IntArrayRef sizes,
                                                 c10::IntArrayRef strides,
                                                 const char *opName) {
  if (!isTraced(self))
    return std::nullopt;
  if (c10::multiply_integers(sizes) == 0)
    return captureView(self, sizes, strides, self.storage_offset(), opName);
  ++opCount;
  std::vector<int64_t> shape =
      tensorTypeOf(sizes, self.scalar_type(), opName).shape;
  ValueId v = emit("poptorch.reshape", valueOf(self, std::nullopt, opName),
                   shape, {}, sourceLocation());
  at::Tensor out = emptyIpu(sizes, strides, self.scalar_type());
  bindValue(out, v);
  noteView(out, self, sizes, strides, self.storage_offset());
  return out;
}

bool Tracer::captureViewInplace(const at::Tensor &self, c10::IntArrayRef sizes,
                                c10::IntArrayRef strides, int64_t offset,
                                const char *opName) {
  std::optional<ValueId> v = viewValue(self, sizes, strides, offset, opName);
  if (!v)
    return false;
  // `self` now holds the view's value, laid out as eager's view is (see
  // captureView) where its memory holds that layout, else contiguously.
  int64_t needed = offset + 1;
  for (size_t i = 0; i < sizes.size(); ++i)
    needed += sizes[i] == 0 ? 0 : (sizes[i] - 1) * strides[i];
  c10::TensorImpl *impl = self.unsafeGetTensorImpl();
  if (c10::multiply_integers(sizes) > 0 &&
      needed * self.element_size() <=
          static_cast<int64_t>(impl->storage().nbytes())) {
    impl->set_sizes_and_strides(sizes, strides);
    impl->set_storage_offset(offset);
  } else {
    impl->set_sizes_contiguous(sizes);
  }
  bindValue(self, *v);
  return true;
}

} // namespace poptorch
