"""minigrad.compile with minigrad's optimizers inside the step (issue 21): the replay calls
each optimizer's update() on its own arrays ("prebound"), and every trajectory, gradient
and optimizer state equals the eager run's bit for bit. Settings stay live: an lr
scheduler outside or inside the step, load_state_dict, a new parameter group."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_compile import Twin

import minigrad
from minigrad import nn, optim
from minigrad.optim import lr_scheduler

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3}),
    ("SGD", {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
]

X = np.random.default_rng(0).normal(size=(16, 4))
LABELS = np.random.default_rng(1).integers(0, 3, size=16)


def classifier(name: str, settings: dict, set_to_none: bool = True) -> Any:
    """A build for Twin: an MLP classifier stepped the way PyTorch users write it."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        optimizer = getattr(optim, name)(model.parameters(), **settings)
        loss_fn = nn.CrossEntropyLoss()

        def step(x, y):
            optimizer.zero_grad(set_to_none=set_to_none)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            return loss

        step.optimizer = optimizer
        return step, list(model.parameters())

    return build


def assert_same_optimizer_state(eager: Any, compiled: Any) -> None:
    mine, theirs = eager.state_dict(), compiled.state_dict()
    assert mine["param_groups"] == theirs["param_groups"]
    assert mine["state"].keys() == theirs["state"].keys()
    for position, entry in mine["state"].items():
        other = theirs["state"][position]
        assert entry.keys() == other.keys()
        for key, value in entry.items():
            assert np.array_equal(value, other[key]), (position, key)


def batches() -> tuple:
    return minigrad.Variable(X), minigrad.Variable(LABELS)


@pytest.mark.parametrize(("name", "settings"), CONFIGS, ids=[f"{n}-{s}" for n, s in CONFIGS])
def test_each_optimizer_replays_prebound_and_equals_eager(name: str, settings: dict) -> None:
    twin = Twin(classifier(name, settings))
    for _ in range(8):
        twin(*batches())
    twin.assert_same_state()
    assert_same_optimizer_state(twin.eager.optimizer, twin.compiled.fn.optimizer)
    assert twin.compiled.replays >= 4, twin.explain()
    assert f"{name}.update() on 4 parameter arrays, prebound" in twin.compiled.tape()


def test_zero_grad_keeping_zeros_replays_too() -> None:
    twin = Twin(classifier("SGD", {"lr": 0.1, "momentum": 0.9}, set_to_none=False))
    for _ in range(8):
        twin(*batches())
    twin.assert_same_state()
    assert twin.compiled.replays >= 4, twin.explain()


def test_a_scheduler_outside_the_step_changes_the_replayed_lr() -> None:
    twin = Twin(classifier("SGD", {"lr": 0.5, "momentum": 0.9}))
    schedulers = [
        lr_scheduler.StepLR(step.optimizer, step_size=1, gamma=0.5)
        for step in (twin.eager, twin.compiled.fn)
    ]
    for _ in range(4):  # epochs
        for _ in range(4):
            twin(*batches())
        for scheduler in schedulers:
            scheduler.step()
        twin.assert_same_state()
    assert twin.compiled.fn.optimizer.param_groups[0]["lr"] == 0.5 * 0.5**4
    assert twin.compiled.replays >= 12, twin.explain()
    assert "guard failed" not in twin.explain()


def test_a_scheduler_inside_the_step_replays_with_its_lr() -> None:
    def build() -> tuple:
        step, params = classifier("Adam", {"lr": 0.05})()
        scheduler = lr_scheduler.ExponentialLR(step.optimizer, gamma=0.9)

        def with_schedule(x, y):
            loss = step(x, y)
            scheduler.step()
            return loss

        with_schedule.optimizer = step.optimizer
        return with_schedule, params

    twin = Twin(build)
    for _ in range(10):
        twin(*batches())
    twin.assert_same_state()
    assert_same_optimizer_state(twin.eager.optimizer, twin.compiled.fn.optimizer)
    assert twin.compiled.replays >= 6, twin.explain()


def test_loading_an_optimizer_state_between_calls_is_followed() -> None:
    twin = Twin(classifier("Adam", {"lr": 0.05}))
    for _ in range(5):
        twin(*batches())
    saved = twin.compiled.fn.optimizer.state_dict()
    for _ in range(3):
        twin(*batches())
    for step in (twin.eager, twin.compiled.fn):
        step.optimizer.load_state_dict(saved)
    for _ in range(3):
        twin(*batches())
    twin.assert_same_state()
    assert_same_optimizer_state(twin.eager.optimizer, twin.compiled.fn.optimizer)


def test_a_parameter_group_added_after_tracing_is_updated_as_eager_does() -> None:
    def build() -> tuple:
        step, params = classifier("SGD", {"lr": 0.1})()
        extra = nn.Parameter(np.ones(3))
        step.extra = extra
        return step, [*params, extra]

    twin = Twin(build)
    for _ in range(5):
        twin(*batches())
    for step in (twin.eager, twin.compiled.fn):
        step.optimizer.add_param_group({"params": [step.extra], "lr": 0.5})
        step.extra.grad = minigrad.Variable(np.full(3, 2.0))
    before = twin.compiled.replays
    for _ in range(6):  # zero_grad() now clears the new parameter too: traced again
        twin(*batches())
        twin.assert_same_state()
    assert "the parameter groups of SGD changed (add_param_group" in twin.explain()
    assert twin.compiled.replays > before, twin.explain()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_float32_or_float64_classifier_with_mean_and_labels_equals_eager(dtype) -> None:
    """The replay rules (Mean, Index and ScatterAdd for cross-entropy's pick, Pow, Sigmoid,
    LeakyReLU's Compare and Where, clip_grad_norm_'s Norm and Stack) make the eager NumPy
    calls, bit for bit, in either dtype."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.1), nn.Linear(8, 3)).to(dtype)
        optimizer = optim.Adam(model.parameters(), lr=0.01)

        def step(x, y):
            optimizer.zero_grad()
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y) + 0.1 * logits.pow(2).mean()
            loss = loss + logits.sigmoid().pow(3).mean()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
            optimizer.step()
            return loss

        return step, list(model.parameters())

    twin = Twin(build)
    x = minigrad.Variable(X.astype(dtype))
    for _ in range(6):
        twin(x, minigrad.Variable(LABELS))
    twin.assert_same_state()
    tape = twin.compiled.tape()
    for name in ("Mean", "Index ", "ScatterAdd", "Pow", "Sigmoid", "Compare", "Where", "Norm"):
        lines = [line for line in tape.splitlines() if line.startswith(name)]
        assert lines and all("NumPy into a buffer" in line for line in lines), (name, tape)
