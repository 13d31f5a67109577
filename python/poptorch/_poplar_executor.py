"""The object behind poptorch.inferenceModel (PopTorch's PoplarExecutor)."""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import torch

from . import _debug, _export
from ._batching import Batching, micro_batch_call
from ._logging import logger
from ._tracing import Executable, Signature, meta_memo, trace
from .errors import ArgumentError, ArgumentTypeError, GuardFailedError, StateError, TraceError
from .options import Options

# Variants kept per input signature for the values a model reads while tracing.
MAX_VARIANTS = 8


@contextlib.contextmanager
def _class_forward(model: torch.nn.Module, executor: PoplarExecutor) -> Iterator[None]:
    """While tracing: the model's own ``forward``, where the model's instance attribute
    ``forward`` is its executor (``model.forward = poptorch.inferenceModel(model)``, so
    that code that calls the model, such as transformers' ``generate()``, runs the
    compiled program)."""
    replaced = model.__dict__.get("forward") is executor
    if replaced:
        del model.forward
    try:
        yield
    finally:
        if replaced:
            model.forward = executor


class PoplarExecutor:
    """Wraps a model: compiles on the first call, then replays the program.

    A call whose inputs differ in shape, dtype or structure from the traced
    ones recompiles and logs which input changed.
    """

    # registerPreCompileHook / registerPostCompileHook: called, without arguments,
    # around every compilation of any model (variants included).
    _precompile_hooks: OrderedDict[int, Callable[[], Any]] = OrderedDict()
    _postcompile_hooks: OrderedDict[int, Callable[[], Any]] = OrderedDict()

    def __init__(self, model: torch.nn.Module, options: Options | None = None) -> None:
        self._user_model = model
        self._options = options.clone() if options is not None else Options()
        self._executable: Executable | None = None
        self._variants: list[Executable] = []  # for the current signature, most recent first
        self._signature: Signature | None = None
        self.compile_count = 0
        self._attached = False
        self._lock = threading.RLock()  # see __call__

    @property
    def model(self) -> torch.nn.Module:
        return self._user_model

    @property
    def options(self) -> Options:
        return self._options

    def isCompiled(self) -> bool:  # noqa: N802
        return self._executable is not None

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Traces and compiles for these inputs without running."""
        if self._user_model.training:
            logger.warning("poptorch: inferenceModel compiles the model in eval mode")
            self._user_model.eval()
        accumulation = self._options.Training.gradient_accumulation
        if accumulation > 1:
            logger.warning("poptorch: Training.gradientAccumulation(%d) only applies to "
                           "trainingModel: inferenceModel ignores it", accumulation)
        # The model is traced for one micro-batch: a call's batch holds
        # deviceIterations x replicationFactor of them (see _batching).
        self._check_named_buffers(self._options._values["updatable_named_buffers"])
        self._executable = self._trace_and_compile(args, kwargs)
        self._variants = [self._executable]
        self._signature = self._executable.signature
        self._attached = True
        self.compile_count += 1

    def _trace_and_compile(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Executable:
        for hook in list(PoplarExecutor._precompile_hooks.values()):
            hook()
        executable = self._trace_and_compile_now(args, kwargs)
        for hook in list(PoplarExecutor._postcompile_hooks.values()):
            hook()
        return executable

    def _trace_target(self) -> tuple[torch.nn.Module, Options, Any]:
        """What is traced, the options it is compiled with and its execution strategy."""
        return self._user_model, self._options, self._options.execution_strategy

    def _trace_and_compile_now(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Executable:
        module, options, strategy = self._trace_target()
        micro_args, micro_kwargs = micro_batch_call(Batching.from_options(options), args, kwargs)
        with meta_memo(options._values["executable_cache_dir"]), \
                _class_forward(self._user_model, self):
            graph = trace(module, *micro_args,
                          source_location_excludes=options._values["source_location_excludes"],
                          execution_strategy=strategy,
                          host_kernels=options._values["host_kernels"], **micro_kwargs)
        self._traced(graph)
        return graph.compile(options)

    def _traced(self, graph: Any) -> None:
        """Checks or adjusts the traced graph before it is compiled (training steps)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        exe = self._executable
        if exe is not None and not kwargs and self._attached \
                and exe.first_run_seconds is not None:
            out = exe.fast_call(args)  # the common call, checked and run in C++
            if out is not None:
                return out
        # Compiling, recompiling, re-attaching and switching variants change the
        # executor: one thread at a time. Compiled calls run concurrently.
        with self._lock:
            exe = self._ready(args, kwargs)
            if exe.first_run_seconds is None:
                return self._run_guarded(exe, args, kwargs)
        try:
            return exe.run_unchecked(args, kwargs)
        except GuardFailedError as failure:
            with self._lock:
                return self._run_variant(failure, exe, args, kwargs)

    def _ready(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Executable:
        """The executable for these inputs: compiled, or recompiled for another signature."""
        sig = Signature.of(args, kwargs)
        if self._executable is None:
            self.compile(*args, **kwargs)
        elif sig != self._signature:
            logger.warning("poptorch: recompiling because %s", self._signature.diff(sig))
            old_graph = self._executable.graph
            self.compile(*args, **kwargs)
            _debug.log_recompile(old_graph, self._executable.graph)
        elif not self._attached:
            self.attachToDevice()  # as PopTorch: a detached model re-attaches when called
        return self._executable

    def _run_guarded(self, exe: Executable, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> Any:
        try:
            return self._run(args, kwargs)
        except GuardFailedError as failure:
            return self._run_variant(failure, exe, args, kwargs)

    def _run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self._executable.first_run_seconds is None:
            return _debug.first_run(self, args, kwargs)
        return self._executable.run_unchecked(args, kwargs)

    def _run_variant(self, failure: GuardFailedError, failed: Executable,
                     args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A value the program ``failed`` was specialised on differs for these inputs:
        runs the variant compiled for them (most recently used first), or traces and
        compiles one. At most MAX_VARIANTS are kept per input signature; variants share
        the device copies of the parameters and buffers. Called with the lock held."""
        logger.warning("poptorch: the program was specialised on %s",
                       failure.guard.describe(failure.observed))
        for variant in [v for v in self._variants if v is not failed]:
            variant.adopt_state(self._executable)
            self._executable = variant
            try:
                out = self._run(args, kwargs)
            except GuardFailedError:
                continue
            self._variants.remove(variant)
            self._variants.insert(0, variant)
            logger.info("poptorch: ran the variant compiled for these values")
            return out
        logger.warning("poptorch: compiling a variant for these inputs (%d kept at most)",
                       MAX_VARIANTS)
        variant = self._trace_and_compile(args, kwargs)
        variant.adopt_state(self._executable)
        self._executable = variant
        self._variants.insert(0, variant)
        del self._variants[MAX_VARIANTS:]
        self.compile_count += 1
        try:
            return self._run(args, kwargs)
        except GuardFailedError as again:
            raise TraceError(
                f"poptorch: {again.guard.describe(again.observed)}, although the model was "
                "traced for these very inputs: the value is not reproducible (it depends on "
                "memory the model does not initialise, or on the order of a parallel "
                "reduction). Keep that decision out of the model.") from again

    def copyWeightsToDevice(self) -> None:  # noqa: N802
        if self._executable is not None:
            self._executable.copy_weights_to_device()

    def copyNamedBuffersToDevice(self) -> None:  # noqa: N802
        """Uploads only the buffers named by ``Options.updatableNamedBuffers`` (PopTorch's
        cheaper alternative to ``copyWeightsToDevice`` when only those buffers changed)."""
        names = self._options._values["updatable_named_buffers"]
        if not names:
            raise StateError("poptorch: copyNamedBuffersToDevice() needs the buffers to be "
                               "listed first with poptorch.Options().updatableNamedBuffers([...])")
        self._check_named_buffers(names)
        if self._executable is not None:
            self._executable.copy_named_buffers_to_device(names)

    def _check_named_buffers(self, names: list[str]) -> None:
        known = dict(self._user_model.named_buffers())
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ArgumentError(f"poptorch: Options().updatableNamedBuffers lists {unknown}, which "
                             f"the model has no buffers named; its buffers are {sorted(known)}")

    def copyWeightsToHost(self) -> None:  # noqa: N802
        if self._executable is not None:
            self._executable.copy_weights_to_host()

    def compileAndExport(self, filename: str | os.PathLike[str], *args: Any,  # noqa: N802
                         export_model: bool = True, **kwargs: Any) -> None:
        """Compiles for these inputs and writes the executable (and the model) to
        ``filename``; ``poptorch.load(filename)`` runs it without compiling."""
        if not (args or kwargs or self._executable is None):
            _export.export(self, filename, export_model=export_model)
            return
        # Compile with a private executable cache, whose entry is what the file holds.
        compiled_with = {id(o): o for o in (self._options, self._trace_target()[1])}
        user_cache = self._options._values["executable_cache_dir"]
        with tempfile.TemporaryDirectory() as cache_dir:
            for o in compiled_with.values():
                o._values["executable_cache_dir"] = cache_dir
            try:
                self.compile(*args, **kwargs)
            finally:
                for o in compiled_with.values():
                    o._values["executable_cache_dir"] = user_cache
            _export.export(self, filename, export_model=export_model, cache_dir=cache_dir)

    def _export_training(self) -> dict[str, Any] | None:
        """What an exported training step carries besides its program (None: inference)."""
        return None

    def loadExecutable(self, filename: str | os.PathLike[str]) -> None:  # noqa: N802
        """Uses the executable in ``filename`` (from ``compileAndExport``) for this model."""
        blob = _export.read(filename)
        if blob.get("training") is not None:
            raise ArgumentError(f"poptorch: {os.fspath(filename)} holds a training step; load "
                                "it with poptorch.load or trainingModel(...).loadExecutable")
        self._executable = _export.executable_for(blob, self._user_model, self._options)
        self._variants = [self._executable]
        self._signature = self._executable.signature
        self._attached = True

    def isAttachedToDevice(self) -> bool:  # noqa: N802
        return self._attached

    def detachFromDevice(self) -> None:  # noqa: N802
        """Releases the device: its copy of the weights and buffers is dropped (buffer
        updates not yet copied with copyWeightsToHost() are lost, as on an IPU)."""
        if self._executable is None:
            raise StateError("poptorch: cannot detach from the device: the model has not been "
                               "compiled")
        if not self._attached:
            raise StateError("poptorch: cannot detach from the device: it is not attached")
        self._attached = False

    def attachToDevice(self) -> None:  # noqa: N802
        """Attaches again and uploads the host model's weights and buffers."""
        if self._executable is None:
            raise StateError("poptorch: cannot attach to the device: the model has not been "
                               "compiled")
        if self._attached:
            raise StateError("poptorch: cannot attach to the device: it is already attached")
        self._executable.copy_weights_to_device()
        self._attached = True

    def getPerfCounters(self) -> dict[str, list[list[float]]]:  # noqa: N802
        """Host timestamps (``time.perf_counter()`` seconds) of the last call, as PopTorch's
        ``{'input': ..., 'input_complete': ..., 'output': ..., 'output_complete': ...}``.

        Each value has one list per input (``input``, ``input_complete``) or per
        output (``output``, ``output_complete``). The device-iteration loop runs
        inside the compiled program, so each list holds one timestamp per call
        (not one per iteration): ``input`` when the call started copying its
        inputs into program buffers, ``input_complete`` when they were ready,
        ``output`` when the program finished and ``output_complete`` when the
        outputs were handed back. Only differences are meaningful.
        """
        executable = self._executable
        if executable is None or executable.timestamps is None:
            return {"input": [[]], "input_complete": [[]], "output": [[]],
                    "output_complete": [[]]}
        start, copied, ran, done = executable.timestamps
        n_in = max(executable.graph.num_inputs, 1)
        n_out = max(len(executable.graph.output_results), 1)
        return {"input": [[start] for _ in range(n_in)],
                "input_complete": [[copied] for _ in range(n_in)],
                "output": [[ran] for _ in range(n_out)],
                "output_complete": [[done] for _ in range(n_out)]}

    def destroy(self) -> None:
        self._executable = None
        self._variants = []
        self._signature = None
        self._attached = False

    @property
    def executable(self) -> Executable | None:
        return self._executable

    def __repr__(self) -> str:
        return f"PoplarExecutor({self._user_model!r}, compiled={self.isCompiled()})"

    def __getattr__(self, name: str) -> Any:
        """The wrapped model's attributes (its submodules, parameters, buffers, methods),
        as PopTorch's executor gives them: ``executor.fc.weight`` is ``model.fc.weight``.
        (Only names the executor itself does not have reach here.)"""
        model = self.__dict__.get("_user_model")
        if model is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(model, name)


def inferenceModel(model: torch.nn.Module, options: Options | None = None) -> PoplarExecutor:  # noqa: N802
    """PopTorch's entry point: a callable that runs ``model`` compiled for the ipu."""
    if not isinstance(model, torch.nn.Module):
        raise ArgumentTypeError("poptorch.inferenceModel expects a torch.nn.Module; "
                        "use poptorch.experimental.IPUContext for functions")
    return PoplarExecutor(model, copy.copy(options) if options is not None else None)


def load(filename: str | os.PathLike[str],
         edit_opts_fn: Any | None = None) -> PoplarExecutor:
    """PopTorch's ``poptorch.load``: the model and executable that ``compileAndExport``
    wrote, ready to run without compiling. ``edit_opts_fn(options)`` may change options
    that do not change the program."""
    blob = _export.read(filename)
    model = blob["model"]
    if model is None:
        raise ArgumentError(f"poptorch: {os.fspath(filename)} was exported with export_model=False; "
                         "use inferenceModel(model, options).loadExecutable(filename)")
    options = blob["options"]
    if edit_opts_fn is not None:
        edit_opts_fn(options)
    training = blob.get("training")
    if training is not None:
        from ._training import TrainingExecutor

        executor: PoplarExecutor = TrainingExecutor(model, options, training["optimizer"])
    else:
        executor = PoplarExecutor(model, options)
    executor.loadExecutable(filename)
    return executor


def _register_hook(hooks: OrderedDict[int, Callable[[], Any]], hook: Any,
                   what: str) -> torch.utils.hooks.RemovableHandle:
    if not callable(hook):
        raise RuntimeError(f"{what} hook must be callable")
    handle = torch.utils.hooks.RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def registerPreCompileHook(hook: Callable[[], Any]  # noqa: N802
                           ) -> torch.utils.hooks.RemovableHandle:
    """Registers ``hook`` to be called (without arguments) before each model compiles;
    ``handle.remove()`` unregisters it."""
    return _register_hook(PoplarExecutor._precompile_hooks, hook, "Pre-compile")


def registerPostCompileHook(hook: Callable[[], Any]  # noqa: N802
                            ) -> torch.utils.hooks.RemovableHandle:
    """Registers ``hook`` to be called (without arguments) after each model compiles;
    ``handle.remove()`` unregisters it."""
    return _register_hook(PoplarExecutor._postcompile_hooks, hook, "Post-compile")
