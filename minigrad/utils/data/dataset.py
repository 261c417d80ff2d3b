"""Datasets, as torch.utils.data's: where the samples come from.

    Dataset            map-style: dataset[i] and len(dataset) (subclass it)
    IterableDataset    a stream: iter(dataset) (subclass it)
    TensorDataset      sample i is (t[i] for t in tensors)
    StackDataset       sample i is (d[i] for d in datasets), or a dict of them
    ConcatDataset      the samples of several datasets one after another (also `a + b`)
    ChainDataset       several IterableDatasets one after another
    Subset             the samples at some indices; random_split cuts a dataset into them

Where PyTorch asserts (ConcatDataset of nothing, of an IterableDataset), minigrad raises
ValueError or TypeError, as TensorDataset does: an AssertionError would mean a bug in
minigrad itself.
"""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from minigrad.core.checks import check_iterable
from minigrad.core.variable import Variable
from minigrad.utils.data.sampler import numbers_of, random_source


class Dataset:
    """A map-style dataset: subclass it and write __getitem__(index) and __len__().
    `a + b` is ConcatDataset([a, b])."""

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} must implement __getitem__(index), returning one sample."
        )

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclass it and write __iter__. A DataLoader batches what the
    iterator yields, in its order (no shuffle=, sampler= or batch_sampler=).
    `a + b` is ChainDataset([a, b])."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(
            f"{type(self).__name__} must implement __iter__, yielding the samples."
        )

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is (t[i] for t in tensors): Variables that share their first dimension."""

    def __init__(self, *tensors: Variable) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one Variable (e.g. features, labels).")
        for index, tensor in enumerate(tensors):
            if not isinstance(tensor, Variable) or tensor.is_text or tensor.ndim == 0:
                got = f"shape {tensor.shape}" if isinstance(tensor, Variable) else type(tensor)
                raise TypeError(
                    f"TensorDataset takes numeric Variables with a first (sample) dimension; "
                    f"argument {index} is {got}. Wrap data with minigrad.tensor(...)."
                )
        sizes = [tensor.shape[0] for tensor in tensors]
        if len(set(sizes)) > 1:
            raise ValueError(
                f"Size mismatch between tensors: TensorDataset needs the same number of "
                f"samples (first dimension) in every Variable; got {sizes}."
            )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Variable, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


def map_style_length(dataset: Any, caller: str) -> int:
    """len(dataset), or a TypeError when it is not a map-style dataset."""
    if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
        raise TypeError(
            f"{caller} needs a map-style dataset with __getitem__ and __len__; got "
            f"{type(dataset).__name__}."
        )
    try:
        return len(dataset)
    except TypeError:  # a 0-d NumPy array has the methods but no length
        raise TypeError(
            f"{caller} needs a dataset with a length; got {type(dataset).__name__} of no "
            f"length."
        ) from None


def _length_of(dataset: Any, caller: str, position: int | str) -> int:
    """len(dataset), or a TypeError naming the dataset's place in the call."""
    try:
        return len(dataset)
    except TypeError:
        raise TypeError(
            f"{caller}: dataset {position} has no length ({type(dataset).__name__}); give "
            f"map-style datasets, with __getitem__ and __len__."
        ) from None


class StackDataset(Dataset):
    """Sample i is (d[i] for d in datasets) — or {key: d[i]} when given by keyword — for
    datasets of one length (inputs, targets, masks kept apart)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "StackDataset takes datasets either by position (samples are tuples) or by "
                "keyword (samples are dicts), not both."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed to StackDataset.")
        self.datasets: tuple | dict = args if args else kwargs
        named = dict(enumerate(args)) if args else kwargs
        lengths = {key: _length_of(data, "StackDataset", key) for key, data in named.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"Size mismatch between datasets: StackDataset needs datasets of one length; "
                f"got {lengths}."
            )
        self._length = next(iter(lengths.values()))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {key: data[index] for key, data in self.datasets.items()}
        return tuple(data[index] for data in self.datasets)

    def __len__(self) -> int:
        return self._length


def _as_int(index: Any, caller: str) -> int:
    """One sample's index as an int (a one-element Variable too), or a TypeError."""
    if isinstance(index, Variable) and not index.is_text and index.numel() == 1:
        index = index.item()
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(
            f"{caller} indices must be ints (one sample at a time); got "
            f"{type(index).__name__} {index!r}."
        )
    return int(index)


def _in_range(index: int, length: int, caller: str) -> int:
    """index as a position 0 .. length-1 (negative counts from the end), or an IndexError."""
    if not -length <= index < length:
        raise IndexError(
            f"{caller} index {index} is out of range for {length} samples (valid: "
            f"{-length} .. {length - 1})."
        )
    return index % length


class ConcatDataset(Dataset):
    """The samples of `datasets`, one dataset after another. cumulative_sizes[k] is the
    number of samples in datasets 0 .. k; index i lies in the first dataset whose
    cumulative size exceeds i."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = check_iterable(datasets, "datasets", "ConcatDataset", "datasets")
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable.")
        for position, dataset in enumerate(self.datasets):
            if isinstance(dataset, IterableDataset):
                raise TypeError(
                    f"ConcatDataset does not support IterableDataset (dataset {position} is "
                    f"a {type(dataset).__name__}); chain streams with ChainDataset."
                )
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence: Sequence[Any]) -> list[int]:
        """The running totals of the datasets' lengths."""
        totals, running = [], 0
        for position, dataset in enumerate(sequence):
            running += _length_of(dataset, "ConcatDataset", position)
            totals.append(running)
        return totals

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: Any) -> Any:
        index = _as_int(index, "ConcatDataset")
        if -index > len(self):  # PyTorch's ValueError for this side, IndexError for the other
            raise ValueError(
                f"absolute value of index should not exceed dataset length: got index "
                f"{index} for a ConcatDataset of {len(self)} samples."
            )
        index = _in_range(index, len(self), "ConcatDataset")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """The samples of several IterableDatasets, one stream after another."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def _streams(self) -> Iterator[IterableDataset]:
        for position, dataset in enumerate(self.datasets):
            if not isinstance(dataset, IterableDataset):
                raise TypeError(
                    f"ChainDataset only supports IterableDataset; dataset {position} is a "
                    f"{type(dataset).__name__}. Join map-style datasets with ConcatDataset."
                )
            yield dataset

    def __iter__(self) -> Iterator[Any]:
        for dataset in self._streams():
            yield from dataset

    def __len__(self) -> int:
        return sum(len(dataset) for dataset in self._streams())


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order: subset[i] is
    dataset[indices[i]]."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):  # a batch of positions: one indexing of the dataset
            return self.dataset[[self.indices[self._position(i)] for i in index]]
        if isinstance(index, slice):
            return self.dataset[list(self.indices[index])]
        return self.dataset[self.indices[self._position(index)]]

    def _position(self, index: Any) -> int:
        """index as a position in self.indices: the errors speak of the Subset, not of the
        list inside it."""
        return _in_range(_as_int(index, "Subset"), len(self.indices), "Subset")

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset, lengths: Sequence[int | float], generator: Any = None
) -> list[Subset]:
    """Split into non-overlapping random Subsets of the given lengths, or of fractions
    summing to 1: floor(fraction * len(dataset)) each, the remainder handed out one by one
    from the first split on, as PyTorch does. The order is one permutation of
    0 .. len(dataset)-1 from `generator` (randperm(n, generator=g) for a minigrad.Generator g;
    also a NumPy Generator or an int seed; None: the global generator)."""
    total = map_style_length(dataset, "random_split")
    lengths = check_iterable(
        lengths, "lengths", "random_split",
        "sizes (e.g. [80, 20]) or of fractions summing to 1 (e.g. [0.8, 0.2])",
    )  # fmt: skip
    for size in lengths:
        if isinstance(size, bool) or not isinstance(size, (int, float, np.integer, np.floating)):
            raise TypeError(
                f"random_split: lengths must be ints or fractions; got {type(size).__name__} "
                f"{size!r} in {lengths}."
            )
    if lengths and math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _counts_from_fractions(lengths, total)
    if any(not isinstance(n, (int, np.integer)) or n < 0 for n in lengths):
        raise ValueError(
            f"random_split: lengths must be ints >= 0 (or fractions summing to 1); got {lengths}."
        )
    if sum(lengths) != total:
        raise ValueError(
            f"Sum of input lengths ({sum(lengths)}) does not equal the length of the input "
            f"dataset ({total})."
        )
    source = random_source(generator, "random_split")
    order = numbers_of(source).permutation(total).tolist()
    subsets = []
    start = 0
    for size in lengths:
        subsets.append(Subset(dataset, order[start : start + int(size)]))
        start += int(size)
    return subsets


def _counts_from_fractions(fractions: list, total: int) -> list[int]:
    """floor(fraction * total) each, then the remainder one by one, round-robin."""
    for position, fraction in enumerate(fractions):
        if not 0 <= fraction <= 1:
            raise ValueError(
                f"Fraction at index {position} is not between 0 and 1 (got {fraction}); "
                f"fractions summing to 1 are each in [0, 1]."
            )
    counts = [math.floor(total * fraction) for fraction in fractions]
    for step in range(total - sum(counts)):
        counts[step % len(counts)] += 1
    for position, count in enumerate(counts):
        if count == 0:
            warnings.warn(
                f"Length of split at index {position} is 0. This might result in an empty "
                f"dataset.",
                UserWarning,
                stacklevel=3,
            )
    return counts


__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]
