"""minigrad.optim: SGD and Adam against NumPy written out by hand, errors, and training.

Each optimizer is run for a few steps on a small objective whose gradient is known in
closed form; the same steps are written in NumPy straight from the update rules, and the
two trajectories must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad import Parameter, Variable, nn, optim

C = np.array([[1.0, 2.0, 0.5], [3.0, 0.25, 1.5]])
D = np.array([[0.5, -1.0, 2.0], [-0.3, 0.7, 0.0]])
START = np.array([[0.2, -0.4, 1.0], [0.8, -1.2, 0.1]])
START_VECTOR = np.array([1.0, -2.0])


def objective(p: Variable, q: Variable) -> Variable:
    """f = Σ C·p² + D·p + Σ q⁴ / 4: gradients 2C·p + D and q³ change at every step."""
    return (Variable(C) * p * p + Variable(D) * p).sum() + (q * q * q * q).sum() * 0.25


def gradients(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return 2 * C * p + D, q**3


def run(optimizer_class, steps: int, **settings) -> list[tuple[np.ndarray, np.ndarray]]:
    """minigrad's trajectory: the values of (p, q) after each step."""
    p, q = Parameter(START.copy()), Parameter(START_VECTOR.copy())
    optimizer = optimizer_class([p, q], **settings)
    trajectory = []
    for _ in range(steps):
        optimizer.zero_grad()
        objective(p, q).backward()
        optimizer.step()
        trajectory.append((p.data.copy(), q.data.copy()))
    return trajectory


def numpy_sgd(steps, lr, momentum=0.0, weight_decay=0.0):
    p, q = START.copy(), START_VECTOR.copy()
    velocity = [None, None]
    trajectory = []
    for _ in range(steps):
        grads = gradients(p, q)
        new = []
        for k, (value, g) in enumerate(zip((p, q), grads)):
            g = g + weight_decay * value
            if momentum:
                velocity[k] = g if velocity[k] is None else momentum * velocity[k] + g
                g = velocity[k]
            new.append(value - lr * g)
        p, q = new
        trajectory.append((p.copy(), q.copy()))
    return trajectory


def numpy_adam(steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    beta1, beta2 = betas
    values = [START.copy(), START_VECTOR.copy()]
    m = [np.zeros_like(v) for v in values]
    v = [np.zeros_like(v) for v in values]
    trajectory = []
    for t in range(1, steps + 1):
        grads = gradients(*values)
        for k in range(2):
            g = grads[k] + weight_decay * values[k]
            m[k] = beta1 * m[k] + (1 - beta1) * g
            v[k] = beta2 * v[k] + (1 - beta2) * g * g
            m_hat = m[k] / (1 - beta1**t)
            v_hat = v[k] / (1 - beta2**t)
            values[k] = values[k] - lr * m_hat / (np.sqrt(v_hat) + eps)
        trajectory.append((values[0].copy(), values[1].copy()))
    return trajectory


def assert_same_trajectory(got, expected):
    assert len(got) == len(expected)
    for step, ((p, q), (p_ref, q_ref)) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(p, p_ref, rtol=1e-12, atol=1e-14, err_msg=f"p, step {step}")
        np.testing.assert_allclose(q, q_ref, rtol=1e-12, atol=1e-14, err_msg=f"q, step {step}")


# =========================================================================== SGD


def test_sgd_plain_first_step_by_hand():
    p = Parameter(np.array([1.0, -2.0]))
    (p * p).sum().backward()  # gradient 2p = [2, -4]
    optim.SGD([p], lr=0.1).step()
    np.testing.assert_allclose(p.data, [0.8, -1.6], rtol=1e-15)


def test_sgd_momentum_first_step_uses_the_gradient_itself():
    """v = g at the first step (no dampening of the first gradient, as in PyTorch)."""
    p = Parameter(np.array([1.0, -2.0]))
    optimizer = optim.SGD([p], lr=0.1, momentum=0.9)
    (p * p).sum().backward()
    optimizer.step()
    np.testing.assert_allclose(p.data, [0.8, -1.6], rtol=1e-15)
    np.testing.assert_allclose(optimizer.state[0]["momentum_buffer"], [2.0, -4.0], rtol=1e-15)
    p.grad = None
    (p * p).sum().backward()  # g = [1.6, -3.2]; v = 0.9 * [2, -4] + g = [3.4, -6.8]
    optimizer.step()
    np.testing.assert_allclose(optimizer.state[0]["momentum_buffer"], [3.4, -6.8], rtol=1e-14)
    np.testing.assert_allclose(p.data, [0.8 - 0.34, -1.6 + 0.68], rtol=1e-14)


@pytest.mark.parametrize(
    "settings",
    [
        {"lr": 0.1},
        {"lr": 0.05, "momentum": 0.9},
        {"lr": 0.1, "weight_decay": 0.2},
        {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.1},
    ],
    ids=["plain", "momentum", "weight_decay", "momentum+weight_decay"],
)
def test_sgd_matches_numpy_over_three_steps(settings):
    assert_same_trajectory(run(optim.SGD, 3, **settings), numpy_sgd(3, **settings))


def test_sgd_weight_decay_with_zero_gradient_shrinks_the_weights():
    p = Parameter(np.array([2.0, -4.0]))
    p.grad = Variable(np.zeros(2))
    optim.SGD([p], lr=0.5, weight_decay=0.1).step()
    np.testing.assert_allclose(p.data, [2.0 * 0.95, -4.0 * 0.95], rtol=1e-15)


def test_sgd_default_learning_rate_is_pytorchs():
    assert optim.SGD([Parameter(np.zeros(1))]).defaults["lr"] == 1e-3


# =========================================================================== Adam


def test_adam_first_step_moves_each_weight_by_about_lr():
    """With bias correction, m̂ = g and v̂ = g² at step 1: each weight moves by lr·sign(g)."""
    p = Parameter(np.array([1.0, -2.0, 0.5]))
    (p * p * Variable(np.array([1.0, 100.0, 0.01]))).sum().backward()
    optim.Adam([p], lr=0.1).step()
    np.testing.assert_allclose(p.data, [0.9, -1.9, 0.4], atol=1e-6)  # eps/|g| is small


@pytest.mark.parametrize(
    "settings",
    [
        {"lr": 0.1},
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6},
        {"lr": 0.05, "weight_decay": 0.3},
    ],
    ids=["defaults", "betas+eps", "weight_decay"],
)
def test_adam_matches_numpy_over_five_steps(settings):
    assert_same_trajectory(run(optim.Adam, 5, **settings), numpy_adam(5, **settings))


def test_adam_state_counts_steps():
    p = Parameter(np.array([1.0]))
    optimizer = optim.Adam([p])
    for _ in range(3):
        optimizer.zero_grad()
        (p * p).sum().backward()
        optimizer.step()
    assert optimizer.state[0]["step"] == 3


# =========================================================================== common behaviour


@pytest.mark.parametrize(
    ("optimizer_class", "settings"),
    [(optim.SGD, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}), (optim.Adam, {"lr": 0.1})],
    ids=["SGD", "Adam"],
)
class TestCommon:
    def test_a_parameter_without_grad_is_left_unchanged(self, optimizer_class, settings):
        used, unused = Parameter(np.array([1.0, 2.0])), Parameter(np.array([3.0, 4.0]))
        optimizer = optimizer_class([used, unused], **settings)
        for _ in range(2):
            optimizer.zero_grad()
            (used * used).sum().backward()
            optimizer.step()
        assert unused.grad is None
        np.testing.assert_array_equal(unused.data, [3.0, 4.0])
        assert not np.allclose(used.data, [1.0, 2.0])
        assert 1 not in optimizer.state

    def test_updates_in_place(self, optimizer_class, settings):
        p = Parameter(np.array([1.0, -2.0]))
        array, version = p._data, p._version
        optimizer = optimizer_class([p], **settings)
        (p * p).sum().backward()
        optimizer.step()
        assert p._data is array  # same memory
        assert p._version > version
        assert p.is_leaf and p.requires_grad and p.grad_fn is None
        assert isinstance(p, Parameter)
        # and p is still usable as a leaf of the next graph
        p.grad = None
        (p * 3).sum().backward()
        np.testing.assert_array_equal(p.grad.data, [3.0, 3.0])

    def test_zero_grad(self, optimizer_class, settings):
        p, q = Parameter(np.array([1.0, 2.0])), Parameter(np.array([3.0]))
        optimizer = optimizer_class([p, q], **settings)
        (p * p).sum().backward()
        optimizer.zero_grad(set_to_none=False)
        np.testing.assert_array_equal(p.grad.data, [0.0, 0.0])
        assert q.grad is None  # no gradient to zero
        (p * p).sum().backward()  # accumulates onto zeros: only this backward's gradient
        np.testing.assert_array_equal(p.grad.data, [2.0, 4.0])
        optimizer.zero_grad()
        assert p.grad is None and q.grad is None

    def test_takes_a_generator_of_parameters(self, optimizer_class, settings):
        model = nn.Linear(2, 2)
        optimizer = optimizer_class(model.parameters(), **settings)
        assert optimizer.params == [model.weight, model.bias]


def test_zero_grad_clears_non_finite_gradients():
    p = Parameter(np.array([1.0, 2.0, 3.0]))
    p.grad = Variable(np.array([np.inf, np.nan, 1.0]))
    with np.errstate(invalid="ignore"):
        optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad.data, [0.0, 0.0, 0.0])


# =========================================================================== errors


def a_param() -> Parameter:
    return Parameter(np.zeros(2))


@pytest.mark.parametrize(
    ("make", "error", "phrases"),
    [
        (lambda: optim.SGD([a_param()], lr=-0.1), ValueError, ["lr", ">= 0", "-0.1"]),
        (lambda: optim.SGD([a_param()], lr="0.1"), TypeError, ["lr", "'0.1'"]),
        (lambda: optim.SGD([a_param()], momentum=-1), ValueError, ["momentum", "-1"]),
        (lambda: optim.SGD([a_param()], weight_decay=-1), ValueError, ["weight_decay", "-1"]),
        (lambda: optim.Adam([a_param()], lr=-1.0), ValueError, ["lr", "-1.0"]),
        (lambda: optim.Adam([a_param()], eps=-1e-8), ValueError, ["eps", "-1e-08"]),
        (lambda: optim.Adam([a_param()], weight_decay=-1), ValueError, ["weight_decay"]),
        (lambda: optim.Adam([a_param()], betas=(1.0, 0.9)), ValueError, ["betas[0]", "[0, 1)"]),
        (lambda: optim.Adam([a_param()], betas=(0.9, 1.5)), ValueError, ["betas[1]", "1.5"]),
        (lambda: optim.Adam([a_param()], betas=(-0.1, 0.9)), ValueError, ["betas[0]", "-0.1"]),
        (lambda: optim.Adam([a_param()], betas=0.9), TypeError, ["betas", "pair", "0.9"]),
        (lambda: optim.Adam([a_param()], betas=(0.9,)), ValueError, ["betas", "pair"]),
        (lambda: optim.SGD(a_param()), TypeError, ["single Variable", "[w]"]),
        (lambda: optim.Adam(a_param()), TypeError, ["single Variable", "[w]"]),
        (lambda: optim.SGD([]), ValueError, ["empty parameter list", "parameters()"]),
        (lambda: optim.Adam(iter([])), ValueError, ["empty parameter list"]),
        (
            lambda: optim.SGD([a_param(), a_param() * 2]),
            ValueError,
            ["parameter 1", "leaf", "non-leaf"],
        ),
        (
            lambda: optim.SGD([Variable(np.zeros(2))]),
            ValueError,
            ["parameter 0", "requires_grad=False"],
        ),
        (lambda: optim.Adam([np.zeros(2)]), TypeError, ["parameter 0", "ndarray"]),
    ],
    ids=[
        "sgd-negative-lr",
        "sgd-str-lr",
        "sgd-negative-momentum",
        "sgd-negative-weight-decay",
        "adam-negative-lr",
        "adam-negative-eps",
        "adam-negative-weight-decay",
        "adam-beta1-one",
        "adam-beta2-above-one",
        "adam-beta1-negative",
        "adam-betas-not-a-pair",
        "adam-betas-too-short",
        "sgd-single-variable",
        "adam-single-variable",
        "sgd-empty-list",
        "adam-empty-generator",
        "non-leaf",
        "no-requires-grad",
        "ndarray",
    ],
)
def test_bad_arguments(make, error, phrases):
    with pytest.raises(error) as info:
        make()
    message = str(info.value)
    for phrase in phrases:
        assert phrase in message, f"{phrase!r} not in {message!r}"


def test_base_optimizer_step_is_abstract():
    class Lazy(optim.Optimizer):
        pass

    param = a_param()
    param.grad = Variable(np.ones_like(param.data))
    with pytest.raises(NotImplementedError, match="Lazy must implement update"):
        Lazy([param], {}).step()


def test_repr_shows_the_settings():
    text = repr(optim.SGD([a_param(), a_param()], lr=0.5, momentum=0.9))
    assert text == (
        "SGD(2 parameters, lr=0.5, momentum=0.9, dampening=0.0, weight_decay=0.0, "
        "nesterov=False, maximize=False)"
    )


# =========================================================================== training


def toy_dataset() -> tuple[Variable, np.ndarray]:
    """64 fixed 2-D points, two classes split by a circle (not linearly separable)."""
    rng = np.random.default_rng(0)
    points = rng.uniform(-1, 1, size=(64, 2))
    labels = (np.hypot(points[:, 0], points[:, 1]) < 0.7).astype(np.int64)
    return Variable(points), labels


@pytest.mark.parametrize(
    ("optimizer_class", "settings", "steps", "threshold"),
    [
        (optim.SGD, {"lr": 0.5, "momentum": 0.9}, 300, 0.15),
        (optim.Adam, {"lr": 0.05}, 200, 0.15),
    ],
    ids=["SGD", "Adam"],
)
def test_mlp_learns_a_toy_dataset(optimizer_class, settings, steps, threshold):
    x, labels = toy_dataset()
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    optimizer = optimizer_class(model.parameters(), **settings)
    loss_fn = nn.CrossEntropyLoss()
    first = loss_fn(model(x), labels).item()
    assert first > 0.5  # about log 2 at the start
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), labels)
        loss.backward()
        optimizer.step()
    final = loss_fn(model(x), labels).item()
    assert final < threshold
    accuracy = (model(x).data.argmax(axis=1) == labels).mean()
    assert accuracy > 0.95


def test_mlp_regression_with_mse_and_sgd():
    rng = np.random.default_rng(1)
    x = Variable(rng.uniform(-2, 2, size=(32, 1)))
    target = Variable(np.sin(x.data))
    mg.manual_seed(1)
    model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.MSELoss()
    first = loss_fn(model(x), target).item()
    for _ in range(300):
        optimizer.zero_grad()
        loss_fn(model(x), target).backward()
        optimizer.step()
    final = loss_fn(model(x), target).item()
    assert final < 0.01
    assert final < 0.05 * first
