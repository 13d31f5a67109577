"""Values read while tracing: ``Tensor.item()``, ``bool(t)``, ``int(t)``, ``.tolist()``,
``.cpu()`` and Python ``if`` on tensors the model computed.

The tracer computes the value for the traced inputs (it compiles and runs the program
so far), the program is specialised on it, and every call checks it; a call that gives
another value runs (or compiles) the variant for it. Each test compares with eager
PyTorch on inputs that take every branch.
"""

from __future__ import annotations

import logging
import re

import pytest
import torch
from conftest import Fn, assert_matches

import poptorch
from poptorch import errors

THIS_FILE = __file__.rsplit("/", 1)[-1]



def branchy(x):
    if x.sum() > 0:  # @branch
        return x * 2
    return x - 1


def check_calls(model, fn, inputs) -> None:
    for args in inputs:
        with torch.no_grad():
            expected = fn(*[a.clone() for a in args])
        assert_matches(model(*args), expected)


def test_python_if_on_a_computed_tensor_takes_both_branches():
    model = poptorch.inferenceModel(Fn(branchy))
    pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
    check_calls(model, branchy, [(pos,), (neg,), (pos,), (neg,), (pos * 3,)])
    # One variant per value of the condition, compiled once each.
    assert model.compile_count == 2
    guards = model.executable.graph.guards
    assert len(guards) == 1
    assert f"{THIS_FILE}:" in guards[0].location


def test_guard_failure_is_logged_with_line_and_values(caplog):
    model = poptorch.inferenceModel(Fn(branchy))
    model(torch.ones(2))
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        model(-torch.ones(2))
    text = caplog.text
    assert "specialised on True read by aten::_local_scalar_dense" in text, text
    assert "is False for these inputs" in text, text
    assert re.search(rf"{THIS_FILE}:\d+", text), text


@pytest.mark.parametrize("name, fn, inputs", [
    ("item-scalar", lambda x: x * x.max().item(),
     [(torch.arange(6.0).reshape(2, 3),), (torch.arange(6.0).reshape(2, 3) - 10,)]),
    ("int-size", lambda x, m: x[:, :int(m.sum())],
     [(torch.randn(2, 6), torch.tensor([1, 1, 0, 1])), (torch.randn(2, 6), torch.tensor([1, 0, 0, 0]))]),
    ("tolist", lambda x: x.sum(0) + torch.tensor((x > 0).sum(1).tolist(), device=x.device),
     [(torch.tensor([[1.0, -1.0], [2.0, 3.0]]),), (torch.tensor([[-1.0, -1.0], [2.0, 3.0]]),)]),
    ("cpu", lambda x: (x * 2).cpu().sum() + x,
     [(torch.ones(3),), (torch.full((3,), 2.0),)]),
    ("bool-all", lambda x, mask: x if bool(mask.all()) else x * mask,
     [(torch.randn(2, 4), torch.ones(2, 4)),
      (torch.randn(2, 4), torch.tensor([[1.0, 1, 0, 0], [1, 1, 1, 1]]))]),
    ("input-item", lambda x, flag: x + 1 if flag.item() else x - 1,
     [(torch.randn(3), torch.tensor(True)), (torch.randn(3), torch.tensor(False))]),
    ("equal", lambda x, y: x * 2 if torch.equal(x, y) else x - y,
     [(torch.ones(3), torch.ones(3)), (torch.ones(3), torch.zeros(3))]),
    # tensor_split reads a tensor of indices, which eager wants on the CPU
    ("tensor_split-indices", lambda x, i: torch.tensor_split(x, i, dim=1),
     [(torch.randn(2, 7), torch.tensor([1, 4])), (torch.randn(2, 7), torch.tensor([2, 3]))]),
    ("two-reads", lambda x: x * int(x.argmax()) + float(x.min()),
     [(torch.tensor([1.0, 5.0, 2.0]),), (torch.tensor([7.0, 5.0, 2.0]),), (torch.tensor([1.0, 5.0, 9.0]),)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_values_read_while_tracing_match_eager(name, fn, inputs):
    model = poptorch.inferenceModel(Fn(fn))
    check_calls(model, fn, inputs + inputs)  # the second round reuses the variants
    assert model.compile_count == len(inputs)


def test_read_of_a_mask_like_hf_masking_utils():
    # transformers' masking_utils skips the mask when `padding_mask.all()`.
    def attend(scores, padding):
        if padding.all():
            return scores.softmax(-1)
        return scores.masked_fill(~padding[:, None, :], float("-inf")).softmax(-1)

    def fn(x, attention_mask):
        return attend(x @ x.transpose(1, 2), attention_mask.bool())

    x = torch.randn(2, 5, 4)
    full = torch.ones(2, 5, dtype=torch.long)
    padded = full.clone()
    padded[1, 3:] = 0
    model = poptorch.inferenceModel(Fn(fn))
    check_calls(model, fn, [(x, full), (x, padded), (x, full)])
    assert model.compile_count == 2


def test_variants_are_bounded():
    fn = lambda x: x * int(x.sum())  # noqa: E731
    model = poptorch.inferenceModel(Fn(fn))
    n = poptorch._poplar_executor.MAX_VARIANTS + 2
    check_calls(model, fn, [(torch.full((2,), float(i)),) for i in range(n)])
    assert model.compile_count == n
    assert len(model._variants) == poptorch._poplar_executor.MAX_VARIANTS


def test_buffer_updates_of_a_failed_guard_are_not_written():
    class Counter(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("count", torch.zeros(()))

        def forward(self, x):
            self.count += 1
            if x.sum() > 0:
                return x + self.count
            return x - self.count

    eager, compiled = Counter(), Counter()
    model = poptorch.inferenceModel(compiled)
    for x in [torch.ones(2), -torch.ones(2), -torch.ones(2), torch.ones(2)]:
        assert_matches(model(x), eager(x))
    model.copyWeightsToHost()
    assert compiled.count.item() == eager.count.item() == 4


def test_traced_program_raises_on_another_value():
    x = torch.ones(3)
    exe = poptorch.trace(branchy, x).compile()
    assert_matches(exe(x), branchy(x))
    with pytest.raises(errors.GuardFailedError) as info:
        exe(-x)
    assert isinstance(info.value, poptorch.Error) and isinstance(info.value, ValueError)
    assert "specialised on True" in str(info.value)
    assert info.value.guard.location == exe.graph.guards[0].location


def test_values_computed_from_random_numbers_cannot_be_guarded():
    def fn(x):
        if torch.rand(()) > 0.5:  # @random-if
            return x
        return -x

    with pytest.raises(poptorch.Error) as info:
        poptorch.inferenceModel(Fn(fn))(torch.ones(2))
    message = str(info.value)
    assert "random numbers" in message, message
    assert THIS_FILE in message


def test_guarded_value_becomes_a_constant_of_the_trace():
    # After the read, the value is known: ops on it fold at trace time.
    def fn(x):
        n = x.shape[0] - int((x > 0).sum())
        return x.new_zeros(n) + 1

    x = torch.tensor([1.0, -1.0, -2.0])
    graph = poptorch.trace(fn, x)
    assert len(graph.guards) == 1
    assert_matches(graph.compile()(x), fn(x))


def test_exported_program_keeps_its_guards(tmp_path):
    # A model that reads a value while tracing (HF BERT's padding mask does) exports the
    # guard with the program: the loaded executable checks it like the compiled one (the
    # guard's program result was unknown to it: a KeyError on load).
    model = poptorch.inferenceModel(Fn(branchy))
    x = torch.ones(4)
    path = str(tmp_path / "branchy.poptorch")
    model.compileAndExport(path, x)
    loaded = poptorch.load(path)
    assert_matches(loaded(x), branchy(x))
    assert_matches(loaded(-x), branchy(-x))  # the other branch: a variant is compiled
