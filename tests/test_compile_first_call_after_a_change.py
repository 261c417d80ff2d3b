"""The first call after a failed guard may take a path of its own: found by a reviewer who
did not write the compiler (issue 31), each bit for bit against eager.

A cache filled on first use (functools.cached_property, functools.lru_cache, a buffer a
forward registers when it is missing) does work on the first call that later calls skip.
The compiler traces two calls after a change, as it does at the start, and builds the
replay only from two that agree; a Module setter called on every call (register_buffer in
forward) is a side effect and keeps the step eager.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

import minigrad as torch
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.compiler.compiled import CompileFallbackWarning

warnings.simplefilter("ignore", CompileFallbackWarning)


class CachedFeatures(nn.Module):
    """A random projection made on the first forward, kept by functools.cached_property."""

    @functools.cached_property
    def projection(self):
        return torch.randn(4, 16)

    def forward(self, x):
        return torch.cos(x.mm(self.projection))


class LazyBufferFeatures(nn.Module):
    """The same, kept in a buffer registered when missing (a common lazy idiom)."""

    def forward(self, x):
        if not hasattr(self, "projection"):
            self.register_buffer("projection", torch.randn(4, 16))
        return torch.cos(x.mm(self.projection))


def _mse_step(model: nn.Module, opt: object, compiled: bool) -> object:
    """The training step every case here takes: MSE, backward, step, the loss as a float;
    compiled or as written."""

    def train_step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return torch.compile(train_step) if compiled else train_step


def _swapped_submodule_losses(features: type, compiled: bool) -> tuple[list, object]:
    torch.manual_seed(0)
    model = nn.Sequential(features(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    step = _mse_step(model, opt, compiled)
    losses = []
    for call in range(16):
        if call == 10:
            model[0] = features()  # a fresh submodule: its projection not made yet
        losses.append(step(x, y))
    losses.append(np.array(model[1].weight.detach().numpy()))
    return losses, step


def _assert_same(eager: list, compiled: list) -> None:
    assert len(eager) == len(compiled)
    for number, (a, b) in enumerate(zip(eager, compiled)):
        assert np.array_equal(a, b), f"value {number}: eager {a}, compiled {b}"


def test_a_cached_property_filled_on_the_first_call_after_a_swap() -> None:
    eager, _ = _swapped_submodule_losses(CachedFeatures, False)
    compiled, step = _swapped_submodule_losses(CachedFeatures, True)
    _assert_same(eager, compiled)
    assert step.replays >= 8, step.explain()


def test_a_buffer_registered_when_missing_after_a_swap() -> None:
    eager, _ = _swapped_submodule_losses(LazyBufferFeatures, False)
    compiled, step = _swapped_submodule_losses(LazyBufferFeatures, True)
    _assert_same(eager, compiled)


def _lru_anchor_losses(compiled: bool) -> tuple[list, object]:
    cfg = {"round": 0}
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)

    @functools.cache
    def anchor(round_number):  # the weights when the round began, made on first use
        return model.weight.detach() * 1.0

    def train_step(x, y):
        opt.zero_grad()
        penalty = ((model.weight - anchor(cfg["round"])) ** 2).sum()
        loss = F.mse_loss(model(x), y) + 0.5 * penalty
        loss.backward()
        opt.step()
        return loss.item()

    step = torch.compile(train_step) if compiled else train_step
    losses = []
    for call in range(16):
        if call == 10:
            cfg["round"] = 1
        losses.append(step(x, y))
    return losses, step


def test_an_lru_cache_filled_on_the_first_call_after_a_config_change() -> None:
    eager, _ = _lru_anchor_losses(False)
    compiled, step = _lru_anchor_losses(True)
    _assert_same(eager, compiled)
    assert step.replays >= 8, step.explain()


def test_register_buffer_on_every_call_keeps_the_step_eager() -> None:
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 8)
            self.l2 = nn.Linear(8, 1)

        def forward(self, x):
            h = torch.tanh(self.l1(x))
            self.register_buffer("last_activation", h.detach(), persistent=False)
            return self.l2(h)

    kept = {}
    for compiled in (False, True):
        torch.manual_seed(0)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        step = _mse_step(model, opt, compiled)
        activations = []
        for _ in range(6):
            step(x, y)
            activations.append(model.last_activation.numpy().copy())
        kept[compiled] = activations
    _assert_same(kept[False], kept[True])
    assert step.replays == 0
    assert "register_buffer" in step.explain()


def test_a_hook_on_a_leaf_the_step_makes_says_what_replays_instead() -> None:
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)

    def train_step(x, y):
        opt.zero_grad()
        delta = torch.zeros(8, 4, requires_grad=True)
        delta.register_hook(lambda g: g * 2.0)
        loss = F.mse_loss(model(x + delta), y)
        loss.backward()
        opt.step()
        return loss.item()

    step = torch.compile(train_step)
    for _ in range(4):
        step(x, y)
    assert "made with requires_grad=True" in step.explain()
    assert "h.register_hook(...)" in step.explain()


def test_an_argument_passed_by_keyword_after_by_position_is_said_so() -> None:
    def train_step(x, k):
        return (x * 2).sum().item() + k

    step = torch.compile(train_step)
    x = torch.randn(3)
    step(x, 3)
    step(x, k=3)
    assert "is passed as k now" in step.explain()
