"""torch.func in minigrad (minigrad/func/): grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, linearize, vmap, functional_call and stack_module_state.

Values: every case runs the same code on the same float64 inputs with minigrad and, where
it is installed, with PyTorch's torch.func, and the results (nested alike) agree to 1e-10.
Without PyTorch the cases still run, their results agreeing with each other (jacrev =
jacfwd, four roads to one Hessian, three to one Hessian-vector product), and other tests
check the transforms against what they mean: finite differences (gradcheck of the
transformed functions), NumPy, and loops (vmap, per-sample gradients). Then the errors
(PyTorch's classes and words), which results keep a graph (as PyTorch's do), vmap's
randomness, and functional_call's swap.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.func
from minigrad.func import (
    functional_call,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stack_module_state,
    vjp,
    vmap,
)

RTOL, ATOL = 1e-10, 1e-12


# --------------------------------------------------------------------------- helpers


def _inputs(lib, n: int, seed: int = 0) -> dict:
    """The same float64 inputs for either library: vectors of n, matrices with n columns."""
    rng = np.random.default_rng(seed + n)
    arrays = {
        "x": rng.standard_normal(n),
        "y": rng.standard_normal(n),
        "u": rng.standard_normal(n),
        "v": rng.standard_normal(n),
        "A": rng.standard_normal((2, n)),
        "b": rng.standard_normal(2),
        "X": rng.standard_normal((4, n)),
        "Y": rng.standard_normal((4, 2)),
        "W": rng.standard_normal((3, 2, n)),
    }
    return {key: lib.tensor(value, dtype=lib.float64) for key, value in arrays.items()}


def _as_numpy(tree):
    """Tensors (of either library) as arrays, nests kept."""
    if isinstance(tree, dict):
        return {key: _as_numpy(value) for key, value in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_as_numpy(value) for value in tree)
    if hasattr(tree, "detach"):
        return np.array(tree.detach().numpy())
    return tree


def _assert_close(got, want, where: str = "result") -> None:
    """Same nesting (tuple, list, dict with the same keys), arrays of the same shape and
    values within RTOL/ATOL."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), where
        for key in want:
            _assert_close(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), where
        for index, (g, w) in enumerate(zip(got, want)):
            _assert_close(g, w, f"{where}[{index}]")
    else:
        assert np.shape(got) == np.shape(want), f"{where}: {np.shape(got)} vs {np.shape(want)}"
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=where)


# --------------------------------------------------------------------------- the cases
#
# Each case is a function of (the library, its inputs) that runs PyTorch-style code with
# lib.func and returns a nest of tensors.


def _scalar(x):
    return (x.sin() * x.exp()).sum() + (x @ x) * x.sum()


def _two(x, y):
    return (x * y.cos()).sum() + (x**2 * y).sum()


def _layer(lib, params, x):
    return (params["A"] @ x + params["b"]).tanh()


def _mixed(x):
    # softmax has no JVP rule of its own in minigrad: its tangents go through its backward
    return (x.softmax(0) * x).sum() + x.tanh().sum()


CASES = {}


def case(function):
    CASES[function.__name__.removeprefix("case_")] = function
    return function


@case
def case_grad(lib, a):
    return lib.func.grad(_scalar)(a["x"])


@case
def case_grad_argnums(lib, a):
    both = lib.func.grad(_two, argnums=(0, 1))(a["x"], a["y"])
    last = lib.func.grad(_two, argnums=-1)(a["x"], a["y"])
    unused = lib.func.grad(lambda x, y: (y**2).sum(), argnums=(0, 1))(a["x"], a["y"])
    return both, last, unused


@case
def case_grad_aux_and_value(lib, a):
    def with_aux(x):
        return _scalar(x), {"twice": 2 * x, "sum": x.sum()}

    gradient, aux = lib.func.grad(with_aux, has_aux=True)(a["x"])
    value_pair = lib.func.grad_and_value(_scalar)(a["x"])
    aux_triple = lib.func.grad_and_value(with_aux, has_aux=True)(a["x"])
    return gradient, aux, value_pair, aux_triple


@case
def case_grad_of_a_dict(lib, a):
    params = {"A": a["A"], "b": a["b"]}

    def loss(params, x, target):
        return ((_layer(lib, params, x) - target) ** 2).sum()

    return lib.func.grad(loss)(params, a["x"], a["b"])


@case
def case_grad_of_grad(lib, a):
    def f(t):
        return t.sin() * t**3

    x0 = a["x"][0]
    return lib.func.grad(lib.func.grad(f))(x0), lib.func.grad(lib.func.grad(lib.func.grad(f)))(x0)


@case
def case_vjp(lib, a):
    def f(x, y):
        return x * y, x.sin() @ y

    output, vjp_fn = lib.func.vjp(f, a["x"], a["y"])
    pulled = vjp_fn((a["u"], a["x"].sum()))
    again = vjp_fn((a["v"], a["y"].sum()))  # vjp_fn can be called again
    _, one_fn, aux = lib.func.vjp(lambda x: (x.exp(), x.cos()), a["x"], has_aux=True)
    return output, pulled, again, one_fn(a["u"]), aux


@case
def case_jvp(lib, a):
    def f(x, y):
        return (x * y).tanh(), {"e": x.exp() * y.sum()}

    out = lib.func.jvp(f, (a["x"], a["y"]), (a["u"], a["v"]))
    with_aux = lib.func.jvp(lambda x: (x.sin(), x.cos()), (a["x"],), (a["u"],), has_aux=True)
    nested = lib.func.jvp(
        lambda d: d["p"] * d["q"].exp(),
        ({"p": a["x"], "q": a["y"]},),
        ({"p": a["u"], "q": a["v"]},),
    )
    return out, with_aux, nested


@case
def case_linearize(lib, a):
    output, jvp_fn = lib.func.linearize(lambda x: (x.sin() * x).exp(), a["x"])
    return output, jvp_fn(a["u"]), jvp_fn(a["v"])


@case
def case_jacobians(lib, a):
    F = lib.func

    def f(x, y):
        return {"p": x * y, "q": (x @ y).tanh(), "r": (a["A"] @ x).sin()}

    return (
        F.jacrev(lambda x: (a["A"] @ x).tanh())(a["x"]),
        F.jacfwd(lambda x: (a["A"] @ x).tanh())(a["x"]),
        F.jacrev(f, argnums=(0, 1))(a["x"], a["y"]),
        F.jacfwd(f, argnums=(0, 1))(a["x"], a["y"]),
        F.jacrev(f, argnums=1)(a["x"], a["y"]),
        F.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True)(a["x"]),
        F.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(a["x"]),
        F.jacrev(lambda m: m.tanh() @ a["x"])(a["A"]),
        F.jacfwd(lambda m: m.tanh() @ a["x"])(a["A"]),
    )


@case
def case_hessians(lib, a):
    F = lib.func
    return (
        F.hessian(_scalar)(a["x"]),
        F.hessian(_two, argnums=1)(a["x"], a["y"]),
        F.hessian(lambda x: x.sin() * x.sum())(a["x"]),  # a vector function: (n, n, n)
        F.jacrev(F.jacrev(_mixed))(a["x"]),
        F.jacfwd(F.jacfwd(_mixed))(a["x"]),
        F.jacrev(F.jacfwd(_mixed))(a["x"]),
        F.jacfwd(F.jacrev(_mixed))(a["x"]),
    )


@case
def case_hessian_vector_products(lib, a):
    F = lib.func
    forward_over_reverse = F.jvp(F.grad(_mixed), (a["x"],), (a["u"],))[1]
    _, vjp_fn = F.vjp(F.grad(_mixed), a["x"])
    reverse_over_reverse = vjp_fn(a["u"])
    reverse_over_forward = F.grad(lambda x: F.jvp(_mixed, (x,), (a["u"],))[1])(a["x"])
    return forward_over_reverse, reverse_over_reverse, reverse_over_forward


@case
def case_vmap_dims(lib, a):
    vmap = lib.func.vmap
    return (
        vmap(lambda r: r.sin() * r.sum())(a["X"]),
        vmap(lambda c, y: c * y[:2].sum(), in_dims=(1, None))(a["A"], a["y"]),
        vmap(lambda r: (r.exp(), r.sum()), out_dims=(1, 0))(a["X"]),
        vmap(lambda r: r * 2, in_dims=-1, out_dims=-1)(a["A"]),
        vmap(lambda p, z: p[0] * z + p[1], in_dims=((0, None), 0))((a["X"], a["y"]), a["X"]),
        vmap(lambda d: {"s": d["m"] @ d["w"]}, in_dims=({"m": 0, "w": None},))(
            {"m": a["X"], "w": a["x"]}
        ),
        vmap(lambda r, scale: r * scale)(a["X"], scale=a["y"]),  # keyword arguments: unmapped
        vmap(vmap(lambda s, t: s * t), in_dims=(0, None))(a["X"], a["y"]),
        vmap(lambda r: (r.sum(), a["b"] * 2), out_dims=(0, None))(a["X"]),
    )


@case
def case_vmap_composed(lib, a):
    F = lib.func
    params = {"A": a["A"], "b": a["b"]}

    def loss(params, x, target):
        return ((_layer(lib, params, x) - target) ** 2).sum()

    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, a["X"], a["Y"])
    through = F.grad(lambda w: F.vmap(lambda r: (r @ w).tanh())(a["X"]).sum())(a["x"])
    batch_jacobians = F.vmap(F.jacrev(lambda r: (a["A"] @ r).tanh()))(a["X"])
    batch_hessians = F.vmap(F.hessian(_scalar))(a["X"])
    return per_sample, through, batch_jacobians, batch_hessians


@case
def case_functional_call(lib, a):
    F = lib.func
    n = a["x"].shape[0]
    model = lib.nn.Linear(n, 2)
    params = {"weight": a["A"], "bias": a["b"]}
    out = F.functional_call(model, params, (a["X"],))

    def loss(params, x):
        return (F.functional_call(model, params, x) ** 2).sum()

    gradients = F.grad(loss)(params, a["X"])
    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0))(params, a["X"])
    jacobian = F.jacrev(lambda p: F.functional_call(model, p, (a["x"],)))(params)
    return out, gradients, per_sample, jacobian


@case
def case_ensemble(lib, a):
    F = lib.func
    n = a["x"].shape[0]
    models = [lib.nn.Linear(n, 2).double() for _ in range(3)]
    with lib.no_grad():
        for index, model in enumerate(models):
            model.weight.copy_(a["W"][index])
            model.bias.copy_(a["b"] * (index + 1))
    params, buffers = F.stack_module_state(models)

    def fmodel(params, buffers, x):
        return F.functional_call(models[0], (params, buffers), (x,))

    same_batch = F.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, a["X"])
    own_batch = F.vmap(fmodel)(params, buffers, a["X"][:3])
    return params, same_batch, own_batch


@case
def case_gradients_through_a_closure(lib, a):
    """Results that depend on a Variable of the caller's keep their graph to it: its own
    gradient through grad and jvp (softmax: a tangent forward mode cannot differentiate)."""
    w = a["y"].clone().requires_grad_()

    def f(v):
        return ((w * v).softmax(0) * v).sum()

    tangent = lib.func.jvp(f, (a["x"],), (a["u"],))[1]
    gradient = lib.func.grad(f)(a["x"])
    jacobian = lib.func.jacfwd(lambda v: (w * v).softmax(0))(a["x"])
    (through_tangent,) = lib.autograd.grad(tangent, w)
    (through_gradient,) = lib.autograd.grad(gradient.sum(), w)
    (through_jacobian,) = lib.autograd.grad(jacobian.sum(), w)
    return tangent, gradient, through_tangent, through_gradient, through_jacobian


NAMES = sorted(CASES)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("name", NAMES)
def test_the_cases_match_torch_func(name, n, real_torch) -> None:
    got = _as_numpy(CASES[name](minigrad, _inputs(minigrad, n)))
    want = _as_numpy(CASES[name](real_torch, _inputs(real_torch, n)))
    _assert_close(got, want, name)


def test_the_cases_agree_with_each_other() -> None:
    results = {name: _as_numpy(CASES[name](minigrad, _inputs(minigrad, 3))) for name in NAMES}
    jacobians = results["jacobians"]
    _assert_close(jacobians[0], jacobians[1], "jacrev vs jacfwd")
    _assert_close(jacobians[2], jacobians[3], "jacrev vs jacfwd, dict output, two argnums")
    _assert_close(jacobians[7], jacobians[8], "jacrev vs jacfwd of a matrix")
    hessians = results["hessians"]
    for index in (4, 5, 6):
        _assert_close(hessians[index], hessians[3], f"hessians[{index}]")
    forward_over_reverse, (reverse_over_reverse,), reverse_over_forward = results[
        "hessian_vector_products"
    ]
    _assert_close(reverse_over_reverse, forward_over_reverse, "reverse over reverse")
    _assert_close(reverse_over_forward, forward_over_reverse, "reverse over forward")
    params, same_batch, own_batch = results["ensemble"]
    assert params["weight"].shape == (3, 2, 3) and same_batch.shape == (3, 4, 2)


# --------------------------------------------------------------------------- meanings


def _variable(array, requires_grad: bool = False) -> minigrad.Variable:
    return minigrad.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def _numeric_jacobian(function, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences: shape output.shape + x.shape."""
    columns = []
    for index in range(x.size):
        step = np.zeros_like(x)
        step.flat[index] = eps
        plus = function(_variable(x + step)).detach().numpy()
        minus = function(_variable(x - step)).detach().numpy()
        columns.append((plus - minus) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(np.shape(plus) + x.shape)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_grad_and_the_jacobians_are_finite_differences(n) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    A = _variable(rng.standard_normal((3, n)))

    def vector(v):
        return (A @ v).tanh() * v.sum()

    np.testing.assert_allclose(
        grad(_scalar)(_variable(x)).numpy(), _numeric_jacobian(_scalar, x), rtol=1e-6, atol=1e-7
    )
    numeric = _numeric_jacobian(vector, x)
    for transform in (jacrev, jacfwd):
        np.testing.assert_allclose(
            transform(vector)(_variable(x)).numpy(), numeric, rtol=1e-6, atol=1e-7
        )
    numeric_hessian = _numeric_jacobian(grad(_mixed), x)
    for name, transform in [
        ("hessian", hessian),
        ("jacrev(jacrev)", lambda f: jacrev(jacrev(f))),
        ("jacfwd(jacfwd)", lambda f: jacfwd(jacfwd(f))),
        ("jacrev(jacfwd)", lambda f: jacrev(jacfwd(f))),
    ]:
        H = transform(_mixed)(_variable(x)).numpy()
        np.testing.assert_allclose(H, numeric_hessian, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12, err_msg=name)


def test_the_transformed_functions_pass_gradcheck() -> None:
    """Differentiating through a transform (create_graph inside) gives the right
    derivatives: checked by finite differences on functions built from transforms."""
    rng = np.random.default_rng(5)
    x = _variable(rng.standard_normal(3), requires_grad=True)
    X = _variable(rng.standard_normal((2, 3)), requires_grad=True)
    assert minigrad.autograd.gradcheck(grad(_mixed), (x,))
    assert minigrad.autograd.gradcheck(jacrev(lambda v: v.sin() * v.sum()), (x,))
    assert minigrad.autograd.gradcheck(jacfwd(lambda v: v.exp() * v[0]), (x,))
    assert minigrad.autograd.gradcheck(vmap(grad(_scalar)), (X,))
    assert minigrad.autograd.gradcheck(lambda v: jvp(_mixed, (v,), (v,))[1], (x,))


@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    data=st.data(),
)
def test_vmap_is_a_loop_over_the_mapped_dimension(shape, data) -> None:
    rank = len(shape)
    in_dim = data.draw(st.integers(-rank, rank - 1), label="in_dim")
    out_dim = data.draw(st.integers(-rank, rank - 1), label="out_dim")  # outputs keep rank-1+1
    array = np.random.default_rng(rank).standard_normal(shape)

    def f(x):
        return x.sin() * x.sum() + 1

    got = vmap(f, in_dims=in_dim, out_dims=out_dim)(_variable(array)).numpy()
    moved = np.moveaxis(array, in_dim, 0)
    rows = [np.sin(row) * row.sum() + 1 for row in moved]
    np.testing.assert_allclose(got, np.stack(rows, axis=out_dim), rtol=1e-12, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 4), m=st.integers(1, 3), seed=st.integers(0, 10_000))
def test_jacrev_and_jacfwd_agree_and_hessians_are_symmetric(n, m, seed) -> None:
    rng = np.random.default_rng(seed)
    x, A = _variable(rng.standard_normal(n)), _variable(rng.standard_normal((m, n)))

    def f(v):
        return (A @ v.sin()).tanh() * v.sum()

    np.testing.assert_allclose(jacrev(f)(x).numpy(), jacfwd(f)(x).numpy(), rtol=1e-10, atol=1e-12)
    H = hessian(lambda v: f(v).sum())(x).numpy()
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12)


def test_per_sample_gradients_equal_one_backward_per_example() -> None:
    rng = np.random.default_rng(3)
    w = _variable(rng.standard_normal(3))
    X, y = _variable(rng.standard_normal((5, 3))), _variable(rng.standard_normal(5))

    def loss(w, x, target):
        return ((x @ w).tanh() - target) ** 2

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(w, X, y)
    for i in range(5):
        leaf = _variable(w.numpy(), requires_grad=True)
        loss(leaf, X[i], y[i]).backward()
        np.testing.assert_allclose(per_sample[i].numpy(), leaf.grad.numpy(), rtol=1e-12)


# --------------------------------------------------------------------------- graphs


def _graph_flags(lib) -> dict:
    """Which results require grad, as a transform leaves them, for the same calls."""
    F = lib.func
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
    x_rg = x.clone().requires_grad_()
    w_rg = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    _, vjp_fn = F.vjp(lambda v: v.sin(), x)
    flags = {
        "grad(f)(x)": F.grad(_scalar)(x),
        "grad(f)(x requiring grad)": F.grad(_scalar)(x_rg),
        "grad of a closure over w": F.grad(lambda v: (w_rg * v.sin()).sum())(x),
        "grad(grad(f))": F.grad(lambda v: F.grad(_scalar)(v).sum())(x),
        "grad_and_value value": F.grad_and_value(_scalar)(x)[1],
        "vjp output": F.vjp(lambda v: v.sin(), x)[0],
        "vjp_fn result": vjp_fn(x)[0],
        "jvp tangent": F.jvp(_mixed, (x,), (x,))[1],
        "jvp tangent, x requiring grad": F.jvp(_mixed, (x_rg,), (x,))[1],
        "jacrev": F.jacrev(lambda v: v.sin())(x),
        "jacfwd": F.jacfwd(lambda v: v.sin())(x),
        "hessian": F.hessian(_mixed)(x),
        "hessian, x requiring grad": F.hessian(_mixed)(x_rg),
        "vmap(grad)": F.vmap(F.grad(_scalar))(x.reshape(3, 1)),
        "vmap of x requiring grad": F.vmap(lambda v: v * 2)(x_rg),
        "grad's aux over w": F.grad(lambda v: (_scalar(v), w_rg * 2), has_aux=True)(x)[1],
        "vjp's aux over w": F.vjp(lambda v: (v.sin(), w_rg * 2), x, has_aux=True)[2],
        "jvp's output when only aux is over w": F.jvp(
            lambda v: (v.sin(), w_rg * 2), (x,), (x,), has_aux=True
        )[1],
        "jvp's aux over w": F.jvp(lambda v: (v.sin(), w_rg * 2), (x,), (x,), has_aux=True)[2],
        "jvp of a closure over w": F.jvp(lambda v: (w_rg * v).softmax(0), (x,), (x,))[1],
    }
    return {name: value.requires_grad for name, value in flags.items()}


def test_results_keep_a_graph_exactly_when_torch_func_does(real_torch) -> None:
    assert _graph_flags(minigrad) == _graph_flags(real_torch)


def test_results_keep_a_graph_only_when_something_outside_requires_grad() -> None:
    flags = _graph_flags(minigrad)
    assert not flags["grad(f)(x)"] and not flags["hessian"] and not flags["jacfwd"]
    assert flags["grad(f)(x requiring grad)"] and flags["grad of a closure over w"]
    x = _variable([0.3, -0.7], requires_grad=True)
    g = grad(_scalar)(x)
    g.sum().backward()  # the gradient of Σ ∂f/∂x: the Hessian's row sums
    np.testing.assert_allclose(
        x.grad.numpy(), hessian(_scalar)(x.detach()).numpy().sum(0), rtol=1e-10
    )


def test_a_gradient_outside_no_grad_and_inside_respects_it() -> None:
    x = _variable([1.0, 2.0])
    with minigrad.no_grad():
        np.testing.assert_allclose(grad(lambda v: (v**2).sum())(x).numpy(), [2.0, 4.0])

    def half_frozen(v):
        with minigrad.no_grad():
            frozen = v * 3
        return (v * frozen).sum()

    np.testing.assert_allclose(grad(half_frozen)(x).numpy(), [3.0, 6.0])


# --------------------------------------------------------------------------- errors

x3 = _variable([1.0, 2.0, 3.0])
ERRORS = [
    # (what, call, exception class, words the message has)
    ("grad of a vector", lambda: grad(lambda v: v * 2)(x3), RuntimeError,
     "Expected f(*args) to return a scalar Tensor, got tensor with 1 dims"),
    ("grad of a number", lambda: grad(lambda v: 3.0)(x3), RuntimeError,
     "Expected f(*args) to return a Tensor, got <class 'float'>"),
    ("has_aux without a pair", lambda: grad(lambda v: v.sum(), has_aux=True)(x3), RuntimeError,
     "should be a tuple: (output, aux) if has_aux is True"),
    ("argnums past the end", lambda: grad(lambda v: v.sum(), argnums=1)(x3), RuntimeError,
     "Got argnum=1, but only 1 positional inputs"),
    ("argnums empty", lambda: grad(lambda v: v.sum(), argnums=())(x3), RuntimeError,
     "argnums must be non-empty"),
    ("argnums a list", lambda: grad(_two, argnums=[0, 1])(x3, x3), RuntimeError,
     "argnums must be int or Tuple[int, ...], got: <class 'list'>"),
    ("argnums twice", lambda: grad(_two, argnums=(0, -2))(x3, x3), RuntimeError,
     "argnums elements must be unique, got (0, 0)"),
    ("grad of a number input", lambda: grad(lambda v: v)(3.0), ValueError,
     "Thing passed to transform API must be Tensor, got <class 'float'>"),
    ("grad of integers", lambda: grad(lambda v: v.sum())(minigrad.arange(3)), RuntimeError,
     "floating point"),
    ("vjp of a number output", lambda: vjp(lambda v: 3.0, x3), RuntimeError,
     "vjp(f, *primals): expected f(*primals) to return only tensors"),
    ("vjp_fn, wrong shape", lambda: vjp(lambda v: v * 2, x3)[1](_variable([1.0, 2.0])),
     RuntimeError, "Mismatch in shape: grad_output[0] has a shape of (2,)"),
    ("vjp_fn, wrong nesting", lambda: vjp(lambda v: (v, v), x3)[1](x3), RuntimeError,
     "Expected pytree structure of cotangents to be the same"),
    ("vjp_fn, a number", lambda: vjp(lambda v: v * 2, x3)[1](3.0), TypeError,
     "gradients can be either Tensors or None"),
    ("jvp, primals not a tuple", lambda: jvp(lambda v: v, x3, (x3,)), RuntimeError,
     "Expected primals to be a tuple"),
    ("jvp, tangents nested otherwise", lambda: jvp(lambda v: v, (x3,), (x3, x3)), RuntimeError,
     "Expected primals and tangents to have the same python structure"),
    ("jvp, tangent of another shape", lambda: jvp(lambda v: v, (x3,), (x3[:2],)), RuntimeError,
     "Tensor is of size [3] while the given forward gradient is of size [2]"),
    ("jvp of integers", lambda: jvp(lambda v: v, (minigrad.arange(3),), (minigrad.arange(3),)),
     ValueError, "Expected primal to be floating point"),
    ("jvp with no primals", lambda: jvp(lambda: x3, (), ()), RuntimeError,
     "Expected primals to contain at least one Tensor"),
    ("jacrev chunk_size 0", lambda: jacrev(lambda v: v, chunk_size=0)(x3), ValueError,
     "`chunk_size` should be greater than 0"),
    ("jacfwd, random draw", lambda: jacfwd(lambda v: v * minigrad.randn(3))(x3), RuntimeError,
     "called random operation while in randomness error mode"),
    ("vmap of a number", lambda: vmap(lambda v: v)(3.0), ValueError,
     "Got in_dim=0 for an input but the input is of type <class 'float'>"),
    ("vmap, two batch sizes", lambda: vmap(lambda a, b: a)(x3, x3[:2]), ValueError,
     "got sizes [3, 2] for the mapped dimension"),
    ("vmap, in_dims too short", lambda: vmap(lambda a, b: a, in_dims=(0,))(x3, x3), ValueError,
     "in_dims is not compatible with the structure of `inputs`"),
    ("vmap, in_dims a list", lambda: vmap(lambda a, b: a, in_dims=[0, 0])(x3, x3), ValueError,
     "expected `in_dims` to be int or a (potentially nested) tuple"),
    ("vmap, in_dim a str", lambda: vmap(lambda a: a, in_dims=("a",))(x3), ValueError,
     "in_dim must be either an integer dimension or None"),
    ("vmap, in_dim too large", lambda: vmap(lambda a: a, in_dims=1)(x3), ValueError,
     "so expected in_dim to satisfy -1 <= in_dim < 1"),
    ("vmap, nothing mapped", lambda: vmap(lambda a: a, in_dims=(None,))(x3), ValueError,
     "Expected at least one Tensor to vmap over"),
    ("vmap, no inputs", lambda: vmap(lambda: x3)(), ValueError, "got no inputs"),
    ("vmap, a number out", lambda: vmap(lambda a: 3.0)(x3), ValueError,
     "must only return Tensors, got type <class 'float'>"),
    ("vmap, batched out_dim None", lambda: vmap(lambda a: a, out_dims=None)(x3), ValueError,
     "can not return a BatchedTensor when out_dim is None"),
    ("vmap, out_dims too short", lambda: vmap(lambda a: (a, a), out_dims=(0,))(x3), ValueError,
     "out_dims is not compatible with the structure of `outputs`"),
    ("vmap, out_dim too large", lambda: vmap(lambda a: a, out_dims=2)(x3), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 2)"),
    ("vmap, out_dims a float", lambda: vmap(lambda a: a, out_dims=0.5)(x3), ValueError,
     "`out_dims` must be an int, None or a python collection of ints"),
    ("vmap, randomness unknown", lambda: vmap(lambda a: a, randomness="foo")(x3), RuntimeError,
     "Only allowed values for randomness are 'error', 'different', or 'same'. Got foo"),
    ("vmap, chunk_size 0", lambda: vmap(lambda a: a, chunk_size=0)(x3), ValueError,
     "chunk_size should be None or greater than 0"),
    ("vmap, chunk_size a float", lambda: vmap(lambda a: a, chunk_size=1.5)(x3), TypeError,
     "chunk_size should be None or a positive int"),
    ("vmap of a number function", lambda: vmap(3)(x3), TypeError,
     "vmap: func must be a function"),
    ("grad of a number function", lambda: grad(3)(x3), TypeError,
     "grad: func must be a function"),
    ("a torch.func name minigrad lacks", lambda: minigrad.func.functionalize, AttributeError,
     "minigrad does not have `torch.func.functionalize` yet"),
]  # fmt: skip


@pytest.mark.parametrize("call,kind,words", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_pytorchs(call, kind, words) -> None:
    with pytest.raises(kind) as caught:
        call()
    assert words in str(caught.value)


TORCH_ERRORS = [name for name, *_ in ERRORS if name != "a torch.func name minigrad lacks"]


@pytest.mark.parametrize("name", TORCH_ERRORS)
def test_torch_func_raises_the_same_class(name, real_torch) -> None:
    """The same call on torch.func: the same exception class."""
    _, call, kind, _ = next(e for e in ERRORS if e[0] == name)
    code = call.__code__
    namespace = {
        **call.__globals__,
        "minigrad": real_torch,
        "x3": real_torch.tensor([1.0, 2.0, 3.0], dtype=real_torch.float64),
        "_variable": lambda values: real_torch.tensor(values, dtype=real_torch.float64),
        **{name: getattr(real_torch.func, name) for name in minigrad.func.__all__},
    }
    rebuilt = type(call)(code, namespace)
    with pytest.raises(Exception) as caught:  # noqa: B017 (the class is compared below)
        rebuilt()
    assert isinstance(caught.value, kind), f"torch raised {type(caught.value).__name__}"


# --------------------------------------------------------------------------- randomness


def test_random_draws_in_vmap_follow_randomness() -> None:
    x = minigrad.zeros(4)
    for draw in (
        lambda v: v + minigrad.randn(()),
        lambda v: v + minigrad.rand_like(v),
        lambda v: minigrad.nn.functional.dropout(v + 1, 0.5),
    ):
        with pytest.raises(RuntimeError, match="randomness error mode"):
            vmap(draw)(x)
    assert minigrad.randn(3).shape == (3,)  # the generator is back after the error

    minigrad.manual_seed(7)
    same = vmap(lambda v: v + minigrad.randn(()), randomness="same")(x).numpy()
    after_same = minigrad.randn(()).item()
    minigrad.manual_seed(7)
    first, second = minigrad.randn(()).item(), minigrad.randn(()).item()
    np.testing.assert_array_equal(same, np.full(4, first))
    assert after_same == second  # moved on by one draw, as if called once

    minigrad.manual_seed(7)
    different = vmap(lambda v: v + minigrad.randn(()), randomness="different")(x).numpy()
    minigrad.manual_seed(7)
    one_by_one = [minigrad.randn(()).item() for _ in range(4)]
    np.testing.assert_array_equal(different, one_by_one)

    dropout = minigrad.nn.Dropout(0.5).eval()  # no draw in evaluation mode
    np.testing.assert_array_equal(vmap(dropout)(x).numpy(), np.zeros(4))


def test_nested_randomness() -> None:
    grid = minigrad.zeros(3, 2)
    rows_differ = vmap(vmap(lambda v: v + minigrad.randn(()), randomness="same"),
                       randomness="different")(grid).numpy()  # fmt: skip
    assert np.all(rows_differ[:, 0] == rows_differ[:, 1]) and len(set(rows_differ[:, 0])) == 3
    columns_differ = vmap(vmap(lambda v: v + minigrad.randn(()), randomness="different"),
                          randomness="same")(grid).numpy()  # fmt: skip
    assert (
        np.all(columns_differ[0] == columns_differ[1])
        and columns_differ[0, 0] != columns_differ[0, 1]
    )
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(vmap(lambda v: v + minigrad.randn(()), randomness="different"))(grid)


# --------------------------------------------------------------------------- vmap's edges


def test_vmap_edges() -> None:
    empty = vmap(lambda r: r * 2)(minigrad.zeros(0, 3))
    assert empty.shape == (0, 3)
    assert vmap(lambda r: (r, 3.0), out_dims=(0, None))(x3)[1] == 3.0
    counted = []
    vmap(lambda r: counted.append(r.shape) or r, chunk_size=2)(minigrad.zeros(5, 2))
    assert counted == [(2,)] * 5  # one call per element: the cost the docstring states
    assert minigrad.vmap is vmap and minigrad.func.vmap is vmap
    assert vmap(_scalar).__name__ == "_scalar"


@pytest.mark.parametrize("in_dim", [0, 1, -1])
def test_vmap_gradients_reach_the_batched_input(in_dim) -> None:
    X = _variable(np.arange(6.0).reshape(2, 3) / 5, requires_grad=True)
    vmap(lambda r: (r.sin() * r).sum(), in_dims=in_dim)(X).sum().backward()
    data = X.detach().numpy()
    np.testing.assert_allclose(X.grad.numpy(), np.sin(data) + data * np.cos(data), rtol=1e-12)


# --------------------------------------------------------------------------- functional_call


class _Tied(minigrad.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = minigrad.nn.Linear(2, 2).double()
        self.second = minigrad.nn.Linear(2, 2).double()
        self.second.weight = self.first.weight
        self.register_buffer("shift", minigrad.zeros(2, dtype=minigrad.float64))

    def forward(self, x):
        return self.second(self.first(x)) + self.shift


def test_functional_call_swaps_for_one_call_and_gradients_reach_the_given_tensors() -> None:
    model = minigrad.nn.Linear(3, 2).double()
    weight_before = model.weight
    W = _variable(np.ones((2, 3)), requires_grad=True)
    x = _variable([[1.0, 2.0, 3.0]])
    out = functional_call(model, {"weight": W}, x)
    np.testing.assert_allclose(out.detach().numpy(), 6.0 + model.bias.detach().numpy()[None])
    out.sum().backward()
    np.testing.assert_allclose(W.grad.numpy(), np.tile([1.0, 2.0, 3.0], (2, 1)))
    assert model.weight is weight_before and model.weight.grad is None
    assert model.bias.grad is not None  # the Parameter not replaced is used as usual


def test_functional_call_puts_everything_back_when_the_call_raises() -> None:
    class Failing(minigrad.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = minigrad.nn.Linear(2, 2)

        def forward(self, x):
            assert self.extra is not None
            raise ValueError("boom")

    model = Failing()
    weight = model.layer.weight
    with pytest.raises(ValueError, match="boom"):
        functional_call(model, {"layer.weight": minigrad.zeros(2, 2), "extra": x3}, (x3,))
    assert model.layer.weight is weight and not hasattr(model, "extra")
    assert isinstance(model.layer._parameters["weight"], minigrad.nn.Parameter)


def test_functional_call_ties_weights_checks_strictly_and_takes_buffers() -> None:
    model = _Tied()
    x = _variable([[1.0, -1.0]])
    W = _variable(np.eye(2) * 2)
    tied = functional_call(model, {"first.weight": W}, (x,))
    untied = functional_call(model, {"first.weight": W}, (x,), tie_weights=False)
    b1, b2 = model.first.bias.detach().numpy(), model.second.bias.detach().numpy()
    expected_tied = (x.numpy() @ W.numpy().T + b1) @ W.numpy().T + b2
    np.testing.assert_allclose(tied.detach().numpy(), expected_tied, rtol=1e-12)
    assert not np.allclose(untied.detach().numpy(), expected_tied)
    with pytest.raises(ValueError, match="which are tied. Consider using tie_weights=False"):
        functional_call(model, {"first.weight": W, "second.weight": W.clone()}, (x,))
    shifted = functional_call(model, ({"first.weight": W}, {"shift": _variable([1.0, 1.0])}), x)
    np.testing.assert_allclose(shifted.detach().numpy(), expected_tied + 1, rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"Missing key\(s\): 'first.bias'"):
        functional_call(model, {"first.weight": W}, (x,), strict=True)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'nope'"):
        everything = dict(model.named_parameters(remove_duplicate=False))
        everything.update(dict(model.named_buffers()), nope=x)
        functional_call(model, everything, (x,), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(model, ({"shift": x}, {"shift": x}), (x,))
    with pytest.raises(TypeError, match="is not an instance of torch.Tensor"):
        functional_call(model, {"shift": 1.0}, (x,))
    with pytest.raises(AttributeError, match="has no attribute `third`"):
        functional_call(model, {"third.weight": W}, (x,))
    with pytest.raises(TypeError, match="module must be a minigrad.nn.Module"):
        functional_call(lambda v: v, {}, (x,))


def test_functional_call_with_dual_tensors() -> None:
    """forward-mode AD through functional_call, as PyTorch's forward_ad tutorial does."""
    fwAD = minigrad.autograd.forward_ad
    model = minigrad.nn.Linear(3, 2).double()
    x = _variable(np.arange(6.0).reshape(2, 3))
    tangents = {name: minigrad.ones_like(p) for name, p in model.named_parameters()}
    with fwAD.dual_level():
        duals = {name: fwAD.make_dual(p, tangents[name]) for name, p in model.named_parameters()}
        jvp_out = fwAD.unpack_dual(functional_call(model, duals, x)).tangent
    np.testing.assert_allclose(jvp_out.numpy(), x.numpy() @ np.ones((3, 2)) + 1, rtol=1e-12)


def test_stack_module_state() -> None:
    models = [minigrad.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = stack_module_state(models)
    assert buffers == {} and list(params) == ["weight", "bias"]
    assert params["weight"].shape == (4, 2, 3) and params["weight"].is_leaf
    assert params["weight"].requires_grad
    np.testing.assert_array_equal(
        params["bias"][2].detach().numpy(), models[2].bias.detach().numpy()
    )
    norms = [minigrad.nn.BatchNorm1d(3) for _ in range(2)]
    assert set(stack_module_state(norms)[1]) == {
        "running_mean",
        "running_var",
        "num_batches_tracked",
    }
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="Expected all models to be of the same class"):
        stack_module_state([models[0], norms[0]])
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        stack_module_state([minigrad.nn.Linear(3, 2), minigrad.nn.Linear(3, 2).eval()])
    frozen = minigrad.nn.Linear(3, 2)
    frozen.bias.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected bias from each model to have the same"):
        stack_module_state([minigrad.nn.Linear(3, 2), frozen])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        stack_module_state([minigrad.nn.Linear(3, 2), minigrad.nn.Linear(3, 3)])


def test_pytrees_round_trip() -> None:
    from minigrad.func.pytree import broadcast_prefix, tree_flatten, tree_unflatten

    Pair = namedtuple("Pair", "a b")
    tree = ({"w": 1, "b": [2, (3, None)]}, Pair(4, 5))
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, None, 4, 5] and tree_unflatten(leaves, spec) == tree
    assert repr(tree_flatten((1, 2))[1]) == "TreeSpec(tuple, None, [*, *])"

    def is_dim(value):
        return not isinstance(value, (tuple, list, dict))

    assert broadcast_prefix((None, 0), tree, is_dim) == [None, None, None, None, 0, 0]
    assert broadcast_prefix((0,), tree, is_dim) is None
