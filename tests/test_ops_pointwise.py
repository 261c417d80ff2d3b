"""The elementwise ops of minigrad/ops/elementwise.py: sin, cos, square, rsqrt, log1p, expm1, erf,
sign, floor, ceil, round, clamp (clip), maximum, minimum, where and masked_fill.

Each case is written once as `fn(lib, *xs)`, with lib either minigrad or torch, and checked

- by gradcheck in float64, first and second order;
- in float32: the dtype is kept and the values agree with float64;
- against PyTorch, when it is installed: values, gradients and second derivatives;
- on cuda (Numba's simulator): the same answer as the CPU, or "not supported on cuda yet".

Ties and edges (maximum's ties, clamp at its bounds, round's halves, sign of nan) are compared
with PyTorch on their own, as are in-place variants, broadcasting and the error messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad
from minigrad import Variable

RNG = np.random.default_rng(7)
GENERAL = RNG.uniform(-2, 2, (2, 3))
POSITIVE = RNG.uniform(0.5, 2, (2, 3))
# Away from the jumps of floor, ceil, round and sign (integers, halves, zero), so finite
# differences see the zero gradient.
STEPPED = np.array([[-1.3, 0.2, 2.7], [0.6, -0.35, 1.1]])
# Both halves of erf's evaluation (|x| below and above 2.5), and 0.
ERF_POINTS = np.array([[-3.1, -2.4, -0.7], [0.0, 0.3, 2.6]])
MASK = np.array([[True, False, True], [False, False, True]])


def scalar(value: float) -> np.ndarray:
    return np.array(value)


# name: (fn(lib, *xs), input arrays)
CASES: dict[str, tuple[Callable, list]] = {
    "sin": (lambda lib, x: lib.sin(x), [GENERAL]),
    "cos": (lambda lib, x: x.cos(), [GENERAL]),
    "square": (lambda lib, x: lib.square(x), [GENERAL]),
    "rsqrt": (lambda lib, x: lib.rsqrt(x), [POSITIVE]),
    "log1p": (lambda lib, x: lib.log1p(x), [POSITIVE - 1.2]),
    "expm1": (lambda lib, x: x.expm1(), [GENERAL]),
    "erf": (lambda lib, x: lib.erf(x), [ERF_POINTS]),
    "sign": (lambda lib, x: lib.sign(x) * x, [STEPPED]),
    "floor": (lambda lib, x: lib.floor(x) + x, [STEPPED]),
    "ceil": (lambda lib, x: x.ceil() * x, [STEPPED]),
    "round": (lambda lib, x: lib.round(x) - x, [STEPPED]),
    "round-decimals": (lambda lib, x: lib.round(x * 10, decimals=-1) + x, [STEPPED]),
    "clamp": (lambda lib, x: lib.clamp(x, -0.5, 0.7), [STEPPED]),
    "clamp-min": (lambda lib, x: x.clamp(min=0.0), [STEPPED]),
    "clamp-max": (lambda lib, x: x.clamp(max=1.0), [STEPPED]),
    "clip": (lambda lib, x: lib.clip(x, -1.0, 1.0), [STEPPED]),
    "clamp-variables": (
        lambda lib, x, low, high: lib.clamp(x, low, high),
        [STEPPED, np.array([-0.5, 0.0, 3.0]), np.array([[0.9], [0.5]])],
    ),
    "clamp-variable-min": (
        lambda lib, x, low: lib.clamp(x, min=low),
        [STEPPED, np.array([[-1.0, 0.5, 0.0]])],
    ),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), [GENERAL, np.array([0.3, -0.2, 0.1])]),
    "minimum": (lambda lib, a, b: a.minimum(b), [GENERAL, np.array([[0.4], [-0.3]])]),
    "where": (
        lambda lib, x, y: lib.where(lib.tensor(MASK), x, y),
        [GENERAL, np.array([0.5, -1.0, 2.0])],
    ),
    "where-method": (lambda lib, x, y: x.where(x > 0, y), [STEPPED, scalar(0.25)]),
    "where-number": (lambda lib, x: lib.where(x < 0.5, x, 0.0), [STEPPED]),
    "masked_fill": (lambda lib, x: x.masked_fill(lib.tensor(MASK), -2.0), [GENERAL]),
    "masked_fill-variable": (
        lambda lib, x, v: x.masked_fill(lib.tensor(MASK[0]), v),
        [GENERAL, scalar(1.5)],
    ),
}
SMOOTH = ("sin", "cos", "square", "rsqrt", "log1p", "expm1", "erf")


def leaves(arrays: list, dtype: type = np.float64) -> list[Variable]:
    return [minigrad.tensor(np.asarray(a, dtype=dtype), requires_grad=True) for a in arrays]


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_first_and_second_order(name: str) -> None:
    fn, arrays = CASES[name]
    xs = leaves(arrays)
    assert minigrad.gradcheck(lambda *v: fn(minigrad, *v), xs)
    with minigrad.no_grad():
        shape = fn(minigrad, *xs).shape
    weight = minigrad.tensor(RNG.uniform(-1, 1, shape), requires_grad=True)
    # Double backward: gradcheck of x -> d<fn(x), weight>/dx (and of the weight).
    assert minigrad.gradgradcheck(lambda *v: fn(minigrad, *v), xs, (weight,))


@pytest.mark.parametrize("name", list(CASES))
def test_float32_keeps_its_dtype_and_agrees_with_float64(name: str) -> None:
    fn, arrays = CASES[name]
    out32 = fn(minigrad, *leaves(arrays, np.float32))
    out64 = fn(minigrad, *leaves(arrays))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32.detach().numpy(), out64.detach().numpy(), atol=2e-6)
    xs = leaves(arrays, np.float32)
    fn(minigrad, *xs).sum().backward()
    assert all(x.grad is None or x.grad.dtype == np.float32 for x in xs)


# ----------------------------------------------------------------------------- PyTorch


def run(lib, fn: Callable, arrays: list, weight: np.ndarray) -> tuple:
    """Forward, first gradients (with a graph) and the second derivative of their sum."""
    xs = [lib.tensor(np.array(a), requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    firsts = lib.autograd.grad((out * lib.tensor(weight)).sum(), xs, create_graph=True)
    total = sum(g.sum() for g in firsts if g.requires_grad)
    seconds = (
        lib.autograd.grad(total, xs, allow_unused=True) if torch_like_requires_grad(total) else ()
    )
    return out, firsts, seconds


def torch_like_requires_grad(value) -> bool:
    return not isinstance(value, int) and value.requires_grad


def values(item) -> np.ndarray:
    if item is None:
        return None
    return np.asarray(item.data) if isinstance(item, Variable) else item.detach().numpy(force=True)


@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_second_derivatives_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    fn, arrays = CASES[name]
    with minigrad.no_grad():
        shape = fn(minigrad, *[minigrad.tensor(a) for a in arrays]).shape
    weight = RNG.uniform(-1, 1, shape)
    mine, theirs = run(minigrad, fn, arrays, weight), run(torch, fn, arrays, weight)
    np.testing.assert_allclose(values(mine[0]), values(theirs[0]), rtol=1e-13, atol=1e-15)
    for got, want in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(values(got), values(want), rtol=1e-12, atol=1e-15)
    for index, (got, want) in enumerate(zip(mine[2], theirs[2])):
        zeros = np.zeros(np.shape(arrays[index]))
        got = zeros if got is None else values(got)
        want = zeros if want is None else values(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def grads_of(lib, fn: Callable, *arrays) -> tuple:
    xs = [lib.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    out.sum().backward()
    zeros = [np.zeros(np.shape(a)) for a in arrays]
    return values(out), [z if x.grad is None else values(x.grad) for x, z in zip(xs, zeros)]


EDGES = {
    # Ties split the gradient half and half.
    "maximum-ties": (lambda lib, a, b: lib.maximum(a, b), [[1.0, 2.0, 3.0], [1.0, 1.0, 4.0]]),
    "minimum-ties": (lambda lib, a, b: lib.minimum(a, b), [[1.0, 2.0, 3.0], [1.0, 1.0, 4.0]]),
    "maximum-nan": (lambda lib, a, b: lib.maximum(a, b), [[math.nan, 1.0], [1.0, math.nan]]),
    # Number bounds: no gradient exactly at a bound (PyTorch 2.14 on), nor outside.
    "clamp-at-bounds": (lambda lib, x: x.clamp(0.0, 1.0), [[-2.0, 0.0, 0.5, 1.0, 3.0]]),
    "clamp-min-at-bound": (lambda lib, x: x.clamp(min=0.0), [[-1.0, 0.0, 1.0]]),
    "clamp-max-at-bound": (lambda lib, x: x.clamp(max=0.0), [[-1.0, 0.0, 1.0]]),
    "clamp-crossed-numbers": (lambda lib, x: x.clamp(2.0, 1.0), [[0.0, 1.5, 3.0]]),
    # Variable bounds: ties split, equal bounds, crossed bounds (everything to max).
    "clamp-variable-ties": (
        lambda lib, x, low, high: lib.clamp(x, low, high),
        [
            [-1.0, 0.0, 0.5, 1.0, 2.0, -1.0, 0.0, 0.5, 0.5, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ],
    ),
    "clamp-variable-min-ties": (
        lambda lib, x, low: lib.clamp(x, min=low),
        [[-1.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
    ),
    "clamp-variable-max-ties": (
        lambda lib, x, high: lib.clamp(x, max=high),
        [[-1.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
    ),
    "clamp-nan": (lambda lib, x: x.clamp(0.0, 1.0), [[math.nan, 0.5]]),
    # Step functions: halves to even, nan's sign is 0, the gradient is 0 everywhere.
    "round-halves": (lambda lib, x: lib.round(x), [[0.5, 1.5, 2.5, -0.5, -2.5, 3.49]]),
    "round-decimals": (
        lambda lib, x: lib.round(x, decimals=2),
        [[1.005, 0.125, 0.375, -2.675, 12345.678]],
    ),
    "round-negative-decimals": (
        lambda lib, x: lib.round(x, decimals=-2),
        [[1250.0, 1350.0, -149.9, 12345.678]],
    ),
    "floor-ceil": (lambda lib, x: lib.floor(x) + lib.ceil(x), [[-1.5, -0.0, 0.0, 2.0, 2.5]]),
    "sign": (lambda lib, x: lib.sign(x), [[-2.0, -0.0, 0.0, 3.0, math.nan, math.inf]]),
    # Infinite and signed-zero edges of the smooth functions.
    "rsqrt-zero": (lambda lib, x: lib.rsqrt(x), [[0.0, 4.0, math.inf]]),
    "log1p-edges": (lambda lib, x: lib.log1p(x), [[-1.0, 1e-20, math.inf]]),
    "expm1-small": (lambda lib, x: lib.expm1(x), [[1e-20, -1e-10, -math.inf]]),
    "erf-edges": (lambda lib, x: lib.erf(x), [[math.inf, -math.inf, 1e-300, 30.0, -6.0]]),
    "where-infinite-gradient-stays-out": (
        lambda lib, x: lib.where(x > 0, lib.sqrt(x), 0.0),
        [[0.0, 4.0]],
    ),
}


@pytest.mark.parametrize("name", list(EDGES))
def test_ties_and_edges_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    if name.startswith("clamp") and ("bound" in name or "ties" in name) and version < (2, 14):
        pytest.skip("PyTorch before 2.14 gives x a gradient of 1 exactly at a clamp bound or tie")
    fn, arrays = EDGES[name]
    with np.errstate(all="ignore"):
        mine_out, mine_grads = grads_of(minigrad, fn, *arrays)
    theirs_out, theirs_grads = grads_of(torch, fn, *arrays)
    np.testing.assert_allclose(mine_out, theirs_out, rtol=1e-14, equal_nan=True)
    assert np.array_equal(np.signbit(mine_out), np.signbit(theirs_out)) or name == "erf-edges"
    for got, want in zip(mine_grads, theirs_grads):
        np.testing.assert_allclose(got, want, rtol=1e-14, equal_nan=True)


def test_erf_matches_torch_closely_over_a_wide_range() -> None:
    torch = pytest.importorskip("torch")
    x = np.concatenate([np.linspace(-7, 7, 4001), [1e-300, -1e-12, 1e-6, 2.5, -2.5]])
    mine = minigrad.erf(minigrad.tensor(x)).numpy()
    theirs = torch.erf(torch.tensor(x)).numpy()
    np.testing.assert_allclose(mine, theirs, rtol=3e-15, atol=0)
    x32 = x.astype(np.float32)
    mine32 = minigrad.erf(minigrad.tensor(x32)).numpy()
    np.testing.assert_allclose(mine32, torch.erf(torch.tensor(x32)).numpy(), rtol=3e-7, atol=1e-30)


def test_dtypes_follow_torch() -> None:
    torch = pytest.importorskip("torch")
    x32 = np.array([0.5, -1.5, 2.0], dtype=np.float32)
    ints = np.array([3, -2, 0])
    mask = np.array([True, False, True])
    cases = [
        (lambda lib, x: lib.where(lib.tensor(mask), x, 0.0), x32),
        (lambda lib, x: x.masked_fill(lib.tensor(mask), lib.tensor(2.0, dtype=lib.float64)), x32),
        (lambda lib, x: lib.maximum(x, lib.tensor(x32.astype(np.float64))), x32),
        (lambda lib, x: x.clamp(-1, 1), x32),
        (lambda lib, x: x.clamp(-1, 1), ints),
        (lambda lib, x: lib.floor(x), ints),
        (lambda lib, x: lib.round(x), ints),
        (lambda lib, x: lib.sign(x), ints),
        (lambda lib, x: lib.square(x), ints),
        (lambda lib, x: x.masked_fill(lib.tensor(mask), 7), ints),
    ]
    for fn, array in cases:
        mine = fn(minigrad, minigrad.tensor(array))
        theirs = fn(torch, torch.tensor(array))
        assert str(mine.dtype) == str(theirs.dtype).removeprefix("torch."), (mine, theirs)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


# ----------------------------------------------------------------------------- broadcasting

BROADCAST_SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@BROADCAST_SETTINGS
@given(data=st.data())
def test_binary_ops_broadcast_like_numpy_and_sum_gradients_back(data: st.DataObject) -> None:
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3)
    ).input_shapes
    # Values on a 0.25 grid: maximum and clamp meet ties too.
    arrays = [
        data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-4, 4).map(lambda i: i / 4)))
        for shape in shapes
    ]
    a, b, c = leaves(arrays)
    condition = arrays[2] > 0
    results = {
        "maximum": (minigrad.maximum(a, b), np.maximum(arrays[0], arrays[1])),
        "minimum": (minigrad.minimum(a, b), np.minimum(arrays[0], arrays[1])),
        "where": (minigrad.where(c > 0, a, b), np.where(condition, arrays[0], arrays[1])),
        "clamp": (
            minigrad.clamp(a, b, c),
            np.minimum(np.maximum(arrays[0], arrays[1]), arrays[2]),
        ),
    }
    for name, (got, want) in results.items():
        np.testing.assert_array_equal(got.detach().numpy(), want, err_msg=name)
        for leaf in (a, b, c):
            leaf.grad = None
        got.sum().backward()
        for leaf in (a, b, c):
            assert leaf.grad is None or leaf.grad.shape == leaf.shape, name
        # Every output element sends exactly its gradient of 1 somewhere.
        total = sum(0.0 if v.grad is None else v.grad.numpy().sum() for v in (a, b, c))
        assert total == pytest.approx(got.numel()), name


@BROADCAST_SETTINGS
@given(data=st.data())
def test_masked_fill_broadcasts_its_mask(data: st.DataObject) -> None:
    shape_x, shape_mask = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)
    ).input_shapes
    x = data.draw(hnp.arrays(np.float64, shape_x, elements=st.floats(-3, 3)))
    mask = data.draw(hnp.arrays(np.bool_, shape_mask))
    (leaf,) = leaves([x])
    value = minigrad.tensor(5.0, requires_grad=True)
    out = leaf.masked_fill(minigrad.tensor(mask), value)
    np.testing.assert_array_equal(out.detach().numpy(), np.where(mask, 5.0, x))
    out.sum().backward()
    assert leaf.grad.shape == leaf.shape
    assert value.grad.item() == np.broadcast_to(mask, out.shape).sum()


# ----------------------------------------------------------------------------- in place

INPLACE = {
    "sin_": lambda x: x.sin_(),
    "cos_": lambda x: x.cos_(),
    "square_": lambda x: x.square_(),
    "rsqrt_": lambda x: x.abs().add_(1).rsqrt_(),
    "log1p_": lambda x: x.abs().log1p_(),
    "expm1_": lambda x: x.expm1_(),
    "erf_": lambda x: x.erf_(),
    "sign_": lambda x: x.sign_(),
    "floor_": lambda x: x.floor_(),
    "ceil_": lambda x: x.ceil_(),
    "round_": lambda x: x.round_(decimals=1),
    "clamp_": lambda x: x.clamp_(-0.5, 0.5),
    "clip_": lambda x: x.clip_(max=0.2),
    "masked_fill_": lambda x: x.masked_fill_(minigrad.tensor(MASK), 3.0),
}
OUT_OF_PLACE = {
    "rsqrt_": lambda x: (x.abs() + 1).rsqrt(),
    "log1p_": lambda x: x.abs().log1p(),
    "round_": lambda x: x.round(decimals=1),
    "clamp_": lambda x: x.clamp(-0.5, 0.5),
    "clip_": lambda x: x.clip(max=0.2),
    "masked_fill_": lambda x: x.masked_fill(minigrad.tensor(MASK), 3.0),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_variant_equals_the_out_of_place_op(name: str) -> None:
    expected_fn = OUT_OF_PLACE.get(name, lambda x: getattr(x, name[:-1])())
    (a,) = leaves([GENERAL])
    expected = expected_fn(a * 1)
    expected.sum().backward()
    (b,) = leaves([GENERAL])
    y = b * 1  # a non-leaf, which may change in place
    result = INPLACE[name](y)
    np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy())
    result.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy())


def test_inplace_on_a_leaf_that_requires_grad_is_refused() -> None:
    (x,) = leaves([GENERAL])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.sin_()
    with minigrad.no_grad():
        x.clamp_(0, 1)
    assert x.detach().numpy().min() >= 0 and x.detach().numpy().max() <= 1


def test_inplace_masked_fill_cannot_grow_its_variable() -> None:
    x = minigrad.zeros(3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.masked_fill_(minigrad.tensor([[True], [False]]), 1.0)


def test_every_op_is_in_the_table() -> None:
    for name in ("sin", "cos", "square", "rsqrt", "log1p", "expm1", "erf", "sign", "floor"):
        assert callable(getattr(minigrad, name)) and callable(getattr(Variable, name + "_"))
    for name in ("ceil", "round", "clamp", "clip", "masked_fill"):
        assert callable(getattr(minigrad, name)) and callable(getattr(Variable, name + "_"))
    for name in ("maximum", "minimum", "where"):
        assert callable(getattr(minigrad, name)) and callable(getattr(Variable, name))
        assert not hasattr(Variable, name + "_")
    for name in ("exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "neg", "negative"):
        assert callable(getattr(minigrad, name)) and callable(getattr(Variable, name + "_"))


# ----------------------------------------------------------------------------- errors


def test_bad_input_says_what_was_expected() -> None:
    x = minigrad.tensor([1.0, -2.0, 3.0])
    with pytest.raises(ValueError, match="at least one of min and max; got neither"):
        x.clamp()
    with pytest.raises(RuntimeError, match="bool condition, such as x > 0; got dtype float64"):
        minigrad.where(x, x, 0.0)
    with pytest.raises(RuntimeError, match="bool condition.*got dtype int64"):
        x.masked_fill(minigrad.tensor([1, 0, 1]), 0.0)
    with pytest.raises(ValueError, match="one value.*shape \\(2,\\).*where"):
        x.masked_fill(x > 0, minigrad.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"maximum: shapes \(3,\), \(2,\) cannot be broadcast"):
        minigrad.maximum(x, minigrad.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"where: shapes \(2,\), \(3,\), \(\) cannot be"):
        minigrad.where(minigrad.tensor([True, False]), x, 0.0)
    with pytest.raises(ValueError, match=r"clamp: shapes \(3,\), \(2,\) cannot be broadcast"):
        x.clamp(minigrad.tensor([0.0, 1.0]))
    with pytest.raises(TypeError, match="argument 'decimals' .* must be an int, but got float 1.5"):
        x.round(decimals=1.5)
    with pytest.raises(TypeError, match="sin needs numbers, but got a text Variable"):
        Variable("text").sin()


# ----------------------------------------------------------------------------- cuda

CUDA_CASES = {
    "sin": lambda x: x.sin(),
    "cos": lambda x: x.cos(),
    "square": lambda x: x.square(),
    "rsqrt": lambda x: (x.abs() + 1).rsqrt(),
    "log1p": lambda x: x.abs().log1p(),
    "expm1": lambda x: x.expm1(),
    "erf": lambda x: x.erf(),
    "sign": lambda x: x.sign() * x,
    "floor": lambda x: x.floor(),
    "ceil": lambda x: x.ceil(),
    "round": lambda x: x.round(),
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "clamp-variables": lambda x: x.clamp(x[0], x[1] + 1),
    "maximum": lambda x: minigrad.maximum(x, x[0]),
    "minimum": lambda x: minigrad.minimum(x, 0.1),
    "where": lambda x: minigrad.where(x > 0, x, x * 2),
    "masked_fill": lambda x: x.masked_fill(x > 0, 1.0),
    "clamp_": lambda x: (x * 1).clamp_(max=0.3),
}


@pytest.mark.parametrize("name", list(CUDA_CASES))
def test_on_cuda_matches_the_cpu_or_says_not_supported_yet(name: str) -> None:
    pytest.importorskip("numba")
    fn = CUDA_CASES[name]
    results = []
    for device in ("cpu", "cuda"):
        x = minigrad.tensor(GENERAL, device=device, requires_grad=True)
        try:
            out = fn(x)
        except NotImplementedError as error:
            assert device == "cuda"
            assert f"{name} is not supported on cuda yet" in str(error)
            return
        out.sum().backward()
        assert out.device == device and x.grad.device == device
        results.append((out.detach().numpy(), x.grad.numpy()))
    (cpu_out, cpu_grad), (gpu_out, gpu_grad) = results
    np.testing.assert_allclose(gpu_out, cpu_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gpu_grad, cpu_grad, rtol=1e-12, atol=1e-14)
