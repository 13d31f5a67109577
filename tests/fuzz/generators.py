"""The op generators (``gen_*``) and ``GENERATOR_LIST``, the explicit list of all generators with
their weights: elementwise ops, comparisons, reductions, matmuls, normalizations, data movement,
casts, in-place ops on intermediates, buffers updated in place, constants and clones. The indexing
generators and the index helpers are in ``indexing.py``.

Each generator picks operands among the values so far, makes its choices through the ``Chooser``
and emits statements (``Builder``, builder.py); it returns False where it does not apply.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from .indexing import (
    _broadcast,
    _index_expr,
    gen_gather,
    gen_index_add,
    gen_index_copy,
    gen_index_fill,
    gen_index_put,
    gen_index_select,
    gen_masked_fill,
    gen_scatter,
    gen_scatter_add,
)
from .spec import ALL_DTYPES, Chooser, category

if TYPE_CHECKING:
    from .builder import Builder, Var


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
