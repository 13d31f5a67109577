"""poptorch.Options: PopTorch's options object.

This is the spine's subset; every setter either takes effect or warns once
that it is accepted but not honoured on this device.
"""

from __future__ import annotations

import copy
import hashlib
import os
import warnings
from typing import Any

_warned: set[str] = set()


def _not_honoured(name: str, why: str) -> None:
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"poptorch: option {name} is accepted but not honoured: {why}",
                      stacklevel=3)


class Options:
    """Options of a poptorch model (``poptorch.Options()`` in PopTorch)."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "device_iterations": 1,
            "replication_factor": 1,
            "random_seed": None,
            "executable_cache_dir": None,
            "mlir_dump_dir": os.environ.get("POPTORCH_MLIR_DUMP_DIR") or None,
            "source_location_excludes": [],
        }

    # ---- PopTorch setters (each returns self, so calls chain)
    def deviceIterations(self, device_iterations: int) -> "Options":  # noqa: N802
        if int(device_iterations) < 1:
            raise ValueError("poptorch: deviceIterations must be >= 1")
        if device_iterations != 1:
            _not_honoured("deviceIterations", "the device-iteration loop is not implemented "
                          "yet; each call runs one iteration on the whole batch")
        self._values["device_iterations"] = int(device_iterations)
        return self

    def replicationFactor(self, replication_factor: int) -> "Options":  # noqa: N802
        if int(replication_factor) < 1:
            raise ValueError("poptorch: replicationFactor must be >= 1")
        if replication_factor != 1:
            _not_honoured("replicationFactor", "replication is not implemented yet; the "
                          "model runs once on the whole batch")
        self._values["replication_factor"] = int(replication_factor)
        return self

    def randomSeed(self, random_seed: int) -> "Options":  # noqa: N802
        self._values["random_seed"] = int(random_seed)
        return self

    def enableExecutableCaching(self, path: str) -> "Options":  # noqa: N802
        _not_honoured("enableExecutableCaching", "the executable cache is not implemented yet")
        self._values["executable_cache_dir"] = path
        return self

    def sourceLocationExcludes(self, excludes: list[str]) -> "Options":  # noqa: N802
        self._values["source_location_excludes"] = list(excludes)
        return self

    def appendToLocationExcludes(self, *excludes: str) -> "Options":  # noqa: N802
        self._values["source_location_excludes"].extend(excludes)
        return self

    def dumpMLIR(self, directory: str | None) -> "Options":  # noqa: N802
        """Write the module after every pipeline stage to ``directory`` (poptorch extension)."""
        self._values["mlir_dump_dir"] = directory
        return self

    # ---- accessors
    @property
    def device_iterations(self) -> int:
        return self._values["device_iterations"]

    @property
    def replication_factor(self) -> int:
        return self._values["replication_factor"]

    def toDict(self) -> dict[str, Any]:  # noqa: N802
        return copy.deepcopy(self._values)

    def clone(self) -> "Options":
        other = Options()
        other._values = copy.deepcopy(self._values)
        return other

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items()))
        return f"Options({body})"

    def _dump_dir_for(self, graph: Any) -> str:
        root = self._values["mlir_dump_dir"]
        if not root:
            return ""
        digest = hashlib.sha256(graph.mlir.encode()).hexdigest()[:10]
        return os.path.join(root, f"model-{digest}")
