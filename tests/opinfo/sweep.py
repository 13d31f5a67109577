"""PyTorch's OpInfo database run through ``poptorch.inferenceModel``, crash-isolated.

Every OpInfo of ``torch.testing._internal.common_methods_invocations.op_db`` is tried
with each of its CPU samples for float32, int64 and bool: the sample becomes a module
whose inputs are the sample's tensors, compiled and run by ``inferenceModel`` and
compared with eager PyTorch on the same inputs. The samples run in spawned worker
processes, so that a sample that kills its process (a signal) or hangs is recorded as
``crash`` or ``timeout`` and the sweep goes on in a fresh worker.

Outcomes of a sample: ``pass``, ``mismatch`` (values, dtype, shape or structure differ
from eager), ``input_written`` (the compiled call changed an input that eager leaves
alone), ``crash``, ``timeout`` and ``error`` (an exception while tracing, compiling or
running: its type and first line). Samples that eager itself cannot run, or runs to
different results twice, are left out (``eager_error``, ``nondeterministic``), and so
are random ops. An (op, dtype) passes when all its samples pass; otherwise it takes
its worst outcome (``SEVERITY``).

Library: ``run_sweep``, ``summarize``, ``compare_with_expected``, ``write_expected``.
CLI::

    python tests/opinfo/sweep.py --dtypes float32,int64,bool --jobs 2 \\
        [--ops name1,name2] [--max-samples N] [--json out.json] [--update-expected]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

# Nothing heavy is imported at module level: a spawned worker imports this module
# first and sets its environment before torch and poptorch are loaded.

DTYPES = ("float32", "int64", "bool")
EXPECTED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.json")

# Worst first: a crash or a silent wrong answer matters more than a loud refusal.
SEVERITY = ("crash", "input_written", "mismatch", "timeout", "error", "pass")
EXCLUDED = ("eager_error", "nondeterministic")

SAMPLE_TIMEOUT_S = 60.0
# Samples per task: a worker takes a unit's samples this many at a time, so that the
# ops with a thousand samples (max_pool2d) are shared by the workers.
CHUNK = 32
STARTUP_TIMEOUT_S = 180.0
# A worker whose peak RSS passes this is replaced between units: compiled programs
# and torch's caches only grow over thousands of compiles.
WORKER_RSS_LIMIT_MB = 3072

# OpInfos whose outputs are random by definition. Names alone would also catch
# deterministic ops (nn.functional.normalize, signal.windows.exponential,
# poisson_nll_loss, __rand__), so they are matched whole; any other random op is
# caught per sample by the eager double run with two seeds.
_RANDOM_NAMES = frozenset({
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial",
    "normal", "poisson", "rand", "rand_like", "randint", "randint_like", "randn",
    "randn_like", "uniform",
})


def _skip_reasons(op: Any, cls_name: str, test_name: str) -> list[str]:
    """The reasons of the OpInfo's ``unittest.skip`` decorators of one torch test."""
    reasons = []
    for info in op.decorators:
        if getattr(info, "cls_name", None) != cls_name or getattr(info, "test_name", None) != test_name:
            continue
        for dec in info.decorators:
            try:
                why = getattr(dec(lambda: None), "__unittest_skip_why__", None)
            except Exception:
                continue  # not a skip decorator
            if why:
                reasons.append(why)
    return reasons


def excluded_op(op: Any) -> str:
    """Why the OpInfo has no output to compare with, or ``""``: a random op, or one whose
    test of CPU against another device torch skips because its output is not
    deterministic (dropouts, rrelu, the empty_* ops' uninitialized memory), which is
    the comparison the sweep makes."""
    if op.name in _RANDOM_NAMES or "dropout" in op.name:
        return "random op"
    # A qualified reason ("... (when dropout_p > 0)") concerns some samples only,
    # which the eager double run finds.
    if "output is non-deterministic" in _skip_reasons(op, "TestCommon", "test_compare_cpu"):
        return "non-deterministic output (OpInfo)"
    # empty_strided has no such skip, only those of tests that compare its values.
    if "empty" in op.name and any("is not comparable" in why for info in op.decorators
                                  for why in _skip_reasons(op, info.cls_name, info.test_name)):
        return "uninitialized output (OpInfo)"
    return ""


def op_key(op: Any) -> str:
    """The OpInfo's name, with its variant (``max.reduction_with_dim``) when it has one."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def load_op_db() -> list[Any]:
    """torch's OpInfo list. torch's testing internals import ``expecttest`` only as the
    base of their unittest TestCase, which the OpInfos never use; without the package
    a stand-in keeps the import working."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        import types
        import unittest

        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase  # type: ignore[attr-defined]
        sys.modules["expecttest"] = stub
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return list(op_db)


# ---------------------------------------------------------------------------
# The worker: runs the samples of one (op, dtype) at a time.


# The user's source line in an error is always this file's call of the op.
_LOCATION = re.compile(r"\s*\(?\bat (<unknown location>|[^\s:()]+:\d+)\)?")


def _describe(err: BaseException) -> str:
    """The error's type and first line; a first line that announces a list (the
    unsupported ops) gets the list's names."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    head = lines[0] if lines else ""
    if head.endswith(":") and len(lines) > 1:
        items = []
        for line in lines[1:]:
            if not re.match(r"[\w:.]+( at |$)", line):
                break
            items.append(line.split(" at ")[0])
        head = f"{head} {', '.join(items)}"
    return f"{type(err).__name__}: {_LOCATION.sub('', head)}"[:300]


def _stamp(path: str) -> tuple[str, int, int]:
    """Which build of a file a process loaded: its path, size and mtime."""
    st = os.stat(path)
    return path, st.st_size, st.st_mtime_ns


def _rss_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _replica(t: Any) -> Any:
    """A copy of ``t`` with its own storage and the same size, strides and offset, so that
    every run sees the sample's exact layout (expanded and strided inputs included)."""
    import torch

    if t.layout != torch.strided:
        return t.clone()
    storage = t.untyped_storage().clone()
    return torch.empty(0, dtype=t.dtype).set_(storage, t.storage_offset(), t.size(), t.stride())


def _storage_bytes(t: Any) -> Any:
    import torch

    if t.layout != torch.strided:
        return t.to_dense().contiguous().flatten().view(torch.uint8)
    s = t.untyped_storage()
    return torch.empty(0, dtype=torch.uint8).set_(s, 0, (s.nbytes(),), (1,))


def _unchanged(after: Any, before: Any) -> bool:
    """Same size, strides and offset, and bit-identical storage (sparse tensors: the
    same layout and dense bytes)."""
    import torch

    if after.layout != before.layout or after.size() != before.size():
        return False
    if before.layout == torch.strided and \
            (after.stride(), after.storage_offset()) != (before.stride(), before.storage_offset()):
        return False
    return torch.equal(_storage_bytes(after), _storage_bytes(before))


def _difference(actual: Any, expected: Any, tolerance: Callable[[Any], tuple[float, float]]) -> str:
    """Why ``actual`` is not ``expected`` (structure, then each leaf), or ``""``.
    ``tolerance(leaf)`` is the (rtol, atol) of an expected leaf."""
    import torch
    import torch.utils._pytree as pytree

    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if a_spec != e_spec:
        def short(spec: Any) -> str:
            return " ".join(str(spec).split())[:100]
        return f"output structure {short(a_spec)} != eager {short(e_spec)}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves, strict=True)):
        if isinstance(e, torch.Tensor) or isinstance(e, bool | int | float | complex):
            if isinstance(e, torch.Tensor) != isinstance(a, torch.Tensor):
                return f"output {i} is a {type(a).__name__}, eager's a {type(e).__name__}"
            rtol, atol = tolerance(e)
            try:
                torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
            except AssertionError as err:
                lines = [line.strip() for line in str(err).splitlines() if line.strip()]
                return f"output {i}: " + "; ".join(lines[:3])[:300]
        elif a != e:
            return f"output {i}: {a!r} != eager {e!r}"[:300]
    return ""


def _module_of(fn: Callable[[list[Any]], Any]) -> Any:
    """The nn.Module of one sample: its inputs are the sample's tensors."""
    import torch

    class OpInfoSample(torch.nn.Module):
        def forward(self, *tensors: Any) -> Any:
            return fn(list(tensors))

    return OpInfoSample()


def _run_sample(conn: Connection, index: int, op: Any, sample: Any,
                tolerance: Callable[[Any], tuple[float, float]]) -> tuple[str, str]:
    import torch
    import torch.utils._pytree as pytree

    import poptorch

    conn.send(("begin", index, "eager"))
    leaves, spec = pytree.tree_flatten((sample.input, tuple(sample.args), dict(sample.kwargs)))
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    originals = [leaves[i] for i in positions]

    def call(tensors: list[Any]) -> Any:
        filled = list(leaves)
        for p, t in zip(positions, tensors, strict=True):
            filled[p] = t
        inp, args, kwargs = pytree.tree_unflatten(filled, spec)
        return op.op(inp, *args, **kwargs)

    # Two eager runs under different seeds: a sample whose result depends on the
    # random state (or on anything else) has no single right answer to compare with.
    try:
        with torch.no_grad():
            torch.manual_seed(1)
            eager_inputs = [_replica(t) for t in originals]
            expected = call(eager_inputs)
            torch.manual_seed(2)
            again_inputs = [_replica(t) for t in originals]
            again = call(again_inputs)
        if _difference(again, expected, lambda _: (0.0, 0.0)) or not all(
                _unchanged(a, b) for a, b in zip(again_inputs, eager_inputs, strict=True)):
            return "nondeterministic", ""
        eager_wrote = [not _unchanged(t, o) for t, o in zip(eager_inputs, originals, strict=True)]
    except Exception as err:
        return "eager_error", _describe(err)

    conn.send(("begin", index, "compiled"))
    model = _module_of(call).eval()
    inputs = [_replica(t) for t in originals]
    try:
        actual = poptorch.inferenceModel(model)(*inputs)
    except Exception as err:
        return "error", _describe(err)
    try:
        for i, (t, o, e, wrote) in enumerate(zip(inputs, originals, eager_inputs, eager_wrote,
                                                 strict=True)):
            if not wrote and not _unchanged(t, o):
                return "input_written", f"input {i} {tuple(o.shape)} {str(o.dtype).removeprefix('torch.')}"
            if wrote and not _unchanged(t, e):
                return "mismatch", f"input {i}: not updated in place as eager does"
        problem = _difference(actual, expected, tolerance)
    except Exception as err:
        # The results are not even comparable with eager's (e.g. a tensor of another layout).
        problem = f"cannot compare with eager: {_describe(err)}"
    return ("mismatch", problem) if problem else ("pass", "")


def _tolerance(op: Any, dtype: Any) -> Callable[[Any], tuple[float, float]]:
    """The (rtol, atol) of an output: assert_close's defaults for the output's dtype (an
    int64 sample of cos has a float32 result), raised to the largest override that any
    of the OpInfo's tests declares for the sample's dtype (``toleranceOverride``)."""
    import torch
    from torch.testing._comparison import default_tolerances
    from torch.testing._internal.common_device_type import toleranceOverride

    rtol, atol = 0.0, 0.0
    for info in op.decorators:
        for dec in getattr(info, "decorators", [info]):
            if isinstance(dec, toleranceOverride) and dtype in dec.d:
                rtol = max(rtol, dec.d[dtype].rtol)
                atol = max(atol, dec.d[dtype].atol)

    def of(leaf: Any) -> tuple[float, float]:
        if not isinstance(leaf, torch.Tensor):
            leaf = torch.tensor(leaf)
        r, a = default_tolerances(leaf.dtype)
        return max(r, rtol), max(a, atol)

    return of


def _samples(op: Any, dtype: Any, max_samples: int | None) -> list[Any]:
    """The first ``max_samples`` samples, the same ones in every process and run."""
    import itertools
    import random

    import numpy
    import torch

    torch.manual_seed(0)
    random.seed(0)
    numpy.random.seed(0)
    return list(itertools.islice(op.sample_inputs("cpu", dtype, requires_grad=False), max_samples))


def _restart_log(stream_fd: int) -> None:
    # The worker's stdout and stderr go to one O_APPEND file, emptied before each
    # sample, so that what a crashing sample printed (an LLVM fatal error, an
    # assertion) is all the file holds when the parent reads it.
    sys.stdout.flush()
    sys.stderr.flush()
    os.ftruncate(stream_fd, 0)


def _worker_main(conn: Connection, settings: dict[str, Any]) -> None:
    log_fd = os.open(settings["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.environ.update(settings["env"])
    os.environ.pop("POPTORCH_CACHE_DIR", None)
    import gc
    import warnings

    warnings.simplefilter("ignore")
    import torch

    # Two workers share two cores: each one computes and compiles on one thread.
    torch.set_num_threads(1)
    import poptorch

    poptorch._C.check_meta_kernels(settings["check_meta"])
    ops = {op_key(op): op for op in load_op_db()}
    conn.send(("ready", _stamp(poptorch._C.__file__)))
    done = 0
    cached: tuple[Any, list[Any]] = (None, [])  # the last unit's samples, for its next chunk
    while True:
        task = conn.recv()
        if task is None:
            return
        key, dtype_name, start, stop, max_samples = task
        op = ops[key]
        dtype = getattr(torch, dtype_name)
        _restart_log(log_fd)
        if cached[0] != (key, dtype_name, max_samples):
            try:
                cached = ((key, dtype_name, max_samples), _samples(op, dtype, max_samples))
            except Exception as err:
                cached = (None, [])
                conn.send(("unit_error", _describe(err)))
                conn.send(("done", _rss_mb()))
                continue
        samples = cached[1]
        conn.send(("unit", len(samples)))
        tolerance = _tolerance(op, dtype)
        for index in range(start, min(stop, len(samples))):
            _restart_log(log_fd)
            began = time.perf_counter()
            outcome, detail = _run_sample(conn, index, op, samples[index], tolerance)
            conn.send(("result", index, outcome, detail, time.perf_counter() - began))
            done += 1
            if done % 64 == 0:
                gc.collect()  # compiled programs kept alive by reference cycles
        conn.send(("done", _rss_mb()))


# ---------------------------------------------------------------------------
# The parent: hands (op, dtype) units to the workers and survives their deaths.


@dataclass
class _Unit:
    key: str
    dtype: str
    count: int | None = None  # samples, once the worker has made them
    results: dict[int, tuple[str, str]] = field(default_factory=dict)
    error: str = ""  # the samples could not be made
    seconds: float = 0.0  # spent on its samples, eager runs included

    @property
    def done(self) -> bool:
        return bool(self.error) or (self.count is not None and len(self.results) >= self.count)


class _Worker:
    def __init__(self, ctx: Any, settings: dict[str, Any], log: str) -> None:
        self.log = log
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, {**settings, "log": log}),
                                daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.unit: _Unit | None = None
        self.sample: int | None = None  # the sample it is running
        self.next = 0  # the sample after the last one it reported
        self.stop_at = 0  # the end of its chunk
        self.phase = ""
        self.deadline: float | None = time.monotonic() + STARTUP_TIMEOUT_S

    def log_tail(self) -> str:
        """The line of the worker's output that says most about how it died."""
        try:
            with open(self.log, errors="replace") as f:
                lines = [line.strip() for line in f.read()[-20000:].splitlines() if line.strip()]
        except OSError:
            return ""
        pattern = re.compile(r"error|assert|fatal|abort|terminate|segmentation", re.IGNORECASE)
        hits = [line for line in lines if pattern.search(line)]
        return (hits[0] if hits else lines[-1] if lines else "")[:240]

    def stop(self, kill: bool = False) -> int | None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.proc.join(10)
        if self.proc.exitcode is None:
            self.proc.kill()
            self.proc.join()
        self.conn.close()
        return self.proc.exitcode


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def plan(op_db: list[Any], dtypes: Iterable[str], ops: Iterable[str] | None = None
         ) -> tuple[list[tuple[str, str]], dict[tuple[str, str], str]]:
    """The (op, dtype) units to run and those left out, with why. ``ops`` selects by
    key (``max.binary``) or by name (``max``: all its variants)."""
    import torch

    wanted = set(ops) if ops is not None else None
    units: list[tuple[str, str]] = []
    excluded: dict[tuple[str, str], str] = {}
    for op in op_db:
        key = op_key(op)
        if wanted is not None and key not in wanted and op.name not in wanted:
            continue
        supported = op.supported_dtypes("cpu")
        for dtype in dtypes:
            if getattr(torch, dtype) not in supported:
                continue
            why = excluded_op(op)
            if why:
                excluded[(key, dtype)] = why
            else:
                units.append((key, dtype))
    return units, excluded


def run_sweep(dtypes: Iterable[str] = DTYPES, *, ops: Iterable[str] | None = None, jobs: int = 2,
              max_samples: int | None = None, timeout_s: float = SAMPLE_TIMEOUT_S,
              verify_each: bool = True, check_meta: bool = True,
              progress: Callable[[str], None] | None = None,
              checkpoint: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Runs the sweep and returns its report (see ``summarize`` for its shape).

    ``checkpoint`` is given the report of the (op, dtype) units finished so far, marked
    ``"partial": true``, every minute and when the sweep is interrupted, so that a
    stopped sweep keeps what it measured.

    ``verify_each`` and ``check_meta`` are the test suite's compiler checks
    (tests/conftest.py): the sweep runs with them whether it is started by pytest or
    the CLI, so that both record the same outcomes.
    """
    dtypes = list(dtypes)
    started = time.monotonic()
    units, excluded = plan(load_op_db(), dtypes, ops)
    tmp = tempfile.mkdtemp(prefix="poptorch-opinfo-")
    # Failure reproducers and other temp files of the compiler land in tmp (TMPDIR),
    # removed with it.
    settings = {"env": {"POPTORCH_VERIFY_EACH": "1" if verify_each else "0",
                        "POPTORCH_COMPILE_THREADS": "1", "POPTORCH_PROGRESS": "0",
                        "OMP_NUM_THREADS": "1", "TMPDIR": tmp},
                "check_meta": check_meta}
    pool = _Pool(settings, jobs, tmp, timeout_s, max_samples)

    def partial(state: dict[tuple[str, str], _Unit]) -> None:
        if checkpoint is not None:
            finished = {k: u for k, u in state.items() if u.done}
            checkpoint({**_report(finished, excluded, dtypes, max_samples,
                                  time.monotonic() - started, pool.restarts),
                        "partial": True, "units_planned": len(state)})

    pool.checkpoint = partial
    try:
        state = pool.run(units, progress)
    except BaseException:
        partial(pool.state)
        raise
    finally:
        pool.close()
        shutil.rmtree(tmp, ignore_errors=True)
    report = _report(state, excluded, dtypes, max_samples, time.monotonic() - started, pool.restarts)
    # poptorch rebuilt while the sweep ran: workers ran different builds, and one whose
    # extension was rewritten under it can crash for that reason alone.
    builds = pool.builds | {_stamp(path) for path, _, _ in pool.builds if os.path.exists(path)}
    report["poptorch_rebuilt"] = len(builds) > 1
    return report


class _Pool:
    """The workers and the queue of (unit, first sample, end) chunks they take work from."""

    def __init__(self, settings: dict[str, Any], jobs: int, tmp: str, timeout_s: float,
                 max_samples: int | None) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.settings = settings
        self.timeout_s = timeout_s
        self.max_samples = max_samples
        self.restarts = 0
        self.builds: set[tuple[str, int, int]] = set()  # the poptorch._C each worker loaded
        self.workers = [_Worker(self.ctx, settings, os.path.join(tmp, f"worker{i}.log"))
                        for i in range(jobs)]
        self.queue: collections.deque[tuple[_Unit, int, int]] = collections.deque()
        self.state: dict[tuple[str, str], _Unit] = {}
        self.checkpoint: Callable[[dict[tuple[str, str], _Unit]], None] | None = None

    def run(self, units: list[tuple[str, str]], progress: Callable[[str], None] | None
            ) -> dict[tuple[str, str], _Unit]:
        state = self.state = {u: _Unit(*u) for u in units}
        # A unit's first chunk says how many samples it has; its other chunks then
        # go to the front of the queue.
        self.queue.extend((unit, 0, CHUNK) for unit in state.values())
        started = last_report = last_checkpoint = time.monotonic()
        while True:
            for w in self.workers:
                if w.ready and w.unit is None and self.queue:
                    unit, start, stop = self.queue.popleft()
                    w.unit, w.sample, w.phase, w.next, w.stop_at = unit, None, "", start, stop
                    w.conn.send((unit.key, unit.dtype, start, stop, self.max_samples))
                    w.deadline = time.monotonic() + self.timeout_s
            if not self.queue and all(w.unit is None for w in self.workers):
                return state
            deadlines = [w.deadline for w in self.workers if w.deadline is not None]
            wait_s = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready = wait([w.conn for w in self.workers], wait_s)
            for i, w in enumerate(self.workers):
                if w.conn in ready:
                    self._receive(i)
                elif w.deadline is not None and time.monotonic() > w.deadline:
                    self._replace(i, "timeout")
            if progress is not None and time.monotonic() - last_report > 30:
                last_report = time.monotonic()
                done = sum(1 for u in state.values() if u.done)
                samples = sum(len(u.results) for u in state.values())
                progress(f"[opinfo] {done}/{len(state)} (op, dtype) done, {samples} samples, "
                         f"{last_report - started:.0f} s")
            if self.checkpoint is not None and time.monotonic() - last_checkpoint > 60:
                last_checkpoint = time.monotonic()
                self.checkpoint(state)

    def _receive(self, i: int) -> None:
        w = self.workers[i]
        try:
            while w.conn.poll():
                msg = w.conn.recv()
                kind = msg[0]
                if kind == "ready":
                    w.ready, w.deadline = True, None
                    self.builds.add(tuple(msg[1]))
                    continue
                assert w.unit is not None, msg
                if kind == "unit" and w.unit.count is None:
                    w.unit.count = msg[1]
                    for start in reversed(range(CHUNK, msg[1], CHUNK)):
                        self.queue.appendleft((w.unit, start, start + CHUNK))
                elif kind == "unit_error":
                    w.unit.error = msg[1]
                elif kind == "begin":
                    w.sample, w.phase = msg[1], msg[2]
                    w.deadline = time.monotonic() + self.timeout_s
                elif kind == "result":
                    w.unit.results[msg[1]] = (msg[2], msg[3])
                    w.unit.seconds += msg[4]
                    w.sample, w.next = None, msg[1] + 1
                elif kind == "done":
                    w.unit, w.sample, w.deadline = None, None, None
                    if msg[1] > WORKER_RSS_LIMIT_MB:
                        w.stop()
                        self.workers[i] = _Worker(self.ctx, self.settings, w.log)
                        return
        except (EOFError, OSError):
            self._replace(i, "crash")

    def _replace(self, i: int, why: str) -> None:
        """Records what the dead (or hung, then killed) worker was doing and starts
        another; the rest of its unit goes first to the next free worker."""
        w = self.workers[i]
        exitcode = w.stop(kill=why == "timeout")
        if not w.ready:
            raise RuntimeError(f"opinfo worker failed to start ({_death(exitcode)}): {w.log_tail()}")
        unit = w.unit
        if unit is not None and unit.count is None:
            unit.error = f"{why} while making the samples"
        elif unit is not None:
            if w.sample is not None:
                if w.phase != "compiled":
                    outcome, detail = "eager_error", f"eager {why}"
                elif why == "crash":
                    tail = w.log_tail()
                    outcome, detail = why, _death(exitcode) + (f": {tail}" if tail else "")
                else:
                    outcome, detail = why, f"over {self.timeout_s:g} s"
                unit.results[w.sample] = (outcome, detail)
                w.next = w.sample + 1
            if w.next < min(w.stop_at, unit.count):
                self.queue.appendleft((unit, w.next, w.stop_at))
        self.restarts += 1
        self.workers[i] = _Worker(self.ctx, self.settings, w.log)

    def close(self) -> None:
        for w in self.workers:
            w.stop(kill=w.unit is not None or not w.ready)


def _unit_summary(unit: _Unit) -> dict[str, Any]:
    if unit.error:
        return {"outcome": "error", "samples": 0, "failing": 1, "first": 0, "detail": unit.error}
    tested = {i: r for i, r in sorted(unit.results.items()) if r[0] not in EXCLUDED}
    if not tested:
        reasons = sorted({r[0] for r in unit.results.values()}) or ["no samples"]
        return {"outcome": "excluded", "why": ", ".join(reasons)}
    failing = {i: r for i, r in tested.items() if r[0] != "pass"}
    if not failing:
        return {"outcome": "pass", "samples": len(tested)}
    worst = min((r[0] for r in failing.values()), key=SEVERITY.index)
    first = min(failing)
    return {"outcome": worst, "samples": len(tested), "failing": len(failing), "first": first,
            "detail": next(r[1] for i, r in failing.items() if r[0] == worst)}


def _report(state: dict[tuple[str, str], _Unit], excluded: dict[tuple[str, str], str],
            dtypes: list[str], max_samples: int | None, wall_s: float, restarts: int) -> dict[str, Any]:
    import torch

    units: dict[str, dict[str, Any]] = {}
    samples: list[dict[str, Any]] = []
    for (key, dtype), why in excluded.items():
        units.setdefault(key, {})[dtype] = {"outcome": "excluded", "why": why}
    for (key, dtype), unit in state.items():
        units.setdefault(key, {})[dtype] = {**_unit_summary(unit), "seconds": round(unit.seconds, 2)}
        for index, (outcome, detail) in sorted(unit.results.items()):
            if outcome != "pass":
                samples.append({"op": key, "dtype": dtype, "sample": index, "outcome": outcome,
                                "detail": detail})
    return {"torch": torch.__version__, "dtypes": dtypes, "max_samples": max_samples,
            "wall_s": round(wall_s, 1), "worker_restarts": restarts,
            "units": {k: dict(sorted(v.items())) for k, v in sorted(units.items())},
            "failed_samples": samples,
            "sample_counts": _sample_counts(state)}


def _sample_counts(state: dict[tuple[str, str], _Unit]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for (_, dtype), unit in state.items():
        per = counts.setdefault(dtype, {})
        for outcome, _detail in unit.results.values():
            per[outcome] = per.get(outcome, 0) + 1
    return counts


# ---------------------------------------------------------------------------
# Reading a report.


def summarize(report: dict[str, Any]) -> str:
    """Per dtype: (op, dtype) passing / tested and samples passing / tested; then the
    samples that crash or write their input."""
    cap = report["max_samples"]
    scope = "all samples" if cap is None else f"the first {cap} samples"
    lines = [f"OpInfo sweep (torch {report['torch']}, {scope} per op and dtype): "
             f"{report['wall_s']:.0f} s, {report['worker_restarts']} worker restarts"]
    if report.get("poptorch_rebuilt"):
        lines.append("WARNING: poptorch._C changed while the sweep ran; its crashes may come from that")
    for dtype in report["dtypes"]:
        outcomes = [u[dtype]["outcome"] for u in report["units"].values() if dtype in u]
        tested = [o for o in outcomes if o != "excluded"]
        passed = tested.count("pass")
        counts = report["sample_counts"].get(dtype, {})
        s_tested = sum(n for o, n in counts.items() if o not in EXCLUDED)
        pct = 100.0 * passed / len(tested) if tested else 0.0
        worst = collections.Counter(o for o in tested if o != "pass")
        lines.append(f"  {dtype:8s} ops {passed:4d}/{len(tested):4d} ({pct:5.1f}%)  samples "
                     f"{counts.get('pass', 0):5d}/{s_tested:5d}  excluded ops "
                     f"{len(outcomes) - len(tested)}  failing ops: "
                     + ", ".join(f"{o} {n}" for o, n in sorted(worst.items())))
    for outcome in ("crash", "input_written", "timeout"):
        hits = [s for s in report["failed_samples"] if s["outcome"] == outcome]
        lines.append(f"{outcome}: {len(hits)} samples")
        lines += [f"  {s['op']} {s['dtype']} sample {s['sample']}: {s['detail']}" for s in hits]
    return "\n".join(lines)


def error_lines(report: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Each error line with the number of (op, dtype) and of samples it fails, most
    (op, dtype) first: what blocks the most OpInfos."""
    units: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
    samples: collections.Counter[str] = collections.Counter()
    for s in report["failed_samples"]:
        if s["outcome"] == "error":
            # Sizes and strides vary by sample; the kind of error is what counts.
            line = re.sub(r"\[[\d, ]*\]", "[...]", s["detail"])
            units[line].add((s["op"], s["dtype"]))
            samples[line] += 1
    return sorted(((line, len(u), samples[line]) for line, u in units.items()),
                  key=lambda row: (-row[1], -row[2], row[0]))


def expected_passes(entry: dict[str, Any], max_samples: int | None) -> bool:
    """Whether an expected.json entry (recorded on all samples) passes on the first
    ``max_samples``: its first failing sample is at or beyond the cap."""
    if entry["outcome"] == "pass":
        return True
    return entry["outcome"] != "excluded" and max_samples is not None and entry["first"] >= max_samples


def compare_with_expected(report: dict[str, Any], expected: dict[str, Any]
                          ) -> tuple[list[str], list[str]]:
    """(regressions, improvements): (op, dtype) that passed in ``expected`` and no longer
    pass, and those that pass now and did not."""
    cap = report["max_samples"]
    regressions: list[str] = []
    improvements: list[str] = []
    for key, per in report["units"].items():
        for dtype, now in per.items():
            before = expected.get("units", {}).get(key, {}).get(dtype)
            was = before is not None and expected_passes(before, cap)
            if was and now["outcome"] not in ("pass", "excluded"):
                regressions.append(f"{key} {dtype}: {now['outcome']} ({now.get('detail', '')})")
            elif now["outcome"] == "pass" and not was:
                improvements.append(f"{key} {dtype}: was "
                                    f"{before['outcome'] if before else 'not recorded'}, passes")
    return regressions, improvements


def write_expected(report: dict[str, Any], path: str = EXPECTED_PATH) -> None:
    """Writes the per-(op, dtype) outcomes, one op per line, without the details (which
    change with every error message)."""
    if report["max_samples"] is not None:
        raise ValueError("expected.json records sweeps over all samples (max_samples=None)")
    rows = []
    for key, per in report["units"].items():
        entries = {d: {k: v for k, v in e.items() if k not in ("detail", "seconds")}
                   for d, e in per.items()}
        rows.append(f" {json.dumps(key)}: {json.dumps(entries, sort_keys=True)}")
    head = {"about": "outcomes of tests/opinfo/sweep.py over all samples; make opinfo rewrites it",
            "torch": report["torch"], "dtypes": report["dtypes"]}
    text = "{\n" + "".join(f" {json.dumps(k)}: {json.dumps(v)},\n" for k, v in head.items())
    text += ' "units": {\n' + ",\n".join(" " + r for r in rows) + "\n }\n}\n"
    with open(path, "w") as f:
        f.write(text)


def load_expected(path: str = EXPECTED_PATH) -> dict[str, Any]:
    with open(path) as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ops", default=None, help="comma-separated OpInfo names or name.variant")
    parser.add_argument("--max-samples", type=int, default=None, help="first N samples per op, dtype")
    parser.add_argument("--timeout", type=float, default=SAMPLE_TIMEOUT_S, help="seconds per sample")
    parser.add_argument("--json", default=None,
                        help="write the full report here (while it runs: the finished part)")
    parser.add_argument("--update-expected", action="store_true",
                        help=f"rewrite {os.path.relpath(EXPECTED_PATH)} from this sweep")
    parser.add_argument("--errors", type=int, default=15, help="show the N most common errors")
    args = parser.parse_args(argv)
    # A terminated sweep still stops its workers and removes its temp folder.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    if args.update_expected and (args.ops or args.max_samples is not None):
        parser.error("--update-expected needs the sweep of all ops and samples")
    def write_json(report: dict[str, Any]) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json + ".tmp", "w") as f:
            json.dump(report, f, indent=1)
        os.replace(args.json + ".tmp", args.json)

    report = run_sweep(args.dtypes.split(","), ops=args.ops.split(",") if args.ops else None,
                       jobs=args.jobs, max_samples=args.max_samples, timeout_s=args.timeout,
                       progress=lambda line: print(line, file=sys.stderr, flush=True),
                       checkpoint=write_json if args.json else None)
    print(summarize(report))
    print("most common errors: (op, dtype), samples, error")
    for line, n_units, n_samples in error_lines(report)[:args.errors]:
        print(f"  {n_units:4d} {n_samples:5d}  {line}")
    if os.path.exists(EXPECTED_PATH):
        regressions, improvements = compare_with_expected(report, load_expected())
        print(f"against {os.path.relpath(EXPECTED_PATH)}: {len(regressions)} regressions, "
              f"{len(improvements)} improvements")
        for line in regressions:
            print(f"  regression: {line}")
        for line in improvements:
            print(f"  improvement: {line}")
    if args.json:
        write_json(report)
    if args.update_expected:
        write_expected(report)
        print(f"wrote {os.path.relpath(EXPECTED_PATH)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
