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


class Mlp(nn.Module):
    """Two linear layers wide enough for weight panels, and a 10-wide head that is not."""

    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        # Widths of two or more register blocks on any host: a batch-1 block is 128 columns
        # wide with AVX-512 (32 with AVX2), and a weight of one block is not packed.
        self.net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 512), nn.GELU(),
                                 nn.Linear(512, 10)).to(dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class RightMatmul(nn.Module):
    """A K x N parameter multiplied as it is (x @ w): panels of a parameter not transposed."""

    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(48, 256, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x @ self.w)


@pytest.mark.parametrize("batch", [1, 3, 8, 20])
def test_linear_weights_are_packed_in_panels(batch: int) -> None:
    torch.manual_seed(batch)
    model = Mlp().eval()
    x = torch.randn(batch, 64)
    pm = poptorch.inferenceModel(model)
    torch.testing.assert_close(pm(x), model(x))
    to_linalg = stage(pm, "to-linalg")
    # net.0 and net.2 in panels; the 10-wide head keeps its transposed layout and matmul.
    assert to_linalg.count("poptorch.packed_shape") == 2
    assert to_linalg.count("linalg.matmul") == 1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_packed_weights_other_dtypes(dtype: torch.dtype) -> None:
    torch.manual_seed(4)
    model = Mlp(dtype).eval()
    x = torch.randn(2, 64, dtype=dtype)
    pm = poptorch.inferenceModel(model)
    # Half-precision intermediates (the first layer's output, the GELU's) round where
    # eager's kernels round differently: a unit in the last place of the hidden values.
    tol = {} if dtype == torch.float64 else {"rtol": 1e-2, "atol": 2e-3}
    torch.testing.assert_close(pm(x), model(x), **tol)
    assert stage(pm, "to-linalg").count("poptorch.packed_shape") == 2


@pytest.mark.parametrize("batch", [1, 8])
def test_untransposed_parameter_is_packed_in_panels(batch: int) -> None:
    torch.manual_seed(5)
    model = RightMatmul().eval()
    x = torch.randn(batch, 48)
    pm = poptorch.inferenceModel(model)
    torch.testing.assert_close(pm(x), model(x))
    assert "poptorch.permuted = array<i64: 1, 0, 2>" in stage(pm, "to-linalg")


# Where the host has AVX512-BF16's dot products, bf16 weights are laid out in pairs of rows.
HOST_BF16_DOT = "avx512bf16" in poptorch._C.host_cpu().split(",")
BF16_TOL = {"rtol": 1e-2, "atol": 2e-3}


@pytest.mark.skipif(not HOST_BF16_DOT, reason="the host has no AVX512-BF16 dot products")
@pytest.mark.parametrize("batch", [1, 8, 20])
def test_bf16_weights_are_packed_in_pairs_of_rows(batch: int) -> None:
    torch.manual_seed(batch)
    for model, x, perm in [
            (Mlp(torch.bfloat16).eval(), torch.randn(batch, 64), "0, 2, 1, 3"),
            (RightMatmul(torch.bfloat16).eval(), torch.randn(batch, 48), "2, 0, 3, 1")]:
        x = x.bfloat16()
        pm = poptorch.inferenceModel(model)
        torch.testing.assert_close(pm(x), model(x), **BF16_TOL)
        to_linalg = stage(pm, "to-linalg")
        assert f"poptorch.permuted = array<i64: {perm}>" in to_linalg
        assert '"reduction", "reduction"]' in to_linalg


def test_bf16_pairs_only_with_the_dot_products(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the dot products (bf16-dot=false, as on hosts without AVX512-BF16) the
    weights keep the plain panels, on every host."""
    monkeypatch.setenv("POPTORCH_TILE_OPTIONS", "min-parallel-cost=131072 bf16-dot=false")
    torch.manual_seed(9)
    model = Mlp(torch.bfloat16).eval()
    x = torch.randn(8, 64).bfloat16()
    pm = poptorch.inferenceModel(model)
    torch.testing.assert_close(pm(x), model(x), **BF16_TOL)
    to_linalg = stage(pm, "to-linalg")
    assert to_linalg.count("poptorch.permuted = array<i64: 0, 2, 1>") == 2


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_packed_weights_follow_copy_weights_to_device_and_host(dtype: torch.dtype) -> None:
    torch.manual_seed(6)
    model = Mlp(dtype).eval()
    x = torch.randn(8, 64, dtype=dtype)
    tol = {} if dtype == torch.float32 else BF16_TOL
    pm = poptorch.inferenceModel(model)
    torch.testing.assert_close(pm(x), model(x), **tol)
    original = {k: v.detach().clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(-1.5).add_(0.25)
    changed = {k: v.detach().clone() for k, v in model.state_dict().items()}
    stale = pm(x)
    pm.copyWeightsToDevice()
    fresh = pm(x)
    torch.testing.assert_close(fresh, model(x), **tol)
    assert not torch.allclose(stale, fresh)
    model.load_state_dict(original)
    pm.copyWeightsToHost()  # the device's panels, back in the host layout
    for name, value in model.state_dict().items():
        torch.testing.assert_close(value, changed[name], rtol=0, atol=0)


def test_packed_weights_from_the_executable_cache(tmp_path: Path) -> None:
    torch.manual_seed(7)
    model = Mlp().eval()
    x = torch.randn(1, 64)
    opts = poptorch.Options()
    opts.enableExecutableCaching(str(tmp_path))
    first = poptorch.inferenceModel(model, opts)
    torch.testing.assert_close(first(x), model(x))
    second = poptorch.inferenceModel(model, opts)
    out = second(x)
    assert second.executable.origin == "loaded"
    torch.testing.assert_close(out, model(x))
    path = tmp_path / "mlp.poptorch"
    poptorch.inferenceModel(model).compileAndExport(path, x, export_model=False)
    loaded = poptorch.inferenceModel(model)
    loaded.loadExecutable(path)
    torch.testing.assert_close(loaded(x), model(x))
