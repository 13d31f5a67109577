"""Errors users hit: unsupported ops (all listed at once, with their lines),
data-dependent Python, input guards and recompilation, and process exit."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
from conftest import assert_matches

import poptorch

THIS_FILE = __file__
PYTHON_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "python"))


def line_of(marker: str) -> int:
    for number, text in enumerate(open(THIS_FILE).read().splitlines(), start=1):
        if marker in text and "line_of(" not in text:
            return number
    raise AssertionError(marker)


# ---------------------------------------------------------------- unsupported ops
def one_unsupported(x):
    return torch.hash_tensor(x).float() + 1  # @hash


def two_unsupported(x):
    y = torch.linalg.matrix_exp(x[:3])  # @matrix_exp
    z = torch.special.airy_ai(y) * 2  # @airy_ai
    return z + x[:3], torch.hash_tensor(x)  # @hash2


def test_unsupported_op_names_aten_op_and_line():
    with pytest.raises(RuntimeError) as info:
        poptorch.trace(one_unsupported, torch.randn(4, 3))
    message = str(info.value)
    assert "1 unsupported operation" in message
    assert re.search(rf"aten::hash_tensor\S* at {re.escape(THIS_FILE)}:{line_of('# @hash')}\b",
                     message)
    assert "not a host kernel: it returns dtype UInt64" in message, message
    assert "docs/ops.md" in message


def test_all_unsupported_ops_are_listed_at_once():
    with pytest.raises(RuntimeError) as info:
        poptorch.trace(two_unsupported, torch.randn(4, 3), host_kernels=False)
    message = str(info.value)
    assert "3 unsupported operations" in message, message
    for op, marker in [("aten::linalg_matrix_exp", "# @matrix_exp"),
                       ("aten::special_airy_ai", "# @airy_ai"),
                       ("aten::hash_tensor", "# @hash2")]:
        assert re.search(rf"{op}\S* at {re.escape(THIS_FILE)}:{line_of(marker)}\b", message), (
            op, message)


def test_repeated_unsupported_op_is_counted_once_per_line():
    def f(x):
        for _ in range(3):
            x = torch.linalg.matrix_exp(x)  # @loop
        return x

    with pytest.raises(RuntimeError, match=rf":{line_of('# @loop')} \(3 times\)"):
        poptorch.trace(f, torch.randn(3, 3), host_kernels=False)


def test_unsupported_error_from_inference_model_and_ipu_context():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3))
    model.register_forward_hook(lambda m, i, o: torch.linalg.matrix_exp(o))
    with pytest.raises(RuntimeError, match="aten::linalg_matrix_exp"):
        poptorch.inferenceModel(model, poptorch.Options().hostKernels(False))(torch.randn(3, 3))
    with pytest.raises(RuntimeError, match="aten::hash_tensor"):
        poptorch.experimental.IPUContext(one_unsupported)(torch.randn(3))


def test_data_dependent_output_shape_without_host_kernels_is_a_clear_error():
    # With host kernels (the default) such ops are guarded (test_host_kernels.py).
    with pytest.raises(RuntimeError, match="aten::nonzero .*output shape depends on the values"):
        poptorch.trace(lambda x: x.nonzero(), torch.randn(3), host_kernels=False)


# ---------------------------------------------------------------- data-dependent Python
def control_flow(x):
    if x.sum() > 0:  # @if
        return x
    return -x


def control_flow_on_supported_ops(x):
    if x.mean():  # @if-mean
        return x
    return -x


@pytest.mark.parametrize("fn,marker,what", [
    (control_flow, "# @if", "_local_scalar_dense"),
    (control_flow_on_supported_ops, "# @if-mean", "_local_scalar_dense"),
    (lambda x: x * x.max().item(), None, "_local_scalar_dense"),
    (lambda x: torch.tensor(x.tolist()), None, "_to_copy to cpu"),
    (lambda x: x.cpu() + 1, None, "_to_copy to cpu"),
    (lambda x: print(x * 2) or x, None, "_to_copy to cpu|_local_scalar_dense"),
], ids=["if", "if-mean", "item", "tolist", "cpu", "print"])
def test_data_dependent_python_traces_with_a_guard(fn, marker, what):
    # Values read while tracing are computed and guarded (tests/test_guards.py).
    x = torch.randn(4, 3)
    graph = poptorch.trace(fn, x)
    assert graph.guards, "the read was not guarded"
    g = graph.guards[0]
    assert re.search(what, g.what), g.what
    assert THIS_FILE in g.location
    if marker:
        assert g.location.endswith(f"{THIS_FILE}:{line_of(marker)}"), g.location
    torch.testing.assert_close(graph.compile()(x), fn(x))


def test_reads_of_constants_are_fine():
    def f(x):
        n = int(torch.tensor(3).item())  # a constant: its value is known
        return x * n

    x = torch.randn(2)
    torch.testing.assert_close(poptorch.trace(f, x).compile()(x), x * 3)


def test_tracer_is_usable_after_an_error():
    def random_control_flow(x):
        return x if torch.rand((), device=x.device) > 0.5 else -x

    with pytest.raises(RuntimeError, match="random numbers"):
        poptorch.trace(random_control_flow, torch.randn(3))
    x = torch.randn(3)
    torch.testing.assert_close(poptorch.trace(torch.sigmoid, x).compile()(x), torch.sigmoid(x))


def test_ctrl_c_in_a_python_meta_kernel_stays_a_keyboard_interrupt():
    # Most Meta kernels are Python functions; Ctrl-C while one runs reaches
    # the tracer as a Python exception. It must stay the user's interrupt,
    # not become an "invalid arguments" error of the op, and leave the
    # tracer usable.
    lib = torch.library.Library("poptorch_test_interrupt", "DEF")
    lib.define("op(Tensor x) -> Tensor")

    def interrupted(x):
        raise KeyboardInterrupt

    lib.impl("op", interrupted, "Meta")
    lib.impl("op", lambda x: x.clone(), "CPU")

    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.ops.poptorch_test_interrupt.op(x * 2)

    try:
        with pytest.raises(KeyboardInterrupt):
            poptorch.trace(Model(), torch.randn(3, 4))
    finally:
        lib._destroy()
    x = torch.randn(3)
    torch.testing.assert_close(poptorch.trace(torch.sigmoid, x).compile()(x), torch.sigmoid(x))


def test_tracing_does_not_nest():
    def outer(x):
        poptorch.trace(torch.relu, x)
        return x

    with pytest.raises(RuntimeError, match="cannot nest"):
        poptorch.trace(outer, torch.randn(3))


# ---------------------------------------------------------------- guards and recompilation
class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))


def test_new_shape_recompiles_and_both_are_correct(caplog):
    model = Small().eval()
    ipu = poptorch.inferenceModel(model)
    a, b = torch.randn(4, 3), torch.randn(7, 3)
    with torch.no_grad():
        assert_matches(ipu(a), model(a))
        assert ipu.compile_count == 1
        with caplog.at_level(logging.INFO, logger="poptorch"):
            assert_matches(ipu(b), model(b))
        assert ipu.compile_count == 2
        assert "recompiling because input 0 changed from float32[4, 3] to float32[7, 3]" in (
            caplog.text)
        assert_matches(ipu(b), model(b))  # replayed, not recompiled
        assert ipu.compile_count == 2


def test_ipu_context_recompiles_for_a_new_shape():
    ctx = poptorch.experimental.IPUContext(lambda x: x * 2 + 1)
    for n in (2, 5):
        x = torch.randn(n)
        torch.testing.assert_close(ctx(x), x * 2 + 1)
    assert ctx.graph.signature.leaves[0].shape == (5,)


@pytest.mark.parametrize("bad,what", [
    ((torch.randn(5, 3),), r"input 0 changed from float32\[4, 3\] to float32\[5, 3\]"),
    ((torch.randn(4, 3).double(),), r"input 0 changed from float32\[4, 3\] to float64\[4, 3\]"),
    ((torch.randn(4, 3), torch.randn(4, 3)), "input structure changed"),
])
def test_executable_with_wrong_input_raises_value_error(bad, what):
    exe = poptorch.trace(Small().eval(), torch.randn(4, 3)).compile()
    with pytest.raises(ValueError, match=what):
        exe(*bad)


def test_input_requiring_grad_warns_and_works():
    model = Small().eval()
    x = torch.randn(4, 3, requires_grad=True)
    with pytest.warns(UserWarning, match="input 0 requires grad") as record:
        out = poptorch.inferenceModel(model)(x)  # @requires-grad
    # The warning points at the caller's line, not inside poptorch.
    assert any(w.filename == THIS_FILE and w.lineno == line_of("# @requires-grad")
               for w in record), [(w.filename, w.lineno) for w in record]
    with torch.no_grad():
        assert_matches(out, model(x))
    assert not out.requires_grad


def test_parameters_requiring_grad_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        poptorch.inferenceModel(Small().eval())(torch.randn(2, 3))


def test_training_mode_model_is_switched_to_eval(caplog):
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.9))
    x = torch.randn(4, 3)
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        out = poptorch.inferenceModel(model)(x)
    assert "eval mode" in caplog.text
    with torch.no_grad():
        assert_matches(out, model.eval()(x))


# ---------------------------------------------------------------- process exit
def run_script(body: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_process_exits_cleanly_after_compiling():
    result = run_script("""
        import torch, poptorch
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval()
        ipu = poptorch.inferenceModel(model)
        x = torch.randn(2, 4)
        torch.testing.assert_close(ipu(x), model(x))
        exe = poptorch.trace(torch.tanh, x).compile()   # still alive at exit
        exe(x)
        print("done")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"


def test_equal_outputs_after_cse_do_not_crash():
    result = run_script("""
        import torch, poptorch
        x = torch.randn(3)
        a, b = poptorch.trace(lambda x: (x + 1, x + 1), x).compile()(x)
        torch.testing.assert_close(a, x + 1)
        torch.testing.assert_close(b, x + 1)
    """)
    assert result.returncode == 0, result.stderr[-2000:]


def test_mixed_dtype_matmul_is_rejected_at_trace_time_with_the_line():
    model = torch.nn.Linear(3, 2).eval()
    x = torch.randn(2, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=r"aten::addmm at .*test_errors.py:\d+.*same dtype"):
        poptorch.trace(lambda t: model(t), x)
