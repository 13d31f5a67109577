"""PopTorch's on-device control flow: ``poptorch.for_loop`` and ``poptorch.cond``.

While a model is traced, a loop body or a branch is traced once into the region of an
``scf.for`` / ``scf.if`` of the captured program (csrc/TracerControlFlow.cpp), so the
loop runs ``count`` times and the conditional picks its branch when the program runs:
neither is unrolled nor specialised on the values seen while tracing. Called outside a
compiled model, both run eagerly in Python (a loop, an ``if``), which is also what the
compiled program is tested against.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ._helpers import _traced, tracing
from .errors import ArgumentError


def _tensor_list(what: str, name: str, inputs: Any) -> list[torch.Tensor]:
    if not isinstance(inputs, list):
        raise ValueError(f"{what} expects input tensors ({name}) to be a list of tensors. "
                         "(Object is not list)")
    for i, t in enumerate(inputs):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{what} expects input tensors ({name}) to be a list of tensors. "
                             f"(Object contained in list at index {i} is not torch.tensor)")
    return inputs


def _outputs(what: str, out: Any) -> list[torch.Tensor]:
    outs = [out] if isinstance(out, torch.Tensor) else list(out) if isinstance(
        out, (list, tuple)) else None
    if outs is None or not all(isinstance(o, torch.Tensor) for o in outs):
        raise ArgumentError(f"{what} must return a tensor or a list or tuple of tensors, got "
                            f"{type(out).__name__}")
    return outs


def _to_tracer(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """The ipu tensors the tracer knows behind functionalized ones."""
    return [_traced(t) for t in tensors]


def _from_tracer(tensors: list[torch.Tensor], functional: bool) -> list[torch.Tensor]:
    """The tracer's new tensors as the model sees them (functionalized while tracing)."""
    return [torch._to_functional_tensor(t) if functional else t for t in tensors]


def for_loop(count: int, body: Callable[..., Any],
             inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Runs ``body`` ``count`` times on the device, each iteration taking the tensors the
    previous one returned (the first takes ``inputs``); returns the last iteration's
    tensors as a list.

    ``body`` takes as many tensors as it returns, with the same shapes and dtypes. It may
    use other tensors of the model (weights, values computed before the loop) but cannot
    write into them, read tensor values into Python, or draw random numbers.
    """
    _tensor_list("poptorch.for_loop", "inputs", inputs)
    if isinstance(count, bool) or not isinstance(count, int):
        raise ArgumentError(f"poptorch.for_loop: count must be an int, got {type(count).__name__}")
    if not callable(body):
        raise ArgumentError("poptorch.for_loop: body must be callable")
    tracer = tracing.tracer
    if tracer is None:
        if count < 0:
            raise ArgumentError(f"poptorch.for_loop: count must be >= 0, got {count}")
        # As in the program, the body has tensors of its own: it may write them.
        outs = [t.clone() for t in inputs]
        for _ in range(count):
            new = _outputs("poptorch.for_loop's body", body(*outs))
            if len(new) != len(outs):
                raise ArgumentError(f"poptorch.for_loop's body returns {len(new)} tensor(s) but "
                                    f"takes {len(outs)}: they must correspond one to one")
            outs = new
        return outs
    functional = any(torch._is_functional_tensor(t) for t in inputs)
    args = _from_tracer(tracer.begin_for_loop(_to_tracer(inputs), count), functional)
    outs = _outputs("poptorch.for_loop's body", body(*args))
    return _from_tracer(tracer.end_for_loop(_to_tracer(outs)), functional)


def cond(condition: torch.Tensor, then_body: Callable[..., Any], then_inputs: list[torch.Tensor],
         else_body: Callable[..., Any], else_inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Runs ``then_body(*then_inputs)`` if ``condition`` (a one-element tensor) is true,
    else ``else_body(*else_inputs)``, deciding on the device when the program runs; returns
    the branch's tensors as a list. Both branches return the same number of tensors, with
    the same shapes and dtypes.
    """
    _tensor_list("poptorch.cond", "then_inputs", then_inputs)
    _tensor_list("poptorch.cond", "else_inputs", else_inputs)
    if not isinstance(condition, torch.Tensor) or condition.numel() != 1:
        raise ArgumentError("poptorch.cond: condition must be a tensor of one element, got "
                            + (f"shape {list(condition.shape)}" if isinstance(
                                condition, torch.Tensor) else type(condition).__name__))
    if not callable(then_body) or not callable(else_body):
        raise ArgumentError("poptorch.cond: then_body and else_body must be callable")
    tracer = tracing.tracer
    if tracer is None:
        if bool(condition.reshape(())):
            return _outputs("poptorch.cond's then_body",
                            then_body(*[t.clone() for t in then_inputs]))
        return _outputs("poptorch.cond's else_body", else_body(*[t.clone() for t in else_inputs]))
    flag = condition.reshape(())
    if flag.dtype != torch.bool:
        flag = flag != 0
    functional = torch._is_functional_tensor(flag)
    args = _from_tracer(tracer.begin_if(_traced(flag), _to_tracer(then_inputs)), functional)
    then_out = _outputs("poptorch.cond's then_body", then_body(*args))
    args = _from_tracer(tracer.else_branch(_to_tracer(then_out), _to_tracer(else_inputs)),
                        functional)
    else_out = _outputs("poptorch.cond's else_body", else_body(*args))
    return _from_tracer(tracer.end_if(_to_tracer(else_out)), functional)

