"""poptorch.Options: every setter (chaining, stored value, validation), the
warn-once mechanism for options that do not take effect, execution strategies,
loadFromFile, the ``popart`` compatibility module and the seed user's
``build_ipu_config``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import popart  # noqa: E402
import poptorch  # noqa: E402
from poptorch import _options_impl, enums, execution_strategy  # noqa: E402
from poptorch.enums import (  # noqa: E402
    AutoStage,
    CommGroupType,
    ConnectionType,
    HalfFloatCastingBehavior,
    Liveness,
    MeanReductionStrategy,
    OutputMode,
    ReductionType,
    SyncPattern,
)
from poptorch.execution_strategy import (  # noqa: E402
    ParallelPhasedExecution,
    Phase,
    PipelinedExecution,
    SerialPhasedExecution,
    ShardedExecution,
    Stage,
)
from poptorch.options import Options, TensorLocationSettings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# The seed documents live beside the checkout (../shared); a clone elsewhere
# (CI) finds them at the workplace's fixed location or through POPTORCH_SEEDS_DIR.
SEED_CONFIG = next(
    (p for p in (Path(os.environ.get("POPTORCH_SEEDS_DIR", REPO / "missing")) / "ipu_config.py",
                 REPO.parent / "shared" / "seeds" / "ipu_config.py",
                 Path("/work/shared/seeds/ipu_config.py")) if p.exists()),
    REPO.parent / "shared" / "seeds" / "ipu_config.py")

# Names the seed configuration (and PopTorch users) take from ``poptorch``; the
# package must export them (``from .enums import *`` etc. in poptorch/__init__.py).
REQUIRED_EXPORTS: dict[str, Any] = {
    **{name: getattr(enums, name) for name in enums.__all__},
    **{name: getattr(execution_strategy, name) for name in execution_strategy.__all__},
    "Options": Options,
    "TensorLocationSettings": TensorLocationSettings,
}


@pytest.fixture(autouse=True)
def _fresh_warning_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no option warned yet and no distributed environment."""
    monkeypatch.delenv("OMPI_COMM_WORLD_SIZE", raising=False)
    monkeypatch.delenv("OMPI_COMM_WORLD_RANK", raising=False)
    monkeypatch.delenv("POPTORCH_CACHE_DIR", raising=False)
    monkeypatch.delenv("POPTORCH_MLIR_DUMP_DIR", raising=False)
    _options_impl.reset_warnings()
    yield
    _options_impl.reset_warnings()


@contextmanager
def recorded() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def option_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    """The option names of the poptorch not-in-effect warnings in ``caught``."""
    names = []
    for w in caught:
        m = re.match(r"poptorch: option (.+?) is accepted but (not applicable|not honoured yet): ",
                     str(w.message))
        if m:
            assert w.category is UserWarning
            names.append(m.group(1))
    return names


def lookup(d: dict[str, Any], path: tuple[Any, ...]) -> Any:
    for key in path:
        d = d[key]
    return d


# ---------------------------------------------------------------------------
# Every setter: (id, call, group it returns, toDict path, stored value, warned option or None)

TLS = TensorLocationSettings
Case = tuple[str, Callable[[Options], Any], str, tuple[Any, ...], Any, "str | None"]

SETTERS: list[Case] = [
    # -- top level
    ("deviceIterations=1", lambda o: o.deviceIterations(1), "", ("device_iterations",), 1, None),
    ("deviceIterations=4", lambda o: o.deviceIterations(4), "", ("device_iterations",), 4, None),
    ("replicationFactor=1", lambda o: o.replicationFactor(1), "", ("replication_factor",), 1, None),
    ("replicationFactor=2", lambda o: o.replicationFactor(2), "", ("replication_factor",), 2, None),
    ("inputReplicaGrouping", lambda o: o.inputReplicaGrouping(2, CommGroupType.Orthogonal), "",
     ("input_group_type",), CommGroupType.Orthogonal, None),
    ("autoRoundNumIPUs=False", lambda o: o.autoRoundNumIPUs(False), "", ("auto_round_num_ipus",),
     False, None),
    ("autoRoundNumIPUs()", lambda o: o.autoRoundNumIPUs(), "", ("auto_round_num_ipus",), True,
     "autoRoundNumIPUs"),
    ("randomSeed", lambda o: o.randomSeed(7), "", ("random_seed",), 7, None),
    ("outputMode=All", lambda o: o.outputMode(OutputMode.All), "", ("output_mode",), OutputMode.All,
     None),
    ("outputMode=Final", lambda o: o.outputMode(OutputMode.Final), "", ("output_mode",),
     OutputMode.Final, None),
    ("outputMode=Sum", lambda o: o.outputMode(OutputMode.Sum, 3), "", ("output_return_period",), 1,
     None),
    ("outputMode=EveryN,1", lambda o: o.outputMode(OutputMode.EveryN, 1), "", ("output_mode",),
     OutputMode.EveryN, None),
    ("outputMode=EveryN,4", lambda o: o.outputMode(OutputMode.EveryN, 4), "",
     ("output_return_period",), 4, None),
    ("enableExecutableCaching=path", lambda o: o.enableExecutableCaching(Path("/tmp/cache")), "",
     ("executable_cache_dir",), "/tmp/cache", None),
    ("enableExecutableCaching=None", lambda o: o.enableExecutableCaching(None), "",
     ("executable_cache_dir",), None, None),
    ("setExecutionStrategy=default", lambda o: o.setExecutionStrategy(PipelinedExecution()), "",
     ("execution_strategy", "auto_stage"), AutoStage.SameAsIpu, None),
    ("setExecutionStrategy=AutoIncrement",
     lambda o: o.setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement)), "",
     ("execution_strategy", "auto_stage"), AutoStage.AutoIncrement, None),
    ("setExecutionStrategy=Sharded", lambda o: o.setExecutionStrategy(ShardedExecution("a", "b")), "",
     ("execution_strategy", "strategy"), "ShardedExecution", None),
    ("setExecutionStrategy=SerialPhased",
     lambda o: o.setExecutionStrategy(SerialPhasedExecution(Phase("a"), Phase("b"))), "",
     ("execution_strategy", "strategy"), "SerialPhasedExecution", None),
    ("setExecutionStrategy=SerialPhased,liveness",
     lambda o: o.setExecutionStrategy(SerialPhasedExecution(Phase("a")).setTensorsLiveness(
         Liveness.OffChipAfterEachPhase)), "", ("execution_strategy", "tensors_liveness"),
     Liveness.OffChipAfterEachPhase, "SerialPhasedExecution.tensorsLiveness"),
    ("setExecutionStrategy=ParallelPhased,offchip",
     lambda o: o.setExecutionStrategy(ParallelPhasedExecution(Phase("a"))
                                      .sendTensorsOffChipAfterFwd()), "",
     ("execution_strategy", "tensors_liveness"), Liveness.OffChipAfterFwd,
     "ParallelPhasedExecution.tensorsLiveness"),
    ("setExecutionStrategy=useSeparateBackwardPhase",
     lambda o: o.setExecutionStrategy(SerialPhasedExecution(Phase("a"))
                                      .useSeparateBackwardPhase()), "",
     ("execution_strategy", "separate_backward_phase"), True, "useSeparateBackwardPhase"),
    ("setAvailableMemoryProportion",
     lambda o: o.setAvailableMemoryProportion({"IPU0": 0.5, "IPU3": 1}), "",
     ("available_memory_proportion",), {0: 0.5, 3: 1.0}, "setAvailableMemoryProportion"),
    ("useIpuModel=False", lambda o: o.useIpuModel(False), "", ("use_model",), False, None),
    ("useIpuModel=True", lambda o: o.useIpuModel(True), "", ("use_model",), True, "useIpuModel"),
    ("ipuModelVersion", lambda o: o.ipuModelVersion("ipu21"), "", ("ipu_model_version",), "ipu21",
     "ipuModelVersion"),
    ("useIpuId", lambda o: o.useIpuId(3), "", ("ipu_id",), 3, "useIpuId"),
    ("useOfflineIpuTarget", lambda o: o.useOfflineIpuTarget(), "", ("connection_type",),
     ConnectionType.Never, "useOfflineIpuTarget"),
    ("connectionType=Always", lambda o: o.connectionType(ConnectionType.Always), "",
     ("connection_type",), ConnectionType.Always, None),
    ("connectionType=OnDemand", lambda o: o.connectionType(ConnectionType.OnDemand), "",
     ("connection_type",), ConnectionType.OnDemand, "connectionType"),
    ("syncPattern=Full", lambda o: o.syncPattern(SyncPattern.Full), "", ("sync_pattern",),
     SyncPattern.Full, None),
    ("syncPattern=SinglePipeline", lambda o: o.syncPattern(SyncPattern.SinglePipeline), "",
     ("sync_pattern",), SyncPattern.SinglePipeline, "syncPattern"),
    ("logCycleCount=False", lambda o: o.logCycleCount(False), "", ("log_cycle_count",), False, None),
    ("logCycleCount=True", lambda o: o.logCycleCount(True), "", ("log_cycle_count",), True,
     "logCycleCount"),
    ("enableProfiling", lambda o: o.enableProfiling("/tmp/prof"), "", ("profile_dir",), "/tmp/prof",
     "enableProfiling"),
    ("enableSyntheticData=False", lambda o: o.enableSyntheticData(False), "", ("synthetic_data",),
     False, None),
    ("enableSyntheticData=True", lambda o: o.enableSyntheticData(True), "", ("synthetic_data",), True,
     "enableSyntheticData"),
    ("anchorTensor", lambda o: o.anchorTensor("grad", "Gradient___x", OutputMode.EveryN, 2), "",
     ("anchored_tensors", "grad", "output_return_period"), 2, "anchorTensor"),
    ("broadcastBuffers", lambda o: o.broadcastBuffers(False), "", ("broadcast_buffers",), False, None),
    ("relaxOptimizerAttributesChecks", lambda o: o.relaxOptimizerAttributesChecks(), "",
     ("relax_optimizer_attributes_checks",), True, "relaxOptimizerAttributesChecks"),
    ("showCompilationProgressBar=False", lambda o: o.showCompilationProgressBar(False), "",
     ("show_compilation_progress_bar",), False, None),
    ("showCompilationProgressBar=True", lambda o: o.showCompilationProgressBar(), "",
     ("show_compilation_progress_bar",), True, "showCompilationProgressBar"),
    ("updatableNamedBuffers=[]", lambda o: o.updatableNamedBuffers([]), "",
     ("updatable_named_buffers",), [], None),
    ("updatableNamedBuffers=[buf]", lambda o: o.updatableNamedBuffers(["running_mean"]), "",
     ("updatable_named_buffers",), ["running_mean"], None),
    ("maxRepeatLogs", lambda o: o.maxRepeatLogs(3), "", ("max_repeat_logs",), 3, "maxRepeatLogs"),
    ("logDir", lambda o: o.logDir("/tmp/logs"), "", ("log_dir",), "/tmp/logs", "logDir"),
    ("modelName", lambda o: o.modelName("bert"), "", ("model_name",), "bert", "modelName"),
    ("enableStableNorm=False", lambda o: o.enableStableNorm(False), "", ("stable_norm",), False, None),
    ("enableStableNorm=True", lambda o: o.enableStableNorm(True), "", ("stable_norm",), True,
     "enableStableNorm"),
    ("disableModuleNamescope", lambda o: o.disableModuleNamescope(), "", ("module_namescope",), False,
     "disableModuleNamescope"),
    ("sourceLocationExcludes", lambda o: o.sourceLocationExcludes(["site-packages"]), "",
     ("source_location_excludes",), ["site-packages"], None),
    ("appendToLocationExcludes", lambda o: o.appendToLocationExcludes("a", "b"), "",
     ("source_location_excludes",), ["a", "b"], None),
    ("dumpMLIR", lambda o: o.dumpMLIR("/tmp/dumps"), "", ("mlir_dump_dir",), "/tmp/dumps", None),
    # -- Precision
    ("enableStochasticRounding=False", lambda o: o.Precision.enableStochasticRounding(False),
     "Precision", ("Precision", "stochastic_rounding"), False, None),
    ("enableStochasticRounding=True", lambda o: o.Precision.enableStochasticRounding(True),
     "Precision", ("Precision", "stochastic_rounding"), True, "Precision.enableStochasticRounding"),
    ("setPartialsType=float", lambda o: o.Precision.setPartialsType(torch.float), "Precision",
     ("Precision", "partials_type"), "float", None),
    ("setPartialsType=half", lambda o: o.Precision.setPartialsType(torch.half), "Precision",
     ("Precision", "partials_type"), "half", "Precision.setPartialsType"),
    ("halfFloatCasting=HalfUpcastToFloat",
     lambda o: o.Precision.halfFloatCasting(HalfFloatCastingBehavior.HalfUpcastToFloat), "Precision",
     ("Precision", "half_float_casting"), HalfFloatCastingBehavior.HalfUpcastToFloat, None),
    ("halfFloatCasting=FloatDowncastToHalf",
     lambda o: o.Precision.halfFloatCasting(HalfFloatCastingBehavior.FloatDowncastToHalf),
     "Precision", ("Precision", "half_float_casting"), HalfFloatCastingBehavior.FloatDowncastToHalf,
     "Precision.halfFloatCasting"),
    ("runningStatisticsAlwaysFloat=False", lambda o: o.Precision.runningStatisticsAlwaysFloat(False),
     "Precision", ("Precision", "running_statistics_always_float"), False, None),
    ("runningStatisticsAlwaysFloat=True", lambda o: o.Precision.runningStatisticsAlwaysFloat(True),
     "Precision", ("Precision", "running_statistics_always_float"), True,
     "Precision.runningStatisticsAlwaysFloat"),
    ("enableFloatingPointExceptions=False",
     lambda o: o.Precision.enableFloatingPointExceptions(False), "Precision",
     ("Precision", "floating_point_exceptions"), False, None),
    ("enableFloatingPointExceptions=True",
     lambda o: o.Precision.enableFloatingPointExceptions(True), "Precision",
     ("Precision", "floating_point_exceptions"), True, "Precision.enableFloatingPointExceptions"),
    # -- Training: honoured by trainingModel (inferenceModel warns about accumulation)
    ("gradientAccumulation", lambda o: o.Training.gradientAccumulation(1), "Training",
     ("Training", "gradient_accumulation"), 1, None),
    ("accumulationAndReplicationReductionType",
     lambda o: o.Training.accumulationAndReplicationReductionType(ReductionType.Sum), "Training",
     ("Training", "accumulation_and_replication_reduction_type"), ReductionType.Sum, None),
    ("setMeanAccumulationAndReplicationReductionStrategy",
     lambda o: o.Training.setMeanAccumulationAndReplicationReductionStrategy(
         MeanReductionStrategy.Running), "Training",
     ("Training", "mean_accumulation_and_replication_reduction_strategy"),
     MeanReductionStrategy.Running, None),
    ("setAutomaticLossScaling", lambda o: o.Training.setAutomaticLossScaling(True), "Training",
     ("Training", "automatic_loss_scaling"), True, None),
    ("setConvolutionDithering=False", lambda o: o.Training.setConvolutionDithering(False), "Training",
     ("Training", "convolution_dithering"), False, None),
    ("setConvolutionDithering=True", lambda o: o.Training.setConvolutionDithering(True), "Training",
     ("Training", "convolution_dithering"), True, "Training.setConvolutionDithering"),
    # -- TensorLocations
    ("setActivationLocation", lambda o: o.TensorLocations.setActivationLocation(
        TLS().useOnChipStorage(False)), "TensorLocations", ("TensorLocations", "location_activation"),
     {"onChip": 0}, "TensorLocations.setActivationLocation"),
    ("setWeightLocation", lambda o: o.TensorLocations.setWeightLocation(
        TLS().useReplicatedTensorSharding().minElementsForReplicatedTensorSharding(64)),
     "TensorLocations", ("TensorLocations", "location_weight"),
     {"useReplicatedTensorSharding": 1, "minElementsForReplicatedTensorSharding": 64},
     "TensorLocations.setWeightLocation"),
    ("setOptimizerLocation", lambda o: o.TensorLocations.setOptimizerLocation(
        TLS().useOnChipStorage(False).useIOTilesToLoad()), "TensorLocations",
     ("TensorLocations", "location_optimizer"), {"onChip": 0, "useIOTilesToLoad": 1},
     "TensorLocations.setOptimizerLocation"),
    ("setAccumulatorLocation", lambda o: o.TensorLocations.setAccumulatorLocation(
        TLS().minElementsForOffChip(128).useIOTilesToStore(False)), "TensorLocations",
     ("TensorLocations", "location_accumulator"), {"minElementsForOffChip": 128,
                                                   "useIOTilesToStore": 0},
     "TensorLocations.setAccumulatorLocation"),
    ("numIOTiles", lambda o: o.TensorLocations.numIOTiles(64), "TensorLocations",
     ("TensorLocations", "num_io_tiles"), 64, "TensorLocations.numIOTiles"),
    # -- Distributed
    ("configureProcessId=0,1", lambda o: o.Distributed.configureProcessId(0, 1), "Distributed",
     ("Distributed", "num_distributed_processes"), 1, None),
    ("configureProcessId=1,4", lambda o: o.Distributed.configureProcessId(1, 4), "Distributed",
     ("Distributed", "distributed_process_id"), 1, None),
    ("disable", lambda o: o.Distributed.disable(), "Distributed",
     ("Distributed", "num_distributed_processes"), 1, None),
    ("disableAllReduce", lambda o: o.Distributed.disableAllReduce(), "Distributed",
     ("Distributed", "all_reduce_enabled"), False, "Distributed.disableAllReduce"),
    # -- Jit
    ("traceModel=False", lambda o: o.Jit.traceModel(False), "Jit", ("Jit", "trace_model"), False,
     None),
    ("traceModel=True", lambda o: o.Jit.traceModel(True), "Jit", ("Jit", "trace_model"), True,
     "Jit.traceModel"),
    # -- _Popart
    ("_Popart.set", lambda o: o._Popart.set("outlineThreshold", 10.0), "_Popart",
     ("_Popart", "outlineThreshold"), 10.0, '_Popart.set("outlineThreshold")'),
    ("_Popart.set(popart enum)", lambda o: o._Popart.set(
        "virtualGraphMode", int(popart.VirtualGraphMode.Manual)), "_Popart",
     ("_Popart", "virtualGraphMode"), 1, '_Popart.set("virtualGraphMode")'),
    ("_Popart.set(unknown key)", lambda o: o._Popart.set("someFutureOption", {"a": 1}), "_Popart",
     ("_Popart", "someFutureOption"), {"a": 1}, '_Popart.set("someFutureOption")'),
    ("_Popart.setPatterns", lambda o: o._Popart.setPatterns({"TiedGather": True}, level=1),
     "_Popart", ("_Popart", "patterns_level"), 1, "_Popart.setPatterns"),
    ("_Popart.setEngineOptions", lambda o: o._Popart.setEngineOptions({"opt.internalExchange": "1"}),
     "_Popart", ("_Popart", "engineOptions"), {"opt.internalExchange": "1"},
     "_Popart.setEngineOptions"),
]


@pytest.mark.parametrize("case", SETTERS, ids=[c[0] for c in SETTERS])
def test_setter(case: Case) -> None:
    _, call, group, path, expected, warned = case
    opts = Options()
    with recorded() as caught:
        result = call(opts)
    # Setters return their own object, so that calls chain.
    assert result is (getattr(opts, group) if group else opts)
    assert lookup(opts.toDict(), path) == expected
    if warned is None:
        assert option_warnings(caught) == []
        assert opts._not_applicable_report() == []
    else:
        assert option_warnings(caught) == [warned]
        message = str(caught[-1].message)
        assert message == _options_impl.warning_text(warned)
        # The warning points at the caller (this file), not at poptorch's internals.
        assert caught[-1].filename == __file__
        assert [name for name, _ in opts._not_applicable_report()] == [warned]
        # Once per process: a second call, even on other options, stays silent but is
        # still listed in that object's report.
        other = Options()
        with recorded() as again:
            call(other)
        assert option_warnings(again) == []
        assert [name for name, _ in other._not_applicable_report()] == [warned]


def test_every_not_in_effect_entry_is_exercised() -> None:
    warned = {c[5] for c in SETTERS if c[5] is not None}
    assert set(_options_impl.NOT_IN_EFFECT) <= warned
    assert {w for w in warned if not w.startswith('_Popart.set("')} <= set(_options_impl.NOT_IN_EFFECT)


def test_setters_chain() -> None:
    with recorded():
        opts = (Options().deviceIterations(1).replicationFactor(1).randomSeed(3)
                .outputMode(OutputMode.All).sourceLocationExcludes([]).dumpMLIR(None)
                .broadcastBuffers(True).autoRoundNumIPUs(False))
        opts.Training.gradientAccumulation(2).accumulationAndReplicationReductionType(
            ReductionType.Mean).setMeanAccumulationAndReplicationReductionStrategy(
            MeanReductionStrategy.Post)
        opts.Precision.enableStochasticRounding(False).enableFloatingPointExceptions(False)
        opts._Popart.set("enableOutlining", True).set("outlineThreshold", 1).setPatterns({})
    d = opts.toDict()
    assert d["random_seed"] == 3 and d["Training"]["gradient_accumulation"] == 2
    assert d["_Popart"]["outlineThreshold"] == 1


# ---------------------------------------------------------------------------
# Validation: wrong type -> TypeError, wrong value -> ValueError, naming the option.

INVALID: list[tuple[str, Callable[[Options], Any], type[Exception], str]] = [
    ("deviceIterations=0", lambda o: o.deviceIterations(0), ValueError, "deviceIterations"),
    ("deviceIterations=str", lambda o: o.deviceIterations("4"), TypeError, "deviceIterations"),
    ("deviceIterations=bool", lambda o: o.deviceIterations(True), TypeError, "deviceIterations"),
    ("deviceIterations=float", lambda o: o.deviceIterations(2.5), TypeError, "deviceIterations"),
    ("replicationFactor=0", lambda o: o.replicationFactor(0), ValueError, "replicationFactor"),
    ("inputReplicaGrouping size", lambda o: o.inputReplicaGrouping(0, CommGroupType.Consecutive),
     ValueError, "inputReplicaGrouping"),
    ("inputReplicaGrouping All", lambda o: o.inputReplicaGrouping(2, CommGroupType.All), ValueError,
     "CommGroupType.Consecutive"),
    ("inputReplicaGrouping int", lambda o: o.inputReplicaGrouping(2, 1), TypeError,
     "inputReplicaGrouping"),
    ("autoRoundNumIPUs=1", lambda o: o.autoRoundNumIPUs(1), TypeError, "autoRoundNumIPUs"),
    ("randomSeed=str", lambda o: o.randomSeed("42"), TypeError, "randomSeed"),
    ("outputMode=int", lambda o: o.outputMode(2), TypeError, "OutputMode.All"),
    ("outputMode EveryN no period", lambda o: o.outputMode(OutputMode.EveryN), ValueError,
     "output_return_period"),
    ("outputMode EveryN 0", lambda o: o.outputMode(OutputMode.EveryN, 0), ValueError,
     "output_return_period"),
    ("enableExecutableCaching=int", lambda o: o.enableExecutableCaching(3), TypeError,
     "enableExecutableCaching"),
    ("setExecutionStrategy=str", lambda o: o.setExecutionStrategy("pipelined"), TypeError,
     "setExecutionStrategy"),
    ("setAvailableMemoryProportion key", lambda o: o.setAvailableMemoryProportion({"GPU0": 0.5}),
     ValueError, "IPU<n>"),
    ("setAvailableMemoryProportion >1", lambda o: o.setAvailableMemoryProportion({"IPU0": 1.5}),
     ValueError, "setAvailableMemoryProportion (IPU0)"),
    ("setAvailableMemoryProportion 0", lambda o: o.setAvailableMemoryProportion({"IPU0": 0}),
     ValueError, "setAvailableMemoryProportion (IPU0)"),
    ("setAvailableMemoryProportion str", lambda o: o.setAvailableMemoryProportion({"IPU0": "x"}),
     TypeError, "setAvailableMemoryProportion (IPU0)"),
    ("setAvailableMemoryProportion list", lambda o: o.setAvailableMemoryProportion([0.5]), TypeError,
     "setAvailableMemoryProportion"),
    ("useIpuModel=str", lambda o: o.useIpuModel("yes"), TypeError, "useIpuModel"),
    ("ipuModelVersion", lambda o: o.ipuModelVersion("ipu3"), ValueError, "ipuModelVersion"),
    ("useIpuId=-1", lambda o: o.useIpuId(-1), ValueError, "useIpuId"),
    ("useOfflineIpuTarget=3", lambda o: o.useOfflineIpuTarget(3), ValueError, "useOfflineIpuTarget"),
    ("connectionType=int", lambda o: o.connectionType(0), TypeError, "connectionType"),
    ("syncPattern=str", lambda o: o.syncPattern("Full"), TypeError, "syncPattern"),
    ("anchorTensor name", lambda o: o.anchorTensor(1, "b"), TypeError, "anchorTensor (short_name)"),
    ("updatableNamedBuffers=str", lambda o: o.updatableNamedBuffers("buf"), TypeError,
     "updatableNamedBuffers"),
    ("sourceLocationExcludes=str", lambda o: o.sourceLocationExcludes("x"), TypeError,
     "sourceLocationExcludes"),
    ("appendToLocationExcludes=int", lambda o: o.appendToLocationExcludes(1), TypeError,
     "appendToLocationExcludes"),
    ("dumpMLIR=int", lambda o: o.dumpMLIR(5), TypeError, "dumpMLIR"),
    ("maxRepeatLogs=-1", lambda o: o.maxRepeatLogs(-1), ValueError, "maxRepeatLogs"),
    ("logDir=None", lambda o: o.logDir(None), TypeError, "logDir"),
    ("setPartialsType=int32", lambda o: o.Precision.setPartialsType(torch.int32), ValueError,
     "Precision.setPartialsType"),
    ("setPartialsType=str", lambda o: o.Precision.setPartialsType("float"), TypeError,
     "Precision.setPartialsType"),
    ("halfFloatCasting=int", lambda o: o.Precision.halfFloatCasting(0), TypeError,
     "Precision.halfFloatCasting"),
    ("enableStochasticRounding=int", lambda o: o.Precision.enableStochasticRounding(1), TypeError,
     "Precision.enableStochasticRounding"),
    ("gradientAccumulation=0", lambda o: o.Training.gradientAccumulation(0), ValueError,
     "Training.gradientAccumulation"),
    ("reductionType=NoReduction", lambda o: o.Training.accumulationAndReplicationReductionType(
        ReductionType.NoReduction), ValueError, "Training.accumulationAndReplicationReductionType"),
    ("reductionType=int", lambda o: o.Training.accumulationAndReplicationReductionType(1), TypeError,
     "Training.accumulationAndReplicationReductionType"),
    ("meanReductionStrategy=int",
     lambda o: o.Training.setMeanAccumulationAndReplicationReductionStrategy(0), TypeError,
     "Training.setMeanAccumulationAndReplicationReductionStrategy"),
    ("setWeightLocation=dict", lambda o: o.TensorLocations.setWeightLocation({"onChip": 0}),
     TypeError, "TensorLocations.setWeightLocation"),
    ("numIOTiles odd", lambda o: o.TensorLocations.numIOTiles(33), ValueError,
     "TensorLocations.numIOTiles"),
    ("numIOTiles small", lambda o: o.TensorLocations.numIOTiles(16), ValueError,
     "TensorLocations.numIOTiles"),
    ("configureProcessId pid", lambda o: o.Distributed.configureProcessId(4, 4), ValueError,
     "Distributed.configureProcessId (process_id)"),
    ("configureProcessId n", lambda o: o.Distributed.configureProcessId(0, 0), ValueError,
     "Distributed.configureProcessId (num_processes)"),
    ("traceModel=None", lambda o: o.Jit.traceModel(None), TypeError, "Jit.traceModel"),
    ("_Popart.set enum range", lambda o: o._Popart.set("autoRecomputation", 7), ValueError,
     '_Popart.set("autoRecomputation")'),
    ("_Popart.set bool for enum", lambda o: o._Popart.set("autoRecomputation", True), TypeError,
     '_Popart.set("autoRecomputation")'),
    ("_Popart.set float", lambda o: o._Popart.set("outlineThreshold", "ten"), TypeError,
     '_Popart.set("outlineThreshold")'),
    ("_Popart.set list of str",
     lambda o: o._Popart.set("accumulateOuterFragmentSettings.excludedVirtualGraphs", [0]),
     TypeError, "accumulateOuterFragmentSettings.excludedVirtualGraphs"),
    ("_Popart.set bool", lambda o: o._Popart.set("enableOutlining", "yes"), TypeError,
     '_Popart.set("enableOutlining")'),
    ("_Popart.set key", lambda o: o._Popart.set(5, 1), TypeError, "_Popart.set"),
    ("setPatterns list", lambda o: o._Popart.setPatterns(["TiedGather"]), TypeError,
     "_Popart.setPatterns"),
    ("setPatterns value", lambda o: o._Popart.setPatterns({"TiedGather": 1}), TypeError,
     "_Popart.setPatterns (pattern 'TiedGather')"),
    ("setPatterns level", lambda o: o._Popart.setPatterns({}, level=9), ValueError,
     "_Popart.setPatterns (level)"),
    ("setEngineOptions", lambda o: o._Popart.setEngineOptions("x"), TypeError,
     "_Popart.setEngineOptions"),
    ("minElementsForOffChip", lambda o: TLS().minElementsForOffChip(-1), ValueError,
     "TensorLocationSettings.minElementsForOffChip"),
    ("useOnChipStorage", lambda o: TLS().useOnChipStorage("no"), TypeError,
     "TensorLocationSettings.useOnChipStorage"),
    ("useReplicatedTensorSharding", lambda o: TLS().useReplicatedTensorSharding(1), TypeError,
     "TensorLocationSettings.useReplicatedTensorSharding"),
]


@pytest.mark.parametrize("case", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_arguments(case: tuple[str, Callable[[Options], Any], type[Exception], str]) -> None:
    _, call, error, fragment = case
    opts = Options()
    before = opts.toDict()
    with recorded() as caught, pytest.raises(error, match=re.escape(fragment)) as info:
        call(opts)
    assert str(info.value).startswith("poptorch: ")
    # A rejected call changes nothing and warns about nothing.
    assert opts.toDict() == before
    assert option_warnings(caught) == []


# ---------------------------------------------------------------------------
# Defaults, toDict, repr, clone, the report


def test_defaults_do_not_warn() -> None:
    with recorded() as caught:
        opts = Options()
    assert option_warnings(caught) == []
    assert opts._not_applicable_report() == []
    d = opts.toDict()
    assert d["device_iterations"] == 1 and d["replication_factor"] == 1
    assert d["output_mode"] == OutputMode.Default and opts.defaultOutputMode()
    assert d["execution_strategy"] == {"strategy": "PipelinedExecution",
                                       "auto_stage": AutoStage.SameAsIpu, "stages": []}
    assert d["Training"]["gradient_accumulation"] == 1
    assert d["Distributed"] == {"num_distributed_processes": 1, "distributed_process_id": 0,
                                "all_reduce_enabled": True}
    assert d["_Popart"] == {}
    assert set(d) >= {"Training", "Precision", "TensorLocations", "Distributed", "Jit", "_Popart"}


def test_to_dict_is_plain_data_and_a_copy() -> None:
    with recorded():
        opts = (Options().setExecutionStrategy(SerialPhasedExecution(Phase(Stage("a").ipu(1))))
                .sourceLocationExcludes(["x"]))
        opts._Popart.set("dotChecks", {"Fwd0"})
    d = opts.toDict()
    json.dumps(d)  # only plain data: numbers, strings, lists, dicts
    d["source_location_excludes"].append("y")
    d["Training"]["gradient_accumulation"] = 99
    assert opts.toDict()["source_location_excludes"] == ["x"]
    assert opts.Training.gradient_accumulation == 1
    assert d["execution_strategy"]["phases"][0]["stages"][0] == {
        "blocks": ["a"], "ipu": 1, "stage_id": -1, "phase_id": 0}


def test_values_read_as_attributes() -> None:
    opts = Options()
    opts.Precision.enableStochasticRounding(False)
    assert opts.Precision.stochastic_rounding is False
    assert opts.Distributed.processId == 0 and opts.Distributed.numProcesses == 1
    assert opts._Popart.options == {}
    with pytest.raises(AttributeError):
        opts.Training.no_such_option  # noqa: B018


def test_repr_shows_all_settings() -> None:
    with recorded():
        opts = Options().deviceIterations(2).randomSeed(5)
        opts.Training.gradientAccumulation(4)
        opts._Popart.set("autoRecomputation", 3)
    text = repr(opts)
    assert text.startswith("Options(") and text.endswith(")")
    for fragment in ("device_iterations=2", "random_seed=5", "Training=_TrainingOptions(",
                     "gradient_accumulation=4", "Precision=_PrecisionOptions(",
                     "TensorLocations=_TensorLocationOptions(", "Distributed=_DistributedOptions(",
                     "Jit=_JitOptions(", "_Popart=_PopartOptions(autoRecomputation=3)",
                     "execution_strategy=PipelinedExecution("):
        assert fragment in text
    assert repr(TLS().useOnChipStorage(False)) == "TensorLocationSettings(onChip=0)"


def test_clone_is_deep_and_keeps_the_report() -> None:
    with recorded():
        opts = Options().replicationFactor(2)
        opts.Training.gradientAccumulation(8)
        opts.Training.setConvolutionDithering(True)
    other = opts.clone()
    assert other.toDict() == opts.toDict()
    assert other._not_applicable_report() == opts._not_applicable_report()
    assert "Training.setConvolutionDithering" in dict(other._not_applicable_report())
    with recorded():
        other.Training.gradientAccumulation(16)
        other.Precision.enableStochasticRounding(True)
    assert opts.Training.gradient_accumulation == 8
    assert "Precision.enableStochasticRounding" not in dict(opts._not_applicable_report())
    assert "Precision.enableStochasticRounding" in dict(other._not_applicable_report())
    # The clone's sub-groups report into the clone, not into the original.
    assert other.Training._report is other._report is not opts._report
    # copy.copy + clone is how inferenceModel takes its own copy.
    assert copy.copy(opts).clone().toDict() == opts.toDict()


def test_report_pairs_name_option_and_reason() -> None:
    with recorded():
        opts = Options().deviceIterations(4).setExecutionStrategy(
            SerialPhasedExecution(Phase("a")).setTensorsLiveness(Liveness.OffChipAfterFwd)
        ).autoRoundNumIPUs()
        opts._Popart.set("autoRecomputation", int(popart.RecomputationType.Pipeline))
        opts._Popart.set("enableOutlining", False)
    report = dict(opts._not_applicable_report())
    assert list(report) == ["SerialPhasedExecution.tensorsLiveness", "autoRoundNumIPUs",
                            '_Popart.set("autoRecomputation")', '_Popart.set("enableOutlining")']
    assert report["SerialPhasedExecution.tensorsLiveness"].startswith("not applicable: all tensors")
    assert report["autoRoundNumIPUs"].startswith("not applicable: ")
    assert "only applies to training" in report['_Popart.set("autoRecomputation")']
    assert "only applies to training" not in report['_Popart.set("enableOutlining")']


def test_warning_once_per_option_not_per_group() -> None:
    with recorded() as caught:
        opts = Options()
        for _ in range(3):
            opts._Popart.set("outlineThreshold", 1.0)
            opts._Popart.set("enableOutlining", True)
            opts.Precision.enableStochasticRounding(True)
    assert option_warnings(caught) == ['_Popart.set("outlineThreshold")',
                                       '_Popart.set("enableOutlining")',
                                       "Precision.enableStochasticRounding"]


def test_stochastic_rounding_warning_text() -> None:
    with recorded() as caught:
        Options().Precision.enableStochasticRounding(True)
    assert [str(w.message) for w in caught] == [
        "poptorch: option Precision.enableStochasticRounding is accepted but not applicable: "
        "the host CPU backend rounds to nearest"]


def test_existing_surface_still_works(tmp_path: Path) -> None:
    opts = Options().sourceLocationExcludes(["a"]).appendToLocationExcludes("b").dumpMLIR(str(tmp_path))
    assert opts._values["source_location_excludes"] == ["a", "b"]
    assert opts.device_iterations == 1 and opts.replication_factor == 1

    class Graph:
        mlir = "module {}"

    assert opts._dump_dir_for(Graph()).startswith(os.path.join(str(tmp_path), "model-"))
    assert Options()._dump_dir_for(Graph()) == ""
    with recorded() as caught:
        opts.deviceIterations(4)
    assert option_warnings(caught) == []  # the device-iteration loop is honoured
    assert opts.device_iterations == 4


def test_environment_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POPTORCH_MLIR_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("POPTORCH_CACHE_DIR", str(tmp_path / "cache"))
    with recorded() as caught:
        opts = Options()
    assert opts.toDict()["mlir_dump_dir"] == str(tmp_path)
    assert opts.toDict()["executable_cache_dir"] == str(tmp_path / "cache")
    assert option_warnings(caught) == []  # the executable cache is honoured


def test_random_seed_also_seeds_torch() -> None:
    Options().randomSeed(123)
    a = torch.rand(3)
    Options().randomSeed(123)
    assert torch.equal(a, torch.rand(3))


def test_output_mode_ignores_period_unless_every_n() -> None:
    opts = Options().outputMode(OutputMode.All, 5)
    assert opts.toDict()["output_return_period"] == 1
    assert not opts.defaultOutputMode()


def test_offline_target_sets_connection_never_with_one_warning() -> None:
    with recorded() as caught:
        opts = Options().useOfflineIpuTarget(21)
    assert opts.toDict()["ipu_version"] == 21
    assert opts.toDict()["connection_type"] == ConnectionType.Never
    assert option_warnings(caught) == ["useOfflineIpuTarget"]


def test_distributed_reads_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "2")
    with recorded() as caught:
        opts = Options()
    assert (opts.Distributed.processId, opts.Distributed.numProcesses) == (2, 4)
    assert option_warnings(caught) == []
    assert opts.Distributed.disable().numProcesses == 1

    monkeypatch.setenv("MY_N", "1")
    monkeypatch.setenv("MY_ID", "0")
    assert opts.Distributed.setEnvVarNames("MY_N", "MY_ID") is opts.Distributed
    monkeypatch.setenv("MY_N", "many")
    with pytest.raises(ValueError, match="MY_N='many'"):
        opts.Distributed.setEnvVarNames("MY_N", "MY_ID")


def test_tensor_location_settings() -> None:
    s = TLS()
    assert s.useOnChipStorage(True) is s
    s.useReplicatedTensorSharding().minElementsForOffChip(0).minElementsForReplicatedTensorSharding(8)
    assert s.toDict() == {"onChip": 1, "useReplicatedTensorSharding": 1, "minElementsForOffChip": 0,
                          "minElementsForReplicatedTensorSharding": 8}
    s.useOnChipStorage(None)
    assert "onChip" not in s.toDict()
    assert TLS().useIOTilesToLoad() == TLS().useIOTilesToLoad(True)
    assert TLS() != TLS().useIOTilesToLoad(False)


def test_popart_known_and_unknown_keys() -> None:
    with recorded() as caught:
        opts = Options()
        opts._Popart.set("engineOptions", {"debug.allowOutOfMemory": "true"})
        opts._Popart.set("notAPopartOption", 1)
    assert option_warnings(caught) == ['_Popart.set("engineOptions")', '_Popart.set("notAPopartOption")']
    assert "not a PopART session option poptorch knows" in str(caught[1].message)
    # The stored value is a copy: later changes by the caller do not leak in.
    value = ["0"]
    with recorded():
        opts._Popart.set("accumulateOuterFragmentSettings.excludedVirtualGraphs", value)
    value.append("1")
    assert opts._Popart.options["accumulateOuterFragmentSettings.excludedVirtualGraphs"] == ["0"]


# ---------------------------------------------------------------------------
# Execution strategies (data only: executing stages is the runtime's job)


def test_pipelined_execution_from_auto_stage_and_stages() -> None:
    assert PipelinedExecution().is_default()
    assert PipelinedExecution(AutoStage.SameAsIpu).is_default()
    assert not PipelinedExecution(AutoStage.AutoIncrement).is_default()
    assert not ShardedExecution().is_default()
    strategy = PipelinedExecution("a", ["b", "c"], Stage("d").ipu(3))
    assert [s.blocks for s in strategy.stages] == [["a"], ["b", "c"], ["d"]]
    assert strategy.stage("c").toDict() == {"blocks": ["b", "c"], "ipu": None, "stage_id": 1,
                                            "phase_id": -1}
    assert strategy.stage("d")._ipu == 3
    assert strategy == PipelinedExecution("a", ["b", "c"], Stage("d").ipu(3))
    assert "PipelinedExecution(auto_stage=" in repr(strategy)
    with pytest.raises(ValueError, match="has no block 'z'"):
        strategy.stage("z")
    with pytest.raises(ValueError, match="block 'a' is in more than one stage"):
        PipelinedExecution("a", Stage("a", "b"))
    with pytest.raises(TypeError, match="either one AutoStage or a list of stages"):
        PipelinedExecution("a", AutoStage.AutoIncrement)
    with pytest.raises(TypeError, match="block ids"):
        PipelinedExecution(3)


def test_stage_and_phase() -> None:
    with pytest.raises(TypeError, match="Stage expects block ids"):
        Stage("a", 1)
    with pytest.raises(ValueError, match="Stage.ipu"):
        Stage("a").ipu(-1)
    assert Phase("a", "b").stages[0].blocks == ["a", "b"]
    phase = Phase(Stage("a"), Stage("b")).ipus(0, 2)
    assert [s._ipu for s in phase.stages] == [0, 2]
    assert phase.stage(1).blocks == ["b"]
    with pytest.raises(ValueError, match="2 stages but 1 IPUs"):
        phase.ipus(0)
    with pytest.raises(TypeError, match="not a mix"):
        Phase(Stage("a"), "b")


def test_phased_executions() -> None:
    serial = SerialPhasedExecution([Phase(Stage("a"), Stage("a2")), Phase(Stage("b"), Stage("b2"))])
    serial.phase(0).ipus(0, 1)
    assert serial.setTensorsLiveness(Liveness.OffChipAfterEachPhase) is serial
    assert serial.useSeparateBackwardPhase() is serial
    d = serial.toDict()
    assert d["strategy"] == "SerialPhasedExecution" and len(d["phases"]) == 2
    assert d["tensors_liveness"] == Liveness.OffChipAfterEachPhase and d["separate_backward_phase"]
    assert serial.stage("b2").toDict()["phase_id"] == 1

    parallel = ParallelPhasedExecution(["a", "b"], "c")
    assert parallel.stage("b") is parallel.stage("a")
    assert parallel.sendTensorsOffChipAfterFwd().tensors_liveness == Liveness.OffChipAfterFwd
    assert parallel.sendTensorsOffChipAfterFwd(False).tensors_liveness == Liveness.AlwaysLive
    with pytest.raises(ValueError, match="at least one phase"):
        SerialPhasedExecution()
    with pytest.raises(TypeError, match="setTensorsLiveness"):
        serial.setTensorsLiveness(1)
    with pytest.raises(ValueError, match="phases are numbered"):
        serial.phase(-1)


# ---------------------------------------------------------------------------
# loadFromFile


def test_load_from_file(tmp_path: Path) -> None:
    path = tmp_path / "opts.txt"
    path.write_text(
        "# poptorch options\n"
        "deviceIterations(1)\n"
        "\n"
        "randomSeed(random_seed=11)  # trailing comment\n"
        "outputMode(poptorch.OutputMode.EveryN, 1)\n"
        "connectionType(ConnectionType.Always)\n"
        "Training.gradientAccumulation(4)\n"
        "Precision.setPartialsType(torch.half)\n"
        "sourceLocationExcludes(['site-packages', 'torch'])\n"
        "_Popart.set('outlineThreshold', 2.5)\n")
    with recorded() as caught:
        opts = Options()
        assert opts.loadFromFile(path) is opts
    d = opts.toDict()
    assert d["random_seed"] == 11 and d["output_mode"] == OutputMode.EveryN
    assert d["Training"]["gradient_accumulation"] == 4
    assert d["Precision"]["partials_type"] == "half"
    assert d["source_location_excludes"] == ["site-packages", "torch"]
    assert d["_Popart"]["outlineThreshold"] == 2.5
    assert option_warnings(caught) == ["Precision.setPartialsType",
                                       '_Popart.set("outlineThreshold")']


@pytest.mark.parametrize("line, fragment", [
    ("import os", "cannot parse"),
    ("deviceIterations(", "cannot parse"),
    ("__import__('os').system('true')", "is not a call of an Options setter"),
    ("toDict()", "is not a call of an Options setter"),
    ("_dump_dir_for(1)", "is not a call of an Options setter"),
    ("Training._set('a', 'b', 1, in_effect=True)", "is not a call of an Options setter"),
    ("device_iterations(2)", "is not a call of an Options setter"),
    ("Nope.deviceIterations(2)", "is not a call of an Options setter"),
    ("deviceIterations(os.getpid())", "unsupported argument"),
    ("outputMode(poptorch.OutputMode.Nope)", "unsupported argument"),
])
def test_load_from_file_rejects(tmp_path: Path, line: str, fragment: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(f"deviceIterations(1)\n{line}\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2")) as info:
        Options().loadFromFile(str(path))
    assert fragment in str(info.value)


def test_load_from_file_setter_errors_propagate(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("deviceIterations(0)\n")
    with pytest.raises(ValueError, match="deviceIterations"):
        Options().loadFromFile(path)


# ---------------------------------------------------------------------------
# The popart compatibility module


def test_popart_module_is_the_compatibility_module() -> None:
    assert "compatibility module" in popart.__doc__ and "not PopART" in popart.__doc__
    assert popart.IS_POPTORCH_COMPATIBILITY_MODULE
    assert Path(popart.__file__).resolve().parent == REPO / "python" / "popart"
    assert popart.AccumulateOuterFragmentSchedule.OverlapMemoryOptimized == 3
    assert int(popart.RecomputationType.Pipeline) == 3
    assert popart.RecomputationType.NoRecompute == 0 and popart.RecomputationType.RecomputeAll == 4
    assert popart.VirtualGraphMode.ExecutionPhases == 3
    assert popart.SyntheticDataMode.RandomNormal == 2
    assert popart.MergeVarUpdateType.AutoTight == 3
    assert popart.PatternsLevel.Default == 2
    for name in popart.__all__:
        cls = getattr(popart, name)
        assert issubclass(cls, int) and len(cls) >= 1, name


def test_popart_enums_are_accepted_by_set() -> None:
    opts = Options()
    with recorded():
        opts._Popart.set("autoRecomputation", popart.RecomputationType.RecomputeAll)
        opts._Popart.set("mergeVarUpdate", int(popart.MergeVarUpdateType.AutoLoose))
        opts._Popart.set("syntheticDataMode", int(popart.SyntheticDataMode.Zeros))
        opts._Popart.setPatterns({}, level=popart.PatternsLevel.Minimal)
    assert json.loads(json.dumps(opts.toDict()["_Popart"])) == {
        "autoRecomputation": 4, "mergeVarUpdate": 2, "syntheticDataMode": 1, "patterns_level": 1,
        "patterns": {}}


# ---------------------------------------------------------------------------
# The seed user's configuration helper runs unchanged


def _load_seed_config(monkeypatch: pytest.MonkeyPatch) -> Any:
    if not SEED_CONFIG.is_file():
        pytest.skip(f"seed configuration {SEED_CONFIG} is not present in this checkout")
    # Until poptorch/__init__.py exports these names, provide them here; once it
    # does, nothing is patched.
    for name, value in REQUIRED_EXPORTS.items():
        if not hasattr(poptorch, name):
            monkeypatch.setattr(poptorch, name, value, raising=False)
    monkeypatch.setitem(sys.modules, "poptorch", poptorch)
    monkeypatch.setitem(sys.modules, "popart", popart)
    spec = importlib.util.spec_from_file_location("seed_ipu_config", SEED_CONFIG)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEED_WARNINGS = [
    "autoRoundNumIPUs",
    "Precision.enableStochasticRounding",
    '_Popart.set("autoRecomputation")',
    '_Popart.set("disableGradAccumulationTensorStreams")',
    '_Popart.set("outlineThreshold")',
    '_Popart.set("accumulateOuterFragmentSettings.schedule")',
    '_Popart.set("accumulateOuterFragmentSettings.excludedVirtualGraphs")',
    "setAvailableMemoryProportion",
    '_Popart.set("scheduleNonWeightUpdateGradientConsumersEarly")',
    "_Popart.setPatterns",
    "TensorLocations.setOptimizerLocation",
]


def test_seed_ipu_config(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load_seed_config(monkeypatch)
    args = argparse.Namespace(replication_factor=2, optimizer_state_offchip=True)
    with recorded() as caught:
        opts = module.build_ipu_config(args)
    assert isinstance(opts, Options)
    d = opts.toDict()
    assert d["auto_round_num_ipus"] is True
    assert d["random_seed"] == 1234
    assert d["replication_factor"] == 2
    assert d["output_mode"] == OutputMode.All
    assert d["executable_cache_dir"] == "exec"
    assert d["execution_strategy"]["auto_stage"] == AutoStage.AutoIncrement
    assert d["available_memory_proportion"] == {0: 0.1, 1: 0.1, 2: 0.1, 3: 0.1}
    assert d["Training"]["gradient_accumulation"] == 128
    assert d["Training"]["accumulation_and_replication_reduction_type"] == ReductionType.Mean
    assert d["Precision"]["stochastic_rounding"] is True
    assert d["TensorLocations"]["location_optimizer"] == {"onChip": 0, "useReplicatedTensorSharding": 1}
    assert d["_Popart"] == {
        "autoRecomputation": 3,
        "disableGradAccumulationTensorStreams": True,
        "outlineThreshold": 10.0,
        "accumulateOuterFragmentSettings.schedule": 3,
        "accumulateOuterFragmentSettings.excludedVirtualGraphs": ["0"],
        "scheduleNonWeightUpdateGradientConsumersEarly": True,
        "patterns_level": 2,
        "patterns": {"TiedGather": True, "TiedGatherAccumulate": True,
                     "UpdateInplacePrioritiesForIpu": True},
    }
    # One warning per option, in call order, each naming the option and pointing at the
    # line of ipu_config.py that set it. (setExecutionStrategy is called twice: the first,
    # PopTorch's default strategy, takes effect; the second warns.)
    assert option_warnings(caught) == SEED_WARNINGS
    assert len(caught) == len(SEED_WARNINGS)
    assert all(Path(w.filename) == SEED_CONFIG for w in caught)
    assert [name for name, _ in opts._not_applicable_report()] == SEED_WARNINGS

    # A second configuration in the same process warns about nothing new.
    with recorded() as again:
        module.build_ipu_config(argparse.Namespace(replication_factor=1, optimizer_state_offchip=False))
    assert option_warnings(again) == []


def test_seed_config_goes_through_the_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    """PoplarExecutor takes its own deep copy of the seed options (no compilation here)."""
    module = _load_seed_config(monkeypatch)
    with recorded():
        opts = module.build_ipu_config(argparse.Namespace(replication_factor=1,
                                                          optimizer_state_offchip=False))
    executor = poptorch.PoplarExecutor(torch.nn.Linear(2, 2).eval(), opts)
    assert executor.options is not opts
    assert executor.options.toDict() == opts.toDict()
    assert executor.options._not_applicable_report() == opts._not_applicable_report()


# ---------------------------------------------------------------------------
# docs/options.md lists every option and the exact warning it prints


def test_docs_list_every_warning() -> None:
    docs = (REPO / "docs" / "options.md").read_text()
    for option in _options_impl.NOT_IN_EFFECT:
        assert _options_impl.warning_text(option) in docs, option
    for key in ("outlineThreshold", "autoRecomputation", "someUnknownKey"):
        text = _options_impl.warning_text(_options_impl.popart_option_name(key))
        assert text.replace(key, "<key>") in docs, key
    for case in SETTERS:
        name = case[0].split("=")[0].split("(")[0].split(",")[0]
        assert f"`{name.split('.')[-1]}" in docs, name
