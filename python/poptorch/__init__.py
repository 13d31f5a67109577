"""poptorch: PopTorch's API on a dispatch-tracing compiler with an MLIR backend.

Models are traced on the ``ipu`` device (PyTorch's built-in IPU dispatch key),
captured into the ``poptorch`` MLIR dialect, lowered through linalg to LLVM and
JIT-compiled for the host CPU.
"""

import atexit

import torch  # noqa: F401  (the extension needs torch's libraries loaded first)

from . import _C, _meta, enums, errors, experimental, optim  # noqa: F401 (_meta registers shape functions)
from ._arg_parsers import ICustomArgParser, registerCustomArgParser
from ._blocks import BeginBlock, Block, BlockFunction, module_repr, removeBlocks
from ._control_flow import cond, for_loop
from ._custom_ops import ctc_beam_search_decoder, custom_op, fps, register_custom_op
from ._dataloader import AsynchronousDataAccessor, DataLoader
from ._debug import bisect, explain, replay, write_bundle
from ._helpers import (
    NameScope,
    dynamic_slice,
    dynamic_update,
    getIpuTensorId,
    identity_loss,
    ipu_print_tensor,
    isRunningOnIpu,
    nop,
    recomputationCheckpoint,
    serializedMatMul,
    set_available_memory,
    set_overlap_for_input,
    set_overlap_for_output,
)
from ._host_calls import CPU
from ._logging import logger, setLogLevel
from ._multiconv import MultiConv
from ._poplar_executor import (
    PoplarExecutor,
    inferenceModel,
    load,
    registerPostCompileHook,
    registerPreCompileHook,
)
from ._tracing import Executable, TracedGraph, trace
from ._training import TrainingExecutor, trainingModel
from .enums import *  # noqa: F403
from .errors import Error, RecoverableError, UnrecoverableError
from .execution_strategy import (
    ParallelPhasedExecution,
    Phase,
    PipelinedExecution,
    SerialPhasedExecution,
    ShardedExecution,
    Stage,
)
from .options import Options, TensorLocationSettings

__version__ = "0.1.0"

__all__ = [
    *enums.__all__,
    "AsynchronousDataAccessor",
    "BeginBlock",
    "Block",
    "BlockFunction",
    "CPU",
    "DataLoader",
    "Error",
    "Executable",
    "MultiConv",
    "NameScope",
    "Options",
    "ParallelPhasedExecution",
    "Phase",
    "PipelinedExecution",
    "PoplarExecutor",
    "RecoverableError",
    "SerialPhasedExecution",
    "ShardedExecution",
    "Stage",
    "TensorLocationSettings",
    "TracedGraph",
    "UnrecoverableError",
    "bisect",
    "cond",
    "explain",
    "dynamic_slice",
    "errors",
    "experimental",
    "for_loop",
    "getIpuTensorId",
    "identity_loss",
    "isRunningOnIpu",
    "inferenceModel",
    "ipu_print_tensor",
    "load",
    "logger",
    "nop",
    "recomputationCheckpoint",
    "removeBlocks",
    "serializedMatMul",
    "set_available_memory",
    "set_overlap_for_input",
    "set_overlap_for_output",
    "replay",
    "setLogLevel",
    "trace",
    "write_bundle",
    "TrainingExecutor",
    "trainingModel",
    "optim",
    "registerCustomArgParser",
    "ICustomArgParser",
    "registerPreCompileHook",
    "registerPostCompileHook",
    "register_custom_op",
    "module_repr",
    "fps",
    "dynamic_update",
    "custom_op",
    "ctc_beam_search_decoder",
]

# JIT engines must be gone before LLVM's static destructors run.
atexit.register(_C.release_all_programs)
