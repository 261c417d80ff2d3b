"""nn.PReLU and F.prelu: values and gradients against PyTorch (float64), gradcheck for one
slope and per-channel slopes, and PyTorch's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from minigrad.autograd import gradcheck
from minigrad.core.variable import Variable
from minigrad.nn import functional as F


def data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def expected(x: np.ndarray, slopes: np.ndarray) -> np.ndarray:
    """x where x > 0, else slope·x; slopes broadcast on dim 1 (or one for all)."""
    if slopes.size == 1:
        return np.where(x > 0, x, slopes.reshape(()) * x)
    shape = [1] * x.ndim
    shape[1] = slopes.size
    return np.where(x > 0, x, slopes.reshape(shape) * x)


class TestFunctional:
    @pytest.mark.parametrize(
        ("shape", "count"), [((4,), 1), ((2, 3), 3), ((2, 3, 5), 3), ((2, 4, 3, 3), 4), ((2, 3), 1)]
    )
    def test_values(self, shape, count):
        x, slopes = data(*shape), data(count, seed=1)
        np.testing.assert_allclose(
            F.prelu(Variable(x), Variable(slopes)).data, expected(x, slopes), rtol=1e-15
        )

    @pytest.mark.parametrize(("shape", "count"), [((5,), 1), ((3, 2), 2), ((2, 3, 4), 3)])
    def test_gradcheck(self, shape, count):
        x = Variable(data(*shape), requires_grad=True)
        slopes = Variable(data(count, seed=1), requires_grad=True)
        assert gradcheck(F.prelu, (x, slopes))

    def test_gradients_by_hand(self):
        x = Variable(np.array([[-2.0, 3.0], [0.0, -1.0]]), requires_grad=True)
        slopes = Variable(np.array([0.5, 0.1]), requires_grad=True)
        F.prelu(x, slopes).sum().backward()
        # d/dx: 1 where x > 0, the channel's slope elsewhere (x = 0 included, as PyTorch)
        np.testing.assert_allclose(x.grad.data, [[0.5, 1.0], [0.5, 0.1]])
        # d/da: the sum of x over the channel where x <= 0
        np.testing.assert_allclose(slopes.grad.data, [-2.0, -1.0])

    def test_a_zero_dim_input_stays_zero_dim(self):
        assert F.prelu(mg.tensor(-2.0), mg.tensor([0.25])).shape == ()
        assert F.prelu(mg.tensor(-2.0), mg.tensor([0.25])).item() == -0.5

    @settings(max_examples=20, deadline=None)
    @given(
        batch=st.integers(1, 3),
        channels=st.integers(1, 4),
        width=st.integers(1, 4),
        per_channel=st.booleans(),
    )
    def test_gradcheck_any_shape(self, batch, channels, width, per_channel):
        x = Variable(data(batch, channels, width), requires_grad=True)
        slopes = Variable(data(channels if per_channel else 1, seed=2), requires_grad=True)
        assert gradcheck(F.prelu, (x, slopes))

    @pytest.mark.parametrize(("shape", "count"), [((2, 3, 4), 3), ((5,), 1), ((2, 3), 1)])
    def test_matches_pytorch(self, real_torch, shape, count):
        x, slopes = data(*shape), data(count, seed=1)
        mine_x, mine_a = Variable(x, requires_grad=True), Variable(slopes, requires_grad=True)
        their_x = real_torch.tensor(x, requires_grad=True)
        their_a = real_torch.tensor(slopes, requires_grad=True)
        mine = F.prelu(mine_x, mine_a)
        theirs = real_torch.nn.functional.prelu(their_x, their_a)
        np.testing.assert_allclose(mine.data, theirs.detach().numpy(), rtol=1e-15)
        (mine**2).sum().backward()
        (theirs**2).sum().backward()
        np.testing.assert_allclose(mine_x.grad.data, their_x.grad.numpy(), rtol=1e-13)
        np.testing.assert_allclose(mine_a.grad.data, their_a.grad.numpy(), rtol=1e-13)

    def test_errors(self):
        x = mg.randn(2, 3, 4)
        with pytest.raises(RuntimeError, match="parameter numbers = 4 and channel size = 3"):
            F.prelu(x, mg.ones(4))
        with pytest.raises(RuntimeError, match="a scalar or 1D tensor, but got: ndim = 2"):
            F.prelu(x, mg.ones(1, 3))
        with pytest.raises(TypeError, match="'weight' must be a numeric Variable, not float"):
            F.prelu(x, 0.25)
        with pytest.raises(NotImplementedError, match="dtype int64"):
            F.prelu(mg.arange(6), mg.ones(1))

    def test_errors_match_pytorchs_classes(self, real_torch):
        x = real_torch.randn(2, 3, 4)
        with pytest.raises(RuntimeError):
            real_torch.nn.functional.prelu(x, real_torch.ones(4))
        with pytest.raises(TypeError):
            real_torch.nn.functional.prelu(x, 0.25)


class TestModule:
    def test_defaults_and_repr(self):
        layer = nn.PReLU()
        assert layer.weight.shape == (1,) and layer.weight.data[0] == 0.25
        assert repr(layer) == "PReLU(num_parameters=1)"
        per_channel = nn.PReLU(3, init=0.1)
        np.testing.assert_array_equal(per_channel.weight.data, [0.1, 0.1, 0.1])
        assert [name for name, _ in per_channel.named_parameters()] == ["weight"]

    def test_dtype(self):
        assert nn.PReLU(2, dtype=mg.float32).weight.dtype == np.float32

    def test_learns_its_slope(self):
        layer = nn.PReLU(2)
        x = Variable(np.array([[-1.0, -2.0], [3.0, -4.0]]))
        layer(x).sum().backward()
        np.testing.assert_allclose(layer.weight.grad.data, [-1.0, -6.0])

    def test_in_a_convolutional_model(self):
        model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.PReLU(4))
        y = model(mg.randn(2, 1, 5, 5))
        assert y.shape == (2, 4, 3, 3)
        y.sum().backward()
        assert model[1].weight.grad.shape == (4,)

    def test_bad_sizes(self):
        with pytest.raises(TypeError, match="num_parameters must be an int"):
            nn.PReLU(2.5)
        with pytest.raises(ValueError, match="num_parameters must be >= 0"):
            nn.PReLU(-1)

    def test_matches_pytorch(self, real_torch):
        theirs = real_torch.nn.PReLU(3, init=0.3).double()
        mine = nn.PReLU(3, init=0.3)
        assert repr(mine) == repr(theirs)
        x = data(2, 3, 4)
        their_out = theirs(real_torch.tensor(x))
        np.testing.assert_allclose(mine(Variable(x)).data, their_out.detach().numpy())
        assert list(mine.state_dict()) == list(theirs.state_dict())


def test_on_cuda_the_same_values_and_gradients():
    """On "cuda" (Numba's simulator in the tests) as on the CPU."""
    x = data(2, 3, 4)
    layer = nn.PReLU(3, init=0.2)
    on_cpu_x = Variable(x, requires_grad=True)
    layer(on_cpu_x).sum().backward()
    expected_grad = on_cpu_x.grad.data
    layer.zero_grad()
    layer.cuda()
    on_gpu_x = Variable(x).to("cuda").requires_grad_()
    out = layer(on_gpu_x)
    assert out.device == "cuda"
    out.sum().backward()
    np.testing.assert_allclose(on_gpu_x.grad.cpu().data, expected_grad)
    assert layer.weight.grad.device == "cuda"
