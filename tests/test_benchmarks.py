"""What the benchmarks run is correct: each benchmark model (scaled down) against eager."""

from __future__ import annotations

import os
import sys

import pytest
import torch
from conftest import assert_matches

import poptorch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from models import QUICK  # noqa: E402


@pytest.mark.parametrize("name", sorted(QUICK))
def test_benchmark_model(name):
    torch.manual_seed(0)
    model, make_input = QUICK[name]()
    model.eval()
    inputs = make_input(2)
    with torch.inference_mode():
        expected = model(*inputs)
    actual = poptorch.inferenceModel(model)(*inputs)
    # MobileNetV2's outputs (up to ~3) pass through 50 convolutions and batch norms: eager
    # itself is 3.6e-5 away from the float64 result, poptorch (another summation order) 5.9e-5.
    atol = 1e-4 if name == "mobilenet" else 2e-5
    assert_matches(actual, expected, name=f"benchmark {name} (quick)", atol=atol, rtol=1e-4)
