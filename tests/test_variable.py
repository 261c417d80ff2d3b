"""Variable and Parameter: construction, attributes, conversions, hooks, factories, in place."""

import re

import numpy as np
import pytest

import minigrad
from minigrad import Parameter, Tensor, Variable

ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}|object at")


# --------------------------------------------------------------------------- construction


@pytest.mark.parametrize(
    "data",
    [
        [1, 2, 3],
        [1.0, 2, 3],
        [[1.5, 2.5], [3.5, 4.5]],
        3,
        2.5,
        True,
        [True, False],
        np.arange(4, dtype=np.float32),
        np.zeros((2, 3), dtype=np.int32),
        np.float16(1.5),
    ],
)
def test_numeric_data_goes_through_numpy_and_keeps_its_dtype(data):
    v = Variable(data)
    expected = np.asarray(data)
    assert isinstance(v.data, np.ndarray)
    assert v.dtype == expected.dtype
    assert v.data.dtype == expected.dtype
    assert v.shape == expected.shape
    assert v.ndim == expected.ndim
    np.testing.assert_array_equal(v.data, expected)


def test_python_number_becomes_zero_dimensional():
    v = Variable(4.25)
    assert v.shape == ()
    assert v.ndim == 0
    assert v.dtype == np.float64
    assert v.item() == 4.25


def test_text_variable():
    t = Variable("some prompt", role="system prompt", name="prompt")
    assert t.data == "some prompt"
    assert isinstance(t.data, str)
    assert t.role == "system prompt"
    assert t.name == "prompt"
    assert t.shape == ()
    assert t.ndim == 0
    assert t.dtype is str
    assert t.item() == "some prompt"
    assert t.tolist() == "some prompt"
    assert t.device == "cpu"


def test_text_variable_may_require_grad():
    t = Variable("abc", role="answer", requires_grad=True)
    assert t.requires_grad
    assert t.is_leaf


def test_construction_from_a_variable_copies_the_data():
    source = Variable([1.0, 2.0])
    copy = Variable(source)
    np.testing.assert_array_equal(copy.data, [1.0, 2.0])
    assert not np.shares_memory(copy.data, source.data)


def test_unconvertible_data_is_a_type_error():
    with pytest.raises(TypeError):
        Variable({"a": 1})
    with pytest.raises(TypeError):
        Variable(object())


def test_integer_data_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        Variable([1, 2], requires_grad=True)


def test_requires_grad_must_be_a_bool():
    with pytest.raises(TypeError):
        Variable([1.0], requires_grad=1)


def test_role_and_name_must_be_str():
    with pytest.raises(TypeError):
        Variable([1.0], role=3)
    with pytest.raises(TypeError):
        Variable([1.0], name=["x"])


# --------------------------------------------------------------------------- attributes


def test_leaf_attributes():
    x = Variable([[1.0, 2.0, 3.0]], requires_grad=True, role="weights", name="w")
    assert x.requires_grad is True
    assert x.is_leaf is True
    assert x.grad_fn is None
    assert x.grad is None
    assert x.role == "weights"
    assert x.name == "w"
    assert x.shape == (1, 3)
    assert x.ndim == 2
    assert x.dtype == np.float64
    assert x.device == "cpu"


def test_defaults():
    x = Variable([1.0])
    assert x.requires_grad is False
    assert x.role is None
    assert x.name is None
    assert x.is_leaf


def test_result_of_an_operation_is_not_a_leaf():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.requires_grad
    assert not y.is_leaf
    assert y.grad_fn is not None
    assert y.grad_fn.name() == "MulBackward"


def test_result_without_grad_is_a_leaf():
    x = Variable([1.0, 2.0])
    y = x * 2
    assert not y.requires_grad
    assert y.is_leaf
    assert y.grad_fn is None


def test_requires_grad_is_settable_on_a_leaf():
    x = Variable([1.0, 2.0])
    x.requires_grad = True
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.data, [2.0, 4.0])
    x.requires_grad = False
    assert not (x * x).requires_grad


def test_requires_grad_is_not_settable_on_a_non_leaf():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False


def test_grad_is_assignable():
    x = Variable([1.0, 2.0], requires_grad=True)
    x.grad = Variable([0.5, 0.25])
    np.testing.assert_array_equal(x.grad.data, [0.5, 0.25])
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.5, 3.25])
    x.grad = None
    assert x.grad is None


def test_assigning_a_grad_of_the_wrong_shape_or_type_fails():
    x = Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        x.grad = Variable([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        x.grad = np.ones(2)


# --------------------------------------------------------------------------- detach / clone


def test_detach_shares_data_and_version_counter():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.is_leaf
    assert not d.requires_grad
    assert d.grad_fn is None
    assert np.shares_memory(d.data, y.data)
    before = y._version
    d.add_(1.0)
    assert y._version == before + 1
    assert d._version == y._version
    np.testing.assert_array_equal(y.data, [3.0, 5.0])


def test_detach_of_a_leaf_shares_its_version_counter_too():
    x = Variable([1.0, 2.0], requires_grad=True)
    d = x.detach()
    d[0] = 10.0
    assert x._version == 1
    assert x.data[0] == 10.0


def test_clone_is_a_differentiable_copy():
    x = Variable([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert not np.shares_memory(c.data, x.data)
    np.testing.assert_array_equal(c.data, x.data)
    assert c.grad_fn is not None
    assert c.grad_fn.name() == "CloneBackward"
    (c * Variable([3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 4.0])


def test_clone_of_a_plain_variable_does_not_require_grad():
    x = Variable([1.0, 2.0])
    c = x.clone()
    assert not c.requires_grad
    c.data[0] = 7.0
    assert x.data[0] == 1.0


# --------------------------------------------------------------------------- retain_grad / hooks


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = x * 3
    y.retain_grad()
    assert y.retains_grad
    ((y * y).sum() + (z * z).sum()).backward()
    np.testing.assert_allclose(y.grad.data, 2 * y.data)
    with pytest.warns(UserWarning, match="not a leaf"):
        assert z.grad is None  # not retained
    np.testing.assert_allclose(x.grad.data, 2 * 2 * 9 * x.data)


def test_retain_grad_on_a_leaf_is_harmless():
    x = Variable([1.0, 2.0], requires_grad=True)
    x.retain_grad()
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])


def test_retain_grad_needs_requires_grad():
    with pytest.raises(RuntimeError):
        Variable([1.0]).retain_grad()


def test_leaf_hook_sees_the_gradient():
    x = Variable([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.data.copy()))
    (x * Variable([5.0, 7.0])).sum().backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [5.0, 7.0])
    np.testing.assert_array_equal(x.grad.data, [5.0, 7.0])


def test_leaf_hook_can_replace_the_gradient():
    x = Variable([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 3)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [6.0, 6.0])


def test_non_leaf_hook_replaces_what_flows_further():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    y.sum().backward()
    np.testing.assert_array_equal(y.grad.data, [10.0, 10.0])
    np.testing.assert_array_equal(x.grad.data, [20.0, 20.0])


def test_hooks_run_in_registration_order():
    x = Variable([1.0], requires_grad=True)
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [8.0])  # (3 + 1) * 2


def test_removed_hook_no_longer_runs():
    x = Variable([1.0, 2.0], requires_grad=True)
    calls = []

    def triple(g):
        calls.append(1)
        return g * 3

    handle = x.register_hook(triple)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [6.0, 6.0])
    handle.remove()
    handle.remove()  # removing twice is fine
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])
    assert len(calls) == 1


def test_register_hook_needs_requires_grad():
    with pytest.raises(RuntimeError):
        Variable([1.0]).register_hook(lambda g: g)


# --------------------------------------------------------------------------- conversions


def test_item():
    assert Variable(2.5).item() == 2.5
    assert isinstance(Variable(2.5).item(), float)
    assert Variable([[7]]).item() == 7
    assert isinstance(Variable([[7]]).item(), int)
    with pytest.raises((ValueError, RuntimeError)):
        Variable([1.0, 2.0]).item()


def test_numpy_shares_memory_and_refuses_when_grad_is_required():
    x = Variable([1.0, 2.0])
    array = x.numpy()
    assert isinstance(array, np.ndarray)
    assert np.shares_memory(array, x.data)
    w = Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        w.numpy()
    np.testing.assert_array_equal(w.detach().numpy(), [1.0, 2.0])


def test_tolist():
    assert Variable([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert Variable(1.5).tolist() == 1.5
    assert Variable("txt").tolist() == "txt"


def test_to_cpu():
    x = Variable([1.0, 2.0], requires_grad=True)
    moved = x.to("cpu")
    assert moved.device == "cpu"
    np.testing.assert_array_equal(moved.data, x.data)
    assert x.cpu().device == "cpu"
    with pytest.raises(ValueError):
        x.to("tpu")


# --------------------------------------------------------------------------- Parameter / Tensor


def test_parameter_always_requires_grad():
    p = Parameter([1.0, 2.0])
    assert p.requires_grad
    assert p.is_leaf
    assert isinstance(p, Variable)
    with minigrad.no_grad():
        q = Parameter(np.zeros(3))
    assert q.requires_grad
    (q * 2).sum().backward()
    np.testing.assert_array_equal(q.grad.data, [2.0, 2.0, 2.0])


def test_parameter_repr_says_parameter():
    text = repr(Parameter([1.0]))
    assert text.startswith("Parameter")
    assert not ADDRESS.search(text)


def test_tensor_is_variable():
    assert Tensor is Variable
    assert minigrad.Tensor is minigrad.Variable


# --------------------------------------------------------------------------- factories


def test_zeros_ones_empty_full():
    z = minigrad.zeros(2, 3)
    assert z.shape == (2, 3)
    assert z.dtype == np.float64
    assert not z.data.any()
    o = minigrad.ones((4,))
    np.testing.assert_array_equal(o.data, np.ones(4))
    assert minigrad.ones([2, 2]).shape == (2, 2)
    e = minigrad.empty(3, 1)
    assert e.shape == (3, 1)
    f = minigrad.full((2, 2), 7.5)
    np.testing.assert_array_equal(f.data, np.full((2, 2), 7.5))


def test_factory_dtype():
    assert minigrad.zeros(2, dtype=minigrad.float32).dtype == np.float32
    assert minigrad.ones(2, dtype=np.int64).dtype == np.int64


def test_arange():
    np.testing.assert_array_equal(minigrad.arange(5).data, [0, 1, 2, 3, 4])
    np.testing.assert_allclose(minigrad.arange(1, 2, 0.25).data, [1.0, 1.25, 1.5, 1.75])
    assert minigrad.arange(3, dtype=minigrad.float64).dtype == np.float64


def test_rand_and_randn():
    r = minigrad.rand(1000)
    assert r.shape == (1000,)
    assert (r.data >= 0).all() and (r.data < 1).all()
    n = minigrad.randn(20, 50)
    assert n.shape == (20, 50)
    assert abs(float(n.data.mean())) < 0.2
    assert 0.8 < float(np.std(n.data)) < 1.2


def test_manual_seed_makes_random_numbers_repeat():
    minigrad.manual_seed(123)
    a, b = minigrad.rand(5), minigrad.randn(2, 3)
    minigrad.manual_seed(123)
    c, d = minigrad.rand(5), minigrad.randn(2, 3)
    np.testing.assert_array_equal(a.data, c.data)
    np.testing.assert_array_equal(b.data, d.data)
    minigrad.manual_seed(124)
    assert not np.array_equal(minigrad.rand(5).data, a.data)


@pytest.mark.parametrize(
    "make",
    [
        lambda rg: minigrad.zeros(2, requires_grad=rg),
        lambda rg: minigrad.ones(2, requires_grad=rg),
        lambda rg: minigrad.empty(2, requires_grad=rg),
        lambda rg: minigrad.full((2,), 1.0, requires_grad=rg),
        lambda rg: minigrad.rand(2, requires_grad=rg),
        lambda rg: minigrad.randn(2, requires_grad=rg),
        lambda rg: minigrad.arange(0.0, 2.0, requires_grad=rg),
    ],
    ids=["zeros", "ones", "empty", "full", "rand", "randn", "arange"],
)
def test_factories_take_requires_grad_even_under_no_grad(make):
    assert make(True).requires_grad
    assert not make(False).requires_grad
    with minigrad.no_grad():
        made = make(True)
    assert made.requires_grad
    assert made.is_leaf


# --------------------------------------------------------------------------- repr


def test_repr_shows_values_and_no_memory_address():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    texts = [
        repr(x),
        repr(y),
        repr(Variable("hi", role="greeting")),
        repr(Variable([1, 2])),
        repr(y.grad_fn),
        repr(y.grad_fn.next_functions[0][0]),
        str(x),
    ]
    for text in texts:
        assert not ADDRESS.search(text), text
    assert "1." in repr(x) and "2." in repr(x)
    assert "requires_grad=True" in repr(x)
    assert "MulBackward" in repr(y)
    assert repr(y.grad_fn) == "<MulBackward>"
    assert "greeting" in texts[2]


def test_repr_is_the_same_for_equal_variables():
    assert repr(Variable([1.0, 2.0])) == repr(Variable([1.0, 2.0]))


# --------------------------------------------------------------------------- in place


def _setitem(v, value):
    v[0] = value
    return v


INPLACE = {
    "iadd": (lambda v: v.__iadd__(2.0), [3.0, 4.0, 5.0]),
    "isub": (lambda v: v.__isub__(1.0), [0.0, 1.0, 2.0]),
    "imul": (lambda v: v.__imul__(3.0), [3.0, 6.0, 9.0]),
    "itruediv": (lambda v: v.__itruediv__(2.0), [0.5, 1.0, 1.5]),
    "add_": (lambda v: v.add_(Variable([1.0, 1.0, 1.0])), [2.0, 3.0, 4.0]),
    "zero_": (lambda v: v.zero_(), [0.0, 0.0, 0.0]),
    "fill_": (lambda v: v.fill_(9.0), [9.0, 9.0, 9.0]),
    "copy_": (lambda v: v.copy_(Variable([4.0, 5.0, 6.0])), [4.0, 5.0, 6.0]),
    "setitem": (lambda v: _setitem(v, 8.0), [8.0, 2.0, 3.0]),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_ops_change_data_and_bump_version(name):
    op, expected = INPLACE[name]
    v = Variable([1.0, 2.0, 3.0])
    data = v._data
    assert v._version == 0
    result = op(v)
    assert result is v
    assert v._data is data  # the same array, changed in place
    np.testing.assert_allclose(v.data, expected)
    assert v._version == 1
    op(v)
    assert v._version == 2


def test_augmented_assignment_keeps_the_object():
    v = Variable([1.0, 2.0])
    original = v
    v += 1.0
    v -= 0.5
    v *= 2.0
    v /= 4.0
    assert v is original
    np.testing.assert_allclose(v.data, [0.75, 1.25])
    assert v._version == 4


def test_optimizer_style_update_under_no_grad():
    w = Variable([1.0, -2.0], requires_grad=True)
    (w * w).sum().backward()
    with minigrad.no_grad():
        w -= 0.25 * w.grad
    np.testing.assert_allclose(w.data, [0.5, -1.0])
    assert w.is_leaf
    assert w.grad_fn is None
    assert w.requires_grad
    assert w._version == 1
    # the updated leaf keeps working
    w.grad = None
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.data, [1.0, -2.0])


def test_optimizer_style_methods_under_no_grad():
    w = Variable([1.0, 2.0], requires_grad=True)
    with minigrad.no_grad():
        w.add_(Variable([1.0, 1.0]))
        w[1] = 0.0
        w.fill_(3.0)
        w.zero_()
    assert w.is_leaf and w.requires_grad
    assert w._version == 4
    np.testing.assert_array_equal(w.data, [0.0, 0.0])


def test_inplace_on_a_leaf_that_requires_grad_raises_when_recording():
    w = Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        w += 1.0
    with pytest.raises(RuntimeError):
        w[0] = 3.0
    np.testing.assert_array_equal(w.data, [1.0, 2.0])


def _rebased_cases():
    # Each case: (in-place version, out-of-place version) of an update of y = x * 2.
    def iadd(y, w):
        y += w
        return y

    def isub(y, w):
        y -= w
        return y

    def imul_number(y, w):
        y *= 3.0
        return y

    def imul_variable(y, w):
        y *= w
        return y

    def idiv_number(y, w):
        y /= 4.0
        return y

    def idiv_variable(y, w):
        y /= w
        return y

    def setitem(y, w):
        y[1] = w[0] * 5
        return y

    def copy(y, w):
        return y.copy_(w * w)

    def add_number(y, w):
        return y.add_(1.5)

    def set_index_put(y, w):
        return minigrad.cat([y[:1], (w[0] * 5).reshape(1), y[2:]])

    return {
        "iadd": (iadd, lambda y, w: y + w),
        "isub": (isub, lambda y, w: y - w),
        "imul_number": (imul_number, lambda y, w: y * 3.0),
        "imul_variable": (imul_variable, lambda y, w: y * w),
        "idiv_number": (idiv_number, lambda y, w: y / 4.0),
        "idiv_variable": (idiv_variable, lambda y, w: y / w),
        "setitem": (setitem, set_index_put),
        "copy_": (copy, lambda y, w: w * w + 0 * y),
        "add_number": (add_number, lambda y, w: y + 1.5),
    }


REBASED = _rebased_cases()


@pytest.mark.parametrize("name", list(REBASED))
def test_inplace_on_a_non_leaf_rebases_history(name):
    inplace, out_of_place = REBASED[name]
    weights = np.array([1.0, -2.0, 0.5])

    def run(update):
        x = Variable([1.0, 2.0, 3.0], requires_grad=True)
        w = Variable([2.0, 3.0, 4.0], requires_grad=True)
        y = x * 2
        y = update(y, w)
        (y * Variable(weights)).sum().backward()
        return y, x.grad, w.grad

    y_in, gx_in, gw_in = run(inplace)
    y_out, gx_out, gw_out = run(out_of_place)
    np.testing.assert_allclose(y_in.data, y_out.data)
    assert not y_in.is_leaf
    for got, want in ((gx_in, gx_out), (gw_in, gw_out)):
        if want is None or not np.any(want.data):
            assert got is None or not np.any(got.data)
        else:
            np.testing.assert_allclose(got.data, want.data)


def test_inplace_on_a_non_leaf_bumps_version_and_changes_grad_fn():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    first = y.grad_fn
    y += 1.0
    assert y._version == 1
    assert y.grad_fn is not first
    assert y.grad_fn.name() == "AddBackward"
    assert y.grad_fn.next_functions[0][0] is first


def test_setitem_with_a_grad_value_makes_a_plain_variable_a_non_leaf():
    buffer = Variable(np.zeros(3))
    w = Variable(2.0, requires_grad=True)
    buffer[1] = w * 3
    assert buffer.requires_grad
    assert not buffer.is_leaf
    (buffer * Variable([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_allclose(w.grad.data, 30.0)


def test_saved_input_modified_in_place_raises_at_backward():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y  # saves y
    y += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_saved_output_modified_in_place_raises_at_backward():
    x = Variable([1.0, 2.0], requires_grad=True)
    e = x.exp()  # saves its output
    e.add_(Variable([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()


def test_saved_leaf_modified_under_no_grad_raises_at_backward():
    x = Variable([1.0, 2.0], requires_grad=True)
    z = (x * x).sum()
    with minigrad.no_grad():
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_change_through_detach_raises_at_backward():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y
    y.detach()[0] = 100.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.parametrize(
    "make_view",
    [lambda e: e.view(2, 2), lambda e: e.reshape(4), lambda e: e[0], lambda e: e.T],
    ids=["view", "reshape", "basic-index", "T"],
)
def test_change_through_a_view_of_a_saved_variable_raises_at_backward(make_view):
    # The view shares memory with e; changing it changes what ExpBackward saved.
    x = Variable([[0.0, 1.0], [2.0, 3.0]], requires_grad=True)
    e = x.exp()
    v = make_view(e)
    assert np.shares_memory(v.data, e.data)
    with minigrad.no_grad():
        v.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()


def test_unmodified_saved_variables_do_not_raise():
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y
    other = x * 5
    other += 1.0  # a different Variable: nothing saved is touched
    z.sum().backward()
    np.testing.assert_allclose(x.grad.data, [8.0, 16.0])


def test_inplace_that_would_need_an_unsafe_cast_is_refused():
    # NumPy refuses `int_array += 1.5`; silently truncating would hide the mistake.
    v = Variable([1, 2])
    with pytest.raises((TypeError, RuntimeError)):
        v += 1.5
    np.testing.assert_array_equal(v.data, [1, 2])
    assert v._version == 0
    v += 1  # int into int is fine
    np.testing.assert_array_equal(v.data, [2, 3])


def test_inplace_through_a_view_of_a_non_leaf_is_never_silently_wrong():
    # y's first element is doubled through the view v. PyTorch rebases y's history
    # (x.grad == [2, 1]); refusing with a RuntimeError is acceptable, a wrong
    # gradient is not.
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    v = y[:1]
    try:
        v *= 2.0
        y.sum().backward()
    except RuntimeError:
        return
    np.testing.assert_array_equal(y.data, [2.0, 2.0])
    np.testing.assert_array_equal(x.grad.data, [2.0, 1.0])


def test_writing_a_grad_value_through_a_view_is_never_silently_lost():
    # buffer's memory now holds w * 3 (written through a view): either buffer joins
    # the graph and w gets its gradient, or the write is refused.
    w = Variable(2.0, requires_grad=True)
    buffer = Variable(np.zeros(2))
    view = buffer[:1]
    try:
        view.copy_(w * 3)
    except RuntimeError:
        return
    np.testing.assert_array_equal(buffer.data, [6.0, 0.0])
    assert buffer.requires_grad
    buffer.sum().backward()
    np.testing.assert_allclose(w.grad.data, 3.0)


def test_retain_grad_follows_the_latest_in_place_version():
    # As in PyTorch, .grad of a retained non-leaf is the gradient of its current value.
    x = Variable([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y *= 2
    (y * 3).sum().backward()
    np.testing.assert_array_equal(y.grad.data, [3.0, 3.0])
    np.testing.assert_array_equal(x.grad.data, [12.0, 12.0])
