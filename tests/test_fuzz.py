"""A short differential fuzz run (tests/fuzz): random models through ``poptorch.inferenceModel``
compared with eager PyTorch, each in a crash-isolated worker process, as ``make fuzz`` runs them;
and the determinism of the generator, which both runs and every reproducer rely on.

The run's outcomes are those of ``tests/fuzz/fuzzer.py``; the test fails when a model ends in one
of ``FAILURES`` (crash, mismatch, input_written, timeout, untyped_error), and its message lists
each such model with its detail and its reproducer. The workers check their own inputs and run
the compiler's self-checks of the suite (``POPTORCH_VERIFY_EACH``, the Meta kernel check of
tests/conftest.py), which ``run_fuzz`` turns on in them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from fuzz.builder import generate
from fuzz.fuzzer import FAILURES, run_fuzz

# A fixed seed and a number of models that fits in `make test`: about 50 s on 2 cores with 2 jobs
# (2.4 s per 100 models).
# `make fuzz` is the long run: 10,000 models, and `make fuzz FUZZ_SEED=n` explores the models of
# a new seed (a failure it finds becomes a regression test in tests/test_reliability.py).
FUZZ_SEED = 0
FUZZ_MODELS = 2000
FUZZ_JOBS = 2

_TESTS = os.path.dirname(os.path.abspath(__file__))


def _failure_report(summary: dict[str, Any]) -> str:
    seed, counts = summary["seed"], summary["counts"]
    outcomes = ", ".join(f"{o} {n}" for o, n in counts.items() if n)
    lines = [f"{len(summary['failures'])} of {summary['models']} fuzz models of seed {seed} failed "
             f"({outcomes}; {summary['wall_seconds']} s):"]
    for f in summary["failures"]:
        lines.append(f"  model {f['model']}: {f['outcome']} ({f['class']}): {f['detail']}")
        lines.append(f"    reproducer: {f['reproducer']}" + (" (minimized)" if f["minimized"] else ""))
        lines.append(f"    again: python tests/fuzz/fuzzer.py --seed {seed} --start {f['model']} "
                     "--models 1 --out build/fuzz")
    return "\n".join(lines)


def test_fuzz_short_run(tmp_path: Any) -> None:
    """FUZZ_MODELS models of FUZZ_SEED: none crashes, differs from eager, writes an input, hangs
    or raises an error that is not a poptorch.Error."""
    summary = run_fuzz(FUZZ_MODELS, FUZZ_SEED, FUZZ_JOBS, str(tmp_path), minimize_limit=1)
    counts = summary["counts"]
    assert sum(counts.values()) == FUZZ_MODELS, counts
    failed = {o: counts[o] for o in FAILURES if counts[o]}
    assert not failed, _failure_report(summary)


_GENERATE = """
import hashlib, json, sys
sys.path.insert(0, {tests!r})
from fuzz.builder import generate
print(json.dumps([hashlib.sha256(generate({seed}, i).source.encode()).hexdigest() for i in range({n})]))
"""


@pytest.mark.filterwarnings("ignore")
def test_generator_is_deterministic() -> None:
    """Model k of seed s has the same source every time it is made, in this process and in
    another one with another hash seed (no dependence on set or dict order of str hashes)."""
    n = 30
    first = [generate(FUZZ_SEED, i).source for i in range(n)]
    assert [generate(FUZZ_SEED, i).source for i in range(n)] == first
    assert len(set(first)) == n  # the index selects the model
    assert generate(FUZZ_SEED + 1, 0).source != first[0]  # and so does the seed
    code = _GENERATE.format(tests=_TESTS, seed=FUZZ_SEED, n=n)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == [hashlib.sha256(s.encode()).hexdigest() for s in first]


def test_float64_second_opinion() -> None:
    """A difference from eager is excused (``eager_inexact``) only where the compiled result is
    as close to the float64 result as eager's is, never where eager is exact."""
    import torch
    from fuzz.checks import _no_worse

    exact = torch.tensor([1.0, 2.0, float("inf"), -3.0], dtype=torch.float64)
    eager = torch.tensor([1.0, 2.0, float("nan"), -3.0])
    assert _no_worse(torch.tensor([1.0, 2.0, float("inf"), -3.0]), eager, exact)
    assert not _no_worse(torch.tensor([1.0, 2.5, float("inf"), -3.0]), eager, exact)
    assert not _no_worse(torch.tensor([1.0, 2.0, float("nan"), float("nan")]), eager, exact)
    # An argmax of near-ties: eager is off by up to 3 from float64; so may the compiled be.
    assert _no_worse(torch.tensor([0, 2]), torch.tensor([3, 0]), torch.tensor([0, 0]))
    assert not _no_worse(torch.tensor([0, 7]), torch.tensor([3, 0]), torch.tensor([0, 0]))
    assert not _no_worse([torch.zeros(2)], [torch.zeros(3)], [torch.zeros(3, dtype=torch.float64)])


def test_overlapping_write_is_undefined_only_where_views_differ() -> None:
    """``eager_undefined`` excuses a difference only where eager's in-place op reads, through
    another view, memory it writes (whose result PyTorch leaves undefined); an op that reads
    the very tensor it writes, or a disjoint part of its memory, is defined."""
    import torch
    from fuzz.checks import _eager_overlapping_write

    class Model(torch.nn.Module):
        def __init__(self, body: Callable[[torch.Tensor], None]) -> None:
            super().__init__()
            self.body = body

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x.clone()
            self.body(y)
            return y

    def inputs() -> list[torch.Tensor]:
        return [torch.randn(5, 5)]

    assert "sub_" in _eager_overlapping_write(Model(lambda y: y.sub_(y.select(1, -3))), inputs)
    assert _eager_overlapping_write(Model(lambda y: y.mul_(y)), inputs) == ""
    assert _eager_overlapping_write(Model(lambda y: y[:2].add_(y[3:])), inputs) == ""
    assert "mul_" in _eager_overlapping_write(Model(lambda y: y[1:].mul_(y[:-1, :1])), inputs)
    # eager refuses the overlaps it can see: not undefined, an error
    assert _eager_overlapping_write(Model(lambda y: y[1:].copy_(y[:-1])), inputs) == ""
