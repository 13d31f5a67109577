"""poptorch.MultiConv: PopTorch's scope and its settings, checked as PopTorch checks them;
the convolutions inside compile and match eager PyTorch, and settings say they have no
effect here."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_matches

import poptorch
from poptorch import _multiconv


class TwoConvs(torch.nn.Module):
    def __init__(self, multi: poptorch.MultiConv) -> None:
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3)
        self.b = torch.nn.Conv2d(2, 5, 1)
        self.multi = multi

    def forward(self, x: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with self.multi:
            y = self.a(x)
            v = self.b(u)
        return y.relu(), v


def test_convolutions_inside_compile_and_match_eager():
    model = TwoConvs(poptorch.MultiConv()).eval()
    x, u = torch.randn(2, 3, 8, 8), torch.randn(2, 2, 5, 5)
    with torch.no_grad():
        assert_matches(poptorch.inferenceModel(model)(x, u), model(x, u))


def test_settings_chain_and_say_they_have_no_effect():
    _multiconv._WARNED.clear()
    multi = (poptorch.MultiConv().availableMemoryProportions([0.2, 0.3])
             .partialsTypes([torch.float, torch.half]).planType(poptorch.MultiConvPlanType.Serial)
             .perConvReservedTiles(16).cycleBackOff(0.5).enableConvDithering(True))
    model = TwoConvs(multi).eval()
    x, u = torch.randn(1, 3, 6, 6), torch.randn(1, 2, 4, 4)
    with pytest.warns(UserWarning) as record:
        out = poptorch.inferenceModel(model)(x, u)
    said = {str(w.message).split("(...)")[0] for w in record if "has no effect" in str(w.message)}
    assert said == {f"poptorch.MultiConv().{name}" for name in (
        "availableMemoryProportions", "partialsTypes", "planType", "perConvReservedTiles",
        "cycleBackOff", "enableConvDithering")}, said
    with torch.no_grad():
        assert_matches(out, model(x, u))


@pytest.mark.parametrize("setting, value, match", [
    ("availableMemoryProportions", 1.5, r"\[0, 1\)"),
    ("availableMemoryProportions", [], "non-empty list"),
    ("partialsTypes", torch.int32, "torch.float or torch.half"),
    ("planType", "parallel", "MultiConvPlanType"),
    ("perConvReservedTiles", 2.0, "int >= 0"),
    ("cycleBackOff", 2, "float in"),
    ("enableConvDithering", [True, 1], "bool"),
])
def test_bad_settings_are_clear_errors(setting, value, match):
    with pytest.raises(poptorch.Error, match=match):
        getattr(poptorch.MultiConv(), setting)(value)
