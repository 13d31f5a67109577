"""poptorch.CPU (PopTorch's CPU op): a Python function that runs on the host inside the
compiled program, where the model calls it, compared with eager PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import assert_matches

import poptorch


class WithCpuOps(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        # numpy inside: code the compiler could never trace
        self.scale = poptorch.CPU(lambda a: torch.from_numpy(np.tanh(a.numpy()) * 2), "scale")
        self.split = poptorch.CPU(lambda a, b: (a.sort(-1).values, (a * b).sum(0)), "split")

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = self.scale(self.linear(x))
        s, t = self.split(y, x)
        return y + 1, s * 2, t


def test_host_functions_run_inside_the_program():
    model = WithCpuOps().eval()
    compiled = poptorch.inferenceModel(model)
    for _ in range(3):  # replays run the function every call, on the call's values
        x = torch.randn(3, 4)
        with torch.no_grad():
            assert_matches(compiled(x), model(x))
    assert compiled.compile_count == 1
    graph = poptorch.trace(model, torch.randn(3, 4))
    statuses = [r["status"] for r in graph.op_log if r["name"] == "poptorch::host_call"]
    assert statuses == ["host_kernel", "host_kernel"]


def test_result_shapes_that_depend_on_values_are_guarded():
    positives = poptorch.CPU(lambda a: a[a > 0], "positives")

    class M(torch.nn.Module):
        def forward(self, x):
            return positives(x * 1) * 3

    model = poptorch.inferenceModel(M())
    for x in (torch.tensor([1.0, -2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0]),
              torch.tensor([1.0, -2.0, 3.0])):
        assert_matches(model(x), x[x > 0] * 3)
    assert model.compile_count == 2  # one variant per result shape


def test_the_function_cannot_write_into_program_values():
    bump = poptorch.CPU(lambda a: a.add_(100), "bump")

    class M(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            return bump(y), y + 1

    x = torch.randn(3)
    out = poptorch.inferenceModel(M())(x)
    torch.testing.assert_close(out[0], x * 2 + 100)
    torch.testing.assert_close(out[1], x * 2 + 1)  # y is unchanged, as its own value


def test_outside_a_compiled_model_it_calls_the_function():
    double = poptorch.CPU(lambda a, k=2: a * k, "double")
    assert double(torch.ones(2), k=3).tolist() == [3.0, 3.0]


def test_errors():
    with pytest.raises(poptorch.Error, match="ID must be a non-empty str"):
        poptorch.CPU(lambda a: a, "")
    with pytest.raises(poptorch.Error, match="must be callable"):
        poptorch.CPU(3, "three")
    op = poptorch.CPU(lambda a, n: a * n, "times")

    class M(torch.nn.Module):
        def forward(self, x):
            return op(x, 2)

    with pytest.raises(poptorch.Error, match="arguments must be tensors"):
        poptorch.inferenceModel(M())(torch.ones(2))
    with pytest.raises(poptorch.Error, match="host_call"):
        poptorch.inferenceModel(WithCpuOps(), poptorch.Options().hostKernels(False))(
            torch.randn(3, 4))
