"""Building a model: generators emit statements and the ``Builder`` runs each of them eagerly on the
real inputs, keeping those that eager accepts (the model's inputs are drawn by ``_gen_inputs``).
``generate(seed, index)`` makes model ``index`` of ``seed``; ``realize(spec)`` makes a model again
from an edited specification (minimization).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .generators import GENERATOR_LIST, GENERATORS
from .spec import (
    ALL_DTYPES,
    INPUT_DTYPES,
    LIMITS,
    MAX_NUMEL,
    Chooser,
    InputDef,
    ModelSpec,
    OutputSpec,
    Program,
    StmtSpec,
    category,
)

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
