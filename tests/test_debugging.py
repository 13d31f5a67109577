"""The debugging tools (docs/debugging.md): logging, dumps of every pass, failure
reproducers, source locations, the op ledger, recompile diffs, golden bisection,
replay bundles, timing, pictures and the command line."""

from __future__ import annotations

import contextlib
import glob
import io
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import poptorch
from poptorch import _debug, _logging

REPO = Path(__file__).resolve().parents[1]
THIS_FILE = os.path.abspath(__file__)
# poptorch-opt: named by POPTORCH_OPT, else the installed one (`make build` puts it next to the
# venv's python, on PATH under make), else a developer build in build/dev.
OPT = (os.environ.get("POPTORCH_OPT") or shutil.which("poptorch-opt")
       or shutil.which("poptorch-opt", path=os.path.dirname(sys.executable))
       or str(REPO / "build" / "dev" / "mlir" / "poptorch-opt"))
ENV = {**os.environ, "PYTHONPATH": str(REPO / "python")}


def line_of(marker: str) -> int:
    for i, line in enumerate(Path(THIS_FILE).read_text().splitlines(), start=1):
        if marker in line and "line_of(" not in line:
            return i
    raise AssertionError(marker)


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))  # @relu
        return torch.tanh(self.fc2(h)) * 2  # @tanh


def small() -> Small:
    torch.manual_seed(0)
    return Small().eval()


@contextlib.contextmanager
def captured_log(level: str) -> Iterator[list[logging.LogRecord]]:
    records: list[logging.LogRecord] = []

    class ListHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = ListHandler()
    old = poptorch.logger.level
    poptorch.logger.addHandler(handler)
    poptorch.setLogLevel(level)
    try:
        yield records
    finally:
        poptorch.logger.removeHandler(handler)
        poptorch.setLogLevel(old)


def messages(records: list[logging.LogRecord], level: int | None = None) -> list[str]:
    return [r.getMessage() for r in records if level is None or r.levelno == level]


# ---------------------------------------------------------------- 1. logging
def test_trace_level_logs_every_op_with_ids_shapes_and_dtypes() -> None:
    with captured_log("TRACE") as records:
        poptorch.inferenceModel(small())(torch.randn(2, 8))
    trace = messages(records, _logging.TRACE)
    relu = [m for m in trace if m.startswith("aten::relu ")]
    assert relu, trace[:5]
    assert re.fullmatch(rf"aten::relu captured at {re.escape(THIS_FILE)}:{line_of('# @relu')} "
                        r"\(v\d+: Float\[2, 16\]\) -> \(v\d+: Float\[2, 16\]\)", relu[0]), relu[0]
    assert any(m.startswith("aten::addmm captured") for m in trace)
    ir = [m for m in trace if m.startswith("IR after ")]
    assert len(ir) >= 10 and any("llvm.func" in m for m in ir)
    lowered = [m for m in messages(records, logging.INFO) if m.startswith("lowered module")]
    assert len(lowered) == 1 and "llvm.func @main" in lowered[0]


def test_levels_above_trace_are_quiet() -> None:
    with captured_log("INFO") as records:
        poptorch.inferenceModel(small())(torch.randn(2, 8))
    assert not messages(records, _logging.TRACE)
    assert any(m.startswith("timing report") for m in messages(records, logging.INFO))
    with captured_log("WARN") as records:
        poptorch.inferenceModel(small())(torch.randn(2, 8))
    assert not records


def test_log_level_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POPTORCH_TRACE_OPS", "1")
    assert _logging._initial_level() == "TRACE"
    monkeypatch.delenv("POPTORCH_TRACE_OPS")
    monkeypatch.setenv("POPTORCH_LOG_LEVEL", "DEBUG")
    assert _logging._initial_level() == "DEBUG"
    with pytest.raises(ValueError, match="unknown log level"):
        poptorch.setLogLevel("LOUD")


# ---------------------------------------------------------------- 2. dumps
def parses(path: str) -> subprocess.CompletedProcess:
    return subprocess.run([OPT, path, "-o", os.devnull], capture_output=True, text=True,
                          check=False)


def test_dump_folder_holds_every_pass_and_each_file_parses(tmp_path: Path) -> None:
    model = poptorch.inferenceModel(small(), poptorch.Options().dumpMLIR(tmp_path))
    model(torch.randn(2, 8))
    (folder,) = glob.glob(str(tmp_path / "Small-*"))
    names = sorted(os.listdir(folder))
    mlir = [n for n in names if n.endswith(".mlir")]
    assert mlir[0] == "00-captured.mlir"
    assert re.fullmatch(r"\d\d-func\.func-poptorch-decompose\+.*\.mlir", mlir[1]), mlir[1]
    assert any("convert-poptorch-to-linalg" in n for n in mlir)
    assert mlir[-1].endswith("poptorch-kernel-codegen.mlir")
    assert [int(n[:2]) for n in mlir] == list(range(len(mlir)))
    for extra in ("pipeline.txt", "replay.sh", "ops.txt", "timings.txt", "graph.dot"):
        assert extra in names
    pipeline = Path(folder, "pipeline.txt").read_text()
    for stage, text in poptorch._C.pipeline_stages():
        assert f"{stage}: {text}" in pipeline
    for name in mlir:
        result = parses(os.path.join(folder, name))
        assert result.returncode == 0, (name, result.stderr)
    # The same texts from Python.
    passes = model.executable.passes
    assert len(passes) == len(mlir) - 1
    assert Path(folder, mlir[-1]).read_text().rstrip() == passes[-1][4].rstrip()
    assert model.executable.stages[-1][1] == passes[-1][4]


def test_replay_script_reproduces_every_pass(tmp_path: Path) -> None:
    poptorch.inferenceModel(small(), poptorch.Options().dumpMLIR(tmp_path))(torch.randn(2, 8))
    (folder,) = glob.glob(str(tmp_path / "Small-*"))
    result = subprocess.run(["sh", os.path.join(folder, "replay.sh")], capture_output=True,
                            text=True, env={**os.environ, "POPTORCH_OPT": OPT}, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout
    assert "differs" not in result.stdout, result.stdout  # each pass replays byte for byte
    replayed = sorted(os.listdir(os.path.join(folder, "replayed")))
    assert len(replayed) == len(glob.glob(os.path.join(folder, "*.mlir"))) - 1
    for name in replayed:
        assert parses(os.path.join(folder, "replayed", name)).returncode == 0


def test_dump_dir_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POPTORCH_MLIR_DUMP_DIR", str(tmp_path))
    poptorch.inferenceModel(small())(torch.randn(2, 8))
    (folder,) = glob.glob(str(tmp_path / "Small-*"))
    assert os.path.exists(os.path.join(folder, "00-captured.mlir"))


def test_no_snapshots_without_dump_or_trace() -> None:
    exe = poptorch.trace(small(), torch.randn(2, 8)).compile()
    assert exe.passes and all(text == "" for *_, text in exe.passes)
    assert all(seconds >= 0 for _, _, _, seconds, _ in exe.passes)


# ---------------------------------------------------------------- 3. failure reproducers
def test_failing_pass_names_pass_op_line_and_writes_reproducer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POPTORCH_TEST_BREAK", "fail:poptorch.tanh")
    with pytest.raises(poptorch._C.CompileError) as info:
        poptorch.inferenceModel(small(), poptorch.Options().dumpMLIR(tmp_path))(torch.randn(2, 8))
    message = str(info.value)
    assert "pass `poptorch-test-break{" in message
    assert f"on `poptorch.tanh` at {THIS_FILE}:{line_of('# @tanh')}" in message
    command = re.search(r"reproduce with: (poptorch-opt (\S+) --pass-pipeline='(.*)')", message)
    assert command, message
    path = command.group(2)
    assert path.startswith(str(tmp_path)) and os.path.exists(path)
    assert os.path.exists(os.path.join(os.path.dirname(path), "reproduce.sh"))
    result = subprocess.run([OPT, path, f"--pass-pipeline={command.group(3)}"],
                            capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "deliberate failure on poptorch.tanh" in result.stderr


def test_failing_pass_without_dump_dir_writes_to_a_temp_folder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POPTORCH_TEST_BREAK", "fail:poptorch.relu")
    with pytest.raises(poptorch._C.CompileError, match="the module that entered the pass") as info:
        poptorch.trace(small(), torch.randn(2, 8)).compile()
    path = re.search(r"entered the pass: (\S+)", str(info.value)).group(1)
    assert os.path.exists(path) and parses(path).returncode == 0


@pytest.mark.parametrize("verify_each", ["0", "1"])
def test_pass_leaving_invalid_ir_is_named(verify_each: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass that succeeds but leaves IR that does not verify is reported like a failing
    pass, whether the module is verified after every pass or (the default outside the
    test suite) once after each stage, which then runs again verified per pass."""
    monkeypatch.setenv("POPTORCH_VERIFY_EACH", verify_each)
    monkeypatch.setenv("POPTORCH_TEST_BREAK", "invalid:poptorch.relu")
    with pytest.raises(poptorch._C.CompileError) as info:
        poptorch.trace(small(), torch.randn(2, 8)).compile()
    message = str(info.value)
    assert "pass `poptorch-test-break{" in message, message
    assert "'poptorch.neg' op requires a single operand" in message, message
    assert "reproduce with: poptorch-opt" in message, message


# ---------------------------------------------------------------- 4. source locations
def test_source_locations_survive_lowering() -> None:
    exe = poptorch.trace(small(), torch.randn(2, 8)).compile()
    line = line_of("# @tanh")
    for stage, text in exe.stages:
        assert f'"{THIS_FILE}":{line}:0' in text, stage


def test_source_location_excludes_are_honoured() -> None:
    graph = poptorch.trace(small(), torch.randn(2, 8),
                           source_location_excludes=[os.path.basename(THIS_FILE)])
    assert THIS_FILE not in graph.mlir
    assert all(r["file"] != THIS_FILE for r in graph.op_log)


# ---------------------------------------------------------------- 5. op ledger
def with_hash(x: torch.Tensor) -> torch.Tensor:
    y = torch.nn.functional.linear(x, torch.ones(3, 3))
    return torch.hash_tensor(y, dim=1).float() + torch.softmax(x, -1).sum(1)  # @hash


def test_explain_reports_status_counts_lines_and_advice() -> None:
    ledger = poptorch.explain(with_hash, torch.randn(4, 3))
    rows = {r.op: r for r in ledger.rows}
    hashed = [r for r in ledger.rows if r.op.startswith("aten::hash_tensor")]
    assert hashed and hashed[0].status == "unsupported"
    assert hashed[0].locations == [f"test_debugging.py:{line_of('# @hash')}"]
    assert "optable/ops.py" in hashed[0].advice
    assert rows["aten::_softmax"].status == "decomposed"
    assert rows["aten::add.Tensor"].status == "skipped"
    assert "unsupported op" in rows["aten::add.Tensor"].advice
    assert "unsupported" in ledger.summary and "does not compile" in ledger.summary
    assert str(ledger).splitlines()[-1] == ledger.summary
    ok = poptorch.explain(small(), torch.randn(2, 8))
    assert not ok.unsupported and ok.summary.endswith("the model compiles")
    assert {r.status for r in ok.rows} >= {"lowered"}


def test_decomposed_ops_match_decompose_pass() -> None:
    source = (REPO / "mlir" / "lib" / "Transforms" / "Decompose.cpp").read_text()
    listed = re.search(r"patterns\.add<(.*?)>\(patterns", source, re.S).group(1)
    names = set(re.findall(r"Decompose(\w+?)(?:[,>\s]|$)", listed))
    names |= set(re.findall(r"<(\w+)Op,", listed))
    snake = {"poptorch." + re.sub(r"(?<!^)(?=[A-Z])", "_", n).lower() for n in names}
    assert snake == set(_debug.DECOMPOSED_DIALECT_OPS)


# ---------------------------------------------------------------- 6. recompile diff
def test_recompile_logs_changed_input_and_ir_diff() -> None:
    model = poptorch.inferenceModel(small())
    model(torch.randn(2, 8))
    with captured_log("WARN") as records:
        model(torch.randn(5, 8))
    text = "\n".join(messages(records))
    assert "recompiling because input 0 changed from float32[2, 8] to float32[5, 8]" in text
    assert "captured IR diff" in text
    assert re.search(r"^-.*tensor<2x8xf32>", text, re.M) and re.search(r"^\+.*tensor<5x8xf32>",
                                                                          text, re.M)


# ---------------------------------------------------------------- 7. golden bisection
class Deeper(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(16, 16) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.sigmoid(x) if i != 2 else torch.relu(x)  # @act
        return x.sum(-1)


def test_bisection_finds_the_broken_op_and_writes_a_reproducer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = Deeper().eval()
    x = torch.randn(3, 16)
    assert not poptorch.bisect(model, x).diverged
    monkeypatch.setenv("POPTORCH_TEST_BREAK", "perturb:poptorch.relu")
    report = poptorch.bisect(model, x, out_dir=str(tmp_path))
    assert report.diverged, report
    assert report.op == "aten::relu"
    assert report.location == f"{THIS_FILE}:{line_of('# @act')}"
    assert report.reproduces is True
    files = set(os.listdir(report.reproducer))
    assert {"op.mlir", "captured.mlir", "data.pt", "meta.json"} <= files
    assert parses(os.path.join(report.reproducer, "op.mlir")).returncode == 0
    ok, text = poptorch.replay(report.reproducer, quiet=True)
    assert not ok and "MISMATCH" in text
    monkeypatch.delenv("POPTORCH_TEST_BREAK")
    ok, text = poptorch.replay(report.reproducer, quiet=True)
    assert ok, text


class ScalarOperands(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * 0.5 + 1.0) - 2  # scalars reach aten as wrapped-number tensors


def test_bisection_reruns_ops_with_python_scalar_operands(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.randn(4, 8)
    assert not poptorch.bisect(ScalarOperands(), x).diverged
    monkeypatch.setenv("POPTORCH_TEST_BREAK", "perturb:poptorch.relu")
    report = poptorch.bisect(ScalarOperands(), x)
    assert report.diverged and report.op == "aten::relu", report


def test_bisection_option_runs_on_first_call(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POPTORCH_TEST_BREAK", "perturb:poptorch.relu")
    model = poptorch.inferenceModel(Deeper(), poptorch.Options().goldenBisect(tmp_path))
    with captured_log("WARN") as records:
        model(torch.randn(3, 16))
    assert model.golden_report.op == "aten::relu"
    assert any("golden bisection: op #" in m for m in messages(records))
    monkeypatch.setenv("POPTORCH_GOLDEN_BISECT", "1")
    assert poptorch.Options()._values["golden_bisect"] == "1"


# ---------------------------------------------------------------- 8. replay bundles
def test_bundle_replays_in_a_subprocess(tmp_path: Path) -> None:
    path = poptorch.write_bundle(small(), torch.randn(2, 8), path=tmp_path / "b.tar.gz")
    assert os.path.getsize(path) < 100_000
    with tarfile.open(path) as tar:
        names = tar.getnames()
    for name in ("bundle/captured.mlir", "bundle/data.pt", "bundle/meta.json",
                 "bundle/stages/00-captured.mlir", "bundle/stages/05-to-llvm.mlir",
                 "bundle/stages/pipeline.txt"):
        assert name in names
    result = subprocess.run([sys.executable, "-m", "poptorch", "replay", path],
                            capture_output=True, text=True, env=ENV, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("PASS")
    assert "result 0 float32[2, 4]: ok" in result.stdout


# ---------------------------------------------------------------- 9. timing and progress
def test_timing_report_covers_every_stage() -> None:
    model = poptorch.inferenceModel(small())
    model(torch.randn(2, 8))
    report = model.executable.timing_report()
    for row in ("tracing", "parse", "stage decompose", "stage to-llvm", "convert-func-to-llvm",
                "LLVM codegen", "load", "first run", "total"):
        assert row in report, row


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not _debug._Progress("x").enabled
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    with _debug._Progress("compiling m", delay=0.0):
        import time
        time.sleep(0.5)
    assert "[poptorch] compiling m" in tty.getvalue()


# ---------------------------------------------------------------- 10. pictures
def test_dot_graph(tmp_path: Path) -> None:
    graph = poptorch.trace(small(), torch.randn(2, 8))
    dot = _debug.to_dot(graph)
    assert dot.startswith("digraph poptorch {")
    assert "aten::relu" in dot and "fc1.weight" in dot and "->" in dot
    if _debug.write_svg(dot, str(tmp_path / "g.svg")):
        assert (tmp_path / "g.svg").read_text().lstrip().startswith("<?xml")


# ---------------------------------------------------------------- 11. command line
MODEL_FILE = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))
'''


def test_command_line_dump(tmp_path: Path) -> None:
    (tmp_path / "net.py").write_text(MODEL_FILE)
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "poptorch", "dump", f"{tmp_path / 'net.py'}:Net",
         "--input-shape", "2,6", "--out", str(out)],
        capture_output=True, text=True, env=ENV, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "outputs vs eager PyTorch: match" in result.stdout
    for name in ("explain.txt", "bundle.tar.gz", "stages/00-captured.mlir", "stages/replay.sh",
                 "stages/graph.dot", "stages/timings.txt"):
        assert (out / name).exists(), name
    assert str(out / "bundle.tar.gz") in result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "poptorch", "explain", f"{tmp_path / 'net.py'}:Net",
         "--input-shape", "2,6"], capture_output=True, text=True, env=ENV, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"aten::relu +1  lowered +poptorch\.relu +net\.py:10", result.stdout)
    assert result.stdout.strip().endswith("the model compiles")


# ---------------------------------------------------------------- 12. docs
def test_debugging_docs_are_linked() -> None:
    text = (REPO / "docs" / "debugging.md").read_text()
    for topic in ("POPTORCH_LOG_LEVEL", "POPTORCH_MLIR_DUMP_DIR", "poptorch.explain",
                  "goldenBisect", "python -m poptorch replay", "python -m poptorch dump",
                  "reproduce with"):
        assert topic in text, topic
    assert "docs/debugging.md" in (REPO / "README.md").read_text()


def test_perf_map_names_the_compiled_kernels() -> None:
    """POPTORCH_PERF_MAP=1 writes /tmp/perf-<pid>.map with each linked function."""
    code = (
        "import os, torch, poptorch\n"
        "net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),\n"
        "                          torch.nn.Linear(8 * 30 * 30, 10))\n"
        "poptorch.inferenceModel(net)(torch.randn(2, 3, 32, 32))\n"
        "print(os.getpid())\n"
    )
    env = dict(os.environ, POPTORCH_PERF_MAP="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    path = Path(f"/tmp/perf-{out.stdout.split()[-1]}.map")
    try:
        lines = path.read_text().splitlines()
    finally:
        path.unlink(missing_ok=True)
    names = {line.split()[2] for line in lines}
    assert any(n.startswith("__kernel_") for n in names), names
    assert "main" in names, names
    for line in lines:
        start, size, _ = line.split(maxsplit=2)
        assert int(start, 16) > 0 and int(size, 16) > 0


def test_intermediate_buffers_are_reused_between_calls() -> None:
    """After the first call a program's large intermediates come from the pool: the pool does
    not grow with further calls, and results stay right."""
    from poptorch import _C

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(32, 32, 3, stride=2, padding=1), torch.nn.ReLU())
    x = torch.randn(2, 3, 64, 64)
    m = poptorch.inferenceModel(net)
    m(x)
    after_first = _C.buffer_pool_cached_bytes()
    assert after_first >= 2 * 32 * 64 * 64 * 4  # the first activation (512 KiB) was pooled
    for _ in range(3):
        out = m(x)
    assert _C.buffer_pool_cached_bytes() == after_first
    torch.testing.assert_close(out, net(x))
