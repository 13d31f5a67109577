"""poptorch.Options: PopTorch's options object, its sub-groups and TensorLocationSettings.

Every setter validates its arguments, returns ``self`` so that calls chain, and
either takes effect on this device or reports the option once per process as
accepted but not in effect (see ``_options_impl.NOT_IN_EFFECT`` for the reasons
and ``docs/options.md`` for the table).
"""

from __future__ import annotations

import ast
import copy
import hashlib
import os
from typing import Any

import torch

from . import _options_impl as _impl
from . import enums
from ._options_impl import (
    expect_bool,
    expect_enum,
    expect_float,
    expect_int,
    expect_str,
    expect_str_list,
)
from .enums import (
    CommGroupType,
    ConnectionType,
    HalfFloatCastingBehavior,
    Liveness,
    MeanReductionStrategy,
    OutputMode,
    ReductionType,
    SyncPattern,
)
from .errors import ArgumentError, ArgumentTypeError
from .execution_strategy import PipelinedExecution, _ExecutionStrategy

__all__ = ["Options", "TensorLocationSettings"]


class _OptionGroup:
    """A dict of option values plus the owning ``Options``' not-in-effect report.

    Values read as attributes too (``opts.Training.gradient_accumulation``), as in
    PopTorch.
    """

    _name = ""  # prefix of the option names in warnings: "Training" -> "Training.gradientAccumulation"

    def __init__(self, report: dict[str, str], **defaults: Any) -> None:
        self._values: dict[str, Any] = dict(defaults)
        self._report = report

    def _option(self, method: str) -> str:
        return f"{self._name}.{method}" if self._name else method

    def _set(self, method: str, key: str, value: Any, *, in_effect: bool) -> Any:
        """Stores ``value`` under ``key``; reports ``method`` unless it takes effect."""
        self._values[key] = value
        if not in_effect:
            _impl.report_not_in_effect(self._option(method), self._report)
        return self

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and name in self.__dict__.get("_values", {}):
            return self._values[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def toDict(self) -> dict[str, Any]:
        """The values of this group as plain data."""
        return _impl.to_plain(self._values)

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{type(self).__name__}({body})"


# ---------------------------------------------------------------------------
# Sub-groups


class _PrecisionOptions(_OptionGroup):
    """Numerical precision (``opts.Precision``)."""

    _name = "Precision"

    def __init__(self, report: dict[str, str]) -> None:
        super().__init__(report, stochastic_rounding=False, partials_type=None,
                         half_float_casting=HalfFloatCastingBehavior.Default,
                         running_statistics_always_float=False, floating_point_exceptions=False)

    def enableStochasticRounding(self, enabled: bool) -> _PrecisionOptions:
        enabled = expect_bool(self._option("enableStochasticRounding"), enabled)
        return self._set("enableStochasticRounding", "stochastic_rounding", enabled,
                         in_effect=not enabled)

    def setPartialsType(self, dtype: torch.dtype) -> _PrecisionOptions:
        """Type of matmul and convolution partials: ``torch.float`` or ``torch.half``."""
        option = self._option("setPartialsType")
        if not isinstance(dtype, torch.dtype):
            raise ArgumentTypeError(f"poptorch: {option} expects torch.float or torch.half, got {dtype!r}")
        names = {torch.float32: "float", torch.float16: "half"}
        if dtype not in names:
            raise ArgumentError(f"poptorch: {option} expects torch.float or torch.half, got {dtype}")
        return self._set("setPartialsType", "partials_type", names[dtype],
                         in_effect=dtype == torch.float32)

    def halfFloatCasting(self, half_float_casting: HalfFloatCastingBehavior) -> _PrecisionOptions:
        value = expect_enum(self._option("halfFloatCasting"), half_float_casting,
                            HalfFloatCastingBehavior)
        return self._set("halfFloatCasting", "half_float_casting", value,
                         in_effect=value != HalfFloatCastingBehavior.FloatDowncastToHalf)

    def runningStatisticsAlwaysFloat(self, value: bool) -> _PrecisionOptions:
        value = expect_bool(self._option("runningStatisticsAlwaysFloat"), value)
        return self._set("runningStatisticsAlwaysFloat", "running_statistics_always_float", value,
                         in_effect=not value)

    def enableFloatingPointExceptions(self, enabled: bool) -> _PrecisionOptions:
        enabled = expect_bool(self._option("enableFloatingPointExceptions"), enabled)
        return self._set("enableFloatingPointExceptions", "floating_point_exceptions", enabled,
                         in_effect=not enabled)


class _TrainingOptions(_OptionGroup):
    """Training options (``opts.Training``), for ``poptorch.trainingModel``; inference
    models ignore them (``inferenceModel`` warns when gradient accumulation is set)."""

    _name = "Training"

    def __init__(self, report: dict[str, str]) -> None:
        super().__init__(report, gradient_accumulation=1,
                         accumulation_and_replication_reduction_type=ReductionType.Mean,
                         mean_accumulation_and_replication_reduction_strategy=MeanReductionStrategy.Post,
                         automatic_loss_scaling=False, convolution_dithering=False)

    def gradientAccumulation(self, gradient_accumulation: int) -> _TrainingOptions:
        value = expect_int(self._option("gradientAccumulation"), gradient_accumulation, minimum=1)
        return self._set("gradientAccumulation", "gradient_accumulation", value, in_effect=True)

    def accumulationAndReplicationReductionType(self, reduction_type: ReductionType
                                                ) -> _TrainingOptions:
        method = "accumulationAndReplicationReductionType"
        value = expect_enum(self._option(method), reduction_type, ReductionType,
                            (ReductionType.Sum, ReductionType.Mean))
        return self._set(method, "accumulation_and_replication_reduction_type", value,
                         in_effect=True)

    def setMeanAccumulationAndReplicationReductionStrategy(
            self, mean_reduction_strategy: MeanReductionStrategy) -> _TrainingOptions:
        method = "setMeanAccumulationAndReplicationReductionStrategy"
        value = expect_enum(self._option(method), mean_reduction_strategy, MeanReductionStrategy)
        return self._set(method, "mean_accumulation_and_replication_reduction_strategy", value,
                         in_effect=True)

    def setAutomaticLossScaling(self, enabled: bool) -> _TrainingOptions:
        enabled = expect_bool(self._option("setAutomaticLossScaling"), enabled)
        return self._set("setAutomaticLossScaling", "automatic_loss_scaling", enabled,
                         in_effect=True)

    def setConvolutionDithering(self, enabled: bool) -> _TrainingOptions:
        enabled = expect_bool(self._option("setConvolutionDithering"), enabled)
        return self._set("setConvolutionDithering", "convolution_dithering", enabled,
                         in_effect=not enabled)


class TensorLocationSettings:
    """Where one kind of tensor is stored (``poptorch.TensorLocationSettings``).

    Pass it to ``opts.TensorLocations.set*Location``. Unset fields keep the
    backend default and are absent from ``toDict()``.
    """

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def _store(self, key: str, value: Any) -> TensorLocationSettings:
        self._values[key] = value
        return self

    def minElementsForOffChip(self, min_elements: int) -> TensorLocationSettings:
        """Tensors with fewer elements stay on chip."""
        value = expect_int("TensorLocationSettings.minElementsForOffChip", min_elements, minimum=0)
        return self._store("minElementsForOffChip", value)

    def minElementsForReplicatedTensorSharding(self, min_elements: int) -> TensorLocationSettings:
        """Tensors with fewer elements are not sharded across replicas."""
        value = expect_int("TensorLocationSettings.minElementsForReplicatedTensorSharding",
                           min_elements, minimum=0)
        return self._store("minElementsForReplicatedTensorSharding", value)

    def useOnChipStorage(self, use: bool | None = True) -> TensorLocationSettings:
        """True: on-chip memory; False: off-chip (streaming) memory; None: backend default."""
        if use is None:
            self._values.pop("onChip", None)
            return self
        value = expect_bool("TensorLocationSettings.useOnChipStorage", use)
        return self._store("onChip", int(value))

    def useReplicatedTensorSharding(self, use: bool = True) -> TensorLocationSettings:
        value = expect_bool("TensorLocationSettings.useReplicatedTensorSharding", use)
        return self._store("useReplicatedTensorSharding", int(value))

    def useIOTilesToLoad(self, use: bool = True) -> TensorLocationSettings:
        value = expect_bool("TensorLocationSettings.useIOTilesToLoad", use)
        return self._store("useIOTilesToLoad", int(value))

    def useIOTilesToStore(self, use: bool = True) -> TensorLocationSettings:
        value = expect_bool("TensorLocationSettings.useIOTilesToStore", use)
        return self._store("useIOTilesToStore", int(value))

    def toDict(self) -> dict[str, Any]:
        return dict(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorLocationSettings) and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"TensorLocationSettings({body})"


class _TensorLocationOptions(_OptionGroup):
    """Where weights, activations, optimizer state and accumulators live (``opts.TensorLocations``)."""

    _name = "TensorLocations"

    def __init__(self, report: dict[str, str]) -> None:
        super().__init__(report, location_activation=None, location_weight=None,
                         location_optimizer=None, location_accumulator=None, num_io_tiles=0)

    def _location(self, method: str, key: str, location: TensorLocationSettings
                  ) -> _TensorLocationOptions:
        if not isinstance(location, TensorLocationSettings):
            raise ArgumentTypeError(f"poptorch: {self._option(method)} expects a "
                            f"poptorch.TensorLocationSettings, got {location!r}")
        return self._set(method, key, location.toDict(), in_effect=False)

    def setActivationLocation(self, location: TensorLocationSettings) -> _TensorLocationOptions:
        return self._location("setActivationLocation", "location_activation", location)

    def setWeightLocation(self, location: TensorLocationSettings) -> _TensorLocationOptions:
        return self._location("setWeightLocation", "location_weight", location)

    def setOptimizerLocation(self, location: TensorLocationSettings) -> _TensorLocationOptions:
        return self._location("setOptimizerLocation", "location_optimizer", location)

    def setAccumulatorLocation(self, location: TensorLocationSettings) -> _TensorLocationOptions:
        return self._location("setAccumulatorLocation", "location_accumulator", location)

    def numIOTiles(self, num_tiles: int) -> _TensorLocationOptions:
        """Number of IO tiles: an even number from 32 to 192."""
        option = self._option("numIOTiles")
        value = expect_int(option, num_tiles, minimum=32, maximum=192)
        if value % 2:
            raise ArgumentError(f"poptorch: {option} expects an even number from 32 to 192, got {value}")
        return self._set("numIOTiles", "num_io_tiles", value, in_effect=False)


class _DistributedOptions(_OptionGroup):
    """Multi-process execution (``opts.Distributed``).

    Like PopTorch, the process id and count start from the OpenMPI variables
    ``OMPI_COMM_WORLD_RANK`` / ``OMPI_COMM_WORLD_SIZE`` when they are set. Each
    process compiles and runs its own model (inference needs no communication
    between processes), and ``poptorch.DataLoader`` gives each process its own
    share of the dataset (``auto_distributed_partitioning``).
    """

    _name = "Distributed"

    def __init__(self, report: dict[str, str]) -> None:
        super().__init__(report, num_distributed_processes=1, distributed_process_id=0,
                         all_reduce_enabled=True)
        self.setEnvVarNames("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK")

    def _configure(self, method: str, process_id: Any, num_processes: Any) -> _DistributedOptions:
        option = self._option(method)
        num = expect_int(f"{option} (num_processes)", num_processes, minimum=1)
        pid = expect_int(f"{option} (process_id)", process_id, minimum=0, maximum=num - 1)
        self._values["distributed_process_id"] = pid
        return self._set(method, "num_distributed_processes", num, in_effect=True)

    def configureProcessId(self, process_id: int, num_processes: int) -> _DistributedOptions:
        return self._configure("configureProcessId", process_id, num_processes)

    def setEnvVarNames(self, var_num_processes: str, var_process_id: str) -> _DistributedOptions:
        """Reads the process count and id from these environment variables."""
        option = self._option("setEnvVarNames")
        parsed = []
        for var, default in ((expect_str(option, var_process_id), "0"),
                             (expect_str(option, var_num_processes), "1")):
            text = os.environ.get(var, default)
            try:
                parsed.append(int(text))
            except ValueError:
                raise ArgumentError(f"poptorch: {option}: environment variable {var}={text!r} is not "
                                 "an integer") from None
        return self._configure("setEnvVarNames", parsed[0], parsed[1])

    def disable(self) -> _DistributedOptions:
        """Runs as a single process, whatever the environment says."""
        self._values.update(num_distributed_processes=1, distributed_process_id=0)
        return self

    def disableAllReduce(self) -> _DistributedOptions:
        return self._set("disableAllReduce", "all_reduce_enabled", False, in_effect=False)

    @property
    def processId(self) -> int:
        return self._values["distributed_process_id"]

    @property
    def numProcesses(self) -> int:
        return self._values["num_distributed_processes"]


class _JitOptions(_OptionGroup):
    """How models are captured (``opts.Jit``)."""

    _name = "Jit"

    def __init__(self, report: dict[str, str]) -> None:
        super().__init__(report, trace_model=False)

    def traceModel(self, trace_model: bool) -> _JitOptions:
        """True: torch.jit.trace (not available here); False: dispatch tracing (what poptorch does)."""
        value = expect_bool(self._option("traceModel"), trace_model)
        return self._set("traceModel", "trace_model", value, in_effect=not value)


class _PopartOptions(_OptionGroup):
    """PopART session options (``opts._Popart``, advanced users).

    Values are checked for the options poptorch knows, stored, and reported once
    per key: there is no PopART here. The ``popart`` compatibility module has
    PopART's enums for the integer values.
    """

    _name = "_Popart"

    def __init__(self, report: dict[str, str]) -> None:
        super().__init__(report)

    @property
    def options(self) -> dict[str, Any]:
        """The options set so far (PopTorch's ``_Popart.options``)."""
        return self._values

    def set(self, key: str, value: Any) -> _PopartOptions:
        value = _impl.check_popart_option(key, value)
        self._values[key] = copy.deepcopy(value)
        _impl.report_not_in_effect(_impl.popart_option_name(key), self._report)
        return self

    def setPatterns(self, patterns: dict[str, bool], level: int = 2) -> _PopartOptions:
        """PopART pattern switches on top of ``popart.PatternsLevel`` ``level``."""
        option = self._option("setPatterns")
        if not isinstance(patterns, dict):
            raise ArgumentTypeError(f"poptorch: {option} expects a dict of pattern name -> bool, "
                            f"got {patterns!r}")
        for name, enabled in patterns.items():
            expect_str(f"{option} (pattern name)", name)
            expect_bool(f"{option} (pattern {name!r})", enabled)
        level = expect_int(f"{option} (level)", level, minimum=0, maximum=3)
        self._values["patterns_level"] = level
        return self._set("setPatterns", "patterns", dict(patterns), in_effect=False)

    def setEngineOptions(self, engine_options: dict[str, str]) -> _PopartOptions:
        option = self._option("setEngineOptions")
        if not isinstance(engine_options, dict) or not all(isinstance(k, str) for k in engine_options):
            raise ArgumentTypeError(
                f"poptorch: {option} expects a dict with str keys, got {engine_options!r}")
        return self._set("setEngineOptions", "engineOptions", dict(engine_options), in_effect=False)


# ---------------------------------------------------------------------------
# Options


_IPU_MODEL_VERSIONS = ("ipu1", "ipu2", "ipu21")
_OFFLINE_IPU_VERSIONS = (1, 2, 21)
_GROUPS = ("Training", "Precision", "TensorLocations", "Distributed", "Jit", "_Popart")


class Options(_OptionGroup):
    """Options of a poptorch model (``poptorch.Options()`` in PopTorch).

    >>> opts = poptorch.Options().deviceIterations(1).randomSeed(42)
    >>> opts.Precision.enableStochasticRounding(False)
    """

    def __init__(self) -> None:
        report: dict[str, str] = {}
        super().__init__(
            report,
            device_iterations=1,
            replication_factor=1,
            random_seed=None,
            executable_cache_dir=None,
            mlir_dump_dir=os.environ.get("POPTORCH_MLIR_DUMP_DIR") or None,
            golden_bisect=os.environ.get("POPTORCH_GOLDEN_BISECT") or None,
            source_location_excludes=[],
            host_kernels=True,
            input_group_size=None,
            input_group_type=None,
            auto_round_num_ipus=False,
            output_mode=OutputMode.Default,
            output_return_period=1,
            execution_strategy=PipelinedExecution(),
            available_memory_proportion={},
            use_model=False,
            ipu_model_version=None,
            ipu_id=None,
            ipu_version=None,
            connection_type=ConnectionType.Always,
            sync_pattern=SyncPattern.Full,
            log_cycle_count=False,
            profile_dir=None,
            synthetic_data=False,
            anchored_tensors={},
            broadcast_buffers=True,
            relax_optimizer_attributes_checks=False,
            show_compilation_progress_bar=False,
            updatable_named_buffers=[],
            max_repeat_logs=None,
            log_dir=".",
            model_name=None,
            stable_norm=False,
            module_namescope=True,
        )
        self._training = _TrainingOptions(report)
        self._precision = _PrecisionOptions(report)
        self._tensor_locations = _TensorLocationOptions(report)
        self._distributed = _DistributedOptions(report)
        self._jit = _JitOptions(report)
        self._popart = _PopartOptions(report)
        cache_dir = os.environ.get("POPTORCH_CACHE_DIR")
        if cache_dir:
            self.enableExecutableCaching(cache_dir)

    # ---- sub-groups
    @property
    def Training(self) -> _TrainingOptions:
        return self._training

    @property
    def Precision(self) -> _PrecisionOptions:
        return self._precision

    @property
    def TensorLocations(self) -> _TensorLocationOptions:
        return self._tensor_locations

    @property
    def Distributed(self) -> _DistributedOptions:
        return self._distributed

    @property
    def Jit(self) -> _JitOptions:
        return self._jit

    @property
    def _Popart(self) -> _PopartOptions:
        return self._popart

    # ---- batching, replication, execution
    def deviceIterations(self, device_iterations: int) -> Options:
        value = expect_int("deviceIterations", device_iterations, minimum=1)
        return self._set("deviceIterations", "device_iterations", value, in_effect=True)

    def replicationFactor(self, replication_factor: int) -> Options:
        value = expect_int("replicationFactor", replication_factor, minimum=1)
        return self._set("replicationFactor", "replication_factor", value, in_effect=True)

    def inputReplicaGrouping(self, input_group_size: int, input_group_type: CommGroupType) -> Options:
        """Replicas in a group of ``input_group_size`` receive the same input slice, so a
        call's batch holds ``deviceIterations * replicationFactor / input_group_size``
        micro-batches (see ``poptorch._batching`` for the groups of each type)."""
        size = expect_int("inputReplicaGrouping (input_group_size)", input_group_size, minimum=1)
        group_type = expect_enum("inputReplicaGrouping (input_group_type)", input_group_type,
                                 CommGroupType, (CommGroupType.Consecutive, CommGroupType.Orthogonal))
        self._values["input_group_type"] = group_type
        return self._set("inputReplicaGrouping", "input_group_size", size, in_effect=True)

    def autoRoundNumIPUs(self, auto_round_num_ipus: bool = True) -> Options:
        value = expect_bool("autoRoundNumIPUs", auto_round_num_ipus)
        return self._set("autoRoundNumIPUs", "auto_round_num_ipus", value, in_effect=not value)

    def outputMode(self, output_mode: OutputMode, output_return_period: int | None = None) -> Options:
        """Which batches' outputs a run returns; ``EveryN`` needs ``output_return_period``."""
        mode = expect_enum("outputMode", output_mode, OutputMode)
        if mode == OutputMode.EveryN:
            if output_return_period is None:
                raise ArgumentError("poptorch: outputMode(OutputMode.EveryN) needs an "
                                 "output_return_period (an int >= 1)")
            period = expect_int("outputMode (output_return_period)", output_return_period, minimum=1)
        else:
            # PopTorch ignores the period for the other modes.
            period = 1
        self._values["output_return_period"] = period
        return self._set("outputMode", "output_mode", mode, in_effect=True)

    def defaultOutputMode(self) -> bool:
        """True while outputMode has not been chosen (``OutputMode.Default``)."""
        return self._values["output_mode"] == OutputMode.Default

    def setExecutionStrategy(self, strategy: _ExecutionStrategy) -> Options:
        """``PipelinedExecution``, ``ShardedExecution``, ``SerialPhasedExecution`` or
        ``ParallelPhasedExecution``."""
        if not isinstance(strategy, _ExecutionStrategy):
            raise ArgumentTypeError("poptorch: setExecutionStrategy expects a poptorch.PipelinedExecution, "
                            "ShardedExecution, SerialPhasedExecution or ParallelPhasedExecution, "
                            f"got {strategy!r}")
        # Blocks map to stages, IPUs and phases as the strategy says (see
        # _blocks); what has no meaning on this device is reported.
        liveness = getattr(strategy, "tensors_liveness", Liveness.AlwaysLive)
        if liveness != Liveness.AlwaysLive:
            _impl.report_not_in_effect(f"{type(strategy).__name__}.tensorsLiveness", self._report)
        if getattr(strategy, "_separate_backward_phase", False):
            _impl.report_not_in_effect("useSeparateBackwardPhase", self._report)
        return self._set("setExecutionStrategy", "execution_strategy", strategy, in_effect=True)

    @property
    def execution_strategy(self) -> _ExecutionStrategy:
        return self._values["execution_strategy"]

    def setAvailableMemoryProportion(self, available_memory_proportion: dict[str, float]) -> Options:
        """Temporary-memory proportion per IPU: ``{"IPU0": 0.5, ...}``, values in (0, 1]."""
        option = "setAvailableMemoryProportion"
        if not isinstance(available_memory_proportion, dict):
            raise ArgumentTypeError(f'poptorch: {option} expects a dict like {{"IPU0": 0.5}}, '
                            f"got {available_memory_proportion!r}")
        proportions: dict[int, float] = {}
        for key, value in available_memory_proportion.items():
            if not isinstance(key, str) or not key.startswith("IPU") or not key[3:].isdigit():
                raise ArgumentError(f'poptorch: {option} expects keys "IPU<n>" (e.g. "IPU0"), got {key!r}')
            proportions[int(key[3:])] = expect_float(f"{option} ({key})", value, above=0.0, at_most=1.0)
        return self._set(option, "available_memory_proportion", proportions, in_effect=False)

    # ---- determinism, caching, debugging
    def randomSeed(self, random_seed: int) -> Options:
        """Seeds the device's random generator and, like PopTorch, torch's host generator."""
        value = expect_int("randomSeed", random_seed)
        torch.manual_seed(value)
        return self._set("randomSeed", "random_seed", value, in_effect=True)

    def enableExecutableCaching(self, path: str | os.PathLike[str] | None) -> Options:
        """Caches compiled programs under ``path``; ``None`` turns caching off."""
        if path is None:
            return self._set("enableExecutableCaching", "executable_cache_dir", None, in_effect=True)
        if not isinstance(path, (str, os.PathLike)):
            raise ArgumentTypeError(f"poptorch: enableExecutableCaching expects a directory path or None, "
                            f"got {path!r}")
        return self._set("enableExecutableCaching", "executable_cache_dir", os.fspath(path),
                         in_effect=True)

    def sourceLocationExcludes(self, excludes: list[str]) -> Options:
        """Frames whose file name contains one of these strings are skipped in source locations."""
        self._values["source_location_excludes"] = expect_str_list("sourceLocationExcludes", excludes)
        return self

    def hostKernels(self, enabled: bool = True) -> Options:
        """Whether aten ops without a lowering run as PyTorch's CPU kernels inside the
        compiled program (the default; each op's first use logs a warning) or are reported
        as unsupported, for native code only (poptorch extension). See docs/ops.md."""
        self._values["host_kernels"] = expect_bool("hostKernels", enabled)
        return self

    def appendToLocationExcludes(self, *excludes: str) -> Options:
        self._values["source_location_excludes"].extend(
            expect_str_list("appendToLocationExcludes", excludes))
        return self

    def dumpMLIR(self, directory: str | os.PathLike[str] | None) -> Options:
        """Write the module after every pipeline stage to ``directory`` (poptorch extension)."""
        if directory is not None and not isinstance(directory, (str, os.PathLike)):
            raise ArgumentTypeError(f"poptorch: dumpMLIR expects a directory path or None, got {directory!r}")
        self._values["mlir_dump_dir"] = os.fspath(directory) if directory is not None else None
        return self

    def goldenBisect(self, directory: str | os.PathLike[str] | bool | None = True) -> Options:
        """Check the compiled model op by op against eager PyTorch (poptorch extension).

        On the first run the compiled value of every captured op is compared with eager
        PyTorch on the same (compiled) inputs; the first op that differs beyond tolerance is
        logged with its source line and a single-op reproducer is written to ``directory``
        (``True``: the dump folder, or a new temporary folder). ``False``/``None`` turns it
        off. Same as ``POPTORCH_GOLDEN_BISECT=1`` (or ``=<directory>``). See
        docs/debugging.md.
        """
        if directory is not None and not isinstance(directory, (str, os.PathLike, bool)):
            raise ArgumentTypeError("poptorch: goldenBisect expects a directory path, a bool or None, "
                            f"got {directory!r}")
        if directory is True:
            value: str | None = "1"
        elif directory is False or directory is None:
            value = None
        else:
            value = os.fspath(directory)
        self._values["golden_bisect"] = value
        return self

    def logCycleCount(self, log_cycle_count: bool) -> Options:
        value = expect_bool("logCycleCount", log_cycle_count)
        return self._set("logCycleCount", "log_cycle_count", value, in_effect=not value)

    def enableProfiling(self, profile_dir: str | None = None) -> Options:
        if profile_dir is not None:
            expect_str("enableProfiling", profile_dir)
        return self._set("enableProfiling", "profile_dir", profile_dir or ".", in_effect=False)

    def logDir(self, log_dir: str) -> Options:
        return self._set("logDir", "log_dir", expect_str("logDir", log_dir), in_effect=False)

    def modelName(self, name: str) -> Options:
        return self._set("modelName", "model_name", expect_str("modelName", name), in_effect=False)

    def maxRepeatLogs(self, number_of_repeats: int) -> Options:
        value = expect_int("maxRepeatLogs", number_of_repeats, minimum=0)
        return self._set("maxRepeatLogs", "max_repeat_logs", value, in_effect=False)

    def showCompilationProgressBar(self, show: bool = True) -> Options:
        value = expect_bool("showCompilationProgressBar", show)
        return self._set("showCompilationProgressBar", "show_compilation_progress_bar", value,
                         in_effect=not value)

    def disableModuleNamescope(self) -> Options:
        return self._set("disableModuleNamescope", "module_namescope", False, in_effect=False)

    # ---- device selection
    def useIpuModel(self, use_model: bool) -> Options:
        value = expect_bool("useIpuModel", use_model)
        return self._set("useIpuModel", "use_model", value, in_effect=not value)

    def ipuModelVersion(self, version: str) -> Options:
        """IPU Model version: "ipu1", "ipu2" or "ipu21"."""
        value = expect_str("ipuModelVersion", version)
        if value not in _IPU_MODEL_VERSIONS:
            raise ArgumentError(f"poptorch: ipuModelVersion expects one of {list(_IPU_MODEL_VERSIONS)}, "
                             f"got {value!r}")
        return self._set("ipuModelVersion", "ipu_model_version", value, in_effect=False)

    def useIpuId(self, ipu_id: int) -> Options:
        value = expect_int("useIpuId", ipu_id, minimum=0)
        return self._set("useIpuId", "ipu_id", value, in_effect=False)

    def useOfflineIpuTarget(self, ipu_version: int = 2) -> Options:
        """Compile for an IPU version without attaching (sets ``ConnectionType.Never``)."""
        value = expect_int("useOfflineIpuTarget", ipu_version)
        if value not in _OFFLINE_IPU_VERSIONS:
            raise ArgumentError(f"poptorch: useOfflineIpuTarget expects an IPU version in "
                             f"{list(_OFFLINE_IPU_VERSIONS)}, got {value}")
        self._values["connection_type"] = ConnectionType.Never
        return self._set("useOfflineIpuTarget", "ipu_version", value, in_effect=False)

    def connectionType(self, connection_type: ConnectionType) -> Options:
        value = expect_enum("connectionType", connection_type, ConnectionType)
        return self._set("connectionType", "connection_type", value,
                         in_effect=value == ConnectionType.Always)

    def syncPattern(self, sync_pattern: SyncPattern) -> Options:
        value = expect_enum("syncPattern", sync_pattern, SyncPattern)
        return self._set("syncPattern", "sync_pattern", value, in_effect=value == SyncPattern.Full)

    # ---- data and buffers
    def enableSyntheticData(self, enabled: bool) -> Options:
        value = expect_bool("enableSyntheticData", enabled)
        return self._set("enableSyntheticData", "synthetic_data", value, in_effect=not value)

    def anchorTensor(self, short_name: str, long_name: str, output_mode: OutputMode | None = None,
                     output_return_period: int | None = 1) -> Options:
        """Returns the backend tensor ``long_name`` as ``short_name`` after each run."""
        expect_str("anchorTensor (short_name)", short_name)
        expect_str("anchorTensor (long_name)", long_name)
        if output_mode is not None:
            expect_enum("anchorTensor (output_mode)", output_mode, OutputMode)
        period = 1
        if output_mode == OutputMode.EveryN:
            period = expect_int("anchorTensor (output_return_period)", output_return_period, minimum=1)
        anchors = dict(self._values["anchored_tensors"])
        anchors[short_name] = {"long_name": long_name, "output_mode": output_mode,
                               "output_return_period": period}
        return self._set("anchorTensor", "anchored_tensors", anchors, in_effect=False)

    def broadcastBuffers(self, broadcast_buffers: bool = True) -> Options:
        """True (PopTorch's default): every run starts all replicas from the same buffer values
        and keeps replica 0's updates; False: each replica keeps its own buffers across runs.
        ``copyWeightsToHost()`` reads replica 0's buffers either way."""
        value = expect_bool("broadcastBuffers", broadcast_buffers)
        return self._set("broadcastBuffers", "broadcast_buffers", value, in_effect=True)

    def updatableNamedBuffers(self, buffers: list[str]) -> Options:
        """The model buffers that ``copyNamedBuffersToDevice()`` uploads (alone, without
        the other weights and buffers that ``copyWeightsToDevice()`` uploads)."""
        names = expect_str_list("updatableNamedBuffers", buffers)
        return self._set("updatableNamedBuffers", "updatable_named_buffers", names,
                         in_effect=True)

    def relaxOptimizerAttributesChecks(self, relax: bool = True) -> Options:
        value = expect_bool("relaxOptimizerAttributesChecks", relax)
        return self._set("relaxOptimizerAttributesChecks", "relax_optimizer_attributes_checks",
                         value, in_effect=False)

    def enableStableNorm(self, enabled: bool) -> Options:
        value = expect_bool("enableStableNorm", enabled)
        return self._set("enableStableNorm", "stable_norm", value, in_effect=not value)

    # ---- configuration files
    def loadFromFile(self, filepath: str | os.PathLike[str]) -> Options:
        """Applies one setter call per line, written without the ``options.`` prefix.

        For example ``deviceIterations(4)``, ``Training.gradientAccumulation(8)``,
        ``outputMode(poptorch.OutputMode.All)``. ``#`` starts a comment.
        """
        path = os.fspath(filepath)
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line.strip() and not line.strip().startswith("#"):
                    _apply_config_line(self, line.strip(), f"{path}:{lineno}")
        return self

    # ---- accessors
    @property
    def device_iterations(self) -> int:
        return self._values["device_iterations"]

    @property
    def replication_factor(self) -> int:
        return self._values["replication_factor"]

    def toDict(self) -> dict[str, Any]:
        """Every setting as plain data: the top-level values, then one dict per sub-group."""
        out = _impl.to_plain(self._values)
        for group in _GROUPS:
            out[group] = getattr(self, group).toDict()
        return out

    def clone(self) -> Options:
        return copy.deepcopy(self)

    def __repr__(self) -> str:
        body = [f"{k}={v!r}" for k, v in self._values.items()]
        body += [f"{group}={getattr(self, group)!r}" for group in _GROUPS]
        return f"Options({', '.join(body)})"

    def _not_applicable_report(self) -> list[tuple[str, str]]:
        """(option, why) for every option set on these options that does not take effect."""
        return list(self._report.items())

    def _dump_dir_for(self, graph: Any) -> str:
        root = self._values["mlir_dump_dir"]
        if not root:
            return ""
        digest = hashlib.sha256(graph.mlir.encode()).hexdigest()[:10]
        name = "".join(c if c.isalnum() or c in "-_" else "_"
                       for c in getattr(graph, "name", "model")) or "model"
        return os.path.join(root, f"{name}-{digest}")


# ---------------------------------------------------------------------------
# loadFromFile: each line is parsed (never executed) and only setter calls are
# allowed, with literal, enum (``poptorch.OutputMode.All``) or dtype arguments.

_NOT_FROM_FILE = frozenset({"loadFromFile", "toDict", "clone", "defaultOutputMode"})


def _dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _config_value(node: ast.AST, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    parts = _dotted(node)
    if parts and parts[0] == "poptorch":
        parts = parts[1:]
    if parts and len(parts) == 2 and parts[0] in enums.__all__:
        enum_cls = getattr(enums, parts[0])
        if parts[1] in enum_cls.__members__:
            return enum_cls[parts[1]]
    if parts and len(parts) == 2 and parts[0] == "torch" \
            and isinstance(getattr(torch, parts[1], None), torch.dtype):
        return getattr(torch, parts[1])
    raise ArgumentError(f"poptorch: loadFromFile {where}: unsupported argument {ast.unparse(node)!r}; "
                     "use literals, poptorch enums (poptorch.OutputMode.All) or torch dtypes")


def _apply_config_line(options: Options, line: str, where: str) -> None:
    try:
        call = ast.parse(line, mode="eval").body
    except SyntaxError:
        raise ArgumentError(f"poptorch: loadFromFile {where}: cannot parse {line!r}") from None
    parts = _dotted(call.func) if isinstance(call, ast.Call) else None
    valid = parts is not None and (
        (len(parts) == 1 and not parts[0].startswith("_") and parts[0] not in _NOT_FROM_FILE)
        or (len(parts) == 2 and parts[0] in _GROUPS and not parts[1].startswith("_")))
    target = options
    if valid:
        for name in parts[:-1]:
            target = getattr(target, name)
        method = getattr(type(target), parts[-1], None)
        valid = callable(method) and not isinstance(method, property)
    if not valid:
        raise ArgumentError(f"poptorch: loadFromFile {where}: {line!r} is not a call of an Options "
                         "setter (e.g. deviceIterations(4) or Training.gradientAccumulation(8))")
    args = [_config_value(a, where) for a in call.args]
    kwargs = {k.arg: _config_value(k.value, where) for k in call.keywords if k.arg is not None}
    getattr(target, parts[-1])(*args, **kwargs)
