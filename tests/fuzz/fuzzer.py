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
``eager_error`` (skipped) and ``fuzzer_error`` (a bug of this file).

Every failure gets a standalone reproducer ``.py`` in the output folder; the first
``minimize_limit`` failures of each class are minimized first (statements dropped or cut into
inputs, outputs dropped, layouts simplified, sizes shrunk, while the failure class persists).
The first model of each kind of compile error gets a reproducer (not minimized) in
``compile_errors/``. ``summary.json`` holds the counts, the generators covered, the failures
and the compile errors, with their reproducers.

CLI::

    python tests/fuzz/fuzzer.py --models N --seed S --jobs J --out DIR [--no-minimize] [--timeout SEC]

The exit status is 1 when any model ends in one of ``FAILURES``.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import inspect
import itertools
import json
import linecache
import math
import multiprocessing
import os
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

# Nothing heavy is imported at module level: the parent process never needs torch, and a
# spawned worker sets its environment before it imports torch and poptorch.

T = TypeVar("T")

# Outcomes that make the CLI exit non-zero and the test fail. untyped_error is among them
# because every error poptorch raises must derive from poptorch.Error.
FAILURES = ("crash", "mismatch", "input_written", "timeout", "untyped_error")
OUTCOMES = ("ok", *FAILURES, "compile_error", "both_raise", "eager_error", "fuzzer_error")

DEFAULT_TIMEOUT_S = 60.0
STARTUP_TIMEOUT_S = 180.0
MINIMIZE_BUDGET = 60  # candidate models per minimized failure
MINIMIZE_SECONDS = 120.0  # and time: a crashing candidate costs a worker restart (seconds)
# A worker whose peak RSS passes this is replaced: compiled programs and caches only grow.
WORKER_RSS_LIMIT_MB = 3072

# Sizes of input dimensions: edge cases (0, 1) and vector tails (9, 17) on purpose. Every value
# that the size shrinker maps to (1, 2, s // 2) is in the tuple, so a shrunk choice replays.
SIZES = (0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6, 6, 7, 8, 8, 9, 16, 17, 32, 33)
INPUT_DTYPES = ("float32",) * 11 + ("float64", "float16", "float16", "bfloat16", "bfloat16",
                                    "int64", "int64", "int32", "bool")
FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
ALL_DTYPES = (*FLOAT_DTYPES, "int64", "int32", "bool")
# Largest magnitude a statement may produce: beyond it, rounding differences between two correct
# implementations stop being small (float16 overflow, huge products cast to int).
LIMITS = {"float64": 1e30, "float32": 1e12, "float16": 1e4, "bfloat16": 1e4,
          "int64": 2.0 ** 50, "int32": 2.0 ** 30, "bool": 1.0}
MAX_NUMEL = 65536


def category(dtype: str) -> str:
    """'f' for floating-point, 'i' for integer, 'b' for bool dtypes."""
    return "f" if dtype in FLOAT_DTYPES else "b" if dtype == "bool" else "i"


# ---------------------------------------------------------------------------
# Recorded random choices


_MISSING = object()


class Chooser:
    """Makes one statement's random choices and records them, so that the statement can be made
    again from its record after the shapes or the statements before it changed (minimization):
    a recorded choice that is still allowed is kept, any other is drawn afresh."""

    def __init__(self, rng: random.Random, replay: Sequence[Any] = (), tags: Sequence[str] = ()) -> None:
        self.rng = rng
        self._replay = list(replay)
        self.log: list[Any] = []
        self.tags: list[str] = []

    def _old(self) -> Any:
        return self._replay.pop(0) if self._replay else _MISSING

    def _keep(self, value: T, tag: str) -> T:
        self.log.append(value)
        self.tags.append(tag)
        return value

    def choice(self, options: Sequence[T], tag: str = "") -> T:
        old = self._old()
        for option in options:
            if type(option) is type(old) and option == old:
                return self._keep(option, tag)
        return self._keep(self.rng.choice(list(options)), tag)

    def int(self, lo: int, hi: int, tag: str = "") -> int:
        old = self._old()
        if type(old) is int and lo <= old <= hi:
            return self._keep(old, tag)
        return self._keep(self.rng.randint(lo, hi), tag)

    def chance(self, p: float) -> bool:
        old = self._old()
        if type(old) is bool:
            return self._keep(old, "")
        return self._keep(self.rng.random() < p, "")

    def size(self) -> int:
        return self.choice(SIZES, tag="size")

    def count(self, hi: int) -> int:
        """A count in [0, hi]; 0 (an empty index, a zero-size piece) one time in 4*hi+1."""
        return self.choice((0,) + tuple(range(1, hi + 1)) * 4)

    def dim(self, ndim: int) -> int:
        """A dimension of a tensor of rank ``ndim``, negative half of the time (0-d: 0 or -1)."""
        n = max(ndim, 1)
        return self.int(-n, n - 1)

    def sample(self, make: Callable[[], T], valid: Callable[[Any], bool]) -> T:
        old = self._old()
        if old is not _MISSING and valid(old):
            return self._keep(old, "")
        return self._keep(make(), "")


# ---------------------------------------------------------------------------
# Model specifications (picklable, what the minimizer edits) and programs (their source)


@dataclass
class InputDef:
    name: str
    shape: tuple[int, ...]
    dtype: str
    layout: str = "contiguous"  # contiguous | transposed | stepped | expanded | alias
    dim: int = 0  # stepped: the dimension sliced with step 2
    base: tuple[int, ...] = ()  # expanded: the shape that is expanded
    alias: str = ""  # alias: the input passed again
    values: str = "randn"  # randn | specials (nan and infinities mixed in)


@dataclass
class StmtSpec:
    gen: str
    log: list[Any]
    tags: list[str]
    names: list[str]


@dataclass
class OutputSpec:
    names: list[str]
    kind: str  # single | tuple | list | dict | nested


@dataclass
class ModelSpec:
    seed: int
    index: int
    data_seed: int
    prelude: list[Any]
    prelude_tags: list[str]
    stmts: list[StmtSpec]
    outputs: OutputSpec
    cuts: list[InputDef] = field(default_factory=list)  # inputs that replace minimized-away statements


@dataclass
class Program:
    spec: ModelSpec
    source: str  # the module class and make_inputs(), exactly as the reproducer holds them
    gens: list[str]
    meta: dict[str, tuple[tuple[int, ...], str]]  # shape and dtype of each value statements define

    @property
    def name(self) -> str:
        return f"s{self.spec.seed}-m{self.spec.index}"


@dataclass
class Result:
    outcome: str
    detail: str
    program: Program | None = None
    seconds: float = 0.0


def failure_class(outcome: str, detail: str) -> str:
    """What must stay the same while a failure is minimized: the outcome and, for a mismatch,
    what differs (``mismatch/values``, ``mismatch/buffer-dtype``), for an untyped error, its type."""
    if outcome == "mismatch":
        parts = detail.split(": ")
        kind = parts[1] if len(parts) > 1 else "?"
        return f"mismatch/{'buffer-' if detail.startswith('buffer') else ''}{kind}"
    if outcome == "untyped_error":
        return f"untyped_error/{detail.split(':')[0]}"
    return outcome


# ---------------------------------------------------------------------------
# Building a model: generators emit statements, the builder runs them eagerly


@dataclass
class Var:
    name: str
    shape: tuple[int, ...]
    dtype: str
    kind: str  # input | param | buffer | value
    mutable: bool  # may be written in place: not an input's or parameter's memory, no shared elements
    contiguous: bool
    finite: bool
    amax: float  # the largest finite magnitude

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def cat(self) -> str:
        return category(self.dtype)


@dataclass
class _Stmt:
    gen: str
    log: list[Any]
    tags: list[str]
    names: list[str]
    init: list[str]
    lines: list[str]
    defines: list[tuple[str, str]]  # (expression naming it, kind)
    reads: list[str]
    mutates: list[str]
    nonfinite: bool  # may turn finite values into nan/inf (log, division, ...)


class Rejected(Exception):
    """A generator's statement that eager rejects or that breaks a rule of the fuzzer."""


class Builder:
    """The model being built: its inputs, accepted statements and, for each name, the value it
    has after the statements so far (``env``, eager execution on the real inputs)."""

    def __init__(self, seed: int, index: int, data_seed: int) -> None:
        import torch

        self.torch = torch
        self.seed, self.index, self.data_seed = seed, index, data_seed
        self.inputs: list[InputDef] = []
        self.stmts: list[_Stmt] = []
        self.vars: dict[str, Var] = {}
        self.consumed: set[str] = set()
        self.used: set[str] = set()
        self.counter = 0
        self.env: dict[str, Any] = {}
        self._pending: _Stmt | None = None
        self._replay_names: list[str] = []
        self._snapshots: list[tuple[Any, Any]] = []
        self.rejections: collections.Counter[tuple[str, str]] = collections.Counter()

    # --- the eager state

    def start(self) -> None:
        """Makes the inputs and runs the accepted statements again, from scratch."""
        torch = self.torch
        module = torch.nn.Module()
        env: dict[str, Any] = {"torch": torch, "F": torch.nn.functional, "self": module}
        exec(f"g = torch.Generator().manual_seed({self.data_seed})", env)
        for inp in self.inputs:
            exec("\n".join(_input_lines(inp)), env)
        self.env = env
        self.used |= {inp.name for inp in self.inputs}
        with torch.no_grad():
            for st in self.stmts:
                exec("\n".join(st.init + st.lines), env)
        self._snapshots = [(env[inp.name], _storage_bytes(env[inp.name]).clone()) for inp in self.inputs]
        self._refresh()

    def eval(self, expr: str) -> Any:
        with self.torch.no_grad():
            return eval(expr, self.env)

    def shape_of(self, expr: str) -> tuple[int, ...] | None:
        try:
            value = self.eval(expr)
        except Exception:
            return None
        return tuple(value.shape) if isinstance(value, self.torch.Tensor) else None

    def _describe(self, name: str, kind: str, value: Any, immutable: set[int]) -> Var:
        torch = self.torch
        if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
            raise Rejected(f"{name} is not a strided tensor")
        value = value.detach()
        dtype = str(value.dtype).removeprefix("torch.")
        if dtype not in ALL_DTYPES:
            raise Rejected(f"{name} has dtype {dtype}")
        storage = value.untyped_storage()
        shared = any(s == 0 and n > 1 for s, n in zip(value.stride(), value.shape, strict=True))
        mutable = kind in ("value", "buffer") and not shared and \
            (storage.nbytes() == 0 or storage.data_ptr() not in immutable)
        finite, amax = True, 0.0
        if value.numel():
            if value.is_floating_point():
                ok = torch.isfinite(value)
                finite = bool(ok.all())
                if ok.any():
                    amax = float(value[ok].abs().max())
            else:
                amax = float(value.abs().max()) if dtype != "bool" else 1.0
        return Var(name, tuple(value.shape), dtype, kind, mutable, value.is_contiguous(), finite, amax)

    def _refresh(self) -> None:
        """Describes every name again: an in-place statement changes the values of its aliases."""
        env = self.env
        immutable: set[int] = set()
        named: list[tuple[str, str]] = [(inp.name, "input") for inp in self.inputs]
        for st in self.stmts:
            named += st.defines
        values: dict[str, Var] = {}
        for name, kind in named:
            value = eval(name, env)
            if kind in ("input", "param"):
                immutable.add(value.untyped_storage().data_ptr())
        for name, kind in named:
            values[name] = self._describe(name, kind, eval(name, env), immutable)
        self.vars = values

    def _root(self, name: str) -> str | None:
        """The first value sharing ``name``'s memory (what an in-place write to ``name`` changes)."""
        ptr = eval(name, self.env).untyped_storage().data_ptr()
        for other, var in self.vars.items():
            if var.kind == "value" and eval(other, self.env).untyped_storage().data_ptr() == ptr:
                return other
        return None

    # --- what generators call

    def pick(self, c: Chooser, pred: Callable[[Var], bool] | None = None, *, mutable: bool = False,
             kinds: tuple[str, ...] = ("input", "value", "buffer", "param")) -> Var | None:
        """One of the values so far (recent ones more often) that ``pred`` accepts."""
        names = [v.name for v in self.vars.values()
                 if v.kind in kinds and (v.mutable or not mutable) and (pred is None or pred(v))]
        if not names:
            return None
        name = c.choice(names + names[-2:] * 2)
        assert self._pending is not None
        self._pending.reads.append(name)
        return self.vars[name]

    def name(self, prefix: str = "v") -> str:
        """A fresh name; when a statement is made again, the name it had."""
        assert self._pending is not None
        while self._replay_names:
            old = self._replay_names.pop(0)
            if re.fullmatch(prefix + r"\d+", old) and old not in self.used:
                self.used.add(old)
                self._pending.names.append(old)
                return old
        while f"{prefix}{self.counter}" in self.used:
            self.counter += 1
        new = f"{prefix}{self.counter}"
        self.used.add(new)
        self._pending.names.append(new)
        return new

    def emit(self, *lines: str, defines: Sequence[str] = (), mutates: Sequence[str] = (),
             nonfinite: bool = False) -> bool:
        p = self._pending
        assert p is not None
        p.lines += lines
        p.defines += [(name, "value") for name in defines]
        p.mutates += mutates
        p.nonfinite |= nonfinite
        return True

    def param(self, c: Chooser, shape: tuple[int, ...], dtype: str) -> str:
        """A new parameter of the module (seeded values)."""
        assert self._pending is not None
        name = self.name("w")
        seed = c.int(0, 9999)
        cast = "" if dtype == "float32" else f".to(torch.{dtype})"
        self._pending.init.append(
            f"self.{name} = torch.nn.Parameter(torch.randn({shape!r}, "
            f"generator=torch.Generator().manual_seed({seed})){cast})")
        self._pending.defines.append((f"self.{name}", "param"))
        return f"self.{name}"

    def buffer(self, init: str, persistent: bool = True) -> str:
        assert self._pending is not None
        name = self.name("b")
        extra = "" if persistent else ", persistent=False"
        self._pending.init.append(f'self.register_buffer("{name}", {init}{extra})')
        self._pending.defines.append((f"self.{name}", "buffer"))
        return f"self.{name}"

    def tensor_of(self, c: Chooser, shape: tuple[int, ...], dtype: str) -> str:
        """Code for a tensor of exactly this shape and dtype: a value so far, a parameter or a
        constant."""
        same = [v.name for v in self.vars.values() if v.shape == shape and v.dtype == dtype]
        how = c.choice(("var",) * 3 * bool(same) + ("param",) * (category(dtype) == "f") + ("const",))
        if how == "var":
            name = c.choice(same)
            assert self._pending is not None
            self._pending.reads.append(name)
            return name
        if how == "param":
            return self.param(c, shape, dtype)
        n = math.prod(shape)
        if dtype == "bool":
            return f"(torch.arange({n}).reshape({shape!r}) % 3 == 0)"
        scale = " * 0.25 - 1" if category(dtype) == "f" else " - 2"
        return f"(torch.arange({n}, dtype=torch.{dtype}).reshape({shape!r}){scale})"

    def scalar(self, c: Chooser, cat: str) -> str:
        if cat == "f":
            return c.choice(("2.0", "-1.5", "0.5", "3", "1e-3", "0.0", "-2", "True"))
        if cat == "i":
            return c.choice(("2", "-3", "1", "0", "7", "True"))
        return c.choice(("True", "False", "1"))

    # --- statements

    def add(self, gen: str, c: Chooser, names: Sequence[str] = ()) -> bool:
        """Runs generator ``gen`` with ``c``; keeps its statement if eager accepts it."""
        self._pending = _Stmt(gen, [], [], [], [], [], [], [], [], False)
        self._replay_names = list(names)
        used = set(self.used)
        try:
            ok = GENERATORS[gen](self, c)
            st = self._pending
            st.log, st.tags = c.log, c.tags
            if ok and (st.lines or st.init):
                self._run(st)
                self.stmts.append(st)
                self.consumed |= set(st.reads) - set(st.mutates)
                for name in st.mutates:
                    self.consumed.discard(name)
                    root = self._root(name)
                    if root is not None:
                        self.consumed.discard(root)
                return True
        except Exception as err:
            # eager rejected the statement (Rejected) or the generator failed: the eager state
            # may have been touched, so it is made again
            self.rejections[(gen, type(err).__name__)] += 1
            self.start()
        finally:
            self._pending = None
        self.used = used
        return False

    def _run(self, st: _Stmt) -> None:
        torch = self.torch
        finite_in = all(self.vars[r].finite for r in st.reads if r in self.vars)
        try:
            with torch.no_grad():
                exec("\n".join(st.init + st.lines), self.env)
        except Exception as err:
            raise Rejected(f"eager: {err}") from err
        for value, before in self._snapshots:
            if not torch.equal(_storage_bytes(value), before):
                raise Rejected("an input was written")
        self.stmts.append(st)
        try:
            self._refresh()
        finally:
            self.stmts.pop()
        for name in [n for n, _ in st.defines] + st.mutates:
            var = self.vars[name]
            if finite_in and not var.finite and not st.nonfinite:
                raise Rejected("nonfinite result")
            if var.amax > LIMITS[var.dtype] or var.numel > MAX_NUMEL:
                raise Rejected("too large")

    # --- the program

    def program(self, outputs: OutputSpec, prelude: tuple[list[Any], list[str]], cuts: list[InputDef],
                prune: bool) -> Program:
        outputs = OutputSpec([n for n in outputs.names if n in self.vars], outputs.kind)
        if not outputs.names:
            values = [n for n, v in self.vars.items() if v.kind == "value"]
            outputs.names = [values[-1] if values else self.inputs[0].name]
        if len(outputs.names) > 1 and outputs.kind == "single":
            outputs.kind = "tuple"
        lines = [line for st in self.stmts for line in st.lines]
        ret = _return_expr(outputs)
        forward_text = "\n".join([*lines, ret])
        args = [inp.name for inp in self.inputs
                if not prune or re.search(rf"\b{inp.name}\b", forward_text)]
        out: list[str] = ["import torch", "import torch.nn.functional as F", "", "",
                          "class FuzzModel(torch.nn.Module):", "    def __init__(self):",
                          "        super().__init__()"]
        out += [f"        {line}" for st in self.stmts for line in st.init]
        out += ["", f"    def forward(self{''.join(', ' + a for a in args)}):"]
        out += [f"        {line}" for line in lines]
        out += [f"        {ret}", "", "", "def make_inputs():",
                f"    g = torch.Generator().manual_seed({self.data_seed})"]
        out += [f"    {line}" for inp in self.inputs for line in _input_lines(inp)]
        out += [f"    return [{', '.join(args)}]", ""]
        spec = ModelSpec(self.seed, self.index, self.data_seed, prelude[0], prelude[1],
                         [StmtSpec(st.gen, st.log, st.tags, st.names) for st in self.stmts],
                         outputs, cuts)
        meta = {n: (v.shape, v.dtype) for n, v in self.vars.items() if v.kind == "value"}
        return Program(spec, "\n".join(out), sorted({st.gen for st in self.stmts}), meta)


def _return_expr(outputs: OutputSpec) -> str:
    names = outputs.names
    if outputs.kind == "single":
        return f"return {names[0]}"
    if outputs.kind == "list":
        return f"return [{', '.join(names)}]"
    if outputs.kind == "dict":
        return "return {" + ", ".join(f'"out{i}": {n}' for i, n in enumerate(names)) + "}"
    if outputs.kind == "nested":
        return f"return ({names[0]}, [{', '.join(names[1:])}])"
    return f"return ({', '.join(names)}{',' if len(names) == 1 else ''})"


def _storage_bytes(t: Any) -> Any:
    """The bytes of the tensor's whole storage (elements a view does not show included)."""
    import torch

    s = t.untyped_storage()
    return torch.empty(0, dtype=torch.uint8).set_(s, 0, (s.nbytes(),), (1,))


def _random_tensor(shape: tuple[int, ...], dtype: str) -> str:
    if dtype == "bool":
        return f"(torch.rand({shape!r}, generator=g) < 0.5)"
    if category(dtype) == "i":
        return f"torch.randint(-8, 9, {shape!r}, generator=g, dtype=torch.{dtype})"
    cast = "" if dtype == "float32" else f".to(torch.{dtype})"
    return f"torch.randn({shape!r}, generator=g){cast}"


def _input_lines(inp: InputDef) -> list[str]:
    """The lines of ``make_inputs()`` that make one input (``g`` is its seeded generator)."""
    n, shape = inp.name, inp.shape
    if inp.layout == "alias":
        return [f"{n} = {inp.alias}  # the same tensor passed twice"]
    base, suffix = shape, ""
    if inp.layout == "transposed":
        base, suffix = (*shape[:-2], shape[-1], shape[-2]), ".transpose(-1, -2)"
    elif inp.layout == "stepped":
        b = list(shape)
        b[inp.dim] = 2 * shape[inp.dim] + 1
        base, suffix = tuple(b), "[" + ", ".join([":"] * inp.dim + ["1::2"]) + "]"
    elif inp.layout == "expanded":
        base, suffix = inp.base, f".expand({', '.join(map(str, shape))})"
    lines = [f"{n} = {_random_tensor(base, inp.dtype)}"]
    if inp.values == "specials":
        for value, p in (("nan", 0.1), ("inf", 0.1), ("-inf", 0.1)):
            lines.append(f"{n}[torch.rand({n}.shape, generator=g) < {p}] = float('{value}')")
    if suffix:
        lines.append(f"{n} = {n}{suffix}")
    return lines


def _random_shape(c: Chooser) -> tuple[int, ...]:
    rank = c.choice((0, 1, 1, 2, 2, 2, 3, 3, 4))
    shape = [c.size() for _ in range(rank)]
    while math.prod(shape) > 4096:
        i = shape.index(max(shape))
        shape[i] //= 2
    return tuple(shape)


def _gen_inputs(b: Builder, c: Chooser) -> None:
    """The model's inputs: related shapes (equal, broadcastable, matmul partners), mixed dtypes
    now and then, non-contiguous and expanded layouts, the same tensor twice."""
    count = c.choice((1, 1, 2, 2, 2, 3))
    dtype0 = c.choice(INPUT_DTYPES)
    shape0 = _random_shape(c)
    for j in range(count):
        name = f"x{j}"
        shape, dtype = shape0, dtype0
        if j:
            rel = c.choice(("same", "same", "broadcast", "matmul", "free", "alias", "scalar"))
            if rel == "alias":
                target = b.inputs[c.int(0, j - 1)]
                b.inputs.append(InputDef(name, target.shape, target.dtype, "alias",
                                         alias=target.alias or target.name))
                continue
            if rel == "broadcast":
                drop = c.int(0, len(shape0))
                shape = tuple(1 if c.chance(0.3) else s for s in shape0[drop:])
            elif rel == "matmul" and shape0:
                shape = (*shape0[:-2], shape0[-1], c.size())
            elif rel == "free":
                shape = _random_shape(c)
            elif rel == "scalar":
                shape = ()
            if c.chance(0.2):
                dtype = c.choice(INPUT_DTYPES)
        nd = len(shape)
        layouts = ("contiguous",) * 5 + ("transposed",) * (nd >= 2) + ("stepped", "expanded") * (nd >= 1)
        layout = c.choice(layouts, tag="layout")
        inp = InputDef(name, shape, dtype, layout)
        if layout == "stepped":
            inp.dim = c.int(0, nd - 1)
        elif layout == "expanded":
            lead = c.int(0, nd - 1)
            inp.base = tuple(1 if c.chance(0.5) else s for s in shape[lead:])
        if category(dtype) == "f":
            inp.values = c.choice(("randn",) * 19 + ("specials",), tag="values")
        b.inputs.append(inp)


# ---------------------------------------------------------------------------
# Generators: each picks operands among the values so far, makes its choices through the
# Chooser and emits statements; it returns False where it does not apply.


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    out = []
    for x, y in itertools.zip_longest(reversed(a), reversed(b), fillvalue=1):
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _index_literal(values: list[int], shape: tuple[int, ...]) -> str:
    def nest(flat: list[int], dims: tuple[int, ...]) -> Any:
        if not dims:
            return flat[0]
        step = math.prod(dims[1:])
        return [nest(flat[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]

    return f"torch.tensor({nest(values, shape)!r}, dtype=torch.int64)"


def _indices(c: Chooser, count: int, high: int, unique: bool = False) -> list[int]:
    """``count`` indices in [0, high), distinct if ``unique``."""
    def make() -> list[int]:
        if unique:
            return c.rng.sample(range(high), count)
        return [c.rng.randrange(high) for _ in range(count)]

    def valid(old: Any) -> bool:
        return (isinstance(old, list) and len(old) == count and all(0 <= i < high for i in old)
                and (not unique or len(set(old)) == count))

    if high <= 0 or (unique and count > high):
        return [] if count == 0 else [-1]  # eager rejects it
    return c.sample(make, valid)


def _fiber_indices(c: Chooser, shape: tuple[int, ...], d: int, high: int) -> list[int]:
    """Indices of ``shape`` in [0, high), distinct along dimension ``d`` (scatter without
    duplicate targets, whose result would depend on the order of the writes)."""
    d %= len(shape)

    def make() -> list[int]:
        flat = [0] * math.prod(shape)
        strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
        others = [range(s) for k, s in enumerate(shape) if k != d]
        for pos in itertools.product(*others):
            picks = c.rng.sample(range(high), shape[d])
            full = list(pos)
            for j, value in enumerate(picks):
                full.insert(d, j)
                flat[sum(i * s for i, s in zip(full, strides, strict=True))] = value
                full.pop(d)
        return flat

    def valid(old: Any) -> bool:
        return isinstance(old, list) and len(old) == math.prod(shape) and all(0 <= i < high for i in old)

    if shape[d] > high:
        return [-1] * math.prod(shape)
    return c.sample(make, valid)


def _index_expr(c: Chooser, shape: tuple[int, ...], newaxis: bool = True) -> str:
    """A basic-indexing expression for a tensor of ``shape``: ranges, steps, negative bounds,
    integers, ``None`` and ``...``."""
    nd = len(shape)
    if nd == 0:
        return c.choice(("...", "None") if newaxis else ("...",))
    count = c.int(1, nd)
    ellipsis = count < nd and c.chance(0.2)
    dims = list(range(nd - count, nd)) if ellipsis else list(range(count))
    items = ["..."] if ellipsis else []
    for d in dims:
        n = shape[d]
        kinds = ("full", "range", "range", "step", "neg") + ("int", "int") * (n > 0) + ("none",) * newaxis
        kind = c.choice(kinds)
        if kind == "int":
            items.append(str(c.int(-n, n - 1)))
        elif kind == "range":
            items.append(f"{c.int(-n - 1, n + 1)}:{c.int(-n - 1, n + 1)}")
        elif kind == "step":
            start = c.int(0, n)
            items.append(f"{start or ''}::{c.int(2, 3)}")
        elif kind == "neg":
            items.append(f"-{c.int(1, n + 1)}:")
        elif kind == "none":
            items += ["None", ":"]
        else:
            items.append(":")
    return ", ".join(items)


# (template, dtype categories, flags): d = may produce nan/inf from finite values
UNARY: dict[str, tuple[str, str]] = {
    "torch.neg({x})": ("fi", ""), "-{x}": ("fi", ""), "torch.abs({x})": ("fi", ""),
    "{x}.abs()": ("fi", ""), "torch.exp({x})": ("f", ""), "torch.log({x})": ("f", "d"),
    "torch.sqrt({x})": ("f", "d"), "torch.rsqrt({x})": ("f", "d"), "torch.sin({x})": ("f", ""),
    "{x}.cos()": ("f", ""), "torch.tanh({x})": ("f", ""), "torch.sigmoid({x})": ("f", ""),
    "torch.relu({x})": ("fi", ""), "F.gelu({x})": ("f", ""), "F.gelu({x}, approximate='tanh')": ("f", ""),
    "F.silu({x})": ("f", ""), "F.leaky_relu({x}, 0.1)": ("f", ""), "F.elu({x})": ("f", ""),
    "F.softplus({x})": ("f", ""), "F.hardtanh({x})": ("f", ""), "F.relu6({x})": ("f", ""),
    "F.hardsigmoid({x})": ("f", ""), "F.hardswish({x})": ("f", ""), "F.mish({x})": ("f", ""),
    "torch.floor({x})": ("f", ""), "torch.ceil({x})": ("f", ""), "torch.round({x})": ("f", ""),
    "torch.trunc({x})": ("f", ""), "torch.sign({x})": ("fi", ""), "torch.reciprocal({x})": ("f", "d"),
    "torch.erf({x})": ("f", ""), "torch.log1p({x})": ("f", "d"), "torch.expm1({x})": ("f", ""),
    "torch.square({x})": ("fi", ""), "torch.clamp({x}, -0.5, 0.5)": ("f", ""),
    "{x}.clamp(min=0)": ("fi", ""), "torch.clamp({x}, max=2)": ("fi", ""),
    "torch.bitwise_not({x})": ("ib", ""), "~{x}": ("ib", ""), "torch.logical_not({x})": ("fib", ""),
    "torch.isnan({x})": ("f", ""), "torch.isfinite({x})": ("f", ""), "torch.isinf({x})": ("f", ""),
    "torch.nan_to_num({x})": ("f", ""), "torch.atan({x})": ("f", ""), "torch.asin({x})": ("f", "d"),
    "torch.log2({x})": ("f", "d"), "torch.frac({x})": ("f", ""), "torch.cosh({x})": ("f", ""),
}

# flags: d = may produce nan/inf, s = the other operand may be a Python scalar, r = infix (the
# scalar may come first)
BINARY: dict[str, tuple[str, str]] = {
    "{a} + {b}": ("fib", "sr"), "{a} - {b}": ("fi", "sr"), "{a} * {b}": ("fib", "sr"),
    "{a} / {b}": ("fib", "dsr"), "{a} // {b}": ("fi", "dsr"), "{a} % {b}": ("fi", "dsr"),
    "{a} ** {b}": ("fi", "dsr"), "torch.add({a}, {b}, alpha=2)": ("fi", "s"),
    "torch.sub({a}, {b}, alpha=0.5)": ("f", "s"), "torch.mul({a}, {b})": ("fib", "s"),
    "{a}.div({b}, rounding_mode='floor')": ("fi", "ds"),
    "torch.div({a}, {b}, rounding_mode='trunc')": ("fi", "ds"),
    "torch.maximum({a}, {b})": ("fib", ""), "torch.minimum({a}, {b})": ("fib", ""),
    "torch.fmod({a}, {b})": ("fi", "ds"), "torch.remainder({a}, {b})": ("fi", "ds"),
    "torch.atan2({a}, {b})": ("f", ""), "{a} & {b}": ("ib", "sr"), "{a} | {b}": ("ib", "sr"),
    "{a} ^ {b}": ("ib", "sr"), "torch.logical_and({a}, {b})": ("fib", ""),
    "torch.logical_or({a}, {b})": ("fib", ""), "torch.logical_xor({a}, {b})": ("fib", ""),
    "torch.hypot({a}, {b})": ("f", ""), "torch.copysign({a}, {b})": ("f", "s"),
    "{a}.add({b})": ("fib", "s"), "{a}.mul({b})": ("fib", "s"), "torch.pow({a}, {b})": ("f", "ds"),
}

COMPARE = ("{a} < {b}", "{a} <= {b}", "{a} > {b}", "{a} >= {b}", "{a} == {b}", "{a} != {b}",
           "torch.eq({a}, {b})", "{a}.ne({b})", "torch.gt({a}, {b})", "torch.le({a}, {b})")


def _other_operand(b: Builder, c: Chooser, a: Var, scalar_ok: bool = True) -> tuple[str, Var | None]:
    """A second operand for ``a``: a broadcast-compatible value, ``a`` itself or a Python scalar."""
    how = c.choice(("var", "var", "var", "self") + ("scalar", "scalar") * scalar_ok)
    if how == "var":
        other = b.pick(c, lambda v: v.name != a.name and _broadcast(a.shape, v.shape) is not None)
        if other is not None:
            return other.name, other
        how = "scalar" if scalar_ok else "self"
    if how == "self":
        return a.name, a
    cat = a.cat if not c.chance(0.2) else c.choice(("f", "i", "b"))
    return b.scalar(c, cat), None


def gen_unary(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    tmpl = c.choice([t for t, (kinds, _) in UNARY.items() if x.cat in kinds])
    out = b.name()
    return b.emit(f"{out} = {tmpl.format(x=x.name)}", defines=[out], nonfinite="d" in UNARY[tmpl][1])


def gen_binary(b: Builder, c: Chooser) -> bool:
    a = b.pick(c)
    if a is None:
        return False
    other, var = _other_operand(b, c, a)
    cats = a.cat + (var.cat if var is not None else "")
    options = [t for t, (kinds, flags) in BINARY.items()
               if all(k in kinds for k in cats) and (var is not None or "s" in flags)]
    if not options:
        return False
    tmpl = c.choice(options)
    kinds, flags = BINARY[tmpl]
    if var is None and "r" in flags and c.chance(0.3):
        expr = tmpl.format(a=other, b=a.name)  # the scalar first: 2.0 - x
    else:
        expr = tmpl.format(a=a.name, b=other)
    out = b.name()
    return b.emit(f"{out} = {expr}", defines=[out], nonfinite="d" in flags)


def gen_compare(b: Builder, c: Chooser) -> bool:
    a = b.pick(c)
    if a is None:
        return False
    other, _ = _other_operand(b, c, a)
    tmpl = c.choice(COMPARE)
    out = b.name()
    return b.emit(f"{out} = {tmpl.format(a=a.name, b=other)}", defines=[out])


def gen_where(b: Builder, c: Chooser) -> bool:
    a = b.pick(c)
    if a is None:
        return False
    how = c.choice(("var", "inline", "inline"))
    cond = None
    if how == "var":
        v = b.pick(c, lambda v: v.dtype == "bool" and _broadcast(a.shape, v.shape) is not None)
        cond = v.name if v is not None else None
    if cond is None:
        cond = f"({a.name} > {c.choice(('0', '0.5', '-1'))})"
    other, _ = _other_operand(b, c, a)
    form = c.choice(("torch.where({c}, {a}, {b})", "torch.where({c}, {b}, {a})", "{a}.where({c}, {b})"))
    out = b.name()
    return b.emit(f"{out} = {form.format(c=cond, a=a.name, b=other)}", defines=[out])


def gen_reduce(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    nd = x.ndim
    op = c.choice(("sum", "sum", "mean", "amax", "amin", "prod", "argmax", "argmin", "max_dim",
                   "min_dim", "any", "all", "logsumexp", "var", "std", "norm"))
    if op in ("mean", "logsumexp", "var", "std", "norm") and x.cat != "f":
        op = "sum"
    multi = op in ("sum", "mean", "amax", "amin", "logsumexp", "var", "std", "norm")
    mode = c.choice(("all", "one", "one") + ("many",) * (multi and nd >= 2))
    if op in ("max_dim", "min_dim") or (op == "logsumexp" and mode == "all"):
        mode = "one"
    keep = c.chance(0.4)
    if mode == "one":
        dim = str(c.dim(nd))
    elif mode == "many":
        dims = c.sample(lambda: sorted(c.rng.sample(range(nd), c.rng.randint(2, nd))),
                        lambda old: isinstance(old, list) and len(old) >= 2 and max(old) < nd)
        dim = repr(tuple(dims))
    else:
        dim = ""
    args = "" if not dim else f"dim={dim}, keepdim={keep}"
    out = b.name()
    if op in ("max_dim", "min_dim"):
        idx = b.name()
        fn = op[:3]
        return b.emit(f"{out}, {idx} = torch.{fn}({x.name}, dim={dim}, keepdim={keep})",
                      defines=[out, idx])
    if op == "norm":
        expr = f"torch.linalg.vector_norm({x.name}{', ' + args if args else ''})"
    elif op in ("var", "std"):
        corr = c.choice((0, 1))
        expr = f"torch.{op}({x.name}{', ' + args if args else ''}, correction={corr})"
    elif c.chance(0.5):
        expr = f"torch.{op}({x.name}{', ' + args if args else ''})"
    else:
        expr = f"{x.name}.{op}({args})"
    # nan from too few elements (var, std, mean of nothing) is deterministic; an overflowing prod
    # is not: its partial products depend on the order of the multiplications
    return b.emit(f"{out} = {expr}", defines=[out], nonfinite=op in ("var", "std", "mean"))


def gen_matmul(b: Builder, c: Chooser) -> bool:
    a = b.pick(c, lambda v: v.ndim >= 1 and (v.cat == "f" or v.dtype == "int64"))
    if a is None:
        return False
    k, nd = a.shape[-1], a.ndim
    form = c.choice(("matmul", "matmul", "mm", "bmm", "linear", "linear", "addmm", "gram", "vec"))
    out = b.name()
    if form == "gram":
        expr = c.choice(("{a} @ {a}.mT", "{a}.mT @ {a}", "torch.matmul({a}, {a}.transpose(-1, -2))")
                        if nd >= 2 else ("{a} @ {a}", "torch.dot({a}, {a})")).format(a=a.name)
        return b.emit(f"{out} = {expr}", defines=[out])
    if form == "vec":
        v = b.tensor_of(c, (k,), a.dtype)
        return b.emit(f"{out} = {c.choice(('{a} @ {v}', 'torch.matmul({a}, {v})')).format(a=a.name, v=v)}",
                      defines=[out])
    m = c.size()
    if form == "linear":
        w = b.tensor_of(c, (m, k), a.dtype)
        bias = c.choice(("none", "param", "row"))
        extra = "" if bias == "none" else ", " + b.tensor_of(c, (m,), a.dtype)
        return b.emit(f"{out} = F.linear({a.name}, {w}{extra})", defines=[out])
    if form == "mm" and nd == 2:
        rhs = b.tensor_of(c, (k, m), a.dtype)
        return b.emit(f"{out} = {c.choice(('torch.mm({a}, {r})', '{a}.mm({r})')).format(a=a.name, r=rhs)}",
                      defines=[out])
    if form == "bmm" and nd == 3:
        rhs = b.tensor_of(c, (a.shape[0], k, m), a.dtype)
        return b.emit(f"{out} = torch.bmm({a.name}, {rhs})", defines=[out])
    if form == "addmm" and nd == 2:
        rhs = b.tensor_of(c, (k, m), a.dtype)
        bias = b.tensor_of(c, c.choice(((m,), (1, m), (a.shape[0], m))), a.dtype)
        scale = c.choice(("", ", beta=0.5, alpha=2"))
        return b.emit(f"{out} = torch.addmm({bias}, {a.name}, {rhs}{scale})", defines=[out])
    rhs_shape = (k, m) if not c.chance(0.3) or nd < 3 else (a.shape[0] if nd == 3 else 1, k, m)
    rhs = b.tensor_of(c, rhs_shape, a.dtype)
    expr = c.choice(("{a} @ {r}", "torch.matmul({a}, {r})")).format(a=a.name, r=rhs)
    return b.emit(f"{out} = {expr}", defines=[out])


def gen_normalize(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.cat == "f" and v.ndim >= 1)
    if x is None:
        return False
    form = c.choice(("softmax", "softmax", "log_softmax", "layer_norm", "layer_norm_affine", "rms_norm",
                     "normalize"))
    d = c.dim(x.ndim)
    out = b.name()
    if form in ("softmax", "log_softmax"):
        tmpl = c.choice((f"F.{form}({{x}}, dim={d})", f"{{x}}.{form}({d})", f"torch.{form}({{x}}, {d})",
                         f"F.{form}({{x}}, dim={d}, dtype=torch.float32)"))
        return b.emit(f"{out} = {tmpl.format(x=x.name)}", defines=[out])
    if form == "normalize":
        return b.emit(f"{out} = F.normalize({x.name}, dim={d})", defines=[out])
    count = c.int(1, min(x.ndim, 3))
    shape = x.shape[-count:]
    eps = c.choice(("1e-05", "0.001"))
    if form == "rms_norm":
        w = b.tensor_of(c, shape, x.dtype) if c.chance(0.5) else "None"
        return b.emit(f"{out} = F.rms_norm({x.name}, {shape!r}, {w}, eps={eps})", defines=[out])
    extra = ""
    if form == "layer_norm_affine":
        extra = f", {b.tensor_of(c, shape, x.dtype)}, {b.tensor_of(c, shape, x.dtype)}"
    return b.emit(f"{out} = F.layer_norm({x.name}, {shape!r}{extra}, eps={eps})", defines=[out])


def _factorize(rng: random.Random, n: int, rank: int) -> list[int]:
    if rank == 0:
        return []
    if n == 0:
        sizes = [rng.choice((1, 2, 3)) for _ in range(rank)]
        sizes[rng.randrange(rank)] = 0
        return sizes
    sizes, rest = [], n
    for _ in range(rank - 1):
        f = rng.choice([d for d in range(1, rest + 1) if rest % d == 0])
        sizes.append(f)
        rest //= f
    sizes.append(rest)
    rng.shuffle(sizes)
    return sizes


def gen_reshape(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    n, nd = x.numel, x.ndim
    form = c.choice(("reshape", "reshape", "torch.reshape", "view", "flatten", "flatten_range",
                     "view_flat", "unflatten"))
    out = b.name()
    if form == "flatten":
        return b.emit(f"{out} = {x.name}.flatten()", defines=[out])
    if form == "view_flat":
        return b.emit(f"{out} = {x.name}.view(-1)", defines=[out])
    if form == "flatten_range" and nd >= 2:
        s = c.int(0, nd - 2)
        return b.emit(f"{out} = {x.name}.flatten({s}, {c.int(s, nd - 1)})", defines=[out])
    if form == "unflatten" and nd >= 1 and x.shape[0] > 0:
        d = c.int(0, nd - 1)
        sizes = c.sample(lambda: _factorize(c.rng, x.shape[d], 2),
                         lambda old: isinstance(old, list) and math.prod(old) == x.shape[d] and len(old) == 2)
        return b.emit(f"{out} = {x.name}.unflatten({d}, {tuple(sizes)!r})", defines=[out])
    rank = c.int(0 if n == 1 else 1, 4)
    sizes = c.sample(lambda: _factorize(c.rng, n, rank),
                     lambda old: isinstance(old, list) and len(old) == rank and math.prod(old) == n)
    if n > 0 and rank and c.chance(0.3):
        sizes = list(sizes)
        sizes[c.int(0, rank - 1)] = -1
    target = repr(tuple(sizes))
    expr = {"reshape": f"{x.name}.reshape({target})", "torch.reshape": f"torch.reshape({x.name}, {target})"}
    return b.emit(f"{out} = {expr.get(form, f'{x.name}.view({target})')}", defines=[out])


def gen_permute(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    nd = x.ndim
    form = c.choice(("permute", "permute", "transpose", "swapaxes", "t", "mT", "movedim"))
    out = b.name()
    if form == "permute":
        perm = c.sample(lambda: c.rng.sample(range(nd), nd),
                        lambda old: isinstance(old, list) and sorted(old) == list(range(nd)))
        expr = c.choice(("{x}.permute({p})", "torch.permute({x}, {p})")).format(x=x.name, p=tuple(perm))
    elif form in ("transpose", "swapaxes"):
        expr = f"{x.name}.{form}({c.dim(nd)}, {c.dim(nd)})"
    elif form == "t" and nd <= 2:
        expr = f"{x.name}.t()"
    elif form == "mT" and nd >= 2:
        expr = f"{x.name}.mT"
    else:
        expr = f"torch.movedim({x.name}, {c.dim(nd)}, {c.dim(nd)})"
    return b.emit(f"{out} = {expr}", defines=[out])


def gen_expand(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim <= 3)
    if x is None:
        return False
    out = b.name()
    if c.chance(0.2):
        y = b.pick(c, lambda v: _broadcast(x.shape, v.shape) == v.shape and v.name != x.name)
        if y is not None:
            return b.emit(f"{out} = {x.name}.expand_as({y.name})", defines=[out])
    lead = [c.size() for _ in range(c.int(0, 1))]
    dims = [c.size() if s == 1 else (-1 if c.chance(0.3) else s) for s in x.shape]
    shape = tuple(lead + dims)
    form = c.choice(("{x}.expand({s})", "torch.broadcast_to({x}, {s})"))
    return b.emit(f"{out} = {form.format(x=x.name, s=shape)}", defines=[out])


def gen_cat(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    nd = x.ndim
    stack = nd == 0 or c.chance(0.3)
    d = c.int(-(nd + 1), nd) if stack else c.dim(nd)
    pieces = [x.name]
    for _ in range(c.int(1, 3)):
        if stack:
            other = b.pick(c, lambda v: v.shape == x.shape)
        else:
            def fits(v: Var) -> bool:
                return v.ndim == nd and all(
                    s == t for i, (s, t) in enumerate(zip(v.shape, x.shape, strict=True)) if i != d % nd)
            other = b.pick(c, fits)
        pieces.append(other.name if other is not None else x.name)
    if not stack and c.chance(0.3):
        # zero-size pieces: an empty slice of x, and the legacy 1-D empty tensor cat skips
        pieces.insert(c.int(0, len(pieces)), c.choice((f"{x.name}.narrow({d}, 0, 0)",
                                                      f"torch.zeros(0, dtype={x.name}.dtype)")))
    fn = "torch.stack" if stack else c.choice(("torch.cat", "torch.concat"))
    out = b.name()
    return b.emit(f"{out} = {fn}([{', '.join(pieces)}], dim={d})", defines=[out])


def gen_split(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    d = c.dim(x.ndim)
    n = x.shape[d]
    form = c.choice(("sections", "sections", "size", "chunk", "unbind", "tensor_split"))
    if form == "sections":
        count = c.int(1, 4)

        def make() -> list[int]:
            cuts = sorted(c.rng.randint(0, n) for _ in range(count - 1))
            return [b_ - a_ for a_, b_ in zip([0, *cuts], [*cuts, n], strict=True)]

        sizes = c.sample(make, lambda old: isinstance(old, list) and len(old) == count and sum(old) == n)
        form = c.choice(("{x}.split({s}, dim={d})", "torch.split({x}, {s}, {d})"))
        expr = form.format(x=x.name, s=sizes, d=d)
    elif form == "size":
        expr = f"{x.name}.split({c.int(1, max(n, 1))}, {d})"
    elif form == "chunk":
        expr = f"{x.name}.chunk({c.int(1, 4)}, dim={d})"
    elif form == "unbind" and 0 < n <= 6:
        expr = c.choice(("{x}.unbind({d})", "torch.unbind({x}, {d})")).format(x=x.name, d=d)
    else:
        points = sorted(c.int(0, n + 1) for _ in range(c.int(1, 3)))
        expr = f"torch.tensor_split({x.name}, {points}, dim={d})"
    count = len(b.eval(expr))
    if not 1 <= count <= 6:
        return False
    outs = [b.name() for _ in range(count)]
    return b.emit(f"{', '.join(outs)}{',' if count == 1 else ''} = {expr}", defines=outs)


def gen_narrow(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    d = c.dim(x.ndim)
    n = x.shape[d]
    start = c.int(-n, n) if n else 0
    length = c.int(0, n - (start % n if n and start < 0 else start))
    out = b.name()
    form = c.choice(("{x}.narrow({d}, {s}, {n})", "torch.narrow({x}, {d}, {s}, {n})"))
    return b.emit(f"{out} = {form.format(x=x.name, d=d, s=start, n=length)}", defines=[out])


def gen_slice(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    out = b.name()
    return b.emit(f"{out} = {x.name}[{_index_expr(c, x.shape)}]", defines=[out])


def gen_select(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim >= 1 and v.numel > 0)
    if x is None:
        return False
    d = c.int(0, x.ndim - 1)
    n = x.shape[d]
    i = c.int(-n, n - 1)
    form = c.choice(("{x}.select({d}, {i})", "torch.select({x}, {d}, {i})", "{x}[{pre}{i}]"))
    out = b.name()
    return b.emit(f"{out} = {form.format(x=x.name, d=d, i=i, pre=':, ' * d)}", defines=[out])


def gen_squeeze(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    nd = x.ndim
    form = c.choice(("squeeze", "squeeze_dim", "squeeze_dims", "unsqueeze", "unsqueeze", "none_index"))
    out = b.name()
    if form == "squeeze":
        expr = c.choice(("{x}.squeeze()", "torch.squeeze({x})")).format(x=x.name)
    elif form == "squeeze_dim":
        expr = f"{x.name}.squeeze({c.dim(nd)})"
    elif form == "squeeze_dims" and nd >= 2:
        expr = f"{x.name}.squeeze({tuple(sorted({c.int(0, nd - 1), c.int(0, nd - 1)}))!r})"
    elif form == "none_index":
        expr = c.choice(("{x}[None]", "{x}[..., None]")).format(x=x.name)
    else:
        expr = f"{x.name}.unsqueeze({c.int(-nd - 1, nd)})"
    return b.emit(f"{out} = {expr}", defines=[out])


def gen_flip(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    nd = x.ndim
    form = c.choice(("flip", "flip", "torch.flip", "fliplr", "flipud"))
    out = b.name()
    if form == "fliplr" and nd >= 2:
        return b.emit(f"{out} = {x.name}.fliplr()", defines=[out])
    if form == "flipud":
        return b.emit(f"{out} = torch.flipud({x.name})", defines=[out])
    dims = c.sample(lambda: c.rng.sample(range(nd), c.rng.randint(1, nd)),
                    lambda old: isinstance(old, list) and old and max(old) < nd and len(set(old)) == len(old))
    if form == "flip":
        return b.emit(f"{out} = {x.name}.flip({dims})", defines=[out])
    return b.emit(f"{out} = torch.flip({x.name}, {tuple(dims)!r})", defines=[out])


def gen_roll(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    nd = x.ndim
    form = c.choice(("flat", "one", "one", "two"))
    out = b.name()
    if form == "flat" or nd == 0:
        return b.emit(f"{out} = torch.roll({x.name}, {c.int(-7, 7)})", defines=[out])
    if form == "two" and nd >= 2:
        d0 = c.int(0, nd - 1)
        d1 = (d0 + c.int(1, nd - 1)) % nd
        return b.emit(f"{out} = torch.roll({x.name}, ({c.int(-7, 7)}, {c.int(-7, 7)}), ({d0}, {d1}))",
                      defines=[out])
    return b.emit(f"{out} = {x.name}.roll({c.int(-7, 7)}, {c.dim(nd)})", defines=[out])


def gen_repeat(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.numel <= 4096)
    if x is None:
        return False
    nd = x.ndim
    form = c.choice(("repeat", "repeat", "tile", "interleave", "interleave_flat"))
    out = b.name()
    if form in ("repeat", "tile"):
        reps = tuple(c.int(0 if c.chance(0.1) else 1, 3) for _ in range(nd + c.int(0, 1)))
        if not reps:
            reps = (2,)
        return b.emit(f"{out} = {x.name}.{form}({reps!r})", defines=[out])
    if form == "interleave" and nd >= 1:
        return b.emit(f"{out} = {x.name}.repeat_interleave({c.int(1, 3)}, dim={c.dim(nd)})", defines=[out])
    return b.emit(f"{out} = torch.repeat_interleave({x.name}, {c.int(1, 3)})", defines=[out])


def gen_gather(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim >= 1 and v.numel > 0)
    if x is None:
        return False
    d = c.dim(x.ndim)
    n = x.shape[d]
    out = b.name()
    form = c.choice(("literal", "literal", "argmax", "take_along"))
    if form == "argmax":
        return b.emit(f"{out} = {x.name}.gather({d}, {x.name}.argmax({d}, keepdim=True))", defines=[out])
    along = form == "take_along"
    shape = tuple(c.int(1, 4) if k == d % x.ndim else
                  (c.choice((1, s)) if along else c.count(min(s, 4))) for k, s in enumerate(x.shape))
    idx = _index_literal(_indices(c, math.prod(shape), n), shape)
    if along:
        return b.emit(f"{out} = torch.take_along_dim({x.name}, {idx}, dim={d})", defines=[out])
    form = c.choice(("{x}.gather({d}, {i})", "torch.gather({x}, {d}, {i})"))
    return b.emit(f"{out} = {form.format(x=x.name, d=d, i=idx)}", defines=[out])


def gen_index_select(b: Builder, c: Chooser) -> bool:
    x = b.pick(c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    d = c.int(0, x.ndim - 1)
    n = x.shape[d]
    count = c.count(5) if n else 0
    idx = _index_literal(_indices(c, count, n), (count,))
    forms = ["{x}.index_select({d}, {i})", "torch.index_select({x}, {d}, {i})"]
    if d <= 1:
        forms.append("{x}[" + ":, " * d + "{i}]")
    out = b.name()
    return b.emit(f"{out} = {c.choice(forms).format(x=x.name, d=d, i=idx)}", defines=[out])


def _target(b: Builder, c: Chooser, pred: Callable[[Var], bool]) -> tuple[Var | None, bool]:
    """The tensor an indexed write goes to: an intermediate written in place (40%) or any value
    (the out-of-place op)."""
    inplace = c.chance(0.4)
    x = b.pick(c, pred, mutable=inplace)
    if x is None and inplace:
        inplace, x = False, b.pick(c, pred)
    return x, inplace


def _write(b: Builder, x: Var, inplace: bool, method: str, args: str) -> bool:
    if inplace:
        return b.emit(f"{x.name}.{method}_({args})", mutates=[x.name])
    out = b.name()
    return b.emit(f"{out} = {x.name}.{method}({args})", defines=[out])


def gen_index_add(b: Builder, c: Chooser) -> bool:
    x, inplace = _target(b, c, lambda v: v.ndim >= 1 and v.dtype != "bool")
    if x is None:
        return False
    d = c.int(0, x.ndim - 1)
    n = x.shape[d]
    count = c.count(5) if n else 0
    idx = _index_literal(_indices(c, count, n), (count,))
    src = b.tensor_of(c, tuple(count if k == d else s for k, s in enumerate(x.shape)), x.dtype)
    alpha = c.choice(("", ", alpha=2"))
    return _write(b, x, inplace, "index_add", f"{d}, {idx}, {src}{alpha}")


def gen_index_copy(b: Builder, c: Chooser) -> bool:
    x, inplace = _target(b, c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    d = c.int(0, x.ndim - 1)
    n = x.shape[d]
    count = c.count(min(n, 4))
    idx = _index_literal(_indices(c, count, n, unique=True), (count,))
    src = b.tensor_of(c, tuple(count if k == d else s for k, s in enumerate(x.shape)), x.dtype)
    return _write(b, x, inplace, "index_copy", f"{d}, {idx}, {src}")


def gen_index_fill(b: Builder, c: Chooser) -> bool:
    x, inplace = _target(b, c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    d = c.int(0, x.ndim - 1)
    n = x.shape[d]
    count = c.count(4) if n else 0
    idx = _index_literal(_indices(c, count, n), (count,))
    return _write(b, x, inplace, "index_fill", f"{d}, {idx}, {b.scalar(c, x.cat)}")


def gen_scatter(b: Builder, c: Chooser) -> bool:
    x, inplace = _target(b, c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    d = c.dim(x.ndim)
    n = x.shape[d]
    shape = tuple(c.count(min(s, 3)) for s in x.shape)
    idx = _index_literal(_fiber_indices(c, shape, d, n), shape)
    src = b.scalar(c, x.cat) if c.chance(0.3) else b.tensor_of(c, shape, x.dtype)
    return _write(b, x, inplace, "scatter", f"{d}, {idx}, {src}")


def gen_scatter_add(b: Builder, c: Chooser) -> bool:
    x, inplace = _target(b, c, lambda v: v.ndim >= 1 and v.dtype != "bool")
    if x is None:
        return False
    d = c.dim(x.ndim)
    n = x.shape[d]
    shape = tuple(c.count(min(s, 3)) if k != d % x.ndim else c.count(4) for k, s in enumerate(x.shape))
    idx = _index_literal(_indices(c, math.prod(shape), n), shape) if n else _index_literal([], (0,))
    src = b.tensor_of(c, shape, x.dtype)
    if c.chance(0.3):
        reduce = c.choice(("sum", "prod", "amax", "amin", "mean"))
        return _write(b, x, inplace, "scatter_reduce",
                      f"{d}, {idx}, {src}, reduce='{reduce}', include_self={c.chance(0.5)}")
    return _write(b, x, inplace, "scatter_add", f"{d}, {idx}, {src}")


def gen_index_put(b: Builder, c: Chooser) -> bool:
    x, inplace = _target(b, c, lambda v: v.ndim >= 1)
    if x is None:
        return False
    n = x.shape[0]
    accumulate = x.dtype != "bool" and c.chance(0.4)
    count = c.count(min(n, 4)) if not accumulate else c.count(5) if n else 0
    idx = _index_literal(_indices(c, count, n, unique=not accumulate), (count,))
    vshape = c.choice(((count, *x.shape[1:]), (), x.shape[1:]))
    vals = b.tensor_of(c, vshape, x.dtype)
    if inplace and not accumulate and c.chance(0.5):
        return b.emit(f"{x.name}[{idx}] = {vals}", mutates=[x.name])
    if not inplace and c.chance(0.3):
        out = b.name()
        return b.emit(f"{out} = torch.index_put({x.name}, ({idx},), {vals}, accumulate={accumulate})",
                      defines=[out])
    return _write(b, x, inplace, "index_put", f"({idx},), {vals}, accumulate={accumulate}")


def gen_masked_fill(b: Builder, c: Chooser) -> bool:
    x, inplace = _target(b, c, lambda v: True)
    if x is None:
        return False
    m = b.pick(c, lambda v: v.dtype == "bool" and _broadcast(x.shape, v.shape) == x.shape) \
        if c.chance(0.5) else None
    mask = m.name if m is not None else f"({x.name} > {c.choice(('0', '0.5', '-1'))})"
    zero_d = b.pick(c, lambda v: v.ndim == 0 and v.dtype == x.dtype and v.name != x.name) \
        if c.chance(0.2) else None
    value = zero_d.name if zero_d is not None else b.scalar(c, x.cat)
    if inplace and c.chance(0.4):
        return b.emit(f"{x.name}[{mask}] = {value}", mutates=[x.name])
    return _write(b, x, inplace, "masked_fill", f"{mask}, {value}")


def gen_cast(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    target = c.choice([d for d in ALL_DTYPES if d != x.dtype])
    # float -> int of nan, inf or out-of-range values is undefined behaviour in C++ (eager's
    # answer is the CPU's); float -> float16 above its range is inf in one and not the other
    if x.cat == "f" and category(target) == "i" and (not x.finite or x.amax >= 1e6):
        return False
    if target == "float16" and x.amax >= 6e4:
        return False
    short = {"float32": "float", "float64": "double", "float16": "half", "bfloat16": "bfloat16",
             "int64": "long", "int32": "int", "bool": "bool"}[target]
    forms = [f"{{x}}.to(torch.{target})", f"{{x}}.to(dtype=torch.{target})", f"{{x}}.type(torch.{target})",
             f"{{x}}.{short}()"]
    y = b.pick(c, lambda v: v.dtype == target) if c.chance(0.2) else None
    expr = f"{x.name}.type_as({y.name})" if y is not None else c.choice(forms).format(x=x.name)
    out = b.name()
    return b.emit(f"{out} = {expr}", defines=[out])


def _operand_for(b: Builder, c: Chooser, shape: tuple[int, ...], target: Var) -> str:
    """A right-hand side that an in-place write into ``shape`` of ``target``'s dtype accepts."""
    if c.chance(0.4):
        return b.scalar(c, target.cat)
    order = "bif"

    def fits(v: Var) -> bool:
        return _broadcast(v.shape, shape) == shape and order.index(v.cat) <= order.index(target.cat) \
            and v.name != target.name
    v = b.pick(c, fits)
    return v.name if v is not None else b.scalar(c, target.cat)


def gen_inplace(b: Builder, c: Chooser) -> bool:
    """In-place ops on intermediates (or buffers), never on inputs or parameters."""
    t = b.pick(c, mutable=True)
    if t is None:
        return False
    form = c.choice(("method", "method", "augmented", "region", "region", "nested", "stepped",
                     "setitem", "unary"))
    name = t.name
    if form == "method":
        op = c.choice(("add_", "sub_", "mul_", "div_", "copy_"))
        rhs = _operand_for(b, c, t.shape, t) if op != "copy_" else b.tensor_of(c, t.shape, t.dtype)
        alpha = ", alpha=2" if op in ("add_", "sub_") and c.chance(0.3) else ""
        return b.emit(f"{name}.{op}({rhs}{alpha})", mutates=[name], nonfinite=op == "div_")
    if form == "augmented":
        op = c.choice(("+=", "-=", "*="))
        return b.emit(f"{name} {op} {_operand_for(b, c, t.shape, t)}", mutates=[name])
    if form == "unary":
        op = c.choice(("relu_()", "neg_()", "abs_()", "sigmoid_()", "exp_()", "sin_()", "floor_()",
                       "clamp_(min=-1, max=1)", "zero_()", "fill_(2)", "tanh_()", "sqrt_()"))
        return b.emit(f"{name}.{op}", mutates=[name], nonfinite=op == "sqrt_()")
    if form == "stepped" and t.ndim >= 1:
        region = c.choice(("::2", "1::2", "::3"))
        op = c.choice(("+=", "*=", "="))
        return b.emit(f"{name}[{region}] {op} {b.scalar(c, t.cat)}", mutates=[name])
    if form == "nested" and t.ndim >= 2 and t.shape[0] > 0:
        i = c.int(-t.shape[0], t.shape[0] - 1)
        inner = _index_expr(c, t.shape[1:], newaxis=False)
        shape = b.shape_of(f"{name}[{i}][{inner}]")
        if shape is None:
            return False
        return b.emit(f"{name}[{i}][{inner}] += {_operand_for(b, c, shape, t)}", mutates=[name])
    index = _index_expr(c, t.shape, newaxis=False)
    shape = b.shape_of(f"{name}[{index}]")
    if shape is None:
        return False
    op = "=" if form == "setitem" else c.choice(("+=", "-=", "*=", "="))
    return b.emit(f"{name}[{index}] {op} {_operand_for(b, c, shape, t)}", mutates=[name])


def gen_buffer(b: Builder, c: Chooser) -> bool:
    """A buffer of the module updated in place by forward (a counter, running statistics)."""
    form = c.choice(("counter", "scale", "accumulate", "running", "copy", "slice"))
    persistent = c.chance(0.8)
    if form == "counter":
        dtype = c.choice(("int64", "float32"))
        buf = b.buffer(f"torch.zeros((), dtype=torch.{dtype})", persistent)
        return b.emit(f"{buf} += 1")
    x = b.pick(c, lambda v: v.cat == "f" and v.numel <= 4096)
    if x is None:
        return False
    shape = x.shape[1:] if form == "running" and x.ndim >= 1 else x.shape
    n = math.prod(shape)
    buf = b.buffer(f"torch.arange({n}, dtype=torch.{x.dtype}).reshape({shape!r})", persistent)
    if form == "scale":
        return b.emit(f"{buf}.mul_(2)")
    if form == "accumulate":
        return b.emit(f"{buf}.add_({x.name})")
    if form == "running":
        mean = f"{x.name}.mean(0)" if x.ndim >= 1 else x.name
        return b.emit(f"{buf}.mul_(0.9).add_({mean}, alpha=0.1)", nonfinite=True)
    if form == "copy":
        return b.emit(f"{buf}.copy_({x.name} * 2)")
    if not shape or shape[0] == 0:
        return b.emit(f"{buf}.add_(1)")
    return b.emit(f"{buf}[{c.int(0, shape[0] - 1)}] += {x.name}.sum()")


def gen_constant(b: Builder, c: Chooser) -> bool:
    """Tensors made from another one's shape or dtype (host constants to the tracer)."""
    x = b.pick(c)
    if x is None:
        return False
    form = c.choice(("zeros_like", "ones_like", "full_like", "arange", "new_ones"))
    out = b.name()
    if form == "arange" and x.ndim >= 1:
        return b.emit(f"{out} = {x.name} * torch.arange({x.shape[-1]}).to({x.name}.dtype)", defines=[out])
    if form == "new_ones":
        return b.emit(f"{out} = {x.name}.new_ones({x.shape!r}) + {x.name}", defines=[out])
    if form == "full_like":
        return b.emit(f"{out} = torch.full_like({x.name}, {b.scalar(c, x.cat)})", defines=[out])
    return b.emit(f"{out} = torch.{form if form != 'arange' else 'ones_like'}({x.name})", defines=[out])


def gen_clone(b: Builder, c: Chooser) -> bool:
    x = b.pick(c)
    if x is None:
        return False
    out = b.name()
    form = c.choice(("{x}.clone()", "{x}.contiguous()", "{x}.detach()"))
    return b.emit(f"{out} = {form.format(x=x.name)}", defines=[out])


# The explicit list of generators and their weights (how often each is drawn).
GENERATOR_LIST: list[tuple[str, Callable[[Builder, Chooser], bool], int]] = [
    ("unary", gen_unary, 8), ("binary", gen_binary, 10), ("compare", gen_compare, 3),
    ("where", gen_where, 3), ("reduce", gen_reduce, 6), ("matmul", gen_matmul, 5),
    ("normalize", gen_normalize, 3), ("reshape", gen_reshape, 4), ("permute", gen_permute, 3),
    ("expand", gen_expand, 3), ("cat", gen_cat, 3), ("split", gen_split, 3), ("narrow", gen_narrow, 2),
    ("slice", gen_slice, 4), ("select", gen_select, 2), ("squeeze", gen_squeeze, 2), ("flip", gen_flip, 2),
    ("roll", gen_roll, 2), ("repeat", gen_repeat, 2), ("gather", gen_gather, 2),
    ("index_select", gen_index_select, 2), ("index_add", gen_index_add, 2), ("index_copy", gen_index_copy, 1),
    ("index_fill", gen_index_fill, 1), ("scatter", gen_scatter, 2), ("scatter_add", gen_scatter_add, 2),
    ("index_put", gen_index_put, 2), ("masked_fill", gen_masked_fill, 2), ("cast", gen_cast, 4),
    ("inplace", gen_inplace, 8), ("buffer", gen_buffer, 3), ("constant", gen_constant, 1),
    ("clone", gen_clone, 1),
]
GENERATORS: dict[str, Callable[[Builder, Chooser], bool]] = {n: fn for n, fn, _ in GENERATOR_LIST}


# ---------------------------------------------------------------------------
# Making models: from (seed, index), and again from an edited specification


def generate(seed: int, index: int) -> Program:
    """Model ``index`` of ``seed``."""
    rng = random.Random(f"poptorch-fuzz:{seed}:{index}")
    b = Builder(seed, index, rng.randrange(2 ** 31))
    c = Chooser(random.Random(rng.random()))
    _gen_inputs(b, c)
    b.start()
    names = [n for n, _, _ in GENERATOR_LIST]
    weights = [w for _, _, w in GENERATOR_LIST]
    for _ in range(rng.randint(1, 8)):
        for _attempt in range(30):
            gen = rng.choices(names, weights)[0]
            if b.add(gen, Chooser(random.Random(rng.random()))):
                break
    oc = Chooser(random.Random(rng.random()))
    sinks = [n for n, v in b.vars.items() if v.kind == "value" and n not in b.consumed]
    picked = sinks[-4:]
    if oc.chance(0.1) or not picked:
        picked.append(oc.choice(list(b.vars)))
    if oc.chance(0.05):
        picked.append(picked[0])  # the same tensor twice in the output
    kind = oc.choice(("single", "single", "tuple")) if len(picked) == 1 else \
        oc.choice(("tuple", "tuple", "list", "dict", "nested"))
    return b.program(OutputSpec(picked, kind), (c.log, c.tags), [], prune=False)


def realize(spec: ModelSpec, prune: bool = True) -> Program:
    """The model of an edited specification: every statement made again from its recorded
    choices (statements that no longer apply are drawn afresh or left out)."""
    b = Builder(spec.seed, spec.index, spec.data_seed)
    c = Chooser(random.Random(f"{spec.seed}:{spec.index}:inputs"), spec.prelude, spec.prelude_tags)
    _gen_inputs(b, c)
    b.inputs += [dataclasses.replace(cut) for cut in spec.cuts]
    b.start()
    for i, st in enumerate(spec.stmts):
        if not b.add(st.gen, Chooser(random.Random(f"{spec.seed}:{spec.index}:{i}"), st.log, st.tags),
                     st.names):
            for attempt in range(3):
                if b.add(st.gen, Chooser(random.Random(f"{spec.seed}:{spec.index}:{i}:{attempt}")), st.names):
                    break
    return b.program(spec.outputs, (c.log, c.tags), spec.cuts, prune)


# ---------------------------------------------------------------------------
# The check: these functions are copied into every reproducer, so they import what they use
# themselves and call nothing else of this file.


def _describe_error(err: BaseException) -> str:
    """The error's type and its first line."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[0] if lines else ''}"[:300]


def _clone_tree(tree: Any) -> Any:
    import torch
    import torch.utils._pytree as pytree

    return pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, tree)


def _inputs_written(inputs: list[Any], fresh: list[Any]) -> str:
    """Which input differs from a fresh one in layout or in any byte of its storage, or ``""``."""
    import torch

    for i, (t, f) in enumerate(zip(inputs, fresh, strict=True)):
        layout = (t.dtype, t.shape, t.stride(), t.storage_offset())
        if layout != (f.dtype, f.shape, f.stride(), f.storage_offset()):
            return f"input {i}: its layout changed"
        a, b = t.untyped_storage(), f.untyped_storage()
        a_bytes = torch.empty(0, dtype=torch.uint8).set_(a, 0, (a.nbytes(),), (1,))
        b_bytes = torch.empty(0, dtype=torch.uint8).set_(b, 0, (b.nbytes(),), (1,))
        if not torch.equal(a_bytes, b_bytes):
            return f"input {i} ({tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}) was written"
    return ""


def _tolerance(expected: Any) -> tuple[float, float]:
    """(rtol, atol) of an expected tensor: a few units in the last place of its dtype, the atol
    relative to its largest finite magnitude (a sum's error grows with its terms, not its value);
    exact for integers and bools."""
    import torch

    rtol = {torch.float64: 1e-7, torch.float32: 1e-4, torch.float16: 4e-3,
            torch.bfloat16: 3.2e-2}.get(expected.dtype)
    if rtol is None:
        return 0.0, 0.0
    finite = expected[torch.isfinite(expected)]
    scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
    return rtol, rtol * scale


def _difference(actual: Any, expected: Any, where: str) -> str:
    """``"<where> <leaf>: <what>: <message>"`` for the first difference, or ``""``."""
    import torch
    import torch.utils._pytree as pytree

    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if a_spec != e_spec:
        a_text, e_text = (" ".join(str(s).split())[:120] for s in (a_spec, e_spec))
        return f"{where}: structure: {a_text} != eager {e_text}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves, strict=True)):
        if not isinstance(a, torch.Tensor):
            return f"{where} output {i}: structure: {type(a).__name__} where eager has a tensor"
        if a.dtype != e.dtype:
            return f"{where} output {i}: dtype: {a.dtype} != eager {e.dtype}"
        if a.shape != e.shape:
            return f"{where} output {i}: shape: {tuple(a.shape)} != eager {tuple(e.shape)}"
        if a.device.type != "cpu":
            return f"{where} output {i}: device: {a.device}"
        rtol, atol = _tolerance(e)
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as err:
            lines = [line.strip() for line in str(err).splitlines() if line.strip()]
            return f"{where} output {i}: values: {'; '.join(lines[:4])}"[:400]
    return ""


def check_model(model: Any, make_inputs: Callable[[], list[Any]],
                phase: Callable[[str], None] | None = None) -> tuple[str, str]:
    """Runs ``model`` eagerly and through ``poptorch.inferenceModel``, twice each, on deep
    copies of the model and fresh inputs, and returns ``(outcome, detail)``."""
    import copy

    import torch

    import poptorch

    say = phase or (lambda _: None)
    model = model.eval()
    eager_model, compiled_model = copy.deepcopy(model), copy.deepcopy(model)
    say("eager")
    eager_error: BaseException | None = None
    expected: list[Any] = []
    try:
        with torch.no_grad():
            eager_inputs = make_inputs()
            for _ in range(2):
                expected.append(_clone_tree(eager_model(*eager_inputs)))
        eager_wrote = _inputs_written(eager_inputs, make_inputs())
    except Exception as err:
        eager_error = err
    say("compiled")
    inputs = make_inputs()
    written = ""
    try:
        ipu_model = poptorch.inferenceModel(compiled_model)
        actual = []
        for _ in range(2):  # the second call replays the program: state bugs show there
            actual.append(ipu_model(*inputs))
            written = written or _inputs_written(inputs, make_inputs())
        ipu_model.copyWeightsToHost()
    except Exception as err:
        if eager_error is not None:
            return "both_raise", _describe_error(err)
        return ("compile_error" if isinstance(err, poptorch.Error) else "untyped_error"), _describe_error(err)
    if eager_error is not None:
        return "eager_error", _describe_error(eager_error)
    say("compare")
    if eager_wrote:
        diff = _difference(inputs, eager_inputs, "inputs")  # as eager, the model writes an input
        if diff:
            return "mismatch", diff
    elif written:
        return "input_written", written
    for call, (a, e) in enumerate(zip(actual, expected, strict=True), 1):
        diff = _difference(a, e, f"call {call}")
        if diff:
            return "mismatch", diff
    eager_buffers = dict(eager_model.named_buffers())
    for name, buf in compiled_model.named_buffers():
        diff = _difference(buf, eager_buffers[name], f"buffer {name}")
        if diff:
            return "mismatch", diff
    for (name, p), (_, p0) in zip(compiled_model.named_parameters(), model.named_parameters(), strict=True):
        if not torch.equal(p, p0):
            return "mismatch", f"parameter {name}: values: written by the compiled model"
    return "ok", ""


CHECK_FUNCTIONS = (_describe_error, _clone_tree, _inputs_written, _tolerance, _difference, check_model)
# Read now: a reproducer written after this file changed on disk must still get these functions.
CHECK_SOURCE = "\n\n".join(inspect.getsource(fn) for fn in CHECK_FUNCTIONS)


def run_program(program: Program, phase: Callable[[str], None] | None = None) -> tuple[str, str]:
    """``check_model`` on the program's module and inputs (its source, as the reproducer runs it)."""
    # Not "<...>": poptorch's source locations skip such frames. linecache makes tracebacks
    # show the generated lines.
    filename = f"fuzz-model-{program.name}.py"
    linecache.cache[filename] = (len(program.source), None, program.source.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": "fuzz_model"}
    exec(compile(program.source, filename, "exec"), namespace)
    return check_model(namespace["FuzzModel"](), namespace["make_inputs"], phase)


# ---------------------------------------------------------------------------
# The worker process


def _worker_main(conn: Connection, settings: dict[str, Any], log_path: str) -> None:
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.environ.update(settings["env"])
    import faulthandler
    import gc
    import warnings

    # a fatal signal prints the Python stack into the log, whose tail becomes the crash's detail
    faulthandler.enable()
    warnings.simplefilter("ignore")
    import torch

    # jobs workers share the machine's cores: each computes and compiles on one thread
    torch.set_num_threads(1)
    import poptorch

    poptorch._C.check_meta_kernels(settings["check_meta"])
    conn.send(("ready",))
    done = 0
    while True:
        task = conn.recv()
        if task is None:
            return
        task_id, request = task
        # the log holds only this task's output, so that what a crash printed is all it has
        sys.stdout.flush()
        sys.stderr.flush()
        os.ftruncate(log_fd, 0)
        started = time.monotonic()
        conn.send(("phase", task_id, "generate"))
        try:
            program = generate(*request[1:]) if request[0] == "model" else realize(*request[1:])
        except Exception as err:
            conn.send(("result", task_id, "fuzzer_error", f"generator: {_describe_error(err)}", 0.0, 0))
            continue
        conn.send(("program", task_id, program))
        try:
            outcome, detail = run_program(program, lambda p, t=task_id: conn.send(("phase", t, p)))
        except Exception as err:
            outcome, detail = "fuzzer_error", f"check: {_describe_error(err)}"
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        conn.send(("result", task_id, outcome, detail, time.monotonic() - started, rss))
        done += 1
        if done % 50 == 0:
            gc.collect()  # compiled programs kept alive by reference cycles


def _signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


Request = tuple[Any, ...]
Task = Generator[Request, Result, None]


class _Worker:
    def __init__(self, ctx: Any, settings: dict[str, Any], log_path: str) -> None:
        self.log_path = log_path
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, settings, log_path), daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.task: Task | None = None
        self.task_id = -1
        self.program: Program | None = None
        self.phase = ""
        self.deadline: float | None = time.monotonic() + STARTUP_TIMEOUT_S

    def log_tail(self) -> str:
        """The line of the worker's output that says most about how it died."""
        try:
            with open(self.log_path, errors="replace") as f:
                lines = [line.strip() for line in f.read()[-20000:].splitlines() if line.strip()]
        except OSError:
            return ""
        pattern = re.compile(r"error|assert|fatal|abort|terminate|segmentation|signal", re.IGNORECASE)
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


class _Pool:
    """Worker processes running the requests of task coroutines (a model, then its minimization)."""

    def __init__(self, jobs: int, settings: dict[str, Any], tmp: str, timeout_s: float) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.settings, self.tmp, self.timeout_s = settings, tmp, timeout_s
        self.workers = [self._start(i) for i in range(jobs)]
        self.restarts = 0
        self._ids = itertools.count()

    def _start(self, i: int) -> _Worker:
        return _Worker(self.ctx, self.settings, os.path.join(self.tmp, f"worker{i}.log"))

    def close(self) -> None:
        for w in self.workers:
            w.stop()

    def run(self, tasks: Iterator[Task]) -> None:
        """Runs every task to its end; a task's requests run one at a time, on any worker."""
        waiting: collections.deque[tuple[Task, Request]] = collections.deque()
        more = True

        def advance(task: Task, value: Result | None) -> None:
            try:
                request = task.send(value) if value is not None else next(task)
            except StopIteration:
                return
            waiting.append((task, request))

        while True:
            for w in self.workers:
                if not w.ready or w.task is not None:
                    continue
                while not waiting and more:
                    task = next(tasks, None)
                    if task is None:
                        more = False
                    else:
                        advance(task, None)
                if not waiting:
                    break
                task, request = waiting.popleft()
                w.task, w.task_id, w.program, w.phase = task, next(self._ids), None, "sent"
                w.conn.send((w.task_id, request))
                w.deadline = time.monotonic() + self.timeout_s
            if not waiting and not more and all(w.task is None for w in self.workers):
                return
            deadlines = [w.deadline for w in self.workers if w.deadline is not None]
            wait_s = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready = wait([w.conn for w in self.workers], wait_s)
            for i, w in enumerate(list(self.workers)):
                if w.conn in ready:
                    self._receive(i, advance)
                elif w.deadline is not None and time.monotonic() > w.deadline:
                    self._replace(i, "timeout", advance)

    def _receive(self, i: int, advance: Callable[[Task, Result | None], None]) -> None:
        w = self.workers[i]
        try:
            while w.conn.poll():
                msg = w.conn.recv()
                if msg[0] == "ready":
                    w.ready, w.deadline = True, None
                elif msg[1] != w.task_id:
                    continue
                elif msg[0] == "phase":
                    w.phase = msg[2]
                elif msg[0] == "program":
                    w.program = msg[2]
                elif msg[0] == "result":
                    task, program = w.task, w.program
                    w.task, w.deadline = None, None
                    assert task is not None
                    advance(task, Result(msg[2], msg[3], program, msg[4]))
                    if msg[5] > WORKER_RSS_LIMIT_MB:
                        w.stop()
                        self.workers[i] = self._start(i)
                    return
        except (EOFError, OSError):
            self._replace(i, "crash", advance)

    def _replace(self, i: int, why: str, advance: Callable[[Task, Result | None], None]) -> None:
        w = self.workers[i]
        exitcode = w.stop(kill=why == "timeout")
        if not w.ready:
            raise RuntimeError(f"fuzz worker failed to start ({_signal_name(exitcode)}): {w.log_tail()}")
        self.restarts += 1
        self.workers[i] = self._start(i)
        if w.task is None:
            return
        if why == "timeout":
            result = Result("timeout", f"no result after {self.timeout_s:.0f} s ({w.phase})", w.program,
                            self.timeout_s)
        elif w.phase in ("generate", "eager"):
            # eager PyTorch (or the generator) died, not poptorch
            result = Result("eager_error" if w.phase == "eager" else "fuzzer_error",
                            f"{_signal_name(exitcode)} in {w.phase}: {w.log_tail()}", w.program)
        else:
            result = Result("crash", f"{_signal_name(exitcode)} ({w.phase}): {w.log_tail()}", w.program)
        advance(w.task, result)


# ---------------------------------------------------------------------------
# Minimization


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


# ---------------------------------------------------------------------------
# The run


def _reproducer(result: Result, original_ops: int, minimized: bool) -> str:
    assert result.program is not None
    program = result.program
    how = f"minimized from {original_ops} statements" if minimized else "not minimized"
    header = (f'"""poptorch fuzz reproducer: seed {program.spec.seed}, model {program.spec.index} '
              f'({len(program.spec.stmts)} statements, {how}).\n\n'
              f"{result.outcome}: {result.detail}\n\n"
              "Run it with python; the exit status is 1 while the failure reproduces.\n"
              '"""\n\nfrom __future__ import annotations\n\nimport sys\nfrom typing import Any, Callable\n\n'
              "import poptorch\n")
    main = ("\n\nif __name__ == \"__main__\":\n"
            "    outcome, detail = check_model(FuzzModel(), make_inputs)\n"
            "    print(outcome, detail)\n"
            f"    sys.exit(1 if outcome in {FAILURES!r} else 0)\n")
    return header + program.source + "\n\n" + CHECK_SOURCE + main


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
