"""minigrad.compile never gives a different answer from eager, silently.

The cases a first try on real training loops found wrong (issue 21): a NumPy scalar argument
keyed by id() (a new value in a reused id replayed the old constant), Python side effects
in the step (run on the traced calls only), an optimizer setting changed in plain Python
before step() (frozen at its traced value). Each now replays correctly or stays eager and
says why, and the first fallback warns once. Every test compares with eager bit for bit.
"""

from __future__ import annotations

import linecache
import random
import warnings

import numpy as np
import pytest
from test_compile import Twin, assert_stays_eager, batch

import minigrad
from minigrad import nn, optim
from minigrad.compiler.compiled import CompileFallbackWarning
from minigrad.compiler.side_effects import find
from minigrad.nn import functional as F

warnings.simplefilter("ignore", CompileFallbackWarning)  # asserted where it matters


def _linear_step(body):
    """build() for a Twin: a Linear(3, 2) trained by SGD with `body(model, opt, x, *rest)`."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, *rest):
            return body(model, opt, x, *rest)

        return step, list(model.parameters())

    return build


def test_a_numpy_scalar_argument_is_keyed_by_value_not_by_id() -> None:
    def body(model, opt, x, scale):
        opt.zero_grad()
        loss = (model(x).tanh() * float(scale)).sum()
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body), max_variants=20)
    for value in (1.0, 1.0, 1.0, 2.0, 3.0, 2.0, 0.5, 1.0):
        twin(batch(), np.float32(value))  # a new scalar each call: ids get reused
    twin.assert_same_state()
    assert twin.compiled.replays > 0, twin.explain()


def test_a_batch_as_a_list_a_tuple_or_a_dict_replays_with_its_own_values() -> None:
    def body(model, opt, x, pair):
        opt.zero_grad()
        inputs, targets = pair[0], pair[1]
        loss = ((model(inputs) - targets) ** 2).mean() + 0 * x.sum()
        loss.backward()
        opt.step()
        return loss.item()

    def as_dict(model, opt, x, named):
        return body(model, opt, x, [named["inputs"], named["targets"]])

    for container, function in ((list, body), (tuple, body), (dict, as_dict)):
        twin = Twin(_linear_step(function))
        for seed in range(6):
            inputs = batch(seed=seed)
            targets = minigrad.Variable(np.random.default_rng(seed + 9).normal(size=(5, 2)))
            if container is dict:
                twin(batch(), {"inputs": inputs, "targets": targets})
            else:
                twin(batch(), container([inputs, targets]))
        twin.assert_same_state()
        assert twin.compiled.replays >= 3, twin.explain()


COUNT = 0


def test_a_global_counter_in_the_step_is_repeated_by_the_replay() -> None:
    """`global COUNT; COUNT += 1`, read nowhere else: the replay adds 1 after its array
    work (writes.py), so the count is eager's."""
    global COUNT
    COUNT = 0

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            global COUNT
            COUNT += 1
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for _ in range(5):
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.replays == 3, twin.explain()
    assert COUNT == 10  # five eager calls and five compiled ones, each counted


def _build_with(effect: str):
    """build() for a Twin whose step has the side effect `effect` in its own code."""
    history: list = []

    class Tracker:
        calls = 0

    tracker = Tracker()

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step_with_history(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            history.append(loss.detach())
            return loss.item()

        def step_with_attribute(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            tracker.calls += 1
            return loss.item()

        def step_that_prints(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            print(end="")
            return loss.item()

        steps = {"history": step_with_history, "attribute": step_with_attribute,
                 "print": step_that_prints}
        return steps[effect], list(model.parameters())

    return build, history, tracker


def test_a_history_of_variables_keeps_it_eager_and_a_counter_is_repeated() -> None:
    """history.append(loss.detach()) keeps Variables a replay would not make: eager. A
    counter attribute (`tracker.calls += 1`) read nowhere else: the replay adds to it."""
    build, history, _ = _build_with("history")
    assert_stays_eager(Twin(build), "calls .append() on the closure history", batch())
    assert len(history) == 10
    build, _, tracker = _build_with("attribute")
    twin = Twin(build)
    for _ in range(5):
        twin(batch())
    assert twin.compiled.replays == 3, twin.explain()
    assert tracker.calls == 10


def test_an_lr_set_by_a_helper_before_step_is_not_frozen() -> None:
    """The step's own bytecode is clean (the change happens in a helper): the helper's
    code, read while the step is traced, shows it, naming the helper and its line."""

    def set_lr(opt, value):
        opt.param_groups[0]["lr"] = value

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)
        def step(x):
            set_lr(opt, 0.05)
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    assert_stays_eager(Twin(build), "changes an item of the argument opt: a Python side "
                       "effect", batch(), calls=6)
    twin = Twin(build)
    for _ in range(3):
        twin(batch())
    assert "in set_lr (test_compile_never_silently_wrong.py, line" in twin.explain()


def test_the_first_fallback_warns_once_and_names_the_reason() -> None:
    twin = Twin(_build_with("print")[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompileFallbackWarning)
        for _ in range(4):
            twin(batch())
    fallbacks = [w for w in caught if issubclass(w.category, CompileFallbackWarning)]
    assert len(fallbacks) == 1
    message = str(fallbacks[0].message)
    assert "runs eagerly from now on: line" in message and "prints" in message
    assert fallbacks[0].filename.endswith("test_compile.py")  # Twin calls the compiled step


def _plain(model, x):
    y = [x, x]
    y[0] = x * 2
    out = {}
    out["loss"] = y[0].sum()
    losses = []
    losses.append(out["loss"])
    model.zero_grad()
    out["loss"].backward()
    return losses


def test_side_effect_finder_leaves_local_containers_and_grad_alone() -> None:
    assert find(_plain) == []

    def clears(params):
        for p in params:
            p.grad = None

    assert find(clears) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(x):\n    global n\n    n = 1", "assigns the global n"),
        ("def f(x, log):\n    log.append(x)", "calls .append() on the argument log"),
        ("def f(x, d):\n    d['k'] = x", "changes an item of the argument d"),
        ("def f(x, d):\n    d['k'] += x", "changes an item of the argument d"),
        ("def f(x, m):\n    m.w += x", "sets the attribute .w of the argument m"),
        ("def f(x, o):\n    for g in o.groups:\n        g['lr'] *= 0.9",
         "changes an item of g (taken from outside)"),
    ],
)
def test_side_effect_finder_names_what_and_where(source: str, expected: str) -> None:
    scope: dict = {}
    exec(compile(source, "<test>", "exec"), scope)
    found = find(scope["f"])
    assert any(expected in text for text in found), found
    assert found[0].startswith("line ")


LOSS_WEIGHT = 1.0


def test_a_global_number_the_step_reads_is_guarded() -> None:
    """A number read from a global becomes a constant of the trace; changed after tracing,
    the guard on it makes the step trace again (it used to replay the old value)."""
    global LOSS_WEIGHT
    LOSS_WEIGHT = 1.0

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = LOSS_WEIGHT * model(x).tanh().sum()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for weight in (1.0, 1.0, 1.0, 1.0, 100.0, 100.0, 100.0, 100.0):
        LOSS_WEIGHT = weight
        twin(batch())
    twin.assert_same_state()
    # Passed into an elementwise operation as it is: read live, each new value checked once.
    assert "the global LOSS_WEIGHT: a new value, checked by a traced eager run" in twin.explain()
    assert twin.compiled.replays == 5, twin.explain()


def test_a_global_number_used_in_plain_python_is_a_constant_traced_again() -> None:
    """The same number also steers a branch: after the check shows another trace, its
    value is a constant of the trace again, guarded by value."""
    global LOSS_WEIGHT
    LOSS_WEIGHT = 1.0

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = LOSS_WEIGHT * model(x).tanh().sum()
            if LOSS_WEIGHT > 10:
                loss = loss + (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for weight in (1.0, 1.0, 1.0, 1.0, 100.0, 100.0, 100.0, 100.0, 2.0, 2.0, 2.0):
        LOSS_WEIGHT = weight
        twin(batch())
    twin.assert_same_state()
    assert "the global LOSS_WEIGHT changed and is used in plain Python" in twin.explain()
    assert "the global LOSS_WEIGHT changed: 100.0 -> 2.0" in twin.explain()


def test_a_closure_number_the_step_reads_is_guarded() -> None:
    setters = []  # one per copy of the step (eager and compiled)

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)
        factor = 2.0

        def step(x):
            opt.zero_grad()
            loss = factor * model(x).tanh().sum()
            loss.backward()
            opt.step()
            return loss.item()

        def set_factor(value):
            nonlocal factor
            factor = value

        setters.append(set_factor)
        return step, list(model.parameters())

    twin = Twin(build)
    for call in range(8):
        if call == 4:
            for set_factor in setters:
                set_factor(5.0)
        twin(batch())
    twin.assert_same_state()
    assert "factor of the enclosing function: a new value, checked" in twin.explain()
    assert twin.compiled.replays == 5, twin.explain()


def test_return_loss_replays_and_behaves_as_after_an_eager_step() -> None:
    """`return loss`, as torch.compile users write it: .item() works, and a second
    backward() raises the backward-twice error, on the replay as on the eager step."""

    def body(model, opt, x):
        opt.zero_grad()
        loss = ((model(x) - 1.0) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    twin = Twin(_linear_step(body))
    results = [twin(batch(seed=seed)) for seed in range(6)]
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()
    eager = twin.eager(batch(seed=7))
    replayed = twin.compiled(batch(seed=7))
    assert replayed.item() == eager.item() and replayed.requires_grad
    for loss in (eager, replayed):
        with pytest.raises(minigrad.core.errors.BackwardTwiceError):
            loss.backward()
    assert all(isinstance(result, minigrad.Variable) for result in results)


def test_returning_a_loss_never_backwarded_stays_eager_and_says_so() -> None:
    def body(model, opt, x):
        return model(x).sum()

    assert_stays_eager(Twin(_linear_step(body)), "never calls backward()", batch())


def _classifier(loss_of):
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, labels):
            opt.zero_grad()
            loss = loss_of(model(x), labels)
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    return build


def _labels(seed: int, high: int = 4) -> minigrad.Variable:
    return minigrad.Variable(np.random.default_rng(seed).integers(0, high, size=5))


@pytest.mark.parametrize(
    "loss_of",
    [nn.CrossEntropyLoss(), minigrad.nn.functional.cross_entropy],
    ids=["CrossEntropyLoss", "F.cross_entropy"],
)
def test_integer_labels_from_the_batch_replay(loss_of) -> None:
    twin = Twin(_classifier(loss_of))
    for seed in range(8):
        twin(batch(seed=seed), _labels(seed))
    twin.assert_same_state()
    assert twin.compiled.replays >= 5, twin.explain()


def test_labels_that_take_another_branch_trace_again_or_raise_as_eager() -> None:
    """A batch with an ignored label takes another Python branch in cross_entropy: the
    replay's check sends it to tracing. An out-of-range label raises as eager does."""
    ignore = nn.CrossEntropyLoss(ignore_index=2)
    twin = Twin(_classifier(ignore))
    for seed in range(4):
        twin(batch(seed=seed), minigrad.Variable(np.array([0, 1, 3, 0, 1])))
    assert twin.compiled.replays >= 1
    twin(batch(seed=9), minigrad.Variable(np.array([0, 2, 3, 2, 1])))  # two ignored
    twin.assert_same_state()
    assert "the class labels are in 0..3, none equal to ignore_index no longer holds" in (
        twin.explain()
    )
    for side in (twin.eager, twin.compiled):
        with pytest.raises(IndexError, match="Target 7 is out of bounds"):
            side(batch(), minigrad.Variable(np.array([0, 7, 3, 0, 1])))


def test_gradient_accumulation_over_micro_batches_replays() -> None:
    """Two backward() calls in one step add into the .grad the first one made (it used to
    say "call zero_grad() inside the step", which the step does)."""

    def body(model, opt, x):
        opt.zero_grad()
        for half in (x[:3], x[3:]):
            loss = ((model(half) - 1.0) ** 2).mean() / 2
            loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body))
    for seed in range(6):
        twin(batch(n=6, seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()


def test_gradients_onto_a_grad_from_before_the_step_replay() -> None:
    """No zero_grad: each call adds onto the .grad the last one left. The replay reads
    each parameter's .grad as it finds it (issue 31)."""

    def body(model, opt, x):
        loss = model(x).tanh().sum()  # no zero_grad: adds onto last call's .grad
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body))
    for seed in range(8):
        twin(batch(seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays >= 5, twin.explain()


def _dropout_run(compiled: bool) -> tuple:
    """Eight steps of a model with Dropout from the same seed, eager or compiled."""
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    run = minigrad.compile(step) if compiled else step
    losses = [run(batch(seed=seed)) for seed in range(8)]
    return losses, [p.data.copy() for p in model.parameters()], run


def test_dropout_replays_drawing_the_same_masks_as_eager() -> None:
    """The replay draws each mask from minigrad's generator, in the eager order."""
    eager_losses, eager_params, _ = _dropout_run(compiled=False)
    losses, params, compiled = _dropout_run(compiled=True)
    assert losses == eager_losses
    assert all(np.array_equal(a, b) for a, b in zip(params, eager_params))
    assert compiled.replays >= 4, compiled.explain()


def test_an_in_place_relu_replays() -> None:
    """ReLU(inplace=True) copies its input for backward; the copy is recorded now (it was
    an array "made fresh outside minigrad's operations")."""
    activation = nn.ReLU(inplace=True)

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 6), activation, nn.Linear(6, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for seed in range(6):
        twin(batch(seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays >= 3, twin.explain()


# ------------------------------------------------------------ float arguments, read live


def _weighted(weigh):
    """A step whose loss is scaled by `weigh(loss, weight)`, `weight` a float argument."""

    def body(model, opt, x, weight):
        opt.zero_grad()
        loss = weigh(model(x).tanh().sum(), weight)
        loss.backward()
        opt.step()
        return loss.item()

    return _linear_step(body)


def _epochs(twin: Twin, weights: list, steps: int = 4) -> None:
    for weight in weights:
        for seed in range(steps):
            twin(batch(seed=seed), weight)
    twin.assert_same_state()


def test_a_float_passed_per_epoch_replays_live_in_one_variant() -> None:
    twin = Twin(_weighted(lambda loss, weight: loss * weight))
    _epochs(twin, [0.1 * epoch for epoch in range(1, 9)])
    assert len(twin.compiled.variants) == 1, twin.explain()
    # Two traced calls, then each later epoch's first call checks its new value with a
    # traced eager run; the rest replay.
    assert twin.compiled.replays == 8 * 4 - 2 - 7, twin.explain()


def test_a_float_argument_on_a_float32_model_is_cast_as_numpy_casts_it() -> None:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2).to(minigrad.float32)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, weight):
            opt.zero_grad()
            loss = (model(x).tanh() * weight).sum()
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for weight in (0.1, 1 / 3, 2 / 7, 1e-8):
        for seed in range(4):
            twin(batch(seed=seed, dtype=np.float32), weight)
    twin.assert_same_state()
    assert twin.compiled.replays >= 8, twin.explain()


@pytest.mark.parametrize(
    "weigh",
    [
        lambda loss, weight: loss * min(weight, 0.25),  # the same object until it is not
        lambda loss, weight: loss * (2 * weight),  # a constant computed from it
        lambda loss, weight: loss * 2 if weight > 0.3 else loss,  # a branch on it
    ],
    ids=["min", "derived", "branch"],
)
def test_a_float_used_in_plain_python_is_keyed_by_value(weigh) -> None:
    twin = Twin(_weighted(weigh), max_variants=20)
    _epochs(twin, [0.1, 0.2, 0.3, 0.4, 0.5, 0.2])
    assert twin.compiled.replays > 0, twin.explain()


def test_the_same_float_object_twice_then_two_values() -> None:
    def body(model, opt, x, a, b):
        opt.zero_grad()
        loss = model(x).tanh().sum() * a + model(x).sum() * b
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body))
    same = 0.5
    for _ in range(4):
        twin(batch(), same, same)
    for value in (0.25, 0.75, 0.125):
        for _ in range(3):
            twin(batch(), same, value)
    twin.assert_same_state()
    assert "the same object as argument" in twin.explain()


def test_a_float_that_changes_on_every_call_falls_back_after_a_few_checks() -> None:
    twin = Twin(_weighted(lambda loss, weight: loss * weight))
    with pytest.warns(CompileFallbackWarning, match="a float argument changes on most calls"):
        for call in range(40):
            twin(batch(), 1.0 + call / 64)
    twin.assert_same_state()
    assert twin.compiled.variants  # eager, for good, with the reason
    assert "pass it in a Variable" in twin.explain()


def test_a_float_read_by_a_function_without_a_numpy_rule_is_checked_each_call() -> None:
    def body(model, opt, x, low):
        opt.zero_grad()
        out = model(x)
        loss = out.where(out > low, out * 0.5).sum()
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body), max_variants=20)
    _epochs(twin, [0.0, 0.0, 0.25, -0.5])
    assert twin.compiled.replays > 0, twin.explain()
    assert "which Compare reads as a constant, no longer holds" in twin.explain()


def test_a_float_used_by_a_library_backward_is_keyed_by_value() -> None:
    """x ** p: Pow's backward computes p - 1 in Python, a constant the check finds."""

    def body(model, opt, x, power):
        opt.zero_grad()
        loss = (model(x).sigmoid() ** power).sum()
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body), max_variants=20)
    _epochs(twin, [1.5, 1.5, 2.5, 0.5])
    assert twin.compiled.replays > 0, twin.explain()
    assert "a float argument is used in plain Python" in twin.explain()


def test_leaky_relu_replays_with_its_slope_live() -> None:
    def body(model, opt, x, slope):
        opt.zero_grad()
        loss = nn.functional.leaky_relu(model(x), slope).sum()
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body))
    _epochs(twin, [0.01, 0.01, 0.2, 0.1])
    assert len(twin.compiled.variants) == 1 and twin.compiled.replays >= 10, twin.explain()


def test_an_in_place_leaky_relu_module_replays() -> None:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.1, inplace=True), nn.Linear(4, 1))
        opt = optim.Adam(model.parameters(), lr=0.01)

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss

        return step, list(model.parameters())

    twin = Twin(build)
    for seed in range(8):
        twin(batch(seed=seed))
    twin.assert_same_state()
    assert twin.compiled.replays >= 4, twin.explain()


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            "scale = float(np.abs(out.data).max())\n    loss = (out / scale).sum()",
            ["reads .data", "line 4 of step: `scale = float(np.abs(out.data).max())`"],
        ),
        (
            "loss = out.sum()\n    if loss.item() > 0:\n        loss = loss * 2",
            [".item() reads a value in the middle", "line 5 of step: `if loss.item() > 0:`"],
        ),
        (
            "loss = (out * minigrad.Variable(np.full((5, 2), float(len(seen))))).sum()",
            ["event", "(Mul)", "line 4 of step", "a new one each call", "pass it in as an"],
        ),
        (
            "out.retain_grad()\n    loss = out.sum()",
            ["retain_grad()", "torch.autograd.grad(loss, [y]", "line 6 of step"],
        ),
        (
            "loss = out.sum() * random.random()",
            ["line 4 of step calls random.random()", "pass the value in as an argument"],
        ),
    ],
    ids=["data", "item", "numpy", "hook", "random"],
)
def test_explain_names_the_operation_the_users_line_and_what_to_change(body, words) -> None:
    """Each reason a step stays eager names what did it, the user's line, and a way out."""
    source = (
        "def step(x):\n"
        "    opt.zero_grad()\n"
        "    out = model(x)\n"
        f"    {body}\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    return loss.item()\n"
    )
    filename = f"<explain-{abs(hash(body))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    minigrad.manual_seed(0)
    model = nn.Linear(3, 2)
    scope = {
        "minigrad": minigrad,
        "np": np,
        "random": random,
        "model": model,
        "opt": optim.SGD(model.parameters(), lr=0.1),
        "seen": [],
    }
    exec(compile(source, filename, "exec"), scope)  # noqa: S102 (a step written for the test)
    step = minigrad.compile(scope["step"])
    for _ in range(6):
        scope["seen"].append(1)
        step(batch())
    text = step.explain()
    assert "eager:" in text, text
    for word in words:
        assert word in text, (word, text)


def test_tracing_that_never_pays_off_stops_within_a_budget() -> None:
    """A new int every call: each is a variant, traced, never replayed. After a bounded
    number of traced calls every call runs eagerly, with no key or guard work."""

    def body(model, opt, x, number):
        opt.zero_grad()
        loss = (model(x) * number).sum()
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body), max_variants=100)
    for number in range(60):
        twin(batch(), number)
    twin.assert_same_state()
    compiled = twin.compiled
    assert compiled.eager_for_good
    assert compiled.traces <= 5, compiled.explain()
    assert "each of the first 5 calls had a new key" in compiled.explain()


def test_a_new_key_now_and_then_still_replays() -> None:
    """Keys that repeat (an epoch number passed in) keep replaying: only a key new on every
    one of the first calls gives up."""

    def body(model, opt, x, epoch):
        opt.zero_grad()
        loss = (model(x) * epoch).sum()
        loss.backward()
        opt.step()
        return loss.item()

    twin = Twin(_linear_step(body))
    for epoch in range(1, 5):
        for _ in range(5):
            twin(batch(), epoch)
    twin.assert_same_state()
    assert not twin.compiled.eager_for_good
    assert twin.compiled.replays >= 10, twin.explain()


def test_a_side_effect_in_the_code_sends_every_call_straight_to_the_function() -> None:
    history = []

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).sum()
            loss.backward()
            opt.step()
            history.append(1)
            return loss.item()

        return step, list(model.parameters())

    twin = Twin(build)
    for _ in range(5):
        twin(batch())
    twin.assert_same_state()
    assert twin.compiled.eager_for_good and twin.compiled.traces == 0  # read before any tracing
    assert len(history) == 10  # both steps ran it every time


@pytest.mark.parametrize("num_classes", [3, -1])
def test_one_hot_targets_made_in_the_step_replay_from_each_batch(num_classes) -> None:
    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 3)
        opt = optim.Adam(model.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            target = nn.functional.one_hot(y, num_classes).float()
            loss = nn.functional.mse_loss(model(x).softmax(1), target)
            loss.backward()
            opt.step()
            return loss

        return step, list(model.parameters())

    twin = Twin(build)
    rng = np.random.default_rng(0)
    for seed in range(10):
        labels = rng.integers(0, 3, size=5)
        labels[seed % 5] = 2  # the largest class appears in each batch
        twin(batch(seed=seed), minigrad.Variable(labels))
    twin.assert_same_state()
    assert twin.compiled.replays >= 6, twin.explain()


# ------------------------------------------------ cases a fresh reviewer found (issue 21)


def _sequence_run(compiled: bool) -> tuple:
    """Next-token prediction: inputs tokens[:-1] and targets tokens[1:] of one array."""
    minigrad.manual_seed(0)
    emb, head = nn.Embedding(11, 4), nn.Linear(4, 11)
    opt = optim.SGD([*emb.parameters(), *head.parameters()], lr=0.1)
    sequences = np.random.default_rng(0).integers(0, 11, (8, 9))

    def step(tokens, targets):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(head(emb(tokens)), targets)
        loss.backward()
        opt.step()
        return loss.item()

    run = minigrad.compile(step) if compiled else step
    losses = []
    for _ in range(2):
        for tokens in sequences:
            losses.append(run(minigrad.Variable(tokens[:-1]), minigrad.Variable(tokens[1:])))
    return losses, [p.data.copy() for p in head.parameters()], run


def test_labels_overlapping_another_argument_are_read_from_their_own() -> None:
    eager_losses, eager_params, _ = _sequence_run(False)
    losses, params, compiled = _sequence_run(True)
    assert losses == eager_losses
    assert all(np.array_equal(a, b) for a, b in zip(params, eager_params))
    assert compiled.replays > 0, compiled.explain()


@pytest.mark.parametrize("what", ["model", "optimizer", "loss function", "target"])
def test_rebinding_a_name_the_step_reads_traces_again(what: str) -> None:
    def run(compiled: bool) -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        namespace = {
            "model": model,
            "opt": optim.SGD(model.parameters(), lr=0.1),
            "loss_fn": nn.functional.mse_loss,
            "target": minigrad.Variable(np.ones((5, 2))),
        }
        source = (  # a step whose names are globals, as in a user's script
            "def step(x):\n"
            "    opt.zero_grad()\n"
            "    loss = loss_fn(model(x), target)\n"
            "    loss.backward()\n"
            "    opt.step()\n"
            "    return loss.item()\n"
        )
        exec(source, namespace)  # noqa: S102
        run_step = minigrad.compile(namespace["step"]) if compiled else namespace["step"]
        losses = []
        for call in range(8):
            if call == 4:
                if what == "model":
                    namespace["model"] = nn.Linear(3, 2)
                    namespace["opt"] = optim.SGD(namespace["model"].parameters(), lr=0.1)
                elif what == "optimizer":
                    namespace["opt"] = optim.Adam(namespace["model"].parameters(), lr=0.01)
                elif what == "loss function":
                    namespace["loss_fn"] = nn.functional.l1_loss
                else:
                    namespace["target"] = minigrad.Variable(np.full((5, 2), -1.0))
            losses.append(run_step(batch(seed=call)))
        return losses, [p.data.copy() for p in namespace["model"].parameters()], run_step

    eager_losses, eager_params, _ = run(False)
    losses, params, compiled = run(True)
    assert losses == eager_losses
    assert all(np.array_equal(a, b) for a, b in zip(params, eager_params))
    assert "names another object now" in compiled.explain()


def test_a_parameter_moved_between_groups_in_place_traces_again() -> None:
    def run(compiled: bool) -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        weight, bias = model.weight, model.bias
        opt = optim.SGD([{"params": [weight], "lr": 0.1}, {"params": [bias], "lr": 0.001}])

        def step(x):
            opt.zero_grad()
            loss = model(x).tanh().sum()
            loss.backward()
            opt.step()
            return loss.item()

        run_step = minigrad.compile(step) if compiled else step
        losses = []
        for call in range(8):
            if call == 4:
                groups = opt.param_groups
                groups[0]["params"][0], groups[1]["params"][0] = bias, weight
            losses.append(run_step(batch(seed=call)))
        return losses, [weight.data.copy(), bias.data.copy()], run_step

    eager_losses, eager_params, _ = run(False)
    losses, params, compiled = run(True)
    assert losses == eager_losses
    assert all(np.array_equal(a, b) for a, b in zip(params, eager_params))
    assert "the parameter groups of SGD changed" in compiled.explain()


@pytest.mark.parametrize("case", ["eval outside", "train in the step", "train outside"])
def test_train_and_eval_modes_with_dropout_follow_eager(case: str) -> None:
    def run(compiled: bool) -> tuple:
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 1))
        opt = optim.SGD(model.parameters(), lr=0.05)
        x, y = batch(), minigrad.Variable(np.ones((5, 1)))

        def step(x, y):
            if case == "train in the step":
                model.train()
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss.item()

        run_step = minigrad.compile(step) if compiled else step
        out = []
        for epoch in range(5):
            if case == "eval outside" and epoch == 3:
                model.eval()  # fine-tuning without dropout
            if case == "train outside":
                model.train()
            out += [run_step(x, y) for _ in range(4)]
            if case != "eval outside":
                model.eval()
                with minigrad.no_grad():
                    out.append(((model(x) - y) ** 2).mean().item())
        return out, [p.data.copy() for p in model.parameters()], model.training, run_step

    eager, eager_params, eager_mode, _ = run(False)
    got, params, mode, compiled = run(True)
    assert got == eager and mode == eager_mode
    assert all(np.array_equal(a, b) for a, b in zip(params, eager_params))
    assert compiled.replays >= 10, compiled.explain()


def _kept_gradient_norms(compiled: bool, hold: bool | str) -> tuple[list[float], object]:
    """Six SGD steps of a small MLP; after each call the loop keeps (or not) the first
    layer's .grad, as a loop that logs gradient norms later does."""
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = optim.SGD(model.parameters(), lr=0.5)
    x, y = minigrad.randn(16, 4), minigrad.randn(16, 1)

    def step():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    run = minigrad.compile(step) if compiled else step
    kept = []
    for _ in range(6):
        run()
        if hold == "array":
            kept.append(model[0].weight.grad.data)
        elif hold:
            kept.append(model[0].weight.grad)
    return [float((np.asarray(grad.data if hold != "array" else grad) ** 2).sum())
            for grad in kept], run


def test_a_grad_the_user_keeps_is_not_overwritten_by_the_next_replay() -> None:
    eager, _ = _kept_gradient_norms(compiled=False, hold=True)
    compiled, run = _kept_gradient_norms(compiled=True, hold=True)
    assert compiled == eager  # bit for bit: each kept .grad keeps its own call's numbers
    assert run.replays >= 3, run.explain()
    assert len(set(eager)) == 6


def test_a_grad_nobody_keeps_is_handed_out_again_without_a_copy() -> None:
    _, run = _kept_gradient_norms(compiled=True, hold=False)
    variant = next(iter(run.variants.values()))
    handed_out = variant.replay.handed_out
    before = [id(grad.grad) for grad in handed_out]
    run()
    run()
    assert [id(grad.grad) for grad in handed_out] == before


def test_a_grad_array_the_user_keeps_is_not_overwritten_either() -> None:
    eager, _ = _kept_gradient_norms(compiled=False, hold="array")
    compiled, run = _kept_gradient_norms(compiled=True, hold="array")
    assert compiled == eager
    assert "kept a .grad's array" in run.explain()


_LOGGED: list = []


def _log_weight(weight: float) -> None:
    _LOGGED.append(weight)


def test_a_new_float_value_that_takes_python_into_uncalled_code_is_not_replayed() -> None:
    """Checking a new float argument's value watches the called code too: here the new
    value makes the step call a helper the traced runs never called (it logs), so the
    value is not trusted; the helper's side effect then keeps the step eager."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, weight):
            opt.zero_grad()
            loss = model(x).tanh().sum() * weight
            loss.backward()
            opt.step()
            if weight > 0.5:
                _log_weight(weight)
            return loss.item()

        return step, list(model.parameters())

    _LOGGED.clear()
    twin = Twin(build)
    for weight in [0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 0.9]:
        twin(batch(), weight)
    twin.assert_same_state()
    assert len(_LOGGED) == 8  # four calls with 0.9, eager and compiled
    assert "in _log_weight" in twin.explain()


def test_labels_the_step_computes_are_read_and_checked_where_the_replay_makes_them() -> None:
    """targets = y[:, 1:].reshape(-1) is a copy the step makes, and cross_entropy reads a
    NumPy view of it. The replay used to keep the traced labels (its first two batches
    were the same); it now reads its own buffer for them, and checks the branch
    cross_entropy took (none ignored) there, before anything outside changed."""

    def build() -> tuple:
        minigrad.manual_seed(0)
        model = nn.Linear(3, 4)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            targets = y[:, 1:].reshape(-1)
            loss = F.cross_entropy(model(x).repeat(2, 1), targets, ignore_index=-1)
            loss.backward()
            opt.step()
            return loss.item()

        return step, list(model.parameters())

    rng = np.random.default_rng(0)
    xs = [minigrad.Variable(rng.standard_normal((4, 3))) for _ in range(6)]
    ys = [minigrad.Variable(rng.integers(0, 4, (4, 3))) for _ in range(6)]
    ys[4].data[0, 1] = -1  # an ignored label: cross_entropy takes its other branch
    twin = Twin(build)
    for index in [0, 0, 0, 1, 2, 3, 4, 5, 1]:
        twin(xs[index], ys[index])
    twin.assert_same_state()
    assert twin.compiled.replays >= 4, twin.explain()
    assert "check: cross_entropy" in twin.compiled.tape()
