"""Minimization: ``minimize`` looks for smaller models with the same failure class as a failing one
(unused inputs pruned, outputs dropped, statements dropped or cut into inputs, layouts simplified,
sizes shrunk); it is a task coroutine whose candidate models the worker pool runs.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator
from typing import Any

from .spec import InputDef, ModelSpec, OutputSpec, Result, failure_class
from .workers import Request

MINIMIZE_BUDGET = 60  # candidate models per minimized failure
MINIMIZE_SECONDS = 120.0  # and time: a crashing candidate costs a worker restart (seconds)


def _shrunk(spec: ModelSpec, mapping: dict[int, int]) -> ModelSpec:
    def remap(log: list[Any], tags: list[str]) -> list[Any]:
        return [mapping.get(v, v) if t == "size" else v for v, t in zip(log, tags, strict=True)]

    return dataclasses.replace(
        spec, prelude=remap(spec.prelude, spec.prelude_tags),
        stmts=[dataclasses.replace(st, log=remap(st.log, st.tags)) for st in spec.stmts],
        cuts=[dataclasses.replace(cut, shape=tuple(mapping.get(s, s) for s in cut.shape))
              for cut in spec.cuts])


def _sizes(spec: ModelSpec) -> list[int]:
    values = {v for v, t in zip(spec.prelude, spec.prelude_tags, strict=True) if t == "size"}
    for st in spec.stmts:
        values |= {v for v, t in zip(st.log, st.tags, strict=True) if t == "size"}
    for cut in spec.cuts:
        values |= set(cut.shape)
    return sorted((v for v in values if isinstance(v, int) and v >= 2), reverse=True)


def minimize(first: Result, budget: int = MINIMIZE_BUDGET, seconds: float = MINIMIZE_SECONDS
             ) -> Generator[Request, Result, Result]:
    """Smaller models with the same failure class as ``first``; returns the smallest found."""
    assert first.program is not None
    cls = failure_class(first.outcome, first.detail)
    best = first
    tries = 0
    deadline = time.monotonic() + seconds

    def attempt(spec: ModelSpec | None) -> Generator[Request, Result, bool]:
        nonlocal best, tries
        if spec is None or tries >= budget or time.monotonic() > deadline:
            return False
        tries += 1
        result = yield ("spec", spec, True)
        if result.program is None or failure_class(result.outcome, result.detail) != cls:
            return False
        best = result
        return True

    def spec() -> ModelSpec:
        assert best.program is not None
        return best.program.spec

    yield from attempt(spec())  # unused inputs pruned
    i = 0
    while i < len(spec().outputs.names) and len(spec().outputs.names) > 1:
        names = spec().outputs.names
        if not (yield from attempt(dataclasses.replace(spec(), outputs=OutputSpec(
                names[:i] + names[i + 1:], spec().outputs.kind)))):
            i += 1
    for _ in range(2):
        changed = False
        for i in reversed(range(len(spec().stmts))):
            if i >= len(spec().stmts):
                continue
            s = spec()
            dropped = dataclasses.replace(s, stmts=s.stmts[:i] + s.stmts[i + 1:])
            if (yield from attempt(dropped)):
                changed = True
                continue
            assert best.program is not None
            meta = best.program.meta
            cut = [InputDef(n, *meta[n]) for n in s.stmts[i].names if n in meta]
            if cut and (yield from attempt(dataclasses.replace(dropped, cuts=s.cuts + cut))):
                changed = True
        if not changed:
            break
    s = spec()
    for j, (value, tag) in enumerate(zip(s.prelude, s.prelude_tags, strict=True)):
        simple = {"layout": "contiguous", "values": "randn"}.get(tag)
        if simple is not None and value != simple:
            prelude = list(spec().prelude)
            if j < len(prelude):
                prelude[j] = simple
                yield from attempt(dataclasses.replace(spec(), prelude=prelude))
    for size in _sizes(spec()):
        for smaller in sorted({1, 2, size // 2}):
            if smaller < size and (yield from attempt(_shrunk(spec(), {size: smaller}))):
                break
    return best
