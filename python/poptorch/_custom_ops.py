"""PopTorch's custom ops and its ops without a PyTorch equivalent.

- ``custom_op(inputs, name, domain, domain_version, example_outputs, attributes)``:
  PopTorch ran a PopART C++ op here. Here the op is a PyTorch function registered with
  :func:`register_custom_op` (traced into the program like model code, or run on the
  host inside the program with ``host=True``), or an operator ``torch.ops.<domain>.<name>``
  registered with ``torch.library`` (a C++ or Python kernel; one without a lowering runs
  as a host kernel, see docs/ops.md).
- ``ctc_beam_search_decoder`` and ``fps`` (farthest point sampling): operators
  ``poptorch::ctc_beam_search_decoder`` and ``poptorch::fps`` with CPU and Meta kernels;
  in a compiled model they run as host kernels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ._helpers import tracing
from ._host_calls import CPU
from .errors import ArgumentError, ArgumentTypeError

_LIB = torch.library.Library("poptorch", "FRAGMENT")

# (domain, name, domain_version) -> (function, whether it runs on the host)
_CUSTOM_OPS: dict[tuple[str, str, int], tuple[Callable[..., Any], bool]] = {}


def register_custom_op(name: str, domain: str, domain_version: int = 1, *,
                       host: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``fn`` implements ``poptorch.custom_op(..., name, domain,
    domain_version, ...)``. It is called as ``fn(*inputs, **attributes)`` and returns a
    tensor or a sequence of tensors.

    By default ``fn`` is traced like model code (its torch ops are compiled into the
    program). With ``host=True`` it runs on the host inside the program, on CPU tensors,
    like ``poptorch.CPU`` (for code that cannot be traced: numpy, other libraries).
    """
    if not isinstance(name, str) or not isinstance(domain, str):
        raise ArgumentTypeError("poptorch.register_custom_op: name and domain must be strings")
    if isinstance(domain_version, bool) or not isinstance(domain_version, int):
        raise ArgumentTypeError("poptorch.register_custom_op: domain_version must be an int")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise ArgumentTypeError("poptorch.register_custom_op: the implementation must be "
                                    "callable")
        _CUSTOM_OPS[(domain, name, domain_version)] = (fn, host)
        return fn

    return register


def _check_attributes(attributes: dict[str, Any]) -> None:
    # PopTorch's checks (its attributes went to C++ PopART ops).
    for key, value in attributes.items():
        if not isinstance(key, str):
            raise ValueError("All attribute keys must be strings.")
        if not isinstance(value, (float, int, str, list, tuple)):
            raise ValueError("Attribute values must be floats, ints, strings or a list/tuple of "
                             "float, ints of strings.")
        if isinstance(value, (list, tuple)):
            for element in value:
                if not isinstance(element, type(value[0])):
                    raise ValueError("The types in a list/tuple attribute must all be the same.")

    def ascii_only(v: Any) -> None:
        if isinstance(v, (list, tuple)):
            for e in v:
                ascii_only(e)
        elif isinstance(v, str) and any(ord(ch) >= 128 for ch in v):
            raise ValueError(f"{v} contains non-ASCII characters.")

    for key, value in attributes.items():
        ascii_only(key)
        ascii_only(value)


def _torch_operator(domain: str, name: str) -> Any:
    if not domain.isidentifier() or not name.isidentifier():
        return None
    try:
        return getattr(getattr(torch.ops, domain), name)
    except (AttributeError, RuntimeError):
        return None


def _type_text(t: torch.Tensor) -> str:
    return f"{t.dtype} {list(t.shape)}"


def custom_op(inputs: Sequence[torch.Tensor], name: str, domain: str, domain_version: int,
              example_outputs: Sequence[torch.Tensor],
              attributes: dict[str, Any] | None = None) -> list[torch.Tensor]:
    """PopTorch's custom_op: applies the op ``domain::name`` (version ``domain_version``)
    to ``inputs``; returns its outputs as a list, which must match ``example_outputs`` in
    number, shapes and dtypes. ``attributes`` are passed as keyword arguments.

    The op is the function registered with :func:`register_custom_op` for
    ``(name, domain, domain_version)``, else the operator ``torch.ops.<domain>.<name>``.
    """
    if isinstance(inputs, torch.Tensor) or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise ArgumentTypeError("poptorch.custom_op: inputs must be a tuple or list of tensors")
    if isinstance(example_outputs, torch.Tensor) or not all(
            isinstance(t, torch.Tensor) for t in example_outputs):
        raise ArgumentTypeError("poptorch.custom_op: example_outputs must be a tuple or list of "
                                "tensors")
    attributes = dict(attributes) if attributes is not None else {}
    _check_attributes(attributes)
    what = f"poptorch.custom_op {domain}::{name} (version {domain_version})"
    registered = _CUSTOM_OPS.get((domain, name, domain_version))
    if registered is not None:
        fn, host = registered
        if host:
            if tracing.tracer is not None:
                host_id = f"custom_op:{domain}::{name}:{domain_version}"
                fn = CPU(lambda *xs, _fn=fn: _fn(*xs, **attributes), host_id)
                out = fn(*inputs)
            else:
                out = fn(*inputs, **attributes)
        else:
            out = fn(*inputs, **attributes)
    else:
        operator = _torch_operator(domain, name)
        if operator is None:
            known = sorted(f"{d}::{n} (version {v})" for d, n, v in _CUSTOM_OPS)
            raise ArgumentError(
                f"{what} is not registered. PopART C++ custom ops cannot run here: provide the "
                "op as a PyTorch function with @poptorch.register_custom_op(name, domain, "
                "domain_version), or register the operator torch.ops.<domain>.<name> with "
                "torch.library. Registered: " + (", ".join(known) if known else "none"))
        out = operator(*inputs, **attributes)
    outs = [out] if isinstance(out, torch.Tensor) else list(out) if isinstance(
        out, (list, tuple)) else None
    if outs is None or not all(isinstance(o, torch.Tensor) for o in outs):
        raise ArgumentError(f"{what} must return a tensor or a sequence of tensors, got "
                            f"{type(out).__name__}")
    if len(outs) != len(example_outputs):
        raise ArgumentError(f"{what} returned {len(outs)} tensor(s) but example_outputs has "
                            f"{len(example_outputs)}")
    for i, (o, e) in enumerate(zip(outs, example_outputs, strict=True)):
        if o.shape != e.shape or o.dtype != e.dtype:
            raise ArgumentError(f"{what}: output {i} is {_type_text(o)} but example_outputs[{i}] "
                                f"is {_type_text(e)}")
    return outs


# ---- ctc_beam_search_decoder --------------------------------------------------------

_LIB.define("ctc_beam_search_decoder(Tensor probs, Tensor lengths, int blank, int beam_width, "
            "int top_paths) -> (Tensor, Tensor, Tensor)")


def _logaddexp(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    hi, lo = (a, b) if a > b else (b, a)
    return hi + math.log1p(math.exp(lo - hi))


def _prefix_beam_search(log_probs: list[list[float]], blank: int, beam_width: int
                        ) -> list[tuple[tuple[int, ...], float]]:
    """CTC prefix beam search over one sequence ([T][C] log probabilities): the beams
    left after the last step, as (labels, log probability), best first."""
    # prefix -> [log P(prefix, path ends in blank), log P(prefix, path ends in a label)]
    beams: dict[tuple[int, ...], list[float]] = {(): [0.0, -math.inf]}
    for step in log_probs:
        nxt: dict[tuple[int, ...], list[float]] = {}

        def slot(prefix: tuple[int, ...], nxt: dict[tuple[int, ...], list[float]] = nxt
                 ) -> list[float]:
            return nxt.setdefault(prefix, [-math.inf, -math.inf])
        for prefix, (p_blank, p_label) in beams.items():
            total = _logaddexp(p_blank, p_label)
            last = prefix[-1] if prefix else None
            for c, p in enumerate(step):
                if p == -math.inf:
                    continue
                if c == blank:
                    s = slot(prefix)
                    s[0] = _logaddexp(s[0], total + p)
                elif c == last:
                    # a repeat extends the prefix only across a blank; else it merges
                    s = slot(prefix + (c,))
                    s[1] = _logaddexp(s[1], p_blank + p)
                    s = slot(prefix)
                    s[1] = _logaddexp(s[1], p_label + p)
                else:
                    s = slot(prefix + (c,))
                    s[1] = _logaddexp(s[1], total + p)
        ranked = sorted(nxt.items(), key=lambda kv: (-_logaddexp(*kv[1]), kv[0]))
        beams = dict(ranked[:beam_width])
    ranked = sorted(((k, _logaddexp(*v)) for k, v in beams.items()), key=lambda kv: (-kv[1], kv[0]))
    return ranked


def _check_ctc(probs: torch.Tensor, lengths: torch.Tensor, blank: int, beam_width: int,
               top_paths: int) -> None:
    if probs.dim() != 3 or not probs.is_floating_point():
        raise ValueError("poptorch.ctc_beam_search_decoder: probs must be floating point "
                         f"[input_length, batch_size, num_classes], got {probs.dtype} "
                         f"{list(probs.shape)}")
    if lengths.dim() != 1 or lengths.shape[0] != probs.shape[1] or lengths.is_floating_point():
        raise ValueError("poptorch.ctc_beam_search_decoder: lengths must be integers of shape "
                         f"[batch_size] = [{probs.shape[1]}], got {lengths.dtype} "
                         f"{list(lengths.shape)}")
    if not 0 <= blank < probs.shape[2]:
        raise ValueError(f"poptorch.ctc_beam_search_decoder: blank {blank} is not a class of "
                         f"the {probs.shape[2]}")
    if beam_width < 1 or top_paths < 1 or top_paths > beam_width:
        raise ValueError("poptorch.ctc_beam_search_decoder: need 1 <= top_paths <= beam_width, "
                         f"got top_paths={top_paths}, beam_width={beam_width}")


def _ctc_cpu(probs: torch.Tensor, lengths: torch.Tensor, blank: int, beam_width: int,
             top_paths: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    _check_ctc(probs, lengths, blank, beam_width, top_paths)
    steps, batch, _ = probs.shape
    out_probs = torch.full((batch, top_paths), -math.inf, dtype=probs.dtype)
    out_lengths = torch.zeros((batch, top_paths), dtype=torch.int64)
    out_paths = torch.zeros((batch, top_paths, steps), dtype=torch.int64)
    table = probs.detach().double().cpu()
    for b in range(batch):
        length = max(0, min(int(lengths[b]), steps))
        ranked = _prefix_beam_search(table[:length, b].tolist(), blank, beam_width)
        for k, (labels, logp) in enumerate(ranked[:top_paths]):
            out_probs[b, k] = logp
            out_lengths[b, k] = len(labels)
            out_paths[b, k, :len(labels)] = torch.tensor(labels, dtype=torch.int64)
    return out_probs, out_lengths, out_paths


def _ctc_meta(probs: torch.Tensor, lengths: torch.Tensor, blank: int, beam_width: int,
              top_paths: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    _check_ctc(probs, lengths, blank, beam_width, top_paths)
    steps, batch, _ = probs.shape
    return (probs.new_empty((batch, top_paths)),
            probs.new_empty((batch, top_paths), dtype=torch.int64),
            probs.new_empty((batch, top_paths, steps), dtype=torch.int64))


_LIB.impl("ctc_beam_search_decoder", _ctc_cpu, "CPU")
_LIB.impl("ctc_beam_search_decoder", _ctc_meta, "Meta")


def ctc_beam_search_decoder(probs: torch.Tensor, lengths: torch.Tensor, blank: int = 0,
                            beam_width: int = 100, top_paths: int = 1) -> list[torch.Tensor]:
    """PopTorch's CTC beam search decoder: the ``top_paths`` most likely label sequences
    of each batch entry, by prefix beam search over ``probs`` (log probabilities,
    ``[input_length, batch_size, num_classes]``) up to ``lengths[b]`` steps.

    Returns ``[log probabilities [batch_size, top_paths], path lengths [batch_size,
    top_paths], decoded paths [batch_size, top_paths, input_length]]``, best first; path
    entries past a path's length are 0, and missing paths (fewer beams than
    ``top_paths``) have log probability ``-inf`` and length 0. Lengths and paths are
    int64. In a compiled model it runs on the host, inside the program.
    """
    return list(torch.ops.poptorch.ctc_beam_search_decoder(probs, lengths, int(blank),
                                                           int(beam_width), int(top_paths)))


# ---- fps: farthest point sampling ----------------------------------------------------

_LIB.define("fps(Tensor src, int[] ptr, float ratio, bool random_start) -> Tensor")


def _fps_counts(src: torch.Tensor, ptr: Sequence[int], ratio: float) -> list[int]:
    if src.dim() != 2 or not src.is_floating_point():
        raise ValueError(f"poptorch.fps: src must be floating point [num_points, num_features], "
                         f"got {src.dtype} {list(src.shape)}")
    if len(ptr) < 2 or ptr[0] != 0 or ptr[-1] != src.shape[0] or any(
            b < a for a, b in zip(ptr, ptr[1:], strict=False)):
        raise ValueError("poptorch.fps: ptr must rise from 0 to src.size(0) = "
                         f"{src.shape[0]} (the batch boundaries), got {list(ptr)}")
    if not 0.0 < ratio <= 1.0:
        raise ValueError(f"poptorch.fps: ratio must be in (0, 1], got {ratio}")
    return [math.ceil(ratio * (b - a)) for a, b in zip(ptr, ptr[1:], strict=False)]


def _fps_cpu(src: torch.Tensor, ptr: list[int], ratio: float, random_start: bool) -> torch.Tensor:
    counts = _fps_counts(src, ptr, ratio)
    out = []
    for (first, end), k in zip(zip(ptr, ptr[1:], strict=False), counts, strict=True):
        if k == 0:
            continue
        points = src[first:end]
        current = int(torch.randint(end - first, ())) if random_start else 0
        chosen = [current]
        nearest = ((points - points[current]) ** 2).sum(-1)
        for _ in range(k - 1):
            current = int(nearest.argmax())
            chosen.append(current)
            nearest = torch.minimum(nearest, ((points - points[current]) ** 2).sum(-1))
        out.append(torch.tensor(chosen, dtype=torch.int64) + first)
    return torch.cat(out) if out else torch.zeros(0, dtype=torch.int64)


def _fps_meta(src: torch.Tensor, ptr: list[int], ratio: float, random_start: bool) -> torch.Tensor:
    return src.new_empty((sum(_fps_counts(src, ptr, ratio)),), dtype=torch.int64)


_LIB.impl("fps", _fps_cpu, "CPU")
_LIB.impl("fps", _fps_meta, "Meta")


def fps(src: torch.Tensor, ptr: Sequence[int], ratio: float = 0.5,
        random_start: bool = False) -> torch.Tensor:
    """PopTorch's farthest point sampling (PointNet++): for each batch entry
    ``src[ptr[i]:ptr[i + 1]]``, ``ceil(ratio * n_i)`` points, each the one farthest
    (squared Euclidean distance) from those already chosen, starting from the entry's
    first point (a random one with ``random_start``, drawn from torch's host generator
    when the op runs). Returns the chosen points' indices into ``src`` (int64), entry by
    entry. ``ptr`` is a list of ints, so the output size is known when compiling. In a
    compiled model it runs on the host, inside the program.
    """
    if isinstance(ptr, torch.Tensor):
        ptr = [int(v) for v in ptr.tolist()]
    return torch.ops.poptorch.fps(src, [int(v) for v in ptr], float(ratio), bool(random_start))
