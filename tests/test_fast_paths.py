"""PyTorch's fused inference kernels (torch._transformer_encoder_layer_fwd and
torch._native_multi_head_attention, the fast paths of nn.TransformerEncoderLayer and
nn.MultiheadAttention) are captured as the ops they compute (linear, one
scaled_dot_product_attention, layer_norm, gelu/relu), not run as host kernels, and
match eager's fused CPU kernels."""

from __future__ import annotations

import pytest
import torch
from conftest import Fn, assert_matches

import poptorch


def layer_args(layer: torch.nn.TransformerEncoderLayer, x: torch.Tensor) -> tuple:
    sa = layer.self_attn
    return (x, sa.embed_dim, sa.num_heads, sa.in_proj_weight, sa.in_proj_bias,
            sa.out_proj.weight, sa.out_proj.bias, layer.activation_relu_or_gelu == 2,
            layer.norm_first, layer.norm1.eps, layer.norm1.weight, layer.norm1.bias,
            layer.norm2.weight, layer.norm2.bias, layer.linear1.weight, layer.linear1.bias,
            layer.linear2.weight, layer.linear2.bias)


def padding(batch: int, length: int, all_of_row_1: bool = False) -> torch.Tensor:
    mask = torch.zeros(batch, length, dtype=torch.bool)
    mask[1, 3:] = True
    if all_of_row_1:
        mask[1, :] = True  # a sequence all padding: NaN rows in the fused kernel
    return mask


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("mask", [None, "padding", "all-padding", "causal"])
def test_transformer_encoder_layer_fwd(norm_first, activation, mask):
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, norm_first=norm_first,
                                             activation=activation).eval().requires_grad_(False)
    x = torch.randn(2, 5, 16)
    kwargs = {}
    if mask == "causal":
        kwargs = dict(mask=torch.triu(torch.ones(5, 5, dtype=torch.bool), 1), mask_type=0)
    elif mask is not None:
        kwargs = dict(mask=padding(2, 5, mask == "all-padding"), mask_type=1)
    args = layer_args(layer, x)
    fn = lambda x, *rest: torch._transformer_encoder_layer_fwd(x, *rest, **kwargs)  # noqa: E731
    with torch.no_grad():
        expected = fn(*args)
    graph = poptorch.trace(Fn(fn), *args)
    ops = {r["name"]: r["status"] for r in graph.op_log}
    assert ops["aten::scaled_dot_product_attention"] == "captured", ops
    assert "host_kernel" not in ops.values(), ops
    got = poptorch.inferenceModel(Fn(fn))(*args)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5, equal_nan=True)


@pytest.mark.parametrize("need_weights, average", [(False, True), (True, True), (True, False)])
def test_native_multi_head_attention(need_weights, average):
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval().requires_grad_(False)
    q, kv = torch.randn(2, 6, 16), torch.randn(2, 6, 16)  # the fused kernel wants one shape
    mask = torch.zeros(2, 6, dtype=torch.bool)
    mask[0, 4:] = True

    def fn(q, kv, w, b, pw, pb):
        return torch._native_multi_head_attention(q, kv, kv, 16, 4, w, b, pw, pb, mask,
                                                  need_weights, average, 1)

    args = (q, kv, mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight, mha.out_proj.bias)
    with torch.no_grad():
        expected = fn(*args)
    got = poptorch.inferenceModel(Fn(fn))(*args)
    if not need_weights:  # the weights are an empty tensor
        got, expected = got[0], expected[0]
    assert_matches(got, expected, atol=1e-5, rtol=1e-5)
