"""Text models of the zoo: encoders, decoders and encoder-decoders.

Every model has 2 layers, hidden size 64, 4 heads and a vocabulary of 256
(``base.VOCAB``); inputs are a batch of 2 sequences of 12 tokens (``base.SEQ``).
The masked cases pad 3 positions of row 1 (``base.padded_mask``): the last 3 for
encoders and encoder-decoders, the first 3 for decoders (left padding).
Decoders are called as ``model(input_ids=..., attention_mask=...)`` with their
config's cache default (``use_cache=True``: the output holds a ``DynamicCache``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import transformers as tf

from .base import VOCAB, Built, Case, make, padded_mask, seeded, text_kwargs, token_ids

H, FF, LAYERS, HEADS, POS = 64, 128, 2, 4, 64

# the BERT-style keyword names most encoder configs share
BERTLIKE = dict(vocab_size=VOCAB, hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                intermediate_size=FF, max_position_embeddings=POS)
# the Llama-style keyword names most decoder configs share
LLAMALIKE = dict(vocab_size=VOCAB, hidden_size=H, intermediate_size=FF, num_hidden_layers=LAYERS,
                 num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=POS)
# the BART-style keyword names of the encoder-decoder configs
BARTLIKE = dict(vocab_size=VOCAB, d_model=H, encoder_layers=LAYERS, decoder_layers=LAYERS,
                encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, encoder_ffn_dim=FF,
                decoder_ffn_dim=FF, max_position_embeddings=POS, pad_token_id=1, bos_token_id=0,
                eos_token_id=2, decoder_start_token_id=2)

CASES: list[Case] = []


def text_case(name: str, family: str, model_cls: type, config: Callable[[], Any], *,
              masked: bool = True, attn: str | None = None) -> None:
    """A case calling ``model_cls(config())`` as ``model(input_ids=..., attention_mask=...)``."""

    @seeded
    def build() -> Built:
        model = make(model_cls, config(), attn)
        return model, (), text_kwargs(masked=masked, left=family == "decoder")

    CASES.append(Case(name, family, build, attn))


def seq2seq_case(name: str, model_cls: type, config: Callable[[], Any], *,
                 attn: str | None = None) -> None:
    """A full encoder-decoder forward: padded source, 8 decoder tokens."""

    @seeded
    def build() -> Built:
        model = make(model_cls, config(), attn)
        kwargs = text_kwargs()
        kwargs["decoder_input_ids"] = token_ids(seq=8)
        return model, (), kwargs

    CASES.append(Case(name, "encoder-decoder", build, attn))


# ---------------------------------------------------------------- encoders
for masked in (True, False):
    text_case("bert" if masked else "bert_nomask", "encoder", tf.BertModel,
              lambda: tf.BertConfig(**BERTLIKE), masked=masked)
text_case("bert_eager", "encoder", tf.BertModel, lambda: tf.BertConfig(**BERTLIKE), attn="eager")
text_case("roberta", "encoder", tf.RobertaModel, lambda: tf.RobertaConfig(**BERTLIKE))
text_case("xlm_roberta", "encoder", tf.XLMRobertaModel, lambda: tf.XLMRobertaConfig(**BERTLIKE))
text_case("camembert", "encoder", tf.CamembertModel, lambda: tf.CamembertConfig(**BERTLIKE))
text_case("electra", "encoder", tf.ElectraModel,
          lambda: tf.ElectraConfig(**BERTLIKE, embedding_size=32))
text_case("albert", "encoder", tf.AlbertModel,
          lambda: tf.AlbertConfig(**BERTLIKE, embedding_size=32))
text_case("distilbert", "encoder", tf.DistilBertModel, lambda: tf.DistilBertConfig(
    vocab_size=VOCAB, dim=H, n_layers=LAYERS, n_heads=HEADS, hidden_dim=FF,
    max_position_embeddings=POS))
# DeBERTa-v3's settings: disentangled relative attention, no absolute positions
text_case("deberta_v2", "encoder", tf.DebertaV2Model, lambda: tf.DebertaV2Config(
    **BERTLIKE, relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=16,
    max_relative_positions=32, norm_rel_ebd="layer_norm", share_att_key=True,
    position_biased_input=False))
text_case("mpnet", "encoder", tf.MPNetModel, lambda: tf.MPNetConfig(**BERTLIKE))
text_case("modernbert", "encoder", tf.ModernBertModel, lambda: tf.ModernBertConfig(
    **BERTLIKE, global_attn_every_n_layers=2, local_attention=8, pad_token_id=0,
    bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2))
# token mixing by a 2-D Fourier transform (torch.fft.fftn(...).real): complex tensors
text_case("fnet", "encoder", tf.FNetModel, lambda: tf.FNetConfig(
    vocab_size=VOCAB, hidden_size=H, num_hidden_layers=LAYERS, intermediate_size=FF,
    max_position_embeddings=POS), masked=False)

# ---------------------------------------------------------------- decoders
GPT2 = dict(vocab_size=VOCAB, n_positions=POS, n_embd=H, n_layer=LAYERS, n_head=HEADS, bos_token_id=0,
            eos_token_id=0)
for masked in (True, False):
    text_case("gpt2" if masked else "gpt2_nomask", "decoder", tf.GPT2LMHeadModel,
              lambda: tf.GPT2Config(**GPT2), masked=masked)
    text_case("llama" if masked else "llama_nomask", "decoder", tf.LlamaForCausalLM,
              lambda: tf.LlamaConfig(**LLAMALIKE), masked=masked)
text_case("llama_eager", "decoder", tf.LlamaForCausalLM, lambda: tf.LlamaConfig(**LLAMALIKE),
          attn="eager")
# grouped-query attention: 4 query heads share 2 key/value heads. Without a mask,
# transformers' sdpa_attention passes enable_gqa=True to scaled_dot_product_attention
# (integrations/sdpa_attention.py, use_gqa_in_sdpa); with one it repeats the kv heads.
for masked in (True, False):
    text_case("llama_gqa" if masked else "llama_gqa_nomask", "decoder", tf.LlamaForCausalLM,
              lambda: tf.LlamaConfig(**{**LLAMALIKE, "num_key_value_heads": 2}), masked=masked)
text_case("gpt_neo", "decoder", tf.GPTNeoForCausalLM, lambda: tf.GPTNeoConfig(
    vocab_size=VOCAB, max_position_embeddings=POS, hidden_size=H, num_layers=LAYERS,
    num_heads=HEADS, attention_types=[[["global", "local"], 1]], window_size=8, bos_token_id=0,
    eos_token_id=0))
text_case("opt", "decoder", tf.OPTForCausalLM, lambda: tf.OPTConfig(
    vocab_size=VOCAB, hidden_size=H, num_hidden_layers=LAYERS, ffn_dim=FF,
    num_attention_heads=HEADS, max_position_embeddings=POS, word_embed_proj_dim=H))
text_case("bloom", "decoder", tf.BloomForCausalLM,
          lambda: tf.BloomConfig(vocab_size=VOCAB, hidden_size=H, n_layer=LAYERS, n_head=HEADS))
text_case("mistral", "decoder", tf.MistralForCausalLM, lambda: tf.MistralConfig(
    **{**LLAMALIKE, "num_key_value_heads": 2}, sliding_window=8))
text_case("mistral_mha", "decoder", tf.MistralForCausalLM,
          lambda: tf.MistralConfig(**LLAMALIKE, sliding_window=8))
text_case("qwen2", "decoder", tf.Qwen2ForCausalLM,
          lambda: tf.Qwen2Config(**{**LLAMALIKE, "num_key_value_heads": 2}))
text_case("qwen3", "decoder", tf.Qwen3ForCausalLM,
          lambda: tf.Qwen3Config(**{**LLAMALIKE, "num_key_value_heads": 2}, head_dim=16))
text_case("qwen3_mha", "decoder", tf.Qwen3ForCausalLM,
          lambda: tf.Qwen3Config(**LLAMALIKE, head_dim=16))
text_case("phi", "decoder", tf.PhiForCausalLM,
          lambda: tf.PhiConfig(**LLAMALIKE, partial_rotary_factor=0.5))
text_case("phi3", "decoder", tf.Phi3ForCausalLM, lambda: tf.Phi3Config(
    **LLAMALIKE, pad_token_id=0, bos_token_id=1, eos_token_id=2))
# Gemma-2B's shape: multi-query attention (one key/value head)
for masked in (True, False):
    text_case("gemma" if masked else "gemma_nomask", "decoder", tf.GemmaForCausalLM,
              lambda: tf.GemmaConfig(**{**LLAMALIKE, "num_key_value_heads": 1}, head_dim=16),
              masked=masked)
text_case("gemma_mha", "decoder", tf.GemmaForCausalLM,
          lambda: tf.GemmaConfig(**LLAMALIKE, head_dim=16))
# Falcon-7B's shape: multi-query attention, parallel attention and MLP
text_case("falcon", "decoder", tf.FalconForCausalLM, lambda: tf.FalconConfig(
    vocab_size=VOCAB, hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
    max_position_embeddings=POS))
text_case("stablelm", "decoder", tf.StableLmForCausalLM, lambda: tf.StableLmConfig(**LLAMALIKE))
text_case("gptj", "decoder", tf.GPTJForCausalLM, lambda: tf.GPTJConfig(
    vocab_size=VOCAB, n_positions=POS, n_embd=H, n_layer=LAYERS, n_head=HEADS, rotary_dim=8, bos_token_id=0,
    eos_token_id=0))
text_case("codegen", "decoder", tf.CodeGenForCausalLM, lambda: tf.CodeGenConfig(
    vocab_size=VOCAB, n_positions=POS, n_ctx=POS, n_embd=H, n_layer=LAYERS, n_head=HEADS,
    rotary_dim=8, bos_token_id=0, eos_token_id=0))
text_case("gpt_neox", "decoder", tf.GPTNeoXForCausalLM, lambda: tf.GPTNeoXConfig(
    vocab_size=VOCAB, hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
    intermediate_size=FF, max_position_embeddings=POS, rotary_pct=0.25))
# StarCoder-1's shape: multi-query attention
text_case("gpt_bigcode", "decoder", tf.GPTBigCodeForCausalLM, lambda: tf.GPTBigCodeConfig(
    vocab_size=VOCAB, n_positions=POS, n_embd=H, n_layer=LAYERS, n_head=HEADS, bos_token_id=0,
    eos_token_id=0))
text_case("olmo", "decoder", tf.OlmoForCausalLM, lambda: tf.OlmoConfig(
    **LLAMALIKE, pad_token_id=1, bos_token_id=None, eos_token_id=0))

# ---------------------------------------------------------------- encoder-decoders
seq2seq_case("t5", tf.T5ForConditionalGeneration, lambda: tf.T5Config(
    vocab_size=VOCAB, d_model=H, d_kv=16, d_ff=FF, num_layers=LAYERS, num_heads=HEADS,
    relative_attention_num_buckets=8, relative_attention_max_distance=16,
    decoder_start_token_id=0))
seq2seq_case("bart", tf.BartForConditionalGeneration, lambda: tf.BartConfig(**BARTLIKE))
seq2seq_case("mbart", tf.MBartForConditionalGeneration, lambda: tf.MBartConfig(**BARTLIKE))
seq2seq_case("marian", tf.MarianMTModel, lambda: tf.MarianConfig(
    **{**BARTLIKE, "pad_token_id": 1, "decoder_start_token_id": 1, "eos_token_id": 0},
    forced_eos_token_id=0))
seq2seq_case("pegasus", tf.PegasusForConditionalGeneration, lambda: tf.PegasusConfig(
    **{**BARTLIKE, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0},
    forced_eos_token_id=1))


# Whisper: log-mel features [batch, mel bins, 2 * max_source_positions] and 8 decoder
# tokens; the encoder alone is the audio case whisper_encoder (vision.py).
def whisper_config() -> Any:
    return tf.WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=16, d_model=H, encoder_layers=LAYERS, decoder_layers=LAYERS,
        encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, encoder_ffn_dim=FF,
        decoder_ffn_dim=FF, max_source_positions=16, max_target_positions=POS, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, begin_suppress_tokens=None)


@seeded
def whisper() -> Built:
    model = tf.WhisperForConditionalGeneration(whisper_config())
    features = torch.randn(2, 16, 32)
    mask = padded_mask(seq=8, left=True)
    return model, (), {"input_features": features, "decoder_input_ids": token_ids(seq=8),
                       "decoder_attention_mask": mask}


CASES.append(Case("whisper", "encoder-decoder", whisper))
