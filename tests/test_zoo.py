"""The model zoo: tiny public Hugging Face architectures (tests/zoo) through
``poptorch.inferenceModel``, every output tensor compared with eager PyTorch.

Weights are random (seed 0) and nothing is downloaded. Outputs are compared leaf by
leaf: the tensors of the ``ModelOutput`` (a pytree) and, for the key/value caches the
decoders return, each layer's keys and values. Tolerance: ``rtol=atol=1e-4``
(float32; the compiled program sums in other orders than eager's kernels).

``KNOWN_FAILURES`` lists the cases that fail today, with the exception they raise
and the root cause; they run as strict xfails, so a fix shows up as an XPASS
failure until its entry here is removed.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from typing import Any  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402

# Not importorskip: the zoo is part of `make test`, which installs transformers
# (Makefile TEST_PKGS); without it this module fails to import, loudly.
import transformers  # noqa: E402, F401
from conftest import MAX_ERRORS  # noqa: E402
from transformers.cache_utils import Cache, EncoderDecoderCache  # noqa: E402
from zoo.models import CASES  # noqa: E402

import poptorch  # noqa: E402

RTOL = ATOL = 1e-4


# name: (exception class, root cause)
KNOWN_FAILURES: dict[str, tuple[type[BaseException], str]] = {}


def tensor_leaves(out: Any, where: str = "out", cache: bool = False) -> list[tuple[str, Any, bool]]:
    """(path, leaf, in a cache) for every leaf of ``out``; caches are opened to their
    key/value tensors."""
    found: list[tuple[str, Any, bool]] = []
    for path, leaf in pytree.tree_flatten_with_path(out)[0]:
        name = where + pytree.keystr(path)
        if isinstance(leaf, EncoderDecoderCache):
            found += tensor_leaves(leaf.self_attention_cache, name + ".self_attention_cache", True)
            found += tensor_leaves(leaf.cross_attention_cache, name + ".cross_attention_cache", True)
        elif isinstance(leaf, Cache):
            for i, layer in enumerate(leaf.layers):
                for attr in ("keys", "values"):
                    found += tensor_leaves(getattr(layer, attr, None), f"{name}.layers[{i}].{attr}",
                                           True)
        else:
            found.append((name, leaf, cache))
    return found


def _assert_leaf(name: str, a: Any, e: Any) -> float:
    if not isinstance(e, torch.Tensor):
        assert a == e, f"{name}: {a!r} != eager {e!r}"
        return 0.0
    assert isinstance(a, torch.Tensor), f"{name}: {type(a).__name__}, eager a tensor"
    torch.testing.assert_close(a, e, rtol=RTOL, atol=ATOL, msg=lambda m: f"{name}: {m}")
    if not e.numel() or not e.is_floating_point():
        return 0.0
    return (a.double() - e.double()).abs().max().item()


def assert_outputs_close(actual: Any, expected: Any) -> float:
    """Every leaf of ``actual`` equals eager's ``expected``; returns the max abs error."""
    a_leaves, e_leaves = tensor_leaves(actual), tensor_leaves(expected)
    assert [n for n, *_ in a_leaves] == [n for n, *_ in e_leaves], "output structure differs"
    pairs = list(zip(a_leaves, e_leaves, strict=True))
    return max([_assert_leaf(n, a, e) for (n, a, _), (_, e, _) in pairs], default=0.0)


def _param(case: Any) -> Any:
    failure = KNOWN_FAILURES.get(case.name)
    marks = () if failure is None else pytest.mark.xfail(strict=True, raises=failure[0],
                                                         reason=failure[1])
    return pytest.param(case, id=case.name, marks=marks)


def test_known_failures_are_cases() -> None:
    assert not set(KNOWN_FAILURES) - {c.name for c in CASES}


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_zoo(case: Any) -> None:
    model, args, kwargs = case.build()
    with torch.no_grad():
        expected = model(*args, **kwargs)
    compiled = poptorch.inferenceModel(model)
    actual = compiled(*args, **kwargs)
    MAX_ERRORS[f"zoo[{case.name}]"] = assert_outputs_close(actual, expected)
    # The second call replays the program (and returns new cache objects, as eager does).
    again = compiled(*args, **kwargs)
    assert_outputs_close(again, expected)
    assert compiled.compile_count == 1
    caches = [x for x in pytree.tree_leaves(actual) if isinstance(x, Cache)]
    assert not any(c in pytree.tree_leaves(again) for c in caches)
