"""PopTorch's ``poptorch.CPU``: a Python function that runs on the host, inside the
compiled program, where the model calls it.

The call is the op ``poptorch::host_call(Tensor[] inputs, str id) -> Tensor[]``, whose
CPU kernel runs the function registered under ``id``. It has no lowering and no Meta
kernel, so the tracer captures it as a host kernel whose result shapes are those the
function gives for the inputs being traced (run once while tracing), checked on every
call (docs/ops.md). The id is the ``ID`` given to ``poptorch.CPU``: a program from the
executable cache finds the function of the same id in the new process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ._helpers import tracing
from .errors import ArgumentError, ArgumentTypeError

_LIB = torch.library.Library("poptorch", "DEF")
_LIB.define("host_call(Tensor[] inputs, str id) -> Tensor[]")

# id -> (function, whether its last call returned one tensor rather than a sequence)
_CALLS: dict[str, Callable[..., Any]] = {}
_SINGLE: dict[str, bool] = {}


def _host_call(inputs: list[torch.Tensor], id: str) -> list[torch.Tensor]:  # noqa: A002
    fn = _CALLS.get(id)
    if fn is None:
        raise RuntimeError(f"poptorch.CPU: no function is registered as {id!r} in this process; "
                           "construct the poptorch.CPU object before calling the model")
    # The inputs are the program's buffers: the function gets copies it may write.
    with torch.no_grad():
        out = fn(*[t.clone() for t in inputs])
    single = isinstance(out, torch.Tensor)
    outs = [out] if single else list(out) if isinstance(out, (list, tuple)) else None
    if outs is None or not all(isinstance(o, torch.Tensor) for o in outs):
        raise RuntimeError(f"poptorch.CPU {id!r}: the function must return a tensor or a "
                           f"tuple or list of tensors, got {type(out).__name__}")
    _SINGLE[id] = single
    return [o.detach().cpu().contiguous() for o in outs]


_LIB.impl("host_call", _host_call, "CPU")


class CPU:
    """PopTorch's CPU op: ``poptorch.CPU(fn, "MyOp")`` makes a callable that runs
    ``fn`` on the host, inside the compiled program, on the tensors it is called with
    (its results go on into the program). Outside a compiled model it calls ``fn``.
    ``fn`` takes tensors and returns a tensor or a tuple or list of tensors whose shapes
    depend only on its inputs' shapes (they are checked on every call)."""

    def __init__(self, layer_to_call: Callable[..., Any], ID: str) -> None:  # noqa: N803
        if not callable(layer_to_call):
            raise ArgumentTypeError("poptorch.CPU: layer_to_call must be callable, got "
                                    f"{type(layer_to_call).__name__}")
        if not isinstance(ID, str) or not ID:
            raise ArgumentTypeError(f"poptorch.CPU: ID must be a non-empty str, got {ID!r}")
        if isinstance(layer_to_call, torch.nn.Module):
            layer_to_call.requires_grad_(False)
        self._layer_to_call = layer_to_call
        self._ID = ID
        _CALLS[ID] = layer_to_call

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if tracing.tracer is None:
            return self._layer_to_call(*inputs, **kwargs)
        if kwargs or not all(isinstance(t, torch.Tensor) for t in inputs):
            raise ArgumentError(f"poptorch.CPU {self._ID!r}: inside a compiled model its "
                                "arguments must be tensors, passed positionally")
        _CALLS[self._ID] = self._layer_to_call  # the latest object of this id wins
        outs = torch.ops.poptorch.host_call(list(inputs), self._ID)
        return outs[0] if _SINGLE.get(self._ID, False) and len(outs) == 1 else tuple(outs)
