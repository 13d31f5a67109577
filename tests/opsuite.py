"""Shared pieces of the per-op dtype suites.

Every per-op test that runs across dtypes takes a ``dtype`` parameter from
``DTYPES`` (or a subset); ``conftest.py`` counts outcomes per dtype from it and
prints the table at the end of the run.  Inputs come from ``sample`` so that
each dtype gets values in its own range (small integers, positive values for
``log``, nonzero divisors, ...), and results are compared with eager PyTorch
with ``assert_close``'s per-dtype default tolerances.
"""

from __future__ import annotations

import pytest
import torch

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
SIGNED_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64]
INT_DTYPES = [*SIGNED_DTYPES, torch.uint8]
DTYPES = [*FLOAT_DTYPES, *INT_DTYPES, torch.bool]

# Shapes that every op should handle: 0-dim, empty, 1-D, 2-D and one with a
# size-1 dimension (broadcasting partner).
SHAPES = [(), (0,), (5,), (2, 3), (2, 1, 4)]


def dtype_id(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def dtypes(*groups: list[torch.dtype]) -> pytest.MarkDecorator:
    """``@dtypes(FLOAT_DTYPES, INT_DTYPES)``: parametrize ``dtype`` with readable ids."""
    flat = [d for g in groups for d in g] if groups else DTYPES
    return pytest.mark.parametrize("dtype", flat, ids=dtype_id)


def sample(shape: tuple[int, ...], dtype: torch.dtype, *, low: float | None = None,
           high: float | None = None, nonzero: bool = False) -> torch.Tensor:
    """Random values of ``dtype`` in [low, high) (defaults suit the dtype)."""
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point:
        lo = -3.0 if low is None else low
        hi = 3.0 if high is None else high
        t = (torch.rand(shape, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
        if nonzero:
            t = torch.where(t == 0, torch.ones((), dtype=dtype), t)
        return t
    info = torch.iinfo(dtype)
    lo = max(info.min, -9 if low is None else int(low))
    hi = min(info.max, 10 if high is None else int(high))
    t = torch.randint(lo, hi, shape, dtype=torch.int64)
    if nonzero:
        t = torch.where(t == 0, torch.ones((), dtype=torch.int64), t)
    return t.to(dtype)
