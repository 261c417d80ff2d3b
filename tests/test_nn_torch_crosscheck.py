"""minigrad.nn and minigrad.optim against torch.nn and torch.optim (float64, CPU).

Same initial weights, same inputs: the same values, gradients and optimizer trajectories,
and the same initialisation formulas. Skipped when torch is not installed; torch is an
optional dependency of the course.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import Parameter, Variable, nn, optim
from minigrad.nn import init

torch = pytest.importorskip("torch")

RTOL = 1e-12
ATOL = 1e-14


def to_torch(array: np.ndarray, requires_grad: bool = False):
    return torch.tensor(np.asarray(array), dtype=torch.float64, requires_grad=requires_grad)


def assert_close(mine, theirs, rtol: float = RTOL, atol: float = ATOL) -> None:
    mine_array = mine.data if isinstance(mine, Variable) else np.asarray(mine)
    np.testing.assert_allclose(mine_array, theirs.detach().numpy(), rtol=rtol, atol=atol)


def twin_linears(n_in: int, n_out: int, bias: bool, seed: int = 0):
    """A minigrad Linear and a float64 torch Linear holding the same weights."""
    mg.manual_seed(seed)
    mine = nn.Linear(n_in, n_out, bias=bias)
    theirs = torch.nn.Linear(n_in, n_out, bias=bias, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(mine.weight.data))
        if bias:
            theirs.bias.copy_(torch.from_numpy(mine.bias.data))
    return mine, theirs


# =========================================================================== layers and losses


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("batch_shape", [(5,), (2, 3), ()], ids=["2d", "3d", "1d"])
def test_linear_values_and_gradients(bias, batch_shape):
    mine, theirs = twin_linears(3, 4, bias)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((*batch_shape, 3))
    upstream = rng.standard_normal((*batch_shape, 4))
    x_mine, x_theirs = Variable(x.copy(), requires_grad=True), to_torch(x, requires_grad=True)

    out_mine, out_theirs = mine(x_mine), theirs(x_theirs)
    assert_close(out_mine, out_theirs)
    (out_mine * Variable(upstream)).sum().backward()
    (out_theirs * to_torch(upstream)).sum().backward()
    assert_close(mine.weight.grad, theirs.weight.grad)
    assert_close(x_mine.grad, x_theirs.grad)
    if bias:
        assert_close(mine.bias.grad, theirs.bias.grad)


def test_mlp_values_and_gradients():
    first, first_t = twin_linears(2, 5, True, seed=1)
    second, second_t = twin_linears(5, 3, True, seed=2)
    mine = nn.Sequential(first, nn.Tanh(), second, nn.Sigmoid())
    theirs = torch.nn.Sequential(first_t, torch.nn.Tanh(), second_t, torch.nn.Sigmoid())
    x = np.random.default_rng(3).standard_normal((4, 2))
    mine(Variable(x)).sum().backward()
    theirs(to_torch(x)).sum().backward()
    assert_close(mine(Variable(x)), theirs(to_torch(x)))
    mine_grads = dict(mine.named_parameters())
    theirs_grads = dict(theirs.named_parameters())
    assert list(mine_grads) == list(theirs_grads)
    for name, p in mine_grads.items():
        assert_close(p.grad, theirs_grads[name].grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    rng = np.random.default_rng(4)
    prediction, target = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    p_mine = Variable(prediction.copy(), requires_grad=True)
    t_mine = Variable(target.copy(), requires_grad=True)
    p_theirs = to_torch(prediction, requires_grad=True)
    t_theirs = to_torch(target, requires_grad=True)
    loss_mine = nn.MSELoss(reduction=reduction)(p_mine, t_mine)
    loss_theirs = torch.nn.MSELoss(reduction=reduction)(p_theirs, t_theirs)
    assert_close(loss_mine, loss_theirs)
    upstream = rng.standard_normal(loss_mine.shape)
    (loss_mine * Variable(upstream)).sum().backward()
    (loss_theirs * to_torch(upstream)).sum().backward()
    assert_close(p_mine.grad, p_theirs.grad)
    assert_close(t_mine.grad, t_theirs.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_loss(reduction):
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((6, 4)) * 3
    labels = np.array([0, 3, 1, 1, 2, 3])
    l_mine = Variable(logits.copy(), requires_grad=True)
    l_theirs = to_torch(logits, requires_grad=True)
    loss_mine = nn.CrossEntropyLoss(reduction=reduction)(l_mine, labels)
    loss_theirs = torch.nn.CrossEntropyLoss(reduction=reduction)(l_theirs, torch.from_numpy(labels))
    assert_close(loss_mine, loss_theirs)
    upstream = rng.standard_normal(loss_mine.shape)
    (loss_mine * Variable(upstream)).sum().backward()
    (loss_theirs * to_torch(upstream)).sum().backward()
    assert_close(l_mine.grad, l_theirs.grad)


def test_repr_matches_torch():
    class Custom(nn.Module):
        def forward(self, x):
            return x

    class CustomT(torch.nn.Module):
        def forward(self, x):
            return x

    mine = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Tanh()), Custom())
    theirs = torch.nn.Sequential(
        torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Sequential(torch.nn.Tanh()), CustomT()
    )
    assert repr(mine) == repr(theirs).replace("CustomT", "Custom")
    assert repr(nn.Linear(3, 1, bias=False)) == repr(torch.nn.Linear(3, 1, bias=False))
    assert repr(nn.CrossEntropyLoss()) == repr(torch.nn.CrossEntropyLoss())


def test_named_parameters_and_state_dict_keys_match_torch():
    mine = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1, bias=False))
    theirs = torch.nn.Sequential(
        torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1, bias=False)
    )
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert list(mine.state_dict()) == list(theirs.state_dict())
    state = {name: Variable(value.numpy()) for name, value in theirs.state_dict().items()}
    mine.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal((2, 2))
    assert_close(mine(Variable(x)), theirs(torch.tensor(x, dtype=torch.float32)), rtol=1e-6)


# =========================================================================== optimizers

START_P = np.array([[0.2, -0.4, 1.0], [0.8, -1.2, 0.1]])
START_Q = np.array([1.0, -2.0])
C = np.array([[1.0, 2.0, 0.5], [3.0, 0.25, 1.5]])


def objective(p, q, lib):
    """Σ C·p² + Σ tanh(q)·q, written the same way for both libraries."""
    constant = Variable(C) if lib is mg else to_torch(C)
    return (constant * p * p).sum() + (q.tanh() * q).sum()


def trajectory_of(lib, optimizer_factory, steps: int = 5) -> list[list[np.ndarray]]:
    if lib is mg:
        params = [Parameter(START_P.copy()), Parameter(START_Q.copy())]
    else:
        params = [to_torch(START_P, requires_grad=True), to_torch(START_Q, requires_grad=True)]
    optimizer = optimizer_factory(params)
    values = []
    for _ in range(steps):
        optimizer.zero_grad()
        objective(*params, lib).backward()
        optimizer.step()
        values.append([np.array(p.detach().numpy() if lib is torch else p.data) for p in params])
    return values


@pytest.mark.parametrize(
    "settings",
    [
        {"lr": 0.1},
        {"lr": 0.05, "momentum": 0.9},
        {"lr": 0.1, "weight_decay": 0.05},
        {"lr": 0.05, "momentum": 0.7, "weight_decay": 0.1},
    ],
    ids=["plain", "momentum", "weight_decay", "momentum+weight_decay"],
)
def test_sgd_trajectory(settings):
    mine = trajectory_of(mg, lambda ps: optim.SGD(ps, **settings))
    theirs = trajectory_of(torch, lambda ps: torch.optim.SGD(ps, **settings))
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for k in range(2):
            np.testing.assert_allclose(a[k], b[k], rtol=RTOL, atol=ATOL, err_msg=f"step {step}")


@pytest.mark.parametrize(
    "settings",
    [
        {"lr": 0.1},
        {"lr": 0.02, "betas": (0.8, 0.95), "eps": 1e-6},
        {"lr": 0.05, "weight_decay": 0.2},
    ],
    ids=["defaults", "betas+eps", "weight_decay"],
)
def test_adam_trajectory(settings):
    mine = trajectory_of(mg, lambda ps: optim.Adam(ps, **settings))
    theirs = trajectory_of(torch, lambda ps: torch.optim.Adam(ps, **settings))
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for k in range(2):
            # torch divides by sqrt(bias correction) in a different order: rounding only
            np.testing.assert_allclose(a[k], b[k], rtol=1e-10, atol=1e-13, err_msg=f"step {step}")


def test_default_hyperparameters_match_torch():
    p = torch.zeros(1, requires_grad=True)
    q = Parameter(np.zeros(1))
    sgd, sgd_t = optim.SGD([q]), torch.optim.SGD([p])
    adam, adam_t = optim.Adam([q]), torch.optim.Adam([p])
    for key in ("lr", "momentum", "weight_decay"):
        assert sgd.defaults[key] == sgd_t.defaults[key], key
    for key in ("lr", "betas", "eps", "weight_decay"):
        assert adam.defaults[key] == adam_t.defaults[key], key


# =========================================================================== init

SHAPES = [(4, 3), (1, 7), (10, 1), (8, 3, 5, 5), (2, 6, 4), (3, 2, 2, 2, 2)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fan_in_and_fan_out(shape):
    assert init._calculate_fan_in_and_fan_out(mg.empty(*shape)) == (
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    )


@pytest.mark.parametrize("shape", [(5,), ()], ids=str)
def test_fan_error_type_matches_torch(shape):
    with pytest.raises(ValueError):
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError):
        init._calculate_fan_in_and_fan_out(mg.empty(shape))


@pytest.mark.parametrize(
    ("nonlinearity", "param"),
    [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None)]
    + [("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("conv2d", None)],
)
def test_calculate_gain(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(
        torch.nn.init.calculate_gain(nonlinearity, param), rel=1e-15
    )


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize(
    "settings",
    [
        {"a": math.sqrt(5)},
        {"a": 0.0, "mode": "fan_out", "nonlinearity": "relu"},
        {"mode": "fan_in", "nonlinearity": "tanh"},
        {"a": 0.1, "mode": "fan_out"},
    ],
    ids=["a=sqrt5", "fan_out-relu", "tanh", "leaky-fan_out"],
)
def test_kaiming_uniform_bound(monkeypatch, shape, settings):
    """Both libraries end kaiming_uniform_ with uniform(-bound, bound): record the bounds."""
    torch_bounds, mine_bounds = [], []
    real_uniform = torch.Tensor.uniform_

    def torch_recording(self, low=0.0, high=1.0, **kwargs):
        torch_bounds.append((low, high))
        return real_uniform(self, low, high, **kwargs)

    real_mine = init.uniform_

    def mine_recording(tensor, a=0.0, b=1.0):
        mine_bounds.append((a, b))
        return real_mine(tensor, a, b)

    monkeypatch.setattr(torch.Tensor, "uniform_", torch_recording)
    monkeypatch.setattr(init, "uniform_", mine_recording)
    theirs = torch.nn.init.kaiming_uniform_(torch.empty(shape, dtype=torch.float64), **settings)
    mine = init.kaiming_uniform_(mg.empty(*shape), **settings)
    assert len(torch_bounds) == len(mine_bounds) == 1
    (low_t, high_t), (low, high) = torch_bounds[0], mine_bounds[0]
    assert high == pytest.approx(high_t, rel=1e-14)
    assert low == pytest.approx(low_t, rel=1e-14)
    assert np.abs(mine.data).max() <= high
    assert theirs.abs().max().item() <= high


def test_linear_initialisation_range_matches_torch():
    """Not the same random numbers, but the same distribution: U(-1/√in, 1/√in)."""
    torch.manual_seed(0)
    mg.manual_seed(0)
    theirs = torch.nn.Linear(400, 300, dtype=torch.float64)
    mine = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for p_mine, p_theirs in ((mine.weight, theirs.weight), (mine.bias, theirs.bias)):
        assert np.abs(p_mine.data).max() <= bound
        assert p_theirs.abs().max().item() <= bound
    assert np.std(mine.weight.data) == pytest.approx(theirs.weight.std().item(), rel=0.01)
