"""Debugging tools: dumps of every pass, the op ledger, golden bisection, replay bundles.

Everything here works from three things the compiler keeps anyway:

- the tracer's op log (``TracedGraph.op_log``): every aten op that reached the ipu
  device, its status, source line and the value ids of its inputs and outputs;
- the program's per-pass records (``Executable.passes``): each top-level pass of the
  pipeline, its time and, when asked for, the module after it;
- the captured module text, which ``poptorch-opt`` parses and replays.

See docs/debugging.md for a walk-through.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import io
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.utils._pytree as pytree

from . import _C
from ._logging import TRACE, _sync_trace_sink, logger, trace_enabled

# ---------------------------------------------------------------------------
# hooks called by _tracing.trace / TracedGraph.compile / PoplarExecutor

_tracer_hooks: list[Callable[[Any], None]] = []


def tracer_created(tracer: Any) -> None:
    _sync_trace_sink()  # the level may have been set on the logger directly
    for hook in _tracer_hooks:
        hook(tracer)


def graph_traced(graph: Any, model: Any, tracer: Any) -> None:
    graph.name = model_name(model)


@contextlib.contextmanager
def _on_tracer(hook: Callable[[Any], None]) -> Iterator[None]:
    _tracer_hooks.append(hook)
    try:
        yield
    finally:
        _tracer_hooks.remove(hook)


def model_name(model: Any) -> str:
    if isinstance(model, torch.nn.Module):
        return type(model).__name__
    return getattr(model, "__name__", type(model).__name__)


class _Progress:
    """A one-line progress indicator on a terminal, for compiles longer than a couple of s."""

    def __init__(self, what: str, delay: float = 2.0) -> None:
        self.what = what
        self.delay = delay
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        stream = sys.stderr
        self.enabled = (hasattr(stream, "isatty") and stream.isatty()
                        and os.environ.get("POPTORCH_PROGRESS", "1") != "0")

    def _run(self) -> None:
        start = time.perf_counter()
        if self.done.wait(self.delay):
            return
        spinner = "|/-\\"
        i = 0
        while not self.done.wait(0.2):
            sys.stderr.write(f"\r[poptorch] {self.what} {spinner[i % 4]} "
                             f"{time.perf_counter() - start:5.1f} s")
            sys.stderr.flush()
            i += 1
        sys.stderr.write("\r" + " " * (len(self.what) + 24) + "\r")
        sys.stderr.flush()

    def __enter__(self) -> _Progress:
        if self.enabled:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()


def compile_program(graph: Any, dump_dir: str, **kwargs: Any) -> Any:
    """Compiles a traced graph; keeps per-pass snapshots for dumps and TRACE logs.

    ``kwargs`` go to ``_C.Program.compile`` (device loop, executable cache entry).
    """
    snapshot = bool(dump_dir) or trace_enabled()
    with _Progress(f"compiling {graph.name} ({graph.num_ops} ops)"):
        return _C.Program.compile(graph.mlir, dump_dir, snapshot_passes=snapshot, **kwargs)


def after_compile(executable: Any, dump_dir: str) -> None:
    graph = executable.graph
    if trace_enabled():
        for stage, pipeline, _, seconds, text in executable.passes:
            logger.log(TRACE, "IR after %s (stage %s, %.4f s):\n%s", pipeline, stage,
                       seconds, text)
    if logger.isEnabledFor(logging.INFO):
        logger.info("lowered module of %s:\n%s", graph.name, executable.stages[-1][1])
        logger.info("%s", timing_report(executable))
    if dump_dir:
        write_dump(dump_dir, executable)
        logger.warning("poptorch: dumped %s to %s", graph.name, dump_dir)


def first_run(executor: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """The first run of a compiled model: timed, and golden-checked when asked for."""
    executable = executor._executable
    start = time.perf_counter()
    out = executable.run_unchecked(args, kwargs)
    executable.first_run_seconds = time.perf_counter() - start
    logger.info("first run of %s: %.4f s", executable.graph.name, executable.first_run_seconds)
    golden = executor._options._values.get("golden_bisect")
    if golden:
        directory = None if golden in ("1", "true", "True") else golden
        if directory is None and executor._options._values.get("mlir_dump_dir"):
            directory = executor._options._dump_dir_for(executable.graph)
        report = bisect(executor.model, *args, out_dir=directory,
                        source_location_excludes=executor._options._values[
                            "source_location_excludes"], **kwargs)
        executor.golden_report = report
        if report.diverged:
            logger.warning("poptorch: golden bisection: %s", report)
        else:
            logger.info("poptorch: golden bisection: %s", report)
    return out


# ---------------------------------------------------------------------------
# timing report


def timing_report(executable: Any) -> str:
    graph = executable.graph
    rows: list[tuple[str, float]] = [("tracing", graph.trace_seconds)]
    timings = dict(executable.timings)
    rows.append(("parse", timings.get("parse", 0.0)))
    passes = executable.passes
    # The stage names from the timings: executable.stages prints the modules.
    for stage in [n for n, _ in executable.timings if n not in ("parse", "jit", "load-cache")]:
        rows.append((f"stage {stage}", timings.get(stage, 0.0)))
        for p_stage, pipeline, _, seconds, _ in passes:
            if p_stage == stage:
                rows.append((f"  {re.sub(r'{[^{}]*}', '', pipeline)[:70]}", seconds))
    rows.append(("LLVM codegen (jit)", timings.get("jit", 0.0)))
    rows.append(("load (weights to device)", executable.load_seconds))
    if executable.first_run_seconds is not None:
        rows.append(("first run", executable.first_run_seconds))
    width = max(len(name) for name, _ in rows)
    lines = [f"timing report for {graph.name} ({graph.num_ops} ops):"]
    lines += [f"  {name:<{width}}  {seconds * 1e3:10.2f} ms" for name, seconds in rows]
    total = graph.trace_seconds + sum(timings.values()) + executable.load_seconds
    lines.append(f"  {'total to a loaded program':<{width}}  {total * 1e3:10.2f} ms")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# dumps


def _numbered(index: int, count: int, name: str) -> str:
    width = max(2, len(str(count)))
    return f"{index:0{width}d}-{name}.mlir"


def write_dump(directory: str, executable: Any) -> list[str]:
    """Writes every stage of a compile to ``directory``; returns the file names.

    ``00-captured.mlir``, then ``NN-<pass>.mlir`` after every top-level pass, the
    textual pipeline (``pipeline.txt``), ``replay.sh`` (replays each pass with
    poptorch-opt and compares with the dump), the op ledger, timings and the graph.
    """
    os.makedirs(directory, exist_ok=True)
    graph = executable.graph
    passes = [p for p in executable.passes if p[4]]
    files = ["00-captured.mlir"]
    # With the newline poptorch-opt prints after a module (replay.sh compares bytes).
    _write(directory, files[0], graph.mlir + "\n")
    for i, (_, _, name, _, text) in enumerate(passes, start=1):
        files.append(_numbered(i, len(passes), name))
        _write(directory, files[-1], text + "\n")
    stages = list(_C.pipeline_stages())
    for stage, _ in executable.stages[1:]:
        if stage not in dict(stages):  # the test-only breaker
            stages.insert(0, (stage, "builtin.module(" + ",".join(
                p[1] for p in passes if p[0] == stage) + ")"))
    _write(directory, "pipeline.txt",
           "# the compile pipeline, one stage a line: <stage>: <textual pass pipeline>\n"
           + "".join(f"{stage}: {text}\n" for stage, text in stages))
    script = ["#!/bin/sh",
              "# Replays every pass of this compile with poptorch-opt, each from the dumped",
              "# module before it, and compares the result with the dumped module after it.",
              "# POPTORCH_OPT: the poptorch-opt binary (default: poptorch-opt on PATH).",
              'cd "$(dirname "$0")" || exit 1',
              'OPT="${POPTORCH_OPT:-poptorch-opt}"',
              "mkdir -p replayed",
              "status=0",
              "# Block arguments of ops with a custom syntax (loop variables) print no",
              "# location, so re-parsed ones point into the .mlir file: compare without.",
              "noloc() { sed -E 's/ ?loc\\(([^()]|\\([^()]*\\))*\\)//g; /^#loc/d' \"$1\"; }",
              "check() {",
              '  if cmp -s "replayed/$1" "$1"; then :',
              '  elif [ "$(noloc "replayed/$1")" = "$(noloc "$1")" ]; then '
              'echo "same up to locations: $1"',
              '  else echo "differs: $1"; fi',
              "}"]
    for i, (stage, pipeline, _, _, _) in enumerate(passes, start=1):
        before, after = files[i - 1], files[i]
        script += [f"# stage {stage}",
                   f"\"$OPT\" {before} --mlir-print-debuginfo "
                   f"--pass-pipeline='builtin.module({pipeline})' -o replayed/{after} "
                   f"|| {{ echo 'FAILED: {after}'; status=1; }}",
                   f"check {after}"]
    script += ["# whole stages: poptorch-opt <module> --poptorch-stage-<name>",
               *(f"# {stage}: {text}" for stage, text in stages), "exit $status"]
    _write(directory, "replay.sh", "\n".join(script) + "\n")
    os.chmod(os.path.join(directory, "replay.sh"), 0o755)
    _write(directory, "ops.txt", str(ledger(graph.op_log)))
    _write(directory, "timings.txt", timing_report(executable) + "\n")
    dot = to_dot(graph)
    _write(directory, "graph.dot", dot)
    extra = ["pipeline.txt", "replay.sh", "ops.txt", "timings.txt", "graph.dot"]
    if write_svg(dot, os.path.join(directory, "graph.svg")):
        extra.append("graph.svg")
    return files + extra


def _write(directory: str, name: str, text: str) -> None:
    with open(os.path.join(directory, name), "w") as f:
        f.write(text)


# ---------------------------------------------------------------------------
# op ledger (poptorch.explain)

# Dialect ops that poptorch-decompose rewrites into other dialect ops (the
# patterns.add<...> list of mlir/lib/Transforms/Decompose.cpp; a test checks it).
DECOMPOSED_DIALECT_OPS = frozenset({
    "poptorch.transpose", "poptorch.linear", "poptorch.addmm", "poptorch.clamp",
    "poptorch.layer_norm", "poptorch.batch_norm", "poptorch.softmax",
    "poptorch.log_softmax", "poptorch.safe_softmax", "poptorch.sdpa", "poptorch.reduce_mean",
})

_UNSUPPORTED_HELP = ("not in the op table (docs/ops.md): replace it in the model with supported "
                     "ops, compute it outside the model, or add an Aten row to optable/ops.py "
                     "(docs/developer.md, 'How to add an op')")

_ADVICE = {
    "unsupported": _UNSUPPORTED_HELP,
    "skipped": "an input comes from an unsupported op; it compiles once that op does",
}

_STATUS_TEXT = {
    "captured": "lowered",
    "host": "host (constant, evaluated at trace time)",
    "read": "value read while tracing (guarded)",
    "host_kernel": "host kernel (PyTorch's CPU kernel, run by the program)",
    "random": "random",
    "unsupported": "unsupported",
    "poisoned": "skipped",
    "error": "error",
}


def op_status(record: dict[str, Any]) -> str:
    status = record["status"]
    if status == "captured" and record.get("dialect_op") in DECOMPOSED_DIALECT_OPS:
        return "decomposed"
    return _STATUS_TEXT.get(status, status)


@dataclasses.dataclass
class LedgerRow:
    op: str
    status: str
    count: int
    dialect_op: str
    locations: list[str]
    advice: str = ""


@dataclasses.dataclass
class Ledger:
    """Every aten op a model sends to the backend: what poptorch does with it."""

    rows: list[LedgerRow]
    error: str = ""

    @property
    def unsupported(self) -> list[LedgerRow]:
        return [r for r in self.rows if r.status == "unsupported"]

    @property
    def summary(self) -> str:
        total = sum(r.count for r in self.rows)
        by: dict[str, int] = {}
        for r in self.rows:
            key = r.status.split(" ")[0]
            by[key] = by.get(key, 0) + r.count
        parts = ", ".join(f"{n} {k}" for k, n in sorted(by.items()))
        verdict = ("compiles" if not self.unsupported and not self.error
                   else f"does not compile ({len(self.unsupported)} unsupported op kinds)"
                   if self.unsupported else "does not compile")
        return f"{total} aten ops ({len(self.rows)} distinct): {parts}; the model {verdict}"

    def __str__(self) -> str:
        lines = [f"{'aten op':<40} {'count':>5}  {'status':<12} {'dialect op':<24} source"]
        for r in self.rows:
            where = ", ".join(r.locations[:3]) + (" ..." if len(r.locations) > 3 else "")
            lines.append(f"{r.op:<40} {r.count:>5}  {r.status:<12} {r.dialect_op:<24} {where}")
            if r.advice:
                lines.append(f"    -> {r.advice}")
        if self.error:
            lines.append(f"error: {self.error}")
        lines.append(self.summary)
        return "\n".join(lines) + "\n"


def _short_loc(record: dict[str, Any]) -> str:
    where = f"{os.path.basename(record['file'])}:{record['line']}" if record["file"] \
        else "<unknown>"
    scope = record.get("scope")
    return f"{where} ({scope})" if scope else where


def ledger(op_log: list[dict[str, Any]], error: str = "") -> Ledger:
    rows: dict[tuple[str, str], LedgerRow] = {}
    for r in op_log:
        status = op_status(r)
        key = (r["name"], status)
        row = rows.get(key)
        if row is None:
            row = rows[key] = LedgerRow(r["name"], status, 0, r.get("dialect_op", ""), [],
                                        _ADVICE.get(status, ""))
        row.count += 1
        loc = _short_loc(r)
        if loc not in row.locations:
            row.locations.append(loc)
    order = {"unsupported": 0, "error": 1}
    return Ledger(sorted(rows.values(), key=lambda x: (order.get(x.status, 2), x.op)), error)


def explain(model: Any, *args: Any, source_location_excludes: Sequence[str] = (),
            **kwargs: Any) -> Ledger:
    """Traces ``model(*args, **kwargs)`` without compiling and reports every aten op.

    Each op comes with its count, status (lowered / decomposed / unsupported / host),
    the dialect op it becomes and its source lines; ``.summary`` is one line and
    unsupported ops say what to do. ``print(poptorch.explain(model, x))``.
    """
    from ._tracing import trace

    tracers: list[Any] = []
    error = ""
    with _on_tracer(tracers.append):
        try:
            trace(model, *args, source_location_excludes=source_location_excludes, **kwargs)
        except RuntimeError as e:
            error = str(e).splitlines()[0]
    log = list(tracers[-1].op_log) if tracers else []
    if error and "unsupported operation" in error:
        error = ""  # the rows say it
    return ledger(log, error)


# ---------------------------------------------------------------------------
# recompile diff

_LOC = re.compile(r"\s*loc\([^()]*(\([^()]*\))?[^()]*\)")


def _structural(mlir: str) -> list[str]:
    return [_LOC.sub("", line) for line in mlir.splitlines()
            if not line.startswith("#loc")]


def captured_ir_diff(old: str, new: str) -> str:
    return "\n".join(difflib.unified_diff(_structural(old), _structural(new),
                                          "previous captured IR", "new captured IR",
                                          lineterm="", n=1))


def log_recompile(old_graph: Any, new_graph: Any) -> None:
    diff = captured_ir_diff(old_graph.mlir, new_graph.mlir)
    logger.warning("poptorch: recompiled %s for %s (was %s); captured IR diff:\n%s",
                   new_graph.name,
                   ", ".join(str(x) for x in new_graph.signature.leaves),
                   ", ".join(str(x) for x in old_graph.signature.leaves),
                   diff or "(no structural difference)")


# ---------------------------------------------------------------------------
# graph pictures


def to_dot(graph: Any) -> str:
    """The captured graph as Graphviz dot: one node per captured aten op, edges by value.

    (Stage/ipu colouring comes once models carry pipeline blocks.)
    """
    lines = ["digraph poptorch {", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=10];']
    producer: dict[int, str] = {}
    colours = {"captured": "#d9ead3", "unsupported": "#f4cccc", "poisoned": "#fce5cd",
               "random": "#cfe2f3"}
    n_args = graph.num_inputs + len(graph.parameters) + len(graph.buffers)
    arg_names = ([f"input{i}" for i in range(graph.num_inputs)]
                 + [n for n, _ in graph.parameters] + [n for n, _ in graph.buffers])
    for i in range(n_args):
        lines.append(f'  a{i} [label="{arg_names[i]}", shape=ellipse, fillcolor="#eeeeee"];')
        producer[i] = f"a{i}"
    for k, r in enumerate(graph.op_log):
        if r["status"] == "host":
            continue
        status = op_status(r)
        label = f"{r['name']}\\n{status} {r.get('dialect_op', '')}\\n{_short_loc(r)}"
        colour = "#fff2cc" if status == "decomposed" else colours.get(r["status"], "#ffffff")
        lines.append(f'  op{k} [label="{label}", fillcolor="{colour}"];')
        for v, t in zip(r["inputs"], r["input_types"], strict=False):
            if v in producer:
                lines.append(f'  {producer[v]} -> op{k} [label="{t}", fontsize=8];')
        for v in r["outputs"]:
            if v >= 0:
                producer[v] = f"op{k}"
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_svg(dot: str, path: str) -> bool:
    """Renders ``dot`` to ``path`` when Graphviz is installed; False otherwise."""
    exe = shutil.which("dot")
    if not exe:
        return False
    result = subprocess.run([exe, "-Tsvg", "-o", path], input=dot.encode(),
                            capture_output=True, check=False, timeout=60)
    return result.returncode == 0


# ---------------------------------------------------------------------------
# running a program on plain tensors (golden checks, replay bundles)

_C10_DTYPES = {
    "Float": torch.float32, "Double": torch.float64, "Half": torch.float16,
    "BFloat16": torch.bfloat16, "Bool": torch.bool, "Char": torch.int8, "Byte": torch.uint8,
    "Short": torch.int16, "Int": torch.int32, "Long": torch.int64,
    "ComplexHalf": torch.complex32, "ComplexFloat": torch.complex64,
    "ComplexDouble": torch.complex128,
}


def _parse_type(text: str) -> tuple[list[int], torch.dtype]:
    name, dims = text.split("[", 1)
    dims = dims.rstrip("]").strip()
    return [int(d) for d in dims.split(",")] if dims else [], _C10_DTYPES[name]


def program_arguments(graph: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """@main's arguments in order: the tensor inputs, then parameters and buffers."""
    from ._tracing import flatten_inputs, program_buffer

    leaves, _ = flatten_inputs(args, kwargs)
    tensors = [program_buffer(x) for x in leaves if isinstance(x, torch.Tensor)]
    tensors += [program_buffer(t) for _, t in graph.parameters + graph.buffers]
    return tensors


def run_program(program: Any, arguments: Sequence[torch.Tensor],
                results: Sequence[tuple[Sequence[int], torch.dtype]]) -> list[torch.Tensor]:
    """Runs ``program`` on ``arguments`` in their own layouts (it lays out the prepacked
    ones); ``results``: (shape, dtype) of each."""
    from ._tracing import _program_layout

    layouts = list(program.argument_layouts)
    inputs = [(_program_layout(t, layouts[i]) if i < len(layouts) else t).contiguous()
              for i, t in enumerate(arguments)]
    outputs = [torch.empty(list(shape), dtype=dtype) for shape, dtype in results]
    program.run(inputs, outputs)
    return outputs


def result_specs(graph: Any) -> list[tuple[list[int], torch.dtype]]:
    """(shape, dtype) of every result of the captured @main."""
    from ._tracing import TensorSpec

    specs = [x for x in graph.output_leaves if isinstance(x, TensorSpec)]
    by_result = dict(zip(graph.output_results, specs, strict=True))
    out = [(list(by_result[r].shape), by_result[r].dtype)
           for r in range(graph.num_output_results)]
    n_inputs = graph.num_inputs
    state = graph.parameters + graph.buffers
    for arg in graph.buffer_update_args:
        if arg >= n_inputs:
            t = state[arg - n_inputs][1]
            out.append((list(t.shape), t.dtype))
        else:
            out.append((None, None))  # filled by the caller from the inputs
    return out


def _fill_input_updates(graph: Any, specs: list[Any], arguments: Sequence[torch.Tensor]) -> list[Any]:
    return [(list(arguments[arg].shape), arguments[arg].dtype) if spec[0] is None else spec
            for spec, arg in zip(specs, [None] * graph.num_output_results
                                 + list(graph.buffer_update_args), strict=True)]


def eager_results(model: Any, graph: Any, args: Sequence[Any],
                  kwargs: dict[str, Any]) -> list[torch.Tensor | None]:
    """Eager PyTorch's value of each output result (None for written-back arguments)."""
    m = copy.deepcopy(model) if isinstance(model, torch.nn.Module) else model
    a, k = copy.deepcopy((tuple(args), dict(kwargs)))
    with torch.no_grad():
        out = m(*a, **k)
    leaves = [x for x in pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]
    golden: list[torch.Tensor | None] = [None] * (graph.num_output_results
                                                  + len(graph.buffer_update_args))
    for leaf, r in zip(leaves, graph.output_results, strict=True):
        golden[r] = leaf.detach()
    return golden


def compare(actual: torch.Tensor, expected: torch.Tensor, rtol: float | None = None,
            atol: float | None = None) -> str:
    """"" when close (torch.testing's tolerances), else what differs."""
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True,
                                   check_device=False)
    except AssertionError as e:
        return " ".join(str(e).split())
    return ""


# ---------------------------------------------------------------------------
# golden bisection


@dataclasses.dataclass
class BisectReport:
    """The first captured op whose compiled result differs from eager PyTorch."""

    checked: int
    diverged: bool
    op: str = ""
    index: int = -1
    location: str = ""
    detail: str = ""
    reproducer: str = ""  # the single-op reproducer's folder
    reproduces: bool | None = None  # does the single-op program fail the same way?
    seconds: float = 0.0

    def __str__(self) -> str:
        if not self.diverged:
            return f"all {self.checked} captured ops match eager PyTorch ({self.seconds:.2f} s)"
        s = (f"op #{self.index} {self.op} at {self.location} differs from eager PyTorch on "
             f"the same inputs ({self.checked} ops checked, {self.seconds:.2f} s): {self.detail}")
        if self.reproducer:
            s += (f"\nsingle-op reproducer: {self.reproducer} "
                  f"({'fails the same way' if self.reproduces else 'does NOT reproduce'}); "
                  f"re-run it with: python -m poptorch replay {self.reproducer}")
        return s


def _overload(name: str) -> Any:
    base = name.split("::", 1)[1]
    op, _, overload = base.partition(".")
    return getattr(getattr(torch.ops.aten, op), overload or "default")


def _substitute(value: Any, tensors: Iterator[torch.Tensor]) -> Any:
    """Replaces the tensors of an op argument, in the tracer's order, and ipu devices."""
    if isinstance(value, torch.Tensor):
        return next(tensors)
    if isinstance(value, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in value):
        return type(value)(next(tensors) if isinstance(x, torch.Tensor) else x for x in value)
    if isinstance(value, torch.device) and value.type == "ipu":
        return torch.device("cpu")
    return value


def _call(op: Any, args: list[Any]) -> Any:
    positional, keywords = [], {}
    for schema_arg, value in zip(op._schema.arguments, args, strict=True):
        if schema_arg.kwarg_only:
            keywords[schema_arg.name] = value
        else:
            positional.append(value)
    return op(*positional, **keywords)


def _host_value(t: torch.Tensor) -> torch.Tensor:
    return t.to("cpu") if t.device.type == "ipu" else t


def _op_inputs(record: dict[str, Any], values: dict[int, torch.Tensor]) -> list[torch.Tensor]:
    tensors = []
    flat = [t for a in record["args"] for t in
            ([a] if isinstance(a, torch.Tensor) else
             [x for x in a if isinstance(x, torch.Tensor)] if isinstance(a, (list, tuple)) else [])]
    for vid, t in zip(record["inputs"], flat, strict=True):
        tensors.append(values[vid] if vid >= 0 else _host_value(t).clone())
    return tensors


def _op_outputs(result: Any) -> list[torch.Tensor]:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [x for x in result if isinstance(x, torch.Tensor)]
    return []


def bisect(model: Any, *args: Any, out_dir: str | None = None, rtol: float | None = None,
           atol: float | None = None, source_location_excludes: Sequence[str] = (),
           opt_level: int = 0, **kwargs: Any) -> BisectReport:
    """Runs the compiled model and eager PyTorch op by op; reports the first divergence.

    Every captured op's compiled value is read back from one program that returns all
    of them; each op is then re-run eagerly on its *compiled* inputs, so the first op
    that differs is the op whose lowering is wrong (errors do not cascade). Its
    single-op reproducer (``op.mlir``, inputs, expected outputs; a replay bundle) goes to
    ``out_dir`` (default: a new temporary folder). The program that returns every value
    is big; ``opt_level`` is its LLVM optimization level (0: quickest to build, 2x faster
    than 1 on a 6-layer encoder; the same MLIR pipeline and floating-point semantics as the
    O3 build, so a wrong lowering shows the same way).
    """
    from ._tracing import trace

    start = time.perf_counter()
    tracers: list[Any] = []

    def record(tracer: Any) -> None:
        tracer.set_record_args(True)
        tracers.append(tracer)

    with _on_tracer(record):
        graph = trace(model, *args, source_location_excludes=source_location_excludes, **kwargs)
    tracer = tracers[-1]
    log = [r for r in tracer.op_log if r["status"] == "captured"]
    wanted = sorted({v for r in log for v in r["inputs"] + r["outputs"] if v >= 0})
    text, added = tracer.module_text_with_values(wanted)
    program = _C.Program.compile(text, "", opt_level=opt_level)
    arguments = program_arguments(graph, args, kwargs)
    specs = _fill_input_updates(graph, result_specs(graph), arguments)
    types: dict[int, str] = {}
    for r in log:
        types.update(zip(r["inputs"], r["input_types"], strict=True))
        types.update(zip(r["outputs"], r["output_types"], strict=True))
    outputs = run_program(program, arguments, specs + [_parse_type(types[v]) for v in added])
    values: dict[int, torch.Tensor] = dict(enumerate(arguments))
    values.update(zip(added, outputs[len(specs):], strict=True))

    checked = 0
    for index, r in enumerate(log):
        if not all(v in values for v in r["outputs"] if v >= 0):
            continue  # an output that is also a model output or an argument
        inputs = _op_inputs(r, values)
        op = _overload(r["name"])
        it = iter(inputs)
        call_args = [_substitute(a, it) for a in r["args"]]
        expected = _op_outputs(_call(op, call_args))
        checked += 1
        for vid, exp in zip(r["outputs"], expected, strict=False):
            if vid < 0:
                continue
            detail = compare(values[vid], exp, rtol, atol)
            if detail:
                report = BisectReport(checked, True, r["name"], index,
                                      f"{r['file']}:{r['line']}", detail)
                report.reproducer, report.reproduces = _single_op_reproducer(
                    r, op, r["args"], inputs, out_dir, rtol, atol)
                report.seconds = time.perf_counter() - start
                return report
    return BisectReport(checked, False, seconds=time.perf_counter() - start)


def _single_op_reproducer(record: dict[str, Any], op: Any, template: list[Any],
                          inputs: list[torch.Tensor], out_dir: str | None,
                          rtol: float | None, atol: float | None) -> tuple[str, bool]:
    """Traces the op alone on ``inputs`` and writes a replay bundle folder for it."""
    from ._tracing import trace

    def single_op(*tensors: torch.Tensor) -> Any:
        it = iter(tensors)
        return _call(op, [_substitute(a, it) for a in template])

    single_op.__name__ = record["name"].split("::")[1].replace(".", "_")
    graph = trace(single_op, *inputs)
    directory = out_dir or tempfile.mkdtemp(prefix="poptorch-golden-")
    directory = os.path.join(directory, f"op-{single_op.__name__}")
    golden = eager_results(single_op, graph, inputs, {})
    note = (f"single-op reproducer of {record['name']} at {record['file']}:{record['line']} "
            "(golden bisection)")
    write_bundle_dir(directory, graph, program_arguments(graph, inputs, {}), golden, note=note,
                     rtol=rtol, atol=atol)
    with open(os.path.join(directory, "op.mlir"), "w") as f:
        f.write(graph.mlir)
    ok, _ = replay(directory, quiet=True)
    return directory, not ok


# ---------------------------------------------------------------------------
# replay bundles


def versions() -> dict[str, str]:
    from . import __version__

    return {"poptorch": __version__, "torch": torch.__version__,
            "python": platform.python_version(), "platform": platform.platform()}


def write_bundle_dir(directory: str, graph: Any, arguments: list[torch.Tensor],
                     golden: list[torch.Tensor | None], options: Any = None,
                     executable: Any = None, note: str = "", rtol: float | None = None,
                     atol: float | None = None) -> None:
    """A self-contained folder that ``python -m poptorch replay`` re-runs and checks."""
    os.makedirs(directory, exist_ok=True)
    _write(directory, "captured.mlir", graph.mlir)
    specs = _fill_input_updates(graph, result_specs(graph), arguments)
    torch.save({"arguments": arguments, "golden": golden},
               os.path.join(directory, "data.pt"))
    meta = {
        "format": "poptorch-replay-1",
        "model": graph.name,
        "note": note,
        "results": [[list(s), str(d).replace("torch.", "")] for s, d in specs],
        "num_output_results": graph.num_output_results,
        "argument_names": ([f"input{i}" for i in range(graph.num_inputs)]
                           + [n for n, _ in graph.parameters + graph.buffers]),
        "rtol": rtol, "atol": atol,
        "options": _plain(options.toDict()) if options is not None else {},
        "versions": versions(),
        "pipeline": [list(x) for x in _C.pipeline_stages()],
    }
    _write(directory, "meta.json", json.dumps(meta, indent=1) + "\n")
    _write(directory, "ops.txt", str(ledger(graph.op_log)))
    if executable is not None:  # the module after every stage (a dump has every pass)
        stages = os.path.join(directory, "stages")
        os.makedirs(stages, exist_ok=True)
        for i, (stage, text) in enumerate(executable.stages):
            _write(stages, f"{i:02d}-{stage}.mlir", text + "\n")
        _write(stages, "pipeline.txt", "".join(f"{stage}: {text}\n"
                                               for stage, text in _C.pipeline_stages()))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def write_bundle(model: Any, *args: Any, path: str | os.PathLike[str], options: Any = None,
                 **kwargs: Any) -> str:
    """Writes one archive (``.tar.gz``) to re-run ``model(*args)`` without the model's code.

    It holds the captured IR, every stage, the inputs, eager PyTorch's outputs (the
    golden values), the options and the versions. ``python -m poptorch replay <path>``
    recompiles it, runs it and checks the outputs.
    """
    from ._tracing import trace
    from .options import Options

    options = options or Options()
    graph = trace(model, *args,
                  source_location_excludes=options._values["source_location_excludes"],
                  **kwargs)
    program = _C.Program.compile(graph.mlir, "")
    from ._tracing import Executable

    executable = Executable(graph, program)
    arguments = program_arguments(graph, args, kwargs)
    golden = eager_results(model, graph, args, kwargs)
    path = os.fspath(path)
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "bundle")
        write_bundle_dir(root, graph, arguments, golden, options, executable)
        with tarfile.open(path, "w:gz") as tar:
            tar.add(root, arcname="bundle")
    logger.warning("poptorch: wrote the replay bundle %s (%d bytes)", path, os.path.getsize(path))
    return path


@contextlib.contextmanager
def _bundle_folder(path: str) -> Iterator[str]:
    if os.path.isdir(path):
        yield path
        return
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(path) as tar:
        tar.extractall(tmp, filter="data")
        yield os.path.join(tmp, "bundle")


def replay(path: str, quiet: bool = False) -> tuple[bool, str]:
    """Re-runs a replay bundle (archive or folder); (all outputs match, report)."""
    with _bundle_folder(path) as folder:
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
        with open(os.path.join(folder, "captured.mlir")) as f:
            text = f.read()
        data = torch.load(os.path.join(folder, "data.pt"), weights_only=True)
    out = io.StringIO()
    print(f"replaying {meta['model']} ({path}); recorded with {meta['versions']}", file=out)
    if meta.get("note"):
        print(meta["note"], file=out)
    start = time.perf_counter()
    program = _C.Program.compile(text, "")
    print(f"compiled in {time.perf_counter() - start:.3f} s", file=out)
    specs = [(shape, getattr(torch, dtype)) for shape, dtype in meta["results"]]
    results = run_program(program, data["arguments"], specs)
    ok = True
    for i, (actual, expected) in enumerate(zip(results, data["golden"], strict=True)):
        if expected is None:
            print(f"result {i}: not checked (an updated argument)", file=out)
            continue
        detail = compare(actual, expected, meta.get("rtol"), meta.get("atol"))
        ok = ok and not detail
        print(f"result {i} {str(expected.dtype).replace('torch.', '')}{list(expected.shape)}: "
              f"{'ok' if not detail else 'MISMATCH: ' + detail}", file=out)
    print("PASS" if ok else "FAIL", file=out)
    report = out.getvalue()
    if not quiet:
        sys.stdout.write(report)
    return ok, report
