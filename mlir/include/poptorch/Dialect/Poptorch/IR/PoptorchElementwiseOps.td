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

def Poptorch_WhereOp : Poptorch_Op<"where",
    [Pure, Poptorch_ElementwiseTrait]> {
  let summary = "condition ? lhs : rhs";
  let description = [{ Elementwise with broadcasting (any element type; bool `condition`). Scalar formula: `b.select(x, y, z)`. }];
  let arguments = (ins Poptorch_BoolTensor:$condition, Poptorch_Tensor:$lhs, Poptorch_Tensor:$rhs);
  let results = (outs Poptorch_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}
