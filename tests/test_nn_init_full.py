"""nn.init, all of it: the fills, the schemes, calculate_gain and the old names.

Deterministic fills (eye_, dirac_, constant_) and gains are compared with PyTorch where it
is installed; random fills are checked by their statistics (the bound, the std, QᵀQ = I,
values inside [a, b]) against the formulas, with or without PyTorch."""

import inspect
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import init

PUBLIC = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]
OLD_NAMES = [
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]
GAINS = [
    ("linear", None, 1.0),
    ("conv1d", None, 1.0),
    ("conv2d", None, 1.0),
    ("conv3d", None, 1.0),
    ("conv_transpose1d", None, 1.0),
    ("conv_transpose2d", None, 1.0),
    ("conv_transpose3d", None, 1.0),
    ("sigmoid", None, 1.0),
    ("tanh", None, 5 / 3),
    ("relu", None, math.sqrt(2)),
    ("relu", 7, math.sqrt(2)),  # param is ignored but by leaky_relu, as in PyTorch
    ("leaky_relu", None, math.sqrt(2 / (1 + 0.01**2))),
    ("leaky_relu", 0.2, math.sqrt(2 / (1 + 0.04))),
    ("leaky_relu", 0, math.sqrt(2)),
    ("leaky_relu", 3, math.sqrt(2 / 10)),
    ("selu", None, 0.75),
]


def weight(*shape: int, fill: float = 7.0) -> Parameter:
    return Parameter(np.full(shape, fill))


def seeded(seed: int = 0) -> None:
    mg.manual_seed(seed)


# =========================================================================== names


class TestNames:
    @pytest.mark.parametrize("name", PUBLIC + OLD_NAMES)
    def test_every_pytorch_name_is_there(self, name):
        assert callable(getattr(nn.init, name))
        assert name in init.__all__

    def test_a_missing_name_says_minigrad_lacks_it(self):
        with pytest.raises(AttributeError, match=r"minigrad does not have `torch\.nn\.init\.foo`"):
            nn.init.foo  # noqa: B018

    def test_a_misspelling_suggests_the_name(self):
        with pytest.raises(AttributeError, match=r"nearest existing spelling: `torch\.nn\.init"
                                                 r"\.xavier_uniform_`"):
            nn.init.xavier_unifrom_  # noqa: B018

    def test_private_names_get_a_plain_attribute_error(self):
        with pytest.raises(AttributeError, match="has no attribute '_nothing'"):
            nn.init._nothing  # noqa: B018

    @pytest.mark.parametrize("name", PUBLIC)
    def test_signatures_match_pytorch(self, real_torch, name):
        theirs = inspect.signature(getattr(real_torch.nn.init, name)).parameters
        mine = inspect.signature(getattr(init, name)).parameters
        assert list(mine) == list(theirs)
        for key, parameter in theirs.items():
            assert mine[key].default == parameter.default, key
            assert mine[key].kind == parameter.kind, key


# =========================================================================== gains


class TestCalculateGain:
    @pytest.mark.parametrize(("nonlinearity", "param", "gain"), GAINS)
    def test_values(self, nonlinearity, param, gain):
        assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain, rel=1e-15)

    @pytest.mark.parametrize(("nonlinearity", "param", "gain"), GAINS)
    def test_values_match_pytorch(self, real_torch, nonlinearity, param, gain):
        theirs = real_torch.nn.init.calculate_gain(nonlinearity, param)
        assert init.calculate_gain(nonlinearity, param) == pytest.approx(theirs, rel=1e-15)

    @pytest.mark.parametrize("name", ["swish", "identity", "gelu", 3, None])
    def test_unknown_names_are_a_value_error_listing_the_known_ones(self, name):
        with pytest.raises(ValueError, match="unsupported nonlinearity") as caught:
            init.calculate_gain(name)
        assert "leaky_relu" in str(caught.value) and "selu" in str(caught.value)

    @pytest.mark.parametrize("name", ["swish", "identity", 3])
    def test_unknown_names_fail_in_pytorch_too(self, real_torch, name):
        with pytest.raises(ValueError):
            real_torch.nn.init.calculate_gain(name)

    @pytest.mark.parametrize("param", [True, "0.2", [0.2]])
    def test_leaky_relu_needs_a_number(self, param):
        with pytest.raises(ValueError, match="negative slope, a number"):
            init.calculate_gain("leaky_relu", param)


# =========================================================================== fans


class TestFans:
    @pytest.mark.parametrize("shape", [(4, 3), (1, 7), (8, 3, 5, 5), (2, 6, 4), (3, 2, 1, 2, 2)])
    def test_match_pytorch(self, real_torch, shape):
        theirs = real_torch.nn.init._calculate_fan_in_and_fan_out(real_torch.empty(shape))
        assert init._calculate_fan_in_and_fan_out(mg.empty(*shape)) == theirs

    @pytest.mark.parametrize(
        "fill",
        [
            init.xavier_uniform_,
            init.xavier_normal_,
            init.kaiming_uniform_,
            init.kaiming_normal_,
        ],
    )
    @pytest.mark.parametrize("shape", [(5,), ()])
    def test_schemes_need_two_dimensions(self, fill, shape):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            fill(mg.empty(shape))

    @pytest.mark.parametrize("fill", [init.kaiming_uniform_, init.kaiming_normal_])
    def test_mode_is_checked_and_case_free(self, fill):
        with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'; got 'fan'"):
            fill(mg.empty(3, 4), mode="fan")
        with pytest.raises(ValueError, match="got 3"):
            fill(mg.empty(3, 4), mode=3)
        assert fill(mg.empty(3, 4), mode="FAN_OUT").shape == (3, 4)

    @pytest.mark.parametrize("fill", [init.kaiming_uniform_, init.kaiming_normal_])
    def test_kaiming_of_an_empty_weight_warns_and_does_nothing(self, fill):
        empty = mg.empty(0, 3)
        with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
            assert fill(empty) is empty

    def test_kaiming_rejects_unknown_nonlinearities(self):
        with pytest.raises(ValueError, match="unsupported nonlinearity 'bad'"):
            init.kaiming_normal_(mg.empty(3, 4), nonlinearity="bad")


# =========================================================================== schemes


def fan_of(shape: tuple, mode: str) -> int:
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive if mode == "fan_in" else shape[0] * receptive


class TestSchemes:
    @pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
    @pytest.mark.parametrize(
        ("nonlinearity", "a"), [("relu", 0.0), ("leaky_relu", 0.2), ("tanh", 0.0), ("selu", 0.0)]
    )
    def test_kaiming_normal_std(self, mode, nonlinearity, a):
        seeded(1)
        shape = (300, 40, 3, 3)
        filled = init.kaiming_normal_(mg.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity)
        std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan_of(shape, mode))
        assert np.std(filled.data) == pytest.approx(std, rel=0.01)
        assert abs(filled.data.mean()) < 0.01 * std

    @pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
    def test_kaiming_uniform_bound_and_std(self, mode):
        seeded(2)
        shape = (200, 300)
        filled = init.kaiming_uniform_(mg.empty(*shape), mode=mode, nonlinearity="relu")
        bound = math.sqrt(2) * math.sqrt(3 / fan_of(shape, mode))
        assert np.abs(filled.data).max() <= bound
        assert np.abs(filled.data).max() > 0.999 * bound
        assert np.std(filled.data) == pytest.approx(bound / math.sqrt(3), rel=0.01)

    @pytest.mark.parametrize("gain", [1.0, 2.5])
    def test_xavier_normal_std(self, gain):
        seeded(3)
        filled = init.xavier_normal_(mg.empty(120, 80, 3), gain=gain)
        std = gain * math.sqrt(2 / (80 * 3 + 120 * 3))
        assert np.std(filled.data) == pytest.approx(std, rel=0.01)

    @pytest.mark.parametrize("gain", [1.0, 0.5])
    def test_xavier_uniform_bound(self, gain):
        seeded(4)
        filled = init.xavier_uniform_(mg.empty(200, 300), gain=gain)
        bound = gain * math.sqrt(6 / 500)
        assert np.abs(filled.data).max() <= bound
        assert np.abs(filled.data).max() > 0.999 * bound

    @pytest.mark.parametrize(
        "fill",
        [
            init.xavier_uniform_,
            init.xavier_normal_,
            init.kaiming_uniform_,
            init.kaiming_normal_,
            init.orthogonal_,
            init.uniform_,
            init.normal_,
            init.trunc_normal_,
        ],
    )
    def test_random_fills_repeat_with_manual_seed(self, fill):
        seeded(5)
        first = fill(mg.empty(6, 4)).data.copy()
        second = fill(mg.empty(6, 4)).data.copy()
        seeded(5)
        np.testing.assert_array_equal(fill(mg.empty(6, 4)).data, first)
        assert not np.array_equal(first, second)


# =========================================================================== orthogonal


def assert_semi_orthogonal(values: np.ndarray, gain: float = 1.0) -> None:
    rows = values.shape[0]
    flat = values.reshape(rows, -1)
    if rows <= flat.shape[1]:
        product = flat @ flat.T  # orthonormal rows
    else:
        product = flat.T @ flat  # orthonormal columns
    np.testing.assert_allclose(product, gain**2 * np.eye(product.shape[0]), atol=1e-12)


class TestOrthogonal:
    @pytest.mark.parametrize("shape", [(5, 5), (3, 8), (8, 3), (4, 2, 3), (2, 3, 2, 2), (1, 6)])
    @pytest.mark.parametrize("gain", [1.0, 3.0])
    def test_semi_orthogonal(self, shape, gain):
        seeded(6)
        filled = init.orthogonal_(mg.empty(*shape), gain=gain)
        assert filled.shape == shape
        assert_semi_orthogonal(filled.data, gain)

    @settings(max_examples=30, deadline=None)
    @given(rows=st.integers(1, 9), cols=st.integers(1, 9), kernel=st.integers(1, 3))
    def test_any_shape_is_semi_orthogonal(self, rows, cols, kernel):
        filled = init.orthogonal_(mg.empty(rows, cols, kernel))
        assert_semi_orthogonal(filled.data)

    def test_pytorch_fills_the_same_shapes_orthogonally_too(self, real_torch):
        for shape in [(3, 8), (8, 3), (4, 2, 3)]:
            empty = real_torch.empty(shape, dtype=real_torch.float64)
            theirs = real_torch.nn.init.orthogonal_(empty)
            assert_semi_orthogonal(theirs.numpy())

    def test_float32_is_orthogonal_to_float32_precision(self):
        filled = init.orthogonal_(mg.empty(6, 6, dtype=mg.float32))
        assert filled.dtype == np.float32
        np.testing.assert_allclose(filled.data @ filled.data.T, np.eye(6), atol=1e-5)

    def test_errors_and_empty(self):
        with pytest.raises(ValueError, match="2 or more dimensions are supported; got shape"):
            init.orthogonal_(mg.empty(3))
        empty = mg.empty(0, 3)
        assert init.orthogonal_(empty) is empty


# =========================================================================== trunc_normal_


def truncated_moments(mean: float, std: float, a: float, b: float) -> tuple[float, float]:
    """Mean and std of N(mean, std²) conditioned on [a, b] (the textbook formulas)."""
    alpha, beta = (a - mean) / std, (b - mean) / std

    def pdf(z: float) -> float:
        return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

    def cdf(z: float) -> float:
        return 0.5 * (1 + math.erf(z / math.sqrt(2)))

    mass = cdf(beta) - cdf(alpha)
    shift = (pdf(alpha) - pdf(beta)) / mass
    variance = 1 + (alpha * pdf(alpha) - beta * pdf(beta)) / mass - shift**2
    return mean + std * shift, std * math.sqrt(variance)


class TestTruncNormal:
    @pytest.mark.parametrize(
        ("mean", "std", "a", "b"),
        [
            (0.0, 1.0, -2.0, 2.0),  # the default: most of the mass inside (redraws)
            (0.0, 1.0, -0.5, 0.5),
            (1.0, 0.02, 0.97, 1.05),
            (0.0, 1.0, 1.0, 1.5),  # little mass inside (accepted uniforms)
            (0.0, 1.0, 2.5, 4.0),
        ],
    )
    @pytest.mark.filterwarnings("ignore:mean is more than 2 std")
    def test_inside_the_bounds_with_the_truncated_moments(self, mean, std, a, b):
        seeded(7)
        filled = init.trunc_normal_(mg.empty(200, 200), mean=mean, std=std, a=a, b=b)
        assert filled.data.min() >= a and filled.data.max() <= b
        expected_mean, expected_std = truncated_moments(mean, std, a, b)
        assert filled.data.mean() == pytest.approx(expected_mean, abs=0.01 * expected_std)
        assert np.std(filled.data) == pytest.approx(expected_std, rel=0.02)

    @settings(max_examples=25, deadline=None)
    @given(
        mean=st.floats(-3, 3),
        std=st.floats(0.1, 3),
        a=st.floats(-4, 4),
        width=st.floats(0.05, 5),
    )
    def test_always_inside_the_bounds(self, mean, std, a, width):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # means far from [a, b] warn, as in PyTorch
            filled = init.trunc_normal_(mg.empty(500), mean, std, a, a + width)
        assert filled.data.min() >= a and filled.data.max() <= a + width

    def test_a_mean_far_from_the_interval_warns(self):
        with pytest.warns(UserWarning, match="more than 2 std from"):
            init.trunc_normal_(mg.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)

    def test_errors(self):
        with pytest.raises(RuntimeError, match="a <= b"):
            init.trunc_normal_(mg.empty(3), a=2.0, b=-2.0)
        with pytest.raises(ValueError, match="std > 0; got std=0.0"):
            init.trunc_normal_(mg.empty(3), std=0.0)
        with pytest.raises(NotImplementedError, match="random floats in dtype int64"):
            init.trunc_normal_(mg.zeros(3, dtype=mg.int64))


# =========================================================================== deterministic fills


class TestEyeAndDirac:
    @pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
    def test_eye(self, shape):
        filled = init.eye_(weight(*shape))
        np.testing.assert_array_equal(filled.data, np.eye(*shape))

    @pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
    def test_eye_matches_pytorch(self, real_torch, shape):
        theirs = real_torch.nn.init.eye_(real_torch.empty(shape, dtype=real_torch.float64))
        np.testing.assert_array_equal(init.eye_(mg.empty(*shape)).data, theirs.numpy())

    @pytest.mark.parametrize(
        ("shape", "groups"),
        [
            ((4, 2, 3), 1),
            ((4, 2, 3), 2),
            ((3, 5, 3, 3), 1),
            ((6, 2, 2, 4), 3),
            ((2, 2, 3, 3, 3), 1),
        ],
    )
    def test_dirac_matches_pytorch(self, real_torch, shape, groups):
        empty = real_torch.empty(shape, dtype=real_torch.float64)
        theirs = real_torch.nn.init.dirac_(empty, groups)
        np.testing.assert_array_equal(init.dirac_(mg.empty(*shape), groups).data, theirs.numpy())

    def test_dirac_makes_a_convolution_the_identity(self):
        seeded(8)
        conv = nn.Conv2d(3, 3, 3, padding=1, bias=False)
        init.dirac_(conv.weight)
        images = mg.randn(2, 3, 5, 5)
        np.testing.assert_allclose(conv(images).data, images.data, atol=1e-12)

    def test_dirac_groups(self):
        filled = init.dirac_(mg.empty(4, 2, 3), groups=2).data
        for out_channel, in_channel in [(0, 0), (1, 1), (2, 0), (3, 1)]:
            assert filled[out_channel, in_channel, 1] == 1.0
        assert filled.sum() == 4

    def test_errors(self):
        with pytest.raises(ValueError, match="only Variables with 2 dimensions"):
            init.eye_(mg.empty(3))
        with pytest.raises(ValueError, match="3 or 4 or 5 dimensions"):
            init.dirac_(mg.empty(3, 3))
        with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
            init.dirac_(mg.empty(4, 3, 3), groups=3)
        with pytest.raises(ValueError, match="groups must be a positive int"):
            init.dirac_(mg.empty(4, 3, 3), groups=0)


class TestConstantAndSparse:
    def test_constant_zeros_ones(self):
        np.testing.assert_array_equal(init.constant_(weight(2, 3), 0.5).data, np.full((2, 3), 0.5))
        np.testing.assert_array_equal(init.zeros_(weight(4)).data, np.zeros(4))
        np.testing.assert_array_equal(init.ones_(weight(2, 2)).data, np.ones((2, 2)))
        integers = init.constant_(mg.zeros(3, dtype=mg.int64), 4)
        assert integers.dtype == np.int64 and integers.tolist() == [4, 4, 4]

    def test_constant_needs_a_number(self):
        with pytest.raises(TypeError, match="val must be a number; got str"):
            init.constant_(mg.empty(2), "a")

    @pytest.mark.parametrize(("rows", "sparsity"), [(10, 0.3), (7, 0.5), (5, 0.0), (4, 1.0)])
    def test_sparse_zeroes_the_fraction_of_each_column(self, rows, sparsity):
        seeded(9)
        filled = init.sparse_(mg.empty(rows, 50), sparsity, std=0.5).data
        zeros = (filled == 0).sum(axis=0)
        assert np.all(zeros == math.ceil(sparsity * rows))

    def test_sparse_values_have_the_std(self):
        seeded(10)
        filled = init.sparse_(mg.empty(400, 400), 0.1, std=0.02).data
        assert np.std(filled[filled != 0]) == pytest.approx(0.02, rel=0.02)

    def test_sparse_errors(self):
        with pytest.raises(ValueError, match="only Variables with 2 dimensions"):
            init.sparse_(mg.empty(3), 0.1)
        with pytest.raises(ValueError, match=r"in \[0, 1\]; got 1.5"):
            init.sparse_(mg.empty(3, 3), 1.5)


# =========================================================================== how fills behave


ALL_FILLS = {
    "uniform_": lambda t: init.uniform_(t, -1, 1),
    "normal_": lambda t: init.normal_(t, 0, 2),
    "trunc_normal_": lambda t: init.trunc_normal_(t, std=0.02),
    "constant_": lambda t: init.constant_(t, 0.3),
    "zeros_": init.zeros_,
    "ones_": init.ones_,
    "eye_": init.eye_,
    "xavier_uniform_": init.xavier_uniform_,
    "xavier_normal_": init.xavier_normal_,
    "kaiming_uniform_": init.kaiming_uniform_,
    "kaiming_normal_": init.kaiming_normal_,
    "orthogonal_": init.orthogonal_,
    "sparse_": lambda t: init.sparse_(t, 0.5),
}


GENERATOR_CALLS = [
    lambda g: init.uniform_(mg.empty(3), generator=g),
    lambda g: init.normal_(mg.empty(3), generator=g),
    lambda g: init.trunc_normal_(mg.empty(3), generator=g),
    lambda g: init.xavier_uniform_(mg.empty(3, 3), generator=g),
    lambda g: init.xavier_normal_(mg.empty(3, 3), generator=g),
    lambda g: init.kaiming_uniform_(mg.empty(3, 3), generator=g),
    lambda g: init.kaiming_normal_(mg.empty(3, 3), generator=g),
    lambda g: init.orthogonal_(mg.empty(3, 3), generator=g),
    lambda g: init.sparse_(mg.empty(3, 3), 0.5, generator=g),
]


class TestFillsBehave:
    @pytest.mark.parametrize("name", sorted(ALL_FILLS))
    def test_fills_a_parameter_in_place_and_keeps_it_a_leaf(self, name):
        param = weight(3, 4)
        result = ALL_FILLS[name](param)
        assert result is param
        assert not np.any(param.data == 7.0)
        assert param.is_leaf and param.requires_grad and param.grad_fn is None
        (param * param).sum().backward()
        np.testing.assert_allclose(param.grad.data, 2 * param.data)

    @pytest.mark.parametrize("name", sorted(ALL_FILLS))
    def test_keeps_the_dtype(self, name):
        param = Parameter(np.full((3, 4), 7.0, dtype=np.float32))
        assert ALL_FILLS[name](param).dtype == np.float32

    @pytest.mark.parametrize(
        "name", ["uniform_", "normal_", "xavier_uniform_", "kaiming_normal_", "orthogonal_"]
    )
    def test_random_fills_refuse_integer_variables_as_pytorch(self, name):
        with pytest.raises(NotImplementedError, match="random floats in dtype int64"):
            ALL_FILLS[name](mg.zeros(3, 4, dtype=mg.int64))

    def test_non_variables_are_a_type_error(self):
        with pytest.raises(TypeError, match="numeric Variable; got list"):
            init.eye_([[0.0, 0.0], [0.0, 0.0]])  # an array (x.data) is filled in place
        with pytest.raises(TypeError, match="numeric Variable; got a text Variable"):
            init.orthogonal_(Variable("text"))

    def test_uniform_and_normal_errors_are_runtime_errors_as_pytorch(self):
        with pytest.raises(RuntimeError, match="a <= b"):
            init.uniform_(mg.empty(2), 1.0, 0.0)
        with pytest.raises(RuntimeError, match="std >= 0"):
            init.normal_(mg.empty(2), 0.0, -1.0)

    @pytest.mark.parametrize("call", GENERATOR_CALLS)
    def test_generator_none_is_the_global_generator(self, call):
        seeded(11)
        first = call(None).data.copy()
        seeded(11)
        np.testing.assert_array_equal(call(None).data, first)

    @pytest.mark.parametrize("call", GENERATOR_CALLS)
    def test_a_generator_gives_its_own_repeatable_stream(self, call):
        first = call(mg.Generator().manual_seed(3)).data.copy()
        seeded(11)
        np.testing.assert_array_equal(call(mg.Generator().manual_seed(3)).data, first)
        # the global stream is untouched by draws from the Generator
        seeded(12)
        expected = mg.rand(4).data
        seeded(12)
        call(mg.Generator().manual_seed(3))
        np.testing.assert_array_equal(mg.rand(4).data, expected)

    def test_generator_errors(self):
        with pytest.raises(TypeError, match="generator must be a minigrad.Generator"):
            init.normal_(mg.empty(3), generator=np.random.default_rng(0))
        with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator"):
            init.uniform_(mg.empty(3), generator=mg.Generator(device="cuda"))

    def test_deprecated_old_names_warn_and_fill(self):
        with pytest.warns(FutureWarning, match=r"`nn\.init\.xavier_uniform` is now deprecated"):
            filled = init.xavier_uniform(mg.empty(3, 3))
        assert np.abs(filled.data).max() <= math.sqrt(6 / 6)
        with pytest.warns(FutureWarning, match="in favor of `nn.init.constant_`"):
            np.testing.assert_array_equal(init.constant(mg.empty(2), 2.0).data, [2.0, 2.0])

    @pytest.mark.parametrize("name", OLD_NAMES)
    def test_old_names_warn_in_pytorch_too(self, real_torch, name):
        assert hasattr(real_torch.nn.init, name)

    def test_linear_and_conv_initialisation_by_apply(self):
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

        def initialise(module):
            if isinstance(module, nn.Linear):
                init.orthogonal_(module.weight, gain=init.calculate_gain("relu"))
                init.zeros_(module.bias)

        model.apply(initialise)
        assert_semi_orthogonal(model[0].weight.data, math.sqrt(2))
        assert np.all(model[2].bias.data == 0)


# =========================================================================== on "cuda"


@pytest.mark.parametrize("name", sorted(ALL_FILLS))
def test_fills_a_cuda_variable_where_it_lives(name):
    """On "cuda" (Numba's simulator in the tests) the values are drawn on the host and
    copied over; the Variable stays on its device."""
    param = weight(3, 4).to("cuda")
    ALL_FILLS[name](param)
    assert param.device == "cuda"
    assert not np.any(param.cpu().data == 7.0)


def test_a_generator_must_be_for_the_variables_device():
    on_gpu = weight(3, 4).to("cuda")
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        init.normal_(on_gpu, generator=mg.Generator())
    init.normal_(on_gpu, generator=mg.Generator(device="cuda"))
