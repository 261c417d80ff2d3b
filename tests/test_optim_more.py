"""AdamW, RMSprop, Adagrad, Adam's amsgrad/maximize, LBFGS, parameter groups (named ones
too), optimizer state_dict and its hooks, the learning-rate schedulers (CyclicLR, OneCycleLR
and CosineAnnealingWarmRestarts among them) and swa_utils: trajectories and lr sequences
equal to PyTorch's (float64, same starting values), plus hand-computed steps and the
errors. Cross-checks skip without torch."""

from __future__ import annotations

import copy
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


# --------------------------------------------------------------------------------------
# CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts: lr and momentum (or beta1) after each
# step equal to PyTorch's; their shapes and errors by hand.


def _optimizer_over_two(lib, name="SGD", settings=None, groups=False):
    """`name` over two float64 parameters, in one group or two (the second with lr 0.5)."""
    settings = {"lr": 0.1, "momentum": 0.9} if settings is None else settings
    if lib is mg:
        params = [Parameter(np.ones(2)), Parameter(np.ones(3))]
        optimizers = optim
    else:
        params = [lib.ones(n, dtype=lib.float64, requires_grad=True) for n in (2, 3)]
        optimizers = lib.optim
    spec = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.5}] if groups else params
    return getattr(optimizers, name)(spec, **settings)


def schedule(lib, make, name="SGD", settings=None, groups=False, steps=40, epochs=None):
    """[lr of each group, momentum (or beta1) of each group, get_last_lr()] after each
    step; `epochs` gives step() its argument (CosineAnnealingWarmRestarts)."""
    optimizer = _optimizer_over_two(lib, name, settings, groups)
    module = lr_scheduler if lib is mg else lib.optim.lr_scheduler
    scheduler = make(module, optimizer)
    rows = []
    for index in range(steps):
        optimizer.step()
        if epochs is None:
            scheduler.step()
        else:
            scheduler.step(epochs[index])
        lrs = [group["lr"] for group in optimizer.param_groups]
        momenta = [
            group["betas"][0] if "betas" in group else group.get("momentum", 0.0)
            for group in optimizer.param_groups
        ]
        assert list(scheduler.get_last_lr()) == lrs
        rows.append(lrs + momenta)
    return np.array(rows)


def _scale(x):
    return 0.5 * (1 + math.sin(x))


ADAM = ("Adam", {"lr": 0.1})
NEW_SCHEDULES = {
    "cyclic": (lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4), {}),
    "cyclic-triangular2-groups": (
        lambda L, o: L.CyclicLR(
            o, [0.01, 0.02], [0.1, 0.3], step_size_up=3, step_size_down=5, mode="triangular2"
        ),
        {"groups": True},
    ),
    "cyclic-exp_range": (
        lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.97),
        {},
    ),
    "cyclic-scale_fn-iterations": (
        lambda L, o: L.CyclicLR(
            o, 0.01, 0.1, step_size_up=3, scale_fn=_scale, scale_mode="iterations"
        ),
        {},
    ),
    "cyclic-scale_fn-cycle": (
        lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=_scale), {}
    ),
    "cyclic-adam-beta1": (
        lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, base_momentum=0.7, max_momentum=0.95),
        {"name": ADAM[0], "settings": ADAM[1]},
    ),
    "cyclic-no-momentum": (
        lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, cycle_momentum=False),
        {"name": "Adagrad", "settings": {"lr": 0.1}},
    ),
    "one-cycle": (lambda L, o: L.OneCycleLR(o, 0.01, total_steps=40), {}),
    "one-cycle-three-phase-linear-groups": (
        lambda L, o: L.OneCycleLR(
            o, [0.01, 0.2], epochs=4, steps_per_epoch=10, anneal_strategy="linear",
            three_phase=True, pct_start=0.25, div_factor=10.0, final_div_factor=100.0,
        ),
        {"groups": True},
    ),  # fmt: skip
    "one-cycle-adam": (
        lambda L, o: L.OneCycleLR(o, 0.01, total_steps=39, base_momentum=0.8),
        {"name": ADAM[0], "settings": ADAM[1], "steps": 39},
    ),
    "one-cycle-rmsprop-no-momentum": (
        lambda L, o: L.OneCycleLR(o, 0.05, total_steps=40, cycle_momentum=False),
        {"name": "RMSprop", "settings": {"lr": 0.1}},
    ),
    "warm-restarts": (lambda L, o: L.CosineAnnealingWarmRestarts(o, 7), {}),
    "warm-restarts-T_mult": (
        lambda L, o: L.CosineAnnealingWarmRestarts(o, 3, T_mult=2, eta_min=0.001),
        {"steps": 60},
    ),
    "warm-restarts-fractional-epochs": (
        lambda L, o: L.CosineAnnealingWarmRestarts(o, 3, T_mult=2, eta_min=0.001),
        {"epochs": [i * 0.37 for i in range(40)]},
    ),
    "warm-restarts-fractional-groups": (
        lambda L, o: L.CosineAnnealingWarmRestarts(o, 5, eta_min=0.01),
        {"epochs": [i * 0.6 + 0.1 for i in range(40)], "groups": True},
    ),
}


@pytest.mark.parametrize("case", sorted(NEW_SCHEDULES))
def test_cyclic_one_cycle_and_warm_restarts_equal_torch(case, real_torch):
    make, options = NEW_SCHEDULES[case]
    mine, theirs = schedule(mg, make, **options), schedule(real_torch, make, **options)
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-15)


def test_warm_restarts_step_with_an_epoch_then_without_equals_torch(real_torch):
    """The docstring's interleaving: 20 steps, step(26), then step() goes on from 27."""

    def run(lib):
        optimizer = _optimizer_over_two(lib, settings={"lr": 0.05})
        module = lr_scheduler if lib is mg else lib.optim.lr_scheduler
        scheduler = module.CosineAnnealingWarmRestarts(optimizer, T_0=10, T_mult=2)
        lrs = []
        for epoch in [None] * 20 + [26, None, None, 3.5, None, 100.25, None]:
            scheduler.step() if epoch is None else scheduler.step(epoch)
            lrs.append((scheduler.get_last_lr()[0], scheduler.T_cur, scheduler.T_i))
        return np.array(lrs, dtype=float)

    np.testing.assert_allclose(run(mg), run(real_torch), rtol=1e-12, atol=1e-15)


def test_cyclic_lr_climbs_to_max_and_back_with_momentum_the_other_way():
    rows = schedule(mg, lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4), steps=16)
    lrs, momenta = rows[:, 0], rows[:, 1]
    # Step t (1-based after the first step) is at lr 0.01 + 0.09·(t/4 rising, then falling).
    expected = [0.01 + 0.09 * min(t % 8, 8 - t % 8) / 4 for t in range(1, 17)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)
    np.testing.assert_allclose(momenta, 0.9 - (lrs - 0.01) / 0.09 * 0.1, rtol=1e-12)
    assert lrs.max() == pytest.approx(0.1) and momenta.min() == pytest.approx(0.8)


def test_triangular2_halves_each_cycle_and_scheduler_sets_base_lr_at_start():
    optimizer = _optimizer_over_two(mg)
    scheduler = lr_scheduler.CyclicLR(optimizer, 0.02, 0.1, step_size_up=2, mode="triangular2")
    assert optimizer.param_groups[0]["lr"] == 0.02  # the optimizer's own lr is replaced
    peaks = []
    for step in range(1, 13):
        optimizer.step()
        scheduler.step()
        if step % 4 == 2:
            peaks.append(scheduler.get_last_lr()[0] - 0.02)
    np.testing.assert_allclose(peaks, [0.08, 0.04, 0.02], rtol=1e-12)


def test_one_cycle_rises_then_anneals_to_its_minimum_and_refuses_an_extra_step():
    optimizer = _optimizer_over_two(mg)
    scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=10, pct_start=0.3)
    lrs, momenta = [scheduler.get_last_lr()[0]], [optimizer.param_groups[0]["momentum"]]
    for _ in range(9):
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        momenta.append(optimizer.param_groups[0]["momentum"])
    assert lrs[0] == pytest.approx(0.5 / 25) and momenta[0] == pytest.approx(0.95)
    assert lrs[2] == pytest.approx(0.5) and momenta[2] == pytest.approx(0.85)  # step 0.3·10 - 1
    assert lrs[-1] == pytest.approx(0.5 / 25 / 1e4)
    assert np.all(np.diff(lrs[:3]) > 0) and np.all(np.diff(lrs[2:]) < 0)
    scheduler.step()  # step 10 = total_steps: still allowed, as in PyTorch
    with pytest.raises(ValueError, match=r"stepped 11 times.*total_steps=10"):
        scheduler.step()


def test_warm_restarts_restart_after_t_0_epochs_and_grow_by_t_mult():
    optimizer = _optimizer_over_two(mg, settings={"lr": 1.0})
    scheduler = lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=3, eta_min=0.1)
    lrs = [scheduler.get_last_lr()[0]]
    for _ in range(9):
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    restarts = [epoch for epoch, lr in enumerate(lrs) if lr == 1.0]
    assert restarts == [0, 2, 8]  # periods of 2, then 6
    assert lrs[1] == pytest.approx(0.1 + 0.9 * (1 + math.cos(math.pi / 2)) / 2)
    scheduler.step(5.5)  # in the second period, 3.5 epochs into it
    expected = 0.1 + 0.9 * (1 + math.cos(math.pi * 3.5 / 6)) / 2
    assert scheduler.get_last_lr()[0] == pytest.approx(expected)
    assert scheduler.last_epoch == 5


@pytest.mark.parametrize(
    "case", ["cyclic-triangular2-groups", "cyclic-adam-beta1", "one-cycle", "warm-restarts-T_mult"]
)
def test_new_scheduler_state_dict_round_trip(case):
    """Stop after 11 steps, save the optimizer and the scheduler, load both into new ones:
    the rest of the schedule is the one an uninterrupted run follows."""
    make, options = NEW_SCHEDULES[case]
    settings = {key: options[key] for key in ("name", "settings", "groups") if key in options}
    whole = schedule(mg, make, steps=30, **settings)

    optimizer = _optimizer_over_two(mg, **settings)
    scheduler = make(lr_scheduler, optimizer)
    for _ in range(11):
        optimizer.step()
        scheduler.step()
    saved_optimizer, saved_scheduler = optimizer.state_dict(), scheduler.state_dict()
    resumed_optimizer = _optimizer_over_two(mg, **settings)
    resumed = make(lr_scheduler, resumed_optimizer)
    resumed_optimizer.load_state_dict(saved_optimizer)
    resumed.load_state_dict(saved_scheduler)
    assert resumed.get_last_lr() == scheduler.get_last_lr()
    rest = []
    for _ in range(19):
        resumed_optimizer.step()
        resumed.step()
        group = resumed_optimizer.param_groups[0]
        rest.append(group["betas"][0] if "betas" in group else group["momentum"])
    np.testing.assert_array_equal(rest, whole[11:, len(resumed_optimizer.param_groups)])


def test_cyclic_state_dict_leaves_out_a_lambda_but_keeps_a_callable_object():
    class Halving:
        def __init__(self):
            self.base = 2.0

        def __call__(self, cycle):
            return 1 / self.base ** (cycle - 1)

    optimizer = _optimizer_over_two(mg)
    with_lambda = lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, scale_fn=lambda x: 1.0)
    assert with_lambda.state_dict()["_scale_fn_custom"] is None
    fn = Halving()
    scheduler = lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, scale_fn=fn)
    state = scheduler.state_dict()
    assert state["_scale_fn_custom"] == {"base": 2.0}
    fn.base = 3.0
    scheduler.load_state_dict(state)
    assert fn.base == 2.0 and scheduler._scale_fn_custom is fn
    assert "_scale_fn_custom" in state  # the caller's dict is left as it was


@pytest.mark.parametrize(
    ("make", "error", "phrase"),
    [
        (lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, mode="sine"), ValueError, "mode must be"),
        (lambda o: lr_scheduler.CyclicLR(o, [0.01, 0.02], 0.1), ValueError, "one value per"),
        (lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=0), ValueError, "> 0"),
        (
            lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, scale_fn=3),
            TypeError, "scale_fn",
        ),
        (lambda o: lr_scheduler.OneCycleLR(o, 0.1), ValueError, "total_steps, or both epochs"),
        (lambda o: lr_scheduler.OneCycleLR(o, 0.1, total_steps=0), ValueError, "positive int"),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=1.5),
            ValueError, "steps_per_epoch",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, total_steps=9, pct_start=1),
            ValueError, "pct_start must be a float",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, total_steps=9, anneal_strategy="exp"),
            ValueError, "'cos' or 'linear'",
        ),
        (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 0), ValueError, "T_0 must be"),
        (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 2.0), ValueError, "T_0 must be"),
        (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 5, 0), ValueError, "T_mult"),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 5, eta_min="0"),
            ValueError, "eta_min must be a number",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 5).step(-1),
            ValueError, "epoch >= 0",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 5).step("1"),
            TypeError, "the epoch to go to",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 5).step(math.inf),
            OverflowError, "finite epoch",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 5).step(math.nan),
            ValueError, "finite epoch",
        ),
        (lambda o: lr_scheduler.OneCycleLR(None, 0.1, 9), TypeError, "not a minigrad.optim"),
    ],
)  # fmt: skip
def test_cyclic_one_cycle_warm_restarts_errors(make, error, phrase):
    with pytest.raises(error, match=phrase):
        make(optim.SGD([Parameter(np.zeros(1))], lr=0.1, momentum=0.9))


@pytest.mark.parametrize(
    ("name", "arguments"), [("CyclicLR", (0.01, 0.1)), ("OneCycleLR", (0.1, 10))]
)
def test_cycling_momentum_needs_an_optimizer_with_one(name, arguments, real_torch):
    """Adagrad has neither momentum nor betas: a ValueError, as PyTorch raises."""
    with pytest.raises(ValueError, match="cycle_momentum=False"):
        getattr(lr_scheduler, name)(optim.Adagrad([Parameter(np.zeros(1))]), *arguments)
    theirs = real_torch.optim.Adagrad([real_torch.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError):
        getattr(real_torch.optim.lr_scheduler, name)(theirs, *arguments)


# --------------------------------------------------------------------------------------
# LBFGS: iterates, first losses and evaluation counts equal to PyTorch's in float64 (to the
# last ulps: PyTorch's add and dot round with fused multiply-adds), convergence and errors.

A_LS = np.random.default_rng(3).normal(size=(8, 3))
B_LS = np.random.default_rng(4).normal(size=(8, 2))


def _lbfgs_run(lib, problem, steps, **settings):
    """Per step(closure): the parameters, the loss step() returned, func_evals, n_iter."""
    if problem == "least squares":
        starts = [np.zeros((3, 2)), np.zeros(2)]
    else:
        starts = [np.array([-1.2, 1.0])]
    if lib is mg:
        params = [Parameter(start.copy()) for start in starts]
        a, b = Variable(A_LS), Variable(B_LS)
    else:
        params = [lib.tensor(start.copy(), requires_grad=True) for start in starts]
        a, b = lib.tensor(A_LS), lib.tensor(B_LS)
    optimizer = lib.optim.LBFGS(params, **settings)

    def closure():
        optimizer.zero_grad()
        if problem == "least squares":
            weight, bias = params
            loss = ((a @ weight + bias - b) ** 2).mean()
        else:
            x = params[0]
            loss = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
        loss.backward()
        return loss

    rows = []
    for _ in range(steps):
        first = float(optimizer.step(closure).detach())
        state = optimizer.state[params[0]]
        values = [p.detach().numpy().ravel() for p in params]
        rows.append(np.concatenate([*values, [first, state["func_evals"], state["n_iter"]]]))
    return np.array(rows)


WOLFE = {"line_search_fn": "strong_wolfe"}
LBFGS_CASES = [
    ("least squares", 4, {}),
    ("least squares", 4, {"line_search_fn": "strong_wolfe"}),
    ("least squares", 4, {"max_iter": 3, "history_size": 2, "lr": 0.7}),
    ("least squares", 3, {"max_iter": 5, "max_eval": 4, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", 3, {"max_iter": 5}),
    ("rosenbrock", 5, {"max_iter": 5, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", 4, {"line_search_fn": "strong_wolfe"}),
    ("rosenbrock", 5, {"lr": 0.5, "max_iter": 10, "history_size": 4, **WOLFE}),
    ("rosenbrock", 2, {"tolerance_change": 1e-3, "tolerance_grad": 1e-2}),
]


@pytest.mark.parametrize(("problem", "steps", "settings"), LBFGS_CASES)
def test_lbfgs_iterates_equal_torch(problem, steps, settings, real_torch):
    mine = _lbfgs_run(mg, problem, steps, **settings)
    theirs = _lbfgs_run(real_torch, problem, steps, **settings)
    np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-10)


def test_lbfgs_solves_least_squares_and_returns_the_first_loss():
    weight, bias = Parameter(np.zeros((3, 2))), Parameter(np.zeros(2))
    # Tolerances below the defaults: a loss change of 1e-9 leaves the weights ~1e-5 off.
    optimizer = optim.LBFGS(
        [weight, bias], line_search_fn="strong_wolfe", tolerance_grad=1e-12, tolerance_change=1e-15
    )
    a, b = Variable(A_LS), Variable(B_LS)
    losses = []

    def closure():
        optimizer.zero_grad()
        loss = ((a @ weight + bias - b) ** 2).mean()
        loss.backward()
        losses.append(loss)
        return loss

    returned = optimizer.step(closure)
    assert returned is losses[0]  # the loss before the step, as PyTorch returns
    assert optimizer.state[0]["func_evals"] == len(losses) > 1
    design = np.hstack([A_LS, np.ones((8, 1))])
    solution = np.linalg.lstsq(design, B_LS, rcond=None)[0]
    np.testing.assert_allclose(weight.detach().numpy(), solution[:3], atol=1e-6)
    np.testing.assert_allclose(bias.detach().numpy(), solution[3], atol=1e-6)


def test_lbfgs_maximize_climbs_and_stops_at_once_when_the_gradient_is_zero():
    x = Parameter(np.array([3.0, -2.0]))
    optimizer = optim.LBFGS([x], maximize=True)

    def closure():
        optimizer.zero_grad()
        value = -((x - 1.0) ** 2).sum()
        value.backward()
        return value

    optimizer.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-6)
    before = dict(optimizer.state[0])
    optimizer.step(closure)  # max |g| <= tolerance_grad: one evaluation, no iteration
    assert optimizer.state[0]["n_iter"] == before["n_iter"]
    assert optimizer.state[0]["func_evals"] == before["func_evals"] + 1


def test_lbfgs_state_dict_round_trip_continues_the_same_iterates():
    def make(start):
        x = Parameter(start.copy())
        optimizer = optim.LBFGS([x], max_iter=3, history_size=3)

        def closure():
            optimizer.zero_grad()
            loss = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
            loss.backward()
            return loss

        return x, optimizer, closure

    x, optimizer, closure = make(np.array([-1.2, 1.0]))
    for _ in range(2):
        optimizer.step(closure)
    saved, at = optimizer.state_dict(), x.detach().numpy().copy()
    optimizer.step(closure)
    resumed_x, resumed, resumed_closure = make(at)
    resumed.load_state_dict(saved)  # flat history arrays: no per-parameter shape check
    resumed.step(resumed_closure)
    np.testing.assert_array_equal(resumed_x.detach().numpy(), x.detach().numpy())


@pytest.mark.parametrize(
    ("make", "error", "phrase"),
    [
        (
            lambda p, q: optim.LBFGS([{"params": [p]}, {"params": [q]}]),
            ValueError, "parameter groups",
        ),
        (lambda p, q: optim.LBFGS([p], lr=-1.0), ValueError, "lr must be"),
        (lambda p, q: optim.LBFGS([p], max_iter=0), ValueError, "max_iter must be an int >= 1"),
        (lambda p, q: optim.LBFGS([p], history_size=2.5), TypeError, "history_size"),
        (lambda p, q: optim.LBFGS([p]).step(None), TypeError, "closure"),
        (lambda p, q: optim.LBFGS([p]).step(lambda: None), TypeError, "return loss"),
        (lambda p, q: optim.LBFGS([p]).step(lambda: "low"), ValueError, "return loss"),
        (lambda p, q: optim.LBFGS(3, max_iter=-1), TypeError, "params"),  # checked first
        (
            lambda p, q: optim.LBFGS([p], line_search_fn="armijo").step(lambda: p.sum()),
            RuntimeError, "only 'strong_wolfe'",
        ),
    ],
)  # fmt: skip
def test_lbfgs_errors(make, error, phrase):
    with pytest.raises(error, match=phrase):
        make(Parameter(np.zeros(2)), Parameter(np.zeros(1)))


# --------------------------------------------------------------------------------------
# Optimizers over (name, parameter) pairs: "param_names" in the groups and in state_dict,
# state[param], load_state_dict hooks.


def test_named_parameters_give_param_names_as_torch(real_torch):
    def groups(lib):
        model = (nn if lib is mg else lib.nn).Linear(3, 2)
        optimizer = lib.optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
        other = lib.optim.Adam([("a", model.weight)], lr=0.01)
        other.add_param_group({"params": [("b", model.bias)], "lr": 0.5})
        state = optimizer.state_dict()
        return (
            [group["param_names"] for group in optimizer.param_groups],
            [group["param_names"] for group in other.param_groups],
            state["param_groups"][0]["param_names"],
            state["param_groups"][0]["params"],
        )

    assert groups(mg) == groups(real_torch) == (
        [["weight", "bias"]], [["a"], ["b"]], ["weight", "bias"], [0, 1]
    )


def test_named_parameters_step_as_unnamed_ones():
    def run(named):
        model = nn.Linear(3, 2)
        with mg.no_grad():
            model.weight.copy_(mg.tensor(np.arange(6.0).reshape(2, 3) / 10))
            model.bias.zero_()
        source = model.named_parameters() if named else model.parameters()
        optimizer = optim.Adam(source, lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            (model(Variable(np.ones((4, 3)))) ** 2).sum().backward()
            optimizer.step()
        return model.weight.detach().numpy(), optimizer

    (named, optimizer), (plain, _) = run(True), run(False)
    np.testing.assert_array_equal(named, plain)
    assert optimizer.state[optimizer.params[0]] is optimizer.state[0]  # PyTorch's key


def test_loading_a_state_dict_takes_its_names_and_hooks_can_adapt_it():
    model = nn.Linear(3, 2)
    optimizer = optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
    (model(Variable(np.ones((1, 3))))).sum().backward()
    optimizer.step()
    saved = optimizer.state_dict()
    saved["param_groups"][0]["param_names"] = ["w", "b"]

    other = optim.SGD(nn.Linear(3, 2).named_parameters(), lr=0.1, momentum=0.9)
    calls = []

    def swap_lr(opt, state_dict):
        calls.append("pre")
        adapted = copy.deepcopy(state_dict)
        adapted["param_groups"][0]["lr"] = 0.01
        return adapted

    handle = other.register_load_state_dict_pre_hook(swap_lr)
    other.register_load_state_dict_post_hook(lambda opt: calls.append("post"))
    other.register_load_state_dict_pre_hook(lambda opt, sd: calls.append("first"), prepend=True)
    other.load_state_dict(saved)
    assert calls == ["first", "pre", "post"]
    assert other.param_groups[0]["lr"] == 0.01 and saved["param_groups"][0]["lr"] == 0.1
    assert other.param_groups[0]["param_names"] == ["w", "b"]
    np.testing.assert_array_equal(
        other.state[other.params[0]]["momentum_buffer"], saved["state"][0]["momentum_buffer"]
    )
    handle.remove()
    other.load_state_dict(saved)
    assert other.param_groups[0]["lr"] == 0.1


def test_named_parameter_errors():
    p, q = Parameter(np.zeros(2)), Parameter(np.zeros(1))
    with pytest.raises(ValueError, match="with/without names. Some param names are missing"):
        optim.SGD([("p", p), q], lr=0.1)
    named = optim.SGD([("p", p)], lr=0.1)
    with pytest.raises(ValueError, match="cannot add a param group without names"):
        named.add_param_group({"params": [q]})
    with pytest.raises(ValueError, match="cannot add a param group with names"):
        optim.SGD([p], lr=0.1).add_param_group({"params": [("q", q)]})
    with pytest.raises(TypeError, match=r"pair \(name, Variable\)"):
        optim.SGD([(1, p)], lr=0.1)
    with pytest.raises(TypeError, match="a set"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(KeyError, match="has no parameter that is the given Variable"):
        named.state[Parameter(np.zeros(3))]
    with pytest.raises(TypeError, match="hook"):
        named.register_load_state_dict_pre_hook("not a function")


# --------------------------------------------------------------------------------------
# swa_utils: AveragedModel (SWA, EMA, avg_fn, multi_avg_fn, use_buffers), update_bn and
# SWALR against PyTorch; the averages by hand.

X_SWA = np.random.default_rng(5).normal(size=(6, 3))
Y_SWA = np.random.default_rng(6).normal(size=(6, 2))


def _bn_model(lib):
    """Linear, BatchNorm1d, Linear with fixed float64 weights."""
    layers = lib.nn if lib is not mg else nn
    model = layers.Sequential(layers.Linear(3, 4), layers.BatchNorm1d(4), layers.Linear(4, 2))
    model = model.double()
    rng = np.random.default_rng(7)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)), dtype=lib.float64))
    return model


def _averaging_run(lib, averaging):
    """Train 6 SGD steps, averaging after each; the averaged parameters and buffers, its
    n_averaged and its predictions (after update_bn, in eval mode)."""
    swa = lib.optim.swa_utils
    model = _bn_model(lib)
    x, y = lib.tensor(X_SWA), lib.tensor(Y_SWA)
    options = {
        "swa": {},
        "ema": {"multi_avg_fn": swa.get_ema_multi_avg_fn(0.9)},
        "swa multi": {"multi_avg_fn": swa.get_swa_multi_avg_fn()},
        "ema avg_fn": {"avg_fn": swa.get_ema_avg_fn(0.8)},
        "swa avg_fn": {"avg_fn": swa.get_swa_avg_fn()},
        "custom avg_fn": {"avg_fn": lambda mine, theirs, n: 0.25 * mine + 0.75 * theirs},
        "buffers": {"use_buffers": True},
    }[averaging]
    averaged = swa.AveragedModel(model, **options)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(6):
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
        averaged.update_parameters(model)
    values = [v.detach().numpy().copy() for v in averaged.parameters()]
    values += [v.detach().numpy().copy() for v in averaged.buffers()]
    swa.update_bn([(x, y)], averaged)
    averaged.eval()
    with lib.no_grad():
        values.append(averaged(x).detach().numpy().copy())
    values += [v.detach().numpy().copy() for v in averaged.buffers()]
    return values


@pytest.mark.parametrize(
    "averaging", ["swa", "ema", "swa multi", "ema avg_fn", "swa avg_fn", "custom avg_fn", "buffers"]
)
def test_averaged_model_equals_torch(averaging, real_torch):
    mine, theirs = _averaging_run(mg, averaging), _averaging_run(real_torch, averaging)
    assert len(mine) == len(theirs)
    for index, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=f"value {index}")


def test_averaged_model_averages_by_hand():
    """w_swa after models w1, w2, w3 is their mean; EMA is decay·w_ema + (1 - decay)·w."""
    model = nn.Linear(2, 1)
    swa_model = optim.swa_utils.AveragedModel(model)
    ema_model = optim.swa_utils.AveragedModel(
        model, multi_avg_fn=optim.swa_utils.get_ema_multi_avg_fn(0.5)
    )
    weights = [np.array([[1.0, 2.0]]), np.array([[3.0, -2.0]]), np.array([[8.0, 0.0]])]
    for w in weights:
        with mg.no_grad():
            model.weight.copy_(mg.tensor(w, dtype=model.weight.dtype))
        swa_model.update_parameters(model)
        ema_model.update_parameters(model)
    np.testing.assert_allclose(swa_model.module.weight.detach().numpy(), [[4.0, 0.0]], rtol=1e-6)
    # 1st copied, then (1, 2)·0.5 + (3, -2)·0.5 = (2, 0), then (2, 0)·0.5 + (8, 0)·0.5.
    np.testing.assert_allclose(ema_model.module.weight.detach().numpy(), [[5.0, 0.0]], rtol=1e-6)
    assert swa_model.n_averaged.item() == 3
    assert swa_model.module.weight is not model.weight  # a copy, not the model itself
    assert swa_model(Variable(np.ones((1, 2), dtype=np.float32))).shape == (1, 1)


def test_update_bn_resets_statistics_restores_momentum_and_mode():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, momentum=0.3))
    batches = [Variable(np.random.default_rng(i).normal(size=(5, 3))) for i in range(3)]
    model.eval()
    optim.swa_utils.update_bn(batches, model)
    assert model[1].momentum == 0.3 and not model.training
    with mg.no_grad():
        features = [model[0](batch).detach().numpy() for batch in batches]
    # Each batch weighs the same: the mean of the batch means.
    np.testing.assert_allclose(
        model[1].running_mean.detach().numpy(),
        np.mean([f.mean(axis=0) for f in features], axis=0),
        rtol=1e-5,
    )
    optim.swa_utils.update_bn(batches, nn.Linear(3, 1))  # no BatchNorm: nothing to do


def swalr_sequence(lib, epochs=14, **settings):
    optimizer = _optimizer_over_two(lib, settings={"lr": 0.5}, groups=True)
    scheduler = lib.optim.swa_utils.SWALR(optimizer, **settings)
    lrs = [scheduler.get_last_lr()]
    for _ in range(epochs):
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr())
    return np.array(lrs)


SWALR_CASES = [
    {"swa_lr": 0.05},
    {"swa_lr": [0.05, 0.2], "anneal_epochs": 4, "anneal_strategy": "linear"},
    {"swa_lr": 0.1, "anneal_epochs": 0},
    {"swa_lr": 0.1, "anneal_epochs": 1, "anneal_strategy": "cos"},
]


@pytest.mark.parametrize("settings", SWALR_CASES, ids=str)
def test_swalr_equals_torch(settings, real_torch):
    np.testing.assert_allclose(
        swalr_sequence(mg, **settings), swalr_sequence(real_torch, **settings), rtol=1e-12
    )


def test_swalr_anneals_linearly_to_swa_lr_by_hand():
    lrs = swalr_sequence(mg, epochs=6, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    np.testing.assert_allclose(lrs[:, 0], [0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1], rtol=1e-12)
    np.testing.assert_allclose(lrs[:, 1], lrs[:, 0])  # both groups start at 0.5


@pytest.mark.parametrize(
    ("make", "error", "phrase"),
    [
        (lambda o: optim.swa_utils.SWALR(o, [0.1, 0.2]), ValueError, "one value per"),
        (lambda o: optim.swa_utils.SWALR(o, 0.1, anneal_strategy="exp"), ValueError, "'cos'"),
        (lambda o: optim.swa_utils.SWALR(o, 0.1, anneal_epochs=-1), ValueError, ">= 0"),
        (lambda o: optim.swa_utils.SWALR(None, 0.1), TypeError, "not a minigrad.optim"),
        (lambda o: optim.swa_utils.get_ema_multi_avg_fn(1.5), ValueError, r"\[0, 1\]"),
        (lambda o: optim.swa_utils.get_ema_avg_fn(-0.1), ValueError, r"\[0, 1\]"),
        (
            lambda o: optim.swa_utils.AveragedModel(
                nn.Linear(1, 1), avg_fn=lambda *a: 0, multi_avg_fn=lambda *a: None
            ),
            AssertionError, "only one of avg_fn",
        ),
        (lambda o: optim.swa_utils.AveragedModel([1]), TypeError, "nn.Module"),
    ],
)  # fmt: skip
def test_swa_utils_errors(make, error, phrase):
    with pytest.raises(error, match=phrase):
        make(optim.SGD([Parameter(np.zeros(1))], lr=0.1))


# --------------------------------------------------------------------------------------
# minigrad.compile: the new schedulers (which change the momentum too) stepped outside and
# inside a compiled step: the replay reads the settings live, as the eager run.


@pytest.mark.parametrize("inside", [False, True], ids=["outside", "inside"])
@pytest.mark.parametrize("kind", ["CyclicLR", "OneCycleLR", "CosineAnnealingWarmRestarts"])
def test_new_schedulers_with_a_compiled_step(kind, inside):
    from test_compile import Twin

    def make_scheduler(optimizer):
        if kind == "CyclicLR":
            return lr_scheduler.CyclicLR(optimizer, 0.01, 0.2, step_size_up=3)
        if kind == "OneCycleLR":
            return lr_scheduler.OneCycleLR(optimizer, 0.2, total_steps=30)
        return lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=4)

    def build():
        mg.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheduler = make_scheduler(optimizer)
        loss_fn = nn.CrossEntropyLoss()

        def step(x, y):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            if inside:
                scheduler.step()
            return loss

        step.scheduler = scheduler
        return step, list(model.parameters())

    twin = Twin(build)
    x = Variable(np.random.default_rng(0).normal(size=(16, 4)))
    y = Variable(np.random.default_rng(1).integers(0, 3, size=16))
    for _ in range(12):
        twin(x, y)
        if not inside:
            twin.eager.scheduler.step()
            twin.compiled.fn.scheduler.step()
        twin.assert_same_state()
    eager_group = twin.eager.scheduler.optimizer.param_groups[0]
    compiled_group = twin.compiled.fn.scheduler.optimizer.param_groups[0]
    assert (eager_group["lr"], eager_group["momentum"]) == (
        compiled_group["lr"], compiled_group["momentum"],
    )  # fmt: skip
    assert twin.compiled.replays >= 8, twin.explain()


def test_state_is_keyed_by_the_parameter_and_state_dict_holds_variables() -> None:
    """PyTorch's `p in optimizer.state`, `optimizer.state[p]`, and tensors in state_dict();
    loading takes them back into the arrays the steps work on."""
    model = mg.nn.Linear(3, 2)
    optimizer = mg.optim.Adam(model.parameters())
    assert model.weight not in optimizer.state
    model(mg.ones(1, 3)).sum().backward()
    optimizer.step()
    assert model.weight in optimizer.state and mg.ones(1) not in optimizer.state
    exp_avg = optimizer.state_dict()["state"][0]["exp_avg"]
    assert isinstance(exp_avg, mg.Variable) and exp_avg.shape == (2, 3)
    np.testing.assert_array_equal(exp_avg.numpy(), optimizer.state[model.weight]["exp_avg"])
    other = mg.optim.Adam(model.parameters())
    other.load_state_dict(optimizer.state_dict())
    assert type(other.state[model.weight]["exp_avg"]) is np.ndarray
    np.testing.assert_array_equal(other.state[0]["exp_avg"], optimizer.state[0]["exp_avg"])
