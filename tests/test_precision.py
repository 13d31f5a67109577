"""Half precision: models converted with ``model.half()`` / ``bfloat16()``, mixed-precision
inputs, and accumulation as accurate as eager PyTorch's CPU kernels.

The accuracy tests compare both eager and poptorch against a float64 evaluation of the same
half-precision weights and inputs: poptorch must be about as close to it as eager is (its
rounding differs in the last bits, so the outputs are not compared bit for bit)."""

from __future__ import annotations

import copy
import os
import sys

import pytest
import torch

import poptorch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from models import QUICK  # noqa: E402


def _error(out: torch.Tensor, exact: torch.Tensor) -> float:
    return (out.double() - exact).abs().max().item()


def assert_as_accurate_as_eager(fn: torch.nn.Module, exact_fn: torch.nn.Module,
                                args: tuple, exact_args: tuple, slack: float = 2.0) -> None:
    with torch.no_grad():
        exact = exact_fn(*exact_args)
        eager = fn(*args)
    out = poptorch.inferenceModel(fn)(*args)
    assert out.dtype == eager.dtype and out.shape == eager.shape
    scale = exact.abs().max().item()
    # poptorch's error against the exact result is within `slack` times eager's own,
    # plus a couple of units in the last place of the output's magnitude.
    ulp = torch.finfo(eager.dtype).eps * max(scale, 1.0)
    assert _error(out, exact) <= slack * _error(eager, exact) + 2 * ulp, (
        f"poptorch error {_error(out, exact):.3g}, eager error {_error(eager, exact):.3g}")


class MatMul(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("k", [64, 768, 4096])
@pytest.mark.parametrize("batched", [False, True])
def test_matmul_accumulates_like_eager(dtype: torch.dtype, k: int, batched: bool) -> None:
    """f16/bf16 products accumulate in f32 (accumulating in f16 was 20-50x less accurate)."""
    torch.manual_seed(0)
    lead = (3,) if batched else ()
    a, b = torch.randn(*lead, 16, k).to(dtype), torch.randn(*lead, k, 24).to(dtype)
    assert_as_accurate_as_eager(MatMul(), MatMul(), (a, b), (a.double(), b.double()))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_linear_and_conv_accumulate_like_eager(dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    lin = torch.nn.Linear(2048, 32).eval()
    x = torch.randn(8, 2048)
    assert_as_accurate_as_eager(copy.deepcopy(lin).to(dtype), lin.double(), (x.to(dtype),),
                                (x.double(),))
    conv = torch.nn.Conv2d(128, 16, 3, padding=1).eval()
    x = torch.randn(1, 128, 6, 6)
    assert_as_accurate_as_eager(copy.deepcopy(conv).to(dtype), conv.double(), (x.to(dtype),),
                                (x.double(),))


class Addmm(torch.nn.Module):
    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addmm(c, a, b)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_bias_added_before_the_one_rounding(dtype: torch.dtype) -> None:
    """Linear and addmm add the bias to the f32 accumulator and round once, as eager does.

    Rounding the product first is up to half an ulp of the product off, which near
    cancellation (product ~ -bias) is many ulps of the result: the outputs are compared
    with the once-rounded f32 result to within one ulp of the output itself."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 512).to(dtype).eval()
    x = torch.randn(16, 64).to(dtype)
    with torch.no_grad():
        product = x.float() @ lin.weight.float().t()
        lin.bias.copy_(-product[3])  # row 3 cancels to (nearly) zero
        once = (product + lin.bias.float()).to(dtype)
    out = poptorch.inferenceModel(lin)(x)
    torch.testing.assert_close(out.float(), once.float(), rtol=torch.finfo(dtype).eps, atol=1e-6)
    c, a, b = lin.bias, x, lin.weight.t().contiguous()
    out = poptorch.inferenceModel(Addmm())(c, a, b)
    torch.testing.assert_close(out.float(), once.float(), rtol=torch.finfo(dtype).eps, atol=1e-6)


@pytest.mark.parametrize("columns", [17, 529, 1041])
def test_bf16_tiles_of_odd_width(columns: int) -> None:
    """Partial column tiles of 8k + 1 bfloat16 (GPT-2's 50257-column head) compile and match.

    LLVM's X86 backend aborted on copies of such vectors on AVX512-BF16 hosts."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, columns).bfloat16().eval()
    for rows in (16, 128):
        x = torch.randn(rows, 64).bfloat16()
        with torch.no_grad():
            expected = lin(x)
        torch.testing.assert_close(poptorch.inferenceModel(lin)(x), expected,
                                   rtol=1.6e-2, atol=1e-2)


class DepthwiseThenChannelsLast(torch.nn.Module):
    """A ConvNeXt-style block start: a depthwise convolution, an NCHW -> NHWC permute and a
    layer norm over the channels."""

    def __init__(self, kernel: int) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(32, 32, kernel, padding=kernel // 2, groups=32)
        self.norm = torch.nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x).permute(0, 2, 3, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("kernel", [3, 5, 7])
def test_depthwise_window_before_a_permute(dtype: torch.dtype, kernel: int) -> None:
    """The window taps are not fused into the permuted reads of the layer norm's cast: in
    bfloat16 each tap became a transposed read tiled in squares, and a 5x5 window did not
    compile in minutes."""
    torch.manual_seed(kernel)
    model = DepthwiseThenChannelsLast(kernel).to(dtype).eval()
    x = torch.randn(2, 32, 20, 20).to(dtype)
    tol = {} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    torch.testing.assert_close(poptorch.inferenceModel(model)(x), model(x), **tol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(QUICK))
def test_half_models(name: str, dtype: torch.dtype) -> None:
    """``model.half()`` / ``model.bfloat16()`` runs, with the same output dtype as eager and
    eager-like accuracy (bf16 contractions on AVX512-BF16 dot products where the host has
    them)."""
    torch.manual_seed(0)
    model, make_input = QUICK[name]()
    inputs = make_input(2)
    exact_model = model.eval().double()
    exact_inputs = tuple(x.double() if x.is_floating_point() else x for x in inputs)
    half = copy.deepcopy(exact_model).to(dtype)
    half_inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
    assert_as_accurate_as_eager(half, exact_model, half_inputs, exact_inputs, slack=3.0)


class Mixed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8).half()

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> tuple:
        h = self.lin(a)                      # f16 weights, f16 input
        s = h + b                            # f16 + f32 -> f32 (type promotion)
        t = a * c                            # f16 * bf16 -> f32
        return s, t, h.float().softmax(-1), (b.half() * 3).sum(-1)


def test_mixed_precision_inputs_follow_type_promotion() -> None:
    torch.manual_seed(0)
    model = Mixed().eval()
    args = (torch.randn(4, 8).half(), torch.randn(4, 8), torch.randn(4, 8).bfloat16())
    with torch.no_grad():
        expected = model(*args)
    got = poptorch.inferenceModel(model)(*args)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        torch.testing.assert_close(g, e, atol=2e-3, rtol=2e-3)


def test_set_partials_type_half_warns() -> None:
    from poptorch import _options_impl

    _options_impl.reset_warnings()
    with pytest.warns(UserWarning, match=r"Precision.setPartialsType .* accumulate in float32"):
        poptorch.Options().Precision.setPartialsType(torch.half)
