"""Parallel LLVM code generation: the program is split into parts compiled on
POPTORCH_COMPILE_THREADS threads (default: the cores) and linked into one JIT dylib.
The result must not depend on the number of threads, and a cached program of
several parts loads like one of a single part."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import assert_matches

import poptorch


class Net(torch.nn.Module):
    """Several distinct kernels (matmul, elementwise, reductions, a parallel loop)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(64, 128)
        self.b = torch.nn.Linear(128, 32)
        self.norm = torch.nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.nn.functional.gelu(self.a(x))
        y = self.norm(self.b(h)).softmax(-1)
        return y, (x.exp().sum(0) + h.amax(1).mean()).tanh()


def compile_with(threads: int, monkeypatch: pytest.MonkeyPatch, cache: Path | None = None):
    monkeypatch.setenv("POPTORCH_COMPILE_THREADS", str(threads))
    torch.manual_seed(0)
    model = Net().eval()
    opts = poptorch.Options()
    if cache is not None:
        opts.enableExecutableCaching(str(cache))
    pm = poptorch.inferenceModel(model, opts)
    x = torch.randn(16, 64)
    out = pm(x)
    with torch.no_grad():
        assert_matches(out, model(x), atol=1e-5, rtol=1e-5)
    return pm, out


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_same_result_with_any_number_of_threads(threads: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _, one = compile_with(1, monkeypatch)
    _, many = compile_with(threads, monkeypatch)
    for a, b in zip(one, many, strict=True):
        assert torch.equal(a, b)


def test_cached_parts_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, a = compile_with(4, monkeypatch, tmp_path)
    assert first.executable.origin == "compiled"
    # Loaded with another thread count: the entry holds object code, not a plan.
    second, b = compile_with(1, monkeypatch, tmp_path)
    assert second.executable.origin == "loaded"
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x, y)


def test_bad_thread_count_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POPTORCH_COMPILE_THREADS", "many")
    pm = poptorch.inferenceModel(torch.nn.Linear(4, 4).eval())
    with pytest.raises(Exception, match="POPTORCH_COMPILE_THREADS"):
        pm(torch.randn(2, 4))


class Big(torch.nn.Module):
    """A matmul above the parallel threshold: its kernel runs on the async runtime
    (coroutines the LLVM optimizer splits), whichever part it lands in."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(768, 768)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.a(x)) * 2


def test_parallel_loops_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    model = Big().eval()
    x = torch.randn(1024, 768)
    outs = []
    for threads in (1, 4):
        monkeypatch.setenv("POPTORCH_COMPILE_THREADS", str(threads))
        pm = poptorch.inferenceModel(model)
        outs.append(pm(x))
        assert "poptorch_parallel_for" in pm.executable.stages[-1][1]
    with torch.no_grad():
        assert_matches(outs[1], model(x), atol=1e-4, rtol=1e-4)
    assert torch.equal(outs[0], outs[1])
