"""poptorch.for_loop and poptorch.cond: loops and conditionals of the compiled program
(scf.for / scf.if, neither unrolled nor specialised on traced values), compared with
the same functions run eagerly on the CPU."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_matches

import poptorch


class LoopedLayer(torch.nn.Module):
    """A residual layer applied `count` times through one loop body."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count
        self.linear = torch.nn.Linear(6, 6)
        self.norm = torch.nn.LayerNorm(6)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> list[torch.Tensor]:
        def body(x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            h = torch.tanh(self.linear(x) + h)
            return self.norm(x + h), h * 0.5
        return poptorch.for_loop(self.count, body, [x, h])


def compiled_and_eager(model: torch.nn.Module, *args: torch.Tensor, calls: int = 1):
    model.eval()
    compiled = poptorch.inferenceModel(model)
    for i in range(calls):
        call_args = [a + i for a in args]
        with torch.no_grad():
            assert_matches(compiled(*call_args), model(*call_args), atol=1e-5, rtol=1e-5)
    return compiled


@pytest.mark.parametrize("count", [0, 1, 5])
def test_for_loop_matches_eager(count):
    torch.manual_seed(0)
    compiled_and_eager(LoopedLayer(count), torch.randn(3, 6), torch.randn(3, 6), calls=2)


def test_for_loop_is_a_loop_of_the_program():
    torch.manual_seed(0)
    short = poptorch.trace(LoopedLayer(2).eval(), torch.randn(3, 6), torch.randn(3, 6))
    long = poptorch.trace(LoopedLayer(1000).eval(), torch.randn(3, 6), torch.randn(3, 6))
    assert short.mlir.count("scf.for") == 1 and "%c1000 = arith.constant 1000" in long.mlir
    # The body is traced once whatever the count.
    assert short.num_ops == long.num_ops
    assert long.mlir.count("poptorch.layer_norm") == short.mlir.count("poptorch.layer_norm") == 1


def test_for_loop_results_follow_the_inputs_of_each_call():
    # Nothing is specialised on the traced values: a different input runs the same
    # program and gives eager's result.
    torch.manual_seed(0)
    compiled = compiled_and_eager(LoopedLayer(4), torch.randn(3, 6), torch.randn(3, 6), calls=3)
    assert compiled.compile_count == 1


class Conditional(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, flag: torch.Tensor) -> list[torch.Tensor]:
        return poptorch.cond(flag, lambda u: [self.a(u).relu(), u.sum(0)], [x],
                             lambda v: [self.b(v) * 2, v.amax(0)], [x * 3])


def test_cond_picks_its_branch_when_the_program_runs():
    torch.manual_seed(0)
    model = Conditional().eval()
    compiled = poptorch.inferenceModel(model)
    x = torch.randn(5, 4)
    for flag in [True, False, True]:
        f = torch.tensor(flag)
        with torch.no_grad():
            assert_matches(compiled(x, f), model(x, f))
    assert compiled.compile_count == 1
    graph = poptorch.trace(model, x, torch.tensor(True))
    assert graph.mlir.count("scf.if") == 1 and not graph.guards


def test_cond_on_a_computed_value_and_non_bool_conditions():
    class M(torch.nn.Module):
        def forward(self, x):
            # a float condition (non-zero is true), computed by the program
            return poptorch.cond(x.sum().reshape(1), lambda a: [a + 1], [x],
                                 lambda a: [a - 1], [x])[0]
    model = M()
    compiled = poptorch.inferenceModel(model)
    for x in [torch.ones(3), -torch.ones(3), torch.zeros(3)]:
        assert_matches(compiled(x), model(x))


class Nested(torch.nn.Module):
    def forward(self, x: torch.Tensor, limit: torch.Tensor) -> torch.Tensor:
        def outer(acc, step):
            def inner(a):
                # per-iteration decisions on the loop's own values
                return poptorch.cond((a.abs().max() < limit).reshape(()),
                                     lambda t: [t * 1.5 + step], [a],
                                     lambda t: [t * 0.25], [a])
            acc, = poptorch.for_loop(3, inner, [acc])
            return acc, step + 1
        return poptorch.for_loop(4, outer, [x, torch.zeros_like(x)])[0]


def test_nested_loops_and_conditionals():
    model = Nested()
    compiled = poptorch.inferenceModel(model)
    for limit in [2.0, 5.0, 100.0]:
        x, lim = torch.linspace(-1, 1, 6), torch.tensor(limit)
        assert_matches(compiled(x, lim), model(x, lim))
    text = poptorch.trace(model, torch.ones(6), torch.tensor(2.0)).mlir
    assert text.count("scf.for") == 2 and text.count("scf.if") == 1


class ConvLoop(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return poptorch.for_loop(3, lambda y: [torch.relu(self.bn(self.conv(y))) + y], [x])[0]


def test_a_convolution_block_in_a_loop():
    torch.manual_seed(0)
    model = ConvLoop().eval()
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 2)
    compiled_and_eager(model, torch.randn(2, 3, 8, 8), calls=2)


def test_device_iterations_around_a_loop():
    torch.manual_seed(0)
    model = LoopedLayer(3).eval()
    opts = poptorch.Options().deviceIterations(4)
    opts.outputMode(poptorch.OutputMode.All)
    compiled = poptorch.inferenceModel(model, opts)
    x, h = torch.randn(4 * 3, 6), torch.randn(4 * 3, 6)
    out = compiled(x, h)
    with torch.no_grad():
        ref = [model(x[3 * i:3 * i + 3], h[3 * i:3 * i + 3]) for i in range(4)]
    assert_matches(out, [torch.cat([r[k] for r in ref]) for k in range(2)], atol=1e-5, rtol=1e-5)


def test_the_body_may_write_its_own_tensors_but_never_the_callers():
    class M(torch.nn.Module):
        def forward(self, x):
            def body(a):
                a.mul_(2)      # the loop's own tensor
                a[0] = -1.0
                return [a]
            return poptorch.for_loop(3, body, [x])[0] + x
    x = torch.arange(4.0)
    before = x.clone()
    compiled = poptorch.inferenceModel(M())
    assert_matches(compiled(x), M()(x.clone()))
    assert torch.equal(x, before)


def test_eager_calls_run_python_loops():
    calls = []

    def body(a):
        calls.append(1)
        return [a + 1]
    assert torch.equal(poptorch.for_loop(3, body, [torch.zeros(2)])[0], torch.full((2,), 3.0))
    assert len(calls) == 3
    out = poptorch.cond(torch.tensor([0]), lambda a: a, [torch.ones(1)],
                        lambda a: a * 5, [torch.ones(1)])
    assert torch.equal(out[0], torch.tensor([5.0]))


# ---- errors: PopTorch's for the arguments, a poptorch.Error naming the line otherwise


def test_argument_errors():
    with pytest.raises(ValueError, match="to be a list of tensors. \\(Object is not list\\)"):
        poptorch.for_loop(2, lambda a: a, (torch.ones(1),))
    with pytest.raises(ValueError, match="at index 1 is not torch.tensor"):
        poptorch.for_loop(2, lambda a, b: (a, b), [torch.ones(1), 2.0])
    with pytest.raises(ValueError, match="then_inputs"):
        poptorch.cond(torch.tensor(True), lambda a: a, torch.ones(1), lambda a: a, [])
    with pytest.raises(poptorch.Error, match="condition must be a tensor of one element"):
        poptorch.cond(torch.ones(2), lambda a: a, [], lambda a: a, [])


def compile_error(model, *args) -> str:
    with pytest.raises(poptorch.Error) as info:
        poptorch.inferenceModel(model)(*args)
    return str(info.value)


def test_body_outputs_must_match_its_inputs():
    msg = compile_error(Fn2(lambda x: poptorch.for_loop(2, lambda a: [a.sum()], [x])[0]),
                        torch.ones(3))
    assert "for_loop's body" in msg and "Float[]" in msg and "Float[3]" in msg
    assert "test_control_flow.py" in msg
    msg = compile_error(Fn2(lambda x: poptorch.for_loop(2, lambda a: [a, a], [x])[0]),
                        torch.ones(3))
    assert "returns 2 tensor(s)" in msg
    msg = compile_error(Fn2(lambda x: poptorch.cond(x.sum() > 0, lambda a: [a], [x],
                                                    lambda a: [a.long()], [x])[0]),
                        torch.ones(3))
    assert "else_body" in msg and "Long[3]" in msg


def test_what_a_region_cannot_do_is_named():
    msg = compile_error(Fn2(lambda x: poptorch.for_loop(
        2, lambda a: [a * a.sum().item()], [x])[0]), torch.ones(3))
    assert "inside poptorch.for_loop" in msg and "Read it before the loop" in msg
    msg = compile_error(Fn2(lambda x: poptorch.for_loop(
        2, lambda a: [a + torch.rand_like(a)], [x])[0]), torch.ones(3))
    assert "draws random numbers" in msg
    # a tensor of the body used after the loop
    kept = []

    def leaky(x):
        out = poptorch.for_loop(2, lambda a: (kept.append(a * 2), [a + 1])[1], [x])[0]
        return out + kept[-1]
    msg = compile_error(Fn2(leaky), torch.ones(3))
    assert "computed inside poptorch.for_loop" in msg and "return the tensor from the body" in msg


def test_a_block_cannot_start_inside_a_loop():
    def body(a):
        with poptorch.Block("inner", ipu_id=1):
            return [a * 2]
    msg = compile_error(Fn2(lambda x: poptorch.for_loop(2, body, [x])[0]), torch.ones(3))
    assert "poptorch.Block at" in msg and "Start the block before it" in msg


def test_writing_a_buffer_inside_a_loop_is_refused():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(1))

        def forward(self, x):
            def body(a):
                self.count.add_(1)
                return [a * 2]
            return poptorch.for_loop(2, body, [x])[0]
    msg = compile_error(M(), torch.ones(3))
    assert "writes count in place inside a loop body" in msg and "computed inside poptorch.for_loop" in msg


class Fn2(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)
