"""Repeated layers are compiled once (``poptorch-outline-repeats``, issue 6).

The ``to-linalg`` stage ends by making each run of ops that repeats back to
back one private function, called once per instance: a transformer's layers
are tiled, vectorized and bufferized once instead of once per layer. The
results must be eager PyTorch's whatever the layers share (a mask every layer
reads, a layer that differs in a constant, device iterations, pipeline
stages), and the module must show the calls.
"""

from __future__ import annotations

import re

import pytest
import torch

import poptorch


class Block(torch.nn.Module):
    """A pre-norm residual MLP block, optionally masked by a shared tensor."""

    def __init__(self, width: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width, eps=eps)
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        h = self.down(torch.nn.functional.gelu(self.up(self.norm(x))))
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        return x + h


class Stack(torch.nn.Module):
    # 64 wide: both linear layers of a block are in weight panels on any host (a layer one
    # register block wide, 32 columns with AVX-512, keeps its layout, and its block's
    # reshapes then differ).
    def __init__(self, n: int, width: int = 64, masked: bool = False,
                 eps: list[float] | None = None) -> None:
        super().__init__()
        torch.manual_seed(n)
        eps = eps or [1e-5] * n
        self.masked = masked
        self.blocks = torch.nn.ModuleList(Block(width, e) for e in eps)
        self.head = torch.nn.Linear(width, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The mask is computed once and read by every block.
        mask = (x.sum(-1, keepdim=True) > 0) if self.masked else None
        for block in self.blocks:
            x = block(x, mask)
        return self.head(x)


def repeat_calls(executor) -> list[str]:
    """The callees of the repeated-run calls in the module after to-linalg."""
    text = dict(executor.executable.stages)["to-linalg"]
    return re.findall(r"call @(\w+_repeat\w*)\(", text)


def run(model, x, opts=None):
    executor = poptorch.inferenceModel(model.eval(), opts or poptorch.Options())
    out = executor(x)
    return executor, out


# The first block reads the model's input through other reshapes than the
# blocks after it read their predecessor's result (elementwise fusion moves
# the reshapes of the linear layers' weight panels across the residual adds),
# so it is not an instance: n blocks are n - 1 calls.


@pytest.mark.parametrize("masked", [False, True], ids=["plain", "shared-mask"])
@pytest.mark.parametrize("n", [3, 5])
def test_identical_layers_are_one_function(n, masked) -> None:
    model = Stack(n, masked=masked)
    x = torch.randn(3, 16, 64)
    executor, out = run(model, x)
    assert repeat_calls(executor) == ["main_repeat"] * (n - 1)
    with torch.no_grad():
        torch.testing.assert_close(out, model(x))


def test_layers_with_another_constant_are_another_function() -> None:
    # The last three blocks' layer norms have another epsilon.
    model = Stack(6, eps=[1e-5] * 3 + [1e-3] * 3)
    x = torch.randn(2, 8, 64)
    executor, out = run(model, x)
    calls = repeat_calls(executor)
    assert calls == ["main_repeat"] * 2 + ["main_repeat_0"] * 3, calls
    with torch.no_grad():
        torch.testing.assert_close(out, model(x))


@pytest.mark.parametrize("n", [1, 2])
def test_a_layer_without_a_twin_is_not_outlined(n) -> None:
    model = Stack(n)
    x = torch.randn(2, 8, 64)
    executor, out = run(model, x)
    assert repeat_calls(executor) == []
    with torch.no_grad():
        torch.testing.assert_close(out, model(x))


def test_layers_inside_the_device_iteration_loop() -> None:
    model = Stack(3, masked=True)
    x = torch.randn(4 * 2, 8, 64)
    executor, out = run(model, x, poptorch.Options().deviceIterations(4))
    assert repeat_calls(executor) == ["main_repeat"] * 2
    # The loop (made after tiling) calls the tiled function once per block.
    loop = dict(executor.executable.stages)["device-loop"]
    assert "poptorch.device_loop" in loop
    assert loop.count("call @main_repeat(") == 2
    with torch.no_grad():
        torch.testing.assert_close(out, model(x))


class Staged(torch.nn.Module):
    """Two pipeline stages of three identical blocks each."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.a = poptorch.BeginBlock(torch.nn.Sequential(*(Block(16) for _ in range(3))),
                                     "a", ipu_id=0)
        self.b = poptorch.BeginBlock(torch.nn.Sequential(*(Block(16) for _ in range(3))),
                                     "b", ipu_id=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


def test_layers_of_pipeline_stages() -> None:
    model = Staged()
    x = torch.randn(4 * 2, 8, 16)
    opts = poptorch.Options().deviceIterations(4)
    executor, out = run(model, x, opts)
    schedule = dict(executor.executable.stages)["device-loop"]
    assert 'poptorch.pipeline = "overlapped"' in schedule
    # Each stage's input is an argument of its function: all three blocks.
    assert repeat_calls(executor) == ["main_stage0_repeat"] * 3 + ["main_stage1_repeat"] * 3
    with torch.no_grad():
        torch.testing.assert_close(out, model(x))
