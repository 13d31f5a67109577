"""The op table: the single source of truth for what poptorch captures and lowers.

Two lists live here:

* ``ELEMENTWISE``: dialect ops that are pure elementwise functions, given by
  their scalar formula.  The generator turns each into a TableGen op
  definition and a case of the scalar-formula switch used by the linalg
  lowering.  Adding an elementwise op is one entry here.
* ``ATEN``: one entry per aten operator overload that poptorch captures.  It
  names the dialect op the aten op becomes and how each dialect operand or
  attribute is taken from the aten arguments.  The generator checks every
  entry against torch's own schemas, and writes the C++ capture table and the
  coverage table in ``docs/ops.md``.

Formulas are C++ expressions over ``b`` (a ``ScalarBuilder``: ``b.add``,
``b.mul``, ``b.exp``, ``b.lt``, ``b.select``, ``b.cst(1.0)``, ...), the scalar
operands ``x`` / ``y`` / ``z`` (in operand order) and, for attributes,
``b.attrF("name")`` / ``b.attrS("name")``.  They are evaluated in the compute
element type of the operands (f16/bf16 in f32); comparisons return i1.

Regenerate after editing: ``make generate`` (CI checks nothing changes).
"""

from __future__ import annotations

from dataclasses import dataclass, field


# --------------------------------------------------------------------------
# Elementwise dialect ops
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Elementwise:
    name: str  # dialect op mnemonic (poptorch.<name>)
    arity: int
    formula: str
    summary: str
    float_only: bool = False  # formula only defined for floating point
    # (name, kind[, default]): kind is F64Attr, I64Attr, StrAttr or OptF64Attr
    # (absent when the aten argument is None); formulas read them with
    # b.attrF / b.attrI / b.attrS / b.hasAttr.
    attrs: tuple[tuple[str, ...], ...] = ()
    int_only: bool = False  # formula only defined for integers and bool (bitwise ops)
    # The result element type: "same" as the (promoted) operands, or "bool"
    # (i1) whatever the operands are (comparisons, logical ops).
    result: str = "same"
    # Operand names; by default `input` (unary) or `lhs`, `rhs` (binary).
    operands: tuple[str, ...] = ()
    # Operands that are always bool (i1), outside the operands' promoted
    # element type (the condition of `where`); the formula sees them as i1.
    bool_operands: tuple[str, ...] = ()
    # f16/bf16 compute in their own type, rounding after every step, where
    # eager's kernel does (instead of once from f32).
    reduced_steps: bool = False

    def operand_names(self) -> tuple[str, ...]:
        if self.operands:
            assert len(self.operands) == self.arity, self.name
            return self.operands
        return ("input",) if self.arity == 1 else ("lhs", "rhs")


RESULT_KINDS = ("same", "bool")


def _compare(name: str, formula: str, summary: str) -> Elementwise:
    return Elementwise(name, 2, formula, summary, result="bool")


def _math(name: str, formula: str, summary: str, arity: int = 1,
          operands: tuple[str, ...] = (), attrs: tuple[tuple[str, ...], ...] = (),
          reduced_steps: bool = False) -> Elementwise:
    """A floating-point function (integer inputs are promoted by the capture)."""
    return Elementwise(name, arity, formula, summary, float_only=True, operands=operands,
                       attrs=attrs, reduced_steps=reduced_steps)


ELEMENTWISE: list[Elementwise] = [
    # unary
    Elementwise("neg", 1, "b.neg(x)", "negation"),
    Elementwise("abs", 1, "b.abs(x)", "absolute value"),
    Elementwise("relu", 1, "b.max(x, b.cst(0.0))", "rectified linear unit"),
    Elementwise("exp", 1, "b.exp(x)", "exponential", float_only=True),
    Elementwise("log", 1, "b.log(x)", "natural logarithm", float_only=True),
    Elementwise("sqrt", 1, "b.sqrt(x)", "square root", float_only=True),
    Elementwise("rsqrt", 1, "b.rsqrt(x)", "reciprocal square root", float_only=True),
    Elementwise("reciprocal", 1, "b.div(b.cst(1.0), x)", "1 / x", float_only=True),
    Elementwise("erf", 1, "b.erf(x)", "error function", float_only=True),
    Elementwise("tanh", 1, "b.tanh(x)", "hyperbolic tangent", float_only=True),
    Elementwise(
        "sigmoid",
        1,
        "b.div(b.cst(1.0), b.add(b.cst(1.0), b.exp(b.neg(x))))",
        "logistic sigmoid",
        float_only=True,
    ),
    Elementwise(
        "silu",
        1,
        "b.div(x, b.add(b.cst(1.0), b.exp(b.neg(x))))",
        "x * sigmoid(x)",
        float_only=True,
    ),
    Elementwise(
        "gelu",
        1,
        'b.attrS("approximate") == "tanh" ? '
        "b.mul(b.mul(b.cst(0.5), x), b.add(b.cst(1.0), b.tanh(b.mul(b.cst(0.7978845608028654), "
        "b.add(x, b.mul(b.cst(0.044715), b.mul(x, b.mul(x, x)))))))) : "
        "b.mul(b.mul(b.cst(0.5), x), b.add(b.cst(1.0), b.erf(b.mul(x, b.cst(0.7071067811865476)))))",
        "Gaussian error linear unit (approximate = none | tanh)",
        float_only=True,
        attrs=(("approximate", "StrAttr"),),
    ),
    *[_math(n, f"b.{n}(x)", summary) for n, summary in (
        ("sin", "sine"), ("cos", "cosine"), ("tan", "tangent"), ("asin", "arcsine"),
        ("acos", "arccosine"), ("atan", "arctangent"), ("sinh", "hyperbolic sine"),
        ("cosh", "hyperbolic cosine"), ("asinh", "inverse hyperbolic sine"),
        ("acosh", "inverse hyperbolic cosine"), ("atanh", "inverse hyperbolic tangent"),
        ("exp2", "2 ** x"), ("expm1", "exp(x) - 1, accurate near 0"),
        ("log2", "base-2 logarithm"), ("log10", "base-10 logarithm"),
        ("log1p", "log(1 + x), accurate near 0"), ("erfc", "complementary error function"),
        ("erfinv", "inverse error function"), ("lgamma", "log |Gamma(x)|"),
        ("digamma", "d/dx log Gamma(x)"), ("i0", "modified Bessel function I0"),
        ("i1", "modified Bessel function I1"),
        ("i1e", "exponentially scaled I1: exp(-|x|) I1(x)"),
        ("ndtri", "inverse of the standard normal CDF"))],
    _math("i0e", "b.i0e(x)", "exponentially scaled I0: exp(-|x|) I0(x)", reduced_steps=True),
    # sin(x) / x, with eager's Taylor series below |x| = 0.5 and 0 at +-inf.
    _math("spherical_bessel_j0",
          "b.select(b.eq(b.abs(x), b.cst(INFINITY)), b.cst(0.0), "
          "b.select(b.lt(b.abs(x), b.cst(0.5)), "
          "b.add(b.cst(1.0), b.mul(b.mul(x, x), b.add(b.cst(-1.0 / 6.0), b.mul(b.mul(x, x), "
          "b.add(b.cst(1.0 / 120.0), b.mul(b.mul(x, x), b.add(b.cst(-1.0 / 5040.0), "
          "b.mul(b.mul(x, x), b.add(b.cst(1.0 / 362880.0), b.mul(b.mul(x, x), "
          "b.add(b.cst(-1.0 / 39916800.0), b.mul(b.mul(x, x), b.cst(1.0 / 6227020800.0))))))"
          "))))))), b.div(b.sin(x), x)))",
          "spherical Bessel function of the first kind of order 0"),
    _math("sinc", "b.select(b.eq(x, b.cst(0.0)), b.cst(1.0), "
          "b.div(b.sin(b.mul(x, b.cst(M_PI))), b.mul(x, b.cst(M_PI))))",
          "sin(pi x) / (pi x), 1 at 0"),
    _math("deg2rad", "b.mul(x, b.cst(M_PI / 180.0))", "degrees to radians"),
    _math("rad2deg", "b.mul(x, b.cst(180.0 / M_PI))", "radians to degrees"),
    _math("angle", "b.select(b.isnan(x), x, b.select(b.lt(x, b.cst(0.0)), b.cst(M_PI), "
          "b.cst(0.0)))", "argument of a real number: pi for negatives, else 0"),
    _math("frac", "b.sub(x, b.trunc(x))", "x - trunc(x)"),
    _math("entr", "b.select(b.isnan(x), x, b.select(b.gt(x, b.cst(0.0)), "
          "b.neg(b.mul(x, b.log(x))), b.select(b.eq(x, b.cst(0.0)), b.cst(0.0), "
          "b.cst(-INFINITY))))", "-x log x (0 at 0, -inf for x < 0)"),
    _math("logit", 'b.log(b.div(b.hasAttr("eps") ? b.min(b.max(x, b.cst(b.attrF("eps"))), '
          'b.cst(1.0 - b.attrF("eps"))) : x, b.sub(b.cst(1.0), b.hasAttr("eps") ? '
          'b.min(b.max(x, b.cst(b.attrF("eps"))), b.cst(1.0 - b.attrF("eps"))) : x)))',
          "log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given",
          attrs=(("eps", "OptF64Attr"),), reduced_steps=True),
    _math("round_decimals", 'b.attrI("decimals") >= 0 ? '
          'b.div(b.round(b.mul(x, b.cst(std::pow(10.0, b.attrI("decimals"))))), '
          'b.cst(std::pow(10.0, b.attrI("decimals")))) : '
          'b.mul(b.round(b.div(x, b.cst(std::pow(10.0, -b.attrI("decimals"))))), '
          'b.cst(std::pow(10.0, -b.attrI("decimals"))))',
          "round half to even at `decimals` decimal digits",
          attrs=(("decimals", "I64Attr"),)),
    _math("polygamma", 'b.attrI("n") == 0 ? b.digamma(x) : b.attrI("n") == 1 ? b.trigamma(x) : '
          'b.mul(b.cst((b.attrI("n") % 2 ? 1.0 : -1.0) * std::tgamma(b.attrI("n") + 1.0)), '
          'b.zeta(b.cst(b.attrI("n") + 1.0), x))',
          "n-th derivative of digamma", attrs=(("n", "I64Attr"),)),
    _math("mvlgamma", 'b.mvlgamma(x, b.attrI("p"))', "multivariate log-gamma of dimension p",
          attrs=(("p", "I64Attr", "1"),)),
    # rounding, sign (the identity or exact on integers)
    Elementwise("floor", 1, "b.floor(x)", "round toward -inf"),
    Elementwise("ceil", 1, "b.ceil(x)", "round toward +inf"),
    Elementwise("trunc", 1, "b.trunc(x)", "round toward zero"),
    Elementwise("round", 1, "b.round(x)", "round half to even"),
    Elementwise("sign", 1, "b.sign(x)", "-1, 0 or 1 (0 for NaN)"),
    Elementwise("nan_to_num", 1,
                'b.select(b.isnan(x), b.cst(b.hasAttr("nan") ? b.attrF("nan") : 0.0), '
                'b.select(b.isposinf(x), b.hasAttr("posinf") ? b.cst(b.attrF("posinf")) : '
                'b.maxFinite(), b.select(b.isneginf(x), b.hasAttr("neginf") ? '
                'b.cst(b.attrF("neginf")) : b.lowestFinite(), x)))',
                "NaN and infinities replaced (by default with 0 and the dtype's extremes)",
                attrs=(("nan", "OptF64Attr"), ("posinf", "OptF64Attr"),
                       ("neginf", "OptF64Attr"))),
    # float predicates (false for integers)
    *[Elementwise(n, 1, f"b.{n}(x)", summary, result="bool") for n, summary in (
        ("isnan", "x is NaN"), ("isinf", "x is +-inf"), ("isposinf", "x is +inf"),
        ("isneginf", "x is -inf"), ("signbit", "the sign bit is set (-0.0 included)"))],
    # activations
    _math("elu", 'b.select(b.gt(x, b.cst(0.0)), b.mul(x, b.cst(b.attrF("scale"))), '
          'b.mul(b.expm1(b.mul(x, b.cst(b.attrF("input_scale")))), '
          'b.cst(b.attrF("alpha") * b.attrF("scale"))))',
          "x > 0 ? scale x : alpha scale (exp(input_scale x) - 1)",
          attrs=(("alpha", "F64Attr"), ("scale", "F64Attr"), ("input_scale", "F64Attr"))),
    _math("celu", 'b.select(b.gt(x, b.cst(0.0)), x, b.mul(b.expm1(b.mul(x, '
          'b.cst(1.0 / b.attrF("alpha")))), b.cst(b.attrF("alpha"))))',
          "x > 0 ? x : alpha (exp(x / alpha) - 1)", attrs=(("alpha", "F64Attr"),)),
    _math("leaky_relu", 'b.select(b.gt(x, b.cst(0.0)), x, b.mul(x, b.cst(b.attrF("negative_slope"))))',
          "x > 0 ? x : negative_slope x", attrs=(("negative_slope", "F64Attr", "0.01"),)),
    _math("hardsigmoid", "b.div(b.min(b.max(b.add(x, b.cst(3.0)), b.cst(0.0)), b.cst(6.0)), "
          "b.cst(6.0))", "min(max(x + 3, 0), 6) / 6"),
    _math("hardswish", "b.div(b.mul(x, b.min(b.max(b.add(x, b.cst(3.0)), b.cst(0.0)), "
          "b.cst(6.0))), b.cst(6.0))", "x min(max(x + 3, 0), 6) / 6"),
    _math("hardshrink", 'b.select(b.bitAnd(b.ge(x, b.cst(-b.attrF("lambd"))), '
          'b.le(x, b.cst(b.attrF("lambd")))), b.cst(0.0), x)',
          "|x| <= lambd ? 0 : x", attrs=(("lambd", "F64Attr", "0.5"),)),
    _math("softshrink", 'b.select(b.gt(x, b.cst(b.attrF("lambd"))), '
          'b.sub(x, b.cst(b.attrF("lambd"))), b.select(b.lt(x, b.cst(-b.attrF("lambd"))), '
          'b.add(x, b.cst(b.attrF("lambd"))), b.mul(x, b.cst(0.0))))',
          "x - lambd, x + lambd or 0 (NaN stays NaN)", attrs=(("lambd", "F64Attr", "0.5"),)),
    _math("softplus", 'b.select(b.gt(b.mul(x, b.cst(b.attrF("beta"))), b.cst(b.attrF("threshold"))), '
          'x, b.div(b.log1p(b.exp(b.mul(x, b.cst(b.attrF("beta"))))), b.cst(b.attrF("beta"))))',
          "log(1 + exp(beta x)) / beta, x above the threshold",
          attrs=(("beta", "F64Attr"), ("threshold", "F64Attr", "20.0"))),
    _math("mish", "b.mul(x, b.tanh(b.log1p(b.exp(x))))", "x tanh(softplus(x))"),
    _math("log_sigmoid", "b.sub(b.min(x, b.cst(0.0)), b.log1p(b.exp(b.neg(b.abs(x)))))",
          "log(sigmoid(x)), stable"),
    Elementwise("threshold", 1, 'b.select(b.le(x, b.cst(b.attrF("threshold"))), '
                'b.cst(b.attrF("value")), x)', "x <= threshold ? value : x",
                attrs=(("threshold", "F64Attr", "0.0"), ("value", "F64Attr", "0.0"))),
    # binary
    Elementwise("add", 2, 'b.add(x, b.mul(y, b.cst(b.attrF("alpha"))))', "x + alpha * y",
                attrs=(("alpha", "F64Attr"),)),
    Elementwise("sub", 2, 'b.sub(x, b.mul(y, b.cst(b.attrF("alpha"))))', "x - alpha * y",
                attrs=(("alpha", "F64Attr"),)),
    Elementwise("mul", 2, "b.mul(x, y)", "x * y"),
    Elementwise("div", 2, "b.div(x, y)", "true division", float_only=True),
    Elementwise("maximum", 2, "b.max(x, y)", "elementwise maximum (NaN-propagating)"),
    Elementwise("minimum", 2, "b.min(x, y)", "elementwise minimum (NaN-propagating)"),
    Elementwise("pow", 2, "b.pow(x, y)",
                "x ** y (integers: by squaring with wrap-around; negative exponents as eager)"),
    Elementwise("div_rounded", 2,
                'b.attrS("rounding_mode") == "trunc" ? b.trunc(b.div(x, y)) : '
                'b.attrS("rounding_mode") == "floor" ? b.floorDiv(x, y) : b.div(x, y)',
                "x / y rounded toward zero (trunc), toward -inf (floor) or not at all (none)",
                attrs=(("rounding_mode", "StrAttr"),)),
    Elementwise("floor_divide", 2, "b.floorDiv(x, y)", "x / y rounded toward -inf"),
    Elementwise("fmod", 2, "b.fmod(x, y)", "remainder with the sign of x (C's fmod)"),
    Elementwise("remainder", 2, "b.remainder(x, y)",
                "remainder with the sign of y (Python's %)"),
    Elementwise("fmax", 2, "b.fmax(x, y)", "maximum ignoring NaN"),
    Elementwise("fmin", 2, "b.fmin(x, y)", "minimum ignoring NaN"),
    Elementwise("heaviside", 2, "b.select(b.eq(x, b.cst(0.0)), y, "
                "b.select(b.gt(x, b.cst(0.0)), b.cst(1.0), b.cst(0.0)))",
                "x == 0 ? y : (x > 0)"),
    Elementwise("prelu", 2, "b.select(b.gt(x, b.cst(0.0)), x, b.mul(y, x))",
                "x > 0 ? x : weight x", operands=("input", "weight")),
    _math("atan2", "b.atan2(x, y)", "atan(x / y) in the quadrant of the point (y, x)",
          arity=2),
    _math("copysign", "b.copysign(x, y)", "|x| with the sign of y", arity=2),
    _math("hypot", "b.hypot(x, y)", "sqrt(x^2 + y^2)", arity=2),
    _math("nextafter", "b.nextafter(x, y)",
          "the next value of the dtype after x toward y", arity=2),
    _math("ldexp", "b.ldexp(x, y)", "x * 2 ** y", arity=2, reduced_steps=True),
    _math("logaddexp", "b.select(b.bitAnd(b.isinf(x), b.eq(x, y)), x, b.add(b.max(x, y), "
          "b.log1p(b.exp(b.neg(b.abs(b.sub(x, y)))))))", "log(exp(x) + exp(y))", arity=2),
    _math("logaddexp2", "b.select(b.bitAnd(b.isinf(x), b.eq(x, y)), x, b.add(b.max(x, y), "
          "b.mul(b.log1p(b.exp2(b.neg(b.abs(b.sub(x, y))))), b.cst(1.0 / M_LN2))))",
          "log2(2 ** x + 2 ** y)", arity=2),
    _math("xlogy", "b.select(b.isnan(y), y, b.select(b.eq(x, b.cst(0.0)), b.cst(0.0), "
          "b.mul(x, b.log(y))))", "x log(y), 0 where x == 0 (unless y is NaN)", arity=2),
    _math("xlog1py", "b.select(b.isnan(y), y, b.select(b.eq(x, b.cst(0.0)), b.cst(0.0), "
          "b.mul(x, b.log1p(y))))", "x log(1 + y), 0 where x == 0 (unless y is NaN)",
          arity=2),
    _math("zeta", "b.zeta(x, y)", "Hurwitz zeta function", arity=2),
    Elementwise("shift_left", 2, "b.shl(x, y)", "x << y (0 past the bit width)",
                int_only=True),
    Elementwise("shift_right", 2, "b.shr(x, y)",
                "x >> y, arithmetic for signed types (sign fill past the bit width)",
                int_only=True),
    Elementwise("gcd", 2, "b.gcd(x, y)", "greatest common divisor", int_only=True),
    Elementwise("lcm", 2, "b.lcm(x, y)", "least common multiple", int_only=True),
    # ternary
    _math("lerp", "b.select(b.lt(b.abs(z), b.cst(0.5)), b.add(x, b.mul(z, b.sub(y, x))), "
          "b.sub(y, b.mul(b.sub(y, x), b.sub(b.cst(1.0), z))))",
          "x + weight (end - x), from the nearer end", arity=3,
          operands=("input", "end", "weight")),
    Elementwise("addcmul", 3, 'b.add(x, b.mul(b.mul(b.cst(b.attrF("value")), y), z))',
                "input + value tensor1 tensor2", operands=("input", "tensor1", "tensor2"),
                attrs=(("value", "F64Attr"),)),
    _math("addcdiv", 'b.add(x, b.div(b.mul(b.cst(b.attrF("value")), y), z))',
          "input + value tensor1 / tensor2", arity=3,
          operands=("input", "tensor1", "tensor2"), attrs=(("value", "F64Attr"),)),
    # comparisons: operands share the promoted type, the result is bool; every
    # ordered comparison with NaN is false, `ne` with NaN is true
    _compare("eq", "b.eq(x, y)", "x == y"),
    _compare("ne", "b.ne(x, y)", "x != y"),
    _compare("lt", "b.lt(x, y)", "x < y"),
    _compare("le", "b.le(x, y)", "x <= y"),
    _compare("gt", "b.gt(x, y)", "x > y"),
    _compare("ge", "b.ge(x, y)", "x >= y"),
    # logical: any element type in (nonzero is true, NaN included), bool out
    _compare("logical_and", "b.bitAnd(b.ne(x, b.cst(0.0)), b.ne(y, b.cst(0.0)))",
             "(x != 0) and (y != 0)"),
    _compare("logical_or", "b.bitOr(b.ne(x, b.cst(0.0)), b.ne(y, b.cst(0.0)))",
             "(x != 0) or (y != 0)"),
    _compare("logical_xor", "b.bitXor(b.ne(x, b.cst(0.0)), b.ne(y, b.cst(0.0)))",
             "(x != 0) xor (y != 0)"),
    Elementwise("logical_not", 1, "b.eq(x, b.cst(0.0))", "x == 0", result="bool"),
    Elementwise("bitwise_not", 1, "b.bitNot(x)", "~x (logical not for bool)", int_only=True),
    Elementwise("bitwise_and", 2, "b.bitAnd(x, y)", "x & y", int_only=True),
    Elementwise("bitwise_or", 2, "b.bitOr(x, y)", "x | y", int_only=True),
    Elementwise("bitwise_xor", 2, "b.bitXor(x, y)", "x ^ y", int_only=True),
    # ---- search-stats-random-special (round 2)
    *[_math(f"{p}chebyshev_polynomial_{k}", f'b.orthogonalPolynomial("{p}chebyshev_{k}", x, y)',
            f"{'shifted ' if p else ''}Chebyshev polynomial of the {kind} kind of degree n",
            arity=2, operands=("input", "n"))
      for p in ("", "shifted_")
      for k, kind in (("t", "first"), ("u", "second"), ("v", "third"), ("w", "fourth"))],
    *[_math(n, f'b.orthogonalPolynomial("{kind}", x, y)', summary, arity=2,
            operands=("input", "n"))
      for n, kind, summary in (
          ("hermite_polynomial_h", "hermite_h", "physicists' Hermite polynomial of degree n"),
          ("hermite_polynomial_he", "hermite_he", "probabilists' Hermite polynomial of degree n"),
          ("laguerre_polynomial_l", "laguerre_l", "Laguerre polynomial of degree n"),
          ("legendre_polynomial_p", "legendre_p", "Legendre polynomial of degree n"))],
    _math("erfcx", "b.erfcx(x)", "scaled complementary error function exp(x^2) erfc(x)"),
    _math("log_ndtr", "b.logNdtr(x)", "log of the standard normal CDF"),
    # ---- end search-stats-random-special (round 2)
    # selection
    Elementwise("where", 3, "b.select(x, y, z)", "condition ? lhs : rhs",
                operands=("condition", "lhs", "rhs"), bool_operands=("condition",)),
]


# --------------------------------------------------------------------------
# Argument converters for aten entries
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Arg:
    kind: str  # see KINDS
    aten: str  # aten argument name
    extra: str = ""  # kind-specific detail (e.g. the default for an empty list)


KINDS = {
    "tensor": "operand from a tensor argument",
    "opt_tensor": "optional operand from a `Tensor?` argument",
    "tensor_list": "variadic operands from a `Tensor[]` argument",
    "scalar": "operand: a 0-d constant from a `Scalar` argument",
    "opt_scalar": "optional operand: a 0-d constant from a `Scalar?` argument",
    "mask": "operand from a bool tensor argument (a condition): never promoted",
    "f64": "F64Attr from a float/Scalar argument",
    "i64": "I64Attr from an int argument",
    "bool": "BoolAttr from a bool argument",
    "str": "StrAttr from a str argument",
    "ints": "DenseI64ArrayAttr from an int[] argument (extra: aten arg to copy when empty)",
    "dim": "I64Attr: a dimension, normalised against the rank of the first operand; None "
           "leaves the attribute out",
    "dims": "DenseI64ArrayAttr: dimensions (a list or one int), normalised (extra `all`: None "
            "or [] means all)",
    "index": "I64Attr: a position along dimension `extra`, normalised and clamped; None is 0",
    "reversed_dims": "DenseI64ArrayAttr: the dimensions of the first operand, reversed",
    "random_state": "operand: the program's random state [seed, calls], plus a `stream` I64Attr "
                    "numbering the random ops",
    "const": "operand: a 0-d constant `extra` in the operand dtype (no aten argument)",
    "indices": "operand: integer positions along dim `extra` of the first operand (all its "
               "elements when empty); constant ones are range-checked at trace time",
    "lit_str": "StrAttr with the fixed value `extra` (no aten argument)",
    "lit_bool": "BoolAttr with the fixed value `extra` (no aten argument)",
    "index_list": "variadic operands from a `Tensor?[]` of indices, plus DenseI64ArrayAttr "
                  "`extra`: the input dims they index; constant bool masks become their "
                  "nonzero positions",
}


def T(name: str) -> Arg:
    return Arg("tensor", name)


def OptT(name: str) -> Arg:
    return Arg("opt_tensor", name)


def TList(name: str) -> Arg:
    return Arg("tensor_list", name)


def Scalar(name: str) -> Arg:
    return Arg("scalar", name)


def OptScalar(name: str) -> Arg:
    return Arg("opt_scalar", name)


def Mask(name: str) -> Arg:
    return Arg("mask", name)


def F(name: str) -> Arg:
    return Arg("f64", name)


def I(name: str) -> Arg:  # noqa: E743 (the table reads T, F, I, B)
    return Arg("i64", name)


def B(name: str) -> Arg:
    return Arg("bool", name)


def Str(name: str) -> Arg:
    return Arg("str", name)


def Ints(name: str, empty_means: str = "") -> Arg:
    return Arg("ints", name, empty_means)


def Dim(name: str) -> Arg:
    return Arg("dim", name)


def Dims(name: str, empty_means_all: bool = False) -> Arg:
    return Arg("dims", name, "all" if empty_means_all else "")


def Index(name: str, dim_arg: str) -> Arg:
    return Arg("index", name, dim_arg)


def Const(value: str) -> Arg:
    return Arg("const", "", value)


def Idx(name: str, dim_arg: str = "") -> Arg:
    return Arg("indices", name, dim_arg)


def IndexList(name: str, dims_attr: str = "dims") -> Arg:
    return Arg("index_list", name, dims_attr)


def LitStr(value: str) -> Arg:
    return Arg("lit_str", "", value)


def LitBool(value: bool) -> Arg:
    return Arg("lit_bool", "", "true" if value else "false")


# Type promotion applied to tensor/scalar operands before the dialect op:
#   "none"   operands are passed through unchanged
#   "result" operands are cast to the result dtype (arithmetic ops)
#   "common" operands are cast to their common dtype, `torch.result_type` of
#            the tensor and scalar arguments (comparisons: the result is bool)
# `mask` operands are never promoted.
PROMOTE_MODES = ("none", "result", "common")


@dataclass(frozen=True)
class Aten:
    schema: str  # "name" or "name.overload" (without the aten:: prefix)
    op: str  # dialect op mnemonic, or "" for an identity (result = first operand)
    args: dict[str, Arg] = field(default_factory=dict)  # dialect operand/attr name -> converter
    promote: str = "none"
    results: int = 1  # how many aten results the dialect op produces
    note: str = ""
    # CompositeImplicitAutograd ops are normally decomposed above the backend;
    # those that functionalization hands to the backend whole say so here.
    reaches_backend: bool = False


def _binary(schema: str, op: str, rhs: Arg, alpha: bool = False, swap: bool = False,
            rhs_name: str = "other", rounding: bool = False) -> Aten:
    """lhs = self, rhs = `rhs`; `swap` for the Scalar-self overloads, whose
    `rhs` converter reads `self` and whose tensor operand is `rhs_name`."""
    if swap:
        args = {"lhs": rhs, "rhs": T(rhs_name)} if rhs.aten == "self" else {"lhs": rhs,
                                                                           "rhs": T("self")}
    else:
        args = {"lhs": T("self"), "rhs": rhs}
    if alpha:
        args["alpha"] = F("alpha")
    if rounding:
        args["rounding_mode"] = Str("rounding_mode")
    return Aten(schema, op, args, promote="result")


def _common(schema: str, op: str, rhs: Arg | None) -> Aten:
    args = {"lhs": T("self"), "rhs": rhs} if rhs else {"input": T("self")}
    return Aten(schema, op, args, promote="common")


def _over(dim: str, keepdim: bool = True) -> dict[str, Arg]:
    """A reduction over `dim` (a list, one int, or None/[] for all dims; "": all dims)."""
    args = {"input": T("self"), "dims": Dims(dim, empty_means_all=True)}
    if keepdim and dim:
        args["keepdim"] = B("keepdim")
    return args


def _along() -> dict[str, Arg]:
    """An arg-reduction along `dim` (None: over the flattened input)."""
    return {"input": T("self"), "dim": Dim("dim"), "keepdim": B("keepdim")}


def _reduce(name: str, op: str, dim_overload: str) -> list[Aten]:
    """The full and (if any) per-dim overloads of a reduction with a `dtype` argument."""
    if not dim_overload:  # one overload with `int[1]? dim=None`
        return [Aten(name, op, _over("dim"), promote="result")]
    return [Aten(name, op, _over(""), promote="result"),
            Aten(f"{name}.{dim_overload}", op, _over("dim"), promote="result")]


def _scales(n: int) -> dict[str, Arg]:
    """The `scales*` arguments of an n-d upsample op, as the dialect's scale_d/h/w."""
    if n == 1:
        return {"scale_w": F("scales")}
    return {f"scale_{d}": F(f"scales_{d}") for d in "dhw"[3 - n:]}


ATEN: list[Aten] = [
    # ---- elementwise, unary
    *[Aten(n, n, {"input": T("self")}, promote="result")
      for n in ("neg", "abs", "relu", "exp", "log", "sqrt", "rsqrt", "reciprocal", "erf", "tanh",
                "sigmoid", "silu")],
    Aten("gelu", "gelu", {"input": T("self"), "approximate": Str("approximate")}, promote="result"),
    *[Aten(n, n, {"input": T("self")}, promote="result")
      for n in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                "atanh", "exp2", "expm1", "log2", "log10", "log1p", "erfc", "erfinv", "lgamma",
                "digamma", "i0", "sinc", "deg2rad", "rad2deg", "angle", "frac", "floor", "ceil",
                "trunc", "round", "sign", "hardsigmoid", "hardswish", "mish")],
    *[Aten(f"special_{n}", n, {"input": T("self")}, promote="result")
      for n in ("i0e", "i1", "i1e", "ndtri", "entr")],
    Aten("special_spherical_bessel_j0", "spherical_bessel_j0", {"input": T("x")},
         promote="result"),
    Aten("special_modified_bessel_i0", "i0", {"input": T("self")}, promote="result"),
    Aten("special_modified_bessel_i1", "i1", {"input": T("self")}, promote="result"),
    Aten("sgn", "sign", {"input": T("self")}, promote="result"),
    Aten("round.decimals", "round_decimals", {"input": T("self"), "decimals": I("decimals")},
         promote="result"),
    Aten("logit", "logit", {"input": T("self"), "eps": F("eps")}, promote="result"),
    Aten("polygamma", "polygamma", {"input": T("self"), "n": I("n")}, promote="result"),
    Aten("mvlgamma", "mvlgamma", {"input": T("self"), "p": I("p")}, promote="result"),
    Aten("nan_to_num", "nan_to_num", {"input": T("self"), "nan": F("nan"), "posinf": F("posinf"),
                                      "neginf": F("neginf")}, promote="result"),
    *[_common(n, n, None) for n in ("isnan", "isinf", "isposinf", "isneginf", "signbit")],
    # ---- elementwise, activations
    Aten("elu", "elu", {"input": T("self"), "alpha": F("alpha"), "scale": F("scale"),
                        "input_scale": F("input_scale")}, promote="result"),
    Aten("celu", "celu", {"input": T("self"), "alpha": F("alpha")}, promote="result"),
    Aten("leaky_relu", "leaky_relu", {"input": T("self"), "negative_slope": F("negative_slope")},
         promote="result"),
    Aten("hardshrink", "hardshrink", {"input": T("self"), "lambd": F("lambd")}, promote="result"),
    Aten("softshrink", "softshrink", {"input": T("self"), "lambd": F("lambd")}, promote="result"),
    Aten("softplus", "softplus", {"input": T("self"), "beta": F("beta"),
                                  "threshold": F("threshold")}, promote="result"),
    Aten("threshold", "threshold", {"input": T("self"), "threshold": F("threshold"),
                                    "value": F("value")}, promote="result"),
    Aten("log_sigmoid_forward", "log_sigmoid", {"input": T("self")}, promote="result",
         note="the buffer result (for the backward pass) is not computed"),
    Aten("_prelu_kernel", "prelu", {"input": T("self"), "weight": T("weight")}, promote="result"),
    # ---- elementwise, binary
    _binary("add.Tensor", "add", T("other"), alpha=True),
    _binary("add.Scalar", "add", Scalar("other"), alpha=True),
    _binary("sub.Tensor", "sub", T("other"), alpha=True),
    _binary("sub.Scalar", "sub", Scalar("other"), alpha=True),
    _binary("rsub.Tensor", "sub", T("other"), alpha=True, swap=True),
    _binary("rsub.Scalar", "sub", Scalar("other"), alpha=True, swap=True),
    _binary("mul.Tensor", "mul", T("other")),
    _binary("mul.Scalar", "mul", Scalar("other")),
    _binary("div.Tensor", "div", T("other")),
    _binary("div.Scalar", "div", Scalar("other")),
    _binary("maximum", "maximum", T("other")),
    _binary("minimum", "minimum", T("other")),
    _binary("pow.Tensor_Tensor", "pow", T("exponent")),
    _binary("pow.Tensor_Scalar", "pow", Scalar("exponent")),
    _binary("clamp_min", "maximum", Scalar("min")),
    _binary("clamp_min.Tensor", "maximum", T("min")),
    _binary("clamp_max", "minimum", Scalar("max")),
    _binary("clamp_max.Tensor", "minimum", T("max")),
    _binary("pow.Scalar", "pow", Scalar("self"), swap=True, rhs_name="exponent"),
    *[_binary(f"div.{o}_mode", "div_rounded", T("other") if o == "Tensor" else Scalar("other"),
              rounding=True) for o in ("Tensor", "Scalar")],
    _binary("floor_divide", "floor_divide", T("other")),
    _binary("floor_divide.Scalar", "floor_divide", Scalar("other")),
    *[_binary(f"{n}.{o}", n, T("other") if o == "Tensor" else Scalar("other"))
      for n in ("fmod", "remainder", "copysign") for o in ("Tensor", "Scalar")],
    _binary("remainder.Scalar_Tensor", "remainder", Scalar("self"), swap=True),
    *[_binary(n, n, T("other")) for n in ("atan2", "hypot", "nextafter", "logaddexp", "logaddexp2",
                                          "fmax", "fmin", "gcd", "lcm")],
    _binary("heaviside", "heaviside", T("values")),
    _binary("ldexp.Tensor", "ldexp", T("other")),
    _binary("xlogy.Tensor", "xlogy", T("other")),
    _binary("xlogy.Scalar_Other", "xlogy", Scalar("other")),
    _binary("xlogy.Scalar_Self", "xlogy", Scalar("self"), swap=True),
    _binary("special_xlog1py", "xlog1py", T("other")),
    _binary("special_xlog1py.other_scalar", "xlog1py", Scalar("other")),
    _binary("special_xlog1py.self_scalar", "xlog1py", Scalar("self"), swap=True),
    _binary("special_zeta", "zeta", T("other")),
    _binary("special_zeta.other_scalar", "zeta", Scalar("other")),
    _binary("special_zeta.self_scalar", "zeta", Scalar("self"), swap=True),
    *[_binary(f"{n}.{o}", op, T("other") if o == "Tensor" else Scalar("other"))
      for n, op in (("bitwise_left_shift", "shift_left"), ("bitwise_right_shift", "shift_right"),
                    ("__lshift__", "shift_left"), ("__rshift__", "shift_right"))
      for o in (("Tensor", "Tensor_Scalar") if n.startswith("bitwise") else ("Tensor", "Scalar"))],
    *[_binary(f"{n}.Scalar_Tensor", op, Scalar("self"), swap=True)
      for n, op in (("bitwise_left_shift", "shift_left"), ("bitwise_right_shift", "shift_right"))],
    Aten("lerp.Scalar", "lerp", {"input": T("self"), "end": T("end"), "weight": Scalar("weight")},
         promote="result"),
    Aten("lerp.Tensor", "lerp", {"input": T("self"), "end": T("end"), "weight": T("weight")},
         promote="result"),
    *[Aten(n, n, {"input": T("self"), "tensor1": T("tensor1"), "tensor2": T("tensor2"),
                  "value": F("value")}, promote="result") for n in ("addcmul", "addcdiv")],
    Aten("clamp", "clamp", {"input": T("self"), "min": OptScalar("min"), "max": OptScalar("max")},
         promote="result"),
    Aten("clamp.Tensor", "clamp", {"input": T("self"), "min": OptT("min"), "max": OptT("max")},
         promote="result"),
    Aten("hardtanh", "clamp", {"input": T("self"), "min": OptScalar("min_val"),
                               "max": OptScalar("max_val")}, promote="result"),
    # ---- comparisons and logical ops (bool results)
    *[_common(f"{n}.{o}", n, T("other") if o == "Tensor" else Scalar("other"))
      for n in ("eq", "ne", "lt", "le", "gt", "ge") for o in ("Tensor", "Scalar")],
    *[_common(n, n, T("other")) for n in ("logical_and", "logical_or", "logical_xor")],
    _common("logical_not", "logical_not", None),
    Aten("bitwise_not", "bitwise_not", {"input": T("self")}),
    *[_binary(f"{n}.{o}", n, T("other") if o == "Tensor" else Scalar("other"))
      for n in ("bitwise_and", "bitwise_or", "bitwise_xor") for o in ("Tensor", "Scalar")],
    # ---- selection
    Aten("where.self", "where", {"condition": Mask("condition"), "lhs": T("self"),
                                 "rhs": T("other")}, promote="result"),
    Aten("masked_fill.Scalar", "where", {"condition": Mask("mask"), "lhs": Scalar("value"),
                                         "rhs": T("self")}, promote="result"),
    Aten("masked_fill.Tensor", "where", {"condition": Mask("mask"), "lhs": T("value"),
                                         "rhs": T("self")}, promote="result"),
    # ---- casts and identities
    Aten("_to_copy", "cast", {"input": T("self")}, note="dtype conversion on the device"),
    Aten("clone", "", {"input": T("self")}),
    Aten("alias_copy", "", {"input": T("self")}),
    Aten("detach_copy", "", {"input": T("self")}),
    # ---- linear algebra
    Aten("mm", "matmul", {"lhs": T("self"), "rhs": T("mat2")}),
    Aten("bmm", "matmul", {"lhs": T("self"), "rhs": T("mat2")}),
    Aten("dot", "matmul", {"lhs": T("self"), "rhs": T("tensor")}),
    Aten("mv", "matmul", {"lhs": T("self"), "rhs": T("vec")}),
    Aten("scaled_dot_product_attention", "sdpa",
         {"query": T("query"), "key": T("key"), "value": T("value"), "mask": OptT("attn_mask"),
          "dropout_p": F("dropout_p"), "is_causal": B("is_causal"), "scale": F("scale")},
         reaches_backend=True, note="decomposed into matmul and softmax"),
    Aten("addmm", "addmm", {"input": T("self"), "lhs": T("mat1"), "rhs": T("mat2"),
                            "beta": F("beta"), "alpha": F("alpha")}),
    Aten("addmv", "addmm", {"input": T("self"), "lhs": T("mat"), "rhs": T("vec"),
                            "beta": F("beta"), "alpha": F("alpha")}),
    # ---- convolution and pooling
    Aten("convolution", "convolution",
         {"input": T("input"), "weight": T("weight"), "bias": OptT("bias"),
          "stride": Ints("stride"), "padding": Ints("padding"), "dilation": Ints("dilation"),
          "transposed": B("transposed"), "output_padding": Ints("output_padding"),
          "groups": I("groups")}),
    # torch._convolution on a backend without its own kernels (cudnn, mkldnn, ...)
    Aten("convolution_overrideable", "convolution",
         {"input": T("input"), "weight": T("weight"), "bias": OptT("bias"),
          "stride": Ints("stride"), "padding": Ints("padding"), "dilation": Ints("dilation"),
          "transposed": B("transposed"), "output_padding": Ints("output_padding"),
          "groups": I("groups")}, note="what torch._convolution calls on the ipu"),
    *[Aten(f"max_pool{n}d_with_indices", f"max_pool{n}d",
           {"input": T("self"), "kernel_size": Ints("kernel_size"),
            "stride": Ints("stride", empty_means="kernel_size"), "padding": Ints("padding"),
            "dilation": Ints("dilation"), "ceil_mode": B("ceil_mode")}, results=2,
           note="indices: the flat position of each maximum in its input plane")
      for n in (2, 3)],
    *[Aten(f"avg_pool{n}d", f"avg_pool{n}d",
           {"input": T("self"), "kernel_size": Ints("kernel_size"),
            "stride": Ints("stride", empty_means="kernel_size"), "padding": Ints("padding"),
            "ceil_mode": B("ceil_mode"), "count_include_pad": B("count_include_pad"),
            "divisor_override": I("divisor_override")})
      for n in (2, 3)],
    *[Aten(f"_adaptive_avg_pool{n}d", f"adaptive_avg_pool{n}d",
           {"input": T("self"), "output_size": Ints("output_size")}) for n in (2, 3)],
    *[Aten(f"adaptive_max_pool{n}d", f"adaptive_max_pool{n}d",
           {"input": T("self"), "output_size": Ints("output_size")}, results=2,
           note="indices: the flat position of each maximum in its input plane")
      for n in (2, 3)],
    # ---- normalisation
    Aten("native_batch_norm", "batch_norm",
         {"input": T("input"), "weight": OptT("weight"), "bias": OptT("bias"),
          "mean": OptT("running_mean"), "var": OptT("running_var"), "training": B("training"),
          "eps": F("eps")},
         note="inference (running statistics); in training mode it is decomposed (batch "
              "statistics, the saved statistics and the running statistics' update)"),
    Aten("_native_batch_norm_legit_no_training", "batch_norm",
         {"input": T("input"), "weight": OptT("weight"), "bias": OptT("bias"),
          "mean": T("running_mean"), "var": T("running_var"), "eps": F("eps")},
         note="the saved mean / invstd results, where the model uses them, come from the "
              "CPU kernel (a host kernel)"),
    Aten("native_layer_norm", "layer_norm",
         {"input": T("input"), "weight": OptT("weight"), "bias": OptT("bias"),
          "normalized_shape": Ints("normalized_shape"), "eps": F("eps")},
         note="the mean / rstd results, where the model uses them, come from the CPU kernel "
              "(a host kernel)"),
    # half_to_float: the f16 input is cast to the f32 result first (the same
    # computation: f16 softmax computes in f32)
    Aten("_softmax", "softmax", {"input": T("self"), "dim": Dim("dim")}, promote="result"),
    Aten("_log_softmax", "log_softmax", {"input": T("self"), "dim": Dim("dim")},
         promote="result"),
    Aten("_safe_softmax", "safe_softmax", {"input": T("self"), "dim": Dim("dim")},
         promote="result"),
    # ---- search-stats-random-special (round 2)
    *[Aten(f"special_{n}", n, {"input": T("x"), "n": T("n")}, promote="result")
      for n in (*[f"{p}chebyshev_polynomial_{k}" for p in ("", "shifted_") for k in "tuvw"],
                "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
                "legendre_polynomial_p")],
    *[Aten(f"special_{n}", n, {"input": T("self")}, promote="result")
      for n in ("erfcx", "log_ndtr")],
    Aten("searchsorted.Tensor", "searchsorted",
         {"sorted": T("sorted_sequence"), "values": T("self"), "right": B("right"),
          "side": Str("side")}, promote="common",
         note="`sorter` is not needed: the position is a count of smaller entries"),
    Aten("searchsorted.Scalar", "searchsorted",
         {"sorted": T("sorted_sequence"), "values": Scalar("self"), "right": B("right"),
          "side": Str("side")}, promote="common"),
    Aten("bucketize.Tensor", "searchsorted",
         {"sorted": T("boundaries"), "values": T("self"), "right": B("right")},
         promote="common"),
    Aten("bucketize.Scalar", "searchsorted",
         {"sorted": T("boundaries"), "values": Scalar("self"), "right": B("right")},
         promote="common"),
    Aten("isin.Tensor_Tensor", "isin",
         {"elements": T("elements"), "test": T("test_elements"), "invert": B("invert")},
         promote="common"),
    Aten("isin.Tensor_Scalar", "isin",
         {"elements": T("elements"), "test": Scalar("test_element"), "invert": B("invert")},
         promote="common"),
    Aten("isin.Scalar_Tensor", "isin",
         {"elements": Scalar("element"), "test": T("test_elements"), "invert": B("invert")},
         promote="common"),
    Aten("nanmedian", "nanmedian", {"input": T("self")}),
    Aten("nanmedian.dim", "nanmedian_dim", _along(), results=2),
    Aten("mode", "mode", _along(), results=2),
    Aten("histc", "histc", {"input": T("self"), "bins": I("bins"), "min": F("min"),
                            "max": F("max")}),
    Aten("frexp.Tensor", "frexp", {"input": T("self")}, results=2),
    *[Aten(s, op, {"state": Arg("random_state", ""), **args}) for s, op, args in [
        ("cauchy", "rand_cauchy", {"a": F("median"), "b": F("sigma")}),
        ("log_normal", "rand_log_normal", {"a": F("mean"), "b": F("std")}),
        ("geometric", "rand_geometric", {"a": F("p")}),
    ]],
    # ---- end search-stats-random-special (round 2)
    # ---- random numbers (self only gives the shape and dtype)
    *[Aten(s, op, {"state": Arg("random_state", ""), **args}) for s, op, args in [
        ("uniform", "rand_uniform", {"a": F("from"), "b": F("to")}),
        ("rand", "rand_uniform", {}),
        ("normal_functional", "rand_normal", {"a": F("mean"), "b": F("std")}),
        ("normal_", "rand_normal", {"a": F("mean"), "b": F("std")}),
        ("randn", "rand_normal", {}),
        ("exponential", "rand_exponential", {"a": F("lambd")}),
        ("bernoulli", "rand_bernoulli", {"p": T("self")}),
        ("bernoulli.p", "rand_bernoulli", {"a": F("p")}),
        ("bernoulli.Tensor", "rand_bernoulli", {"p": T("p")}),
        ("random.from", "rand_int", {"a": F("from"), "b": F("to")}),
        ("random.to", "rand_int", {"b": F("to")}),
        ("randint", "rand_int", {"b": F("high")}),
        ("randint.low", "rand_int", {"a": F("low"), "b": F("high")}),
    ]],
    # ---- reductions
    # promote="result": the input is cast to the result dtype first, which is
    # the `dtype` argument, or int64 for integer/bool sums and products
    *_reduce("sum", "reduce_sum", "dim_IntList"),
    *_reduce("mean", "reduce_mean", "dim"),
    *_reduce("prod", "reduce_prod", "dim_int"),
    *_reduce("nansum", "nansum", ""),
    Aten("amax", "reduce_max", _over("dim"), promote="result"),
    Aten("amin", "reduce_min", _over("dim"), promote="result"),
    Aten("max", "max", {"input": T("self")}),
    Aten("min", "min", {"input": T("self")}),
    *[Aten(f"{n}{o}", f"reduce_{n}", _over("" if not o else "dim"))
      for n in ("all", "any") for o in ("", ".dim", ".dims")],
    Aten("count_nonzero", "count_nonzero", _over("dim", keepdim=False)),
    Aten("count_nonzero.dim_IntList", "count_nonzero", _over("dim", keepdim=False)),
    Aten("logsumexp", "logsumexp", _over("dim"), promote="result"),
    Aten("aminmax", "aminmax", _over("dim"), results=2),
    Aten("_aminmax", "aminmax", _over(""), results=2),
    *[Aten(f"{n}.correction", n, {**_over("dim"), "correction": F("correction")},
           results=2 if n.endswith("mean") else 1)
      for n in ("var", "std", "var_mean", "std_mean")],
    Aten("linalg_vector_norm", "vector_norm", {**_over("dim"), "ord": F("ord")},
         promote="result"),
    Aten("norm.Scalar", "vector_norm", {**_over(""), "ord": F("p")}, promote="result"),
    Aten("norm.ScalarOpt_dtype", "vector_norm", {**_over(""), "ord": F("p")},
         promote="result"),
    Aten("norm.ScalarOpt_dim", "vector_norm", {**_over("dim"), "ord": F("p")},
         promote="result"),
    Aten("norm.ScalarOpt_dim_dtype", "vector_norm", {**_over("dim"), "ord": F("p")},
         promote="result"),
    # arg-reductions: `dim` None means over the flattened input
    *[Aten(f"{n}.dim", f"{n}_dim", _along(), results=2) for n in ("max", "min")],
    *[Aten(n, n, _along()) for n in ("argmax", "argmin")],
    Aten("median", "median", {"input": T("self")}),
    Aten("median.dim", "median_dim", _along(), results=2),
    # ---- scans
    *[Aten(n, n, {"input": T("self"), "dim": Dim("dim")}, promote="result")
      for n in ("cumsum", "cumprod", "logcumsumexp")],
    *[Aten(n, n, {"input": T("self"), "dim": Dim("dim")}, results=2)
      for n in ("cummax", "cummin")],
    # ---- sorting (stable; NaN sorts as the largest value)
    Aten("sort", "sort", {"input": T("self"), "dim": Dim("dim"),
                          "descending": B("descending")}, results=2),
    Aten("sort.stable", "sort", {"input": T("self"), "dim": Dim("dim"),
                                 "descending": B("descending")}, results=2),
    Aten("topk", "sort", {"input": T("self"), "dim": Dim("dim"), "descending": B("largest")},
         results=2, note="the k results are always sorted"),
    Aten("kthvalue", "kthvalue", {"input": T("self"), "k": I("k"), "dim": Dim("dim"),
                                  "keepdim": B("keepdim")}, results=2),
    # ---- losses (forward); reduction 0 none, 1 mean, 2 sum
    *[Aten(n, n, {"input": T("self"), "target": T("target"), "reduction": I("reduction"),
                  **extra}, promote="result")
      for n, extra in (("mse_loss", {}), ("smooth_l1_loss", {"beta": F("beta")}),
                       ("huber_loss", {"delta": F("delta")}), ("soft_margin_loss", {}))],
    Aten("binary_cross_entropy", "binary_cross_entropy",
         {"input": T("self"), "target": T("target"), "weight": OptT("weight"),
          "reduction": I("reduction")}, promote="result"),
    Aten("multi_margin_loss", "multi_margin_loss",
         {"input": T("self"), "target": T("target"), "weight": OptT("weight"),
          "reduction": I("reduction"), "p": F("p"), "margin": F("margin")}),
    *[Aten(n, "nll_loss", {"input": T("self"), "target": T("target"), "weight": OptT("weight"),
                           "reduction": I("reduction"), "ignore_index": I("ignore_index")},
           results=2)
      for n in ("nll_loss_forward", "nll_loss2d_forward")],
    Aten("multilabel_margin_loss_forward", "multilabel_margin_loss",
         {"input": T("self"), "target": T("target"), "reduction": I("reduction")}, results=2),
    # ---- data movement (functionalization turns views into their *_copy forms)
    Aten("view_copy", "reshape", {"input": T("self")}),
    Aten("_unsafe_view", "reshape", {"input": T("self")}),
    Aten("unsqueeze_copy", "reshape", {"input": T("self")}),
    Aten("squeeze_copy", "reshape", {"input": T("self")}),
    Aten("squeeze_copy.dim", "reshape", {"input": T("self")}),
    Aten("squeeze_copy.dims", "reshape", {"input": T("self")}),
    Aten("permute_copy", "permute", {"input": T("self"), "dims": Dims("dims")}),
    Aten("transpose_copy.int", "transpose", {"input": T("self"), "dim0": Dim("dim0"),
                                             "dim1": Dim("dim1")}),
    Aten("t_copy", "permute", {"input": T("self"), "dims": Arg("reversed_dims", "")}),
    Aten("expand_copy", "expand", {"input": T("self")}),
    Aten("slice_copy.Tensor", "slice", {"input": T("self"), "dim": Dim("dim"),
                                        "start": Index("start", "dim"), "step": I("step")}),
    Aten("select_copy.int", "select", {"input": T("self"), "dim": Dim("dim"),
                                       "index": Index("index", "dim")}),
    Aten("cat", "cat", {"inputs": TList("tensors"), "dim": Dim("dim")}, promote="result"),
    Aten("embedding", "embedding", {"weight": T("weight"), "indices": T("indices")}),
    Aten("narrow_copy", "slice", {"input": T("self"), "dim": Dim("dim"),
                                  "start": Index("start", "dim")}),
    Aten("unfold_copy", "unfold", {"input": T("self"), "dim": Dim("dimension"),
                                   "size": I("size"), "step": I("step")}),
    Aten("diagonal_copy", "diagonal", {"input": T("self"), "offset": I("offset"),
                                       "dim1": Dim("dim1"), "dim2": Dim("dim2")}),
    Aten("diag_embed", "diag_embed", {"input": T("self"), "offset": I("offset"),
                                      "dim1": I("dim1"), "dim2": I("dim2")}),
    # ---- reordering, tiling, padding
    Aten("flip", "flip", {"input": T("self"), "dims": Dims("dims")}),
    Aten("roll", "roll", {"input": T("self"), "shifts": Ints("shifts"), "dims": Dims("dims")}),
    Aten("repeat", "tile", {"input": T("self")}),
    Aten("channel_shuffle", "channel_shuffle", {"input": T("self"), "groups": I("groups")}),
    Aten("constant_pad_nd", "pad", {"input": T("self"), "value": Scalar("value"),
                                    "pad": Ints("pad"), "mode": LitStr("constant")},
         promote="result"),
    Aten("_pad_circular", "pad", {"input": T("self"), "pad": Ints("pad"),
                                  "mode": LitStr("circular")}, reaches_backend=True,
         note="F.pad(mode='circular'), captured whole"),
    *[Aten(f"{kind}_pad{n}d", "pad", {"input": T("self"), "pad": Ints("padding"),
                                      "mode": LitStr(mode)})
      for kind, mode in (("reflection", "reflect"), ("replication", "replicate"))
      for n in (1, 2, 3)],
    Aten("tril", "triangle", {"input": T("self"), "diagonal": I("diagonal"),
                              "upper": LitBool(False)}),
    Aten("triu", "triangle", {"input": T("self"), "diagonal": I("diagonal"),
                              "upper": LitBool(True)}),
    Aten("im2col", "im2col", {"input": T("self"), "kernel_size": Ints("kernel_size"),
                              "dilation": Ints("dilation"), "padding": Ints("padding"),
                              "stride": Ints("stride")}),
    # ---- indexing (indices computed by the model are wrapped and clamped into range;
    #      constant ones are checked at trace time)
    Aten("gather", "gather", {"input": T("self"), "index": Idx("index", "dim"),
                              "dim": Dim("dim")}),
    Aten("index_select", "index", {"input": T("self"), "indices": Idx("index", "dim"),
                                   "dims": Dims("dim")}),
    Aten("index.Tensor", "index", {"input": T("self"), "indices": IndexList("indices")},
         note="bool masks only when constant"),
    Aten("take", "take", {"input": T("self"), "index": Idx("index")}),
    Aten("scatter.src", "scatter", {"input": T("self"), "index": Idx("index", "dim"),
                                    "src": T("src"), "dim": Dim("dim")}, promote="result"),
    Aten("scatter.value", "scatter", {"input": T("self"), "index": Idx("index", "dim"),
                                      "src": Scalar("value"), "dim": Dim("dim")},
         promote="result"),
    Aten("scatter.reduce", "scatter", {"input": T("self"), "index": Idx("index", "dim"),
                                       "src": T("src"), "dim": Dim("dim"),
                                       "reduce": Str("reduce")}, promote="result"),
    Aten("scatter.value_reduce", "scatter",
         {"input": T("self"), "index": Idx("index", "dim"), "src": Scalar("value"),
          "dim": Dim("dim"), "reduce": Str("reduce")}, promote="result"),
    Aten("scatter_add", "scatter", {"input": T("self"), "index": Idx("index", "dim"),
                                    "src": T("src"), "dim": Dim("dim"),
                                    "reduce": LitStr("sum")}, promote="result"),
    Aten("scatter_reduce.two", "scatter",
         {"input": T("self"), "index": Idx("index", "dim"), "src": T("src"), "dim": Dim("dim"),
          "reduce": Str("reduce"), "include_self": B("include_self")}, promote="result"),
    Aten("index_put", "index_put", {"input": T("self"), "values": T("values"),
                                    "indices": IndexList("indices"),
                                    "accumulate": B("accumulate")}, promote="result"),
    Aten("_index_put_impl", "index_put", {"input": T("self"), "values": T("values"),
                                          "indices": IndexList("indices"),
                                          "accumulate": B("accumulate")}, promote="result"),
    Aten("index_add", "index_put", {"input": T("self"), "values": T("source"),
                                    "indices": Idx("index", "dim"), "dims": Dims("dim"),
                                    "accumulate": LitBool(True), "alpha": F("alpha")},
         promote="result"),
    Aten("index_copy", "index_put", {"input": T("self"), "values": T("source"),
                                     "indices": Idx("index", "dim"), "dims": Dims("dim")},
         promote="result"),
    Aten("index_fill.int_Scalar", "index_put",
         {"input": T("self"), "values": Scalar("value"), "indices": Idx("index", "dim"),
          "dims": Dims("dim")}, promote="result"),
    Aten("index_fill.int_Tensor", "index_put",
         {"input": T("self"), "values": T("value"), "indices": Idx("index", "dim"),
          "dims": Dims("dim")}, promote="result"),
    Aten("masked_scatter", "masked_scatter", {"input": T("self"), "mask": Mask("mask"),
                                              "source": T("source")}, promote="result"),
    # ---- resampling (F.interpolate)
    *[Aten(f"{prefix}{n}d", "upsample",
           {"input": T("self"), "mode": LitStr(mode), **_scales(n)})
      for prefix, mode in (("upsample_nearest", "nearest"),
                           ("_upsample_nearest_exact", "nearest_exact"))
      for n in (1, 2, 3)],
    *[Aten(name, "upsample", {"input": T("self"), "mode": LitStr(mode),
                              "align_corners": B("align_corners"), **_scales(n)})
      for name, mode, n in (("upsample_linear1d", "linear", 1),
                            ("upsample_bilinear2d", "linear", 2),
                            ("upsample_trilinear3d", "linear", 3),
                            ("upsample_bicubic2d", "cubic", 2))],
    # ---- filling tensors computed by the model (constructors are evaluated on the host)
    Aten("fill.Scalar", "expand", {"input": Scalar("value")}, promote="result"),
    Aten("fill.Tensor", "expand", {"input": T("value")}, promote="result"),
    Aten("zero", "expand", {"input": Const("0")}, promote="result"),
    # ---- nn-linalg (round 2): decomposed in mlir/lib/Transforms/DecomposeNnLinalg.cpp.
    # addr, dist, rot90, block_diag, affine_grid_generator, native_group_norm,
    # pixel_(un)shuffle and split_with_sizes_copy / unbind_copy never reach the
    # backend (their CompositeExplicitAutograd kernels run above it).
    Aten("baddbmm", "addmm", {"input": T("self"), "lhs": T("batch1"), "rhs": T("batch2"),
                              "beta": F("beta"), "alpha": F("alpha")}, promote="result"),
    Aten("addbmm", "addbmm", {"input": T("self"), "lhs": T("batch1"), "rhs": T("batch2"),
                              "beta": F("beta"), "alpha": F("alpha")}, promote="result"),
    Aten("glu", "glu", {"input": T("self"), "dim": Dim("dim")}),
    Aten("trace", "trace", {"input": T("self")}, promote="result"),
    Aten("linalg_cross", "cross", {"lhs": T("self"), "rhs": T("other"), "dim": Dim("dim")},
         promote="result"),
    Aten("renorm", "renorm", {"input": T("self"), "p": F("p"), "dim": Dim("dim"),
                              "maxnorm": F("maxnorm")}),
    Aten("max_unpool2d", "max_unpool2d", {"input": T("self"), "indices": T("indices")},
         note="indices computed by the model are clamped into the output plane"),
    Aten("max_unpool3d", "max_unpool3d", {"input": T("self"), "indices": T("indices")},
         note="indices computed by the model are clamped into the output plane"),
    Aten("col2im", "col2im", {"input": T("self"), "kernel_size": Ints("kernel_size"),
                              "dilation": Ints("dilation"), "padding": Ints("padding"),
                              "stride": Ints("stride")}),
    Aten("_cdist_forward", "cdist", {"lhs": T("x1"), "rhs": T("x2"), "p": F("p")},
         note="always the direct difference (no matmul shortcut for p=2)"),
    Aten("_pdist_forward", "pdist", {"input": T("self"), "p": F("p")}),
    *[Aten(n, "embedding_bag",
           {"weight": T("weight"), "indices": T("indices"), "offsets": T("offsets"),
            "per_sample_weights": OptT("per_sample_weights"), "mode": I("mode"),
            "include_last_offset": B("include_last_offset"), "padding_idx": I("padding_idx")},
           note="offsets may be computed by the model; only the output (not offset2bag, "
                "bag_size, max_indices) is computed")
      for n in ("_embedding_bag", "_embedding_bag_forward_only")],
    Aten("_weight_norm_interface", "weight_norm", {"v": T("v"), "g": T("g"), "dim": Dim("dim")},
         results=2),
    *[Aten(f"grid_sampler_{n}d", "grid_sampler",
           {"input": T("input"), "grid": T("grid"),
            "interpolation_mode": I("interpolation_mode"), "padding_mode": I("padding_mode"),
            "align_corners": B("align_corners")},
           note="bilinear / nearest (bicubic is rejected with an error)")
      for n in (2, 3)],
    *[Aten(name, "upsample", {"input": T("self"), "mode": LitStr(mode),
                              "align_corners": B("align_corners"), **_scales(2)},
           note="antialiased; decomposed into two matmuls with constant weights")
      for name, mode in (("_upsample_bilinear2d_aa", "linear_aa"),
                         ("_upsample_bicubic2d_aa", "cubic_aa"))],
]
