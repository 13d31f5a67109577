"""Whole models compiled three ways (inferenceModel, trace().compile(), IPUContext)
and compared with eager PyTorch; the max abs error is reported at the end of the run."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from conftest import assert_matches

import poptorch

BATCHES = [1, 8]
WAYS = ["inferenceModel", "trace", "IPUContext"]


def run_way(way: str, model: torch.nn.Module, *args: Any) -> Any:
    if way == "inferenceModel":
        return poptorch.inferenceModel(model)(*args)
    if way == "trace":
        return poptorch.trace(model, *args).compile()(*args)
    return poptorch.experimental.IPUContext(model.forward, model=model)(*args)


def check_model(name: str, way: str, model: torch.nn.Module, *args: Any,
                atol: float = 1e-5, rtol: float = 1e-5) -> None:
    model.eval()
    # Eager's fused fast path for encoder layers returns NaN for some float
    # masks; the reference is the plain module code.
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad():
            expected = model(*args)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    actual = run_way(way, model, *args)
    assert_matches(actual, expected, name=name, atol=atol, rtol=rtol)


# ---------------------------------------------------------------- models
def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.GELU("tanh"),
        torch.nn.Linear(64, 10), torch.nn.LogSoftmax(dim=-1))


class CNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Linear(16, 5)
        # Non-trivial running statistics, so that eval-mode batch norm matters.
        for m in self.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.data.normal_(1, 0.2)
                m.bias.data.normal_(0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("batch", BATCHES)
def test_mlp(way, batch):
    check_model(f"mlp/b{batch}", way, mlp(), torch.randn(batch, 32))


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("batch", BATCHES)
def test_cnn(way, batch):
    check_model(f"cnn/b{batch}", way, CNN(), torch.randn(batch, 3, 16, 16))


def test_cnn_batch_norm_uses_running_stats():
    # The running stats change the result: a compiled model that ignored them
    # would fail the parity check above; check that they are model arguments.
    graph = poptorch.trace(CNN().eval(), torch.randn(1, 3, 16, 16))
    assert graph.mlir.count('poptorch.role = "buffer"') == 6  # mean, var, num_batches_tracked
    assert "poptorch.batch_norm" in graph.mlir


# ---------------------------------------------------------------- transformer
# Small on purpose: compile time grows quickly with the attention tensors' size.
D_MODEL, SEQ = 16, 5


def encoder_layer(batch_first: bool, norm_first: bool = False) -> torch.nn.Module:
    return torch.nn.TransformerEncoderLayer(
        d_model=D_MODEL, nhead=2, dim_feedforward=32, dropout=0.1, batch_first=batch_first,
        norm_first=norm_first).eval()


def src(batch: int, batch_first: bool) -> torch.Tensor:
    return torch.randn(batch, SEQ, D_MODEL) if batch_first else torch.randn(SEQ, batch, D_MODEL)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("batch_first", [True, False])
def test_transformer_encoder_layer(way, batch, batch_first):
    check_model(f"transformer(batch_first={batch_first})/b{batch}", way,
                encoder_layer(batch_first), src(batch, batch_first))


@pytest.mark.parametrize("batch", BATCHES)
def test_transformer_norm_first(batch):
    check_model(f"transformer(norm_first)/b{batch}", "trace",
                encoder_layer(True, norm_first=True), src(batch, True))


class Masked(torch.nn.Module):
    """An encoder layer called with masks (masks are inputs of the program)."""

    def __init__(self, batch_first: bool, kind: str) -> None:
        super().__init__()
        self.layer = encoder_layer(batch_first)
        self.kind = kind

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.kind == "padding":
            return self.layer(x, src_key_padding_mask=mask)
        return self.layer(x, src_mask=mask, is_causal=self.kind == "causal")


def padding_mask(batch: int, dtype: torch.dtype) -> torch.Tensor:
    lengths = torch.randint(1, SEQ + 1, (batch,))
    padded = torch.arange(SEQ)[None, :] >= lengths[:, None]
    if dtype == torch.bool:
        return padded
    return torch.zeros(batch, SEQ).masked_fill(padded, float("-inf"))


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("dtype", [
    torch.float32,
    torch.bool])
def test_transformer_padding_mask(batch, batch_first, dtype):
    check_model(f"transformer(padding mask, batch_first={batch_first})/b{batch}", "trace",
                Masked(batch_first, "padding"), src(batch, batch_first),
                padding_mask(batch, dtype))


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("kind", ["causal", "float"])
def test_transformer_attention_mask(way, batch, kind):
    mask = torch.nn.Transformer.generate_square_subsequent_mask(SEQ)
    if kind == "float":
        mask = torch.randn(SEQ, SEQ)
    check_model(f"transformer({kind} mask)/b{batch}", way, Masked(True, kind),
                src(batch, True), mask)


def test_transformer_encoder_stack():
    enc = torch.nn.TransformerEncoder(encoder_layer(True), num_layers=2,
                                      enable_nested_tensor=False)
    check_model("transformer encoder x2/b8", "inferenceModel", enc, src(8, True))


def test_inference_model_replays_without_retracing():
    model = mlp().eval()
    ipu = poptorch.inferenceModel(model)
    for _ in range(3):
        x = torch.randn(4, 32)
        with torch.no_grad():
            assert_matches(ipu(x), model(x), name="mlp/b4 replayed")
    assert ipu.compile_count == 1
