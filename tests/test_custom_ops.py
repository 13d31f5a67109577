"""PopTorch's custom ops and its ops without a PyTorch equivalent: custom_op (a
registered PyTorch function, a host function, a torch.library operator),
ctc_beam_search_decoder (checked against the exact CTC distribution), fps (checked
against its defining property) and dynamic_update, compiled and compared with eager."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from conftest import assert_matches

import poptorch

# ---- custom_op


@poptorch.register_custom_op("LeakyScale", "test.domain", 1)
def _leaky_scale(x, y, *, alpha=0.1, scale=1.0):
    return torch.where(x > 0, x, alpha * x) * scale + y, x.sum(-1)


@poptorch.register_custom_op("NumpyCumsum", "test.domain", 2, host=True)
def _numpy_cumsum(x, *, axis=0):
    # not traceable: runs on the host inside the program
    return torch.from_numpy(np.cumsum(x.numpy(), axis=axis))


_LIB = torch.library.Library("poptorch_test_ops", "DEF")
_LIB.define("softclip(Tensor x, float bound) -> Tensor")
_LIB.impl("softclip", lambda x, bound: bound * torch.tanh(x / bound), "CPU")
_LIB.impl("softclip", lambda x, bound: torch.empty_like(x), "Meta")


class UsesCustomOps(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(5, 5)

    def forward(self, x, y):
        h = self.linear(x)
        a, s = poptorch.custom_op((h, y), "LeakyScale", "test.domain", 1,
                                  example_outputs=(h, s_like(h)),
                                  attributes={"alpha": 0.2, "scale": 3.0})
        c, = poptorch.custom_op([a], "NumpyCumsum", "test.domain", 2, [a], {"axis": 1})
        d, = poptorch.custom_op([c], "softclip", "poptorch_test_ops", 1, [c], {"bound": 2.0})
        return d + 1, s


def s_like(h):
    return torch.zeros(h.shape[:-1])


def test_custom_ops_run_inside_the_program():
    torch.manual_seed(0)
    model = UsesCustomOps().eval()
    compiled = poptorch.inferenceModel(model)
    for _ in range(2):
        x, y = torch.randn(3, 5), torch.randn(3, 5)
        with torch.no_grad():
            assert_matches(compiled(x, y), model(x, y))
    graph = poptorch.trace(model, torch.randn(3, 5), torch.randn(3, 5))
    hosted = {r["name"] for r in graph.op_log if r["status"] == "host_kernel"}
    # the traced function is compiled; the host function and the torch.library
    # operator (no lowering) run on the host
    assert hosted == {"poptorch::host_call", "poptorch_test_ops::softclip"}
    assert "poptorch.where" in graph.mlir or "poptorch.select" in graph.mlir


def test_custom_op_errors():
    x = torch.ones(2)
    with pytest.raises(poptorch.Error, match="is not registered. PopART C\\+\\+ custom ops"):
        poptorch.custom_op([x], "Unknown", "com.acme", 1, [x])
    with pytest.raises(poptorch.Error, match="example_outputs\\[1\\] is torch.float32 \\[5\\]"):
        poptorch.custom_op([x, x], "LeakyScale", "test.domain", 1, [x, torch.ones(5)])
    with pytest.raises(poptorch.Error, match="returned 2 tensor\\(s\\)"):
        poptorch.custom_op([x, x], "LeakyScale", "test.domain", 1, [x])
    with pytest.raises(ValueError, match="All attribute keys must be strings"):
        poptorch.custom_op([x], "LeakyScale", "test.domain", 1, [x], {1: 2})
    with pytest.raises(ValueError, match="must all be the same"):
        poptorch.custom_op([x], "LeakyScale", "test.domain", 1, [x], {"a": [1, 2.0]})
    with pytest.raises(ValueError, match="non-ASCII"):
        poptorch.custom_op([x], "LeakyScale", "test.domain", 1, [x], {"a": "é"})


# ---- ctc_beam_search_decoder


def exact_ctc_ranking(log_probs: torch.Tensor, blank: int) -> list[tuple[tuple[int, ...], float]]:
    """Every labelling's probability by enumerating all alignments (CTC's definition)."""
    steps, classes = log_probs.shape
    totals: dict[tuple[int, ...], float] = {}
    for path in itertools.product(range(classes), repeat=steps):
        labels, prev = [], None
        for c in path:
            if c != prev and c != blank:
                labels.append(c)
            prev = c
        p = math.exp(sum(float(log_probs[t, c]) for t, c in enumerate(path)))
        totals[tuple(labels)] = totals.get(tuple(labels), 0.0) + p
    return sorted(((k, math.log(v)) for k, v in totals.items()), key=lambda kv: -kv[1])


class Decoder(torch.nn.Module):
    def forward(self, logits, lengths):
        return poptorch.ctc_beam_search_decoder(logits.log_softmax(-1), lengths, blank=1,
                                                beam_width=64, top_paths=3)


def test_ctc_beam_search_decoder_finds_the_most_likely_labellings():
    torch.manual_seed(0)
    steps, batch, classes = 5, 3, 3
    logits = torch.randn(steps, batch, classes) * 2
    lengths = torch.tensor([5, 3, 0])
    model = Decoder()
    compiled = poptorch.inferenceModel(model)
    probs, lens, paths = compiled(logits, lengths)
    assert_matches([probs, lens, paths], model(logits, lengths))
    log_probs = logits.log_softmax(-1)
    for b in range(2):
        exact = exact_ctc_ranking(log_probs[:lengths[b], b], blank=1)[:3]
        for k, (labels, logp) in enumerate(exact):
            assert int(lens[b, k]) == len(labels)
            assert tuple(paths[b, k, :len(labels)].tolist()) == labels
            assert torch.all(paths[b, k, len(labels):] == 0)
            assert math.isclose(float(probs[b, k]), logp, rel_tol=1e-5, abs_tol=1e-5)
    # a sequence of length 0 decodes to the empty labelling with probability 1
    assert probs[2].tolist()[0] == 0.0 and lens[2, 0] == 0
    assert probs[2, 1] == -math.inf


def test_ctc_beam_search_decoder_errors():
    with pytest.raises(ValueError, match="lengths must be integers"):
        poptorch.ctc_beam_search_decoder(torch.zeros(4, 2, 3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="top_paths <= beam_width"):
        poptorch.ctc_beam_search_decoder(torch.zeros(4, 2, 3), torch.zeros(2, dtype=torch.long),
                                         beam_width=2, top_paths=3)


# ---- fps


class Sampler(torch.nn.Module):
    def forward(self, points):
        idx = poptorch.fps(points * 2, [0, 7, 7, 20], ratio=0.4)
        return idx, points[idx].sum(-1)


def test_fps_chooses_the_farthest_points():
    torch.manual_seed(0)
    points = torch.randn(20, 3)
    model = Sampler()
    compiled = poptorch.inferenceModel(model)
    idx, sums = compiled(points)
    assert_matches((idx, sums), model(points))
    assert idx.dtype == torch.int64 and idx.shape == (math.ceil(2.8) + 0 + math.ceil(5.2),)
    # each choice is the point farthest from those chosen before it in its entry
    for first, chosen in [(0, idx[:3]), (7, idx[3:])]:
        assert chosen[0] == first
        seg = points[first:first + (7 if first == 0 else 13)]
        for k in range(1, len(chosen)):
            prev = seg[chosen[:k] - first]
            nearest = torch.cdist(seg, prev).min(1).values
            assert nearest[chosen[k] - first] == nearest.max()
    with pytest.raises(ValueError, match="ptr must rise from 0"):
        poptorch.fps(points, [0, 5], 0.5)


# ---- dynamic_update


class Updater(torch.nn.Module):
    def forward(self, x, src, where):
        return poptorch.dynamic_update(x, src, 1, where.argmax(), 2) * 2, x


@pytest.mark.parametrize("hot", [0, 3, 5])
def test_dynamic_update_writes_at_a_run_time_start(hot):
    x, src = torch.randn(3, 6), torch.randn(3, 2)
    where = torch.zeros(6)
    where[hot] = 1
    compiled = poptorch.inferenceModel(Updater())
    out, same = compiled(x, src, where)
    start = min(hot, 4)  # clamped so the update stays inside
    expected = x.clone()
    expected[:, start:start + 2] = src
    assert_matches((out, same), (expected * 2, x))
    assert_matches(Updater()(x, src, where), (expected * 2, x))
    with pytest.raises(poptorch.Error, match="src must have shape \\[3, 2\\]"):
        poptorch.dynamic_update(x, torch.ones(3, 3), 1, 0, 2)


# ---- compile hooks, module_repr, blocks


def test_compile_hooks():
    calls = []
    pre = poptorch.registerPreCompileHook(lambda: calls.append("pre"))
    post = poptorch.registerPostCompileHook(lambda: calls.append("post"))
    try:
        compiled = poptorch.inferenceModel(torch.nn.Linear(2, 2))
        compiled(torch.ones(1, 2))
        compiled(torch.ones(1, 2))
        assert calls == ["pre", "post"]
        compiled(torch.ones(3, 2))  # a new input shape compiles again
        assert calls == ["pre", "post"] * 2
    finally:
        pre.remove()
        post.remove()
    poptorch.inferenceModel(torch.nn.Linear(2, 2))(torch.ones(1, 2))
    assert len(calls) == 4
    with pytest.raises(RuntimeError, match="Post-compile hook must be callable"):
        poptorch.registerPostCompileHook(3)


def test_module_repr_shows_blocks():
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    poptorch.BeginBlock(model[1], "act", ipu_id=1)
    text = poptorch.module_repr(model)
    assert "(1): BeginBlock(user_id='act', ipu_id=1) ReLU()" in text
    assert "(0): Linear(in_features=2, out_features=3, bias=True)" in text
    assert repr(model) != text


def test_block_forms():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = (torch.nn.Linear(4, 4) for _ in range(3))
            self.tail = poptorch.BeginBlock(lambda t: t * 2, user_id=3, ipu_id=1)

        def forward(self, x):
            poptorch.Block.useAutoId()
            with poptorch.Block(ipu_id=0):
                x = self.a(x)
            with poptorch.Block(ipu_id=0):
                x = self.b(x)
            x = self.c(x)
            return self.tail(x)

    torch.manual_seed(0)
    model = Model()
    poptorch.BeginBlock(model.c, ipu_id=1)
    graph = poptorch.trace(model, torch.randn(2, 4))
    assert [b.block for b in graph.blocks] == ["0", "1", "2", "3"]
    opts = poptorch.Options().deviceIterations(2)  # two stages run pipelined
    opts.outputMode(poptorch.OutputMode.All)
    x = torch.randn(4, 4)
    with torch.no_grad():
        assert_matches(poptorch.inferenceModel(model, opts)(x), model(x))
