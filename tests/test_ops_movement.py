"""Data movement, indexing, padding, resampling and constructors, per dtype, against eager.

Pure data movement runs over every dtype; ops that compute (reductions in
scatters, interpolation) over the dtypes eager PyTorch supports for them
(``eager_or_skip`` skips a combination that eager itself rejects).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import check, compiled
from opsuite import FLOAT_DTYPES, INT_DTYPES, dtypes, sample

import poptorch


def eager_or_skip(fn, *args):
    try:
        with torch.no_grad():
            fn(*args)
    except (RuntimeError, NotImplementedError) as e:
        pytest.skip(f"eager rejects it: {str(e).splitlines()[0]}")
    check(fn, *args)


def L(*values) -> torch.Tensor:  # noqa: N802
    """A long tensor: L(1, 2) is 1-D, L([1, 2], [3, 4]) 2-D, L([[1, 2]]) the list itself."""
    if len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    return torch.tensor(values, dtype=torch.long)


# ---------------------------------------------------------------- reordering
@dtypes()
@pytest.mark.parametrize("shape,dims", [((5,), [0]), ((2, 3, 4), [0, 2]), ((0, 3), [1]),
                                        ((), [])])
def test_flip(dtype, shape, dims):
    check(lambda x: torch.flip(x, dims), sample(shape, dtype))


@dtypes()
@pytest.mark.parametrize("shape,shifts,dims", [((5,), 2, 0), ((2, 3, 4), (1, -5), (0, 2)),
                                               ((2, 3), 4, None), ((0, 3), 1, 1)])
def test_roll(dtype, shape, shifts, dims):
    check(lambda x: torch.roll(x, shifts, dims), sample(shape, dtype))


@dtypes()
@pytest.mark.parametrize("shape,reps", [((2, 3), (2, 1, 3)), ((), (2,)), ((0, 2), (2, 2)),
                                        ((3,), (1,))])
def test_repeat(dtype, shape, reps):
    check(lambda x: x.repeat(*reps), sample(shape, dtype))


@dtypes()
def test_tile_and_repeat_interleave(dtype):
    x = sample((2, 3), dtype)
    check(lambda x: torch.tile(x, (2,)), x)
    check(lambda x: torch.repeat_interleave(x, 2, 1), x)


@dtypes()
@pytest.mark.parametrize("fn", [
    lambda x: torch.stack([x, x], 1),
    lambda x: torch.split(x, 2, 2),
    lambda x: torch.split(x, [1, 3], 2),
    lambda x: x.unbind(1),
    lambda x: torch.chunk(x, 2, 0),
    lambda x: torch.narrow(x, 2, 1, 2),
    lambda x: torch.movedim(x, 0, 2),
    lambda x: x.unfold(2, 2, 1),
    lambda x: x.unfold(1, 2, 2),
    lambda x: torch.diagonal(x, 1, 1, 2),
    lambda x: torch.diagonal(x, -1, 2, 0),
    lambda x: torch.diag_embed(x),
    lambda x: torch.diag_embed(x, -1, 0, 2),
    lambda x: torch.tril(x),
    lambda x: torch.triu(x, 1),
    lambda x: torch.tril(x, -2),
    lambda x: x[:, :1].expand_as(x),
], ids=["stack", "split", "split_sizes", "unbind", "chunk", "narrow", "movedim", "unfold",
        "unfold_step", "diagonal", "diagonal_neg", "diag_embed", "diag_embed_dims", "tril",
        "triu", "tril_neg", "expand_as"])
def test_views_and_copies(dtype, fn):
    check(fn, sample((2, 3, 4), dtype))


@dtypes()
def test_shuffles(dtype):
    x = sample((2, 6, 2, 3), dtype)
    check(lambda x: F.channel_shuffle(x, 3), x)
    check(lambda x: F.pixel_shuffle(x, 2)[:, :, 1:], sample((1, 8, 2, 3), dtype))
    check(lambda x: F.pixel_unshuffle(x, 2), sample((1, 2, 4, 6), dtype))


@dtypes()
def test_unfold_im2col(dtype):
    x = sample((2, 2, 5, 6), dtype)
    eager_or_skip(lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), x)


@dtypes()
def test_tril_empty_and_batched(dtype):
    check(lambda x: torch.tril(x, 1), sample((0, 4), dtype))
    check(lambda x: torch.triu(x, -1), sample((2, 1, 3, 5), dtype))


# ---------------------------------------------------------------- padding
@dtypes()
@pytest.mark.parametrize("pad", [(1, 2), (1, 0, 2, 1), (-1, 2, 0, 1)])
def test_constant_pad(dtype, pad):
    check(lambda x: F.pad(x, pad, value=1), sample((2, 3, 4), dtype))


@dtypes()
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [((2, 5), (2, 1)), ((1, 2, 4, 5), (1, 2, 3, 0)),
                                       ((1, 2, 3, 4, 5), (1, 1, 0, 2, 2, 1))])
def test_pad_modes(dtype, mode, shape, pad):
    eager_or_skip(lambda x: F.pad(x, pad, mode=mode), sample(shape, dtype))


@pytest.mark.parametrize("pad", [(-1, 1, -2, 1), (1, 2, 2, -1), (-1, -1, 0, 3)])
def test_circular_pad_with_negative_pads_wraps_within_what_is_kept(pad):
    check(lambda x: F.pad(x, pad, mode="circular"), torch.randn(1, 3, 4, 4))


# ---------------------------------------------------------------- gathers
@dtypes()
def test_gather(dtype):
    x = sample((3, 4), dtype)
    i = L([0, 2, 1], [3, 3, 0])
    check(lambda x: torch.gather(x, 1, i), x)
    check(lambda x: torch.gather(x, 0, L([[2, 0, 1, 1]])), x)


@dtypes()
def test_gather_traced_index(dtype):
    check(lambda x, i: torch.gather(x, 1, i), sample((3, 4), dtype), L([0, 2], [3, 1], [1, 1]))


@dtypes()
@pytest.mark.parametrize("dim,index", [(0, [2, 0, 2]), (1, [3, 0]), (1, [])])
def test_index_select(dtype, dim, index):
    check(lambda x: torch.index_select(x, dim, L(*index)), sample((3, 4), dtype))


@dtypes()
@pytest.mark.parametrize("fn", [
    lambda x: x[L(1, 0, -1)],
    lambda x: x[:, L(0, 2)],
    lambda x: x[L(0, 1), :, L(3, 1)],
    lambda x: x[L([0], [1]), L(2, 0)],
    lambda x: x[:, L(1, 2), L([0], [3])],
    lambda x: x[..., L(0, 0)],
    lambda x: x[1, :, L(0, 3)],
    lambda x: x[torch.tensor([True, False])],
    lambda x: x[:, torch.tensor([[True, False, True, False]] * 3)],
], ids=["first", "middle", "separated", "broadcast", "adjacent_bcast", "last", "int_and_tensor",
        "const_mask", "const_mask_2d"])
def test_advanced_indexing(dtype, fn):
    check(fn, sample((2, 3, 4), dtype))


@dtypes()
def test_take(dtype):
    check(lambda x: torch.take(x, L([0, 5], [-1, 3])), sample((2, 3), dtype))


def test_traced_indices_wrap_negative():
    check(lambda x, i: x[i], torch.randn(4, 2), L(-1, 0, 3))


def test_constant_index_out_of_range_is_an_error():
    with pytest.raises(RuntimeError, match=r"index 5 is out of bounds for size 3.*"):
        poptorch.trace(lambda x: torch.index_select(x, 0, L(0, 5)), torch.randn(3, 2))
    with pytest.raises(RuntimeError, match=r"aten::gather.*test_ops_movement.py:\d+.*out of"):
        poptorch.trace(lambda x: torch.gather(x, 0, L([[3, 0]])), torch.randn(3, 2))


def test_traced_bool_mask_without_host_kernels_is_a_clear_error():
    # With host kernels (the default) they run guarded (test_host_kernels.py).
    with pytest.raises(RuntimeError, match=r"index.Tensor.*test_ops_movement.py:\d+.*depends on"):
        poptorch.trace(lambda x: x[x > 0], torch.randn(3, 2), host_kernels=False)
    with pytest.raises(RuntimeError, match=r"masked_select.*test_ops_movement.py:\d+"):
        poptorch.trace(lambda x: torch.masked_select(x, x > 0), torch.randn(3, 2),
                       host_kernels=False)
    with pytest.raises(RuntimeError, match=r"unique.*test_ops_movement.py:\d+"):
        poptorch.trace(lambda x: torch.unique(x), torch.randn(3, 2), host_kernels=False)


# ---------------------------------------------------------------- scatters
@dtypes()
def test_scatter(dtype):
    x, src = sample((3, 4), dtype), sample((2, 4), dtype)
    i = L([0, 1, 2, 0], [2, 0, 1, 1])
    check(lambda x, s: x.scatter(0, i, s), x, src)
    value = sample((), dtype).item()
    check(lambda x: x.scatter(1, L([[3, 0]]), value), x)
    check(lambda x, s: x.scatter(0, i, s, reduce="add"), x, src)


@dtypes(FLOAT_DTYPES, INT_DTYPES)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(dtype, reduce, include_self):
    x, src = sample((3, 4), dtype), sample((3, 4), dtype, low=1, high=3)
    i = L([0, 1, 0, 0], [2, 1, 0, 0], [0, 1, 2, 0])
    eager_or_skip(lambda x, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
                  x, src)


@dtypes()
def test_scatter_add_and_index_add(dtype):
    x, src = sample((3, 4), dtype), sample((3, 2), dtype)
    eager_or_skip(lambda x, s: x.scatter_add(1, L([0, 0], [1, 3], [2, 2]), s), x, src)
    eager_or_skip(lambda x, s: x.index_add(1, L(3, 3), s), x, src)
    if dtype.is_floating_point:
        eager_or_skip(lambda x, s: x.index_add(1, L(3, 0), s, alpha=2), x, src)


@dtypes()
def test_index_copy_fill(dtype):
    x = sample((3, 4), dtype)
    check(lambda x, s: x.index_copy(0, L(2, 0), s), x, sample((2, 4), dtype))
    check(lambda x: x.index_fill(1, L(1, 3), 1), x)
    check(lambda x, v: x.index_fill(1, L(0), v), x, sample((), dtype))


@dtypes()
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(dtype, accumulate):
    x, v = sample((3, 4), dtype), sample((2,), dtype)
    eager_or_skip(lambda x, v: x.index_put((L(0, 2), L(1, 1)), v, accumulate=accumulate), x, v)
    eager_or_skip(lambda x, v: x.index_put((L(1),), v[:1], accumulate=accumulate), x, v)


@dtypes()
def test_setitem(dtype):
    def fn(x, v):
        y = x.clone()
        y[:, L(0, 2)] = v
        y[L(1)] = 0
        return y
    check(fn, sample((3, 4), dtype), sample((3, 1), dtype))


@dtypes()
def test_masked_scatter(dtype):
    x, m = sample((3, 4), dtype), torch.rand(3, 4) < 0.5
    check(lambda x, m, s: x.masked_scatter(m, s), x, m, sample((4, 4), dtype))
    check(lambda x, m, s: x.masked_scatter(m, s), x, m[0], sample((12,), dtype))


# ---------------------------------------------------------------- resampling
NEAREST_DTYPES = [*FLOAT_DTYPES, torch.uint8]


@dtypes(NEAREST_DTYPES)
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 5), {"size": 7}), ((1, 2, 3, 4), {"scale_factor": 2}),
    ((1, 2, 5, 4), {"size": (3, 9)}), ((1, 2, 3, 4), {"scale_factor": (1.7, 0.6)}),
    ((1, 1, 2, 3, 4), {"scale_factor": 1.5}),
])
def test_interpolate_nearest(dtype, mode, shape, kw):
    eager_or_skip(lambda x: F.interpolate(x, mode=mode, **kw), sample(shape, dtype))


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode,shape,kw", [
    ("linear", (2, 3, 5), {"size": 8}), ("linear", (2, 3, 5), {"scale_factor": 0.7}),
    ("bilinear", (1, 2, 3, 4), {"scale_factor": 2}), ("bilinear", (1, 2, 5, 4), {"size": (3, 9)}),
    ("trilinear", (1, 1, 2, 3, 4), {"scale_factor": (2, 1.5, 0.5)}),
    ("bicubic", (1, 2, 4, 5), {"size": (7, 3)}), ("bicubic", (1, 1, 3, 4), {"scale_factor": 2}),
])
def test_interpolate_linear(dtype, align_corners, mode, shape, kw):
    # eager rounds reduced-precision intermediates differently: compare at their resolution
    tol = {torch.bfloat16: 0.05, torch.float16: 0.01}.get(dtype)
    x = sample(shape, dtype)
    if tol:
        with torch.no_grad():
            expected = F.interpolate(x, mode=mode, align_corners=align_corners, **kw)
        torch.testing.assert_close(
            compiled(lambda x: F.interpolate(x, mode=mode, align_corners=align_corners, **kw), x),
            expected, atol=tol, rtol=tol)
        return
    eager_or_skip(lambda x: F.interpolate(x, mode=mode, align_corners=align_corners, **kw),
                  sample(shape, dtype))


# ---------------------------------------------------------------- constructors
@dtypes()
@pytest.mark.parametrize("fn", [
    lambda x: torch.zeros_like(x),
    lambda x: torch.ones_like(x) + x,
    lambda x: torch.full_like(x, 1),
    lambda x: torch.empty_like(x).fill_(2) + x,
    lambda x: x.new_ones(3),
    lambda x: x.new_zeros((2, x.shape[0])),
    lambda x: x.new_full((2,), 1),
    lambda x: x.new_empty(0),
    lambda x: torch.zeros(x.shape, dtype=x.dtype) + x,
    lambda x: (x * 1).fill_(1),
    lambda x: (x * 1).zero_(),
    lambda x: (x * 1).fill_(x[0, 0]),
    lambda x: torch.full((2, 3), 2, dtype=x.dtype),
    lambda x: torch.scalar_tensor(1, dtype=x.dtype),
], ids=["zeros_like", "ones_like", "full_like", "empty_like", "new_ones", "new_zeros", "new_full",
        "new_empty", "zeros_shape", "fill_", "zero_", "fill_tensor", "full", "scalar_tensor"])
def test_constructors(dtype, fn):
    check(fn, sample((3, 4), dtype))


@pytest.mark.parametrize("fn", [
    lambda x: x + torch.arange(4),
    lambda x: x + torch.arange(1, 3, 0.5),
    lambda x: x + torch.linspace(0, 1, 4),
    lambda x: x + torch.logspace(0, 2, 4, dtype=torch.float64),
    lambda x: x @ torch.eye(4),
    lambda x: x + torch.tensor([1, 2, 3, 4]),
    lambda x: x * torch.ones(4, dtype=torch.int32),
], ids=["arange", "arange_float", "linspace", "logspace", "eye", "tensor", "ones_int"])
def test_factories_in_model(fn):
    check(fn, torch.randn(3, 4))


def test_constructor_output_is_not_folded_when_it_depends_on_input():
    fn = lambda x: (x * 2).fill_(5).sum() + x.zero_().sum()  # noqa: E731
    exe = poptorch.trace(fn, torch.randn(2, 2)).compile()
    assert exe(torch.randn(2, 2)).item() == 20


@pytest.mark.parametrize("name, fn, args", [
    # a 0-d input is indexed as if it had one dim of size 1
    ("gather-0d-input", lambda x, i: torch.gather(x, 0, i), (torch.tensor(2.5), torch.tensor([0]))),
    ("index_select-0d-input", lambda x, i: torch.index_select(x, 0, i),
     (torch.tensor(2.5), torch.tensor([0]))),
    ("take-0d-index", lambda x, i: torch.take(x, i), (torch.randn(5), torch.tensor(3))),
    ("take-one-element", lambda x, i: torch.take(x, i), (torch.randn(1), torch.tensor(0))),
])
def test_indexing_with_0d_operands(name, fn, args):
    check(fn, *args)


def _write_diagonal(x):
    y = x * 1
    y.diagonal(1).add_(10)
    return y


@pytest.mark.parametrize("name, fn, args", [
    ("diagonal_scatter", lambda x, v: torch.diagonal_scatter(x, v), (torch.randn(5, 5), torch.randn(5))),
    ("diagonal_scatter-offset-dims",
     lambda x, v: torch.diagonal_scatter(x, v, -1, 0, 2), (torch.randn(4, 3, 5), torch.randn(3, 3))),
    ("as_strided_scatter", lambda x, v: torch.as_strided_scatter(x, v, (2, 2), (1, 2)),
     (torch.randn(3, 3), torch.randn(2, 2))),
    ("write-into-diagonal-view", _write_diagonal, (torch.randn(4, 4),)),
])
def test_writes_into_views_read_by_position(name, fn, args):
    # a diagonal, an as_strided: neither a slice nor a permutation of the base
    check(fn, *args)
