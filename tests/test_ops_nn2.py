"""nn and linear-algebra ops of round 2 (addbmm, glu, trace, cross, renorm,
max_unpool, fold, cdist, pdist, embedding_bag, weight_norm, grid_sample)
against eager PyTorch, per dtype."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import Fn, check
from opsuite import FLOAT_DTYPES, INT_DTYPES, SIGNED_DTYPES, dtypes, sample

import poptorch

# Half-precision results round once from f32; eager may round partial sums
# differently, so allow a few ulps.
HALF_TOL = {torch.float16: dict(atol=2e-2, rtol=2e-2), torch.bfloat16: dict(atol=1e-1, rtol=4e-2)}


def tol(dtype: torch.dtype) -> dict:
    return HALF_TOL.get(dtype, {})


# ---------------------------------------------------------------- batched matmuls
BMM_SHAPES = [
    # (self, batch1, batch2) for baddbmm
    ((2, 3, 5), (2, 3, 4), (2, 4, 5)),
    ((5,), (2, 3, 4), (2, 4, 5)),  # broadcast self
    ((1, 2, 1), (3, 2, 4), (3, 4, 1)),
    ((), (2, 1, 3), (2, 3, 2)),  # 0-dim self
    ((0, 3, 5), (0, 3, 4), (0, 4, 5)),  # empty batch
    ((2, 3, 5), (2, 3, 0), (2, 0, 5)),  # empty contraction
]


def _bmm_inputs(shapes, dtype):
    low, high = (-3, 4) if not dtype.is_floating_point else (None, None)
    return [sample(s, dtype, low=low, high=high) for s in shapes]


# uint8: poptorch.matmul has no unsigned lowering (an error that says so)
@dtypes(FLOAT_DTYPES, SIGNED_DTYPES)
@pytest.mark.parametrize("shapes", BMM_SHAPES, ids=str)
def test_baddbmm(shapes, dtype):
    s, b1, b2 = _bmm_inputs(shapes, dtype)
    if dtype.is_floating_point:
        check(lambda s, b1, b2: torch.baddbmm(s, b1, b2, beta=0.5, alpha=2.0), s, b1, b2,
              **tol(dtype))
    else:
        check(lambda s, b1, b2: torch.baddbmm(s, b1, b2, beta=2, alpha=3), s, b1, b2)


@dtypes(FLOAT_DTYPES)
def test_baddbmm_beta_zero_ignores_nan(dtype):
    s = torch.full((2, 3, 5), float("nan"), dtype=dtype)
    b1, b2 = sample((2, 3, 4), dtype), sample((2, 4, 5), dtype)
    check(lambda s, b1, b2: torch.baddbmm(s, b1, b2, beta=0), s, b1, b2, **tol(dtype))


ADDBMM_SHAPES = [
    ((3, 5), (2, 3, 4), (2, 4, 5)),
    ((5,), (4, 3, 2), (4, 2, 5)),  # broadcast self
    ((), (2, 1, 3), (2, 3, 2)),  # 0-dim self
    ((3, 5), (0, 3, 4), (0, 4, 5)),  # empty batch: beta * self
]


@dtypes(FLOAT_DTYPES, SIGNED_DTYPES)
@pytest.mark.parametrize("shapes", ADDBMM_SHAPES, ids=str)
def test_addbmm(shapes, dtype):
    s, b1, b2 = _bmm_inputs(shapes, dtype)
    if dtype.is_floating_point:
        check(lambda s, b1, b2: torch.addbmm(s, b1, b2, beta=0.5, alpha=2.0), s, b1, b2,
              **tol(dtype))
        check(lambda s, b1, b2: s.addbmm(b1, b2), s, b1, b2, **tol(dtype))
    else:
        check(lambda s, b1, b2: torch.addbmm(s, b1, b2, beta=2, alpha=3), s, b1, b2)


# ---------------------------------------------------------------- glu, trace, cross
@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [((4,), -1), ((2, 6), -1), ((2, 6), 0), ((3, 4, 2), 1),
                                       ((0, 4), 1)], ids=str)
def test_glu(shape, dim, dtype):
    check(lambda x: F.glu(x, dim), sample(shape, dtype), **tol(dtype))


def test_glu_module():
    check(torch.nn.GLU(), torch.randn(3, 8))


@dtypes(FLOAT_DTYPES, INT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (4, 1), (0, 0), (0, 3)], ids=str)
def test_trace(shape, dtype):
    check(torch.trace, sample(shape, dtype), **tol(dtype))


CROSS_CASES = [((3,), (3,), -1), ((4, 3), (4, 3), -1), ((2, 1, 3), (4, 3), -1),
               ((3, 4), (3, 4), 0), ((0, 3), (0, 3), 1), ((2, 3, 2), (1, 3, 1), 1)]


@dtypes(FLOAT_DTYPES, INT_DTYPES)
@pytest.mark.parametrize("case", CROSS_CASES, ids=str)
def test_linalg_cross(case, dtype):
    a_shape, b_shape, dim = case
    if len(a_shape) != len(b_shape):
        b_shape = (1,) * (len(a_shape) - len(b_shape)) + b_shape
    a, b = sample(a_shape, dtype), sample(b_shape, dtype)
    check(lambda a, b: torch.linalg.cross(a, b, dim=dim), a, b, **tol(dtype))


def test_cross_with_dim():
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    check(lambda a, b: torch.cross(a, b, dim=1), a, b)


# ---------------------------------------------------------------- renorm, weight_norm
@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((0, 3), 1)],
                         ids=str)
@pytest.mark.parametrize("p", [1.0, 2.0, 3.5])
def test_renorm(shape, dim, p, dtype):
    check(lambda x: torch.renorm(x, p, dim, 2.5), sample(shape, dtype), **tol(dtype))


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [((3, 4), 0), ((3, 4, 5), 0), ((3, 4, 5), 2), ((3, 4), 1)],
                         ids=str)
def test_weight_norm_interface(shape, dim, dtype):
    v = sample(shape, dtype)
    g_shape = tuple(s if d == dim % len(shape) else 1 for d, s in enumerate(shape))
    g = sample(g_shape, dtype)

    def fn(v, g):
        w, norm = torch._weight_norm_interface(v, g, dim)
        # eager's CPU kernel returns the f16/bf16 norm in f32, its shape
        # inference (which poptorch follows) in the input's dtype
        return w, norm.float()

    check(fn, v, g, **tol(dtype))
    check(lambda v, g: torch._weight_norm(v, g, dim), v, g, **tol(dtype))


def test_weight_norm_module():
    lin = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3)).eval()
    check(lin, torch.randn(2, 4))


# ---------------------------------------------------------------- max_unpool, fold
@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("batched", [True, False])
def test_max_unpool2d(batched, dtype):
    x = sample((2, 3, 6, 8) if batched else (3, 6, 8), dtype)

    def fn(x):
        y, i = F.max_pool2d(x, 2, return_indices=True)
        return F.max_unpool2d(y, i, 2), F.max_unpool2d(y, i, 2, output_size=x.shape[-2:])

    check(fn, x)


@dtypes([torch.float32, torch.float64])
def test_max_unpool2d_input_indices(dtype):
    y = sample((1, 2, 2, 2), dtype)
    i = torch.tensor([[[[0, 3], [10, 15]], [[5, 6], [9, 9]]]])  # a duplicate: the last wins
    check(lambda y, i: F.max_unpool2d(y, i, 2, stride=2), y, i)


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("batched", [True, False])
def test_max_unpool3d(batched, dtype):
    x = sample((2, 2, 4, 5, 6) if batched else (2, 4, 5, 6), dtype)

    def fn(x):
        y, i = F.max_pool3d(x, 2, stride=2, return_indices=True)
        return F.max_unpool3d(y, i, 2, stride=2, output_size=x.shape[-3:])

    check(fn, x)


FOLD_CASES = [
    dict(output_size=(4, 5), kernel_size=2),
    dict(output_size=(5, 5), kernel_size=(2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
    dict(output_size=(4, 4), kernel_size=3, padding=1, stride=2),
    dict(output_size=(3, 3), kernel_size=1),
]


def _fold_cols(cfg, channels):
    ks = cfg["kernel_size"]
    ks = (ks, ks) if isinstance(ks, int) else ks
    unf = torch.nn.Unfold(ks, dilation=cfg.get("dilation", 1), padding=cfg.get("padding", 0),
                          stride=cfg.get("stride", 1))
    return unf(torch.zeros((1, channels) + tuple(cfg["output_size"]))).shape[1:]


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("cfg", FOLD_CASES, ids=str)
@pytest.mark.parametrize("batched", [True, False])
def test_fold(cfg, batched, dtype):
    rows, cols = _fold_cols(cfg, 2)
    x = sample((2, rows, cols) if batched else (rows, cols), dtype)
    check(lambda x: F.fold(x, **cfg), x, **tol(dtype))


def test_fold_of_unfold():
    x = torch.randn(2, 3, 6, 6)
    check(lambda x: F.fold(F.unfold(x, 3, padding=1), (6, 6), 3, padding=1), x)


# ---------------------------------------------------------------- distances
CDIST_SHAPES = [((2, 3, 4), (2, 5, 4)), ((1, 3, 4), (2, 5, 4)), ((3, 4), (5, 4)),
                ((2, 0, 4), (2, 5, 4)), ((3, 0), (2, 0)), ((2, 30, 3), (2, 26, 3))]


@dtypes([torch.float32, torch.float64])
@pytest.mark.parametrize("shapes", CDIST_SHAPES, ids=str)
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist(shapes, p, dtype):
    a, b = sample(shapes[0], dtype), sample(shapes[1], dtype)
    # eager uses |a|^2 + |b|^2 - 2 a.b for p = 2 past 25 rows (less exact)
    kw = dict(atol=1e-4, rtol=1e-4) if p == 2.0 and max(shapes[0][-2], shapes[1][-2]) > 25 else {}
    check(lambda a, b: torch.cdist(a, b, p), a, b, **kw)


@dtypes([torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(5, 4), (1, 3), (2, 0), (6, 1)], ids=str)
@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, float("inf")])
def test_pdist(shape, p, dtype):
    check(lambda x: F.pdist(x, p), sample(shape, dtype))


# ---------------------------------------------------------------- embedding_bag
BAG_CASES = [
    dict(mode="sum"),
    dict(mode="mean"),
    dict(mode="max"),
    dict(mode="sum", per_sample_weights=True),
    dict(mode="mean", include_last_offset=True),
    dict(mode="sum", padding_idx=2),
    dict(mode="mean", padding_idx=2),
    dict(mode="max", padding_idx=2),
]


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("cfg", BAG_CASES, ids=str)
@pytest.mark.parametrize("traced_offsets", [False, True], ids=["const-offsets", "traced-offsets"])
def test_embedding_bag(cfg, traced_offsets, dtype):
    cfg = dict(cfg)
    w = sample((10, 3), dtype)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
    # bags: [0:4], [4:4] (empty), [4:8], [8:10] (only padding when padding_idx=2)
    offsets = torch.tensor([0, 4, 4, 8] + ([10] if cfg.get("include_last_offset") else []))
    psw = sample((10,), dtype) if cfg.pop("per_sample_weights", False) else None

    def fn(w, psw, *offs):
        o = offs[0] if offs else offsets
        return F.embedding_bag(idx, w, o, per_sample_weights=psw, **cfg)

    args = (w, psw, offsets) if traced_offsets else (w, psw)
    check(fn, *args, **tol(dtype))


def test_embedding_bag_2d_input_and_module():
    bag = torch.nn.EmbeddingBag(12, 4, mode="mean").eval()
    idx = torch.tensor([[1, 2, 3], [4, 5, 11]])
    # traced indices with constant offsets (a 2-D traced input would build its
    # offsets with torch.arange on the ipu device, which the capture does not
    # evaluate yet)
    check(lambda i: bag(i, torch.tensor([0, 2, 3])), idx.reshape(-1))
    check(lambda w: F.embedding_bag(idx, w, mode="max"), torch.randn(12, 4))


# ---------------------------------------------------------------- grid_sample
GRID_MODES = [(m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
              for a in (False, True)]


def _grid_id(c):
    return f"{c[0]}-{c[1]}-{'align' if c[2] else 'noalign'}"


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("cfg", GRID_MODES, ids=_grid_id)
def test_grid_sample_2d(cfg, dtype):
    mode, padding, align = cfg
    x = sample((2, 3, 5, 6), dtype)
    grid = sample((2, 4, 7, 2), dtype, low=-1.4, high=1.4)
    check(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align),
          x, grid, **tol(dtype))


@dtypes([torch.float32, torch.float64])
@pytest.mark.parametrize("cfg", GRID_MODES, ids=_grid_id)
def test_grid_sample_3d(cfg, dtype):
    mode, padding, align = cfg
    x = sample((2, 2, 4, 5, 3), dtype)
    grid = sample((2, 3, 2, 4, 3), dtype, low=-1.4, high=1.4)
    check(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align),
          x, grid)


def test_grid_sample_single_pixel_and_affine_grid():
    # size-1 input dims (reflection with align_corners has a zero span)
    x = torch.randn(1, 2, 1, 4)
    g = torch.rand(1, 3, 3, 2) * 3 - 1.5
    check(lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=True), x, g)
    theta = torch.tensor([[[0.8, -0.3, 0.1], [0.2, 1.1, -0.2]]])
    img = torch.randn(1, 3, 8, 8)
    check(lambda t, img: F.grid_sample(img, F.affine_grid(t, (1, 3, 6, 6), align_corners=False),
                                       align_corners=False), theta, img)


def test_grid_sample_bicubic_runs_as_a_host_kernel():
    # the lowering has no bicubic mode: torch's kernel runs it (test_host_kernels.py)
    x, g = torch.randn(1, 1, 4, 4), torch.rand(1, 2, 2, 2) - 0.5
    fn = lambda x, g: F.grid_sample(x, g, mode="bicubic", align_corners=False)  # noqa: E731
    check(fn, x, g)
    with pytest.raises(poptorch.Error, match="bicubic"):
        poptorch.inferenceModel(Fn(fn), poptorch.Options().hostKernels(False))(x, g)


# ---------------------------------------------------------------- antialiased resampling
AA_CASES = [dict(scale_factor=0.5), dict(size=(3, 7)), dict(size=(9, 4)),
            dict(scale_factor=(0.4, 1.0)), dict(size=(3, 5), align_corners=True)]


@dtypes([torch.float32, torch.float64])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("cfg", AA_CASES, ids=str)
def test_interpolate_antialias(cfg, mode, dtype):
    x = sample((2, 3, 8, 10), dtype)
    check(lambda x: F.interpolate(x, mode=mode, antialias=True, **cfg), x)
