"""Tracing a model into the poptorch dialect, compiling it and running it.

``trace`` runs the model once on ``ipu`` tensors: every aten op reaches the C++
dispatcher hook, which records it (shapes and dtypes come from Meta tensors,
no arithmetic happens). PyTorch's functionalization turns views and in-place
ops into value semantics first, and writes to buffers (and inputs) come back
as explicit results that the runtime stores into the device copy of the
buffer (or the caller's input tensor).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import enum
import functools
import gc
import os
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.utils._pytree as pytree

from . import _C, _blocks, _helpers, errors
from ._arg_parsers import parser_for
from ._batching import Batching
from ._decompositions import decompose
from ._logging import logger
from .errors import ArgumentError

IPU = torch.device("ipu")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: torch.dtype
    # The strides of a tensor that is not contiguous (None: contiguous). Whether a
    # reshape, flatten or contiguous() of an input is a view or a copy depends on
    # them, and so whether a later in-place update reaches the caller's tensor.
    strides: tuple[int, ...] | None = None

    @staticmethod
    def of(t: torch.Tensor) -> TensorSpec:
        return TensorSpec(tuple(t.shape), t.dtype, layout_of(t))

    def __str__(self) -> str:
        text = f"{str(self.dtype).replace('torch.', '')}{list(self.shape)}"
        return text if self.strides is None else f"{text} with strides {list(self.strides)}"


def layout_of(t: torch.Tensor) -> tuple[int, ...] | None:
    """The layout a program is specialised on: None for contiguous tensors, else the strides."""
    return None if t.is_contiguous() else tuple(t.stride())


def program_buffer(t: torch.Tensor) -> torch.Tensor:
    """The dense CPU tensor a program reads for ``t``: conjugate and negative views
    resolved (a complex tensor's buffer holds its (real, imaginary) pairs)."""
    return t.detach().cpu().resolve_conj().resolve_neg().contiguous()


def _ipu_input(t: torch.Tensor) -> torch.Tensor:
    """An ipu copy of an input with its layout (contiguous, permuted, with gaps or
    expanded), so that tracing takes eager's view-or-copy decisions on it."""
    t = t.resolve_conj().resolve_neg()
    if t.is_contiguous():
        return t.to(IPU)
    # Expanded (stride 0) dims are stored once: copy the unexpanded tensor, then expand.
    stored = t[tuple(slice(0, 1) if st == 0 else slice(None) for st in t.stride())]
    copy = torch.empty_strided(stored.shape, stored.stride(), dtype=t.dtype, device=IPU)
    copy.copy_(stored)
    return copy.expand(t.shape)


@dataclasses.dataclass(frozen=True)
class Signature:
    """What a compiled program was specialised for: the guard of trace-once."""

    treespec: Any
    leaves: tuple[Any, ...]  # TensorSpec for tensors, the value for Python constants

    @staticmethod
    def of(args: Sequence[Any], kwargs: dict[str, Any]) -> Signature:
        if not kwargs and all(isinstance(a, torch.Tensor) for a in args):
            # The common call: positional tensors. Skips pytree (the per-call
            # host overhead of a small model is mostly this function).
            return Signature(("tensors", len(args)),
                             tuple(TensorSpec(tuple(a.shape), a.dtype, layout_of(a))
                                   for a in args))
        leaves, treespec = flatten_inputs(args, kwargs)
        return Signature(
            treespec,
            tuple(TensorSpec.of(x) if isinstance(x, torch.Tensor) else x for x in leaves),
        )

    def diff(self, other: Signature) -> str:
        """Says which input differs, for the recompilation log and errors."""
        if self.treespec != other.treespec:
            return f"the input structure changed from {self.treespec} to {other.treespec}"
        for i, (a, b) in enumerate(zip(self.leaves, other.leaves, strict=True)):
            if a != b:
                return f"input {i} changed from {a} to {b}"
        return "no difference"


@dataclasses.dataclass
class Guard:
    """A value the model read while tracing, on which the program is specialised.

    ``result`` is the program result that computes it on every call (-1: the value is
    argument ``argument`` of the program, read as it is); ``expected`` the value seen
    while tracing; ``what`` the op that read it and ``location`` the model's line.
    """

    result: int
    argument: int
    expected: torch.Tensor
    what: str
    location: str
    # A result shape that the program's host kernel checks (``expected``: the sizes).
    in_program: bool = False

    def holds(self, observed: torch.Tensor) -> bool:
        """Whether a call's value (one per micro-batch when batched) is the traced one."""
        expected = self.expected
        if observed.shape != expected.shape:
            observed = observed.reshape(-1, *expected.shape)
            return bool((observed == expected).all()) and observed.dtype == expected.dtype
        return torch.equal(observed, expected)

    def failure(self, observed: torch.Tensor) -> errors.GuardFailedError:
        """The error of a call whose inputs give ``observed``."""
        return errors.GuardFailedError(
            f"poptorch: the program was specialised on {self.describe(observed)}. "
            "poptorch.inferenceModel compiles a variant for such inputs; a "
            "program from poptorch.trace must be traced again for them.", self, observed)

    def describe(self, observed: torch.Tensor | None = None) -> str:
        show = (lambda t: str(list(t.shape))) if self.in_program else _value_text
        text = f"{show(self.expected)} read by {self.what} at {self.location}"
        if observed is not None:
            text += f" is {show(observed)} for these inputs"
        return text


def _value_text(t: torch.Tensor) -> str:
    if t.numel() == 1:
        return repr(t.reshape(()).item())
    if t.numel() <= 8:
        return repr(t.tolist())
    return f"a {TensorSpec.of(t)} tensor"


def _evaluate(module: str, arguments: list[torch.Tensor], results: list[torch.Tensor]) -> None:
    """The tracer's evaluator (``Tracer::readValue``): compiles the program so far, whose
    @main returns the values the model reads, and runs it on the traced inputs."""
    from ._debug import run_program

    start = time.perf_counter()
    # Called from inside the dispatcher, under functionalization: these are plain CPU
    # tensors, and nothing here may be functionalized.
    no_functionalize = torch._C._ExcludeDispatchKeyGuard(
        torch._C.DispatchKeySet(torch._C.DispatchKey.Functionalize))
    with torch._C._DisableFuncTorch(), no_functionalize:
        # Floating-point values are compiled as the final program is (the guard compares
        # them exactly); integers and booleans come out the same at any level.
        exact = any(r.is_floating_point() or r.is_complex() for r in results)
        program = _C.Program.compile(module, "", opt_level=3 if exact else 0)
        values = run_program(program, arguments, [(r.shape, r.dtype) for r in results])
        for r, v in zip(results, values, strict=True):
            r.copy_(v)
    logger.info("poptorch: computed a value the model reads while tracing in %.3f s",
                time.perf_counter() - start)


class _ForwardOnlyContext:
    """The ``ctx`` of a custom ``torch.autograd.Function`` whose forward runs while tracing
    an inference model: what it saves for the backward is never used."""

    def __init__(self, n_inputs: int) -> None:
        self.needs_input_grad = (False,) * n_inputs
        self.saved_tensors: tuple[torch.Tensor, ...] = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors: torch.Tensor) -> None:
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors: torch.Tensor) -> None:
        pass

    def mark_dirty(self, *tensors: torch.Tensor) -> None:
        pass

    def mark_non_differentiable(self, *tensors: torch.Tensor) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


def _host_value(t: torch.Tensor) -> torch.Tensor:
    """A tensor of the trace as a plain CPU tensor (its value read while tracing)."""
    t = t.cpu()
    if torch._is_functional_tensor(t):
        torch._sync(t)
        t = torch._from_functional_tensor(t)
    return t


def _install_eager_compatible_tracing() -> None:
    """What PyTorch refuses under ``torch.func.functionalize``, where tracing runs, works
    as in eager while a thread traces (``_helpers.tracing.eager_compatible``):

    - Custom ``torch.autograd.Function``s run their ``forward`` directly: ``apply`` refuses
      any Function without a ``setup_context`` staticmethod under a functorch transform
      (BLOOM's GeLUFunction, most Functions written before PyTorch 2.0). An inference model
      computes no gradients, so the forward alone is the Function's meaning here.
    - ``Tensor.tolist()`` and ``.numpy()`` read the value (a guarded read, see
      ``Tracer::readValue``) instead of failing on a functional tensor's missing storage.
    - ``torch.tensor_split(x, indices)`` with a tensor of indices, which it wants on the
      CPU (it reads them): an ipu one is read the same way. (Functionalization decomposes
      this view op before the ipu backend sees it.)

    Installed once, at the first trace; other threads, and this one when it is not
    tracing, get PyTorch's own behaviour.
    """
    function = torch.autograd.function.Function
    if getattr(function.apply, "_poptorch_tracing", False):
        return
    state = _helpers.tracing
    original_apply = function.apply.__func__
    original_tolist, original_numpy = torch.Tensor.tolist, torch.Tensor.numpy

    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        if not state.eager_compatible:
            return original_apply(cls, *args, **kwargs)
        if torch.autograd.function._is_setup_context_defined(cls.setup_context):
            return cls.forward(*args, **kwargs)
        return cls.forward(_ForwardOnlyContext(len(args)), *args, **kwargs)

    def tolist(self: torch.Tensor) -> Any:
        return original_tolist(_host_value(self) if state.eager_compatible else self)

    def numpy(self: torch.Tensor, *, force: bool = False) -> Any:
        return original_numpy(_host_value(self) if state.eager_compatible else self, force=force)

    original_split = torch.tensor_split

    def tensor_split(self: torch.Tensor, indices_or_sections: Any, *args: Any,
                     **kwargs: Any) -> Any:
        if state.eager_compatible and isinstance(indices_or_sections, torch.Tensor) \
                and indices_or_sections.device.type != "cpu":
            indices_or_sections = _host_value(indices_or_sections)
        return original_split(self, indices_or_sections, *args, **kwargs)

    apply._poptorch_tracing = True  # type: ignore[attr-defined]
    torch.tensor_split = functools.wraps(original_split)(tensor_split)
    torch.Tensor.tensor_split = functools.wraps(torch.Tensor.tensor_split)(tensor_split)
    function.apply = classmethod(apply)
    torch.Tensor.tolist = functools.wraps(original_tolist)(tolist)
    torch.Tensor.numpy = functools.wraps(original_numpy)(numpy)


@contextlib.contextmanager
def _eager_compatible_tracing() -> Any:
    """Inside: this thread's trace runs custom Functions and tolist()/numpy() as in
    eager (see _install_eager_compatible_tracing)."""
    _install_eager_compatible_tracing()
    state = _helpers.tracing
    previous, state.eager_compatible = state.eager_compatible, True
    try:
        yield
    finally:
        state.eager_compatible = previous


class TracingSession:
    """This thread traces into ``tracer`` inside ``with TracingSession(...)``: the
    tracer captures the ops this thread dispatches to the ipu, PopTorch's helpers
    (``isRunningOnIpu``, blocks, ``ipu_print_tensor``) see it. Other threads are not
    affected: each may trace its own model at the same time. ``placements`` holds the
    blocks' placements once the session has ended."""

    def __init__(self, tracer: Any, execution_strategy: Any) -> None:
        self.tracer = tracer
        self.execution_strategy = execution_strategy
        self.placements: list[Any] = []

    def __enter__(self) -> TracingSession:
        self.tracer.activate()  # refuses a second tracer on this thread
        _helpers.tracing.tracer = self.tracer
        _blocks.start_tracing(self.tracer, self.execution_strategy)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.placements = _blocks.end_tracing()
        _helpers.tracing.tracer = None
        self.tracer.deactivate()


_gc_lock = threading.Lock()
_gc_pauses = 0  # traces running now, in all threads, that paused the cyclic collector
_gc_was_enabled = True  # the collector's state when the first of them started


@contextlib.contextmanager
def _gc_paused() -> Any:
    """Tracing allocates a Python tensor per op and frees it soon after; with torch
    imported, the cyclic collector's passes over the heap cost about a fifth of the
    capture time, for no cycles. Collect afterwards instead: the collector is off while
    any thread traces, and back as it was when the last trace ends."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


_HOST_KERNELS_WARNED: set[str] = set()


def _warn_host_kernels(tracer: Any) -> None:
    """One warning per process for each op that runs as a host kernel."""
    for name, file, line, why in tracer.host_kernel_ops:
        if name == "poptorch::host_call":
            continue  # poptorch.CPU: asked for
        key = f"{name} {why}" if why else name
        if key not in _HOST_KERNELS_WARNED:
            _HOST_KERNELS_WARNED.add(key)
            logger.warning("poptorch: %s at %s:%s has no lowering%s: it runs as PyTorch's CPU "
                           "kernel inside the compiled program (Options().hostKernels(False) "
                           "makes this an error)", name, file, line, f" {why}" if why else "")


class _TypeName(str):
    """A type's name among the values ``_held_leaves`` yields."""


def _held_leaves(obj: Any) -> Iterator[tuple[str, Any]]:
    """Walks an object's attributes, lists, tuples, sets and dicts (8 levels deep at
    most, each object once), in a fixed order: yields (path, x) for each tensor and each
    plain value (a number, string, None, dtype or device), and (path, its type's name)
    for anything else, walked into or not."""
    seen: set[int] = set()
    plain = (str, bytes, int, float, bool, torch.dtype, torch.device)

    def walk(x: Any, path: str, depth: int) -> Iterator[tuple[str, Any]]:
        if x is None or isinstance(x, (torch.Tensor, *plain)):
            yield path, x
            return
        yield path, _TypeName(type(x).__qualname__)
        if depth > 8 or id(x) in seen or isinstance(x, (type, torch.nn.Module)) or callable(x):
            return
        seen.add(id(x))
        if isinstance(x, dict):
            items: Any = x.items()
        elif isinstance(x, (list, tuple, set, frozenset)):
            items = enumerate(x)
        elif hasattr(x, "__dict__"):
            items = vars(x).items()
        else:
            items = ()
        for k, v in items:
            yield from walk(v, f"{path}.{k}", depth + 1)

    return walk(obj, "", 0)


def _tensors_held_by(obj: Any) -> list[torch.Tensor]:
    """The tensors an object holds in its attributes, lists, tuples and dicts (a
    transformers ``Cache``: its layers' keys and values), each once, in a fixed order;
    for a type with a custom argument parser, those its ``yieldTensors`` yields."""
    parser = parser_for(obj)
    if parser is not None:
        return list(parser.yieldTensors(obj))
    found: dict[int, torch.Tensor] = {}
    for _, x in _held_leaves(obj):
        if isinstance(x, torch.Tensor):
            found.setdefault(id(x), x)
    return list(found.values())


class _Rebuild:
    """How an output object holding tensors is made again on every call: a copy of the
    traced object with each of its tensors replaced by the call's (identity-compared)."""

    def __init__(self, obj: Any, tensors: list[torch.Tensor]) -> None:
        # While tracing, unflattening keeps the node (functionalization unwraps its
        # tensors through it); once traced, it makes the object.
        self.live = False
        self.parser = parser_for(obj)
        if self.parser is not None:  # the parser makes the object again
            self.template = obj
            return
        self.slots = [object() for _ in tensors]
        self.template = copy.deepcopy(obj, {id(t): s for t, s in zip(tensors, self.slots,
                                                                      strict=True)})

    def __call__(self, tensors: list[torch.Tensor]) -> Any:
        if self.parser is not None:
            return self.parser.reconstruct(self.template, iter(tensors))
        return copy.deepcopy(self.template, {id(s): t for s, t in zip(self.slots, tensors,
                                                                       strict=True)})


class _HeldTensors:
    """An output leaf that holds tensors (see ``_expose_held_tensors``): a pytree node
    whose children are those tensors."""

    def __init__(self, tensors: list[torch.Tensor], rebuild: _Rebuild) -> None:
        self.tensors, self.rebuild = tensors, rebuild


pytree.register_pytree_node(
    _HeldTensors, lambda h: (h.tensors, h.rebuild),
    lambda tensors, rebuild: rebuild(list(tensors)) if rebuild.live
    else _HeldTensors(list(tensors), rebuild))


def _expose_held_tensors(out: Any, rebuilds: list[_Rebuild]) -> Any:
    """Makes the tensors inside the model's non-tensor outputs (objects pytree does not
    open, such as transformers' caches) outputs of the program; the object is rebuilt
    around the call's tensors every time, as eager returns a new one every time.
    Runs inside functionalization, which then unwraps those tensors too."""
    def expose(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return x
        if isinstance(x, torch.Size):
            return _KeptSize(x)
        tensors = _tensors_held_by(x)
        if not tensors:
            return x
        rebuilds.append(_Rebuild(x, tensors))
        return _HeldTensors(tensors, rebuilds[-1])

    return pytree.tree_map(expose, out, is_leaf=_is_size)


def _is_size(x: Any) -> bool:
    return isinstance(x, torch.Size)


@dataclasses.dataclass(frozen=True)
class _KeptSize:
    """A torch.Size output, kept whole: pytree (functionalization's included) rebuilds
    a Size as a plain tuple."""
    size: torch.Size


def _structure_of(obj: Any) -> tuple[Any, ...]:
    """What an input object holding tensors is, apart from its tensors' values: the
    types, and the values that are not tensors (ints, flags, dtypes), path by path
    (``_held_leaves``). Two objects with the same structure trace the same."""
    return tuple((path, "tensor") if isinstance(x, torch.Tensor) else (path, x)
                 for path, x in _held_leaves(obj))


class _InputTemplate:
    """The context of an opened input object: equal for objects of the same structure
    (``_structure_of``), so that a call with another object of that structure (the cache
    ``generate()`` gets back from each step) replays the program."""

    def __init__(self, obj: Any, tensors: list[torch.Tensor], rebuildable: bool) -> None:
        self.structure = _structure_of(obj)
        # A copy of the object without its tensors, made only for tracing: tracing
        # never changes the caller's object (transformers' caches initialise themselves
        # on their first update). An object that cannot be copied and holds no tensors
        # is the model's to change.
        self.rebuild: Callable[[list[torch.Tensor]], Any] | None = None
        if rebuildable:
            try:
                self.rebuild = _Rebuild(obj, tensors)
            except Exception:
                if tensors:
                    raise
                self.rebuild = lambda _: obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InputTemplate) and self.structure == other.structure

    def __hash__(self) -> int:
        return hash(self.structure)

    def __repr__(self) -> str:
        return f"<{self.structure[0][1]} holding {sum(e[1] == 'tensor' for e in self.structure)} tensors>"


class _OpenedInput:
    """An input object that pytree does not open (a transformers ``StaticCache`` passed
    as ``past_key_values``): a pytree node whose children are the tensors it holds, so
    that they are inputs of the program, and written back to when the model updates them
    in place, as eager writes the object's tensors."""

    def __init__(self, tensors: list[torch.Tensor], template: _InputTemplate) -> None:
        self.tensors, self.template = tensors, template


pytree.register_pytree_node(
    _OpenedInput, lambda o: (o.tensors, o.template),
    lambda tensors, template: template.rebuild(list(tensors)))


def flatten_inputs(args: Sequence[Any], kwargs: dict[str, Any], rebuildable: bool = False
                   ) -> tuple[list[Any], Any]:
    """The leaves and treespec of a call's inputs, the tensors inside input objects that
    pytree does not open among them (see ``_OpenedInput``). ``rebuildable``: the treespec
    can unflatten (tracing), not only compare."""
    def open_input(x: Any) -> Any:
        if not hasattr(x, "__dict__") or callable(x) or isinstance(
                x, (torch.Tensor, type, torch.nn.Module, torch.dtype, torch.device, enum.Enum)):
            return x
        tensors = _tensors_held_by(x)
        return _OpenedInput(tensors, _InputTemplate(x, tensors, rebuildable))

    opened = pytree.tree_map(open_input, (tuple(args), dict(kwargs)))
    return pytree.tree_flatten(opened)


def _source_excludes(extra: Sequence[str] = ()) -> list[str]:
    return [_PACKAGE_DIR + os.sep, _TORCH_DIR + os.sep, *extra]


def _user_stacklevel() -> int:
    """The warnings stacklevel of the first frame outside poptorch (the user's call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def _warn_requires_grad(what: str) -> None:
    warnings.warn(
        f"poptorch: {what} requires grad; inference models do not compute gradients, "
        "so it is detached (as PopTorch does)",
        stacklevel=_user_stacklevel(),
    )


class TracedGraph:
    """A model captured into the ``poptorch`` dialect.

    ``.mlir`` is the captured module as text, with source locations.
    """

    def __init__(
        self,
        mlir: str | None,
        signature: Signature,
        output_treespec: Any,
        output_leaves: list[Any],
        parameters: list[tuple[str, torch.Tensor]],
        buffers: list[tuple[str, torch.Tensor]],
        buffer_update_args: list[int],
        num_output_results: int,
        output_results: list[int],
        num_ops: int,
        trace_seconds: float,
        random_state_arg: int = -1,
        tracer: Any = None,
        guards: list[Guard] | None = None,
    ) -> None:
        # ``mlir`` and ``op_log`` are read from the tracer when first asked for:
        # printing the module costs about as much as capturing it, and a graph
        # loaded from the executable cache may never need the text.
        self._mlir = mlir
        self._op_log: list[dict[str, Any]] | None = None if tracer is not None else []
        self._tracer = tracer
        self.signature = signature
        self.output_treespec = output_treespec
        self.output_leaves = output_leaves  # TensorSpec for tensor outputs, else the value
        self.parameters = parameters
        self.buffers = buffers
        self.buffer_update_args = buffer_update_args
        # The function returns `num_output_results` distinct output values,
        # then the new value of each argument in `buffer_update_args`; for each
        # tensor output, `output_results` is the index of the result holding it.
        self.num_output_results = num_output_results
        self.output_results = output_results
        self.num_ops = num_ops
        self.trace_seconds = trace_seconds
        self.name = "model"  # the model's class or function name (dump folders)
        # The argument holding the random state [seed, calls] after the
        # inputs, parameters and buffers (-1: the model draws no random numbers).
        self.random_state_arg = random_state_arg
        # Where each block entered while tracing ran (poptorch.BeginBlock/Block).
        self.blocks: list[_blocks.BlockPlacement] = []
        # The values the model read while tracing: each call checks them.
        self.guards: list[Guard] = guards or []

    @property
    def mlir(self) -> str:
        """The captured module as text, with source locations."""
        if self._mlir is None:
            self._mlir = self._tracer.module_text(True)
            self._release_tracer()
        return self._mlir

    @property
    def op_log(self) -> list[dict[str, Any]]:
        """Every aten op that reached the ipu while tracing (see ``poptorch._debug``)."""
        if self._op_log is None:
            self._op_log = [dict(r, args=[]) for r in self._tracer.op_log]
            self._release_tracer()
        return self._op_log

    def _release_tracer(self) -> None:
        if self._mlir is not None and self._op_log is not None:
            self._tracer = None

    @property
    def num_inputs(self) -> int:
        return sum(isinstance(x, TensorSpec) for x in self.signature.leaves)

    def compile(self, options: Any | None = None) -> Executable:
        from . import _debug
        from .options import Options

        options = options or Options()
        batching = Batching.from_options(options)
        pipelined = _blocks.check_placements(
            self.blocks, options.execution_strategy, batching.iterations)
        if _PIPELINE_OVERRIDE is not None:
            pipelined = pipelined and _PIPELINE_OVERRIDE
        device_loop = batching.device_loop(pipelined)
        dump_dir = options._dump_dir_for(self)
        start = time.perf_counter()
        cache_path, cache_key = _cache_entry(options, self.mlir, device_loop)
        program = _debug.compile_program(self, dump_dir, device_loop=device_loop,
                                         cache_path=cache_path, cache_key=cache_key,
                                         pipeline_stages=pipelined)
        if pipelined:
            _blocks.warn_if_sequential(program.pipeline_schedule, self.name)
        if program.origin == "loaded":
            logger.info("loaded %d captured ops from the executable cache %s in %.3f s",
                        self.num_ops, cache_path, time.perf_counter() - start)
        else:
            if program.origin.startswith("recompiled"):
                logger.warning("poptorch: executable cache entry %s %s", cache_path,
                               program.origin)
            logger.info("compiled %d captured ops in %.3f s", self.num_ops,
                        time.perf_counter() - start)
        start = time.perf_counter()
        executable = Executable(self, program, batching,
                                broadcast_buffers=options._values["broadcast_buffers"],
                                random_seed=options.random_seed)
        executable.load_seconds = time.perf_counter() - start
        executable.pipelined = pipelined
        _debug.after_compile(executable, dump_dir)
        return executable

    def __repr__(self) -> str:
        return f"TracedGraph({self.num_ops} ops)\n{self.mlir}"


_COMPILER_ID: str | None = None

# Tests and benchmarks: False compiles PipelinedExecution models with the
# sequential schedule (stages one after another), None follows the options.
_PIPELINE_OVERRIDE: bool | None = None


def _compiler_id() -> str:
    """What makes object code differ besides the module: versions, pipeline, host CPU."""
    global _COMPILER_ID
    if _COMPILER_ID is None:
        from . import __version__

        so = os.stat(_C.__file__)
        _COMPILER_ID = "\n".join([
            f"poptorch {__version__}", f"torch {torch.__version__}",
            f"extension {so.st_size} {so.st_mtime_ns}", f"cpu {_C.host_cpu()}",
            *(f"{name}: {text}" for name, text in _C.pipeline_stages())])
    return _COMPILER_ID


def _cache_entry(options: Any, mlir: str, device_loop: str) -> tuple[str, str]:
    """(file, key) of the executable cache entry, or ("", "") without caching.

    The key hashes the captured module, the device loop, the pipeline, the
    versions and the host CPU's features; the program checks it on load.
    """
    cache_dir = options._values["executable_cache_dir"]
    if not cache_dir:
        return "", ""
    import hashlib

    key = hashlib.sha256("\n".join([_compiler_id(), device_loop, mlir]).encode()).hexdigest()
    return os.path.join(cache_dir, f"{key[:40]}.poptorch-exec"), key


@contextlib.contextmanager
def meta_memo(cache_dir: str | None) -> Any:
    """Traces inside this context reuse, and add to, the Meta results kept in
    ``cache_dir`` (the executable cache).

    The tracer memoizes the shapes, dtypes and strides it gets from Meta
    kernels (csrc/MetaCache.h); most of them are Python functions, and the
    first of them in a process imports ``torch._dynamo`` (about 0.8 s). With
    the memo read back, a process that loads a model from the executable cache
    traces it without calling any.
    """
    if not cache_dir:
        yield
        return
    path, tag = os.path.join(cache_dir, "meta-results.bin"), _compiler_id()
    read = _C.meta_cache_load(path, tag)
    try:
        yield
    finally:
        written = _C.meta_cache_save(path, tag)
        logger.debug("meta results: %d read from and %d written to %s", read, written, path)


# The errors of ops that refuse operands on different devices.
_DEVICE_MISMATCH = re.compile(r"on the same device|same device as|different devices")


def trace(
    model: Callable[..., Any],
    *args: Any,
    source_location_excludes: Sequence[str] = (),
    execution_strategy: Any = None,
    host_kernels: bool = True,
    **kwargs: Any,
) -> TracedGraph:
    """Traces ``model(*args, **kwargs)`` into a :class:`TracedGraph`.

    ``model`` is a ``torch.nn.Module`` (its parameters and buffers become
    function arguments) or any callable (tensors it closes over become
    constants). Tensor arguments become inputs; other arguments are baked in.
    """
    start = time.perf_counter()
    cpu_rng = torch.default_generator.get_state()
    def attempt(default_ipu: bool) -> TracedGraph:
        return _trace(model, args, kwargs, source_location_excludes, execution_strategy, start,
                      default_ipu=default_ipu, host_kernels=host_kernels)

    with _gc_paused():
        try:
            graph = attempt(default_ipu=False)
        except errors.Error as e:
            if not _DEVICE_MISMATCH.search(str(e)):
                raise
            # A tensor the model made without device= (torch.hann_window(n) for stft)
            # met a traced input in an op that checks devices: in eager both are on the
            # CPU. Trace again with the ipu as the default device, as for random ops.
            logger.info("a tensor made on the CPU in the model met an input on the ipu "
                        "(%s); tracing again with the ipu as the default device", e)
            torch.default_generator.set_state(cpu_rng)
            return attempt(default_ipu=True)
        if not torch.equal(cpu_rng, torch.default_generator.get_state()):
            # A factory function without a device (torch.rand(n), torch.empty(n).normal_())
            # drew from the CPU generator while tracing: those numbers would be baked into
            # the program as constants. Trace again with the ipu as the default device so
            # that they become random ops of the program, as on PopTorch.
            logger.info("the model draws random numbers on the CPU (a factory function "
                        "without device=); tracing again with the ipu as the default device")
            torch.default_generator.set_state(cpu_rng)
            graph = attempt(default_ipu=True)
    return graph


def _trace(model: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
           source_location_excludes: Sequence[str], execution_strategy: Any, start: float,
           default_ipu: bool, host_kernels: bool = True) -> TracedGraph:
    signature = Signature.of(args, kwargs)
    leaves, treespec = flatten_inputs(args, kwargs, rebuildable=True)

    tracer = _C.Tracer(_source_excludes(source_location_excludes))
    tracer.set_evaluator(_evaluate)
    tracer.set_decomposer(decompose)
    tracer.set_host_kernels(host_kernels)
    from . import _debug

    _debug.tracer_created(tracer)
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad:
            _warn_requires_grad(f"input {i}")
    parameters: list[tuple[str, torch.Tensor]] = []
    buffers: list[tuple[str, torch.Tensor]] = []
    if isinstance(model, torch.nn.Module):
        parameters = list(model.named_parameters())
        buffers = list(model.named_buffers())

    # The ipu copies are inference tensors, like everything tracing creates:
    # a normal tensor wrapped by functionalization in inference mode keeps the
    # ADInplaceOrView key, and views taken inside composite ops (matmul's
    # unsqueeze of a 1-D operand) then fail with "Cannot set version_counter
    # for inference tensor".
    with torch.inference_mode():
        ipu_leaves = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                t = _ipu_input(leaf.detach())
                tracer.add_argument(t, f"input{i}", "input")
                ipu_leaves.append(t)
            else:
                ipu_leaves.append(leaf)
        # Parameters and buffers share the model's memory: tracing never reads
        # or writes their values (the tracer binds them to arguments), and a
        # copy cost BERT 0.18 s of its 0.24 s trace.
        state: dict[str, torch.Tensor] = {}
        for role, named in (("parameter", parameters), ("buffer", buffers)):
            for name, host in named:
                t = (_C.ipu_alias_of(host.detach())
                     if host.device.type == "cpu" and host.layout == torch.strided
                     else host.detach().to(IPU))
                tracer.add_argument(t, name, role)
                state[name] = t

    state_names = list(state)

    # Parameters and buffers are arguments of the functionalized function so
    # that functionalization sees (and writes back) their mutations.
    rebuilds: list[_Rebuild] = []

    def run(*flat: Any) -> Any:
        n = len(leaves)
        call_args, call_kwargs = pytree.tree_unflatten(list(flat[:n]), treespec)
        if isinstance(model, torch.nn.Module):
            swapped = dict(zip(state_names, flat[n:], strict=True))
            out = torch.func.functional_call(model, swapped, call_args, call_kwargs)
        else:
            out = model(*call_args, **call_kwargs)
        return _expose_held_tensors(out, rebuilds)

    session = TracingSession(tracer, execution_strategy)
    try:
        with session:
            with torch.inference_mode(), _eager_compatible_tracing(), \
                    torch.device(IPU) if default_ipu else contextlib.nullcontext():
                out = torch.func.functionalize(run, remove="mutations_and_views")(
                    *ipu_leaves, *state.values())
            out_leaves, out_treespec = pytree.tree_flatten(out, is_leaf=_is_size)
            out_leaves = [x.size if isinstance(x, _KeptSize) else x for x in out_leaves]
            for rebuild in rebuilds:
                rebuild.live = True
            tensors = [x for x in out_leaves if isinstance(x, torch.Tensor)]
            num_output_results, output_results = tracer.finish(tensors)
    except RuntimeError as e:
        # The tracer's errors reach Python through torch's dispatcher, which
        # makes every C++ exception a RuntimeError: give them their class.
        error = errors.from_runtime_error(e)
        if error is e:
            raise
        raise error.with_traceback(e.__traceback__) from None
    finally:
        tracer.set_evaluator(None)
        tracer.set_decomposer(None)

    elapsed = time.perf_counter() - start
    logger.info("traced %d ops in %.3f s", tracer.num_ops, elapsed)
    graph = TracedGraph(
        mlir=None,
        signature=signature,
        output_treespec=out_treespec,
        output_leaves=[TensorSpec.of(x) if isinstance(x, torch.Tensor) else x
                       for x in out_leaves],
        parameters=parameters,
        buffers=buffers,
        buffer_update_args=list(tracer.buffer_update_args),
        num_output_results=num_output_results,
        output_results=list(output_results),
        num_ops=tracer.num_ops,
        trace_seconds=elapsed,
        random_state_arg=tracer.random_state_arg,
        tracer=tracer,
        guards=[Guard(**g) for g in tracer.guards],
    )
    for g in graph.guards:
        logger.info("poptorch: the program is specialised on %s", g.describe())
    _warn_host_kernels(tracer)
    graph.blocks = session.placements
    _debug.graph_traced(graph, model, tracer)
    return graph


Layout = tuple[list[int], list[int]]
"""How the program reads a parameter or buffer: viewed as ``shape`` (empty: its own
shape), then permuted by ``perm`` (empty: not permuted). See ``_C.Program.argument_layouts``."""


def _program_layout(t: torch.Tensor, layout: Layout) -> torch.Tensor:
    """A view of a host parameter or buffer in the layout the program reads it in
    (prepacked: a transposed linear weight, a weight in panels; or as it is)."""
    shape, perm = layout
    view = t.detach()
    if shape:
        view = view.reshape(shape)
    return view.permute(perm) if perm else view


def _host_layout(dev: torch.Tensor, layout: Layout, host_shape: torch.Size) -> torch.Tensor:
    """The inverse of ``_program_layout``: a device tensor viewed as the host's."""
    shape, perm = layout
    if perm:
        dev = dev.permute([perm.index(d) for d in range(len(perm))])
    return dev.reshape(host_shape) if shape else dev


class Executable:
    """A compiled model: call it with CPU tensors shaped like the traced ones.

    Parameters and buffers are copied to the device once, at construction
    (and again by :meth:`copy_weights_to_device`); buffer updates made by the
    model stay on the device until :meth:`copy_weights_to_host`.

    With device iterations or replication (``batching``), a call's inputs hold
    ``iterations x replicas`` micro-batches of the traced shapes; see
    ``_batching``. Each replica keeps its own device copy of the buffers: with
    ``broadcast_buffers`` (PopTorch's default) every call starts all replicas
    from the same values and keeps replica 0's updates, otherwise each replica
    carries its own buffers from call to call. ``copy_weights_to_host`` reads
    replica 0's.
    """

    def __init__(self, graph: TracedGraph, program: Any, batching: Batching | None = None,
                 broadcast_buffers: bool = True, random_seed: int | None = None) -> None:
        self.graph = graph
        self._program = program
        self.batching = batching or Batching()
        self._broadcast = broadcast_buffers or self.batching.replicas == 1
        self.load_seconds = 0.0
        self.pipelined = False  # compiled with overlapped pipeline stages asked for
        self.first_run_seconds: float | None = None
        # time.perf_counter() of the last call: inputs requested, inputs copied
        # to program buffers, program finished, outputs handed back.
        self.timestamps: tuple[float, float, float, float] | None = None
        self._device_state: list[torch.Tensor] = []
        self._replica_state: list[list[torch.Tensor]] = []  # replicas 1.. without broadcast
        # (replica, argument) -> the storage a device copy had before the last call
        # wrote it (see _write_back): the next call's result buffer for that update.
        self._spare: dict[tuple[int, int], torch.Tensor] = {}
        # [seed, calls]: an input of the program that each call advances.
        self._random_state = torch.zeros(2, dtype=torch.int64)
        self.set_random_seed(random_seed)
        self.copy_weights_to_device()
        # (shape, dtype) of each distinct output result, in result order.
        out_specs = [x for x in graph.output_leaves if isinstance(x, TensorSpec)]
        by_result = {g.result: TensorSpec.of(g.expected) for g in graph.guards if g.result >= 0}
        by_result.update(zip(graph.output_results, out_specs, strict=True))
        self._output_shapes = [by_result[r].shape for r in range(graph.num_output_results)]
        self._result_specs = [(self.batching.result_shape(by_result[r].shape), by_result[r].dtype)
                              for r in range(graph.num_output_results)]
        self._make_call_plan()
        # The signature of a call: the traced one, with batched inputs.
        sig = graph.signature
        self.signature = Signature(sig.treespec, tuple(
            TensorSpec(self.batching.full_shape(x.shape), x.dtype, x.strides)
            if isinstance(x, TensorSpec)
            else x for x in sig.leaves))

    @property
    def stages(self) -> list[tuple[str, str]]:
        """(stage name, module text) for every pipeline stage, captured first.

        Unless the compile kept snapshots (a dump folder or TRACE logging), the texts are
        printed on first use by running the pipeline again (it is deterministic); a program
        loaded from the executable cache has only the captured module.
        """
        return list(self._program.stages)

    @property
    def timings(self) -> list[tuple[str, float]]:
        return list(self._program.timings)

    @property
    def origin(self) -> str:
        """"compiled", "loaded" (from the executable cache) or "recompiled: <why>"."""
        return self._program.origin

    @property
    def passes(self) -> list[tuple[str, str, str, float, str]]:
        """(stage, pass pipeline, name, seconds, module text after it) per top-level pass.

        The text is empty unless the compile kept snapshots (a dump folder or TRACE logging).
        """
        return list(self._program.passes)

    def timing_report(self) -> str:
        from . import _debug

        return _debug.timing_report(self)

    def _state_layouts(self) -> list[Layout]:
        """Per parameter/buffer: the layout the program reads it in (prepacked)."""
        n_inputs = self.graph.num_inputs
        n_state = len(self.graph.parameters) + len(self.graph.buffers)
        # After bufferization @main also has one out-param per result: skip those.
        layouts = list(self._program.argument_layouts)[n_inputs:n_inputs + n_state]
        return layouts + [([], [])] * (n_state - len(layouts))

    def set_random_seed(self, seed: int | None = None) -> None:
        """Restarts the random sequence of the model's random ops from ``seed``.

        The same seed gives the same numbers in every process (they are not
        the numbers of torch's CPU generator). Without a seed, one is drawn
        from torch's default generator (so ``torch.manual_seed`` governs it).
        No recompilation: the seed is an input of the compiled program.
        """
        if seed is None:
            seed = int(torch.randint(-2**63, 2**63 - 1, (), dtype=torch.int64))
        self._random_state.copy_(torch.tensor([seed, 0], dtype=torch.int64))

    def copy_weights_to_device(self) -> None:
        with torch.no_grad():
            # One copy each, straight into the layout the program reads.
            self._device_state = []
            for (_, t), layout in zip(self.graph.parameters + self.graph.buffers,
                                      self._state_layouts(), strict=True):
                view = _program_layout(t, layout)
                self._device_state.append(torch.empty(view.shape, dtype=view.dtype).copy_(view))
        self._replica_state = [] if self._broadcast else [
            [t.clone() for t in self._device_state] for _ in range(self.batching.replicas - 1)]
        self._make_call_plan()

    def copy_named_buffers_to_device(self, names: Sequence[str]) -> None:
        """Uploads only these buffers of the host model (in place: the program and every
        replica read the new values from the next call on)."""
        with torch.no_grad():
            n_params = len(self.graph.parameters)
            layouts = self._state_layouts()
            for i, (name, host) in enumerate(self.graph.buffers, n_params):
                if name not in names:
                    continue
                new = _program_layout(host, layouts[i])
                for state in (self._device_state, *self._replica_state):
                    state[i].copy_(new)

    def _make_call_plan(self) -> None:
        """The common call (positional tensors, one micro-batch, no writes, no random
        state) runs through ``_C.CallPlan``: input checks, output allocation and the
        run without Python in between. ``fast_call`` returns None for any other call."""
        graph = self.graph
        self._plan = None
        if (self.batching.looped or graph.buffer_update_args or graph.random_state_arg >= 0
                or graph.guards or not isinstance(graph.signature.treespec, tuple)
                or not hasattr(self, "_result_specs")):
            return
        self._plan = self._program.call_plan(
            [(x.shape, x.dtype, x.strides) for x in graph.signature.leaves], self._result_specs,
            self._device_state)
        single = graph.output_treespec.is_leaf() and graph.output_results == [0]
        self._single_output = single

    def fast_call(self, args: tuple[Any, ...]) -> Any:
        """Runs the common call, or returns None when it does not apply (see above)."""
        plan = self._plan
        if plan is None:
            return None
        start = time.perf_counter()
        outputs = plan(*args)
        if outputs is None:
            return None
        # Inputs are read in place and outputs written straight into the returned
        # tensors: no copy before or after the run (see getPerfCounters).
        done = time.perf_counter()
        self.timestamps = (start, start, done, done)
        return outputs[0] if self._single_output else self._unflatten_outputs(outputs)

    def copy_weights_to_host(self) -> None:
        with torch.no_grad():
            for (_, host), dev, layout in zip(self.graph.parameters + self.graph.buffers,
                                              self._device_state, self._state_layouts(),
                                              strict=True):
                host.copy_(_host_layout(dev, layout, host.shape))  # undo the upload's layout

    def check_signature(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Signature:
        sig = Signature.of(args, kwargs)
        if sig != self.signature:
            raise ArgumentError(
                "poptorch: the compiled model was traced for other inputs: "
                f"{self.signature.diff(sig)}. Trace and compile again for these inputs "
                "(poptorch.inferenceModel does this automatically).")
        return sig

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            out = self.fast_call(args)
            if out is not None:
                return out
        self.check_signature(args, kwargs)
        return self.run_unchecked(args, kwargs)

    def run_unchecked(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Runs on inputs whose signature the caller has already checked."""
        graph = self.graph
        if not kwargs and isinstance(graph.signature.treespec, tuple):
            user_inputs = list(args)  # Signature.of's fast path: all tensors
        else:
            leaves, _ = flatten_inputs(args, kwargs)
            user_inputs = [x for x in leaves if isinstance(x, torch.Tensor)]
            if len(user_inputs) != graph.num_inputs:
                # (The program trusts its buffers: a missing one would be read out of bounds.)
                raise errors.ArgumentError(
                    f"poptorch: the call has {len(user_inputs)} input tensors where the program "
                    f"was traced with {graph.num_inputs}: an input object gained or lost tensors "
                    "since its signature was checked")
        start = time.perf_counter()
        # Program buffers are contiguous CPU tensors (ipu inputs are host memory too).
        inputs = [program_buffer(x) for x in user_inputs]
        batching = self.batching
        if not batching.looped and not graph.buffer_update_args:
            # The common call: one micro-batch, no writes (kept short: this is
            # most of the per-call host overhead of a small model).
            outputs = [torch.empty(shape, dtype=dtype) for shape, dtype in self._result_specs]
            copied = time.perf_counter()
            self._run_program(self._program.run, inputs + self._device_state, outputs)
            ran = time.perf_counter()
            if graph.guards:
                self._check_guards(inputs, [outputs])
            result = self._unflatten_outputs(outputs)
            self.timestamps = (start, copied, ran, time.perf_counter())
            return result
        if batching.looped:
            inputs = [batching.split_input(x) for x in inputs]
        replicas = batching.replicas
        states = [self._device_state, *self._replica_state]
        # Every argument the model writes to comes back as an extra result:
        # parameters and buffers update the device copy (read back by
        # copy_weights_to_host), inputs are written back to the caller's
        # tensors as eager PyTorch would do.
        runs_in, runs_out = [], []
        for r in range(replicas):
            state = states[r] if r < len(states) else self._device_state
            run_in = inputs + state
            if graph.random_state_arg >= 0:
                run_in.append(self._random_state)
            if replicas > 1:
                run_in = [*run_in, torch.tensor(r, dtype=torch.int64)]
            run_out = [torch.empty(shape, dtype=dtype) for shape, dtype in self._result_specs]
            run_out += [self._update_buffer(r, arg, run_in[arg])
                        for arg in graph.buffer_update_args]
            runs_in.append(run_in)
            runs_out.append(run_out)
        copied = time.perf_counter()
        if replicas == 1:
            self._run_program(self._program.run, runs_in[0], runs_out[0])
        else:
            self._run_program(self._program.run_replicas, runs_in, runs_out)
        ran = time.perf_counter()
        if graph.guards:
            self._check_guards(inputs, runs_out)  # before anything is written back
        n_out = graph.num_output_results
        if graph.buffer_update_args:
            self._write_back(user_inputs, [out[n_out:] for out in runs_out])
        if batching.looped:
            outputs = [batching.combine([out[i] for out in runs_out], shape)
                       for i, shape in enumerate(self._output_shapes)]
        else:
            outputs = runs_out[0]
        result = self._unflatten_outputs(outputs)
        self.timestamps = (start, copied, ran, time.perf_counter())
        return result

    def _update_buffer(self, replica: int, arg: int, current: torch.Tensor) -> torch.Tensor:
        """The result buffer of the program's new value of argument ``arg``: the storage
        the device copy had before the last call, when it has the shape and dtype (a
        fresh allocation of a whole model's weights and optimizer state every step
        spent more time clearing new pages than a GPT-2 step's optimizer update)."""
        spare = self._spare.pop((replica, arg), None)
        if spare is not None and spare.shape == current.shape and spare.dtype == current.dtype \
                and spare.data_ptr() != current.data_ptr():
            return spare
        return torch.empty(current.shape, dtype=current.dtype)

    def _check_guards(self, inputs: list[torch.Tensor],
                      runs_out: list[list[torch.Tensor]]) -> None:
        """Raises GuardFailedError when a value the program was specialised on differs."""
        n_inputs = self.graph.num_inputs
        layouts = None
        for guard in self.graph.guards:
            if guard.in_program:
                continue  # see _run_program
            if guard.result >= 0:
                observed = [out[guard.result] for out in runs_out]
            elif guard.argument < n_inputs:
                observed = [inputs[guard.argument]]
            else:
                layouts = layouts or self._state_layouts()
                i = guard.argument - n_inputs
                state = self._device_state
                observed = [_host_layout(state[i], layouts[i], guard.expected.shape)
                            if i < len(state) else self._random_state]
            for value in observed:
                if not guard.holds(value):
                    raise guard.failure(value)

    def _run_program(self, run: Callable[..., None], *args: Any) -> None:
        """Runs the program; a host kernel whose result shape (data-dependent) differs
        from the traced one is a GuardFailedError, like any other guard."""
        try:
            run(*args)
        except errors.CompileError as e:
            text = str(e)
            if "guard failed)" not in text:
                raise
            for guard in self.graph.guards:
                op = guard.what.rsplit(" of ", 1)[-1]
                index = guard.what.split(" of result ", 1)[-1].split(" ", 1)[0]
                if guard.in_program and f"host kernel {op}" in text \
                        and f"result {index} has shape" in text:
                    found = re.search(r"has shape \[([^\]]*)\]", text)
                    sizes = [int(v) for v in found.group(1).split(",") if v.strip()] \
                        if found else []
                    raise guard.failure(torch.empty(sizes, dtype=guard.expected.dtype)) \
                        from None
            raise

    def adopt_state(self, other: Executable) -> None:
        """Shares ``other``'s device copies of the parameters and buffers (another variant
        of the same model, see PoplarExecutor): buffer updates carry over between them."""
        if other is self:
            return
        mine, theirs = self._state_layouts(), other._state_layouts()
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a == b and self._device_state[i].shape == other._device_state[i].shape:
                self._device_state[i] = other._device_state[i]
            else:
                name, host = (self.graph.parameters + self.graph.buffers)[i]
                dev = _host_layout(other._device_state[i], b, host.shape)
                self._device_state[i] = _program_layout(dev, a).contiguous()
        self._replica_state = other._replica_state if len(mine) == len(theirs) else []
        self._random_state = other._random_state
        self._make_call_plan()

    def _unflatten_outputs(self, outputs: list[torch.Tensor]) -> Any:
        graph = self.graph
        results = iter([outputs[r] for r in graph.output_results])
        out_leaves = [next(results) if isinstance(x, TensorSpec) else x
                      for x in graph.output_leaves]
        return pytree.tree_unflatten(out_leaves, graph.output_treespec)

    def _write_back(self, user_inputs: list[torch.Tensor],
                    updates: list[list[torch.Tensor]]) -> None:
        """Stores each replica's new values of the arguments the model wrote."""
        n_inputs = self.graph.num_inputs
        batching = self.batching
        with torch.no_grad():
            for k, arg in enumerate(self.graph.buffer_update_args):
                if arg < n_inputs:  # the caller's input: each replica wrote its slices
                    target = user_inputs[arg]
                    if batching.looped:
                        view = batching.input_slices(target) if target.is_contiguous() \
                            else target.unflatten(0, (batching.iterations, batching.slices, -1))
                        # Replicas of an input group wrote the same slice: keep the first's.
                        first = {s: r for r, s in reversed(list(enumerate(batching.replica_slices)))}
                        for s, r in first.items():
                            view[:, s].copy_(updates[r][k][:, r])
                    else:
                        target.copy_(updates[0][k])
                    continue
                i = arg - n_inputs
                if arg == self.graph.random_state_arg:  # advanced by replica 0's draws
                    self._random_state.copy_(updates[0][k])
                    continue
                # The device copies take the new values' storage instead of copying
                # them (a training step's weights and optimizer state: 8% of a
                # ResNet-18 step was these copies); every holder of the tensor
                # (another variant of the model, a call plan) sees the new values.
                for r, state in enumerate([self._device_state, *self._replica_state]):
                    self._spare[(r, arg)] = state[i].detach()  # the old storage
                    state[i].set_(updates[r][k])
