"""Convolution, pooling and normalisation ops against eager PyTorch, per dtype."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from conftest import check
from opsuite import FLOAT_DTYPES, SIGNED_DTYPES, dtypes, sample

import poptorch

# Half-precision results round once from f32 (as eager's CPU kernels); eager
# may round partial sums differently, so allow a few ulps.
HALF_TOL = {torch.float16: dict(atol=2e-2, rtol=2e-2), torch.bfloat16: dict(atol=1e-1, rtol=4e-2)}


def tol(dtype: torch.dtype) -> dict:
    return HALF_TOL.get(dtype, {})


# ---------------------------------------------------------------- convolution
CONV_CASES = [
    # (spatial dims, in channels, out channels, kernel, kwargs)
    (1, 4, 6, 3, dict(padding=1)),
    (1, 4, 4, 3, dict(stride=2, dilation=2, groups=4)),
    (2, 4, 6, 3, dict(stride=2, padding=(1, 2))),
    (2, 4, 6, (2, 3), dict(dilation=(2, 1), groups=2)),
    (2, 4, 4, 3, dict(padding=1, stride=(1, 2), groups=4)),  # depthwise, with bias
    (2, 4, 4, 7, dict(padding=3, groups=4)),  # depthwise 7x7: 49 taps, elementwise
    (2, 4, 4, 8, dict(padding=4, groups=4)),  # depthwise 8x8: 64 taps, 1-D convolutions
    (3, 2, 4, 2, dict(padding=1)),
    (3, 4, 4, (1, 2, 3), dict(stride=(1, 2, 1), groups=2, dilation=(1, 1, 2))),
    # pointwise (1x1, stride 1): a matmul per image
    (1, 4, 6, 1, dict()),
    (2, 4, 6, 1, dict()),
    (2, 4, 6, 1, dict(padding=1)),
]


def _conv_args(spatial, cin, cout, kernel, kwargs, dtype, transposed=False):
    ks = (kernel,) * spatial if isinstance(kernel, int) else kernel
    groups = kwargs.get("groups", 1)
    x = sample((2, cin) + (7, 6, 5)[:spatial], dtype)
    wshape = (cin, cout // groups) if transposed else (cout, cin // groups)
    w = sample(wshape + ks, dtype, low=-1, high=1)
    b = sample((cout,), dtype)
    return x, w, b


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}d-{c[4]}")
def test_convolution(case, dtype):
    spatial, cin, cout, kernel, kwargs = case
    x, w, b = _conv_args(spatial, cin, cout, kernel, kwargs, dtype)
    conv = (F.conv1d, F.conv2d, F.conv3d)[spatial - 1]
    check(lambda x, w, b: conv(x, w, b, **kwargs), x, w, b, **tol(dtype))


CONV_T_CASES = [
    (1, 4, 6, 3, dict(stride=2, padding=1, output_padding=1)),
    (2, 4, 6, 3, dict()),
    (2, 4, 6, (3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2,
                           dilation=(1, 2))),
    (2, 4, 4, 3, dict(stride=2, padding=2, groups=4)),
    (2, 4, 6, 3, dict(stride=2, padding=1, dilation=2, output_padding=1)),  # gcd(2, 2) > 1
    (2, 3, 4, 3, dict(stride=(3, 1), padding=(4, 3))),  # padding past the kernel
    (1, 4, 4, 5, dict(stride=4, padding=1, output_padding=3)),  # phases without a tap
    (3, 2, 4, 2, dict(stride=2, padding=1, output_padding=1)),
]


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("case", CONV_T_CASES, ids=lambda c: f"{c[0]}d-{c[4]}")
def test_conv_transpose(case, dtype):
    spatial, cin, cout, kernel, kwargs = case
    x, w, b = _conv_args(spatial, cin, cout, kernel, kwargs, dtype, transposed=True)
    conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
    check(lambda x, w, b: conv(x, w, b, **kwargs), x, w, b, **tol(dtype))


@dtypes([torch.float32, torch.int32])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("hw", [(7, 7), (4, 8)])
def test_pointwise_conv2d_without_bias(hw, batch, dtype):
    # One matmul per image written into the (N, F, H, W) result; 7x7 = 49
    # columns leave a partial register tile.
    x = sample((batch, 5) + hw, dtype, low=-3, high=4)
    w = sample((12, 5, 1, 1), dtype, low=-3, high=4)
    check(lambda x, w: F.conv2d(x, w), x, w, **tol(dtype))


@dtypes(SIGNED_DTYPES)
def test_conv2d_integer(dtype):
    x = sample((1, 2, 5, 5), dtype, low=-3, high=4)
    w = sample((3, 2, 2, 2), dtype, low=-3, high=4)
    check(lambda x, w: F.conv2d(x, w, padding=1), x, w)


@dtypes(FLOAT_DTYPES + SIGNED_DTYPES)
def test_depthwise_conv2d_without_bias(dtype):
    # The sum starts from the first tap's product (no zero-filled init).
    low, high = (-3, 4) if not dtype.is_floating_point else (-1, 1)
    x = sample((2, 3, 6, 5), dtype, low=low, high=high)
    w = sample((3, 1, 3, 2), dtype, low=low, high=high)
    check(lambda x, w: F.conv2d(x, w, padding=(1, 0), groups=3), x, w, **tol(dtype))


def test_conv_modules():
    check(torch.nn.Conv1d(3, 5, 3, padding="same").eval(), torch.randn(2, 3, 10))
    check(torch.nn.ConvTranspose2d(3, 5, 3, stride=2).eval(), torch.randn(1, 3, 4, 4))


# Convolutions that run directly in channels-last layout
# (ConvolutionOp::isChannelsLastDirect: f32, 2-D, groups 1, input channels in
# blocks of 8 or fewer than 8, a window of more than one pixel, 128 or more
# output pixels):
# partial blocks of 8 pixels and 32 output channels, strides, dilations, no
# padding, a bias; as a module (the weight a parameter, prepacked at upload)
# with batch norm and ReLU fused into the write of the next input, and with
# the weight as an input (transposed on every call).
CHANNELS_LAST_CASES = [
    # (batch, in channels, out channels, input size, kernel, kwargs)
    (1, 8, 16, 16, 3, dict(padding=1)),
    (2, 16, 48, 13, 3, dict(padding=1, bias=True)),
    (1, 8, 40, 31, 3, dict(stride=2)),
    (1, 16, 32, 24, (3, 5), dict(stride=(1, 2), padding=(1, 2), dilation=(2, 1))),
    (2, 3, 16, 32, 7, dict(stride=2, padding=3)),  # an image stem: 3 colour planes
]


@pytest.mark.parametrize("case", CHANNELS_LAST_CASES,
                         ids=lambda c: f"{c[0]}x{c[1]}x{c[3]}-{c[2]}-{c[5]}")
def test_conv2d_channels_last(case):
    n, cin, cout, size, kernel, kwargs = case
    kwargs = dict(kwargs)
    bias = kwargs.pop("bias", False)
    conv = torch.nn.Conv2d(cin, cout, kernel, bias=bias, **kwargs)
    model = torch.nn.Sequential(torch.nn.BatchNorm2d(cin), torch.nn.ReLU(), conv,
                                torch.nn.BatchNorm2d(cout), torch.nn.ReLU(),
                                torch.nn.Conv2d(cout, 8, 3, padding=1)).eval()
    for bn in (model[0], model[3]):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(n, cin, size, size)
    pm = poptorch.inferenceModel(model)
    torch.testing.assert_close(pm(x), model(x), atol=1e-4, rtol=1e-4)
    stages = dict(pm.executable.stages)
    assert stages["to-linalg"].count("linalg.conv_2d_nhwc_hwcf") == 2
    # The weights were permuted once, at upload.
    assert stages["decompose"].count("poptorch.permuted = array<i64: 2, 3, 1, 0>") == 2
    w = torch.randn(cout, cin, *((kernel,) * 2 if isinstance(kernel, int) else kernel))
    check(lambda x, w: F.conv2d(x, w, **kwargs), x, w, atol=1e-4, rtol=1e-4)


class _Bottleneck(torch.nn.Module):
    """A ResNet bottleneck (1x1, 3x3, 1x1 with batch norms and ReLUs) with a 1x1
    projection shortcut, twice, and a global average pool: every convolution runs
    channels-last."""

    def __init__(self, stride: int) -> None:
        super().__init__()

        def block(cin, stride):
            return torch.nn.ModuleDict(dict(
                body=torch.nn.Sequential(
                    torch.nn.Conv2d(cin, 16, 1, bias=False), torch.nn.BatchNorm2d(16),
                    torch.nn.ReLU(), torch.nn.Conv2d(16, 16, 3, stride, 1, bias=False),
                    torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                    torch.nn.Conv2d(16, 64, 1, bias=False), torch.nn.BatchNorm2d(64)),
                shortcut=torch.nn.Sequential(
                    torch.nn.Conv2d(cin, 64, 1, stride, bias=False), torch.nn.BatchNorm2d(64))
                if stride > 1 or cin != 64 else torch.nn.Identity()))
        self.blocks = torch.nn.ModuleList([block(32, stride), block(64, 1)])
        for m in self.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                torch.nn.init.uniform_(m.running_mean, -0.5, 0.5)
                torch.nn.init.uniform_(m.running_var, 0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for b in self.blocks:
            x = torch.relu(b["body"](x) + b["shortcut"](x))
        return x.mean((2, 3))


class _InvertedResidual(torch.nn.Module):
    """A 3x3 stem, a MobileNetV2 inverted residual (1x1 expansion, 3x3 depthwise,
    1x1 projection, batch norms and ReLU6) twice, and a global average pool: all
    channels-last."""

    def __init__(self) -> None:
        super().__init__()

        def block():
            return torch.nn.Sequential(
                torch.nn.Conv2d(16, 64, 1, bias=False), torch.nn.BatchNorm2d(64),
                torch.nn.ReLU6(), torch.nn.Conv2d(64, 64, 3, 1, 1, groups=64, bias=False),
                torch.nn.BatchNorm2d(64), torch.nn.ReLU6(),
                torch.nn.Conv2d(64, 16, 1, bias=False), torch.nn.BatchNorm2d(16))
        self.stem = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.blocks = torch.nn.ModuleList([block(), block()])
        for m in self.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                torch.nn.init.uniform_(m.running_mean, -0.5, 0.5)
                torch.nn.init.uniform_(m.running_var, 0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for b in self.blocks:
            x = x + b(x)
        return x.mean((2, 3))


# Between channels-last convolutions the batch norms, activations and residual
# adds compute channels-last (poptorch-sink-transposes), and so does the pool
# over the pixels at the end: after the to-linalg stage one layout change is
# left, the input's to channels-last.
@pytest.mark.parametrize("model,shape", [
    (lambda: _Bottleneck(1), (2, 32, 12, 12)),
    (lambda: _Bottleneck(2), (2, 32, 17, 17)),
    (_InvertedResidual, (2, 16, 12, 12)),
], ids=["bottleneck", "bottleneck-stride-2", "inverted-residual"])
def test_activations_stay_channels_last_between_convolutions(model, shape):
    torch.manual_seed(0)
    m = model().eval()
    x = torch.randn(*shape)
    pm = poptorch.inferenceModel(m)
    torch.testing.assert_close(pm(x), m(x), atol=1e-4, rtol=1e-4)
    assert _layout_changes(dict(pm.executable.stages)["to-linalg"]) == 1


def _layout_changes(linalg: str) -> int:
    """The layout changes of 4-D activations (batch 2) in a to-linalg stage: transposes,
    and generics that read or write through a permutation other than the identity."""
    perms = {name for name, dims, exprs in re.findall(
        r"(#map\d*) = affine_map<\((d0, d1, d2, d3)\) -> \(([^)]*)\)>", linalg)
        if sorted(exprs.split(", ")) == dims.split(", ") and exprs != dims}
    generics = [m for m in re.findall(r"linalg\.generic \{indexing_maps = \[([^\]]*)\]"
                                      r"[^\n]*tensor<2x", linalg)
                if perms & set(m.split(", "))]
    return len(generics) + len(re.findall(r"linalg\.transpose ins\(%\w+ : tensor<2x", linalg))


# ---------------------------------------------------------------- pooling
MAX_POOL_CASES = [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, stride=1, dilation=2, padding=1),
]


@dtypes([torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int8])
@pytest.mark.parametrize("spatial", [1, 2, 3])
@pytest.mark.parametrize("cfg", MAX_POOL_CASES, ids=str)
def test_max_pool_with_indices(cfg, spatial, dtype):
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[spatial - 1]
    x = sample((2, 3) + (9, 8, 7)[:spatial], dtype)
    check(lambda x: pool(x, return_indices=True, **cfg), x)


@pytest.mark.parametrize("spatial", [2, 3])
def test_max_pool_without_indices(spatial):
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[spatial - 1]
    x = sample((3,) + (9, 8, 7)[:spatial], torch.float32)  # unbatched
    check(lambda x: pool(x, 3, 2, 1, ceil_mode=True), x)


@dtypes([torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int8])
@pytest.mark.parametrize("cfg", MAX_POOL_CASES + [dict(kernel_size=(6, 5), stride=2)], ids=str)
def test_max_pool2d_without_indices(cfg, dtype):
    # An elementwise maximum over the window's strided taps; a window of more
    # than 25 elements takes the named pool.
    check(lambda x: F.max_pool2d(x, **cfg), sample((2, 3, 9, 8), dtype))


@pytest.mark.parametrize("kernel", [3, 6])
def test_max_pool2d_without_indices_propagates_nan(kernel):
    x = torch.randn(2, 3, 9, 8)
    x[0, 0, 2, 3] = x[1, 2, 8, 7] = float("nan")
    x[0, 1, 4, 4] = float("inf")
    from conftest import compiled
    got = compiled(lambda x: F.max_pool2d(x, kernel, 2, 1), x)
    torch.testing.assert_close(got, F.max_pool2d(x, kernel, 2, 1), equal_nan=True)


def test_max_pool_ties_and_nan():
    x = torch.tensor([[[[1.0, 1.0, 0.0, float("nan")],
                        [1.0, 1.0, 2.0, 3.0],
                        [-float("inf"), -float("inf"), 5.0, 5.0],
                        [-float("inf"), -float("inf"), 5.0, 5.0]]]])
    expected = F.max_pool2d(x, 2, return_indices=True)
    from conftest import compiled
    got = compiled(lambda x: F.max_pool2d(x, 2, return_indices=True), x)
    torch.testing.assert_close(got[1], expected[1])
    torch.testing.assert_close(got[0], expected[0], equal_nan=True)


@pytest.mark.parametrize("cfg", [
    dict(kernel_size=3, stride=2, padding=1),  # ResNet's stem pool
    dict(kernel_size=7, stride=3, padding=3, ceil_mode=True),  # 49 taps, windows past the end
    dict(kernel_size=8, stride=2, padding=2),  # 64 taps: the reduction form
], ids=str)
def test_max_pool2d_with_indices_window_taps(cfg):
    # Windows of up to 49 taps are one elementwise op with two results; a tap in
    # the padding is never taken, not even by a window whose valid elements are
    # all -inf (its index is the first valid one), and NaN wins (the last one).
    x = torch.randn(2, 3, 21, 37)
    x[0, 0, :4, :4] = -float("inf")
    x[1, 1, 5, 9] = x[1, 1, 6, 10] = float("nan")
    x[0, 2, 10, 17] = float("inf")
    expected = F.max_pool2d(x, return_indices=True, **cfg)
    from conftest import compiled
    got = compiled(lambda x: F.max_pool2d(x, return_indices=True, **cfg), x)
    torch.testing.assert_close(got[1], expected[1])
    torch.testing.assert_close(got[0], expected[0], equal_nan=True)


AVG_POOL_CASES = [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, divisor_override=3),
    dict(kernel_size=2, divisor_override=-2),  # signed
    dict(kernel_size=6, stride=1, padding=2),
    dict(kernel_size=8, stride=1, padding=3),  # above 49 window elements in 2-D
]


@dtypes([torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64])
@pytest.mark.parametrize("spatial", [1, 2, 3])
@pytest.mark.parametrize("cfg", AVG_POOL_CASES, ids=str)
def test_avg_pool(cfg, spatial, dtype):
    if spatial == 3 and dtype in (torch.float16, torch.bfloat16):
        pytest.skip("eager has no half-precision avg_pool3d on the CPU")
    if spatial == 1 and "divisor_override" in cfg:
        pytest.skip("avg_pool1d has no divisor_override")
    if spatial == 3 and cfg["kernel_size"] == 8:
        pytest.skip("eager: the 3-D input's last dim (7) is narrower than the kernel")
    pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[spatial - 1]
    x = sample((2, 3) + (9, 8, 7)[:spatial], dtype)
    check(lambda x: pool(x, **cfg), x, **tol(dtype))


ADAPTIVE_SIZES = {1: [1, 3, 4], 2: [(1, 1), (3, 3), (4, 5), (5, 3)],
                  3: [(1, 1, 1), (2, 3, 4), (3, 3, 3)]}


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("spatial,out", [(s, o) for s, os in ADAPTIVE_SIZES.items() for o in os],
                         ids=str)
def test_adaptive_avg_pool(spatial, out, dtype):
    pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[spatial - 1]
    x = sample((2, 3) + (8, 10, 7)[:spatial], dtype)
    check(lambda x: pool(x, out), x, **tol(dtype))


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("spatial,out", [(s, o) for s, os in ADAPTIVE_SIZES.items() for o in os],
                         ids=str)
def test_adaptive_max_pool(spatial, out, dtype):
    pool = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[spatial - 1]
    x = sample((2, 3) + (8, 10, 7)[:spatial], dtype)
    check(lambda x: pool(x, out, return_indices=True), x)


# ---------------------------------------------------------------- normalisation
@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 4)], ids=str)
def test_batch_norm_batch_statistics(shape, dtype):
    x = sample(shape, dtype)
    w, b = sample((3,), dtype), sample((3,), dtype)
    check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-3),
          x, w, b, **tol(dtype))


@dtypes(FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5)], ids=str)
def test_instance_norm(shape, dtype):
    x = sample(shape, dtype)
    check(lambda x: F.instance_norm(x), x, **tol(dtype))


def test_norm_modules_without_running_stats():
    check(torch.nn.BatchNorm2d(3, track_running_stats=False).eval(), torch.randn(2, 3, 4, 4))
    check(torch.nn.InstanceNorm1d(3, affine=True).eval(), torch.randn(2, 3, 6))


@dtypes(FLOAT_DTYPES)
def test_layer_norm_half(dtype):
    x = sample((2, 3, 8), dtype)
    w, b = sample((8,), dtype), sample((8,), dtype)
    check(lambda x, w, b: F.layer_norm(x, (8,), w, b), x, w, b, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_rms_norm(dtype):
    x = sample((2, 3, 8), dtype)
    w = sample((8,), dtype)
    check(lambda x, w: F.rms_norm(x, (8,), w, eps=1e-5), x, w, **tol(dtype))


@dtypes([torch.float32, torch.float64])
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((1, 4, 3, 3), 2), ((3, 8), 4)])
def test_group_norm(dtype, shape, groups):
    # F.group_norm reaches the backend as var_mean and elementwise ops
    c = shape[1]
    w, b = sample((c,), dtype), sample((c,), dtype)
    check(lambda x: F.group_norm(x, groups, w, b, eps=1e-5), sample(shape, dtype))


@pytest.mark.parametrize("spatial", [2, 3])
def test_convolution_with_unit_dims_but_width(spatial):
    # every dim but the width is 1: the register tile drops the unit loops
    x = torch.randn((1, 1) + (1,) * (spatial - 1) + (10,))
    w = torch.randn((1, 1) + (1,) * (spatial - 1) + (4,))
    conv = (F.conv2d, F.conv3d)[spatial - 2]
    check(lambda x, w: conv(x, w), x, w)


@pytest.mark.parametrize("spatial", [1, 2, 3])
def test_conv_transpose_by_phases(spatial):
    # A 1-D or 2-D transposed convolution is one stride-1 convolution per phase of the
    # stride, with the taps that reach it (here 2 per dim of the 4: no product with an
    # inserted zero); a 3-D one keeps its lowering.
    x = torch.randn((2, 6) + (5, 4, 3)[:spatial])
    w = torch.randn((6, 3) + (4,) * spatial)
    conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
    graph = poptorch.trace(lambda x, w: conv(x, w, stride=2, padding=1), x, w)
    weights = [r["input_types"][1] for r in graph.op_log if r["name"] == "aten::convolution"]
    sub = "Float[" + ", ".join(["3", "6"] + ["2"] * spatial) + "]"
    assert weights == ([sub] * 2 ** spatial if spatial < 3 else
                       ["Float[" + ", ".join(["6", "3"] + ["4"] * 3) + "]"]), weights
    check(lambda x, w: conv(x, w, stride=2, padding=1), x, w, atol=1e-4, rtol=1e-4)


class _SamePadded(torch.nn.Module):
    """A MobileNetV2 block as Hugging Face builds it with TF-style "same" padding:
    pointwise conv, batch norm, ReLU6, an explicit zero pad, an unpadded depthwise conv."""

    def __init__(self, channels: int, stride: int, pad: tuple[int, ...], value: float) -> None:
        super().__init__()
        self.expand = torch.nn.Conv2d(8, channels, 1, bias=False)
        self.norm = torch.nn.BatchNorm2d(channels)
        self.depthwise = torch.nn.Conv2d(channels, channels, 3, stride=stride, groups=channels)
        self.pad, self.value = pad, value
        torch.nn.init.uniform_(self.norm.running_mean, -1, 1)
        torch.nn.init.uniform_(self.norm.running_var, 0.5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self.norm(self.expand(x)))
        y = F.pad(y, self.pad, "constant", self.value)
        return self.depthwise(y) + F.pad(x, (0, 0, 0, 0), "constant", 0.0).mean()


@pytest.mark.parametrize("size", [9, 180])  # the padded input under and over 8 MiB at 180
@pytest.mark.parametrize("stride,pad,value", [
    (1, (1, 1, 1, 1), 0.0),   # folded into the convolution's padding
    (2, (0, 1, 0, 1), 0.0),   # one side only: a padded tensor the conv reads
    (1, (2, 0, 1, 1), 0.0),
    (1, (1, 1, 1, 1), 0.5),   # another value
    (1, (1, 1, 1, 1), -0.0),  # -0.0 is not the convolution's +0.0
])
def test_convolution_of_padded_input(size, stride, pad, value):
    model = _SamePadded(32, stride, pad, value).eval()
    check(model, torch.randn(2, 8, size, size), atol=1e-4, rtol=1e-4)


@dtypes([torch.float32, torch.int32, torch.bool])
def test_pad_feeding_convolution_and_other_ops(dtype):
    # A zero pad read by a convolution and by another op: the convolution takes the
    # padding, the other op still reads the padded tensor.
    x = sample((1, 3, 5, 6), dtype)
    if dtype is torch.bool:
        check(lambda x: F.pad(x, (1, 1, 2, 2)).sum((2, 3)), x)
        return
    w = sample((4, 3, 3, 3), dtype, low=-3, high=4)

    def fn(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = F.pad(x, (1, 1, 2, 2))
        return F.conv2d(y, w, padding=1), y * 2
    check(fn, x, w, **tol(dtype))
