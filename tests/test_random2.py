"""Random ops of round 2 (cauchy_, log_normal_, geometric_): distributions within
confidence bounds, reproducibility with Options.randomSeed, fresh numbers per op.

As in test_random.py, poptorch's counter-based generator gives other values
than eager's CPU generator: only the distributions are compared.
"""

from __future__ import annotations

import math

import pytest
import torch
from opsuite import dtypes
from test_random import N, close, run

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@dtypes(FLOATS)
def test_cauchy(dtype: torch.dtype) -> None:
    x = torch.zeros(N, dtype=dtype)
    r = run(lambda x: x.clone().cauchy_(1.5, 2.0), x).double()
    assert r.dtype == torch.float64 and torch.isfinite(r).float().mean() > 0.999
    # quartiles at median +- sigma: P(|X - m| < s) = 1/2, P(X < m) = 1/2
    close(((r - 1.5).abs() < 2.0).double().mean(), 0.5, 0.5)
    close((r < 1.5).double().mean(), 0.5, 0.5)
    close((r < 1.5 + 2.0 * math.tan(math.pi * 0.4)).double().mean(), 0.9, 0.3)


@dtypes(FLOATS)
def test_log_normal(dtype: torch.dtype) -> None:
    x = torch.zeros(N, dtype=dtype)
    r = run(lambda x: x.clone().log_normal_(0.5, 0.75), x).double()
    assert r.min() > 0
    lg = r.log()
    tol = 0.02 if dtype in (torch.float16, torch.bfloat16) else 0.0
    assert abs(float(lg.mean()) - 0.5) < 5 * 0.75 / math.sqrt(N) + tol
    assert abs(float(lg.std()) - 0.75) < 5 * 0.75 * math.sqrt(0.5 / N) + tol
    r2 = run(lambda x: x.clone().log_normal_(), x).double()  # mean 1, std 2
    close((r2.log() < 1.0).double().mean(), 0.5, 0.5)


@dtypes(FLOATS)
@pytest.mark.parametrize("p", [0.2, 0.7])
def test_geometric(p: float, dtype: torch.dtype) -> None:
    x = torch.zeros(N, dtype=dtype)
    r = run(lambda x: x.clone().geometric_(p), x).double()
    assert r.min() >= 1 and torch.equal(r, r.round())
    close(r.mean(), 1 / p, math.sqrt(1 - p) / p)
    close((r == 1).double().mean(), p, math.sqrt(p * (1 - p)))
    close((r == 2).double().mean(), p * (1 - p), math.sqrt(p * (1 - p)))


@pytest.mark.parametrize("fn", [
    lambda x: x.clone().cauchy_(), lambda x: x.clone().log_normal_(),
    lambda x: x.clone().geometric_(0.3),
], ids=["cauchy", "log_normal", "geometric"])
def test_reproducible_and_fresh(fn) -> None:
    x = torch.zeros(64, 3)
    a = run(fn, x, seed=7)
    b = run(fn, x, seed=7)
    c = run(fn, x, seed=8)
    torch.testing.assert_close(a, b)
    assert not torch.equal(a, c)
    # two draws in one program differ
    pair = run(lambda x: (fn(x), fn(x)), x, seed=7)
    assert not torch.equal(pair[0], pair[1])


def test_shapes_and_empty() -> None:
    def model(x: torch.Tensor, e: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x.clone().cauchy_(), e.clone().log_normal_(), torch.zeros(()).geometric_(0.5) + x

    out = run(model, torch.zeros(2, 1, 4), torch.zeros(0, 3))
    assert out[0].shape == (2, 1, 4) and out[1].shape == (0, 3) and out[2].shape == (2, 1, 4)
    assert (out[2] >= 1).all()
