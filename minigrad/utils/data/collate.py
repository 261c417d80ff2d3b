"""default_collate and default_convert: samples into batches, as torch.utils.data's.

    default_collate([(x0, 0), (x1, 1)])    ->  [stack([x0, x1]), Variable([0, 1])]

Field by field, by the first sample's kind: Variables and NumPy arrays are stacked on a new
first dimension; Python ints become an int64 Variable (bools a bool one; a float among the
ints makes it float64, as minigrad.tensor does), floats a float64 one, NumPy scalars a
Variable of their dtype; str and bytes stay a list; a dict (of the first sample's type),
a namedtuple or a list keeps its type, each field collated; a tuple becomes a list.
default_convert, what a DataLoader with batch_size=None applies to each sample, only turns
NumPy arrays and scalars into Variables, inside dicts, tuples and lists too.
"""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.variable import Variable
from minigrad.ops.shape import stack

# NumPy dtypes no Variable holds: text, bytes and Python objects (dtype.kind).
_NOT_NUMBERS = "SaUO"


def _not_collatable(found: Any) -> TypeError:
    return TypeError(
        f"default_collate: batch must contain Variables, NumPy arrays, numbers, str, dicts or "
        f"lists; found {found}. Pass a collate_fn that batches it."
    )


def default_collate(batch: Sequence[Any]) -> Any:
    """Samples → one batch (see the module docstring for each kind)."""
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
    if isinstance(first, np.ndarray):
        if first.dtype.kind in _NOT_NUMBERS:
            raise _not_collatable(f"a NumPy array of dtype {first.dtype}")
        return stack([factories.as_tensor(sample) for sample in batch], 0)
    if isinstance(first, (np.bool_, np.number)):
        return Variable(np.asarray(batch))
    if isinstance(first, (bool, int, float)):
        return _numbers(batch)
    if isinstance(first, (str, bytes)):
        return batch
    if isinstance(first, collections.abc.Mapping):
        _check_same_keys(batch)
        fields = {key: default_collate([sample[key] for sample in batch]) for key in first}
        return _same_mapping(first, fields)
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(first, Sequence):
        _check_same_sizes(batch)
        fields = [default_collate(field) for field in zip(*batch)]
        return fields if isinstance(first, tuple) else _same_sequence(first, fields)
    raise _not_collatable(type(first))


def _numbers(batch: Sequence[Any]) -> Variable:
    """A batch of Python numbers as one Variable: float64 when the first is a float, else
    what minigrad.tensor makes of them (int64, bool, or float64 with a float among ints)."""
    for index, sample in enumerate(batch):
        if not isinstance(sample, (bool, int, float)):
            raise TypeError(
                f"default_collate: sample 0 is a {type(batch[0]).__name__}, so every sample "
                f"must be a number; sample {index} is {type(sample).__name__}. Pass your own "
                f"collate_fn for mixed samples."
            )
    if isinstance(batch[0], float):
        return factories.tensor(list(batch), dtype=np.float64)
    return factories.tensor(list(batch))


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


def _check_same_sizes(batch: Sequence[Any]) -> None:
    """Every sample of a batch of sequences is a sequence of the first one's length."""
    for index, sample in enumerate(batch):
        if not isinstance(sample, Sequence) or isinstance(sample, (str, bytes)):
            raise TypeError(
                f"default_collate: sample 0 is a {type(batch[0]).__name__}, so every sample "
                f"must be a sequence; sample {index} is {type(sample).__name__}."
            )
    sizes = {len(sample) for sample in batch}
    if len(sizes) > 1:
        raise RuntimeError(
            f"each element in list of batch should be of equal size; got sizes "
            f"{sorted(sizes)}. Pad the samples, or pass your own collate_fn."
        )


def _same_mapping(first: Any, fields: dict) -> Any:
    """The collated fields in a mapping of first's type (an OrderedDict stays one), or a
    dict when that type cannot be built from one."""
    if isinstance(first, collections.abc.MutableMapping):
        clone = copy.copy(first)
        clone.update(fields)
        return clone
    try:
        return type(first)(fields)
    except TypeError:
        return fields


def _same_sequence(first: Any, fields: list) -> Any:
    """The collated fields in a sequence of first's type (a list stays a list), or a list
    when that type cannot be built from one."""
    if isinstance(first, collections.abc.MutableSequence):
        clone = copy.copy(first)
        for index, field in enumerate(fields):
            clone[index] = field
        return clone
    try:
        return type(first)(fields)
    except TypeError:
        return fields


def default_convert(data: Any) -> Any:
    """One sample with its NumPy arrays and scalars as Variables (sharing an array's
    memory, as torch.as_tensor), inside dicts, namedtuples, tuples (which become lists)
    and lists too; anything else unchanged."""
    if isinstance(data, Variable):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in _NOT_NUMBERS else factories.as_tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return factories.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(default_convert(field) for field in data))
    if isinstance(data, tuple):
        return [default_convert(field) for field in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence(data, [default_convert(field) for field in data])
    return data


__all__ = ["default_collate", "default_convert"]
