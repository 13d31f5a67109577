"""PopTorch's enums (``poptorch.OutputMode``, ``poptorch.ReductionType``, ...).

Member names and values match PopTorch's, so that code and saved configurations
that store the integers keep their meaning. Which of them take effect on this
device is documented per option in ``docs/options.md``.
"""

from __future__ import annotations

import enum

__all__ = [
    "AutoStage",
    "CommGroupType",
    "ConnectionType",
    "DataLoaderMode",
    "HalfFloatCastingBehavior",
    "Liveness",
    "MatMulSerializationMode",
    "MeanReductionStrategy",
    "MultiConvPlanType",
    "OutputMode",
    "OverlapMode",
    "ReductionType",
    "SharingStrategy",
    "SyncPattern",
    "VariableRetrievalMode",
]


class OutputMode(enum.IntEnum):
    """Which outputs a run returns when it covers several batches.

    ``Final``: the last batch; ``EveryN``: every N-th batch (N is the
    ``output_return_period``); ``All``: every batch; ``Sum``: the sum over the
    batches; ``Default``: ``All`` for inference, ``Final`` for training.
    """

    Final = 0
    EveryN = 1
    All = 2
    Sum = 3
    Default = 4


class ReductionType(enum.IntEnum):
    """How gradients are reduced across accumulation steps and replicas."""

    Sum = 0
    Mean = 1
    NoReduction = 2


class MeanReductionStrategy(enum.IntEnum):
    """When the division of a ``ReductionType.Mean`` reduction happens.

    ``Running`` keeps a running mean; ``Post`` divides once at the end;
    ``PostAndLoss`` is PopTorch's deprecated legacy behaviour.
    """

    Running = 0
    Post = 1
    PostAndLoss = 2


class ConnectionType(enum.IntEnum):
    """When to attach to the device: ``Always``, ``OnDemand`` or ``Never``."""

    Always = 0
    OnDemand = 1
    Never = 2


class SyncPattern(enum.IntEnum):
    """How multi-IPU systems synchronise with each other and the host."""

    Full = 0
    SinglePipeline = 1
    ReplicaAndLadder = 2


class HalfFloatCastingBehavior(enum.IntEnum):
    """Casting of ops that mix float16 and float32 operands.

    ``FloatDowncastToHalf`` casts everything to half; ``HalfUpcastToFloat``
    follows PyTorch's promotion rules; ``Default`` is ``HalfUpcastToFloat`` for
    dispatch tracing (what this project does).
    """

    FloatDowncastToHalf = 0
    HalfUpcastToFloat = 1
    Default = 2


class MatMulSerializationMode(enum.Enum):
    """Which dimension of a matrix multiplication is serialised."""

    InputChannels = "input_channels"
    ReducingDim = "reducing_dim"
    OutputChannels = "output_channels"
    Disabled = "none"


class Liveness(enum.IntEnum):
    """When tensors leave the chip between the phases of phased execution."""

    AlwaysLive = 0
    OffChipAfterFwd = 1
    OffChipAfterFwdNoOverlap = 2
    OffChipAfterEachPhase = 3


class OverlapMode(enum.Enum):
    """Whether host-to-device copies overlap with compute (through IO tiles)."""

    NoOverlap = "no_overlap"
    OverlapAccumulationLoop = "overlap_accumulation_loop"
    OverlapDeviceIterationLoop = "overlap_device_iteration_loop"


class AutoStage(enum.IntEnum):
    """How blocks without an explicit stage get their stage id.

    ``SameAsIpu``: the stage id is the block's ``ipu_id``; ``AutoIncrement``:
    each new block gets the next stage id.
    """

    SameAsIpu = 0
    AutoIncrement = 1


class MultiConvPlanType(enum.IntEnum):
    """Execution plan of a ``poptorch.MultiConv``."""

    Parallel = 0
    Serial = 1


class CommGroupType(enum.IntEnum):
    """How replicas are grouped when an input or a variable is distributed.

    ``All``: one group of every replica; ``Consecutive``: groups of consecutive
    replicas; ``Orthogonal``: groups that stride across the replica order;
    ``NoGrouping``: every replica on its own.
    """

    All = 0
    Consecutive = 1
    Orthogonal = 2
    NoGrouping = 3


class VariableRetrievalMode(enum.IntEnum):
    """Which replicas' values of a grouped variable are read back."""

    OnePerGroup = 0
    AllReplicas = 2


class DataLoaderMode(enum.IntEnum):
    """``poptorch.DataLoader`` access mode."""

    Sync = 0
    Async = 1
    AsyncRebatched = 2


class SharingStrategy(enum.IntEnum):
    """How data loader worker processes share data."""

    SharedMemory = 0
    FileSystem = 1
    Fork = 2
    ForkServer = 3
