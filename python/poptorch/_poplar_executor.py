"""The object behind poptorch.inferenceModel (PopTorch's PoplarExecutor)."""

from __future__ import annotations

import copy
from typing import Any

import torch

from . import _debug
from ._logging import logger
from ._tracing import Executable, Signature, trace
from .options import Options


class PoplarExecutor:
    """Wraps a model: compiles on the first call, then replays the program.

    A call whose inputs differ in shape, dtype or structure from the traced
    ones recompiles and logs which input changed.
    """

    def __init__(self, model: torch.nn.Module, options: Options | None = None) -> None:
        self._user_model = model
        self._options = options.clone() if options is not None else Options()
        self._executable: Executable | None = None
        self._signature: Signature | None = None
        self.compile_count = 0

    @property
    def model(self) -> torch.nn.Module:
        return self._user_model

    @property
    def options(self) -> Options:
        return self._options

    def isCompiled(self) -> bool:  # noqa: N802
        return self._executable is not None

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Traces and compiles for these inputs without running."""
        if self._user_model.training:
            logger.warning("poptorch: inferenceModel compiles the model in eval mode")
            self._user_model.eval()
        graph = trace(self._user_model, *args,
                      source_location_excludes=self._options._values["source_location_excludes"],
                      **kwargs)
        self._executable = graph.compile(self._options)
        self._signature = graph.signature
        self.compile_count += 1

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sig = Signature.of(args, kwargs)
        if self._executable is None:
            self.compile(*args, **kwargs)
        elif sig != self._signature:
            logger.warning("poptorch: recompiling because %s", self._signature.diff(sig))
            old_graph = self._executable.graph
            self.compile(*args, **kwargs)
            _debug.log_recompile(old_graph, self._executable.graph)
        if self._executable.first_run_seconds is None:
            return _debug.first_run(self, args, kwargs)
        return self._executable.run_unchecked(args, kwargs)

    def copyWeightsToDevice(self) -> None:  # noqa: N802
        if self._executable is not None:
            self._executable.copy_weights_to_device()

    def copyWeightsToHost(self) -> None:  # noqa: N802
        if self._executable is not None:
            self._executable.copy_weights_to_host()

    def destroy(self) -> None:
        self._executable = None
        self._signature = None

    @property
    def executable(self) -> Executable | None:
        return self._executable

    def __repr__(self) -> str:
        return f"PoplarExecutor({self._user_model!r}, compiled={self.isCompiled()})"


def inferenceModel(model: torch.nn.Module, options: Options | None = None) -> PoplarExecutor:  # noqa: N802
    """PopTorch's entry point: a callable that runs ``model`` compiled for the ipu."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError("poptorch.inferenceModel expects a torch.nn.Module; "
                        "use poptorch.experimental.IPUContext for functions")
    return PoplarExecutor(model, copy.copy(options) if options is not None else None)
