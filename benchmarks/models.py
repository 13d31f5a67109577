"""The benchmark models: public architectures built from their published configs.

Nothing here is an architecture written for the benchmark. The transformers models are
Hugging Face ``transformers`` classes built from their configs (the defaults of
``BertConfig``, ``GPT2Config``, ``ViTConfig``, ``ResNetConfig``, ``ConvNextConfig`` and
``MobileNetV2Config`` are BERT-base, GPT-2 small, ViT-base/16, ResNet-50, ConvNeXt-tiny and
MobileNetV2 1.0 at 224 x 224), ``transformer_encoder`` is ``torch.nn.TransformerEncoder``
(its fused inference fast path), ``mlp`` a ``torch.nn.Sequential``. Weights are random
(seeded by the caller); nothing is downloaded (``HF_HUB_OFFLINE=1``).

Each entry of ``MODELS`` is a factory returning ``(model, make_input)``: ``model`` takes
tensors positionally and returns one tensor (the logits or the last hidden state of the
Hugging Face output, through ``Main``), ``make_input(batch)`` the input batch:

* ``mlp``: 784-1024-1024-10 with ReLU.
* ``mobilenet``: HF MobileNetV2 1.0, 224 x 224.
* ``resnet50``: HF ResNet-50 (bottleneck blocks [3, 4, 6, 3]), 224 x 224.
* ``convnext``: HF ConvNeXt-tiny, 224 x 224.
* ``vit``: HF ViT-base, patch 16, 224 x 224 (197 tokens).
* ``bert``: HF BERT-base, sequence 128, the last quarter of half the rows padded (mask).
* ``gpt2``: HF GPT-2 small LM head, sequence 128 (logits over 50257 words).
* ``llama``: HF Llama decoder, 8 layers, hidden 1024, 16 heads, prefill of 128 tokens.
* ``whisper``: the encoder of HF Whisper-base (6 layers, d_model 512), 30 s of 80 mel bins.
* ``transformer_encoder``: ``nn.TransformerEncoder``, 6 layers of width 512, 8 heads,
  sequence 128 (the fused ``_transformer_encoder_layer_fwd`` path in eval/no-grad).

``QUICK`` holds the same classes with small configs for tests and ``--quick`` runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import transformers as tf  # noqa: E402
from torch import nn  # noqa: E402

ModelFactory = Callable[[], tuple[nn.Module, Callable[[int], tuple[torch.Tensor, ...]]]]


class Main(nn.Module):
    """A Hugging Face model called with its inputs by name, returning one output tensor."""

    def __init__(self, model: nn.Module, names: tuple[str, ...], output: str) -> None:
        super().__init__()
        self.model, self.names, self.output = model, names, output

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        return getattr(self.model(**dict(zip(self.names, tensors, strict=True))), self.output)


def _hf(cls: type, config: tf.PretrainedConfig, names: tuple[str, ...], output: str) -> nn.Module:
    return Main(cls(config), names, output)


def calibrated(model: nn.Module, make_input: Callable[[int], tuple[torch.Tensor, ...]]) -> nn.Module:
    """Gives batch norm layers the running statistics of real activations.

    Freshly initialised batch norm (mean 0, variance 1) lets activations shrink layer after
    layer until the output is nearly constant, which would make both the benchmark and the
    error check meaningless; a trained network's statistics keep them normalised.
    """
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model.eval()
    for m in norms:
        m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(*make_input(4))
    return model.eval()


# ------------------------------------------------------------------ inputs
def images(size: int) -> Callable[[int], tuple[torch.Tensor, ...]]:
    return lambda b: (torch.randn(b, 3, size, size),)


def tokens(vocab: int, seq: int, masked: bool = False) -> Callable[[int], tuple[torch.Tensor, ...]]:
    def make(b: int) -> tuple[torch.Tensor, ...]:
        ids = torch.randint(4, vocab, (b, seq))
        if not masked:
            return (ids,)
        mask = torch.ones(b, seq, dtype=torch.long)
        mask[: max(1, b // 2), -(seq // 4):] = 0  # padded rows
        return ids, mask
    return make


# ------------------------------------------------------------------ factories
def mlp(width: int = 1024, inputs: int = 784) -> ModelFactory:
    def make():
        model = nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, width),
                              nn.ReLU(), nn.Linear(width, 10))
        return model, lambda b: (torch.randn(b, inputs),)
    return make


def vision(cls: type, config: Callable[[], tf.PretrainedConfig], size: int) -> ModelFactory:
    def make():
        make_input = images(size)
        return calibrated(_hf(cls, config(), ("pixel_values",), "logits"), make_input), make_input
    return make


def text(cls: type, config: Callable[[], tf.PretrainedConfig], seq: int, output: str,
         masked: bool = False) -> ModelFactory:
    def make():
        c = config()
        names = ("input_ids", "attention_mask") if masked else ("input_ids",)
        return _hf(cls, c, names, output), tokens(c.vocab_size, seq, masked)
    return make


def whisper(layers: int = 6, width: int = 512, heads: int = 8, frames: int = 3000,
            mels: int = 80) -> ModelFactory:
    def make():
        config = tf.WhisperConfig(d_model=width, encoder_layers=layers, decoder_layers=1,
                                  encoder_attention_heads=heads, decoder_attention_heads=heads,
                                  encoder_ffn_dim=4 * width, decoder_ffn_dim=4 * width,
                                  num_mel_bins=mels, max_source_positions=frames // 2)
        encoder = tf.WhisperForConditionalGeneration(config).get_encoder()
        return Main(encoder, ("input_features",), "last_hidden_state"), \
            lambda b: (torch.randn(b, mels, frames),)
    return make


def transformer_encoder(layers: int = 6, width: int = 512, heads: int = 8,
                        seq: int = 128) -> ModelFactory:
    def make():
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True)
        model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        return model, lambda b: (torch.randn(b, seq, width),)
    return make


def _bert(**kw) -> tf.BertConfig:
    return tf.BertConfig(**kw)


def _llama(**kw) -> tf.LlamaConfig:
    base = dict(vocab_size=32000, hidden_size=1024, intermediate_size=2816,
                num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=16,
                max_position_embeddings=2048, use_cache=False)
    return tf.LlamaConfig(**{**base, **kw})


MODELS: dict[str, ModelFactory] = {
    "mlp": mlp(),
    "mobilenet": vision(tf.MobileNetV2ForImageClassification, tf.MobileNetV2Config, 224),
    "resnet50": vision(tf.ResNetForImageClassification, tf.ResNetConfig, 224),
    "convnext": vision(tf.ConvNextForImageClassification, tf.ConvNextConfig, 224),
    "vit": vision(tf.ViTForImageClassification, tf.ViTConfig, 224),
    "bert": text(tf.BertModel, _bert, 128, "last_hidden_state", masked=True),
    "gpt2": text(tf.GPT2LMHeadModel, lambda: tf.GPT2Config(use_cache=False), 128, "logits"),
    "llama": text(tf.LlamaForCausalLM, _llama, 128, "logits"),
    "whisper": whisper(),
    "transformer_encoder": transformer_encoder(),
}

# The same classes with small configs: a test compiles and runs each in seconds.
_SMALL_TEXT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=128)
QUICK: dict[str, ModelFactory] = {
    "mlp": mlp(width=64, inputs=32),
    "mobilenet": vision(tf.MobileNetV2ForImageClassification,
                        lambda: tf.MobileNetV2Config(depth_multiplier=0.25, image_size=32), 32),
    "resnet50": vision(tf.ResNetForImageClassification, lambda: tf.ResNetConfig(
        embedding_size=8, hidden_sizes=[16, 32], depths=[1, 1], layer_type="bottleneck"), 32),
    "convnext": vision(tf.ConvNextForImageClassification, lambda: tf.ConvNextConfig(
        num_stages=2, hidden_sizes=[8, 16], depths=[1, 1], image_size=32), 32),
    "vit": vision(tf.ViTForImageClassification, lambda: tf.ViTConfig(
        image_size=32, patch_size=8, **_SMALL_TEXT), 32),
    "bert": text(tf.BertModel, lambda: _bert(vocab_size=100, **_SMALL_TEXT), 16,
                 "last_hidden_state", masked=True),
    "gpt2": text(tf.GPT2LMHeadModel, lambda: tf.GPT2Config(
        vocab_size=100, n_embd=64, n_layer=2, n_head=4, use_cache=False), 16, "logits"),
    "llama": text(tf.LlamaForCausalLM, lambda: _llama(
        vocab_size=100, num_key_value_heads=4, **_SMALL_TEXT), 16, "logits"),
    "whisper": whisper(layers=2, width=64, heads=4, frames=32, mels=16),
    "transformer_encoder": transformer_encoder(layers=2, width=64, heads=4, seq=16),
}
