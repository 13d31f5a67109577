// generated from optable/ops.py by optable/generate.py; do not edit. Regenerate with `make generate`.
// Elementwise ops of the poptorch dialect.

def Poptorch_NegOp : Poptorch_Op<"neg",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "negation";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.neg(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AbsOp : Poptorch_Op<"abs",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "absolute value";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.abs(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ReluOp : Poptorch_Op<"relu",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "rectified linear unit";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.max(x, b.cst(0.0))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ExpOp : Poptorch_Op<"exp",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "exponential";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.exp(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogOp : Poptorch_Op<"log",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "natural logarithm";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.log(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SqrtOp : Poptorch_Op<"sqrt",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "square root";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.sqrt(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_RsqrtOp : Poptorch_Op<"rsqrt",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "reciprocal square root";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.rsqrt(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ReciprocalOp : Poptorch_Op<"reciprocal",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "1 / x";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.div(b.cst(1.0), x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ErfOp : Poptorch_Op<"erf",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "error function";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.erf(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_TanhOp : Poptorch_Op<"tanh",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "hyperbolic tangent";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.tanh(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SigmoidOp : Poptorch_Op<"sigmoid",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "logistic sigmoid";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.div(b.cst(1.0), b.add(b.cst(1.0), b.exp(b.neg(x))))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SiluOp : Poptorch_Op<"silu",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x * sigmoid(x)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.div(x, b.add(b.cst(1.0), b.exp(b.neg(x))))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_GeluOp : Poptorch_Op<"gelu",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Gaussian error linear unit (approximate = none | tanh)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.attrS("approximate") == "tanh" ? b.mul(b.mul(b.cst(0.5), x), b.add(b.cst(1.0), b.tanh(b.mul(b.cst(0.7978845608028654), b.add(x, b.mul(b.cst(0.044715), b.mul(x, b.mul(x, x)))))))) : b.mul(b.mul(b.cst(0.5), x), b.add(b.cst(1.0), b.erf(b.mul(x, b.cst(0.7071067811865476)))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SinOp : Poptorch_Op<"sin",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "sine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.sin(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_CosOp : Poptorch_Op<"cos",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "cosine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.cos(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_TanOp : Poptorch_Op<"tan",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "tangent";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.tan(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AsinOp : Poptorch_Op<"asin",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "arcsine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.asin(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AcosOp : Poptorch_Op<"acos",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "arccosine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.acos(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AtanOp : Poptorch_Op<"atan",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "arctangent";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.atan(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SinhOp : Poptorch_Op<"sinh",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "hyperbolic sine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.sinh(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_CoshOp : Poptorch_Op<"cosh",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "hyperbolic cosine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.cosh(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AsinhOp : Poptorch_Op<"asinh",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "inverse hyperbolic sine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.asinh(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AcoshOp : Poptorch_Op<"acosh",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "inverse hyperbolic cosine";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.acosh(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AtanhOp : Poptorch_Op<"atanh",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "inverse hyperbolic tangent";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.atanh(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Exp2Op : Poptorch_Op<"exp2",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "2 ** x";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.exp2(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Expm1Op : Poptorch_Op<"expm1",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "exp(x) - 1, accurate near 0";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.expm1(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Log2Op : Poptorch_Op<"log2",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "base-2 logarithm";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.log2(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Log10Op : Poptorch_Op<"log10",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "base-10 logarithm";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.log10(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Log1pOp : Poptorch_Op<"log1p",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log(1 + x), accurate near 0";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.log1p(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ErfcOp : Poptorch_Op<"erfc",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "complementary error function";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.erfc(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ErfinvOp : Poptorch_Op<"erfinv",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "inverse error function";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.erfinv(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LgammaOp : Poptorch_Op<"lgamma",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log |Gamma(x)|";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.lgamma(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_DigammaOp : Poptorch_Op<"digamma",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "d/dx log Gamma(x)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.digamma(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_I0Op : Poptorch_Op<"i0",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "modified Bessel function I0";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.i0(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_I1Op : Poptorch_Op<"i1",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "modified Bessel function I1";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.i1(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_I1eOp : Poptorch_Op<"i1e",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "exponentially scaled I1: exp(-|x|) I1(x)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.i1e(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_NdtriOp : Poptorch_Op<"ndtri",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "inverse of the standard normal CDF";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.ndtri(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_I0eOp : Poptorch_Op<"i0e",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "exponentially scaled I0: exp(-|x|) I0(x)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.i0e(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SphericalBesselJ0Op : Poptorch_Op<"spherical_bessel_j0",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "spherical Bessel function of the first kind of order 0";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.eq(b.abs(x), b.cst(INFINITY)), b.cst(0.0), b.select(b.lt(b.abs(x), b.cst(0.5)), b.add(b.cst(1.0), b.mul(b.mul(x, x), b.add(b.cst(-1.0 / 6.0), b.mul(b.mul(x, x), b.add(b.cst(1.0 / 120.0), b.mul(b.mul(x, x), b.add(b.cst(-1.0 / 5040.0), b.mul(b.mul(x, x), b.add(b.cst(1.0 / 362880.0), b.mul(b.mul(x, x), b.add(b.cst(-1.0 / 39916800.0), b.mul(b.mul(x, x), b.cst(1.0 / 6227020800.0))))))))))))), b.div(b.sin(x), x)))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SincOp : Poptorch_Op<"sinc",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "sin(pi x) / (pi x), 1 at 0";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.eq(x, b.cst(0.0)), b.cst(1.0), b.div(b.sin(b.mul(x, b.cst(M_PI))), b.mul(x, b.cst(M_PI))))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Deg2radOp : Poptorch_Op<"deg2rad",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "degrees to radians";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.mul(x, b.cst(M_PI / 180.0))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Rad2degOp : Poptorch_Op<"rad2deg",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "radians to degrees";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.mul(x, b.cst(180.0 / M_PI))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AngleOp : Poptorch_Op<"angle",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "argument of a real number: pi for negatives, else 0";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.isnan(x), x, b.select(b.lt(x, b.cst(0.0)), b.cst(M_PI), b.cst(0.0)))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_FracOp : Poptorch_Op<"frac",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x - trunc(x)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.sub(x, b.trunc(x))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_EntrOp : Poptorch_Op<"entr",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "-x log x (0 at 0, -inf for x < 0)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.isnan(x), x, b.select(b.gt(x, b.cst(0.0)), b.neg(b.mul(x, b.log(x))), b.select(b.eq(x, b.cst(0.0)), b.cst(0.0), b.cst(-INFINITY))))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogitOp : Poptorch_Op<"logit",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.log(b.div(b.hasAttr("eps") ? b.min(b.max(x, b.cst(b.attrF("eps"))), b.cst(1.0 - b.attrF("eps"))) : x, b.sub(b.cst(1.0), b.hasAttr("eps") ? b.min(b.max(x, b.cst(b.attrF("eps"))), b.cst(1.0 - b.attrF("eps"))) : x)))`. }];
  let arguments = (ins Poptorch_Tensor:$input, OptionalAttr<F64Attr>:$eps);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_RoundDecimalsOp : Poptorch_Op<"round_decimals",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "round half to even at `decimals` decimal digits";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.attrI("decimals") >= 0 ? b.div(b.round(b.mul(x, b.cst(std::pow(10.0, b.attrI("decimals"))))), b.cst(std::pow(10.0, b.attrI("decimals")))) : b.mul(b.round(b.div(x, b.cst(std::pow(10.0, -b.attrI("decimals"))))), b.cst(std::pow(10.0, -b.attrI("decimals"))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<I64Attr, "0">:$decimals);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_PolygammaOp : Poptorch_Op<"polygamma",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "n-th derivative of digamma";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.attrI("n") == 0 ? b.digamma(x) : b.attrI("n") == 1 ? b.trigamma(x) : b.mul(b.cst((b.attrI("n") % 2 ? 1.0 : -1.0) * std::tgamma(b.attrI("n") + 1.0)), b.zeta(b.cst(b.attrI("n") + 1.0), x))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<I64Attr, "0">:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_MvlgammaOp : Poptorch_Op<"mvlgamma",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "multivariate log-gamma of dimension p";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.mvlgamma(x, b.attrI("p"))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$p);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_FloorOp : Poptorch_Op<"floor",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "round toward -inf";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.floor(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_CeilOp : Poptorch_Op<"ceil",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "round toward +inf";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.ceil(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_TruncOp : Poptorch_Op<"trunc",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "round toward zero";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.trunc(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_RoundOp : Poptorch_Op<"round",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "round half to even";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.round(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SignOp : Poptorch_Op<"sign",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "-1, 0 or 1 (0 for NaN)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.sign(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_NanToNumOp : Poptorch_Op<"nan_to_num",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "NaN and infinities replaced (by default with 0 and the dtype's extremes)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.select(b.isnan(x), b.cst(b.hasAttr("nan") ? b.attrF("nan") : 0.0), b.select(b.isposinf(x), b.hasAttr("posinf") ? b.cst(b.attrF("posinf")) : b.maxFinite(), b.select(b.isneginf(x), b.hasAttr("neginf") ? b.cst(b.attrF("neginf")) : b.lowestFinite(), x)))`. }];
  let arguments = (ins Poptorch_Tensor:$input, OptionalAttr<F64Attr>:$nan, OptionalAttr<F64Attr>:$posinf, OptionalAttr<F64Attr>:$neginf);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_IsnanOp : Poptorch_Op<"isnan",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x is NaN";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.isnan(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_IsinfOp : Poptorch_Op<"isinf",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x is +-inf";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.isinf(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_IsposinfOp : Poptorch_Op<"isposinf",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x is +inf";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.isposinf(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_IsneginfOp : Poptorch_Op<"isneginf",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x is -inf";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.isneginf(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SignbitOp : Poptorch_Op<"signbit",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "the sign bit is set (-0.0 included)";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.signbit(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_EluOp : Poptorch_Op<"elu",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x > 0 ? scale x : alpha scale (exp(input_scale x) - 1)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.gt(x, b.cst(0.0)), b.mul(x, b.cst(b.attrF("scale"))), b.mul(b.expm1(b.mul(x, b.cst(b.attrF("input_scale")))), b.cst(b.attrF("alpha") * b.attrF("scale"))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "1.0">:$alpha, DefaultValuedAttr<F64Attr, "1.0">:$scale, DefaultValuedAttr<F64Attr, "1.0">:$input_scale);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_CeluOp : Poptorch_Op<"celu",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x > 0 ? x : alpha (exp(x / alpha) - 1)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.gt(x, b.cst(0.0)), x, b.mul(b.expm1(b.mul(x, b.cst(1.0 / b.attrF("alpha")))), b.cst(b.attrF("alpha"))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LeakyReluOp : Poptorch_Op<"leaky_relu",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x > 0 ? x : negative_slope x";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.gt(x, b.cst(0.0)), x, b.mul(x, b.cst(b.attrF("negative_slope"))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "0.01">:$negative_slope);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_HardsigmoidOp : Poptorch_Op<"hardsigmoid",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "min(max(x + 3, 0), 6) / 6";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.div(b.min(b.max(b.add(x, b.cst(3.0)), b.cst(0.0)), b.cst(6.0)), b.cst(6.0))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_HardswishOp : Poptorch_Op<"hardswish",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x min(max(x + 3, 0), 6) / 6";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.div(b.mul(x, b.min(b.max(b.add(x, b.cst(3.0)), b.cst(0.0)), b.cst(6.0))), b.cst(6.0))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_HardshrinkOp : Poptorch_Op<"hardshrink",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "|x| <= lambd ? 0 : x";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.bitAnd(b.ge(x, b.cst(-b.attrF("lambd"))), b.le(x, b.cst(b.attrF("lambd")))), b.cst(0.0), x)`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "0.5">:$lambd);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SoftshrinkOp : Poptorch_Op<"softshrink",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x - lambd, x + lambd or 0 (NaN stays NaN)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.gt(x, b.cst(b.attrF("lambd"))), b.sub(x, b.cst(b.attrF("lambd"))), b.select(b.lt(x, b.cst(-b.attrF("lambd"))), b.add(x, b.cst(b.attrF("lambd"))), b.mul(x, b.cst(0.0))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "0.5">:$lambd);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SoftplusOp : Poptorch_Op<"softplus",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log(1 + exp(beta x)) / beta, x above the threshold";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.gt(b.mul(x, b.cst(b.attrF("beta"))), b.cst(b.attrF("threshold"))), x, b.div(b.log1p(b.exp(b.mul(x, b.cst(b.attrF("beta"))))), b.cst(b.attrF("beta"))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "1.0">:$beta, DefaultValuedAttr<F64Attr, "20.0">:$threshold);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_MishOp : Poptorch_Op<"mish",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x tanh(softplus(x))";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.mul(x, b.tanh(b.log1p(b.exp(x))))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogSigmoidOp : Poptorch_Op<"log_sigmoid",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log(sigmoid(x)), stable";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.sub(b.min(x, b.cst(0.0)), b.log1p(b.exp(b.neg(b.abs(x)))))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ThresholdOp : Poptorch_Op<"threshold",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x <= threshold ? value : x";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.select(b.le(x, b.cst(b.attrF("threshold"))), b.cst(b.attrF("value")), x)`. }];
  let arguments = (ins Poptorch_Tensor:$input, DefaultValuedAttr<F64Attr, "0.0">:$threshold, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AddOp : Poptorch_Op<"add",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x + alpha * y";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.add(x, b.mul(y, b.cst(b.attrF("alpha"))))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs, DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_SubOp : Poptorch_Op<"sub",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x - alpha * y";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.sub(x, b.mul(y, b.cst(b.attrF("alpha"))))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs, DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_MulOp : Poptorch_Op<"mul",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x * y";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.mul(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_DivOp : Poptorch_Op<"div",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "true division";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.div(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_MaximumOp : Poptorch_Op<"maximum",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "elementwise maximum (NaN-propagating)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.max(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_MinimumOp : Poptorch_Op<"minimum",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "elementwise minimum (NaN-propagating)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.min(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_PowOp : Poptorch_Op<"pow",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x ** y (integers: by squaring with wrap-around; negative exponents as eager)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.pow(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_DivRoundedOp : Poptorch_Op<"div_rounded",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x / y rounded toward zero (trunc), toward -inf (floor) or not at all (none)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.attrS("rounding_mode") == "trunc" ? b.trunc(b.div(x, y)) : b.attrS("rounding_mode") == "floor" ? b.floorDiv(x, y) : b.div(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs, DefaultValuedAttr<StrAttr, "\"none\"">:$rounding_mode);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_FloorDivideOp : Poptorch_Op<"floor_divide",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x / y rounded toward -inf";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.floorDiv(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_FmodOp : Poptorch_Op<"fmod",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "remainder with the sign of x (C's fmod)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.fmod(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_RemainderOp : Poptorch_Op<"remainder",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "remainder with the sign of y (Python's %)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.remainder(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_FmaxOp : Poptorch_Op<"fmax",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "maximum ignoring NaN";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.fmax(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_FminOp : Poptorch_Op<"fmin",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "minimum ignoring NaN";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.fmin(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_HeavisideOp : Poptorch_Op<"heaviside",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x == 0 ? y : (x > 0)";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.select(b.eq(x, b.cst(0.0)), y, b.select(b.gt(x, b.cst(0.0)), b.cst(1.0), b.cst(0.0)))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_PreluOp : Poptorch_Op<"prelu",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x > 0 ? x : weight x";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.select(b.gt(x, b.cst(0.0)), x, b.mul(y, x))`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$weight);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Atan2Op : Poptorch_Op<"atan2",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "atan(x / y) in the quadrant of the point (y, x)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.atan2(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_CopysignOp : Poptorch_Op<"copysign",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "|x| with the sign of y";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.copysign(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_HypotOp : Poptorch_Op<"hypot",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "sqrt(x^2 + y^2)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.hypot(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_NextafterOp : Poptorch_Op<"nextafter",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "the next value of the dtype after x toward y";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.nextafter(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LdexpOp : Poptorch_Op<"ldexp",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x * 2 ** y";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.ldexp(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogaddexpOp : Poptorch_Op<"logaddexp",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log(exp(x) + exp(y))";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.bitAnd(b.isinf(x), b.eq(x, y)), x, b.add(b.max(x, y), b.log1p(b.exp(b.neg(b.abs(b.sub(x, y)))))))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Logaddexp2Op : Poptorch_Op<"logaddexp2",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log2(2 ** x + 2 ** y)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.bitAnd(b.isinf(x), b.eq(x, y)), x, b.add(b.max(x, y), b.mul(b.log1p(b.exp2(b.neg(b.abs(b.sub(x, y))))), b.cst(1.0 / M_LN2))))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_XlogyOp : Poptorch_Op<"xlogy",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x log(y), 0 where x == 0 (unless y is NaN)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.isnan(y), y, b.select(b.eq(x, b.cst(0.0)), b.cst(0.0), b.mul(x, b.log(y))))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_Xlog1pyOp : Poptorch_Op<"xlog1py",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x log(1 + y), 0 where x == 0 (unless y is NaN)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.isnan(y), y, b.select(b.eq(x, b.cst(0.0)), b.cst(0.0), b.mul(x, b.log1p(y))))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ZetaOp : Poptorch_Op<"zeta",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Hurwitz zeta function";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.zeta(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ShiftLeftOp : Poptorch_Op<"shift_left",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x << y (0 past the bit width)";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.shl(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ShiftRightOp : Poptorch_Op<"shift_right",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x >> y, arithmetic for signed types (sign fill past the bit width)";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.shr(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_GcdOp : Poptorch_Op<"gcd",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "greatest common divisor";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.gcd(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LcmOp : Poptorch_Op<"lcm",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "least common multiple";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.lcm(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LerpOp : Poptorch_Op<"lerp",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x + weight (end - x), from the nearer end";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.select(b.lt(b.abs(z), b.cst(0.5)), b.add(x, b.mul(z, b.sub(y, x))), b.sub(y, b.mul(b.sub(y, x), b.sub(b.cst(1.0), z))))`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$end, Poptorch_Tensor:$weight);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AddcmulOp : Poptorch_Op<"addcmul",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "input + value tensor1 tensor2";
  let description = [{ Elementwise with broadcasting (any element type). Scalar formula: `b.add(x, b.mul(b.mul(b.cst(b.attrF("value")), y), z))`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$tensor1, Poptorch_Tensor:$tensor2, DefaultValuedAttr<F64Attr, "1.0">:$value);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_AddcdivOp : Poptorch_Op<"addcdiv",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "input + value tensor1 / tensor2";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.add(x, b.div(b.mul(b.cst(b.attrF("value")), y), z))`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$tensor1, Poptorch_Tensor:$tensor2, DefaultValuedAttr<F64Attr, "1.0">:$value);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_EqOp : Poptorch_Op<"eq",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x == y";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.eq(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_NeOp : Poptorch_Op<"ne",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x != y";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.ne(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LtOp : Poptorch_Op<"lt",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x < y";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.lt(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LeOp : Poptorch_Op<"le",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x <= y";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.le(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_GtOp : Poptorch_Op<"gt",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x > y";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.gt(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_GeOp : Poptorch_Op<"ge",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x >= y";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.ge(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogicalAndOp : Poptorch_Op<"logical_and",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "(x != 0) and (y != 0)";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.bitAnd(b.ne(x, b.cst(0.0)), b.ne(y, b.cst(0.0)))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogicalOrOp : Poptorch_Op<"logical_or",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "(x != 0) or (y != 0)";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.bitOr(b.ne(x, b.cst(0.0)), b.ne(y, b.cst(0.0)))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogicalXorOp : Poptorch_Op<"logical_xor",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "(x != 0) xor (y != 0)";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.bitXor(b.ne(x, b.cst(0.0)), b.ne(y, b.cst(0.0)))`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogicalNotOp : Poptorch_Op<"logical_not",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x == 0";
  let description = [{ Elementwise with broadcasting (any element type; bool result). Scalar formula: `b.eq(x, b.cst(0.0))`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_BoolTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_BitwiseNotOp : Poptorch_Op<"bitwise_not",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "~x (logical not for bool)";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.bitNot(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_BitwiseAndOp : Poptorch_Op<"bitwise_and",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x & y";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.bitAnd(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_BitwiseOrOp : Poptorch_Op<"bitwise_or",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x | y";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.bitOr(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_BitwiseXorOp : Poptorch_Op<"bitwise_xor",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "x ^ y";
  let description = [{ Elementwise with broadcasting (integer and bool only). Scalar formula: `b.bitXor(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ChebyshevPolynomialTOp : Poptorch_Op<"chebyshev_polynomial_t",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Chebyshev polynomial of the first kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("chebyshev_t", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ChebyshevPolynomialUOp : Poptorch_Op<"chebyshev_polynomial_u",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Chebyshev polynomial of the second kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("chebyshev_u", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ChebyshevPolynomialVOp : Poptorch_Op<"chebyshev_polynomial_v",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Chebyshev polynomial of the third kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("chebyshev_v", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ChebyshevPolynomialWOp : Poptorch_Op<"chebyshev_polynomial_w",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Chebyshev polynomial of the fourth kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("chebyshev_w", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ShiftedChebyshevPolynomialTOp : Poptorch_Op<"shifted_chebyshev_polynomial_t",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "shifted Chebyshev polynomial of the first kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("shifted_chebyshev_t", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ShiftedChebyshevPolynomialUOp : Poptorch_Op<"shifted_chebyshev_polynomial_u",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "shifted Chebyshev polynomial of the second kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("shifted_chebyshev_u", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ShiftedChebyshevPolynomialVOp : Poptorch_Op<"shifted_chebyshev_polynomial_v",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "shifted Chebyshev polynomial of the third kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("shifted_chebyshev_v", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ShiftedChebyshevPolynomialWOp : Poptorch_Op<"shifted_chebyshev_polynomial_w",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "shifted Chebyshev polynomial of the fourth kind of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("shifted_chebyshev_w", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_HermitePolynomialHOp : Poptorch_Op<"hermite_polynomial_h",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "physicists' Hermite polynomial of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("hermite_h", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_HermitePolynomialHeOp : Poptorch_Op<"hermite_polynomial_he",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "probabilists' Hermite polynomial of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("hermite_he", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LaguerrePolynomialLOp : Poptorch_Op<"laguerre_polynomial_l",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Laguerre polynomial of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("laguerre_l", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LegendrePolynomialPOp : Poptorch_Op<"legendre_polynomial_p",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "Legendre polynomial of degree n";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.orthogonalPolynomial("legendre_p", x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$input, Poptorch_Tensor:$n);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_ErfcxOp : Poptorch_Op<"erfcx",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "scaled complementary error function exp(x^2) erfc(x)";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.erfcx(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_LogNdtrOp : Poptorch_Op<"log_ndtr",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "log of the standard normal CDF";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.logNdtr(x)`. }];
  let arguments = (ins Poptorch_Tensor:$input);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Poptorch_WhereOp : Poptorch_Op<"where",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "condition ? lhs : rhs";
  let description = [{ Elementwise with broadcasting (any element type; bool `condition`). Scalar formula: `b.select(x, y, z)`. }];
  let arguments = (ins Poptorch_BoolTensor:$condition, Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}
