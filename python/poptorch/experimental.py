"""PopTorch 3.0's experimental API: IPUContext runs a function compiled for the ipu."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ._batching import Batching, micro_batch_call
from ._logging import logger
from ._tracing import Executable, Signature, trace
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
