"""`.data` as PyTorch code uses it (issue 35, item 4): the idioms of older tutorials act on
the numbers, record nothing and give PyTorch's values (checked against torch where it is
installed); a Function's forward still computes on x.data as a NumPy array."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import minigrad
from minigrad.core.data_array import DataArray

LR = 0.1


def _loss_and_grad(torch_module, values):
    """A parameter with .grad = d/dp sum(p**2 * [1, 2, 3]) filled in."""
    p = torch_module.nn.Parameter(torch_module.tensor(values, dtype=torch_module.float64))
    (p ** 2 * torch_module.tensor([1.0, 2.0, 3.0], dtype=torch_module.float64)).sum().backward()
    return p


UPDATES = {
    "p.data += -lr * p.grad": lambda p: p.data.__iadd__(-LR * p.grad),
    "p.data -= lr * p.grad": lambda p: p.data.__isub__(LR * p.grad),
    "p.data.sub_(lr * p.grad)": lambda p: p.data.sub_(LR * p.grad),
    "p.data.add_(p.grad, alpha=-lr)": lambda p: p.data.add_(p.grad, alpha=-LR),
    "p.data.sub_(p.grad.data * lr)": lambda p: p.data.sub_(p.grad.data * LR),
    "p.data.mul_(0.5).add_(1.0)": lambda p: p.data.mul_(0.5).add_(1.0),
    "p.data.clamp_(-0.5, 0.5)": lambda p: p.data.clamp_(-0.5, 0.5),
    "p.data.fill_(3.0)": lambda p: p.data.fill_(3.0),
    "p.data.copy_(p.grad)": lambda p: p.data.copy_(p.grad),
    "p.data.zero_()": lambda p: p.data.zero_(),
}


@pytest.mark.parametrize("spelling", sorted(UPDATES))
def test_in_place_updates_write_the_numbers_and_record_nothing(spelling: str) -> None:
    p = _loss_and_grad(minigrad, [0.3, -1.2, 2.0])
    array, version = p._data, p._version
    result = UPDATES[spelling](p)
    assert p._data is array, "the update must write into p's own array"
    assert p.grad_fn is None and p.is_leaf and p.requires_grad
    assert isinstance(result, np.ndarray)
    assert p._version == version  # as PyTorch: .data's changes are not seen by autograd


@pytest.mark.parametrize("spelling", sorted(UPDATES))
def test_in_place_updates_match_pytorch(real_torch, spelling: str) -> None:
    ours = _loss_and_grad(minigrad, [0.3, -1.2, 2.0])
    theirs = _loss_and_grad(real_torch, [0.3, -1.2, 2.0])
    UPDATES[spelling](ours)
    UPDATES[spelling](theirs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-15)


def test_grad_data_zero_keeps_the_grad_variable() -> None:
    p = _loss_and_grad(minigrad, [1.0, 2.0, 3.0])
    grad = p.grad
    p.grad.data.zero_()
    assert p.grad is grad
    np.testing.assert_array_equal(p.grad.numpy(), np.zeros(3))


def test_random_initialisers_fill_the_parameter_reproducibly() -> None:
    def initialised(seed: int) -> np.ndarray:
        minigrad.manual_seed(seed)
        layer = minigrad.nn.Linear(200, 100)
        array = layer.weight._data
        layer.weight.data.normal_(0, 0.02)
        layer.bias.data.uniform_(-0.1, 0.1)
        assert layer.weight._data is array
        assert -0.1 <= layer.bias.data.min() and layer.bias.data.max() <= 0.1
        return layer.weight.detach().numpy().copy()

    first = initialised(3)
    np.testing.assert_array_equal(first, initialised(3))
    assert first.std() == pytest.approx(0.02, rel=0.02)
    assert abs(first.mean()) < 0.001


def test_norm_and_numpy_give_pytorch_values(real_torch) -> None:
    rng = np.random.default_rng(0)
    values = rng.standard_normal((4, 5))
    ours = minigrad.tensor(values, requires_grad=True) * 2
    theirs = real_torch.tensor(values, requires_grad=True) * 2
    norm = ours.data.norm()
    assert isinstance(norm, minigrad.Variable) and not norm.requires_grad
    assert norm.item() == pytest.approx(theirs.data.norm().item(), rel=1e-15)
    np.testing.assert_allclose(ours.data.norm(dim=1).numpy(), theirs.data.norm(dim=1).numpy())
    as_array = ours.data.numpy()
    assert type(as_array) is np.ndarray and np.shares_memory(as_array, ours._data)


def test_pytorch_keywords_take_pytorchs_meaning_and_numpy_calls_numpys(real_torch) -> None:
    values = np.arange(12.0).reshape(3, 4) % 5
    ours, theirs = minigrad.tensor(values), real_torch.tensor(values)
    values_and_indices = ours.data.max(dim=1)
    expected = theirs.data.max(dim=1)
    np.testing.assert_array_equal(values_and_indices[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(values_and_indices[1].numpy(), expected[1].numpy())
    np.testing.assert_array_equal(ours.data.sum(dim=0, keepdim=True).numpy(),
                                  theirs.data.sum(dim=0, keepdim=True).numpy())
    np.testing.assert_array_equal(ours.data.view(-1).numpy(), theirs.data.view(-1).numpy())
    # The plain spellings old PyTorch code uses mean PyTorch's...
    np.testing.assert_array_equal(ours.data.max(1)[1].numpy(), theirs.data.max(1)[1].numpy())
    assert float(ours.data.std()) == pytest.approx(theirs.data.std().item(), rel=1e-12)
    np.testing.assert_array_equal(ours.data.sort(1)[0].numpy(), theirs.data.sort(1)[0].numpy())
    np.testing.assert_array_equal(ours.data.transpose(0, 1).numpy(),
                                  theirs.data.transpose(0, 1).numpy())
    np.testing.assert_array_equal(ours.data.repeat(2, 1).numpy(), theirs.data.repeat(2, 1).numpy())
    np.testing.assert_array_equal(ours.data.numpy(), values)  # sort(1) sorted nothing in place
    # ... and NumPy's functions (which call the methods with NumPy's keywords) NumPy's: what
    # Functions' forwards rely on.
    np.testing.assert_array_equal(np.max(ours.data, 1), values.max(1))
    assert np.std(ours.data) == pytest.approx(values.std(), rel=1e-15)
    np.testing.assert_array_equal(np.sort(ours.data, 1), np.sort(values, 1))
    np.testing.assert_array_equal(ours.data.sum(0), values.sum(0))
    assert ours.data.view(np.float64).shape == (3, 4)


def test_forward_computes_on_plain_arrays_as_the_lessons_teach() -> None:
    class Scale(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.data[1:] * 10  # a DataArray slice times a number

        @staticmethod
        def backward(ctx, grad):
            full = np.zeros(3)
            full[1:] = grad.data * 10
            return full

    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Scale.apply(x)
    assert type(y._data) is np.ndarray  # the engine's own type, never the view
    assert type(x.data * 2) is np.ndarray and type(np.exp(x.data)) is np.ndarray
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 10.0, 10.0])
    assert type(minigrad.Variable(x.data)._data) is np.ndarray


def test_data_is_one_stable_view_of_the_variables_array() -> None:
    x = minigrad.tensor([1.0, 2.0, 3.0])
    assert x.data is x.data and isinstance(x.data, DataArray)
    assert x.data.base is x._data
    x.data[0] = 5.0
    assert x[0].item() == 5.0
    x.data = np.zeros(2)
    assert x.shape == (2,) and x.data.base is x._data
    assert repr(x.data) == "array([0., 0.])"
    assert type(pickle.loads(pickle.dumps(x.data))) is np.ndarray
    text = minigrad.Variable("some text", role="a prompt")
    assert text.data == "some text"


def test_a_method_that_makes_a_new_value_leaves_x_alone() -> None:
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    doubled = x.data.mul(2)
    assert isinstance(doubled, minigrad.Variable) and not doubled.requires_grad
    np.testing.assert_array_equal(doubled.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0, 3.0])


def test_a_name_neither_has_says_so() -> None:
    x = minigrad.tensor([1.0, 2.0])
    with pytest.raises(AttributeError, match="no attribute 'zeroo_'.* Check the spelling"):
        x.data.zeroo_()


def test_the_blitz_hand_written_update_trains(real_torch) -> None:
    """The 60-minute blitz's `f.data.sub_(f.grad.data * learning_rate)` on a small net."""
    results = []
    for library in (minigrad, real_torch):
        library.manual_seed(0)
        rng = np.random.default_rng(0)
        net = library.nn.Sequential(library.nn.Linear(4, 8), library.nn.Tanh(),
                                    library.nn.Linear(8, 1)).double()
        with library.no_grad():
            for p in net.parameters():
                p.copy_(library.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
        x = library.tensor(rng.standard_normal((16, 4)))
        target = library.tensor(rng.standard_normal((16, 1)))
        for _ in range(5):
            net.zero_grad()
            loss = ((net(x) - target) ** 2).mean()
            loss.backward()
            for f in net.parameters():
                f.data.sub_(f.grad.data * 0.1)
        results.append(loss.item())
    assert results[0] == pytest.approx(results[1], rel=1e-12)


def test_pickling_and_deepcopy_write_the_numbers_once() -> None:
    x = minigrad.randn(1000, requires_grad=True)
    untouched = len(pickle.dumps(x))
    x.data  # noqa: B018 (reading .data makes the view the Variable keeps)
    assert len(pickle.dumps(x)) < untouched + 100
    copied = copy.deepcopy(x)
    assert copied._data is not x._data
    np.testing.assert_array_equal(copied.data, x.data)
    assert copied.data.base is copied._data
    piece = pickle.loads(pickle.dumps(x.data[2:5]))
    np.testing.assert_array_equal(piece, x.detach().numpy()[2:5])


def test_attributes_pytorch_reads_on_data_are_a_detached_variables() -> None:
    p = minigrad.nn.Parameter(minigrad.ones(3))
    assert p.data.device == "cpu" and p.data.requires_grad is False and p.data.is_leaf
    assert p.data.grad is None and p.data.dtype == np.float64


def test_numpy_functions_on_data_give_plain_arrays() -> None:
    x = minigrad.randn(3, 4)
    assert type(np.zeros_like(x.data)) is np.ndarray
    assert type(np.concatenate([x.data, x.data])) is np.ndarray
    assert all(type(part) is np.ndarray for part in np.split(x.data, 2, axis=1))
    seed = np.ones_like(x.data)
    y = (x * 2).requires_grad_()
    (grad,) = minigrad.autograd.grad(y, y, seed)
    assert type(grad._data) is np.ndarray


def test_data_times_a_variable_is_the_variables_operation() -> None:
    """As PyTorch's `x.data * v`: a result that carries v's graph (x.data a constant)."""
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = minigrad.tensor([4.0, 5.0, 6.0], requires_grad=True)
    product = x.data * v
    assert isinstance(product, minigrad.Variable) and product.requires_grad
    product.sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [1.0, 2.0, 3.0])
    assert x.grad is None


def test_functions_take_data_where_pytorch_takes_a_tensor(real_torch) -> None:
    """zeros_like(p.data) (old optimizers' state), F.softmax(x.data), torch.cat of .data."""
    values = np.arange(6.0).reshape(2, 3)
    for library in (minigrad, real_torch):
        p = library.nn.Parameter(library.tensor(values))
        assert library.zeros_like(p.data).shape == (2, 3)
        softmax = library.nn.functional.softmax(p.data, dim=1)
        np.testing.assert_allclose(np.asarray(softmax.detach().numpy()).sum(axis=1), [1.0, 1.0])
        assert tuple(library.cat([p.data, p.data]).shape) == (4, 3)


def test_a_method_on_data_with_a_variable_argument_records_it(real_torch) -> None:
    grads = []
    for library in (minigrad, real_torch):
        x = library.tensor([1.0, 2.0, 3.0], requires_grad=True, dtype=library.float64)
        v = library.tensor([4.0, 5.0, 6.0], requires_grad=True, dtype=library.float64)
        (x.data.mul(v) + v).sum().backward()
        grads.append(v.grad.numpy())
        assert x.grad is None
    np.testing.assert_array_equal(grads[0], grads[1])
