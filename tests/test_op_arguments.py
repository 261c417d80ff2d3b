"""The arguments of the op table's functions and methods, and of nn.functional
(minigrad/ops/tooling/arguments.py): PyTorch's `input=`/`other=` keywords, `out=`, and the
TypeError naming a bad argument. Compared with PyTorch where it is installed."""

import linecache
import warnings
from pathlib import Path

import numpy as np
import pytest

import minigrad
import minigrad.nn.functional as F
from minigrad.ops.table import functions, methods

# What a function trips over inside, which no user should see.
INTERNAL = (AttributeError, KeyError, AssertionError, RecursionError, NameError)
PACKAGE = str(Path(minigrad.__file__).parent)


def raised_by_minigrad(error: BaseException) -> bool:
    """Whether the innermost frame of `error` is a `raise` statement in minigrad's code:
    a message written for the user (IndexError "Dimension out of range", as PyTorch's),
    not something NumPy or Python raised underneath."""
    traceback = error.__traceback__
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    filename = traceback.tb_frame.f_code.co_filename
    line = linecache.getline(filename, traceback.tb_lineno).strip()
    return filename.startswith(PACKAGE) and line.startswith("raise ")


def assert_clean(error: BaseException, *context) -> None:
    assert not isinstance(error, INTERNAL), (*context, error)
    assert raised_by_minigrad(error), (*context, error)
    assert len(str(error)) >= 20, (*context, error)


def matrix(rows=2, cols=2):
    return minigrad.tensor(np.arange(rows * cols, dtype=np.float64).reshape(rows, cols))


# ------------------------------------------------------------------ PyTorch's keywords
def test_input_and_other_keywords_reach_the_functions_own_names() -> None:
    a, b = matrix(2, 3), matrix(3, 2)
    np.testing.assert_array_equal(
        minigrad.matmul(input=a, other=b).numpy(), a.numpy() @ b.numpy()
    )
    np.testing.assert_array_equal(minigrad.add(input=a, other=a, alpha=2).numpy(), 3 * a.numpy())
    np.testing.assert_array_equal(a.add(other=a).numpy(), 2 * a.numpy())
    np.testing.assert_array_equal(minigrad.exp(input=a).numpy(), np.exp(a.numpy()))
    weight = minigrad.ones(4, 3)
    assert F.linear(input=a, weight=weight).shape == (2, 4)
    # A keyword naming the function's *args: flip(x, dims=[0]), x.permute(dims=(1, 0)).
    np.testing.assert_array_equal(minigrad.flip(a, dims=[0]).numpy(), a.numpy()[::-1])
    np.testing.assert_array_equal(a.permute(dims=(1, 0)).numpy(), a.numpy().T)
    np.testing.assert_array_equal(a.mm(mat2=b).numpy(), a.numpy() @ b.numpy())


# ------------------------------------------------------------------------------- out=
def test_out_writes_into_the_given_variable_and_returns_it() -> None:
    x, y = matrix(), minigrad.ones(2, 2)
    result = minigrad.empty(2, 2)
    returned = minigrad.add(x, y, out=result)
    assert returned is result
    np.testing.assert_array_equal(result.numpy(), x.numpy() + 1)
    c = minigrad.empty(2, 2)
    minigrad.matmul(x, y, out=c)
    np.testing.assert_array_equal(c.numpy(), x.numpy() @ y.numpy())


def test_out_of_another_shape_is_resized_with_a_warning_when_it_held_values() -> None:
    x = matrix()
    empty = minigrad.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        minigrad.exp(x, out=empty)
    assert empty.shape == (2, 2)
    full = minigrad.zeros(3)
    with pytest.warns(UserWarning, match=r"minigrad.exp\(\): out= had shape \(3,\)"):
        minigrad.exp(x, out=full)
    np.testing.assert_allclose(full.numpy(), np.exp(x.numpy()))


def test_out_refuses_autograd_a_narrowing_dtype_and_a_non_variable() -> None:
    w = minigrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic diff"):
        minigrad.mul(w, 2, out=minigrad.empty(2))
    with minigrad.no_grad():
        minigrad.mul(w, 2, out=(out := minigrad.empty(2)))
    assert out.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="float64 can't be cast to the desired output type"):
        minigrad.add(matrix(), 1.0, out=minigrad.zeros(2, 2, dtype=minigrad.long))
    with pytest.raises(TypeError, match="argument 'out' must be a numeric Variable"):
        minigrad.add(matrix(), 1.0, out=np.zeros((2, 2)))


def test_out_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for library in (minigrad, torch):
        x = library.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=library.float64)
        result = library.zeros(2, 2, dtype=library.float64)
        assert library.add(x, x, out=result) is result
        library.matmul(x, x, out=result)
        np.testing.assert_array_equal(np.asarray(result.tolist()), [[7, 10], [15, 22]])
        w = library.ones(2, dtype=library.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            library.mul(w, 2, out=library.zeros(2, dtype=library.float64))
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            library.add(x, 1.5, out=library.zeros(2, 2, dtype=library.long))


# ----------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: minigrad.isnan((1, 2)), r"minigrad.isnan\(\): argument 'x' \(position 1\) must be a Variable, but got tuple \(1, 2\)"),  # noqa: E501
        (lambda: matrix().view_as(True), r"Variable.view_as\(\): argument 'other' \(position 1\) must be a Variable, but got bool True"),  # noqa: E501
        (lambda: matrix().type_as("s"), r"Variable.type_as\(\): argument 'other' .* got str 's'"),
        (lambda: minigrad.sum(matrix(), dim="a"), r"argument 'dim' .* an int, a tuple of ints or None"),  # noqa: E501
        (lambda: minigrad.mm(matrix(), 1.5), r"minigrad.mm\(\): argument 'mat2' .* must be a Variable \(not a number\)"),  # noqa: E501
        (lambda: minigrad.exp(minigrad.Variable("t")), r"got a text Variable. Text Variables go to"),  # noqa: E501
        (lambda: minigrad.exp(matrix(), foo=1), r"minigrad.exp\(\): got an unexpected keyword argument 'foo'. It takes minigrad.exp\(x\)"),  # noqa: E501
        (lambda: F.linear(matrix(), {}), r"nn.functional.linear\(\): argument 'weight' \(position 2\) must be a Variable, but got dict"),  # noqa: E501
        (lambda: F.cross_entropy(matrix(), "a"), r"argument 'target' .* got str 'a'"),
        (lambda: F.dropout(matrix(), p="a"), r"argument 'p' \(position 2\) must be a number"),
        (lambda: F.linear(matrix(), matrix(), out=matrix()), r"got an unexpected keyword argument 'out'"),  # noqa: E501
        (lambda: minigrad.einsum("ij->j", 3), r"expected a Variable as operand 1, but got int"),
        (lambda: minigrad.cat([minigrad.Variable("a")]), r"but got a list holding text Variables. Text"),  # noqa: E501
    ],
)
def test_a_bad_argument_gets_a_type_error_naming_function_argument_and_kinds(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_einsum_takes_operands_as_arguments_or_as_one_list() -> None:
    a = matrix(2, 3)
    assert minigrad.einsum("ij,jk->ik", a, a.T).shape == (2, 2)
    assert minigrad.einsum("ij,jk->ik", [a, a.T]).shape == (2, 2)
    with pytest.raises(ValueError, match="the letter 'j' has size 3 in operand 0"):
        minigrad.einsum("ij,jk->ik", a, a)  # a size problem is named as one


def test_a_deliberate_message_with_arguments_of_the_right_kinds_passes_through() -> None:
    with pytest.raises(RuntimeError, match="the sizes must multiply to 4"):
        matrix().reshape(3)
    with pytest.raises(TypeError, match="text Variables live on the cpu"):
        minigrad.Variable("t").to("cuda")


BAD_VALUES = [object(), (1, 2), "s", None, minigrad.Variable("text"), {"a": 1}, 1.5]


def _outcome(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test sorts them
        return error
    return None


@pytest.mark.parametrize("name", sorted(functions()))
def test_every_function_fails_cleanly_on_values_of_the_wrong_kind(name) -> None:
    """Each top-level function, given a bad value first or second: either it works
    (minigrad, like NumPy, takes lists and tuples as operands) or it raises an error of
    minigrad's own with a message of at least 20 characters; never an internal one."""
    function = functions()[name]
    for bad in BAD_VALUES:
        for args in ((bad,), (matrix(), bad)):
            error = _outcome(lambda: function(*args))  # noqa: B023
            if error is None:
                continue
            assert_clean(error, name, args)


@pytest.mark.parametrize("name", sorted(methods()))
def test_every_method_fails_cleanly_on_values_of_the_wrong_kind(name) -> None:
    method = methods()[name]
    for bad in BAD_VALUES:
        error = _outcome(lambda: method(matrix(), bad))  # noqa: B023
        if error is not None:
            assert_clean(error, name, bad)


def test_where_pytorch_says_type_error_so_does_minigrad() -> None:
    """For each top-level function PyTorch also has: where both refuse a value of the
    wrong kind, and PyTorch's refusal is a TypeError, minigrad's is one too. (Where
    minigrad takes a list or tuple as an operand, as NumPy does, and then refuses its
    shape, that is a RuntimeError of its own: lists are skipped.)"""
    torch = pytest.importorskip("torch")
    mismatches = []
    for name, function in sorted(functions().items()):
        torch_function = getattr(torch, name, None)
        if torch_function is None:
            continue
        for bad in (object(), "s", None, {"a": 1}, 1.5):
            ours = _outcome(lambda: function(matrix(), bad))  # noqa: B023
            theirs = _outcome(
                lambda: torch_function(torch.tensor(matrix().numpy()), bad)  # noqa: B023
            )
            if isinstance(theirs, TypeError) and ours is not None:
                if not isinstance(ours, TypeError):
                    mismatches.append((name, bad, type(ours).__name__, str(ours)[:80]))
    assert not mismatches


# ------------------------------------------- what the fuzz (test_fuzz_public_surface) found
@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: -minigrad.tensor([True, False]), RuntimeError, "on a bool Variable is not"),
        (lambda: minigrad.tensor([True]) - minigrad.tensor([True]), NotImplementedError,
         "Subtraction.*bool.*logical_xor"),
        (lambda: minigrad.div(matrix(), np.array(["a", "b"])), TypeError, "'other' .* dtype='<U1'"),
        (lambda: minigrad.tensor(2.0) / [[1, 2], [3]], TypeError, "ragged list"),
        (lambda: minigrad.bmm([[1, 2], [3]], matrix()), TypeError, "argument 'x'"),
        (lambda: minigrad.isclose(minigrad.arange(6), matrix()), RuntimeError, "broadcast"),
        (lambda: minigrad.Variable("hello").isnan(), TypeError, "isnan needs a numeric"),
        (lambda: minigrad.split(matrix(), matrix()), TypeError, "split_size_or_sections"),
        (lambda: minigrad.tensor([True]).abs(), NotImplementedError, "abs of a bool"),
        (lambda: F.check_reduction(np.arange(6)), ValueError, "reduction must be one of"),
        (lambda: F.layer_norm(matrix(), np.array(1.5)), TypeError, "normalized_shape"),
        (lambda: minigrad.ones(2).expand_as(1j), TypeError, "must be a Variable"),
        (lambda: minigrad.tensor(1.0).size(0), IndexError, "0-d Variable has no dimensions"),
        (lambda: minigrad.nn.Parameter(matrix()).add_("cpu"), TypeError, r"Variable.add_\(\)"),
        (lambda: minigrad.nn.Parameter(matrix()).copy_(None), TypeError, "copy_ and fill_"),
        (lambda: minigrad.masked_select(minigrad.ones(3), np.ones(2, bool)), RuntimeError, "mask"),
    ],
)
def test_fuzz_findings_get_errors_of_their_own(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


def test_fuzz_findings_that_now_compute_as_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for library in (minigrad, torch):
        mask = library.tensor([True, False])
        assert mask.sign().tolist() == [True, False]
        assert library.erf(mask).tolist()[1] == 0.0
        assert library.zeros(0).softmax(-1).shape == (0,)
        assert library.logsumexp(library.zeros(2, 0), 1).tolist() == [-np.inf, -np.inf]
        assert library.nn.functional.pad(library.tensor(2.0), ()).item() == 2.0


def test_a_linear_layer_given_no_numbers_is_a_type_error_as_in_pytorch() -> None:
    layer = minigrad.nn.Linear(3, 2)
    with pytest.raises(TypeError, match=r"Linear expects a numeric Variable .* got str"):
        layer("hello")
    with pytest.raises(TypeError, match="got a text Variable"):
        layer(minigrad.Variable("hello"))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 3\)"):
        layer(minigrad.ones(2, 4))
