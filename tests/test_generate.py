"""Generation with Hugging Face ``generate()`` through a compiled forward, and the
mechanism it rests on: input objects that hold tensors (a ``StaticCache`` passed as
``past_key_values``) have those tensors as program inputs, written back where the model
updates them in place.

The recipe (docs/user_guide.md): ``model.forward = poptorch.inferenceModel(model)``, then
``model.generate(..., cache_implementation="static")``. Tokens are compared with eager
``generate()`` on the same model (greedy decoding, left-padded prompts); a static cache
keeps the decode step's shapes fixed, so one compile serves the prefill and one every
decode step.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from conftest import Fn  # noqa: E402

import poptorch  # noqa: E402

NEW_TOKENS = 32


def _llama() -> torch.nn.Module:
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=128,
                                      pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return transformers.LlamaForCausalLM(config)


def _gpt2() -> torch.nn.Module:
    config = transformers.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4,
                                     n_positions=128, pad_token_id=0, bos_token_id=1,
                                     eos_token_id=2)
    return transformers.GPT2LMHeadModel(config)


@pytest.mark.parametrize("build", [_llama, _gpt2], ids=["llama", "gpt2"])
def test_generate_with_static_cache(build):
    torch.manual_seed(0)
    model = build().eval()
    ids = torch.randint(3, 256, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[0, :3] = 0  # left padding

    def generate():
        with torch.no_grad():
            return model.generate(ids, attention_mask=mask, max_new_tokens=NEW_TOKENS,
                                  min_new_tokens=NEW_TOKENS, do_sample=False,
                                  cache_implementation="static")

    expected = generate()
    ipu_model = poptorch.inferenceModel(model)
    model.forward = ipu_model
    tokens = generate()
    assert tokens.shape == (2, 8 + NEW_TOKENS)
    assert torch.equal(tokens, expected)
    assert ipu_model.compile_count == 2  # the prefill, then every decode step


class _Cache:
    """An object pytree does not open, holding tensors and settings (like a
    transformers cache)."""

    def __init__(self, n: int, scale: float = 1.0) -> None:
        self.layers = [{"keys": torch.zeros(2, n)} for _ in range(2)]
        self.length = torch.tensor(0)
        self.scale = scale


class _UsesCache(torch.nn.Module):
    def forward(self, x, cache):
        for layer in cache.layers:
            layer["keys"].index_copy_(1, cache.length.reshape(1), x * cache.scale)
        cache.length.add_(1)
        return cache.layers[0]["keys"].sum(1) + cache.layers[1]["keys"][:, 0], cache


def test_input_object_tensors_are_inputs():
    eager_cache, cache = _Cache(4), _Cache(4)
    model = poptorch.inferenceModel(_UsesCache())
    for step in range(3):
        x = torch.full((2, 1), float(step + 1))
        expected, expected_cache = _UsesCache()(x, eager_cache)
        out, out_cache = model(x, cache)
        torch.testing.assert_close(out, expected)
        # written into the caller's object as eager writes, and returned as a new one
        for mine, eager in ((cache, eager_cache), (out_cache, expected_cache)):
            torch.testing.assert_close(mine.layers[1]["keys"], eager.layers[1]["keys"])
            assert int(mine.length) == int(eager.length) == step + 1
        assert out_cache is not cache
    assert model.compile_count == 1


def test_input_object_of_another_structure_recompiles():
    model = poptorch.inferenceModel(_UsesCache())
    x = torch.ones(2, 1)
    model(x, _Cache(4))
    model(x, _Cache(4))  # another object, the same structure: replayed
    assert model.compile_count == 1
    out, _ = model(x, _Cache(4, scale=3.0))  # a setting the trace baked in
    assert model.compile_count == 2
    torch.testing.assert_close(out, torch.full((2,), 6.0))


def test_forward_replaced_by_its_executor():
    # Code that calls the model itself (generate() does) runs the compiled program.
    model = Fn(lambda x: x.relu() * 2)
    ipu_model = poptorch.inferenceModel(model)
    model.forward = ipu_model
    x = torch.randn(3, 4)
    torch.testing.assert_close(model(x), x.relu() * 2)
    torch.testing.assert_close(model(x + 1), (x + 1).relu() * 2)
    assert ipu_model.compile_count == 1
    assert model.forward is ipu_model
