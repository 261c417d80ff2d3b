"""minigrad.nn.utils: gradient clipping and parameter vectors, against PyTorch where it is
installed (the same numbers), and inside minigrad.compile (replayed, bit for bit)."""

from __future__ import annotations

import numpy as np
import pytest
from test_compile import Twin, batch

import minigrad
from minigrad import nn, optim
from minigrad.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)


def _grads(seed: int = 0) -> list[minigrad.Variable]:
    rng = np.random.default_rng(seed)
    params = [nn.Parameter(rng.normal(size=shape)) for shape in ((3, 4), (4,), (2, 2, 2))]
    for parameter in params:
        parameter.grad = minigrad.Variable(rng.normal(size=parameter.shape) * 3)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_pytorch(norm_type: float, max_norm: float) -> None:
    torch = pytest.importorskip("torch")
    params = _grads()
    torch_params = [torch.tensor(p.data, requires_grad=True) for p in params]
    for theirs, ours in zip(torch_params, params):
        theirs.grad = torch.tensor(ours.grad.data)
    expected = torch.nn.utils.clip_grad_norm_(torch_params, max_norm, norm_type)
    total = clip_grad_norm_(params, max_norm, norm_type)
    assert np.allclose(total.item(), expected.item(), rtol=1e-12)
    for theirs, ours in zip(torch_params, params):
        assert np.allclose(ours.grad.data, theirs.grad.numpy(), rtol=1e-12)


def test_clip_grad_value_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    params = _grads(1)
    torch_params = [torch.tensor(p.data, requires_grad=True) for p in params]
    for theirs, ours in zip(torch_params, params):
        theirs.grad = torch.tensor(ours.grad.data)
    torch.nn.utils.clip_grad_value_(torch_params, 0.7)
    clip_grad_value_(params, 0.7)
    for theirs, ours in zip(torch_params, params):
        assert np.array_equal(ours.grad.data, theirs.grad.numpy())


def test_clip_grad_norm_by_hand_and_its_errors() -> None:
    params = _grads(2)
    grads = [p.grad.data.copy() for p in params]
    total = np.sqrt(sum((g**2).sum() for g in grads))
    assert np.isclose(clip_grad_norm_(params, 1.0).item(), total)
    for parameter, grad in zip(params, grads):
        assert np.allclose(parameter.grad.data, grad / (total + 1e-6))
    assert clip_grad_norm_([nn.Parameter(np.ones(2))], 1.0).item() == 0.0  # no .grad
    with pytest.raises(TypeError, match="iterable of Variables"):
        clip_grad_norm_(3, 1.0)
    with pytest.raises(TypeError, match="numeric Variables"):
        clip_grad_norm_([minigrad.Variable("text")], 1.0)
    with pytest.raises(ValueError, match="max_norm must be a number >= 0"):
        clip_grad_norm_(params, -1.0)
    params[0].grad = minigrad.Variable(np.full((3, 4), np.inf))
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(params, 1.0, error_if_nonfinite=True)


def test_parameters_to_vector_and_back() -> None:
    params = _grads(3)
    vector = parameters_to_vector(params)
    assert vector.shape == (12 + 4 + 8,)
    vector_to_parameters(vector * 2, params)
    assert np.array_equal(parameters_to_vector(params).data, vector.data * 2)
    with pytest.raises(ValueError, match="must have shape \\(24,\\)"):
        vector_to_parameters(vector[:5], params)


def test_clip_grad_norm_inside_a_compiled_step_replays() -> None:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
        opt = optim.SGD(model.parameters(), lr=0.5)

        def step(x):
            opt.zero_grad()
            loss = (model(x) ** 2).sum()
            loss.backward()
            minigrad.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for seed in range(6):
        twin(batch(seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()
