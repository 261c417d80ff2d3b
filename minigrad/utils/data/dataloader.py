"""DataLoader: a dataset served in (shuffled) batches, as torch.utils.data's.

    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    for x, y in loader:      # x: (32, ...), y: (32,), the last batch maybe smaller
        ...

A map-style dataset is visited in the order of a sampler: SequentialSampler, or
RandomSampler(dataset, generator=generator) with shuffle=True, or the sampler= given;
a BatchSampler groups the indices (batch_size=, drop_last=), unless batch_sampler= gives
the groups itself. An IterableDataset is batched in the order its iterator yields.
collate_fn turns each group of samples into a batch (default_collate; with
batch_size=None each sample goes through default_convert alone).

Batches are made in the main process: num_workers, timeout, worker_init_fn,
multiprocessing_context, prefetch_factor, persistent_workers and pin_memory are checked as
PyTorch checks them and accepted for compatibility, but there are no worker processes, so
worker_init_fn is never called and get_worker_info() is always None.
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.context
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from minigrad.core.checks import check_flag, check_iterable
from minigrad.core.variable import Variable
from minigrad.utils.data.collate import default_collate, default_convert
from minigrad.utils.data.dataset import IterableDataset, Subset, TensorDataset, map_style_length
from minigrad.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    SequentialSampler,
    random_source,
)

# What PyTorch refuses to change on a DataLoader once it is built.
_FIXED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


def get_worker_info() -> None:
    """Information about the worker process running this code: None, as in the main
    process, since minigrad's DataLoader starts no workers."""
    return None


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


def _check_worker_options(
    num_workers: int,
    timeout: Any,
    worker_init_fn: Any,
    multiprocessing_context: Any,
    prefetch_factor: Any,
    persistent_workers: Any,
    pin_memory_device: Any,
    in_order: Any,
) -> None:
    """The worker options, checked as PyTorch checks them (kinds first), though no worker
    ever runs."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"DataLoader: timeout must be a number of seconds; got {timeout!r}.")
    if worker_init_fn is not None and not callable(worker_init_fn):
        raise TypeError(
            f"DataLoader: worker_init_fn must be a function of the worker id (or None); got "
            f"{type(worker_init_fn).__name__}."
        )
    if prefetch_factor is not None and (
        isinstance(prefetch_factor, bool) or not isinstance(prefetch_factor, int)
    ):
        raise TypeError(
            f"DataLoader: prefetch_factor must be an int (or None); got "
            f"{type(prefetch_factor).__name__}."
        )
    check_flag(persistent_workers, "persistent_workers", "DataLoader")
    check_flag(in_order, "in_order", "DataLoader")
    if not isinstance(pin_memory_device, str):
        raise TypeError(
            f"DataLoader: pin_memory_device must be a str; got "
            f"{type(pin_memory_device).__name__}."
        )
    if num_workers < 0:
        raise ValueError(
            f"num_workers option should be non-negative; use num_workers=0 to disable "
            f"multiprocessing. Got {num_workers}."
        )
    if timeout < 0:
        raise ValueError(f"timeout option should be non-negative; got {timeout}.")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing: let "
            "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
        )
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError(f"prefetch_factor option should be non-negative; got {prefetch_factor}.")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0.")
    _check_context(multiprocessing_context, num_workers)


def _check_context(context: Any, num_workers: int) -> None:
    """multiprocessing_context: None, a start method's name or a multiprocessing context,
    and only with num_workers > 0 (PyTorch's errors)."""
    if context is None:
        return
    if num_workers == 0:
        raise ValueError(
            f"multiprocessing_context can only be used with multi-process loading "
            f"(num_workers > 0), but got num_workers={num_workers}."
        )
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(
                f"multiprocessing_context option should specify a valid start method in "
                f"{methods!r}, but got multiprocessing_context={context!r}."
            )
    elif not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(
            f"multiprocessing_context option should be a valid context object or a string "
            f"specifying the start method, but got multiprocessing_context={context!r}."
        )


def _tensor_rows(dataset: Any, indices: list[int]) -> tuple[Variable, ...] | None:
    """A batch of a TensorDataset (through Subsets) by one indexing per Variable, or None."""
    while type(dataset) is Subset:  # a subclass may index in its own way
        if not all(isinstance(i, (int, np.integer)) for i in indices):
            return None
        size = len(dataset.indices)
        if not all(-size <= i < size for i in indices):
            return None  # let Subset say which index is out of range
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:
        return None
    if not all(isinstance(index, (int, np.integer)) for index in indices):
        return None  # a sampler gave other keys: let the dataset itself say what it takes
    rows = np.asarray(indices, dtype=np.int64)
    return tuple(tensor[rows] for tensor in dataset.tensors)


class DataLoader:
    """Iterate over a dataset in batches: DataLoader(dataset, batch_size=1, shuffle=None,
    sampler=None, batch_sampler=None, num_workers=0, collate_fn=None, pin_memory=False,
    drop_last=False, timeout=0, worker_init_fn=None, multiprocessing_context=None,
    generator=None, *, prefetch_factor=None, persistent_workers=False,
    pin_memory_device='', in_order=True).

    Each epoch (each `for` over the loader) reshuffles when shuffle=True, drawing from
    `generator` (a minigrad.Generator, a NumPy Generator or an int seed; None: minigrad's
    global generator). len(loader) is the number of batches.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[list[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        iterable = isinstance(dataset, IterableDataset)
        if not iterable:
            map_style_length(dataset, "DataLoader")
        _check_kinds(
            batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
            pin_memory, drop_last,
        )  # fmt: skip
        _check_worker_options(
            num_workers, timeout, worker_init_fn, multiprocessing_context, prefetch_factor,
            persistent_workers, pin_memory_device, in_order,
        )  # fmt: skip
        if generator is not None:
            random_source(generator, "DataLoader")  # its kind, now rather than at the first epoch
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size should be a positive int (or None); got {batch_size!r}.")
        if iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle; pass one of them.")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last; it decides the batches on its own."
                )
            batch_size = None
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last."
            )
        if sampler is None and not iterable:
            if shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, bool(drop_last))
        auto_collation = batch_size is not None or batch_sampler is not None
        if collate_fn is None:
            collate_fn = default_collate if auto_collation else default_convert
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn
        self.num_workers = num_workers  # batches are made in this process all the same
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn  # never called: there are no workers
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._auto_collation = auto_collation
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_initialized", False) and name in _FIXED:
            raise ValueError(
                f"{name} attribute should not be set after {type(self).__name__} is "
                f"initialized; build a new {type(self).__name__} with {name}={value!r}."
            )
        super().__setattr__(name, value)

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self.dataset, IterableDataset):
            return self._from_stream()
        if not self._auto_collation:
            return (self.collate_fn(self.dataset[index]) for index in self.sampler)
        return self._batches()

    def _batches(self) -> Iterator[Any]:
        """A map-style dataset's batches, one per group of indices of the batch sampler."""
        for group in self.batch_sampler:
            indices = check_iterable(group, "each batch", "DataLoader's batch_sampler", "indices")
            if self.collate_fn is default_collate:
                rows = _tensor_rows(self.dataset, indices)
                if rows is not None:
                    yield list(rows)
                    continue
            yield self.collate_fn(self._samples(indices))

    def _samples(self, indices: list) -> list:
        """The samples at `indices`: by the dataset's own __getitems__ when it has one (a
        whole batch at once, as PyTorch's DataLoader asks), else one by one."""
        many = getattr(self.dataset, "__getitems__", None)
        if callable(many):
            return many(indices)
        return [self.dataset[index] for index in indices]

    def _from_stream(self) -> Iterator[Any]:
        """An IterableDataset's samples in its order: batch_size at a time, the last group
        shorter (or dropped when drop_last=True); each alone with batch_size=None."""
        stream = iter(self.dataset)
        if not self._auto_collation:
            for sample in stream:
                yield self.collate_fn(sample)
            return
        while True:
            group = []
            for sample in stream:
                group.append(sample)
                if len(group) == self.batch_size:
                    break
            if not group or (self.drop_last and len(group) < self.batch_size):
                return
            yield self.collate_fn(group)
            if len(group) < self.batch_size:
                return

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = len(self.dataset)
            if self.batch_size is None:
                return length
            if self.drop_last:
                return length // self.batch_size
            return math.ceil(length / self.batch_size)
        if self._auto_collation:
            return len(self.batch_sampler)
        return len(self.sampler)


def _check_iterable_options(shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    """PyTorch's ValueErrors: an IterableDataset's order is its iterator's."""
    if shuffle not in (False, None):
        raise ValueError(
            f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
            f"shuffle={shuffle}. An IterableDataset yields samples in its own order; shuffle "
            f"inside its __iter__ (e.g. with a buffer) instead."
        )
    if sampler is not None:
        raise ValueError(
            f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
            f"sampler={sampler!r}. Samplers pick indices, which an IterableDataset has none of."
        )
    if batch_sampler is not None:
        raise ValueError(
            f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
            f"got batch_sampler={batch_sampler!r}. Use batch_size= instead."
        )


__all__ = ["DataLoader", "get_worker_info"]
