"""Ops without a lowering that are traced through their decompositions.

An aten op that the op table does not lower runs as a host kernel (PyTorch's CPU
kernel inside the program). Backward ops (``*_backward``, ``*_backward_data``: what
``trainingModel``'s gradients are made of) are first offered to torch's own
decompositions (``torch._decomp``): the ops a decomposition calls reach the device
and are captured like any other, so they are lowered, fused and outlined with the rest
of the program instead of each being a call out of it. An op without a decomposition,
or whose decomposition calls it again, still runs as a host kernel.

Some decompositions are ours: a convolution's backward (torch has none) is made of
convolutions, ``im2col`` and matmuls. Batch normalisation in training mode is
decomposed although it has a lowering (``Tracer::capture`` asks for it): eager
writes the running statistics in place, which the op's schema does not declare, and
the decomposition's writes into them are captured like any other write.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._decomp import decomposition_table

aten = torch.ops.aten


def _decomposed(name: str) -> bool:
    base = name.split("::", 1)[-1]
    return (base.endswith("_backward") or base.endswith("_backward_data")
            or base == "native_batch_norm")


def _per_dim(values: list[int], n: int) -> list[int]:
    return list(values) * n if len(values) == 1 else list(values)


def _by_group(t: torch.Tensor, n: int, groups: int, length: int) -> torch.Tensor:
    """(N, C, ...) over `length` positions as (G, C / G, N * L): per group, the
    positions of every image in one row."""
    t = t.reshape(n, groups, -1, length).permute(1, 2, 0, 3)
    return t.reshape(groups, t.shape[1], n * length)


def _convolution_backward(grad_output: torch.Tensor, input: torch.Tensor,
                          weight: torch.Tensor, bias_sizes: Any, stride: list[int],
                          padding: list[int], dilation: list[int], transposed: bool,
                          output_padding: list[int], groups: int, output_mask: list[bool]
                          ) -> tuple[torch.Tensor | None, ...] | None:
    """The gradients of a regular 1-D or 2-D convolution (any stride, padding,
    dilation and groups) from ops the compiler lowers; None for the others."""
    nd = input.dim() - 2
    if transposed or nd not in (1, 2):
        return None
    stride, padding, dilation = (_per_dim(v, nd) for v in (stride, padding, dilation))
    kernel = list(weight.shape[2:])
    cout, cig = weight.shape[0], weight.shape[1]
    cog = cout // groups
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        flipped_padding = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding, strict=True)]
        if all(s == 1 for s in stride) and min(flipped_padding) >= 0:
            # A stride-1 convolution's input gradient is a convolution of the output
            # gradient with the flipped kernel, in and out channels swapped per group.
            # (No reshapes around the transpose without groups: the transpose, the flip
            # and the convolution's own weight layout then fuse into one copy.)
            w = weight.transpose(0, 1) if groups == 1 else weight.reshape(
                groups, cog, cig, *kernel).transpose(1, 2).reshape(groups * cig, cog, *kernel)
            w = aten.flip(w, list(range(2, nd + 2)))
            grad_input = aten.convolution(grad_output, w, None, [1] * nd, flipped_padding,
                                          dilation, False, [0] * nd, groups)
        else:
            # The transposed convolution, with the output padding that gives back the
            # input's size.
            extra = [i - ((o - 1) * s - 2 * p + d * (k - 1) + 1) for i, o, s, p, d, k in zip(
                input.shape[2:], grad_output.shape[2:], stride, padding, dilation, kernel,
                strict=True)]
            grad_input = aten.convolution(grad_output, weight, None, stride, padding,
                                          dilation, True, extra, groups)
    if output_mask[1]:
        # One matmul per group over the im2col columns of the input: the kernel
        # gradient of output channel c is sum over (batch, position) of
        # grad_output[c] * the input window there.
        x = input
        k2, s2, p2, d2 = kernel, stride, padding, dilation
        if nd == 1:
            x = input.unsqueeze(2)
            k2, s2, p2, d2 = [1, *kernel], [1, *stride], [0, *padding], [1, *dilation]
        n = input.shape[0]
        cols = aten.im2col(x, k2, d2, p2, s2)  # (N, Cin * K, L)
        length = cols.shape[-1]
        rows = cols.shape[1] // groups  # Cin / G * K
        # The matmul reads its right operand row by row, so one of the three is
        # transposed in memory: the columns (go @ cols^T), or the output gradient and
        # the result ((cols @ go^T)^T), whichever moves fewer elements (the columns
        # of early layers' many positions; the kernel of late layers' many channels).
        if rows * n * length <= cog * (n * length + rows):
            grad_weight = aten.bmm(_by_group(grad_output, n, groups, length),
                                   _by_group(cols, n, groups, length).transpose(1, 2))
        elif groups == 1 and cout < length:
            # Without groups, the second form is one matmul per image, cols[n] @
            # go[n]^T, summed over the images: the columns are read as im2col lays
            # them out, where gathered into one (Cin * K, N * L) matrix they would be
            # copied once more, a larger copy than the per-image results (N x Cin * K
            # x Cout, smaller while Cout < L).
            go = grad_output.reshape(n, cout, length).transpose(1, 2)  # (N, L, Cout)
            grad_weight = aten.bmm(cols, go).sum(0).t().contiguous()
        else:
            grad_weight = aten.bmm(_by_group(cols, n, groups, length),
                                   _by_group(grad_output, n, groups, length).transpose(1, 2)
                                   ).transpose(1, 2).contiguous()
        grad_weight = grad_weight.reshape(weight.shape)
    if output_mask[2]:
        grad_bias = grad_output.sum([0, *range(2, nd + 2)])
    return grad_input, grad_weight, grad_bias


_OWN = {aten.convolution_backward.default: _convolution_backward}


def decompose(name: str, overload: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The results of ``name.overload(*args, **kwargs)`` from its decomposition, or
    None (``Tracer::setDecomposer``)."""
    if not name.startswith("aten::") or not _decomposed(name):
        return None
    packet = getattr(torch.ops.aten, name[len("aten::"):], None)
    op = getattr(packet, overload or "default", None) if packet is not None else None
    if op is None:
        return None
    outs = [a.name for a in op._schema.arguments if a.is_out]
    if outs:
        # An out= overload (grad_input=...): the functional op's decomposition,
        # written into the out tensors.
        functional = getattr(packet, "default", None)
        fn = decomposition_table.get(functional) if functional is not None else None
        if fn is None:
            return None
        with torch._C.DisableTorchFunction():
            value = fn(*args, **{k: v for k, v in kwargs.items() if k not in outs})
            values = list(value) if isinstance(value, (list, tuple)) else [value]
            targets = [kwargs[k] for k in outs]
            for target, v in zip(targets, values, strict=True):
                if target.shape != v.shape:
                    target.resize_(v.shape)
                target.copy_(v)
        return targets[0] if len(targets) == 1 else tuple(targets)
    fn = _OWN.get(op) or decomposition_table.get(op)
    if fn is None:
        return None
    with torch._C.DisableTorchFunction():
        out = fn(*args, **kwargs)
    return tuple(out) if isinstance(out, list) else out
