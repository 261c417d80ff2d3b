"""minigrad.compile: a replayed step gives the eager step's answer, bit for bit.

Each test builds the same step twice from the same seed, runs one copy eagerly and one
through minigrad.compile, and compares what they return and leave behind with ==, never
allclose: the replay runs the very NumPy calls the eager Functions make. Guards that fail
must trace again, and steps a replay cannot reproduce must stay eager and say why.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn.functional as F
from minigrad import nn, optim

# ----------------------------------------------------------------------------- helpers


def _copy_argument(value: Any, memo: dict) -> Any:
    """A fresh Variable with the same values and flags (the same copy for an alias), so the
    eager and the compiled step never share an argument (its .grad, say)."""
    if isinstance(value, minigrad.Variable):
        if id(value) not in memo:
            data = value.data if isinstance(value.data, str) else np.array(value.data, copy=True)
            memo[id(value)] = minigrad.Variable(data, requires_grad=value.requires_grad)
        return memo[id(value)]
    return value


class Twin:
    """One step built twice from the same state: `eager` runs as written, `compiled` runs
    through minigrad.compile. Calling the Twin calls both and checks they agree."""

    def __init__(self, build: Callable[[], tuple], **options: Any) -> None:
        self.eager, self.eager_params = build()
        step, self.params = build()
        self.compiled = minigrad.compile(step, **options)

    def __call__(self, *args: Any) -> Any:
        eager_memo: dict = {}  # one memo per call keeps step(x, x) an alias on both sides
        compiled_memo: dict = {}
        expected = self.eager(*(_copy_argument(a, eager_memo) for a in args))
        got = self.compiled(*(_copy_argument(a, compiled_memo) for a in args))
        assert_same_result(expected, got)
        return got

    def both(self, change: Callable[[list], None]) -> None:
        """Make the same change to the eager and to the compiled step's parameters."""
        change(self.eager_params)
        change(self.params)

    def assert_same_state(self) -> None:
        assert_same_parameters(self.eager_params, self.params)

    def explain(self) -> str:
        return self.compiled.explain()


def assert_same_result(expected: Any, got: Any) -> None:
    if isinstance(expected, minigrad.Variable):
        assert isinstance(got, minigrad.Variable)
        assert np.array_equal(expected.data, got.data, equal_nan=True)
    elif isinstance(expected, (tuple, list)):
        assert type(expected) is type(got) and len(expected) == len(got)
        for a, b in zip(expected, got):
            assert_same_result(a, b)
    elif isinstance(expected, dict):
        assert type(got) is dict and list(expected) == list(got)
        for key in expected:
            assert_same_result(expected[key], got[key])
    elif isinstance(expected, float):
        assert expected == got or (np.isnan(expected) and np.isnan(got))
    else:
        assert expected == got


def assert_same_parameters(eager: list, compiled: list) -> None:
    """Same data and same .grad (or both None) for every parameter, bit for bit."""
    assert len(eager) == len(compiled)
    for a, b in zip(eager, compiled):
        assert np.array_equal(a.data, b.data, equal_nan=True)
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            assert np.array_equal(a.grad.data, b.grad.data, equal_nan=True)


def sgd_(params: list, lr: float) -> None:
    """Manual SGD, as the lessons write it."""
    with minigrad.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * p.grad


# ----------------------------------------------------------------------------- models


class FunctionalLinear(minigrad.Function):
    """y = x Wᵀ + b written with Variable operations (as tests/test_nn.py's)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        output = (weight.unsqueeze(0) * x.unsqueeze(1)).sum(dim=-1)
        if bias is not None:
            output = output + bias.unsqueeze(0)
        ctx.save_for_backward(x, weight, bias)
        return output

    @staticmethod
    @minigrad.once_differentiable
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        grad_weight = grad_output.unsqueeze(-1) * x.unsqueeze(-2)
        grad_bias = grad_output.detach().clone() if bias is not None else None
        grad_input = (grad_output.unsqueeze(-1) * weight.unsqueeze(0)).sum(dim=1)
        return grad_input, grad_weight, grad_bias


class NumpyFunctionalLinear(minigrad.Function):
    """Lesson 05's version: NumPy on .data in forward and backward."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        return x.data @ weight.data.T + bias.data

    @staticmethod
    @minigrad.once_differentiable
    def backward(ctx, grad_output):
        x, weight, _ = ctx.saved_tensors
        grad = grad_output.data
        return grad @ weight.data, grad.T @ x.data, grad.sum(0)


def spirals(points_per_arm: int = 30, arms: int = 3, seed: int = 0) -> tuple:
    """Points on spiral arms (float64, (arms * points_per_arm, 2)) and each one's arm."""
    rng = np.random.default_rng(seed)
    radius = np.linspace(0.1, 1.0, points_per_arm)
    points, labels = [], []
    for arm in range(arms):
        angle = 2 * np.pi * arm / arms + 5.0 * radius + rng.normal(0.0, 0.15, points_per_arm)
        points.append(np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1))
        labels.append(np.full(points_per_arm, arm))
    return np.concatenate(points), np.concatenate(labels)


def functional_linear_step(
    linear: type = FunctionalLinear, labels: minigrad.Variable | None = None
) -> Callable[[], tuple]:
    """step(x, y), or step(x) with `labels` captured."""

    def build() -> tuple:
        rng = np.random.default_rng(0)
        shapes = [(16, 2), (16,), (3, 16), (3,)]
        params = [nn.Parameter(rng.normal(size=shape) * 0.5) for shape in shapes]
        w1, b1, w2, b2 = params

        def step(x, y=labels):
            for p in params:
                p.grad = None
            hidden = linear.apply(x, w1, b1).tanh()
            loss = F.cross_entropy(linear.apply(hidden, w2, b2), y)
            loss.backward()
            sgd_(params, 0.5)
            return loss.item()

        return step, params

    return build


class GradFactor(minigrad.Function):
    """Identity forward; backward multiplies the gradient by f (lesson 06)."""

    @staticmethod
    def forward(x, f):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.f = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.f, None


class GradFactorCounting(minigrad.Function):
    """Its backward reads a class attribute that its forward changes on every call."""

    factor = 1.0

    @staticmethod
    def forward(ctx, x, f):
        GradFactorCounting.factor += f
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * GradFactorCounting.factor, None


# Row i: gate i's coefficients of (1, a, b, ab), as in lesson 06.
GATE_COEFFICIENTS = np.array([
    [0, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, -1], [0, 1, 0, 0],
    [0, 0, 1, -1], [0, 0, 1, 0], [0, 1, 1, -2], [0, 1, 1, -1],
    [1, -1, -1, 1], [1, -1, -1, 2], [1, 0, -1, 0], [1, 0, -1, 1],
    [1, -1, 0, 0], [1, -1, 0, 1], [1, 0, 0, -1], [1, 0, 0, 0],
], dtype=float)  # fmt: skip


class LogicLayer(nn.Module):
    """Lesson 06's layer: gates on two fixed columns each, mixed by softmax(logits).
    `ones_like=False` makes the constant term as a * 0 + 1, inside the operations."""

    def __init__(
        self, n_in: int, n_out: int, rng: np.random.Generator, factor: float, ones_like: bool
    ) -> None:
        super().__init__()
        self.ones_like = ones_like
        self.left = rng.integers(0, n_in, size=n_out)
        self.right = rng.integers(0, n_in, size=n_out)
        self.factor = factor
        self.logits = nn.Parameter(rng.normal(size=(n_out, 16)))

    def forward(self, h):
        h = GradFactor.apply(h, self.factor)
        a, b = h[:, self.left], h[:, self.right]
        ones = minigrad.ones_like(a) if self.ones_like else a * 0.0 + 1.0
        terms = minigrad.stack([ones, a, b, a * b], dim=-1)
        gates = terms @ GATE_COEFFICIENTS.T
        return (gates * minigrad.softmax(self.logits, dim=-1)).sum(-1)


def logic_gate_step(ones_like: bool = False) -> tuple:
    rng = np.random.default_rng(0)
    sizes = [5, 8, 8, 8]
    network = nn.Sequential(
        *[LogicLayer(n_in, n_out, rng, 2.0, ones_like) for n_in, n_out in zip(sizes, sizes[1:])]
    )
    optimizer = optim.Adam(network.parameters(), lr=0.1)

    def step(x, y):
        optimizer.zero_grad()
        loss = ((network(x).mean(-1) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.item()

    return step, list(network.parameters())


def sequential_step(optimizer: str, activation: type, loss_name: str) -> Callable[[], tuple]:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 12), activation(), nn.Linear(12, 3))
        if optimizer == "sgd":
            opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        else:
            opt = optim.Adam(model.parameters(), lr=0.01)
        mse = nn.MSELoss()

        def step(x, y):
            opt.zero_grad()
            scores = model(x)
            if loss_name == "cross_entropy":
                loss = F.cross_entropy(scores, y)
            else:
                loss = mse(scores, y)
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    return build


def small_step(lr: float = 0.1) -> tuple:
    """x -> tanh(x W + b).sum(): the step most guard tests use."""
    rng = np.random.default_rng(1)
    w = nn.Parameter(rng.normal(size=(3, 2)))
    b = nn.Parameter(rng.normal(size=(2,)))
    params = [w, b]

    def step(x):
        for p in params:
            p.grad = None
        loss = (x @ w + b).tanh().sum()
        loss.backward()
        sgd_(params, lr)
        return loss.item()

    return step, params


def batch(n: int = 5, seed: int = 0, dtype: Any = np.float64, **flags: Any) -> minigrad.Variable:
    return minigrad.Variable(
        np.random.default_rng(seed).normal(size=(n, 3)).astype(dtype), **flags
    )


def run_until_replaying(twin: Twin, *args: Any, calls: int = 4) -> None:
    before = twin.compiled.replays
    for _ in range(calls):
        twin(*args)
    assert twin.compiled.replays > before, twin.explain()


# ---------------------------------------------------------------- 1. bit-for-bit answers


@pytest.mark.parametrize("steps", [20])
def test_functional_linear_on_spirals_matches_eager_bit_for_bit(steps: int) -> None:
    points, labels = spirals()
    x, y = minigrad.Variable(points), minigrad.Variable(labels)
    twin = Twin(functional_linear_step(labels=y))  # labels as an argument stay eager
    losses = [twin(x) for _ in range(steps)]
    twin.assert_same_state()
    assert twin.compiled.replays == steps - 2, twin.explain()  # traced twice, then replayed
    assert losses[-1] < losses[0]  # it does train
    assert "FunctionalLinear" in twin.compiled.tape()


def test_numpy_functional_linear_stays_eager_and_still_trains_the_same() -> None:
    """Lesson 05's backward does NumPy on .data, which a replay would not redo."""
    points, labels = spirals()
    x, y = minigrad.Variable(points), minigrad.Variable(labels)
    twin = Twin(functional_linear_step(NumpyFunctionalLinear))
    for _ in range(6):
        twin(x, y)
    twin.assert_same_state()
    assert twin.compiled.replays == 0
    assert "reads .data of a Variable" in twin.explain()


def test_grad_factor_logic_gate_net_with_adam_matches_eager_bit_for_bit() -> None:
    bits = np.array(list(itertools.product([0.0, 1.0], repeat=5)))
    labels = np.random.default_rng(1).integers(0, 2, size=len(bits)).astype(float)
    x, y = minigrad.Variable(bits), minigrad.Variable(labels)
    twin = Twin(logic_gate_step)
    for _ in range(20):
        twin(x, y)
    twin.assert_same_state()
    # Adam's first step and zero_grad with no .grad yet differ from the later ones: the
    # compiler compares the next two runs.
    assert twin.compiled.replays >= 17, twin.explain()
    assert "Adam.update() on 3 parameter arrays, prebound" in twin.compiled.tape()


def test_a_factory_made_constant_like_ones_like_replays_with_the_right_answer() -> None:
    """minigrad.ones_like in the step is recorded as an operation (factories.Made) while the
    step is traced, so the replay makes the same ones again (issue 31)."""
    bits = np.array(list(itertools.product([0.0, 1.0], repeat=5)))
    labels = np.random.default_rng(1).integers(0, 2, size=len(bits)).astype(float)
    twin = Twin(functools.partial(logic_gate_step, ones_like=True))
    for _ in range(6):
        twin(minigrad.Variable(bits), minigrad.Variable(labels))
    twin.assert_same_state()
    assert twin.compiled.replays == 4, twin.explain()
    assert "Made" in twin.compiled.tape()


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize(
    ("activation", "loss_name"), [(nn.Tanh, "cross_entropy"), (nn.ReLU, "mse")]
)
def test_sequential_with_an_optimizer_matches_eager_bit_for_bit(
    optimizer: str, activation: type, loss_name: str
) -> None:
    points, labels = spirals(points_per_arm=20, seed=3)
    twin = Twin(sequential_step(optimizer, activation, loss_name))
    rng = np.random.default_rng(0)
    targets = labels if loss_name == "cross_entropy" else np.eye(3)[labels]
    for _ in range(25):  # a new mini-batch each step: the arguments are copied in
        rows = rng.choice(len(points), size=16, replace=False)
        twin(minigrad.Variable(points[rows]), minigrad.Variable(targets[rows]))
    twin.assert_same_state()
    # Integer class labels from the batch replay too (issue 21): cross_entropy states the
    # values its Python branches on, and the replay checks them before each call.
    assert twin.compiled.replays >= 22, twin.explain()


def test_full_batch_cross_entropy_with_captured_labels_replays() -> None:
    points, labels = spirals()
    targets = minigrad.Variable(labels)

    def build() -> tuple:
        step, params = sequential_step("adam", nn.Tanh, "cross_entropy")()
        return functools.partial(step, y=targets), params

    twin = Twin(build)
    for _ in range(12):
        twin(minigrad.Variable(points))
    twin.assert_same_state()
    assert twin.compiled.replays >= 9, twin.explain()


def test_captured_labels_changed_in_place_are_read_live() -> None:
    """Regression: F.cross_entropy reads a new NumPy view of a captured labels Variable on
    every call; the replay kept the traced labels as a constant."""
    points, labels = spirals()
    targets = minigrad.Variable(labels.copy())

    def build() -> tuple:
        step, params = sequential_step("sgd", nn.Tanh, "cross_entropy")()
        return functools.partial(step, y=targets), params

    twin = Twin(build)
    x = minigrad.Variable(points)
    run_until_replaying(twin, x)
    with minigrad.no_grad():  # both copies read the same captured labels
        targets.copy_(minigrad.Variable(labels[::-1].copy()))
    for _ in range(3):
        twin(x)
    twin.assert_same_state()


@pytest.mark.parametrize("ignore_index", [-100, -1])
def test_cross_entropy_labels_that_change_after_the_traced_calls_stay_right(
    ignore_index: int,
) -> None:
    """Regression: the first two batches share their labels (data sorted by class), and a
    later one has ignored labels; a replay kept the first labels as a constant (or, read
    live, would miss cross_entropy's branch on ignored labels)."""
    points, labels = spirals(points_per_arm=16)
    labels[-4:] = ignore_index

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(2, 3)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y, ignore_index=ignore_index)
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for start in range(0, len(points), 8):  # batches 0 and 1: all of class 0
        rows = slice(start, start + 8)
        twin(minigrad.Variable(points[rows]), minigrad.Variable(labels[rows]))
    twin.assert_same_state()


def test_sub_underscore_update_and_returned_detached_variable_match_eager() -> None:
    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(2).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            out = (x @ w).relu()
            loss = (out * out).mean()
            loss.backward()
            with minigrad.no_grad():
                w.sub_(0.05 * w.grad)
            return loss.detach(), out.detach()

        return step, [w]

    twin = Twin(build)
    for seed in range(8):
        twin(batch(seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays == 6


# Each op maps h (4, 4) to a new (4, 4), using the parameters a (4, 4) and b (4,).
GRAPH_OPS: dict[str, Callable] = {
    "add": lambda h, a, b: h + b,
    "sub": lambda h, a, b: h - a,
    "mul": lambda h, a, b: h * a,
    "div": lambda h, a, b: h / (b * b + 1.0),
    "tanh": lambda h, a, b: h.tanh(),
    "exp": lambda h, a, b: h.tanh().exp(),
    "relu": lambda h, a, b: h.relu(),
    "matmul": lambda h, a, b: h @ a,
    "sum": lambda h, a, b: h + h.sum(0) * 0.25,
    "mean": lambda h, a, b: h - h.mean(1, keepdim=True),
    "transpose": lambda h, a, b: h.T,
    "reshape": lambda h, a, b: (h.reshape(2, 8) * 0.5).reshape(4, 4),
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(st.sampled_from(sorted(GRAPH_OPS)), min_size=1, max_size=6),
    seed=st.integers(0, 2**16),
)
def test_random_small_graphs_match_eager_bit_for_bit(ops: list, seed: int) -> None:
    def build() -> tuple:
        rng = np.random.default_rng(seed)
        a = nn.Parameter(rng.uniform(-1, 1, size=(4, 4)))
        b = nn.Parameter(rng.uniform(-1, 1, size=(4,)))
        params = [a, b]

        def step(x):
            h = x @ a + b
            for name in ops:
                h = GRAPH_OPS[name](h, a, b)
            loss = (h * h).mean()
            loss.backward()
            sgd_(params, 0.01)
            for p in params:
                p.grad = None
            return loss.item()

        return step, params

    twin = Twin(build)
    x = minigrad.Variable(np.random.default_rng(seed + 1).uniform(-1, 1, size=(4, 4)))
    for _ in range(5):
        twin(x)
    twin.assert_same_state()
    assert twin.compiled.replays == 3, twin.explain()


# ---------------------------------------------------------------- 2. guards


def test_a_new_argument_shape_traces_a_new_variant() -> None:
    twin = Twin(small_step)
    run_until_replaying(twin, batch(5))
    run_until_replaying(twin, batch(7))
    twin.assert_same_state()
    assert "argument 0 changed: shape (5, 3)" in twin.explain()
    assert "-> shape (7, 3)" in twin.explain()
    replayed = twin.compiled.replays
    twin(batch(5))  # back to the first variant: replays at once
    assert twin.compiled.replays == replayed + 1, twin.explain()
    twin.assert_same_state()


def test_switching_between_variants_every_epoch_keeps_replaying() -> None:
    """Regression: an epoch's last, smaller batch is a second variant; the parameters it
    changes in place must not count as changed "outside the step" for the first one."""
    twin = Twin(small_step)
    for epoch in range(6):
        for seed in range(3):
            twin(batch(5, seed=seed))
        twin(batch(2, seed=epoch))
    twin.assert_same_state()
    assert len(twin.compiled.variants) == 2
    assert twin.compiled.replays == 24 - 4, twin.explain()  # each variant traced twice
    assert "changed in place outside the step" not in twin.explain()


def test_float_keyword_arguments_are_read_live_by_one_variant() -> None:
    """A learning rate passed as a float argument goes into operations as it is: one
    variant replays every value, each new value checked once by a traced eager run."""

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(2).normal(size=(3, 2)))

        def step(x, *, lr, scale=1.0):
            w.grad = None
            loss = ((x @ w) * scale).tanh().sum()
            loss.backward()
            sgd_([w], lr)
            return loss.item()

        return step, [w]

    eager, eager_params = build()
    step, params = build()
    compiled = minigrad.compile(step)
    for seed, lr in enumerate([0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.1, 0.2]):
        assert compiled(batch(seed=seed), lr=lr, scale=2.0) == eager(
            batch(seed=seed), lr=lr, scale=2.0
        )
    assert_same_parameters(eager_params, params)
    assert len(compiled.variants) == 1, compiled.explain()
    assert compiled.replays == 5, compiled.explain()  # all but the 2 traced, 1 checked
    assert "changed" not in compiled.explain()


def test_int_arguments_choose_variants() -> None:
    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(2).normal(size=(3, 2)))

        def step(x, power):
            w.grad = None
            loss = ((x @ w) ** power).sum()
            loss.backward()
            sgd_([w], 0.01)
            return loss.item()

        return step, [w]

    eager, eager_params = build()
    step, params = build()
    compiled = minigrad.compile(step)
    for seed, power in enumerate([2, 2, 2, 3, 3, 3]):
        assert compiled(batch(seed=seed), power) == eager(batch(seed=seed), power)
    assert_same_parameters(eager_params, params)
    assert "argument 1 changed: 2 -> 3" in compiled.explain()


def test_a_new_argument_dtype_traces_a_new_variant() -> None:
    twin = Twin(small_step)
    run_until_replaying(twin, batch())
    run_until_replaying(twin, batch(dtype=np.float32))
    twin.assert_same_state()
    assert "dtype float64" in twin.explain() and "-> shape (5, 3), dtype float32" in twin.explain()


def test_an_argument_that_starts_requiring_grad_is_a_new_variant_that_stays_eager() -> None:
    twin = Twin(small_step)
    run_until_replaying(twin, batch())
    for _ in range(3):
        twin(batch(requires_grad=True))
    twin.assert_same_state()
    assert "requires_grad=False -> " in twin.explain()
    assert "sets .grad or changes the data of one of its arguments" in twin.explain()


def test_the_same_variable_passed_twice_is_a_different_variant_than_two() -> None:
    """The replay copies each argument into its own buffer: step(x, x) traced must not
    serve step(x, z)."""

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(2).normal(size=(3, 2)))

        def step(x, z):
            w.grad = None
            loss = ((x @ w) * (z @ w)).sum()
            loss.backward()
            sgd_([w], 0.01)
            return loss.item()

        return step, [w]

    twin = Twin(build)
    x = batch(seed=1)
    for _ in range(4):
        twin(x, x)
    for seed in range(4):
        twin(batch(seed=seed), batch(seed=seed + 10))
    twin.assert_same_state()
    assert "the same array as argument 0" in twin.explain()


def test_grad_mode_off_is_a_new_variant() -> None:
    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(3).normal(size=(3, 2)))
        return (lambda x: (x @ w).tanh().sum().item()), [w]

    twin = Twin(build)
    run_until_replaying(twin, batch())
    with minigrad.no_grad():
        run_until_replaying(twin, batch())
    assert "grad mode on -> grad mode off" in twin.explain()


def test_replacing_a_parameters_data_traces_again() -> None:
    twin = Twin(small_step)
    run_until_replaying(twin, batch())
    twin.both(lambda params: setattr(params[0], "data", np.full((3, 2), 0.25)))
    run_until_replaying(twin, batch())
    twin.assert_same_state()
    assert "the data of a (3, 2) Variable was replaced (.data = ...)" in twin.explain()


def test_changing_a_parameter_in_place_outside_the_step_keeps_replaying() -> None:
    """The replay reads parameters live: an in-place change outside the step (an
    evaluation after a training epoch, a hand-made update) needs no new trace."""
    twin = Twin(small_step)
    run_until_replaying(twin, batch())
    traced = twin.compiled.trace_seconds

    def halve(params: list) -> None:
        with minigrad.no_grad():
            params[1].mul_(0.5)

    before = twin.compiled.replays
    for _ in range(3):
        twin.both(halve)
        twin(batch())
        twin.assert_same_state()
    assert twin.compiled.replays == before + 3, twin.explain()
    assert twin.compiled.trace_seconds == traced
    assert "guard failed" not in twin.explain()


def test_a_parameter_that_stops_requiring_grad_traces_again() -> None:
    twin = Twin(small_step)
    run_until_replaying(twin, batch())
    twin.both(lambda params: params[1].requires_grad_(False))
    run_until_replaying(twin, batch())
    twin.assert_same_state()
    assert twin.params[1].grad is None
    assert "requires_grad of a (2,) Variable changed" in twin.explain()


def test_a_grad_left_on_a_parameter_outside_the_step_traces_again() -> None:
    """A step that sets no .grad = None itself (zeroing after) sees a stale .grad."""

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(4).normal(size=(3, 2)))

        def step(x):
            loss = (x @ w).tanh().sum()
            loss.backward()
            sgd_([w], 0.1)
            w.grad = None
            return loss.item()

        return step, [w]

    twin = Twin(build)
    run_until_replaying(twin, batch())
    twin.both(lambda params: setattr(params[0], "grad", minigrad.zeros(3, 2)))
    twin(batch())  # adds onto the .grad: traced again, and said so
    twin.assert_same_state()
    assert "now has a .grad at the start of the step" in twin.explain()


def test_a_hook_registered_on_a_parameter_traces_again_and_runs_eagerly() -> None:
    twin = Twin(small_step)
    run_until_replaying(twin, batch())
    twin.both(lambda params: params[0].register_hook(lambda grad: grad * 3.0))
    for _ in range(3):
        twin(batch())
    twin.assert_same_state()
    assert "a (3, 2) Variable has a hook now" in twin.explain()
    assert "a gradient hook on a leaf Variable (a parameter" in twin.explain()


def test_anomaly_mode_runs_the_step_eagerly() -> None:
    twin = Twin(small_step)
    run_until_replaying(twin, batch())
    replayed = twin.compiled.replays
    with minigrad.detect_anomaly():
        twin(batch())
        twin(batch())
    assert twin.compiled.replays == replayed
    assert "eager: anomaly mode is on" in twin.explain()
    twin(batch())  # the eager runs were the step's own: it replays again at once
    assert twin.compiled.replays == replayed + 1, twin.explain()
    twin.assert_same_state()


def test_a_captured_variable_replaced_traces_again_and_changed_in_place_is_read_live() -> None:
    inputs = minigrad.Variable(np.ones((5, 3)))

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(2).normal(size=(3, 2)))

        def step():
            w.grad = None
            loss = (inputs @ w).tanh().sum()
            loss.backward()
            sgd_([w], 0.1)
            return loss.item()

        return step, [w]

    twin = Twin(build)
    run_until_replaying(twin)
    inputs.data = np.full((5, 3), 2.0)
    run_until_replaying(twin)
    traced = twin.compiled.trace_seconds
    with minigrad.no_grad():
        inputs.mul_(-1.0)
    run_until_replaying(twin)
    twin.assert_same_state()
    assert twin.compiled.trace_seconds == traced  # the new values, replayed
    assert "the data of a (5, 3) Variable was replaced" in twin.explain()


def test_a_captured_array_changed_in_place_is_read_live() -> None:
    """A NumPy array the step closes over is read at each replay, not copied."""
    scale = np.ones(2)

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(5).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            loss = ((x @ w) * scale).sum()
            loss.backward()
            sgd_([w], 0.1)
            return loss.item()

        return step, [w]

    twin = Twin(build)
    run_until_replaying(twin, batch())
    scale[...] = [2.0, -1.0]
    twin(batch())
    twin.assert_same_state()


# ---------------------------------------------------------------- 3. fallbacks


def assert_stays_eager(twin: Twin, reason: str, *args: Any, calls: int = 5) -> None:
    for _ in range(calls):
        twin(*args)
    twin.assert_same_state()
    assert twin.compiled.replays == 0, twin.explain()
    assert reason in twin.explain()
    assert "eager:" in twin.compiled.explain()


def test_text_variables_stay_eager() -> None:
    def build() -> tuple:
        text = minigrad.Variable("A cheap mug for your coffee", requires_grad=True)

        def step(shop):
            text.grad = None
            listing = text + " | " + shop
            listing.backward(minigrad.Variable("Too vague."))
            return None

        return step, [text]

    twin = Twin(build)
    for _ in range(3):
        twin(minigrad.Variable("Sold by Kiln & Co."))
    assert twin.eager_params[0].grad.data == twin.params[0].grad.data
    assert twin.compiled.replays == 0
    assert "a text Variable (minigrad.compile replays NumPy arrays only)" in twin.explain()


def test_item_in_the_middle_of_the_step_stays_eager() -> None:
    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(6).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            out = (x @ w).tanh()
            scale = 2.0 if out.sum().item() > 0 else 1.0  # Python branches on a value
            loss = (out * scale).sum()
            loss.backward()
            sgd_([w], 0.1)
            return loss.item()

        return step, [w]

    assert_stays_eager(Twin(build), ".item() reads a value in the middle of the step", batch())


def test_a_branch_on_a_returned_item_stays_eager() -> None:
    """Regression: the value is returned, but Python also branches on it before the update;
    here the branch flips after the two traced runs, so a replay would keep the old path."""

    def build() -> tuple:
        w = nn.Parameter(np.full((3, 2), 0.5))

        def step(x):
            w.grad = None
            loss = ((x @ w) ** 2).mean()
            value = loss.item()
            if value > 0.05:  # update only while the loss is large
                loss.backward()
                sgd_([w], 0.2)
            return value

        return step, [w]

    assert_stays_eager(Twin(build), ".item() reads a value in the middle of the step", batch(),
                       calls=12)  # fmt: skip


def test_numpy_work_on_a_parameters_data_stays_eager() -> None:
    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(7).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            norm = minigrad.Variable(np.abs(w.data).sum(0))
            loss = ((x @ w) / norm).sum()
            loss.backward()
            sgd_([w], 0.1)
            return loss.item()

        return step, [w]

    assert_stays_eager(Twin(build), "the step reads .data of a Variable", batch())


def test_a_global_learning_rate_that_changes_every_call_stays_eager() -> None:
    lr = {"value": 0.1}

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(8).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            loss = (x @ w).tanh().sum()
            loss.backward()
            sgd_([w], lr["value"])
            return loss.item()

        return step, [w]

    twin = Twin(build)

    def call() -> None:
        # Both copies must see the same lr; the global moves on once per pair of calls.
        twin(batch())
        lr["value"] += 0.01

    for _ in range(6):
        call()
    twin.assert_same_state()
    assert twin.compiled.replays == 0
    assert "differs between the last two traced runs" in twin.explain()


def test_a_function_whose_backward_reads_changing_class_state_stays_eager() -> None:
    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(9).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            loss = GradFactorCounting.apply(x @ w, 0.5).tanh().sum()
            loss.backward()
            sgd_([w], 0.1)
            return loss.item()

        return step, [w]

    GradFactorCounting.factor = 1.0
    eager_step, eager_params = build()
    step, params = build()
    compiled = minigrad.compile(step)
    for _ in range(6):
        # Reset the class state so each side sees the same factors.
        start = GradFactorCounting.factor
        expected = eager_step(batch())
        GradFactorCounting.factor = start
        assert compiled(batch()) == expected
    assert_same_parameters(eager_params, params)
    assert compiled.replays == 0
    assert "event" in compiled.explain() and "differs between the last two traced runs" in (
        compiled.explain()
    )


def test_returning_the_loss_after_its_backward_replays() -> None:
    """`return loss` after loss.backward() (issue 21; it used to keep the step eager)."""

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(10).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            loss = (x @ w).tanh().sum()
            loss.backward()
            sgd_([w], 0.1)
            return loss

        return step, [w]

    twin = Twin(build)
    for _ in range(4):
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays > 0, twin.explain()


def _hooked_step(how: str, seen: list | None = None) -> Callable[[], tuple]:
    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(11).normal(size=(3, 2)))

        def step(x):
            w.grad = None
            hidden = x @ w
            if how == "retain_grad":
                hidden.retain_grad()
            elif how == "hook":
                hidden.register_hook(lambda grad: grad * 0.5)
            else:  # a hook with a Python side effect
                hidden.register_hook(lambda grad: seen.append(1))
            loss = hidden.tanh().sum()
            loss.backward()
            sgd_([w], 0.1)
            return loss.item()

        return step, [w]

    return build


def test_retain_grad_inside_the_step_stays_eager() -> None:
    assert_stays_eager(Twin(_hooked_step("retain_grad")), "retain_grad(): a replay makes no",
                       batch())


def test_a_hook_the_step_registers_on_a_variable_it_made_replays() -> None:
    """Its operations are recorded as a backward formula's are (issue 31)."""
    twin = Twin(_hooked_step("hook"))
    for seed in range(8):
        twin(batch(seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays >= 5, twin.explain()


def test_a_hook_with_a_python_side_effect_stays_eager_and_says_where() -> None:
    seen: list = []
    assert_stays_eager(Twin(_hooked_step("appends", seen)), "calls .append()", batch())


def test_a_scheduler_step_inside_the_step_is_replayed_like_the_optimizer_s() -> None:
    """scheduler.step(), like optimizer.step(), is replayed by calling it again: the lr
    keeps changing and every step matches eager."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheduler = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

        def step(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            scheduler.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for _ in range(8):
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays > 0, twin.explain()


def test_an_lr_changed_in_plain_python_inside_the_step_stays_eager() -> None:
    """A replay runs no Python code: an lr the step changes by hand would not change."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            opt.param_groups[0]["lr"] *= 0.5
            return loss.item()

        return step, list(model.parameters())

    assert_stays_eager(Twin(build), "changes an item of the closure opt", batch())


def test_an_lr_changed_outside_the_step_is_read_by_the_replay() -> None:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.Adam(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            return loss.item()

        step.optimizer = opt
        return step, list(model.parameters())

    twin = Twin(build)
    run_until_replaying(twin, batch())
    for group in twin.eager.optimizer.param_groups + twin.compiled.optimizer.param_groups:
        group["lr"] = 0.01
    run_until_replaying(twin, batch(seed=3), calls=2)
    twin.assert_same_state()


def test_a_compiled_function_called_inside_a_compiled_step_is_traced_with_it() -> None:
    """Regression: the inner function's own tracing used to switch the outer recorder
    off, so the outer replay held only what came before the call (no update at all)."""

    def build() -> tuple:
        w = nn.Parameter(np.random.default_rng(2).normal(size=(3, 2)))
        forward = minigrad.compile(lambda x: (x @ w).tanh())

        def step(x):
            w.grad = None
            loss = (forward(x) * 2.0).sum()
            loss.backward()
            sgd_([w], 0.1)

        return step, [w]

    twin = Twin(build)
    for seed in range(8):
        twin(batch(seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays == 6
    assert "in-place update of a (3, 2) Variable" in twin.compiled.tape()


# ---------------------------------------------------------------- 4. API


def test_compile_as_a_bare_decorator_keeps_the_name_and_replays() -> None:
    w = nn.Parameter(np.ones((3, 2)))

    @minigrad.compile
    def predict(x):
        return (x @ w).sum().item()

    assert isinstance(predict, minigrad.compiler.CompiledFunction)
    assert predict.__name__ == "predict"
    expected = (batch().data @ w.data).sum()
    for _ in range(3):
        assert predict(batch()) == expected
    assert predict.replays == 1


def test_compile_with_explain_true_prints_what_happens(capsys: pytest.CaptureFixture) -> None:
    step, _ = small_step()

    @minigrad.compile(explain=True)
    def train(x):
        return step(x)

    for _ in range(3):
        train(batch())
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("minigrad.compile(train): ") for line in lines)
    assert any("traced: replaying" in line for line in lines)


def test_compile_called_on_a_function_wraps_it() -> None:
    step, _ = small_step()
    compiled = minigrad.compile(step)
    assert compiled.__name__ == "step" and compiled.__wrapped__ is step
    assert functools.partial not in type(compiled).__mro__


def test_compile_of_a_partial_or_callable_object_explains_by_its_type_name() -> None:
    """Regression: explain() read self.__name__, which a partial does not give."""
    compiled = minigrad.compile(functools.partial(lambda x, y: (x * y).sum().item(), y=2.0))
    assert compiled(batch()) == (batch().data * 2.0).sum()
    assert compiled.explain().startswith("minigrad.compile(partial): 1 variant(s)")


def test_compile_of_a_non_function_raises_a_helpful_type_error() -> None:
    with pytest.raises(TypeError, match="needs a function to compile; got int"):
        minigrad.compile(3)


def test_tape_says_nothing_replays_before_tracing_then_lists_the_replay() -> None:
    step, _ = small_step()
    compiled = minigrad.compile(step)
    assert compiled.tape().startswith("(no replay yet")
    compiled(batch())
    assert compiled.tape().startswith("(no replay yet")
    compiled(batch())
    tape = compiled.tape()
    assert "MatMul" in tape and "NumPy into a buffer" in tape
    assert "in-place update of a (3, 2) Variable" in tape
    assert ".grad of a (3, 2) leaf" in tape


def test_more_variants_than_max_variants_stay_eager_and_say_so() -> None:
    twin = Twin(small_step, max_variants=2)
    for n in (2, 3, 4, 5, 4, 2):
        twin(batch(n))
    twin.assert_same_state()
    assert len(twin.compiled.variants) == 2
    assert "eager: 2 variants traced already, no more (the last new key: argument 0" \
        in twin.explain()


def test_explain_counts_variants_and_replays() -> None:
    twin = Twin(small_step)
    for _ in range(5):
        twin(batch())
    summary = twin.explain().splitlines()[0]
    assert summary.startswith("minigrad.compile(step): 1 variant(s), 3 replay(s)")
    assert "variant 1: replaying" in twin.explain()


def test_a_failed_call_does_not_leave_the_step_eager_for_good() -> None:
    """A call that raises (backward under no_grad) leaves the parameters' .grad in another
    state; the step traces again and replays, rather than giving up."""
    minigrad.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = minigrad.randn(8, 3), minigrad.randn(8, 1)

    @minigrad.compile
    def step(x):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(4):
        step(x)
    with minigrad.no_grad(), pytest.raises(RuntimeError):
        step(x)
    replays_before = step.replays
    for _ in range(8):
        step(x)
    assert step.replays > replays_before, step.explain()
    assert "eager:" not in step.explain()
