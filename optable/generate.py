"""Generate the repetitive parts of poptorch from the op table (optable/ops.py).

Outputs (all committed; `python optable/generate.py --check` fails if any is stale):
  mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseOps.td
  mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseSignatures.h.inc
  mlir/lib/Conversion/PoptorchToLinalg/ElementwiseFormulas.inc
  csrc/generated/CaptureTable.inc
  csrc/generated/MetaKernels.inc
  docs/ops.md

The dtypes and tests columns of docs/ops.md come from optable/coverage.json,
recorded from a full test run (tests/conftest.py, POPTORCH_COVERAGE=<file>):
`--coverage <file>` fails if a claim of coverage.json was not seen passing in
that run (tests the run skipped entirely, on a host without what they test, are
not claims it can check) or a table row has no passing test (make test), and `--update-coverage
<file>` rewrites coverage.json from the run (make coverage).

Every aten entry is checked against torch's registered schemas, so a typo in
an argument name fails here rather than at capture time.
"""

from __future__ import annotations

import argparse
import json
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
           "`poptorch.constant`; they need no entry here. So are ops whose results all have no "
           "elements (a 0 x 5 by 5 x 10 matmul, an empty slice): each result is an empty constant. "
           "Every op in the table below is lowered to native code (`lowered`, or `decomposed` "
           "into other dialect ops first), unless its lowering refuses the arguments a model "
           "gives it (`grid_sample`'s bicubic mode, say). Any other aten op, and those, runs "
           "as a **host kernel**: the "
           "compiled program calls PyTorch's own CPU kernel for it on the program's buffers "
           "(`poptorch.host_kernel`, no re-tracing; `poptorch.explain` shows which ops do, and "
           "the first use of each logs a warning with its line), provided its results have "
           "static shapes and dtypes torch's CPU kernels compute (not the unsigned ones above "
           "8 bits), it draws no random numbers and it writes only its "
           "`out=` or in-place arguments. `Options().hostKernels(False)` turns host kernels "
           "off: such ops are then unsupported. Ops that can be neither report an error at "
           "trace time that lists every unsupported op of the model with its source line and "
           "why it cannot be a host kernel (a uint64 result, for example). To add an op, "
           "see `docs/developer.md`.", "",
           "**Backward ops** (`*_backward`, `*_backward_data`: the ops of a `trainingModel`'s "
           "gradients) without a row are traced through their decomposition in "
           "`torch._decomp` when they have one (`convolution_backward` of a 1-D or 2-D "
           "convolution: ours, made of convolutions, `im2col` and matmuls), so the ops it "
           "calls are lowered with the rest of the program; those without one run as host "
           "kernels. `native_batch_norm` in training mode is decomposed too: eager writes its "
           "running statistics in place, which its schema does not declare.",
           "",
           "**Complex tensors** (`torch.fft`, `torch.complex`, `x.cfloat()`, `stft`) are held "
           "by the program as their (real, imaginary) pairs, the layout of "
           "`torch.view_as_real`: a `complex64` tensor of shape `[4, 5]` is a "
           "`tensor<4x5x2xf32>` in the IR. Views of complex tensors are captured like any "
           "other view; every other op that reads or makes a complex tensor runs as a host "
           "kernel, including the ops of the table below (the warning says `no lowering for "
           "complex tensors`). Complex model inputs and outputs are passed as they are.", "",
           "PyTorch's fused inference kernels `torch._transformer_encoder_layer_fwd` and "
           "`torch._native_multi_head_attention` (the fast paths of "
           "`nn.TransformerEncoderLayer` and `nn.MultiheadAttention`) are traced as the ops "
           "they compute (`linear`, one `scaled_dot_product_attention`, `layer_norm`, "
           "`gelu`/`relu`; csrc/FastPaths.cpp), which are lowered.", "",
           "What to do when an op is reported as unsupported: compute it outside the model and "
           "pass the result in, replace it with supported ops (`torch.where` for boolean "
           "masking, `gather` for data-dependent indexing), or add it to the table. Ops whose "
           "result shape depends on tensor values (`nonzero`, `masked_select`, `unique`, "
           "`x[mask]` with a mask the model computed) run as host kernels whose result shapes "
           "are those of the traced values: the host kernel checks them on every call, and a "
           "call with other shapes runs (or compiles) its own variant, as for values read "
           "while tracing (docs/user_guide.md). With `Options().hostKernels(False)` they are "
           "errors that say so with their line.", "",
           "Known differences from eager: indices computed by the model that are out of range "
           "are clamped (constant indices are checked at trace time); integer division by zero "
           "gives -1 (quotient) or the dividend (remainder) instead of raising; random ops draw "
           "from poptorch's own counter-based generator seeded by `Options.randomSeed` (not "
           "torch's CPU sequence). Random factory functions without a device "
           "(`torch.rand(n)`, `torch.empty(n).normal_()`) are random ops of the program too: "
           "when tracing sees the CPU generator advance, it traces again with the ipu as the "
           "default device (tracing then takes twice as long; pass `device=x.device` to "
           "avoid it). An input is traced as a tensor of its own, without the rest of its "
           "storage: `as_strided` with an explicit `storage_offset` on an input that is a view "
           "at an offset into a larger tensor counts the offset from the input's first element "
           "(eager counts it in the larger tensor). PyTorch's OpInfo samples that differ from "
           "eager are listed, per op and dtype, in `tests/opinfo/expected.json` "
           "(docs/developer.md).", "",
           "Columns: **status** is `lowered` (a conversion pattern of its own), `decomposed` "
           "(`poptorch-decompose` rewrites the dialect op into other dialect ops) or `identity`; "
           "**dtypes** are the element types the op was exercised with by passing tests, and "
           "**tests** the passing tests that captured it (with how many there are in all). Both "
           "are recorded from a test run into `optable/coverage.json` (`make coverage`); "
           "`make test` fails if a claim is not seen passing again or a row has no passing test. "
           f"Dtype abbreviations: {', '.join(f'{v} = {k}' for k, v in DTYPE_ABBREV.items())}.",
           "",
           "| aten op | dialect op | status | dtypes | tests | operands / attributes | notes |",
           "|---|---|---|---|---|---|---|"]
    cov = load_coverage()
    lowered = lowered_ops()
    for e in table.ATEN:
        op = f"`poptorch.{e.op}`" if e.op else "identity"
        status = "identity" if not e.op else "lowered" if e.op in lowered else "decomposed"
        args = ", ".join(f"{d}←{a.aten or a.kind}" for d, a in e.args.items())
        promotion = {"none": "", "result": "promotes operands to the result dtype",
                     "common": "promotes operands to their common dtype"}[e.promote]
        notes = "; ".join(x for x in (e.note, promotion) if x)
        c = cov.get(e.schema, {})
        dtypes = " ".join(DTYPE_ABBREV[d] for d in DTYPE_ABBREV if d in c.get("dtypes", []))
        out.append(f"| `aten::{e.schema}` | {op} | {status} | {dtypes or '—'} | "
                   f"{tests_cell(e.schema, c.get('tests', []))} | {args} | {notes} |")
    host = cov.get("@host", {})
    out += ["", "## Evaluated at trace time", "",
            "These ops reached the backend in passing tests with only constant inputs, so they "
            "ran once on the host while tracing and became `poptorch.constant` "
            "(tensor constructors inside the model, arithmetic on constants); they need no row "
            "above.", "", "| aten op | tests |", "|---|---|"]
    for name in sorted(host):
        out.append(f"| `{name}` | {tests_cell(name, host[name])} |")
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


# ---------------------------------------------------------------------------
# coverage (dtypes and tests columns)

COVERAGE = ROOT / "optable" / "coverage.json"
DTYPE_ABBREV = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
                "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                "bool": "b"}


def load_coverage() -> dict:
    return json.loads(COVERAGE.read_text()) if COVERAGE.exists() else {}


def lowered_ops() -> set[str]:
    """Dialect ops with a conversion pattern of their own: every elementwise op, and the
    ops named by the patterns of mlir/lib/Conversion/PoptorchToLinalg (the others are
    rewritten by poptorch-decompose into these)."""
    names = {camel(n): n for n in dialect_ops()}
    found = {e.name for e in table.ELEMENTWISE}
    for f in (ROOT / "mlir/lib/Conversion/PoptorchToLinalg").glob("*.cpp"):
        for m in re.finditer(r"(?:OpConversionPattern|Lowering)<\s*(\w+)Op\b", f.read_text()):
            if m.group(1) in names:
                found.add(names[m.group(1)])
    return found


def tests_cell(name: str, tests: list[str], shown: int = 2) -> str:
    """The most specific tests first: those naming the op, then the op suites."""
    if not tests:
        return "—"
    base = name.split("::")[-1].split(".")[0].strip("_")
    ranked = sorted(tests, key=lambda t: (base not in t.split("::")[-1],
                                          "test_ops" not in t, t))
    cell = ", ".join(f"`{t.removeprefix('tests/')}`" for t in ranked[:shown])
    return cell + (f" (+{len(tests) - shown})" if len(tests) > shown else "")


def observed_by_row(observed: dict) -> dict:
    """Maps a run's op log names (aten::name[.overload], in-place and out= forms
    included) onto the table rows; ops only ever run on the host go under "@host"."""
    rows: dict = {}
    names = {}
    for e in table.ATEN:
        for name, overload, _mode in variants(e):
            names[f"aten::{name}" + (f".{overload}" if overload else "")] = e.schema
    for op, c in observed.items():
        schema = names.get(op)
        if schema is not None and ({"captured", "random"} & set(c["status"])):
            r = rows.setdefault(schema, {"dtypes": set(), "tests": set()})
            r["dtypes"] |= set(c["dtypes"])
            r["tests"] |= set(c["tests"])
        elif c["status"] == ["host"]:
            rows.setdefault("@host", {})[op] = sorted(c["tests"])
    return {k: ({"dtypes": sorted(v["dtypes"]), "tests": sorted(v["tests"])}
                if k != "@host" else dict(sorted(v.items()))) for k, v in rows.items()}


def check_coverage(observed_path: str) -> list[str]:
    observed = json.loads(Path(observed_path).read_text())
    seen = observed_by_row(observed)
    # Tests that the run skipped entirely (on this host) are not claims it can check.
    skipped = set(observed.get("@skipped", {}).get("tests", []))
    claimed = load_coverage()
    errors = []
    for e in table.ATEN:
        if not seen.get(e.schema, {}).get("tests"):
            errors.append(f"aten::{e.schema}: no passing test captured it")
    for schema, c in claimed.items():
        if schema == "@host":
            continue
        s = seen.get(schema, {"dtypes": [], "tests": []})
        for key in ("dtypes", "tests"):
            missing = sorted(set(c[key]) - set(s[key]) - (skipped if key == "tests" else set()))
            if missing:
                errors.append(f"aten::{schema}: coverage.json claims {key} not seen passing: "
                              + ", ".join(missing))
    return errors


# C++ parameter types of at::meta:: functions -> (the schema types they take,
# how a stack slot `s[i]` becomes a local `v` passed for them). A function with
# a parameter type not listed here is not called directly.
META_PARAM_TYPES = {
    "const at::Tensor &": ({"Tensor"}, "at::Tensor {v} = s[{i}].toTensor();"),
    "at::Tensor &": ({"Tensor"}, "at::Tensor {v} = s[{i}].toTensor();"),
    "const ::std::optional<at::Tensor> &": (
        {"Optional[Tensor]"}, "auto {v} = s[{i}].toOptional<at::Tensor>();"),
    "const at::Scalar &": ({"number"}, "at::Scalar {v} = s[{i}].toScalar();"),
    "const ::std::optional<at::Scalar> &": (
        {"Optional[number]"}, "auto {v} = s[{i}].toOptional<at::Scalar>();"),
    "int64_t": ({"int", "SymInt"}, "int64_t {v} = s[{i}].toInt();"),
    "::std::optional<int64_t>": (
        {"Optional[int]", "Optional[SymInt]"}, "auto {v} = s[{i}].toOptional<int64_t>();"),
    "at::IntArrayRef": (
        {"List[int]", "List[SymInt]"}, "std::vector<int64_t> {v} = s[{i}].toIntVector();"),
    "at::OptionalIntArrayRef": (
        {"Optional[List[int]]"},
        "auto {v}_ = s[{i}].toOptional<std::vector<int64_t>>(); "
        "at::OptionalIntArrayRef {v}; if ({v}_) {v} = *{v}_;"),
    "bool": ({"bool"}, "bool {v} = s[{i}].toBool();"),
    "::std::optional<bool>": ({"Optional[bool]"}, "auto {v} = s[{i}].toOptional<bool>();"),
    "double": ({"float"}, "double {v} = s[{i}].toDouble();"),
    "::std::optional<double>": ({"Optional[float]"}, "auto {v} = s[{i}].toOptional<double>();"),
    "at::ScalarType": ({"ScalarType"}, "at::ScalarType {v} = s[{i}].toScalarType();"),
    "::std::optional<at::ScalarType>": (
        {"Optional[ScalarType]"}, "auto {v} = s[{i}].toOptional<at::ScalarType>();"),
    "c10::string_view": ({"str"}, "std::string {v} = s[{i}].toStringRef();"),
    "::std::optional<c10::string_view>": (
        {"Optional[str]"},
        "auto {v}_ = s[{i}].toOptional<std::string>(); "
        "::std::optional<c10::string_view> {v}; if ({v}_) {v} = *{v}_;"),
    "const at::ITensorListRef &": (
        {"List[Tensor]"}, "std::vector<at::Tensor> {v} = s[{i}].toTensorVector();"),
}


def meta_declarations(base: str) -> dict[str, list[tuple[str, str]]]:
    """at::meta:: functions declared for aten op `base`: name -> [(C++ type, name)]."""
    import torch

    header = Path(torch.__file__).parent / "include/ATen/ops" / f"{base}_meta_dispatch.h"
    if not header.exists():
        return {}
    found = {}
    for line in header.read_text().splitlines():
        m = re.match(r"TORCH_API .+? (\w+)\((.*)\);$", line.strip())
        if not m:
            continue
        params, depth, cur = [], 0, ""
        for ch in m.group(2):
            depth += ch == "<"
            depth -= ch == ">"
            if ch == "," and depth == 0:
                params.append(cur)
                cur = ""
            else:
                cur += ch
        if cur.strip():
            params.append(cur)
        decl = []
        for p in params:
            ctype, _, pname = p.split("=")[0].strip().rpartition(" ")
            decl.append((ctype.strip(), pname))
        found.setdefault(m.group(1), decl)
    return found


def gen_meta_kernels() -> str:
    """Direct calls of torch's C++ structured Meta kernels (at::meta::), one per
    captured overload that has one whose parameters match its schema."""
    import torch

    out = [f"// {HEADER}",
           "// One row per captured aten overload whose structured C++ Meta kernel the",
           "// tracer calls directly (MetaKernels.cpp): {name, [](Stack &s) {...}}.", ""]
    for e in table.ATEN:
        for name, overload, mode in variants(e):
            base = name.rstrip("_") if mode == "Inplace" else name
            fn = {"Functional": name, "Inplace": name, "Out": f"{name}_outf"}[mode]
            declared = meta_declarations(base)
            # Headers also declare in-place kernels that only unstructured ops
            # have, and libtorch does not define them: the functional kernel
            # must be structured too.
            decl = declared.get(fn) if base in declared else None
            schema = {s.overload_name: s for s in
                      torch._C._jit_get_schemas_for_operator(f"aten::{name}")}[overload]
            args = schema.arguments
            if decl is None or len(decl) != len(args):
                continue
            lines, ok = [], True
            for i, ((ctype, pname), arg) in enumerate(zip(decl, args, strict=True)):
                kind = META_PARAM_TYPES.get(ctype)
                if kind is None or pname != arg.name or str(arg.real_type) not in kind[0]:
                    ok = False
                    break
                lines.append(kind[1].format(v=f"a{i}", i=i))
            if not ok:
                continue
            call = ", ".join(f"a{i}" for i in range(len(args)))
            qualified = f"aten::{name}" + (f".{overload}" if overload else "")
            out.append(f'{{"{qualified}", [](torch::jit::Stack &s) {{')
            out.extend(f"   {line}" for line in lines)
            out.append(f"   return results(s, at::meta::{fn}({call}));")
            out.append("}},")
    return "\n".join(out) + "\n"


OUTPUTS = {
    "mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseOps.td": gen_td,
    "mlir/include/poptorch/Dialect/Poptorch/IR/PoptorchElementwiseSignatures.h.inc":
        gen_signatures,
    "mlir/lib/Conversion/PoptorchToLinalg/ElementwiseFormulas.inc": gen_formulas,
    "csrc/generated/CaptureTable.inc": gen_capture_table,
    "csrc/generated/MetaKernels.inc": gen_meta_kernels,
    "docs/ops.md": gen_docs,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if an output is stale")
    parser.add_argument("--coverage", metavar="FILE",
                        help="check coverage.json and the table against a test run's record")
    parser.add_argument("--update-coverage", metavar="FILE",
                        help="rewrite coverage.json from a test run's record, then generate")
    args = parser.parse_args()
    errors = check_table()
    if errors:
        print("op table errors:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    if args.coverage:
        errors = check_coverage(args.coverage)
        if errors:
            print("op coverage errors (see optable/generate.py; `make coverage` records a "
                  "new run):\n  " + "\n  ".join(errors), file=sys.stderr)
            return 1
        print(f"op coverage: every row of the table was captured by a passing test "
              f"({len(table.ATEN)} rows)")
        return 0
    if args.update_coverage:
        seen = observed_by_row(json.loads(Path(args.update_coverage).read_text()))
        COVERAGE.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n")
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
