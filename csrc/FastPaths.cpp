//===- FastPaths.cpp - PyTorch's fused inference kernels, as ops we lower -===//
//
// torch._transformer_encoder_layer_fwd and torch._native_multi_head_attention
// are the fused kernels of nn.TransformerEncoderLayer's and
// nn.MultiheadAttention's inference fast paths. They have CPU and CUDA kernels
// only, which a compiled program could run as host kernels, one opaque call
// per layer. On the ipu device they are the same computation written with the
// ops the compiler lowers (linear, scaled_dot_product_attention, layer_norm,
// gelu/relu), so that tracing captures a layer as those ops: the attention is
// one poptorch.sdpa, the projections are matmuls the compiler tiles.
//
// Masks follow the fast path's convention: true masks a position out;
// mask_type 1 is a key padding mask (batch, source), 0 an attention mask
// (target, source), 2 a mask that broadcasts to (batch, heads, target,
// source). A row whose positions are all masked is NaN, as in the fused
// kernel (scaled_dot_product_attention would give 0).
//
//===----------------------------------------------------------------------===//

#include <ATen/ATen.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <tuple>

namespace poptorch {
namespace {

/// The mask in scaled_dot_product_attention's convention (true: attend; or
/// added to the scores), laid out to broadcast to (batch, heads, target,
/// source), and where the fused kernel gives NaN (rows all masked out).
struct AttentionMask {
  std::optional<at::Tensor> attend;
  std::optional<at::Tensor> rowsMasked;
};

AttentionMask attentionMask(const std::optional<at::Tensor> &mask,
                            std::optional<int64_t> maskType, int64_t batch,
                            int64_t source) {
  AttentionMask out;
  if (!mask || !mask->defined())
    return out;
  at::Tensor m = *mask;
  if (maskType == 1 || (!maskType && m.dim() == 2 && m.size(0) == batch &&
                        m.size(1) == source && m.size(0) != m.size(1)))
    m = m.view({batch, 1, 1, source});
  if (m.scalar_type() != at::kBool) {
    out.attend = m; // an additive mask
    return out;
  }
  out.attend = m.logical_not();
  out.rowsMasked = m.all(-1, /*keepdim=*/true);
  return out;
}

/// Heads of a (batch, length, embed) projection: (batch, heads, length, d).
at::Tensor splitHeads(const at::Tensor &x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads})
      .transpose(1, 2);
}

/// Multi-head attention of the fast path: the q, k and v projections are
/// rows [0, E), [E, 2E) and [2E, 3E) of qkv_weight. With need_weights, the
/// attention weights too (averaged over the heads if asked), else an empty
/// tensor.
std::tuple<at::Tensor, at::Tensor>
multiHeadAttention(const at::Tensor &query, const at::Tensor &key,
                   const at::Tensor &value, int64_t embed, int64_t heads,
                   const at::Tensor &qkvWeight, const at::Tensor &qkvBias,
                   const at::Tensor &projWeight, const at::Tensor &projBias,
                   const std::optional<at::Tensor> &mask, bool needWeights,
                   bool averageWeights, std::optional<int64_t> maskType) {
  auto project = [&](const at::Tensor &x, int64_t part) {
    return splitHeads(at::linear(x, qkvWeight.narrow(0, part * embed, embed),
                                 qkvBias.narrow(0, part * embed, embed)),
                      heads);
  };
  at::Tensor q = project(query, 0), k = project(key, 1), v = project(value, 2);
  int64_t batch = query.size(0), target = query.size(1), source = key.size(1);
  AttentionMask m = attentionMask(mask, maskType, batch, source);
  at::Tensor attended, weights;
  if (needWeights) {
    at::Tensor scores =
        at::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
    if (m.attend)
      scores =
          m.attend->scalar_type() == at::kBool
              ? scores.masked_fill(m.attend->logical_not(),
                                   -std::numeric_limits<double>::infinity())
              : scores + *m.attend;
    weights = at::softmax(scores, -1);
    attended = at::matmul(weights, v);
    if (averageWeights)
      weights = weights.mean(1);
  } else {
    attended = at::scaled_dot_product_attention(q, k, v, m.attend);
    weights = at::empty({0}, query.options());
  }
  if (m.rowsMasked)
    attended = attended.masked_fill(*m.rowsMasked,
                                    std::numeric_limits<double>::quiet_NaN());
  attended = attended.transpose(1, 2).reshape({batch, target, embed});
  return {at::linear(attended, projWeight, projBias), weights};
}

std::tuple<at::Tensor, at::Tensor> ipuNativeMultiHeadAttention(
    const at::Tensor &query, const at::Tensor &key, const at::Tensor &value,
    int64_t embedDim, int64_t numHeads, const at::Tensor &qkvWeight,
    const at::Tensor &qkvBias, const at::Tensor &projWeight,
    const at::Tensor &projBias, const std::optional<at::Tensor> &mask,
    bool needWeights, bool averageWeights, std::optional<int64_t> maskType) {
  return multiHeadAttention(query, key, value, embedDim, numHeads, qkvWeight,
                            qkvBias, projWeight, projBias, mask, needWeights,
                            averageWeights, maskType);
}

at::Tensor ipuTransformerEncoderLayer(
    const at::Tensor &src, int64_t embedDim, int64_t numHeads,
    const at::Tensor &qkvWeight, const at::Tensor &qkvBias,
    const at::Tensor &projWeight, const at::Tensor &projBias, bool useGelu,
    bool normFirst, double eps, const at::Tensor &normWeight1,
    const at::Tensor &normBias1, const at::Tensor &normWeight2,
    const at::Tensor &normBias2, const at::Tensor &ffnWeight1,
    const at::Tensor &ffnBias1, const at::Tensor &ffnWeight2,
    const at::Tensor &ffnBias2, const std::optional<at::Tensor> &mask,
    std::optional<int64_t> maskType) {
  int64_t embed = embedDim;
  auto attention = [&](const at::Tensor &x) {
    return std::get<0>(multiHeadAttention(
        x, x, x, embed, numHeads, qkvWeight, qkvBias, projWeight, projBias,
        mask, /*needWeights=*/false, false, maskType));
  };
  auto feedForward = [&](const at::Tensor &x) {
    at::Tensor h = at::linear(x, ffnWeight1, ffnBias1);
    h = useGelu ? at::gelu(h) : at::relu(h);
    return at::linear(h, ffnWeight2, ffnBias2);
  };
  auto norm = [&](const at::Tensor &x, const at::Tensor &w,
                  const at::Tensor &b) {
    return at::layer_norm(x, {embed}, w, b, eps);
  };
  at::Tensor x = src;
  if (normFirst) {
    x = x + attention(norm(x, normWeight1, normBias1));
    return x + feedForward(norm(x, normWeight2, normBias2));
  }
  x = norm(x + attention(x), normWeight1, normBias1);
  return norm(x + feedForward(x), normWeight2, normBias2);
}

} // namespace
} // namespace poptorch

TORCH_LIBRARY_IMPL(aten, IPU, m) {
  m.impl("_native_multi_head_attention",
         &poptorch::ipuNativeMultiHeadAttention);
  m.impl("_transformer_encoder_layer_fwd",
         &poptorch::ipuTransformerEncoderLayer);
}
