"""Shape functions for aten ops that torch registers no Meta kernel for.

The tracer infers every captured op's result shapes and dtypes by running it
on Meta tensors; an aten op without a Meta kernel cannot be captured until
it has one. They are registered here, once, when poptorch is imported.
"""

from __future__ import annotations

import torch

_LIB = torch.library.Library("aten", "IMPL")


def _aminmax(self: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # The deprecated all-elements form of aminmax: two 0-dim results.
    return self.new_empty(()), self.new_empty(())


def _aminmax_dim(self: torch.Tensor, dim: int, keepdim: bool = False
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    shape = list(self.shape)
    if shape:
        d = dim % len(shape)
        if keepdim:
            shape[d] = 1
        else:
            del shape[d]
    return self.new_empty(shape), self.new_empty(shape)


for _name, _fn in (("_aminmax", _aminmax), ("_aminmax.dim", _aminmax_dim)):
    if not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{_name}", "Meta"):
        _LIB.impl(_name, _fn, "Meta")
