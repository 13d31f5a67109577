"""Small helpers of PopTorch's API that make sense in inference models.

They are ordinary torch code, so tracing captures them like the rest of the
model: on this device they are identities (``nop``, ``recomputationCheckpoint``,
``set_available_memory``: there is no scheduling, recomputation or tile memory
to steer) or plain reductions (``identity_loss``).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import torch

from .errors import ArgumentError, ArgumentIndexError, ArgumentTypeError, StateError


class _ThreadTracing(threading.local):
    """What this thread is tracing (set by ``_tracing.TracingSession``): threads trace
    independently, and a thread that runs a model eagerly while another traces sees
    eager behaviour."""

    tracer: Any = None  # the active _C.Tracer while this thread traces a model
    eager_compatible = False  # see _tracing._eager_compatible_tracing
    blocks: Any = None  # the _blocks._Tracker of the trace


tracing = _ThreadTracing()


def isRunningOnIpu() -> bool:  # noqa: N802
    """True while the model runs for the ipu (is being traced), False when it runs eagerly."""
    return tracing.tracer is not None


def nop(tensor: torch.Tensor) -> torch.Tensor:
    """PopTorch's no-op marker: returns ``tensor`` unchanged."""
    return tensor


def recomputationCheckpoint(*tensors: Any) -> Any:  # noqa: N802
    """Marks recomputation points in training; inference models compute each value once,
    so the tensors are returned unchanged (one tensor, or a tuple for several). A
    training step keeps its activations instead of recomputing them, and says so."""
    from ._training import note_recomputation_checkpoint

    note_recomputation_checkpoint()
    if len(tensors) == 1:
        return tensors[0]
    return tensors


def set_available_memory(tensor: torch.Tensor, available_memory_proportion: float) -> torch.Tensor:
    """Accepted for PopTorch compatibility: there is no tile memory to budget, so the
    proportion (checked to be in (0, 1]) does not change the program."""
    if not 0.0 < float(available_memory_proportion) <= 1.0:
        raise ArgumentError("poptorch.set_available_memory: available_memory_proportion must be in "
                         f"(0, 1], got {available_memory_proportion}")
    return tensor


def identity_loss(x: torch.Tensor, reduction: str) -> torch.Tensor:
    """PopTorch's identity_loss: ``x`` reduced with "sum", "mean" or "none"; in a
    ``trainingModel`` the result is the loss the model is trained on."""
    from ._training import note_identity_loss

    if reduction in ("sum", "mean", "none"):
        out = x.sum() if reduction == "sum" else x.mean() if reduction == "mean" else x
        note_identity_loss(out)
        return out
    raise ArgumentError(f'poptorch.identity_loss: reduction must be "sum", "mean" or "none", '
                     f"got {reduction!r}")


def _start_index(what: str, start: torch.Tensor | int, device: torch.device,
                 last: int) -> torch.Tensor:
    """``start`` (an int, or a 1-element integer tensor the program computes) as a 0-d
    int64 tensor, clamped to ``[0, last]`` (Poplar's dynamic slices stay in bounds)."""
    if isinstance(start, torch.Tensor):
        if start.numel() != 1 or start.dtype.is_floating_point or start.dtype.is_complex \
                or start.dtype == torch.bool:
            raise ArgumentError(f"poptorch.{what}: start must be an int or a 1-element integer "
                                f"tensor, got {start.dtype} with shape {list(start.shape)}")
        first = start.reshape(()).to(torch.int64)
    else:
        first = torch.tensor(int(start), dtype=torch.int64).to(device)
    return first.clamp(0, last)


def dynamic_slice(tensor: torch.Tensor, dim: int, start: torch.Tensor | int, size: int,
                  step: int = 1) -> torch.Tensor:
    """PopTorch's dynamic_slice: ``size`` elements of ``tensor`` along ``dim`` from ``start``
    (a 1-element integer tensor the program computes, or an int), ``step`` apart.

    ``size`` and ``step`` are Python ints (the output shape is static); ``start``
    is a run-time value: the slice is a gather at ``start + step * arange(size)``.
    A start that would read past either end is clamped so that the slice
    stays inside the tensor (Poplar's dynamic slice never reads out of bounds).
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ArgumentError(f"poptorch.dynamic_slice: size must be an int >= 0, got {size!r}")
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise ArgumentError(f"poptorch.dynamic_slice: step must be an int >= 1, got {step!r}")
    if not -tensor.dim() <= dim < max(tensor.dim(), 1):
        raise ArgumentIndexError(f"poptorch.dynamic_slice: dim {dim} is out of range for a "
                         f"{tensor.dim()}-dim tensor")
    dim = dim % tensor.dim()
    extent = tensor.shape[dim]
    span = (size - 1) * step + 1 if size > 0 else 0
    if span > extent:
        raise ArgumentError(f"poptorch.dynamic_slice: a slice of size {size} with step {step} spans "
                         f"{span} elements, but dimension {dim} has {extent}")
    first = _start_index("dynamic_slice", start, tensor.device, extent - span)
    # Built on the host and moved: a constant of the program.
    offsets = (torch.arange(size, dtype=torch.int64) * step).to(tensor.device)
    index = first + offsets
    return torch.index_select(tensor, dim, index)


def dynamic_update(input: torch.Tensor, src: torch.Tensor, dim: int,  # noqa: A002
                   start: torch.Tensor | int, size: int) -> torch.Tensor:
    """PopTorch's dynamic_update: ``input`` with ``src`` written into the ``size``
    elements along ``dim`` from ``start`` (a 1-element integer tensor the program
    computes, or an int); ``input`` itself is not changed.

    ``src`` has ``input``'s shape except ``size`` along ``dim``. As with
    :func:`dynamic_slice`, a start that would write past either end is clamped so
    that the update stays inside the tensor.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ArgumentError(f"poptorch.dynamic_update: size must be an int >= 0, got {size!r}")
    if not isinstance(input, torch.Tensor) or not isinstance(src, torch.Tensor):
        raise ArgumentTypeError("poptorch.dynamic_update: input and src must be tensors")
    if input.dim() == 0 or not -input.dim() <= dim < input.dim():
        raise ArgumentIndexError(f"poptorch.dynamic_update: dim {dim} is out of range for a "
                                 f"{input.dim()}-dim tensor")
    dim = dim % input.dim()
    extent = input.shape[dim]
    want = list(input.shape)
    want[dim] = size
    if list(src.shape) != want or size > extent:
        raise ArgumentError(f"poptorch.dynamic_update: src must have shape {want} (input's, "
                            f"with size {size} along dim {dim} <= {extent}), got {list(src.shape)}")
    if src.dtype != input.dtype:
        raise ArgumentError(f"poptorch.dynamic_update: src is {src.dtype} but input is {input.dtype}")
    first = _start_index("dynamic_update", start, input.device, extent - size)
    index = first + torch.arange(size, dtype=torch.int64).to(input.device)
    return input.index_copy(dim, index, src)


_OVERLAP_WARNED: set[str] = set()


def _set_overlap(what: str, tensors: Any, mode: Any) -> Any:
    from .enums import OverlapMode

    if not isinstance(mode, OverlapMode):
        raise ArgumentTypeError(f"poptorch.{what}: mode must be a poptorch.OverlapMode, "
                                f"got {mode!r}")

    def check(t: Any) -> Any:
        if not isinstance(t, torch.Tensor):
            raise ArgumentTypeError(f"poptorch.{what}: overlap is set for tensors (alone or "
                                    f"in tuples, lists and dicts), got {type(t).__name__}")
        return t

    torch.utils._pytree.tree_map(check, tensors)
    if mode is not OverlapMode.NoOverlap and what not in _OVERLAP_WARNED:
        _OVERLAP_WARNED.add(what)
        warnings.warn(f"poptorch.{what}(..., {mode}) is accepted but has no effect: the compiled "
                      "program reads its inputs and writes its outputs in host memory, with no "
                      "transfer to overlap with compute", UserWarning, stacklevel=3)
    return tensors


def set_overlap_for_input(input_tensors: Any, mode: Any) -> Any:
    """PopTorch's set_overlap_for_input: ``input_tensors`` (a tensor, or tuples, lists and
    dicts of them) returned as they are. There is no host-to-device transfer to overlap
    here; a mode other than ``NoOverlap`` says so in a warning."""
    return _set_overlap("set_overlap_for_input", input_tensors, mode)


def set_overlap_for_output(output_tensors: Any, mode: Any) -> Any:
    """PopTorch's set_overlap_for_output: see :func:`set_overlap_for_input`."""
    return _set_overlap("set_overlap_for_output", output_tensors, mode)


class NameScope:
    """PopTorch's NameScope: ``with poptorch.NameScope("encoder"):`` names the ops
    captured inside. Scopes nest (``encoder/layer0``); the names are the MLIR locations'
    names (``loc("encoder/layer0"("model.py":12:0))``), and ``poptorch.explain`` and error
    messages show them. Outside tracing it does nothing."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ArgumentTypeError(f"poptorch.NameScope: name must be a non-empty str, "
                                    f"got {name!r}")
        self.name = name
        self._tracer: Any = None

    def __enter__(self) -> NameScope:
        self._tracer = tracing.tracer
        if self._tracer is not None:
            self._tracer.push_name_scope(self.name)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._tracer is not None:
            self._tracer.pop_name_scope()
        self._tracer = None


def serializedMatMul(lhs: torch.Tensor, rhs: torch.Tensor, mode: Any,  # noqa: N802
                     factor: int = 0, keep_precision: bool = False) -> torch.Tensor:
    """PopTorch's serializedMatMul: ``lhs @ rhs`` computed as ``factor`` smaller matmuls,
    one after the other, split along the dimension ``mode`` names
    (``MatMulSerializationMode``): ``InputChannels`` the rows of ``lhs``, ``OutputChannels``
    the columns of ``rhs``, ``ReducingDim`` the reduced dimension (the partial products are
    summed; in float32 for half inputs with ``keep_precision``). ``Disabled`` is one matmul.
    The result is ``torch.matmul``'s."""
    from .enums import MatMulSerializationMode

    if not isinstance(mode, MatMulSerializationMode):
        raise ArgumentTypeError("poptorch.serializedMatMul: mode must be a "
                                f"poptorch.MatMulSerializationMode, got {mode!r}")
    if mode is MatMulSerializationMode.Disabled:
        return torch.matmul(lhs, rhs)
    if lhs.dim() < 2 or rhs.dim() < 2:
        raise ArgumentError("poptorch.serializedMatMul: lhs and rhs must have at least 2 dims, "
                            f"got {lhs.dim()} and {rhs.dim()}")
    dim_of = {MatMulSerializationMode.InputChannels: ("rows of lhs", lhs.shape[-2]),
              MatMulSerializationMode.ReducingDim: ("reduced dimension", lhs.shape[-1]),
              MatMulSerializationMode.OutputChannels: ("columns of rhs", rhs.shape[-1])}
    what, extent = dim_of[mode]
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1 \
            or extent % factor:
        raise ArgumentError(f"poptorch.serializedMatMul: factor must be an int >= 1 that divides "
                            f"the {what} ({extent}), got {factor!r}")
    if mode is MatMulSerializationMode.InputChannels:
        return torch.cat([torch.matmul(part, rhs) for part in lhs.chunk(factor, -2)], -2)
    if mode is MatMulSerializationMode.OutputChannels:
        return torch.cat([torch.matmul(lhs, part) for part in rhs.chunk(factor, -1)], -1)
    partials = [torch.matmul(a, b) for a, b in zip(lhs.chunk(factor, -1), rhs.chunk(factor, -2),
                                                   strict=True)]
    wide = keep_precision and partials[0].dtype in (torch.float16, torch.bfloat16)
    total = partials[0].float() if wide else partials[0]
    for part in partials[1:]:
        total = total + (part.float() if wide else part)
    return total.to(partials[0].dtype)


def _traced(tensor: torch.Tensor) -> torch.Tensor:
    """The ipu tensor behind a functionalized one (what the tracer knows)."""
    if torch._is_functional_tensor(tensor):
        torch._sync(tensor)
        return torch._from_functional_tensor(tensor)
    return tensor


def getIpuTensorId(tensor: torch.Tensor) -> int:  # noqa: N802
    """PopTorch's id of an ipu tensor: the captured value it holds (``%<id>`` counts
    arguments, constants and op results in capture order), or -1 for a tensor the
    program does not compute (a constant the tracer has not captured yet).
    Only meaningful while the model is traced."""
    if not isinstance(tensor, torch.Tensor):
        raise ArgumentTypeError(f"poptorch.getIpuTensorId expects a tensor, got {type(tensor).__name__}")
    tracer = tracing.tracer
    if tracer is None:
        raise StateError("poptorch.getIpuTensorId: the tensor is not an ipu tensor; ids exist only "
                           "while a model is traced for the ipu (inside its forward)")
    return int(tracer.value_id(_traced(tensor)))


def ipu_print_tensor(tensor: torch.Tensor, title: str = "", print_gradient: bool = True,
                     **_format: Any) -> torch.Tensor:
    """PopTorch's ipu_print_tensor: prints ``tensor``'s value, prefixed by ``title``, each
    time the compiled program runs (from inside the program, on stdout), and returns it.

    Use the returned tensor downstream, as with PopTorch (here the print op is
    kept even when its result is unused). ``print_gradient`` only applies to
    training; PopTorch's formatting keywords are accepted and ignored: the
    format is fixed (tensors over 1000 elements are summarised with the first
    and last 3 entries of each dimension). Called outside a traced model, it
    prints with torch's formatting.
    """
    if not isinstance(tensor, torch.Tensor):
        raise ArgumentTypeError(f"poptorch.ipu_print_tensor expects a tensor, got {type(tensor).__name__}")
    tracer = tracing.tracer
    if tracer is not None:
        tracer.print_tensor(_traced(tensor), str(title))
        return tensor
    print(f"{title}: {tensor}" if title else str(tensor), flush=True)
    return tensor
