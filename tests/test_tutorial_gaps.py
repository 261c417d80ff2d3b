"""Small PyTorch behaviours that running PyTorch's tutorials and docs examples found
missing (tests/test_pytorch_tutorials.py, tests/test_pytorch_docs_examples.py), each
checked on its own and compared with PyTorch where it is installed."""

import numpy as np
import pytest

import minigrad


@pytest.fixture(scope="module")
def real_torch():
    return pytest.importorskip("torch")


# --------------------------------------------------------------------------- randint
# data_tutorial.py: torch.randint(len(training_data), size=(1,)).item()


def test_randint_takes_high_alone_with_size_by_keyword() -> None:
    values = minigrad.randint(7, size=(200,))
    assert values.shape == (200,)
    assert values.dtype == np.int64
    assert values.min().item() >= 0 and values.max().item() < 7
    assert minigrad.randint(128, size=(1,)).item() in range(128)


def test_randint_spellings_give_the_shapes_and_dtype_pytorch_gives(real_torch) -> None:
    calls = [
        lambda lib: lib.randint(7, size=(3, 2)),
        lambda lib: lib.randint(7, (3, 2)),
        lambda lib: lib.randint(2, 7, (4,)),
        lambda lib: lib.randint(2, 7, size=(4,)),
        lambda lib: lib.randint(low=2, high=7, size=(4,)),
        lambda lib: lib.randint(high=7, size=(5,)),
    ]
    for call in calls:
        ours, theirs = call(minigrad), call(real_torch)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(theirs.dtype) == "torch.int64" and ours.dtype == np.int64


def test_randint_without_a_size_says_so() -> None:
    with pytest.raises(TypeError, match="needs a size"):
        minigrad.randint(7)
