"""The tracer's C++ shape functions (csrc/MetaKernels.h).

torch's Python Meta kernels import sympy and torch._dynamo the first time one
runs (1.1-1.8 s of a first compile on the development machine); the ops of the
common models get their result shapes in C++ instead. In this suite every C++
result is also checked against torch's Meta kernel (conftest.py turns
POPTORCH_CHECK_META on), so the cases below check dtype, sizes and strides as
well as the numbers, including the arguments the C++ functions leave to torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from conftest import check

import poptorch
from poptorch import _C

PYTHON_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "python"))

FIRST_COMPILE = r"""
import json, sys
sys.path.insert(0, {python_dir!r})
import torch, poptorch
import torch.nn.functional as F
torch.manual_seed(0)
nn = torch.nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 32)
        self.norm = nn.LayerNorm(32)
        self.qkv = nn.Linear(32, 96)
        self.mlp = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))

    def forward(self, ids):
        x = self.norm(self.embed(ids))
        q, k, v = self.qkv(x).view(2, 8, 3, 4, 8).permute(2, 0, 3, 1, 4)
        mask = torch.ones(8, 8, dtype=torch.bool).tril()
        scores = (q @ k.transpose(-1, -2) * 0.35).masked_fill(~mask, float("-inf"))
        a = torch.softmax(scores, -1) @ v
        b = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + (a + b).transpose(1, 2).reshape(2, 8, 32)
        return x + self.mlp(x) / 2


# Functionalization runs in-place ops on Meta tensors itself, through torch's
# Python Meta kernels: the CNN's activations are not in place.
cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                    nn.MaxPool2d(3, 2, 1), nn.Conv2d(8, 8, 3, groups=8), nn.ReLU6(),
                    nn.Flatten(), nn.Linear(8 * 4, 10))
cases = [(cnn, torch.randn(2, 3, 8, 8)), (Attention(), torch.randint(0, 50, (2, 8)))]
equal = []
for model, x in cases:
    model.eval()
    with torch.no_grad():
        equal.append(bool(torch.allclose(poptorch.inferenceModel(model)(x), model(x),
                                         atol=1e-4, rtol=1e-4)))
print(json.dumps({{"equal": equal, "dynamo": "torch._dynamo" in sys.modules,
                  "sympy": "sympy" in sys.modules}}))
"""


def test_first_compile_runs_no_python_meta_kernel() -> None:
    """Convolution, batch norm, ReLU and ReLU6, pooling, linear, GELU,
    embedding, layer norm, masked_fill, softmax, scaled_dot_product_attention and
    scalar arithmetic are traced without importing sympy or torch._dynamo."""
    env = {k: v for k, v in os.environ.items() if k != "POPTORCH_CHECK_META"}
    proc = subprocess.run([sys.executable, "-c", FIRST_COMPILE.format(python_dir=PYTHON_DIR)],
                          capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"equal": [True, True], "dynamo": False, "sympy": False}


def test_the_suite_checks_the_shape_functions() -> None:
    if os.environ.get("POPTORCH_CHECK_META") == "0":
        pytest.skip("POPTORCH_CHECK_META=0")
    assert _C.check_meta_kernels(True)


def test_a_disagreement_is_reported() -> None:
    """The check compares strides too: an input whose layout a C++ function keeps
    and torch's kernel does not would be reported, so the check can fail. Here the
    C++ result for a channels-last convolution is contiguous, like torch's."""
    x = torch.randn(2, 3, 6, 6).to(memory_format=torch.channels_last)
    w = torch.randn(4, 3, 3, 3)
    check(lambda a, b: torch.ops.aten.convolution(a, b, None, [1, 1], [1, 1], [1, 1], False,
                                                  [0, 0], 1), x, w, atol=1e-4, rtol=1e-4)


# ---- each hand-written shape function, with the arguments it leaves to torch


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32])
def test_relu(dtype: torch.dtype) -> None:
    x = (torch.randn(3, 5) * 10).to(dtype)
    check(torch.relu, x)
    check(lambda t: torch.relu_(t.clone()), x)
    check(lambda t: torch.relu(t.t()), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_hardtanh(dtype: torch.dtype) -> None:
    x = (torch.randn(4, 6) * 10).to(dtype)
    check(lambda t: F.hardtanh(t, -2.0, 3.0), x)
    check(lambda t: F.hardtanh(t.clone(), 0.0, 6.0, inplace=True), x)
    check(lambda t: F.relu6(t[:, ::2]), x)


@pytest.mark.parametrize("other", [2, 0.5, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool])
def test_scalar_arithmetic(dtype: torch.dtype, other: object) -> None:
    x = (torch.randn(3, 4) * 5).to(dtype)
    check(lambda t: t + other, x)
    check(lambda t: t * other, x)
    check(lambda t: torch.add(t, other, alpha=2), x)
    check(lambda t: t.float() / other, x)
    if dtype is not torch.bool and other is not True:
        check(lambda t: t - other, x)
        check(lambda t: other - t, x)
        check(lambda t: torch.rsub(t, torch.full_like(t, 3)), x)
        if dtype is torch.float32 or isinstance(other, int):
            check(lambda t: t.clone().add_(other), x)
            check(lambda t: t.clone().mul_(other), x)
            check(lambda t: t.clone().sub_(other), x)
    if dtype is torch.float32:
        check(lambda t: t.clone().div_(other), x)


def test_masked_fill() -> None:
    x = torch.randn(2, 5, 4)
    mask = torch.rand(5, 1) > 0.5
    check(lambda t, m: t.masked_fill(m, -1.5), x, mask)
    check(lambda t, m: t.masked_fill(m, torch.tensor(2.0)), x, mask)
    check(lambda t, m: t.transpose(1, 2).masked_fill(m.t(), 0.0), x, mask)
    check(lambda t, m: t[0].masked_fill(m, 1.0), x, torch.rand(2, 5, 4) > 0.5)
    ints = torch.arange(20).reshape(5, 4)
    check(lambda t, m: t.masked_fill(m, 7), ints, mask)
    check(lambda t, m: t.masked_fill(m, 2.5), x.double(), mask)


@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_embedding(index_dtype: torch.dtype) -> None:
    w = torch.randn(10, 6)
    ids = torch.randint(0, 10, (3, 4), dtype=index_dtype)
    check(F.embedding, ids, w)
    check(lambda i, t: F.embedding(i[0], t, padding_idx=0), ids, w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_layer_norm(dtype: torch.dtype) -> None:
    x = torch.randn(2, 3, 8, dtype=dtype)
    w, b = torch.randn(8, dtype=dtype), torch.randn(8, dtype=dtype)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype is torch.bfloat16 else {}
    check(lambda t: torch.ops.aten.native_layer_norm(t, [8], w, b, 1e-5)[0], x, **tol)
    check(lambda t: torch.ops.aten.native_layer_norm(t, [3, 8], None, None, 1e-5)[0], x, **tol)
    check(lambda t: F.layer_norm(t.transpose(0, 1), [8], w, b), x, **tol)


@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last])
def test_batch_norm(memory_format: torch.memory_format) -> None:
    x = torch.randn(2, 3, 5, 5).to(memory_format=memory_format)
    mean, var = torch.randn(3), torch.rand(3) + 0.5
    w, b = torch.randn(3), torch.randn(3)
    check(lambda t: torch.ops.aten.native_batch_norm(t, w, b, mean, var, False, 0.1, 1e-5)[0], x)
    check(lambda t: torch.ops.aten._native_batch_norm_legit_no_training(
        t, w, b, mean, var, 0.1, 1e-5)[0], x)
    check(lambda t: F.batch_norm(t, mean, var, None, None), x)
    check(lambda t: F.batch_norm(t[:, :, ::2], mean, var, w, b), x)
    check(lambda t: F.batch_norm(t.flatten(2), mean, var, w, b), x)


@pytest.mark.parametrize("case", [
    dict(x=(2, 3, 9, 9), w=(4, 3, 3, 3)),
    dict(x=(1, 4, 9, 7), w=(6, 2, 2, 3), stride=[2, 1], padding=[1, 0], dilation=[1, 2],
         groups=2),
    dict(x=(2, 4, 10), w=(4, 1, 3), stride=[2], padding=[1], groups=4),
    dict(x=(1, 2, 4, 5, 5), w=(3, 2, 1, 3, 3), padding=[0, 1, 1]),
    dict(x=(2, 3, 7, 7), w=(5, 3, 3, 3), bias=True, stride=[3]),
])
def test_convolution(case: dict) -> None:
    x, w = torch.randn(case["x"]), torch.randn(case["w"])
    bias = torch.randn(case["w"][0]) if case.get("bias") else None
    n = len(case["x"]) - 2
    stride = case.get("stride", [1] * n)
    padding = case.get("padding", [0] * n)
    dilation = case.get("dilation", [1] * n)
    groups = case.get("groups", 1)
    check(lambda a, b: torch.ops.aten.convolution(a, b, bias, stride, padding, dilation, False,
                                                  [0] * n, groups), x, w, atol=1e-4, rtol=1e-4)


def test_transposed_convolution_is_left_to_torch() -> None:
    x, w = torch.randn(1, 4, 5, 5), torch.randn(4, 2, 3, 3)
    check(lambda a, b: F.conv_transpose2d(a, b, stride=2), x, w, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("case", ["plain", "causal", "bool mask", "float mask", "3-d",
                                  "value width", "scale"])
def test_scaled_dot_product_attention(case: str) -> None:
    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    kwargs: dict = {}
    if case == "causal":
        kwargs["is_causal"] = True
    elif case == "bool mask":
        kwargs["attn_mask"] = torch.rand(5, 5) > 0.3
        kwargs["attn_mask"][:, 0] = True
    elif case == "float mask":
        kwargs["attn_mask"] = torch.randn(3, 1, 5)
    elif case == "3-d":
        q, k, v = q[0], k[0], v[0]
    elif case == "value width":
        v = torch.randn(2, 3, 5, 4)
    elif case == "scale":
        kwargs["scale"] = 0.5
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **kwargs), q, k, v,
          atol=1e-5, rtol=1e-5)


def test_invalid_arguments_keep_torchs_error() -> None:
    """Arguments a C++ function does not describe go to torch's Meta kernel, whose
    error the tracer reports with the op and the source line."""
    x, w = torch.randn(1, 3, 5, 5), torch.randn(4, 2, 3, 3)
    with pytest.raises(RuntimeError, match=r"aten::convolution[\s\S]*test_meta_kernels.py"):
        poptorch.trace(lambda a, b: F.conv2d(a, b), x, w).compile()
