"""The PyTorch surface around the engine: the op table, devices, dtypes, factories,
numpy(), save/load, gradcheck's keywords and gradgradcheck, and the missing-name error."""

from __future__ import annotations

import io

import numpy as np
import pytest

import minigrad
import minigrad as torch
from minigrad import GradcheckError, Variable
from minigrad.ops import table

# --------------------------------------------------------------------------- the op table


def test_every_table_entry_is_attached_where_it_says() -> None:
    for op in table.OPS.values():
        for spelling in (op.name, *op.aliases):
            if op.method is not None:
                assert getattr(Variable, spelling) is op.method, spelling
            if op.function is not None:
                assert getattr(minigrad, spelling) is op.function, spelling
            if op.inplace:
                assert callable(getattr(Variable, spelling + "_")), spelling


def test_registering_an_op_attaches_method_function_and_inplace_variant() -> None:
    def cube_it(x: Variable) -> Variable:
        return x * x * x

    try:
        table.register("cube_for_test", inplace=True)(cube_it)
        x = Variable([1.0, 2.0])
        assert x.cube_for_test().tolist() == [1.0, 8.0]
        # The table attaches cube_it wrapped in its argument checks (ops/tooling/arguments.py).
        assert table.functions()["cube_for_test"].__wrapped__ is cube_it
        x.cube_for_test_()
        assert x.tolist() == [1.0, 8.0]
    finally:
        del table.OPS["cube_for_test"]
        del Variable.cube_for_test, Variable.cube_for_test_


def test_an_op_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        table.register("exp")(lambda x: x)


def test_inplace_variants_follow_the_out_of_place_op() -> None:
    x = Variable([1.0, 4.0])
    x.add_(Variable([1.0, 1.0]), alpha=2)
    assert x.tolist() == [3.0, 6.0]
    x.sqrt_()
    np.testing.assert_allclose(x.data, np.sqrt([3.0, 6.0]))
    leaf = Variable([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.exp_()


def test_add_sub_alpha_and_div_rounding_modes_match_pytorch() -> None:
    a, b = Variable([7.0, -7.0]), Variable([2.0, 2.0])
    assert torch.add(a, b, alpha=3).tolist() == [13.0, -1.0]
    assert a.sub(b, alpha=2).tolist() == [3.0, -11.0]
    assert torch.div(a, b, rounding_mode="trunc").tolist() == [3.0, -3.0]
    assert torch.div(a, b, rounding_mode="floor").tolist() == [3.0, -4.0]
    with pytest.raises(ValueError, match="rounding_mode"):
        torch.div(a, b, rounding_mode="round")


def test_rounded_division_has_a_zero_gradient() -> None:
    a = Variable([7.0, -7.0], requires_grad=True)
    torch.div(a, 2.0, rounding_mode="floor").sum().backward()
    assert a.grad.tolist() == [0.0, 0.0]


# --------------------------------------------------------------------------- devices


def test_device_is_callable_and_compares_with_its_str() -> None:
    assert torch.device("cpu") == "cpu"
    assert torch.device("cuda:0") == "cuda" and torch.device("cuda") == "cuda:0"
    assert torch.device("cuda:0").index == 0 and torch.device("cuda").type == "cuda"
    assert str(torch.device("cuda:0")) == "cuda:0"
    assert repr(torch.device("cpu")) == "device(type='cpu')"
    assert torch.device(torch.device("cpu")) == torch.device("cpu")
    assert {torch.device("cpu"): 1}["cpu"] == 1
    assert Variable([1.0]).device == "cpu" and Variable([1.0]).device == torch.device("cpu")
    assert Variable([1.0]).device != "cuda"


@pytest.mark.parametrize(
    ("spec", "error", "pattern"),
    [("gpu", ValueError, "unknown device 'gpu'"), ("cuda:1", ValueError, "one GPU at most")],
)
def test_bad_devices_say_what_is_accepted(spec: str, error: type, pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        torch.device(spec)


def test_factories_accept_device_cpu_in_every_spelling() -> None:
    for spec in ("cpu", torch.device("cpu")):
        assert torch.zeros(2, device=spec).device == "cpu"
        assert torch.randn(2, 3, device=spec, dtype=torch.double).shape == (2, 3)


# --------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("float", np.float32),
        ("double", np.float64),
        ("half", np.float16),
        ("long", np.int64),
        ("int", np.int32),
        ("bool", np.bool_),
        ("float32", np.float32),
        ("float64", np.float64),
        ("int64", np.int64),
        ("int32", np.int32),
    ],
)
def test_dtype_names_work_as_dtype_everywhere(name: str, expected: type) -> None:
    dtype = getattr(torch, name)
    assert torch.zeros(2, dtype=dtype).dtype == expected
    assert torch.ones(2, 2, dtype=dtype).dtype == expected
    assert torch.full((2,), 1, dtype=dtype).dtype == expected
    assert torch.tensor([1, 0], dtype=dtype).dtype == expected
    if expected is np.bool_:  # PyTorch has no range of bools: "arange_cpu" not implemented
        with pytest.raises(NotImplementedError, match="arange_cpu"):
            torch.arange(3, dtype=dtype)
    else:
        assert torch.arange(3, dtype=dtype).dtype == expected
    assert Variable([1.0, 0.0]).to(dtype).dtype == expected
    assert torch.zeros_like(Variable([1.0]), dtype=dtype).dtype == expected


def test_cast_methods_and_their_gradients() -> None:
    x = Variable(np.array([1.5, -2.5]), requires_grad=True)
    y = x.float()
    assert y.dtype == torch.float32 and y.requires_grad
    (y * y).sum().backward()
    assert x.grad.dtype == np.float64  # the gradient comes back in the input's dtype
    np.testing.assert_allclose(x.grad.data, [3.0, -5.0])
    assert x.long().dtype == np.int64 and not x.long().requires_grad
    assert x.int().dtype == np.int32 and x.bool().dtype == np.bool_
    assert x.double() is x  # nothing to change: the same Variable, as in PyTorch
    assert Variable([1, 2]).type_as(x).dtype == np.float64


def test_to_takes_device_dtype_both_or_a_tensor() -> None:
    x = Variable([1.0, 2.0])
    assert x.to("cpu") is x
    assert x.to("cpu", torch.float32).dtype == np.float32
    assert x.to(device="cpu", dtype=torch.float16).dtype == np.float16
    assert x.to(torch.device("cpu"), dtype=torch.float32).dtype == np.float32
    assert x.to(Variable(np.zeros(1, dtype=np.float32))).dtype == np.float32
    assert x.to(torch.float64, copy=True) is not x
    with pytest.raises(TypeError, match="at most 2 positional"):
        x.to("cpu", torch.float32, True)


def test_gradcheck_of_a_cast_round_trip() -> None:
    x = Variable(np.array([0.3, -1.2]), requires_grad=True)
    assert torch.gradcheck(lambda v: v.to(torch.float64).tanh() * 2, (x,))


# --------------------------------------------------------------------------- factories


def test_ranges_and_eye() -> None:
    np.testing.assert_allclose(torch.linspace(0, 1, 5).data, np.linspace(0, 1, 5))
    np.testing.assert_allclose(torch.logspace(0, 2, 3).data, [1.0, 10.0, 100.0])
    np.testing.assert_allclose(torch.logspace(0, 3, 4, base=2).data, [1, 2, 4, 8])
    assert torch.eye(3).tolist() == np.eye(3).tolist()
    assert torch.eye(2, 3).shape == (2, 3)
    assert torch.arange(torch.tensor(3)).tolist() == [0, 1, 2]


def test_from_numpy_shares_memory_and_as_tensor_avoids_copies() -> None:
    array = np.arange(3.0)
    shared = torch.from_numpy(array)
    array[0] = 7.0
    assert shared.tolist() == [7.0, 1.0, 2.0]
    shared.data[1] = 5.0
    assert array[1] == 5.0
    assert torch.as_tensor(array)._data is array
    assert torch.as_tensor(array, dtype=torch.float32)._data is not array
    x = Variable([1.0])
    assert torch.as_tensor(x) is x
    assert torch.as_tensor([1, 2]).dtype == np.int64
    with pytest.raises(TypeError, match="NumPy array"):
        torch.from_numpy([1.0, 2.0])


def test_random_factories_repeat_under_manual_seed() -> None:
    torch.manual_seed(3)
    first = (torch.randint(0, 10, (5,)), torch.normal(0.0, 2.0, (4,)), torch.rand(2))
    torch.manual_seed(3)
    second = (torch.randint(0, 10, (5,)), torch.normal(0.0, 2.0, (4,)), torch.rand(2))
    for a, b in zip(first, second):
        assert a.tolist() == b.tolist()
    assert first[0].dtype == np.int64 and 0 <= first[0].data.min() and first[0].data.max() < 10
    assert torch.randint(5, (3, 2)).shape == (3, 2)  # randint(high, size)
    means = torch.normal(Variable([0.0, 100.0]), 1e-9)
    np.testing.assert_allclose(means.data, [0.0, 100.0], atol=1e-6)
    with pytest.raises(RuntimeError, match="low < high"):  # PyTorch's class
        torch.randint(3, 3, (2,))
    with pytest.raises(RuntimeError, match="std >= 0"):  # PyTorch's class
        torch.normal(0.0, -1.0, (2,))


def test_like_factories_copy_shape_dtype_device() -> None:
    x = Variable(np.zeros((2, 3), dtype=np.float32))
    for made in (
        torch.randn_like(x),
        torch.rand_like(x),
        torch.empty_like(x),
        torch.full_like(x, 7),
        torch.ones_like(x),
    ):
        assert made.shape == (2, 3) and made.dtype == np.float32 and made.device == "cpu"
    assert torch.full_like(x, 7).data.max() == 7
    assert torch.full_like(x, 2, dtype=torch.int64).dtype == np.int64


def test_new_factories_take_the_dtype_of_the_tensor() -> None:
    x = Variable(np.zeros(1, dtype=np.float32))
    assert x.new_zeros(2, 3).dtype == np.float32 and x.new_zeros((2, 3)).shape == (2, 3)
    assert x.new_ones(2).tolist() == [1.0, 1.0]
    assert x.new_full((2,), 4.0).tolist() == [4.0, 4.0]
    assert x.new_tensor([1, 2]).dtype == np.float32
    assert x.new_empty(4).shape == (4,)
    assert x.new_zeros(2, dtype=torch.int64).dtype == np.int64
    assert x.new_ones(2, requires_grad=True).requires_grad


def test_factories_reject_bad_sizes_with_what_they_got() -> None:
    with pytest.raises(TypeError, match="sizes must be ints"):
        torch.zeros(2.5)
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.linspace(0, 1, -1)


# --------------------------------------------------------------------------- numpy(), .data


def test_numpy_is_refused_while_grad_mode_is_on_only() -> None:
    x = Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()
    with torch.no_grad():
        assert x.numpy() is x._data
    assert x.detach().numpy() is x._data


def test_numpy_inside_a_forward_works_as_in_pytorch() -> None:
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.from_numpy(x.numpy() * 2)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = Variable([1.0, 3.0], requires_grad=True)
    Twice.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_data_assignment_takes_a_tensor_an_array_or_numbers() -> None:
    w = Variable([1.0, 2.0], requires_grad=True)
    w.data = torch.zeros(3)
    assert w.tolist() == [0.0, 0.0, 0.0] and w.requires_grad
    w.data = np.ones(2)
    assert w.tolist() == [1.0, 1.0]
    w.data = w.data - 0.5 * np.ones(2)
    assert w.tolist() == [0.5, 0.5]
    with pytest.raises(TypeError, match="text data to a numeric Variable"):
        w.data = "hello"


def test_grad_zero_and_requires_grad_() -> None:
    x = torch.ones(2).requires_grad_()
    assert x.requires_grad
    (x * 3).sum().backward()
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0]
    assert not x.requires_grad_(False).requires_grad


# --------------------------------------------------------------------------- small names


def test_closeness_and_predicates() -> None:
    a, b = Variable([1.0, 2.0]), Variable([1.0, 2.0 + 1e-9])
    assert torch.allclose(a, b) and a.allclose(b)
    assert torch.isclose(a, Variable([1.0, 3.0])).tolist() == [True, False]
    assert torch.equal(a, Variable([1.0, 2.0])) and not torch.equal(a, b)
    assert torch.is_tensor(a) and not torch.is_tensor(np.ones(2))
    assert torch.numel(torch.zeros(2, 3)) == 6
    assert a.is_floating_point() and not Variable([1]).is_floating_point()


def test_inference_mode_turns_recording_off() -> None:
    x = Variable([1.0], requires_grad=True)
    with torch.inference_mode():
        assert not (x * 2).requires_grad
    with torch.inference_mode(False):
        assert (x * 2).requires_grad

    @torch.inference_mode()
    def predict(v: Variable) -> Variable:
        return v * 2

    assert not predict(x).requires_grad and torch.is_grad_enabled()


# --------------------------------------------------------------------------- save / load


def test_save_and_load_a_state_dict_round_trip(tmp_path) -> None:
    model = torch.nn.Linear(3, 2)
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    assert path.exists()  # the name as given, no ".npz" appended
    other = torch.nn.Linear(3, 2)
    other.load_state_dict(torch.load(path))
    np.testing.assert_array_equal(other.weight.data, model.weight.data)
    np.testing.assert_array_equal(other.bias.data, model.bias.data)


def test_save_and_load_nested_values_to_a_file_object() -> None:
    buffer = io.BytesIO()
    state = {
        "step": 3,
        "lr": 0.1,
        "name": "adam",
        "none": None,
        "betas": (0.9, 0.999),
        0: {"exp_avg": Variable(np.ones(2, dtype=np.float32))},
        "p": torch.nn.Parameter(Variable([1.0])),
    }
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    assert loaded["step"] == 3 and loaded["lr"] == 0.1 and loaded["name"] == "adam"
    assert loaded["none"] is None and loaded["betas"] == (0.9, 0.999)
    assert loaded[0]["exp_avg"].dtype == np.float32
    assert isinstance(loaded["p"], torch.nn.Parameter) and loaded["p"].requires_grad


def test_save_refuses_objects_it_would_have_to_pickle(tmp_path) -> None:
    with pytest.raises(TypeError, match="state_dict"):
        torch.save(torch.nn.Linear(1, 1), tmp_path / "m.pt")


def test_load_refuses_files_it_did_not_write(tmp_path) -> None:
    path = tmp_path / "plain.npz"
    np.savez(path, a=np.ones(2))
    with pytest.raises(ValueError, match="not one minigrad.save wrote"):
        torch.load(path)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x80\x04not an npz")
    with pytest.raises(ValueError, match="cannot load"):
        torch.load(junk)
    single = tmp_path / "single.npy"
    np.save(single, np.ones(2))
    with pytest.raises(ValueError, match="single .npy array"):
        torch.load(single)


# --------------------------------------------------------------------------- gradcheck


def _cube(x: Variable) -> Variable:
    return x * x * x


def test_gradcheck_accepts_pytorchs_keywords() -> None:
    x = Variable(np.array([0.5, -0.3]), requires_grad=True)
    assert torch.autograd.gradcheck(
        _cube,
        (x,),
        eps=1e-6,
        atol=1e-5,
        rtol=1e-3,
        raise_exception=True,
        fast_mode=True,
        nondet_tol=0.0,
        check_undefined_grad=True,
        check_batched_grad=True,
        check_grad_dtypes=True,
        masked=False,
    )


class _ScaleWithJvp(torch.autograd.Function):
    """y = 3x, with a jvp that is right or (wrong=True) off by one."""

    wrong = False

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        return grad * 3

    @staticmethod
    def jvp(ctx, tangent):
        return tangent * (4 if _ScaleWithJvp.wrong else 3)


def test_gradcheck_checks_forward_mode_against_finite_differences() -> None:
    x = Variable(np.array([0.5, -0.3, 1.2]), requires_grad=True)
    assert torch.autograd.gradcheck(_cube, (x,), check_forward_ad=True)
    assert torch.autograd.gradcheck(
        _ScaleWithJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False
    )
    try:
        _ScaleWithJvp.wrong = True
        with pytest.raises(torch.autograd.GradcheckError, match="forward mode"):
            torch.autograd.gradcheck(_ScaleWithJvp.apply, (x,), check_forward_ad=True)
        # Backward alone is still right.
        assert torch.autograd.gradcheck(_ScaleWithJvp.apply, (x,))
    finally:
        _ScaleWithJvp.wrong = False


def test_gradcheck_finds_a_nondeterministic_backward() -> None:
    calls = []

    class Noisy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            calls.append(1)
            return grad * 2 + (len(calls) % 2) * 1e-3

    x = Variable(np.array([0.5]), requires_grad=True)
    with pytest.raises(GradcheckError, match="not deterministic"):
        torch.autograd.gradcheck(Noisy.apply, (x,), atol=1e-2)
    assert torch.autograd.gradcheck(
        Noisy.apply, (x,), atol=1e-2, nondet_tol=1e-2, check_undefined_grad=False
    )


def test_gradcheck_finds_a_backward_that_ignores_a_zero_gradient() -> None:
    class Leaky(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * grad * x + 1e-9 * x

    x = Variable(np.array([0.5]), requires_grad=True)
    with pytest.raises(GradcheckError, match="zero \\(undefined\\) output gradient"):
        torch.autograd.gradcheck(Leaky.apply, (x,))
    assert torch.autograd.gradcheck(Leaky.apply, (x,), check_undefined_grad=False)


def test_gradgradcheck_passes_for_differentiable_backwards() -> None:
    x = Variable(np.array([[0.5, -0.3], [0.2, 0.9]]), requires_grad=True)
    w = Variable(np.array([[1.5, 0.1], [-0.4, 0.7]]), requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    v = Variable(np.ones((2, 2)), requires_grad=True)
    assert torch.gradgradcheck(lambda a: a.exp() * a, (x,), (v,))


def test_gradgradcheck_finds_a_wrong_double_backward() -> None:
    class WrongSecond(torch.autograd.Function):
        """x**3 whose backward claims 3 x**2 but is built so its own derivative is wrong."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * Square.apply(x)

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2 * grad * x

    x = Variable(np.array([0.5, 1.5]), requires_grad=True)
    assert torch.gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        torch.gradgradcheck(WrongSecond.apply, (x,))
    assert not torch.gradgradcheck(WrongSecond.apply, (x,), raise_exception=False)


# --------------------------------------------------------------------------- missing names


def test_a_missing_tensor_method_names_itself_and_the_nearest_spelling() -> None:
    with pytest.raises(AttributeError, match=r"minigrad does not have `Tensor.sumn` yet") as info:
        Variable([1.0]).sumn()
    assert "`Tensor.sum`" in str(info.value)


def test_a_missing_torch_function_names_itself() -> None:
    with pytest.raises(AttributeError, match=r"minigrad does not have `torch.tanhh` yet") as info:
        torch.tanhh  # noqa: B018
    assert "`torch.tanh`" in str(info.value)
    assert not hasattr(torch, "no_such_thing_at_all")
    with pytest.raises(AttributeError, match="has no attribute '_private'"):
        Variable([1.0])._private  # noqa: B018


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("eq", [False, True, False]),
        ("ne", [True, False, True]),
        ("lt", [True, False, False]),
        ("le", [True, True, False]),
        ("gt", [False, False, True]),
        ("ge", [False, True, True]),
        ("greater", [False, False, True]),
        ("less_equal", [True, True, False]),
    ],
)
def test_comparisons_by_name_as_methods_and_functions(name: str, expected: list) -> None:
    x = Variable([1.0, 2.0, 3.0], requires_grad=True)
    assert getattr(x, name)(2.0).tolist() == expected
    result = getattr(torch, name)(x, Variable([2.0]))
    assert result.tolist() == expected and not result.requires_grad


def test_value_questions_isnan_isinf_isfinite_nonzero() -> None:
    x = Variable([1.0, np.nan, np.inf, 0.0], requires_grad=True)
    assert x.isnan().tolist() == [False, True, False, False]
    assert torch.isinf(x).tolist() == [False, False, True, False]
    assert x.isfinite().tolist() == [True, False, False, True]
    assert not x.isnan().requires_grad
    assert x.nonzero().tolist() == [[0], [1], [2]] and x.nonzero().dtype == np.int64
    rows, columns = torch.nonzero(Variable([[0.0, 2.0], [3.0, 0.0]]), as_tuple=True)
    assert rows.tolist() == [0, 1] and columns.tolist() == [1, 0]


def test_broadcast_to_default_dtype_and_is_cuda() -> None:
    x = Variable([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.broadcast_to(x, (2, 3))
    y.sum().backward()
    assert y.shape == (2, 3) and x.grad.tolist() == [2.0, 2.0, 2.0]
    assert torch.get_default_dtype() == np.float64
    assert torch.zeros(1).dtype == torch.get_default_dtype()
    assert x.is_cuda is False


def test_cuda_module_says_no_gpu_in_the_simulator(monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert torch.zeros(2, device=device).device == "cpu"
    torch.cuda.manual_seed_all(5)
    first = torch.rand(2).tolist()
    torch.manual_seed(5)
    assert torch.rand(2).tolist() == first


def test_tensor_of_a_list_of_tensors_and_where_with_one_argument() -> None:
    assert torch.tensor([torch.tensor(1.0), torch.tensor(2.0)]).tolist() == [1.0, 2.0]
    (positions,) = torch.where(Variable([0.0, 3.0, 5.0]) > 1)
    assert positions.tolist() == [1, 2]
    with pytest.raises(TypeError, match="needs both x and other"):
        torch.where(Variable([True]), Variable([1.0]))


def test_missing_names_in_nn_and_optim_say_so() -> None:
    with pytest.raises(AttributeError, match=r"does not have `torch.nn.SmoothL1Loss` yet.*L1Loss"):
        torch.nn.SmoothL1Loss  # noqa: B018
    with pytest.raises(
        AttributeError, match=r"does not have `torch.optim.SDG` yet.*`torch.optim.SGD`"
    ):
        torch.optim.SDG  # noqa: B018


def test_sum_and_mean_take_numpys_axis_as_pytorch_does() -> None:
    x = Variable(np.arange(6.0).reshape(2, 3))
    assert x.sum(axis=1).tolist() == [3.0, 12.0]
    assert torch.mean(x, axis=0).tolist() == [1.5, 2.5, 3.5]
    with pytest.raises(TypeError, match="both dim=0 and axis=1"):
        x.sum(0, axis=1)


def test_a_single_integer_variable_indexes_a_list_as_in_pytorch():
    classes = ["cat", "dog", "bird"]
    prediction = minigrad.tensor([0.1, 0.2, 0.7])
    assert classes[prediction.argmax(0)] == "bird"
    assert list(range(minigrad.tensor(3))) == [0, 1, 2]
    with pytest.raises(TypeError, match="only integer Variables of a single element"):
        classes[minigrad.tensor(1.0)]
    with pytest.raises(TypeError, match="only integer Variables of a single element"):
        classes[minigrad.tensor([1, 2])]


def test_type_names_the_dtype_or_casts_as_pytorch():
    x = minigrad.tensor([1.5, 2.0])
    assert x.type() == "torch.DoubleTensor"
    assert x.type(minigrad.float32).dtype == minigrad.float32
    assert x.type("torch.LongTensor").tolist() == [1, 2]
    assert minigrad.tensor([True]).type() == "torch.BoolTensor"
    with pytest.raises(ValueError, match="type\\(\\) expects a dtype or one of"):
        x.type("torch.Float")
    torch = pytest.importorskip("torch")
    for dtype in (torch.float32, torch.float64, torch.int64, torch.int32, torch.bool):
        mine = minigrad.tensor([1.0]).type(getattr(minigrad, str(dtype).split(".")[1]))
        assert mine.type() == torch.tensor([1.0]).type(dtype).type()


def test_a_pack_hook_that_computes_with_its_variable_runs_once_per_value():
    """PyTorch's saved-tensors-hooks tutorial: pack x * 4, unpack x / 4. The pack hook runs
    with the hooks off, so the values it saves are not packed again (no recursion)."""
    calls = []

    def pack(x):
        calls.append(x.shape)
        return x * 4

    a = minigrad.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = minigrad.tensor([0.5, 0.25, 2.0], requires_grad=True)
    with minigrad.autograd.graph.saved_tensors_hooks(pack, lambda x: x / 4):
        y = (a * b).sum()
    y.backward()
    assert len(calls) == 2  # a and b, saved by the product
    np.testing.assert_array_equal(a.grad.data, b.data)
    np.testing.assert_array_equal(b.grad.data, a.data)


def test_backends_answer_the_quickstarts_question():
    # PyTorch's quickstart, as it is written:
    device = (
        "cuda"
        if torch.cuda.is_available()
        else "mps"
        if torch.backends.mps.is_available()
        else "cpu"
    )
    assert device in ("cpu", "cuda")
    assert torch.backends.mps.is_built() is False and torch.backends.cudnn.is_available() is False
    torch.backends.cudnn.deterministic = True  # accepted, as reproducibility recipes set it


def _cubic(x, y):
    return (x * x * y).sum() + (y * y * y).sum()


def test_vhp_equals_pytorch_and_hvp():
    real = pytest.importorskip("torch")
    x, y = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, -1.1])
    v = (np.array([0.2, 0.1, -0.4]), np.array([1.0, -0.5, 0.25]))
    mine_out, mine = torch.autograd.functional.vhp(
        _cubic, (Variable(x), Variable(y)), tuple(Variable(a) for a in v)
    )
    theirs_out, theirs = real.autograd.functional.vhp(
        _cubic, (real.tensor(x), real.tensor(y)), tuple(real.tensor(a) for a in v)
    )
    assert mine_out.item() == pytest.approx(theirs_out.item(), rel=1e-15)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-14)
    _, by_hvp = torch.autograd.functional.hvp(
        _cubic, (Variable(x), Variable(y)), tuple(Variable(a) for a in v)
    )
    for a, b in zip(mine, by_hvp):
        np.testing.assert_allclose(a.data, b.data, rtol=1e-14)  # H is symmetric


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_gives_the_plain_gradients(segments):
    from minigrad import nn
    from minigrad.utils.checkpoint import checkpoint_sequential

    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    x = minigrad.randn(5, 4, requires_grad=True)
    checkpoint_sequential(model, segments, x, use_reentrant=True).sum().backward()
    checkpointed = [p.grad.data.copy() for p in model.parameters()] + [x.grad.data.copy()]
    model.zero_grad()
    x.grad = None
    model(x).sum().backward()
    plain = [p.grad.data for p in model.parameters()] + [x.grad.data]
    for a, b in zip(checkpointed, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# --------------------------------------------------- set_default_device, save_on_cpu
def test_set_default_device_moves_what_the_factories_make() -> None:
    import minigrad

    try:
        minigrad.set_default_device("cuda")
        assert minigrad.get_default_device() == "cuda"
        for made in (minigrad.zeros(2), minigrad.linspace(0, 1, 3), minigrad.tensor([1.0])):
            assert made.device == "cuda"
        assert minigrad.zeros(2, device="cpu").device == "cpu"  # device= still wins
    finally:
        minigrad.set_default_device(None)
    assert minigrad.get_default_device() == "cpu" and minigrad.ones(1).device == "cpu"
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        minigrad.set_default_device("tpu")


def test_save_on_cpu_keeps_saved_values_on_the_host_and_gives_the_same_gradients() -> None:
    import minigrad

    rng = np.random.default_rng(5)
    data = rng.standard_normal(4)
    pack, unpack = minigrad.autograd.graph.save_on_cpu(pin_memory=True).hooks
    on_gpu = minigrad.tensor(data).cuda()
    packed = pack(on_gpu)
    assert packed[1].device == "cpu" and unpack(packed).device == "cuda"

    grads = []
    for use_hooks in (False, True):
        x = minigrad.tensor(data).cuda().requires_grad_()
        if use_hooks:
            with minigrad.autograd.graph.save_on_cpu():
                y = (x * x.exp()).sum()
        else:
            y = (x * x.exp()).sum()
        y.backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[1], np.exp(data) * (1 + data))


# ------------------------------------------------------------ grad_fn._saved_<name>
def test_saved_attributes_of_a_node_name_its_inputs_and_output() -> None:
    import minigrad

    a = minigrad.randn(3, requires_grad=True)
    b = minigrad.ones(3, requires_grad=True)
    y = a * b
    assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b
    assert y.grad_fn._saved_a is a and y.grad_fn._saved_b is b  # forward's own names
    e = a.exp()
    assert e.grad_fn._saved_result.equal(e) and e.grad_fn._saved_result is not e
    with pytest.raises(AttributeError, match="saved no value for 'self'"):
        _ = e.grad_fn._saved_self
    # As torch: the node's own name, and what forward set on ctx (a ctx typo is the usual cause).
    with pytest.raises(AttributeError, match="'ExpBackward' object has no attribute 'no_such"):
        _ = e.grad_fn.no_such_thing
    e.sum().backward()
    with pytest.raises(RuntimeError, match="freed by a backward; pass retain_graph=True"):
        _ = e.grad_fn._saved_result
    # Under saved_tensors_hooks the unpack hook gives the value back.
    with minigrad.autograd.graph.saved_tensors_hooks(lambda v: v * 1, lambda v: v):
        z = a * b
    np.testing.assert_array_equal(z.grad_fn._saved_other.detach().numpy(), b.detach().numpy())


# ------------------------------------------------ f-strings, NumPy arrays, fwd-over-rev
def test_a_one_number_variable_formats_like_its_number() -> None:
    import minigrad

    loss = minigrad.tensor(0.123456)
    assert f"{loss:.4f}" == "0.1235" and "{:.2f}".format(loss) == "0.12"  # noqa: UP032
    assert f"{minigrad.Variable('abc'):>5}" == "  abc"
    assert f"{minigrad.ones(2)}" == str(minigrad.ones(2))
    with pytest.raises(TypeError, match=r"format spec '.3f' needs a Variable holding one number"):
        f"{minigrad.ones(2):.3f}"  # noqa: B018


def test_numpy_arrays_of_variables_hold_their_numbers() -> None:
    import minigrad

    history = [minigrad.tensor(1.5), minigrad.tensor(2.5)]
    assert np.array(history).tolist() == [1.5, 2.5]
    assert np.asarray(minigrad.ones(2), dtype=np.float32).dtype == np.float32
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on a Variable that requires"):
        np.asarray(minigrad.ones(2, requires_grad=True))
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.asarray(torch.ones(2, requires_grad=True))


def test_gradgradcheck_checks_forward_over_reverse() -> None:
    x = Variable(np.array([0.3, -0.7, 1.1]), requires_grad=True)
    assert torch.autograd.gradgradcheck(
        lambda v: (v.sin() * v).sum(), (x,), check_fwd_over_rev=True
    )
    assert torch.autograd.gradgradcheck(
        lambda v: v.exp() * v, (x,), check_fwd_over_rev=True, check_rev_over_rev=False
    )


def test_relu_backward_is_itself_differentiable_as_in_pytorch() -> None:
    """A gradient penalty through relu: the first layer's bias gets zeros, not None."""
    import minigrad

    w = minigrad.tensor([0.5, -0.5], requires_grad=True)
    (g,) = minigrad.autograd.grad(minigrad.relu(w).sum(), w, create_graph=True)
    assert g.requires_grad and g.tolist() == [1.0, 0.0]
    (gg,) = minigrad.autograd.grad(g.sum(), w, allow_unused=True)
    assert gg.tolist() == [0.0, 0.0]
    point = minigrad.tensor([0.3, -0.7], requires_grad=True)
    assert minigrad.autograd.gradgradcheck(minigrad.relu, (point,))

    minigrad.manual_seed(0)
    critic = minigrad.nn.Sequential(
        minigrad.nn.Linear(3, 4), minigrad.nn.ReLU(), minigrad.nn.Linear(4, 1)
    )
    x = minigrad.tensor(np.random.default_rng(0).standard_normal((5, 3)), requires_grad=True)
    (grad_x,) = minigrad.autograd.grad(critic(x).sum(), x, create_graph=True)
    ((grad_x.norm(2, dim=1) - 1) ** 2).mean().backward()
    grads = [p.grad for p in critic.parameters()]
    assert all(g is not None for g in grads[:3]) and grads[3] is None  # as PyTorch


def test_leaky_relu_backward_is_itself_differentiable_as_in_pytorch() -> None:
    import minigrad

    w = minigrad.tensor([0.5, -0.5, 0.0], requires_grad=True)
    (g,) = minigrad.autograd.grad(
        minigrad.nn.functional.leaky_relu(w, 0.2).sum(), w, create_graph=True
    )
    assert g.requires_grad and g.tolist() == [1.0, 0.2, 0.2]  # slope at 0, as PyTorch
    point = minigrad.tensor([0.3, -0.6], requires_grad=True)
    assert minigrad.autograd.gradgradcheck(
        lambda v: minigrad.nn.functional.leaky_relu(v, 0.1), (point,)
    )


def test_names_minigrad_lacks_on_autograd_and_on_nodes_say_so() -> None:
    import minigrad

    node = minigrad.ones(2, requires_grad=True).exp().grad_fn
    with pytest.raises(AttributeError, match="have `autograd.graph.Node.register_prehook`"):
        _ = node.register_prehook
    with pytest.raises(AttributeError, match="nearest existing spelling: `torch.autograd.detect"):
        _ = minigrad.autograd.set_detect_anomaly


def test_vjp_of_an_output_that_does_not_depend_on_the_inputs_is_zeros() -> None:
    import minigrad

    x = minigrad.tensor([1.0, 2.0, 3.0])
    _, g = minigrad.autograd.functional.vjp(lambda v: minigrad.ones(3), x, minigrad.ones(3))
    assert g.tolist() == [0.0, 0.0, 0.0]
    both = minigrad.autograd.functional.vjp(
        lambda v: (v * 2, minigrad.ones(3)), x, (minigrad.ones(3), minigrad.ones(3))
    )
    assert both[1].tolist() == [2.0, 2.0, 2.0]


def test_jacobian_strict_refuses_an_output_independent_of_an_input() -> None:
    import minigrad

    x = minigrad.tensor([1.0, 2.0])
    functional = minigrad.autograd.functional
    assert functional.jacobian(lambda v: v * v, x, strict=True).tolist() == [[2, 0], [0, 4]]
    with pytest.raises(RuntimeError, match="output 0 of func does not depend on input 1"):
        functional.jacobian(lambda a, b: a * 2, (x, x), strict=True)
    with pytest.raises(RuntimeError, match="does not depend on input 0"):
        functional.jacobian(lambda v: minigrad.ones(2), x, strict=True)
    assert functional.jacobian(lambda v: minigrad.ones(2), x).tolist() == [[0, 0], [0, 0]]
