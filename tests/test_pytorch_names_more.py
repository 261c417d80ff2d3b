"""More of PyTorch's names (issue 35): diagonal and diag_embed, the legacy tensor types
(torch.FloatTensor, ...), `with torch.device(...)`, and the storage questions (data_ptr,
storage_offset, untyped_storage, storage).

Values are compared with real PyTorch where it is installed; every test also asserts
minigrad's own answer, so the module means something without it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck

CUBE = np.arange(24.0).reshape(2, 3, 4)

# (offset, dim1, dim2): main, above, below, negative dims, past the end (empty).
DIAGONAL_CASES = [(0, 0, 1), (1, 0, 2), (-1, -1, 0), (2, 2, 1), (5, 0, 1), (-7, 0, 1)]


# ----------------------------------------------------------------------------- diagonal


def test_diagonal_moves_the_diagonal_to_the_last_dim() -> None:
    x = minigrad.tensor(CUBE)
    assert x.diagonal().shape == (4, 2)
    np.testing.assert_array_equal(x.diagonal(1, 1, 2).numpy(), [[1, 6, 11], [13, 18, 23]])
    assert x.diagonal(5).shape == (4, 0)  # past the end: empty, as PyTorch
    assert minigrad.diagonal(x, offset=-1, dim1=-1, dim2=0).shape == (3, 2)


@pytest.mark.parametrize("offset, dim1, dim2", DIAGONAL_CASES)
def test_diagonal_matches_pytorch(real_torch, offset: int, dim1: int, dim2: int) -> None:
    ours = minigrad.tensor(CUBE).diagonal(offset, dim1, dim2).numpy()
    theirs = real_torch.tensor(CUBE).diagonal(offset, dim1, dim2).numpy()
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=2, max_size=4),
    offset=st.integers(-5, 5),
    data=st.data(),
)
def test_diagonal_is_numpys_diagonal_for_any_shape(shape: list, offset: int, data) -> None:
    ndim = len(shape)
    dim1 = data.draw(st.integers(-ndim, ndim - 1))
    dim2 = data.draw(st.integers(-ndim, ndim - 1).filter(lambda d: d % ndim != dim1 % ndim))
    values = np.arange(float(np.prod(shape))).reshape(shape)
    ours = minigrad.tensor(values).diagonal(offset, dim1, dim2).numpy()
    np.testing.assert_array_equal(ours, np.diagonal(values, offset, dim1, dim2))


@pytest.mark.parametrize("offset, dim1, dim2", DIAGONAL_CASES)
def test_diagonal_gradient(offset: int, dim1: int, dim2: int) -> None:
    x = minigrad.tensor(np.random.default_rng(0).normal(size=(2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda v: v.diagonal(offset, dim1, dim2), (x,))


def test_diagonal_second_derivative() -> None:
    x = minigrad.tensor(np.random.default_rng(1).normal(size=(3, 3)), requires_grad=True)
    (grad,) = minigrad.autograd.grad((x.diagonal() ** 3).sum(), x, create_graph=True)
    (second,) = minigrad.autograd.grad(grad.sum(), x)
    np.testing.assert_allclose(second.numpy(), np.diag(6 * np.diag(x.detach().numpy())))


def test_diagonal_is_a_view_written_through() -> None:
    x = minigrad.zeros(3, 4)
    x.diagonal(1).fill_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3, 4, 1))
    x[0, 1] = 7.0
    assert x.diagonal(1)[0].item() == 7.0
    view = x.diagonal()
    version = view._version
    x.add_(1.0)
    assert view._version > version  # the view shares its base's version counter


def test_diagonal_writes_match_pytorch(real_torch) -> None:
    ours, theirs = minigrad.zeros(2, 3, 3), real_torch.zeros(2, 3, 3, dtype=real_torch.float64)
    ours.diagonal(0, 1, 2).add_(minigrad.tensor([1.0, 2.0, 3.0]))
    theirs.diagonal(0, 1, 2).add_(real_torch.tensor([1.0, 2.0, 3.0], dtype=real_torch.float64))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda x: x.diagonal(0, 0, 0), RuntimeError, "diagonal dimensions cannot be identical"),
        (lambda x: x.diagonal(0, 0, 3), IndexError, "Dimension out of range"),
        (lambda x: x.diagonal(dim1=-4), IndexError, "[-3, 2], but got -4"),
        (lambda x: x.diagonal(1.5), TypeError, "offset"),
        (lambda x: minigrad.ones(3).diagonal(), IndexError, "[-1, 0], but got 1"),
        (lambda x: minigrad.tensor(1.0).diagonal(), IndexError, "[-1, 0], but got 1"),
    ],
)
def test_diagonal_errors_are_pytorchs(call, error: type, words: str) -> None:
    with pytest.raises(error, match=None) as caught:
        call(minigrad.tensor(CUBE))
    assert words in str(caught.value)


def test_diagonal_errors_match_pytorch_classes(real_torch) -> None:
    for call in (lambda t, x: x.diagonal(0, 1, 1), lambda t, x: x.diagonal(0, 0, 5)):
        with pytest.raises(Exception) as theirs:
            call(real_torch, real_torch.tensor(CUBE))
        with pytest.raises(type(theirs.value)):
            call(minigrad, minigrad.tensor(CUBE))


# ----------------------------------------------------------------------------- diag_embed

EMBED_CASES = [(0, -2, -1), (1, -2, -1), (-2, 0, 2), (1, 2, 0), (0, 1, 0)]


def test_diag_embed_places_each_vector_on_a_diagonal() -> None:
    v = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = minigrad.diag_embed(v)
    assert out.shape == (2, 2, 2)
    np.testing.assert_array_equal(out.numpy()[1], [[3.0, 0.0], [0.0, 4.0]])
    assert minigrad.diag_embed(v, 1).shape == (2, 3, 3)
    assert v.diag_embed(-2, 0, 2).shape == (4, 2, 4)


@pytest.mark.parametrize("offset, dim1, dim2", EMBED_CASES)
def test_diag_embed_matches_pytorch(real_torch, offset: int, dim1: int, dim2: int) -> None:
    values = np.arange(6.0).reshape(2, 3)
    ours = minigrad.diag_embed(minigrad.tensor(values), offset, dim1, dim2).numpy()
    theirs = real_torch.diag_embed(real_torch.tensor(values), offset, dim1, dim2).numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("offset, dim1, dim2", EMBED_CASES)
def test_diag_embed_gradient(offset: int, dim1: int, dim2: int) -> None:
    v = minigrad.tensor(np.random.default_rng(2).normal(size=(2, 3)), requires_grad=True)
    assert gradcheck(lambda t: minigrad.diag_embed(t, offset, dim1, dim2), (v,))


def test_diag_embed_undoes_diagonal() -> None:
    v = minigrad.tensor(np.random.default_rng(3).normal(size=(4, 3)))
    back = minigrad.diag_embed(v, -1, 0, 2).diagonal(-1, 0, 2)
    np.testing.assert_array_equal(back.numpy(), v.numpy())


def test_diag_embed_errors_are_pytorchs() -> None:
    with pytest.raises(RuntimeError, match="cannot be identical"):
        minigrad.diag_embed(minigrad.ones(2), 0, 0, 0)
    with pytest.raises(IndexError, match=r"\[-2, 1\], but got 2"):
        minigrad.diag_embed(minigrad.ones(2), 0, 0, 2)
    with pytest.raises(IndexError, match=r"\[-1, 0\], but got -2"):
        minigrad.diag_embed(minigrad.tensor(1.0))


def test_diagonal_and_diag_embed_replay_in_compile() -> None:
    weight = minigrad.tensor(np.arange(12.0).reshape(3, 4) / 10, requires_grad=True)

    def step(x: minigrad.Variable) -> minigrad.Variable:
        weight.grad = None
        loss = (minigrad.diag_embed(x.diagonal(1)) * weight.diagonal().sum()).sum()
        loss = loss + (weight.diagonal(-1, 1, 0) ** 2).sum()
        loss.backward()
        return loss

    x = minigrad.tensor(np.arange(12.0).reshape(3, 4))
    expected = step(x).item()
    expected_grad = weight.grad.numpy().copy()
    compiled = minigrad.compile(step)
    for _ in range(4):
        assert compiled(x).item() == expected
        np.testing.assert_array_equal(weight.grad.numpy(), expected_grad)
    assert compiled.replays >= 2, compiled.explain()


# ----------------------------------------------------------------------------- legacy types


def test_legacy_constructors() -> None:
    values = minigrad.FloatTensor([1, 2])
    assert values.dtype == minigrad.float32  # float32, though minigrad's default is float64
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0])
    assert minigrad.FloatTensor(2, 3).shape == (2, 3)  # sizes: uninitialised
    assert minigrad.FloatTensor((2, 3)).shape == (2,)  # a tuple is data, as PyTorch
    assert minigrad.FloatTensor().shape == (0,)
    assert minigrad.LongTensor([1.7]).tolist() == [1]
    assert minigrad.BoolTensor([0, 2]).tolist() == [False, True]
    assert minigrad.IntTensor(2).dtype == minigrad.int32
    assert minigrad.DoubleTensor([1.5]).dtype == minigrad.float64


def test_legacy_types_answer_isinstance_by_dtype() -> None:
    x = minigrad.ones(2, dtype=minigrad.float32)
    assert isinstance(x, minigrad.FloatTensor)
    assert not isinstance(x.double(), minigrad.FloatTensor)
    assert isinstance(x.double(), minigrad.DoubleTensor)
    assert isinstance(minigrad.tensor([1, 2]), minigrad.LongTensor)
    assert not isinstance(np.ones(2, dtype=np.float32), minigrad.FloatTensor)
    assert not issubclass(minigrad.FloatTensor, minigrad.Tensor)


def test_type_converts_with_a_legacy_type() -> None:
    x = minigrad.ones(2, dtype=minigrad.float32)
    assert x.type() == "torch.FloatTensor"
    assert x.type(minigrad.DoubleTensor).dtype == minigrad.float64
    assert x.to(minigrad.LongTensor).dtype == minigrad.int64


def test_legacy_constructors_match_pytorch(real_torch) -> None:
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"):
        ours = getattr(minigrad, name)([[0, 1.5], [2, 3]])
        theirs = getattr(real_torch, name)([[0, 1.5], [2, 3]])
        assert ours.type() == theirs.type()
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert isinstance(ours, getattr(minigrad, name))


@pytest.mark.parametrize(
    "args, error",
    [(("a",), TypeError), ((2, "a"), TypeError), ((-1,), RuntimeError), (([1], [2]), TypeError),
     ((2.5,), TypeError)],
)
def test_legacy_constructor_errors_are_pytorchs(args: tuple, error: type) -> None:
    with pytest.raises(error, match="FloatTensor"):
        minigrad.FloatTensor(*args)


def test_legacy_constructor_of_a_variable() -> None:
    x = minigrad.ones(2, dtype=minigrad.float32)
    same = minigrad.FloatTensor(x)
    assert same.data_ptr() == x.data_ptr()  # the same data, as PyTorch
    with pytest.raises(TypeError, match="float32"):
        minigrad.FloatTensor(minigrad.ones(2))  # float64


# ----------------------------------------------------------------------------- device context


def test_device_context_sets_the_factories_default() -> None:
    assert minigrad.get_default_device() == "cpu"
    with minigrad.device("cpu") as place:
        assert place == "cpu"
        assert minigrad.ones(2).device == "cpu"
    assert minigrad.get_default_device() == "cpu"


def test_device_context_nests_and_restores() -> None:
    with minigrad.device("cuda"):
        assert minigrad.get_default_device() == "cuda"
        with minigrad.device("cpu"):
            assert minigrad.zeros(2).device == "cpu"
        assert minigrad.get_default_device() == "cuda"
    assert minigrad.get_default_device() == "cpu"


def test_device_context_restores_after_an_error() -> None:
    with pytest.raises(ValueError):
        with minigrad.device("cuda"):
            raise ValueError("inside")
    assert minigrad.get_default_device() == "cpu"


def test_device_context_on_cuda_uses_minigrads_cuda() -> None:
    pytest.importorskip("numba")
    with minigrad.device("cuda"):
        x = minigrad.ones(3)
    assert x.device == "cuda"
    np.testing.assert_array_equal(x.cpu().numpy(), np.ones(3))


# ----------------------------------------------------------------------------- storage


def test_data_ptr_is_the_first_elements_address() -> None:
    x = minigrad.arange(12.0).reshape(3, 4)
    assert x.data_ptr() == x[0].data_ptr()
    assert x[1:, 1:].data_ptr() - x.data_ptr() == 5 * x.element_size()
    assert x.clone().data_ptr() != x.data_ptr()
    assert x.detach().data_ptr() == x.data_ptr()


def test_views_share_the_untyped_storage() -> None:
    x = minigrad.arange(12.0).reshape(3, 4)
    start = x.untyped_storage().data_ptr()
    for view in (x[1:, 1:], x.t(), x.diagonal(1), x[2], x.reshape(12)):
        assert view.untyped_storage().data_ptr() == start
    assert x.t().contiguous().untyped_storage().data_ptr() != start
    storage = x[1:].untyped_storage()
    assert storage.nbytes() == storage.size() == len(storage) == 96


def test_storage_offset_counts_elements() -> None:
    x = minigrad.arange(12.0).reshape(3, 4)
    assert x.storage_offset() == 0
    assert x[1:, 1:].storage_offset() == 5
    assert x.diagonal(1).storage_offset() == 1
    assert minigrad.tensor(3.0).storage_offset() == 0


def test_storage_matches_pytorch(real_torch) -> None:
    ours = minigrad.arange(12.0).reshape(3, 4)
    theirs = real_torch.arange(12.0, dtype=real_torch.float64).reshape(3, 4)
    for view in (lambda t: t[1:, 1:], lambda t: t.diagonal(-1), lambda t: t.t()[2]):
        assert view(ours).storage_offset() == view(theirs).storage_offset()
        assert view(ours).untyped_storage().nbytes() == view(theirs).untyped_storage().nbytes()


def test_typed_storage_warns_and_counts_elements() -> None:
    x = minigrad.arange(6.0, dtype=minigrad.float32)[2:]
    with pytest.warns(UserWarning, match="deprecated"):
        storage = x.storage()
    assert storage.size() == len(storage) == 6
    assert storage.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert storage.data_ptr() == x.untyped_storage().data_ptr()
    assert storage.nbytes() == 24


def test_storage_of_text_is_an_error() -> None:
    with pytest.raises(TypeError, match="numeric Variable"):
        minigrad.Variable("words").data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="numeric Variable"):
            minigrad.Variable("words").storage()


def test_diagonal_and_storage_on_cuda() -> None:
    pytest.importorskip("numba")
    x = minigrad.tensor(CUBE).to("cuda")
    np.testing.assert_array_equal(x.diagonal(1, 0, 2).cpu().numpy(), np.diagonal(CUBE, 1, 0, 2))
    assert minigrad.diag_embed(x).device == "cuda"
    assert x[1].storage_offset() == 12
    assert x[1].untyped_storage().data_ptr() == x.data_ptr()
