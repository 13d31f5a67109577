"""The indexing generators: ``gather``, ``index_select`` and the indexed writes (``index_add``,
``index_copy``, ``index_fill``, ``scatter``, ``scatter_add``, ``index_put``, ``masked_fill``), each on an
intermediate in place or out of place; and the helpers that make broadcast shapes, index literals
and basic-indexing expressions, which the generators of ``generators.py`` use too (the list of all
generators, ``GENERATOR_LIST``, is there).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .spec import Chooser

if TYPE_CHECKING:
    from .builder import Builder, Var


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
