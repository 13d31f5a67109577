"""Each op of the spine on its own, compiled and compared with eager PyTorch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import check, compiled


def R(*shape: int) -> torch.Tensor:  # noqa: N802
    return torch.randn(shape)


# ---------------------------------------------------------------- linear algebra
@pytest.mark.parametrize("in_shape", [(4,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(in_shape, bias):
    w, b = R(5, 4), R(5) if bias else None
    check(lambda x: F.linear(x, w, b), R(*in_shape))


@pytest.mark.parametrize("a,b", [
    ((4,), (4,)),            # dot
    ((4,), (4, 3)),          # vector-matrix
    ((3, 4), (4,)),          # matrix-vector
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)),     # batched @ matrix
    ((4,), (2, 4, 5)),       # vector @ batched
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),  # broadcast batch dims
])
def test_matmul(a, b):
    check(torch.matmul, R(*a), R(*b))


@pytest.mark.parametrize("bias_shape", [(3, 5), (5,), (1, 5), ()])
def test_addmm(bias_shape):
    check(lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=2.0),
          R(*bias_shape), R(3, 4), R(4, 5))


def test_bmm():
    check(torch.bmm, R(2, 3, 4), R(2, 4, 5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_dot_mv(dtype):
    a, v = (R(3, 4) * 4).to(dtype), (R(4) * 4).to(dtype)
    check(torch.dot, v, (R(4) * 4).to(dtype))
    check(torch.mv, a, v)
    check(lambda x, y: x @ y, v, v)


@pytest.mark.parametrize("bias_shape", [(3,), (1,), ()])
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0), (0.0, 1.0)])
def test_addmv(bias_shape, beta, alpha):
    check(lambda b, x, y: torch.addmv(b, x, y, beta=beta, alpha=alpha),
          R(*bias_shape), R(3, 4), R(4))


def test_addmv_beta_zero_ignores_nan():
    check(lambda b, x, y: torch.addmv(b, x, y, beta=0.0), torch.full((3,), float("nan")),
          R(3, 4), R(4))


# ---------------------------------------------------------------- elementwise
SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (1, 5, 1)), ((), (2, 3)),
               ((2, 3), ())]


@pytest.mark.parametrize("op", [torch.add, torch.sub, torch.mul, torch.div])
@pytest.mark.parametrize("a,b", SHAPE_PAIRS)
def test_binary_tensor(op, a, b):
    check(op, R(*a), R(*b).abs() + 0.5)


@pytest.mark.parametrize("op", [lambda x: x + 2.5, lambda x: x - 2.5, lambda x: x * 2.5,
                                lambda x: x / 2.5, lambda x: 2.5 - x, lambda x: 2.5 / x,
                                lambda x: 2.5 * x + 1, lambda x: x ** 2, lambda x: -x])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_binary_scalar(op, shape):
    check(op, R(*shape).abs() + 0.5)


@pytest.mark.parametrize("op", [torch.add, torch.sub])
def test_alpha(op):
    check(lambda x, y: op(x, y, alpha=3.0), R(2, 3), R(3))
    check(lambda x: op(x, 1.5, alpha=2), R(2, 3))


UNARY = {
    "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "silu": F.silu,
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "exp": torch.exp,
    "abs": torch.abs, "neg": torch.neg, "erf": torch.erf, "sqrt": lambda x: torch.sqrt(x.abs()),
    "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1), "log": lambda x: torch.log(x.abs() + 0.1),
    "reciprocal": lambda x: torch.reciprocal(x + 10),
}


@pytest.mark.parametrize("name,shape", [
    (name, shape) for name in UNARY for shape in [(), (7,), (2, 3, 5)]])
def test_unary(name, shape):
    check(UNARY[name], R(*shape) * 3)


@pytest.mark.parametrize("module", [torch.nn.ReLU(inplace=True),
                                    torch.nn.GELU(),
                                    torch.nn.GELU(approximate="tanh"),
                                    torch.nn.SiLU(inplace=True)], ids=str)
def test_activation_modules(module):
    check(module, R(2, 8))


def test_maximum_minimum_pow():
    check(torch.maximum, R(2, 3), R(3))
    check(torch.minimum, R(2, 3), R(3))
    check(torch.pow, R(2, 3).abs() + 0.1, R(3))


# ---------------------------------------------------------------- integer, bool, promotion
def test_int_add_mul():
    a = torch.randint(-50, 50, (2, 3))
    b = torch.randint(-50, 50, (3,))
    check(lambda x, y: x + y, a, b)
    check(lambda x, y: x * y - 3, a, b)
    check(lambda x, y: x + y, a.int(), b.int())


def test_int_tensor_plus_float_scalar_promotes():
    check(lambda x: x + 1.5, torch.arange(6).reshape(2, 3))


def test_int_plus_float_tensor_promotes():
    check(lambda x, y: x * y, torch.arange(6).reshape(2, 3), R(3))


def test_int_true_division_promotes():
    check(lambda x, y: x / y, torch.arange(6).reshape(2, 3), torch.tensor([1, 2, 4]))


def test_float_to_int_cast():
    check(lambda x: (x * 10).to(torch.int32) + 1, R(2, 3))


def test_bool_cast_and_arithmetic():
    check(lambda x: x.to(torch.bool).to(torch.float32) * 2, torch.tensor([0.0, 1.0, -2.0]))


# ---------------------------------------------------------------- comparisons, logical, where
NAN = float("nan")


def check_nan(fn, *args) -> None:
    """`check` for results that hold NaN where eager's do (assert_close treats NaN as unequal)."""
    with torch.no_grad():
        expected = fn(*args)
    torch.testing.assert_close(compiled(fn, *args), expected, equal_nan=True)


def values(shape, dtype):
    """Values with repeats (so that == and <= see ties) and, for floats, NaN and +-inf."""
    x = torch.randint(-3, 4, shape)
    if dtype == torch.bool:
        return x > 0
    if not dtype.is_floating_point:
        return x.to(dtype)
    x = x.to(dtype) / 2
    flat = x.view(-1)
    specials = (NAN, float("inf"), -float("inf"), NAN)
    for i, special in zip(range(0, flat.numel(), 3), specials, strict=False):
        flat[i] = special
    return x


COMPARISONS = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
               "ge": torch.ge}
COMPARE_DTYPES = [torch.float32, torch.float16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("a,b", SHAPE_PAIRS)
@pytest.mark.parametrize("dtype", COMPARE_DTYPES, ids=str)
def test_comparison_tensor(name, a, b, dtype):
    check(COMPARISONS[name], values(a, dtype), values(b, dtype))


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("scalar", [0, 1.5, -1, NAN, True], ids=str)
@pytest.mark.parametrize("dtype", COMPARE_DTYPES, ids=str)
def test_comparison_scalar(name, scalar, dtype):
    op = COMPARISONS[name]
    check(lambda x: op(x, scalar), values((2, 5), dtype))
    check(lambda x: op(x, scalar), values((), dtype))


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("a,b", [(torch.int64, torch.float32), (torch.bool, torch.int32),
                                 (torch.int32, torch.int64), (torch.float16, torch.float32)],
                         ids=str)
def test_comparison_promotes_to_common_dtype(name, a, b):
    # int 2 vs float 2.5: a comparison after casting to int would see 2 == 2
    check(COMPARISONS[name], values((2, 5), a), values((5,), b) + (0.5 if b.is_floating_point
                                                                   else 0))
    check(lambda x: COMPARISONS[name](x, 1.5), torch.tensor([1, 2, 3]).to(a))


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_inplace_and_operators(name):
    def inplace(x, y):
        x = x.clone()
        getattr(x, name + "_")(y)
        return x
    check(inplace, values((2, 5), torch.float32), values((5,), torch.float32))
    check(lambda x, y: (x > y) & (x != 0) | (y <= 1), R(2, 3), R(3))


LOGICAL = {"and": torch.logical_and, "or": torch.logical_or, "xor": torch.logical_xor}


@pytest.mark.parametrize("name", LOGICAL)
@pytest.mark.parametrize("a,b", SHAPE_PAIRS)
@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float32), (torch.int64, torch.float32),
                                    (torch.bool, torch.bool), (torch.bool, torch.int32)],
                         ids=str)
def test_logical_binary(name, a, b, dtypes):
    check(LOGICAL[name], values(a, dtypes[0]), values(b, dtypes[1]))


@pytest.mark.parametrize("dtype", COMPARE_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 5)])
def test_logical_not(dtype, shape):
    check(torch.logical_not, values(shape, dtype))


@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.int64, torch.uint8], ids=str)
@pytest.mark.parametrize("op", [torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor])
def test_bitwise_binary(op, dtype):
    x = values((2, 5), dtype) if dtype != torch.uint8 else torch.arange(10, dtype=dtype) * 25
    check(op, x, x.flip(-1))
    check(op, x, x[0])
    check(lambda t: op(t, True if dtype == torch.bool else 6), x)


@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.int64, torch.uint8], ids=str)
def test_bitwise_not(dtype):
    x = values((2, 5), dtype) if dtype != torch.uint8 else torch.arange(10, dtype=dtype) * 25
    check(torch.bitwise_not, x)
    check(lambda t: ~t, x)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), ()),
                                    ((3,), (2, 1), (2, 3)), ((), (2, 3), (2, 3))], ids=str)
@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float32), (torch.int64, torch.float32),
                                    (torch.int32, torch.int32), (torch.bool, torch.bool),
                                    (torch.float16, torch.float16)], ids=str)
def test_where(shapes, dtypes):
    c, a, b = shapes
    check_nan(torch.where, values(c, torch.bool), values(a, dtypes[0]), values(b, dtypes[1]))


def test_where_scalar_branches():
    check(lambda x: torch.where(x > 0, x, 0.0), R(2, 3))
    check(lambda x: torch.where(x > 0, 1.5, x), R(2, 3))
    check(lambda x: torch.where(x > 0, x, torch.zeros_like(x)), R(2, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.float16], ids=str)
@pytest.mark.parametrize("mask_shape", [(2, 3), (3,), ()], ids=str)
def test_masked_fill(dtype, mask_shape):
    x, m = values((2, 3), dtype), values(mask_shape, torch.bool)
    fill = True if dtype == torch.bool else -2.7
    check_nan(lambda t, k: t.masked_fill(k, fill), x, m)
    check_nan(lambda t, k: t.masked_fill(k, torch.tensor(fill)), x, m)
    check_nan(lambda t, k, v: t.masked_fill(k, v), x, m, torch.tensor(fill))

    def inplace(t, k):
        t = t.clone()
        t.masked_fill_(k, fill)
        return t
    check_nan(inplace, x, m)


def test_masked_fill_minus_inf_softmax():
    check(lambda x, m: torch.softmax(x.masked_fill(m, float("-inf")), -1), R(2, 4),
          torch.tensor([False, True, False, True]))


# ---------------------------------------------------------------- clamp
CLAMP_X = torch.tensor([[NAN, 1.0, 5.0, -3.0], [0.0, 2.0, NAN, 4.0]])


@pytest.mark.parametrize("lo,hi", [(0.0, 2.0), (None, 2.0), (0.0, None), (3.0, 1.0),
                                   (NAN, 1.0), (0.0, NAN)], ids=str)
def test_clamp_scalar(lo, hi):
    check_nan(lambda x: torch.clamp(x, lo, hi), CLAMP_X)
    check_nan(lambda x: torch.clamp(x, lo, hi), CLAMP_X.half())
    if lo is not None:
        check_nan(lambda x: torch.clamp_min(x, lo), CLAMP_X)
    if hi is not None:
        check_nan(lambda x: torch.clamp_max(x, hi), CLAMP_X)


@pytest.mark.parametrize("lo_shape,hi_shape", [((4,), (4,)), ((2, 4), ()), ((3, 1, 1), None),
                                               (None, (1, 4))], ids=str)
def test_clamp_tensor(lo_shape, hi_shape):
    lo = None if lo_shape is None else values(lo_shape, torch.float32)
    hi = None if hi_shape is None else values(hi_shape, torch.float32) + 1
    check_nan(lambda x, a, b: torch.clamp(x, a, b), CLAMP_X, lo, hi)
    if lo is not None:
        check_nan(torch.clamp_min, CLAMP_X, lo)
    if hi is not None:
        check_nan(torch.clamp_max, CLAMP_X, hi)


def test_clamp_int_and_promotion():
    x = torch.arange(-5, 5).reshape(2, 5)
    check(lambda t: torch.clamp(t, -2, 3), x)
    check(lambda t: torch.clamp(t, min=1.5), x)  # int tensor, float bound: float result
    check(lambda t: torch.clamp(t, max=torch.tensor(2.5)), x)
    check(lambda t, a: torch.clamp(t, a), x.int(), torch.tensor([0, 1, 2, 3, 4]))
    check(lambda t: t.clamp_(0, 2) * 2, x.clone())
    check(F.relu6, R(2, 5) * 8)
    check(torch.nn.Hardtanh(-0.5, 0.5), R(2, 5))


def test_float64():
    check(lambda x, y: torch.tanh(x @ y) + 1, R(3, 4).double(), R(4, 2).double())


# ---------------------------------------------------------------- softmax
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1),
                                       ((2, 3, 4), -1)])
def test_softmax(fn, shape, dim):
    check(lambda x: fn(x, dim=dim), R(*shape) * 4)


def test_softmax_large_values_stable():
    check(lambda x: F.softmax(x, dim=-1), torch.tensor([[1000.0, 0.0, -1000.0], [3.0, 2.0, 1.0]]))


# ---------------------------------------------------------------- convolution, pooling
@pytest.mark.parametrize("cfg", [
    dict(),
    dict(stride=2),
    dict(padding=1),
    dict(padding=(2, 1), stride=(1, 2)),
    dict(dilation=2, padding=2),
    dict(groups=2),
    dict(groups=4, out=4),         # depthwise
    dict(bias=False),
    dict(padding="same", kernel=3),
], ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_conv2d(cfg):
    cfg = dict(cfg)
    groups, out = cfg.pop("groups", 1), cfg.pop("out", 6)
    kernel, bias = cfg.pop("kernel", 3), cfg.pop("bias", True)
    conv = torch.nn.Conv2d(4, out, kernel, groups=groups, bias=bias, **cfg).eval()
    check(conv, R(2, 4, 9, 10))


def test_conv2d_batch1_rectangular_kernel():
    check(torch.nn.Conv2d(3, 5, (1, 3), padding=(0, 1)).eval(), R(1, 3, 6, 7))


def test_conv1d():
    check(torch.nn.Conv1d(3, 5, 3, padding=1).eval(), R(2, 3, 10))


@pytest.mark.parametrize("cfg", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, stride=1, dilation=2),
], ids=str)
def test_max_pool2d(cfg):
    check(lambda x: F.max_pool2d(x, **cfg), R(2, 3, 9, 8))


def test_max_pool2d_negative_inputs_with_padding():
    check(lambda x: F.max_pool2d(x, 3, 2, 1), -R(1, 2, 7, 7).abs() - 1)


@pytest.mark.parametrize("cfg", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, divisor_override=3),
], ids=str)
def test_avg_pool2d(cfg):
    check(lambda x: F.avg_pool2d(x, **cfg), R(2, 3, 9, 8))


@pytest.mark.parametrize("out_size", [
    1, (1, 1), (4, 5), (2, 5), (3, 3)])
def test_adaptive_avg_pool2d(out_size):
    check(lambda x: F.adaptive_avg_pool2d(x, out_size), R(2, 3, 8, 10))


# ---------------------------------------------------------------- normalisation
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval(affine):
    bn = torch.nn.BatchNorm2d(4, affine=affine).eval()
    bn.running_mean.copy_(R(4))
    bn.running_var.copy_(R(4).abs() + 0.5)
    if affine:
        torch.nn.init.normal_(bn.weight)
        torch.nn.init.normal_(bn.bias)
    check(bn, R(2, 4, 5, 5))


def test_batch_norm1d_eval():
    bn = torch.nn.BatchNorm1d(6).eval()
    bn.running_mean.copy_(R(6))
    bn.running_var.copy_(R(6).abs() + 0.5)
    check(bn, R(3, 6))


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,normalized", [((2, 8), (8,)), ((2, 3, 8), (8,)),
                                              ((2, 3, 4), (3, 4))])
def test_layer_norm(affine, shape, normalized):
    ln = torch.nn.LayerNorm(normalized, elementwise_affine=affine).eval()
    if affine:
        torch.nn.init.normal_(ln.weight)
        torch.nn.init.normal_(ln.bias)
    check(ln, R(*shape) * 3 + 1)


# ---------------------------------------------------------------- data movement
@pytest.mark.parametrize("fn", [
    lambda x: x.reshape(6, 4),
    lambda x: x.view(-1),
    lambda x: x.view(2, 12).t(),
    lambda x: x.permute(2, 0, 1),
    lambda x: x.transpose(0, 2),
    lambda x: x.transpose(-1, -2).contiguous(),
    lambda x: x.flatten(),
    lambda x: x.flatten(1),
    lambda x: x.permute(1, 0, 2).reshape(3, 8),
    lambda x: x.unsqueeze(0),
    lambda x: x.unsqueeze(-1),
    lambda x: x.unsqueeze(1).squeeze(1),
    lambda x: x[:, :1].squeeze(),
    lambda x: x[:, :1].squeeze(1),
    lambda x: x[0],
    lambda x: x[:, 1],
    lambda x: x[..., -1],
    lambda x: x[:, 1:3],
    lambda x: x[:, ::2, 1:],
    lambda x: x[-1:, :, -3:-1],
    lambda x: x[:, None, 2:],
    lambda x: x.select(2, 3),
    lambda x: x.narrow(2, 1, 2),
    lambda x: x[:, :1].expand(2, 5, 4),
    lambda x: x[0, 0].expand(3, 4),
    lambda x: x.sum(0).expand(2, 3, 4),
    lambda x: x.chunk(2, dim=2)[1],
    lambda x: x.split([1, 2], dim=1)[1],
], ids=lambda f: f.__code__.co_firstlineno.__str__())
def test_data_movement(fn):
    check(fn, R(2, 3, 4))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim):
    check(lambda a, b: torch.cat([a, b, a], dim=dim), R(2, 3, 4), R(2, 3, 4))


def test_cat_promotes_and_different_sizes():
    check(lambda a, b: torch.cat([a, b], dim=1), R(2, 3), torch.randint(0, 5, (2, 2)))
    check(lambda a, b: torch.stack([a, b], dim=1), R(2, 3), R(2, 3))


@pytest.mark.parametrize("fn", [
    lambda x: x.sum(),
    lambda x: x.sum(0),
    lambda x: x.sum(-1, keepdim=True),
    lambda x: x.sum((0, 2)),
    lambda x: x.sum((0, 2), keepdim=True),
    lambda x: x.mean(),
    lambda x: x.mean(1),
    lambda x: x.mean((-1, -2), keepdim=True),
    lambda x: x.mean(dim=(0, 1, 2)),
], ids=lambda f: f.__code__.co_firstlineno.__str__())
def test_reductions(fn):
    check(fn, R(2, 3, 4))


def test_sum_int_and_0dim():
    check(lambda x: x.sum(), torch.randint(-5, 5, (3, 4)))
    check(lambda x: x.sum(), R())
    check(lambda x: x.mean(), R())


def test_dropout_eval_is_identity():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)).eval()
    check(model, R(3, 4))
    check(lambda x: F.dropout(x, 0.5, training=False), R(3, 4))


def test_embedding():
    emb = torch.nn.Embedding(10, 4).eval()
    check(emb, torch.tensor([[0, 3, 9], [9, 9, 1]]))
    check(emb, torch.tensor(7))
    check(lambda i: F.embedding(i, emb.weight.detach()), torch.tensor([1, 2]).int())


def test_factories_fold_to_constants():
    check(lambda x: x + torch.arange(4.0), R(3, 4))
    check(lambda x: x * torch.ones(3, 1) + torch.full((4,), 2.0), R(3, 4))
    check(lambda x: torch.zeros_like(x) + torch.ones_like(x) * 3, R(3, 4))


def test_channels_last_input():
    conv = torch.nn.Conv2d(3, 4, 3, padding=1).eval()
    x = R(2, 3, 5, 6).contiguous(memory_format=torch.channels_last)
    check(lambda x: conv(x).flatten(1), x)
    check(lambda x: x.permute(0, 2, 3, 1).reshape(2, -1), x)


def test_views_inside_composite_ops():
    # matmul decomposes on the backend: broadcasting expands and reshapes
    # strided views of traced tensors, and squeezes its result in place.
    check(lambda a, b: torch.matmul(a.transpose(-1, -2), b), R(2, 1, 4, 3), R(5, 4, 2))
    check(lambda a, b: (a @ b).unsqueeze(0) @ b.t(), R(4), R(4, 4))


@pytest.mark.parametrize("mask", ["none", "float", "causal", "bool"])
def test_scaled_dot_product_attention(mask):
    q, k, v = R(2, 2, 5, 8), R(2, 2, 6, 8), R(2, 2, 6, 8)
    if mask == "causal":
        check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
    elif mask == "none":
        check(F.scaled_dot_product_attention, q, k, v)
    else:
        m = R(5, 6) if mask == "float" else R(5, 6) > -0.5
        check(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), q, k, v, m)


@pytest.mark.parametrize("shape", [(3,), (2, 70), (4, 33, 5)])
def test_bool_tensors_keep_their_byte_layout(shape):
    # Bool inputs and constants are one byte per element; vector code must not
    # read them as packed bits.
    mask = torch.rand(*shape) > 0.5
    check(lambda m, x: m.to(torch.float32) * 2 + x, mask, R(*shape))


def test_uint8_arithmetic_with_constants_wraps_like_torch():
    x = torch.arange(0, 256, 5, dtype=torch.uint8)
    check(lambda u: u + 6, x)  # wraps past 255
    check(lambda u: u * torch.tensor([3], dtype=torch.uint8), x)
    check(lambda u: u.float() / 255, x)
