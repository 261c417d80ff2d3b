"""Samplers: the order in which a DataLoader visits a dataset's samples, as
torch.utils.data's.

    SequentialSampler(data)                  0, 1, 2, ...
    RandomSampler(data, generator=g)         a new permutation each epoch
    WeightedRandomSampler([0.1, 0.9], 8)     indices drawn with those weights
    BatchSampler(sampler, 3, drop_last)      [i, j, k], [l, m, n], ...

A random sampler draws from `generator=`: a minigrad.Generator, a NumPy Generator, an int
seed (a NumPy Generator seeded with it, made once, so each epoch draws new numbers and a
sampler built again repeats them), or None for minigrad's global generator, which
minigrad.manual_seed seeds. The numbers are minigrad's, not PyTorch's (generator.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.variable import Variable
from minigrad.generator import Generator


def random_source(generator: Any, caller: str) -> Any:
    """What a sampler draws from, checked: None, a minigrad.Generator, or something with
    NumPy Generator's methods (an int seed becomes one now)."""
    if generator is None or isinstance(generator, Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        if generator < 0:
            raise ValueError(f"{caller}: a generator seed must be an int >= 0; got {generator}.")
        return np.random.default_rng(int(generator))
    if callable(getattr(generator, "permutation", None)):
        return generator
    raise TypeError(
        f"{caller}: generator must be None (minigrad's generator, seeded by "
        f"minigrad.manual_seed), a minigrad.Generator, an int seed or a "
        f"numpy.random.Generator; got {type(generator).__name__}."
    )


def numbers_of(source: Any) -> np.random.Generator:
    """The NumPy generator to draw from now: a minigrad.Generator's (manual_seed replaces
    it) or the global one (likewise) is looked up at each draw."""
    if source is None or isinstance(source, Generator):
        return factories.numpy_generator(source)
    return source


def _positive_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0


def _sized(data_source: Any, caller: str) -> int:
    """len(data_source), or a TypeError that says a sampler needs a length."""
    try:
        return len(data_source)
    except TypeError:
        raise TypeError(
            f"{caller} needs a data_source with a length (a Dataset with __len__, a list, "
            f"range(n)); got {type(data_source).__name__}."
        ) from None


class Sampler:
    """Subclass it: __iter__ yields the indices (or lists of indices, for a batch sampler)
    of one epoch; __len__, if written, says how many."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(
            f"{type(self).__name__} must implement __iter__, yielding the indices of one epoch."
        )


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1, every epoch."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(_sized(self.data_source, "SequentialSampler")))

    def __len__(self) -> int:
        return _sized(self.data_source, "SequentialSampler")


class RandomSampler(Sampler):
    """Indices in random order: without replacement, a new permutation of 0 .. n-1 each
    epoch (num_samples > n chains permutations, cutting the last); with replacement,
    num_samples indices drawn uniformly from 0 .. n-1.

    Drawn at the start of each pass over it (PyTorch seeds a fresh generator from the
    global one there, and draws a discarded permutation when num_samples is a multiple of
    n; minigrad draws from the generator itself, and only what it yields)."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement!r}."
            )
        if not _positive_int(self.num_samples):
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples!r}. (Without num_samples it is the dataset's "
                f"length: an empty dataset cannot be shuffled.)"
            )
        self._source = random_source(generator, "RandomSampler")

    @property
    def num_samples(self) -> int:
        """How many indices an epoch yields: num_samples, or the dataset's length."""
        if self._num_samples is None:
            return _sized(self.data_source, "RandomSampler")
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        size = _sized(self.data_source, "RandomSampler")
        count = self.num_samples
        numbers = numbers_of(self._source)
        if self.replacement:
            yield from numbers.integers(0, size, count).tolist()
            return
        for _ in range(count // size):
            yield from numbers.permutation(size).tolist()
        if count % size:
            yield from numbers.permutation(size)[: count % size].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a new random order each epoch (without replacement)."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator
        self._source = random_source(generator, "SubsetRandomSampler")

    def __iter__(self) -> Iterator[int]:
        size = _sized(self.indices, "SubsetRandomSampler")
        for position in numbers_of(self._source).permutation(size).tolist():
            yield self.indices[position]

    def __len__(self) -> int:
        return _sized(self.indices, "SubsetRandomSampler")


class WeightedRandomSampler(Sampler):
    """num_samples indices of 0 .. len(weights)-1, index i with probability
    weights[i] / sum(weights): multinomial(weights, num_samples, replacement) each epoch."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        if not _positive_int(num_samples):
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={num_samples!r}."
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement!r}."
            )
        self.weights = _weights(weights)
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator
        self._source = random_source(generator, "WeightedRandomSampler")

    def __iter__(self) -> Iterator[int]:
        rows = self.weights.data.reshape(1, -1)
        numbers = numbers_of(self._source)
        drawn = factories.multinomial_rows(rows, self.num_samples, self.replacement, numbers)
        yield from drawn[0].tolist()

    def __len__(self) -> int:
        return self.num_samples


def _weights(weights: Any) -> Variable:
    """The weights as a 1-D float64 Variable, or PyTorch's errors."""
    if isinstance(weights, Variable):
        values = weights.detach().cpu().numpy() if not weights.is_text else weights.data
    else:
        values = weights
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"WeightedRandomSampler: weights must be a sequence of numbers (a list, an array "
            f"or a Variable); got {type(weights).__name__}."
        ) from None
    if array.ndim != 1:
        raise ValueError(
            f"weights should be a 1d sequence but given weights have shape {array.shape}."
        )
    return Variable(array)


class BatchSampler(Sampler):
    """Lists of batch_size indices from `sampler` (any iterable of indices); the last list
    is shorter, or dropped when drop_last=True."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not _positive_int(batch_size):
            raise ValueError(
                f"batch_size should be a positive integer value, but got "
                f"batch_size={batch_size!r}."
            )
        if not isinstance(drop_last, bool):
            raise ValueError(
                f"drop_last should be a boolean value, but got drop_last={drop_last!r}."
            )
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while True:
            batch = list(itertools.islice(indices, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        count = _sized(self.sampler, "BatchSampler")
        if self.drop_last:
            return count // self.batch_size
        return (count + self.batch_size - 1) // self.batch_size


__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]
