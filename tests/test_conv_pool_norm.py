"""Convolutions, unfold/fold, pooling, batch/group norm and Dropout2d.

Three kinds of checks:

- against PyTorch (float64, within 1e-10): values and every gradient, on arguments drawn by
  hypothesis (batch sizes, channels, kernels, strides, paddings, dilations, groups, ceil_mode,
  ties...) and on the Modules with the same weights copied in. Skipped without torch (the
  `real_torch` fixture), as on CI;
- without torch: gradcheck and gradgradcheck in float64, the tie rule of max pooling,
  Dropout2d's channels, float32 staying float32, and bad arguments raising PyTorch's
  exception class with a message that names the mismatch (a second test runs the same calls
  in torch, where it is installed, to confirm the class).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import Variable, nn
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.nn import functional as F

TOL = 1e-10
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# PyTorch warns about padding='same' with an even kernel (it pads a copy); so does minigrad's
# work, silently. The warning is not what these tests look at.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")


# =========================================================================== helpers


def close(mine: Any, theirs: Any) -> None:
    mine = mine.data if isinstance(mine, Variable) else np.asarray(mine)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert mine.shape == theirs.shape, (mine.shape, theirs.shape)
    np.testing.assert_allclose(mine, theirs, rtol=TOL, atol=TOL)


def against_torch(
    torch: Any,
    mine: Callable[..., Any],
    theirs: Callable[..., Any],
    arrays: list[np.ndarray | None],
    seed: int = 0,
    gradients: bool = True,
) -> tuple[Variable, Any]:
    """mine(*Variables) and theirs(*tensors) on the same float64 arrays (None passes as
    None): the same values, and (unless not `gradients`) after a backward of the same random
    upstream gradient the same gradient for every array. Returns both outputs."""
    mine_in = [None if a is None else Variable(a.copy(), requires_grad=True) for a in arrays]
    theirs_in = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]
    mine_out, theirs_out = mine(*mine_in), theirs(*theirs_in)
    close(mine_out, theirs_out)
    assert mine_out.dtype == np.float64
    if not gradients:
        return mine_out, theirs_out
    upstream = np.random.default_rng(seed).standard_normal(mine_out.shape)
    mine_out.backward(Variable(upstream))
    theirs_out.backward(torch.tensor(upstream))
    for position, (m, t) in enumerate(zip(mine_in, theirs_in)):
        if m is not None:
            assert m.grad is not None, f"no gradient for argument {position}"
            close(m.grad, t.grad)
    return mine_out, theirs_out


def per_dim(draw: Callable, low: int, high: int, dims: int) -> tuple[int, ...]:
    return tuple(draw(st.integers(low, high)) for _ in range(dims))


def spelled(draw: Callable, values: tuple[int, ...]) -> Any:
    """values as a caller may write them: an int when they are all equal (sometimes), else
    the tuple."""
    if len(set(values)) == 1 and draw(st.booleans()):
        return values[0]
    return values


def shape_of(batch: int | None, channels: int, size: tuple[int, ...]) -> tuple[int, ...]:
    """(N, C, *S), or the unbatched (C, *S) when batch is None."""
    return (channels, *size) if batch is None else (batch, channels, *size)


def random(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


BATCHES = st.sampled_from([None, 1, 2, 3])
SEEDS = st.integers(0, 2**32 - 1)


# =========================================================================== convolution


@st.composite
def conv_cases(draw: Callable) -> dict:
    dims = draw(st.sampled_from([1, 2]))
    groups = draw(st.integers(1, 3))
    in_per_group, out_per_group = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = per_dim(draw, 1, 3, dims)
    dilation = per_dim(draw, 1, 2, dims)
    stride = per_dim(draw, 1, 3, dims)
    kind = draw(st.sampled_from(["int", "tuple", "same", "valid"]))
    if kind == "same":
        stride = (1,) * dims  # PyTorch allows 'same' only unstrided
        padding, pads = "same", tuple(math.ceil(d * (k - 1) / 2) for k, d in zip(kernel, dilation))
    elif kind == "valid":
        padding, pads = "valid", (0,) * dims
    elif kind == "int":
        pads = (draw(st.integers(0, 2)),) * dims
        padding = pads[0]
    else:
        pads = per_dim(draw, 0, 2, dims)
        padding = pads
    # big enough for one window: padded size >= the dilated kernel
    size = tuple(
        draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), max(1, d * (k - 1) + 1 - 2 * p) + 4))
        for k, d, p in zip(kernel, dilation, pads)
    )
    return {
        "x": shape_of(draw(BATCHES), groups * in_per_group, size),
        "w": (groups * out_per_group, in_per_group, *kernel),
        "b": (groups * out_per_group,) if draw(st.booleans()) else None,
        "kwargs": {
            "stride": spelled(draw, stride),
            "padding": padding,
            "dilation": spelled(draw, dilation),
            "groups": groups,
        },
        "dims": dims,
        "seed": draw(SEEDS),
    }


@PROPERTY
@given(case=conv_cases())
def test_conv_values_and_gradients_match_torch(real_torch, case):
    """conv1d/conv2d: the output and the gradients of input, weight and bias."""
    torch, dims, kwargs = real_torch, case["dims"], case["kwargs"]
    seed = case["seed"]
    arrays = [random(seed, case["x"]), random(seed + 1, case["w"])]
    arrays.append(None if case["b"] is None else random(seed + 2, case["b"]))
    mine = F.conv1d if dims == 1 else F.conv2d
    theirs = torch.nn.functional.conv1d if dims == 1 else torch.nn.functional.conv2d
    against_torch(
        torch, lambda x, w, b: mine(x, w, b, **kwargs), lambda x, w, b: theirs(x, w, b, **kwargs),
        arrays, seed,
    )


@st.composite
def conv_transpose_cases(draw: Callable) -> dict:
    dims = draw(st.sampled_from([1, 2]))
    groups = draw(st.integers(1, 3))
    in_per_group, out_per_group = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = per_dim(draw, 1, 3, dims)
    dilation = per_dim(draw, 1, 2, dims)
    stride = per_dim(draw, 1, 3, dims)
    output_padding = tuple(draw(st.integers(0, s - 1)) for s in stride)
    padding = per_dim(draw, 0, 2, dims)
    size = per_dim(draw, 1, 4, dims)
    out = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + e + 1
        for n, s, p, d, k, e in zip(size, stride, padding, dilation, kernel, output_padding)
    )
    assume(all(o > 0 for o in out))
    return {
        "x": shape_of(draw(BATCHES), groups * in_per_group, size),
        "w": (groups * in_per_group, out_per_group, *kernel),
        "b": (groups * out_per_group,) if draw(st.booleans()) else None,
        "kwargs": {
            "stride": spelled(draw, stride),
            "padding": spelled(draw, padding),
            "output_padding": spelled(draw, output_padding),
            "groups": groups,
            "dilation": spelled(draw, dilation),
        },
        "dims": dims,
        "seed": draw(SEEDS),
    }


@PROPERTY
@given(case=conv_transpose_cases())
def test_conv_transpose_values_and_gradients_match_torch(real_torch, case):
    """conv_transpose1d/2d, output_padding below the stride, groups, dilation."""
    torch, dims, kwargs, seed = real_torch, case["dims"], case["kwargs"], case["seed"]
    arrays = [random(seed, case["x"]), random(seed + 1, case["w"])]
    arrays.append(None if case["b"] is None else random(seed + 2, case["b"]))
    mine = F.conv_transpose1d if dims == 1 else F.conv_transpose2d
    functional = torch.nn.functional
    theirs = functional.conv_transpose1d if dims == 1 else functional.conv_transpose2d
    against_torch(
        torch, lambda x, w, b: mine(x, w, b, **kwargs), lambda x, w, b: theirs(x, w, b, **kwargs),
        arrays, seed,
    )


@pytest.mark.parametrize("dims", [1, 2])
def test_conv_of_an_empty_batch_matches_torch(real_torch, dims):
    """N = 0: an empty output of the right shape, and empty gradients (no reshape of -1)."""
    size, kernel = (5,) * dims, (3,) * dims
    arrays = [np.zeros((0, 4, *size)), random(0, (6, 2, *kernel)), random(1, (6,))]
    functional = real_torch.nn.functional
    mine = F.conv1d if dims == 1 else F.conv2d
    theirs = functional.conv1d if dims == 1 else functional.conv2d
    kwargs = {"groups": 2, "padding": 1}
    against_torch(
        real_torch, lambda x, w, b: mine(x, w, b, **kwargs),
        lambda x, w, b: theirs(x, w, b, **kwargs), arrays,
    )
    mine_t = F.conv_transpose1d if dims == 1 else F.conv_transpose2d
    theirs_t = functional.conv_transpose1d if dims == 1 else functional.conv_transpose2d
    against_torch(
        real_torch, lambda x, w: mine_t(x, w, stride=2), lambda x, w: theirs_t(x, w, stride=2),
        [np.zeros((0, 6, *size)), random(2, (6, 3, *kernel))],
    )


# --------------------------------------------------------------------------- unfold and fold


@st.composite
def unfold_cases(draw: Callable) -> dict:
    kernel = per_dim(draw, 1, 3, 2)
    dilation = per_dim(draw, 1, 2, 2)
    padding = per_dim(draw, 0, 2, 2)
    stride = per_dim(draw, 1, 3, 2)
    size = tuple(
        draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), max(1, d * (k - 1) + 1 - 2 * p) + 4))
        for k, d, p in zip(kernel, dilation, padding)
    )
    return {
        "batch": draw(st.sampled_from([None, 1, 2])),
        "channels": draw(st.integers(1, 3)),
        "size": size,
        "kernel": kernel,
        "kwargs": {
            "kernel_size": spelled(draw, kernel),
            "dilation": spelled(draw, dilation),
            "padding": spelled(draw, padding),
            "stride": spelled(draw, stride),
        },
        "seed": draw(SEEDS),
    }


@PROPERTY
@given(case=unfold_cases())
def test_unfold_and_fold_match_torch(real_torch, case):
    """unfold (im2col) and its adjoint fold (col2im, overlaps summed), values and gradients."""
    torch, kwargs, seed = real_torch, case["kwargs"], case["seed"]
    x = random(seed, shape_of(case["batch"], case["channels"], case["size"]))
    _, unfolded = against_torch(
        torch, lambda x: F.unfold(x, **kwargs), lambda x: torch.nn.functional.unfold(x, **kwargs),
        [x], seed,
    )
    columns = random(seed + 1, tuple(unfolded.shape))
    size = case["size"]
    against_torch(
        torch, lambda c: F.fold(c, size, **kwargs),
        lambda c: torch.nn.functional.fold(c, size, **kwargs), [columns], seed,
    )


# =========================================================================== pooling


@st.composite
def pool_cases(draw: Callable, dilated: bool) -> dict:
    dims = draw(st.sampled_from([1, 2]))
    kernel = per_dim(draw, 1, 3, dims)
    dilation = per_dim(draw, 1, 2, dims) if dilated else (1,) * dims
    stride = draw(st.one_of(st.none(), st.tuples(*[st.integers(1, 3)] * dims)))
    # PyTorch: the padding at most half of the kernel and of the dilated kernel
    padding = tuple(
        draw(st.integers(0, min(k // 2, (d * (k - 1) + 1) // 2))) for k, d in zip(kernel, dilation)
    )
    size = tuple(
        draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), max(1, d * (k - 1) + 1 - 2 * p) + 5))
        for k, d, p in zip(kernel, dilation, padding)
    )
    kwargs = {
        "kernel_size": spelled(draw, kernel),
        "stride": None if stride is None else spelled(draw, stride),
        "padding": spelled(draw, padding),
        "ceil_mode": draw(st.booleans()),
    }
    if dilated:
        kwargs["dilation"] = spelled(draw, dilation)
    return {
        "dims": dims,
        "shape": shape_of(draw(BATCHES), draw(st.integers(1, 3)), size),
        "kwargs": kwargs,
        "seed": draw(SEEDS),
    }


@PROPERTY
@given(case=pool_cases(dilated=True), ties=st.booleans())
def test_max_pool_values_indices_and_gradients_match_torch(real_torch, case, ties):
    """max_pool1d/2d with return_indices, ceil_mode, padding and dilation.

    The tie rule: where a window holds its maximum more than once, the first of them in the
    window's row-major order wins (its index is returned, and it alone gets the gradient),
    as in PyTorch's CPU kernel, which keeps a value only when it is strictly greater than
    the best so far. With `ties`, the input holds integers from 0 to 3, so most windows tie.
    """
    torch, dims, kwargs, seed = real_torch, case["dims"], case["kwargs"], case["seed"]
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, case["shape"]).astype(np.float64) if ties else random(
        seed, case["shape"]
    )
    mine = F.max_pool1d if dims == 1 else F.max_pool2d
    functional = torch.nn.functional
    theirs = functional.max_pool1d if dims == 1 else functional.max_pool2d
    indices = {}

    def mine_values(v: Variable) -> Variable:
        values, indices["mine"] = mine(v, return_indices=True, **kwargs)
        return values

    def theirs_values(t: Any) -> Any:
        values, indices["theirs"] = theirs(t, return_indices=True, **kwargs)
        return values

    # With dilation and padding a window can miss x altogether (its value -inf): there
    # PyTorch sends the gradient to a wrong place (see the test after next); only the values
    # and indices are compared then.
    empty = np.isneginf(mine(Variable(x), **kwargs).data).any()
    against_torch(torch, mine_values, theirs_values, [x], seed, gradients=not empty)
    assert indices["mine"].dtype == np.int64
    np.testing.assert_array_equal(indices["mine"].data, indices["theirs"].numpy())
    # without return_indices: the values alone
    close(mine(Variable(x), **kwargs), theirs(torch.tensor(x), **kwargs))


@pytest.mark.parametrize("dims", [1, 2])
def test_max_pool_nan_and_minus_infinity_match_torch(real_torch, dims):
    """A NaN is the maximum (PyTorch's kernel takes every NaN it meets, so the last NaN of a
    window wins); a window whose values are all -inf points at its first element inside
    the input, never at the padding."""
    row = np.array([1.0, np.nan, 2.0, np.nan, -np.inf, -np.inf, -np.inf, 0.0, 5.0])
    x = row.reshape(1, 1, *(1,) * (dims - 1), -1)
    kernel = 3 if dims == 1 else (1, 3)
    padding = 1 if dims == 1 else (0, 1)
    mine = F.max_pool1d if dims == 1 else F.max_pool2d
    functional = real_torch.nn.functional
    theirs = functional.max_pool1d if dims == 1 else functional.max_pool2d
    for kwargs in ({"stride": 1, "padding": padding}, {"stride": 2, "padding": padding}):
        values, indices = mine(Variable(x), kernel, return_indices=True, **kwargs)
        their_values, their_indices = theirs(
            real_torch.tensor(x), kernel, return_indices=True, **kwargs
        )
        np.testing.assert_array_equal(values.data, their_values.numpy())
        np.testing.assert_array_equal(indices.data, their_indices.numpy())


@PROPERTY
@given(case=pool_cases(dilated=False), count_include_pad=st.booleans(), divisor=st.integers(0, 4))
def test_avg_pool_values_and_gradients_match_torch(real_torch, case, count_include_pad, divisor):
    """avg_pool1d/2d with ceil_mode, count_include_pad both ways and (2d) divisor_override."""
    torch, dims, seed = real_torch, case["dims"], case["seed"]
    kwargs = {**case["kwargs"], "count_include_pad": count_include_pad}
    if dims == 2 and divisor:
        kwargs["divisor_override"] = divisor
    mine = F.avg_pool1d if dims == 1 else F.avg_pool2d
    functional = torch.nn.functional
    theirs = functional.avg_pool1d if dims == 1 else functional.avg_pool2d
    against_torch(
        torch, lambda x: mine(x, **kwargs), lambda x: theirs(x, **kwargs),
        [random(seed, case["shape"])], seed,
    )


@st.composite
def adaptive_cases(draw: Callable) -> dict:
    dims = draw(st.sampled_from([1, 2]))
    size = per_dim(draw, 1, 8, dims)
    out = tuple(
        draw(st.one_of(st.integers(1, 9), st.none()) if dims == 2 else st.integers(1, 9))
        for _ in range(dims)
    )
    return {
        "dims": dims,
        "shape": shape_of(draw(BATCHES), draw(st.integers(1, 3)), size),
        "output_size": out[0] if dims == 1 and draw(st.booleans()) else out,
        "seed": draw(SEEDS),
    }


@PROPERTY
@given(case=adaptive_cases())
def test_adaptive_avg_pool_matches_torch(real_torch, case):
    """adaptive_avg_pool1d/2d: output sizes that divide the input or not (overlapping bins),
    larger than the input, and None (keep that dim)."""
    torch, dims, seed, output_size = real_torch, case["dims"], case["seed"], case["output_size"]
    mine = F.adaptive_avg_pool1d if dims == 1 else F.adaptive_avg_pool2d
    functional = torch.nn.functional
    theirs = functional.adaptive_avg_pool1d if dims == 1 else functional.adaptive_avg_pool2d
    against_torch(
        torch, lambda x: mine(x, output_size), lambda x: theirs(x, output_size),
        [random(seed, case["shape"])], seed,
    )


def test_pooling_of_an_empty_batch_matches_torch(real_torch):
    functional = real_torch.nn.functional
    x = np.zeros((0, 3, 6, 5))
    against_torch(
        real_torch, lambda v: F.max_pool2d(v, 2, padding=1),
        lambda t: functional.max_pool2d(t, 2, padding=1), [x],
    )
    against_torch(
        real_torch, lambda v: F.avg_pool2d(v, 3), lambda t: functional.avg_pool2d(t, 3), [x]
    )
    against_torch(
        real_torch, lambda v: F.adaptive_avg_pool2d(v, 2),
        lambda t: functional.adaptive_avg_pool2d(t, 2), [x],
    )
    against_torch(real_torch, lambda v: F.unfold(v, 2), lambda t: functional.unfold(t, 2), [x])


def test_max_pool_window_that_misses_the_input(real_torch):
    """A dilated window can hold only padding: its value is -inf and its index PyTorch's
    (the window's first tap at or after 0 in each dim, here outside x or wrapped into the
    next row). PyTorch also adds the window's gradient at that index, in 2-d to an element
    the window never held; minigrad sends it nowhere."""
    functional = real_torch.nn.functional
    for x, pool, kwargs in (
        (np.array([[[0.5, -1.0]]]), F.max_pool1d, {"kernel_size": 2, "padding": 1,
                                                   "dilation": 3}),
        (np.array([[[[0.5], [-1.0]]]]), F.max_pool2d, {"kernel_size": (1, 2),
                                                       "padding": (0, 1), "dilation": (1, 2)}),
    ):
        theirs = functional.max_pool1d if pool is F.max_pool1d else functional.max_pool2d
        v = Variable(x.copy(), requires_grad=True)
        values, indices = pool(v, return_indices=True, **kwargs)
        their_values, their_indices = theirs(real_torch.tensor(x), return_indices=True, **kwargs)
        np.testing.assert_array_equal(values.data, their_values.numpy())
        np.testing.assert_array_equal(indices.data, their_indices.numpy())
        assert np.isneginf(values.data).any()
        values.backward(Variable(np.ones(values.shape)))
        expected = np.zeros(x.shape)
        finite = ~np.isneginf(values.data)
        np.add.at(expected.reshape(-1), indices.data[finite], 1.0)
        np.testing.assert_array_equal(v.grad.data, expected)


def test_max_pool_tie_rule_without_torch():
    """The first maximum in the window's row-major order wins, index and gradient alike."""
    x = Variable(np.array([[[[1.0, 3.0], [3.0, 3.0]]]]), requires_grad=True)
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert indices.data.tolist() == [[[[1]]]]
    values.sum().backward()
    assert x.grad.data.tolist() == [[[[0.0, 1.0], [0.0, 0.0]]]]
    # overlapping windows that pick the same element add their gradients there
    y = Variable(np.array([[[2.0, 2.0, 1.0, 2.0]]]), requires_grad=True)
    values, indices = F.max_pool1d(y, 2, stride=1, return_indices=True)
    assert indices.data.tolist() == [[[0, 1, 3]]]
    values.sum().backward()
    assert y.grad.data.tolist() == [[[1.0, 1.0, 0.0, 1.0]]]


# =========================================================================== modules


def copy_parameters(torch: Any, mine: nn.Module, theirs: Any) -> None:
    with torch.no_grad():
        for name, parameter in mine.named_parameters():
            getattr(theirs, name).copy_(torch.tensor(parameter.data))


CONV_MODULES = [
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("Conv1d", (4, 6, 4), {"padding": "same", "dilation": 2, "groups": 2, "bias": False},
     (4, 7)),
    ("Conv2d", (4, 6, (3, 2)), {"padding": "same", "dilation": (1, 2), "groups": 2}, (2, 4, 6, 7)),
    ("Conv2d", (2, 4, 3), {"stride": (2, 1), "padding": (1, 0), "bias": False}, (3, 2, 7, 5)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1,
                                    "groups": 2}, (2, 4, 5)),
    ("ConvTranspose2d", (3, 2, (2, 3)), {"stride": (2, 3), "output_padding": (1, 2),
                                         "dilation": (2, 1)}, (2, 3, 4, 3)),
    ("ConvTranspose2d", (4, 4, 3), {"groups": 4, "bias": False}, (4, 3, 3)),
]


@pytest.mark.parametrize(
    ("layer", "args", "kwargs", "shape"), CONV_MODULES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CONV_MODULES)],
)
def test_conv_modules_match_torch_with_the_same_weights(real_torch, layer, args, kwargs, shape):
    torch = real_torch
    mg.manual_seed(0)
    mine = getattr(nn, layer)(*args, **kwargs)
    theirs = getattr(torch.nn, layer)(*args, **kwargs, dtype=torch.float64)
    assert mine.weight.shape == tuple(theirs.weight.shape)
    assert (mine.bias is None) == (theirs.bias is None)
    copy_parameters(torch, mine, theirs)
    x = random(1, shape)
    x_mine, x_theirs = Variable(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    y_mine, y_theirs = mine(x_mine), theirs(x_theirs)
    close(y_mine, y_theirs)
    upstream = random(2, y_mine.shape)
    (y_mine * Variable(upstream)).sum().backward()
    y_theirs.backward(torch.tensor(upstream))
    close(x_mine.grad, x_theirs.grad)
    for name, parameter in mine.named_parameters():
        close(parameter.grad, getattr(theirs, name).grad)


POOL_MODULES = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 8)),
    ("MaxPool2d", ((2, 3),), {"dilation": (2, 1), "padding": (1, 1)}, (2, 2, 7, 6)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (2, 3, 8)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "divisor_override": 4},
     (2, 2, 6, 7)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 7)),
    ("AdaptiveAvgPool2d", ((None, 3),), {}, (2, 3, 5, 7)),
    ("Unfold", ((2, 3),), {"dilation": (2, 1), "padding": 1, "stride": (1, 2)}, (2, 3, 5, 6)),
    ("Fold", ((5, 6), (2, 3)), {"padding": (1, 0), "stride": (2, 1)}, (2, 12, 12)),
]


@pytest.mark.parametrize(
    ("layer", "args", "kwargs", "shape"), POOL_MODULES, ids=[c[0] for c in POOL_MODULES]
)
def test_pooling_and_fold_modules_match_torch(real_torch, layer, args, kwargs, shape):
    mine = getattr(nn, layer)(*args, **kwargs)
    theirs = getattr(real_torch.nn, layer)(*args, **kwargs)
    against_torch(real_torch, mine, theirs, [random(3, shape)])


def test_max_pool_module_return_indices_matches_torch(real_torch):
    x = np.random.default_rng(4).integers(0, 3, (2, 3, 6, 7)).astype(np.float64)
    mine = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    theirs = real_torch.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    (values, indices), (their_values, their_indices) = mine(Variable(x)), theirs(
        real_torch.tensor(x)
    )
    close(values, their_values)
    np.testing.assert_array_equal(indices.data, their_indices.numpy())


# =========================================================================== normalization


BATCH_NORMS = [
    ("BatchNorm1d", (6, 3)),
    ("BatchNorm1d", (4, 3, 5)),
    ("BatchNorm2d", (3, 3, 4, 2)),
]


@pytest.mark.parametrize("track_running_stats", [True, False], ids=["tracked", "untracked"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("momentum", [0.1, 0.7, None], ids=["m0.1", "m0.7", "cumulative"])
@pytest.mark.parametrize(("layer", "shape"), BATCH_NORMS, ids=["1d-NC", "1d-NCL", "2d"])
def test_batch_norm_modules_match_torch(
    real_torch, layer, shape, momentum, affine, track_running_stats
):
    """Three training steps (batch statistics, running ones updated, num_batches_tracked
    counted; momentum=None a cumulative average), then eval (running statistics, or batch
    ones again without track_running_stats)."""
    torch = real_torch
    options = {"momentum": momentum, "affine": affine, "track_running_stats": track_running_stats}
    mine = getattr(nn, layer)(3, eps=1e-4, **options)
    theirs = getattr(torch.nn, layer)(3, eps=1e-4, **options, dtype=torch.float64)
    if affine:
        mine.weight.data = random(10, (3,))
        mine.bias.data = random(11, (3,))
        copy_parameters(torch, mine, theirs)
    for step in range(4):
        if step == 3:
            mine.eval()
            theirs.eval()
        # each channel its own scale and shift, so that the statistics differ per channel
        channel = (1, 3, *(1,) * (len(shape) - 2))
        x = random(step, shape) * random(20 + step, channel) + random(30 + step, channel)
        against_torch(torch, mine, theirs, [x], seed=step)
        if track_running_stats:
            close(mine.running_mean, theirs.running_mean)
            close(mine.running_var, theirs.running_var)
            assert int(mine.num_batches_tracked.item()) == int(theirs.num_batches_tracked) == min(
                step + 1, 3
            )
        else:
            assert mine.running_mean is None and mine.running_var is None
            assert mine.num_batches_tracked is None
    if affine:
        close(mine.weight.grad, theirs.weight.grad)
        close(mine.bias.grad, theirs.bias.grad)


@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
def test_functional_batch_norm_matches_torch(real_torch, training):
    torch = real_torch
    x = random(0, (5, 3, 4)) * 2 + 1
    stats = {"mine": (Variable(random(1, (3,))), Variable(np.abs(random(2, (3,))) + 0.5))}
    stats["theirs"] = tuple(torch.tensor(s.data.copy()) for s in stats["mine"])
    against_torch(
        torch,
        lambda x, w, b: F.batch_norm(x, *stats["mine"], w, b, training, 0.3, 1e-3),
        lambda x, w, b: torch.nn.functional.batch_norm(
            x, *stats["theirs"], w, b, training, 0.3, 1e-3
        ),
        [x, random(3, (3,)), random(4, (3,))],
    )
    for mine_stat, their_stat in zip(stats["mine"], stats["theirs"]):
        close(mine_stat, their_stat)
    if training:  # without running statistics (in eval PyTorch wants them: bad input below)
        against_torch(
            torch, lambda x: F.batch_norm(x, None, None, training=True),
            lambda x: torch.nn.functional.batch_norm(x, None, None, training=True), [x],
        )


@pytest.mark.parametrize(
    ("shape", "groups"), [((3, 6), 3), ((2, 6, 5), 2), ((2, 4, 3, 3), 4), ((2, 4, 3, 2), 1)]
)
def test_group_norm_matches_torch(real_torch, shape, groups):
    torch = real_torch
    channels = shape[1]
    x = random(0, shape) * 3 + 2
    against_torch(
        torch,
        lambda x, w, b: F.group_norm(x, groups, w, b, 1e-4),
        lambda x, w, b: torch.nn.functional.group_norm(x, groups, w, b, 1e-4),
        [x, random(1, (channels,)), random(2, (channels,))],
    )
    against_torch(
        torch, lambda x: F.group_norm(x, groups),
        lambda x: torch.nn.functional.group_norm(x, groups), [x],
    )
    for affine in (True, False):
        mine = nn.GroupNorm(groups, channels, affine=affine)
        theirs = torch.nn.GroupNorm(groups, channels, affine=affine, dtype=torch.float64)
        if affine:
            mine.weight.data, mine.bias.data = random(3, (channels,)), random(4, (channels,))
            copy_parameters(torch, mine, theirs)
        against_torch(torch, mine, theirs, [x])
        if affine:
            close(mine.weight.grad, theirs.weight.grad)
            close(mine.bias.grad, theirs.bias.grad)


# =========================================================================== Dropout2d


def test_dropout2d_zeroes_whole_channels_and_scales_the_rest():
    mg.manual_seed(0)
    x = Variable(random(0, (4, 50, 3, 2)) + 5, requires_grad=True)  # never 0 itself
    layer = nn.Dropout2d(0.3)
    y = layer(x)
    kept = np.abs(y.data).sum(axis=(2, 3)) != 0
    np.testing.assert_allclose(y.data, x.data * kept[:, :, None, None] / 0.7, rtol=1e-15)
    assert 0.15 < 1 - kept.mean() < 0.45  # about p of the 200 channels dropped
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, np.broadcast_to(kept[:, :, None, None] / 0.7, x.shape))
    # the same draws again after the same seed
    mg.manual_seed(0)
    np.testing.assert_array_equal(layer(x).data, y.data)
    mg.manual_seed(1)
    assert not np.array_equal(layer(x).data, y.data)
    # eval, or training=False: the identity
    layer.eval()
    np.testing.assert_array_equal(layer(x).data, x.data)
    np.testing.assert_array_equal(F.dropout2d(x, 0.3, training=False).data, x.data)
    # p = 0 keeps everything, p = 1 drops everything
    np.testing.assert_array_equal(F.dropout2d(x, 0.0).data, x.data)
    np.testing.assert_array_equal(F.dropout2d(x, 1.0).data, np.zeros(x.shape))


def test_dropout2d_reads_a_3d_input_as_pytorch_does():
    """A 3-d input is (N, C, L), as PyTorch 2.x reads it, with PyTorch's warning: each (n, c)
    row is kept or dropped whole."""
    mg.manual_seed(3)
    x = Variable(np.ones((40, 3, 2)))
    with pytest.warns(UserWarning, match=r"interpreted as shape \(N, C, L\)"):
        y = F.dropout2d(x, 0.5)
    rows = y.data.reshape(120, 2)
    assert set(np.unique(rows)) <= {0.0, 2.0}
    assert (rows == rows[:, :1]).all()
    assert 0 < (rows[:, 0] == 0).sum() < 120


def test_dropout2d_inplace_writes_into_its_input():
    mg.manual_seed(0)
    x = Variable(np.ones((2, 8, 2, 2)))
    y = F.dropout2d(x, 0.5, inplace=True)
    np.testing.assert_array_equal(x.data, y.data)
    assert set(np.unique(x.data)) <= {0.0, 2.0}


# =========================================================================== gradcheck


def _leaf(seed: int, shape: tuple[int, ...]) -> Variable:
    return Variable(random(seed, shape), requires_grad=True)


def _distinct(seed: int, shape: tuple[int, ...]) -> Variable:
    """Values at least 0.1 apart (no ties, far from finite differences' eps)."""
    n = math.prod(shape)
    values = np.random.default_rng(seed).permutation(n) * 0.1 - n * 0.05
    return Variable(values.reshape(shape), requires_grad=True)


GRADCHECKS: dict[str, tuple[Callable[..., Variable], Callable[[], list]]] = {
    "conv2d-same-even-kernel": (
        lambda x, w, b: F.conv2d(x, w, b, padding="same", dilation=(1, 2), groups=2),
        lambda: [_leaf(0, (1, 4, 4, 5)), _leaf(1, (4, 2, 2, 2)), _leaf(2, (4,))],
    ),
    "conv2d-strided-groups": (
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                                 groups=2),
        lambda: [_leaf(3, (1, 4, 5, 4)), _leaf(4, (2, 2, 3, 2)), _leaf(5, (2,))],
    ),
    "conv1d-same-even-kernel": (
        lambda x, w: F.conv1d(x, w, padding="same", dilation=3, groups=3),
        lambda: [_leaf(6, (2, 3, 7)), _leaf(7, (3, 1, 2))],
    ),
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=(1, 0),
                                           output_padding=(1, 0), groups=2, dilation=(1, 2)),
        lambda: [_leaf(8, (1, 4, 3, 2)), _leaf(9, (4, 1, 2, 2)), _leaf(10, (2,))],
    ),
    "conv_transpose1d": (
        lambda x, w: F.conv_transpose1d(x, w, stride=3, output_padding=2, padding=1),
        lambda: [_leaf(11, (2, 2, 3)), _leaf(12, (2, 2, 3))],
    ),
    "unfold": (
        lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(2, 1)),
        lambda: [_leaf(13, (1, 2, 4, 4))],
    ),
    "fold": (
        lambda c: F.fold(c, (4, 3), (2, 2), padding=(1, 0), stride=(1, 2)),
        lambda: [_leaf(14, (1, 8, 5))],
    ),
    "max_pool2d": (
        lambda x: F.max_pool2d(x, (3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2),
                               ceil_mode=True),
        lambda: [_distinct(15, (1, 2, 5, 5))],
    ),
    "max_pool1d": (
        lambda x: F.max_pool1d(x, 2, stride=1, padding=1),
        lambda: [_distinct(16, (2, 2, 5))],
    ),
    "avg_pool2d": (
        lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                               count_include_pad=False),
        lambda: [_leaf(17, (1, 2, 6, 5))],
    ),
    "avg_pool2d-divisor": (
        lambda x: F.avg_pool2d(x, (2, 3), stride=(1, 2), padding=(1, 1), divisor_override=4),
        lambda: [_leaf(18, (1, 1, 4, 5))],
    ),
    "avg_pool1d": (
        lambda x: F.avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True),
        lambda: [_leaf(19, (2, 2, 6))],
    ),
    "adaptive_avg_pool2d": (
        lambda x: F.adaptive_avg_pool2d(x, (3, None)),
        lambda: [_leaf(20, (1, 2, 5, 4))],
    ),
    "adaptive_avg_pool1d": (
        lambda x: F.adaptive_avg_pool1d(x, 4),
        lambda: [_leaf(21, (2, 2, 7))],
    ),
    "batch_norm-training": (
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        lambda: [_leaf(22, (4, 3, 2)), _leaf(23, (3,)), _leaf(24, (3,))],
    ),
    "batch_norm-eval": (
        lambda x, w, b: F.batch_norm(
            x, Variable(np.array([0.1, -0.2])), Variable(np.array([1.5, 0.7])), w, b
        ),
        lambda: [_leaf(25, (3, 2, 2)), _leaf(26, (2,)), _leaf(27, (2,))],
    ),
    "group_norm": (
        lambda x, w, b: F.group_norm(x, 2, w, b),
        lambda: [_leaf(28, (2, 4, 3)), _leaf(29, (4,)), _leaf(30, (4,))],
    ),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck_and_gradgradcheck(name):
    fn, make_inputs = GRADCHECKS[name]
    assert gradcheck(fn, make_inputs(), eps=1e-6, atol=1e-7, rtol=1e-6)
    assert gradgradcheck(fn, make_inputs(), eps=1e-6, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize(
    "name",
    ["Convolution", "ConvolutionInputGrad", "ConvolutionWeightGrad", "AvgPoolAdjoint",
     "Normalize"],
)
def test_gradcheck_of_the_functions_behind_the_backwards(name):
    """The Functions themselves, on a geometry F cannot ask for: strided, dilated and
    grouped, with asymmetric padding (1 before and 0 after in one dim, 0 and 1 in the
    other)."""
    from minigrad.nn._functions.convolution import (
        Convolution,
        ConvolutionInputGrad,
        ConvolutionWeightGrad,
        Geometry,
    )
    from minigrad.nn._functions.normalization import Normalize
    from minigrad.nn._functions.pooling import AvgPoolAdjoint

    geometry = Geometry((2, 1), ((1, 0), (0, 1)), (1, 2), 2)
    if name == "Convolution":
        fn, inputs = (
            lambda x, w, b: Convolution.apply(x, w, b, geometry),
            [_leaf(6, (1, 4, 5, 4)), _leaf(7, (2, 2, 2, 2)), _leaf(8, (2,))],
        )
    elif name == "ConvolutionInputGrad":
        # g (N, C_out, *P) for x (1, 4, 5, 4) and w (2, 2, 2, 2): P = (3, 3)
        fn, inputs = (
            lambda g, w: ConvolutionInputGrad.apply(g, w, None, geometry, (5, 4)),
            [_leaf(0, (1, 2, 3, 3)), _leaf(1, (2, 2, 2, 2))],
        )
    elif name == "ConvolutionWeightGrad":
        fn, inputs = (
            lambda x, g: ConvolutionWeightGrad.apply(x, g, geometry, (2, 2)),
            [_leaf(2, (1, 4, 5, 4)), _leaf(3, (1, 2, 3, 3))],
        )
    elif name == "AvgPoolAdjoint":
        pool = Geometry((2, 2), ((1, 1), (0, 1)), (1, 1))
        divisor = np.array([[2.0, 3.0], [4.0, 5.0], [1.0, 6.0]])
        fn, inputs = (
            lambda g: AvgPoolAdjoint.apply(g, pool, (2, 2), divisor, (4, 3)),
            [_leaf(4, (1, 2, 3, 2))],
        )
    else:
        fn, inputs = (lambda x: Normalize.apply(x, (0, 2), 1e-5), [_leaf(5, (3, 2, 4))])
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-7, rtol=1e-6)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)


# =========================================================================== float32


def _float32(seed: int, shape: tuple[int, ...]) -> Variable:
    return Variable(random(seed, shape).astype(np.float32), requires_grad=True)


def _stats32() -> tuple[Variable, Variable]:
    return Variable(np.zeros(3, np.float32)), Variable(np.ones(3, np.float32))


# each takes v(seed, shape), which makes a float32 leaf (and remembers it)
FLOAT32: dict[str, Callable[[Callable], Variable]] = {
    "conv2d": lambda v: F.conv2d(
        v(0, (2, 4, 5, 5)), v(1, (6, 2, 2, 3)), v(2, (6,)), padding="same", groups=2
    ),
    "conv1d": lambda v: F.conv1d(v(0, (3, 7)), v(1, (2, 3, 3)), stride=2),
    "conv_transpose2d": lambda v: F.conv_transpose2d(
        v(0, (2, 4, 3, 3)), v(1, (4, 3, 2, 2)), v(2, (3,)), stride=2, output_padding=1
    ),
    "conv_transpose1d": lambda v: F.conv_transpose1d(v(0, (2, 4, 3)), v(1, (4, 1, 2)), groups=2),
    "unfold": lambda v: F.unfold(v(0, (2, 3, 5, 5)), 2, padding=1),
    "fold": lambda v: F.fold(v(0, (2, 12, 16)), (5, 5), 2),
    "max_pool2d": lambda v: F.max_pool2d(v(0, (2, 3, 5, 5)), 2, padding=1),
    "max_pool1d": lambda v: F.max_pool1d(v(0, (2, 3, 5)), 3, ceil_mode=True),
    "avg_pool2d": lambda v: F.avg_pool2d(
        v(0, (2, 3, 5, 5)), 3, stride=2, padding=1, count_include_pad=False
    ),
    "avg_pool2d-divisor": lambda v: F.avg_pool2d(v(0, (2, 3, 5, 5)), 2, divisor_override=3),
    "avg_pool1d": lambda v: F.avg_pool1d(v(0, (2, 3, 5)), 2, ceil_mode=True),
    "adaptive_avg_pool2d": lambda v: F.adaptive_avg_pool2d(v(0, (2, 3, 5, 5)), (2, 3)),
    "adaptive_avg_pool1d": lambda v: F.adaptive_avg_pool1d(v(0, (2, 3, 5)), 3),
    "batch_norm-training": lambda v: F.batch_norm(
        v(0, (4, 3, 2)), *_stats32(), v(1, (3,)), v(2, (3,)), training=True
    ),
    "batch_norm-eval": lambda v: F.batch_norm(v(0, (4, 3, 2)), *_stats32(), v(1, (3,)), v(2, (3,))),
    "group_norm": lambda v: F.group_norm(v(0, (2, 4, 3)), 2, v(1, (4,)), v(2, (4,))),
    "dropout2d": lambda v: F.dropout2d(v(0, (2, 4, 3, 3)), 0.5),
}


@pytest.mark.parametrize("name", list(FLOAT32))
def test_float32_stays_float32(name):
    """Values and every gradient in float32 (no silent float64 on the way), second
    derivatives included."""
    leaves: list[Variable] = []

    def v(seed: int, shape: tuple[int, ...]) -> Variable:
        leaves.append(_float32(seed, shape))
        return leaves[-1]

    y = FLOAT32[name](v)
    assert y.dtype == np.float32, y.dtype
    grads = mg.autograd.grad((y * y).sum(), leaves, create_graph=True)
    for leaf, grad in zip(leaves, grads):
        assert grad.dtype == np.float32, (leaf.shape, grad.dtype)
    second = mg.autograd.grad(sum(g.sum() for g in grads), leaves, allow_unused=True)
    for grad in second:
        assert grad is None or grad.dtype == np.float32, grad.dtype


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.Conv2d(4, 6, 3, padding=1, groups=2),
        lambda: nn.Conv1d(4, 6, 2, padding="same"),
        lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1),
        lambda: nn.BatchNorm2d(4),
        lambda: nn.BatchNorm1d(4, momentum=None),
        lambda: nn.GroupNorm(2, 4),
    ],
    ids=["Conv2d", "Conv1d", "ConvTranspose2d", "BatchNorm2d", "BatchNorm1d", "GroupNorm"],
)
def test_float32_modules_stay_float32(make):
    layer = make().float()
    dims = 1 if type(layer).__name__.endswith("1d") else 2
    x = _float32(0, (3, 4, *(5,) * dims))
    for training in (True, False):
        layer.train(training)
        y = layer(x)
        assert y.dtype == np.float32
        y.sum().backward()
        assert x.grad.dtype == np.float32
        for parameter in layer.parameters():
            assert parameter.grad.dtype == np.float32
        for buffer in layer.buffers():
            if buffer.dtype.kind == "f":
                assert buffer.dtype == np.float32


# =========================================================================== bad input


def _minigrad_library() -> SimpleNamespace:
    return SimpleNamespace(
        F=F, nn=nn, t=lambda *shape, dtype="float64": Variable(np.ones(shape, dtype=dtype))
    )


def _torch_library(torch: Any) -> SimpleNamespace:
    return SimpleNamespace(
        F=torch.nn.functional, nn=torch.nn,
        t=lambda *shape, dtype="float64": torch.ones(shape, dtype=getattr(torch, dtype)),
    )


# id, the call (on either library), the exception class (PyTorch's), what the message names
BAD_INPUT: list[tuple[str, Callable[[Any], Any], type, str]] = [
    ("conv-channels", lambda m: m.F.conv2d(m.t(2, 4, 5, 5), m.t(6, 3, 3, 3)), RuntimeError,
     r"to have 3 channels, but got 4 channels"),
    ("conv1d-channels", lambda m: m.F.conv1d(m.t(2, 4, 5), m.t(6, 3, 3)), RuntimeError,
     r"to have 3 channels, but got 4 channels"),
    ("Conv2d-channels", lambda m: m.nn.Conv2d(3, 6, 3).double()(m.t(2, 4, 5, 5)), RuntimeError,
     r"to have 3 channels, but got 4 channels"),
    ("conv-kernel-too-large", lambda m: m.F.conv2d(m.t(1, 2, 5, 5), m.t(3, 2, 4, 8), padding=1),
     RuntimeError, r"padded input size per channel: \(7 x 7\). Kernel size: \(4 x 8\)"),
    ("conv-dilated-kernel-too-large",
     lambda m: m.F.conv1d(m.t(1, 2, 5), m.t(3, 2, 3), dilation=3), RuntimeError,
     r"\(5\). Kernel size: \(7\)"),
    ("conv-groups-input", lambda m: m.F.conv2d(m.t(2, 5, 5, 5), m.t(6, 2, 3, 3), groups=2),
     RuntimeError, r"groups=2.*to have 4 channels, but got 5 channels"),
    ("conv-groups-output", lambda m: m.F.conv2d(m.t(2, 4, 5, 5), m.t(6, 1, 3, 3), groups=4),
     RuntimeError, r"divisible by 4 at dimension 0.*\[6, 1, 3, 3\]"),
    ("conv-groups-zero", lambda m: m.F.conv2d(m.t(2, 4, 5, 5), m.t(6, 4, 3, 3), groups=0),
     RuntimeError, r"groups"),
    ("Conv2d-groups-input", lambda m: m.nn.Conv2d(5, 6, 3, groups=2), ValueError,
     r"in_channels must be divisible by groups"),
    ("Conv2d-groups-output", lambda m: m.nn.Conv2d(4, 6, 3, groups=4), ValueError,
     r"out_channels must be divisible by groups"),
    ("Conv2d-groups-zero", lambda m: m.nn.Conv2d(4, 6, 3, groups=0), ValueError,
     r"groups must be a positive integer"),
    ("BatchNorm2d-3d", lambda m: m.nn.BatchNorm2d(4)(m.t(2, 4, 5)), ValueError,
     r"expected 4D input \(got 3D input\)"),
    ("BatchNorm1d-4d", lambda m: m.nn.BatchNorm1d(4)(m.t(2, 4, 5, 5)), ValueError,
     r"expected 2D or 3D input \(got 4D input\)"),
    ("padding-string", lambda m: m.F.conv2d(m.t(1, 4, 5, 5), m.t(6, 4, 3, 3), padding="full"),
     RuntimeError, r"(?i)invalid padding string.*'full'"),
    ("Conv2d-padding-string", lambda m: m.nn.Conv2d(4, 6, 3, padding="full"), ValueError,
     r"Invalid padding string 'full'"),
    ("same-strided",
     lambda m: m.F.conv2d(m.t(1, 4, 5, 5), m.t(6, 4, 3, 3), padding="same", stride=2),
     RuntimeError, r"padding='same' is not supported for strided convolutions"),
    ("Conv1d-same-strided", lambda m: m.nn.Conv1d(4, 6, 3, padding="same", stride=2), ValueError,
     r"padding='same' is not supported for strided convolutions"),
    ("max_pool2d-kernel-list-of-3", lambda m: m.F.max_pool2d(m.t(1, 2, 5, 5), [2, 2, 2]),
     RuntimeError, r"kernel_size must (either )?be a single int,? or a tuple of (two|2) ints"),
    ("avg_pool2d-kernel-tuple-of-3", lambda m: m.F.avg_pool2d(m.t(1, 2, 5, 5), (2, 2, 2)),
     RuntimeError, r"kernel_size must (either )?be a single int,? or a tuple of (two|2) ints"),
    ("conv2d-stride-tuple-of-3",
     lambda m: m.F.conv2d(m.t(1, 4, 5, 5), m.t(6, 4, 3, 3), stride=(1, 1, 1)), RuntimeError,
     r"stride"),
    ("Conv2d-kernel-list-of-3", lambda m: m.nn.Conv2d(4, 6, [3, 3, 3])(m.t(1, 4, 5, 5)),
     RuntimeError, r"(kernel_size|stride)"),
    ("unfold-kernel-tuple-of-3", lambda m: m.F.unfold(m.t(1, 2, 5, 5), (2, 2, 2)),
     RuntimeError, r"kernel_size"),
    ("conv-bias-shape", lambda m: m.F.conv2d(m.t(1, 4, 5, 5), m.t(6, 4, 3, 3), m.t(5)),
     RuntimeError, r"bias.*6.*5"),
    ("conv-kernel-zero", lambda m: m.F.conv2d(m.t(1, 4, 5, 5), m.t(6, 4, 0, 3)), RuntimeError,
     r"kernel size should be greater than zero"),
    ("conv2d-2d-input", lambda m: m.F.conv2d(m.t(5, 5), m.t(6, 4, 3, 3)), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: "
     r"\[5, 5\]"),
    ("conv_transpose-channels",
     lambda m: m.F.conv_transpose2d(m.t(2, 4, 5, 5), m.t(3, 2, 3, 3)), RuntimeError,
     r"to have 3 channels, but got 4 channels"),
    ("conv_transpose-groups", lambda m: m.F.conv_transpose2d(m.t(2, 4, 5, 5), m.t(4, 3, 3, 3),
                                                             groups=3),
     RuntimeError, r"divisible by 3 at dimension 0"),
    ("conv_transpose-output-padding",
     lambda m: m.F.conv_transpose2d(m.t(1, 4, 5, 5), m.t(4, 6, 3, 3), stride=2,
                                    output_padding=2),
     RuntimeError, r"output.padding.*smaller than.*stride"),
    ("max_pool2d-padding", lambda m: m.F.max_pool2d(m.t(1, 2, 5, 5), 3, padding=2), RuntimeError,
     r"pad.*half.*pad=2.*kernel_size=3"),
    ("max_pool2d-padding-dilated",
     lambda m: m.F.max_pool2d(m.t(1, 2, 5, 5), 3, padding=2, dilation=2), RuntimeError,
     r"(?i)pad.*half of (the )?kernel size"),
    ("max_pool1d-padding", lambda m: m.F.max_pool1d(m.t(2, 5), 3, padding=2), RuntimeError,
     r"pad.*half.*kernel"),
    ("avg_pool2d-padding", lambda m: m.F.avg_pool2d(m.t(1, 2, 5, 5), 3, padding=2),
     RuntimeError, r"pad.*half.*pad=2.*kernel_size=3"),
    ("max_pool-window-too-large", lambda m: m.F.max_pool2d(m.t(1, 2, 5, 5), 7, stride=1),
     RuntimeError, r"(?i)output size"),
    ("fold-blocks", lambda m: m.F.fold(m.t(2, 12, 11), (5, 5), 2), RuntimeError,
     r"padding=\(0, 0\).*sliding blocks 4 \* 4 = 16, but got (input.size\(2\)=)?11"),
    ("fold-channels", lambda m: m.F.fold(m.t(2, 13, 16), (5, 5), 2), RuntimeError,
     r"divisible by the product of kernel_size.*13"),
    ("fold-kernel-too-large", lambda m: m.F.fold(m.t(2, 36, 1), (1, 1), 3), RuntimeError,
     r"sliding blocks.*\(-1, -1\)"),
    ("unfold-kernel-too-large", lambda m: m.F.unfold(m.t(1, 2, 5, 5), 7), RuntimeError,
     r"\(7, 7\) kernel.*\(5, 5\)"),
    ("group_norm-groups", lambda m: m.F.group_norm(m.t(2, 6, 4), 4), RuntimeError,
     r"divisible by num_groups, but got input of shape \[2, 6, 4\] and num_groups=4"),
    ("group_norm-1d", lambda m: m.F.group_norm(m.t(6), 2), RuntimeError,
     r"(?i)expected at least 2 dimensions for input tensor"),
    ("GroupNorm-groups", lambda m: m.nn.GroupNorm(4, 6), ValueError,
     r"num_channels \(6\) must be divisible by num_groups \(4\)"),
    ("batch_norm-one-value", lambda m: m.F.batch_norm(m.t(1, 3), None, None, training=True),
     ValueError, r"more than 1 value per channel when training"),
    ("batch_norm-eval-without-running-stats",
     lambda m: m.F.batch_norm(m.t(2, 3), None, None, training=False), RuntimeError,
     r"running_mean must be defined in evaluation mode"),
    ("batch_norm-running-shape",
     lambda m: m.F.batch_norm(m.t(2, 3), m.t(4), m.t(4)), RuntimeError, r"running_mean.*(3|4)"),
    ("adaptive-output-size-length",
     lambda m: m.F.adaptive_avg_pool2d(m.t(1, 2, 5, 5), (1, 2, 3)), RuntimeError,
     r"output_size.*2"),
    ("dropout2d-p", lambda m: m.F.dropout2d(m.t(1, 2, 3, 3), 1.5), ValueError,
     r"dropout probability has to be between 0 and 1, but got 1.5"),
]


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in BAD_INPUT],
                         ids=[c[0] for c in BAD_INPUT])
def test_bad_input_raises_pytorchs_class_with_a_clear_message(call, error, message):
    """PyTorch's exception class (never a NumPy error or a bare AssertionError, IndexError,
    KeyError), and a message that names the mismatch."""
    with pytest.raises(error, match=message):
        call(_minigrad_library())


@pytest.mark.parametrize(("call", "error"), [c[1:3] for c in BAD_INPUT],
                         ids=[c[0] for c in BAD_INPUT])
def test_bad_input_raises_the_same_class_in_torch(real_torch, call, error):
    """The table above is PyTorch's behaviour: the same calls in torch raise the same class."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error):
            call(_torch_library(real_torch))


def test_conv_promotes_mixed_dtypes_as_linear_does():
    """float32 images into float64 weights (minigrad's default) compute in float64, as
    nn.Linear does; each gradient comes back in its own operand's dtype. (PyTorch raises
    instead: its parameters default to float32, so its users rarely mix.)"""
    rng = np.random.default_rng(3)
    x = Variable(rng.standard_normal((2, 3, 6, 6)).astype(np.float32), requires_grad=True)
    w = Variable(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    b = Variable(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    y = F.conv2d(x, w, b, padding=1)
    assert y.dtype == np.float64
    expected = F.conv2d(x.double(), w, b.double(), padding=1)
    np.testing.assert_allclose(y.data, expected.data, rtol=1e-12)
    y.sum().backward()
    assert (x.grad.dtype, w.grad.dtype, b.grad.dtype) == (np.float32, np.float64, np.float32)
    z = F.conv_transpose2d(x, w.transpose(0, 1).contiguous())
    assert z.dtype == np.float64


# --------------------------------------------------------------------------- review fixes


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: F.group_norm(Variable(np.arange(12).reshape(2, 2, 3)), 1), RuntimeError,
         r"floating point.*int64.*x\.float\(\)"),
        (lambda: F.batch_norm(Variable(np.arange(12).reshape(2, 2, 3)), None, None,
                              training=True), RuntimeError, r"floating point"),
        (lambda: F.max_pool2d(Variable(np.ones((1, 1, 4, 4), dtype=bool)), 2),
         NotImplementedError, r"bool.*x\.float\(\)"),
        (lambda: nn.Conv2d(1, 4, 3)(Variable(np.ones((5, 8, 8)))), RuntimeError,
         r"unbatched.*x\.unsqueeze\(1\)"),
        (lambda: nn.Conv2d(1, 2, 3)(Variable(np.ones((2, 8, 8, 1)))), RuntimeError,
         r"permute\(0, 3, 1, 2\)"),
        (lambda: nn.BatchNorm1d(3)(Variable(np.ones((2, 3, 4, 4)))), ValueError,
         r"4D input.*BatchNorm2d"),
        (lambda: nn.BatchNorm2d(4)(Variable(np.ones((2, 3, 4, 4)))), RuntimeError,
         r"4 channels.*\[2, 3, 4, 4\]"),
        (lambda: nn.GroupNorm(2, 8)(Variable(np.ones((2, 6, 3)))), RuntimeError,
         r"\(N, 8, \*\).*\[2, 6, 3\]"),
        (lambda: nn.BatchNorm2d(3, eps=-1.0), ValueError, r"eps must be a number >= 0"),
        (lambda: F.max_pool2d(Variable(np.ones((1, 1, 4, 4))), 2, padding=-1), RuntimeError,
         r"padding must be non-negative"),
        (lambda: nn.Conv2d(1, 1, 3, padding_mode="bogus"), ValueError,
         r"padding_mode must be one of"),
        (lambda: nn.Conv2d(1, 1, 3, padding_mode="reflect"), NotImplementedError,
         r"only 'zeros'"),
        (lambda: F.conv2d(Variable(np.ones((1, 1, 2, 2))), Variable(np.ones((1, 1, 3, 3)))),
         RuntimeError, r"pad the input"),
    ],
)
def test_mistakes_a_reviewer_made_get_a_message_that_says_what_to_do(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_numpy_integers_size_the_layers():
    assert nn.Conv2d(np.int64(1), np.int64(2), 3).weight.shape == (2, 1, 3, 3)
    assert nn.BatchNorm2d(np.int64(2)).running_mean.shape == (2,)
    assert nn.GroupNorm(np.int64(2), np.int64(4)).weight.shape == (4,)


def test_conv_with_its_weight_on_another_device_says_which():
    x = Variable(np.ones((1, 1, 4, 4)))
    w = Variable(np.ones((1, 1, 3, 3))).to("cuda")
    with pytest.raises(RuntimeError, match=r"conv2d: .*input on cpu and weight on cuda"):
        F.conv2d(x, w)


def test_batch_norm_momentum_none_replays_under_compile_and_equals_torch():
    """The cumulative average (momentum=None) weighs batch n by 1/n; computed by an
    operation on num_batches_tracked, so a compiled step replays it."""
    import minigrad
    from minigrad import optim

    layer = nn.BatchNorm2d(3, momentum=None).double()
    optimizer = optim.SGD(layer.parameters(), lr=0.1)

    def step(x):
        optimizer.zero_grad()
        loss = (layer(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    compiled = minigrad.compile(step)
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((4, 3, 5, 5)) for _ in range(5)]
    for batch in batches:
        compiled(Variable(batch))
    assert "replay" in compiled.explain() and "eager" not in compiled.explain()
    stacked = np.stack(batches)  # the cumulative average of the batch means and variances
    means = stacked.mean(axis=(1, 3, 4))
    variances = stacked.var(axis=(1, 3, 4), ddof=1)
    np.testing.assert_allclose(layer.running_mean.numpy(), means.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(layer.running_var.numpy(), variances.mean(axis=0), rtol=1e-12)
    assert layer.num_batches_tracked.item() == 5
