"""The nn gaps PyTorch's tutorials hit: Dropout2d on other shapes, nn.init on `x.data`,
bias=None, KLDivLoss, CosineSimilarity, PairwiseDistance, F.interpolate / nn.Upsample,
F.pad's reflect / replicate / circular modes and Embedding(max_norm=...).

Values and gradients are compared with PyTorch where it is installed (float64, tight
tolerances); gradients are checked with gradcheck in float64, and the errors' classes and
messages, and properties (NumPy's own np.pad and np.repeat as references) without it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from minigrad.autograd import gradcheck
from minigrad.nn import functional as F
from minigrad.nn import init

RNG = np.random.default_rng(35)


def leaf(shape: tuple[int, ...], seed: int = 0) -> mg.Variable:
    values = np.random.default_rng(seed).standard_normal(shape)
    return mg.tensor(values, requires_grad=True)


def torch_leaf(torch: Any, variable: mg.Variable) -> Any:
    return torch.tensor(variable.detach().numpy(), requires_grad=True)


def values_and_grads(torch: Any, run: Any, *variables: mg.Variable) -> None:
    """run(lib, *inputs) in both libraries: the same values, and the same gradients of
    Σ y·w (w fixed random weights) with respect to every input."""
    theirs_in = [torch_leaf(torch, v) for v in variables]
    mine, theirs = run(mg, *variables), run(torch, *theirs_in)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                               rtol=1e-12, atol=1e-12)
    weights = np.random.default_rng(1).standard_normal(tuple(mine.shape))
    (mine * mg.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    for v, t in zip(variables, theirs_in):
        np.testing.assert_allclose(v.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


# =========================================================================== Dropout2d

DROPOUT2D_WARNING = "dropout2d: Received a 2-D input to dropout2d, which is deprecated"


def test_dropout2d_on_2d_input_warns_and_drops_elements():
    mg.manual_seed(0)
    x = mg.tensor(np.full((40, 30), 3.0), requires_grad=True)
    with pytest.warns(UserWarning, match=DROPOUT2D_WARNING) as caught:
        y = F.dropout2d(x, 0.5)
    assert caught[0].filename == __file__  # the warning points at the caller
    values = y.detach().numpy()
    assert set(np.unique(values)) == {0.0, 6.0}
    # each element is its own channel: rows are not all kept or all dropped
    assert not (values == values[:, :1]).all()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values / 3.0)


def test_dropout2d_module_on_fc_output_as_the_recipe():
    mg.manual_seed(1)
    layer = nn.Dropout2d(0.5)
    with pytest.warns(UserWarning, match="Received a 2-D input"):
        y = layer(mg.ones(1, 128))
    assert y.shape == (1, 128)
    layer.eval()
    with pytest.warns(UserWarning, match="Received a 2-D input"):
        np.testing.assert_array_equal(layer(mg.ones(1, 128)).numpy(), np.ones((1, 128)))


def test_dropout2d_on_5d_input_shares_the_draw_over_the_dims_after_c():
    mg.manual_seed(2)
    with pytest.warns(UserWarning, match="Received a 5-D input"):
        y = F.dropout2d(mg.ones(3, 20, 2, 3, 2), 0.5).numpy()
    per_channel = y.reshape(3, 20, -1)
    assert (per_channel == per_channel[..., :1]).all()
    assert set(np.unique(per_channel)) == {0.0, 2.0}


def test_dropout2d_on_1d_input_needs_two_dims_unless_dropping_all():
    with pytest.warns(UserWarning, match="Received a 1-D input"):
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
            F.dropout2d(mg.ones(3), 0.5)
    with pytest.warns(UserWarning):
        np.testing.assert_array_equal(F.dropout2d(mg.ones(3), 1.0).numpy(), np.zeros(3))
    with pytest.warns(UserWarning):
        np.testing.assert_array_equal(F.dropout2d(mg.ones(3), 0.5, False).numpy(), np.ones(3))


def test_dropout2d_4d_input_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(mg.ones(2, 3, 4, 4), 0.5)


def test_dropout2d_3d_warning_is_pytorchs(real_torch):
    with pytest.warns(UserWarning) as theirs:
        real_torch.nn.functional.dropout2d(real_torch.ones(3, 4, 4), 0.5)
    with pytest.warns(UserWarning) as mine:
        F.dropout2d(mg.ones(3, 4, 4), 0.5)
    assert str(mine[0].message) == str(theirs[0].message)


def test_dropout2d_warning_is_pytorchs(real_torch):
    with pytest.warns(UserWarning) as theirs:
        real_torch.nn.functional.dropout2d(real_torch.ones(2, 3), 0.5)
    with pytest.warns(UserWarning) as mine:
        F.dropout2d(mg.ones(2, 3), 0.5)
    assert str(mine[0].message) == str(theirs[0].message)


# =========================================================================== init on .data

FILLS = {
    "uniform_": lambda t: init.uniform_(t, -0.5, 0.5),
    "normal_": lambda t: init.normal_(t, 0.0, 0.02),
    "trunc_normal_": lambda t: init.trunc_normal_(t, std=0.5),
    "constant_": lambda t: init.constant_(t, 0.25),
    "zeros_": init.zeros_,
    "ones_": init.ones_,
    "eye_": init.eye_,
    "kaiming_uniform_": init.kaiming_uniform_,
    "kaiming_normal_": init.kaiming_normal_,
    "xavier_uniform_": init.xavier_uniform_,
    "xavier_normal_": init.xavier_normal_,
    "orthogonal_": init.orthogonal_,
    "sparse_": lambda t: init.sparse_(t, 0.5),
}


@pytest.mark.parametrize("name", sorted(FILLS))
def test_every_fill_takes_x_data_and_fills_the_variable(name):
    fill = FILLS[name]
    layer = nn.Linear(6, 4)
    version = layer.weight._version
    mg.manual_seed(7)
    data = layer.weight.data
    returned = fill(data)
    assert returned is data  # the array given back, as PyTorch gives m.weight.data back
    expected = mg.zeros(4, 6)
    mg.manual_seed(7)
    fill(expected)  # the same draws, into a Variable
    np.testing.assert_array_equal(layer.weight.detach().numpy(), expected.numpy())
    assert layer.weight._version == version  # like PyTorch's .data: no version bump


def test_dcgan_weights_init_through_model_apply():
    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            init.normal_(m.weight.data, 1.0, 0.02)
            init.constant_(m.bias.data, 0)

    mg.manual_seed(999)
    net = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64))
    net.apply(weights_init)
    assert abs(net[0].weight.detach().numpy().std() - 0.02) < 0.002
    assert abs(net[1].weight.detach().numpy().mean() - 1.0) < 0.01
    np.testing.assert_array_equal(net[1].bias.detach().numpy(), np.zeros(64))


def test_fills_take_plain_arrays_and_the_tensor_keyword():
    array = np.zeros((3, 3), dtype=np.float32)
    assert init.eye_(tensor=array) is array
    np.testing.assert_array_equal(array, np.eye(3))
    strided = np.zeros((4, 6))[:, ::2]  # a view: filled through, not copied
    init.constant_(strided, 2.0)
    np.testing.assert_array_equal(strided, np.full((4, 3), 2.0))


def test_fills_refuse_read_only_and_non_numeric_arrays():
    read_only = np.zeros(3)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="zeros_ fills its argument in place.*read-only"):
        init.zeros_(read_only)
    with pytest.raises(TypeError, match="ones_ fills a numeric Variable or array.*object"):
        init.ones_(np.array([None, None]))
    with pytest.raises(NotImplementedError, match="int64"):
        init.normal_(np.zeros(3, dtype=np.int64))
    with pytest.raises(TypeError, match="normal_ fills a numeric Variable; got list"):
        init.normal_([0.0, 1.0])


# =========================================================================== bias=None

LAYERS_WITH_BIAS = {
    "Linear": lambda lib, bias: lib.nn.Linear(3, 2, bias=bias),
    "Conv1d": lambda lib, bias: lib.nn.Conv1d(2, 3, 3, bias=bias),
    "Conv2d": lambda lib, bias: lib.nn.Conv2d(2, 3, 3, bias=bias),
    "ConvTranspose2d": lambda lib, bias: lib.nn.ConvTranspose2d(2, 3, 3, bias=bias),
    "LayerNorm": lambda lib, bias: lib.nn.LayerNorm(4, bias=bias),
    "GroupNorm": lambda lib, bias: lib.nn.GroupNorm(2, 4, bias=bias),
    "BatchNorm1d": lambda lib, bias: lib.nn.BatchNorm1d(4, bias=bias),
    "RNNCell": lambda lib, bias: lib.nn.RNNCell(3, 2, bias=bias),
    "LSTMCell": lambda lib, bias: lib.nn.LSTMCell(3, 2, bias=bias),
    "MultiheadAttention": lambda lib, bias: lib.nn.MultiheadAttention(4, 2, bias=bias),
}


@pytest.mark.parametrize("name", sorted(LAYERS_WITH_BIAS))
def test_bias_none_builds_a_layer_without_bias(name):
    make = LAYERS_WITH_BIAS[name]
    without = sorted(n for n, _ in make(mg, None).named_parameters())
    assert without == sorted(n for n, _ in make(mg, False).named_parameters())
    assert without != sorted(n for n, _ in make(mg, True).named_parameters())


@pytest.mark.parametrize("name", sorted(LAYERS_WITH_BIAS))
def test_bias_none_parameters_as_pytorchs(real_torch, name):
    make = LAYERS_WITH_BIAS[name]
    mine = sorted(n for n, _ in make(mg, None).named_parameters())
    assert mine == sorted(n for n, _ in make(real_torch, None).named_parameters())


def test_bias_none_reprs_and_what_stays_refused(real_torch):
    assert repr(nn.Linear(2, 2, bias=None)) == repr(real_torch.nn.Linear(2, 2, bias=None))
    assert repr(nn.Conv2d(1, 1, 1, bias=None)) == repr(real_torch.nn.Conv2d(1, 1, 1, bias=None))


def test_bias_of_another_kind_is_a_type_error():
    with pytest.raises(TypeError, match="Linear: bias must be True or False; got str"):
        nn.Linear(2, 2, bias="yes")
    # PyTorch's multi-layer RNNs insist on a bool
    with pytest.raises(TypeError, match="LSTM: bias must be True or False; got NoneType"):
        nn.LSTM(2, 3, bias=None)


# =========================================================================== KLDivLoss


def _log_probabilities(seed: int) -> mg.Variable:
    return F.log_softmax(leaf((4, 5), seed), dim=1).detach().requires_grad_()


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_loss_matches_pytorch(real_torch, reduction, log_target):
    x = _log_probabilities(1)
    target = F.softmax(leaf((4, 5), 2), dim=1).detach()
    if log_target:
        target = target.log()

    def run(lib, x):
        loss = lib.nn.KLDivLoss(reduction=reduction, log_target=log_target)
        return loss(x, lib.tensor(target.numpy()))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reduction='mean' warns in both
        values_and_grads(real_torch, run, x)


def test_kl_div_loss_batchmean_is_the_kl_divergence_and_gradchecks():
    x = _log_probabilities(3)
    target = F.softmax(leaf((4, 5), 4), dim=1).detach()
    loss = nn.KLDivLoss(reduction="batchmean")
    p = target.numpy()
    expected = (p * (np.log(p) - x.detach().numpy())).sum() / 4
    np.testing.assert_allclose(loss(x, target).item(), expected, rtol=1e-14)
    assert gradcheck(lambda v: nn.KLDivLoss(reduction="batchmean")(v, target), (x,))
    assert gradcheck(lambda t: nn.KLDivLoss(log_target=True, reduction="sum")(x, t),
                     (target.log().detach().requires_grad_(),))
    assert repr(loss) == "KLDivLoss(reduction='batchmean')"


def test_kl_div_loss_mean_warns_and_bad_reduction_is_a_value_error():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        nn.KLDivLoss()(_log_probabilities(5), F.softmax(leaf((4, 5), 6), dim=1))
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.KLDivLoss(reduction="average")
    legacy = nn.KLDivLoss(size_average=False)  # the old flags: a sum
    assert legacy.reduction == "sum"


# =========================================================================== distances


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cosine_similarity_module_matches_pytorch(real_torch, dim):
    a, b = leaf((4, 6), 7), leaf((4, 6), 8)
    values_and_grads(
        real_torch, lambda lib, x, y: lib.nn.CosineSimilarity(dim=dim, eps=1e-6)(x, y), a, b
    )


@pytest.mark.parametrize(
    ("p", "keepdim", "shapes"),
    [
        (2.0, False, ((5, 4), (5, 4))),
        (1.0, True, ((5, 4), (5, 4))),
        (3.5, False, ((2, 5, 4), (4,))),
        (float("inf"), False, ((5, 4), (5, 4))),
        (2.0, True, ((4,), (4,))),
        (2.0, False, ((), ())),
    ],
)
def test_pairwise_distance_matches_pytorch(real_torch, p, keepdim, shapes):
    a, b = leaf(shapes[0], 9), leaf(shapes[1], 10)
    module_out = nn.PairwiseDistance(p=p, keepdim=keepdim)(a, b)
    theirs = real_torch.nn.PairwiseDistance(p=p, keepdim=keepdim)(
        torch_leaf(real_torch, a), torch_leaf(real_torch, b)
    )
    assert module_out.shape == tuple(theirs.shape)
    values_and_grads(
        real_torch, lambda lib, x, y: lib.nn.functional.pairwise_distance(x, y, p, 1e-6, keepdim),
        a, b,
    )


def test_distances_values_gradients_and_errors():
    a, b = leaf((5, 4), 11), leaf((5, 4), 12)
    expected = np.linalg.norm(a.detach().numpy() - b.detach().numpy() + 1e-6, axis=-1)
    np.testing.assert_allclose(nn.PairwiseDistance()(a, b).detach().numpy(), expected,
                               rtol=1e-14)
    assert gradcheck(lambda x, y: nn.PairwiseDistance(p=3.0)(x, y), (a, b))
    assert gradcheck(lambda x, y: nn.CosineSimilarity(dim=1)(x, y), (a, b))
    same = nn.PairwiseDistance()(a, a).detach().numpy()  # eps keeps it off zero
    np.testing.assert_allclose(same, np.full(5, 2e-6), rtol=1e-9)
    with pytest.raises(RuntimeError, match=r"\(4, 5\) and \(3, 5\)"):
        nn.PairwiseDistance()(mg.ones(4, 5), mg.ones(3, 5))
    module = nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True)
    assert (module.norm, module.eps, module.keepdim) == (1.0, 0.0, True)


# =========================================================================== interpolate

INTERPOLATIONS = [
    ("nearest", 3, None), ("nearest", 4, None), ("nearest", 5, None),
    ("nearest-exact", 3, None), ("nearest-exact", 4, None),
    ("linear", 3, False), ("linear", 3, True),
    ("bilinear", 4, False), ("bilinear", 4, True),
    ("bicubic", 4, False), ("bicubic", 4, True),
    ("trilinear", 5, False), ("trilinear", 5, True),
    ("area", 3, None), ("area", 4, None),
]
RESIZES = [
    {"size": 7}, {"size": 2}, {"scale_factor": 2}, {"scale_factor": 0.5},
    {"scale_factor": 1.7}, {"scale_factor": 2.3, "recompute_scale_factor": True},
]


@pytest.mark.parametrize(("mode", "ndim", "align_corners"), INTERPOLATIONS)
@pytest.mark.parametrize("resize", RESIZES, ids=lambda r: "-".join(map(str, r.values())))
def test_interpolate_matches_pytorch(real_torch, mode, ndim, align_corners, resize):
    x = leaf((2, 3) + (4, 5, 3)[: ndim - 2], 13)
    values_and_grads(
        real_torch,
        lambda lib, v: lib.nn.functional.interpolate(
            v, mode=mode, align_corners=align_corners, **resize
        ),
        x,
    )


@pytest.mark.parametrize(("mode", "ndim", "align_corners"), INTERPOLATIONS)
def test_interpolate_gradchecks(mode, ndim, align_corners):
    x = leaf((1, 2) + (3, 4, 2)[: ndim - 2], 14)
    sizes = (5, 3, 4)[: ndim - 2]
    assert gradcheck(
        lambda v: F.interpolate(v, size=sizes, mode=mode, align_corners=align_corners), (x,)
    )
    assert gradcheck(
        lambda v: F.interpolate(v, scale_factor=1.5, mode=mode, align_corners=align_corners),
        (x,),
    )


def test_interpolate_float32_stays_float32_and_is_close_to_pytorch(real_torch):
    x = np.random.default_rng(15).standard_normal((1, 2, 5, 4)).astype(np.float32)
    for mode in ("nearest", "bilinear", "bicubic"):
        mine = F.interpolate(mg.tensor(x), scale_factor=1.6, mode=mode)
        theirs = real_torch.nn.functional.interpolate(real_torch.tensor(x), scale_factor=1.6,
                                                      mode=mode)
        assert mine.dtype == np.float32
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=2e-6, atol=2e-6)


def test_upsample_docstring_values():
    x = mg.arange(1, 5, dtype=mg.float64).view(1, 1, 2, 2)
    nearest = nn.Upsample(scale_factor=2, mode="nearest")(x).numpy()[0, 0]
    np.testing.assert_array_equal(nearest, [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4],
                                            [3, 3, 4, 4]])
    bilinear = nn.Upsample(scale_factor=2, mode="bilinear")(x).numpy()[0, 0]
    np.testing.assert_allclose(bilinear[0], [1.0, 1.25, 1.75, 2.0], rtol=1e-15)
    corners = nn.UpsamplingBilinear2d(scale_factor=2)(x).numpy()[0, 0]
    np.testing.assert_allclose(corners[0], [1, 4 / 3, 5 / 3, 2], rtol=1e-15)
    np.testing.assert_array_equal(nn.UpsamplingNearest2d(size=4)(x).numpy()[0, 0], nearest)


def test_upsample_reprs_match_pytorch(real_torch):
    for make in (
        lambda lib: lib.nn.Upsample(scale_factor=2),
        lambda lib: lib.nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
        lambda lib: lib.nn.Upsample(scale_factor=(2, 3), mode="nearest"),
        lambda lib: lib.nn.UpsamplingBilinear2d(scale_factor=2),
        lambda lib: lib.nn.UpsamplingNearest2d(size=3),
    ):
        assert repr(make(mg)) == repr(make(real_torch))


@settings(max_examples=30, deadline=None)
@given(
    length=st.integers(1, 6),
    factor=st.integers(1, 4),
    data=st.data(),
)
def test_nearest_integer_scale_repeats_each_value(length, factor, data):
    values = np.asarray(data.draw(st.lists(st.floats(-1e3, 1e3), min_size=length,
                                           max_size=length)))
    y = F.interpolate(mg.tensor(values.reshape(1, 1, -1)), scale_factor=factor)
    np.testing.assert_array_equal(y.numpy().ravel(), np.repeat(values, factor))


@settings(max_examples=30, deadline=None)
@given(
    height=st.integers(1, 5),
    width=st.integers(1, 5),
    out=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    mode=st.sampled_from(["bilinear", "bicubic"]),
    align_corners=st.booleans(),
    level=st.floats(-10, 10),
)
def test_interpolating_a_constant_image_keeps_it(height, width, out, mode, align_corners,
                                                 level):
    """The weights of each output sum to 1 (linear and cubic kernels alike)."""
    x = mg.full((1, 1, height, width), level)
    y = F.interpolate(x, size=out, mode=mode, align_corners=align_corners)
    np.testing.assert_allclose(y.numpy(), np.full((1, 1, *out), level), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize(
    ("call", "error", "phrases"),
    [
        (lambda x: F.interpolate(x), ValueError, ["either size or scale_factor"]),
        (lambda x: F.interpolate(x, size=3, scale_factor=2), ValueError, ["only one of"]),
        (lambda x: F.interpolate(x, size=3, align_corners=True), ValueError,
         ["align_corners option can only be set"]),
        (lambda x: F.interpolate(x, size=(3, 3)), ValueError,
         ["same number of spatial dimensions", "[4]"]),
        (lambda x: F.interpolate(x, scale_factor=(2, 2)), ValueError, ["scale_factor of shape"]),
        (lambda x: F.interpolate(x, size=3, recompute_scale_factor=True), ValueError,
         ["not meaningful with an explicit size"]),
        (lambda x: F.interpolate(x, size=3, mode="bilinear"), NotImplementedError,
         ["Got 3D input, but bilinear mode needs 4D input"]),
        (lambda x: F.interpolate(x, size=3, mode="cubic"), NotImplementedError,
         ["(got cubic)"]),
        (lambda x: F.interpolate(x, scale_factor=0.1), RuntimeError,
         ["greater than 0", "input (W: 4) and output (W: 0)"]),
        (lambda x: F.interpolate(x, size=3, mode="linear", antialias=True), ValueError,
         ["Anti-alias option is restricted"]),
        (lambda x: F.interpolate(x.view(1, 1, 2, 2), size=3, mode="bilinear", antialias=True),
         NotImplementedError, ["antialias=True is not supported"]),
        (lambda x: F.interpolate(x.view(1, 4), size=3), NotImplementedError,
         ["Only 3D, 4D and 5D input", "(got 2D)"]),
        (lambda x: F.interpolate(x.long(), size=3), NotImplementedError, ["int64"]),
        (lambda x: F.interpolate(x.view(1, 1, 1, 2, 2), size=3, mode="area"),
         NotImplementedError, ["adaptive_avg_pool3d"]),
        (lambda x: nn.Upsample(scale_factor="two"), ValueError, ["scale_factor", "'two'"]),
    ],
)
def test_interpolate_errors(call, error, phrases):
    with pytest.raises(error) as caught:
        call(mg.arange(4.0).view(1, 1, 4))
    for phrase in phrases:
        assert phrase in str(caught.value)


def test_area_with_an_empty_output_is_empty():
    y = F.interpolate(mg.ones(1, 2, 1), scale_factor=0.5, mode="area")
    assert y.shape == (1, 2, 0)


# =========================================================================== pad modes

PADS = [(2, 1), (-1, 2), (0, 0), (1, 1, 2, 0), (-1, 2, 1, -2), (2, 2, 1, 1, 1, 0)]
NUMPY_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", sorted(NUMPY_MODES))
@pytest.mark.parametrize("pad", PADS, ids=str)
def test_pad_modes_match_pytorch(real_torch, mode, pad):
    spatial = (3, 4, 5)[3 - max(len(pad) // 2, 1):]
    x = leaf((2, 3, *spatial), 16)  # a batch, channels, one spatial dim per padded dim
    values_and_grads(real_torch, lambda lib, v: lib.nn.functional.pad(v, pad, mode), x)


@pytest.mark.parametrize("mode", sorted(NUMPY_MODES))
def test_pad_modes_gradcheck(mode):
    x = leaf((1, 2, 3, 4), 17)
    assert gradcheck(lambda v: F.pad(v, (2, 1, 1, 2), mode), (x,))
    assert gradcheck(lambda v: F.pad(v, (-1, 2), mode), (leaf((2, 3, 4), 18),))


@settings(max_examples=40, deadline=None)
@given(
    mode=st.sampled_from(sorted(NUMPY_MODES)),
    shape=st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(1, 5)),
    data=st.data(),
)
def test_pad_modes_agree_with_numpy_pad(mode, shape, data):
    """For amounts >= 0, reflect, replicate and circular are np.pad's reflect, edge, wrap."""
    most = {"reflect": lambda n: n - 1, "replicate": lambda n: 6, "circular": lambda n: n}[mode]
    amounts = []
    for size in (shape[2], shape[1]):  # the last dim's pair first, as PyTorch orders them
        amounts += [data.draw(st.integers(0, most(size))), data.draw(st.integers(0, most(size)))]
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    expected = np.pad(x, [(0, 0), (amounts[2], amounts[3]), (amounts[0], amounts[1])],
                      mode=NUMPY_MODES[mode])
    np.testing.assert_array_equal(F.pad(mg.tensor(x), tuple(amounts), mode).numpy(), expected)


def test_pad_docstring_values():
    small = mg.arange(6.0).view(1, 2, 3)
    np.testing.assert_array_equal(F.pad(small, (2, 1), "reflect").numpy()[0, 0],
                                  [2, 1, 0, 1, 2, 1])
    np.testing.assert_array_equal(F.pad(small, (1, 2), "replicate").numpy()[0, 1],
                                  [3, 3, 4, 5, 5, 5])
    np.testing.assert_array_equal(F.pad(small, (1, 1), "circular").numpy()[0, 0],
                                  [2, 0, 1, 2, 0])
    # circular crops first and wraps what is left, as PyTorch
    np.testing.assert_array_equal(F.pad(mg.arange(4.0).view(1, 1, 4), (-1, 2), "circular")
                                  .numpy().ravel(), [1, 2, 3, 1, 2])
    copy = F.pad(small, (0, 0), "reflect")
    assert copy is not small
    np.testing.assert_array_equal(copy.numpy(), small.numpy())


@pytest.mark.parametrize(
    ("call", "error", "phrases"),
    [
        (lambda x: F.pad(x, (3, 0), "reflect"), RuntimeError,
         ["Padding size should be less than the corresponding input dimension",
          "padding (3, 0) at dimension 2 of input [1, 2, 3]"]),
        (lambda x: F.pad(x, (4, 0), "circular"), RuntimeError, ["wrapping around more than once"]),
        (lambda x: F.pad(x, (-2, 3), "circular"), RuntimeError, ["leaves 1 values to wrap"]),
        (lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), "reflect"), NotImplementedError,
         ["Padding size 6 is not supported for 3D input tensor"]),
        (lambda x: F.pad(x.view(6), (1, 1), "replicate"), NotImplementedError,
         ["Padding size 2 is not supported for 1D input tensor"]),
        (lambda x: F.pad(x, (1, 1), "replicate", value=2.0), RuntimeError,
         ['Padding mode "replicate" doesn\'t take in value argument']),
        (lambda x: F.pad(x, (1, 1), "wrap"), NotImplementedError,
         ["Unrecognised padding mode wrap"]),
        (lambda x: F.pad(x, (1, 1, 1), "reflect"), RuntimeError, ["divisible by 2"]),
        (lambda x: F.pad(x, (-3, 0), "replicate"), RuntimeError,
         ["input (W: 3) is too small. Calculated output W: 0"]),
        (lambda x: F.pad(mg.zeros(1, 0, 3), (1, 1), "reflect"), RuntimeError,
         ["non-zero dimensions", "[1, 0, 3]"]),
        (lambda x: F.pad(x, (1.0, 1), "reflect"), TypeError, ["tuple of ints"]),
    ],
)
def test_pad_errors(call, error, phrases):
    with pytest.raises(error) as caught:
        call(mg.arange(6.0).view(1, 2, 3))
    for phrase in phrases:
        assert phrase in str(caught.value)


def test_pad_value_zero_is_allowed_with_other_modes():
    x = mg.arange(6.0).view(1, 2, 3)
    np.testing.assert_array_equal(F.pad(x, (1, 1), "reflect", value=0).numpy(),
                                  F.pad(x, (1, 1), "reflect").numpy())


# =========================================================================== Embedding max_norm


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
def test_embedding_max_norm_matches_pytorch(real_torch, norm_type):
    table = np.random.default_rng(19).normal(0, 2, (10, 3))
    indices = [[1, 2, 2], [7, 0, 1]]
    mine = nn.Embedding(10, 3, max_norm=1.0, norm_type=norm_type)
    theirs = real_torch.nn.Embedding(10, 3, max_norm=1.0, norm_type=norm_type).double()
    with mg.no_grad():
        mine.weight.copy_(mg.tensor(table))
    with real_torch.no_grad():
        theirs.weight.copy_(real_torch.tensor(table))
    y_mine, y_theirs = mine(mg.tensor(indices)), theirs(real_torch.tensor(indices))
    np.testing.assert_allclose(y_mine.detach().numpy(), y_theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-12)
    weights = RNG.standard_normal((2, 3, 3))
    (y_mine * mg.tensor(weights)).sum().backward()
    (y_theirs * real_torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    assert repr(mine) == repr(theirs)


def test_embedding_max_norm_renormalizes_looked_up_rows_in_place():
    table = np.random.default_rng(20).normal(0, 3, (6, 4))
    table[5] = [0.1, 0.0, 0.0, 0.0]  # already short: left alone
    embedding = nn.Embedding(6, 4, max_norm=1.5)
    with mg.no_grad():
        embedding.weight.copy_(mg.tensor(table))
    version = embedding.weight._version
    looked_up = embedding(mg.tensor([0, 3, 3, 5]))
    norms = np.linalg.norm(looked_up.detach().numpy(), axis=1)
    np.testing.assert_allclose(norms[:3], 1.5, rtol=1e-6)
    assert np.all(norms <= 1.5)
    weight = embedding.weight.detach().numpy()
    np.testing.assert_array_equal(weight[[1, 2, 4]], table[[1, 2, 4]])  # not looked up
    np.testing.assert_array_equal(weight[5], table[5])
    assert embedding.weight._version > version  # an in-place write, as PyTorch's
    assert not embedding.weight.grad_fn and embedding.weight.is_leaf


def test_embedding_max_norm_errors_and_what_stays_unsupported():
    with pytest.raises(TypeError, match="argument 'max_norm' .* must be a number"):
        F.embedding(mg.tensor([1]), mg.ones(3, 2), max_norm="big")
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        nn.Embedding(3, 2, scale_grad_by_freq=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(mg.tensor([1]), mg.ones(3, 2), sparse=True)
