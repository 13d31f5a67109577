"""PopTorch API helpers (issue 5, item 8): ipu_print_tensor, dynamic_slice,
getIpuTensorId, experimental.IPUScope and PoplarExecutor.getPerfCounters."""

from __future__ import annotations

import pytest
import torch
from opsuite import sample

import poptorch

# ---- dynamic_slice


class DynamicSlice(torch.nn.Module):
    def __init__(self, dim: int, size: int, step: int) -> None:
        super().__init__()
        self.dim, self.size, self.step = dim, size, step

    def forward(self, x: torch.Tensor, start: torch.Tensor) -> torch.Tensor:
        return poptorch.dynamic_slice(x, self.dim, start, self.size, self.step) + 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64,
                                   torch.bool])
@pytest.mark.parametrize("dim,size,step", [(0, 2, 1), (1, 3, 2), (-1, 1, 1), (1, 0, 1)])
def test_dynamic_slice_start_is_a_runtime_value(dtype, dim, size, step) -> None:
    x = sample((5, 9), dtype)
    model = DynamicSlice(dim, size, step)
    executor = poptorch.inferenceModel(model)
    extent = x.shape[dim]
    span = max((size - 1) * step + 1, 0)
    # One compiled program serves every start: it is an input, not a constant.
    for s in [0, 1, extent - span, extent + 4, -2]:
        start = torch.tensor([s], dtype=torch.int32)
        first = min(max(s, 0), extent - span)
        index = torch.arange(first, first + span, step)[:size]
        expected = x.index_select(dim, index) + 1
        torch.testing.assert_close(executor(x, start), expected)
        torch.testing.assert_close(model(x, start), expected)
    assert executor.compile_count == 1
    # A slice of no elements reads nothing: its result is an empty constant.
    assert ("poptorch.index" in executor.executable.graph.mlir) == (size > 0)


def test_dynamic_slice_int_start_and_errors() -> None:
    x = torch.arange(10.0)
    torch.testing.assert_close(poptorch.dynamic_slice(x, 0, 4, 3, 2), x[4:9:2])
    with pytest.raises(ValueError, match="spans 11 elements, but dimension 0 has 10"):
        poptorch.dynamic_slice(x, 0, 0, 6, 2)
    with pytest.raises(ValueError, match="start must be an int or a 1-element integer tensor"):
        poptorch.dynamic_slice(x, 0, torch.tensor([1.0]), 2, 1)
    with pytest.raises(ValueError, match="step must be an int >= 1"):
        poptorch.dynamic_slice(x, 0, 0, 2, 0)


# ---- ipu_print_tensor


class Printing(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = poptorch.ipu_print_tensor(x * 2, "doubled")
        poptorch.ipu_print_tensor(x.sum(), "unused")  # printed although its result is unused
        return y + 1


def test_ipu_print_tensor_prints_at_run_time(capfd) -> None:
    executor = poptorch.inferenceModel(Printing())
    x = torch.tensor([[1.0, 2.5], [-3.0, 4.0]])
    torch.testing.assert_close(executor(x), x * 2 + 1)
    first = capfd.readouterr().out
    assert "doubled: [[2, 5],\n" in first and "[-6, 8]]" in first
    assert "unused: 4.5" in first
    # Printed by the program on every run, with that run's values.
    torch.testing.assert_close(executor(x + 1), (x + 1) * 2 + 1)
    second = capfd.readouterr().out
    assert "doubled: [[4, 7]," in second and "unused: 8.5" in second
    assert "poptorch.print_tensor" in executor.executable.graph.mlir


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64,
                                   torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64,
                                   torch.bool])
def test_ipu_print_tensor_dtypes(dtype, capfd) -> None:
    x = torch.tensor([0, 1, 3], dtype=torch.int64).to(dtype)

    def fn(t):
        return poptorch.ipu_print_tensor(t, "t")

    out = poptorch.experimental.IPUContext(fn)(x)
    torch.testing.assert_close(out, x)
    text = capfd.readouterr().out
    expected = "t: [False, True, True]" if dtype == torch.bool else "t: [0, 1, 3]"
    assert expected in text


def test_ipu_print_tensor_summarises_large_tensors(capfd) -> None:
    x = torch.arange(2000, dtype=torch.int32).reshape(2, 1000)
    poptorch.experimental.IPUContext(lambda t: poptorch.ipu_print_tensor(t, "big"))(x)
    text = capfd.readouterr().out
    assert "big: [[0, 1, 2, ..., 997, 998, 999]," in text
    assert "[1000, 1001, 1002, ..., 1997, 1998, 1999]]" in text


def test_ipu_print_tensor_eager(capfd) -> None:
    x = torch.ones(2)
    assert poptorch.ipu_print_tensor(x, "eager") is x
    assert "eager: tensor([1., 1.])" in capfd.readouterr().out


# ---- getIpuTensorId


def test_get_ipu_tensor_id() -> None:
    ids: list[int] = []

    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            ids.append(poptorch.getIpuTensorId(x))
            ids.append(poptorch.getIpuTensorId(self.lin.weight))
            y = self.lin(x)
            ids.append(poptorch.getIpuTensorId(y))
            ids.append(poptorch.getIpuTensorId(y))
            return y

    poptorch.inferenceModel(M())(torch.randn(2, 3))
    # Arguments first (input, weight, bias), then op results; stable per tensor.
    assert ids[0] == 0 and ids[1] == 1
    assert ids[2] == ids[3] > 2
    with pytest.raises(RuntimeError, match="only while a model is traced"):
        poptorch.getIpuTensorId(torch.ones(1))


# ---- experimental.IPUScope


def test_ipu_scope_compiles_the_body() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU())
    x, y = torch.randn(3, 4), torch.randn(3, 5)
    with poptorch.experimental.IPUScope([x, y], model=model) as ipu:
        out = model(x) * y + torch.ones(5)
        total = out.sum(dim=0)
        ipu.outputs([out, total])
    assert ipu.graph is not None and "poptorch.addmm" in ipu.graph.mlir
    with torch.no_grad():
        for _ in range(2):
            x2, y2 = torch.randn(3, 4), torch.randn(3, 5)
            got_out, got_total = ipu(x2, y2)
            expected = model(x2) * y2 + 1
            torch.testing.assert_close(got_out, expected)
            torch.testing.assert_close(got_total, expected.sum(dim=0))
        # The parameters are program arguments: the host's new values are used
        # after copying them (as inferenceModel's copyWeightsToDevice).
        model[0].weight.mul_(2)
        ipu._executable.copy_weights_to_device()
        torch.testing.assert_close(ipu(x, y)[0], model(x) * y + 1)


def test_ipu_scope_single_output_and_errors() -> None:
    x = torch.randn(4)
    with poptorch.experimental.IPUScope([x]) as ipu:
        ipu.outputs([torch.sin(x) * 2])
    torch.testing.assert_close(ipu(x), torch.sin(x) * 2)
    with pytest.raises(RuntimeError, match=r"call ipu.outputs\(\[...\]\)"):
        with poptorch.experimental.IPUScope([x]):
            torch.cos(x)
    with pytest.raises(TypeError, match="expects a list of input tensors"):
        poptorch.experimental.IPUScope([1, 2])


# ---- getPerfCounters


def test_perf_counters() -> None:
    model = torch.nn.Linear(4, 2)
    executor = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(2))
    empty = executor.getPerfCounters()
    assert empty == {"input": [[]], "input_complete": [[]], "output": [[]],
                     "output_complete": [[]]}
    executor(torch.randn(6, 4))
    counters = executor.getPerfCounters()
    assert set(counters) == {"input", "input_complete", "output", "output_complete"}
    assert len(counters["input"]) == 1 and len(counters["output"]) == 1
    (t_in,), (t_copied,) = counters["input"][0], counters["input_complete"][0]
    (t_ran,), (t_done,) = counters["output"][0], counters["output_complete"][0]
    assert t_in <= t_copied <= t_ran <= t_done
    executor(torch.randn(6, 4))
    assert executor.getPerfCounters()["input"][0][0] > t_in


def test_perf_counters_of_the_common_call() -> None:
    # One micro-batch, positional tensors: the call runs through _C.CallPlan.
    executor = poptorch.inferenceModel(torch.nn.Linear(4, 2))
    x = torch.randn(3, 4)
    executor(x)
    stamps = []
    for _ in range(2):
        executor(x)
        c = executor.getPerfCounters()
        stamps.append([c[k][0][0] for k in ("input", "input_complete", "output",
                                            "output_complete")])
        assert stamps[-1] == sorted(stamps[-1])
    assert stamps[1][0] > stamps[0][3], "each call records its own timestamps"


def test_set_overlap_for_input_and_output_return_what_they_get():
    from poptorch import _helpers

    _helpers._OVERLAP_WARNED.clear()

    class M(torch.nn.Module):
        def forward(self, x, pair):
            x, pair = poptorch.set_overlap_for_input(
                (x, pair), poptorch.OverlapMode.OverlapDeviceIterationLoop)
            out = {"sum": x + pair[0], "prod": x * pair[1]}
            return poptorch.set_overlap_for_output(out, poptorch.OverlapMode.NoOverlap)

    x, pair = torch.randn(3), [torch.randn(3), torch.randn(3)]
    with pytest.warns(UserWarning, match=r"set_overlap_for_input.*has no effect"):
        out = poptorch.inferenceModel(M())(x, pair)
    torch.testing.assert_close(out, M()(x, pair))
    with pytest.raises(poptorch.Error, match="mode must be a poptorch.OverlapMode"):
        poptorch.set_overlap_for_input(x, "no_overlap")
    with pytest.raises(poptorch.Error, match="got int"):
        poptorch.set_overlap_for_output((x, 3), poptorch.OverlapMode.NoOverlap)
