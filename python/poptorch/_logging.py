"""poptorch's logger, configured like PopTorch's: POPTORCH_LOG_LEVEL or setLogLevel().

Levels: OFF, ERR, WARN, INFO, DEBUG, TRACE. At TRACE the C++ tracer sends one
line per intercepted aten op (inputs and outputs with their value ids, dtypes
and shapes) through the same logger, and the module after every pass is
logged; at INFO each compile logs its lowered module once and a timing
report. ``POPTORCH_TRACE_OPS=1`` (the old switch) means TRACE.
"""

from __future__ import annotations

import logging
import os

from .errors import ArgumentError

logger = logging.getLogger("poptorch")

TRACE = logging.DEBUG - 5
logging.addLevelName(TRACE, "TRACE")

_LEVELS = {
    "OFF": logging.CRITICAL + 10,
    "ERR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
}


def _trace_sink(line: str) -> None:
    logger.log(TRACE, "%s", line)


def _sync_trace_sink() -> None:
    """The C++ tracer formats its per-op lines only while TRACE is enabled."""
    from . import _C

    _C.set_trace_sink(_trace_sink if logger.isEnabledFor(TRACE) else None)


def setLogLevel(level: str | int) -> None:  # noqa: N802 (PopTorch's name)
    """Sets the poptorch log level: OFF, ERR, WARN, INFO, DEBUG or TRACE."""
    if isinstance(level, str):
        if level.upper() not in _LEVELS:
            raise ArgumentError(f"poptorch: unknown log level {level!r}; use one of {list(_LEVELS)}")
        level = _LEVELS[level.upper()]
    logger.setLevel(level)
    _sync_trace_sink()


def trace_enabled() -> bool:
    return logger.isEnabledFor(TRACE)


if not logger.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("[poptorch:%(levelname)s] %(message)s"))
    logger.addHandler(_handler)
    logger.propagate = False


def _initial_level() -> str:
    if os.environ.get("POPTORCH_TRACE_OPS", "") not in ("", "0"):
        return "TRACE"
    return os.environ.get("POPTORCH_LOG_LEVEL", "WARN")


setLogLevel(_initial_level())
