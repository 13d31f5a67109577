"""Small helpers of PopTorch's API that make sense in inference models.

They are ordinary torch code, so tracing captures them like the rest of the
model: on this device they are identities (``nop``, ``recomputationCheckpoint``,
``set_available_memory``: there is no scheduling, recomputation or tile memory
to steer) or plain reductions (``identity_loss``).
"""

from __future__ import annotations

from typing import Any

import torch

_tracing_depth = 0  # > 0 while trace() runs a model (set by _tracing)


def isRunningOnIpu() -> bool:  # noqa: N802
    """True while the model runs for the ipu (is being traced), False when it runs eagerly."""
    return _tracing_depth > 0


def nop(tensor: torch.Tensor) -> torch.Tensor:
    """PopTorch's no-op marker: returns ``tensor`` unchanged."""
    return tensor


def recomputationCheckpoint(*tensors: Any) -> Any:  # noqa: N802
    """Marks recomputation points in training; inference models compute each value once,
    so the tensors are returned unchanged (one tensor, or a tuple for several)."""
    if len(tensors) == 1:
        return tensors[0]
    return tensors


def set_available_memory(tensor: torch.Tensor, available_memory_proportion: float) -> torch.Tensor:
    """Accepted for PopTorch compatibility: there is no tile memory to budget, so the
    proportion (checked to be in (0, 1]) does not change the program."""
    if not 0.0 < float(available_memory_proportion) <= 1.0:
        raise ValueError("poptorch.set_available_memory: available_memory_proportion must be in "
                         f"(0, 1], got {available_memory_proportion}")
    return tensor


def identity_loss(x: torch.Tensor, reduction: str) -> torch.Tensor:
    """PopTorch's identity_loss: ``x`` reduced with "sum", "mean" or "none"."""
    if reduction == "sum":
        return x.sum()
    if reduction == "mean":
        return x.mean()
    if reduction == "none":
        return x
    raise ValueError(f'poptorch.identity_loss: reduction must be "sum", "mean" or "none", '
                     f"got {reduction!r}")
