"""Blocks, stages and phases: ``poptorch.BeginBlock``, ``Block``, ``BlockFunction``.

A block is a named part of the model. While a model is traced, the current
block decides the stage, IPU and phase of every op the tracer captures: the
ops carry ``poptorch.block``, ``poptorch.stage``, ``poptorch.ipu`` and
``poptorch.phase`` attributes (visible in ``00-captured.mlir``). The execution
strategy (``Options.setExecutionStrategy``) maps blocks to stages:

- ``PipelinedExecution(AutoStage.SameAsIpu)`` (the default) and
  ``ShardedExecution(AutoStage...)``: a block's stage is its ``ipu_id``
  (``SameAsIpu``), or the next stage id (``AutoIncrement``, from 1);
- a strategy that lists stages or phases: the stage (and phase) that names
  the block; a block the strategy does not name is an error.

A stage's IPU is the one its ``Stage.ipu()`` names, else the block's
``ipu_id``, else the stage id (PopTorch's rules). Ops traced before the
first block belong to the first stage (stage 0 with automatic stages).

The captured op order is the program order, so stages run in order as long as
the model enters them in order: re-entering an earlier stage (or phase) after
a later one is an error. Outside tracing (eager calls) blocks do nothing.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import torch

from . import _helpers
from .enums import AutoStage
from .errors import ArgumentError, ArgumentTypeError
from .execution_strategy import (
    PipelinedExecution,
    ShardedExecution,
    _ExecutionStrategy,
    _PhasedExecution,
)

__all__ = ["BeginBlock", "Block", "BlockFunction", "removeBlocks"]

_DEFAULT_BLOCK = "default"  # the implicit block of ops before the first block


@dataclasses.dataclass(frozen=True)
class BlockPlacement:
    block: str
    stage: int
    ipu: int
    phase: int


class _Tracker:
    """Assigns stages to blocks while one model is traced."""

    def __init__(self, tracer: Any, strategy: _ExecutionStrategy) -> None:
        self.tracer = tracer
        self.strategy = strategy
        self.next_auto_id = 0
        self.auto_ids: dict[Any, str] = {}
        self.next_stage = 1  # AutoIncrement: the implicit first block is stage 0
        self.placements: dict[str, BlockPlacement] = {}
        self.entered: list[BlockPlacement] = []  # in the order blocks were entered
        self.current: BlockPlacement | None = None
        self.num_ops_at_first_block = 0

    def _explicit(self) -> bool:
        if isinstance(self.strategy, _PhasedExecution):
            return True
        return isinstance(self.strategy, PipelinedExecution) and bool(self.strategy.stages)

    def _place(self, block: str, ipu_id: int | None) -> BlockPlacement:
        name = type(self.strategy).__name__
        if self._explicit():
            if block not in self.strategy._block_map:
                raise ArgumentError(
                    f"poptorch: the model starts block {block!r}, but the execution strategy "
                    f"{name} does not name it; its blocks are {sorted(self.strategy._block_map)}")
            stage = self.strategy._block_map[block]
            stage_id = stage._stage_id if stage._stage_id >= 0 else 0
            phase = max(stage._phase_id, 0)
            if isinstance(self.strategy, _PhasedExecution):
                # Phased strategies number stages in phase order.
                stage_id = _phased_stage_ids(self.strategy)[id(stage)]
            ipu = stage._ipu if stage._ipu is not None else ipu_id
            return BlockPlacement(block, stage_id, stage_id if ipu is None else ipu, phase)
        auto = self.strategy.auto_stage if isinstance(self.strategy, PipelinedExecution) \
            else AutoStage.SameAsIpu
        if auto == AutoStage.SameAsIpu:
            if ipu_id is None:
                raise ArgumentError(
                    f"poptorch: AutoStage.SameAsIpu was selected but no IPU was specified for block "
                    f"{block!r}: pass ipu_id to BeginBlock/Block, or use "
                    f"{name}(AutoStage.AutoIncrement) or a strategy that lists the stages")
            return BlockPlacement(block, ipu_id, ipu_id, 0)
        stage_id = self.next_stage
        self.next_stage += 1
        return BlockPlacement(block, stage_id, stage_id if ipu_id is None else ipu_id, 0)

    def first_placement(self) -> BlockPlacement:
        """Where ops before the first block go: the first stage."""
        if self._explicit():
            first = min(self.strategy._block_map.values(), key=lambda s: (
                max(s._phase_id, 0), _stage_order(self.strategy, s)))
            return dataclasses.replace(self._place(first.blocks[0], None), block=_DEFAULT_BLOCK)
        return BlockPlacement(_DEFAULT_BLOCK, 0, 0, 0)

    def begin(self, user_id: str | None, ipu_id: int | None, key: Any = None) -> None:
        """``key``: the BeginBlock that starts this block, whose automatic id is
        assigned on its first call and kept for the next ones (PopTorch's)."""
        if user_id is None:
            user_id = self.auto_ids.get(key) if key is not None else None
            if user_id is None:
                user_id = str(self.next_auto_id)
                self.next_auto_id += 1
                if key is not None:
                    self.auto_ids[key] = user_id
        if not isinstance(user_id, str):
            raise ArgumentTypeError(f"poptorch: block ids are strings, got {user_id!r}")
        placement = self.placements.get(user_id)
        if placement is None:
            placement = self._place(user_id, ipu_id)
            self.placements[user_id] = placement
        elif ipu_id is not None and placement.ipu != ipu_id and not self._explicit():
            raise ArgumentError(f"poptorch: block {user_id!r} was started on IPU {placement.ipu} "
                             f"and again on IPU {ipu_id}")
        self._enter(placement)

    def _enter(self, placement: BlockPlacement) -> None:
        if self.current is None:
            # Ops already traced belong to the first stage.
            first = self.first_placement()
            if self.tracer.num_ops > 0:
                self._check_order(first, placement)
                self.entered.append(first)
            self.tracer.set_block(first.block, first.stage, first.ipu, first.phase, True)
        else:
            self._check_order(self.current, placement)
        self.current = placement
        if not self.entered or self.entered[-1] != placement:
            self.entered.append(placement)
        self.tracer.set_block(placement.block, placement.stage, placement.ipu, placement.phase,
                              False)

    def _check_order(self, before: BlockPlacement, after: BlockPlacement) -> None:
        name = type(self.strategy).__name__
        if isinstance(self.strategy, _PhasedExecution):
            if after.phase < max(p.phase for p in [before, *self.entered]):
                raise ArgumentError(
                    f"poptorch: block {after.block!r} (phase {after.phase}) starts after phase "
                    f"{max(p.phase for p in [before, *self.entered])} ran: {name} runs the phases "
                    "in order, so the model must enter them in increasing phase order")
            return
        latest = max(p.stage for p in [before, *self.entered])
        if after.stage < latest:
            raise ArgumentError(
                f"poptorch: block {after.block!r} (stage {after.stage}) starts after stage "
                f"{latest} ran: {name} runs the stages in order, so the model must enter them in "
                "increasing stage order (a stage cannot consume the output of a later stage)")

    def summary(self) -> list[BlockPlacement]:
        return list(self.entered)


def _stage_order(strategy: _ExecutionStrategy, stage: Any) -> int:
    if isinstance(strategy, PipelinedExecution):
        return stage._stage_id
    return _phased_stage_ids(strategy)[id(stage)]


def _phased_stage_ids(strategy: _PhasedExecution) -> dict[int, int]:
    ids: dict[int, int] = {}
    for phase in strategy._phases:
        for stage in phase.stages:
            ids[id(stage)] = len(ids)
    return ids


def start_tracing(tracer: Any, strategy: _ExecutionStrategy | None) -> None:
    _helpers.tracing.blocks = _Tracker(tracer, strategy or PipelinedExecution())


def end_tracing() -> list[BlockPlacement]:
    tracker, _helpers.tracing.blocks = _helpers.tracing.blocks, None
    return tracker.summary() if tracker is not None else []


def _begin(user_id: str | None, ipu_id: int | None, key: Any = None) -> None:
    """A block starts here, if this thread is tracing (else blocks do nothing)."""
    tracker = _helpers.tracing.blocks
    if tracker is not None:
        tracker.begin(user_id, ipu_id, key)


def _check_ids(user_id: Any, ipu_id: Any, what: str) -> str | None:
    """``user_id`` as a block id: a str, an int >= 0 (as its decimal text) or None."""
    if isinstance(user_id, int) and not isinstance(user_id, bool) and user_id >= 0:
        user_id = str(user_id)
    if user_id is not None and not isinstance(user_id, str):
        raise ArgumentTypeError(f"poptorch.{what}: user_id must be a str, an int >= 0 or None, "
                                f"got {user_id!r}")
    if ipu_id is not None and (isinstance(ipu_id, bool) or not isinstance(ipu_id, int)
                               or ipu_id < 0):
        raise ArgumentTypeError(f"poptorch.{what}: ipu_id must be an int >= 0 or None, got {ipu_id!r}")
    return user_id


class Block:
    """``with poptorch.Block("B", ipu_id=1): ...``: the ops inside belong to block "B".

    Blocks without a ``user_id`` are numbered "0", "1", ... in the order they
    start. As with ``BeginBlock``, a block lasts until the next block starts:
    ops after the ``with`` statement stay in block "B" (going back to an
    enclosing block would run an earlier stage after a later one).
    """

    def __init__(self, user_id: str | None = None, ipu_id: int | None = None) -> None:
        self.user_id = _check_ids(user_id, ipu_id, "Block")
        self.ipu_id = ipu_id

    @staticmethod
    def useAutoId() -> None:  # noqa: N802
        """Numbers the blocks without a ``user_id`` from "0" again (call it at the start
        of ``forward``)."""
        tracker = _helpers.tracing.blocks
        if tracker is not None:
            tracker.next_auto_id = 0
            tracker.auto_ids.clear()

    def __enter__(self) -> Block:
        _begin(self.user_id, self.ipu_id)
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class _BlockHook:
    def __init__(self, user_id: str | None, ipu_id: int | None) -> None:
        self.user_id = user_id
        self.ipu_id = ipu_id

    def __call__(self, module: torch.nn.Module, args: Any) -> None:
        _begin(self.user_id, self.ipu_id, self)

    def __repr__(self) -> str:
        return f"BeginBlock(user_id={self.user_id!r}, ipu_id={self.ipu_id!r})"


def BeginBlock(module: torch.nn.Module, user_id: str | None = None,  # noqa: N802
               ipu_id: int | None = None) -> torch.nn.Module:
    """Starts a new block where ``module``'s forward starts; returns ``module``.

    The block lasts until the next block starts (PopTorch's semantics).
    """
    user_id = _check_ids(user_id, ipu_id, "BeginBlock")
    if not isinstance(module, torch.nn.Module):
        if callable(module):  # a function: PopTorch returns a callable that starts the block
            hook = _BlockHook(user_id, ipu_id)

            @functools.wraps(module)
            def begin_then_call(*args: Any, **kwargs: Any) -> Any:
                _begin(hook.user_id, hook.ipu_id, hook)
                return module(*args, **kwargs)
            return begin_then_call
        raise ArgumentTypeError("poptorch.BeginBlock expects a torch.nn.Module or a function, got "
                                f"{type(module).__name__}")
    old = getattr(module, "_poptorch_block_handle", None)
    if old is not None:
        old.remove()
    hook = _BlockHook(user_id, ipu_id)
    module._poptorch_block_handle = module.register_forward_pre_hook(hook)
    module._poptorch_block = (user_id, ipu_id)
    return module


def BlockFunction(user_id: str | None = None, ipu_id: int | None = None  # noqa: N802
                  ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: every call of the function runs inside ``Block(user_id, ipu_id)``."""
    user_id = _check_ids(user_id, ipu_id, "BlockFunction")

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with Block(user_id, ipu_id):
                return func(*args, **kwargs)

        return wrapper

    return decorate


def module_repr(m: torch.nn.Module) -> str:
    """``repr(m)`` with the blocks that ``BeginBlock`` starts (forward pre-hooks, which
    torch's repr does not show) in front of the modules they start at."""
    lines = m.extra_repr().split("\n") if m.extra_repr() else []
    extra = len(lines)
    for name, child in m._modules.items():
        text = module_repr(child).replace("\n", "\n  ") if child is not None else "None"
        lines.append(f"({name}): {text}")
    hooks = "".join(f"{hook!r} " for hook in m._forward_pre_hooks.values())
    body = ""
    if extra == 1 and len(lines) == 1:
        body = lines[0]
    elif lines:
        body = "\n  " + "\n  ".join(lines) + "\n"
    return f"{hooks}{m._get_name()}({body})"


def removeBlocks(module: torch.nn.Module) -> torch.nn.Module:  # noqa: N802
    """Removes every ``BeginBlock`` from ``module`` and its submodules; returns ``module``."""
    for m in module.modules():
        handle = m.__dict__.pop("_poptorch_block_handle", None)
        if handle is not None:
            handle.remove()
        m.__dict__.pop("_poptorch_block", None)
    return module


def check_placements(placements: list[BlockPlacement], strategy: _ExecutionStrategy,
                     device_iterations: int) -> bool:
    """PopTorch's checks of a traced model's stages; whether to pipeline them.

    With ``PipelinedExecution`` and two or more stages the compiler outlines
    each stage (``poptorch-outline-stages``) and overlaps micro-batches across
    stages (``poptorch-device-iterations{pipeline=true}``).
    """
    if not placements:
        return False
    name = type(strategy).__name__
    ipus: dict[int, int] = {}
    for p in placements:
        if ipus.setdefault(p.stage, p.ipu) != p.ipu:
            raise ArgumentError(f"poptorch: {name}: stage {p.stage} has blocks on IPU "
                             f"{ipus[p.stage]} and on IPU {p.ipu}; a stage runs on one IPU")
    stages = sorted(ipus)
    if isinstance(strategy, PipelinedExecution) and not isinstance(strategy, ShardedExecution) \
            and len(stages) > 1:
        if device_iterations < len(stages):
            raise ArgumentError(
                f"poptorch.Options().deviceIterations must be greater than or equal to the number "
                f"of pipeline stages ({len(stages)}) when using poptorch.PipelinedExecution "
                f"(it is {device_iterations})")
        return True
    return False


def warn_if_sequential(schedule: str, model: str) -> None:
    """Warns when the compiler fell back to running the stages one after another.

    ``schedule`` is what ``poptorch-device-iterations`` records on @main as
    ``poptorch.pipeline``: ``"overlapped"`` or ``"sequential: <why>"``.
    """
    import warnings

    from ._options_impl import _user_stacklevel

    prefix = "sequential: "
    if schedule.startswith(prefix):
        warnings.warn(f"poptorch: PipelinedExecution: the pipeline stages of {model} run one "
                      f"after another for each micro-batch (results are the same): "
                      f"{schedule[len(prefix):]}",
                      UserWarning, stacklevel=_user_stacklevel())
