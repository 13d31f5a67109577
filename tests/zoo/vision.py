"""Vision, audio and multimodal models of the zoo.

Images are a batch of 2 RGB 32x32 images (``base.IMAGE``), audio a batch of 2
waveforms of 1600 samples (``base.SAMPLES``: 0.1 s at 16 kHz). Transformers have
2 layers, hidden size 64 and 4 heads; convolutional networks 2 stages of 1 block.

DETR runs with the transformers ResNet as its backbone (``use_timm_backbone=False``):
the default backbone is timm's, which is not a dependency of the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import transformers as tf

from .base import IMAGE, VOCAB, Built, Case, make, pixels, seeded, text_kwargs, waveform

H, FF, LAYERS, HEADS = 64, 128, 2, 4

# the ViT-style keyword names most vision transformer configs share
VITLIKE = dict(image_size=IMAGE, patch_size=8, hidden_size=H, num_hidden_layers=LAYERS,
               num_attention_heads=HEADS, intermediate_size=FF)
# the feature extractor of Wav2Vec2 (7 convolutions, stride 320), 32 channels wide; a
# positional convolution of kernel 8 (128 in the real models; 16 takes 7 s to JIT-compile)
W2V = dict(hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=FF,
           conv_dim=(32,) * 7, num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4,
           vocab_size=32)

CASES: list[Case] = []


def image_case(name: str, model_cls: type, config: Callable[[], Any], *, size: int = IMAGE,
               attn: str | None = None, family: str = "vision") -> None:
    """A case calling ``model_cls(config())`` as ``model(pixel_values)``."""

    @seeded
    def build() -> Built:
        model = make(model_cls, config(), attn)
        return model, (pixels(size),), {}

    CASES.append(Case(name, family, build, attn))


def audio_case(name: str, model_cls: type, config: Callable[[], Any], *,
               attn: str | None = None) -> None:
    """A case calling ``model_cls(config())`` as ``model(input_values)``."""

    @seeded
    def build() -> Built:
        model = make(model_cls, config(), attn)
        return model, (waveform(),), {}

    CASES.append(Case(name, "audio", build, attn))


# ---------------------------------------------------------------- vision transformers
image_case("vit", tf.ViTForImageClassification, lambda: tf.ViTConfig(**VITLIKE, num_labels=10))
image_case("vit_eager", tf.ViTForImageClassification,
           lambda: tf.ViTConfig(**VITLIKE, num_labels=10), attn="eager")
image_case("deit", tf.DeiTForImageClassificationWithTeacher,
           lambda: tf.DeiTConfig(**VITLIKE, num_labels=10))
image_case("beit", tf.BeitForImageClassification, lambda: tf.BeitConfig(
    **VITLIKE, num_labels=10, use_relative_position_bias=True, use_mean_pooling=True))
image_case("dinov2", tf.Dinov2Model, lambda: tf.Dinov2Config(**VITLIKE))
image_case("swin", tf.SwinForImageClassification, lambda: tf.SwinConfig(
    image_size=IMAGE, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 4],
    window_size=4, num_labels=10))
image_case("segformer", tf.SegformerForSemanticSegmentation, lambda: tf.SegformerConfig(
    num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
    patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2],
    decoder_hidden_size=32, num_labels=5))
image_case("mobilevit", tf.MobileViTForImageClassification, lambda: tf.MobileViTConfig(
    image_size=IMAGE, hidden_sizes=[32, 48, 64], neck_hidden_sizes=[8, 16, 24, 32, 40, 48, 96],
    num_attention_heads=HEADS, num_labels=10))
image_case("levit", tf.LevitForImageClassification, lambda: tf.LevitConfig(
    image_size=64, patch_size=16, hidden_sizes=[32, 64], num_attention_heads=[2, 4],
    depths=[1, 1], key_dim=[8, 8], mlp_ratio=[2, 2], attention_ratio=[2, 2],
    down_ops=[["Subsample", 8, 2, 4, 2, 2]], num_labels=10), size=64)

# ---------------------------------------------------------------- convolutional networks
image_case("resnet", tf.ResNetForImageClassification, lambda: tf.ResNetConfig(
    embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic", num_labels=10))
image_case("resnet_bottleneck", tf.ResNetForImageClassification, lambda: tf.ResNetConfig(
    embedding_size=16, hidden_sizes=[32, 64], depths=[1, 1], layer_type="bottleneck",
    num_labels=10))
image_case("regnet", tf.RegNetForImageClassification, lambda: tf.RegNetConfig(
    embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8, num_labels=10))
image_case("convnext", tf.ConvNextForImageClassification, lambda: tf.ConvNextConfig(
    num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10, image_size=IMAGE))
image_case("convnextv2", tf.ConvNextV2ForImageClassification, lambda: tf.ConvNextV2Config(
    num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10, image_size=IMAGE))
image_case("efficientnet", tf.EfficientNetForImageClassification, lambda: tf.EfficientNetConfig(
    image_size=IMAGE, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320,
    num_labels=10))
image_case("mobilenet_v2", tf.MobileNetV2ForImageClassification, lambda: tf.MobileNetV2Config(
    image_size=IMAGE, depth_multiplier=0.25, num_labels=10))
image_case("mobilenet_v1", tf.MobileNetV1ForImageClassification, lambda: tf.MobileNetV1Config(
    image_size=IMAGE, depth_multiplier=0.25, num_labels=10))
image_case("poolformer", tf.PoolFormerForImageClassification, lambda: tf.PoolFormerConfig(
    num_encoder_blocks=2, depths=[1, 1], hidden_sizes=[16, 32], patch_sizes=[7, 3],
    strides=[4, 2], padding=[2, 1], num_labels=10))


# DETR with the transformers ResNet as its backbone (no timm): 4 queries, 1 layer each side
@seeded
def detr() -> Built:
    backbone = tf.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1],
                               layer_type="basic", out_features=["stage2"])
    config = tf.DetrConfig(backbone_config=backbone, use_timm_backbone=False,
                           use_pretrained_backbone=False, num_queries=4, d_model=H,
                           encoder_layers=1, decoder_layers=1, encoder_attention_heads=HEADS,
                           decoder_attention_heads=HEADS, encoder_ffn_dim=FF, decoder_ffn_dim=FF,
                           num_labels=5)
    model = tf.DetrForObjectDetection(config)
    return model, (pixels(),), {}


CASES.append(Case("detr", "vision", detr))

# ---------------------------------------------------------------- audio
audio_case("wav2vec2", tf.Wav2Vec2Model, lambda: tf.Wav2Vec2Config(**W2V))
# wav2vec2-large's layout: layer norm first, the feature extractor normalised per layer
audio_case("wav2vec2_stable", tf.Wav2Vec2ForCTC, lambda: tf.Wav2Vec2Config(
    **W2V, do_stable_layer_norm=True, feat_extract_norm="layer"))
audio_case("hubert", tf.HubertModel, lambda: tf.HubertConfig(**W2V))
audio_case("data2vec_audio", tf.Data2VecAudioModel, lambda: tf.Data2VecAudioConfig(**W2V))
audio_case("wavlm", tf.WavLMModel, lambda: tf.WavLMConfig(**W2V, num_buckets=32,
                                                         max_bucket_distance=64))


@seeded
def whisper_encoder() -> Built:
    from .text import whisper_config

    model = tf.WhisperForConditionalGeneration(whisper_config()).get_encoder()
    return model, (torch.randn(2, 16, 32),), {}


CASES.append(Case("whisper_encoder", "audio", whisper_encoder))

# ---------------------------------------------------------------- multimodal towers
CLIP_TEXT = dict(vocab_size=VOCAB, hidden_size=H, intermediate_size=FF, num_hidden_layers=LAYERS,
                 num_attention_heads=HEADS, max_position_embeddings=16, pad_token_id=1,
                 bos_token_id=0, eos_token_id=2)


@seeded
def clip_text() -> Built:
    return tf.CLIPTextModel(tf.CLIPTextConfig(**CLIP_TEXT)), (), text_kwargs()


@seeded
def siglip_text() -> Built:
    # SigLIP is trained without an attention mask (max-length padding)
    return tf.SiglipTextModel(tf.SiglipTextConfig(**CLIP_TEXT)), (), text_kwargs(masked=False)


@seeded
def clip() -> Built:
    config = tf.CLIPConfig(text_config=CLIP_TEXT, vision_config=VITLIKE, projection_dim=32)
    kwargs = text_kwargs()
    kwargs["pixel_values"] = pixels()
    return tf.CLIPModel(config), (), kwargs


CASES.append(Case("clip_text", "multimodal", clip_text))
image_case("clip_vision", tf.CLIPVisionModel, lambda: tf.CLIPVisionConfig(**VITLIKE),
           family="multimodal")
CASES.append(Case("clip", "multimodal", clip))
CASES.append(Case("siglip_text", "multimodal", siglip_text))
image_case("siglip_vision", tf.SiglipVisionModel, lambda: tf.SiglipVisionConfig(**VITLIKE),
           family="multimodal")
