"""PopTorch's optimizers (``poptorch.optim``) for ``poptorch.trainingModel``.

Each class is the ``torch.optim`` optimizer of the same name (it can step a CPU model
as usual) with PopTorch's extra arguments, and knows its update as a function of
tensors: ``trainingModel`` traces that function into the training step's program, with
the hyper-parameters and step counts as program inputs (a new learning rate does not
recompile) and the optimizer state resident with the weights.

Torch's own ``torch.optim.SGD``, ``Adam``, ``AdamW`` and ``RMSprop`` given to
``trainingModel`` are converted to these classes with the same hyper-parameters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from .errors import ArgumentError, ArgumentTypeError

__all__ = ["LAMB", "SGD", "Adam", "AdamW", "RMSprop", "VariableAttributes"]

_ACCUM_TYPES = (None, torch.float32, torch.float16)


def _accum(name: str, value: Any) -> Any:
    if value not in _ACCUM_TYPES:
        raise ArgumentError(f"poptorch.optim: {name} must be torch.float32 or torch.float16, "
                            f"got {value!r}")
    return value


class VariableAttributes:
    """Which hyper-parameters of an optimizer are program inputs ("variable": changing
    them with ``setOptimizer`` needs no recompilation) and which are compiled in
    ("constant")."""

    def __init__(self, variable: Iterable[str], allowed: Iterable[str]) -> None:
        self._allowed = set(allowed)
        self._variable = set(variable) & self._allowed

    def isConstant(self, attr: str) -> bool:  # noqa: N802
        return attr not in self._variable

    def markAsConstant(self, attr: str) -> None:  # noqa: N802
        self._check(attr)
        self._variable.discard(attr)

    def markAsVariable(self, attr: str) -> None:  # noqa: N802
        self._check(attr)
        self._variable.add(attr)

    def _check(self, attr: str) -> None:
        if attr not in self._allowed:
            raise ArgumentError(f"poptorch.optim: unknown attribute {attr!r}; the optimizer's "
                                f"attributes are {sorted(self._allowed)}")


class _PoptorchOptimizer:
    """The parts every poptorch optimizer shares: PopTorch's extra arguments and the
    description of the update that ``trainingModel`` traces."""

    # hyper-parameters of a parameter group that are tensors of the program
    _group_attrs: tuple[str, ...] = ()
    # per-parameter state tensors: (name, dtype option or None)
    _state_names: tuple[str, ...] = ()
    _steps = False  # whether the update needs the step count

    def _poptorch_init(self, loss_scaling: float | None, max_grad_norm: float | None,
                       accum_type: Any) -> None:
        self.loss_scaling = 1.0 if loss_scaling is None else float(loss_scaling)
        if self.loss_scaling <= 0:
            raise ArgumentError(f"poptorch.optim: loss_scaling must be > 0, got {loss_scaling}")
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        if self.max_grad_norm is not None and self.max_grad_norm <= 0:
            raise ArgumentError(f"poptorch.optim: max_grad_norm must be > 0, got {max_grad_norm}")
        self.accum_type = _accum("accum_type", accum_type)
        attrs = self._group_attrs + ("loss_scaling",)
        self.variable_attrs = VariableAttributes(attrs, attrs)  # all variable at first

    def __getstate__(self) -> dict[str, Any]:
        # torch.optim.Optimizer pickles its defaults, state and groups only: PopTorch's
        # attributes (loss_scaling, variable_attrs, ...) travel too (an exported
        # training step carries its optimizer).
        state = torch.optim.Optimizer.__getstate__(self)  # type: ignore[arg-type]
        state.update({k: v for k, v in self.__dict__.items()
                      if k not in state and not k.startswith("_")})
        return state

    def _momentum_accum_types(self, first: Any, second: Any) -> None:
        self.first_order_momentum_accum_type = _accum("first_order_momentum_accum_type", first)
        self.second_order_momentum_accum_type = _accum("second_order_momentum_accum_type", second)

    # ---- the traced update
    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, torch.Tensor],
                h: dict[str, torch.Tensor], step: torch.Tensor) -> torch.Tensor:
        """The new value of parameter ``p`` for gradient ``g`` (already unscaled),
        updating ``state`` in place; ``h``: the group's hyper-parameters (0-d tensors
        or compiled-in floats); ``step``: this update's number (1, 2, ...)."""
        raise NotImplementedError

    def _initial_state(self, p: torch.Tensor) -> dict[str, torch.Tensor]:
        return {name: torch.zeros_like(p, memory_format=torch.contiguous_format)
                for name in self._state_names}

    def _hyper(self, group: dict[str, Any]) -> dict[str, Any]:
        """The group's hyper-parameters by the names the updates use (betas split)."""
        h: dict[str, Any] = {"_group": group}
        for name in self._group_attrs:
            if name in ("beta1", "beta2"):
                h[name] = float(group["betas"][0 if name == "beta1" else 1])
            else:
                h[name] = float(group[name])
        return h


class SGD(_PoptorchOptimizer, torch.optim.SGD):
    """``torch.optim.SGD`` with PopTorch's arguments. ``velocity_scaling`` and
    ``use_combined_accum`` only change how an IPU stores the velocity; results are
    torch's."""

    _group_attrs = ("lr", "momentum", "dampening", "weight_decay")
    _state_names = ("momentum_buffer",)
    _steps = True

    def __init__(self, params: Any, lr: float = 0.01, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, loss_scaling: float | None = None,
                 velocity_scaling: float | None = None, use_combined_accum: bool | None = None,
                 accum_type: Any = None, velocity_accum_type: Any = None,
                 max_grad_norm: float | None = None) -> None:
        torch.optim.SGD.__init__(self, params, lr=lr, momentum=momentum, dampening=dampening,
                                 weight_decay=weight_decay, nesterov=nesterov,
                                 maximize=maximize, foreach=foreach, differentiable=differentiable)
        self.velocity_scaling = 1.0 if velocity_scaling is None else float(velocity_scaling)
        self.use_combined_accum = use_combined_accum
        self.velocity_accum_type = _accum("velocity_accum_type", velocity_accum_type)
        self._poptorch_init(loss_scaling, max_grad_norm, accum_type)

    def _update(self, p, g, state, h, step):
        group = h["_group"]
        if group["maximize"]:
            g = -g
        g = g + h["weight_decay"] * p
        if group["momentum"] != 0:
            buf = state["momentum_buffer"]
            new = torch.where(step == 1, g, h["momentum"] * buf + (1 - h["dampening"]) * g)
            buf.copy_(new)
            g = g + h["momentum"] * new if group["nesterov"] else new
        return p - h["lr"] * g

    def _initial_state(self, p):
        return {} if all(g["momentum"] == 0 for g in self.param_groups) else \
            super()._initial_state(p)


class Adam(_PoptorchOptimizer, torch.optim.Adam):
    """``torch.optim.Adam`` with PopTorch's arguments."""

    _group_attrs = ("lr", "beta1", "beta2", "eps", "weight_decay")
    _state_names = ("exp_avg", "exp_avg_sq")
    _steps = True
    _decoupled = False
    bias_correction = True  # AdamW(bias_correction=False) drops the corrections

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 loss_scaling: float | None = None, accum_type: Any = None,
                 first_order_momentum_accum_type: Any = None,
                 second_order_momentum_accum_type: Any = None,
                 max_grad_norm: float | None = None) -> None:
        torch.optim.Adam.__init__(
            self, params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
            amsgrad=amsgrad, foreach=foreach, maximize=maximize, capturable=capturable,
            differentiable=differentiable, fused=fused,
            decoupled_weight_decay=self._decoupled)
        self._momentum_accum_types(first_order_momentum_accum_type,
                                   second_order_momentum_accum_type)
        self._poptorch_init(loss_scaling, max_grad_norm, accum_type)

    def _update(self, p, g, state, h, step):
        group = h["_group"]
        if group["maximize"]:
            g = -g
        if self._decoupled:
            p = p * (1 - h["lr"] * h["weight_decay"])
        else:
            g = g + h["weight_decay"] * p
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.copy_(h["beta1"] * m + (1 - h["beta1"]) * g)
        v.copy_(h["beta2"] * v + (1 - h["beta2"]) * g * g)
        second = v
        if group["amsgrad"]:
            vmax = state["max_exp_avg_sq"]
            vmax.copy_(torch.maximum(vmax, v))
            second = vmax
        if not self.bias_correction:
            return p - h["lr"] * m / (second.sqrt() + h["eps"])
        stepf = step.to(p.dtype)
        correction1 = 1 - h["beta1"] ** stepf
        correction2 = 1 - h["beta2"] ** stepf
        denom = second.sqrt() / correction2.sqrt() + h["eps"]
        return p - (h["lr"] / correction1) * m / denom

    def _initial_state(self, p):
        state = super()._initial_state(p)
        if any(g["amsgrad"] for g in self.param_groups):
            state["max_exp_avg_sq"] = torch.zeros_like(p)
        return state


class AdamW(Adam):
    """``torch.optim.AdamW`` with PopTorch's arguments; ``bias_correction=False`` drops
    the bias corrections (PopTorch's option)."""

    _decoupled = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 bias_correction: bool = True, **kwargs: Any) -> None:
        self.bias_correction = bool(bias_correction)
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, **kwargs)

    def step(self, closure: Any = None) -> Any:
        if not self.bias_correction:
            raise ArgumentError("poptorch.optim.AdamW(bias_correction=False) runs only in a "
                                "poptorch.trainingModel (torch's AdamW always corrects)")
        return super().step(closure)


class RMSprop(_PoptorchOptimizer, torch.optim.RMSprop):
    """``torch.optim.RMSprop`` with PopTorch's arguments; ``use_tf_variant`` puts eps
    inside the square root, as TensorFlow does."""

    _group_attrs = ("lr", "alpha", "eps", "weight_decay", "momentum")
    _state_names = ("square_avg",)
    _steps = True

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, loss_scaling: float | None = None,
                 accum_type: Any = None, first_order_momentum_accum_type: Any = None,
                 second_order_momentum_accum_type: Any = None, use_tf_variant: bool = False,
                 max_grad_norm: float | None = None) -> None:
        torch.optim.RMSprop.__init__(self, params, lr=lr, alpha=alpha, eps=eps,
                                     weight_decay=weight_decay, momentum=momentum,
                                     centered=centered, capturable=capturable, foreach=foreach,
                                     maximize=maximize, differentiable=differentiable)
        self.use_tf_variant = bool(use_tf_variant)
        self._momentum_accum_types(first_order_momentum_accum_type,
                                   second_order_momentum_accum_type)
        self._poptorch_init(loss_scaling, max_grad_norm, accum_type)

    def _update(self, p, g, state, h, step):
        group = h["_group"]
        if group["maximize"]:
            g = -g
        g = g + h["weight_decay"] * p
        sq = state["square_avg"]
        sq.copy_(h["alpha"] * sq + (1 - h["alpha"]) * g * g)
        if group["centered"]:
            ga = state["grad_avg"]
            ga.copy_(h["alpha"] * ga + (1 - h["alpha"]) * g)
            var = sq - ga * ga
        else:
            var = sq
        avg = (var + h["eps"]).sqrt() if self.use_tf_variant else var.sqrt() + h["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.copy_(h["momentum"] * buf + g / avg)
            return p - h["lr"] * buf
        return p - h["lr"] * g / avg

    def _initial_state(self, p):
        state = super()._initial_state(p)
        if any(g["centered"] for g in self.param_groups):
            state["grad_avg"] = torch.zeros_like(p)
        if any(g["momentum"] > 0 for g in self.param_groups):
            state["momentum_buffer"] = torch.zeros_like(p)
        return state

    def step(self, closure: Any = None) -> Any:
        if self.use_tf_variant:
            raise ArgumentError("poptorch.optim.RMSprop(use_tf_variant=True) runs only in a "
                                "poptorch.trainingModel")
        return super().step(closure)


class LAMB(_PoptorchOptimizer, torch.optim.Optimizer):
    """PopTorch's LAMB: Adam's moments, the update scaled per parameter by the trust
    ratio ||p|| / ||update|| (||p|| clamped to ``max_weight_norm`` when given)."""

    _group_attrs = ("lr", "beta1", "beta2", "eps", "weight_decay")
    _state_names = ("exp_avg", "exp_avg_sq")
    _steps = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, bias_correction: bool = True,
                 loss_scaling: float | None = None, max_weight_norm: float | None = None,
                 accum_type: Any = None, first_order_momentum_accum_type: Any = None,
                 second_order_momentum_accum_type: Any = None,
                 max_grad_norm: float | None = None) -> None:
        torch.optim.Optimizer.__init__(self, params, dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            bias_correction=bool(bias_correction), max_weight_norm=max_weight_norm))
        self._momentum_accum_types(first_order_momentum_accum_type,
                                   second_order_momentum_accum_type)
        self._poptorch_init(loss_scaling, max_grad_norm, accum_type)

    def _update(self, p, g, state, h, step):
        group = h["_group"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.copy_(h["beta1"] * m + (1 - h["beta1"]) * g)
        v.copy_(h["beta2"] * v + (1 - h["beta2"]) * g * g)
        mh, vh = m, v
        if group["bias_correction"]:
            stepf = step.to(p.dtype)
            mh = m / (1 - h["beta1"] ** stepf)
            vh = v / (1 - h["beta2"] ** stepf)
        u = mh / (vh.sqrt() + h["eps"]) + h["weight_decay"] * p
        r1 = p.norm()
        if group["max_weight_norm"] is not None:
            r1 = r1.clamp(max=float(group["max_weight_norm"]))
        r2 = u.norm()
        trust = torch.where((r1 > 0) & (r2 > 0), r1 / r2, torch.ones_like(r1))
        return p - h["lr"] * trust * u

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        """The same update on a CPU model (PopTorch's reference LAMB)."""
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            h = self._hyper(group)
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state.update(self._initial_state(p))
                    state["step"] = torch.zeros((), dtype=torch.int64)
                state["step"] += 1
                p.copy_(self._update(p, p.grad, state, h, state["step"]))
        return loss


def convert(optimizer: torch.optim.Optimizer) -> _PoptorchOptimizer:
    """``optimizer`` as a poptorch optimizer (torch's SGD, Adam, AdamW and RMSprop are
    converted with their hyper-parameters and parameter groups)."""
    if isinstance(optimizer, _PoptorchOptimizer):
        return optimizer
    table: dict[type, type] = {torch.optim.SGD: SGD, torch.optim.AdamW: AdamW,
                               torch.optim.Adam: Adam, torch.optim.RMSprop: RMSprop}
    target = table.get(type(optimizer))
    if target is None:
        raise ArgumentTypeError(
            f"poptorch.trainingModel: {type(optimizer).__name__} is not supported; use "
            "poptorch.optim.SGD, Adam, AdamW, RMSprop or LAMB (torch.optim.SGD, Adam, AdamW "
            "and RMSprop are converted)")
    if any(optimizer.state.values()):
        raise ArgumentError("poptorch.trainingModel: the torch optimizer has already stepped; "
                            "its state cannot be converted (pass a fresh optimizer)")
    groups = []
    for group in optimizer.param_groups:
        g = {k: v for k, v in group.items() if k in _TORCH_KEYS[target]}
        g["params"] = list(group["params"])
        groups.append(g)
    defaults = {k: v for k, v in optimizer.defaults.items() if k in _TORCH_KEYS[target]}
    converted = target(groups, **defaults)
    return converted


_TORCH_KEYS: dict[type, set[str]] = {
    SGD: {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"},
    Adam: {"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"},
    AdamW: {"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"},
    RMSprop: {"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"},
}
