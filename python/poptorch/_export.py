"""compileAndExport / poptorch.load / loadExecutable: a compiled model in one file.

The file (written with ``torch.save``) holds the executable-cache entry of the
program (its object code, see ``csrc/bridge/Program.cpp``) with the key it was
compiled under, what the runtime needs to call it (the traced graph without
tensors: module text, signatures, output structure, names of the parameters
and buffers), the options, and by default the model itself. Loading links the
object code instead of compiling; when the file was compiled for another
compiler or CPU (another key), it recompiles from the module text it carries.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any

import torch

from . import _C, _blocks
from ._batching import Batching
from ._logging import logger
from ._tracing import Executable, TracedGraph, _cache_entry
from .errors import ArgumentError

FORMAT = "poptorch-export-1"

_GRAPH_FIELDS = ("mlir", "signature", "output_treespec", "output_leaves", "buffer_update_args",
                 "num_output_results", "output_results", "num_ops", "trace_seconds",
                 "random_state_arg", "guards")


def export(executor: Any, path: str | os.PathLike[str], export_model: bool = True,
           cache_dir: str | None = None) -> None:
    """Writes the compiled ``executor`` (a PoplarExecutor) to ``path``. ``cache_dir`` is
    the executable cache it was just compiled with, if any (saves compiling again)."""
    exe: Executable = executor.executable
    graph = exe.graph
    options = executor.options
    batching = exe.batching
    with tempfile.TemporaryDirectory() as private_dir:
        opts = options.clone()
        opts._values["executable_cache_dir"] = cache_dir or private_dir
        pipelined = exe.pipelined
        device_loop = batching.device_loop(pipelined)
        entry_path, key = _cache_entry(opts, graph.mlir, device_loop)
        if not os.path.isfile(entry_path):
            # Compile into the private cache (the program writes the entry).
            _C.Program.compile(graph.mlir, "", device_loop, entry_path, key,
                               pipeline_stages=pipelined)
        with open(entry_path, "rb") as f:
            entry = f.read()
    blob = {
        "format": FORMAT,
        "key": key,
        "pipelined": pipelined,
        "entry": entry,
        "graph": {name: getattr(graph, name) for name in _GRAPH_FIELDS},
        "parameters": [name for name, _ in graph.parameters],
        "buffers": [name for name, _ in graph.buffers],
        "options": options,
        "model": executor.model if export_model else None,
        # A training step also carries its optimizer (with its state) and the
        # hyper-parameters compiled into the program.
        "training": executor._export_training(),
    }
    torch.save(blob, os.fspath(path))


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            # torch's own pytree specs warn about their deprecated classes when unpickled.
            warnings.simplefilter("ignore", FutureWarning)
            blob = torch.load(os.fspath(path), weights_only=False)
    except Exception as e:  # noqa: BLE001 - any unreadable file is the same user error
        raise ArgumentError(f"poptorch: {os.fspath(path)} is not a file written by "
                         f"compileAndExport ({type(e).__name__}: {e})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ArgumentError(f"poptorch: {os.fspath(path)} is not a file written by compileAndExport "
                         f"(expected format {FORMAT!r})")
    return blob


def executable_for(blob: dict[str, Any], model: torch.nn.Module, options: Any) -> Executable:
    """Links the exported object code (or recompiles it) for ``model``'s tensors (for a
    training step, the step's: the model's and the optimizer state's)."""
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    missing = [n for n in blob["parameters"] if n not in params] + \
        [n for n in blob["buffers"] if n not in buffers]
    if missing:
        raise ArgumentError(f"poptorch: the exported executable needs {missing}, which the model "
                         "does not have; load it into the model it was exported from")
    graph = TracedGraph(parameters=[(n, params[n]) for n in blob["parameters"]],
                        buffers=[(n, buffers[n]) for n in blob["buffers"]], **blob["graph"])
    batching = Batching.from_options(options)
    with tempfile.TemporaryDirectory() as cache_dir:
        opts = options.clone()
        opts._values["executable_cache_dir"] = cache_dir
        pipelined = bool(blob.get("pipelined", False))
        device_loop = batching.device_loop(pipelined)
        entry_path, key = _cache_entry(opts, graph.mlir, device_loop)
        if key == blob["key"]:
            with open(entry_path, "wb") as f:
                f.write(blob["entry"])
        else:
            logger.warning("poptorch: the exported executable was compiled by another poptorch, "
                           "pipeline or CPU; recompiling it from the module it carries")
        program = _C.Program.compile(graph.mlir, "", device_loop, entry_path, key,
                                     pipeline_stages=pipelined)
    logger.info("exported executable: %s", program.origin)
    if pipelined:
        _blocks.warn_if_sequential(program.pipeline_schedule, graph.name)
    executable = Executable(graph, program, batching,
                            broadcast_buffers=options._values["broadcast_buffers"])
    executable.pipelined = pipelined
    return executable
