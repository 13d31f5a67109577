"""PopTorch's ``poptorch.MultiConv``: a scope whose convolutions PopLibs planned together.

Here every convolution is its own kernel, tiled and vectorised for the host, whether or
not it is inside a MultiConv scope; the per-convolution settings (memory proportions,
partials types, plan type, reserved tiles, cycle back-off, dithering) describe IPU tile
planning and are checked as PopTorch checks them, then reported as having no effect.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from .enums import MultiConvPlanType
from .errors import ArgumentError, ArgumentTypeError

_WARNED: set[str] = set()


def _per_conv(name: str, value: Any, kind: type) -> tuple[Any, ...] | None:
    """A setting for every convolution: one value for all, or a non-empty sequence."""
    if value is None:
        return None
    if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, kind) for v in value):
        return tuple(value)
    raise ArgumentTypeError(f"poptorch.MultiConv: {name} must be a {kind.__name__} or a "
                            f"non-empty list of them, got {value!r}")


class MultiConv:
    """``with poptorch.MultiConv(): y = conv_a(x); v = conv_b(u)`` (see the module's
    docstring). The settings chain: ``MultiConv().availableMemoryProportions(0.3)``."""

    def __init__(self) -> None:
        self._settings: dict[str, Any] = {}

    def _set(self, name: str, value: Any) -> MultiConv:
        if value is None:
            self._settings.pop(name, None)
        else:
            self._settings[name] = value
        return self

    def availableMemoryProportions(self, value: Any) -> MultiConv:  # noqa: N802
        values = _per_conv("availableMemoryProportions", value, float)
        if values is not None and not all(0.0 <= v < 1.0 for v in values):
            raise ArgumentError("poptorch.MultiConv: availableMemoryProportions must be in "
                                f"[0, 1), got {value!r}")
        return self._set("availableMemoryProportions", values)

    def partialsTypes(self, value: Any) -> MultiConv:  # noqa: N802
        values = value if isinstance(value, (list, tuple)) else (value,)
        if not values or any(v not in (torch.float32, torch.float16) for v in values):
            raise ArgumentError("poptorch.MultiConv: partialsTypes must be torch.float or "
                                f"torch.half, or a list of them, got {value!r}")
        return self._set("partialsTypes", tuple(values))

    def enableConvDithering(self, value: Any) -> MultiConv:  # noqa: N802
        return self._set("enableConvDithering", _per_conv("enableConvDithering", value, bool))

    def planType(self, value: Any) -> MultiConv:  # noqa: N802
        if value is not None and not isinstance(value, MultiConvPlanType):
            raise ArgumentTypeError("poptorch.MultiConv: planType must be a "
                                    f"poptorch.MultiConvPlanType, got {value!r}")
        return self._set("planType", value)

    def perConvReservedTiles(self, value: int) -> MultiConv:  # noqa: N802
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentTypeError("poptorch.MultiConv: perConvReservedTiles must be an "
                                    f"int >= 0, got {value!r}")
        return self._set("perConvReservedTiles", value)

    def cycleBackOff(self, value: float) -> MultiConv:  # noqa: N802
        if not isinstance(value, float) or not 0.0 <= value <= 1.0:
            raise ArgumentTypeError("poptorch.MultiConv: cycleBackOff must be a float in "
                                    f"[0, 1], got {value!r}")
        return self._set("cycleBackOff", value)

    def __enter__(self) -> MultiConv:
        for name in self._settings:
            if name not in _WARNED:
                _WARNED.add(name)
                warnings.warn(f"poptorch.MultiConv().{name}(...) is accepted but has no "
                              "effect: it plans IPU tiles, and here every convolution is its "
                              "own kernel for the host CPU", UserWarning, stacklevel=2)
        return self

    def __exit__(self, *exc: Any) -> None:
        return None
