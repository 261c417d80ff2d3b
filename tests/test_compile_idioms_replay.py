"""The idioms that used to keep minigrad.compile eager now replay, bit for bit (issue 31).

Each case runs a small training loop twice from the same seed, once eagerly and once with
its steps compiled, and compares every loss, every kept value and the final parameters
with np.array_equal. Randomness comes from minigrad's generator, so the two runs must
draw the same numbers in the same order: a replay that skipped a draw, or drew one too
many, would show up as a difference.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import minigrad as torch
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.compiler.compiled import CompileFallbackWarning

warnings.simplefilter("ignore", CompileFallbackWarning)


def run_twice(make: Callable[[], tuple], calls: int = 30) -> dict:
    """make() -> (steps by name, loop(steps, calls) -> list of kept values). Runs it eagerly
    and compiled from seed 0; asserts every kept value equal; returns the compiled steps."""
    kept = {}
    for compiled in (False, True):
        torch.manual_seed(0)
        steps, loop = make()
        if compiled:
            steps = {name: torch.compile(step) for name, step in steps.items()}
        kept[compiled] = [np.asarray(value) for value in loop(steps, calls)]
        if compiled:
            result = steps
    assert len(kept[False]) == len(kept[True])
    for number, (eager, replayed) in enumerate(zip(kept[False], kept[True])):
        assert np.array_equal(eager, replayed), f"kept value {number} differs"
    return result


def params(*modules: nn.Module) -> list:
    return [p.detach().numpy().copy() for m in modules for p in m.parameters()]


def batches(n: int, size: int = 16, features: int = 8, classes: int = 2) -> tuple:
    return torch.randn(n * size, features), torch.randint(0, classes, (n * size,))


def test_a_gan_with_labels_and_noise_made_in_two_steps_sharing_the_discriminator() -> None:
    """torch.ones / torch.zeros labels and torch.randn noise made inside the steps; G's
    backward lands on D's .grad, left there by d_step (g_step zeroes only G's)."""

    def make() -> tuple:
        G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
        D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        opt_g = optim.Adam(G.parameters(), lr=1e-3)
        opt_d = optim.Adam(D.parameters(), lr=1e-3)
        criterion = nn.BCEWithLogitsLoss()
        real_data, _ = batches(30)

        def d_step(real):
            opt_d.zero_grad()
            n = real.shape[0]
            fake = G(torch.randn(n, 4)).detach()
            loss = criterion(D(real), torch.ones(n, 1)) + criterion(D(fake), torch.zeros(n, 1))
            loss.backward()
            opt_d.step()
            return loss

        def g_step(n):
            opt_g.zero_grad()
            loss = criterion(D(G(torch.randn(n, 4))), torch.ones(n, 1))
            loss.backward()
            opt_g.step()
            return loss

        def loop(steps, calls):
            losses = []
            for i in range(calls):
                losses.append(steps["d"](real_data[i * 16 : (i + 1) * 16]).item())
                losses.append(steps["g"](16).item())
            d_grads = [p.grad.numpy().copy() for p in D.parameters()]
            return [losses, *params(G, D), *d_grads]

        return {"d": d_step, "g": g_step}, loop

    steps = run_twice(make)
    assert steps["d"].replays == 28 and steps["g"].replays == 28, steps["g"].explain()
    assert "Made" in steps["d"].tape()


def test_a_vae_drawing_randn_like_and_a_denoiser_drawing_normal_and_rand_in_the_step() -> None:
    def make() -> tuple:
        encoder, decoder = nn.Linear(8, 8), nn.Linear(4, 8)
        denoiser = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        opt = optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=1e-3)
        opt_denoise = optim.SGD(denoiser.parameters(), lr=0.05)
        data, _ = batches(30)

        def vae_step(x):
            opt.zero_grad()
            h = encoder(x)
            mu, logvar = h[:, :4], h[:, 4:]
            std = torch.exp(0.5 * logvar)
            z = mu + torch.randn_like(std) * std
            kl = -0.5 * torch.mean(1 + logvar - mu**2 - logvar.exp())
            loss = F.mse_loss(decoder(z), x) + kl
            loss.backward()
            opt.step()
            return loss

        def denoise_step(x):
            opt_denoise.zero_grad()
            noisy = x + torch.empty_like(x).normal_(0, 0.1) + 0.01 * torch.rand(x.shape[0], 1)
            loss = F.mse_loss(denoiser(noisy), x)
            loss.backward()
            opt_denoise.step()
            return loss

        def loop(steps, calls):
            losses = []
            for i in range(calls):
                x = data[i * 16 : (i + 1) * 16]
                losses += [steps["vae"](x).item(), steps["denoise"](x).item()]
            return [losses, *params(encoder, decoder, denoiser)]

        return {"vae": vae_step, "denoise": denoise_step}, loop

    steps = run_twice(make)
    assert steps["vae"].replays == 28 and steps["denoise"].replays == 28


def test_gradient_accumulation_keyed_by_the_if_test_on_the_iteration_index() -> None:
    """step(x, y, i) steps every 4th call: two variants (the test True or False), not one
    per value of i; each .grad from the call before is read as the replay finds it."""
    every = 4

    def make() -> tuple:
        model = nn.Linear(8, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(40, size=8)

        def step(x, y, i):
            loss = F.cross_entropy(model(x), y) / every
            loss.backward()
            if (i + 1) % every == 0:
                opt.step()
                opt.zero_grad()
            return loss

        def loop(steps, calls):
            sl = [slice(i * 8, (i + 1) * 8) for i in range(calls)]
            return [[steps["s"](data[s], labels[s], i).item() for i, s in enumerate(sl)],
                    *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=40)
    assert len(steps["s"].variants) == 2, steps["s"].explain()
    assert steps["s"].replays >= 30, steps["s"].explain()
    assert "`(i + 1) % every == 0` is True" in steps["s"].explain()


def test_an_int_used_beyond_if_tests_is_still_keyed_by_its_value() -> None:
    from minigrad.compiler.int_tests import tests_of

    def indexes(x, i):
        return x[i]

    def tests_and_more(x, i):
        if i > 2:
            x = x * 2
        return x + i

    def reassigned(x, i):
        i = i + 1
        if i > 2:
            return x
        return -x

    def two_in_one_test(x, i, k):
        return x if i < k else -x

    def only_tests(x, i, *, k):
        y = x if i % 2 else -x
        if k == 3:
            y = y * 2
        elif not i < 0:
            y = y * 3
        return y

    assert tests_of(indexes) == {}
    assert tests_of(tests_and_more) == {}
    assert tests_of(reassigned) == {}
    assert tests_of(two_in_one_test) == {}
    found = tests_of(only_tests)
    assert set(found) == {"1", "i", "k"}
    assert [test(5) for test in found["i"]] == [True, True]
    assert [test(3) for test in found["k"]] == [True]


def test_train_and_eval_toggled_between_calls_keep_one_replay_per_mode() -> None:
    def make() -> tuple:
        model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3), nn.Linear(16, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(40, size=8)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            losses = []
            for i in range(calls):
                model.train(i % 5 != 4)
                losses.append(steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8]))
            return [[loss.item() for loss in losses], *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=40)
    assert steps["s"].replays >= 34, steps["s"].explain()
    assert steps["s"].traces <= 6


def test_a_hook_added_then_removed_runs_eagerly_while_it_is_there_then_replays() -> None:
    def make() -> tuple:
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(40, size=8)
        seen: list = []

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            losses = []
            for i in range(calls):
                if i == 10:
                    handle = model[0].weight.register_hook(
                        lambda g: seen.append(g.abs().sum().item()))
                if i == 15:
                    handle.remove()
                losses.append(steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8]))
            return [[loss.item() for loss in losses], seen, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=40)
    assert steps["s"].replays >= 30, steps["s"].explain()
    assert "the replay's guards hold again: replaying" in steps["s"].explain()


def test_reduce_lr_on_plateau_inside_the_step_on_the_loss_replays() -> None:
    def make() -> tuple:
        model = nn.Linear(8, 2)
        opt = optim.SGD(model.parameters(), lr=0.5)
        plateau = optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
        data, labels = batches(3, size=8)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            plateau.step(loss)
            return loss

        def loop(steps, calls):
            losses, lrs = [], []
            for i in range(calls):
                s = slice((i % 3) * 8, (i % 3 + 1) * 8)
                losses.append(steps["s"](data[s], labels[s]).item())
                lrs.append(opt.param_groups[0]["lr"])
            return [losses, lrs, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=40)
    assert steps["s"].replays >= 36, steps["s"].explain()


@pytest.mark.parametrize("seed_in_step", [123, 7])
def test_manual_seed_at_the_top_of_the_step_is_replayed(seed_in_step: int) -> None:
    def make() -> tuple:
        model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(40, size=8)

        def step(x, y):
            torch.manual_seed(seed_in_step)
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            losses = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8]).item()
                      for i in range(calls)]
            return [losses, torch.rand(3).numpy(), *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=20)
    assert steps["s"].replays == 18, steps["s"].explain()


def test_a_step_that_returns_a_graph_for_another_step_stays_eager_and_says_why() -> None:
    """DCGAN's d_step returns fake = G(noise), whose graph g_step backpropagates through:
    a replay builds no graph, so d_step stays eager (it used to crash g_step)."""

    def make() -> tuple:
        G, D = nn.Linear(4, 8), nn.Linear(8, 1)
        opt_g, opt_d = optim.SGD(G.parameters(), lr=0.1), optim.SGD(D.parameters(), lr=0.1)
        real, _ = batches(20)

        def d_step(x):
            opt_d.zero_grad()
            fake = G(torch.randn(x.shape[0], 4))
            loss = D(x).mean() - D(fake.detach()).mean()
            loss.backward()
            opt_d.step()
            return fake

        def g_step(fake):
            opt_g.zero_grad()
            loss = -D(fake).mean()
            loss.backward()
            opt_g.step()
            return loss

        def loop(steps, calls):
            out = [steps["g"](steps["d"](real[i * 16 : (i + 1) * 16])).item()
                   for i in range(calls)]
            return [out, *params(G, D)]

        return {"d": d_step, "g": g_step}, loop

    steps = run_twice(make, calls=12)
    assert "whose graph backward() has not been through" in steps["d"].explain()


def _logging_world(make_step: Callable) -> Callable[[], tuple]:
    """make() for run_twice: an MLP trained by SGD with the step make_step(model, opt)."""

    def make() -> tuple:
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(30, size=8)

        def loop(steps, calls):
            out = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8])
                   for i in range(calls)]
            flat = [(d["loss"], d["d_x"], *d["both"]) if type(d) is dict else d for d in out]
            return [flat, *params(model)]

        return {"s": make_step(model, opt)}, loop

    return make


def test_item_in_the_middle_of_the_step_that_is_only_returned_replays() -> None:
    """DCGAN's D_x = output.mean().item(), read before the update and only returned."""

    def make_step(model, opt):
        def step(x, y):
            opt.zero_grad()
            logits = model(x)
            d_x = logits.mean().item()
            loss = F.cross_entropy(logits, y)
            loss.backward()
            opt.step()
            return {"loss": loss.item(), "d_x": d_x, "both": (d_x, logits.std().item())}

        return step

    steps = run_twice(_logging_world(make_step))
    assert steps["s"].replays == 28, steps["s"].explain()


def _helper(value: float) -> float:
    return value


@pytest.mark.parametrize("use", ["branch", "arithmetic", "helper"])
def test_item_in_the_middle_used_for_more_than_returning_stays_eager(use: str) -> None:
    def make_step(model, opt):
        def step(x, y):
            opt.zero_grad()
            logits = model(x)
            d_x = logits.mean().item()
            loss = F.cross_entropy(logits, y)
            if use == "branch" and d_x > 100.0:
                loss = loss * 2
            if use == "arithmetic":
                loss = loss * (1 + 0 * d_x)
            loss.backward()
            opt.step()
            return loss.item(), (_helper(d_x) if use == "helper" else 0.0)

        return step

    steps = run_twice(_logging_world(make_step))
    assert steps["s"].replays == 0
    assert "uses it for more than returning it" in steps["s"].explain()


class MaxScale(torch.autograd.Function):
    """y = x / max|x|, the scale a Python float computed from the data and kept on ctx."""

    @staticmethod
    def forward(ctx, x):
        ctx.scale = float(x.abs().max())
        return x / ctx.scale

    @staticmethod
    def backward(ctx, grad):
        return grad / ctx.scale


class MaxScaleInPlace(MaxScale):
    """The same, but the backward reads the float through a call no NumPy ufunc makes."""

    @staticmethod
    def backward(ctx, grad):
        return torch.clamp(grad, -ctx.scale, ctx.scale)


@pytest.mark.parametrize("function", [MaxScale, MaxScaleInPlace])
def test_a_custom_function_keeping_a_python_float_from_the_data(function) -> None:
    """The float is another number on every call: each replay's forward sets it again and
    the backward's division reads it live. Read by something else, it stays eager."""

    def make() -> tuple:
        model = nn.Linear(8, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(30, size=8)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(function.apply(model(x)), y)
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            out = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8]).item()
                   for i in range(calls)]
            return [out, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make)
    if function is MaxScale:
        assert steps["s"].replays == 28, steps["s"].explain()
    else:
        assert steps["s"].replays == 0
        assert "kept on its ctx" in steps["s"].explain() or "differs" in steps["s"].explain()


def test_autograd_grad_in_the_step_replays_fgsm() -> None:
    """The FGSM tutorial's attack inside the step: torch.autograd.grad of the loss with
    respect to the input, then a step on the adversarial batch."""

    def make() -> tuple:
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(30, size=8)

        def step(x, y):
            x_req = x.clone().requires_grad_(True)
            (grad_x,) = torch.autograd.grad(F.cross_entropy(model(x_req), y), x_req)
            x_adv = (x + 0.05 * grad_x.sign()).detach()
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) + F.cross_entropy(model(x_adv), y)
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            out = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8]).item()
                   for i in range(calls)]
            return [out, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make)
    assert steps["s"].replays == 28, steps["s"].explain()


def test_backward_with_inputs_in_the_step_replays() -> None:
    """backward(inputs=...) fills only the chosen leaves' .grad (the first layer here)."""

    def make() -> tuple:
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
        first = list(model[0].parameters())
        opt = optim.SGD(first, lr=0.1)
        data, labels = batches(30, size=8)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward(inputs=first)
            opt.step()
            return loss

        def loop(steps, calls):
            out = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8]).item()
                   for i in range(calls)]
            return [out, *params(model), model[2].weight.grad is None]

        return {"s": step}, loop

    steps = run_twice(make)
    assert steps["s"].replays == 28, steps["s"].explain()


def test_token_windows_sliced_in_the_step_replay_reading_the_right_part() -> None:
    """word_language_model's batches: data, targets = batch[:, :4], batch[:, 4], an
    Embedding and class labels reading parts of the argument; each replay reads this
    call's parts, and checks the labels it branched on there."""

    def make() -> tuple:
        vocab, context = 12, 4
        stream = torch.randint(0, vocab, (400,))
        windows = torch.stack([stream[i : i + context + 1] for i in range(0, 320, 2)])
        model = nn.Sequential(nn.Embedding(vocab, 6), nn.Flatten(), nn.Linear(6 * context, vocab))
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(batch):
            data, targets = batch[:, :context], batch[:, context]
            opt.zero_grad()
            loss = F.cross_entropy(model(data), targets)
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            out = [steps["s"](windows[i * 16 : (i + 1) * 16]).item() for i in range(calls)]
            return [out, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=10)
    assert steps["s"].replays == 8, steps["s"].explain()


def test_an_int_used_only_in_if_tests_of_a_bound_method_step() -> None:
    """torch.compile(trainer.step): the method's `self` is no argument of the call."""
    from minigrad.compiler.int_tests import tests_of

    class Trainer:
        def step(self, x, i):
            if i % 2 == 0:
                return x
            return -x

    found = tests_of(Trainer().step)
    assert set(found) == {"1", "i"}
    assert [test(4) for test in found["1"]] == [True]


@pytest.mark.parametrize("mask_from", ["argument", "step"])
def test_boolean_mask_losses_replay_one_replay_per_count(mask_from: str) -> None:
    """cross_entropy(logits[mask], y[mask]): the mask's count of True values fixes the
    shapes, so it is checked before each replay (where the step computes the mask, at
    that point of the replay) and each count seen twice gets a replay of its own."""

    def make() -> tuple:
        model = nn.Linear(8, 3)
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(40, size=8, classes=3)
        rng = np.random.default_rng(1)
        # Two True counts only (5 or 6 of 8), in a random order.
        masks = [np.isin(np.arange(8), rng.choice(8, size=rng.choice([5, 6]), replace=False))
                 for _ in range(40)]
        keeps = [torch.tensor(mask) for mask in masks]
        weights = [torch.tensor(mask.astype(float)) for mask in masks]

        def step(x, y, keep, weight):
            if mask_from == "step":
                keep = weight > 0.5
            opt.zero_grad()
            logits = model(x)
            loss = F.cross_entropy(logits[keep], y[keep])
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            out = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8],
                              keeps[i], weights[i]).item() for i in range(calls)]
            return [out, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=40)
    assert steps["s"].replays >= 25, steps["s"].explain()
    assert "the boolean mask holds" in steps["s"].explain()


def test_class_weighted_cross_entropy_replays_reading_the_weights_live() -> None:
    """nn.CrossEntropyLoss(weight=w), the weights updated in place between epochs (as a
    re-balancing loop does): each row's weight is picked by an operation the replay runs."""

    def make() -> tuple:
        model = nn.Linear(8, 3)
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(40, size=8, classes=3)
        class_weight = torch.tensor([1.0, 2.0, 0.5])
        criterion = nn.CrossEntropyLoss(weight=class_weight)

        def step(x, y):
            opt.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
            return loss

        def loop(steps, calls):
            out = []
            for i in range(calls):
                if i % 10 == 9:
                    with torch.no_grad():
                        class_weight.copy_(class_weight * 0.9 + 0.1)
                out.append(steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8]))
            return [[loss.item() for loss in out], *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=40)
    assert steps["s"].replays == 38, steps["s"].explain()


def test_python_writes_the_replay_repeats_a_loss_history_and_counters() -> None:
    """history.append(loss.item()) in the step, `stats["steps"] += 1`, a float counter on
    a module whose forward runs twice a step: the replay repeats each after its array
    work (writes.py), and every one ends as eager's."""

    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(8, 2)
            self.seen = 0.0

        def forward(self, x):
            self.seen += 0.1  # a float: added once per call, as eager adds it
            return self.linear(x)

    def make() -> tuple:
        model = Twice()
        opt = optim.SGD(model.parameters(), lr=0.1)
        data, labels = batches(30, size=8)
        history: list = []
        stats = {"steps": 0}

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) + 0.1 * model(x).pow(2).mean()
            loss.backward()
            opt.step()
            history.append(loss.item())
            stats["steps"] += 1
            return loss

        def loop(steps, calls):
            for i in range(calls):
                steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8])
            return [history, stats["steps"], model.seen, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make)
    assert steps["s"].replays == 28, steps["s"].explain()
    assert "the replay repeats these Python writes" in steps["s"].explain()


def test_an_item_passed_straight_to_a_scheduler_step_replays() -> None:
    """scheduler.step(loss.item()) in the step: the number goes to one call the replay
    makes again, with the number this call computed."""

    def make() -> tuple:
        model = nn.Linear(8, 2)
        opt = optim.SGD(model.parameters(), lr=0.5)
        plateau = optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
        data, labels = batches(3, size=8)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            plateau.step(loss.item())
            return loss

        def loop(steps, calls):
            losses, lrs = [], []
            for i in range(calls):
                s = slice((i % 3) * 8, (i % 3 + 1) * 8)
                losses.append(steps["s"](data[s], labels[s]).item())
                lrs.append(opt.param_groups[0]["lr"])
            return [losses, lrs, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make, calls=40)
    assert steps["s"].replays >= 36, steps["s"].explain()


def test_a_setting_the_return_reads_is_read_again_by_each_replay() -> None:
    """return {"loss": ..., "lr": opt.param_groups[0]["lr"]} with a StepLR stepping in
    the step: the replay reads the lr again as it returns, as the eager return does."""

    def make() -> tuple:
        model = nn.Linear(8, 2)
        opt = optim.SGD(model.parameters(), lr=0.5)
        schedule = optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
        data, labels = batches(30, size=8)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            schedule.step()
            return {"loss": loss.item(), "lr": opt.param_groups[0]["lr"]}

        def loop(steps, calls):
            out = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8])
                   for i in range(calls)]
            return [[(d["loss"], d["lr"]) for d in out], *params(model)]

        return {"s": step}, loop

    steps = run_twice(make)
    assert steps["s"].replays == 28, steps["s"].explain()


def test_a_setting_read_before_the_step_changes_it_stays_eager() -> None:
    """lr = opt.param_groups[0]["lr"] read before the scheduler steps, returned after: the
    replay could not read that number again, so the step stays eager."""

    def make() -> tuple:
        model = nn.Linear(8, 2)
        opt = optim.SGD(model.parameters(), lr=0.5)
        schedule = optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
        data, labels = batches(30, size=8)

        def step(x, y):
            lr = opt.param_groups[0]["lr"]
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            schedule.step()
            return loss.item(), lr

        def loop(steps, calls):
            out = [steps["s"](data[i * 8 : (i + 1) * 8], labels[i * 8 : (i + 1) * 8])
                   for i in range(calls)]
            return [out, *params(model)]

        return {"s": step}, loop

    steps = run_twice(make)
    assert steps["s"].replays == 0


def _constant_item_loop(trained_offset: bool = False) -> Callable[[], tuple]:
    """PyTorch's regression example: `x.mm(W_target) + b_target.item()` in the middle of
    the step, b_target a constant the step never changes; changed between calls later."""

    def make() -> tuple:
        b_target = torch.randn(1) * 5
        model = nn.Linear(3, 1)
        if trained_offset:
            b_target = nn.Parameter(b_target.numpy().copy())  # (the optimizer skips it)
        opt = optim.SGD(model.parameters(), lr=0.05)

        def step(x):
            opt.zero_grad()
            target = x.sum(1, keepdim=True) + b_target.item()
            loss = F.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            return loss.item()

        def loop(steps: dict, calls: int) -> list:
            kept = []
            for call in range(calls):
                if call == calls // 2:
                    b_target.data[...] = 1.25  # in place, between calls
                kept.append(steps["step"](torch.randn(8, 3)))
            kept += [p.detach().numpy() for p in model.parameters()]
            return kept

        return {"step": step}, loop

    return make


def test_item_of_a_constant_in_the_middle_of_the_step_replays_guarded() -> None:
    steps = run_twice(_constant_item_loop())
    step = steps["step"]
    assert step.replays >= 20, step.explain()
    assert "read with .item() in the step holds 1.25 now" in step.explain()


def test_item_of_a_trained_parameter_in_the_middle_of_the_step_stays_eager() -> None:
    steps = run_twice(_constant_item_loop(trained_offset=True))
    step = steps["step"]
    assert step.replays == 0
    assert ".item() reads" in step.explain()


def _seeded_dropout_loop(seeding: str) -> Callable[[], tuple]:
    """Reproducible dropout: the step seeds from the call number it is passed (`seeding`:
    "global", minigrad.manual_seed(k); "also a constant", a helper seeds with 5 first and
    k takes the value 5 once; "own generator", a Generator's manual_seed(k), which a replay
    cannot follow, keyed by value instead)."""

    def make() -> tuple:
        model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Linear(16, 2))
        opt = optim.SGD(model.parameters(), lr=0.05)
        gen = torch.Generator()

        def helper_seed() -> None:
            torch.manual_seed(5)

        def step(x, y, k):
            if seeding == "also a constant":
                helper_seed()
            if seeding == "own generator":
                gen.manual_seed(k)
                x = x + 0.1 * torch.randn(x.shape, generator=gen)
            else:
                torch.manual_seed(k)
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if k % 7 == 0:
                return loss.item() * 2
            return loss.item()

        def loop(steps: dict, calls: int) -> list:
            kept = []
            for call in range(calls):
                x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
                kept.append(steps["step"](x, y, 3 + call))
            kept.append(torch.randn(3).numpy())  # the global generator after the loop
            kept += [p.detach().numpy() for p in model.parameters()]
            return kept

        return {"step": step}, loop

    return make


@pytest.mark.parametrize("seeding", ["global", "also a constant"])
def test_manual_seed_from_an_int_argument_replays_seeded_by_each_call(seeding: str) -> None:
    step = run_twice(_seeded_dropout_loop(seeding))["step"]
    assert step.replays >= 20, step.explain()
    assert len(step.variants) == 2, step.explain()  # k % 7 == 0 or not: no key per k
    assert "the argument args[2]" in step.tape()


def test_a_generators_own_manual_seed_from_an_argument_is_keyed_by_value() -> None:
    step = run_twice(_seeded_dropout_loop("own generator"))["step"]
    assert step.replays == 0, step.explain()
