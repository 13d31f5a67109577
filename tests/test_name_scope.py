"""poptorch.NameScope: the ops captured inside carry the scope's names (nested scopes
joined with '/') in their MLIR locations, in poptorch.explain and in error messages."""

from __future__ import annotations

import re

import pytest
import torch
from conftest import assert_matches

import poptorch


class Scoped(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with poptorch.NameScope("encoder"):
            x = self.a(x).relu()
            with poptorch.NameScope("head"):
                x = self.b(x)
        return x * 2


def test_names_are_in_the_ir_locations():
    mlir = poptorch.trace(Scoped(), torch.randn(2, 4)).mlir
    # printed with aliases: #loc9 = loc("encoder"(#loc6)), #loc6 the file and line
    aliases = dict(re.findall(r"^(#loc\d*) = loc\((.*)\)$", mlir, re.M))
    for scope in ("encoder", "encoder/head"):
        named = [v for v in aliases.values() if v.startswith(f'"{scope}"(')]
        assert named, (scope, aliases)
        inner = named[0][len(scope) + 3:-1]
        assert re.fullmatch(r'"[^"]*test_name_scope.py":\d+:0', aliases.get(inner, inner)), named
    # the op after the scopes has a plain file location
    relu = [line for line in mlir.splitlines() if "poptorch.relu" in line]
    assert relu and "loc(" in relu[0]


def test_names_are_in_explain_and_the_results_are_unchanged():
    x = torch.randn(2, 4)
    model = Scoped().eval()
    text = str(poptorch.explain(model, x))
    assert re.search(r"aten::relu .* test_name_scope.py:\d+ \(encoder\)", text), text
    assert "(encoder/head)" in text, text
    assert_matches(poptorch.inferenceModel(model)(x), model(x))


def test_errors_name_the_scope():
    def fn(x):
        with poptorch.NameScope("bad"):
            return torch.hash_tensor(x).float()

    with pytest.raises(poptorch.Error, match=r"test_name_scope.py:\d+ \(in bad\)"):
        poptorch.trace(fn, torch.randn(3))


def test_outside_tracing_it_does_nothing():
    with poptorch.NameScope("eager"):
        y = torch.ones(2) * 3
    assert y.tolist() == [3.0, 3.0]
    with pytest.raises(poptorch.Error, match="non-empty str"):
        poptorch.NameScope("")
