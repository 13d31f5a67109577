"""Blocks, stages and phases (issue 5, item 6): BeginBlock, Block, BlockFunction,
removeBlocks and the execution strategies, against eager PyTorch."""

from __future__ import annotations

import glob
import os
import re
import warnings

import pytest
import torch

import poptorch
from poptorch import _options_impl
from poptorch.enums import AutoStage


@pytest.fixture(autouse=True)
def _fresh_warnings():
    _options_impl.reset_warnings()
    yield
    _options_impl.reset_warnings()


class Net(torch.nn.Module):
    """Three blocks: A (module hook), B (context manager), C (function decorator)."""

    def __init__(self, ipus=(0, 1, 1), ids=("A", "B", "C")) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.ids, self.ipus = ids, ipus
        self.a = poptorch.BeginBlock(torch.nn.Linear(6, 8), ids[0], ipu_id=ipus[0])
        self.b = torch.nn.Linear(8, 8)
        self.c = torch.nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.a(x).relu()
        with poptorch.Block(self.ids[1], ipu_id=self.ipus[1]):
            x = torch.tanh(self.b(x)) + x

        @poptorch.BlockFunction(self.ids[2], ipu_id=self.ipus[2])
        def head(y: torch.Tensor) -> torch.Tensor:
            return self.c(y).softmax(-1)

        return head(x)


def eager_per_micro_batch(model: torch.nn.Module, x: torch.Tensor, n: int) -> torch.Tensor:
    with torch.no_grad():
        return torch.cat([model(c) for c in x.chunk(n)])


def run(model: torch.nn.Module, x: torch.Tensor, strategy=None, iterations: int = 1,
        dump: str | None = None):
    opts = poptorch.Options().deviceIterations(iterations)
    if strategy is not None:
        opts.setExecutionStrategy(strategy)
    if dump is not None:
        opts.dumpMLIR(dump)
    executor = poptorch.inferenceModel(model.eval(), opts)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = executor(x)
    return executor, out, [str(w.message) for w in caught]


def stamps(mlir: str) -> list[tuple[str, int, int, int]]:
    """(block, stage, ipu, phase) of every captured op, in program order."""
    out = []
    for line in mlir.splitlines():
        if not re.match(r"\s*%\S+ = poptorch\.", line):
            continue
        m = re.search(r'poptorch\.block = "([^"]*)", poptorch\.ipu = (\d+) : i64, '
                      r"poptorch\.phase = (\d+) : i64, poptorch\.stage = (\d+) : i64", line)
        assert m, f"op without block attributes: {line}"
        out.append((m.group(1), int(m.group(4)), int(m.group(2)), int(m.group(3))))
    return out


def distinct(seq):
    out = []
    for s in seq:
        if not out or out[-1] != s:
            out.append(s)
    return out


STRATEGIES = {
    "default-SameAsIpu": (None, (0, 1, 1), 2,
                          [("A", 0, 0, 0), ("B", 1, 1, 0), ("C", 1, 1, 0)]),
    "AutoIncrement": (poptorch.PipelinedExecution(AutoStage.AutoIncrement), (None, None, None), 4,
                      [("A", 1, 1, 0), ("B", 2, 2, 0), ("C", 3, 3, 0)]),
    "Pipelined-stages": (lambda: poptorch.PipelinedExecution(
        poptorch.Stage("A").ipu(0), poptorch.Stage("B", "C").ipu(1)), (None, None, None), 2,
        [("A", 0, 0, 0), ("B", 1, 1, 0), ("C", 1, 1, 0)]),
    "Pipelined-ids": (lambda: poptorch.PipelinedExecution("A", ["B", "C"]), (0, 1, 1), 2,
                      [("A", 0, 0, 0), ("B", 1, 1, 0), ("C", 1, 1, 0)]),
    "Sharded": (lambda: poptorch.ShardedExecution("A", "B", "C"), (0, 1, 0), 1,
                [("A", 0, 0, 0), ("B", 1, 1, 0), ("C", 2, 0, 0)]),
    "Sharded-auto": (lambda: poptorch.ShardedExecution(AutoStage.AutoIncrement), (None, 0, None), 1,
                     [("A", 1, 1, 0), ("B", 2, 0, 0), ("C", 3, 3, 0)]),
    "SerialPhased": (lambda: poptorch.SerialPhasedExecution(
        poptorch.Phase(poptorch.Stage("A").ipu(0)), poptorch.Phase(poptorch.Stage("B").ipu(1)),
        poptorch.Phase(poptorch.Stage("C").ipu(0))), (None, None, None), 1,
        [("A", 0, 0, 0), ("B", 1, 1, 1), ("C", 2, 0, 2)]),
    "ParallelPhased": (lambda: poptorch.ParallelPhasedExecution(
        [poptorch.Phase(poptorch.Stage("A"), poptorch.Stage("B")).ipus(0, 1),
         poptorch.Phase(poptorch.Stage("C")).ipus(2)]), (None, None, None), 3,
        [("A", 0, 0, 0), ("B", 1, 1, 0), ("C", 2, 2, 1)]),
}


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_strategy_matches_eager_and_stamps_every_op(name: str, tmp_path) -> None:
    strategy, ipus, iterations, expected = STRATEGIES[name]
    if callable(strategy):
        strategy = strategy()
    model = Net(ipus=ipus)
    x = torch.randn(2 * iterations, 6)
    executor, out, _ = run(model, x, strategy, iterations, dump=str(tmp_path))
    torch.testing.assert_close(out, eager_per_micro_batch(model, x, iterations))
    graph = executor.executable.graph
    assert distinct(stamps(graph.mlir)) == expected
    # The same attributes are in the dumped captured module.
    (captured,) = glob.glob(os.path.join(str(tmp_path), "*", "00-captured.mlir"))
    with open(captured) as f:
        text = f.read()
    for block, stage, ipu, phase in expected:
        assert (f'poptorch.block = "{block}", poptorch.ipu = {ipu} : i64, poptorch.phase = '
                f"{phase} : i64, poptorch.stage = {stage} : i64") in text


def test_ops_before_the_first_block_belong_to_the_first_stage() -> None:
    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l = poptorch.BeginBlock(torch.nn.Linear(4, 4), "L", ipu_id=1)

        def forward(self, x):
            return self.l(x * 3 + 1)

    model = M()
    x = torch.randn(6, 4)
    executor, out, _ = run(model, x, iterations=2)
    torch.testing.assert_close(out, eager_per_micro_batch(model, x, 2))
    got = distinct(stamps(executor.executable.graph.mlir))
    assert got == [("default", 0, 0, 0), ("L", 1, 1, 0)]


def test_stage_ops_are_contiguous_in_program_order() -> None:
    model = Net(ipus=(0, 1, 1))
    executor, _, _ = run(model, torch.randn(4, 6), iterations=2)
    stages = [s[1] for s in stamps(executor.executable.graph.mlir)]
    assert stages == sorted(stages)


def test_model_without_blocks_has_no_block_attributes() -> None:
    model = torch.nn.Linear(4, 2)
    executor, out, caught = run(model, torch.randn(2, 4))
    assert "poptorch.block" not in executor.executable.graph.mlir
    assert not any("PipelinedExecution" in c for c in caught)


def test_auto_ids_number_blocks_in_order() -> None:
    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = poptorch.BeginBlock(torch.nn.Linear(4, 4), ipu_id=0)
            self.b = poptorch.BeginBlock(torch.nn.Linear(4, 4), ipu_id=1)

        def forward(self, x):
            return self.b(self.a(x))

    model = M()
    x = torch.randn(2, 4)
    executor, out, _ = run(model, x, iterations=2)
    torch.testing.assert_close(out, eager_per_micro_batch(model, x, 2))
    assert [s[0] for s in distinct(stamps(executor.executable.graph.mlir))] == ["0", "1"]


def test_pipelined_stages_overlap_without_warning() -> None:
    # PipelinedExecution is honoured (tests/test_pipelining.py): no warning.
    executor, _, caught = run(Net(ipus=(0, 1, 1)), torch.randn(4, 6), iterations=2)
    assert not any("PipelinedExecution" in c for c in caught)
    stages = dict(executor.executable.stages)
    assert 'poptorch.pipeline = "overlapped"' in stages["device-loop"]
    # Sharded execution is sequential by definition: nothing to report.
    _, _, sharded = run(Net(ipus=(0, 1, 1)), torch.randn(2, 6),
                        poptorch.ShardedExecution(AutoStage.SameAsIpu))
    assert not any("PipelinedExecution" in c for c in sharded)


def test_eager_calls_ignore_blocks() -> None:
    model = Net(ipus=(0, 1, 1))
    x = torch.randn(2, 6)
    plain = Net(ipus=(0, 1, 1))
    poptorch.removeBlocks(plain)
    torch.testing.assert_close(model(x), plain(x))


def test_remove_blocks() -> None:
    model = Net(ipus=(0, 1, 1))
    assert poptorch.removeBlocks(model) is model
    # Only the Block/BlockFunction scopes remain: A's ops go to the default block.
    executor, out, _ = run(model, torch.randn(4, 6), iterations=2)
    blocks = [s[0] for s in distinct(stamps(executor.executable.graph.mlir))]
    assert blocks == ["default", "B", "C"]


# ---- PopTorch's errors

def test_device_iterations_must_cover_the_pipeline_stages() -> None:
    model = Net(ipus=(0, 1, 2))
    with pytest.raises(ValueError, match=r"deviceIterations must be greater than or equal to the "
                                         r"number of pipeline stages \(3\) when using "
                                         r"poptorch\.PipelinedExecution"):
        run(model, torch.randn(2, 6), iterations=2)
    # Sharded execution has no such requirement.
    _, out, _ = run(Net(ipus=(0, 1, 2)), torch.randn(2, 6), poptorch.ShardedExecution())
    assert out.shape == (2, 3)


def test_strategy_must_name_every_block() -> None:
    with pytest.raises(ValueError, match=r"starts block 'C', but the execution strategy "
                                         r"PipelinedExecution does not name it"):
        run(Net(), torch.randn(2, 6), poptorch.PipelinedExecution("A", "B"), 2)


def test_same_as_ipu_needs_an_ipu() -> None:
    with pytest.raises(ValueError, match=r"AutoStage.SameAsIpu was selected but no IPU was "
                                         r"specified for block 'A'"):
        run(Net(ipus=(None, 1, 1)), torch.randn(2, 6), iterations=2)


def test_stages_must_be_entered_in_order() -> None:
    with pytest.raises(ValueError, match=r"block 'B' \(stage 0\) starts after stage 1 ran"):
        run(Net(ipus=(1, 0, 1)), torch.randn(4, 6), iterations=2)


def test_phases_must_be_entered_in_order() -> None:
    strategy = poptorch.SerialPhasedExecution(poptorch.Phase("B"), poptorch.Phase("A", "C"))
    with pytest.raises(ValueError, match=r"block 'B' \(phase 0\) starts after phase 1 ran"):
        run(Net(), torch.randn(2, 6), strategy)


def test_a_stage_runs_on_one_ipu() -> None:
    strategy = poptorch.ShardedExecution(["A", "B"], "C")
    with pytest.raises(ValueError, match=r"stage 0 has blocks on IPU 0 and on IPU 1"):
        run(Net(ipus=(0, 1, 2)), torch.randn(2, 6), strategy)


def test_block_argument_checks() -> None:
    with pytest.raises(TypeError, match="BeginBlock expects a torch.nn.Module or a function"):
        poptorch.BeginBlock(3)
    with pytest.raises(TypeError, match="user_id must be a str, an int >= 0 or None"):
        poptorch.Block(3.5)
    with pytest.raises(TypeError, match="ipu_id must be an int"):
        poptorch.BlockFunction("a", ipu_id=-1)
