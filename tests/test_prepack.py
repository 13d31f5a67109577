"""Prepacked parameters (poptorch-prepack-parameters): weights uploaded in the layout the
program reads them in, including a table tied between an embedding and a linear LM head."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

import poptorch


class Shared(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(7, 4)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.emb(ids) @ self.emb.weight.t(), self.emb.weight * 2


class Tied(nn.Module):
    """An embedding and an LM head sharing one table (GPT-2's tied weights)."""

    def __init__(self, vocab: int = 11, hidden: int = 6, head: str = "matmul") -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.mix = nn.Linear(hidden, hidden)
        self.head = head
        if head == "linear":
            self.lm = nn.Linear(hidden, vocab, bias=False)
            self.lm.weight = self.tokens.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = torch.tanh(self.mix(self.tokens(ids)))
        if self.head == "linear":
            return self.lm(x)
        return x @ self.tokens.weight.t()


def stage(pm, name: str) -> str:
    return dict(pm.executable.stages)[name]


@pytest.mark.parametrize("head", ["matmul", "linear"])
def test_tied_table_is_prepacked_and_not_transposed_per_call(head: str) -> None:
    torch.manual_seed(0)
    model = Tied(head=head).eval()
    ids = torch.tensor([[3, 0, 10, 3], [7, 7, 1, 2]])
    pm = poptorch.inferenceModel(model)
    torch.testing.assert_close(pm(ids), model(ids))
    decomposed = stage(pm, "decompose")
    assert decomposed.count("poptorch.permuted") == 2  # mix.weight and the table
    # The embedding reads the transposed table in place: no transpose is left.
    assert "linalg.transpose" not in stage(pm, "to-linalg")


def test_tied_table_follows_copy_weights_to_device_and_host() -> None:
    torch.manual_seed(1)
    model = Tied().eval()
    ids = torch.tensor([[1, 4, 9, 0, 4]])
    pm = poptorch.inferenceModel(model)
    torch.testing.assert_close(pm(ids), model(ids))
    original = model.tokens.weight.detach().clone()
    with torch.no_grad():
        model.tokens.weight.mul_(-2).add_(0.5)
    changed = model.tokens.weight.detach().clone()
    stale = pm(ids)
    pm.copyWeightsToDevice()
    fresh = pm(ids)
    torch.testing.assert_close(fresh, model(ids))
    assert not torch.allclose(stale, fresh)
    with torch.no_grad():
        model.tokens.weight.copy_(original)
    pm.copyWeightsToHost()  # the device holds the changed table, in the host layout
    torch.testing.assert_close(model.tokens.weight, changed)


def test_tied_table_export_and_load(tmp_path: Path) -> None:
    torch.manual_seed(2)
    model = Tied(head="linear").eval()
    ids = torch.tensor([[2, 5, 5, 8]])
    path = tmp_path / "tied.poptorch"
    poptorch.inferenceModel(model).compileAndExport(path, ids, export_model=False)
    pm = poptorch.inferenceModel(model)
    pm.loadExecutable(path)
    assert pm.executable.origin == "loaded"
    torch.testing.assert_close(pm(ids), model(ids))
    with torch.no_grad():
        model.tokens.weight.mul_(3)
    pm.copyWeightsToDevice()
    torch.testing.assert_close(pm(ids), model(ids))


def test_table_with_another_use_keeps_its_layout() -> None:
    # An elementwise use needs the table as it is: nothing is prepacked for it.
    torch.manual_seed(3)
    model = Shared().eval()
    pm = poptorch.inferenceModel(model)
    ids = torch.tensor([1, 6, 0])
    torch.testing.assert_close(pm(ids), model(ids))
    assert "poptorch.permuted" not in stage(pm, "decompose")
