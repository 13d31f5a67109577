"""PopTorch's exception classes.

Every error poptorch raises derives from :class:`Error` (PopTorch's
``poptorch.Error``), so ``except poptorch.Error`` catches all of them. The
concrete classes also derive from the builtin exception that describes them
(``ValueError`` for a bad argument, ``TypeError`` for one of the wrong type,
``RuntimeError`` for failures while tracing, compiling or running), so code
that catches the builtin keeps working.

``RecoverableError`` and ``UnrecoverableError`` keep PopTorch's meaning: the
first is an error after which the process can go on (``recovery_action`` says
what to do first), the second one after which it should not (here: an LLVM or
MLIR fatal error, after which the compiler's state is unknown).
"""

from __future__ import annotations

import re

__all__ = [
    "ArgumentError",
    "ArgumentIndexError",
    "ArgumentTypeError",
    "CompileError",
    "Error",
    "GuardFailedError",
    "InternalError",
    "RecoverableError",
    "StateError",
    "TraceError",
    "UnrecoverableError",
    "UnsupportedOpError",
]

_LOCATION = re.compile(r" at ([^\s:]+:\d+)")


class Error(Exception):
    """The base class of every poptorch error.

    ``message`` is the text, ``type`` the error's category (``"trace"``,
    ``"compile"``, ``"argument"``, ...) and ``location`` the user's source
    line the error is about (``file:line``), or ``""`` when none applies.
    """

    type = "poptorch"

    def __init__(self, message: str = "", *, location: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if location is None:
            found = _LOCATION.search(message)
            location = found.group(1) if found else ""
        self.location = location


class RecoverableError(Error):
    """An error after which the process can go on once ``recovery_action`` is taken."""

    type = "recoverable"
    recovery_action = "NONE"


class UnrecoverableError(Error):
    """An error after which the process should stop: the compiler's state is unknown."""

    type = "unrecoverable"


class ArgumentError(Error, ValueError):
    """A value passed to a poptorch function or option is not valid."""

    type = "argument"


class ArgumentTypeError(Error, TypeError):
    """A value passed to a poptorch function or option has the wrong type."""

    type = "argument_type"


class ArgumentIndexError(Error, IndexError):
    """An index or dimension passed to a poptorch function is out of range."""

    type = "argument"


class GuardFailedError(ArgumentError):
    """The inputs of a call give another value than the one the program was specialised on.

    A value the model read while tracing (``Tensor.item()``, ``bool(t)``, ``.tolist()``)
    is baked into the program, which checks it on every call. ``poptorch.inferenceModel``
    then runs (or compiles) the variant for the new value; a program from
    ``poptorch.trace(...).compile()`` raises this error: trace it again for these inputs.
    ``guard`` describes the value (``what``, ``location``, ``expected``), ``observed`` is
    what these inputs give.
    """

    type = "guard"

    def __init__(self, message: str, guard: object, observed: object) -> None:
        super().__init__(message)
        self.guard = guard
        self.observed = observed


class InternalError(Error, RuntimeError):
    """A poptorch bug: an invariant of its own code does not hold. Please report it."""

    type = "internal"


class StateError(Error, RuntimeError):
    """The object is not in a state that allows the call (not compiled, detached, ...)."""

    type = "state"


class TraceError(Error, RuntimeError):
    """Tracing the model failed: an op, a value read or a structure poptorch cannot capture."""

    type = "trace"


class UnsupportedOpError(TraceError):
    """The model uses ops that poptorch cannot capture; the message lists all of them."""

    type = "unsupported_op"


class CompileError(Error, RuntimeError):
    """A pass of the compile pipeline, or the JIT, failed on the captured program."""

    type = "compile"


def from_runtime_error(e: RuntimeError) -> Error:
    """The poptorch error a RuntimeError raised while tracing stands for.

    The tracer throws from inside torch's dispatcher, which turns every C++
    exception into a plain RuntimeError on its way to Python. torch's own
    checks on the ipu tensors of the trace (a device mismatch, say) arrive
    the same way: both are failures to trace the model, and keep their text.
    """
    if isinstance(e, Error):
        return e
    text = str(e)
    cls = UnsupportedOpError if "unsupported operation" in text.split("\n", 1)[0] \
        else TraceError
    return cls(text)
