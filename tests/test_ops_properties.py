"""Property tests: every built-in numeric op's backward agrees with finite differences.

For each op, hypothesis draws small float64 inputs (every dimension 1..4, broadcasting
included) and checks

- first derivatives: `minigrad.gradcheck(op, leaves)`, plus `.backward()` filling each
  leaf's `.grad` with the same vector-Jacobian product that `minigrad.grad` returns;
- second derivatives (a gradgradcheck): `minigrad.gradcheck` of
  `(x..., v) -> minigrad.grad((op(x...) * v).sum(), x, create_graph=True)`, so the backward
  of every op's backward is checked against finite differences too. The cotangent `v` is
  an input as well, which keeps linear ops (whose gradient does not depend on x) checkable.

Inputs stay away from the places where an op is not differentiable or not defined: positive
bases for `**`, `log` and `sqrt`; no values near 0 for `relu`, `abs` and divisors; distinct
values (at least 0.1 apart) for `max`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad
from minigrad import Variable

PROPERTY_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ----------------------------------------------------------------------------- strategies

GENERAL = st.floats(-3, 3, allow_nan=False, allow_infinity=False)
POSITIVE = st.floats(0.5, 3, allow_nan=False, allow_infinity=False)
AWAY_FROM_ZERO = st.one_of(st.floats(-3, -0.1), st.floats(0.1, 3))


def shapes(min_dims: int = 0, max_dims: int = 3, max_side: int = 4) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


def draw_array(data: st.DataObject, shape: tuple, elements: st.SearchStrategy = GENERAL):
    return data.draw(hnp.arrays(np.float64, shape, elements=elements))


def draw_distinct(data: st.DataObject, shape: tuple) -> np.ndarray:
    """Values on a 0.1 grid, all different: max has no ties, even after a finite step."""
    ints = data.draw(
        hnp.arrays(np.int64, shape, elements=st.integers(-40, 40), unique=True),
    )
    return ints.astype(np.float64) / 10


def draw_dim(data: st.DataObject, ndim: int) -> int:
    """A valid dimension of an ndim-D array, negative or not (0 or -1 for a 0-d one, as in
    PyTorch, where a scalar behaves as if it had one dimension for `dim` arguments)."""
    rank = max(ndim, 1)
    return data.draw(st.integers(-rank, rank - 1))


def draw_dims(data: st.DataObject, ndim: int):
    """The `dim` argument of sum/mean: None, an int, or a tuple (any order, negatives)."""
    kind = data.draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw_dim(data, ndim)
    rank = max(ndim, 1)
    axes = data.draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
    return tuple(a - rank if data.draw(st.booleans()) else a for a in axes)


# ----------------------------------------------------------------------------- checks


def leaves_of(arrays: list[np.ndarray]) -> list[Variable]:
    return [Variable(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]


def check_first_order(fn: Callable, arrays: list[np.ndarray], cotangent: np.ndarray) -> None:
    """gradcheck, and backward() accumulating into .grad what grad() returns."""
    leaves = leaves_of(arrays)
    assert minigrad.gradcheck(fn, leaves)

    out = fn(*leaves)
    assert out.requires_grad
    weight = Variable(cotangent)
    expected = minigrad.grad((out * weight).sum(), leaves, retain_graph=True, allow_unused=True)
    assert all(leaf.grad is None for leaf in leaves)  # grad() leaves .grad alone
    (out * weight).sum().backward()
    for leaf, want in zip(leaves, expected):
        assert leaf.grad is not None
        assert leaf.grad.shape == leaf.shape
        want_data = np.zeros(leaf.shape) if want is None else want.data
        np.testing.assert_allclose(leaf.grad.data, want_data, rtol=1e-12, atol=1e-12)


def check_second_order(fn: Callable, arrays: list[np.ndarray], cotangent: np.ndarray) -> None:
    """gradgradcheck: the gradient of the gradient matches finite differences of the gradient."""
    leaves = leaves_of(arrays)
    weight = Variable(np.array(cotangent, dtype=np.float64), requires_grad=True)
    count = len(leaves)

    def first_gradients(*args: Variable) -> tuple:
        xs, w = args[:count], args[count]
        # gradcheck evaluates fn under no_grad for finite differences; the inner grad needs
        # a graph in both passes.
        with minigrad.enable_grad():
            out = fn(*xs)
            grads = minigrad.grad((out * w).sum(), xs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    # The first gradient itself is a differentiable function of (x, v).
    grads = first_gradients(*leaves, weight)
    assert grads and all(g.requires_grad for g in grads)
    assert minigrad.gradcheck(first_gradients, [*leaves, weight])


def output_shape(fn: Callable, arrays: list[np.ndarray]) -> tuple:
    with minigrad.no_grad():
        return fn(*[Variable(a) for a in arrays]).shape


# ----------------------------------------------------------------------------- op cases
# Each case draws (fn, arrays): fn maps leaf Variables (one per array) to one Variable.


def binary_case(op: Callable, left: st.SearchStrategy, right: st.SearchStrategy):
    def draw(data: st.DataObject):
        shape_a, shape_b = data.draw(
            hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
        ).input_shapes
        return op, [draw_array(data, shape_a, left), draw_array(data, shape_b, right)]

    return draw


def constant_case(op: Callable, left: st.SearchStrategy, right: st.SearchStrategy):
    """One side is a leaf; the other a Python float, a NumPy array or a Variable constant."""

    def draw(data: st.DataObject):
        shape_a, shape_b = data.draw(
            hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
        ).input_shapes
        kind = data.draw(st.sampled_from(["float", "int", "ndarray", "variable"]))
        leaf_on_left = data.draw(st.booleans())
        constant_elements = right if leaf_on_left else left
        if kind == "float":
            constant = data.draw(constant_elements)
        elif kind == "int":
            constant = data.draw(st.sampled_from([2, 3]))
        elif kind == "ndarray":
            constant = draw_array(data, shape_b, constant_elements)
        else:
            constant = Variable(draw_array(data, shape_b, constant_elements))
        x = draw_array(data, shape_a, left if leaf_on_left else right)

        def fn(v: Variable) -> Variable:
            return op(v, constant) if leaf_on_left else op(constant, v)

        return fn, [x]

    return draw


def unary_case(fn: Callable, elements: st.SearchStrategy = GENERAL):
    def draw(data: st.DataObject):
        return fn, [draw_array(data, data.draw(shapes()), elements)]

    return draw


def matmul_case(data: st.DataObject):
    n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
    left_kind = data.draw(st.sampled_from(["1d", "2d", "batched"]))
    right_kind = data.draw(st.sampled_from(["1d", "2d", "batched"]))
    batch_left, batch_right = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=2, max_side=3)
    ).input_shapes
    left = {"1d": (k,), "2d": (n, k), "batched": (*batch_left, n, k)}[left_kind]
    right = {"1d": (k,), "2d": (k, m), "batched": (*batch_right, k, m)}[right_kind]
    return operator.matmul, [draw_array(data, left), draw_array(data, right)]


def matmul_constant_case(data: st.DataObject):
    n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
    x = draw_array(data, (n, k))
    constant = draw_array(data, (k, m) if data.draw(st.booleans()) else (k,))
    if data.draw(st.booleans()):
        return (lambda v: v @ constant), [x]
    x = draw_array(data, (k, m))
    constant = draw_array(data, (n, k) if data.draw(st.booleans()) else (k,))
    return (lambda v: constant @ v), [x]


def reduction_case(method: str):
    def draw(data: st.DataObject):
        shape = data.draw(shapes())
        dim = draw_dims(data, len(shape))
        keepdim = data.draw(st.booleans())
        return (lambda v: getattr(v, method)(dim, keepdim)), [draw_array(data, shape)]

    return draw


def reference_axis(dims, ndim: int):
    """NumPy's `axis` for a minigrad/PyTorch `dim`: a 0-d array has only `axis=None`."""
    return None if ndim == 0 else dims


def reference_argmax(a: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:
    return np.argmax(a, axis=reference_axis(dim, a.ndim), keepdims=keepdim and a.ndim > 0)


def max_case(data: st.DataObject):
    shape = data.draw(shapes())
    x = draw_distinct(data, shape)
    if data.draw(st.booleans()):
        return (lambda v: v.max()), [x]
    dim = draw_dim(data, len(shape))
    keepdim = data.draw(st.booleans())

    def fn(v: Variable) -> Variable:
        values, indices = v.max(dim, keepdim)
        np.testing.assert_array_equal(indices.data, reference_argmax(v.data, dim, keepdim))
        return values

    return fn, [x]


def factor_shape(data: st.DataObject, size: int) -> tuple:
    """A random shape (1..3 dims, perhaps one -1) holding `size` elements."""
    primes, n, p = [], size, 2
    while n > 1:
        while n % p == 0:
            primes.append(p)
            n //= p
        p += 1
    sizes = [1] * data.draw(st.integers(1, 3))
    for prime in primes:
        sizes[data.draw(st.integers(0, len(sizes) - 1))] *= prime
    if data.draw(st.booleans()):
        sizes[data.draw(st.integers(0, len(sizes) - 1))] = -1
    return tuple(sizes)


def reshape_case(method: str):
    def draw(data: st.DataObject):
        shape = data.draw(shapes())
        target = factor_shape(data, int(np.prod(shape)))
        if data.draw(st.booleans()):
            return (lambda v: getattr(v, method)(*target)), [draw_array(data, shape)]
        return (lambda v: getattr(v, method)(target)), [draw_array(data, shape)]

    return draw


def transpose_case(data: st.DataObject):
    shape = data.draw(shapes())
    d0, d1 = draw_dim(data, len(shape)), draw_dim(data, len(shape))
    return (lambda v: v.transpose(d0, d1)), [draw_array(data, shape)]


def t_case(data: st.DataObject):
    return (lambda v: v.T), [draw_array(data, data.draw(shapes(max_dims=3)))]


def mt_case(data: st.DataObject):
    return (lambda v: v.mT), [draw_array(data, data.draw(shapes(min_dims=2)))]


def permute_case(data: st.DataObject):
    shape = data.draw(shapes(min_dims=1))
    ndim = len(shape)
    order = data.draw(st.permutations(range(ndim)))
    order = [d - ndim if data.draw(st.booleans()) else d for d in order]
    if data.draw(st.booleans()):
        return (lambda v: v.permute(*order)), [draw_array(data, shape)]
    return (lambda v: v.permute(tuple(order))), [draw_array(data, shape)]


def unsqueeze_case(data: st.DataObject):
    shape = data.draw(shapes())
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    return (lambda v: v.unsqueeze(dim)), [draw_array(data, shape)]


def squeeze_case(data: st.DataObject):
    shape = data.draw(shapes(max_side=3))
    shape = tuple(1 if data.draw(st.booleans()) else s for s in shape)
    dim = None if not shape or data.draw(st.booleans()) else draw_dim(data, len(shape))
    return (lambda v: v.squeeze(dim)), [draw_array(data, shape)]


def expand_case(data: st.DataObject):
    shape = data.draw(shapes(max_side=3))
    shape = tuple(1 if data.draw(st.booleans()) else s for s in shape)
    target = []
    for size in shape:
        if data.draw(st.booleans()):
            target.append(-1)
        else:
            target.append(data.draw(st.integers(1, 4)) if size == 1 else size)
    leading = data.draw(st.lists(st.integers(1, 3), max_size=2))
    target = tuple(leading + target)
    # One tuple: x.expand() with no sizes at all is refused, as in PyTorch.
    return (lambda v: v.expand(target)), [draw_array(data, shape)]


def sum_to_size_case(data: st.DataObject):
    target = data.draw(shapes(max_side=3))
    target = tuple(1 if data.draw(st.booleans()) else s for s in target)
    other = data.draw(hnp.broadcastable_shapes(target, min_dims=len(target), max_dims=3))
    shape = np.broadcast_shapes(target, other)
    return (lambda v: v.sum_to_size(target)), [draw_array(data, shape)]


def draw_index(data: st.DataObject, shape: tuple):
    """An index of one kind: ints, slices, integer arrays with repeats, a bool mask, mixes."""
    ndim = len(shape)
    kind = data.draw(st.sampled_from(["int", "slice", "array", "mask", "mixed"]))
    if kind == "int":
        count = data.draw(st.integers(1, ndim))
        index = tuple(data.draw(st.integers(-shape[d], shape[d] - 1)) for d in range(count))
        return index[0] if count == 1 else index
    if kind == "slice":
        parts = []
        for size in shape[: data.draw(st.integers(1, ndim))]:
            bound = st.one_of(st.none(), st.integers(-size - 1, size + 1))
            step = data.draw(st.sampled_from([None, 1, 2, -1, -2]))
            parts.append(slice(data.draw(bound), data.draw(bound), step))
        return tuple(parts)
    if kind == "array":
        picks = data.draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1, max_size=5))
        if data.draw(st.booleans()):
            return picks  # a list: repeats included
        return np.array(picks)
    if kind == "mask":
        mask_ndim = data.draw(st.integers(1, ndim))
        return data.draw(hnp.arrays(np.bool_, shape[:mask_ndim]))
    # mixed: slice / Ellipsis / None with an int or an integer array
    last = shape[-1]
    picks = np.array(data.draw(st.lists(st.integers(-last, last - 1), min_size=1, max_size=4)))
    return data.draw(
        st.sampled_from(
            [
                (Ellipsis, picks),
                (Ellipsis, int(picks[0])),
                (None, Ellipsis, int(picks[0])),
                (slice(None), *([0] * (ndim - 2)), picks) if ndim >= 2 else (picks, None),
            ]
        )
    )


def index_case(data: st.DataObject):
    shape = data.draw(shapes(min_dims=1))
    index = draw_index(data, shape)
    return (lambda v: v[index]), [draw_array(data, shape)]


def cat_case(data: st.DataObject):
    shape = list(data.draw(shapes(min_dims=1)))
    dim = draw_dim(data, len(shape))
    count = data.draw(st.integers(1, 3))
    arrays = []
    for _ in range(count):
        shape[dim] = data.draw(st.integers(1, 4))
        arrays.append(draw_array(data, tuple(shape)))
    return (lambda *vs: minigrad.cat(list(vs), dim)), arrays


def cat_constant_case(data: st.DataObject):
    """cat/stack with a NumPy array and a Variable that does not require grad among them."""
    shape = data.draw(shapes(min_dims=1))
    dim = draw_dim(data, len(shape))
    constant = draw_array(data, shape)
    frozen = Variable(draw_array(data, shape))
    join = data.draw(st.sampled_from([minigrad.cat, minigrad.stack]))
    return (lambda v: join([constant, v, frozen], dim=dim)), [draw_array(data, shape)]


def stack_case(data: st.DataObject):
    shape = data.draw(shapes())
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    arrays = [draw_array(data, shape) for _ in range(data.draw(st.integers(1, 3)))]
    return (lambda *vs: minigrad.stack(vs, dim=dim)), arrays


def softmax_case(method: str):
    def draw(data: st.DataObject):
        shape = data.draw(shapes())
        dim = draw_dim(data, len(shape))
        return (lambda v: getattr(v, method)(dim)), [draw_array(data, shape)]

    return draw


def functional_case(data: st.DataObject):
    """The module-level spellings: minigrad.exp(x) is x.exp(), and so on."""
    name = data.draw(
        st.sampled_from(["exp", "tanh", "sigmoid", "softmax", "log_softmax", "unsqueeze"])
    )
    shape = data.draw(shapes(min_dims=1))
    function = getattr(minigrad, name)
    if name in ("softmax", "log_softmax", "unsqueeze"):
        dim = draw_dim(data, len(shape))
        return (lambda v: function(v, dim)), [draw_array(data, shape)]
    return function, [draw_array(data, shape)]


CASES: dict[str, Callable] = {
    "add": binary_case(operator.add, GENERAL, GENERAL),
    "sub": binary_case(operator.sub, GENERAL, GENERAL),
    "mul": binary_case(operator.mul, GENERAL, GENERAL),
    "div": binary_case(operator.truediv, GENERAL, AWAY_FROM_ZERO),
    "pow": binary_case(operator.pow, POSITIVE, GENERAL),
    "add_constant": constant_case(operator.add, GENERAL, GENERAL),
    "sub_constant": constant_case(operator.sub, GENERAL, GENERAL),
    "mul_constant": constant_case(operator.mul, GENERAL, GENERAL),
    "div_constant": constant_case(operator.truediv, AWAY_FROM_ZERO, AWAY_FROM_ZERO),
    "pow_constant": constant_case(operator.pow, POSITIVE, GENERAL),
    "matmul": matmul_case,
    "matmul_constant": matmul_constant_case,
    "neg": unary_case(operator.neg),
    "exp": unary_case(lambda v: v.exp()),
    "log": unary_case(lambda v: v.log(), POSITIVE),
    "tanh": unary_case(lambda v: v.tanh()),
    "sigmoid": unary_case(lambda v: v.sigmoid()),
    "relu": unary_case(lambda v: v.relu(), AWAY_FROM_ZERO),
    "sqrt": unary_case(lambda v: v.sqrt(), POSITIVE),
    "abs": unary_case(lambda v: v.abs(), AWAY_FROM_ZERO),
    "abs_builtin": unary_case(abs, AWAY_FROM_ZERO),
    "clone": unary_case(lambda v: v.clone()),
    "sum": reduction_case("sum"),
    "mean": reduction_case("mean"),
    "max": max_case,
    "reshape": reshape_case("reshape"),
    "view": reshape_case("view"),
    "transpose": transpose_case,
    "T": t_case,
    "mT": mt_case,
    "permute": permute_case,
    "unsqueeze": unsqueeze_case,
    "squeeze": squeeze_case,
    "expand": expand_case,
    "sum_to_size": sum_to_size_case,
    "index": index_case,
    "cat": cat_case,
    "cat_stack_constant": cat_constant_case,
    "stack": stack_case,
    "softmax": softmax_case("softmax"),
    "log_softmax": softmax_case("log_softmax"),
    "functional": functional_case,
}


def draw_case(name: str, data: st.DataObject):
    fn, arrays = CASES[name](data)
    cotangent = draw_array(data, output_shape(fn, arrays))
    return fn, arrays, cotangent


@pytest.mark.parametrize("name", list(CASES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_backward_matches_finite_differences(name: str, data: st.DataObject) -> None:
    fn, arrays, cotangent = draw_case(name, data)
    check_first_order(fn, arrays, cotangent)


@pytest.mark.parametrize("name", list(CASES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_double_backward_matches_finite_differences(name: str, data: st.DataObject) -> None:
    fn, arrays, cotangent = draw_case(name, data)
    check_second_order(fn, arrays, cotangent)


# ----------------------------------------------------------------------------- forward values
# The same ops' forward values against NumPy, so a backward is checked for the right function.


@PROPERTY_SETTINGS
@given(data=st.data())
def test_elementwise_forward_matches_numpy(data: st.DataObject) -> None:
    shape_a, shape_b = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
    ).input_shapes
    a = draw_array(data, shape_a, POSITIVE)
    b = draw_array(data, shape_b, AWAY_FROM_ZERO)
    x, y = Variable(a, requires_grad=True), Variable(b, requires_grad=True)
    pairs = [
        (x + y, a + b),
        (x - y, a - b),
        (x * y, a * b),
        (x / y, a / b),
        (x**y, a**b),
        (2.0 - x, 2.0 - a),
        (b / x, b / a),
        (-x, -a),
        (x.exp(), np.exp(a)),
        (x.log(), np.log(a)),
        (y.tanh(), np.tanh(b)),
        (y.sigmoid(), 1 / (1 + np.exp(-b))),
        (y.relu(), np.maximum(b, 0)),
        (x.sqrt(), np.sqrt(a)),
        (y.abs(), np.abs(b)),
    ]
    for got, want in pairs:
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.data, want, rtol=1e-12, atol=1e-12)


@PROPERTY_SETTINGS
@given(data=st.data())
def test_reduction_and_softmax_forward_match_numpy(data: st.DataObject) -> None:
    shape = data.draw(shapes())
    a = draw_array(data, shape)
    x = Variable(a, requires_grad=True)
    dims = draw_dims(data, len(shape))
    axis = reference_axis(dims, len(shape))
    keepdim = data.draw(st.booleans())
    np.testing.assert_allclose(
        x.sum(dims, keepdim).data, a.sum(axis=axis, keepdims=keepdim), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        x.mean(dims, keepdim).data, a.mean(axis=axis, keepdims=keepdim), rtol=1e-12, atol=1e-12
    )
    dim = draw_dim(data, len(shape))
    axis = reference_axis(dim, len(shape))
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    softmax = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(x.softmax(dim).data, softmax, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(x.log_softmax(dim).data, np.log(softmax), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x.softmax(dim).data.sum(axis=axis), 1.0, rtol=1e-12)
    values, indices = x.max(dim, keepdim=keepdim)
    np.testing.assert_array_equal(values.data, a.max(axis=axis, keepdims=keepdim))
    np.testing.assert_array_equal(indices.data, reference_argmax(a, dim, keepdim))
    assert not indices.requires_grad
    assert values.requires_grad


@PROPERTY_SETTINGS
@given(data=st.data())
def test_index_forward_and_scatter_back(data: st.DataObject) -> None:
    """x[index] reads what NumPy reads; its gradient counts how often each element was read."""
    shape = data.draw(shapes(min_dims=1))
    index = draw_index(data, shape)
    a = draw_array(data, shape)
    x = Variable(a, requires_grad=True)
    out = x[index]
    np.testing.assert_array_equal(
        out.data, a[np.asarray(index) if isinstance(index, list) else index]
    )
    out.sum().backward()
    counts = np.zeros(shape)
    np.add.at(counts, np.asarray(index) if isinstance(index, list) else index, 1.0)
    np.testing.assert_array_equal(x.grad.data, counts)


# ----------------------------------------------------------------------------- the checker
# The properties above are only as good as gradcheck and check_second_order: they must
# catch a wrong backward, and must not fail a right one for reasons of their own.


class _WrongSquare(minigrad.Function):
    """y = x**2 with the backward off by a factor 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.data**2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


class _FrozenSine(minigrad.Function):
    """y = sin(x) with a right first derivative whose own derivative is lost (cos(x) is
    computed on raw data, so the double backward treats it as a constant)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x.data)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Variable(np.cos(x.data))


def test_gradcheck_catches_a_wrong_backward() -> None:
    x = Variable(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    with pytest.raises(minigrad.GradcheckError, match="input 0"):
        minigrad.gradcheck(_WrongSquare.apply, [x])
    assert minigrad.gradcheck(_WrongSquare.apply, [x], raise_exception=False) is False


def test_second_order_check_catches_a_backward_that_is_right_only_once() -> None:
    arrays = [np.array([0.5, -1.0, 2.0])]
    cotangent = np.array([1.0, 2.0, -1.0])
    check_first_order(_FrozenSine.apply, arrays, cotangent)  # first order is right
    with pytest.raises(minigrad.GradcheckError):
        check_second_order(_FrozenSine.apply, arrays, cotangent)


def test_gradcheck_accepts_an_input_with_no_elements() -> None:
    """An empty input (e.g. the cotangent of an empty slice) has an empty Jacobian column."""
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    empty = Variable(np.zeros(0), requires_grad=True)
    assert minigrad.gradcheck(lambda a, b: a * 2.0 + b.sum(), [x, empty])
    assert minigrad.gradcheck(lambda a, b: a[:0] * b, [x, empty])


def test_gradcheck_pairs_outputs_the_same_way_in_both_passes() -> None:
    """An output that does not require grad, before one that does, is skipped in both the
    analytical and the numerical Jacobian (not compared against the wrong output)."""
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    assert minigrad.gradcheck(lambda a: (Variable(np.zeros(2)), a * 3.0), [x])
    assert minigrad.gradcheck(lambda a: (a.detach() * 5.0, a.exp()), [x])


def test_index_double_backward_on_an_empty_slice() -> None:
    """Found by hypothesis: x[:0] has an empty cotangent, which gradcheck must handle."""
    check_second_order(lambda v: v[:0], [np.array([0.0, 0.0])], np.zeros(0))
    check_first_order(lambda v: v[:0], [np.array([0.0, 0.0])], np.zeros(0))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_add_at_by_product_matches_numpys_add_at(data: st.DataObject) -> None:
    """ops/indexing.add_at sums an embedding's gradient rows with one product (onehotᵀ ·
    values); np.add.at is the instrument, on repeated and negative picks."""
    from minigrad.ops.indexing import add_at

    rows = data.draw(st.integers(1, 12))
    width = data.draw(st.integers(1, 5))
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    picks = data.draw(hnp.arrays(np.int64, hnp.array_shapes(max_dims=2, max_side=6),
                                 elements=st.integers(-rows, rows - 1)))
    values = data.draw(hnp.arrays(dtype, picks.shape + (width,),
                                  elements=st.floats(-4, 4, width=32)))
    ours = np.zeros((rows, width), dtype)
    add_at(ours, picks, values)
    expected = np.zeros((rows, width), dtype)
    np.add.at(expected, picks, values)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ours, expected, rtol=tolerance, atol=tolerance)
