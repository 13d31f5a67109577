"""What the tracer captures: the IR of TracedGraph.mlir, argument roles, source
locations, buffer updates, and value semantics for in-place ops and views."""

from __future__ import annotations

import inspect
import re

import torch
from conftest import check, compiled

import poptorch

THIS_FILE = __file__


def line_of(marker: str) -> int:
    """The line of this file that contains ``marker`` (in a comment)."""
    for number, text in enumerate(open(THIS_FILE).read().splitlines(), start=1):
        if marker in text and "line_of(" not in text:
            return number
    raise AssertionError(marker)


def main_signature(mlir: str) -> str:
    return re.search(r"func\.func @main\((.*?)\) ->", mlir).group(1)


def dialect_ops(mlir: str) -> list[str]:
    return re.findall(r"= (poptorch\.[a-z_0-9]+)", mlir)


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 6)
        self.norm = torch.nn.LayerNorm(6)
        self.register_buffer("scale", torch.full((6,), 2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)  # @fc
        y = torch.relu(self.norm(y))  # @norm-relu
        return y * self.scale  # @scale


def test_dialect_ops_of_a_block():
    graph = poptorch.trace(Block(), torch.randn(3, 4))
    ops = dialect_ops(graph.mlir)
    for op in ("poptorch.addmm", "poptorch.layer_norm", "poptorch.relu", "poptorch.mul"):
        assert op in ops, (op, ops)
    # Only our dialect is captured: lowering happens later, in the pipeline.
    assert "linalg." not in graph.mlir and "aten" not in graph.mlir
    assert graph.num_ops >= 4


def test_argument_roles_and_names():
    graph = poptorch.trace(Block(), torch.randn(3, 4))
    sig = main_signature(graph.mlir)
    args = re.findall(r'%arg\d+: (tensor<[^>]*>) \{poptorch\.name = "([^"]+)", '
                      r'poptorch\.role = "([a-z]+)"\}', sig)
    assert [(name, role) for _, name, role in args] == [
        ("input0", "input"), ("fc.weight", "parameter"), ("fc.bias", "parameter"),
        ("norm.weight", "parameter"), ("norm.bias", "parameter"), ("scale", "buffer")]
    assert args[0][0] == "tensor<3x4xf32>" and args[1][0] == "tensor<6x4xf32>"


def test_python_scalars_and_captured_tensors_become_constants():
    w = torch.tensor([1.0, 2.0, 3.0])
    graph = poptorch.trace(lambda x: x * w + 0.5, torch.randn(2, 3))
    assert main_signature(graph.mlir).count("%arg") == 1
    assert "poptorch.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>" in graph.mlir
    assert "poptorch.constant dense<5.000000e-01>" in graph.mlir


def test_repeated_python_scalars_share_one_constant():
    def f(x):
        for _ in range(5):
            x = (x + 0.5) * 2
        return x

    graph = poptorch.trace(f, torch.randn(2, 3))
    constants = re.findall(r"poptorch\.constant dense<([^>]*)>", graph.mlir)
    assert sorted(constants) == ["2.000000e+00", "5.000000e-01"], constants
    assert dialect_ops(graph.mlir).count("poptorch.mul") == 5
    check(f, torch.randn(2, 3))


def test_python_scalars_convert_like_eager_kernels():
    # Read straight from the wrapped number, converted as eager converts it:
    # int8 + 300 wraps, a float scalar rounds to the tensor's dtype.
    for dtype, scalar in ((torch.int8, 300), (torch.float16, 1.0001), (torch.bfloat16, 3.3),
                          (torch.int32, True), (torch.float32, 2**40 + 1)):
        x = torch.arange(4).to(dtype)
        check(lambda t, s=scalar: t + s, x)
        check(lambda t, s=scalar: t * s, x)


def test_scalar_constants_are_made_per_block():
    class TwoBlocks(torch.nn.Module):
        def forward(self, x):
            with poptorch.Block("first", ipu_id=0):
                x = x * 0.5
            with poptorch.Block("second", ipu_id=1):
                x = x * 0.5
            return x

    graph = poptorch.trace(TwoBlocks(), torch.randn(2, 3))
    halves = [line for line in graph.mlir.splitlines()
              if "poptorch.constant {" in line and "dense<5.000000e-01>" in line]
    assert len(halves) == 2, halves
    assert 'poptorch.block = "first"' in halves[0] and 'poptorch.block = "second"' in halves[1]


def test_constant_subgraphs_are_folded_at_trace_time():
    def f(x):
        table = torch.arange(6.0).reshape(2, 3).exp().sum(0)  # all constant
        return x + table

    graph = poptorch.trace(f, torch.randn(2, 3))
    assert dialect_ops(graph.mlir).count("poptorch.add") == 1
    assert "poptorch.exp" not in graph.mlir
    check(f, torch.randn(2, 3))


def test_source_locations_point_at_model_lines():
    graph = poptorch.trace(Block(), torch.randn(3, 4))
    locs = set(re.findall(r'loc\("([^"]+)":(\d+):0\)', graph.mlir))
    assert (THIS_FILE, str(line_of("# @fc"))) in locs
    assert (THIS_FILE, str(line_of("# @norm-relu"))) in locs
    assert (THIS_FILE, str(line_of("# @scale"))) in locs
    # No location points inside torch or poptorch.
    torch_dir = inspect.getfile(torch).rsplit("/", 1)[0]
    poptorch_dir = inspect.getfile(poptorch).rsplit("/", 1)[0]
    assert not [f for f, _ in locs if f.startswith((torch_dir, poptorch_dir))], locs


def test_op_location_is_attached_to_the_op():
    def f(x):
        return x.sigmoid()  # @sigmoid

    graph = poptorch.trace(f, torch.randn(3))
    line = re.search(r"poptorch\.sigmoid .* loc\((#loc\d+)\)", graph.mlir).group(1)
    assert f'{line} = loc("{THIS_FILE}":{line_of("# @sigmoid")}:0)' in graph.mlir


def test_source_location_excludes_option():
    opts = poptorch.Options().sourceLocationExcludes([THIS_FILE])
    model = poptorch.inferenceModel(Block(), opts)
    model(torch.randn(3, 4))
    assert THIS_FILE not in model.executable.graph.mlir


# ---------------------------------------------------------------- buffer updates
class Counter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count += 1
        self.total.add_(x.sum(0))
        return x * self.count


def test_buffer_update_is_a_result_with_updates_attribute():
    graph = poptorch.trace(Counter(), torch.randn(2, 3))
    results = re.search(r"-> \((.*)\) attributes", graph.mlir).group(1)
    # count is argument 1 (after the input), total argument 2.
    assert "tensor<i64> {poptorch.updates = 1 : i64}" in results
    assert "tensor<3xf32> {poptorch.updates = 2 : i64}" in results
    assert graph.buffer_update_args == [1, 2]


def test_tracing_leaves_the_model_state_untouched():
    """Parameters and buffers are traced in place of the model's own memory (no
    copy): the ops that write them are captured, never run on it."""
    class Writer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(3))
            self.register_buffer("total", torch.randn(3))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            with torch.no_grad():
                self.weight.mul_(2)
            self.total.copy_(x.sum(0))
            self.total[0] = 5.0
            return x * self.weight + self.total

    model = Writer()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.randn(2, 3)
    poptorch.trace(model, x)
    ipu = poptorch.inferenceModel(model)
    ipu(x)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_buffer_updates_persist_across_calls():
    model = Counter()
    ipu = poptorch.inferenceModel(model)
    xs = [torch.randn(2, 3) for _ in range(3)]
    for i, x in enumerate(xs, start=1):
        torch.testing.assert_close(ipu(x), x * i)
    assert ipu.compile_count == 1
    # The host model is untouched until the device copy is read back.
    assert model.count.item() == 0
    ipu.copyWeightsToHost()
    assert model.count.item() == 3
    torch.testing.assert_close(model.total, sum(x.sum(0) for x in xs))


def test_copy_weights_to_device_resets_device_state():
    model = Counter()
    ipu = poptorch.inferenceModel(model)
    x = torch.randn(2, 3)
    ipu(x)
    ipu(x)
    ipu.copyWeightsToDevice()  # the host still has count == 0
    torch.testing.assert_close(ipu(x), x * 1)


def test_batch_norm_running_stats_are_not_updated_in_eval():
    bn = torch.nn.BatchNorm1d(3).eval()
    graph = poptorch.trace(bn, torch.randn(4, 3))
    assert graph.buffer_update_args == []
    assert "poptorch.updates" not in graph.mlir


# ---------------------------------------------------------------- in-place ops and views
def test_inplace_on_slice():
    def f(x):
        x = x * 1
        x[:, 0] = 0
        x[1] += 5
        return x

    check(f, torch.randn(3, 4))


def test_inplace_through_view_updates_base():
    def f(x):
        base = x + 0
        y = base.view(2, 6)
        y.add_(1)
        z = base.transpose(0, 1)
        z.mul_(2)
        return base, y, z

    check(f, torch.randn(3, 4))


def test_inplace_activation_and_out_argument():
    def f(x):
        y = x.clone()
        torch.relu_(y)
        out = torch.empty(3, 4)
        torch.add(y, 1, out=out)
        return y.sigmoid_(), out

    check(f, torch.randn(3, 4))


def test_inplace_on_input_is_written_back_like_eager():
    def f(x):
        x.mul_(2)
        return x + 1

    x_eager, x_ipu = torch.randn(3), None
    x_ipu = x_eager.clone()
    with torch.no_grad():
        expected = f(x_eager)
    torch.testing.assert_close(compiled(f, x_ipu.clone()), expected)
    exe = poptorch.trace(f, x_ipu.clone()).compile()
    torch.testing.assert_close(exe(x_ipu), expected)
    torch.testing.assert_close(x_ipu, x_eager)


def test_inplace_module_on_input():
    x = torch.randn(2, 5)
    expected = torch.relu(x)
    out = poptorch.inferenceModel(torch.nn.ReLU(inplace=True))(x)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(x, expected)


def test_output_aliases():
    # The same tensor returned twice, an input returned as is, a view of it.
    def f(x):
        y = x * 2
        return y, y, x, x.view(-1)

    check(f, torch.randn(2, 2))


def test_non_tensor_outputs_and_structure():
    def f(x, d):
        return {"sum": x + d["b"], "n": 3, "pair": (x * 2, None)}

    x = torch.randn(2)
    check(f, x, {"b": torch.randn(2)})


def test_setitem_with_tensor_on_buffer():
    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("state", torch.zeros(2, 3))

        def forward(self, x):
            self.state[0] = x
            return self.state.sum(0)

    model = M()
    ipu = poptorch.inferenceModel(model)
    x = torch.randn(3)
    torch.testing.assert_close(ipu(x), x)
    ipu.copyWeightsToHost()
    torch.testing.assert_close(model.state[0], x)


def test_strided_and_nested_view_writes():
    def f(x):
        x = x + 0
        x[:, ::2] = -1.0                 # strided slice
        x[1:, 2:] *= 2                   # 2-D block
        x.t()[3, 1:] = 7.0               # select of a transposed view
        x.narrow(0, 0, 1).add_(x[2])     # narrow, with a broadcast source
        return x

    check(f, torch.randn(3, 5))


def test_write_with_tensor_source_and_index_counting_from_end():
    def f(x, v):
        y = x.clone()
        y[-1] = v
        y[:, -2:] = v[:2]
        return y

    check(f, torch.randn(4, 3), torch.randn(3))


def test_prepacked_weights_follow_copy_weights_to_device_and_host():
    # Linear weights are uploaded transposed (poptorch-prepack-parameters):
    # both copy directions must still see the host layout.
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    model.eval()
    x = torch.randn(2, 6)
    ipu = poptorch.inferenceModel(model)
    torch.testing.assert_close(ipu(x), model(x))
    assert "poptorch.permuted" in ipu.executable.stages[1][1]
    original = model[0].weight.detach().clone()
    with torch.no_grad():
        model[0].weight.mul_(-2)
    ipu.copyWeightsToDevice()
    torch.testing.assert_close(ipu(x), model(x))
    with torch.no_grad():
        model[0].weight.copy_(original)
    ipu.copyWeightsToHost()  # the device still holds the -2x weights
    torch.testing.assert_close(model[0].weight, original * -2)


def test_integer_division_follows_the_default_dtype_of_each_trace():
    """Meta results are memoized; the default dtype is part of what they depend on."""
    class Divide(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a / b

    a, b = torch.arange(1, 7).reshape(2, 3), torch.full((2, 3), 4)
    for dtype in (torch.float32, torch.float64, torch.float32):
        previous = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        try:
            out = poptorch.inferenceModel(Divide())(a, b)
            expected = a / b
        finally:
            torch.set_default_dtype(previous)
        assert out.dtype == dtype
        torch.testing.assert_close(out, expected)
