"""minigrad.utils.data's samplers, datasets, collation and DataLoader options.

Deterministic results (SequentialSampler, BatchSampler, ConcatDataset, ChainDataset,
random_split's lengths, default_collate's structures, the batches of an IterableDataset)
are compared with real torch where it is installed, as are error classes. Random orders
are minigrad's own numbers, so they are checked against the logic that makes them: a
permutation of the generator's (randperm(n, generator=g)), multinomial's draws, ...
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.utils.data as D
from minigrad import Variable

FEATURES = mg.tensor(np.arange(20.0).reshape(10, 2))
LABELS = mg.tensor(np.arange(10))
Point = collections.namedtuple("Point", "x y")


def dataset() -> D.TensorDataset:
    return D.TensorDataset(FEATURES, LABELS)


def labels_of(loader: Any) -> list[list[int]]:
    return [y.data.tolist() for _, y in loader]


def plain(value: Any) -> Any:
    """A structure of Variables or torch tensors as kinds and numbers, to compare."""
    if isinstance(value, Variable) or type(value).__name__ == "Tensor":
        array = np.asarray(value.detach().cpu().numpy() if hasattr(value, "detach") else value)
        return ("tensor", str(array.dtype), array.tolist())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, [plain(item) for item in value])
    if isinstance(value, dict):
        return (type(value).__name__, {key: plain(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain(item) for item in value])
    return value


def same_error(torch_call: Callable[[], Any], mine: Callable[[], Any]) -> BaseException:
    """Both raise, minigrad PyTorch's class (or a subclass of it); returns minigrad's error."""
    with pytest.raises(Exception) as theirs:
        torch_call()
    with pytest.raises(Exception) as ours:
        mine()
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)
    return ours.value


# =========================================================================== samplers


def test_sequential_sampler_is_0_to_n_as_torchs(real_torch):
    mine = D.SequentialSampler(dataset())
    theirs = real_torch.utils.data.SequentialSampler(range(10))
    assert list(mine) == list(theirs) == list(range(10))
    assert len(mine) == len(theirs) == 10


@pytest.mark.parametrize("size", [0, 1, 7, 9, 12])
@pytest.mark.parametrize("batch_size", [1, 3, 4, 12])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_equals_torchs(real_torch, size, batch_size, drop_last):
    mine = D.BatchSampler(D.SequentialSampler(range(size)), batch_size, drop_last)
    theirs = real_torch.utils.data.BatchSampler(range(size), batch_size, drop_last)
    assert list(mine) == list(theirs)
    assert len(mine) == len(theirs)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(0, 30), batch_size=st.integers(1, 8), drop_last=st.booleans())
def test_property_batch_sampler_cuts_the_indices_in_order(size, batch_size, drop_last):
    batches = list(D.BatchSampler(range(size), batch_size, drop_last))
    served = size - size % batch_size if drop_last else size
    assert [index for batch in batches for index in batch] == list(range(served))
    assert all(len(batch) == batch_size for batch in batches[:-1])
    if drop_last:
        assert all(len(batch) == batch_size for batch in batches)
    assert len(D.BatchSampler(range(size), batch_size, drop_last)) == len(batches)


@pytest.mark.parametrize(
    ("arguments", "error"),
    [((0, False), ValueError), ((2.0, False), ValueError), ((True, False), ValueError),
     ((2, 1), ValueError)],
    ids=["batch_size 0", "float batch_size", "bool batch_size", "int drop_last"],
)
def test_batch_sampler_errors(real_torch, arguments, error):
    raised = same_error(lambda: real_torch.utils.data.BatchSampler(range(4), *arguments),
                        lambda: D.BatchSampler(range(4), *arguments))
    assert isinstance(raised, error) and "should be" in str(raised)


def _permutations(generator: mg.Generator, size: int, count: int) -> list[int]:
    """What RandomSampler without replacement yields: permutations from the generator,
    the last one cut (none drawn for nothing)."""
    order = []
    for _ in range(count // size):
        order += mg.randperm(size, generator=generator).tolist()
    if count % size:
        order += mg.randperm(size, generator=generator).tolist()[: count % size]
    return order


@pytest.mark.parametrize("num_samples", [None, 4, 10, 23])
def test_random_sampler_draws_permutations_from_its_generator(num_samples):
    sampler = D.RandomSampler(range(10), num_samples=num_samples,
                              generator=mg.Generator().manual_seed(6))
    count = 10 if num_samples is None else num_samples
    expected = mg.Generator().manual_seed(6)
    assert len(sampler) == count
    first, second = list(sampler), list(sampler)
    assert first == _permutations(expected, 10, count)
    assert second == _permutations(expected, 10, count)  # the next epoch: the next numbers
    assert first != second
    if count == 10:
        assert sorted(first) == list(range(10))


def test_random_sampler_with_replacement_draws_integers():
    g = mg.Generator().manual_seed(2)
    drawn = list(D.RandomSampler(range(5), replacement=True, num_samples=40, generator=g))
    expected = mg.Generator().manual_seed(2)
    assert drawn == mg.randint(0, 5, (40,), generator=expected).tolist()
    assert len(set(drawn)) <= 5 and len(drawn) == 40


def test_random_sampler_without_a_generator_follows_manual_seed():
    mg.manual_seed(4)
    first = list(D.RandomSampler(range(8)))
    mg.manual_seed(4)
    assert list(D.RandomSampler(range(8))) == first == mg.Generator().manual_seed(
        4
    )._numpy.permutation(8).tolist()


def test_random_sampler_generator_is_independent_of_the_global_seed():
    def epoch() -> list[int]:
        return list(D.RandomSampler(range(12), generator=mg.Generator().manual_seed(9)))

    mg.manual_seed(1)
    first = epoch()
    mg.manual_seed(2)
    assert epoch() == first
    mg.manual_seed(1)
    expected = mg.rand(3).tolist()
    mg.manual_seed(1)
    epoch()
    assert mg.rand(3).tolist() == expected  # and the global stream was not used


@pytest.mark.parametrize("generator", [5, "numpy"], ids=["int seed", "NumPy Generator"])
def test_random_sampler_still_takes_an_int_seed_or_a_numpy_generator(generator):
    def make() -> D.RandomSampler:
        source = np.random.default_rng(5) if generator == "numpy" else generator
        return D.RandomSampler(range(9), generator=source)

    first = make()
    assert list(first) == np.random.default_rng(5).permutation(9).tolist()
    assert list(make()) == list(D.RandomSampler(range(9), generator=5))


@pytest.mark.parametrize(
    ("keywords", "error"),
    [({"replacement": 1}, TypeError), ({"num_samples": 0}, ValueError),
     ({"num_samples": 2.5}, ValueError)],
    ids=["replacement 1", "num_samples 0", "num_samples float"],
)
def test_random_sampler_errors(real_torch, keywords, error):
    raised = same_error(lambda: real_torch.utils.data.RandomSampler(range(4), **keywords),
                        lambda: D.RandomSampler(range(4), **keywords))
    assert isinstance(raised, error)


def test_random_sampler_of_nothing_is_an_error_as_in_torch(real_torch):
    same_error(lambda: real_torch.utils.data.RandomSampler([]), lambda: D.RandomSampler([]))
    with pytest.raises(ValueError, match="empty dataset"):
        D.DataLoader(D.TensorDataset(mg.zeros(0, 2)), shuffle=True)


def test_random_sampler_refuses_a_generator_of_another_kind():
    with pytest.raises(TypeError, match="minigrad.Generator, an int seed or a numpy"):
        D.RandomSampler(range(3), generator="seed")


def test_subset_random_sampler_yields_the_indices_in_a_permutations_order():
    indices = [10, 20, 30, 40, 50]
    sampler = D.SubsetRandomSampler(indices, generator=mg.Generator().manual_seed(3))
    order = mg.randperm(5, generator=mg.Generator().manual_seed(3)).tolist()
    assert list(sampler) == [indices[i] for i in order]
    assert sorted(sampler) == indices and len(sampler) == 5


def test_weighted_random_sampler_is_multinomial_of_the_weights():
    weights = [0.1, 0.0, 3.0, 0.5]
    for replacement, count in ((True, 30), (False, 3)):
        sampler = D.WeightedRandomSampler(weights, count, replacement,
                                          generator=mg.Generator().manual_seed(8))
        expected = mg.multinomial(mg.tensor(weights), count, replacement,
                                  generator=mg.Generator().manual_seed(8))
        drawn = list(sampler)
        assert drawn == expected.tolist() and len(sampler) == count
        assert 1 not in drawn  # weight 0: never drawn
    assert sampler.weights.dtype == np.float64


def test_weighted_random_sampler_follows_the_weights():
    mg.manual_seed(0)
    drawn = np.array(list(D.WeightedRandomSampler([1.0, 3.0], 4000)))
    assert abs(drawn.mean() - 0.75) < 0.03


@pytest.mark.parametrize(
    ("arguments", "error"),
    [(([1.0, 2.0], 0), ValueError), (([1.0, 2.0], True), ValueError),
     (([1.0, 2.0], 2, "yes"), ValueError), (([[1.0], [2.0]], 2), ValueError)],
    ids=["num_samples 0", "bool num_samples", "replacement str", "2-d weights"],
)
def test_weighted_random_sampler_errors(real_torch, arguments, error):
    raised = same_error(lambda: real_torch.utils.data.WeightedRandomSampler(*arguments),
                        lambda: D.WeightedRandomSampler(*arguments))
    assert isinstance(raised, error)


def test_weighted_random_sampler_bad_weights_fail_when_drawn_as_multinomial_does(real_torch):
    for weights in ([-1.0, 2.0], [0.0, 0.0]):
        same_error(lambda w=weights: list(real_torch.utils.data.WeightedRandomSampler(w, 2)),
                   lambda w=weights: list(D.WeightedRandomSampler(w, 2)))


def test_sampler_base_class_says_what_to_write():
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(D.Sampler())


# =========================================================================== datasets


def _parts(module: Any) -> list:
    tensors = module.utils.data.TensorDataset
    return [tensors(module.arange(3)), tensors(module.arange(10, 15)),
            tensors(module.arange(20, 22))]


def test_concat_dataset_equals_torchs(real_torch):
    mine, theirs = D.ConcatDataset(_parts(mg)), real_torch.utils.data.ConcatDataset(
        _parts(real_torch))
    assert mine.cumulative_sizes == theirs.cumulative_sizes == [3, 8, 10]
    assert len(mine) == len(theirs) == 10
    for index in range(-10, 10):
        assert mine[index][0].item() == theirs[index][0].item()


def test_concat_dataset_without_torch():
    joined = D.ConcatDataset(_parts(mg))
    assert [joined[i][0].item() for i in range(10)] == [0, 1, 2, 10, 11, 12, 13, 14, 20, 21]
    assert joined[-1][0].item() == 21 and joined[-10][0].item() == 0
    added = _parts(mg)[0] + _parts(mg)[1]
    assert isinstance(added, D.ConcatDataset) and len(added) == 8
    batches = list(D.DataLoader(D.ConcatDataset(_parts(mg)), batch_size=4))
    assert [b[0].tolist() for b in batches] == [[0, 1, 2, 10], [11, 12, 13, 14], [20, 21]]


@pytest.mark.parametrize(("index", "error"), [(10, IndexError), (-11, ValueError)])
def test_concat_dataset_index_errors_as_torch(real_torch, index, error):
    raised = same_error(lambda: real_torch.utils.data.ConcatDataset(_parts(real_torch))[index],
                        lambda: D.ConcatDataset(_parts(mg))[index])
    assert isinstance(raised, error) and "10 samples" in str(raised)


def test_concat_dataset_errors_are_clear():
    with pytest.raises(ValueError, match="empty"):
        D.ConcatDataset([])
    with pytest.raises(TypeError, match="IterableDataset"):
        D.ConcatDataset([_parts(mg)[0], Stream(mg, 3)])
    with pytest.raises(TypeError, match="indices must be ints"):
        D.ConcatDataset(_parts(mg))["a"]
    with pytest.raises(TypeError, match="dataset 1 has no length"):
        D.ConcatDataset([_parts(mg)[0], 5])
    with pytest.raises(TypeError, match="datasets must be a list"):
        D.ConcatDataset(3)


def test_subset_index_errors_are_about_the_subset(real_torch):
    part = D.Subset(dataset(), [4, 5, 6])
    assert part[-1][1].item() == 6 and part[0][1].item() == 4
    error = same_error(lambda: real_torch.utils.data.Subset(list(range(10)), [4, 5, 6])[3],
                       lambda: part[3])
    assert "Subset index 3 is out of range for 3 samples" in str(error)
    with pytest.raises(IndexError, match="Subset index 7"):
        part[[0, 7]]
    with pytest.raises(TypeError, match="Subset indices must be ints"):
        part[1.5]
    assert [y.item() for y in part[1:][1]] == [5, 6]


def test_stack_dataset_equals_torchs(real_torch):
    a, b = list(range(4)), list("abcd")
    assert D.StackDataset(a, b)[2] == real_torch.utils.data.StackDataset(a, b)[2] == (2, "c")
    assert D.StackDataset(x=a, y=b)[1] == {"x": 1, "y": "b"}
    assert len(D.StackDataset(a, b)) == 4
    for arguments, keywords in (((a, b[:2]), {}), ((a,), {"y": b}), ((), {})):
        same_error(lambda a=arguments, k=keywords: real_torch.utils.data.StackDataset(*a, **k),
                   lambda a=arguments, k=keywords: D.StackDataset(*a, **k))


class Stream:
    """An IterableDataset of 0 .. n-1 (with a length), for either library."""

    def __new__(cls, module: Any, count: int, with_length: bool = True) -> Any:
        base = module.utils.data.IterableDataset

        class Numbers(base):
            def __iter__(self):
                return iter(range(count))

        class SizedNumbers(Numbers):
            def __len__(self):
                return count

        return SizedNumbers() if with_length else Numbers()


@pytest.mark.parametrize("batch_size", [None, 1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_dataset_batches_equal_torchs(real_torch, batch_size, drop_last):
    if batch_size is None and drop_last:
        return  # an error in both (tested below)
    mine = D.DataLoader(Stream(mg, 10), batch_size=batch_size, drop_last=drop_last)
    theirs = real_torch.utils.data.DataLoader(Stream(real_torch, 10), batch_size=batch_size,
                                              drop_last=drop_last)
    assert [plain(b) for b in mine] == [plain(b) for b in theirs]
    assert len(mine) == len(theirs)


def test_iterable_dataset_batches_without_torch():
    loader = D.DataLoader(Stream(mg, 7), batch_size=3)
    assert [batch.tolist() for batch in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(loader) == 3
    assert [b.tolist() for b in D.DataLoader(Stream(mg, 7), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    assert list(D.DataLoader(Stream(mg, 3, with_length=False), batch_size=None)) == [0, 1, 2]
    chained = Stream(mg, 2) + Stream(mg, 3)
    assert isinstance(chained, D.ChainDataset) and list(chained) == [0, 1, 0, 1, 2]
    assert len(chained) == 5


@pytest.mark.parametrize(
    "keywords",
    [{"shuffle": True}, {"sampler": [0, 1]}, {"batch_sampler": [[0, 1]]}],
    ids=["shuffle", "sampler", "batch_sampler"],
)
def test_iterable_dataset_refuses_an_order_as_torch(real_torch, keywords):
    error = same_error(lambda: real_torch.utils.data.DataLoader(Stream(real_torch, 4), **keywords),
                       lambda: D.DataLoader(Stream(mg, 4), **keywords))
    assert isinstance(error, ValueError)
    assert f"expected unspecified {next(iter(keywords))} option" in str(error)


def test_chain_dataset_equals_torchs_and_refuses_map_style_datasets(real_torch):
    def chain(module: Any) -> list:
        return list(module.utils.data.ChainDataset([Stream(module, 2), Stream(module, 3)]))

    assert chain(mg) == chain(real_torch) == [0, 1, 0, 1, 2]
    with pytest.raises(TypeError, match="ChainDataset only supports IterableDataset"):
        list(D.ChainDataset([Stream(mg, 2), [1, 2]]))


def test_iterable_dataset_base_class_says_what_to_write():
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(D.IterableDataset())


# =========================================================================== random_split


@pytest.mark.parametrize("size", [1, 7, 10, 33])
@pytest.mark.parametrize(
    "fractions", [[0.5, 0.5], [0.8, 0.2], [0.5, 0.3, 0.2], [0.1] * 10, [1.0], [0.7, 0.3, 0.0]]
)
def test_random_split_lengths_from_fractions_equal_torchs(real_torch, size, fractions):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a split of length 0 warns in both
        mine = D.random_split(list(range(size)), fractions)
        theirs = real_torch.utils.data.random_split(list(range(size)), fractions)
    assert [len(part) for part in mine] == [len(part) for part in theirs]


def test_random_split_is_a_permutation_of_its_generator_cut_in_order():
    parts = D.random_split(dataset(), [0.5, 0.3, 0.2], generator=mg.Generator().manual_seed(1))
    order = mg.randperm(10, generator=mg.Generator().manual_seed(1)).tolist()
    assert [part.indices for part in parts] == [order[:5], order[5:8], order[8:]]
    again = D.random_split(dataset(), [5, 3, 2], generator=mg.Generator().manual_seed(1))
    assert [part.indices for part in again] == [part.indices for part in parts]


def test_random_split_errors_and_warning(real_torch):
    same_error(lambda: real_torch.utils.data.random_split(range(10), [0.5, 1.5, -1.0]),
               lambda: D.random_split(dataset(), [0.5, 1.5, -1.0]))
    same_error(lambda: real_torch.utils.data.random_split(range(10), [5, 4]),
               lambda: D.random_split(dataset(), [5, 4]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        D.random_split(D.TensorDataset(mg.zeros(1)), [0.9, 0.1])


def test_random_split_errors_without_torch():
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        D.random_split(dataset(), [0.5, 1.5, -1.0])
    with pytest.raises(TypeError, match="lengths must be ints or fractions"):
        D.random_split(dataset(), [5, "5"])


# =========================================================================== DataLoader


def test_dataloader_takes_a_generator_and_repeats_with_it():
    def epochs(seed: int) -> list:
        loader = D.DataLoader(dataset(), batch_size=4, shuffle=True,
                              generator=mg.Generator().manual_seed(seed))
        return [labels_of(loader), labels_of(loader)]

    mg.manual_seed(0)
    first = epochs(3)
    mg.manual_seed(1)
    assert epochs(3) == first and first[0] != first[1]
    order = _permutations(mg.Generator().manual_seed(3), 10, 10)
    assert sum(first[0], []) == order
    loader = D.DataLoader(dataset(), shuffle=True, generator=mg.Generator())
    assert isinstance(loader.sampler, D.RandomSampler)
    assert isinstance(loader.batch_sampler, D.BatchSampler)


def test_dataloader_generator_goes_by_position_as_in_torch():
    g = mg.Generator().manual_seed(2)
    loader = D.DataLoader(dataset(), 5, True, None, None, 0, None, False, False, 0, None, None, g)
    assert loader.generator is g and len(labels_of(loader)) == 2


def test_dataloader_with_samplers_and_batch_samplers():
    g = mg.Generator().manual_seed(5)
    by_sampler = D.DataLoader(dataset(), batch_size=3, sampler=D.SubsetRandomSampler([1, 3, 5, 7],
                              generator=g))
    assert len(by_sampler) == 2
    assert sorted(sum(labels_of(by_sampler), [])) == [1, 3, 5, 7]
    weighted = D.DataLoader(dataset(), batch_size=4, sampler=D.WeightedRandomSampler(
        [0.0] * 9 + [1.0], 8))
    assert labels_of(weighted) == [[9] * 4] * 2
    batches = D.BatchSampler(D.SequentialSampler(range(10)), 4, drop_last=True)
    by_batches = D.DataLoader(dataset(), batch_sampler=batches)
    assert labels_of(by_batches) == [[0, 1, 2, 3], [4, 5, 6, 7]] and len(by_batches) == 2
    assert by_batches.batch_size is None


def test_dataloader_batches_equal_torchs_for_samplers(real_torch):
    data = real_torch.utils.data
    theirs = data.TensorDataset(real_torch.tensor(FEATURES.data), real_torch.tensor(LABELS.data))
    for keywords in ({"batch_size": 3, "sampler": [9, 2, 4, 4, 0]},
                     {"batch_sampler": [[1, 2], [7], [3, 3, 3]]},
                     {"batch_size": 4, "drop_last": True},
                     {"batch_size": None, "sampler": [3, 1]}):
        mine = list(D.DataLoader(dataset(), **keywords))
        assert [plain(b) for b in mine] == [plain(b) for b in data.DataLoader(theirs, **keywords)]


MUTUALLY_EXCLUSIVE = [
    {"shuffle": True, "sampler": [0]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"prefetch_factor": 2},
    {"persistent_workers": True},
    {"timeout": -1},
    {"num_workers": -1},
    {"multiprocessing_context": "spawn"},
    {"num_workers": 2, "multiprocessing_context": "no such method"},
]


@pytest.mark.parametrize("keywords", MUTUALLY_EXCLUSIVE, ids=lambda k: ",".join(k))
def test_dataloader_option_errors_equal_torchs(real_torch, keywords):
    theirs = real_torch.utils.data.TensorDataset(real_torch.arange(10))
    error = same_error(lambda: real_torch.utils.data.DataLoader(theirs, **keywords),
                       lambda: D.DataLoader(dataset(), **keywords))
    assert isinstance(error, ValueError)


@pytest.mark.parametrize("keywords", MUTUALLY_EXCLUSIVE, ids=lambda k: ",".join(k))
def test_dataloader_option_errors_without_torch(keywords):
    with pytest.raises(ValueError, match="option|mutually exclusive|can only be used"):
        D.DataLoader(dataset(), **keywords)


def test_dataloader_attributes_are_fixed_after_init_as_in_torch(real_torch):
    mine = D.DataLoader(dataset(), batch_size=2)
    theirs = real_torch.utils.data.DataLoader(list(range(4)), batch_size=2)
    for name in ("batch_size", "sampler", "dataset", "drop_last"):
        error = same_error(lambda n=name: setattr(theirs, n, None),
                           lambda n=name: setattr(mine, n, None))
        assert f"{name} attribute should not be set" in str(error)
    mine.num_workers = 0  # the others may change


def test_worker_options_are_accepted_and_no_worker_runs():
    called = []
    loader = D.DataLoader(dataset(), batch_size=5, num_workers=2, worker_init_fn=called.append,
                          prefetch_factor=4, persistent_workers=True, timeout=3.0,
                          multiprocessing_context="spawn", pin_memory_device="", in_order=False)
    assert len(labels_of(loader)) == 2 and called == []
    assert D.get_worker_info() is None
    with pytest.raises(TypeError, match="worker_init_fn must be a function"):
        D.DataLoader(dataset(), worker_init_fn=3)
    with pytest.raises(TypeError, match="multiprocessing_context option should be"):
        D.DataLoader(dataset(), num_workers=1, multiprocessing_context=3)


def test_get_worker_info_is_none_in_the_main_process_as_in_torch(real_torch):
    assert real_torch.utils.data.get_worker_info() is None is D.get_worker_info()


def test_dataloader_uses_a_datasets_getitems_for_a_whole_batch():
    class Batched(D.Dataset):
        asked: list = []

        def __len__(self) -> int:
            return 6

        def __getitem__(self, index: int) -> int:
            raise AssertionError("__getitems__ should serve the batches")

        def __getitems__(self, indices: list[int]) -> list[int]:
            self.asked.append(list(indices))
            return [index * 10 for index in indices]

    loader = D.DataLoader(Batched(), batch_size=4)
    assert [batch.tolist() for batch in loader] == [[0, 10, 20, 30], [40, 50]]
    assert Batched.asked == [[0, 1, 2, 3], [4, 5]]


def test_collate_fn_with_and_without_batching():
    sizes = D.DataLoader(dataset(), batch_size=4, collate_fn=len)
    assert list(sizes) == [4, 4, 2]
    single = D.DataLoader([np.zeros(2), np.ones(2)], batch_size=None)
    converted = list(single)
    assert all(isinstance(sample, Variable) for sample in converted)
    kinds = D.DataLoader([1, 2], batch_size=None, collate_fn=type)
    assert list(kinds) == [int, int]


def test_a_subset_subclass_keeps_its_own_indexing_in_a_loader():
    class Doubled(D.Subset):
        def __getitem__(self, index):
            x, y = super().__getitem__(index)
            return x, y * 2

    loader = D.DataLoader(Doubled(dataset(), [1, 2, 3]), batch_size=3)
    assert labels_of(loader) == [[2, 4, 6]]


# =========================================================================== collate


COLLATE_CASES = {
    "ints": [1, 2, 3],
    "bools": [True, False],
    "floats": [0.5, 1.5],
    "numpy float32 scalars": [np.float32(1.5), np.float32(2.0)],
    "numpy int16 scalars": [np.int16(1), np.int16(2)],
    "numpy arrays": [np.arange(3.0), np.ones(3)],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "tuples": [(1, 0.5, "x"), (2, 1.5, "y")],
    "lists": [[1, 2], [3, 4]],
    "dicts": [{"a": 1, "b": np.zeros(2)}, {"a": 2, "b": np.ones(2)}],
    "ordered dicts": [collections.OrderedDict(a=1.0), collections.OrderedDict(a=2.0)],
    "namedtuples": [Point(1, "s"), Point(2, "t")],
    "nested": [{"p": Point([1, 2], 0.5)}, {"p": Point([3, 4], 1.5)}],
}


@pytest.mark.parametrize("name", list(COLLATE_CASES))
def test_default_collate_structures_equal_torchs(real_torch, name):
    samples = COLLATE_CASES[name]
    mine = D.default_collate(samples)
    theirs = real_torch.utils.data.default_collate(samples)
    assert plain(mine) == plain(theirs)


@pytest.mark.parametrize("name", list(COLLATE_CASES))
def test_default_convert_equals_torchs(real_torch, name):
    sample = COLLATE_CASES[name][0]
    assert plain(D.default_convert(sample)) == plain(real_torch.utils.data.default_convert(sample))


def test_default_collate_of_variables_stacks_them(real_torch):
    mine = D.default_collate([mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0])])
    rows = [real_torch.tensor(row, dtype=real_torch.float64) for row in ([1.0, 2.0], [3.0, 4.0])]
    theirs = real_torch.utils.data.default_collate(rows)
    assert plain(mine) == plain(theirs)


def test_default_collate_without_torch():
    assert D.default_collate([1, 2]).dtype == np.int64
    assert D.default_collate([0.5, 1]).dtype == np.float64
    # A float among ints: float64 (minigrad's default float; PyTorch's float32), never cut
    assert D.default_collate([1, 2.5]).tolist() == [1.0, 2.5]
    batch = D.default_collate([Point(1, "s"), Point(2, "t")])
    assert type(batch) is Point and batch.y == ("s", "t") and batch.x.tolist() == [1, 2]
    ordered = D.default_collate([collections.OrderedDict(b=1, a=2)] * 2)
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["b", "a"]
    assert type(D.default_collate([(1, 2), (3, 4)])) is list
    arrays = D.default_collate([np.zeros(2, dtype=np.float32), np.ones(2, dtype=np.float32)])
    assert arrays.dtype == np.float32 and arrays.shape == (2, 2)


@pytest.mark.parametrize(
    ("samples", "error"),
    [([np.array(["a"]), np.array(["b"])], TypeError), ([[1], [2, 3]], RuntimeError),
     ([object()], TypeError), ([np.zeros(2), np.zeros(3)], RuntimeError)],
    ids=["text arrays", "unequal lists", "objects", "unequal arrays"],
)
def test_default_collate_errors_equal_torchs(real_torch, samples, error):
    raised = same_error(lambda: real_torch.utils.data.default_collate(samples),
                        lambda: D.default_collate(samples))
    assert isinstance(raised, error)


def test_default_collate_error_messages():
    with pytest.raises(TypeError, match="found a NumPy array of dtype <U1"):
        D.default_collate([np.array(["a"])])
    with pytest.raises(RuntimeError, match=r"equal size; got sizes \[1, 2\]"):
        D.default_collate([[1], [2, 3]])
    with pytest.raises(TypeError, match="sample 1 is str"):
        D.default_collate([1, "2"])


# =========================================================================== names


def test_every_name_exists_in_torch_utils_data(real_torch):
    assert set(D.__all__) <= set(dir(real_torch.utils.data))


def test_a_missing_name_says_so():
    with pytest.raises(AttributeError,
                       match=r"minigrad does not have `torch.utils.data.DistributedSampler` yet"):
        D.DistributedSampler  # noqa: B018
    with pytest.raises(AttributeError, match="nearest existing spelling.*RandomSampler"):
        D.RandomSampel  # noqa: B018


def test_the_old_import_paths_still_work():
    from minigrad.utils.data import DataLoader, TensorDataset, default_collate, random_split

    assert DataLoader is D.dataloader.DataLoader and TensorDataset is D.dataset.TensorDataset
    assert default_collate is D.collate.default_collate and callable(random_split)
    assert mg.utils.data is D
