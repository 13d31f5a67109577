"""Shared helpers for the poptorch test suite.

Every numeric check compares the compiled program with eager PyTorch on the
CPU (``torch.testing.assert_close``); ``MAX_ERRORS`` records the largest
absolute error per model so that the session can report it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.utils._pytree as pytree

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "python")))

import poptorch  # noqa: E402

MAX_ERRORS: dict[str, float] = {}


def max_abs_error(actual: Any, expected: Any) -> float:
    err = 0.0
    leaves = zip(pytree.tree_leaves(actual), pytree.tree_leaves(expected), strict=True)
    for a, e in leaves:
        if isinstance(e, torch.Tensor) and e.numel() and e.is_floating_point():
            err = max(err, (a.double() - e.double()).abs().max().item())
    return err


def assert_matches(actual: Any, expected: Any, *, name: str | None = None,
                   atol: float | None = None, rtol: float | None = None) -> float:
    """assert_close leaf by leaf (same structure, dtype and shape); records the error."""
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    assert a_spec == e_spec, f"output structure {a_spec} != eager {e_spec}"
    for a, e in zip(a_leaves, e_leaves, strict=True):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor) and a.device.type == "cpu"
            kw = {} if atol is None else {"atol": atol, "rtol": rtol if rtol is not None else 0}
            torch.testing.assert_close(a, e.detach(), **kw)
        else:
            assert a == e
    err = max_abs_error(actual, expected)
    if name is not None:
        MAX_ERRORS[name] = max(MAX_ERRORS.get(name, 0.0), err)
    return err


class Fn(torch.nn.Module):
    """A function as a module, for poptorch.inferenceModel."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


def compiled(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Traces, compiles and runs ``fn`` once through ``trace().compile()``."""
    return poptorch.trace(fn, *args, **kwargs).compile()(*args, **kwargs)


def check(fn: Callable[..., Any], *args: Any, atol: float | None = None,
          rtol: float | None = None, **kwargs: Any) -> None:
    """Compiled ``fn(*args)`` equals eager ``fn(*args)``."""
    with torch.no_grad():
        expected = fn(*args, **kwargs)
    assert_matches(compiled(fn, *args, **kwargs), expected, atol=atol, rtol=rtol)


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


class _InputSnapshot:
    """What a caller can observe of its input tensors: storage, layout and bytes."""

    def __init__(self, tensors: list[torch.Tensor]) -> None:
        self.tensors = tensors
        self.before = [(t.untyped_storage().data_ptr(), t.shape, t.stride(), t.storage_offset(),
                        _bytes(t)) for t in tensors]

    def check(self, written: set[int], what: str) -> None:
        for i, (t, (ptr, shape, stride, offset, data)) in enumerate(
                zip(self.tensors, self.before, strict=True)):
            if i in written:
                continue  # the model updates this input in place, as eager does
            assert (t.untyped_storage().data_ptr(), t.shape, t.stride(),
                    t.storage_offset()) == (ptr, shape, stride, offset), \
                f"{what} changed the storage or layout of input {i}"
            assert torch.equal(_bytes(t), data), f"{what} wrote into input {i}"


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().resolve_conj().resolve_neg().contiguous().flatten().view(torch.uint8).clone()


def _written_inputs(exe: Any) -> set[int]:
    n = exe.graph.num_inputs
    return {a for a in exe.graph.buffer_update_args if a < n}


_fast_call = poptorch.Executable.fast_call
_run_unchecked = poptorch.Executable.run_unchecked


def _guarded_fast_call(self: Any, args: tuple[Any, ...]) -> Any:
    snapshot = _InputSnapshot([a for a in args if isinstance(a, torch.Tensor)])
    out = _fast_call(self, args)
    snapshot.check(_written_inputs(self), f"a compiled call of {self.graph.name}")
    return out


def _guarded_run_unchecked(self: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    leaves = pytree.tree_leaves((tuple(args), dict(kwargs)))
    snapshot = _InputSnapshot([x for x in leaves if isinstance(x, torch.Tensor)])
    out = _run_unchecked(self, args, kwargs)
    snapshot.check(_written_inputs(self), f"a compiled call of {self.graph.name}")
    return out


# Every compiled call the suite makes checks that the caller's input tensors keep
# their storage, layout and values, unless the model itself writes the input in
# place (eager semantics, written back by the runtime).
poptorch.Executable.fast_call = _guarded_fast_call
poptorch.Executable.run_unchecked = _guarded_run_unchecked


# Every pass's result is verified in the whole suite, not only each stage's (the
# compiler's default; see verifyEachPass in csrc/bridge/Program.cpp).
os.environ.setdefault("POPTORCH_VERIFY_EACH", "1")


@pytest.fixture(autouse=True, scope="session")
def _check_meta_kernels() -> Any:
    """Every result of the tracer's C++ shape functions is checked against torch's
    Meta kernel (csrc/MetaKernels.h) in the whole suite; POPTORCH_CHECK_META=0 turns
    it off."""
    on = os.environ.get("POPTORCH_CHECK_META", "1") != "0"
    was = poptorch._C.check_meta_kernels(on)
    yield
    poptorch._C.check_meta_kernels(was)


# outcome counts of the dtype-parametrized tests, per dtype (see opsuite.py)
_DTYPE_OF: dict[str, str] = {}
DTYPE_OUTCOMES: dict[str, dict[str, int]] = {}


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if isinstance(params.get("dtype"), torch.dtype):
            _DTYPE_OF[item.nodeid] = str(params["dtype"]).removeprefix("torch.")


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call" and report.passed and not hasattr(report, "wasxfail"):
        _record_coverage(report.nodeid)
        _PASSED_TESTS.add(report.nodeid.split("[")[0])
    elif report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED_TESTS.add(report.nodeid.split("[")[0])
    dtype = _DTYPE_OF.get(report.nodeid)
    if dtype is None or (report.when != "call" and not (report.when == "setup" and report.skipped)):
        return
    outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
    counts = DTYPE_OUTCOMES.setdefault(dtype, {})
    counts[outcome] = counts.get(outcome, 0) + 1


# Op coverage: which aten ops each passing test captured, and with which dtypes.
# With POPTORCH_COVERAGE=<file> the session writes it as JSON; `optable/generate.py
# --coverage <file>` checks the claims of optable/coverage.json against it (make test)
# or rewrites them (make coverage). docs/ops.md shows them as the dtypes/tests columns.
_TRACERS: list[Any] = []
COVERAGE: dict[str, dict[str, set[str]]] = {}
# Tests that this host skips (every case of them: a test of AVX512-BF16 code on a host
# without it) are written as "@skipped": their claims in coverage.json cannot be seen here.
_PASSED_TESTS: set[str] = set()
_SKIPPED_TESTS: set[str] = set()
_TYPE_NAMES = {"Float": "float32", "Half": "float16", "BFloat16": "bfloat16",
               "Double": "float64", "Char": "int8", "Short": "int16", "Int": "int32",
               "Long": "int64", "Byte": "uint8", "Bool": "bool"}


def _data_dtype(record: dict[str, Any]) -> str | None:
    """The dtype an op was exercised with: its result's, or its first input's when the
    result type is fixed by the op (predicates, indices, counts)."""
    ins = [t.split("[")[0] for t in record["input_types"] if t != "none"]
    outs = [t.split("[")[0] for t in record["output_types"] if t != "none"]
    dtype = outs[0] if outs else ins[0] if ins else None
    if ins and dtype in ("Bool", "Long") and ins[0] != dtype:
        dtype = ins[0]
    return _TYPE_NAMES.get(dtype or "")


@pytest.fixture(autouse=True)
def _record_ops() -> Any:
    _TRACERS.clear()
    yield


def _tracer_created(tracer: Any) -> None:
    _TRACERS.append(tracer)


poptorch._debug._tracer_hooks.append(_tracer_created)


def _record_coverage(nodeid: str) -> None:
    test = nodeid.split("[")[0]
    for tracer in _TRACERS:
        for r in tracer.op_log:
            if r["status"] not in ("captured", "random", "host"):
                continue
            entry = COVERAGE.setdefault(r["name"], {"tests": set(), "dtypes": set(),
                                                    "status": set()})
            entry["tests"].add(test)
            entry["status"].add(r["status"])
            dtype = _data_dtype(r)
            if dtype:
                entry["dtypes"].add(dtype)
    _TRACERS.clear()


def pytest_sessionfinish(session: Any) -> None:
    path = os.environ.get("POPTORCH_COVERAGE")
    if path and COVERAGE:
        data = {op: {k: sorted(v) for k, v in e.items()} for op, e in sorted(COVERAGE.items())}
        data["@skipped"] = {"tests": sorted(_SKIPPED_TESTS - _PASSED_TESTS), "dtypes": [],
                            "status": ["skipped"]}
        with open(path, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if DTYPE_OUTCOMES:
        terminalreporter.section("per-dtype outcomes of the op suites")
        for dtype, counts in sorted(DTYPE_OUTCOMES.items()):
            line = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            terminalreporter.write_line(f"{dtype:10s} {line}")
    if MAX_ERRORS:
        terminalreporter.section("max abs error vs eager PyTorch")
        for name, err in sorted(MAX_ERRORS.items()):
            terminalreporter.write_line(f"{name:60s} {err:.3e}")
