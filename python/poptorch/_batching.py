"""How one call's batch is split over device iterations and replicas, and how outputs come back.

PopTorch's contract: a call's input batch holds ``deviceIterations x
replicationFactor`` micro-batches, laid out ``[iteration][replica][micro-batch]``
along dimension 0 (PopART's step layout). The model is traced for one
micro-batch; the compiled program loops over the iterations itself
(``poptorch-device-iterations``, the Poplar ``Repeat`` analog) and each replica
is one invocation of it on its own thread. Outputs follow ``outputMode``:

- ``All`` (the inference default): every iteration's output, ``[D * R * b, ...]``
- ``EveryN(N)``: every N-th iteration's, ``[D / N * R * b, ...]``
- ``Final``: the last iteration's, ``[R * b, ...]``
- ``Sum``: the sum over the iterations, ``[R * b, ...]``

where ``b`` is the first dimension of the per-micro-batch output. A 0-dim
output gains one dimension of size ``D / N * R`` (or ``R``) when that is not 1.

``inputReplicaGrouping(G, type)`` makes the replicas of a group of ``G`` read the
same input slice: a call's input then holds ``D x R / G`` micro-batches, laid out
``[iteration][group][micro-batch]``. ``Consecutive`` groups replicas
``{0..G-1}, {G..2G-1}, ...``; ``Orthogonal`` groups replicas that stride across
the order, ``{0, R/G, 2R/G, ...}, {1, R/G + 1, ...}, ...`` (PopART's CommGroup).
Outputs stay per replica.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch

from .enums import CommGroupType, OutputMode
from .errors import ArgumentError


@dataclasses.dataclass(frozen=True)
class Batching:
    iterations: int = 1
    replicas: int = 1
    mode: OutputMode = OutputMode.All
    period: int = 1  # keep every period-th iteration's outputs (All: 1, Final: iterations)
    # The input slice (group) each replica reads: (0, 1, ..., R-1) without input groups.
    replica_slices: tuple[int, ...] = (0,)

    @staticmethod
    def from_options(options: Any) -> Batching:
        training = options._values.get("training", False)
        # A training call consumes gradientAccumulation micro-batches per iteration.
        d = options.device_iterations * (options.Training.gradient_accumulation if training
                                         else 1)
        r = options.replication_factor
        mode = options._values["output_mode"]
        if mode == OutputMode.Default:
            # PopTorch's defaults: every micro-batch's outputs for inference, the last
            # one's for training.
            mode = OutputMode.Final if training else OutputMode.All
        period = {OutputMode.All: 1, OutputMode.Sum: 1, OutputMode.Final: d,
                  OutputMode.EveryN: options._values["output_return_period"]}[mode]
        if d % period != 0:
            raise ArgumentError(
                f"poptorch: outputMode(OutputMode.EveryN, {period}) needs deviceIterations "
                f"({d}) to be a multiple of the output return period ({period})")
        return Batching(d, r, mode, period, replica_slices(options))

    @property
    def slices(self) -> int:
        """Distinct input slices per iteration: one per replica, or per input group."""
        return max(self.replica_slices) + 1

    @property
    def factor(self) -> int:
        """How many micro-batches one call's input batch holds."""
        return self.iterations * self.slices

    @property
    def looped(self) -> bool:
        """Whether the program has the device-iteration loop (and batched inputs)."""
        return self.iterations * self.replicas > 1

    @property
    def kept(self) -> int:
        """Outputs kept per replica and call."""
        return 1 if self.mode == OutputMode.Sum else self.iterations // self.period

    def device_loop(self, pipeline: bool = False) -> str:
        """The pass that builds the loop, for ``_C.Program.compile``.

        ``pipeline``: overlap the stages that ``poptorch-outline-stages``
        outlined (PipelinedExecution with two or more stages).
        """
        if not self.looped:
            return ""
        return (f"poptorch-device-iterations{{iterations={self.iterations} "
                f"replicas={self.replicas} period={self.period} "
                f"sum={'true' if self.mode == OutputMode.Sum else 'false'}"
                f"{' pipeline=true' if pipeline else ''}}}")

    # ---- inputs
    def check_inputs(self, tensors: Sequence[torch.Tensor], names: Sequence[str]) -> None:
        """PopTorch's errors for inputs that cannot be split into micro-batches."""
        if not self.looped:
            return
        for t, name in zip(tensors, names, strict=True):
            if t.dim() == 0:
                raise ArgumentError(
                    f"poptorch: {name} is 0-dim, but with deviceIterations({self.iterations}) "
                    f"and replicationFactor({self.replicas}) every input is split into "
                    f"{self.factor} micro-batches along dimension 0")
            if t.shape[0] % self.factor != 0:
                grouped = "" if self.slices == self.replicas else \
                    f" / input group size({self.replicas // self.slices})"
                raise ArgumentError(
                    f"Invalid batch dimension: In the input {name}, the batch dimension "
                    f"({t.shape[0]}) must be a multiple of Options().deviceIterations"
                    f"({self.iterations}) * Options().replicationFactor({self.replicas})"
                    f"{grouped} = {self.factor}")

    def micro_batch(self, x: Any) -> Any:
        """The first micro-batch of a call's tensor (what the model is traced with)."""
        if not self.looped or not isinstance(x, torch.Tensor):
            return x
        return x[: x.shape[0] // self.factor]

    def full_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A call's input shape for a traced micro-batch input shape."""
        if not self.looped:
            return shape
        return (shape[0] * self.factor, *shape[1:])

    def input_slices(self, x: torch.Tensor) -> torch.Tensor:
        """[D * S * b, ...] -> [D, S, b, ...]: a call's input per iteration and slice
        (a view of a contiguous input; S is the number of replicas or input groups)."""
        return x.reshape(self.iterations, self.slices, -1, *x.shape[1:])

    def split_input(self, x: torch.Tensor) -> torch.Tensor:
        """[D * S * b, ...] -> [D, R, b, ...]: what the program reads, replica r's slice
        at [:, r] (a view without input groups, a copy with them)."""
        per_slice = self.input_slices(x)
        if self.slices == self.replicas:
            return per_slice
        return per_slice.index_select(1, torch.tensor(self.replica_slices))

    # ---- outputs
    def result_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The per-replica program result for a micro-batch output shape."""
        if not self.looped or self.mode == OutputMode.Sum:
            return shape
        return (self.kept, *shape)

    def combine(self, per_replica: list[torch.Tensor], shape: tuple[int, ...]) -> torch.Tensor:
        """The user-visible output from each replica's program result."""
        if self.replicas == 1:
            stacked = per_replica[0]
        elif self.mode == OutputMode.Sum:
            stacked = torch.stack(per_replica, 0)
        else:  # [K, S] per replica -> [K, R, S]: iteration-major, then replica
            stacked = torch.stack(per_replica, 1)
        n = self.kept * self.replicas
        if len(shape) == 0:
            return stacked.reshape((n,) if n > 1 else ())
        return stacked.reshape(n * shape[0], *shape[1:])


def replica_slices(options: Any) -> tuple[int, ...]:
    """The input slice each replica reads under ``options.inputReplicaGrouping``."""
    r = options.replication_factor
    size = options._values["input_group_size"]
    if not size or size == 1:
        return tuple(range(r))
    if r % size != 0:
        raise ArgumentError(
            f"poptorch: inputReplicaGrouping({size}, ...) needs replicationFactor ({r}) to be a "
            f"multiple of the input group size ({size})")
    groups = r // size
    if options._values["input_group_type"] == CommGroupType.Orthogonal:
        return tuple(rep % groups for rep in range(r))
    return tuple(rep // size for rep in range(r))  # Consecutive


def micro_batch_call(batching: Batching, args: Sequence[Any],
                     kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Checks a call's inputs and returns its first micro-batch (what is traced)."""
    import torch.utils._pytree as pytree

    leaves = pytree.tree_leaves((tuple(args), dict(kwargs)))
    tensors = [(i, x) for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    batching.check_inputs([x for _, x in tensors], [f"input {i}" for i, _ in tensors])
    return pytree.tree_map(batching.micro_batch, (tuple(args), dict(kwargs)))
