"""Small PyTorch behaviours that running PyTorch's tutorials and docs examples found
missing (tests/test_pytorch_tutorials.py, tests/test_pytorch_docs_examples.py), each
checked on its own and compared with PyTorch where it is installed."""

import numpy as np
import pytest

import minigrad


@pytest.fixture(scope="module")
def real_torch():
    return pytest.importorskip("torch")


# --------------------------------------------------------------------------- randint
# data_tutorial.py: torch.randint(len(training_data), size=(1,)).item()


def test_randint_takes_high_alone_with_size_by_keyword() -> None:
    values = minigrad.randint(7, size=(200,))
    assert values.shape == (200,)
    assert values.dtype == np.int64
    assert values.min().item() >= 0 and values.max().item() < 7
    assert minigrad.randint(128, size=(1,)).item() in range(128)


def test_randint_spellings_give_the_shapes_and_dtype_pytorch_gives(real_torch) -> None:
    calls = [
        lambda lib: lib.randint(7, size=(3, 2)),
        lambda lib: lib.randint(7, (3, 2)),
        lambda lib: lib.randint(2, 7, (4,)),
        lambda lib: lib.randint(2, 7, size=(4,)),
        lambda lib: lib.randint(low=2, high=7, size=(4,)),
        lambda lib: lib.randint(high=7, size=(5,)),
    ]
    for call in calls:
        ours, theirs = call(minigrad), call(real_torch)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(theirs.dtype) == "torch.int64" and ours.dtype == np.int64


def test_randint_without_a_size_says_so() -> None:
    with pytest.raises(TypeError, match="needs a size"):
        minigrad.randint(7)


# --------------------------------------------------------------------------- schedulers
# The lr_scheduler docstrings: MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR,
# SequentialLR, ChainedScheduler.


def _lrs(lib, build, epochs=30, closed_form=False):
    """The lr of each group after every epoch of `build(lib, optimizer)`'s scheduler."""
    weight = lib.nn.Parameter(lib.ones(2))
    bias = lib.nn.Parameter(lib.zeros(2))
    optimizer = lib.optim.SGD([{"params": [weight]}, {"params": [bias], "lr": 0.2}], lr=0.05)
    scheduler = build(lib, optimizer)
    seen = []
    for epoch in range(1, epochs + 1):
        optimizer.step()
        if closed_form:  # the deprecated step(epoch), minigrad only (PyTorch warns)
            scheduler.step(epoch)
        else:
            scheduler.step()
        seen.append([group["lr"] for group in optimizer.param_groups])
    return np.array(seen), scheduler


def _sched(name, *args, **kwargs):
    return lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, *args, **kwargs)


SCHEDULES = {
    "MultiplicativeLR": _sched("MultiplicativeLR", lambda epoch: 0.9 if epoch % 2 else 1.1),
    "MultiplicativeLR per group": _sched(
        "MultiplicativeLR", [lambda epoch: 0.95, lambda epoch: 0.5 + epoch / 100]
    ),
    "ConstantLR": _sched("ConstantLR", factor=0.5, total_iters=7),
    "ConstantLR defaults": _sched("ConstantLR"),
    "LinearLR": _sched("LinearLR", start_factor=0.05, total_iters=12),
    "LinearLR down": _sched("LinearLR", start_factor=1.0, end_factor=0.1, total_iters=9),
    "PolynomialLR": _sched("PolynomialLR", total_iters=20, power=0.9),
    "PolynomialLR defaults": _sched("PolynomialLR"),
    "SequentialLR": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt,
        schedulers=[
            lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5),
            lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),
            lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
        ],
        milestones=[5, 15],
    ),
    "ChainedScheduler": lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler(
        [
            lib.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=4),
            lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10),
        ]
    ),
    "ChainedScheduler of a SequentialLR": lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler(
        [
            lib.optim.lr_scheduler.SequentialLR(
                opt,
                [
                    lib.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=3),
                    lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[4, 8]),
                ],
                milestones=[3],
            ),
            lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95),
        ],
        optimizer=opt,
    ),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_scheduler_gives_pytorchs_learning_rates(name, real_torch) -> None:
    ours, _ = _lrs(minigrad, SCHEDULES[name])
    theirs, _ = _lrs(real_torch, SCHEDULES[name])
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "name", ["ConstantLR", "LinearLR", "LinearLR down", "PolynomialLR", "PolynomialLR defaults"]
)
def test_scheduler_closed_form_equals_its_steps(name) -> None:
    stepped, _ = _lrs(minigrad, SCHEDULES[name])
    jumped, _ = _lrs(minigrad, SCHEDULES[name], closed_form=True)
    np.testing.assert_allclose(jumped, stepped, rtol=1e-12, atol=1e-15)


def test_the_schedules_the_docstrings_state() -> None:
    epoch = np.arange(1, 31)
    constant, _ = _lrs(minigrad, _sched("ConstantLR", factor=0.5, total_iters=7))
    np.testing.assert_allclose(constant[:, 0], np.where(epoch < 7, 0.025, 0.05))
    linear, _ = _lrs(minigrad, _sched("LinearLR", start_factor=0.05, total_iters=12))
    want = 0.05 * (0.05 + 0.95 * np.minimum(epoch, 12) / 12)
    np.testing.assert_allclose(linear[:, 0], want, rtol=1e-12)
    poly, _ = _lrs(minigrad, _sched("PolynomialLR", total_iters=20, power=0.9))
    want = 0.2 * (1 - np.minimum(epoch, 20) / 20) ** 0.9
    np.testing.assert_allclose(poly[:, 1], want, atol=1e-15)


def test_sequential_and_chained_state_dicts_hold_their_schedulers() -> None:
    for name in ("SequentialLR", "ChainedScheduler"):
        _, scheduler = _lrs(minigrad, SCHEDULES[name], epochs=6)
        state = scheduler.state_dict()
        assert "optimizer" not in state and len(state["_schedulers"]) == len(
            scheduler._schedulers
        )
        _, fresh = _lrs(minigrad, SCHEDULES[name], epochs=0)
        fresh.load_state_dict(state)
        assert [s.last_epoch for s in fresh._schedulers] == [
            s.last_epoch for s in scheduler._schedulers
        ]


def test_scheduler_arguments_are_checked() -> None:
    sched = minigrad.optim.lr_scheduler
    weight = minigrad.nn.Parameter(minigrad.ones(2))
    optimizer = minigrad.optim.SGD([weight], lr=0.1)
    other = minigrad.optim.SGD([minigrad.nn.Parameter(minigrad.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="factor must be between 0 and 1"):
        sched.ConstantLR(optimizer, factor=2.0)
    with pytest.raises(ValueError, match="start_factor must be greater than 0"):
        sched.LinearLR(optimizer, start_factor=0.0)
    with pytest.raises(ValueError, match="total_iters must be an int >= 1"):
        sched.PolynomialLR(optimizer, total_iters=0)
    with pytest.raises(TypeError, match="lr_lambda must be a function"):
        sched.MultiplicativeLR(optimizer, lr_lambda=0.9)
    with pytest.raises(TypeError, match="returned str"):
        sched.MultiplicativeLR(optimizer, lr_lambda=lambda epoch: "0.9").step()
    with pytest.raises(ValueError, match="one milestone fewer than schedulers"):
        sched.SequentialLR(optimizer, [sched.ExponentialLR(optimizer, 0.9)], milestones=[3])
    with pytest.raises(ValueError, match="same optimizer"):
        sched.ChainedScheduler([sched.ExponentialLR(optimizer, 0.9), sched.StepLR(other, 3)])
    with pytest.raises(ValueError, match="does not take ReduceLROnPlateau"):
        sched.ChainedScheduler([sched.ReduceLROnPlateau(optimizer)], optimizer=optimizer)
    with pytest.raises(ValueError, match="at least one scheduler"):
        sched.ChainedScheduler([])


# --------------------------------------------------------------------------- scatter
# transforms_tutorial.py: torch.zeros(10, dtype=torch.float).scatter_(dim=0,
# index=torch.tensor(y), value=1), a one-hot vector.

_INDEX = [[1, 2, 0, 1], [0, 0, 2, 2]]


def test_scatter_value_makes_the_tutorials_one_hot_vectors() -> None:
    for label in (0, 3, 9):
        hot = minigrad.zeros(10, dtype=minigrad.float).scatter_(
            dim=0, index=minigrad.tensor(label), value=1
        )
        np.testing.assert_array_equal(hot.numpy(), np.eye(10)[label])
        assert hot.dtype == np.float32


def _scatter_cases(lib):
    base = np.arange(12.0).reshape(3, 4)
    x = lib.tensor(base, requires_grad=True)
    src = lib.tensor(np.arange(8.0).reshape(2, 4) + 100, requires_grad=True)
    narrow = lib.tensor(np.arange(6.0).reshape(3, 2) - 50, requires_grad=True)
    wide = lib.tensor(np.arange(15.0).reshape(3, 5) - 50)
    index = lib.tensor(_INDEX)
    outs = {
        "src dim 0": x.scatter(0, index, src),
        "src dim 1": x.scatter(1, lib.tensor([[3, 0], [1, 2], [0, 0]]), narrow),
        "value": x.scatter(1, lib.tensor([[0], [3], [1]]), 2.5),
        "value keyword": lib.scatter(x, 0, index, value=-1.0),
    }
    total = sum((out * out).sum() for out in outs.values())
    total.backward()
    results = {name: out.detach().numpy() for name, out in outs.items()}
    # A src larger than index: its corner is used. (PyTorch's backward refuses this case.)
    results["src larger than index"] = x.detach().scatter(0, index, wide).numpy()
    results.update({"x.grad": x.grad.numpy(), "src.grad": src.grad.numpy(),
                    "narrow.grad": narrow.grad.numpy()})
    inplace = lib.tensor(base.copy())
    inplace.scatter_(0, index, lib.tensor(np.ones((2, 4))))
    results["in place"] = inplace.numpy()
    return results


def test_scatter_values_and_gradients_equal_pytorchs(real_torch) -> None:
    ours, theirs = _scatter_cases(minigrad), _scatter_cases(real_torch)
    for key, want in theirs.items():
        np.testing.assert_allclose(ours[key], want, err_msg=key)


def test_scatter_gradients_by_finite_differences() -> None:
    index = minigrad.tensor(_INDEX)
    x = minigrad.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    src = minigrad.tensor(np.random.default_rng(1).standard_normal((2, 4)), requires_grad=True)
    assert minigrad.gradcheck(lambda a, b: a.scatter(0, index, b), [x, src])
    assert minigrad.gradgradcheck(lambda a, b: a.scatter(0, index, b * b), [x, src])
    assert minigrad.gradcheck(lambda a: a.scatter(1, index[:, :2], 3.0), [x])
    assert minigrad.gradcheck(lambda a, b: a.scatter(0, index[:, :2], b), [x, src])  # src larger


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: x.scatter(0, minigrad.tensor([[3, 0, 0, 0]]), 1.0), RuntimeError, "out of"),
        (lambda x: x.scatter(0, minigrad.tensor(_INDEX)), TypeError, "needs what to write"),
        (
            lambda x: x.scatter(0, minigrad.tensor(_INDEX), minigrad.ones(2, 4), value=1.0),
            TypeError,
            "not both",
        ),
        (
            lambda x: x.scatter(
                0, minigrad.tensor(_INDEX), minigrad.ones(2, 4, dtype=minigrad.float)
            ),
            RuntimeError,
            "dtype",
        ),
        (lambda x: x.scatter(0, minigrad.tensor(_INDEX), 1.0, reduce="sum"), RuntimeError,
         "reduce"),
        (lambda x: x.scatter(0, minigrad.tensor(_INDEX), value="1"), TypeError, "number"),
        (lambda x: x.scatter(0, minigrad.tensor([[0.5]]), 1.0), RuntimeError, "integers"),
    ],
)
def test_scatter_errors_name_the_problem(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call(minigrad.zeros(3, 4))


# --------------------------------------------------------------------------- DataParallel
# autograd_saved_tensors_hooks_tutorial.py: net = nn.DataParallel(SaveToDisk(Model())).


def _data_parallel(lib):
    inner = lib.nn.Linear(3, 2)
    with lib.no_grad():
        inner.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 10, dtype=inner.weight.dtype))
        inner.bias.copy_(lib.tensor([0.5, -0.5], dtype=inner.bias.dtype))
    net = lib.nn.DataParallel(inner)
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=inner.weight.dtype)
    out = net(x)
    (out**2).sum().backward()
    return {
        "out": out.detach().numpy(),
        "weight.grad": inner.weight.grad.numpy(),
        "keys": list(net.state_dict()),
        "module is inner": net.module is inner,
        "parameters": len(list(net.parameters())),
    }


def test_data_parallel_runs_its_module_as_pytorch_does_without_gpus(real_torch) -> None:
    ours, theirs = _data_parallel(minigrad), _data_parallel(real_torch)
    assert ours["keys"] == theirs["keys"] == ["module.weight", "module.bias"]
    assert ours["module is inner"] and ours["parameters"] == theirs["parameters"] == 2
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=1e-6)
    np.testing.assert_allclose(ours["weight.grad"], theirs["weight.grad"], rtol=1e-6)


def test_data_parallel_says_what_it_cannot_do() -> None:
    with pytest.raises(TypeError, match="wraps an nn.Module"):
        minigrad.nn.DataParallel(lambda x: x)
    with pytest.raises(NotImplementedError, match="one device at a time"):
        minigrad.nn.DataParallel(minigrad.nn.Linear(2, 2), device_ids=[0, 1])
    net = minigrad.nn.DataParallel(minigrad.nn.Linear(2, 2), device_ids=[0])
    assert net.device_ids == [0] and net(minigrad.ones(1, 2)).shape == (1, 2)


# --------------------------------------------------------------------------- log10, nelement
# makemore's training loop (tests/test_pytorch_tutorials_conv.py): lossi.append(loss.log10()
# .item()) and sum(p.nelement() for p in parameters).


def test_log10_values_and_gradient_equal_pytorchs(real_torch) -> None:
    values = np.array([1e-3, 0.5, 1.0, 2.0, 10.0, 12345.0])
    x = minigrad.tensor(values, requires_grad=True)
    xt = real_torch.tensor(values, requires_grad=True)
    y, yt = x.log10(), xt.log10()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-15)
    (y * minigrad.tensor(values)).sum().backward()
    (yt * real_torch.tensor(values)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-15)
    ints = [1, 10, 1000]
    np.testing.assert_allclose(
        minigrad.log10(minigrad.tensor(ints)).numpy(), real_torch.log10(real_torch.tensor(ints))
    )


def test_log10_gradient_by_finite_differences_and_in_place() -> None:
    x = minigrad.tensor([0.3, 1.0, 7.0], requires_grad=True)
    assert minigrad.autograd.gradcheck(minigrad.log10, (x,))
    y = minigrad.tensor([10.0, 100.0, 0.1])
    assert y.log10_() is y and y.tolist() == pytest.approx([1.0, 2.0, -1.0])


def test_nelement_is_numel() -> None:
    assert minigrad.zeros(3, 4).nelement() == 12
    assert minigrad.tensor(5.0).nelement() == 1
    assert minigrad.nn.Linear(3, 2).weight.nelement() == 6
