"""Tracing a model into the poptorch dialect, compiling it and running it.

``trace`` runs the model once on ``ipu`` tensors: every aten op reaches the C++
dispatcher hook, which records it (shapes and dtypes come from Meta tensors,
no arithmetic happens). PyTorch's functionalization turns views and in-place
ops into value semantics first, and writes to buffers (and inputs) come back
as explicit results that the runtime stores into the device copy of the
buffer (or the caller's input tensor).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

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
    def of(t: torch.Tensor) -> TensorSpec:
        return TensorSpec(tuple(t.shape), t.dtype)

    def __str__(self) -> str:
        return f"{str(self.dtype).replace('torch.', '')}{list(self.shape)}"


@dataclasses.dataclass(frozen=True)
class Signature:
    """What a compiled program was specialised for: the guard of trace-once."""

    treespec: Any
    leaves: tuple[Any, ...]  # TensorSpec for tensors, the value for Python constants

    @staticmethod
    def of(args: Sequence[Any], kwargs: dict[str, Any]) -> Signature:
        if not kwargs and all(isinstance(a, torch.Tensor) for a in args):
            # The common call: positional tensors. Skips pytree (the per-call
            # host overhead of a small model is mostly this function).
            return Signature(("tensors", len(args)),
                             tuple(TensorSpec(tuple(a.shape), a.dtype) for a in args))
        leaves, treespec = pytree.tree_flatten((tuple(args), dict(kwargs)))
        return Signature(
            treespec,
            tuple(TensorSpec.of(x) if isinstance(x, torch.Tensor) else x for x in leaves),
        )

    def diff(self, other: Signature) -> str:
        """Says which input differs, for the recompilation log and errors."""
        if self.treespec != other.treespec:
            return f"the input structure changed from {self.treespec} to {other.treespec}"
        for i, (a, b) in enumerate(zip(self.leaves, other.leaves, strict=True)):
            if a != b:
                return f"input {i} changed from {a} to {b}"
        return "no difference"


def _source_excludes(extra: Sequence[str] = ()) -> list[str]:
    return [_PACKAGE_DIR + os.sep, _TORCH_DIR + os.sep, *extra]


def _user_stacklevel() -> int:
    """The warnings stacklevel of the first frame outside poptorch (the user's call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def _warn_requires_grad(what: str) -> None:
    warnings.warn(
        f"poptorch: {what} requires grad; inference models do not compute gradients, "
        "so it is detached (as PopTorch does)",
        stacklevel=_user_stacklevel(),
    )


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
        num_output_results: int,
        output_results: list[int],
        num_ops: int,
        trace_seconds: float,
        random_state_arg: int = -1,
    ) -> None:
        self.mlir = mlir
        self.signature = signature
        self.output_treespec = output_treespec
        self.output_leaves = output_leaves  # TensorSpec for tensor outputs, else the value
        self.parameters = parameters
        self.buffers = buffers
        self.buffer_update_args = buffer_update_args
        # The function returns `num_output_results` distinct output values,
        # then the new value of each argument in `buffer_update_args`; for each
        # tensor output, `output_results` is the index of the result holding it.
        self.num_output_results = num_output_results
        self.output_results = output_results
        self.num_ops = num_ops
        self.trace_seconds = trace_seconds
        # The argument holding the random state [seed, calls] after the
        # inputs, parameters and buffers (-1: the model draws no random numbers).
        self.random_state_arg = random_state_arg

    @property
    def num_inputs(self) -> int:
        return sum(isinstance(x, TensorSpec) for x in self.signature.leaves)

    def compile(self, options: Any | None = None) -> Executable:
        from .options import Options

        options = options or Options()
        dump_dir = options._dump_dir_for(self)
        start = time.perf_counter()
        program = _C.Program.compile(self.mlir, dump_dir)
        logger.info("compiled %d captured ops in %.3f s", self.num_ops,
                    time.perf_counter() - start)
        logger.debug("lowered module:\n%s", program.stages[-1][1])
        return Executable(self, program, random_seed=options.random_seed)

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
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad:
            _warn_requires_grad(f"input {i}")
    parameters: list[tuple[str, torch.Tensor]] = []
    buffers: list[tuple[str, torch.Tensor]] = []
    if isinstance(model, torch.nn.Module):
        parameters = list(model.named_parameters())
        buffers = list(model.named_buffers())

    # The ipu copies are inference tensors, like everything tracing creates:
    # a normal tensor wrapped by functionalization in inference mode keeps the
    # ADInplaceOrView key, and views taken inside composite ops (matmul's
    # unsqueeze of a 1-D operand) then fail with "Cannot set version_counter
    # for inference tensor".
    with torch.inference_mode():
        ipu_leaves = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                t = leaf.detach().to(IPU)
                tracer.add_argument(t, f"input{i}", "input")
                ipu_leaves.append(t)
            else:
                ipu_leaves.append(leaf)
        state: dict[str, torch.Tensor] = {}
        for role, named in (("parameter", parameters), ("buffer", buffers)):
            for name, host in named:
                t = host.detach().to(IPU)
                tracer.add_argument(t, name, role)
                state[name] = t

    state_names = list(state)

    # Parameters and buffers are arguments of the functionalized function so
    # that functionalization sees (and writes back) their mutations.
    def run(*flat: Any) -> Any:
        n = len(leaves)
        call_args, call_kwargs = pytree.tree_unflatten(list(flat[:n]), treespec)
        if isinstance(model, torch.nn.Module):
            swapped = dict(zip(state_names, flat[n:], strict=True))
            return torch.func.functional_call(model, swapped, call_args, call_kwargs)
        return model(*call_args, **call_kwargs)

    tracer.activate()
    try:
        with torch.inference_mode():
            out = torch.func.functionalize(run, remove="mutations_and_views")(
                *ipu_leaves, *state.values())
        out_leaves, out_treespec = pytree.tree_flatten(out)
        tensors = [x for x in out_leaves if isinstance(x, torch.Tensor)]
        num_output_results, output_results = tracer.finish(tensors)
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
        num_output_results=num_output_results,
        output_results=list(output_results),
        num_ops=tracer.num_ops,
        trace_seconds=elapsed,
        random_state_arg=tracer.random_state_arg,
    )


class Executable:
    """A compiled model: call it with CPU tensors shaped like the traced ones.

    Parameters and buffers are copied to the device once, at construction
    (and again by :meth:`copy_weights_to_device`); buffer updates made by the
    model stay on the device until :meth:`copy_weights_to_host`.
    """

    def __init__(self, graph: TracedGraph, program: Any, random_seed: int | None = None) -> None:
        self.graph = graph
        self._program = program
        self._device_state: list[torch.Tensor] = []
        # [seed, calls]: an input of the program that each call advances.
        self._random_state = torch.zeros(2, dtype=torch.int64)
        self.set_random_seed(random_seed)
        self.copy_weights_to_device()
        # (shape, dtype) of each distinct output result, in result order.
        out_specs = [x for x in graph.output_leaves if isinstance(x, TensorSpec)]
        by_result = dict(zip(graph.output_results, out_specs, strict=True))
        self._result_specs = [(by_result[r].shape, by_result[r].dtype)
                              for r in range(graph.num_output_results)]

    @property
    def stages(self) -> list[tuple[str, str]]:
        """(stage name, module text) for every pipeline stage, captured first."""
        return list(self._program.stages)

    @property
    def timings(self) -> list[tuple[str, float]]:
        return list(self._program.timings)

    def _state_permutations(self) -> list[list[int]]:
        """Per parameter/buffer: the layout the program reads it in (prepacked)."""
        n_inputs = self.graph.num_inputs
        n_state = len(self.graph.parameters) + len(self.graph.buffers)
        # After bufferization @main also has one out-param per result: skip those.
        perms = list(self._program.argument_permutations)[n_inputs:n_inputs + n_state]
        return perms + [[]] * (n_state - len(perms))

    def set_random_seed(self, seed: int | None = None) -> None:
        """Restarts the random sequence of the model's random ops from ``seed``.

        The same seed gives the same numbers in every process (they are not
        the numbers of torch's CPU generator). Without a seed, one is drawn
        from torch's default generator (so ``torch.manual_seed`` governs it).
        No recompilation: the seed is an input of the compiled program.
        """
        if seed is None:
            seed = int(torch.randint(-2**63, 2**63 - 1, (), dtype=torch.int64))
        self._random_state.copy_(torch.tensor([seed, 0], dtype=torch.int64))

    def copy_weights_to_device(self) -> None:
        with torch.no_grad():
            self._device_state = [
                (t.detach().permute(perm) if perm else t.detach())
                .to(torch.device("cpu"), copy=True).contiguous()
                for (_, t), perm in zip(self.graph.parameters + self.graph.buffers,
                                        self._state_permutations(), strict=True)
            ]

    def copy_weights_to_host(self) -> None:
        with torch.no_grad():
            for (_, host), dev, perm in zip(self.graph.parameters + self.graph.buffers,
                                            self._device_state, self._state_permutations(),
                                            strict=True):
                if perm:  # undo the upload-time permutation
                    dev = dev.permute([perm.index(d) for d in range(len(perm))])
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
        return self.run_unchecked(args, kwargs)

    def run_unchecked(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Runs on inputs whose signature the caller has already checked."""
        graph = self.graph
        if not kwargs and isinstance(graph.signature.treespec, tuple):
            user_inputs = list(args)  # Signature.of's fast path: all tensors
        else:
            leaves = pytree.tree_leaves((tuple(args), dict(kwargs)))
            user_inputs = [x for x in leaves if isinstance(x, torch.Tensor)]
        # Program buffers are contiguous CPU tensors (ipu inputs are host memory too).
        inputs = [x.detach().cpu().contiguous() for x in user_inputs]
        inputs += self._device_state
        if graph.random_state_arg >= 0:
            inputs.append(self._random_state)
        n_inputs = graph.num_inputs
        n_state = len(self._device_state)
        # Every argument the model writes to comes back as an extra result:
        # parameters and buffers update the device copy (read back by
        # copy_weights_to_host), inputs are written back to the caller's
        # tensors as eager PyTorch would do.
        targets = [user_inputs[arg] if arg < n_inputs
                   else self._device_state[arg - n_inputs] if arg < n_inputs + n_state
                   else self._random_state
                   for arg in graph.buffer_update_args]
        outputs = [torch.empty(shape, dtype=dtype) for shape, dtype in self._result_specs]
        outputs += [torch.empty(t.shape, dtype=t.dtype) for t in targets]
        self._program.run(inputs, outputs)
        if targets:
            with torch.no_grad():
                updates = outputs[graph.num_output_results:]
                for target, new in zip(targets, updates, strict=True):
                    target.copy_(new)
        results = iter([outputs[r] for r in graph.output_results])
        out_leaves = [next(results) if isinstance(x, TensorSpec) else x
                      for x in graph.output_leaves]
        return pytree.tree_unflatten(out_leaves, graph.output_treespec)
