"""The zoo: tiny public Hugging Face architectures with seeded random weights.

``CASES`` lists every case (``base.Case``: name, family, builder); the builders
live by family in ``text.py`` (encoders, decoders, encoder-decoders) and
``vision.py`` (vision, audio, multimodal). ``tests/test_zoo.py`` runs them all.
"""

from __future__ import annotations

from .base import Case
from .text import CASES as TEXT_CASES
from .vision import CASES as VISION_CASES

CASES: list[Case] = [*TEXT_CASES, *VISION_CASES]
BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"

__all__ = ["BY_NAME", "CASES", "Case"]
