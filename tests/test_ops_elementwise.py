"""Elementwise ops over every dtype, compared with eager PyTorch.

One table-driven suite: each op of ``UNARY`` / ``BINARY`` / ``TERNARY`` runs
for every dtype of ``DTYPES`` on all of ``opsuite.SHAPES`` (broadcasting
pairs for binary ops) plus, for float dtypes, the special values (NaN, +-inf,
+-0, ...) and, for integer dtypes, the extremes of the type. One compiled
program per (op, dtype) computes every shape at once (compiling dominates the
run time). A dtype that eager itself rejects for an op is skipped.

Further tests cover type promotion between dtypes (tensor-tensor,
tensor-scalar, 0-dim tensors), the scalar overloads, and in-place / out=
forms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch.nn.functional as F  # noqa: N812
from conftest import MAX_ERRORS, compiled, max_abs_error
from opsuite import DTYPES, SHAPES, dtype_id, dtypes, sample

NAN, INF = float("nan"), float("inf")
SPECIAL_FLOATS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 3.0, 1e-6, 40.0]

BINARY_SHAPES = [((2, 3), (2, 3)), ((2, 1, 4), (3, 1)), ((), (5,)), ((5,), ()), ((0,), (1,)),
                 ((), ())]
TERNARY_SHAPES = [((2, 3), (2, 3), (2, 3)), ((2, 1, 4), (3, 1), (4,)), ((), (5,), ()),
                  ((0, 2), (1,), (2,))]


@dataclass
class Op:
    name: str
    fn: Callable[..., Any]
    arity: int = 1
    # keyword arguments of opsuite.sample, per operand (one dict serves all)
    domain: tuple[dict[str, Any], ...] | dict[str, Any] = field(default_factory=dict)
    atol: float | None = None
    rtol: float | None = None
    # no special values (NaN, inf, type extremes): the op is only compared on
    # its domain (e.g. eager raises for integer division by zero)
    special: bool = True
    # zero is not a valid value of the last operand for integers (division)
    int_nonzero: bool = False
    # leave +-inf out of the special values (eager's result differs by dtype)
    no_inf: bool = False
    # eager rounds alpha * y to float16 / bfloat16 on some paths (scalar
    # loops) and not on others (vector loops): x + alpha * y may differ by an
    # ulp of the operands, which cancellation can make large relative to
    # the result
    reduced_cancels: bool = False
    # known gaps: dtype -> reason (strict xfail)
    xfail: dict[torch.dtype, str] = field(default_factory=dict)

    def sample_kwargs(self, i: int) -> dict[str, Any]:
        return self.domain[i] if isinstance(self.domain, tuple) else self.domain


def _op_id(op: Op) -> str:
    return op.name


UNARY = [
    Op("neg", torch.neg), Op("abs", torch.abs), Op("relu", torch.relu), Op("exp", torch.exp),
    Op("log", torch.log), Op("sqrt", torch.sqrt), Op("rsqrt", torch.rsqrt),
    Op("reciprocal", torch.reciprocal), Op("erf", torch.erf), Op("tanh", torch.tanh),
    Op("sigmoid", torch.sigmoid), Op("silu", F.silu),
    # eager's gelu(inf) is NaN for float32 and bfloat16, inf for the others
    Op("gelu", F.gelu, no_inf=True),
    Op("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    Op("sin", torch.sin), Op("cos", torch.cos), Op("tan", torch.tan),
    Op("asin", torch.asin, domain={"low": -1, "high": 1}),
    Op("acos", torch.acos, domain={"low": -1, "high": 1}),
    Op("atan", torch.atan), Op("sinh", torch.sinh), Op("cosh", torch.cosh),
    Op("asinh", torch.asinh), Op("acosh", torch.acosh, domain={"low": 1, "high": 5}),
    Op("atanh", torch.atanh, domain={"low": -1, "high": 1}),
    Op("exp2", torch.exp2), Op("expm1", torch.expm1), Op("log2", torch.log2),
    Op("log10", torch.log10), Op("log1p", torch.log1p, domain={"low": -1, "high": 4}),
    Op("erfc", torch.erfc), Op("erfinv", torch.erfinv, domain={"low": -1, "high": 1}),
    Op("lgamma", torch.lgamma), Op("digamma", torch.digamma),
    Op("polygamma1", lambda x: torch.polygamma(1, x)),
    Op("polygamma2", lambda x: torch.polygamma(2, x), domain={"low": 0.2, "high": 5}),
    Op("polygamma3", lambda x: torch.polygamma(3, x), domain={"low": 0.2, "high": 5}),
    Op("mvlgamma", lambda x: torch.mvlgamma(x, 3), domain={"low": 1.1, "high": 6},
       special=False),
    Op("i0", torch.i0), Op("i0e", torch.special.i0e), Op("i1", torch.special.i1),
    Op("i1e", torch.special.i1e), Op("ndtri", torch.special.ndtri, domain={"low": 0, "high": 1}),
    Op("entr", torch.special.entr), Op("sinc", torch.sinc), Op("deg2rad", torch.deg2rad),
    Op("rad2deg", torch.rad2deg), Op("angle", torch.angle), Op("frac", torch.frac),
    Op("floor", torch.floor), Op("ceil", torch.ceil), Op("trunc", torch.trunc),
    Op("round", torch.round), Op("round_2", lambda x: torch.round(x * 17, decimals=2)),
    Op("round_m1", lambda x: torch.round(x * 77, decimals=-1)),
    Op("sign", torch.sign), Op("sgn", torch.sgn), Op("signbit", torch.signbit),
    Op("isnan", torch.isnan), Op("isinf", torch.isinf), Op("isposinf", torch.isposinf),
    Op("isneginf", torch.isneginf), Op("isfinite", torch.isfinite),
    Op("nan_to_num", torch.nan_to_num),
    Op("nan_to_num_args", lambda x: torch.nan_to_num(x, nan=1.5, posinf=100.0, neginf=-7.0)),
    Op("logit", torch.logit, domain={"low": 0, "high": 1}),
    Op("logit_eps", lambda x: torch.logit(x, eps=0.1)),
    Op("logical_not", torch.logical_not), Op("bitwise_not", torch.bitwise_not),
    Op("square", torch.square),
    Op("elu", lambda x: F.elu(x, alpha=1.5)), Op("celu", lambda x: F.celu(x, alpha=0.7)),
    Op("selu", F.selu), Op("leaky_relu", lambda x: F.leaky_relu(x, 0.2)),
    Op("hardsigmoid", F.hardsigmoid), Op("hardswish", F.hardswish), Op("mish", F.mish),
    Op("hardshrink", F.hardshrink), Op("softshrink", lambda x: F.softshrink(x, 0.7)),
    Op("softplus", lambda x: F.softplus(x, beta=2, threshold=3)),
    Op("threshold", lambda x: F.threshold(x, 0.5, -2)), Op("logsigmoid", F.logsigmoid),
    Op("relu6", F.relu6), Op("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.7)),
]

BINARY = [
    Op("add", torch.add, 2),
    Op("add_alpha", lambda x, y: torch.add(x, y, alpha=3), 2, reduced_cancels=True),
    Op("sub", torch.sub, 2), Op("mul", torch.mul, 2), Op("div", torch.div, 2),
    Op("rsub", lambda x, y: torch.rsub(x, y, alpha=3), 2, reduced_cancels=True),
    Op("maximum", torch.maximum, 2), Op("minimum", torch.minimum, 2),
    Op("fmax", torch.fmax, 2), Op("fmin", torch.fmin, 2),
    Op("pow", torch.pow, 2, domain=({}, {"low": 0, "high": 4})),
    Op("float_power", torch.float_power, 2, domain=({}, {"low": 0, "high": 4})),
    *[Op(n, getattr(torch, n), 2) for n in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[Op(n, getattr(torch, n), 2) for n in ("logical_and", "logical_or", "logical_xor",
                                            "bitwise_and", "bitwise_or", "bitwise_xor")],
    Op("atan2", torch.atan2, 2), Op("copysign", torch.copysign, 2),
    Op("hypot", torch.hypot, 2), Op("nextafter", torch.nextafter, 2),
    Op("logaddexp", torch.logaddexp, 2), Op("logaddexp2", torch.logaddexp2, 2),
    Op("xlogy", torch.xlogy, 2, domain=({}, {"low": 0, "high": 4})),
    Op("xlog1py", torch.special.xlog1py, 2, domain=({}, {"low": -1, "high": 4})),
    Op("zeta", torch.special.zeta, 2, domain=({"low": 1, "high": 6}, {"low": 0.5, "high": 4})),
    Op("ldexp", torch.ldexp, 2, domain=({}, {"low": -4, "high": 4})),
    Op("heaviside", torch.heaviside, 2),
    Op("fmod", torch.fmod, 2, int_nonzero=True),
    Op("remainder", torch.remainder, 2, int_nonzero=True),
    Op("floor_divide", torch.floor_divide, 2, int_nonzero=True),
    Op("div_trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc"), 2, int_nonzero=True),
    Op("div_floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), 2, int_nonzero=True),
    Op("shift_left", torch.bitwise_left_shift, 2, domain=({}, {"low": -2, "high": 70})),
    Op("shift_right", torch.bitwise_right_shift, 2, domain=({}, {"low": -2, "high": 70})),
    Op("lshift_op", lambda x, y: x << y, 2, domain=({}, {"low": 0, "high": 9})),
    Op("rshift_op", lambda x, y: x >> y, 2, domain=({}, {"low": 0, "high": 9})),
    Op("gcd", torch.gcd, 2),
    # eager traps (SIGFPE) on lcm(INT_MIN, ...): no type extremes
    Op("lcm", torch.lcm, 2, domain={"low": -30, "high": 30}, special=False),
    Op("prelu", lambda x, w: torch._prelu_kernel(x, w), 2),
    Op("clamp_min", torch.clamp_min, 2), Op("clamp_max", torch.clamp_max, 2),
]

TERNARY = [
    Op("lerp", torch.lerp, 3),
    Op("lerp_scalar", lambda x, y, z: torch.lerp(x, y, 0.3), 3,
       xfail=dict.fromkeys((torch.float16, torch.bfloat16),
                           "the Scalar weight is rounded to the tensor's dtype at capture; "
                           "eager keeps it in float32")),
    Op("addcmul", lambda x, y, z: torch.addcmul(x, y, z, value=2), 3),
    Op("addcdiv", lambda x, y, z: torch.addcdiv(x, y, z, value=0.5), 3,
       domain=({}, {}, {"nonzero": True})),
    Op("where", lambda c, x, y: torch.where(c > 0, x, y), 3),
    Op("clamp", lambda x, lo, hi: torch.clamp(x, lo, hi), 3),
    Op("masked_fill", lambda x, m, v: x.masked_fill(m > 0, 2), 3),
]


def _special(dtype: torch.dtype) -> torch.Tensor | None:
    """NaN, infinities and friends for floats, the extremes for integers."""
    if dtype.is_floating_point:
        return torch.tensor(SPECIAL_FLOATS, dtype=dtype)
    if dtype == torch.bool:
        return None
    info = torch.iinfo(dtype)
    return torch.tensor(sorted({info.min, info.min + 1, -1, 0, 1, 2, 7, info.max - 1, info.max}
                               - ({-1} if info.min == 0 else set())), dtype=dtype)


def _nonzero(t: torch.Tensor) -> torch.Tensor:
    return torch.where(t == 0, torch.ones((), dtype=t.dtype), t)


def _inputs(op: Op, dtype: torch.dtype) -> list[tuple[torch.Tensor, ...]]:
    """Argument tuples: every shape (combination), then the special values."""
    shape_sets = {1: [(s,) for s in SHAPES], 2: BINARY_SHAPES, 3: TERNARY_SHAPES}[op.arity]
    cases = []
    for shapes in shape_sets:
        args = [sample(s, dtype, **op.sample_kwargs(i)) for i, s in enumerate(shapes)]
        cases.append(tuple(args))
    special = _special(dtype)
    if special is not None and op.no_inf and dtype.is_floating_point:
        special = special[~special.isinf()]
    if op.special and special is not None:
        n = special.numel()
        if op.arity == 1:
            cases.append((special,))
        else:
            # every pair of special values; a third operand from the domain
            pair = (special.repeat_interleave(n), special.repeat(n))
            extra = [sample((n * n,), dtype, **op.sample_kwargs(i)) for i in range(2, op.arity)]
            cases.append((*pair, *extra))
    if op.int_nonzero and not dtype.is_floating_point:
        cases = [(*c[:-1], _nonzero(c[-1])) for c in cases]
        if dtype != torch.bool:
            # eager's INT_MIN / -1 traps (SIGFPE) for int32 and int64
            low = torch.iinfo(dtype).min
            cases = [(torch.where((x == low) & (y == -1), low + 1, x), y) for x, y in cases]
    return cases


def _run_suite(op: Op, dtype: torch.dtype) -> None:
    if dtype in op.xfail:  # strict: a pass is reported as a failure
        try:
            _check_suite(op, dtype)
        except AssertionError:
            pytest.xfail(op.xfail[dtype])
        pytest.fail(f"XPASS(strict): {op.xfail[dtype]}")
    _check_suite(op, dtype)


def _check_suite(op: Op, dtype: torch.dtype) -> None:
    cases = _inputs(op, dtype)
    try:
        with torch.no_grad():
            for c in cases:
                op.fn(*c)
    except (RuntimeError, TypeError, NotImplementedError) as e:
        pytest.skip(f"eager rejects {op.name} on {dtype_id(dtype)}: {str(e).splitlines()[0]}")

    def program(*flat: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(op.fn(*flat[i:i + op.arity]) for i in range(0, len(flat), op.arity))

    flat = [t for c in cases for t in c]
    with torch.no_grad():
        expected = program(*flat)
    actual = compiled(program, *flat)
    kw = {} if op.atol is None else {"atol": op.atol, "rtol": op.rtol or 0}
    if op.reduced_cancels and dtype in (torch.float16, torch.bfloat16):
        # one ulp of operands up to 16 in magnitude
        kw = {"atol": 16 * torch.finfo(dtype).eps, "rtol": 2 * torch.finfo(dtype).eps}
    for c, a, e in zip(cases, actual, expected, strict=True):
        try:
            torch.testing.assert_close(a, e, equal_nan=True, **kw)
        except AssertionError as err:
            raise AssertionError(f"{op.name}{tuple(t.shape for t in c)}: {err}\n"
                                 f"inputs: {c}\nexpected: {e}\nactual: {a}") from None
    MAX_ERRORS[f"elementwise {op.name} {dtype_id(dtype)}"] = max_abs_error(actual, expected)


@dtypes(DTYPES)
@pytest.mark.parametrize("op", UNARY, ids=_op_id)
def test_unary(op: Op, dtype: torch.dtype) -> None:
    _run_suite(op, dtype)


@dtypes(DTYPES)
@pytest.mark.parametrize("op", BINARY, ids=_op_id)
def test_binary(op: Op, dtype: torch.dtype) -> None:
    _run_suite(op, dtype)


@dtypes(DTYPES)
@pytest.mark.parametrize("op", TERNARY, ids=_op_id)
def test_ternary(op: Op, dtype: torch.dtype) -> None:
    _run_suite(op, dtype)


# ---------------------------------------------------------------- scalar overloads
SHIFT_SCALAR_FNS = (lambda x: x << 2, lambda x: x >> 1)


@dtypes(DTYPES)
@pytest.mark.parametrize("fn", [
    lambda x: x + 300, lambda x: x * 2.5, lambda x: 3 - x, lambda x: torch.remainder(x, 3),
    lambda x: torch.remainder(7, x.abs() + 1), lambda x: torch.fmod(x, -2),
    lambda x: torch.floor_divide(x, 2), lambda x: torch.div(x, 2, rounding_mode="floor"),
    lambda x: 2 ** x.abs(), lambda x: x.abs() ** 3, lambda x: torch.xlogy(x, 2.0),
    lambda x: torch.copysign(x, -1.0), *SHIFT_SCALAR_FNS,
], ids=["add300", "mul2.5", "rsub3", "rem3", "rem7_t", "fmod-2", "floordiv2", "divfloor2",
        "pow2_t", "pow3", "xlogy2", "copysign", "lshift2", "rshift1"])
def test_scalar_overloads(fn: Callable[..., Any], dtype: torch.dtype) -> None:
    x = sample((2, 3), dtype, low=-4, high=5)
    try:
        with torch.no_grad():
            expected = fn(x)
    except (RuntimeError, TypeError) as e:
        pytest.skip(f"eager rejects it: {str(e).splitlines()[0]}")
    if dtype == torch.bool and fn in (SHIFT_SCALAR_FNS):
        # eager promotes bool << int to int64, its Meta kernel (which gives
        # the capture shapes and dtypes) rejects bool: a clear error
        with pytest.raises(RuntimeError, match=r"__[lr]shift__.Scalar at .*integral dtype"):
            compiled(fn, x)
        return
    torch.testing.assert_close(compiled(fn, x), expected, equal_nan=True)


# ---------------------------------------------------------------- in-place and out=
@pytest.mark.parametrize("fn", [
    lambda x, y: x.add_(y), lambda x, y: x.floor_divide_(y.abs() + 1), lambda x, y: x.sin_(),
    lambda x, y: torch.sin(x, out=y), lambda x, y: torch.atan2(x, y, out=x),
    lambda x, y: x.lerp_(y, 0.25), lambda x, y: x.clamp_min_(0.5),
], ids=["add_", "floor_divide_", "sin_", "sin_out", "atan2_out", "lerp_", "clamp_min_"])
def test_inplace_and_out(fn: Callable[..., Any]) -> None:
    def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.clone(), y.clone()
        fn(x, y)
        return x + 2 * y

    x, y = torch.randn(2, 3), torch.randn(2, 3)
    torch.testing.assert_close(compiled(model, x, y), model(x, y))
