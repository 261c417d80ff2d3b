"""minigrad.compile reads the code the step calls, not only the step's own (called.py).

Each case was silently wrong when only the step's bytecode was read: Python state changed
between calls, or changed by a function the step calls. Each now traces again or stays
eager, naming where, and every call equals eager bit for bit (tests/test_compile.py's Twin
runs both and compares).
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from test_compile import Twin, assert_stays_eager, batch

import minigrad
from minigrad import nn, optim
from minigrad.compiler.compiled import CompileFallbackWarning

warnings.simplefilter("ignore", CompileFallbackWarning)

TEMPERATURE = 2.0  # read inside a Module's forward, changed between calls below


class Scaled(nn.Module):
    """A Linear whose output is divided by the module-level TEMPERATURE."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        return self.linear(x) / TEMPERATURE


class CountingNorm(nn.Module):
    """A hand-written normalisation that counts its batches in Python, as BatchNorm's
    num_batches_tracked does."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.batches = 0

    def forward(self, x):
        self.batches += 1
        return self.linear(x)


def _sgd_world(model_of, worlds: list):
    """build() for a Twin: `model_of()` trained by SGD on the sum of tanh; each built world
    (model, optimizer, extras) is appended to `worlds` so a test can change both."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = model_of()
        opt = optim.SGD(model.parameters(), lr=0.1)
        world = {"model": model, "cfg": {"scale": 1.0}, "rng": random.Random(7)}
        worlds.append(world)

        def step(x):
            opt.zero_grad()
            loss = (model(x).tanh() * world["cfg"]["scale"]).sum()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    return build


def test_a_config_item_changed_between_calls_traces_again() -> None:
    worlds: list = []
    twin = Twin(_sgd_world(lambda: nn.Linear(3, 2), worlds))
    for call in range(8):
        if call == 4:
            for world in worlds:
                world["cfg"]["scale"] = 10.0
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays >= 5, twin.explain()
    assert "['scale']: a new value, checked by a traced eager run" in twin.explain()


def test_a_global_read_inside_forward_changed_between_calls_traces_again() -> None:
    global TEMPERATURE
    worlds: list = []
    twin = Twin(_sgd_world(Scaled, worlds))
    try:
        for call in range(8):
            if call == 4:
                TEMPERATURE = 5.0
            twin(batch())
    finally:
        TEMPERATURE = 2.0
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()
    assert "the global TEMPERATURE read by forward" in twin.explain()


def test_a_submodule_replaced_between_calls_traces_again() -> None:
    worlds: list = []
    twin = Twin(_sgd_world(lambda: nn.Sequential(nn.Linear(3, 2), nn.ReLU()), worlds))
    for call in range(8):
        if call == 4:
            for world in worlds:
                setattr(world["model"], "1", nn.Tanh())  # model[1] = ... in PyTorch
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()
    assert "submodules['1'] names another object now (a Tanh)" in twin.explain()


def test_a_python_counter_in_forward_is_repeated_by_the_replay() -> None:
    """BatchNorm's num_batches_tracked in a hand-written module: `self.batches += 1` in
    forward, read nowhere else; the replay adds 1 per call of forward."""
    worlds: list = []
    twin = Twin(_sgd_world(CountingNorm, worlds))
    for _ in range(6):
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays == 4, twin.explain()
    assert [world["model"].batches for world in worlds] == [6, 6]
    assert "line 48 of forward (self.batches)" in twin.explain()


class ReadCounter(CountingNorm):
    """The same counter, read by forward to warm up: Python branches on it."""

    def forward(self, x):
        self.batches += 1
        scale = 0.5 if self.batches < 3 else 1.0
        return self.linear(x) * scale


def test_a_counter_that_code_reads_keeps_the_step_eager_and_counting() -> None:
    worlds: list = []
    twin = Twin(_sgd_world(ReadCounter, worlds))
    assert_stays_eager(twin, "sets the attribute .batches of the argument self", batch(),
                       calls=6)
    assert [world["model"].batches for world in worlds] == [6, 6]


def test_random_numbers_in_a_helper_keep_it_eager() -> None:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)
        rng = random.Random(3)

        def augment(x):
            return x * (1.0 + 0.1 * rng.random())

        def step(x):
            opt.zero_grad()
            loss = model(augment(x)).tanh().sum()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    assert_stays_eager(Twin(build), "rng.random(), which gives a new value on every call",
                       batch(), calls=6)


def test_manual_seed_in_the_step_replays_seeding_again_with_dropout_as_eager() -> None:
    """minigrad.manual_seed is one opaque call in the trace: each replay seeds again at the
    same point, so every call draws the masks the eager step draws."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            minigrad.manual_seed(123)
            opt.zero_grad()
            loss = model(x).sum()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for _ in range(6):
        twin(batch())  # the Twin compares each call's loss: the same masks
    twin.assert_same_state()
    assert twin.compiled.replays == 4, twin.explain()
    assert "_reseed(), called as it is" in twin.compiled.tape()


def test_a_clean_step_calling_clean_code_still_replays() -> None:
    worlds: list = []
    twin = Twin(_sgd_world(lambda: nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)),
                           worlds))
    for _ in range(8):
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays == 6, twin.explain()
    assert np.isfinite(twin.params[0].data).all()


def test_a_step_returning_a_nested_dict_replays() -> None:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            out = model(x)
            loss = out.tanh().sum()
            loss.backward()
            opt.step()
            return {"loss": loss.item(), "parts": {"out": out.detach(), "first": [loss.item()]}}

        return step, list(model.parameters())

    twin = Twin(build)
    results = [twin(batch()) for _ in range(5)]
    twin.assert_same_state()
    assert twin.compiled.replays == 3, twin.explain()
    assert set(results[-1]) == {"loss", "parts"} and set(results[-1]["parts"]) == {"out", "first"}


# Found by a reviewer writing benchmarks/outside_loops.py: each was silently wrong.

LOSS_WEIGHTS = [1.0, 0.5]  # a module-level list, an item changed between calls


def _weighted_world(read_weights, worlds: list):
    """build() for a Twin whose step weighs two losses by read_weights(world)."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)
        world = {"weights": [1.0, 0.5], "cfg": {"scale": 1.0}}
        worlds.append(world)

        def loss_of(out):  # a helper that closes over the world's cfg
            cfg = world["cfg"]

            def scaled(value):
                return value * cfg["scale"]

            return scaled(out.tanh().sum())

        def step(x):
            opt.zero_grad()
            out = model(x)
            weights = read_weights(world)
            loss = weights[0] * loss_of(out) + weights[1] * (out**2).mean()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    return build


@pytest.mark.parametrize("where", ["closure list", "global list", "helper's closure"])
def test_an_item_changed_between_calls_in_a_list_or_a_helpers_closure_traces_again(where):
    global LOSS_WEIGHTS
    worlds: list = []
    if where == "closure list":
        twin = Twin(_weighted_world(lambda world: world["weights"], worlds))
    else:
        twin = Twin(_weighted_world(lambda world: LOSS_WEIGHTS, worlds))
    try:
        for call in range(8):
            if call == 4:
                for world in worlds:
                    if where == "closure list":
                        world["weights"][1] = 0.25
                    elif where == "global list":
                        LOSS_WEIGHTS[1] = 0.25
                    else:
                        world["cfg"]["scale"] = 3.0
            twin(batch())
    finally:
        LOSS_WEIGHTS = [1.0, 0.5]
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()
    assert "changed: " in twin.explain() or "a new value, checked" in twin.explain()


def test_a_dict_on_a_module_read_in_forward_changed_between_calls_traces_again() -> None:
    class Options(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(3, 2)
            self.options = {"scale": 1.0, "square": False}

        def forward(self, x):
            out = self.linear(x) * self.options["scale"]
            return out**2 if self.options["square"] else out

    worlds: list = []
    twin = Twin(_sgd_world(Options, worlds))
    for call in range(10):
        for world in worlds:
            if call == 3:
                world["model"].options["scale"] = 0.5
            if call == 6:
                world["model"].options["square"] = True
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()
    assert ".options['square'] changed: 'False'" in twin.explain() or \
        ".options['square'] changed: False" in twin.explain()


def test_a_kept_grad_keeps_eagers_strides_so_its_norm_is_the_same() -> None:
    """A Linear weight's .grad is x.T @ g's transpose (Fortran order): a kept one keeps
    those strides, so .norm() sums in the same order as eager's."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            return model[0].weight.grad

        return step, list(model.parameters())

    twin = Twin(build)
    eager_grads, compiled_grads = [], []
    for seed in range(8):
        x = batch(seed=seed)
        eager_grads.append(twin.eager(x))
        compiled_grads.append(twin.compiled(x))
    assert twin.compiled.replays >= 5
    for eager, compiled in zip(eager_grads, compiled_grads):
        assert eager.numpy().strides == compiled.numpy().strides
        assert eager.norm().item() == compiled.norm().item()
