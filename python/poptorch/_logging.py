"""poptorch's logger, configured like PopTorch's: POPTORCH_LOG_LEVEL or setLogLevel()."""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("poptorch")

_LEVELS = {
    "OFF": logging.CRITICAL + 10,
    "ERR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": logging.DEBUG - 5,
}


def setLogLevel(level: str | int) -> None:
    """Sets the poptorch log level: OFF, ERR, WARN, INFO, DEBUG or TRACE."""
    if isinstance(level, str):
        if level.upper() not in _LEVELS:
            raise ValueError(f"poptorch: unknown log level {level!r}; use one of {list(_LEVELS)}")
        level = _LEVELS[level.upper()]
    logger.setLevel(level)


if not logger.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("[poptorch:%(levelname)s] %(message)s"))
    logger.addHandler(_handler)
    logger.propagate = False
setLogLevel(os.environ.get("POPTORCH_LOG_LEVEL", "WARN"))
