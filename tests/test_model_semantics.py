"""Semantics that public model code relies on (each seen in Hugging Face models):
torch.cat's legacy empty 1-D rule, grouped-query attention, custom autograd
Functions, compared with eager PyTorch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import Fn, assert_matches

import poptorch


def check(fn, *args) -> None:
    with torch.no_grad():
        expected = fn(*args)
    assert_matches(poptorch.inferenceModel(Fn(fn))(*args), expected)


# --- torch.cat skips 1-D tensors with no elements --------------------------


@pytest.mark.parametrize("dim", [-1, -2, 0, 3])
def test_cat_skips_empty_1d_tensors(dim):
    # transformers' DynamicCache starts from torch.tensor([]) and concatenates
    # 4-D key/value states to it along dim -2.
    def fn(states):
        cache = torch.tensor([], device=states.device)
        return torch.cat([cache, states, cache, states * 2], dim=dim)

    check(fn, torch.randn(2, 3, 4, 5))


@pytest.mark.parametrize("empty_first", [False, True])
def test_cat_with_an_operand_empty_along_the_cat_dim(empty_first):
    # Phi-3's rotary embedding: torch.cat([q[..., :rot], q[..., rot:]]) with rot = head dim.
    def fn(q):
        parts = [q[..., :16] * 2, q[..., 16:]]
        return torch.cat(parts[::-1] if empty_first else parts, dim=-1)

    check(fn, torch.randn(2, 4, 3, 16))


def test_cat_of_only_empty_1d_and_one_tensor():
    check(lambda x: torch.cat([x.new_zeros(0), x], dim=1), torch.randn(3, 2))


# --- grouped-query attention -------------------------------------------------


@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (8, 1), (4, 4)])
@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_enable_gqa(heads, kv_heads, masked):
    torch.manual_seed(0)
    q = torch.randn(2, heads, 5, 8)
    k, v = torch.randn(2, kv_heads, 7, 8), torch.randn(2, kv_heads, 7, 8)
    mask = torch.rand(2, 1, 5, 7) > 0.3 if masked else None
    mask = mask if mask is None else mask | torch.eye(5, 7, dtype=torch.bool)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                         enable_gqa=True), q, k, v)


def test_sdpa_enable_gqa_causal_3d():
    q, k, v = torch.randn(6, 4, 8), torch.randn(3, 4, 8), torch.randn(3, 4, 8)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                         enable_gqa=True), q, k, v)


# --- custom autograd Functions ------------------------------------------------


class OldStyleGelu(torch.autograd.Function):
    """A Function without setup_context (as BLOOM's GeLUFunction)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))

    @staticmethod
    def backward(ctx, grad):
        raise AssertionError("inference never runs the backward")


class NewStyleScale(torch.autograd.Function):
    @staticmethod
    def forward(x, scale):
        return x * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.scale = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


def test_custom_autograd_functions_run_their_forward():
    check(lambda x: NewStyleScale.apply(OldStyleGelu.apply(x), 3.0) + 1, torch.randn(4, 5))
    # Outside tracing, Function.apply is PyTorch's again: it records the backward.
    x = torch.randn(3, requires_grad=True)
    NewStyleScale.apply(x, 2.0).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 2.0))


# --- torch._convolution (old model code, exported graphs) ---------------------


@pytest.mark.parametrize("transposed", [False, True])
def test_underscore_convolution(transposed):
    x = torch.randn(2, 4, 9, 9)
    w = torch.randn(4, 6, 3, 3) if transposed else torch.randn(6, 4, 3, 3)
    b = torch.randn(6)
    check(lambda x, w, b: torch._convolution(x, w, b, [2, 1], [1, 0], [1, 1], transposed,
                                             [1, 0] if transposed else [0, 0], 1,
                                             False, False, True, True), x, w, b)


# --- as_strided with static sizes, strides and offset -------------------------


@pytest.mark.parametrize("shape, size, stride, offset", [
    ((10,), (4, 4), (2, 1), 0),          # overlapping windows (unfold-like)
    ((10,), (3, 4), (2, 1), 1),          # with an offset
    ((3, 3), (3,), (4,), 0),             # the diagonal
    ((4, 5), (2, 3, 2), (5, 1, 7), 2),   # windows that cross rows
    ((4, 5), (2, 2), (10, 2), 1),        # a stepped slice
    ((2, 3, 4), (4, 3, 2), (1, 4, 12), 0),  # a permutation
])
def test_as_strided(shape, size, stride, offset):
    x = torch.randn(shape)
    check(lambda x: (x * 2).as_strided(size, stride, offset) + 1, x)


def test_as_strided_of_an_input_and_a_transposed_intermediate():
    x = torch.randn(4, 6)
    check(lambda x: x.as_strided((2, 2), (6, 1), 2) * x.t().contiguous().as_strided((2, 2), (1, 5)),
          x)


def test_size_outputs_stay_torch_size():
    class M(torch.nn.Module):
        def forward(self, x):
            return x.shape, torch.broadcast_shapes((2, 1), (1, 3)), {"n": x.shape[0]}, x + 1

    x = torch.randn(2, 3)
    out = poptorch.inferenceModel(M())(x)
    assert type(out[0]) is torch.Size and type(out[1]) is torch.Size
    assert out[0] == x.shape and out[1] == (2, 3) and out[2] == {"n": 2}


def test_training_mode_batch_norm_updates_running_stats():
    # Eager writes the running statistics in place, which native_batch_norm's
    # schema does not declare: the compiled call writes them as eager does.
    class M(torch.nn.Module):
        def forward(self, x, mean, var):
            return F.batch_norm(x, mean, var, training=True, momentum=0.3)

    x, mean, var = torch.randn(4, 3), torch.zeros(3), torch.ones(3)
    ref_mean, ref_var = mean.clone(), var.clone()
    compiled = poptorch.inferenceModel(M())
    for _ in range(2):
        out = compiled(x, mean, var)
        assert_matches(out, M()(x, ref_mean, ref_var))
        assert_matches(mean, ref_mean)
        assert_matches(var, ref_var)
    ops = {r["name"] for r in compiled.executable.graph.op_log}
    assert "aten::native_batch_norm" not in ops  # decomposed: no host kernel
