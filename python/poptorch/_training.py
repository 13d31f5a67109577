"""poptorch.trainingModel: one compiled program per training step.

PopTorch traced the forward pass and let PopART build the backward pass. Here the
dispatcher sees everything, so the whole step is traced as one module of the dialect
(``_TrainingStep``): the model's forward, its backward (``torch.func.grad``: the
backward aten ops reach the ipu device like any other op), and the optimizer's update
(``poptorch.optim``), with the weights, the optimizer state, the step counts and the
hyper-parameters as program arguments. The runtime keeps the weights and the optimizer
state resident between calls; the program writes their new values (buffer updates).

The loss is found in the graph, as PopTorch finds it: the result of
``poptorch.identity_loss`` or of a torch loss function (``torch.nn.functional.*_loss``,
``cross_entropy``, ..., which the ``nn`` loss modules call); the model's outputs are
returned as the model returns them.

With ``Training.gradientAccumulation(N)`` the gradients of N micro-batches are summed
(or averaged, ``accumulationAndReplicationReductionType``) into accumulators and the
update runs in a ``poptorch.cond`` every N-th micro-batch.

The host model is updated lazily, as in PopTorch: a training call touches nothing on
the host; the first read of a parameter, buffer, ``state_dict()`` or ``forward`` of the
model afterwards copies the device's weights back once (``copyWeightsToHost``).
"""

from __future__ import annotations

import copyreg
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
import torch.utils._pytree as pytree

from . import _export, optim
from ._control_flow import cond
from ._logging import logger
from ._poplar_executor import PoplarExecutor
from .enums import OutputMode, ReductionType
from .errors import ArgumentError, ArgumentTypeError, GuardFailedError
from .options import Options

# The torch functions whose result is a loss (the nn loss modules call them).
_LOSS_FUNCTIONS = {
    F.binary_cross_entropy, F.binary_cross_entropy_with_logits, F.cosine_embedding_loss,
    F.cross_entropy, F.ctc_loss, F.gaussian_nll_loss, F.hinge_embedding_loss, F.huber_loss,
    F.kl_div, F.l1_loss, F.margin_ranking_loss, F.mse_loss, F.multi_margin_loss,
    F.multilabel_margin_loss, F.multilabel_soft_margin_loss, F.nll_loss, F.poisson_nll_loss,
    F.smooth_l1_loss, F.soft_margin_loss, F.triplet_margin_loss,
    F.triplet_margin_with_distance_loss,
}


class _LossFinder(torch.overrides.TorchFunctionMode):
    """Finds the loss of the forward pass, as PopTorch finds it in the graph: the result of
    a torch loss function (the nn loss modules call them) or of ``identity_loss`` is a
    loss, and so is what is computed from one (``loss * 2``). The model is trained on the
    loss it returns (else the last one computed); one computed from two independent
    losses needs ``identity_loss``, as in PopTorch."""

    active = threading.local()

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[tuple[str, torch.Tensor]] = []  # (how, tensor)
        # id -> (tensor, the roots it is computed from, creation order)
        self.derived: dict[int, tuple[torch.Tensor, frozenset[int], int]] = {}
        self.warned_recomputation = False

    def _note(self, out: torch.Tensor, roots: frozenset[int]) -> None:
        self.derived[id(out)] = (out, roots, len(self.derived))

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if not isinstance(out, torch.Tensor):
            return out
        if func in _LOSS_FUNCTIONS:
            self.roots.append((func.__name__, out))
            self._note(out, frozenset({len(self.roots) - 1}))
            return out
        if not self.derived:  # no loss yet: nothing to follow (most of the forward)
            return out
        sources: frozenset[int] = frozenset()
        for t in pytree.tree_leaves((args, kwargs or {})):
            entry = self.derived.get(id(t)) if isinstance(t, torch.Tensor) else None
            if entry is not None and entry[0] is t:
                sources |= entry[1]
        if sources:
            self._note(out, sources)
        return out

    def __enter__(self) -> _LossFinder:
        _LossFinder.active.finder = self
        return super().__enter__()

    def __exit__(self, *exc: Any) -> None:
        _LossFinder.active.finder = None
        super().__exit__(*exc)

    def identity(self, result: torch.Tensor) -> None:
        """identity_loss's result: one loss, whatever it was computed from."""
        self.roots.append(("identity_loss", result))
        self._note(result, frozenset({len(self.roots) - 1}))

    def loss(self, out: Any) -> torch.Tensor:
        if not self.roots:
            raise ArgumentError("poptorch.trainingModel: Couldn't find a loss in graph! The "
                                "model must compute its loss with a torch loss function "
                                "(torch.nn.*Loss, torch.nn.functional.*_loss) or mark it with "
                                "poptorch.identity_loss(loss, reduction)")
        returned = [self.derived[id(t)] for t in pytree.tree_leaves(out)
                    if isinstance(t, torch.Tensor) and id(t) in self.derived
                    and self.derived[id(t)][0] is t]
        candidates = returned or list(self.derived.values())
        tensor, roots, _ = max(candidates, key=lambda e: e[2])  # the last computed
        if len(roots) > 1:
            names = ", ".join(self.roots[r][0] for r in sorted(roots))
            raise ArgumentError("poptorch.trainingModel: Multiple independent losses found in "
                                f"graph ({names}). Graph must have one final loss. Wrap final "
                                "graph loss in poptorch.identity_loss.")
        return tensor


def note_recomputation_checkpoint() -> None:
    """Called by poptorch.recomputationCheckpoint: in a training step it is accepted but
    has no effect, which the user is told once per trace."""
    finder = getattr(_LossFinder.active, "finder", None)
    if finder is not None and not finder.warned_recomputation:
        finder.warned_recomputation = True
        logger.warning("poptorch: recomputationCheckpoint has no effect in trainingModel "
                       "here: the program keeps every activation the backward pass reads "
                       "instead of recomputing it (results are the same; memory is not saved)")


def note_identity_loss(result: torch.Tensor) -> None:
    """Called by poptorch.identity_loss: ``result`` is the model's loss."""
    finder = getattr(_LossFinder.active, "finder", None)
    if finder is not None:
        finder.identity(result)


class _TrainingStep(torch.nn.Module):
    """Forward, backward and update of ``model`` as one module (see the docstring)."""

    def __init__(self, model: torch.nn.Module, optimizer: optim._PoptorchOptimizer,
                 options: Options) -> None:
        super().__init__()
        self.model = model
        self.state = torch.nn.Module()  # the optimizer's state and hyper-parameters
        self._optimizer = optimizer
        self._accumulation = options.Training.gradient_accumulation
        self._automatic_loss_scaling = bool(options.Training.automatic_loss_scaling)
        if self._automatic_loss_scaling and optimizer.variable_attrs.isConstant("loss_scaling"):
            raise ArgumentError("poptorch.trainingModel: automatic loss scaling changes the "
                                "loss scale while training: loss_scaling cannot be marked "
                                "constant (optimizer.variable_attrs.markAsVariable)")
        self._mean = options.Training.accumulation_and_replication_reduction_type \
            == ReductionType.Mean
        names = {id(p): n for n, p in model.named_parameters()}
        self._groups: list[list[str]] = []
        for group in optimizer.param_groups:
            members = []
            for p in group["params"]:
                if id(p) not in names:
                    raise ArgumentError("poptorch.trainingModel: the optimizer has a parameter "
                                        "that is not one of the model's")
                if p.requires_grad:
                    members.append(names[id(p)])
            self._groups.append(members)
        self.reset_state()

    def reset_state(self) -> None:
        """(Re)creates the state tensors from the optimizer's (zeros where it has none)."""
        opt = self._optimizer
        params = dict(self.model.named_parameters())
        buffers: dict[str, torch.Tensor] = {}
        for j, (group, members) in enumerate(zip(opt.param_groups, self._groups, strict=True)):
            first = group["params"][0] if group["params"] else None
            step = opt.state.get(first, {}).get("step") if first is not None else None
            buffers[f"g{j}_step"] = torch.tensor(int(step) if step is not None else 0)
            for attr, value in opt._hyper(group).items():
                if attr != "_group" and not opt.variable_attrs.isConstant(attr):
                    buffers[f"g{j}_{attr}"] = torch.tensor(value, dtype=torch.float32)
            for name in members:
                p = params[name]
                have = opt.state.get(p, {})
                for key, init in opt._initial_state(p).items():
                    value = have.get(key)
                    buffers[_state_key(name, key)] = (value.detach().clone().contiguous()
                                                      if isinstance(value, torch.Tensor)
                                                      else init)
                if self._accumulation > 1:
                    buffers[_state_key(name, "grad_accum")] = torch.zeros_like(p)
        if self._accumulation > 1:
            buffers["micro_batch"] = torch.tensor(0)
        if not opt.variable_attrs.isConstant("loss_scaling"):
            buffers["loss_scaling"] = torch.tensor(opt.loss_scaling, dtype=torch.float32)
        for key, value in buffers.items():
            self.state.register_buffer(key, value)
        self.bind_optimizer_state()

    def bind_optimizer_state(self) -> None:
        """The optimizer's ``state`` holds our tensors (so ``optimizer.state_dict()``
        reads what the device last wrote, once the weights are copied back)."""
        opt = self._optimizer
        params = dict(self.model.named_parameters())
        for j, members in enumerate(self._groups):
            step = getattr(self.state, f"g{j}_step")
            for name in members:
                p = params[name]
                entry = {key: getattr(self.state, _state_key(name, key))
                         for key in opt._initial_state(p)}
                entry["step"] = step
                opt.state[p] = entry

    def hyper_values(self) -> dict[str, float]:
        """The values of the variable hyper-parameters, by buffer name."""
        out = {}
        for j, group in enumerate(self._optimizer.param_groups):
            for attr, value in self._optimizer._hyper(group).items():
                if attr != "_group" and not self._optimizer.variable_attrs.isConstant(attr):
                    out[f"g{j}_{attr}"] = value
        if not self._optimizer.variable_attrs.isConstant("loss_scaling"):
            out["loss_scaling"] = self._optimizer.loss_scaling
        return out

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        from ._tracing import _expose_held_tensors

        opt = self._optimizer
        params = dict(self.model.named_parameters())
        trainable = {name: params[name] for members in self._groups for name in members}
        # The other tensors the forward pass reads are inputs of the differentiated
        # function too: it may write them (batch norm's running statistics).
        others = {name: t for name, t in params.items() if name not in trainable}
        others.update(self.model.named_buffers())
        # A variable loss scale is a tensor of the program (setOptimizer changes it
        # without recompiling; automatic loss scaling updates it); a constant one is
        # compiled in, and 1.0 then costs nothing.
        scaling: Any = (opt.loss_scaling if opt.variable_attrs.isConstant("loss_scaling")
                        else self.state.loss_scaling)
        unit = isinstance(scaling, float) and scaling == 1.0
        rebuilds: list[Any] = []

        def loss_of(weights: dict[str, torch.Tensor], rest: dict[str, torch.Tensor]
                    ) -> tuple[torch.Tensor, Any]:
            with _LossFinder() as finder:
                out = torch.func.functional_call(self.model, {**rest, **weights}, args, kwargs)
            loss = finder.loss(out)
            if loss.dim() > 0:
                loss = loss.sum()  # reduction "none": the gradient of every element is 1
            # Output objects that hold tensors (a transformers cache) pass through the
            # transform as their tensors, and are made again below.
            return loss if unit else loss * scaling, _expose_held_tensors(out, rebuilds)

        grads, out = torch.func.grad(loss_of, has_aux=True)(trainable, others)
        if rebuilds:
            for rebuild in rebuilds:
                rebuild.live = True
            out = pytree.tree_unflatten(*pytree.tree_flatten(out))
        with torch.no_grad():
            scaled = grads
            grads = {n: g if unit else g / scaling for n, g in grads.items()}
            if self._automatic_loss_scaling:  # after the gradients read this step's scale
                self._update_loss_scale(scaled)
            if self._accumulation == 1:
                self._apply(grads, trainable)
            else:
                self._accumulate_then_apply(grads, trainable)
        return out

    def _update_loss_scale(self, grads: dict[str, torch.Tensor]) -> None:
        """Automatic loss scaling, after PopART's: of the scaled float16 gradients, the
        proportion in the upper bin of a two-bin histogram (magnitudes from 1/8 of the
        largest float16, or not finite) halves the loss scale when it is above 1e-7 and
        doubles it otherwise, kept within [1, 2**15]. Gradients of other dtypes do not
        underflow and are not counted (a model without float16 ones keeps its scale)."""
        half = [g for g in grads.values() if g.dtype == torch.float16]
        if not half:
            logger.warning("poptorch: Training.setAutomaticLossScaling has no effect on this "
                           "model: it has no float16 gradients (the loss scale stays %s)",
                           self._optimizer.loss_scaling)
            return
        edge = 0.125 * torch.finfo(torch.float16).max
        upper = sum(((g.abs() >= edge) | ~torch.isfinite(g)).sum() for g in half)
        total = sum(g.numel() for g in half)
        scale = self.state.loss_scaling
        factor = torch.where(upper > 1e-7 * total, 0.5, 2.0)
        scale.copy_((scale * factor).clamp(1.0, 2.0 ** 15))

    def _clip(self, grads: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        limit = self._optimizer.max_grad_norm
        if limit is None or not grads:
            return grads
        total = torch.stack([g.norm() for g in grads.values()]).norm()
        factor = (limit / (total + 1e-6)).clamp(max=1.0)
        return {n: g * factor for n, g in grads.items()}

    def _hyper(self, j: int) -> dict[str, Any]:
        h = self._optimizer._hyper(self._optimizer.param_groups[j])
        for attr in list(h):
            if attr != "_group" and not self._optimizer.variable_attrs.isConstant(attr):
                h[attr] = getattr(self.state, f"g{j}_{attr}")
        return h

    def _updated(self, weights: dict[str, torch.Tensor], grads: dict[str, torch.Tensor],
                 state: dict[str, torch.Tensor], steps: list[torch.Tensor]
                 ) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
        """New weights and step counts; ``state`` (per-parameter state by key) is
        written in place."""
        grads = self._clip(grads)
        new_weights, new_steps = {}, []
        for j, members in enumerate(self._groups):
            step = steps[j] + 1
            new_steps.append(step)
            h = self._hyper(j)
            for name in members:
                mine = {key[len(name) + 1:]: t for key, t in state.items()
                        if key.startswith(name + "/")}
                new_weights[name] = self._optimizer._update(weights[name], grads[name], mine,
                                                            h, step)
        return new_weights, new_steps

    def _state_tensors(self) -> dict[str, torch.Tensor]:
        opt = self._optimizer
        params = dict(self.model.named_parameters())
        out = {}
        for members in self._groups:
            for name in members:
                for key in opt._initial_state(params[name]):
                    out[f"{name}/{key}"] = getattr(self.state, _state_key(name, key))
        return out

    def _steps(self) -> list[torch.Tensor]:
        return [getattr(self.state, f"g{j}_step") for j in range(len(self._groups))]

    def _apply(self, grads: dict[str, torch.Tensor], weights: dict[str, torch.Tensor]) -> None:
        steps = self._steps()
        new_weights, new_steps = self._updated(weights, grads, self._state_tensors(), steps)
        for name, value in new_weights.items():
            weights[name].copy_(value)
        for old, new in zip(steps, new_steps, strict=True):
            old.copy_(new)

    def _accumulate_then_apply(self, grads: dict[str, torch.Tensor],
                               weights: dict[str, torch.Tensor]) -> None:
        n = self._accumulation
        names = list(grads)
        accums = [getattr(self.state, _state_key(name, "grad_accum")) for name in names]
        summed = [a + grads[name] for a, name in zip(accums, names, strict=True)]
        counter = self.state.micro_batch
        count = counter + 1
        counter.copy_(count % n)
        state = self._state_tensors()
        state_keys = list(state)
        steps = self._steps()
        inputs = [weights[name] for name in names] + summed + list(state.values()) + steps
        k, s = len(names), len(state_keys)

        def update(*xs: torch.Tensor) -> list[torch.Tensor]:
            w = dict(zip(names, xs[:k], strict=True))
            total = xs[k:2 * k]
            g = {name: (t / n if self._mean else t) for name, t in zip(names, total, strict=True)}
            st = dict(zip(state_keys, xs[2 * k:2 * k + s], strict=True))
            new_w, new_steps = self._updated(w, g, st, list(xs[2 * k + s:]))
            return ([new_w[name] for name in names] + [torch.zeros_like(t) for t in total]
                    + list(st.values()) + new_steps)

        outs = cond(count == n, update, inputs, lambda *xs: list(xs), inputs)
        targets = [weights[name] for name in names] + accums + list(state.values()) + steps
        for target, value in zip(targets, outs, strict=True):
            target.copy_(value)


def _state_key(param: str, key: str) -> str:
    return f"{param.replace('.', '__')}__{key}"


class _HostSync:
    """The host model's modules read their parameters and buffers through this: the
    first read after a training call copies the device's weights back (PopTorch's lazy
    host sync). Installed by giving each module a subclass of its class."""

    @staticmethod
    def install(model: torch.nn.Module, executor: TrainingExecutor) -> None:
        ref = weakref.ref(executor)
        for module in model.modules():
            cls = type(module)
            if getattr(cls, "_poptorch_host_sync", False):
                module._poptorch_executor = ref
                continue
            module.__class__ = _synced_class(cls)
            module._poptorch_executor = ref

    @staticmethod
    def remove(model: torch.nn.Module) -> None:
        for module in model.modules():
            cls = type(module)
            if getattr(cls, "_poptorch_host_sync", False):
                module.__class__ = cls.__bases__[0]
                module.__dict__.pop("_poptorch_executor", None)


_SYNCED: dict[type, type] = {}


def _sync(module: torch.nn.Module) -> None:
    ref = module.__dict__.get("_poptorch_executor")
    executor = ref() if ref is not None else None
    if executor is not None:
        executor._sync_host()


def _synced_class(cls: type) -> type:
    synced = _SYNCED.get(cls)
    if synced is not None:
        return synced

    def __getattr__(self: torch.nn.Module, name: str) -> Any:  # noqa: N807
        if name in self.__dict__.get("_parameters", {}) or name in self.__dict__.get(
                "_buffers", {}):
            _sync(self)
        return cls.__getattr__(self, name)

    def synced_method(method: str) -> Callable[..., Any]:
        base = getattr(cls, method)

        def wrapper(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            _sync(self)
            return base(self, *args, **kwargs)
        wrapper.__name__ = method
        return wrapper

    namespace: dict[str, Any] = {"__getattr__": __getattr__, "_poptorch_host_sync": True,
                                 "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                 "__reduce_ex__": _reduce_synced}
    for method in ("state_dict", "parameters", "named_parameters", "buffers", "named_buffers",
                   "__call__"):
        namespace[method] = synced_method(method)
    synced = type(cls.__name__, (cls,), namespace)
    _SYNCED[cls] = synced
    return synced


def _reduce_synced(self: torch.nn.Module, protocol: int) -> Any:
    """torch.save / copy of a host-synced module: the plain module, weights current."""
    _sync(self)
    state = dict(self.__dict__)
    state.pop("_poptorch_executor", None)
    # Rebuilt as the model's own class: loading needs no poptorch.
    return copyreg._reconstructor, (type(self).__bases__[0], object, None), state


class TrainingExecutor(PoplarExecutor):
    """PopTorch's training PoplarExecutor: each call runs forward, backward and the
    optimizer's update of ``deviceIterations x gradientAccumulation`` micro-batches."""

    def __init__(self, model: torch.nn.Module, options: Options | None,
                 optimizer: torch.optim.Optimizer | None) -> None:
        options = options.clone() if options is not None else Options()
        options._values["training"] = True
        super().__init__(model, options)
        self._compile_options = self._replicas_as_accumulation(self._options)
        if optimizer is None:
            optimizer = optim.SGD(model.parameters(), lr=0.01)
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ArgumentTypeError("poptorch.trainingModel: optimizer must be a torch.optim or "
                                    f"poptorch.optim optimizer, got {type(optimizer).__name__}")
        self._optimizer = optim.convert(optimizer)
        self._step = _TrainingStep(model, self._optimizer, self._compile_options)
        self._host_dirty = False
        self._syncing = False
        self._compiled_constants: dict[tuple[int, str], float] = {}
        self._warned_grad_inputs = False
        _HostSync.install(model, self)

    # ---- compile and run
    def compile(self, *args: Any, **kwargs: Any) -> None:
        if not self._user_model.training:
            self._user_model.train()
        self._executable = self._trace_and_compile(args, kwargs)
        self._variants = [self._executable]
        self._signature = self._executable.signature
        self._attached = True
        self.compile_count += 1

    def _trace_target(self) -> tuple[torch.nn.Module, Options, Any]:
        # The whole step, its blocks placed on stages as the strategy says (see _traced).
        return self._step, self._compile_options, self._options.execution_strategy

    def _traced(self, graph: Any) -> None:
        """PopTorch's stage-count rule for pipelined training; the step itself runs its
        stages one after another (forward, backward and update are one sequence)."""
        from .execution_strategy import PipelinedExecution, ShardedExecution

        strategy = self._options.execution_strategy
        stages = len({p.stage for p in graph.blocks})
        graph.blocks = []  # compiled as one sequence, not outlined into stages
        if not isinstance(strategy, PipelinedExecution) or \
                isinstance(strategy, ShardedExecution) or stages < 2:
            return
        # PopTorch trains N forward stages as 2N - 1 (the backward of every stage but
        # the last is a stage of its own); gradient accumulation must fill them.
        total = 2 * stages - 1
        if self._options.Training.gradient_accumulation < total:
            raise ArgumentError(
                "poptorch.Options().Training.gradientAccumulation must be greater than or "
                f"equal to the number of pipeline stages ({total}) when using "
                f"poptorch.PipelinedExecution. Please note that a model with {stages} "
                f"pipeline stages in PopTorch will have an additional {stages - 1} stages "
                "when training.")
        logger.warning("poptorch: PipelinedExecution: the %d stages of the training step run "
                       "one after another for each micro-batch (results are the same as "
                       "pipelined)", stages)

    def _trace_and_compile_now(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self._sync_host()  # the program starts from the weights trained so far
        self._compiled_constants = _constants(self._optimizer)
        return super()._trace_and_compile_now(args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = self._detach_inputs(args, kwargs)
        from ._tracing import Signature

        with self._lock:
            if self._executable is None:
                self.compile(*args, **kwargs)
            elif Signature.of(args, kwargs) != self._signature:
                logger.warning("poptorch: recompiling the training step because %s",
                               self._signature.diff(Signature.of(args, kwargs)))
                self._sync_host()  # the new program starts from the trained weights
                self.compile(*args, **kwargs)
            elif not self._attached:
                self.attachToDevice()
            try:
                out = self._executable(*args, **kwargs)
            except GuardFailedError as failure:
                # A value the model read while tracing differs: trace the step again
                # for these inputs, from the weights trained so far.
                logger.warning("poptorch: recompiling the training step: %s",
                               failure.guard.describe(failure.observed))
                self._sync_host()
                self.compile(*args, **kwargs)
                out = self._executable(*args, **kwargs)
            self._host_dirty = True
            keep = self._compile_options._values.get("final_replicas", 0)
            if keep:
                # Final: the last micro-batch of each replica, in replica order.
                total = (self._compile_options.device_iterations
                         * self._compile_options.Training.gradient_accumulation)
                out = pytree.tree_map(
                    lambda t: t.reshape(total, -1, *t.shape[1:])[-keep:].flatten(0, 1)
                    if isinstance(t, torch.Tensor) and t.dim() > 0 and t.shape[0] % total == 0
                    else t, out)
            return out

    def _export_training(self) -> dict[str, Any]:
        self._sync_host()  # the exported model and optimizer state are the trained ones
        return {"optimizer": self._optimizer, "constants": dict(self._compiled_constants)}

    def loadExecutable(self, filename: str | os.PathLike[str]) -> None:  # noqa: N802
        """Uses the training step in ``filename`` (from ``compileAndExport`` of a
        training model with the same optimizer type, parameter groups and constant
        hyper-parameters) for this model."""
        blob = _export.read(filename)
        training = blob.get("training")
        if training is None:
            raise ArgumentError(f"poptorch: {os.fspath(filename)} holds an inference program; "
                                "load it with poptorch.load or inferenceModel(...)"
                                ".loadExecutable")
        exported = training["optimizer"]
        if type(exported) is not type(self._optimizer) or \
                len(exported.param_groups) != len(self._optimizer.param_groups):
            raise ArgumentError(f"poptorch: {os.fspath(filename)} was exported with a "
                                f"{type(exported).__name__} of {len(exported.param_groups)} "
                                "parameter group(s); this model's optimizer differs")
        constants = _constants(self._optimizer)
        if constants != training["constants"]:
            raise ArgumentError(f"poptorch: {os.fspath(filename)} compiled in the "
                                f"hyper-parameters {training['constants']}, this model's "
                                f"optimizer has {constants}; use the same values or compile")
        self._sync_host()
        self._executable = _export.executable_for(blob, self._step, self._compile_options)
        self._variants = [self._executable]
        self._signature = self._executable.signature
        self._attached = True
        self._compiled_constants = constants

    @staticmethod
    def _replicas_as_accumulation(options: Options) -> Options:
        """The options the step is compiled with. Replicas compute the gradients of their
        own micro-batches and reduce them before the common update, which is gradient
        accumulation over ``replicas x gradientAccumulation`` micro-batches: the program
        runs them one after another (the input layout stays ``[iteration][replica]``).
        With ``Final`` outputs it returns every micro-batch's and the call keeps the
        last iteration's of each replica (see ``__call__``)."""
        replicas = options.replication_factor
        if replicas == 1:
            return options
        if options._values["input_group_size"] not in (None, 1):
            raise ArgumentError("poptorch.trainingModel: inputReplicaGrouping is not supported "
                                "for training")
        mode = options._values["output_mode"]
        if mode not in (OutputMode.Default, OutputMode.Final, OutputMode.All):
            raise ArgumentError(f"poptorch.trainingModel: outputMode {mode.name} with "
                                "replicationFactor > 1 is not supported for training yet; use "
                                "Final or All")
        compiled = options.clone()
        compiled._values["replication_factor"] = 1
        compiled.Training._values["gradient_accumulation"] = \
            options.Training.gradient_accumulation * replicas
        compiled._values["output_mode"] = OutputMode.All
        compiled._values["final_replicas"] = replicas \
            if mode in (OutputMode.Default, OutputMode.Final) else 0
        return compiled

    def _detach_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                       ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        import torch.utils._pytree as pytree

        def detach(x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.requires_grad:
                if not self._warned_grad_inputs:
                    logger.warning("poptorch.trainingModel: an input tensor has "
                                   "requires_grad=True; it is detached (gradients with "
                                   "respect to inputs are not computed)")
                    self._warned_grad_inputs = True
                return x.detach()
            return x
        return pytree.tree_map(detach, (tuple(args), dict(kwargs)))

    # ---- weights and optimizer
    def _sync_host(self) -> None:
        if self._host_dirty and not self._syncing and self._executable is not None \
                and self._attached:
            self._syncing = True
            try:
                self._executable.copy_weights_to_host()
            finally:
                self._syncing = False
        self._host_dirty = False

    def copyWeightsToHost(self) -> None:  # noqa: N802
        self._host_dirty = True
        self._sync_host()

    def copyWeightsToDevice(self) -> None:  # noqa: N802
        """Uploads the host model's weights and the optimizer's state, discarding what
        the device trained since the last copy to the host."""
        self._host_dirty = False
        if self._executable is not None:
            self._executable.copy_weights_to_device()

    def detachFromDevice(self) -> None:  # noqa: N802
        self._sync_host()  # the trained weights are kept (on the host)
        super().detachFromDevice()

    def destroy(self) -> None:
        self._sync_host()
        super().destroy()
        _HostSync.remove(self._user_model)

    def setOptimizer(self, optimizer: torch.optim.Optimizer) -> None:  # noqa: N802
        """Takes ``optimizer``'s hyper-parameters (learning rates, loss scaling, ...)
        without recompiling when only variable attributes changed; a new state (from
        ``load_state_dict``) is uploaded too."""
        new = optim.convert(optimizer)
        old = self._optimizer
        if type(new) is not type(old) or len(new.param_groups) != len(old.param_groups):
            raise ArgumentError("poptorch: setOptimizer needs an optimizer of the same type and "
                                "parameter groups as the model was compiled with")
        compiled = self._compiled_constants
        changed_constant = [attr for (j, attr), value in _constants(new).items()
                            if compiled.get((j, attr), value) != value]
        self._sync_host()
        if changed_constant:
            # Constants are compiled in: compile again.
            logger.warning("poptorch: setOptimizer changes %s, compiled in as constants: "
                           "recompiling", sorted(set(changed_constant)))
            self._adopt(new)
            self._executable = None
            return
        state_changed = new is not old
        self._adopt(new)
        if self._executable is None:
            return
        values = self._step.hyper_values()
        with torch.no_grad():
            for name, value in values.items():
                getattr(self._step.state, name).fill_(value)
        if state_changed:
            self._executable.copy_weights_to_device()
        else:
            self._executable.copy_named_buffers_to_device(
                [f"state.{name}" for name in values])

    def _adopt(self, new: optim._PoptorchOptimizer) -> None:
        old = self._optimizer
        if new is not old:
            # The new optimizer's own parameters must be the model's: rebind its groups.
            for g_new, g_old in zip(new.param_groups, old.param_groups, strict=True):
                mapping = dict(zip(map(id, g_new["params"]), g_old["params"], strict=True))
                if any(p not in mapping for p in map(id, g_new["params"])):
                    raise ArgumentError("poptorch: setOptimizer: parameter groups differ")
                state = {p_old: new.state[p_new] for p_new, p_old in
                         zip(g_new["params"], g_old["params"], strict=True) if p_new in new.state}
                g_new["params"] = list(g_old["params"])
                for p, s in state.items():
                    new.state[p] = s
            self._optimizer = new
            self._step._optimizer = new
            self._step.reset_state()

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        self._sync_host()
        if self._step._automatic_loss_scaling and self._executable is not None:
            # The loss scale the program has reached.
            self._optimizer.loss_scaling = float(self._step.state.loss_scaling)
        return self._optimizer

    def __repr__(self) -> str:
        return f"TrainingExecutor({self._user_model!r}, compiled={self.isCompiled()})"


def _constants(optimizer: optim._PoptorchOptimizer) -> dict[tuple[int, str], float]:
    """The hyper-parameters compiled into the program: (group, attribute) -> value."""
    out = {}
    if optimizer.variable_attrs.isConstant("loss_scaling"):
        out[(-1, "loss_scaling")] = optimizer.loss_scaling
    for j, group in enumerate(optimizer.param_groups):
        for attr, value in optimizer._hyper(group).items():
            if attr != "_group" and optimizer.variable_attrs.isConstant(attr):
                out[(j, attr)] = value
    return out


def trainingModel(model: torch.nn.Module, options: Options | None = None,  # noqa: N802
                  optimizer: torch.optim.Optimizer | None = None) -> TrainingExecutor:
    """PopTorch's training wrapper: each call runs the model's forward pass, finds its
    loss, computes the gradients and updates the weights with ``optimizer`` (default
    ``poptorch.optim.SGD(lr=0.01)``), all in one compiled program, and returns the
    model's outputs."""
    if not isinstance(model, torch.nn.Module):
        raise ArgumentTypeError("poptorch.trainingModel expects a torch.nn.Module")
    if any(isinstance(m, PoplarExecutor) for m in (model,)):
        raise ArgumentTypeError("poptorch.trainingModel expects the model, not a wrapped one")
    return TrainingExecutor(model, options, optimizer)



