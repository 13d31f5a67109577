"""What a fuzz model is made of: the outcomes of a model (``OUTCOMES``, ``FAILURES``), the sizes and
dtypes models draw from, the ``Chooser`` that makes and records a statement's random choices, and
the picklable records that go between the run and the workers: model specifications
(``ModelSpec``, what the minimizer edits), programs (``Program``, their source) and results
(``Result``, with ``failure_class``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

# Outcomes that make the CLI exit non-zero and the test fail. untyped_error is among them
# because every error poptorch raises must derive from poptorch.Error.
FAILURES = ("crash", "mismatch", "input_written", "timeout", "untyped_error")
OUTCOMES = ("ok", *FAILURES, "compile_error", "both_raise", "eager_error", "eager_inexact",
            "eager_undefined", "fuzzer_error")

# Sizes of input dimensions: edge cases (0, 1) and vector tails (9, 17) on purpose. Every value
# that the size shrinker maps to (1, 2, s // 2) is in the tuple, so a shrunk choice replays.
SIZES = (0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6, 6, 7, 8, 8, 9, 16, 17, 32, 33)
INPUT_DTYPES = ("float32",) * 11 + ("float64", "float16", "float16", "bfloat16", "bfloat16",
                                    "int64", "int64", "int32", "bool")
FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
ALL_DTYPES = (*FLOAT_DTYPES, "int64", "int32", "bool")
# Largest magnitude a statement may produce: beyond it, rounding differences between two correct
# implementations stop being small (float16 overflow, huge products cast to int).
LIMITS = {"float64": 1e30, "float32": 1e12, "float16": 1e4, "bfloat16": 1e4,
          "int64": 2.0 ** 50, "int32": 2.0 ** 30, "bool": 1.0}
MAX_NUMEL = 65536


def category(dtype: str) -> str:
    """'f' for floating-point, 'i' for integer, 'b' for bool dtypes."""
    return "f" if dtype in FLOAT_DTYPES else "b" if dtype == "bool" else "i"


# ---------------------------------------------------------------------------
# Recorded random choices


_MISSING = object()


class Chooser:
    """Makes one statement's random choices and records them, so that the statement can be made
    again from its record after the shapes or the statements before it changed (minimization):
    a recorded choice that is still allowed is kept, any other is drawn afresh."""

    def __init__(self, rng: random.Random, replay: Sequence[Any] = (), tags: Sequence[str] = ()) -> None:
        self.rng = rng
        self._replay = list(replay)
        self.log: list[Any] = []
        self.tags: list[str] = []

    def _old(self) -> Any:
        return self._replay.pop(0) if self._replay else _MISSING

    def _keep(self, value: T, tag: str) -> T:
        self.log.append(value)
        self.tags.append(tag)
        return value

    def choice(self, options: Sequence[T], tag: str = "") -> T:
        old = self._old()
        for option in options:
            if type(option) is type(old) and option == old:
                return self._keep(option, tag)
        return self._keep(self.rng.choice(list(options)), tag)

    def int(self, lo: int, hi: int, tag: str = "") -> int:
        old = self._old()
        if type(old) is int and lo <= old <= hi:
            return self._keep(old, tag)
        return self._keep(self.rng.randint(lo, hi), tag)

    def chance(self, p: float) -> bool:
        old = self._old()
        if type(old) is bool:
            return self._keep(old, "")
        return self._keep(self.rng.random() < p, "")

    def size(self) -> int:
        return self.choice(SIZES, tag="size")

    def count(self, hi: int) -> int:
        """A count in [0, hi]; 0 (an empty index, a zero-size piece) one time in 4*hi+1."""
        return self.choice((0,) + tuple(range(1, hi + 1)) * 4)

    def dim(self, ndim: int) -> int:
        """A dimension of a tensor of rank ``ndim``, negative half of the time (0-d: 0 or -1)."""
        n = max(ndim, 1)
        return self.int(-n, n - 1)

    def sample(self, make: Callable[[], T], valid: Callable[[Any], bool]) -> T:
        old = self._old()
        if old is not _MISSING and valid(old):
            return self._keep(old, "")
        return self._keep(make(), "")


# ---------------------------------------------------------------------------
# Model specifications (picklable, what the minimizer edits) and programs (their source)


@dataclass
class InputDef:
    name: str
    shape: tuple[int, ...]
    dtype: str
    layout: str = "contiguous"  # contiguous | transposed | stepped | expanded | alias
    dim: int = 0  # stepped: the dimension sliced with step 2
    base: tuple[int, ...] = ()  # expanded: the shape that is expanded
    alias: str = ""  # alias: the input passed again
    values: str = "randn"  # randn | specials (nan and infinities mixed in)


@dataclass
class StmtSpec:
    gen: str
    log: list[Any]
    tags: list[str]
    names: list[str]


@dataclass
class OutputSpec:
    names: list[str]
    kind: str  # single | tuple | list | dict | nested


@dataclass
class ModelSpec:
    seed: int
    index: int
    data_seed: int
    prelude: list[Any]
    prelude_tags: list[str]
    stmts: list[StmtSpec]
    outputs: OutputSpec
    cuts: list[InputDef] = field(default_factory=list)  # inputs that replace minimized-away statements


@dataclass
class Program:
    spec: ModelSpec
    source: str  # the module class and make_inputs(), exactly as the reproducer holds them
    gens: list[str]
    meta: dict[str, tuple[tuple[int, ...], str]]  # shape and dtype of each value statements define

    @property
    def name(self) -> str:
        return f"s{self.spec.seed}-m{self.spec.index}"


@dataclass
class Result:
    outcome: str
    detail: str
    program: Program | None = None
    seconds: float = 0.0


def failure_class(outcome: str, detail: str) -> str:
    """What must stay the same while a failure is minimized: the outcome and, for a mismatch,
    what differs (``mismatch/values``, ``mismatch/buffer-dtype``), for an untyped error, its type."""
    if outcome == "mismatch":
        parts = detail.split(": ")
        kind = parts[1] if len(parts) > 1 else "?"
        return f"mismatch/{'buffer-' if detail.startswith('buffer') else ''}{kind}"
    if outcome == "untyped_error":
        return f"untyped_error/{detail.split(':')[0]}"
    return outcome
