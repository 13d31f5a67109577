"""PopTorch 3.0's experimental API: IPUContext runs a function compiled for the ipu, IPUScope
compiles the ops run inside a ``with`` block."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from ._batching import Batching, micro_batch_call
from ._logging import logger
from ._tracing import Executable, Signature, trace
from .errors import ArgumentTypeError, StateError
from .options import Options


class IPUContext:
    """``IPUContext(fn)(*args)`` traces ``fn`` on the first call, compiles it and runs it.

    ``model``, if given, is the module whose parameters and buffers ``fn``
    uses: they become program arguments instead of baked-in constants.
    """

    def __init__(self, func: Callable[..., Any], *, model: torch.nn.Module | None = None,
                 options: Options | None = None) -> None:
        self._func = func
        self._model = model
        self._options = options or Options()
        self._executable: Executable | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sig = Signature.of(args, kwargs)
        if self._executable is None or self._executable.signature != sig:
            if self._executable is not None:
                logger.warning("poptorch: recompiling because %s",
                               self._executable.signature.diff(sig))
            target = self._func
            if self._model is not None:
                target = _BoundFunction(self._func, self._model)
            # Traced for one micro-batch when the options ask for device
            # iterations or replicas (see _batching).
            micro_args, micro_kwargs = micro_batch_call(Batching.from_options(self._options),
                                                        args, kwargs)
            graph = trace(target, *micro_args,
                          execution_strategy=self._options.execution_strategy, **micro_kwargs)
            self._executable = graph.compile(self._options)
        return self._executable.run_unchecked(args, kwargs)

    @property
    def graph(self):
        return None if self._executable is None else self._executable.graph


class _BoundFunction(torch.nn.Module):
    """Makes a function's model parameters visible to the tracer."""

    def __init__(self, func: Callable[..., Any], model: torch.nn.Module) -> None:
        super().__init__()
        self.func = func
        self.model = model

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)


class IPUScope:
    """PopTorch's experimental scope: the ops run inside ``with`` are compiled.

    ::

        with poptorch.experimental.IPUScope([x, y], model=model) as ipu:
            out = model(x, y)
            ipu.outputs([out])
        result = ipu(x2, y2)   # runs the compiled program on new inputs

    ``inputs`` are the host tensors the body reads: inside the scope every
    torch operation sees their ipu counterparts (and the parameters and
    buffers of ``model``, or of ``parameters_and_buffers``: a module, a dict or
    ``(name, tensor)`` pairs, which become program arguments that
    ``ipu(...)`` reads from the host tensors at each call; other tensors the
    body uses are baked in as constants). The body runs once, to trace it:
    its tensors are placeholders without values until the program runs.
    ``ipu(*inputs)`` returns the outputs in the order ``outputs`` listed them
    (one tensor for a single output). Writes into the scope's inputs are not
    written back to the host tensors.
    """

    def __init__(self, inputs: Any, parameters_and_buffers: Any = None,
                 options: Options | None = None, compile_using: Any = None, *,
                 model: torch.nn.Module | None = None) -> None:
        if isinstance(inputs, torch.Tensor):
            inputs = [inputs]
        if not isinstance(inputs, (list, tuple)) or \
                not all(isinstance(t, torch.Tensor) for t in inputs):
            raise ArgumentTypeError("poptorch.experimental.IPUScope expects a list of input tensors")
        self._inputs = list(inputs)
        source = model if model is not None else parameters_and_buffers
        self._parameters: list[tuple[str, torch.Tensor]] = []
        self._buffers: list[tuple[str, torch.Tensor]] = []
        if isinstance(source, torch.nn.Module):
            self._parameters = list(source.named_parameters())
            self._buffers = list(source.named_buffers())
        elif source is not None:
            pairs = source.items() if isinstance(source, dict) else source
            self._parameters = [(str(n), t) for n, t in pairs]
        self._options = options or Options()
        self._outputs: list[torch.Tensor] | None = None
        self._executable: Executable | None = None
        self._state: dict[str, Any] = {}

    def __enter__(self) -> IPUScope:
        from . import _C
        from ._tracing import IPU, TracingSession, _source_excludes

        tracer = _C.Tracer(_source_excludes(self._options._values["source_location_excludes"]))
        twins: dict[int, torch.Tensor] = {}
        with torch.inference_mode():
            for i, t in enumerate(self._inputs):
                twin = t.detach().to(IPU)
                tracer.add_argument(twin, f"input{i}", "input")
                twins[id(t)] = twin
            for role, named in (("parameter", self._parameters), ("buffer", self._buffers)):
                for name, t in named:
                    twin = t.detach().to(IPU)
                    tracer.add_argument(twin, name, role)
                    twins[id(t)] = twin
        mode = _ScopeMode(twins)
        inference = torch.inference_mode()
        session = TracingSession(tracer, self._options.execution_strategy)
        self._state = {"tracer": tracer, "mode": mode, "inference": inference,
                       "session": session, "start": time.perf_counter()}
        session.__enter__()
        inference.__enter__()
        mode.__enter__()
        return self

    def outputs(self, tensors: Any) -> None:
        """The values the program returns, in order."""
        if isinstance(tensors, torch.Tensor):
            tensors = [tensors]
        if not all(isinstance(t, torch.Tensor) for t in tensors):
            raise ArgumentTypeError("poptorch.experimental.IPUScope.outputs expects tensors")
        self._outputs = list(tensors)

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        import torch.utils._pytree as pytree

        from . import _debug
        from ._tracing import Signature, TensorSpec, TracedGraph

        state, self._state = self._state, {}
        tracer = state["tracer"]
        try:
            state["mode"].__exit__(None, None, None)
            try:
                if exc_type is not None:
                    return
                if self._outputs is None:
                    raise StateError("poptorch.experimental.IPUScope: call ipu.outputs([...]) "
                                       "inside the scope to say what the program returns")
                num_results, output_results = tracer.finish(self._outputs)
            finally:
                state["inference"].__exit__(None, None, None)
        finally:
            state["session"].__exit__(None, None, None)
        elapsed = time.perf_counter() - state["start"]
        graph = TracedGraph(
            mlir=tracer.module_text(True),
            signature=Signature.of(self._inputs, {}),
            output_treespec=pytree.tree_flatten(self._outputs)[1],
            output_leaves=[TensorSpec.of(t) for t in self._outputs],
            parameters=self._parameters,
            buffers=self._buffers,
            buffer_update_args=list(tracer.buffer_update_args),
            num_output_results=num_results,
            output_results=list(output_results),
            num_ops=tracer.num_ops,
            trace_seconds=elapsed,
            random_state_arg=tracer.random_state_arg,
        )
        _debug.graph_traced(graph, None, tracer)
        graph.name = "IPUScope"
        graph.blocks = state["session"].placements
        self._graph = graph
        self._executable = graph.compile(self._options)

    def __call__(self, *inputs: torch.Tensor) -> Any:
        if self._executable is None:
            raise StateError("poptorch.experimental.IPUScope: the scope has not been compiled "
                               "(run it with `with ... as ipu:` and call ipu.outputs([...]))")
        args = inputs[0] if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)) else inputs
        outputs = self._executable(*args)
        return outputs[0] if len(outputs) == 1 else outputs

    @property
    def graph(self):
        return getattr(self, "_graph", None)


class _ScopeMode(torch.overrides.TorchFunctionMode):
    """Inside an IPUScope: the scope's host tensors read as their ipu twins, and other
    host tensors meeting ipu tensors become constants of the program."""

    def __init__(self, twins: dict[int, torch.Tensor]) -> None:
        super().__init__()
        self.twins = twins

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        import torch.utils._pytree as pytree

        from ._tracing import IPU

        kwargs = kwargs or {}
        mapped = pytree.tree_map_only(torch.Tensor, lambda t: self.twins.get(id(t), t),
                                      (args, kwargs))
        leaves = [x for x in pytree.tree_leaves(mapped) if isinstance(x, torch.Tensor)]
        if any(x.device.type == "ipu" for x in leaves):
            mapped = pytree.tree_map_only(
                torch.Tensor, lambda t: t.to(IPU) if t.device.type == "cpu" and t.dim() > 0 else t,
                mapped)
        args, kwargs = mapped
        return func(*args, **kwargs)
