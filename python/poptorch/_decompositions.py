"""Ops without a lowering that are traced through their decompositions.

An aten op that the op table does not lower runs as a host kernel (PyTorch's CPU
kernel inside the program). Backward ops (``*_backward``, ``*_backward_data``: what
``trainingModel``'s gradients are made of) are first offered to torch's own
decompositions (``torch._decomp``): the ops a decomposition calls reach the device
and are captured like any other, so they are lowered, fused and outlined with the rest
of the program instead of each being a call out of it. An op without a decomposition,
or whose decomposition calls it again, still runs as a host kernel.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._decomp import decomposition_table


def _decomposed(name: str) -> bool:
    base = name.split("::", 1)[-1]
    return base.endswith("_backward") or base.endswith("_backward_data")


def decompose(name: str, overload: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The results of ``name.overload(*args, **kwargs)`` from its decomposition, or
    None (``Tracer::setDecomposer``)."""
    if not name.startswith("aten::") or not _decomposed(name):
        return None
    packet = getattr(torch.ops.aten, name[len("aten::"):], None)
    op = getattr(packet, overload or "default", None) if packet is not None else None
    if op is None:
        return None
    outs = [a.name for a in op._schema.arguments if a.is_out]
    if outs:
        # An out= overload (grad_input=...): the functional op's decomposition,
        # written into the out tensors.
        functional = getattr(packet, "default", None)
        fn = decomposition_table.get(functional) if functional is not None else None
        if fn is None:
            return None
        with torch._C.DisableTorchFunction():
            value = fn(*args, **{k: v for k, v in kwargs.items() if k not in outs})
            values = list(value) if isinstance(value, (list, tuple)) else [value]
            targets = [kwargs[k] for k in outs]
            for target, v in zip(targets, values, strict=True):
                if target.shape != v.shape:
                    target.resize_(v.shape)
                target.copy_(v)
        return targets[0] if len(targets) == 1 else tuple(targets)
    fn = decomposition_table.get(op)
    if fn is None:
        return None
    with torch._C.DisableTorchFunction():
        out = fn(*args, **kwargs)
    return tuple(out) if isinstance(out, list) else out
