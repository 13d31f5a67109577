"""poptorch.trainingModel: whole training runs compared step for step with the same
loop in eager PyTorch on the CPU (losses, outputs and parameters after N steps), for
every optimizer, gradient accumulation (Mean and Sum) and device iterations; PopTorch's
weight and optimizer-state semantics; its loss rules and errors."""

from __future__ import annotations

import copy
import math
import re

import pytest
import torch
from conftest import assert_matches

import poptorch

TOL = {"atol": 2e-5, "rtol": 2e-5}


class Classifier(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = torch.nn.Linear(6, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.l2 = torch.nn.Linear(16, 4)
        self.loss = torch.nn.CrossEntropyLoss()

    def forward(self, x, target):
        logits = self.l2(torch.nn.functional.gelu(self.norm(self.l1(x))))
        return logits, self.loss(logits, target)


def batches(n: int, rows: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(rows, 6, generator=g), torch.randint(0, 4, (rows,), generator=g))
            for _ in range(n)]


def eager_run(model, optimizer, data, accumulation=1, mean=True):
    """The reference loop: PopTorch's semantics written with torch.optim."""
    losses, outputs = [], []
    for start in range(0, len(data), accumulation):
        optimizer.zero_grad()
        for x, t in data[start:start + accumulation]:
            out, loss = model(x, t)
            (loss / accumulation if mean else loss).backward()
            losses.append(loss.detach())
            outputs.append(out.detach())
        optimizer.step()
    return losses, outputs


def assert_same_parameters(a, b, **tol):
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        torch.testing.assert_close(p.detach(), q.detach(), msg=lambda m, n=name: f"{n}: {m}",
                                   **(tol or TOL))


OPTIMIZERS = {
    "sgd": lambda p: poptorch.optim.SGD(p, lr=0.05),
    "sgd_momentum": lambda p: poptorch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1,
                                                 weight_decay=0.01),
    "sgd_nesterov": lambda p: poptorch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True),
    "adam": lambda p: poptorch.optim.Adam(p, lr=0.01, weight_decay=0.01),
    "adam_amsgrad": lambda p: poptorch.optim.Adam(p, lr=0.01, amsgrad=True),
    "adamw": lambda p: poptorch.optim.AdamW(p, lr=0.01, betas=(0.8, 0.99)),
    "rmsprop": lambda p: poptorch.optim.RMSprop(p, lr=0.01, momentum=0.5),
    "rmsprop_centered": lambda p: poptorch.optim.RMSprop(p, lr=0.01, centered=True,
                                                         weight_decay=0.1),
    "torch_sgd": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "torch_adamw": lambda p: torch.optim.AdamW(p, lr=0.01),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_training_matches_eager_step_for_step(name):
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    make = OPTIMIZERS[name]
    trained = poptorch.trainingModel(model, optimizer=make(model.parameters()))
    ref_opt = make(ref.parameters())
    data = batches(5)
    ref_losses, ref_outputs = eager_run(ref, ref_opt, data)
    for (x, t), ref_loss, ref_out in zip(data, ref_losses, ref_outputs, strict=True):
        out, loss = trained(x, t)
        assert_matches((out, loss), (ref_out, ref_loss), **TOL)
    assert trained.compile_count == 1
    assert_same_parameters(model, ref)


def test_parameter_groups_and_frozen_parameters():
    torch.manual_seed(0)
    model = Classifier()
    model.norm.weight.requires_grad_(False)
    frozen = model.norm.weight.detach().clone()
    ref = copy.deepcopy(model)

    def groups(m):
        return [{"params": m.l1.parameters(), "lr": 0.1},
                {"params": [m.l2.weight, m.l2.bias, m.norm.bias, m.norm.weight],
                 "momentum": 0.5}]
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(groups(model), lr=0.02))
    ref_opt = torch.optim.SGD(groups(ref), lr=0.02)
    data = batches(3)
    eager_run(ref, ref_opt, data)
    for x, t in data:
        trained(x, t)
    assert_same_parameters(model, ref)
    assert torch.equal(model.norm.weight, frozen)  # bit-identical


@pytest.mark.parametrize("reduction", [poptorch.ReductionType.Mean, poptorch.ReductionType.Sum])
def test_gradient_accumulation_and_device_iterations(reduction):
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    opts = poptorch.Options().deviceIterations(2)
    opts.Training.gradientAccumulation(3)
    opts.Training.accumulationAndReplicationReductionType(reduction)
    opts.outputMode(poptorch.OutputMode.All)
    trained = poptorch.trainingModel(model, opts, poptorch.optim.Adam(model.parameters(), lr=0.01))
    ref_opt = torch.optim.Adam(ref.parameters(), lr=0.01)
    data = batches(12, rows=4)  # two calls of 2 x 3 micro-batches
    ref_losses, ref_outputs = eager_run(ref, ref_opt, data, accumulation=3,
                                        mean=reduction == poptorch.ReductionType.Mean)
    for call in range(2):
        chunk = data[6 * call:6 * call + 6]
        out, loss = trained(torch.cat([x for x, _ in chunk]), torch.cat([t for _, t in chunk]))
        assert_matches(out, torch.cat(ref_outputs[6 * call:6 * call + 6]), **TOL)
        assert_matches(loss, torch.stack(ref_losses[6 * call:6 * call + 6]), **TOL)
    assert_same_parameters(model, ref)
    # 4 updates in all, 2 per call
    assert int(trained.optimizer.state_dict()["state"][0]["step"]) == 4


@pytest.mark.parametrize("mode", [poptorch.OutputMode.Final, poptorch.OutputMode.All])
def test_replicas_reduce_their_gradients(mode):
    # 2 iterations x 2 accumulated x 2 replicas: each update sees 4 micro-batches.
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    opts = poptorch.Options().deviceIterations(2).replicationFactor(2)
    opts.Training.gradientAccumulation(2)
    opts.outputMode(mode)
    trained = poptorch.trainingModel(model, opts, poptorch.optim.SGD(model.parameters(), lr=0.1,
                                                                     momentum=0.9))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    data = batches(8, rows=3)  # [iteration][replica] order
    ref_losses, ref_outputs = eager_run(ref, ref_opt, data, accumulation=4)
    out, loss = trained(torch.cat([x for x, _ in data]), torch.cat([t for _, t in data]))
    keep = slice(-2, None) if mode == poptorch.OutputMode.Final else slice(None)
    assert_matches((out, loss), (torch.cat(ref_outputs[keep]), torch.stack(ref_losses[keep])),
                   **TOL)
    assert_same_parameters(model, ref)
    assert poptorch.DataLoader(opts, torch.utils.data.TensorDataset(torch.zeros(48, 1)),
                               batch_size=3).combined_batch_size == 24


def test_training_output_mode_is_final_by_default():
    torch.manual_seed(0)
    model = Classifier()
    opts = poptorch.Options().deviceIterations(3)
    trained = poptorch.trainingModel(model, opts)
    data = batches(3, rows=2)
    out, loss = trained(torch.cat([x for x, _ in data]), torch.cat([t for _, t in data]))
    assert out.shape == (2, 4) and loss.shape == ()


def test_set_optimizer_changes_the_learning_rate_without_recompiling():
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    opt = poptorch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    trained = poptorch.trainingModel(model, optimizer=opt)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    schedule = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    ref_schedule = torch.optim.lr_scheduler.StepLR(ref_opt, step_size=1, gamma=0.5)
    for x, t in batches(4):
        trained(x, t)
        eager_run(ref, ref_opt, [(x, t)])
        schedule.step()
        ref_schedule.step()
        trained.setOptimizer(opt)
    assert trained.compile_count == 1
    assert_same_parameters(model, ref)


def test_optimizer_state_dict_is_the_device_state():
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.Adam(model.parameters(),
                                                                          lr=0.01))
    ref_opt = torch.optim.Adam(ref.parameters(), lr=0.01)
    data = batches(3)
    eager_run(ref, ref_opt, data)
    for x, t in data:
        trained(x, t)
    ours = trained.optimizer.state_dict()["state"]
    theirs = ref_opt.state_dict()["state"]
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(ours[k][key], theirs[k][key], **TOL)
        assert float(ours[k]["step"]) == float(theirs[k]["step"]) == 3


def test_lazy_host_sync_and_weight_copies():
    torch.manual_seed(0)
    model = Classifier()
    before = copy.deepcopy(model.state_dict())
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(model.parameters(),
                                                                         lr=0.5))
    x, t = batches(1)[0]
    trained(x, t)
    # The call wrote nothing on the host ...
    assert torch.equal(model._parameters_for_test() if hasattr(model, "_parameters_for_test")
                       else model.__dict__["_modules"]["l1"].__dict__["_parameters"]["weight"],
                       before["l1.weight"])
    # ... the first read copies the trained weights back.
    assert not torch.equal(model.l1.weight, before["l1.weight"])
    trained_weights = copy.deepcopy(model.state_dict())
    # An inference model of the same model sees them.
    inference = poptorch.inferenceModel(model)
    with torch.no_grad():
        assert_matches(inference(x, t), model.eval()(x, t))
    model.train()
    # copyWeightsToDevice discards what the device trained since.
    trained(x, t)
    model.load_state_dict(trained_weights)
    trained.copyWeightsToDevice()
    trained.copyWeightsToHost()
    assert torch.equal(model.l1.weight, trained_weights["l1.weight"])


def test_new_input_shapes_recompile_from_the_trained_weights():
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(model.parameters(),
                                                                         lr=0.1, momentum=0.9))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    data = batches(2, rows=8) + batches(2, rows=5, seed=1)
    eager_run(ref, ref_opt, data)
    for x, t in data:
        trained(x, t)
    assert trained.compile_count == 2
    assert_same_parameters(model, ref)


def test_a_value_read_while_tracing_recompiles_when_it_changes():
    torch.manual_seed(0)

    class Gated(Classifier):
        def forward(self, x, target):
            logits, loss = super().forward(x, target)
            if bool(x.sum() > 0):  # read while tracing: a guard
                loss = loss * 2
            return logits, loss

    model = Gated()
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(model.parameters(),
                                                                         lr=0.1))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    x, t = batches(1)[0]
    for sign in (1, -1, 1):
        data = [(sign * x.abs(), t)]
        trained(*data[0])
        eager_run(ref, ref_opt, data)
    assert_same_parameters(model, ref)


def test_torch_save_of_a_trained_model(tmp_path):
    torch.manual_seed(0)
    model = Classifier()
    trained = poptorch.trainingModel(model)
    x, t = batches(1)[0]
    trained(x, t)
    path = tmp_path / "model.pt"
    torch.save(model, path)
    loaded = torch.load(path, weights_only=False)
    assert type(loaded) is Classifier
    assert torch.equal(loaded.l1.weight, model.l1.weight)


def test_exported_training_step_resumes_the_trajectory(tmp_path):
    # Two steps, export (model, optimizer state and program), load in a new executor
    # and two more steps: the same trajectory as four steps without the file.
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    data = batches(4)
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(2)

    def adam(params):
        return poptorch.optim.Adam(params, lr=0.01)
    trained = poptorch.trainingModel(model, opts, optimizer=adam(model.parameters()))
    both = [(torch.cat([a[0], b[0]]), torch.cat([a[1], b[1]]))
            for a, b in zip(data[::2], data[1::2], strict=True)]
    trained(*both[0])
    path = tmp_path / "step.pt"
    trained.compileAndExport(path)
    loaded = poptorch.load(path)
    assert isinstance(loaded, poptorch.TrainingExecutor)
    assert loaded.compile_count == 0  # linked, not compiled
    loaded(*both[1])
    eager_run(ref, torch.optim.Adam(ref.parameters(), lr=0.01), data, accumulation=2)
    assert_same_parameters(loaded.model, ref)
    # The same file into a trainingModel of the model with the same optimizer.
    other = copy.deepcopy(model)
    again = poptorch.trainingModel(other, opts, optimizer=adam(other.parameters()))
    again.loadExecutable(path)
    again(*both[1])
    assert again.compile_count == 0
    # Errors: an inference executor, another optimizer, other compiled-in constants.
    with pytest.raises(poptorch.Error, match="holds a training step"):
        poptorch.inferenceModel(copy.deepcopy(model)).loadExecutable(path)
    with pytest.raises(poptorch.Error, match="was exported with a Adam"):
        poptorch.trainingModel(copy.deepcopy(model), opts).loadExecutable(path)
    constant = adam(other.parameters())
    constant.variable_attrs.markAsConstant("lr")
    with pytest.raises(poptorch.Error, match="compiled in the hyper-parameters"):
        poptorch.trainingModel(other, opts, optimizer=constant).loadExecutable(path)


# ---- LAMB: PopTorch's reference formula, written out here


def lamb_reference(params, grads, state, lr, b1, b2, eps, wd, step, bias_correction=True,
                   max_weight_norm=None):
    out = []
    for p, g, (m, v) in zip(params, grads, state, strict=True):
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        mh = m / (1 - b1 ** step) if bias_correction else m
        vh = v / (1 - b2 ** step) if bias_correction else v
        update = mh / (vh.sqrt() + eps) + wd * p
        r1 = p.norm().item()
        if max_weight_norm is not None:
            r1 = min(r1, max_weight_norm)
        r2 = update.norm().item()
        ratio = r1 / r2 if r1 > 0 and r2 > 0 else 1.0
        out.append(p - lr * ratio * update)
    return out


@pytest.mark.parametrize("bias_correction,max_weight_norm", [(True, None), (False, 0.5)])
def test_lamb_matches_its_reference(bias_correction, max_weight_norm):
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.LAMB(
        model.parameters(), lr=0.01, weight_decay=0.05, bias_correction=bias_correction,
        max_weight_norm=max_weight_norm))
    state = [(torch.zeros_like(p), torch.zeros_like(p)) for p in ref.parameters()]
    for step, (x, t) in enumerate(batches(3), 1):
        trained(x, t)
        ref.zero_grad()
        ref(x, t)[1].backward()
        with torch.no_grad():
            params = list(ref.parameters())
            new = lamb_reference(params, [p.grad for p in params], state, 0.01, 0.9, 0.999,
                                 1e-8, 0.05, step, bias_correction, max_weight_norm)
            for p, n in zip(params, new, strict=True):
                p.copy_(n)
    assert_same_parameters(model, ref)


def test_loss_scaling_and_gradient_clipping():
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(
        model.parameters(), lr=0.5, loss_scaling=128.0, max_grad_norm=0.1))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    for x, t in batches(3):
        trained(x, t)
        ref_opt.zero_grad()
        ref(x, t)[1].backward()
        torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.1)
        ref_opt.step()
    assert_same_parameters(model, ref)


def test_a_new_loss_scale_needs_no_recompilation():
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    opt = poptorch.optim.SGD(model.parameters(), lr=0.5, loss_scaling=64.0)
    trained = poptorch.trainingModel(model, optimizer=opt)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    for i, (x, t) in enumerate(batches(3)):
        trained(x, t)
        eager_run(ref, ref_opt, [(x, t)])
        opt.loss_scaling = 2.0 ** (i + 3)
        trained.setOptimizer(opt)
    assert trained.compile_count == 1
    assert_same_parameters(model, ref)
    # Marked constant, it is compiled in: a new value recompiles.
    opt = poptorch.optim.SGD(model.parameters(), lr=0.5, loss_scaling=8.0)
    opt.variable_attrs.markAsConstant("loss_scaling")
    trained = poptorch.trainingModel(model, optimizer=opt)
    for scale in (8.0, 16.0):
        opt.loss_scaling = scale
        trained.setOptimizer(opt)
        x, t = batches(1, seed=int(scale))[0]
        trained(x, t)
        eager_run(ref, ref_opt, [(x, t)])
    assert trained.compile_count == 2
    assert_same_parameters(model, ref)


class HalfRegression(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 2).half()

    def forward(self, x, target):
        return torch.nn.functional.mse_loss(self.lin(x).float(), target)


def test_automatic_loss_scaling():
    # The reference: PopART's rule written out on eager float16 gradients (the
    # proportion of scaled gradients from 1/8 of float16's largest value halves the
    # scale above 1e-7, else it doubles; within [1, 2**15]), then SGD on the
    # unscaled gradients.
    torch.manual_seed(0)
    model = HalfRegression()
    ref = copy.deepcopy(model)
    opts = poptorch.Options()
    opts.Training.setAutomaticLossScaling(True)
    trained = poptorch.trainingModel(model, opts, optimizer=poptorch.optim.SGD(
        model.parameters(), lr=0.01, loss_scaling=512.0))
    scale, scales = 512.0, []
    edge = 0.125 * torch.finfo(torch.float16).max
    g = torch.Generator().manual_seed(1)
    for step in range(6):
        # Large targets in the middle steps: scaled gradients overflow the bin edge.
        size = 30.0 if step in (2, 3) else 0.1
        x = torch.randn(8, 4, generator=g).half()
        target = size * torch.randn(8, 2, generator=g)
        trained(x, target)
        ref.zero_grad()
        (torch.nn.functional.mse_loss(ref.lin(x).float(), target) * scale).backward()
        grads = [p.grad for p in ref.parameters()]
        upper = sum(int(((q.abs() >= edge) | ~torch.isfinite(q)).sum()) for q in grads)
        total = sum(q.numel() for q in grads)
        new_scale = min(max(scale * (0.5 if upper > 1e-7 * total else 2.0), 1.0), 2.0 ** 15)
        with torch.no_grad():
            for p, q in zip(ref.parameters(), grads, strict=True):
                p -= 0.01 * (q.float() / scale).half()
        scale = new_scale
        scales.append(scale)
        assert trained.optimizer.loss_scaling == scale, (step, scales)
    assert 0.5 * max(scales) in scales and trained.compile_count == 1  # both directions
    assert_same_parameters(model, ref, atol=2e-3, rtol=2e-3)


def test_automatic_loss_scaling_without_float16_gradients_says_so(caplog):
    import logging

    opts = poptorch.Options()
    opts.Training.setAutomaticLossScaling(True)
    model = Classifier()
    trained = poptorch.trainingModel(model, opts, optimizer=poptorch.optim.SGD(
        model.parameters(), lr=0.1, loss_scaling=4.0))
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        trained(*batches(1)[0])
    assert "has no float16 gradients" in caplog.text
    assert trained.optimizer.loss_scaling == 4.0
    opt = poptorch.optim.SGD(model.parameters(), lr=0.1)
    opt.variable_attrs.markAsConstant("loss_scaling")
    with pytest.raises(poptorch.Error, match="cannot be marked constant"):
        poptorch.trainingModel(model, opts, optimizer=opt)


# ---- losses


class IdentityLossModel(torch.nn.Module):
    def __init__(self, reduction):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.reduction = reduction

    def forward(self, x):
        y = self.lin(x)
        # two loss terms combined: the identity loss is the one trained on
        loss = torch.nn.functional.mse_loss(y, x) + y.abs().mean()
        return y, poptorch.identity_loss(loss * torch.ones(2), self.reduction)


@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
def test_identity_loss(reduction):
    torch.manual_seed(0)
    model = IdentityLossModel(reduction)
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(model.parameters(),
                                                                         lr=0.1))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    for _ in range(2):
        trained(x)
        ref_opt.zero_grad()
        loss = ref(x)[1]
        (loss if loss.dim() == 0 else loss.sum()).backward()
        ref_opt.step()
    assert_same_parameters(model, ref)


def test_loss_errors():
    class NoLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x).sum()

    class TwoLosses(NoLoss):
        def forward(self, x):
            y = self.lin(x)
            return torch.nn.functional.l1_loss(y, x) + torch.nn.functional.mse_loss(y, x)

    with pytest.raises(poptorch.Error, match="Couldn't find a loss in graph!"):
        poptorch.trainingModel(NoLoss())(torch.ones(1, 2))
    with pytest.raises(poptorch.Error, match="Multiple independent losses found in graph"):
        poptorch.trainingModel(TwoLosses())(torch.ones(1, 2))


def test_inputs_requiring_grad_are_detached(caplog):
    torch.manual_seed(0)
    model = Classifier()
    trained = poptorch.trainingModel(model)
    x, t = batches(1)[0]
    trained(x.requires_grad_(), t)
    assert "requires_grad=True" in caplog.text


def test_optimizer_errors():
    model = Classifier()
    with pytest.raises(poptorch.Error, match="Adagrad is not supported"):
        poptorch.trainingModel(model, optimizer=torch.optim.Adagrad(model.parameters()))
    opts = poptorch.Options().replicationFactor(2)
    opts.outputMode(poptorch.OutputMode.Sum)
    with pytest.raises(poptorch.Error, match="outputMode Sum with replicationFactor > 1"):
        poptorch.trainingModel(model, opts)
    assert math.isclose(poptorch.optim.SGD(model.parameters(), lr=0.1).loss_scaling, 1.0)


def test_constant_attributes_are_compiled_in():
    torch.manual_seed(0)
    model = Classifier()
    ref = copy.deepcopy(model)
    opt = poptorch.optim.SGD(model.parameters(), lr=0.1)
    opt.variable_attrs.markAsConstant("lr")
    trained = poptorch.trainingModel(model, optimizer=opt)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    x, t = batches(1)[0]
    trained(x, t)
    assert "state.g0_lr" not in trained.executable.graph.mlir  # baked in
    opt.param_groups[0]["lr"] = 0.05
    trained.setOptimizer(opt)  # a constant changed: compiles again
    trained(x, t)
    assert trained.compile_count == 2
    eager_run(ref, ref_opt, [(x, t)])
    ref_opt.param_groups[0]["lr"] = 0.05
    eager_run(ref, ref_opt, [(x, t)])
    assert_same_parameters(model, ref)


def test_dropout_trains_with_the_programs_random_numbers():
    torch.manual_seed(0)

    class WithDropout(Classifier):
        def forward(self, x, target):
            logits = self.l2(torch.nn.functional.dropout(self.l1(x), 0.5, self.training))
            return logits, self.loss(logits, target)

    model = WithDropout()
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(model.parameters(),
                                                                         lr=0.1))
    x, t = batches(1)[0]
    first, _ = trained(x, t)
    second, _ = trained(x, t)
    assert torch.isfinite(first).all() and not torch.equal(first, second)
    # half of the hidden units dropped: some logits change, none is NaN
    assert model.l1.weight.isfinite().all()


class ConvNet(torch.nn.Module):
    """Two convolutions (the second's input gradient reaches the first) with batch
    norm between them, in training mode."""

    def __init__(self, nd, groups, stride, padding, dilation, track_running_stats=True):
        super().__init__()
        conv = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[nd]
        norm = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}[nd]
        self.c1 = conv(4, 8, 3, stride=stride, padding=padding, dilation=dilation,
                       groups=groups)
        self.bn = norm(8, momentum=0.2, track_running_stats=track_running_stats)
        self.c2 = conv(8, 4, 2, stride=stride, padding=padding, groups=groups, bias=False)
        self.head = torch.nn.LazyLinear(3)

    def forward(self, x, target):
        h = self.c2(torch.relu(self.bn(self.c1(x))))
        return torch.nn.functional.cross_entropy(self.head(h.flatten(1)), target)


@pytest.mark.parametrize("nd,groups,stride,padding,dilation,shape", [
    (2, 1, 1, 1, 1, (3, 4, 9, 8)),
    (2, 2, 2, 1, 1, (3, 4, 11, 9)),    # grouped, strided: odd sizes leave a remainder
    (2, 4, 1, 0, 2, (3, 4, 10, 10)),   # depthwise-like, dilated
    (2, 1, 3, 2, 1, (2, 4, 13, 12)),
    (1, 1, 2, 3, 1, (3, 4, 17)),       # padding past the kernel: the transposed form
    (1, 2, 1, 2, 2, (3, 4, 15)),
    (3, 1, 1, 1, 1, (2, 4, 5, 5, 4)),  # 3-D: the host kernel
], ids=["2d", "2d-grouped-strided", "2d-depthwise-dilated", "2d-stride3",
        "1d-wide-padding", "1d-grouped-dilated", "3d"])
def test_convolution_and_batch_norm_training(nd, groups, stride, padding, dilation, shape):
    torch.manual_seed(0)
    x, target = torch.randn(shape), torch.tensor([0, 2, 1][:shape[0]])
    trained = train_side_by_side(ConvNet(nd, groups, stride, padding, dilation), x, target)
    hosted = {r["name"] for r in trained.executable.graph.op_log
              if r["status"] == "host_kernel"}
    # Convolution gradients are convolutions and matmuls up to 2-D; batch norm in
    # training mode is decomposed (its saved statistics and running statistics too).
    assert hosted == ({"aten::convolution_backward"} if nd == 3 else set()), hosted


class ChannelsLastNet(torch.nn.Module):
    """Convolutions that run channels-last with the batch norms, activations and
    residual adds between them computed channels-last too: a bottleneck (1x1, 3x3,
    1x1 and a 1x1 projection) and an inverted residual (1x1, 3x3 depthwise, 1x1)."""

    def __init__(self):
        super().__init__()
        bn = torch.nn.BatchNorm2d
        self.a = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 1), bn(16), torch.nn.ReLU(),
                                     torch.nn.Conv2d(16, 16, 3, padding=1), bn(16),
                                     torch.nn.ReLU(), torch.nn.Conv2d(16, 32, 1), bn(32))
        self.project = torch.nn.Conv2d(8, 32, 1)
        self.b = torch.nn.Sequential(torch.nn.Conv2d(32, 32, 1), bn(32), torch.nn.ReLU6(),
                                     torch.nn.Conv2d(32, 32, 3, padding=1, groups=32), bn(32),
                                     torch.nn.ReLU6(), torch.nn.Conv2d(32, 32, 1), bn(32))
        self.head = torch.nn.Linear(32, 3)

    def forward(self, x, target):
        h = torch.relu(self.a(x) + self.project(x))
        h = h + self.b(h)
        return torch.nn.functional.cross_entropy(self.head(h.mean((2, 3))), target)


def test_channels_last_convolutions_train():
    torch.manual_seed(0)
    train_side_by_side(ChannelsLastNet(), torch.randn(3, 8, 12, 12), torch.tensor([0, 2, 1]))


@pytest.mark.parametrize("nd,kernel,stride,padding,dilation,groups,size", [
    (2, 3, 2, 1, 1, 1, (9, 10)),      # ResNet's 3x3 downsampling, odd and even sizes
    (2, 1, 2, 0, 1, 1, (7, 8)),       # its 1x1 shortcut: one phase of four has taps
    (2, 7, 2, 3, 1, 1, (11, 12)),     # the 7x7 stem
    (2, (3, 2), (3, 2), (2, 0), 1, 2, (10, 7)),  # grouped, a stride past the kernel
    (2, 3, 2, 1, 2, 1, (12, 9)),      # dilation sharing a factor with the stride
    (2, 3, 3, 1, 2, 1, (13, 11)),     # dilation prime to the stride
    (2, 3, 1, 4, 1, 1, (5, 6)),       # stride 1, padding past the kernel: cropped
    (1, 5, 4, 6, 1, 1, (17,)),        # padding whose windows miss some phases
    (1, 4, 3, 0, 1, 2, (16,)),        # rows no window reaches
])
def test_convolution_input_gradient_by_phases(nd, kernel, stride, padding, dilation, groups,
                                              size):
    # The decomposition itself, in eager float64, against torch's convolution backward.
    from poptorch import _decompositions

    per = lambda v: list(v) if isinstance(v, tuple) else [v] * nd  # noqa: E731
    kernel, stride, padding, dilation = map(per, (kernel, stride, padding, dilation))
    torch.manual_seed(0)
    x = torch.randn(2, 2 * groups, *size, dtype=torch.float64)
    w = torch.randn(3 * groups, 2, *kernel, dtype=torch.float64)
    out = torch.nn.functional.conv2d if nd == 2 else torch.nn.functional.conv1d
    go = torch.randn_like(out(x, w, None, stride, padding, dilation, groups))
    ref = torch.ops.aten.convolution_backward(go, x, w, None, stride, padding, dilation,
                                              False, [0] * nd, groups, [True, False, False])
    got = _decompositions._input_gradient(go, w, list(size), stride, padding, dilation, groups)
    torch.testing.assert_close(got, ref[0])


@pytest.mark.parametrize("nd,kernel,stride,padding,dilation,output_padding,groups,size", [
    (2, 3, 2, 1, 1, 1, 1, (5, 4)),          # a decoder's upsampling
    (2, 4, 2, 1, 1, 0, 2, (4, 3)),
    (1, 3, 1, 3, 2, 1, 1, (6,)),            # output padding past the last window
    (1, 2, 3, 0, 1, 2, 2, (5,)),
])
def test_transposed_convolution_gradients(nd, kernel, stride, padding, dilation,
                                          output_padding, groups, size):
    # A transposed convolution's gradients (eager float64, against torch's): a regular
    # convolution of grad_output, and the regular kernel gradient with the roles of
    # input and grad_output swapped.
    from poptorch import _decompositions

    torch.manual_seed(0)
    x = torch.randn(2, 2 * groups, *size, dtype=torch.float64)
    w = torch.randn(2 * groups, 3, *([kernel] * nd), dtype=torch.float64)
    conv = torch.nn.functional.conv_transpose2d if nd == 2 else torch.nn.functional.conv_transpose1d
    go = torch.randn_like(conv(x, w, None, stride, padding, output_padding, groups, dilation))
    args = ([stride] * nd, [padding] * nd, [dilation] * nd, True, [output_padding] * nd,
            groups, [True, True, True])
    ref = torch.ops.aten.convolution_backward(go, x, w, [3 * groups], *args)
    got = _decompositions._convolution_backward(go, x, w, [3 * groups], *args)
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b)


class Upsample(torch.nn.Module):
    """A decoder step: transposed convolutions of 1-D and 2-D inputs."""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.up1d = torch.nn.ConvTranspose1d(6, 4, 4, stride=2, padding=1, groups=2)
        self.head = torch.nn.LazyLinear(3)

    def forward(self, x, target):
        h = torch.relu(self.up(x))
        h = self.up1d(h.flatten(2))
        return torch.nn.functional.cross_entropy(self.head(h.flatten(1)), target)


def test_transposed_convolutions_train():
    torch.manual_seed(0)
    trained = train_side_by_side(Upsample(), torch.randn(3, 4, 5, 6), torch.tensor([0, 2, 1]))
    assert not {r["name"] for r in trained.executable.graph.op_log
                if r["status"] == "host_kernel"}


class Downsample(torch.nn.Module):
    """A ResNet basic block that halves the resolution: 3x3 stride-2 convolution, and
    the 1x1 stride-2 shortcut."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c1 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.short = torch.nn.Conv2d(8, 16, 1, stride=2, bias=False)
        self.head = torch.nn.LazyLinear(3)

    def forward(self, x, target):
        h = torch.relu(self.stem(x))
        h = torch.relu(self.c2(torch.relu(self.bn(self.c1(h)))) + self.short(h))
        return torch.nn.functional.cross_entropy(self.head(h.flatten(1)), target)


@pytest.mark.parametrize("size", [(16, 16), (15, 13)])
def test_strided_block_trains(size):
    torch.manual_seed(0)
    trained = train_side_by_side(Downsample(), torch.randn(3, 3, *size),
                                 torch.tensor([0, 2, 1]))
    # The strided convolutions' input gradients are stride-1 convolutions of the
    # phases: as many multiply-adds as the forward convolutions but for the rows and
    # columns the phases share (the transposed convolution of the zero-interleaved
    # gradient made 1.26-1.36x here), and no op runs as a host kernel.
    log = trained.executable.graph.op_log
    assert not {r["name"] for r in log if r["status"] == "host_kernel"}
    dims = lambda t: [int(v) for v in t.split("[")[1].rstrip("]").split(",")]  # noqa: E731
    macs = [math.prod(dims(r["output_types"][0])) * math.prod(dims(r["input_types"][1])[1:])
            for r in log if r["name"] == "aten::convolution"]
    assert len(macs) == 10, macs  # 4 forward; 4 + 1 + 1 phases with taps
    forward, backward = sum(macs[1:4]), sum(macs[4:])  # the stem's input needs none
    assert backward < 1.2 * forward, (forward, backward)


def test_batch_norm_without_running_statistics_trains():
    torch.manual_seed(0)
    train_side_by_side(ConvNet(2, 1, 1, 1, 1, track_running_stats=False),
                       torch.randn(3, 4, 8, 8), torch.tensor([0, 2, 1]))


def train_side_by_side(model, x, target, steps=3):
    """Trains ``model`` (SGD with momentum) and a copy in eager PyTorch on the same batch:
    the losses, parameters and buffers must match. Returns the training executor."""
    model(x, target)  # materialises lazy modules
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(model.parameters(),
                                                                         lr=0.1, momentum=0.9))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        loss = trained(x, target)
        ref_opt.zero_grad()
        ref_loss = ref(x, target)
        ref_loss.backward()
        ref_opt.step()
        torch.testing.assert_close(loss, ref_loss.detach(), **TOL)
    assert_same_parameters(model, ref, atol=1e-5, rtol=1e-4)
    for (name, b), c in zip(model.named_buffers(), ref.buffers(), strict=True):
        torch.testing.assert_close(b, c, msg=lambda m, n=name: f"{n}: {m}", atol=1e-5,
                                   rtol=1e-4)
    return trained


def test_recomputation_checkpoints_say_they_have_no_effect(caplog):
    import logging

    class Checkpointed(Classifier):
        def forward(self, x, target):
            h = poptorch.recomputationCheckpoint(torch.relu(self.l1(x)))
            h = poptorch.recomputationCheckpoint(self.norm(h))
            logits = self.l2(h)
            return logits, self.loss(logits, target)

    torch.manual_seed(0)
    model = Checkpointed()
    ref = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.SGD(model.parameters(),
                                                                         lr=0.1))
    data = batches(2)
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        for x, t in data:
            trained(x, t)
    assert caplog.text.count("recomputationCheckpoint has no effect") == 1  # once per trace
    eager_run(ref, torch.optim.SGD(ref.parameters(), lr=0.1), data)
    assert_same_parameters(model, ref)


class TwoStages(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = poptorch.BeginBlock(torch.nn.Linear(6, 8), ipu_id=0)
        self.b = poptorch.BeginBlock(torch.nn.Linear(8, 4), ipu_id=1)

    def forward(self, x, target):
        return torch.nn.functional.cross_entropy(self.b(torch.relu(self.a(x))), target)


def test_pipelined_training_stage_count_rule(caplog):
    import logging

    torch.manual_seed(0)
    model = TwoStages()
    ref = copy.deepcopy(model)
    opts = poptorch.Options()
    opts.setExecutionStrategy(poptorch.PipelinedExecution(poptorch.AutoStage.AutoIncrement))
    opts.Training.gradientAccumulation(2)
    x, t = torch.randn(8, 6), torch.randint(0, 4, (8,))
    with pytest.raises(poptorch.Error, match=r"gradientAccumulation must be greater than or "
                       r"equal to the number of pipeline stages \(3\)"):
        poptorch.trainingModel(copy.deepcopy(model), opts)(x, t)
    opts.Training.gradientAccumulation(3)
    trained = poptorch.trainingModel(model, opts, optimizer=poptorch.optim.SGD(
        model.parameters(), lr=0.1))
    data = batches(3, rows=4)
    with caplog.at_level(logging.WARNING, logger="poptorch"):
        trained(torch.cat([d[0] for d in data]), torch.cat([d[1] for d in data]))
    assert "stages of the training step run one after another" in caplog.text
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    ref_opt.zero_grad()
    for xi, ti in data:
        (ref(xi, ti) / 3).backward()
    ref_opt.step()
    assert_same_parameters(model, ref)



def test_decompositions_view_permuted_tensors_with_unit_dims(monkeypatch):
    # Decompositions run below functionalization, so strided views of what they return
    # reach the tracer's view mapping directly: a kernel gradient that is a view of a
    # permuted tensor with a unit dim ((1, 4, 16) with strides (64, 1, 4), viewed as
    # (4, 8, 2)) was refused as overlapping memory, its dims not put in memory order.
    from poptorch import _decompositions

    aten = torch.ops.aten
    real = _decompositions._OWN[aten.convolution_backward.default]

    def viewing(grad_output, input, weight, *rest):
        gi, gw, gb = real(grad_output, input, weight, *rest)
        # The kernel gradient returned as a view of a transposed (1, Cin * K, Cout)
        # tensor, as the decomposition once computed it.
        flat = gw.reshape(1, weight.shape[0], -1).transpose(1, 2).contiguous()
        return gi, flat.transpose(1, 2).reshape(weight.shape), gb

    monkeypatch.setitem(_decompositions._OWN, aten.convolution_backward.default, viewing)
    torch.manual_seed(0)
    train_side_by_side(ConvNet(1, 1, 1, 1, 1), torch.randn(2, 4, 12), torch.tensor([0, 2]),
                       steps=1)


class Deep(torch.nn.Module):
    """Identical layers back to back: poptorch-outline-repeats makes each layer's forward,
    backward and update one function called per layer."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(6, 32)
        self.layers = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(32, 32),
                                                                torch.nn.ReLU())
                                            for _ in range(4)])
        self.out = torch.nn.Linear(32, 4)

    def forward(self, x, target):
        logits = self.out(self.layers(self.inp(x)))
        return logits, torch.nn.functional.cross_entropy(logits, target)


def test_step_writes_new_state_into_its_results_and_frees_buffers_early():
    """The new weights and optimizer state are computed into the program's result
    buffers (no copy into them), and intermediate buffers are freed after their last use,
    not all when the program returns; the run matches eager."""
    model = Deep()
    reference = copy.deepcopy(model)
    trained = poptorch.trainingModel(model, optimizer=poptorch.optim.Adam(model.parameters(),
                                                                          lr=0.01))
    data = batches(3)
    for x, t in data:
        trained(x, t)
    eager_run(reference, torch.optim.Adam(reference.parameters(), lr=0.01), data)
    assert_same_parameters(model, reference)
    text = dict(trained.executable.stages)["bufferize"]
    main = text[text.index("func.func @main("):]
    main = main[:main.index("\n  }")]
    assert not re.search(r"memref\.copy %\S+, %arg\d+ ", main), main
    lines = main.splitlines()
    last_call = max(i for i, line in enumerate(lines) if " call @" in line)
    assert any("memref.dealloc" in line for line in lines[:last_call]), main
