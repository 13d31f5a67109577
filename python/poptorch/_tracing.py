"""Tracing a model into the poptorch dialect, compiling it and running it.

``trace`` runs the model once on ``ipu`` tensors: every aten op reaches the C++
dispatcher hook, which records it (shapes and dtypes come from Meta tensors,
no arithmetic happens). PyTorch's functionalization turns views and in-place
ops into value semantics first, and writes to buffers come back as explicit
results that the runtime stores into the device copy of the buffer.
"""

from __future__ import annotations

import dataclasses
import os
import time
import warnings
from typing import Any, Callable, Sequence

import torch
import torch.utils._pytree as pytree

from . import _C
from ._logging import logger

IPU = torch.device("ipu")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: torch.dtype

    @staticmethod
    def of(t: torch.Tensor) -> "TensorSpec":
        return TensorSpec(tuple(t.shape), t.dtype)

    def __str__(self) -> str:
        return f"{str(self.dtype).replace('torch.', '')}{list(self.shape)}"


@dataclasses.dataclass(frozen=True)
class Signature:
    """What a compiled program was specialised for: the guard of trace-once."""

    treespec: Any
    leaves: tuple[Any, ...]  # TensorSpec for tensors, the value for Python constants

    @staticmethod
    def of(args: Sequence[Any], kwargs: dict[str, Any]) -> "Signature":
        leaves, treespec = pytree.tree_flatten((tuple(args), dict(kwargs)))
        return Signature(
            treespec,
            tuple(TensorSpec.of(x) if isinstance(x, torch.Tensor) else x for x in leaves),
        )

    def diff(self, other: "Signature") -> str:
        """Says which input differs, for the recompilation log and errors."""
        if self.treespec != other.treespec:
            return f"the input structure changed from {self.treespec} to {other.treespec}"
        for i, (a, b) in enumerate(zip(self.leaves, other.leaves)):
            if a != b:
                return f"input {i} changed from {a} to {b}"
        return "no difference"


def _source_excludes(extra: Sequence[str] = ()) -> list[str]:
    return [_PACKAGE_DIR + os.sep, _TORCH_DIR + os.sep, *extra]


def _to_ipu(t: torch.Tensor, what: str) -> torch.Tensor:
    if t.requires_grad:
        warnings.warn(
            f"poptorch: {what} requires grad; inference models do not compute gradients, "
            "so it is detached (as PopTorch does)",
            stacklevel=4,
        )
    return t.detach().to(IPU)


class TracedGraph:
    """A model captured into the ``poptorch`` dialect.

    ``.mlir`` is the captured module as text, with source locations.
    """

    def __init__(
        self,
        mlir: str,
        signature: Signature,
        output_treespec: Any,
        output_leaves: list[Any],
        parameters: list[tuple[str, torch.Tensor]],
        buffers: list[tuple[str, torch.Tensor]],
        buffer_update_args: list[int],
        num_ops: int,
        trace_seconds: float,
    ) -> None:
        self.mlir = mlir
        self.signature = signature
        self.output_treespec = output_treespec
        self.output_leaves = output_leaves  # TensorSpec for tensor outputs, else the value
        self.parameters = parameters
        self.buffers = buffers
        self.buffer_update_args = buffer_update_args
        self.num_ops = num_ops
        self.trace_seconds = trace_seconds

    @property
    def num_inputs(self) -> int:
        return sum(isinstance(x, TensorSpec) for x in self.signature.leaves)

    def compile(self, options: "Any | None" = None) -> "Executable":
        from .options import Options

        options = options or Options()
        dump_dir = options._dump_dir_for(self)
        start = time.perf_counter()
        program = _C.Program.compile(self.mlir, dump_dir)
        logger.info("compiled %d captured ops in %.3f s", self.num_ops,
                    time.perf_counter() - start)
        logger.debug("lowered module:\n%s", program.stages[-1][1])
        return Executable(self, program)

    def __repr__(self) -> str:
        return f"TracedGraph({self.num_ops} ops)\n{self.mlir}"


def trace(
    model: Callable[..., Any],
    *args: Any,
    source_location_excludes: Sequence[str] = (),
    **kwargs: Any,
) -> TracedGraph:
    """Traces ``model(*args, **kwargs)`` into a :class:`TracedGraph`.

    ``model`` is a ``torch.nn.Module`` (its parameters and buffers become
    function arguments) or any callable (tensors it closes over become
    constants). Tensor arguments become inputs; other arguments are baked in.
    """
    start = time.perf_counter()
    signature = Signature.of(args, kwargs)
    leaves, treespec = pytree.tree_flatten((tuple(args), dict(kwargs)))

    tracer = _C.Tracer(_source_excludes(source_location_excludes))
    ipu_leaves = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, torch.Tensor):
            t = _to_ipu(leaf, f"input {i}")
            tracer.add_argument(t, f"input{i}", "input")
            ipu_leaves.append(t)
        else:
            ipu_leaves.append(leaf)

    parameters: list[tuple[str, torch.Tensor]] = []
    buffers: list[tuple[str, torch.Tensor]] = []
    state: dict[str, torch.Tensor] = {}
    if isinstance(model, torch.nn.Module):
        for name, p in model.named_parameters():
            t = p.detach().to(IPU)
            tracer.add_argument(t, name, "parameter")
            parameters.append((name, p))
            state[name] = t
        for name, b in model.named_buffers():
            t = b.detach().to(IPU)
            tracer.add_argument(t, name, "buffer")
            buffers.append((name, b))
            state[name] = t

    state_names = list(state)

    # Parameters and buffers are arguments of the functionalized function so
    # that functionalization sees (and writes back) their mutations.
    def run(*flat: Any) -> Any:
        n = len(leaves)
        call_args, call_kwargs = pytree.tree_unflatten(list(flat[:n]), treespec)
        if isinstance(model, torch.nn.Module):
            swapped = dict(zip(state_names, flat[n:]))
            return torch.func.functional_call(model, swapped, call_args, call_kwargs)
        return model(*call_args, **call_kwargs)

    tracer.activate()
    try:
        with torch.inference_mode():
            out = torch.func.functionalize(run, remove="mutations_and_views")(
                *ipu_leaves, *state.values())
        out_leaves, out_treespec = pytree.tree_flatten(out)
        tensors = [x for x in out_leaves if isinstance(x, torch.Tensor)]
        tracer.finish(tensors)
    finally:
        tracer.deactivate()

    elapsed = time.perf_counter() - start
    logger.info("traced %d ops in %.3f s", tracer.num_ops, elapsed)
    return TracedGraph(
        mlir=tracer.module_text(True),
        signature=signature,
        output_treespec=out_treespec,
        output_leaves=[TensorSpec.of(x) if isinstance(x, torch.Tensor) else x
                       for x in out_leaves],
        parameters=parameters,
        buffers=buffers,
        buffer_update_args=list(tracer.buffer_update_args),
        num_ops=tracer.num_ops,
        trace_seconds=elapsed,
    )


class Executable:
    """A compiled model: call it with CPU tensors shaped like the traced ones.

    Parameters and buffers are copied to the device once, at construction
    (and again by :meth:`copy_weights_to_device`); buffer updates made by the
    model stay on the device until :meth:`copy_weights_to_host`.
    """

    def __init__(self, graph: TracedGraph, program: Any) -> None:
        self.graph = graph
        self._program = program
        self._device_state: list[torch.Tensor] = []
        self.copy_weights_to_device()

    @property
    def stages(self) -> list[tuple[str, str]]:
        """(stage name, module text) for every pipeline stage, captured first."""
        return list(self._program.stages)

    @property
    def timings(self) -> list[tuple[str, float]]:
        return list(self._program.timings)

    def copy_weights_to_device(self) -> None:
        self._device_state = [
            t.detach().to(torch.device("cpu"), copy=True).contiguous()
            for _, t in self.graph.parameters + self.graph.buffers
        ]

    def copy_weights_to_host(self) -> None:
        with torch.no_grad():
            for (_, host), dev in zip(self.graph.parameters + self.graph.buffers,
                                      self._device_state):
                host.copy_(dev)

    def check_signature(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Signature:
        sig = Signature.of(args, kwargs)
        if sig != self.graph.signature:
            raise ValueError(
                "poptorch: the compiled model was traced for other inputs: "
                f"{self.graph.signature.diff(sig)}. Trace and compile again for these inputs "
                "(poptorch.inferenceModel does this automatically).")
        return sig

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.check_signature(args, kwargs)
        leaves = pytree.tree_leaves((tuple(args), dict(kwargs)))
        inputs = [x.detach().contiguous() for x in leaves if isinstance(x, torch.Tensor)]
        inputs += self._device_state
        out_specs = [x for x in self.graph.output_leaves if isinstance(x, TensorSpec)]
        n_updates = len(self.graph.buffer_update_args)
        n_params = len(self.graph.parameters)
        n_inputs = self.graph.num_inputs
        update_specs = []
        for arg in self.graph.buffer_update_args:
            state = self._device_state[arg - n_inputs]
            update_specs.append(TensorSpec.of(state))
        outputs = [torch.empty(s.shape, dtype=s.dtype) for s in out_specs + update_specs]
        self._program.run(inputs, outputs)
        if n_updates:
            for arg, new in zip(self.graph.buffer_update_args, outputs[len(out_specs):]):
                index = arg - n_inputs
                assert index >= n_params, "only buffers are updated by inference models"
                self._device_state[index].copy_(new)
        results = iter(outputs[: len(out_specs)])
        out_leaves = [next(results) if isinstance(x, TensorSpec) else x
                      for x in self.graph.output_leaves]
        return pytree.tree_unflatten(out_leaves, self.graph.output_treespec)
