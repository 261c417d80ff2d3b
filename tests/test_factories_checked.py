"""The factories' checks (zeros, full, rand, randint, tensor, as_tensor, *_like, x.new_*):
no silently wrong numbers, and every error names the factory, says what was expected and
what was received, with PyTorch's exception class.

Each case is written once for both libraries, `lambda t: t.full(...)`, called with
minigrad here and, where PyTorch is installed, with torch too (the `real_torch` tests),
so the classes and values are checked against PyTorch's own.
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

import minigrad
from minigrad import Variable


@pytest.fixture(autouse=True)
def numpy_warnings_are_errors():
    """No NumPy RuntimeWarning ("invalid value encountered in cast") or ComplexWarning may
    escape a factory: they are errors here."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        yield


def raised(call) -> BaseException:
    """The exception that call() raises (the test fails when it raises none)."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 (the caller checks which)
        return error
    raise AssertionError("expected an exception; the call returned")


def values(result) -> np.ndarray:
    """A minigrad Variable's or a torch tensor's values as a NumPy array."""
    if isinstance(result, Variable):
        return np.asarray(result.detach().cpu().numpy())
    return result.detach().cpu().numpy()


# --------------------------------------------------------------------------- 1. random floats

# Random floats asked for in a dtype that is not floating: NumPy would cast them (all zeros,
# all True); PyTorch raises NotImplementedError.
RANDOM_IN_A_NON_FLOAT_DTYPE = {
    "rand int64": ("rand", "int64", lambda t: t.rand(5, dtype=t.int64)),
    "randn bool": ("randn", "bool", lambda t: t.randn(4, dtype=t.bool)),
    "normal int64": ("normal", "int64", lambda t: t.normal(0.0, 1.0, (3,), dtype=t.int64)),
    "rand_like of ints": ("rand_like", "int64", lambda t: t.rand_like(t.arange(3))),
    "randn_like of ints": ("randn_like", "int64", lambda t: t.randn_like(t.arange(3))),
    "randn_like of bools": (
        "randn_like", "bool", lambda t: t.randn_like(t.ones(2, dtype=t.bool))
    ),
    "normal_ of ints": ("normal_", "int64", lambda t: t.arange(3).normal_()),
    "uniform_ of ints": ("uniform_", "int64", lambda t: t.arange(3).uniform_()),
}


@pytest.mark.parametrize("case", RANDOM_IN_A_NON_FLOAT_DTYPE, ids=str)
def test_random_floats_in_an_integer_or_bool_dtype_raise(case: str) -> None:
    name, dtype, call = RANDOM_IN_A_NON_FLOAT_DTYPE[case]
    error = raised(lambda: call(minigrad))
    assert type(error) is NotImplementedError
    message = str(error)
    assert message.startswith(f"{name}(): random floats in dtype {dtype}")
    assert "not implemented" in message and "minigrad.float32" in message


@pytest.mark.parametrize("case", RANDOM_IN_A_NON_FLOAT_DTYPE, ids=str)
def test_random_floats_in_a_non_float_dtype_raise_as_in_pytorch(case: str, real_torch) -> None:
    _, _, call = RANDOM_IN_A_NON_FLOAT_DTYPE[case]
    assert type(raised(lambda: call(real_torch))) is type(raised(lambda: call(minigrad)))


def test_random_floats_in_a_complex_dtype_raise_as_minigrad_draws_real_numbers() -> None:
    with pytest.raises(NotImplementedError, match=r"rand\(\): .*complex64.*real numbers only"):
        minigrad.rand(2, dtype=np.complex64)


def test_random_floats_in_floating_dtypes_still_work() -> None:
    ints = minigrad.arange(6)
    assert minigrad.rand_like(ints, dtype=minigrad.float32).dtype == np.float32
    assert minigrad.randn_like(ints, dtype=minigrad.float64).shape == (6,)
    assert minigrad.randn(3, dtype=minigrad.float16).dtype == np.float16
    drawn = values(minigrad.rand(1000, dtype=minigrad.float32))
    assert drawn.dtype == np.float32 and 0 <= drawn.min() and drawn.max() < 1
    assert minigrad.normal(0.0, 1.0, (3,), dtype=minigrad.float32).dtype == np.float32
    floats = minigrad.zeros(4, dtype=minigrad.float32)
    assert floats.uniform_(2.0, 3.0) is floats and values(floats).min() >= 2.0


# --------------------------------------------------------------------------- 2. overflow

# A value its dtype cannot hold: NumPy would wrap (300 -> 44), round to some int with a
# RuntimeWarning, or drop an imaginary part; PyTorch raises RuntimeError.
OVERFLOWS = {
    "randperm 300 uint8": ("randperm", lambda t: t.randperm(300, dtype=t.uint8)),
    "randperm 129 int8": ("randperm", lambda t: t.randperm(129, dtype=t.int8)),
    "randint to 300 uint8": ("randint", lambda t: t.randint(250, 300, (5,), dtype=t.uint8)),
    "randint from -1 uint8": ("randint", lambda t: t.randint(-1, 3, (5,), dtype=t.uint8)),
    "randint to 3 bool": ("randint", lambda t: t.randint(0, 3, (5,), dtype=t.bool)),
    "full 1e10 int32": ("full", lambda t: t.full((2,), 1e10, dtype=t.int32)),
    "full nan int32": ("full", lambda t: t.full((2,), float("nan"), dtype=t.int32)),
    "full inf int32": ("full", lambda t: t.full((2,), float("inf"), dtype=t.int32)),
    "full 300 uint8": ("full", lambda t: t.full((2,), 300, dtype=t.uint8)),
    "full -256 uint8": ("full", lambda t: t.full((2,), -256, dtype=t.uint8)),
    "full -1.0 uint8": ("full", lambda t: t.full((2,), -1.0, dtype=t.uint8)),
    "full 1e300 float32": ("full", lambda t: t.full((2,), 1e300, dtype=t.float32)),
    "full 70000 float16": ("full", lambda t: t.full((2,), 70000, dtype=t.float16)),
    "full 1j float32": ("full", lambda t: t.full((2,), 1j, dtype=t.float32)),
    "full_like 1e10 of int32": (
        "full_like", lambda t: t.full_like(t.zeros(2, dtype=t.int32), 1e10)
    ),
    "new_full 1e10 of int32": (
        "new_full", lambda t: t.zeros(2, dtype=t.int32).new_full((2,), 1e10)
    ),
    "tensor 300 uint8": ("tensor", lambda t: t.tensor([300], dtype=t.uint8)),
    "tensor nan int64": ("tensor", lambda t: t.tensor([float("nan")], dtype=t.int64)),
    "tensor -1.0 uint8": ("tensor", lambda t: t.tensor([-1.0], dtype=t.uint8)),
    "new_tensor 300 of uint8": (
        "new_tensor", lambda t: t.zeros(2, dtype=t.uint8).new_tensor([300])
    ),
    "as_tensor 300 uint8": ("as_tensor", lambda t: t.as_tensor([300], dtype=t.uint8)),
    "linspace to 300 uint8": ("linspace", lambda t: t.linspace(0, 300, 3, dtype=t.uint8)),
    "linspace to 1e5 float16": (
        "linspace", lambda t: t.linspace(0, 100000, 3, dtype=t.float16)
    ),
}


@pytest.mark.parametrize("case", OVERFLOWS, ids=str)
def test_a_value_the_dtype_cannot_hold_raises(case: str) -> None:
    name, call = OVERFLOWS[case]
    error = raised(lambda: call(minigrad))
    assert type(error) is RuntimeError
    message = str(error)
    assert message.startswith(f"{name}(): ")
    assert "without overflow" in message or "out of bounds" in message
    assert "holds" in message  # what the dtype holds, so what to change


@pytest.mark.parametrize("case", OVERFLOWS, ids=str)
def test_a_value_the_dtype_cannot_hold_raises_as_in_pytorch(case: str, real_torch) -> None:
    _, call = OVERFLOWS[case]
    assert type(raised(lambda: call(real_torch))) is RuntimeError


def test_overflow_messages_say_why_for_nan_and_imaginary_parts() -> None:
    with pytest.raises(RuntimeError, match="NaN and infinity fit no integer dtype"):
        minigrad.full((2,), float("nan"), dtype=minigrad.int32)
    with pytest.raises(RuntimeError, match="imaginary part would be lost"):
        minigrad.full((2,), 1j, dtype=minigrad.float32)
    with pytest.raises(RuntimeError, match=r"randint\(\): high - 1 = 299 is out of bounds"):
        minigrad.randint(250, 300, (5,), dtype=minigrad.uint8)
    with pytest.raises(RuntimeError, match=r"randint\(\): low = -1 is out of bounds"):
        minigrad.randint(-1, 3, (5,), dtype=minigrad.uint8)


def test_a_bool_permutation_is_not_implemented_as_in_pytorch() -> None:
    with pytest.raises(NotImplementedError, match=r"randperm\(\): .*bool"):
        minigrad.randperm(3, dtype=minigrad.bool)


def test_a_float16_permutation_beyond_its_exact_integers_raises() -> None:
    assert values(minigrad.randperm(2049, dtype=minigrad.float16)).dtype == np.float16
    with pytest.raises(RuntimeError, match=r"randperm\(\): n cannot be greater than 2049"):
        minigrad.randperm(3000, dtype=minigrad.float16)


def test_a_fill_value_beyond_every_integer_dtype_raises_overflow_error() -> None:
    with pytest.raises(OverflowError, match=r"full\(\): fill_value 1180591620717411303424"):
        minigrad.full((2,), 2**70)


# Values that do fit, and what each gives (PyTorch gives the same: checked below).
FITS = {
    "full -1 uint8": (lambda t: t.full((2,), -1, dtype=t.uint8), [255, 255]),
    "full -255 uint8": (lambda t: t.full((2,), -255, dtype=t.uint8), [1, 1]),
    "full 2.5 int32": (lambda t: t.full((2,), 2.5, dtype=t.int32), [2, 2]),
    "full 2147483647.9 int32": (
        lambda t: t.full((1,), 2147483647.9, dtype=t.int32), [2147483647]
    ),
    "full 5 bool": (lambda t: t.full((2,), 5, dtype=t.bool), [True, True]),
    "full 1+0j float32": (lambda t: t.full((2,), 1 + 0j, dtype=t.float32), [1.0, 1.0]),
    "full inf float32": (lambda t: t.full((1,), float("inf"), dtype=t.float32), [np.inf]),
    "full nan float16": (lambda t: t.full((1,), float("nan"), dtype=t.float16), [np.nan]),
    "tensor -1 uint8": (lambda t: t.tensor([-1], dtype=t.uint8), [255]),
    "tensor 1.9 -1.9 int64": (lambda t: t.tensor([1.9, -1.9], dtype=t.int64), [1, -1]),
    "eye int8": (lambda t: t.eye(2, dtype=t.int8), [[1, 0], [0, 1]]),
    "zeros int16": (lambda t: t.zeros(3, dtype=t.int16), [0, 0, 0]),
    "ones bool": (lambda t: t.ones(2, dtype=t.bool), [True, True]),
    "arange uint8": (lambda t: t.arange(253, 256, dtype=t.uint8), [253, 254, 255]),
    "linspace uint8": (lambda t: t.linspace(0, 255, 4, dtype=t.uint8), [0, 85, 170, 255]),
    "full_like 7 of int32": (lambda t: t.full_like(t.zeros(2, dtype=t.int32), 7.9), [7, 7]),
    "new_full of uint8": (lambda t: t.zeros(1, dtype=t.uint8).new_full((2,), 255), [255, 255]),
    "randperm 0 uint8": (lambda t: t.randperm(0, dtype=t.uint8), []),
}


@pytest.mark.parametrize("case", FITS, ids=str)
def test_values_that_fit_their_dtype_are_made_as_before(case: str) -> None:
    call, expected = FITS[case]
    got = values(call(minigrad))
    np.testing.assert_array_equal(got, np.array(expected, dtype=got.dtype))


@pytest.mark.parametrize("case", FITS, ids=str)
def test_values_that_fit_their_dtype_match_pytorch(case: str, real_torch) -> None:
    call, _ = FITS[case]
    mine, theirs = values(call(minigrad)), values(call(real_torch))
    assert mine.dtype == theirs.dtype
    np.testing.assert_array_equal(mine, theirs)


def test_permutations_and_random_integers_at_the_edge_of_the_dtype() -> None:
    permutation = values(minigrad.randperm(256, dtype=minigrad.uint8))
    assert permutation.dtype == np.uint8
    np.testing.assert_array_equal(np.sort(permutation), np.arange(256))
    drawn = values(minigrad.randint(0, 256, (200,), dtype=minigrad.uint8))
    assert drawn.dtype == np.uint8
    coins = values(minigrad.randint(0, 2, (50,), dtype=minigrad.bool))
    assert coins.dtype == np.bool_ and set(coins.tolist()) <= {False, True}
    assert values(minigrad.randint(-128, 0, (50,), dtype=minigrad.int8)).max() < 0


def test_empty_in_an_integer_dtype_casts_no_leftover_memory() -> None:
    """empty's memory may hold NaN: made in the dtype itself, nothing is cast (or warned)."""
    for _ in range(20):
        assert minigrad.empty(64, dtype=minigrad.int32).dtype == np.int32
        assert minigrad.empty_like(minigrad.zeros(8, dtype=minigrad.uint8)).dtype == np.uint8


def test_a_compiled_step_makes_factory_values_in_the_dtype_and_checks_them() -> None:
    """While minigrad.compile records, the factories' arrays are made by an operation
    (Made) that the replays run again: they cast, and check, the same way."""

    def step(x):
        made = minigrad.full((3,), 2, dtype=minigrad.float32) + minigrad.zeros(
            3, dtype=minigrad.float32
        )
        return (x + made + minigrad.arange(3, dtype=minigrad.float32)).sum()

    compiled = minigrad.compile(step)
    for _ in range(6):
        result = compiled(Variable(np.ones(3, dtype=np.float32)))
    assert result.item() == 12.0
    assert "Made" in compiled.tape()

    def overflowing(x):
        return x + minigrad.full((3,), 300, dtype=minigrad.uint8)

    with pytest.raises(RuntimeError, match=r"full\(\): value 300 cannot be converted"):
        minigrad.compile(overflowing)(Variable(np.ones(3)))


# --------------------------------------------------------------------------- 3. arity

# A dtype passed in place: Python's own message for the caller's arguments (not one that
# counts the decorator's keyword-only arguments), and the hint.
TOO_MANY_POSITIONAL = {
    "full": lambda: minigrad.full((2,), 3.0, minigrad.float32),
    "eye": lambda: minigrad.eye(2, 3, minigrad.float32),
    "arange": lambda: minigrad.arange(0, 5, 1, minigrad.float32),
    "logspace": lambda: minigrad.logspace(0, 1, 3, 2.0, minigrad.float32),
    "linspace": lambda: minigrad.linspace(0, 1, 3, minigrad.float32, "cpu"),
    "randint": lambda: minigrad.randint(0, 3, (2,), minigrad.int64),
    "randperm": lambda: minigrad.randperm(3, minigrad.int64),
    "tensor": lambda: minigrad.tensor([1], minigrad.int64),
    "as_tensor": lambda: minigrad.as_tensor([1], minigrad.float32),
    "zeros_like": lambda: minigrad.zeros_like(minigrad.ones(2), minigrad.int64),
    "full_like": lambda: minigrad.full_like(minigrad.ones(2), 1, minigrad.int64),
    "rand_like": lambda: minigrad.rand_like(minigrad.ones(2), minigrad.float32),
}


@pytest.mark.parametrize("name", TOO_MANY_POSITIONAL)
def test_a_dtype_passed_in_place_gets_pythons_message_and_a_hint(name: str) -> None:
    with pytest.raises(TypeError) as caught:
        TOO_MANY_POSITIONAL[name]()
    message = str(caught.value)
    # What Python says for the same call to the undecorated factory, word for word.
    with pytest.raises(TypeError) as python:
        _call_undecorated(name, TOO_MANY_POSITIONAL[name])
    assert message.startswith(str(python.value))
    assert "keyword-only" not in message
    assert "by keyword" in message and "dtype=" in message


def _call_undecorated(name: str, call) -> None:
    """Run `call` with the factory minigrad.<name> as it is before @factory wraps it."""
    decorated = getattr(minigrad, name)
    setattr(minigrad, name, decorated.__wrapped__)
    try:
        call()
    finally:
        setattr(minigrad, name, decorated)


def test_a_dtype_passed_in_place_raises_type_error_in_pytorch_too(real_torch) -> None:
    with pytest.raises(TypeError):
        real_torch.full((2,), 3.0, real_torch.float32)
    with pytest.raises(TypeError):
        real_torch.as_tensor([1], real_torch.float32)


def test_as_tensor_takes_dtype_and_device_by_keyword_only_as_pytorch() -> None:
    parameters = inspect.signature(minigrad.as_tensor).parameters
    assert [p.kind for p in parameters.values()][1:] == [inspect.Parameter.KEYWORD_ONLY] * 2


def test_the_methods_and_misspelt_keywords_keep_their_messages() -> None:
    with pytest.raises(TypeError, match="too many positional arguments") as caught:
        minigrad.ones(2).new_full((2,), 1, minigrad.int64)
    assert "keyword-only arguments)" not in str(caught.value)
    with pytest.raises(TypeError, match=re.escape("zeros() got an unexpected keyword argument")):
        minigrad.zeros(2, dtyp=minigrad.int64)
    with pytest.raises(TypeError, match=re.escape("as_tensor() got an unexpected keyword")):
        minigrad.as_tensor([1.0], requires_grad=True)


# --------------------------------------------------------------------------- 4. requires_grad

NUMPY_TRUE_FACTORIES = {
    "zeros": lambda rg: minigrad.zeros(2, requires_grad=rg),
    "full": lambda rg: minigrad.full((2,), 1.5, requires_grad=rg),
    "rand": lambda rg: minigrad.rand(2, requires_grad=rg),
    "arange": lambda rg: minigrad.arange(3, dtype=minigrad.float64, requires_grad=rg),
    "tensor": lambda rg: minigrad.tensor([1.0, 2.0], requires_grad=rg),
    "zeros_like": lambda rg: minigrad.zeros_like(minigrad.ones(2), requires_grad=rg),
    "new_zeros": lambda rg: minigrad.ones(2).new_zeros(3, requires_grad=rg),
    "new_tensor": lambda rg: minigrad.ones(2).new_tensor([1.0], requires_grad=rg),
}


@pytest.mark.parametrize("name", NUMPY_TRUE_FACTORIES)
def test_requires_grad_may_be_numpys_bool(name: str) -> None:
    made = NUMPY_TRUE_FACTORIES[name](np.bool_(True))
    assert made.requires_grad is True and made.is_leaf
    assert NUMPY_TRUE_FACTORIES[name](np.bool_(False)).requires_grad is False


def test_requires_grad_of_another_kind_names_the_factory() -> None:
    with pytest.raises(TypeError, match=r"^zeros\(\): requires_grad must be True or False"):
        minigrad.zeros(2, requires_grad=1)


# --------------------------------------------------------------------------- 5, 6. dtype, device


@pytest.mark.parametrize(
    ("dtype", "shown"),
    [(str, "str"), (object, "object"), ("U3", "<U3"), ("S3", "|S3"), ("datetime64", "datetime64")],
    ids=["str", "object", "U3", "S3", "datetime64"],
)
@pytest.mark.parametrize(
    "name", ["zeros", "full", "rand", "arange", "tensor", "zeros_like", "new_zeros"]
)
def test_a_non_numeric_dtype_is_refused_up_front(dtype, shown: str, name: str) -> None:
    calls = {
        "zeros": lambda: minigrad.zeros(2, dtype=dtype),
        "full": lambda: minigrad.full((2,), 1, dtype=dtype),
        "rand": lambda: minigrad.rand(2, dtype=dtype),
        "arange": lambda: minigrad.arange(3, dtype=dtype),
        "tensor": lambda: minigrad.tensor([1, 2], dtype=dtype),
        "zeros_like": lambda: minigrad.zeros_like(minigrad.ones(2), dtype=dtype),
        "new_zeros": lambda: minigrad.ones(2).new_zeros(2, dtype=dtype),
    }
    with pytest.raises(TypeError) as caught:
        calls[name]()
    message = str(caught.value)
    assert message.startswith(f"{name}(): dtype {shown}")
    assert "is not a numeric dtype" in message and "minigrad.float32" in message


def test_dtype_errors_name_the_factory() -> None:
    with pytest.raises(TypeError, match=r"^zeros\(\): dtype 'nope' is not a data type"):
        minigrad.zeros(2, dtype="nope")
    with pytest.raises(TypeError, match=r"^full\(\): dtype must be a data type.*Variable"):
        minigrad.full((2,), 1.0, dtype=minigrad.ones(1))


def test_device_errors_name_the_factory_and_what_was_given() -> None:
    with pytest.raises(ValueError, match=r"^ones\(\): unknown device 'nope'"):
        minigrad.ones(2, device="nope")
    with pytest.raises(TypeError, match=r"^rand\(\): device must be 'cpu', 'cuda' .*got int 3"):
        minigrad.rand(2, device=3)

    class OtherLibrarysDevice:  # torch.device's shape: a .type that names the device
        type = "cpu"

    with pytest.raises(TypeError) as caught:
        minigrad.zeros(2, device=OtherLibrarysDevice())
    assert "OtherLibrarysDevice" in str(caught.value)
    assert "Pass its name instead: device='cpu'" in str(caught.value)


def test_a_torch_device_is_named_with_what_to_pass_instead(real_torch) -> None:
    with pytest.raises(TypeError) as caught:
        minigrad.zeros(2, device=real_torch.device("cpu"))
    message = str(caught.value)
    assert message.startswith("zeros(): device must be")
    assert "torch.device" in message and "device='cpu'" in message


# --------------------------------------------------------------------------- 7. as_tensor


@pytest.mark.parametrize(
    "array", [np.array(["a", "b"]), np.array([1, None], dtype=object)], ids=["str", "object"]
)
def test_as_tensor_refuses_arrays_that_hold_no_numbers(array: np.ndarray) -> None:
    with pytest.raises(TypeError, match=r"^as_tensor\(\): a Variable holds numbers"):
        minigrad.as_tensor(array)


def test_as_tensor_moves_a_variable_to_the_device_asked_for() -> None:
    x = minigrad.ones(2)
    assert minigrad.as_tensor(x) is x
    assert minigrad.as_tensor(x, device="cpu") is x
    assert minigrad.as_tensor(x, dtype=x.dtype) is x
    moved = minigrad.as_tensor(x, device="cuda")  # Numba's simulator in the tests
    assert moved.device == "cuda"
    np.testing.assert_array_equal(values(moved), [1.0, 1.0])
    assert minigrad.as_tensor(moved, device="cpu").device == "cpu"
    both = minigrad.as_tensor(x, dtype=minigrad.float32, device="cuda")
    assert both.device == "cuda" and both.dtype == np.float32


def test_as_tensor_still_shares_a_numpy_array_of_the_dtype() -> None:
    array = np.arange(3.0)
    assert minigrad.as_tensor(array)._data is array
    assert minigrad.as_tensor(array, dtype=minigrad.float32)._data is not array


# --------------------------------------------------------------------------- 8. new_tensor


def test_new_tensor_copies_a_cuda_variable() -> None:
    on_cuda = minigrad.arange(3.0, dtype=minigrad.float64, device="cuda")
    copied = minigrad.zeros(2).new_tensor(on_cuda)
    assert copied.device == "cpu"
    np.testing.assert_array_equal(values(copied), [0.0, 1.0, 2.0])
    assert minigrad.zeros(2, device="cuda").new_tensor(on_cuda).device == "cuda"
    assert minigrad.zeros(2).new(on_cuda).shape == (3,)


# --------------------------------------------------------------------------- 9. text


def test_text_variables_may_require_grad_but_have_no_dtype_and_stay_on_the_cpu() -> None:
    # Text Variables take part in textual autodiff, so requires_grad=True is theirs to take.
    assert Variable("abc", requires_grad=True).requires_grad
    text = minigrad.tensor("abc", requires_grad=True)
    assert text.is_text and text.requires_grad
    assert minigrad.tensor("abc", device="cpu").is_text
    with pytest.raises(TypeError, match=r"^tensor\(\): text has no numeric dtype"):
        minigrad.tensor("abc", dtype=minigrad.float32)
    with pytest.raises(TypeError, match=r"^tensor\(\): text Variables live on the cpu"):
        minigrad.tensor("abc", device="cuda")
    with pytest.raises(TypeError, match=r"^as_tensor\(\): text has no numeric dtype"):
        minigrad.as_tensor(Variable("abc"), dtype=minigrad.float32)


# --------------------------------------------------------------------------- 10. what was given


def test_tensor_errors_show_the_data_as_given() -> None:
    with pytest.raises(TypeError, match=r"^tensor\(\): .*got NoneType None\.") as caught:
        minigrad.tensor(None)
    assert "array(" not in str(caught.value)
    with pytest.raises(TypeError, match=re.escape("got list [1, None]")):
        minigrad.tensor([1, None])
    with pytest.raises(ValueError, match=r"^tensor\(\): the int 1180591620717411303424 ") as big:
        minigrad.tensor(2**70)
    assert "array(" not in str(big.value) and "float" in str(big.value)
    with pytest.raises(ValueError, match=re.escape("in list [1180591620717411303424]")):
        minigrad.tensor([2**70])


def test_an_int_beyond_int64_raises_value_error_as_in_pytorch(real_torch) -> None:
    with pytest.raises(ValueError):
        real_torch.tensor(2**70)


# --------------------------------------------------------------------------- 11. x.new


def test_x_new_follows_pytorch() -> None:
    x = minigrad.ones(2, dtype=minigrad.float32)
    empty = x.new()
    assert empty.shape == (0,) and empty.dtype == np.float32
    assert x.new(2, device="cpu").shape == (2,)
    assert x.new(2, 3).shape == (2, 3)
    np.testing.assert_array_equal(values(x.new([1, 2])), [1.0, 2.0])
    np.testing.assert_array_equal(values(x.new((2, 3))), [2.0, 3.0])  # a tuple is data
    assert x.new([1, 2]).dtype == np.float32
    for number, kind in [(2.5, "float"), (True, "bool"), (None, "NoneType")]:
        expected = f"new(): data must be a sequence (got {kind})"
        with pytest.raises(TypeError, match=re.escape(expected)):
            x.new(number)
    with pytest.raises(ValueError, match=r"^new\(\): unknown device 'tpu'"):
        x.new(2, device="tpu")


def test_x_new_matches_pytorch(real_torch) -> None:
    for module in (minigrad, real_torch):
        x = module.ones(2)
        assert tuple(x.new().shape) == (0,)
        assert tuple(x.new(2, device="cpu").shape) == (2,)
        expected = "new(): data must be a sequence (got float)"
        with pytest.raises(TypeError, match=re.escape(expected)):
            x.new(2.5)


# --------------------------------------------------------------------------- 12. arange

BOUNDS_AGAINST_THE_STEP = {
    "arange(5, 0)": lambda t: t.arange(5, 0),
    "arange(0, 5, -1)": lambda t: t.arange(0, 5, -1),
    "arange(-3)": lambda t: t.arange(-3),
    "arange(0.0, -1.5, 0.5)": lambda t: t.arange(0.0, -1.5, 0.5),
}


@pytest.mark.parametrize("case", BOUNDS_AGAINST_THE_STEP)
def test_arange_with_bounds_against_the_step_raises(case: str) -> None:
    with pytest.raises(
        RuntimeError, match=r"^arange\(\): upper bound and lower bound inconsistent with step"
    ):
        BOUNDS_AGAINST_THE_STEP[case](minigrad)


@pytest.mark.parametrize("case", BOUNDS_AGAINST_THE_STEP)
def test_arange_with_bounds_against_the_step_raises_in_pytorch(case: str, real_torch) -> None:
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        BOUNDS_AGAINST_THE_STEP[case](real_torch)


def test_arange_that_counts_down_or_is_empty_still_works() -> None:
    np.testing.assert_array_equal(values(minigrad.arange(5, 0, -1)), [5, 4, 3, 2, 1])
    np.testing.assert_array_equal(values(minigrad.arange(5.0, 0.0, -1.5)), [5.0, 3.5, 2.0, 0.5])
    assert minigrad.arange(5, 5).shape == (0,)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        minigrad.arange(0, 5, 0)


# --------------------------------------------------------------------------- 13. no size


def test_normal_of_two_numbers_needs_a_size_as_in_pytorch() -> None:
    with pytest.raises(TypeError, match=r"^normal\(\): with a number for both mean and std"):
        minigrad.normal(0.0, 1.0)
    assert minigrad.normal(0.0, 1.0, ()).shape == ()
    assert minigrad.normal(0.0, 1.0, size=(3,)).shape == (3,)
    assert minigrad.normal(minigrad.zeros(3), 1.0).shape == (3,)  # the Variable's shape
    assert minigrad.normal(0.0, minigrad.ones(2, 2)).shape == (2, 2)


def test_normal_of_two_numbers_without_a_size_is_a_type_error_in_pytorch(real_torch) -> None:
    with pytest.raises(TypeError):
        real_torch.normal(0.0, 1.0)
    assert tuple(real_torch.normal(real_torch.zeros(3), 1.0).shape) == (3,)


def test_sizeless_zeros_is_a_type_error_and_an_empty_shape_is_zero_dimensional() -> None:
    """As PyTorch's: zeros() (ones(), empty(), rand(), x.new_zeros(), ...) raises a
    TypeError that wants a size (issue 35); zeros(()) and zeros([]) are 0-d."""
    for make in (minigrad.zeros, minigrad.ones, minigrad.rand, minigrad.ones(2).new_zeros):
        with pytest.raises(TypeError, match='missing 1 required positional arguments: "size"'):
            make()
    assert minigrad.zeros(()).shape == () and minigrad.zeros([]).shape == ()


def test_one_step_of_linspace_or_logspace_is_start_whatever_the_end() -> None:
    """PyTorch's linspace(1, nan, 1) is [1.] (NumPy's is [nan]); found by benchmarks/
    fuzz_torch.py."""
    assert minigrad.linspace(1, float("nan"), 1).tolist() == [1.0]
    assert minigrad.logspace(1, float("nan"), 1).tolist() == [10.0]
    assert minigrad.linspace(2, 5, 1).tolist() == [2.0]
