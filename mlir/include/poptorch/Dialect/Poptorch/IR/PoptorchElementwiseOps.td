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
  let summary = "x ** y";
  let description = [{ Elementwise with broadcasting (floating-point only). Scalar formula: `b.pow(x, y)`. }];
  let arguments = (ins Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}
