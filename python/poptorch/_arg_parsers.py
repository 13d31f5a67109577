"""PopTorch's custom argument parsers: how the tensors inside a model's input (or
output) objects of a given type are found and the object made again around other
tensors (``poptorch.ICustomArgParser``, ``poptorch.registerCustomArgParser``).

Objects of a type without a parser are opened generically: their tensors are those
in their attributes, lists, tuples and dicts, and the object is made again as a copy
(``_tracing._tensors_held_by`` and ``_Rebuild``).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from typing import Any

import torch

from .errors import ArgumentTypeError


class ICustomArgParser(abc.ABC):
    """Finds the tensors of objects of one type and makes such objects again."""

    @abc.abstractmethod
    def yieldTensors(self, struct: Any) -> Iterable[torch.Tensor]:  # noqa: N802
        """Yields the tensors ``struct`` holds, always in the same order."""

    @abc.abstractmethod
    def reconstruct(self, original_structure: Any, tensor_iterator: Iterator[torch.Tensor]) -> Any:
        """An object like ``original_structure`` holding the next tensors of
        ``tensor_iterator`` where it held those ``yieldTensors`` yields."""


_PARSERS: dict[type, ICustomArgParser] = {}


def registerCustomArgParser(data_type: type, parser: ICustomArgParser) -> None:  # noqa: N802
    """Makes ``parser`` find the tensors of ``data_type`` objects (and its subclasses')
    among a model's inputs and outputs."""
    if not isinstance(data_type, type):
        raise ArgumentTypeError(f"poptorch.registerCustomArgParser: data_type must be a type, "
                                f"got {data_type!r}")
    if not isinstance(parser, ICustomArgParser):
        raise ArgumentTypeError("poptorch.registerCustomArgParser: parser must be an "
                                f"ICustomArgParser, got {type(parser).__name__}")
    _PARSERS[data_type] = parser


def parser_for(obj: Any) -> ICustomArgParser | None:
    """The parser registered for ``obj``'s type or its nearest base class."""
    if not _PARSERS:
        return None
    for cls in type(obj).__mro__:
        parser = _PARSERS.get(cls)
        if parser is not None:
            return parser
    return None
