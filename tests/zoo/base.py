"""What every zoo case is made of, and the inputs the cases share.

A case builds a tiny, randomly initialised Hugging Face model from its config
(``torch.manual_seed(0)`` first, nothing downloaded) and the inputs to call it
with: ``build() -> (model.eval(), args, kwargs)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Nothing may be fetched from the hub: configs are built here, weights are random.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

Built = tuple[torch.nn.Module, tuple[Any, ...], dict[str, Any]]

BATCH = 2
SEQ = 12
VOCAB = 256
IMAGE = 32
SAMPLES = 1600

FAMILIES = ("encoder", "decoder", "encoder-decoder", "vision", "audio", "multimodal")


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    build: Callable[[], Built]
    # the attention implementation asked for; None: the config's default (sdpa
    # where the model supports it, eager otherwise)
    attn: str | None = None

    def __post_init__(self) -> None:
        assert self.family in FAMILIES, self.family


def seeded(fn: Callable[[], Built]) -> Callable[[], Built]:
    """Runs a builder with torch's generator at seed 0 (weights, then inputs)."""

    def build() -> Built:
        torch.manual_seed(0)
        model, args, kwargs = fn()
        return model.eval(), args, kwargs

    build.__name__ = getattr(fn, "__name__", "build")
    return build


def make(model_cls: type, config: Any, attn: str | None = None) -> torch.nn.Module:
    """``model_cls(config)``, with ``attn`` as its attention implementation if given."""
    if attn is not None:
        return model_cls._from_config(config, attn_implementation=attn)
    return model_cls(config)


def token_ids(vocab: int = VOCAB, batch: int = BATCH, seq: int = SEQ) -> torch.Tensor:
    # ids from 4 up: clear of the special tokens (pad, bos, eos, unk) of most configs
    return torch.randint(4, vocab, (batch, seq))


def padded_mask(batch: int = BATCH, seq: int = SEQ, left: bool = False) -> torch.Tensor:
    """All ones but 3 positions of row 1: the last 3 (a right-padded batch, as
    tokenizers pad for encoders) or, with ``left``, the first 3 (left-padded, as
    decoders are batched for generation: then the padding changes the outputs of
    the real tokens under causal attention, which right padding would not)."""
    mask = torch.ones(batch, seq, dtype=torch.long)
    if left:
        mask[1, :3] = 0
    else:
        mask[1, -3:] = 0
    return mask


def text_kwargs(vocab: int = VOCAB, masked: bool = True, seq: int = SEQ,
                left: bool = False) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"input_ids": token_ids(vocab, seq=seq)}
    if masked:
        kwargs["attention_mask"] = padded_mask(seq=seq, left=left)
    return kwargs


def pixels(size: int = IMAGE, batch: int = BATCH, channels: int = 3) -> torch.Tensor:
    return torch.randn(batch, channels, size, size)


def waveform(samples: int = SAMPLES, batch: int = BATCH) -> torch.Tensor:
    return torch.randn(batch, samples)
