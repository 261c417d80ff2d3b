"""AdamW, RMSprop, Adagrad, Adam's amsgrad/maximize, parameter groups, optimizer state_dict
and the learning-rate schedulers: trajectories and lr sequences equal to PyTorch's (float64,
same starting values), plus hand-computed steps and the errors. Cross-checks skip without
torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import Parameter, Variable, nn, optim
from minigrad.optim import lr_scheduler

START_P = np.array([[0.2, -0.4, 1.0], [0.8, -1.2, 0.1]])
START_Q = np.array([1.0, -2.0])
C = np.array([[1.0, 2.0, 0.5], [3.0, 0.25, 1.5]])


def objective(p, q, constant):
    """Σ C·p² + Σ tanh(q)·q: gradients that change at every step."""
    return (constant * p * p).sum() + (q.tanh() * q).sum()


def trajectory(lib, make_optimizer, steps=6, groups=False):
    """The values of (p, q) after each step, for minigrad (lib=mg) or torch."""
    if lib is mg:
        params = [Parameter(START_P.copy()), Parameter(START_Q.copy())]
        constant = Variable(C)
    else:
        params = [lib.tensor(a.copy(), requires_grad=True) for a in (START_P, START_Q)]
        constant = lib.tensor(C)
    spec = [{"params": [params[0]], "lr": 0.03}, {"params": [params[1]]}] if groups else params
    optimizer = make_optimizer(lib, spec)
    values = []
    for _ in range(steps):
        optimizer.zero_grad()
        objective(*params, constant).backward()
        optimizer.step()
        values.append([np.array(p.detach().numpy() if lib is not mg else p.data) for p in params])
    return values


def assert_same(mine, theirs, rtol=1e-10):
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for k in range(2):
            np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=1e-13, err_msg=f"step {step}")


OPTIMIZERS = [
    ("AdamW", {}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "betas": (0.8, 0.95)}),
    ("AdamW", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.005, "momentum": 0.5, "centered": True, "weight_decay": 0.2}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.2, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-3, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
]


@pytest.mark.parametrize(("name", "settings"), OPTIMIZERS, ids=[f"{n}-{s}" for n, s in OPTIMIZERS])
def test_trajectory_equals_torch(name, settings):
    torch = pytest.importorskip("torch")
    mine = trajectory(mg, lambda lib, ps: getattr(optim, name)(ps, **settings))
    theirs = trajectory(torch, lambda lib, ps: getattr(lib.optim, name)(ps, **settings))
    assert_same(mine, theirs)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_parameter_groups_with_their_own_lr_equal_torch(name):
    torch = pytest.importorskip("torch")
    mine = trajectory(mg, lambda lib, ps: getattr(optim, name)(ps, lr=0.01), groups=True)
    theirs = trajectory(torch, lambda lib, ps: getattr(lib.optim, name)(ps, lr=0.01), groups=True)
    assert_same(mine, theirs)


def test_default_hyperparameters_equal_torch():
    torch = pytest.importorskip("torch")
    for name in ("AdamW", "RMSprop", "Adagrad"):
        mine = getattr(optim, name)([Parameter(np.zeros(1))]).defaults
        theirs = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).defaults
        for key, value in mine.items():
            assert value == theirs[key], (name, key)


# =========================================================================== by hand


def test_adamw_decays_the_weight_before_adams_step():
    """With a zero gradient Adam's step is 0: only p ← p·(1 - lr·wd) remains."""
    p = Parameter(np.array([2.0, -4.0]))
    p.grad = Variable(np.zeros(2))
    optim.AdamW([p], lr=0.1, weight_decay=0.5).step()
    np.testing.assert_allclose(p.data, [2.0 * 0.95, -4.0 * 0.95], rtol=1e-15)


def test_rmsprop_first_step_by_hand():
    p = Parameter(np.array([1.0, -2.0]))
    (p * p).sum().backward()  # g = [2, -4]; s = 0.01·g²; step = lr·g / (√s + eps)
    optim.RMSprop([p], lr=0.01).step()
    expected = np.array([1.0, -2.0]) - 0.01 * np.array([2.0, -4.0]) / (
        np.sqrt(0.01 * np.array([4.0, 16.0])) + 1e-8
    )
    np.testing.assert_allclose(p.data, expected, rtol=1e-15)


def test_adagrad_state_exists_before_the_first_step():
    p = Parameter(np.array([1.0, 2.0]))
    optimizer = optim.Adagrad([p], initial_accumulator_value=0.25)
    np.testing.assert_array_equal(optimizer.state[0]["sum"], [0.25, 0.25])
    assert optimizer.state[0]["step"] == 0


def test_a_parameter_without_gradient_is_left_alone():
    used, unused = Parameter(np.array([1.0])), Parameter(np.array([3.0]))
    for make in (optim.AdamW, optim.RMSprop, optim.Adagrad):
        optimizer = make([used, unused], lr=0.1)
        (used * used).sum().backward()
        optimizer.step()
        used.grad = None
        np.testing.assert_array_equal(unused.data, [3.0])


# =========================================================================== groups and state


def test_param_groups_fill_in_defaults_and_params_lists_all():
    a, b = Parameter(np.zeros(2)), Parameter(np.zeros(3))
    optimizer = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]
    assert optimizer.param_groups[1]["momentum"] == 0.9
    assert optimizer.params == [a, b]
    c = Parameter(np.zeros(1))
    optimizer.add_param_group({"params": [c], "momentum": 0.0})
    assert optimizer.params == [a, b, c] and optimizer.param_groups[2]["lr"] == 0.1
    assert "3 parameters, 3 groups" in repr(optimizer)


@pytest.mark.parametrize(
    ("make", "error", "phrase"),
    [
        (lambda p: optim.SGD([{"params": [p]}, {"params": [p]}]), ValueError, "more than one"),
        (lambda p: optim.SGD([{"lr": 0.1}]), ValueError, "needs a 'params' entry"),
        (lambda p: optim.SGD([{"params": [p], "lr": -1}]), ValueError, "lr must be"),
        (lambda p: optim.RMSprop([p], alpha=-0.5), ValueError, "alpha must be"),
        (lambda p: optim.Adagrad([p], lr_decay=-1), ValueError, "lr_decay must be"),
        (lambda p: optim.AdamW([p], betas=(0.9, 1.0)), ValueError, "betas[1] must be in [0, 1)"),
        (lambda p: optim.AdamW([p, p * 2]), ValueError, "parameter 1 must be a leaf"),
    ],
    ids=["duplicate", "no-params", "group-lr", "alpha", "lr-decay", "betas", "non-leaf"],
)
def test_bad_arguments(make, error, phrase):
    with pytest.raises(error) as info:
        make(Parameter(np.zeros(2)))
    assert phrase in str(info.value)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_state_dict_round_trip_continues_the_same_trajectory(name):
    settings = {"lr": 0.05, "momentum": 0.9} if name in ("SGD", "RMSprop") else {"lr": 0.05}

    def run(steps, resume_from=None):
        p, q = Parameter(START_P.copy()), Parameter(START_Q.copy())
        optimizer = getattr(optim, name)([p, q], **settings)
        if resume_from is not None:
            values, state = resume_from
            p.data[...], q.data[...] = values
            optimizer.load_state_dict(state)
        for _ in range(steps):
            optimizer.zero_grad()
            objective(p, q, Variable(C)).backward()
            optimizer.step()
        return (p.data.copy(), q.data.copy()), optimizer.state_dict()

    straight, _ = run(6)
    halfway, state = run(3)
    state_copy = {"state": state["state"], "param_groups": state["param_groups"]}
    resumed, _ = run(3, resume_from=(halfway, state_copy))
    for a, b in zip(straight, resumed):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    assert state["param_groups"][0]["params"] == [0, 1]


def test_state_dict_is_a_copy_and_load_checks_its_shape():
    p = Parameter(np.array([1.0, 2.0]))
    optimizer = optim.Adam([p])
    (p * p).sum().backward()
    optimizer.step()
    saved = optimizer.state_dict()
    saved["state"][0]["exp_avg"][0] = 99.0
    assert optimizer.state[0]["exp_avg"][0] != 99.0
    other = optim.Adam([Parameter(np.zeros(3))])
    with pytest.raises(ValueError, match="shape \\(2,\\), but the parameter has shape \\(3,\\)"):
        other.load_state_dict(saved)
    with pytest.raises(ValueError, match="groups of sizes \\[1, 1\\]"):
        optim.Adam(
            [{"params": [Parameter(np.zeros(2))]}, {"params": [Parameter(np.zeros(2))]}]
        ).load_state_dict(saved)
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        optimizer.load_state_dict({"state": {}})


# =========================================================================== schedulers

SCHEDULERS = [
    ("StepLR", {"step_size": 3}),
    ("StepLR", {"step_size": 2, "gamma": 0.5}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 5}),
    ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 1 / (1 + epoch)}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9]}),
    ("MultiStepLR", {"milestones": [3, 6], "gamma": 0.5}),
]


def _sgd_to_schedule(lib, groups):
    """(an SGD over two parameters, lr 0.1, in one group or two (lr 0.3), lib's
    lr_scheduler module) for minigrad (lib=mg) or torch."""
    if lib is mg:
        params = [Parameter(np.zeros(1)), Parameter(np.zeros(1))]
        optimizer_class, scheduler_module = optim.SGD, lr_scheduler
    else:
        params = [lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)]
        optimizer_class, scheduler_module = lib.optim.SGD, lib.optim.lr_scheduler
    spec = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.3}] if groups else params
    return optimizer_class(spec, lr=0.1), scheduler_module


def lr_sequence(lib, name, settings, epochs=14, groups=False):
    """get_last_lr() after each epoch (step() after the optimizer's step, as PyTorch says)."""
    optimizer, scheduler_module = _sgd_to_schedule(lib, groups)
    scheduler = getattr(scheduler_module, name)(optimizer, **settings)
    sequence = [scheduler.get_last_lr()]
    for _ in range(epochs):
        optimizer.step()
        scheduler.step()
        sequence.append(scheduler.get_last_lr())
        assert [g["lr"] for g in optimizer.param_groups] == sequence[-1]
    return sequence


@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
@pytest.mark.parametrize(
    ("name", "settings"), SCHEDULERS, ids=[f"{n}-{sorted(s)}" for n, s in SCHEDULERS]
)
def test_scheduler_lrs_equal_torch(name, settings, groups):
    torch = pytest.importorskip("torch")
    mine = lr_sequence(mg, name, settings, groups=groups)
    theirs = lr_sequence(torch, name, settings, groups=groups)
    assert mine == theirs  # the same formulas in the same order: equal to the last bit


def test_step_lr_and_cosine_by_hand():
    p = Parameter(np.zeros(1))
    optimizer = optim.SGD([p], lr=1.0)
    step = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
    lrs = [step.get_last_lr()[0]]
    for _ in range(5):
        step.step()
        lrs.append(step.get_last_lr()[0])
    np.testing.assert_allclose(lrs, [1, 1, 0.1, 0.1, 0.01, 0.01])
    cosine = lr_scheduler.CosineAnnealingLR(optim.SGD([p], lr=1.0), T_max=4, eta_min=0.2)
    values = [cosine.get_last_lr()[0]]
    for _ in range(8):
        cosine.step()
        values.append(cosine.get_last_lr()[0])
    closed = [0.2 + 0.8 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(9)]
    np.testing.assert_allclose(values, closed, atol=1e-15)


def test_step_with_an_epoch_uses_the_closed_form():
    optimizer = optim.SGD([Parameter(np.zeros(1))], lr=1.0)
    scheduler = lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    scheduler.step(3)
    assert scheduler.get_last_lr() == [0.125] and optimizer.param_groups[0]["lr"] == 0.125


def test_scheduler_state_dict_round_trip():
    optimizer = optim.SGD([Parameter(np.zeros(1))], lr=1.0)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=2)
    for _ in range(3):
        scheduler.step()
    state = scheduler.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    other = lr_scheduler.StepLR(optim.SGD([Parameter(np.zeros(1))], lr=1.0), step_size=2)
    other.load_state_dict(state)
    assert other.last_epoch == 3 and other.get_last_lr() == scheduler.get_last_lr()
    lambdas = lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.5)
    assert lambdas.state_dict()["lr_lambdas"] == [None]


def test_scheduler_errors():
    optimizer = optim.SGD([Parameter(np.zeros(1))], lr=1.0)
    with pytest.raises(TypeError, match="got a list, not a minigrad.optim Optimizer"):
        lr_scheduler.StepLR([], step_size=2)
    with pytest.raises(ValueError, match="step_size must be an int >= 1; got 0"):
        lr_scheduler.StepLR(optimizer, step_size=0)
    with pytest.raises(ValueError, match="T_max must be an int >= 1"):
        lr_scheduler.CosineAnnealingLR(optimizer, T_max=0)
    with pytest.raises(ValueError, match="expected 1 lr_lambdas"):
        lr_scheduler.LambdaLR(optimizer, [lambda e: 1.0, lambda e: 1.0])
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(optim.SGD([Parameter(np.zeros(1))]), step_size=2, last_epoch=3)


def test_scheduler_lowers_the_step_the_optimizer_takes():
    p = Parameter(np.array([1.0]))
    optimizer = optim.SGD([p], lr=1.0)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    moves = []
    for _ in range(3):
        before = p.data.copy()
        p.grad = Variable(np.array([1.0]))
        optimizer.step()
        scheduler.step()
        moves.append(float(before[0] - p.data[0]))
    assert moves == [1.0, 0.5, 0.25]


def test_schedulers_are_reachable_as_in_torch():
    model = nn.Linear(2, 1)
    optimizer = mg.optim.AdamW(model.parameters(), lr=0.01)
    scheduler = mg.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
    assert isinstance(scheduler, lr_scheduler.LRScheduler)


def plateau_sequence(lib, settings, metrics, groups=False):
    """get_last_lr() after each ReduceLROnPlateau.step(metric)."""
    optimizer, scheduler_module = _sgd_to_schedule(lib, groups)
    scheduler = scheduler_module.ReduceLROnPlateau(optimizer, **settings)
    sequence = []
    for metric in metrics:
        scheduler.step(metric)
        sequence.append(list(scheduler.get_last_lr()))
    return sequence


PLATEAUS = [
    {},
    {"patience": 1},
    {"patience": 0, "cooldown": 2, "factor": 0.5},
    {"mode": "max", "patience": 1, "threshold": 0.01, "threshold_mode": "abs"},
    {"patience": 0, "min_lr": 0.02},
    {"patience": 1, "threshold_mode": "abs", "threshold": 0.05, "eps": 0.05},
]
METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.8, 0.8, 0.81, 0.8, 0.79, 0.79, 0.9, 0.9, 0.9, 0.9]


@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
@pytest.mark.parametrize("settings", PLATEAUS, ids=[str(sorted(s.items())) for s in PLATEAUS])
def test_reduce_lr_on_plateau_equals_torch(settings, groups):
    torch = pytest.importorskip("torch")
    metrics = METRICS * 2
    mine = plateau_sequence(mg, settings, metrics, groups)
    theirs = plateau_sequence(torch, settings, metrics, groups)
    assert mine == theirs


def test_reduce_lr_on_plateau_by_hand():
    lrs = plateau_sequence(mg, {"patience": 1, "factor": 0.5}, [1.0, 1.0, 1.0, 0.5, 0.6, 0.6])
    assert [lr[0] for lr in lrs] == [0.1, 0.1, 0.05, 0.05, 0.05, 0.025]


@pytest.mark.parametrize(
    ("make", "error", "phrase"),
    [
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, factor=1.0), ValueError, "factor must be"),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="up"), ValueError, "'min' or 'max'"),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o).step("low"), TypeError, "the epoch's metric"),
        (lambda o: lr_scheduler.MultiStepLR(o, [2.5]), TypeError, "milestones must be epochs"),
        (lambda o: lr_scheduler.MultiStepLR(o, [2], gamma=None), TypeError, "gamma must be"),
    ],
)
def test_new_scheduler_errors(make, error, phrase):
    with pytest.raises(error, match=phrase):
        make(optim.SGD([Parameter(np.zeros(1))], lr=0.1))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_step_with_a_closure_equals_torch(name):
    """optimizer.step(closure): the closure computes the loss (grad mode on) and step()
    returns it, as PyTorch's optimizers do (LBFGS needs it; the others accept it)."""
    torch = pytest.importorskip("torch")

    def run(lib):
        if lib is mg:
            w = Parameter(np.array([1.5, -0.5]))
        else:
            w = lib.tensor([1.5, -0.5], dtype=lib.float64, requires_grad=True)
        optimizer = getattr(lib.optim, name)([w], lr=0.1)

        def closure():
            optimizer.zero_grad()
            loss = (w * w * w).sum() + (w * 2.0).sum()
            loss.backward()
            return loss

        losses = []
        for _ in range(5):
            with lib.no_grad():  # step() turns grad mode on for the closure itself
                losses.append(float(optimizer.step(closure)))
        return losses, np.array(w.detach().numpy() if lib is not mg else w.data)

    mine, theirs = run(mg), run(torch)
    assert mine[0] == pytest.approx(theirs[0], rel=1e-12)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)
