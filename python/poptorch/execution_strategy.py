"""Execution strategies as data: ``Stage``, ``Phase``, ``PipelinedExecution``, ...

``Options.setExecutionStrategy`` stores one of these. They describe how blocks
map onto stages, IPUs and phases (PopTorch's semantics); ``_blocks`` applies
them while a model is traced (every captured op carries its block, stage, IPU
and phase) and checks PopTorch's rules when it is compiled.
"""

from __future__ import annotations

from typing import Any

from .enums import AutoStage, Liveness
from .errors import ArgumentError, ArgumentTypeError

BlockId = str

__all__ = [
    "AutoStage",
    "ParallelPhasedExecution",
    "Phase",
    "PipelinedExecution",
    "SerialPhasedExecution",
    "ShardedExecution",
    "Stage",
]


class Stage:
    """One or more blocks (by ``user_id``) that run together on one IPU."""

    def __init__(self, *block_ids: BlockId) -> None:
        for block in block_ids:
            if not isinstance(block, str):
                raise ArgumentTypeError(f"poptorch: Stage expects block ids (str), got {block!r} "
                                f"({type(block).__name__})")
        self._blocks = tuple(block_ids)
        self._ipu: int | None = None
        self._stage_id = -1
        self._phase_id = -1

    @property
    def blocks(self) -> list[BlockId]:
        """The ids of the blocks in this stage."""
        return list(self._blocks)

    def ipu(self, ipu: int) -> Stage:
        """Places this stage on IPU ``ipu``."""
        if isinstance(ipu, bool) or not isinstance(ipu, int):
            raise ArgumentTypeError(f"poptorch: Stage.ipu expects an int, got {ipu!r}")
        if ipu < 0:
            raise ArgumentError(f"poptorch: Stage.ipu expects an int >= 0, got {ipu}")
        self._ipu = ipu
        return self

    def toDict(self) -> dict[str, Any]:
        return {"blocks": list(self._blocks), "ipu": self._ipu, "stage_id": self._stage_id,
                "phase_id": self._phase_id}

    def __repr__(self) -> str:
        ipu = f".ipu({self._ipu})" if self._ipu is not None else ""
        return f"Stage({', '.join(map(repr, self._blocks))}){ipu}"


def _as_stage(arg: Any, where: str) -> Stage:
    if isinstance(arg, Stage):
        return arg
    if isinstance(arg, str):
        return Stage(arg)
    if isinstance(arg, (list, tuple)) and all(isinstance(b, str) for b in arg):
        return Stage(*arg)
    raise ArgumentTypeError(f"poptorch: {where} expects Stages, block ids (str) or lists of block ids, "
                    f"got {arg!r}")


class Phase:
    """An execution phase: stages that run in parallel, on different IPUs.

    ``Phase(Stage("A"), Stage("B"))`` has two stages; ``Phase("A", "B")`` has one
    stage made of the blocks "A" and "B".
    """

    def __init__(self, *args: BlockId | Stage) -> None:
        if args and all(isinstance(a, Stage) for a in args):
            self.stages: list[Stage] = list(args)
        elif all(isinstance(a, str) for a in args):
            self.stages = [Stage(*args)]
        else:
            raise ArgumentTypeError("poptorch: Phase expects either Stages or block ids (str), not a mix: "
                            f"got {[type(a).__name__ for a in args]}")

    def stage(self, idx: int) -> Stage:
        return self.stages[idx]

    def ipus(self, *ipus: int) -> Phase:
        """Places the phase's stages on these IPUs, one IPU per stage."""
        if len(ipus) != len(self.stages):
            raise ArgumentError(f"poptorch: Phase.ipus: the phase has {len(self.stages)} stages but "
                             f"{len(ipus)} IPUs were given")
        for stage, ipu in zip(self.stages, ipus, strict=True):
            stage.ipu(ipu)
        return self

    def toDict(self) -> dict[str, Any]:
        return {"stages": [s.toDict() for s in self.stages]}

    def __repr__(self) -> str:
        return f"Phase({', '.join(map(repr, self.stages))})"


class _ExecutionStrategy:
    """Common part: the map from block id to its stage."""

    def __init__(self) -> None:
        self._block_map: dict[BlockId, Stage] = {}

    def _add_stage(self, stage: Stage) -> None:
        for block in stage.blocks:
            if block in self._block_map:
                raise ArgumentError(f"poptorch: {type(self).__name__}: block {block!r} is in more "
                                 "than one stage")
            self._block_map[block] = stage

    def stage(self, block_id: BlockId) -> Stage:
        """The stage that block ``block_id`` belongs to."""
        if block_id not in self._block_map:
            raise ArgumentError(f"poptorch: {type(self).__name__} has no block {block_id!r}; its "
                             f"blocks are {sorted(self._block_map)}")
        return self._block_map[block_id]

    def is_default(self) -> bool:
        """True for PopTorch's default, ``PipelinedExecution(AutoStage.SameAsIpu)``."""
        return False

    def toDict(self) -> dict[str, Any]:
        return {"strategy": type(self).__name__}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.toDict() == other.toDict()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.toDict().items() if k != "strategy")
        return f"{type(self).__name__}({body})"


class PipelinedExecution(_ExecutionStrategy):
    """Pipelines the model's stages over IPUs.

    Pass either one ``AutoStage`` (how blocks without explicit stages get a
    stage id; default ``AutoStage.SameAsIpu``), or the stages in order: each a
    ``Stage``, a block id, or a list of block ids.
    """

    def __init__(self, *args: AutoStage | Stage | BlockId | list[BlockId]) -> None:
        super().__init__()
        self._auto_stage = AutoStage.SameAsIpu
        self._stages: list[Stage] = []
        if len(args) == 1 and isinstance(args[0], AutoStage):
            self._auto_stage = args[0]
            return
        name = type(self).__name__
        for stage_id, arg in enumerate(args):
            if isinstance(arg, AutoStage):
                raise ArgumentTypeError(f"poptorch: {name} takes either one AutoStage or a list of "
                                "stages, not both")
            stage = _as_stage(arg, name)
            stage._stage_id = stage_id
            self._add_stage(stage)
            self._stages.append(stage)

    @property
    def auto_stage(self) -> AutoStage:
        return self._auto_stage

    @property
    def stages(self) -> list[Stage]:
        return list(self._stages)

    def is_default(self) -> bool:
        return (type(self) is PipelinedExecution and not self._stages
                and self._auto_stage == AutoStage.SameAsIpu)

    def toDict(self) -> dict[str, Any]:
        return {**super().toDict(), "auto_stage": self._auto_stage,
                "stages": [s.toDict() for s in self._stages]}


class ShardedExecution(PipelinedExecution):
    """Runs the stages one after another, each on its own IPU (no pipelining)."""


class _PhasedExecution(_ExecutionStrategy):
    """Common part of the phased strategies: a list of phases."""

    def __init__(self, *phases: Phase | list[Stage] | list[BlockId] | BlockId) -> None:
        super().__init__()
        name = type(self).__name__
        # PopTorch's examples also pass all phases as one list.
        if len(phases) == 1 and isinstance(phases[0], list) and phases[0] \
                and all(isinstance(p, Phase) for p in phases[0]):
            phases = tuple(phases[0])
        if not phases:
            raise ArgumentError(f"poptorch: {name} needs at least one phase; there is no automatic "
                             "phase assignment")
        self._phases: list[Phase] = []
        self._tensors_liveness = Liveness.AlwaysLive
        self._separate_backward_phase = False
        for phase_id, arg in enumerate(phases):
            if isinstance(arg, Phase):
                phase = arg
            elif isinstance(arg, (list, tuple)):
                phase = Phase(*arg)
            elif isinstance(arg, (str, Stage)):
                phase = Phase(arg)
            else:
                raise ArgumentTypeError(f"poptorch: {name} expects Phases, lists of Stages or lists of "
                                f"block ids, got {arg!r}")
            for stage in phase.stages:
                stage._phase_id = phase_id
                self._add_stage(stage)
            self._phases.append(phase)

    def phase(self, phase: int) -> Phase:
        """The phase with index ``phase``."""
        if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
            raise ArgumentError(f"poptorch: phases are numbered by ints >= 0, got {phase!r}")
        return self._phases[phase]

    def useSeparateBackwardPhase(self, use: bool = True) -> _PhasedExecution:
        """Gives the backward pass its own phases (training only)."""
        if not isinstance(use, bool):
            raise ArgumentTypeError(f"poptorch: useSeparateBackwardPhase expects a bool, got {use!r}")
        self._separate_backward_phase = use
        return self

    @property
    def tensors_liveness(self) -> Liveness:
        return self._tensors_liveness

    def toDict(self) -> dict[str, Any]:
        return {**super().toDict(), "phases": [p.toDict() for p in self._phases],
                "tensors_liveness": self._tensors_liveness,
                "separate_backward_phase": self._separate_backward_phase}


class SerialPhasedExecution(_PhasedExecution):
    """All phases run one after another on the same group of IPUs."""

    def setTensorsLiveness(self, liveness: Liveness) -> SerialPhasedExecution:
        if not isinstance(liveness, Liveness):
            raise ArgumentTypeError(f"poptorch: setTensorsLiveness expects a poptorch.Liveness, got "
                            f"{liveness!r}")
        self._tensors_liveness = liveness
        return self


class ParallelPhasedExecution(_PhasedExecution):
    """Phases alternate between two groups of IPUs."""

    def sendTensorsOffChipAfterFwd(self, off_chip: bool = True) -> ParallelPhasedExecution:
        if not isinstance(off_chip, bool):
            raise ArgumentTypeError(f"poptorch: sendTensorsOffChipAfterFwd expects a bool, got {off_chip!r}")
        self._tensors_liveness = Liveness.OffChipAfterFwd if off_chip else Liveness.AlwaysLive
        return self
