"""PopTorch execution semantics against eager PyTorch: device iterations (the loop
inside the program), replication, output modes, buffers across calls and iterations."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
import torch
from conftest import assert_matches

import poptorch
from poptorch import OutputMode


class Small(torch.nn.Module):
    """Two outputs (a batched one and a per-micro-batch scalar)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.relu(self.lin(x))
        return y, y.sum()


class Counter(torch.nn.Module):
    """A buffer updated in place once per forward, and an output that reads it."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("count", torch.zeros((), dtype=torch.float32))
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count += 1
        self.total += x.sum(0)
        return x * self.count


def opts(d: int = 1, r: int = 1, mode: OutputMode | None = None, n: int | None = None,
         **kw: bool) -> poptorch.Options:
    o = poptorch.Options().deviceIterations(d).replicationFactor(r)
    if mode is not None:
        o.outputMode(mode, n)
    if "broadcast" in kw:
        o.broadcastBuffers(kw["broadcast"])
    return o


def eager_slices(model: torch.nn.Module, x: torch.Tensor, d: int, r: int) -> list[list]:
    """Eager outputs per [iteration][replica], in PopTorch's batch layout."""
    chunks = x.reshape(d, r, -1, *x.shape[1:])
    with torch.no_grad():
        return [[model(chunks[i, j]) for j in range(r)] for i in range(d)]


def expected_outputs(per: list[list], mode: OutputMode, n: int) -> list[torch.Tensor]:
    """Combines eager per-slice outputs as PopTorch's outputMode documents."""
    d, r = len(per), len(per[0])
    n_out = len(per[0][0]) if isinstance(per[0][0], tuple) else 1

    def out(i: int, j: int, k: int) -> torch.Tensor:
        v = per[i][j]
        return v[k] if isinstance(v, tuple) else v

    results = []
    for k in range(n_out):
        if mode == OutputMode.Sum:
            picked = [[sum(out(i, j, k) for i in range(d)) for j in range(r)]]
        else:
            period = {OutputMode.All: 1, OutputMode.Final: d, OutputMode.EveryN: n}[mode]
            picked = [[out(i, j, k) for j in range(r)] for i in range(period - 1, d, period)]
        flat = [t for row in picked for t in row]
        if flat[0].dim() == 0:
            results.append(torch.stack(flat) if len(flat) > 1 else flat[0])
        else:
            results.append(torch.cat(flat))
    return results


MODES = [(OutputMode.All, None), (OutputMode.Final, None), (OutputMode.Sum, None),
         (OutputMode.EveryN, 2)]


@pytest.mark.parametrize("d,r", [(4, 1), (1, 2), (4, 2)])
@pytest.mark.parametrize("mode,n", MODES, ids=[m.name for m, _ in MODES])
def test_output_modes_match_eager_per_slice(d: int, r: int, mode: OutputMode, n: int | None) -> None:
    if mode == OutputMode.EveryN and d % n:
        n = d  # EveryN needs a multiple of the period (tested below)
    model = Small().eval()
    x = torch.randn(d * r * 2, 4)
    y, s = poptorch.inferenceModel(model, opts(d, r, mode, n))(x)
    ey, es = expected_outputs(eager_slices(model, x, d, r), mode, n)
    assert y.shape == ey.shape and s.shape == es.shape
    assert_matches((y, s), (ey, es), atol=1e-5, rtol=1e-5)


def test_default_output_mode_is_all_for_inference() -> None:
    model = Small().eval()
    x = torch.randn(3 * 2, 4)
    y, s = poptorch.inferenceModel(model, opts(3))(x)
    assert y.shape == (6, 3) and s.shape == (3,)
    assert_matches(y, model(x)[0], atol=1e-5, rtol=1e-5)


def test_loop_is_inside_the_program() -> None:
    """The iterations are one scf.for in the compiled program, not Python calls."""
    model = torch.nn.Linear(64, 64).eval()
    pm = poptorch.inferenceModel(model, opts(8))
    x = torch.randn(64, 64)
    assert_matches(pm(x), model(x), atol=1e-5, rtol=1e-5)
    names = [name for name, _ in pm.executable.stages]
    stages = dict(pm.executable.stages)
    # The loop wraps the body after it was tiled and vectorized for one micro-batch.
    assert names.index("device-loop") == names.index("tile-and-vectorize") + 1
    loop = stages["device-loop"]
    assert "tensor<8x1x8x64xf32>" in loop
    body = loop[loop.index("scf.for"):]
    assert "vector.fma" in body or "vector.contract" in body or "vector.outerproduct" in body
    # One micro-batch was traced: the captured module sees a batch of 8.
    assert "tensor<8x64xf32>" in stages["captured"]
    assert "tensor<64x64xf32> {poptorch.name = \"input0\"" not in stages["captured"]


@pytest.mark.parametrize("d,r", [(3, 1), (2, 2)])
def test_batch_not_divisible_is_an_error(d: int, r: int) -> None:
    pm = poptorch.inferenceModel(Small().eval(), opts(d, r))
    with pytest.raises(ValueError, match=r"Invalid batch dimension: In the input input 0, the batch "
                       rf"dimension \(5\) must be a multiple of .*deviceIterations\({d}\) \* "
                       rf"Options\(\)\.replicationFactor\({r}\) = {d * r}"):
        pm(torch.randn(5, 4))


def test_every_n_needs_a_multiple_of_the_period() -> None:
    pm = poptorch.inferenceModel(Small().eval(), opts(3, 1, OutputMode.EveryN, 2))
    with pytest.raises(ValueError, match="multiple of the output return period"):
        pm(torch.randn(6, 4))


def test_new_batch_size_recompiles_and_still_splits() -> None:
    model = Small().eval()
    pm = poptorch.inferenceModel(model, opts(2))
    assert_matches(pm(torch.randn(4, 4))[0].shape, torch.Size([4, 3]))
    x = torch.randn(8, 4)
    with warnings.catch_warnings(record=True):
        y, s = pm(x)
    assert pm.compile_count == 2
    ey, es = expected_outputs(eager_slices(model, x, 2, 1), OutputMode.All, 1)
    assert_matches((y, s), (ey, es), atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------------
# Buffers


def test_buffer_updates_persist_across_calls_and_read_back() -> None:
    model = Counter().eval()
    pm = poptorch.inferenceModel(model)
    x = torch.randn(2, 3)
    for k in range(1, 4):
        assert_matches(pm(x), x * k)
    assert model.count.item() == 0  # still on the device
    pm.copyWeightsToHost()
    assert model.count.item() == 3
    assert_matches(model.total, 3 * x.sum(0))


def test_buffer_updates_once_per_iteration() -> None:
    model = Counter().eval()
    reference = Counter().eval()
    pm = poptorch.inferenceModel(model, opts(4))
    x = torch.randn(8, 3)
    for _ in range(2):
        y = pm(x)
        with torch.no_grad():
            expected = torch.cat([reference(c) for c in x.reshape(4, 2, 3)])
        assert_matches(y, expected)
    pm.copyWeightsToHost()
    assert model.count.item() == 8
    assert_matches(model.total, reference.total)


def test_copy_weights_to_device_resets_buffers() -> None:
    model = Counter().eval()
    pm = poptorch.inferenceModel(model, opts(2))
    x = torch.randn(4, 3)
    pm(x)
    pm.copyWeightsToDevice()  # host count is still 0
    assert_matches(pm(x), torch.cat([x[:2] * 1, x[2:] * 2]))


class Accumulate(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.total += x.sum(0)
        return x + self.total


@pytest.mark.parametrize("broadcast", [True, False])
def test_replicas_and_broadcast_buffers(broadcast: bool) -> None:
    """Each replica updates its own copy of the buffers. With broadcastBuffers (PopTorch's
    default) every call starts all replicas from replica 0's buffers; without, each replica
    carries its own across calls. copyWeightsToHost reads replica 0's."""
    d, r = 2, 2
    model = Accumulate().eval()
    pm = poptorch.inferenceModel(model, opts(d, r, broadcast=broadcast))
    totals = [torch.zeros(3) for _ in range(r)]  # the eager simulation of the replicas
    for call in range(3):
        x = torch.randn(d * r * 2, 3) + call
        chunks = x.reshape(d, r, 2, 3)
        if broadcast:
            totals = [totals[0].clone() for _ in range(r)]
        expected = []
        for i in range(d):
            for j in range(r):
                totals[j] = totals[j] + chunks[i, j].sum(0)
                expected.append(chunks[i, j] + totals[j])
        assert_matches(pm(x), torch.cat(expected), atol=1e-5, rtol=1e-5)
    pm.copyWeightsToHost()
    assert_matches(model.total, totals[0], atol=1e-5, rtol=1e-5)


def test_replicas_run_on_separate_threads_with_identical_results() -> None:
    model = Small().eval()
    x = torch.randn(4 * 16, 4)
    one = poptorch.inferenceModel(model, opts(4, 1))(x[:64])
    two = poptorch.inferenceModel(model, opts(2, 2))(x)
    ey, es = expected_outputs(eager_slices(model, x, 2, 2), OutputMode.All, 1)
    assert_matches(two, (ey, es), atol=1e-5, rtol=1e-5)
    assert one[0].shape == two[0].shape


def test_in_place_write_to_an_input_with_iterations() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        x.add_(1)
        return x * 2

    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return f(x)

    x = torch.randn(8, 3)
    expected_x = x + 1
    y = poptorch.inferenceModel(M(), opts(2, 2))(x)
    assert_matches(y, expected_x * 2)
    assert_matches(x, expected_x)


def test_options_are_honoured_without_warnings() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        o = poptorch.Options().deviceIterations(4).replicationFactor(2)
        o.outputMode(OutputMode.EveryN, 2).broadcastBuffers(False)
    assert not [w for w in caught if "poptorch: option" in str(w.message)]
    assert o._not_applicable_report() == []


# ---------------------------------------------------------------------------
# DataLoader, AsynchronousDataAccessor, small helpers, IPUContext with iterations


def test_dataloader_combined_batches_feed_the_model() -> None:
    o = opts(2, 2)
    data = torch.utils.data.TensorDataset(torch.randn(40, 4))
    loader = poptorch.DataLoader(o, data, batch_size=3)
    assert loader.combined_batch_size == 12 and len(loader) == 3  # drop_last, as in PopTorch
    model = Small().eval()
    pm = poptorch.inferenceModel(model, o)
    for (x,) in loader:
        assert x.shape == (12, 4)
        y, _ = pm(x)
        assert_matches(y, model(x)[0], atol=1e-5, rtol=1e-5)
    assert pm.compile_count == 1


@pytest.mark.parametrize("mode", [poptorch.DataLoaderMode.Async, poptorch.DataLoaderMode.Sync])
def test_async_dataloader_yields_the_same_batches(mode) -> None:
    data = torch.utils.data.TensorDataset(torch.arange(24.0).reshape(12, 2))
    sync = [x for (x,) in poptorch.DataLoader(opts(2), data, batch_size=2)]
    loader = poptorch.DataLoader(opts(2), data, batch_size=2, mode=mode)
    for _ in range(2):  # two epochs
        got = [x for (x,) in loader]
        assert len(got) == len(sync) == 3
        for a, b in zip(got, sync, strict=True):
            assert torch.equal(a, b)


def test_asynchronous_data_accessor_early_exit_and_errors() -> None:
    acc = poptorch.AsynchronousDataAccessor([torch.full((2,), float(i)) for i in range(10)],
                                            buffer_size=2)
    first = next(iter(acc))
    assert torch.equal(first, torch.zeros(2))
    assert [t[0].item() for t in acc] == list(map(float, range(10)))
    acc.terminate()

    def broken():
        yield torch.zeros(1)
        raise RuntimeError("dataset failed")

    with pytest.raises(RuntimeError, match="dataset failed"):
        list(poptorch.AsynchronousDataAccessor(broken(), load_indefinitely=False))


def test_helpers_in_a_compiled_model() -> None:
    seen = []

    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            seen.append(poptorch.isRunningOnIpu())
            y = poptorch.nop(x * 2)
            y = poptorch.recomputationCheckpoint(y)
            y = poptorch.set_available_memory(y, 0.5)
            return y, poptorch.identity_loss(y, "mean")

    x = torch.randn(3, 4)
    expected = M()(x)
    assert_matches(poptorch.inferenceModel(M())(x), expected)
    assert seen == [False, True]
    with pytest.raises(ValueError, match="reduction"):
        poptorch.identity_loss(x, "max")
    with pytest.raises(ValueError, match="available_memory_proportion"):
        poptorch.set_available_memory(x, 1.5)


def test_ipu_context_with_device_iterations() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return x.sum(1)

    ctx = poptorch.experimental.IPUContext(f, options=opts(4, 1, OutputMode.Final))
    x = torch.randn(8, 3)
    assert_matches(ctx(x), x[6:].sum(1))
    assert_matches(ctx(x), x[6:].sum(1))


def test_seed_ipu_config_compiles_and_runs(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The seed's build_ipu_config, run unchanged: replication 2, outputMode All, an
    executable cache in ./exec (here under tmp_path)."""
    import argparse

    from test_options import _load_seed_config

    module = _load_seed_config(monkeypatch)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = module.build_ipu_config(argparse.Namespace(replication_factor=2,
                                                       optimizer_state_offchip=False))
    model = Small().eval()
    x = torch.randn(2 * 3, 4)
    pm = poptorch.inferenceModel(model, o)
    y, s = pm(x)
    ey, es = expected_outputs(eager_slices(model, x, 1, 2), OutputMode.All, 1)
    assert_matches((y, s), (ey, es), atol=1e-5, rtol=1e-5)
    assert len(list((tmp_path / "exec").glob("*.poptorch-exec"))) == 1


@pytest.mark.parametrize("dtype", [torch.float16, torch.int32, torch.float64])
@pytest.mark.parametrize("mode", [OutputMode.All, OutputMode.Sum, OutputMode.Final])
def test_iterations_keep_dtypes_and_pass_through_outputs(dtype: torch.dtype, mode: OutputMode) -> None:
    """Outputs keep their dtype; an output that is the input itself, and a constant output,
    are collected like any other."""

    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            return x, x * 3, torch.ones(2, dtype=dtype)

    x = (torch.arange(24).reshape(12, 2) % 7).to(dtype)
    got = poptorch.inferenceModel(M(), opts(3, 2, mode))(x)
    expected = expected_outputs(eager_slices(M(), x, 3, 2), mode, 1)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == dtype
        assert_matches(g, e)


def test_sum_of_a_bool_output_is_an_error() -> None:
    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x > 0

    with pytest.raises(poptorch._C.CompileError, match="OutputMode.Sum cannot sum output 0"):
        poptorch.inferenceModel(M(), opts(2, 1, OutputMode.Sum))(torch.randn(4, 2))


def test_detach_and_attach() -> None:
    model = Counter().eval()
    pm = poptorch.inferenceModel(model, opts(2))
    with pytest.raises(RuntimeError, match="not been compiled"):
        pm.detachFromDevice()
    x = torch.randn(4, 3)
    pm(x)
    assert pm.isAttachedToDevice()
    pm.detachFromDevice()
    assert not pm.isAttachedToDevice()
    with pytest.raises(RuntimeError, match="not attached"):
        pm.detachFromDevice()
    # The device's buffers were dropped: the next call re-attaches with the host's (count 0).
    assert_matches(pm(x), torch.cat([x[:2] * 1, x[2:] * 2]))
    assert pm.isAttachedToDevice() and pm.compile_count == 1
    with pytest.raises(RuntimeError, match="already attached"):
        pm.attachToDevice()
    pm.copyWeightsToHost()
    assert model.count.item() == 2
    pm.detachFromDevice()
    pm.attachToDevice()
    assert_matches(pm(x), torch.cat([x[:2] * 3, x[2:] * 4]))


# ---------------------------------------------------------------------------
# inputReplicaGrouping, updatableNamedBuffers, Distributed


@pytest.mark.parametrize("group_type, size, slice_of_replica", [
    (poptorch.CommGroupType.Consecutive, 2, [0, 0, 1, 1]),
    (poptorch.CommGroupType.Orthogonal, 2, [0, 1, 0, 1]),
    (poptorch.CommGroupType.Consecutive, 4, [0, 0, 0, 0]),
    (poptorch.CommGroupType.Orthogonal, 1, [0, 1, 2, 3]),
])
@pytest.mark.parametrize("mode", [OutputMode.All, OutputMode.Sum])
def test_input_replica_grouping(group_type, size: int, slice_of_replica: list[int],
                                mode: OutputMode) -> None:
    """Replicas of an input group read the same slice; a call's batch holds
    deviceIterations * replicationFactor / size micro-batches; outputs stay per replica."""
    d, r, b = 3, 4, 2
    o = opts(d, r, mode).inputReplicaGrouping(size, group_type)
    model = Small().eval()
    x = torch.randn(d * (r // size) * b, 4)
    got = poptorch.inferenceModel(model, o)(x)
    chunks = x.reshape(d, r // size, b, 4)
    with torch.no_grad():
        per = [[model(chunks[i, slice_of_replica[j]]) for j in range(r)] for i in range(d)]
    assert_matches(got, tuple(expected_outputs(per, mode, 1)), atol=1e-5, rtol=1e-5)


def test_input_replica_grouping_errors_and_dataloader() -> None:
    o = opts(2, 4).inputReplicaGrouping(2, poptorch.CommGroupType.Consecutive)
    pm = poptorch.inferenceModel(Small().eval(), o)
    with pytest.raises(ValueError, match=r"replicationFactor\(4\) / input group size\(2\) = 4"):
        pm(torch.randn(6, 4))
    bad = opts(1, 4).inputReplicaGrouping(3, poptorch.CommGroupType.Consecutive)
    with pytest.raises(ValueError, match=r"replicationFactor \(4\) to be a multiple of the input "
                                         r"group size \(3\)"):
        poptorch.inferenceModel(Small().eval(), bad)(torch.randn(4, 4))
    data = torch.utils.data.TensorDataset(torch.randn(20, 4))
    loader = poptorch.DataLoader(o, data, batch_size=2)
    assert loader.combined_batch_size == 2 * 2 * 2
    (x,) = next(iter(loader))
    y, _ = pm(x)
    assert y.shape == (2 * 4 * 2, 3)


def test_input_write_back_with_replica_groups() -> None:
    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x.mul_(2)
            return x + 1

    x = torch.randn(2 * 1 * 3, 2)
    expected = x * 2
    o = opts(2, 2).inputReplicaGrouping(2, poptorch.CommGroupType.Orthogonal)
    y = poptorch.inferenceModel(M(), o)(x)
    assert_matches(x, expected)
    chunks = (expected + 1).reshape(2, 1, 3, 2)
    assert_matches(y, torch.cat([chunks[i, 0] for i in range(2) for _ in range(2)]))


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.full((3,), 2.0))
        self.register_buffer("shift", torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + self.shift


@pytest.mark.parametrize("replicas, broadcast", [(1, True), (2, False)])
def test_copy_named_buffers_to_device(replicas: int, broadcast: bool) -> None:
    """Only the buffers listed by updatableNamedBuffers are uploaded."""
    model = Scaled().eval()
    o = opts(1, replicas, broadcast=broadcast).updatableNamedBuffers(["scale"])
    pm = poptorch.inferenceModel(model, o)
    x = torch.randn(2 * replicas, 3)
    assert_matches(pm(x), x * 2)
    model.scale.fill_(3.0)
    model.shift.fill_(1.0)
    pm.copyNamedBuffersToDevice()
    assert_matches(pm(x), x * 3)  # shift is not listed: the device keeps 0
    pm.copyWeightsToDevice()
    assert_matches(pm(x), x * 3 + 1)


def test_copy_named_buffers_errors() -> None:
    pm = poptorch.inferenceModel(Scaled().eval())
    with pytest.raises(RuntimeError, match="updatableNamedBuffers"):
        pm.copyNamedBuffersToDevice()
    bad = poptorch.inferenceModel(Scaled().eval(), opts().updatableNamedBuffers(["scales"]))
    with pytest.raises(ValueError, match=r"\['scales'\].*\['scale', 'shift'\]"):
        bad(torch.randn(2, 3))


@pytest.mark.parametrize("pid", [0, 1, 2])
def test_dataloader_partitions_the_dataset_across_processes(pid: int) -> None:
    data = torch.utils.data.TensorDataset(torch.arange(20.0).reshape(20, 1))
    o = opts(2)
    o.Distributed.configureProcessId(pid, 3)
    loader = poptorch.DataLoader(o, data, batch_size=1)
    seen = torch.cat([x for (x,) in loader]).flatten().tolist()
    assert seen == [float(i) for i in range(pid, 18, 3)]  # 6 samples each, interleaved
    whole = poptorch.DataLoader(o, data, batch_size=1, auto_distributed_partitioning=False)
    assert len(whole) == 10


def _run_python(script: str, **fields: object) -> subprocess.CompletedProcess:
    """Runs `script` (formatted with `fields` and this checkout's `python_dir`) in a fresh
    interpreter with faulthandler on."""
    python_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c",
                           script.format(python_dir=python_dir, **fields)],
                          capture_output=True, text=True, timeout=300, check=False)


RELEASE_RACE = r"""
import sys
sys.path.insert(0, {python_dir!r})
import torch, poptorch
torch.set_num_threads(2)
a, b = torch.randn(512, 512), torch.randn(512, 512)
for _ in range(20):
    exe = poptorch.trace(lambda x, y: x @ y, a, b).compile()  # a parallel loop
    for _ in range(3):
        out = exe(a, b)
        torch.mm(a, b)  # torch's threads keep the cores busy around our workers
    out = exe(a, b)
    del exe  # freed right after its call, while a worker may still be in its code
torch.testing.assert_close(out, a @ b, rtol=1e-3, atol=1e-3)
print("ok")
"""


def test_program_freed_right_after_a_parallel_call() -> None:
    """No thread may still be inside a program's code when the call returns: freeing the
    program then must not unmap code under it (with the MLIR async runtime's own worker
    pool this crashed with SIGSEGV in an llvm-worker thread)."""
    proc = _run_python(RELEASE_RACE)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]


TEAM_THREADS = r"""
import os, sys
sys.path.insert(0, {python_dir!r})
import torch, poptorch
torch.set_num_threads({threads})
a, b = torch.randn(512, 512), torch.randn(512, 512)
torch.mm(a, b)  # torch's intra-op threads exist from here on
exe = poptorch.trace(lambda x, y: x @ y, a, b).compile()  # a parallel loop
before = sorted(os.listdir("/proc/self/task"))
for _ in range(5):
    torch.testing.assert_close(exe(a, b), a @ b, rtol=1e-3, atol=1e-3)
    torch.mm(a, b)
print(before == sorted(os.listdir("/proc/self/task")))
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_loops_run_on_torchs_threads(threads: int) -> None:
    """A program's parallel loops run on torch's intra-op threads (torch.get_num_threads()
    of them), not on a pool of poptorch's own: calling it starts no thread. With one
    thread the caller runs every task itself."""
    proc = _run_python(TEAM_THREADS, threads=threads)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("True"), "the call started threads: " + proc.stdout


def test_executor_gives_the_models_attributes():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    model.scale = 2.5
    executor = poptorch.inferenceModel(model)
    assert getattr(executor, "0") is model[0] and getattr(executor, "0").weight is model[0].weight
    assert executor.scale == 2.5
    assert executor.state_dict().keys() == model.state_dict().keys()
    assert dict(executor.named_parameters()).keys() == dict(model.named_parameters()).keys()
    assert executor.training is False
    with pytest.raises(AttributeError, match="no_such_thing"):
        executor.no_such_thing  # noqa: B018
    x = torch.randn(2, 4)
    torch.testing.assert_close(executor(x), model(x))
