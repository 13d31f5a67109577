"""Ops without a lowering that are traced through their decompositions.

An aten op that the op table does not lower runs as a host kernel (PyTorch's CPU
kernel inside the program). Backward ops (``*_backward``, ``*_backward_data``: what
``trainingModel``'s gradients are made of) are first offered to torch's own
decompositions (``torch._decomp``): the ops a decomposition calls reach the device
and are captured like any other, so they are lowered, fused and outlined with the rest
of the program instead of each being a call out of it. An op without a decomposition,
or whose decomposition calls it again, still runs as a host kernel.

Some decompositions are ours: a convolution's backward (torch has none) is made of
convolutions, ``im2col`` and matmuls; its input gradient is one stride-1 convolution
per phase of the stride. Two ops are decomposed although they have a lowering
(``Tracer::capture`` asks for it): batch normalisation in training mode, because eager
writes the running statistics in place, which the op's schema does not declare (the
decomposition's writes into them are captured like any other write); and 1-D and 2-D
transposed convolutions, which are the same phases, where the lowering would multiply
a zero-interleaved input by the whole kernel.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import torch
from torch._decomp import decomposition_table

aten = torch.ops.aten


def _decomposed(name: str) -> bool:
    base = name.split("::", 1)[-1]
    return (base.endswith("_backward") or base.endswith("_backward_data")
            or base in ("native_batch_norm", "convolution"))


def _per_dim(values: list[int], n: int) -> list[int]:
    return list(values) * n if len(values) == 1 else list(values)


def _by_group(t: torch.Tensor, n: int, groups: int, length: int) -> torch.Tensor:
    """(N, C, ...) over `length` positions as (G, C / G, N * L): per group, the
    positions of every image in one row."""
    t = t.reshape(n, groups, -1, length).permute(1, 2, 0, 3)
    return t.reshape(groups, t.shape[1], n * length)


def _crop(t: torch.Tensor, starts: list[int], sizes: list[int]) -> torch.Tensor:
    """`t`'s trailing dims from `starts`, `sizes` long (a view)."""
    lead = [slice(None)] * (t.dim() - len(sizes))
    return t[(*lead, *(slice(a, a + n) for a, n in zip(starts, sizes, strict=True)))]


def _convolution_backward(grad_output: torch.Tensor, input: torch.Tensor,
                          weight: torch.Tensor, bias_sizes: Any, stride: list[int],
                          padding: list[int], dilation: list[int], transposed: bool,
                          output_padding: list[int], groups: int, output_mask: list[bool]
                          ) -> tuple[torch.Tensor | None, ...] | None:
    """The gradients of a 1-D or 2-D convolution, regular or transposed (any stride,
    padding, dilation and groups) from ops the compiler lowers; None for the others.

    A transposed convolution is the input gradient of the regular convolution with its
    weight, so its input gradient is that regular convolution of grad_output, and its
    weight gradient the regular one's with the roles of input and grad_output swapped."""
    nd = input.dim() - 2
    if nd not in (1, 2) or weight.dim() != nd + 2:
        return None
    stride, padding, dilation = (_per_dim(v, nd) for v in (stride, padding, dilation))
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if transposed:
            grad_input = aten.convolution(grad_output, weight, None, stride, padding,
                                          dilation, False, [0] * nd, groups)
            if grad_input.shape[2:] != input.shape[2:]:  # output padding of a window more
                grad_input = _crop(grad_input, [0] * nd, list(input.shape[2:]))
        else:
            grad_input = _input_gradient(grad_output, weight, list(input.shape[2:]), stride,
                                         padding, dilation, groups)
    if output_mask[1]:
        x, go = (grad_output, input) if transposed else (input, grad_output)
        grad_weight = _weight_gradient(go, x, weight, stride, padding, dilation, groups)
    if output_mask[2]:
        grad_bias = grad_output.sum([0, *range(2, nd + 2)])
    return grad_input, grad_weight, grad_bias


def _weight_gradient(grad_output: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                     stride: list[int], padding: list[int], dilation: list[int],
                     groups: int) -> torch.Tensor:
    """The kernel gradient of a regular convolution: one matmul per group over the
    im2col columns of the input, the gradient of output channel c being the sum over
    (batch, position) of grad_output[c] * the input window there."""
    nd = input.dim() - 2
    kernel = list(weight.shape[2:])
    cout = weight.shape[0]
    cog = cout // groups
    x = input
    k2, s2, p2, d2 = kernel, stride, padding, dilation
    if nd == 1:
        x = input.unsqueeze(2)
        k2, s2, p2, d2 = [1, *kernel], [1, *stride], [0, *padding], [1, *dilation]
    n = input.shape[0]
    cols = aten.im2col(x, k2, d2, p2, s2)  # (N, Cin * K, L)
    windows = [(i + 2 * p - d * (k - 1) - 1) // s + 1
               for i, k, s, p, d in zip(x.shape[2:], k2, s2, p2, d2, strict=True)]
    wanted = [1, *grad_output.shape[2:]] if nd == 1 else list(grad_output.shape[2:])
    if windows != wanted:
        # More windows than grad_output has positions: the input was a transposed
        # convolution's grad_output, whose output padding reaches past the last window
        # its input needs.
        cols = _crop(cols.reshape(n, cols.shape[1], *windows), [0] * len(wanted),
                     wanted).reshape(n, cols.shape[1], -1)
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
    return grad_weight.reshape(weight.shape)


def _input_gradient(grad_output: torch.Tensor, weight: torch.Tensor, size: list[int],
                    stride: list[int], padding: list[int], dilation: list[int],
                    groups: int) -> torch.Tensor:
    """The input gradient of a regular convolution, as stride-1 convolutions of the
    output gradient: one per phase of the stride (the input positions i with the same
    i mod stride in every dim), each with the kernel taps that reach those positions,
    flipped, in and out channels swapped per group. A stride-1 convolution is one
    phase with the whole kernel. The phases are interleaved into the input's shape.

    In one dim, input position i = q * s + r receives grad_output[o] * w[k] wherever
    o * s - p + k * d = i: the taps k with (r + p - k * d) divisible by s, every
    s / gcd(d, s)-th one, at o = q + (r + p - k * d) / s. Per phase, that is a
    correlation of grad_output (padded or cropped) with those taps reversed, at
    dilation d / gcd(d, s). No multiplication by an inserted zero, as the transposed
    convolution of the whole kernel would do (3/4 of its products at stride 2)."""
    nd = len(size)
    kernel = list(weight.shape[2:])
    cout, cig = weight.shape[0], weight.shape[1]
    cog = cout // groups
    # (No reshapes around the transpose without groups: the transpose, the flip and the
    # convolution's own weight layout then fuse into one copy.)
    w = weight.transpose(0, 1) if groups == 1 else weight.reshape(
        groups, cog, cig, *kernel).transpose(1, 2).reshape(groups * cig, cog, *kernel)
    outs = list(grad_output.shape[2:])
    # Positions per phase: the longest phase's count; shorter phases are cut after
    # the interleave.
    qmax = [-(-i // s) for i, s in zip(size, stride, strict=True)]
    # Per phase and dim: the taps, and grad_output's padding before and after them
    # (negative: cropped); None where no tap reaches the phase.
    dils = [d // math.gcd(d, s) for d, s in zip(dilation, stride, strict=True)]
    plans = []
    for rs in itertools.product(*(range(s) for s in stride)):
        plan = []
        for r, s, p, d, d2, k, o, q in zip(rs, stride, padding, dilation, dils, kernel, outs,
                                           qmax, strict=True):
            step = s // math.gcd(d, s)
            first = next((t for t in range(min(step, k)) if (r + p - t * d) % s == 0), None)
            if first is None:
                break
            count = (k - 1 - first) // step + 1
            e0 = (r + p - first * d) // s  # grad_output offset of the first tap
            reach = (count - 1) * d2
            if e0 - reach >= o or q - 1 + e0 < 0:
                break  # every tap of this phase lands outside grad_output
            plan.append((slice(first, first + (count - 1) * step + 1, step),
                         reach - e0, q + e0 - o))
        plans.append(plan if len(plan) == nd else None)
    # Every phase's convolution pads grad_output alike, as much as the most any phase
    # needs, and its result is cropped: the convolutions then share one padded
    # (channels-last) copy of it.
    common = [max([0] + [max(lo, hi) for plan in plans if plan for lo, hi in [plan[t][1:]]])
              for t in range(nd)]
    phases = []
    for plan in plans:
        if plan is None:
            phases.append(grad_output.new_zeros([grad_output.shape[0], groups * cig, *qmax]))
            continue
        sub = aten.flip(w[(slice(None), slice(None), *(t[0] for t in plan))],
                        list(range(2, nd + 2)))
        y = aten.convolution(grad_output, sub, None, [1] * nd, common, dils, False,
                             [0] * nd, groups)
        crop = [c - t[1] for c, t in zip(common, plan, strict=True)]
        if any(crop) or list(y.shape[2:]) != qmax:
            y = _crop(y, crop, qmax)
        phases.append(y)
    if len(phases) == 1:
        grad = phases[0]
    else:
        # (s_0, .., N, C, q_0, ..) -> (N, C, q_0, s_0, q_1, s_1, ..) -> (N, C, q_0 * s_0, ..)
        n, c = grad_output.shape[0], groups * cig
        grad = torch.stack(phases).reshape(*stride, n, c, *qmax)
        order = [nd, nd + 1] + [i for t in range(nd) for i in (nd + 2 + t, t)]
        grad = grad.permute(order).reshape(n, c, *(q * s for q, s in zip(qmax, stride,
                                                                         strict=True)))
    if list(grad.shape[2:]) != size:
        grad = _crop(grad, [0] * nd, size)
    return grad


def _transposed_convolution(input: torch.Tensor, weight: torch.Tensor,
                            bias: torch.Tensor | None, stride: list[int], padding: list[int],
                            dilation: list[int], transposed: bool, output_padding: list[int],
                            groups: int) -> torch.Tensor | None:
    """A transposed 1-D or 2-D convolution: the input gradient of the regular
    convolution whose weight it takes, computed by phases (`_input_gradient`); None
    (the op is lowered as it is) for the others and for shapes the op would refuse."""
    nd = weight.dim() - 2
    if not transposed or nd not in (1, 2) or input.dim() != nd + 2 or input.numel() == 0:
        return None
    stride, padding, dilation, output_padding = (
        _per_dim(v, nd) for v in (stride, padding, dilation, output_padding))
    if any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation, strict=True)):
        return None
    size = [(i - 1) * s - 2 * p + d * (k - 1) + o + 1 for i, s, p, d, k, o in zip(
        input.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding,
        strict=True)]
    if min(size) <= 0 or input.shape[1] != weight.shape[0]:
        return None
    out = _input_gradient(input, weight, size, stride, padding, dilation, groups)
    return out if bias is None else out + bias.reshape(-1, *[1] * nd)


_OWN = {aten.convolution_backward.default: _convolution_backward,
        aten.convolution.default: _transposed_convolution}


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
