"""Ops without a lowering run as PyTorch's own CPU kernels inside the compiled program
(``poptorch.host_kernel``), compared with eager PyTorch."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F
from conftest import Fn, assert_matches

import poptorch
from poptorch import _tracing


def spd(n: int, batch: tuple[int, ...] = ()) -> torch.Tensor:
    a = torch.randn(*batch, n, n)
    return a @ a.transpose(-1, -2) + n * torch.eye(n)


def statuses(fn, *args) -> dict[str, str]:
    graph = poptorch.trace(fn, *args)
    return {r["name"]: r["status"] for r in graph.op_log}


@pytest.mark.parametrize("name, fn, args", [
    ("inv", lambda x: torch.linalg.inv(x) * 2, (spd(4),)),
    ("inv-between-native-ops", lambda x, y: torch.linalg.inv(x @ x.mT + torch.eye(3)) @ y,
     (torch.randn(2, 3, 3), torch.randn(2, 3, 5))),
    ("cholesky", lambda x: torch.linalg.cholesky(x).sum(-1), (spd(5, (2,)),)),
    ("eigh-two-results", lambda x: torch.linalg.eigh(x)[0], (spd(4),)),
    ("qr", lambda x: torch.linalg.qr(x)[1].abs(), (torch.randn(5, 3),)),
    ("slogdet", lambda x: torch.stack(torch.linalg.slogdet(x)), (spd(3),)),
    ("int-result", lambda x: torch.linalg.lu_factor(x)[1] * 3, (torch.randn(4, 4),)),
    # no Meta kernel: result shapes from the CPU kernel on the traced values
    ("geqrf-no-meta-kernel", lambda x: torch.geqrf(x * 2), (torch.randn(4, 3),)),
    ("histogram-no-meta-kernel", lambda x: torch.histogram(x, bins=5), (torch.randn(20),)),
    # an out= form the composite kernel resizes
    ("lstsq-out-resized", lambda a, b: torch.linalg.lstsq(a, b).solution,
     (torch.randn(5, 3), torch.randn(5, 2))),
])
def test_op_without_lowering_runs_as_host_kernel(name, fn, args):
    with torch.no_grad():
        expected = fn(*args)
    assert "host_kernel" in statuses(fn, *args).values()
    model = poptorch.inferenceModel(Fn(fn))
    for _ in range(2):
        assert_matches(model(*args), expected)


def test_first_use_warns_once_per_op(caplog):
    fn = lambda x: torch.linalg.matrix_exp(x) + 1  # noqa: E731
    _tracing._HOST_KERNELS_WARNED.discard("aten::linalg_matrix_exp")
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        poptorch.trace(fn, torch.randn(3, 3))
        poptorch.trace(fn, torch.randn(3, 3))
    lines = [r.message for r in caplog.records if "linalg_matrix_exp" in r.message]
    assert len(lines) == 1, lines
    assert "test_host_kernels.py" in lines[0] and "CPU kernel" in lines[0]


def test_native_code_only_makes_them_unsupported():
    opts = poptorch.Options().hostKernels(False)
    with pytest.raises(poptorch.errors.UnsupportedOpError, match="linalg_inv_ex"):
        poptorch.inferenceModel(Fn(torch.linalg.inv), opts)(spd(3))


def test_value_read_from_a_host_kernel_while_tracing():
    def fn(x):
        if torch.linalg.det(x) > 0:
            return x * 2
        return -x

    a = spd(3)
    b = a.clone()
    b[0] *= -1  # a negative determinant
    model = poptorch.inferenceModel(Fn(fn))
    for x in (a, b, a):
        assert_matches(model(x), fn(x))
    assert model.compile_count == 2


def test_host_kernel_program_from_the_executable_cache(tmp_path):
    x = spd(4)
    fn = lambda x: torch.linalg.inv(x) + x  # noqa: E731
    opts = poptorch.Options().enableExecutableCaching(str(tmp_path))
    first = poptorch.inferenceModel(Fn(fn), opts)
    assert_matches(first(x), fn(x))
    second = poptorch.inferenceModel(Fn(fn), opts)
    assert_matches(second(x), fn(x))
    assert second.executable.origin == "loaded"


def test_explain_lists_host_kernels():
    text = str(poptorch.explain(Fn(torch.linalg.inv), spd(3)))
    assert "host kernel" in text, text


@pytest.mark.parametrize("name, fn, inputs", [
    ("nonzero", lambda x: torch.nonzero(x > 0).float() * 2,
     [torch.tensor([1.0, -1.0, 2.0]), torch.tensor([1.0, 1.0, 2.0]), torch.tensor([-1.0, -1.0, -2.0])]),
    ("masked_select", lambda x: torch.masked_select(x, x > 0.5) + 1,
     [torch.tensor([[0.1, 0.9], [0.7, 0.2]]), torch.tensor([[0.6, 0.9], [0.7, 0.2]])]),
    ("unique", lambda x: torch.unique(x * 2),
     [torch.tensor([3, 1, 3, 2]), torch.tensor([1, 1, 1, 1])]),
    ("computed-mask-index", lambda x: x[x.sum(1) > 0] * 3,
     [torch.tensor([[1.0, 2.0], [-3.0, 1.0], [0.5, 0.5]]), torch.ones(3, 2)]),
])
def test_value_dependent_shapes_are_guarded(name, fn, inputs):
    model = poptorch.inferenceModel(Fn(fn))
    for x in inputs + inputs[:1]:
        assert_matches(model(x), fn(x))
    # One variant per distinct result shape.
    shapes = {tuple(fn(x).shape) for x in inputs}
    assert model.compile_count == len(shapes)
    assert any(g.in_program for g in model.executable.graph.guards)


@pytest.mark.parametrize("name, fn, args", [
    ("grid_sample-bicubic", lambda x, g: F.grid_sample(x, g, mode="bicubic", align_corners=False),
     (torch.randn(1, 2, 5, 5), torch.rand(1, 3, 3, 2) * 2 - 1)),
    ("masked_scatter-broadcast-mask", lambda x, m, s: x.masked_scatter(m, s),
     (torch.randn(3), torch.tensor([[True, False, True], [False, True, True]]), torch.randn(6))),
    # a random op (dropout inside attention) that draws nothing with dropout_p=0
    ("sdpa-unbatched-key-value", F.scaled_dot_product_attention,
     (torch.randn(2, 3, 4), torch.randn(3, 4), torch.randn(3, 4))),
])
def test_arguments_the_lowering_refuses_run_as_host_kernel(name, fn, args, caplog):
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        model = poptorch.inferenceModel(Fn(fn))
        assert_matches(model(*args), fn(*args))
    assert any("no lowering for these arguments (" in r.message for r in caplog.records), [
        r.message for r in caplog.records]
    with pytest.raises(poptorch.errors.TraceError, match="cannot be captured as poptorch"):
        poptorch.inferenceModel(Fn(fn), poptorch.Options().hostKernels(False))(*args)


@pytest.mark.parametrize("name, fn, args", [
    ("layer_norm-mean-rstd", lambda x, w, b: torch.native_layer_norm(x, [3], w, b, 1e-5),
     (torch.randn(4, 3), torch.rand(3), torch.randn(3))),
])
def test_results_the_lowering_does_not_compute(name, fn, args):
    model = poptorch.inferenceModel(Fn(fn))
    assert_matches(model(*args), fn(*args))
    # Unused, they cost nothing: no host kernel is left in the program.
    graph = poptorch.trace(Fn(lambda *a: fn(*a)[0] * 2), *args)
    assert "poptorch.host_kernel" not in graph.mlir
