"""PipelinedExecution overlaps the stages across micro-batches (issue 5, item 6).

The compiler outlines each stage (``poptorch-outline-stages``), builds the
software pipeline in the device-iteration loop (fill, steady state, drain;
``poptorch-device-iterations{pipeline=true}``) and runs the stage calls of one
step concurrently (``poptorch-overlap-stages``: ``async.execute`` tasks). The
results must be those of eager PyTorch run micro-batch by micro-batch, and of
the sequential schedule, for every output mode, with replication, buffers and
``ipu_print_tensor``.
"""

from __future__ import annotations

import copy
import glob
import os
import warnings

import pytest
import torch

import poptorch
from poptorch import _tracing
from poptorch.enums import OutputMode


class Stages(torch.nn.Module):
    """``n`` stages of Linear + tanh; also returns what stage 0 computed."""

    def __init__(self, n: int, width: int = 8) -> None:
        super().__init__()
        torch.manual_seed(n)
        self.layers = torch.nn.ModuleList(
            poptorch.BeginBlock(torch.nn.Linear(width, width), f"s{k}", ipu_id=k)
            for k in range(n))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        first = None
        for layer in self.layers:
            x = torch.tanh(layer(x))
            first = x * 2 if first is None else first
        return x, first


class Counter(torch.nn.Module):
    """A buffer counted up in the last stage (``shared``: also read by stage 0)."""

    def __init__(self, shared: bool = False) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.shared = shared
        self.a = poptorch.BeginBlock(torch.nn.Linear(4, 4), "a", ipu_id=0)
        self.b = poptorch.BeginBlock(torch.nn.Linear(4, 4), "b", ipu_id=1)
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x)
        if self.shared:
            y = y + self.count
        y = self.b(y)
        self.count += 1
        return y * self.count


def compile_run(model, x, iterations, mode=OutputMode.All, n=None, replicas=1,
                pipelined=True, dump=None):
    opts = poptorch.Options().deviceIterations(iterations).replicationFactor(replicas)
    if mode == OutputMode.EveryN:
        opts.outputMode(mode, n)
    else:
        opts.outputMode(mode)
    if dump is not None:
        opts.dumpMLIR(dump)
    saved = _tracing._PIPELINE_OVERRIDE
    _tracing._PIPELINE_OVERRIDE = None if pipelined else False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            executor = poptorch.inferenceModel(copy.deepcopy(model).eval(), opts)
            out = executor(x)
    finally:
        _tracing._PIPELINE_OVERRIDE = saved
    return executor, out, [str(w.message) for w in caught]


def schedule(executor) -> str:
    return dict(executor.executable.stages)["device-loop"]


def eager(model, x, iterations, mode, n=None):
    """Eager PyTorch micro-batch by micro-batch (one replica), as outputMode says."""
    model = copy.deepcopy(model).eval()
    with torch.no_grad():
        outs = [model(c) for c in x.chunk(iterations)]
    outs = [o if isinstance(o, tuple) else (o,) for o in outs]
    result = []
    for k in range(len(outs[0])):
        per = [o[k] for o in outs]
        if mode == OutputMode.All:
            result.append(torch.cat(per))
        elif mode == OutputMode.Final:
            result.append(per[-1])
        elif mode == OutputMode.Sum:
            result.append(torch.stack(per).sum(0))
        else:
            result.append(torch.cat(per[n - 1::n]))
    return tuple(result) if len(result) > 1 else result[0]


MODES = [(OutputMode.All, None), (OutputMode.Final, None), (OutputMode.Sum, None),
         (OutputMode.EveryN, 2)]


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("extra", ["S", "S+1", "2S+3"])
@pytest.mark.parametrize("mode,n", MODES, ids=[m.name for m, _ in MODES])
def test_pipelined_matches_eager_and_sequential(stages, extra, mode, n) -> None:
    iterations = {"S": stages, "S+1": stages + 1, "2S+3": 2 * stages + 3}[extra]
    if n is not None and iterations % n:
        iterations += 1
    model = Stages(stages)
    x = torch.randn(iterations * 3, 8)
    executor, out, caught = compile_run(model, x, iterations, mode, n)
    assert 'poptorch.pipeline = "overlapped"' in schedule(executor)
    assert not any("PipelinedExecution" in c for c in caught)
    torch.testing.assert_close(out, eager(model, x, iterations, mode, n))
    seq_executor, seq, _ = compile_run(model, x, iterations, mode, n, pipelined=False)
    assert "poptorch.pipeline" not in schedule(seq_executor)
    torch.testing.assert_close(out, seq)


@pytest.mark.parametrize("mode,n", MODES, ids=[m.name for m, _ in MODES])
def test_pipelined_with_replication(mode, n) -> None:
    model = Stages(2)
    iterations = 4
    x = torch.randn(iterations * 2 * 3, 8)
    executor, out, _ = compile_run(model, x, iterations, mode, n, replicas=2)
    assert 'poptorch.pipeline = "overlapped"' in schedule(executor)
    _, seq, _ = compile_run(model, x, iterations, mode, n, replicas=2, pipelined=False)
    torch.testing.assert_close(out, seq)
    if mode == OutputMode.All:
        torch.testing.assert_close(out, eager(model, x, iterations * 2, mode))


def test_buffer_of_one_stage_is_carried_by_that_stage() -> None:
    model = Counter()
    x = torch.randn(5 * 2, 4)
    executor, out, caught = compile_run(model, x, 5)
    assert 'poptorch.pipeline = "overlapped"' in schedule(executor)
    assert not any("PipelinedExecution" in c for c in caught)
    torch.testing.assert_close(out, eager(model, x, 5, OutputMode.All))
    # A second call continues counting, as eager would.
    torch.testing.assert_close(executor(x), eager(model, torch.cat([x, x]), 10,
                                                   OutputMode.All)[10:])


def test_buffer_shared_between_stages_falls_back_with_a_warning() -> None:
    model = Counter(shared=True)
    x = torch.randn(4 * 2, 4)
    executor, out, caught = compile_run(model, x, 4)
    assert 'poptorch.pipeline = "sequential: the buffer count is read by stage 0 and ' \
           'written by stage 1"' in schedule(executor)
    assert any("PipelinedExecution" in c and "one after another" in c and "count" in c
               for c in caught)
    torch.testing.assert_close(out, eager(model, x, 4, OutputMode.All))


def test_print_tensor_in_a_stage(capfd) -> None:
    class Printing(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = poptorch.BeginBlock(torch.nn.Identity(), "a", ipu_id=0)
            self.b = poptorch.BeginBlock(torch.nn.Identity(), "b", ipu_id=1)

        def forward(self, x):
            y = self.a(x) * 2
            z = poptorch.ipu_print_tensor(self.b(y) + 1, "stage1")
            return z

    x = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    capfd.readouterr()
    executor, out, _ = compile_run(Printing(), x, 3)
    assert 'poptorch.pipeline = "overlapped"' in schedule(executor)
    torch.testing.assert_close(out, x * 2 + 1)
    printed = capfd.readouterr().out
    for row in (x * 2 + 1).tolist():
        line = "stage1: [[" + ", ".join(f"{v:g}" for v in row) + "]]"
        assert printed.count(line) == 1, printed


def test_steps_run_the_stages_as_async_tasks(tmp_path) -> None:
    compile_run(Stages(3), torch.randn(6, 8), 6, dump=str(tmp_path))
    (overlap,) = glob.glob(os.path.join(str(tmp_path), "*", "*poptorch-overlap-stages*.mlir"))
    with open(overlap) as f:
        text = f.read()
    # Fill: one step with two stages; steady state: three stages, two of them
    # tasks, the third on the calling thread; drain: one step with two stages.
    assert text.count("async.execute") == 1 + 2 + 1, text
    assert text.count("async.await") == 1 + 2 + 1
    (captured,) = glob.glob(os.path.join(str(tmp_path), "*", "*poptorch-outline-stages*.mlir"))
    with open(captured) as f:
        assert "func.func private @main_stage2" in f.read()


def test_sharded_and_single_stage_models_are_not_outlined() -> None:
    model = Stages(2)
    x = torch.randn(4, 8)
    opts = poptorch.Options().deviceIterations(2)
    opts.setExecutionStrategy(poptorch.ShardedExecution())
    executor = poptorch.inferenceModel(copy.deepcopy(model).eval(), opts)
    torch.testing.assert_close(executor(x), eager(model, x, 2, OutputMode.All))
    assert "poptorch.pipeline" not in schedule(executor)
    assert "outline-stages" not in dict(executor.executable.stages)


def test_stage_with_parallel_ops_falls_back_with_a_warning() -> None:
    # 256 x 1024 x 1024 = 2^28 (min-parallel-cost): the matmul is split over
    # every core on its own, so the stages do not overlap.
    model = Stages(2, width=1024)
    x = torch.randn(2 * 256, 1024)
    executor, out, caught = compile_run(model, x, 2)
    assert "sequential: stage 0 has ops large enough to use every core" in schedule(executor)
    assert any("PipelinedExecution" in c and "every core" in c for c in caught)
    torch.testing.assert_close(out, eager(model, x, 2, OutputMode.All))


def test_fallback_warning_repeats_for_cached_and_exported_programs(tmp_path) -> None:
    # The schedule travels in the executable cache entry (and so in an
    # exported executable): a program loaded without compiling still says
    # that its stages run one after another.
    model = Counter(shared=True)
    x = torch.randn(4 * 2, 4)
    opts = poptorch.Options().deviceIterations(4).enableExecutableCaching(str(tmp_path / "c"))
    for origin in ("compiled", "loaded"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            executor = poptorch.inferenceModel(copy.deepcopy(model).eval(), opts)
            out = executor(x)
        assert executor.executable._program.origin == origin
        assert any("one after another" in str(c.message) and "count" in str(c.message)
                   for c in caught), origin
        torch.testing.assert_close(out, eager(model, x, 4, OutputMode.All))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        executor.compileAndExport(str(tmp_path / "m.poptorch"), x)
        caught.clear()
        loaded = poptorch.inferenceModel(copy.deepcopy(model).eval(), opts)
        loaded.loadExecutable(str(tmp_path / "m.poptorch"))
    assert any("one after another" in str(c.message) for c in caught)


def test_exported_pipelined_model_keeps_the_schedule(tmp_path) -> None:
    model = Stages(2)
    x = torch.randn(3 * 2, 8)
    opts = poptorch.Options().deviceIterations(3)
    executor = poptorch.inferenceModel(copy.deepcopy(model).eval(), opts)
    executor.compileAndExport(str(tmp_path / "m.poptorch"), x)
    loaded = poptorch.inferenceModel(copy.deepcopy(model).eval(), opts)
    loaded.loadExecutable(str(tmp_path / "m.poptorch"))
    assert loaded.executable.pipelined
    torch.testing.assert_close(loaded(x), eager(model, x, 3, OutputMode.All))
