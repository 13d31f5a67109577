"""The check that runs in the worker: ``check_model`` runs a model eagerly and through
``poptorch.inferenceModel`` and returns ``(outcome, detail)``; ``run_program`` runs it on a generated
program. ``CHECK_SOURCE``, the source of the check functions (``CHECK_FUNCTIONS``), is copied into
every reproducer file that ``_reproducer`` writes.
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Callable
from typing import Any

from .spec import FAILURES, Program, Result

# ---------------------------------------------------------------------------
# The check: these functions are copied into every reproducer, so they import what they use
# themselves and call nothing else of this file.


def _describe_error(err: BaseException) -> str:
    """The error's type and its first line."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[0] if lines else ''}"[:300]


def _clone_tree(tree: Any) -> Any:
    import torch
    import torch.utils._pytree as pytree

    return pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, tree)


def _inputs_written(inputs: list[Any], fresh: list[Any]) -> str:
    """Which input differs from a fresh one in layout or in any byte of its storage, or ``""``."""
    import torch

    for i, (t, f) in enumerate(zip(inputs, fresh, strict=True)):
        layout = (t.dtype, t.shape, t.stride(), t.storage_offset())
        if layout != (f.dtype, f.shape, f.stride(), f.storage_offset()):
            return f"input {i}: its layout changed"
        a, b = t.untyped_storage(), f.untyped_storage()
        a_bytes = torch.empty(0, dtype=torch.uint8).set_(a, 0, (a.nbytes(),), (1,))
        b_bytes = torch.empty(0, dtype=torch.uint8).set_(b, 0, (b.nbytes(),), (1,))
        if not torch.equal(a_bytes, b_bytes):
            return f"input {i} ({tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}) was written"
    return ""


def _tolerance(expected: Any) -> tuple[float, float]:
    """(rtol, atol) of an expected tensor: a few units in the last place of its dtype, the atol
    relative to its largest finite magnitude (a sum's error grows with its terms, not its value);
    exact for integers and bools."""
    import torch

    rtol = {torch.float64: 1e-7, torch.float32: 1e-4, torch.float16: 4e-3,
            torch.bfloat16: 3.2e-2}.get(expected.dtype)
    if rtol is None:
        return 0.0, 0.0
    finite = expected[torch.isfinite(expected)]
    scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
    return rtol, rtol * scale


def _difference(actual: Any, expected: Any, where: str) -> str:
    """``"<where> <leaf>: <what>: <message>"`` for the first difference, or ``""``."""
    import torch
    import torch.utils._pytree as pytree

    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if a_spec != e_spec:
        a_text, e_text = (" ".join(str(s).split())[:120] for s in (a_spec, e_spec))
        return f"{where}: structure: {a_text} != eager {e_text}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves, strict=True)):
        if not isinstance(a, torch.Tensor):
            return f"{where} output {i}: structure: {type(a).__name__} where eager has a tensor"
        if a.dtype != e.dtype:
            return f"{where} output {i}: dtype: {a.dtype} != eager {e.dtype}"
        if a.shape != e.shape:
            return f"{where} output {i}: shape: {tuple(a.shape)} != eager {tuple(e.shape)}"
        if a.device.type != "cpu":
            return f"{where} output {i}: device: {a.device}"
        rtol, atol = _tolerance(e)
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as err:
            lines = [line.strip() for line in str(err).splitlines() if line.strip()]
            return f"{where} output {i}: values: {'; '.join(lines[:4])}"[:400]
    return ""


def check_model(model: Any, make_inputs: Callable[[], list[Any]],
                phase: Callable[[str], None] | None = None) -> tuple[str, str]:
    """Runs ``model`` eagerly and through ``poptorch.inferenceModel``, twice each, on deep
    copies of the model and fresh inputs, and returns ``(outcome, detail)``."""
    import copy

    import torch

    import poptorch

    say = phase or (lambda _: None)
    model = model.eval()
    eager_model, compiled_model = copy.deepcopy(model), copy.deepcopy(model)
    say("eager")
    eager_error: BaseException | None = None
    expected: list[Any] = []
    try:
        with torch.no_grad():
            eager_inputs = make_inputs()
            for _ in range(2):
                expected.append(_clone_tree(eager_model(*eager_inputs)))
        eager_wrote = _inputs_written(eager_inputs, make_inputs())
    except Exception as err:
        eager_error = err
    say("compiled")
    inputs = make_inputs()
    written = ""
    try:
        ipu_model = poptorch.inferenceModel(compiled_model)
        actual = []
        for _ in range(2):  # the second call replays the program: state bugs show there
            actual.append(ipu_model(*inputs))
            written = written or _inputs_written(inputs, make_inputs())
        ipu_model.copyWeightsToHost()
    except Exception as err:
        if eager_error is not None:
            return "both_raise", _describe_error(err)
        return ("compile_error" if isinstance(err, poptorch.Error) else "untyped_error"), _describe_error(err)
    if eager_error is not None:
        return "eager_error", _describe_error(eager_error)
    say("compare")
    if eager_wrote:
        diff = _difference(inputs, eager_inputs, "inputs")  # as eager, the model writes an input
        if diff:
            return "mismatch", diff
    elif written:
        return "input_written", written
    for call, (a, e) in enumerate(zip(actual, expected, strict=True), 1):
        diff = _difference(a, e, f"call {call}")
        if diff:
            # A second opinion where eager's own float arithmetic is in doubt: the model in
            # float64. Where the compiled result is no farther from it than eager's (an argmax
            # of near-ties, a cast to int of a rounded value, eager's vectorized GELU that is
            # NaN at +inf), the difference is float rounding, not the compiler's: reported,
            # not a failure.
            exact = _float64_results(model, make_inputs)
            if exact is not None and _no_worse(a, e, exact[call - 1]):
                return "eager_inexact", diff
            # An in-place op that reads memory it writes through another view (x -= x.select(1, 0)
            # broadcast over x's rows): eager's result depends on the order its kernel visits
            # the elements, which PyTorch leaves undefined; the compiled program reads every
            # operand before writing.
            overlap = _eager_overlapping_write(model, make_inputs)
            if overlap:
                return "eager_undefined", f"{diff}; {overlap}"
            return "mismatch", diff
    eager_buffers = dict(eager_model.named_buffers())
    for name, buf in compiled_model.named_buffers():
        diff = _difference(buf, eager_buffers[name], f"buffer {name}")
        if diff:
            return "mismatch", diff
    for (name, p), (_, p0) in zip(compiled_model.named_parameters(), model.named_parameters(), strict=True):
        if not torch.equal(p, p0):
            return "mismatch", f"parameter {name}: values: written by the compiled model"
    return "ok", ""


def _float64_results(model: Any, make_inputs: Callable[[], list[Any]]) -> list[Any] | None:
    """Two eager calls of ``model`` with its floating-point parameters, buffers and inputs in
    float64; None when the model does not run so."""
    import copy

    import torch
    from torch.overrides import TorchFunctionMode

    floats = (torch.float16, torch.bfloat16, torch.float32)
    narrowing = ("half", "float", "bfloat16")

    class Widen(TorchFunctionMode):
        """Every floating-point dtype the model names (constants, casts) is float64."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = {k: torch.float64 if v in floats else v for k, v in (kwargs or {}).items()}
            args = tuple(torch.float64 if a in floats else a for a in args)
            if getattr(func, "__name__", "") in narrowing:
                func = torch.Tensor.double
            return func(*args, **kwargs)

    def widen(x: Any) -> Any:
        return x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x

    try:
        wide = copy.deepcopy(model).double()
        with torch.no_grad(), Widen():
            inputs = [widen(x) for x in make_inputs()]
            return [_clone_tree(wide(*inputs)) for _ in range(2)]
    except Exception:
        return None


def _eager_overlapping_write(model: Any, make_inputs: Callable[[], list[Any]]) -> str:
    """The first aten op of an eager call of ``model`` that writes a tensor whose memory another
    of its operands reads through a different view (partial overlap: undefined in PyTorch),
    named; empty when there is none."""
    import copy

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    def extent(t: torch.Tensor) -> tuple[int, int, int]:
        first = t.storage_offset() * t.element_size()
        span = sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride(), strict=True))
        last = first + span * t.element_size()
        return t.untyped_storage().data_ptr(), first, last + t.element_size()

    def same_view(a: torch.Tensor, b: torch.Tensor) -> bool:
        return a.storage_offset() == b.storage_offset() and a.shape == b.shape \
            and a.stride() == b.stride() and a.dtype == b.dtype

    class Overlaps(TorchDispatchMode):
        found = ""

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            schema = func._schema
            written, read = [], []
            for i, arg in enumerate(schema.arguments):
                value = args[i] if i < len(args) else kwargs.get(arg.name)
                tensors = [value] if isinstance(value, torch.Tensor) else \
                    [v for v in value if isinstance(v, torch.Tensor)] \
                    if isinstance(value, (list, tuple)) else []
                is_written = arg.alias_info is not None and arg.alias_info.is_write
                (written if is_written else read).extend(t for t in tensors if t.numel())
            for w in written:
                ptr, lo, hi = extent(w)
                for r in read:
                    rptr, rlo, rhi = extent(r)
                    if rptr == ptr and rlo < hi and lo < rhi and not same_view(w, r):
                        self.found = self.found or f"eager's {func} reads memory it writes"
            return func(*args, **kwargs)

    try:
        mode = Overlaps()
        with torch.no_grad(), mode:
            copy.deepcopy(model)(*make_inputs())
        return mode.found
    except Exception:
        return ""


def _no_worse(actual: Any, expected: Any, exact: Any) -> bool:
    """Whether ``actual`` is as close to ``exact`` (float64) as eager's ``expected``: within
    tolerance where eager is NaN or infinite and float64 is not, else no element farther from
    it than twice eager's largest error (NaN is infinitely far from a number and equal to
    NaN). Structures must agree."""
    import torch

    if isinstance(actual, torch.Tensor):
        if not (isinstance(expected, torch.Tensor) and isinstance(exact, torch.Tensor)) \
                or actual.shape != expected.shape or actual.shape != exact.shape \
                or actual.dtype != expected.dtype:
            return False

        def distance(x: torch.Tensor) -> torch.Tensor:
            x, r = x.double(), exact.double()
            d = (x - r).abs()
            d = torch.where(torch.isnan(x) & torch.isnan(r), 0.0, d)
            d = torch.where(torch.isnan(x) != torch.isnan(r), float("inf"), d)
            return torch.where(x == r, 0.0, d)  # equal infinities

        rtol, atol = _tolerance(expected)
        tol = atol + rtol * exact.double().abs().nan_to_num(0.0, posinf=0.0, neginf=0.0)
        mine, eager = distance(actual), distance(expected)
        # Where eager is NaN or infinite and float64 is not, the compiled result must be
        # float64's; elsewhere its largest error at most twice eager's largest.
        wild = torch.isinf(eager)
        if not bool((mine[wild] <= tol[wild]).all()):
            return False
        tame = ~wild
        worst = float(eager[tame].max()) if bool(tame.any()) else 0.0
        return bool((mine[tame] <= 2 * worst + tol[tame]).all())
    if isinstance(actual, (list, tuple)):
        return isinstance(expected, (list, tuple)) and isinstance(exact, (list, tuple)) \
            and len(actual) == len(expected) == len(exact) \
            and all(_no_worse(a, e, x) for a, e, x in zip(actual, expected, exact, strict=True))
    if isinstance(actual, dict):
        return isinstance(expected, dict) and isinstance(exact, dict) \
            and actual.keys() == expected.keys() == exact.keys() \
            and all(_no_worse(actual[k], expected[k], exact[k]) for k in actual)
    return actual == expected


CHECK_FUNCTIONS = (_describe_error, _clone_tree, _inputs_written, _tolerance, _difference,
                   _float64_results, _eager_overlapping_write, _no_worse, check_model)
# Read now: a reproducer written after this file changed on disk must still get these functions.
CHECK_SOURCE = "\n\n".join(inspect.getsource(fn) for fn in CHECK_FUNCTIONS)


def run_program(program: Program, phase: Callable[[str], None] | None = None) -> tuple[str, str]:
    """``check_model`` on the program's module and inputs (its source, as the reproducer runs it)."""
    # Not "<...>": poptorch's source locations skip such frames. linecache makes tracebacks
    # show the generated lines.
    filename = f"fuzz-model-{program.name}.py"
    linecache.cache[filename] = (len(program.source), None, program.source.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": "fuzz_model"}
    exec(compile(program.source, filename, "exec"), namespace)
    return check_model(namespace["FuzzModel"](), namespace["make_inputs"], phase)



# ---------------------------------------------------------------------------
# Reproducers


def _reproducer(result: Result, original_ops: int, minimized: bool) -> str:
    assert result.program is not None
    program = result.program
    how = f"minimized from {original_ops} statements" if minimized else "not minimized"
    header = (f'"""poptorch fuzz reproducer: seed {program.spec.seed}, model {program.spec.index} '
              f'({len(program.spec.stmts)} statements, {how}).\n\n'
              f"{result.outcome}: {result.detail}\n\n"
              "Run it with python; the exit status is 1 while the failure reproduces.\n"
              '"""\n\nfrom __future__ import annotations\n\nimport sys\nfrom typing import Any, Callable\n\n'
              "import poptorch\n")
    main = ("\n\nif __name__ == \"__main__\":\n"
            "    outcome, detail = check_model(FuzzModel(), make_inputs)\n"
            "    print(outcome, detail)\n"
            f"    sys.exit(1 if outcome in {FAILURES!r} else 0)\n")
    return header + program.source + "\n\n" + CHECK_SOURCE + main
