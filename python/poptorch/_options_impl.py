"""The honour-or-warn mechanism behind ``poptorch.Options``, and argument checks.

Every option poptorch accepts either takes effect on this device, or has an
entry in ``NOT_IN_EFFECT`` (or, for PopART session options, in
``POPART_SESSION_OPTIONS``) saying why not. ``report_not_in_effect`` is the one
place that warns: once per process per option, naming the option and the
reason, and it records the pair on the ``Options`` object so that
``Options._not_applicable_report()`` can list it later.
"""

from __future__ import annotations

import enum
import numbers
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .errors import ArgumentError, ArgumentTypeError, InternalError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Why an accepted option is not in effect.

NOT_APPLICABLE = "not applicable"
NOT_YET = "not honoured yet"


@dataclass(frozen=True)
class NotInEffect:
    """``verdict`` is NOT_APPLICABLE (no such thing on this device) or NOT_YET."""

    verdict: str
    reason: str


_TRAINING_ONLY = ("it only applies to the backward pass and the optimizer, which poptorch.trainingModel "
                  "runs as part of one program with the forward pass")
_NO_IPU_MODEL = "there is no IPU Model; programs run as native code on the host CPU"
_HOST_MEMORY = ("all tensors live in host memory; there is no off-chip streaming memory, IO tile or "
                "replicated tensor sharding")
_POPART = "PopART session options configure PopART and Poplar, which this device does not use"


def _na(reason: str) -> NotInEffect:
    return NotInEffect(NOT_APPLICABLE, reason)


def _not_yet(reason: str) -> NotInEffect:
    return NotInEffect(NOT_YET, reason)


# Option name (as the user calls it) -> why it does not take effect. When a setter
# only warns for some values, the setter decides which; the reason lives here.
NOT_IN_EFFECT: dict[str, NotInEffect] = {
    # -- top level
    "SerialPhasedExecution.tensorsLiveness": _na(_HOST_MEMORY),
    "ParallelPhasedExecution.tensorsLiveness": _na(_HOST_MEMORY),
    "useSeparateBackwardPhase": _na(_TRAINING_ONLY),
    "autoRoundNumIPUs": _na("there is one host-CPU device and no IPU count to round up"),
    "setAvailableMemoryProportion": _na("there is no per-IPU tile memory to budget; the compiler "
                                        "tiles contractions for the host CPU's caches"),
    "useIpuModel": _na(_NO_IPU_MODEL),
    "ipuModelVersion": _na(_NO_IPU_MODEL),
    "useIpuId": _na("there are no IPU devices to choose from; the device is the host CPU"),
    "useOfflineIpuTarget": _na("programs are compiled for the host CPU they run on; there is no "
                               "offline IPU target"),
    "connectionType": _na("there is no IPU to attach to; the host CPU is always attached"),
    "syncPattern": _na("there is one device, so no IPUs synchronise with each other or the host"),
    "logCycleCount": _na("there is no IPU hardware cycle counter"),
    "enableProfiling": _na("there is no Poplar profiler; use dumpMLIR() to inspect the compiled "
                           "program, or a host profiler to time it"),
    "enableSyntheticData": _na("inputs are always read from the host; there is no on-device data "
                               "generator"),
    "anchorTensor": _na("there are no PopART tensor names to anchor; return the tensor from the "
                        "model instead"),
    "showCompilationProgressBar": _na("compilation takes seconds and shows no progress bar"),
    "relaxOptimizerAttributesChecks": _na(_TRAINING_ONLY),
    "logDir": _na("poptorch writes no PopART or Poplar log files; use POPTORCH_LOG_LEVEL"),
    "modelName": _na("the model name only names Poplar profile directories"),
    "enableStableNorm": _na("norms are lowered with one formulation; there is no faster, less "
                            "stable variant to switch off"),
    "disableModuleNamescope": _na("captured ops carry Python source locations, not module name "
                                  "scopes"),
    "maxRepeatLogs": _na("poptorch's logger does not suppress repeated messages"),
    # -- Precision
    "Precision.enableStochasticRounding": _na("the host CPU backend rounds to nearest"),
    "Precision.setPartialsType": _na("matmuls and convolutions of float16/bfloat16 tensors "
                                     "accumulate in float32 on this device, as PyTorch's CPU "
                                     "kernels do; half partials cannot be selected"),
    "Precision.halfFloatCasting": _na("dispatch tracing always follows PyTorch's type promotion "
                                      "(HalfUpcastToFloat)"),
    "Precision.runningStatisticsAlwaysFloat": _na("running statistics are used in the dtype the "
                                                  "module stores them in"),
    "Precision.enableFloatingPointExceptions": _na("the host CPU backend follows IEEE semantics "
                                                   "(inf and NaN results) and does not trap"),
    # -- Training
    "Training.setConvolutionDithering": _na("there are no IPU tiles to spread convolutions over"),
    # -- TensorLocations
    "TensorLocations.setOptimizerLocation": _na(_HOST_MEMORY),
    "TensorLocations.setAccumulatorLocation": _na(_HOST_MEMORY),
    "TensorLocations.setWeightLocation": _na(_HOST_MEMORY),
    "TensorLocations.setActivationLocation": _na(_HOST_MEMORY),
    "TensorLocations.numIOTiles": _na(_HOST_MEMORY),
    # -- Distributed
    "Distributed.disableAllReduce": _not_yet("trainingModel runs the replicas of a step one after "
                                             "another in one program, which always reduces their "
                                             "gradients"),
    # -- Jit
    "Jit.traceModel": _na("models are always captured by dispatch tracing; torch.jit.trace is not "
                          "used"),
    # -- _Popart (set(key, ...) keys are in POPART_SESSION_OPTIONS below)
    "_Popart.setPatterns": _na("there are no PopART patterns; the MLIR pass pipeline is fixed"),
    "_Popart.setEngineOptions": _na("there is no Poplar engine; programs are JIT-compiled with LLVM"),
}


# ---------------------------------------------------------------------------
# Argument checks. Wrong type -> TypeError, wrong value -> ValueError; both name
# the option and say what it accepts.

def _got(value: Any) -> str:
    return f"got {value!r} ({type(value).__name__})"


def expect_bool(option: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"poptorch: {option} expects a bool (True or False), {_got(value)}")
    return value


def expect_int(option: str, value: Any, *, minimum: int | None = None,
               maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"poptorch: {option} expects an int, {_got(value)}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = " and ".join(s for s in (f">= {minimum}" if minimum is not None else "",
                                          f"<= {maximum}" if maximum is not None else "") if s)
        raise ArgumentError(f"poptorch: {option} expects an int {bounds}, got {value}")
    return value


def expect_float(option: str, value: Any, *, above: float | None = None,
                 at_most: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"poptorch: {option} expects a number, {_got(value)}")
    value = float(value)
    if (above is not None and not value > above) or (at_most is not None and not value <= at_most):
        bounds = " and ".join(s for s in (f"> {above}" if above is not None else "",
                                          f"<= {at_most}" if at_most is not None else "") if s)
        raise ArgumentError(f"poptorch: {option} expects a number {bounds}, got {value}")
    return value


def expect_str(option: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ArgumentTypeError(f"poptorch: {option} expects a str, {_got(value)}")
    return value


def expect_str_list(option: str, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"poptorch: {option} expects a list of str, {_got(value)}")
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise ArgumentTypeError(f"poptorch: {option} expects a list of str, but it contains {_got(item)}")
    return items


def expect_enum(option: str, value: Any, enum_cls: type[enum.Enum],
                allowed: Iterable[enum.Enum] | None = None) -> Any:
    choices = list(allowed) if allowed is not None else list(enum_cls)
    names = ", ".join(f"poptorch.{enum_cls.__name__}.{m.name}" for m in choices)
    if not isinstance(value, enum_cls):
        raise ArgumentTypeError(f"poptorch: {option} expects one of {names}; {_got(value)}")
    if value not in choices:
        raise ArgumentError(f"poptorch: {option} expects one of {names}; got {value!r}")
    return value


# ---------------------------------------------------------------------------
# PopART session options accepted by ``_Popart.set(key, value)``: key -> check of
# the value. PopART's enums travel as ints (``int(popart.RecomputationType.Pipeline)``).

Check = Callable[[str, Any], Any]


def _int_in(lo: int, hi: int | None = None) -> Check:
    return lambda option, value: expect_int(option, value, minimum=lo, maximum=hi)


def _number(option: str, value: Any) -> float:
    return expect_float(option, value)


def _str_dict(option: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ArgumentTypeError(f"poptorch: {option} expects a dict with str keys, {_got(value)}")
    return dict(value)


def _str_items(option: str, value: Any) -> Any:
    expect_str_list(option, value)
    return value


_BOOL_KEYS = (
    "enableOutlining", "enableOutliningCopyCostPruning", "dotOpNames", "exportPoplarComputationGraph",
    "exportPoplarVertexGraph", "separateCallOpPdfs", "rearrangeAnchorsOnHost", "rearrangeStreamsOnHost",
    "enablePrefetchDatastreams", "enableNonStableSoftmax", "enableReplicatedGraphs",
    "enableGradientAccumulation", "enablePipelining", "instrumentWithHardwareCycleCounter",
    "disableGradAccumulationTensorStreams", "disableOptimizerStateTensorStreams", "compileEngine",
    "constantWeights", "enableEngineCaching", "enableFloatingPointChecks", "enableStochasticRounding",
    "explicitRecomputation", "aliasZeroCopy", "delayVarUpdates",
    "scheduleNonWeightUpdateGradientConsumersEarly", "enableFullyConnectedPass",
    "enableSerializedMatmuls", "enableStableNorm", "decomposeGradSum",
    "enableDistributedReplicatedGraphs", "groupHostSync", "strictOpVersions", "opxAliasChecking",
    "opxModifyChecking", "useHostCopyOps", "enableLoadAndOffloadRNGState",
    "enableSupportedDataTypeCasting", "enableExplicitMainLoops", "groupNormStridedChannelGrouping",
    "enableMergeExchange", "ensureFp32LossScaleTensor", "enableInplaceAmbiguityChecking",
    "automaticLossScalingSettings.enabled", "batchSerializationSettings.concatOnVirtualGraphChange",
    "batchSerializationSettings.concatOnExecutionPhaseChange",
    "batchSerializationSettings.concatOnPipelineStageChange",
    "replicatedCollectivesSettings.prepareScheduleForMergingCollectives",
    "replicatedCollectivesSettings.mergeAllReduceCollectives",
)
_INT_KEYS = (
    "firstDotOp", "finalDotOp", "mergeVarUpdateMemThreshold", "looseThresholdAtPeak",
    "defaultBufferingDepth", "replicatedGraphCount", "accumulationFactor", "numIOTiles",
    "swapLimitScheduler", "transitiveClosureOptimizationThreshold", "globalReplicationFactor",
    "globalReplicaOffset", "compilationProgressTotal", "executionPhaseSettings.phases",
    "executionPhaseSettings.stages", "batchSerializationSettings.factor",
    "automaticLossScalingSettings.updatePeriod",
)
_NUMBER_KEYS = (
    "outlineThreshold", "outlineSequenceBreakCost", "timeLimitScheduler",
    "automaticLossScalingSettings.binEdgeLocation",
    "automaticLossScalingSettings.thresholdUpperCountProportion",
)
_STR_KEYS = (
    "logDir", "cachePath", "partialsTypeMatMuls", "customCodeletCompileFlags",
    "serializedPoprithmsShiftGraphsDir", "kahnTieBreaker",
)
_DICT_KEYS = (
    "engineOptions", "convolutionOptions", "lstmOptions", "matmulOptions", "reportOptions",
    "gclOptions", "bufferingDepthMap",
)
_STR_LIST_KEYS = ("dotChecks", "customCodelets", "accumulateOuterFragmentSettings.excludedVirtualGraphs")

# Enum-valued options: key -> (lowest, highest) integer of the PopART enum.
_ENUM_KEYS: dict[str, tuple[int, int]] = {
    "autoRecomputation": (0, 4),  # RecomputationType: NoRecompute .. RecomputeAll
    "mergeVarUpdate": (0, 3),  # MergeVarUpdateType: Off .. AutoTight
    "virtualGraphMode": (0, 3),  # VirtualGraphMode: Off .. ExecutionPhases
    "syntheticDataMode": (0, 2),  # SyntheticDataMode: Off .. RandomNormal
    "subgraphCopyingStrategy": (0, 1),
    "accumulationAndReplicationReductionType": (0, 2),
    "meanAccumulationAndReplicationReductionStrategy": (0, 1),
    "accumulateOuterFragmentSettings.schedule": (0, 3),  # AccumulateOuterFragmentSchedule
    "executionPhaseSettings.schedule": (0, 2),
    "executionPhaseSettings.weightIOSchedule": (0, 1),
    "executionPhaseSettings.activationIOSchedule": (0, 1),
    "executionPhaseSettings.optimizerStateIOSchedule": (0, 1),
    "executionPhaseSettings.accumulatorIOSchedule": (0, 1),
    "batchSerializationSettings.transformContext": (0, 1),
    "batchSerializationSettings.method": (0, 2),
    "batchSerializationSettings.batchSchedule": (0, 3),
    "autodiffSettings.stitchStrategy": (0, 3),
    "automaticLossScalingSettings.gradientTensorTrackingMethod": (0, 2),
}

POPART_SESSION_OPTIONS: dict[str, Check] = {
    **{k: expect_bool for k in _BOOL_KEYS},
    **{k: _int_in(0) for k in _INT_KEYS},
    **{k: _number for k in _NUMBER_KEYS},
    **{k: expect_str for k in _STR_KEYS},
    **{k: _str_dict for k in _DICT_KEYS},
    **{k: _str_items for k in _STR_LIST_KEYS},
    **{k: _int_in(lo, hi) for k, (lo, hi) in _ENUM_KEYS.items()},
}

# Session options whose meaning is about gradients, recomputation or weight updates.
_POPART_TRAINING_KEYS = frozenset({
    "autoRecomputation", "explicitRecomputation", "mergeVarUpdate", "mergeVarUpdateMemThreshold",
    "looseThresholdAtPeak", "enableGradientAccumulation", "accumulationFactor",
    "accumulationAndReplicationReductionType", "meanAccumulationAndReplicationReductionStrategy",
    "disableGradAccumulationTensorStreams", "disableOptimizerStateTensorStreams", "delayVarUpdates",
    "scheduleNonWeightUpdateGradientConsumersEarly", "decomposeGradSum", "ensureFp32LossScaleTensor",
})
_POPART_TRAINING_PREFIXES = ("accumulateOuterFragmentSettings.", "automaticLossScalingSettings.",
                             "autodiffSettings.")


def popart_option_name(key: str) -> str:
    return f'_Popart.set("{key}")'


def _popart_reason(key: str) -> NotInEffect:
    if key in _POPART_TRAINING_KEYS or key.startswith(_POPART_TRAINING_PREFIXES):
        return _na(f"{_POPART} (and this one only applies to training, which inference models ignore)")
    if key not in POPART_SESSION_OPTIONS:
        return _na(f"{_POPART} (and {key!r} is not a PopART session option poptorch knows)")
    return _na(_POPART)


def check_popart_option(key: str, value: Any) -> Any:
    """Type-checks ``value`` for a known PopART session option; unknown keys pass."""
    expect_str('_Popart.set(key, ...)', key)
    check = POPART_SESSION_OPTIONS.get(key)
    return value if check is None else check(popart_option_name(key), value)


def not_in_effect(option: str) -> NotInEffect:
    """Why ``option`` (e.g. "Precision.enableStochasticRounding") does not take effect."""
    if option in NOT_IN_EFFECT:
        return NOT_IN_EFFECT[option]
    prefix = '_Popart.set("'
    if option.startswith(prefix) and option.endswith('")'):
        return _popart_reason(option[len(prefix):-2])
    raise InternalError(f"poptorch internal error: option {option!r} has no entry in NOT_IN_EFFECT")


# ---------------------------------------------------------------------------
# The warning itself.

_warned: set[str] = set()


def _user_stacklevel() -> int:
    """The warnings stacklevel of the first frame outside poptorch (the user's call)."""
    frame, level = sys._getframe(1), 1
    # abspath: sys.path entries such as "tests/../python" leave ".." in co_filename.
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def warning_text(option: str) -> str:
    why = not_in_effect(option)
    return f"poptorch: option {option} is accepted but {why.verdict}: {why.reason}"


def report_not_in_effect(option: str, report: dict[str, str]) -> None:
    """Records ``option`` in ``report`` and warns about it once per process."""
    why = not_in_effect(option)
    report[option] = f"{why.verdict}: {why.reason}"
    if option not in _warned:
        _warned.add(option)
        warnings.warn(warning_text(option), UserWarning, stacklevel=_user_stacklevel())


def reset_warnings() -> None:
    """Forgets which options have warned (for tests)."""
    _warned.clear()


# ---------------------------------------------------------------------------
# Plain-data conversion for toDict().

def to_plain(value: Any) -> Any:
    """Deep copy of ``value`` where objects with ``toDict()`` become dicts."""
    if hasattr(value, "toDict") and callable(value.toDict):
        return to_plain(value.toDict())
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, set):
        return sorted(to_plain(v) for v in value)
    return value
