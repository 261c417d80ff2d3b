"""Datasets and the DataLoader that cuts them into (shuffled) batches, as torch.utils.data.

    dataset = TensorDataset(features, labels)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    for x, y in loader:      # x: (32, ...), y: (32,), the last batch maybe smaller
        ...

Shuffling draws from minigrad's generator (so `minigrad.manual_seed` repeats it), or from
the `generator=` given: a NumPy Generator, or an int seed. Batches are built in the main
process (num_workers is accepted for compatibility; there are no worker processes).
"""

from __future__ import annotations

import collections.abc
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.checks import check_flag, check_iterable
from minigrad.core.variable import Variable
from minigrad.ops.shape import stack


class Dataset:
    """A map-style dataset: subclass it and write __getitem__(index) and __len__()."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} must implement __getitem__(index), returning one sample."
        )


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

    def __getitem__(self, index: int) -> tuple[Variable, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def _rng(generator: Any, caller: str) -> Any:
    """Something with .permutation(n): the given generator, a seeded one, or minigrad's."""
    if generator is None:
        return factories._generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        if generator < 0:
            raise ValueError(f"{caller}: a generator seed must be an int >= 0; got {generator}.")
        return np.random.default_rng(int(generator))
    if callable(getattr(generator, "permutation", None)):
        return generator
    raise TypeError(
        f"{caller}: generator must be None (minigrad's generator, seeded by "
        f"minigrad.manual_seed), an int seed or a numpy.random.Generator; got "
        f"{type(generator).__name__}."
    )


def _length(dataset: Any, caller: str) -> int:
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


def random_split(
    dataset: Dataset, lengths: Sequence[int | float], generator: Any = None
) -> list[Subset]:
    """Split into non-overlapping random Subsets of the given lengths (or fractions summing
    to 1, the remainder handed out one by one, as PyTorch does)."""
    total = _length(dataset, "random_split")
    lengths = check_iterable(
        lengths, "lengths", "random_split",
        "sizes (e.g. [80, 20]) or of fractions summing to 1 (e.g. [0.8, 0.2])",
    )  # fmt: skip
    if lengths and all(isinstance(n, float) for n in lengths) and math.isclose(sum(lengths), 1):
        counts = [int(math.floor(total * fraction)) for fraction in lengths]
        for index in range(total - sum(counts)):
            counts[index % len(counts)] += 1
        lengths = counts
    if any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0 for n in lengths):
        raise ValueError(
            f"random_split: lengths must be ints >= 0 (or fractions summing to 1); got {lengths}."
        )
    if sum(lengths) != total:
        raise ValueError(
            f"Sum of input lengths ({sum(lengths)}) does not equal the length of the input "
            f"dataset ({total})."
        )
    order = _rng(generator, "random_split").permutation(total).tolist()
    stops = np.cumsum(lengths).tolist()
    starts = [0, *stops[:-1]]
    return [Subset(dataset, order[start:stop]) for start, stop in zip(starts, stops)]


def default_collate(batch: list[Any]) -> Any:
    """Samples → one batch: Variables and arrays stacked on a new first dim, numbers into a
    Variable (int64 / float64), and tuples, lists and dicts collated field by field (a tuple
    of fields becomes a list, as in PyTorch)."""
    if not isinstance(batch, Sequence) or isinstance(batch, (str, bytes)):
        raise TypeError(
            f"default_collate takes a list of samples (what a DataLoader gathers for one "
            f"batch); got {type(batch).__name__}."
        )
    if len(batch) == 0:
        raise ValueError(
            "default_collate got an empty batch (a list of 0 samples); a batch needs at least "
            "one sample. Check the sampler or batch_sampler that chose the indices."
        )
    first = batch[0]
    if isinstance(first, Variable):
        return stack(list(batch), 0)
    if isinstance(first, (np.ndarray, np.generic)):
        return Variable(np.stack([np.asarray(sample) for sample in batch]))
    if isinstance(first, (bool, int, float)):
        _check_numbers(batch)
    if isinstance(first, bool):
        return Variable(np.asarray(batch, dtype=np.bool_))
    if isinstance(first, int):
        return Variable(np.asarray(batch, dtype=np.int64))
    if isinstance(first, float):
        return Variable(np.asarray(batch, dtype=np.float64))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        _check_same_keys(batch)
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        sizes = {len(sample) for sample in batch}
        if len(sizes) > 1:
            raise RuntimeError(
                f"each element in list of batch should be of equal size; got sizes "
                f"{sorted(sizes)}. Pad the samples, or pass your own collate_fn."
            )
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(
        f"default_collate: batch must contain Variables, NumPy arrays, numbers, str, dicts or "
        f"lists; found {type(first).__name__}. Pass a collate_fn that batches it."
    )


def _check_numbers(batch: Sequence[Any]) -> None:
    """A batch that starts with a number holds numbers only."""
    for index, sample in enumerate(batch):
        if not isinstance(sample, (bool, int, float)):
            raise TypeError(
                f"default_collate: sample 0 is a {type(batch[0]).__name__}, so every sample "
                f"must be a number; sample {index} is {type(sample).__name__}. Pass your own "
                f"collate_fn for mixed samples."
            )


def _check_same_keys(batch: Sequence[Any]) -> None:
    """Every sample of a batch of dicts is a dict with the first sample's keys."""
    keys = set(batch[0])
    for index, sample in enumerate(batch):
        if not isinstance(sample, collections.abc.Mapping):
            got = f"is a {type(sample).__name__}"
        elif set(sample) != keys:
            got = f"has keys {sorted(map(str, sample))}"
        else:
            continue
        raise RuntimeError(
            f"default_collate: every sample in a batch must be a dict with the same keys; "
            f"sample 0 has keys {sorted(map(str, keys))}, sample {index} {got}. Give every "
            f"sample the same fields, or pass your own collate_fn."
        )


def _tensor_rows(dataset: Dataset, indices: list[int]) -> tuple[Variable, ...] | None:
    """A batch of a TensorDataset (through Subsets) by one indexing per Variable, or None."""
    while isinstance(dataset, Subset):
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:
        return None
    if not all(isinstance(index, (int, np.integer)) for index in indices):
        return None  # a sampler gave other keys: let the dataset itself say what it takes
    rows = np.asarray(indices, dtype=np.int64)
    return tuple(tensor[rows] for tensor in dataset.tensors)


def _check_kinds(
    batch_size: Any,
    shuffle: Any,
    sampler: Any,
    batch_sampler: Any,
    num_workers: Any,
    collate_fn: Any,
    pin_memory: Any,
    drop_last: Any,
) -> None:
    """A TypeError for a DataLoader argument of the wrong kind (checked before any value,
    as PyTorch does)."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int):
        raise TypeError(
            f"DataLoader: num_workers must be an int >= 0; got {type(num_workers).__name__}."
        )
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, int)
    ):
        raise TypeError(
            f"DataLoader: batch_size must be a positive int (or None); got "
            f"{type(batch_size).__name__}."
        )
    if shuffle is not None:
        check_flag(shuffle, "shuffle", "DataLoader")
    check_flag(drop_last, "drop_last", "DataLoader")
    check_flag(pin_memory, "pin_memory", "DataLoader")
    samplers = (
        ("sampler", sampler, "indices"),
        ("batch_sampler", batch_sampler, "lists of indices"),
    )
    for name, value, items in samplers:
        not_iterable = isinstance(value, (str, bytes)) or not isinstance(value, Iterable)
        not_iterable = not_iterable or (isinstance(value, np.ndarray) and value.ndim == 0)
        if value is not None and not_iterable:
            raise TypeError(
                f"DataLoader: {name} must be an iterable of {items} (such as a list or a "
                f"Sampler), or None; got {type(value).__name__}."
            )
    if collate_fn is not None and not callable(collate_fn):
        raise TypeError(
            f"DataLoader: collate_fn must be a function that turns a list of samples into a "
            f"batch (or None for default_collate); got {type(collate_fn).__name__} "
            f"{collate_fn!r}."
        )


class DataLoader:
    """Iterate over a dataset in batches: DataLoader(dataset, batch_size=1, shuffle=False,
    drop_last=False, collate_fn=None, generator=None).

    Each epoch (each `for` over the loader) reshuffles when shuffle=True. len(loader) is
    the number of batches.
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[list[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        *,
        generator: Any = None,
    ) -> None:
        _length(dataset, "DataLoader")
        _check_kinds(
            batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
            pin_memory, drop_last,
        )  # fmt: skip
        if num_workers < 0:
            raise ValueError(f"num_workers must be an int >= 0; got {num_workers!r}.")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size should be a positive int (or None); got {batch_size!r}.")
        if shuffle and sampler is not None:
            raise ValueError("sampler option is mutually exclusive with shuffle; pass one of them.")
        if batch_sampler is not None and (
            batch_size != 1 or shuffle or sampler is not None or drop_last
        ):
            raise ValueError(
                "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler "
                "and drop_last; it decides the batches on its own."
            )
        self.dataset = dataset
        self.batch_size = None if batch_sampler is not None else batch_size
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers  # batches are made in this process all the same
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.pin_memory = pin_memory
        self.drop_last = drop_last
        self.generator = generator
        self._rng = _rng(generator, "DataLoader") if generator is not None else None

    def _order(self) -> list[int]:
        """The sample indices of one epoch, in the order they are served."""
        if self.sampler is not None:
            return list(self.sampler)
        if self.shuffle:
            rng = self._rng if self._rng is not None else factories._generator
            return rng.permutation(len(self.dataset)).tolist()
        return list(range(len(self.dataset)))

    def _index_batches(self) -> Iterator[list[int]]:
        if self.batch_sampler is not None:
            for batch in self.batch_sampler:
                yield check_iterable(batch, "each batch", "DataLoader's batch_sampler", "indices")
            return
        order = self._order()
        stop = len(order) - len(order) % self.batch_size if self.drop_last else len(order)
        for start in range(0, stop, self.batch_size):
            yield order[start : start + self.batch_size]

    def __iter__(self) -> Iterator[Any]:
        if self.batch_size is None and self.batch_sampler is None:
            for index in self._order():
                yield self.dataset[index]
            return
        for indices in self._index_batches():
            batch = None
            if self.collate_fn is default_collate:
                batch = _tensor_rows(self.dataset, indices)
            if batch is not None:
                yield list(batch)
            else:
                yield self.collate_fn([self.dataset[index] for index in indices])

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        count = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return count
        return count // self.batch_size if self.drop_last else math.ceil(count / self.batch_size)


__all__ = [
    "DataLoader",
    "Dataset",
    "Subset",
    "TensorDataset",
    "default_collate",
    "random_split",
]
