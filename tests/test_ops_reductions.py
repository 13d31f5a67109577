"""Reductions, scans, sorting and losses, compiled and compared with eager PyTorch.

Each op runs over the dtypes eager PyTorch supports for it (``opsuite``) and
over shapes with negative dims, keepdim, dim lists, 0-d and empty inputs
where the op allows them. Values that tie are avoided where PyTorch leaves
the index of a tie unspecified (topk, kthvalue); where it specifies it
(max.dim, argmax, sort, cummax) ties are tested.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree
from conftest import compiled
from opsuite import DTYPES, FLOAT_DTYPES, INT_DTYPES, SIGNED_DTYPES, dtypes, sample


def check(fn, *args, **tolerance):
    """Compiled ``fn(*args)`` equals eager, NaN where eager has NaN."""
    with torch.no_grad():
        expected = fn(*args)
    actual = compiled(fn, *args)
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    assert a_spec == e_spec
    for a, e in zip(a_leaves, e_leaves, strict=True):
        torch.testing.assert_close(a, e, equal_nan=True, **tolerance)


NAN = float("nan")
INF = float("inf")
# dtypes whose sum/prod promote to int64 in eager
NUM_DTYPES = [*FLOAT_DTYPES, *INT_DTYPES]
LOW_FLOATS = [torch.float16, torch.bfloat16]


def distinct(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """A permutation of small integers (no ties), centred on 0 unless unsigned."""
    n = 1
    for s in shape:
        n *= s
    v = torch.randperm(n).reshape(shape)
    if dtype != torch.uint8:
        v = v - n // 2
    return v.to(dtype)


# ---------------------------------------------------------------- sum / mean / prod
REDUCE_CASES = [((), None), ((5,), 0), ((2, 3), -1), ((2, 3, 4), (0, 2)),
                ((2, 3, 4), [-1, -2]), ((0, 3), 0), ((3, 0), None)]


@dtypes(DTYPES)
@pytest.mark.parametrize("shape,dim", REDUCE_CASES)
def test_sum(dtype, shape, dim):
    x = sample(shape, dtype)
    if dim is None:
        check(lambda x: x.sum(), x)
    else:
        check(lambda x: (x.sum(dim), x.sum(dim, keepdim=True)), x)


@dtypes(NUM_DTYPES, [torch.bool])
def test_sum_dtype(dtype):
    x = sample((3, 4), dtype)
    check(lambda x: (x.sum(1, dtype=torch.float64), torch.sum(x, dtype=torch.int32),
                     x.sum((0, 1), dtype=torch.float16)), x)


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", REDUCE_CASES)
def test_mean(dtype, shape, dim):
    x = sample(shape, dtype)
    check(lambda x: x.mean() if dim is None else x.mean(dim, keepdim=True), x)


@pytest.mark.parametrize("channels,height,width", [(768, 7, 7), (40, 5, 3), (33, 16, 16)])
def test_pooling_over_pixels_of_mixed_layouts(channels, height, width):
    """A global average pool (and max) of a sum of an (N, C, H, W) tensor and
    a channels-last one scaled per channel (ConvNeXt's last residual): the
    reduced tiles read one operand transposed."""
    x = sample((2, channels, height, width), torch.float32)
    y = sample((2, height, width, channels), torch.float32)
    scale = sample((channels,), torch.float32)

    def pool(x, y, scale):
        z = x + (y * scale).permute(0, 3, 1, 2)
        return z.mean((-2, -1)), z.amax((-2, -1)), z.sum((0, 2, 3))

    check(pool, x, y, scale, atol=1e-4, rtol=1e-4)  # sums of up to 512 in another order


@dtypes(INT_DTYPES, [torch.bool])
def test_mean_dtype(dtype):
    x = sample((3, 4), dtype)
    check(lambda x: x.mean(0, dtype=torch.float32), x)
    check(lambda x: torch.mean(x, dtype=torch.float64), x)


def test_mean_f16_accumulates_in_f32():
    x = torch.full((4096,), 1.001, dtype=torch.float16)
    check(lambda x: x.mean(), x)


@dtypes(DTYPES)
@pytest.mark.parametrize("shape,dim", [((), None), ((2, 3), -1), ((0,), None), ((2, 0), 1)])
def test_prod(dtype, shape, dim):
    x = sample(shape, dtype, low=-2, high=3)
    if dim is None:
        check(lambda x: x.prod(), x)
    else:
        check(lambda x: x.prod(dim, keepdim=True), x)
        check(lambda x: torch.prod(x, dim, dtype=torch.float64), x)


@dtypes(FLOAT_DTYPES, INT_DTYPES)
def test_nansum(dtype):
    x = sample((3, 5), dtype)
    if dtype.is_floating_point:
        x[0, 1] = NAN
        x[2, 4] = NAN
    check(lambda x: torch.nansum(x), x)
    check(lambda x: torch.nansum(x, 1, keepdim=True), x)
    check(lambda x: torch.nansum(x, (0, 1), dtype=torch.float64), x)


@dtypes(DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3, 5)])
def test_count_nonzero(dtype, shape):
    x = sample(shape, dtype, low=-1, high=2)
    check(lambda x: torch.count_nonzero(x), x)
    if len(shape) == 2:
        check(lambda x: torch.count_nonzero(x, dim=-1), x)
        check(lambda x: torch.count_nonzero(x, dim=(0, 1)), x)


# ---------------------------------------------------------------- max / min family
@dtypes(DTYPES)
@pytest.mark.parametrize("shape,dim", [((), ()), ((5,), 0), ((2, 3), -1), ((2, 3, 4), (0, 2)),
                                       ((3, 4), ())])
def test_amax_amin(dtype, shape, dim):
    x = sample(shape, dtype)
    check(lambda x: (torch.amax(x, dim), torch.amin(x, dim, keepdim=True)), x)


@dtypes(FLOAT_DTYPES)
def test_amax_nan(dtype):
    x = sample((3, 4), dtype)
    x[1, 2] = NAN
    x[2, 0] = -INF
    check(lambda x: (torch.amax(x, 1), torch.amin(x, 1), x.max(), x.min()), x)


@dtypes(DTYPES)
@pytest.mark.parametrize("shape", [(), (7,), (3, 4)])
def test_max_min_full(dtype, shape):
    x = sample(shape, dtype)
    check(lambda x: (x.max(), x.min(), torch.aminmax(x)), x)


def test_max_of_empty_errors():
    with pytest.raises(RuntimeError, match="max"):
        compiled(lambda x: x.max(), torch.zeros(0))


@dtypes(DTYPES)
@pytest.mark.parametrize("shape,dim", [((6,), 0), ((3, 5), 1), ((3, 5), -2), ((2, 3, 4), 1),
                                       ((), 0)])
def test_max_min_dim(dtype, shape, dim):
    # small integer range: ties, whose first index eager returns
    x = sample(shape, dtype, low=-2, high=3)
    check(lambda x: (torch.max(x, dim), torch.min(x, dim, keepdim=True)), x)


@dtypes(FLOAT_DTYPES)
def test_max_dim_nan(dtype):
    x = torch.tensor([[1.0, NAN, 3.0, NAN], [2.0, 2.0, -INF, 0.0], [-INF, -INF, -INF, -INF]],
                     dtype=dtype)
    check(lambda x: (torch.max(x, 1), torch.min(x, 1), x.argmax(1), x.argmin(1)), x)


@dtypes(NUM_DTYPES)
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_argmax_argmin(dtype, dim):
    x = sample((4, 5), dtype, low=-2, high=3)
    check(lambda x: (x.argmax(dim), x.argmin(dim, keepdim=True)), x)


@dtypes(DTYPES)
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_aminmax(dtype, dim):
    x = sample((3, 4), dtype)
    check(lambda x: torch.aminmax(x, dim=dim), x)
    check(lambda x: torch.aminmax(x, dim=dim, keepdim=True), x)


# ---------------------------------------------------------------- all / any
@dtypes(DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4)])
def test_all_any(dtype, shape):
    x = sample(shape, dtype, low=0, high=2)
    check(lambda x: (x.all(), x.any()), x)
    if len(shape) == 2:
        check(lambda x: (x.all(1), x.any(-1, keepdim=True), x.all((0, 1)), x.any(dim=(0,))), x)


def test_all_any_nan_is_true():
    x = torch.tensor([NAN, 1.0, 0.0])
    check(lambda x: (x[:2].all(), x.any(), x.all()), x)


# ---------------------------------------------------------------- var / std / norms / logsumexp
@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)])
def test_var_std(dtype, dim):
    x = sample((3, 4, 5), dtype)
    check(lambda x: (torch.var(x, dim, correction=0),
                     torch.std(x, dim, keepdim=True),
                     torch.var_mean(x, dim, correction=2),
                     torch.std_mean(x, dim, correction=1, keepdim=True)), x)


def test_var_unbiased_and_degenerate():
    x = torch.randn(4, 1)
    check(lambda x: (x.var(), x.std(0), x.var(1), x.std(1, unbiased=False)), x)


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("ord", [2, 1, 0, INF, -INF, 3, 0.5])
def test_vector_norm(dtype, ord):
    x = sample((3, 4), dtype)
    x[0, 1] = 0
    check(lambda x: (torch.linalg.vector_norm(x, ord), torch.linalg.vector_norm(x, ord, -1),
                     torch.linalg.vector_norm(x, ord, (0, 1), keepdim=True)), x)


@dtypes(FLOAT_DTYPES)
def test_norm(dtype):
    x = sample((3, 4), dtype)
    check(lambda x: (x.norm(), x.norm(1), x.norm(2, 1, keepdim=True), x.norm(INF, -1),
                     torch.norm(x, dim=0), torch.linalg.vector_norm(x, dtype=torch.float64)), x)


@dtypes(FLOAT_DTYPES, SIGNED_DTYPES)
@pytest.mark.parametrize("dim", [0, -1, (0, 1)])
def test_logsumexp(dtype, dim):
    x = sample((3, 4), dtype)
    check(lambda x: (torch.logsumexp(x, dim), torch.logsumexp(x, dim, keepdim=True)), x)


def test_logsumexp_inf():
    x = torch.tensor([[-INF, -INF], [INF, 1.0], [0.0, 1000.0]])
    check(lambda x: torch.logsumexp(x, 1), x)


# ---------------------------------------------------------------- scans
@dtypes(DTYPES)
@pytest.mark.parametrize("shape,dim", [((), 0), ((6,), 0), ((3, 4), 1), ((3, 4), -2),
                                       ((2, 3, 4), 1), ((0, 3), 1)])
def test_cumsum_cumprod(dtype, shape, dim):
    x = sample(shape, dtype, low=-2, high=3)
    check(lambda x: (torch.cumsum(x, dim), torch.cumprod(x, dim)), x)


@dtypes(NUM_DTYPES)
def test_cumsum_dtype(dtype):
    x = sample((3, 4), dtype, low=0, high=5)
    check(lambda x: (torch.cumsum(x, 1, dtype=torch.float64), x.cumprod(0, dtype=torch.int64)), x)


@dtypes(DTYPES)
@pytest.mark.parametrize("shape,dim", [((), 0), ((7,), 0), ((3, 5), 1), ((3, 5), 0)])
def test_cummax_cummin(dtype, shape, dim):
    x = sample(shape, dtype, low=-2, high=3)
    check(lambda x: (torch.cummax(x, dim), torch.cummin(x, dim)), x)


@dtypes(FLOAT_DTYPES)
def test_cummax_nan(dtype):
    x = torch.tensor([1.0, 3.0, 3.0, NAN, 2.0, NAN, -INF], dtype=dtype)
    check(lambda x: (torch.cummax(x, 0), torch.cummin(x, 0)), x)


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [((), 0), ((6,), 0), ((3, 4), 1), ((3, 4), 0)])
def test_logcumsumexp(dtype, shape, dim):
    x = sample(shape, dtype)
    check(lambda x: torch.logcumsumexp(x, dim), x)


def test_logcumsumexp_inf():
    x = torch.tensor([-INF, -INF, 0.0, INF, 1.0, NAN, 2.0])
    check(lambda x: torch.logcumsumexp(x, 0), x)


# ---------------------------------------------------------------- sorting
@dtypes(DTYPES)
@pytest.mark.parametrize("shape,dim", [((), 0), ((9,), 0), ((3, 6), 1), ((3, 6), 0),
                                       ((2, 3, 4), -2), ((0, 4), 1)])
def test_sort(dtype, shape, dim):
    # many ties: eager's CPU sort is stable, as ours
    x = sample(shape, dtype, low=-3, high=4)
    check(lambda x: (torch.sort(x, dim), torch.sort(x, dim=dim, descending=True, stable=True)), x)


@dtypes(FLOAT_DTYPES)
def test_sort_nan(dtype):
    x = torch.tensor([2.0, NAN, 1.0, -INF, 2.0, NAN, INF, -0.0, 0.0], dtype=dtype)
    check(lambda x: (torch.sort(x), torch.sort(x, descending=True)), x)


@dtypes(NUM_DTYPES)
@pytest.mark.parametrize("k,dim", [(1, -1), (3, -1), (2, 0), (5, 1)])
def test_topk(dtype, k, dim):
    x = distinct((4, 5), dtype)
    check(lambda x: (torch.topk(x, k, dim), torch.topk(x, k, dim, largest=False)), x)


def test_topk_unsorted_and_nan():
    x = torch.tensor([3.0, NAN, 1.0, 5.0, -2.0])
    check(lambda x: torch.topk(x, 2), x)
    out = compiled(lambda x: torch.topk(x, 3, sorted=False), x)
    ref = torch.topk(x, 3, sorted=False)
    assert sorted(out.indices.tolist()) == sorted(ref.indices.tolist())


@dtypes(NUM_DTYPES)
@pytest.mark.parametrize("k,dim,keepdim", [(1, -1, False), (3, 1, True), (2, 0, False)])
def test_kthvalue(dtype, k, dim, keepdim):
    x = distinct((4, 5), dtype)
    check(lambda x: torch.kthvalue(x, k, dim, keepdim), x)


def test_argsort():
    x = sample((3, 6), torch.float32, low=-2, high=2).round()
    check(lambda x: (torch.argsort(x), torch.argsort(x, 0, descending=True),
                     torch.argsort(x, stable=True)), x)


@dtypes(NUM_DTYPES)
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((4, 6), 1), ((4, 6), 0), ((), 0)])
def test_median(dtype, shape, dim):
    x = distinct(shape, dtype)
    check(lambda x: (torch.median(x), torch.median(x, dim), torch.median(x, dim, keepdim=True)),
          x)


def test_median_nan():
    x = torch.tensor([[3.0, NAN, 1.0, NAN, 2.0], [4.0, 1.0, 2.0, 3.0, 0.0]])
    check(lambda x: (torch.median(x), torch.median(x, 1)), x)


# ---------------------------------------------------------------- softmax
@dtypes(LOW_FLOATS)
def test_softmax_dtype(dtype):
    x = sample((3, 5), dtype)
    check(lambda x: (F.softmax(x, -1, dtype=torch.float32),
                     F.log_softmax(x, 0, dtype=torch.float64)), x)


@dtypes(FLOAT_DTYPES)
def test_safe_softmax(dtype):
    x = sample((3, 4), dtype)
    x[1] = -INF
    x[2, 0] = -INF
    check(lambda x: torch.ops.aten._safe_softmax(x, -1), x)
    check(lambda x: torch.ops.aten._safe_softmax(x, 1, dtype=torch.float64), x)


def test_sdpa_with_fully_masked_row():
    q = torch.randn(1, 2, 3, 4)
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[1] = False
    check(lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=mask), q)


# Attention whose scores per head exceed 16 KiB runs one head (and above 1 MiB,
# one block of query rows) per iteration of a parallel loop; each case is a
# class of operand shapes the loop slices differently.
_ONE_ROW_MASK = (torch.rand(2, 1, 1, 300) > 0.3)
_ROW_MASK = torch.randn(2, 1, 90, 300)
_ROW_MASK[0, 0, 7] = -INF  # a fully masked row gives 0, not NaN


@pytest.mark.parametrize("q_shape,kv_shape,mask,causal", [
    ((2, 3, 90, 16), (2, 3, 300, 16), None, False),  # whole heads
    ((2, 3, 90, 16), (2, 1, 300, 16), _ONE_ROW_MASK, False),  # k, v, mask broadcast
    ((2, 3, 90, 16), (2, 3, 300, 16), _ROW_MASK, False),  # rows of the mask sliced
    ((90, 16), (300, 16), torch.rand(300) > 0.5, False),  # no leading dims, 1-D mask
    ((1, 1, 601, 16), (1, 1, 700, 16), None, False),  # row blocks and a remainder
    ((1, 2, 601, 16), (1, 2, 601, 16), None, True),  # causal, row blocks
], ids=["heads", "broadcast", "row-mask", "matrix", "row-blocks", "causal"])
def test_sdpa_per_head(q_shape, kv_shape, mask, causal):
    q, k, v = torch.randn(q_shape), torch.randn(kv_shape), torch.randn(kv_shape)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                        is_causal=causal), q, k, v)


@dtypes(LOW_FLOATS)
def test_sdpa_per_head_low_precision(dtype):
    q, k, v = (torch.randn(1, 2, 300, 32, dtype=dtype) for _ in range(3))
    # Eager's fused kernel rounds once; the scores and probabilities here are
    # rounded to the dtype as in PyTorch's math kernel: about one ulp of 1.
    check(F.scaled_dot_product_attention, q, k, v, atol=1e-2, rtol=1e-2)


# ---------------------------------------------------------------- losses
REDUCTIONS = ["none", "mean", "sum"]


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_losses(dtype, reduction):
    x, t = sample((3, 4), dtype), sample((3, 4), dtype)
    check(lambda x, t: (F.mse_loss(x, t, reduction=reduction),
                        F.l1_loss(x, t, reduction=reduction),
                        F.smooth_l1_loss(x, t, reduction=reduction, beta=0.5),
                        F.smooth_l1_loss(x, t, reduction=reduction, beta=0.0),
                        F.huber_loss(x, t, reduction=reduction, delta=1.5)), x, t)


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses(dtype, reduction):
    x = sample((3, 4), dtype)
    sign = (torch.rand(3, 4) < 0.5).to(dtype) * 2 - 1
    check(lambda x, y: (F.soft_margin_loss(x, y, reduction=reduction),
                        F.hinge_embedding_loss(x, y, reduction=reduction),
                        F.margin_ranking_loss(x, x * 0.5 + 0.2, y, margin=0.3,
                                              reduction=reduction)),
          x, sign)


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(dtype, reduction, weighted):
    x = sample((3, 4), dtype, low=0.05, high=0.95)
    t = sample((3, 4), dtype, low=0, high=1)
    w = sample((4,), dtype, low=0.5, high=2) if weighted else None
    check(lambda x, t: F.binary_cross_entropy(x, t, weight=w, reduction=reduction), x, t)
    logits = sample((3, 4), dtype, low=-4, high=4)
    pw = sample((4,), dtype, low=0.5, high=3) if weighted else None
    # eager evaluates the whole f16/bf16 expression in float32 and rounds once; the
    # compiled formula rounds its weighted terms to the dtype: up to 2 ulps apart
    half = {"atol": 1e-3, "rtol": 4e-3} if dtype == torch.float16 else {}
    check(lambda x, t: F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw,
                                                          reduction=reduction), logits, t, **half)


def test_binary_cross_entropy_clamps_log():
    x = torch.tensor([0.0, 1.0, 0.5])
    t = torch.tensor([1.0, 0.0, 0.5])
    check(lambda x, t: F.binary_cross_entropy(x, t, reduction="none"), x, t)


@dtypes([torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(dtype, reduction, weighted):
    x = sample((5, 4), dtype).log_softmax(1)
    t = torch.tensor([0, 2, 3, 2, 1])
    w = sample((4,), dtype, low=0.5, high=2) if weighted else None
    check(lambda x: (F.nll_loss(x, t, weight=w, reduction=reduction),
                     F.nll_loss(x, t, weight=w, reduction=reduction, ignore_index=2)), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_1d_and_2d(reduction):
    x = torch.randn(4).log_softmax(0)
    check(lambda x: F.nll_loss(x, torch.tensor(2), reduction=reduction), x)
    x = torch.randn(2, 3, 4, 5).log_softmax(1)
    t = torch.randint(0, 3, (2, 4, 5))
    w = torch.rand(3) + 0.5
    check(lambda x: F.nll_loss(x, t, weight=w, reduction=reduction, ignore_index=1), x)


@dtypes([torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy(dtype, reduction):
    x = sample((5, 4), dtype)
    t = torch.tensor([0, 2, 3, 2, 1])
    w = torch.rand(4, dtype=dtype) + 0.5
    check(lambda x: (F.cross_entropy(x, t, reduction=reduction),
                     F.cross_entropy(x, t, weight=w, reduction=reduction, ignore_index=3),
                     F.cross_entropy(x, t, reduction=reduction, label_smoothing=0.1)), x)
    probs = sample((5, 4), dtype, low=0, high=1).softmax(1)
    check(lambda x, p: (F.cross_entropy(x, p, reduction=reduction),
                        F.cross_entropy(x, p, reduction=reduction, label_smoothing=0.2)), x, probs)


def test_cross_entropy_2d():
    x = torch.randn(2, 3, 4, 4)
    t = torch.randint(0, 3, (2, 4, 4))
    check(lambda x: F.cross_entropy(x, t, label_smoothing=0.05), x)


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", ["none", "sum", "batchmean", "mean"])
def test_kl_div(dtype, reduction):
    x = sample((3, 4), dtype).log_softmax(1)
    t = sample((3, 4), dtype).softmax(1)
    # (log_target=False needs aten::xlogy, an elementwise op)
    check(lambda x, t: F.kl_div(x, t.log(), reduction=reduction, log_target=True), x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_other_composite_losses(reduction):
    x, y = torch.randn(4, 6), torch.randn(4, 6)
    sign = torch.tensor([1.0, -1.0, 1.0, -1.0])
    check(lambda x, y: (F.poisson_nll_loss(x, y.abs(), reduction=reduction),
                        F.poisson_nll_loss(x.abs() + 0.1, y.abs(), log_input=False, full=True,
                                           reduction=reduction),
                        F.cosine_embedding_loss(x, y, sign, margin=0.1, reduction=reduction),
                        F.triplet_margin_loss(x, y, x * 0.5 + 0.2, reduction=reduction)), x, y)


@dtypes([torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,weighted", [(1, False), (2, False), (1, True)])
def test_multi_margin_loss(dtype, reduction, p, weighted):
    x = sample((5, 4), dtype)
    t = torch.tensor([0, 2, 3, 2, 1])
    w = torch.rand(4, dtype=dtype) + 0.5 if weighted else None
    check(lambda x: F.multi_margin_loss(x, t, p=p, margin=0.7, weight=w, reduction=reduction), x)
    check(lambda x: F.multi_margin_loss(x[0], t[:1], reduction=reduction), x)


@dtypes([torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(dtype, reduction):
    x = sample((3, 5), dtype)
    t = torch.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1]])
    check(lambda x: F.multilabel_margin_loss(x, t, reduction=reduction), x)
    if reduction != "none":  # 1-D, none: Meta says shape (1,), the CPU kernel ()
        check(lambda x: F.multilabel_margin_loss(x[0], t[0], reduction=reduction), x)
    check(lambda x: torch.ops.aten.multilabel_margin_loss_forward(x, t, 1), x)


def test_prod_of_booleans_is_their_and():
    x = torch.rand(5, 5, 5) > 0.2
    check(lambda t: torch.prod(t, 1, dtype=torch.bool), x)
    check(lambda t: torch.prod(t, 1), x)  # int64 result
