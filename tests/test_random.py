"""Random ops: distributions within tight confidence bounds, reproducibility
with Options.randomSeed, fresh numbers per call and per op.

poptorch's generator is counter-based (splitmix64 of seed, call, op, element),
not torch's CPU generator: values differ from eager, distributions do not.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import Fn
from opsuite import dtypes

import poptorch

N = 200_000  # 4.5 sigma of a unit-variance mean is 0.01



def run(fn, *args, seed=1234):
    return poptorch.inferenceModel(Fn(fn), poptorch.Options().randomSeed(seed))(*args)


def close(value, expected, sigma, n=N):
    bound = 5 * sigma / math.sqrt(n)
    assert abs(float(value) - expected) < bound, (float(value), expected, bound)


@dtypes([torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_uniform(dtype):
    x = torch.zeros(N, dtype=dtype)
    r = run(lambda x: torch.rand_like(x) * 4 - 1, x).double()
    assert r.min() >= -1 and r.max() <= 3
    close(r.mean(), 1.0, 4 / math.sqrt(12))
    close(r.var(), 16 / 12, 4.3)  # var of the sample variance of U(0, 4)
    r2 = run(lambda x: x.clone().uniform_(2, 5), x).double()
    assert r2.min() >= 2 and r2.max() <= 5
    close(r2.mean(), 3.5, 3 / math.sqrt(12))


@dtypes([torch.float32, torch.float64, torch.bfloat16])
def test_normal(dtype):
    x = torch.zeros(N, dtype=dtype)
    r = run(lambda x: torch.randn_like(x), x).double()
    close(r.mean(), 0.0, 1.0)
    close(r.std(), 1.0, math.sqrt(0.5))
    close((r.abs() < 1).double().mean(), 0.6827, 0.47)
    r2 = run(lambda x: x.clone().normal_(3.0, 2.0), x).double()
    close(r2.mean(), 3.0, 2.0)
    close(r2.std(), 2.0, math.sqrt(2))


def test_exponential():
    x = torch.zeros(N)
    r = run(lambda x: x.clone().exponential_(2.0), x).double()
    assert r.min() >= 0
    close(r.mean(), 0.5, 0.5)
    close((r > 1.0).double().mean(), math.exp(-2.0), 0.35)


@dtypes([torch.float32, torch.float64, torch.float16])
def test_bernoulli(dtype):
    x = torch.zeros(N, dtype=dtype)
    r = run(lambda x: torch.bernoulli(x + 0.3), x)
    assert set(r.unique().tolist()) <= {0.0, 1.0}
    close(r.double().mean(), 0.3, math.sqrt(0.21))
    r2 = run(lambda x: x.clone().bernoulli_(0.8), x)
    close(r2.double().mean(), 0.8, 0.4)
    # Tensor p: zero and one are exact.
    p = torch.tensor([0.0, 1.0]).repeat(N // 2)
    r3 = run(lambda x, p: torch.bernoulli(p.to(x.dtype)), x, p)
    assert torch.equal(r3.float(), p)


@dtypes([torch.int64, torch.int32, torch.int8, torch.float32])
def test_randint_like(dtype):
    x = torch.zeros(N, dtype=dtype)
    r = run(lambda x: torch.randint_like(x, -3, 5), x)
    assert r.dtype == dtype
    assert set(r.unique().tolist()) == set(range(-3, 5))
    close(r.double().mean(), 0.5, math.sqrt((64 - 1) / 12))


def test_factories_on_the_device():
    x = torch.zeros(3)

    def fn(x):
        d = x.device
        return (torch.rand(N, device=d), torch.randn(N, device=d),
                torch.randint(10, (N,), device=d), torch.randint(3, 7, (N,), device=d))

    u, n, i, j = run(fn, x)
    close(u.double().mean(), 0.5, math.sqrt(1 / 12))
    close(n.double().mean(), 0.0, 1.0)
    assert i.dtype == torch.int64 and i.min() == 0 and i.max() == 9
    assert j.min() == 3 and j.max() == 6


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_dropout_training(p):
    x = torch.ones(N)
    r = run(lambda x: F.dropout(x, p, training=True), x)
    kept = r != 0
    close(kept.double().mean(), 1 - p, math.sqrt(p * (1 - p)))
    torch.testing.assert_close(r[kept], torch.full_like(r[kept], 1 / (1 - p)))


def test_reproducible_and_advancing():
    x = torch.zeros(1000)
    fn = lambda x: (torch.rand_like(x), torch.rand_like(x))  # noqa: E731
    model = poptorch.inferenceModel(Fn(fn), poptorch.Options().randomSeed(7))
    a1, b1 = model(x)
    a2, _ = model(x)
    assert not torch.equal(a1, b1), "two ops draw different numbers"
    assert not torch.equal(a1, a2), "each call draws new numbers"
    again = poptorch.inferenceModel(Fn(fn), poptorch.Options().randomSeed(7))
    c1, d1 = again(x)
    assert torch.equal(a1, c1) and torch.equal(b1, d1), "same seed, same numbers"
    other = poptorch.inferenceModel(Fn(fn), poptorch.Options().randomSeed(8))
    assert not torch.equal(other(x)[0], a1), "another seed, other numbers"


def test_reseed_without_recompiling():
    x = torch.zeros(100)
    graph = poptorch.trace(Fn(lambda x: torch.rand_like(x)), x)
    exe = graph.compile(poptorch.Options().randomSeed(3))
    first = exe(x)
    exe(x)
    exe.set_random_seed(3)
    assert torch.equal(exe(x), first)


def test_random_ops_are_not_folded():
    # No traced input: the op must still run on the device, every call.
    fn = lambda x: torch.rand(10, device=x.device)  # noqa: E731
    model = poptorch.inferenceModel(Fn(fn), poptorch.Options().randomSeed(5))
    x = torch.zeros(1)
    assert not torch.equal(model(x), model(x))


def test_factories_without_a_device_are_random_ops():
    # torch.rand(n) without device= draws on the CPU generator while tracing; the
    # tracer sees it advance and traces again with the ipu as the default device,
    # so the numbers are drawn by the program on every call, not baked in.
    def fn(x):
        return (x + torch.rand(N), x + torch.empty(N).normal_(),
                torch.randint(0, 10, (N,)) + x, torch.arange(4) + x[:4])

    x = torch.zeros(N)
    opts = poptorch.Options().randomSeed(11)  # seeds torch's generator too, like PopTorch
    state = torch.default_generator.get_state()
    model = poptorch.inferenceModel(Fn(fn), opts)
    u1, n1, i1, a1 = model(x)
    u2, *_ = model(x)
    assert torch.equal(state, torch.default_generator.get_state()), "CPU generator untouched"
    assert not torch.equal(u1, u2), "each call draws new numbers"
    close(u1.double().mean(), 0.5, math.sqrt(1 / 12))
    close(n1.double().mean(), 0.0, 1.0)
    assert i1.min() == 0 and i1.max() == 9
    torch.testing.assert_close(a1, torch.arange(4.0))
    again = poptorch.inferenceModel(Fn(fn), poptorch.Options().randomSeed(11))
    assert torch.equal(again(x)[0], u1), "same seed, same numbers"


def test_constant_factories_trace_once(caplog):
    # Factories that draw nothing (arange, zeros) stay constants and need no retrace.
    with caplog.at_level("INFO", logger="poptorch"):
        out = poptorch.inferenceModel(Fn(lambda x: x + torch.arange(3)))(torch.ones(3))
    torch.testing.assert_close(out, torch.arange(3.0) + 1)
    assert "tracing again" not in caplog.text
