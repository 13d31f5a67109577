"""poptorch's ``popart`` compatibility module. This is not PopART.

PopTorch users configure PopART session options through
``poptorch.Options()._Popart.set(key, value)`` and take the values from PopART's
Python enums, for example::

    import popart
    opts._Popart.set("accumulateOuterFragmentSettings.schedule",
                     int(popart.AccumulateOuterFragmentSchedule.OverlapMemoryOptimized))

There is no PopART (or Poplar) on this device, so this module only provides
those enums, as ``IntEnum``s with PopART's integer values where they are known,
so that such code imports and runs unchanged. ``_Popart.set`` checks and stores
the values and warns once per key that PopART session options do not apply here.
"""

from __future__ import annotations

import enum

__all__ = [
    "AccumulateOuterFragmentSchedule",
    "AutodiffStitchStrategy",
    "BatchSerializationBatchSchedule",
    "BatchSerializationMethod",
    "BatchSerializationTransformContext",
    "CommGroupType",
    "DeviceConnectionType",
    "ExecutionPhaseIOSchedule",
    "ExecutionPhaseSchedule",
    "GradientTensorTrackingMethod",
    "Instrumentation",
    "IrSerializationFormat",
    "MeanReductionStrategy",
    "MergeVarUpdateType",
    "PatternsLevel",
    "RecomputationType",
    "ReductionType",
    "ReplicatedTensorSharding",
    "SubgraphCopyingStrategy",
    "SyncPattern",
    "SyntheticDataMode",
    "TensorStorage",
    "TileSet",
    "VirtualGraphMode",
]

IS_POPTORCH_COMPATIBILITY_MODULE = True


class AccumulateOuterFragmentSchedule(enum.IntEnum):
    """Scheduling of the accumulate outer fragment across virtual graphs (pipelining)."""

    Scheduler = 0
    Serial = 1
    OverlapCycleOptimized = 2
    OverlapMemoryOptimized = 3


class RecomputationType(enum.IntEnum):
    """Which forward ops are recomputed in the backward pass (``autoRecomputation``).

    PopART's C++ ``RecomputationType::None`` is ``NoRecompute`` in Python.
    """

    NoRecompute = 0
    Standard = 1
    NormOnly = 2
    Pipeline = 3
    RecomputeAll = 4


class MergeVarUpdateType(enum.IntEnum):
    """Which variable updates are merged (``mergeVarUpdate``); C++ ``None`` is ``Off``."""

    Off = 0
    All = 1
    AutoLoose = 2
    AutoTight = 3


class VirtualGraphMode(enum.IntEnum):
    """How ops are placed on virtual graphs (``virtualGraphMode``)."""

    Off = 0
    Manual = 1
    Auto = 2
    ExecutionPhases = 3


class SyntheticDataMode(enum.IntEnum):
    """Where input data comes from (``syntheticDataMode``)."""

    Off = 0
    Zeros = 1
    RandomNormal = 2


class Instrumentation(enum.IntEnum):
    """Cycle-count instrumentation: whole program (``Outer``) or per IPU (``Inner``)."""

    Outer = 0
    Inner = 1


class IrSerializationFormat(enum.IntEnum):
    JSON = 0


class BatchSerializationBatchSchedule(enum.IntEnum):
    Scheduler = 0
    Isomorphic = 1
    OverlapOnIo = 2
    OverlapOnCompute = 3


class BatchSerializationTransformContext(enum.IntEnum):
    Fwd = 0
    Bwd = 1


class BatchSerializationMethod(enum.IntEnum):
    UnrollDynamic = 0
    UnrollStatic = 1
    Loop = 2


class ExecutionPhaseIOSchedule(enum.IntEnum):
    Preload = 0
    OnDemand = 1


class ExecutionPhaseSchedule(enum.IntEnum):
    Interleaving = 0
    Batch = 1
    BatchClusteredIO = 2


class SubgraphCopyingStrategy(enum.IntEnum):
    OnEnterAndExit = 0
    JustInTime = 1


class MeanReductionStrategy(enum.IntEnum):
    """PopART's values (poptorch's own enum also has the deprecated ``PostAndLoss``)."""

    Running = 0
    Post = 1


class AutodiffStitchStrategy(enum.IntEnum):
    RecomputeMinimal = 0
    RecomputeAllNonInputs = 1
    AddFwdOutputs = 2
    SafeAddFwdOutputs = 3


class GradientTensorTrackingMethod(enum.IntEnum):
    AllNonViewChangingGradientTensors = 0
    ConvAndMatmulGradients = 1
    GradientsOfUserSpecifiedTensors = 2


class ReductionType(enum.IntEnum):
    Sum = 0
    Mean = 1
    NoReduction = 2


class PatternsLevel(enum.IntEnum):
    """Initial set of PopART patterns (the ``level`` of ``_Popart.setPatterns``)."""

    NoPatterns = 0
    Minimal = 1
    Default = 2
    All = 3


class TensorStorage(enum.IntEnum):
    OnChip = 0
    OffChip = 1


class ReplicatedTensorSharding(enum.IntEnum):
    Off = 0
    On = 1


class TileSet(enum.IntEnum):
    Compute = 0
    IO = 1


class SyncPattern(enum.IntEnum):
    Full = 0
    SinglePipeline = 1
    ReplicaAndLadder = 2


class DeviceConnectionType(enum.IntEnum):
    Always = 0
    OnDemand = 1
    Never = 2


class CommGroupType(enum.IntEnum):
    All = 0
    Consecutive = 1
    Orthogonal = 2
    Ungrouped = 3
