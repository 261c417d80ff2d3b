"""A CNN training step (conv, batch norm, max-pool, dropout2d) under minigrad.compile:
it replays, and every step equals the eager step (losses, parameters, running
statistics), as for the MLP steps of tests/test_compile.py."""

from __future__ import annotations

import numpy as np

import minigrad
from minigrad import nn, optim


def _model() -> nn.Module:
    minigrad.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Dropout2d(0.25),
        nn.Conv2d(4, 6, 3, stride=2, padding=1), nn.GroupNorm(2, 6), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3),
    ).double()


def _train(compiled: bool) -> tuple[list[float], list[np.ndarray], object]:
    model = _model()
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    def step(x, y):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    run = minigrad.compile(step) if compiled else step
    rng = np.random.default_rng(1)
    minigrad.manual_seed(1)  # the same dropout masks in both runs
    losses = []
    for _ in range(6):
        x = minigrad.tensor(rng.standard_normal((8, 1, 8, 8)))
        y = minigrad.tensor(rng.integers(0, 3, 8))
        losses.append(run(x, y).item())
    state = [value.detach().numpy().copy() for value in model.state_dict().values()]
    return losses, state, run


def test_a_cnn_step_replays_and_equals_eager() -> None:
    eager_losses, eager_state, _ = _train(compiled=False)
    losses, state, compiled = _train(compiled=True)
    assert "replay" in compiled.explain()
    assert "eagerly" not in compiled.explain()
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    for got, expected in zip(state, eager_state):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
