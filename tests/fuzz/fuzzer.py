"""Differential fuzzer: random models through ``poptorch.inferenceModel``, compared with eager PyTorch.

Each model is an ``nn.Module`` whose ``forward`` is straight-line Python: a random DAG of 1-8 ops
over 1-3 inputs, each op made by one of the generator functions of ``GENERATOR_LIST`` (elementwise,
comparisons, reductions, matmuls, normalizations, data movement, indexing, casts, in-place ops
on intermediates, buffers updated in place). Every statement is executed eagerly on the real
inputs while the model is built, so a generator only has to make likely-valid choices: a
statement that eager rejects is drawn again. Model ``k`` of seed ``s`` is the same on every run.

A model runs in a crash-isolated worker process (``multiprocessing`` spawn, reused across
models): the compiled model is called twice on the same inputs and compared with two eager
calls on deep copies of the model and inputs (structure, dtypes, shapes, values with
dtype-suited tolerances), the inputs must be bit-identical after each compiled call, and the
buffers after ``copyWeightsToHost()`` must equal eager's. Outcomes (``OUTCOMES``): ``ok``,
``mismatch``, ``input_written``, ``crash``, ``timeout``, ``untyped_error`` (an exception from
poptorch that is not a ``poptorch.Error``), ``compile_error`` (a ``poptorch.Error`` where eager
succeeded: reported, an unsupported combination is a legitimate refusal), ``both_raise``,
``eager_error`` (skipped), ``eager_inexact`` (the results differ from eager's but equal those of
the model run in float64: eager's float arithmetic is at fault, e.g. its vectorized GELU is NaN
at +inf), ``eager_undefined`` (the results differ and eager ran an in-place op that reads,
through another view, memory it writes: PyTorch leaves that result undefined) and
``fuzzer_error`` (a bug of this file).

Every failure gets a standalone reproducer ``.py`` in the output folder; the first
``minimize_limit`` failures of each class are minimized first (statements dropped or cut into
inputs, outputs dropped, layouts simplified, sizes shrunk, while the failure class persists).
The first model of each kind of compile error gets a reproducer (not minimized) in
``compile_errors/``. ``summary.json`` holds the counts, the generators covered, the failures
and the compile errors, with their reproducers.

CLI::

    python tests/fuzz/fuzzer.py --models N --seed S --jobs J --out DIR [--no-minimize] [--timeout SEC]

The exit status is 1 when any model ends in one of ``FAILURES``.

The code: ``spec.py`` (outcomes, the ``Chooser``, model specifications), ``builder.py`` (the
``Builder``, ``generate`` and ``realize``), ``generators.py`` and ``indexing.py`` (the op generators),
``checks.py`` (the check that runs in the worker, reproducers), ``workers.py`` (the worker pool),
``minimize.py`` (minimization) and this file (the run, its summary and the CLI).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

if not __package__:
    # Run as a script (python tests/fuzz/fuzzer.py, make fuzz): this folder is imported as the
    # package fuzz, from tests/ (PEP 366), as when pytest imports it.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "fuzz"

from .builder import generate, realize  # noqa: E402
from .checks import CHECK_SOURCE, _reproducer, check_model, run_program  # noqa: E402
from .generators import GENERATOR_LIST, GENERATORS  # noqa: E402
from .minimize import minimize  # noqa: E402
from .spec import FAILURES, OUTCOMES, ModelSpec, Program, Result, failure_class  # noqa: E402
from .workers import Task, _Pool  # noqa: E402

# what the fuzzer was when it was one file, for those who import it
__all__ = ["CHECK_SOURCE", "FAILURES", "GENERATORS", "GENERATOR_LIST", "OUTCOMES", "ModelSpec", "Program",
           "Result", "check_model", "failure_class", "format_summary", "generate", "main", "minimize",
           "realize", "run_fuzz", "run_program"]

# Nothing heavy is imported at module level: the parent process never needs torch, and a
# spawned worker sets its environment before it imports torch and poptorch.

DEFAULT_TIMEOUT_S = 60.0


class _Run:
    def __init__(self, seed: int, out: str, minimize_failures: bool, minimize_limit: int) -> None:
        self.seed, self.out = seed, out
        self.minimize_failures, self.minimize_limit = minimize_failures, minimize_limit
        self.counts: collections.Counter[str] = collections.Counter()
        self.generators: collections.Counter[str] = collections.Counter()
        self.compile_errors: dict[str, dict[str, Any]] = {}
        self.minimized: collections.Counter[str] = collections.Counter()
        self.failures: list[dict[str, Any]] = []
        self.seconds = 0.0

    def model(self, index: int) -> Task:
        result = yield ("model", self.seed, index)
        self.counts[result.outcome] += 1
        self.seconds += result.seconds
        if result.program is not None and result.outcome not in ("eager_error", "fuzzer_error"):
            self.generators.update(result.program.gens)
        if result.outcome in ("compile_error", "fuzzer_error"):
            self._compile_error(index, result)
        if result.outcome not in FAILURES:
            return
        cls = failure_class(result.outcome, result.detail)
        entry: dict[str, Any] = {"model": index, "outcome": result.outcome, "class": cls,
                                 "detail": result.detail, "reproducer": None, "minimized": False}
        self.failures.append(entry)
        if result.program is None:
            return
        original = len(result.program.spec.stmts)
        best = result
        # a timeout is not minimized: each candidate could take the whole timeout
        if self.minimize_failures and result.outcome != "timeout" and \
                self.minimized[cls] < self.minimize_limit:
            self.minimized[cls] += 1
            best = yield from minimize(result)
            entry["minimized"] = True
        assert best.program is not None
        path = os.path.join(self.out, f"repro-{result.outcome}-s{self.seed}-m{index}.py")
        with open(path, "w") as f:
            f.write(_reproducer(best, original, entry["minimized"]))
        entry.update(reproducer=path, detail=best.detail, statements=len(best.program.spec.stmts),
                     original_statements=original, generators=best.program.gens)

    def _compile_error(self, index: int, result: Result) -> None:
        """Counts the error by its first line without the model's line and sizes, and writes a
        reproducer (not minimized) of its first model: a refusal is legitimate, a failing pass
        or a shape function that disagrees with torch's is a bug to look at."""
        key = re.sub(r"fuzz-model-[\w-]*\.py:\d+", "<model>", result.detail)
        key = re.sub(r"\[[-\d, ]*\]", "[...]", key)
        key = f"{result.outcome}: {key}"
        entry = self.compile_errors.setdefault(key, {"count": 0, "first_model": index, "reproducer": None})
        entry["count"] += 1
        if entry["count"] == 1 and result.program is not None:
            folder = os.path.join(self.out, "compile_errors")
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, f"repro-s{self.seed}-m{index}.py")
            with open(path, "w") as f:
                f.write(_reproducer(result, len(result.program.spec.stmts), False))
            entry["reproducer"] = path

    def summary(self, models: int, jobs: int, wall: float, restarts: int) -> dict[str, Any]:
        return {"seed": self.seed, "models": models, "jobs": jobs, "wall_seconds": round(wall, 1),
                "seconds_per_100_models": round(100 * wall / max(models, 1), 1),
                "worker_seconds": round(self.seconds, 1), "worker_restarts": restarts,
                # the models alone: no worker start-up, no minimization
                "model_seconds_per_100_models": round(100 * self.seconds / max(models, 1), 1),
                "counts": {o: self.counts.get(o, 0) for o in OUTCOMES},
                "generators": dict(sorted(self.generators.items())),
                "generators_missing": sorted(set(GENERATORS) - set(self.generators)),
                "compile_errors": dict(sorted(self.compile_errors.items(), key=lambda kv: -kv[1]["count"])),
                "failures": self.failures}


def run_fuzz(models: int = 100, seed: int = 0, jobs: int = 2, out: str = "build/fuzz", *,
             minimize_failures: bool = True, minimize_limit: int = 3, timeout_s: float = DEFAULT_TIMEOUT_S,
             start: int = 0, check_meta: bool = True, verify_each: bool = True,
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Runs models ``start .. start + models - 1`` of ``seed``, writes reproducers and
    ``summary.json`` into ``out`` and returns the summary."""
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="poptorch-fuzz-")
    # The compiler's failure dumps go to tmp (TMPDIR), removed with it. verify_each and
    # check_meta are the test suite's compiler self-checks (tests/conftest.py).
    settings = {"env": {"POPTORCH_VERIFY_EACH": "1" if verify_each else "0", "POPTORCH_COMPILE_THREADS": "1",
                        "POPTORCH_PROGRESS": "0", "OMP_NUM_THREADS": "1", "TMPDIR": tmp},
                "check_meta": check_meta}
    run = _Run(seed, out, minimize_failures, minimize_limit)
    pool = _Pool(jobs, settings, tmp, timeout_s)
    last = [time.monotonic()]

    def tasks() -> Iterator[Task]:
        for k in range(start, start + models):
            if progress is not None and time.monotonic() - last[0] > 30:
                last[0] = time.monotonic()
                progress(f"[fuzz] {k - start}/{models} models, {last[0] - started:.0f} s, "
                         f"{dict(run.counts)}")
            yield run.model(k)

    try:
        pool.run(tasks())
    finally:
        pool.close()
        shutil.rmtree(tmp, ignore_errors=True)
    summary = run.summary(models, jobs, time.monotonic() - started, pool.restarts)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def format_summary(summary: dict[str, Any]) -> str:
    """The summary table: outcomes, failures with their reproducers, the commonest compile errors."""
    n = max(summary["models"], 1)
    lines = [f"fuzz: seed {summary['seed']}, {summary['models']} models, {summary['wall_seconds']} s, "
             f"{summary['seconds_per_100_models']} s per 100 models ({summary['jobs']} jobs, "
             f"{summary['worker_restarts']} worker restarts)",
             f"{'outcome':<16}{'models':>8}{'share':>9}"]
    for outcome, count in summary["counts"].items():
        if count:
            mark = "  <- failure" if outcome in FAILURES else ""
            lines.append(f"{outcome:<16}{count:>8}{100 * count / n:>8.1f}%{mark}")
    missing = summary["generators_missing"]
    lines.append(f"generators covered: {len(summary['generators'])}/{len(GENERATORS)}"
                 + (f" (missing: {', '.join(missing)})" if missing else ""))
    for f in summary["failures"]:
        lines.append(f"  {f['class']}: model {f['model']}: {f['detail'][:160]}")
        if f["reproducer"]:
            lines.append(f"    reproducer: {f['reproducer']}")
    if summary["compile_errors"]:
        lines.append("commonest compile errors:")
        for text, entry in list(summary["compile_errors"].items())[:10]:
            lines.append(f"  {entry['count']:>5}  {text[:150]}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="index of the first model")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="build/fuzz")
    parser.add_argument("--no-minimize", action="store_true")
    parser.add_argument("--minimize-limit", type=int, default=3,
                        help="failures of one class that are minimized (the rest keep the full model)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per model")
    args = parser.parse_args(argv)
    summary = run_fuzz(args.models, args.seed, args.jobs, args.out, minimize_failures=not args.no_minimize,
                       minimize_limit=args.minimize_limit, timeout_s=args.timeout, start=args.start,
                       progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(format_summary(summary))
    print(f"summary: {os.path.join(args.out, 'summary.json')}")
    return 1 if any(summary["counts"][o] for o in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
