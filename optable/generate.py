"""Generate the repetitive parts of poptorch from the op table (optable/ops.py).

Outputs (all committed; `python optable/generate.py --check` fails if any is stale):
  mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseOps.td
  mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseSignatures.h.inc
  mlir/lib/Conversion/PoptorchToLinalg/ElementwiseFormulas.inc
  csrc/generated/CaptureTable.inc
  docs/ops.md

Every aten entry is checked against torch's registered schemas, so a typo in
an argument name fails here rather than at capture time.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "optable"))

import ops as table  # noqa: E402 (needs the sys.path entry above)

HEADER = "generated from optable/ops.py by optable/generate.py; do not edit. Regenerate with `make generate`."


def camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def dialect_ops() -> set[str]:
    td = (ROOT / "mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchOps.td").read_text()
    names = set(re.findall(r'Poptorch_\w*Op<"(\w+)"', td))
    return names | {e.name for e in table.ELEMENTWISE}


def gen_td() -> str:
    out = [f"// {HEADER}", "// Elementwise ops of the poptorch dialect.", ""]
    for e in table.ELEMENTWISE:
        operands = [f"{'Poptorch_BoolTensor' if n in e.bool_operands else 'Poptorch_Tensor'}:${n}"
                    for n in e.operand_names()]
        result = "Poptorch_BoolTensor" if e.result == "bool" else "Poptorch_Tensor"
        attrs = []
        for name, kind, *default in e.attrs:
            if kind == "OptF64Attr":
                attrs.append(f"OptionalAttr<F64Attr>:${name}")
                continue
            value = default[0] if default else ATTR_DEFAULTS[kind]
            literal = f'"\\"{value}\\""' if kind == "StrAttr" else f'"{value}"'
            attrs.append(f"DefaultValuedAttr<{kind}, {literal}>:${name}")
        kinds = dtypes_of(e)
        if e.result == "bool":
            kinds += "; bool result"
        if e.bool_operands:
            kinds += "; bool " + ", ".join(f"`{n}`" for n in e.bool_operands)
        out += [
            f"def Poptorch_{camel(e.name)}Op : Poptorch_Op<\"{e.name}\",",
            "    [Pure, Poptorch_ElementwiseTrait]> {",
            f"  let summary = \"{e.summary}\";",
            f"  let description = [{{ Elementwise with broadcasting ({kinds}). "
            f"Scalar formula: `{e.formula}`. }}];",
            f"  let arguments = (ins {', '.join(operands + attrs)});",
            f"  let results = (outs {result}:$result);",
            "  let assemblyFormat = \"operands attr-dict `:` functional-type(operands, results)\";",
            "}",
            "",
        ]
    return "\n".join(out)


# The default of an attribute that the table does not give one.
ATTR_DEFAULTS = {"F64Attr": "1.0", "I64Attr": "0", "StrAttr": "none"}


def dtypes_of(e: table.Elementwise) -> str:
    if e.float_only:
        return "floating-point only"
    if e.int_only:
        return "integer and bool only"
    return "any element type"


def gen_signatures() -> str:
    """Element-type rules of the elementwise ops, for the trait verifier and the lowering."""
    def names(pred) -> str:
        return ", ".join(f'"{e.name}"' for e in table.ELEMENTWISE if pred(e))

    out = [f"// {HEADER}",
           "// The element types of elementwise ops that differ from the common rule (operands",
           "// and result share one element type). Included by the dialect's trait verifier",
           "// and by the linalg lowering.", "",
           "namespace mlir::poptorch {", "",
           "/// The op's result is bool (i1) whatever its operands' element type.",
           "inline bool elementwiseHasBoolResult(llvm::StringRef name) {",
           "  return llvm::is_contained(",
           f"      llvm::ArrayRef<llvm::StringRef>{{{names(lambda e: e.result == 'bool')}}},",
           "      name);",
           "}", "",
           "/// Operand `index` of the op is always bool (i1), outside the operands' type.",
           "inline bool elementwiseOperandIsBool(llvm::StringRef name, unsigned index) {"]
    for e in table.ELEMENTWISE:
        if e.bool_operands:
            idx = [str(i) for i, n in enumerate(e.operand_names()) if n in e.bool_operands]
            out.append(f'  if (name == "{e.name}")')
            out.append("    return " + " || ".join(f"index == {i}" for i in idx) + ";")
    out += ["  return false;", "}", "", "} // namespace mlir::poptorch", ""]
    return "\n".join(out)


def gen_formulas() -> str:
    out = [f"// {HEADER}", "// Scalar formulas of the elementwise ops, used by the linalg lowering.", "",
           "static Value buildElementwiseFormula(Operation *op, ScalarBuilder &b, ValueRange args) {",
           "  StringRef name = op->getName().stripDialect();"]
    for e in table.ELEMENTWISE:
        bind = "Value " + ", ".join(f"{v} = args[{i}]" for i, v in enumerate("xyz"[:e.arity])) + ";"
        out += [f'  if (name == "{e.name}") {{', f"    {bind}", f"    return {e.formula};", "  }"]
    out += ["  llvm_unreachable(\"elementwise op without a formula\");", "}", "",
            "static bool isFloatOnlyElementwise(StringRef name) {",
            "  return llvm::is_contained(ArrayRef<StringRef>{"
            + ", ".join(f'"{e.name}"' for e in table.ELEMENTWISE if e.float_only) + "}, name);",
            "}", "",
            "static bool isIntOnlyElementwise(StringRef name) {",
            "  return llvm::is_contained(ArrayRef<StringRef>{"
            + ", ".join(f'"{e.name}"' for e in table.ELEMENTWISE if e.int_only) + "}, name);",
            "}", "",
            "/// f16/bf16 compute in their own type (rounding after every step).",
            "static bool computesInReducedType(StringRef name) {",
            "  return llvm::is_contained(ArrayRef<StringRef>{"
            + ", ".join(f'"{e.name}"' for e in table.ELEMENTWISE if e.reduced_steps)
            + "}, name);",
            "}", ""]
    return "\n".join(out)


ARG_KIND_ENUM = {
    "tensor": "Tensor", "opt_tensor": "OptTensor", "tensor_list": "TensorList",
    "scalar": "Scalar", "opt_scalar": "OptScalar", "mask": "Mask", "f64": "F64", "i64": "I64",
    "bool": "Bool", "str": "Str",
    "ints": "Ints", "dim": "Dim", "dims": "Dims", "index": "Index",
    "reversed_dims": "ReversedDims", "random_state": "RandomState", "const": "Const",
    "indices": "Indices", "index_list": "IndexList", "lit_str": "LitStr", "lit_bool": "LitBool",
}


def split_schema(s: str) -> tuple[str, str]:
    name, _, overload = s.partition(".")
    return name, overload


def check_table() -> list[str]:
    import torch

    errors = []
    for el in table.ELEMENTWISE:
        if el.result not in table.RESULT_KINDS:
            errors.append(f"poptorch.{el.name}: unknown result kind {el.result}")
        if not 1 <= el.arity <= 3:
            errors.append(f"poptorch.{el.name}: arity must be 1, 2 or 3")
        if set(el.bool_operands) - set(el.operand_names()):
            errors.append(f"poptorch.{el.name}: bool_operands names an unknown operand")
        for attr in el.attrs:
            if attr[1] not in (*ATTR_DEFAULTS, "OptF64Attr"):
                errors.append(f"poptorch.{el.name}: unknown attribute kind {attr[1]}")
        if el.float_only and el.int_only:
            errors.append(f"poptorch.{el.name}: float_only and int_only exclude each other")
    known = dialect_ops()
    seen = set()
    for e in table.ATEN:
        if e.schema in seen:
            errors.append(f"{e.schema}: listed twice")
        seen.add(e.schema)
        name, overload = split_schema(e.schema)
        schemas = {s.overload_name: s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")}
        if overload not in schemas:
            errors.append(f"{e.schema}: no such aten overload")
            continue
        arg_names = {a.name for a in schemas[overload].arguments}
        for arg in e.args.values():
            if arg.kind not in ARG_KIND_ENUM:
                errors.append(f"{e.schema}: unknown argument kind {arg.kind}")
            if arg.aten and arg.aten not in arg_names:
                errors.append(f"{e.schema}: `{arg.aten}` is not an argument of {schemas[overload]}")
            if arg.kind == "ints" and arg.extra and arg.extra not in arg_names:
                errors.append(f"{e.schema}: `{arg.extra}` is not an argument")
        if not e.reaches_backend and torch._C._dispatch_has_kernel_for_dispatch_key(
                f"aten::{e.schema}", "CompositeImplicitAutograd"):
            errors.append(f"{e.schema}: CompositeImplicitAutograd ops are decomposed before "
                          "they reach the ipu backend; list the ops they decompose into")
        if e.op and e.op not in known:
            errors.append(f"{e.schema}: dialect op poptorch.{e.op} is not defined")
        if e.promote not in table.PROMOTE_MODES:
            errors.append(f"{e.schema}: unknown promote mode {e.promote}")
    return errors


def variants(e: table.Aten) -> list[tuple[str, str, str]]:
    """(name, overload, mode) of the entry and its in-place and out= variants.

    A variant has the functional overload's arguments (plus `out` tensors), so
    one table entry serves all three forms.
    """
    import torch

    name, overload = split_schema(e.schema)
    functional = {s.overload_name: s for s in
                  torch._C._jit_get_schemas_for_operator(f"aten::{name}")}[overload]
    args = [(a.name, str(a.type)) for a in functional.arguments]
    found = [(name, overload, "Functional")]
    for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}_"):
        if s.overload_name == overload and [(a.name, str(a.type)) for a in s.arguments] == args:
            found.append((f"{name}_", overload, "Inplace"))
    for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}"):
        outs = [a for a in s.arguments if a.is_out]
        rest = [(a.name, str(a.type)) for a in s.arguments if not a.is_out]
        if outs and len(outs) >= e.results and rest == args:
            found.append((name, s.overload_name, "Out"))
    return found


def gen_capture_table() -> str:
    out = [f"// {HEADER}", "// One row per captured aten overload: {name, overload, mode, dialect op,",
           "// promote, bool result, results, {kind, aten arg, dialect name, extra}...}.", ""]
    bool_ops = {e.name for e in table.ELEMENTWISE if e.result == "bool"}
    for e in table.ATEN:
        args = ", ".join(
            f'{{ArgKind::{ARG_KIND_ENUM[a.kind]}, "{a.aten}", "{d}", "{a.extra}"}}'
            for d, a in e.args.items())
        op = f"poptorch.{e.op}" if e.op else ""
        promote = "Promote::" + e.promote.capitalize()
        bool_result = "true" if e.op in bool_ops else "false"
        for name, overload, mode in variants(e):
            out.append(f'{{"aten::{name}", "{overload}", Mode::{mode}, "{op}", {promote}, '
                       f'{bool_result}, {e.results}, {{{args}}}}},')
    return "\n".join(out) + "\n"


def gen_docs() -> str:
    out = [f"<!-- {HEADER} -->", "", "# Op coverage", "",
           f"poptorch captures **{len({split_schema(e.schema)[0] for e in table.ATEN})} distinct aten "
           f"ops** ({len(table.ATEN)} overloads) into **{len(dialect_ops())} dialect ops**.", "",
           "Ops whose tensor inputs are all constants (factory functions such as `torch.arange`, "
           "tensors built from Python values) are evaluated once at trace time and become "
           "`poptorch.constant`; they need no entry here. Any other op reports an error at trace "
           "time that lists every unsupported op of the model with its source line. To add an op, "
           "see `docs/developer.md`.", "",
           "What to do when an op is reported as unsupported: compute it outside the model and "
           "pass the result in, replace it with supported ops (`torch.where` for boolean "
           "masking, `gather` for data-dependent indexing), or add it to the table. Ops whose "
           "result shape depends on tensor values (`nonzero`, `masked_select`, `unique`, boolean "
           "masks computed by the model) cannot be compiled and say so with their line.", "",
           "Known differences from eager: indices computed by the model that are out of range "
           "are clamped (constant indices are checked at trace time); integer division by zero "
           "gives -1 (quotient) or the dividend (remainder) instead of raising; random ops draw "
           "from poptorch's own counter-based generator seeded by `Options.randomSeed` (not "
           "torch's CPU sequence), and random factory functions must be given the input's "
           "device (`torch.rand(n, device=x.device)`): without it they run on the CPU at trace "
           "time and become a constant.", "",
           "| aten op | dialect op | operands / attributes | notes |", "|---|---|---|---|"]
    for e in table.ATEN:
        op = f"`poptorch.{e.op}`" if e.op else "identity"
        args = ", ".join(f"{d}←{a.aten or a.kind}" for d, a in e.args.items())
        promotion = {"none": "", "result": "promotes operands to the result dtype",
                     "common": "promotes operands to their common dtype"}[e.promote]
        notes = "; ".join(x for x in (e.note, promotion) if x)
        out.append(f"| `aten::{e.schema}` | {op} | {args} | {notes} |")
    out += ["", "## Elementwise dialect ops and their scalar formulas", "",
            "| dialect op | formula | dtypes | result |", "|---|---|---|---|"]
    for e in table.ELEMENTWISE:
        formula = e.formula.replace("|", "\\|")
        dtypes = "floating point" if e.float_only else "integer, bool" if e.int_only else "all"
        if e.bool_operands:
            dtypes += "; " + ", ".join(f"`{n}` bool" for n in e.bool_operands)
        result = "bool" if e.result == "bool" else "operand dtype"
        out.append(f"| `poptorch.{e.name}` | `{formula}` | {dtypes} | {result} |")
    return "\n".join(out) + "\n"


OUTPUTS = {
    "mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseOps.td": gen_td,
    "mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseSignatures.h.inc":
        gen_signatures,
    "mlir/lib/Conversion/PoptorchToLinalg/ElementwiseFormulas.inc": gen_formulas,
    "csrc/generated/CaptureTable.inc": gen_capture_table,
    "docs/ops.md": gen_docs,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if an output is stale")
    args = parser.parse_args()
    errors = check_table()
    if errors:
        print("op table errors:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    stale = []
    for rel, fn in OUTPUTS.items():
        path = ROOT / rel
        text = fn()
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(rel)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
    if stale:
        print("stale generated files (run `make generate`):\n  " + "\n  ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
