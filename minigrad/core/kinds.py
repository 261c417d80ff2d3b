"""Kinds of values: the little the engine needs to know about a Variable's data.

The engine never looks inside a gradient. For each kind of data it asks this table:

- `zeros(shape, dtype)`: the gradient of an output that received none;
- `add(first, second)`: two gradients for the same value, summed (numbers) or joined
  (feedback texts);
- `accumulate(leaf, grad, create_graph)`: the leaf's new `.grad` once `grad` arrives;
- `seed(output, index)`: the gradient an output starts backward with when none is given;
- `name`: how errors describe the kind ("numeric", "text").

NumPy arrays are built in (below). `minigrad.text` registers `str` (feedback joined with
a blank line), and the device code registers arrays in GPU memory (zeros on the device).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from minigrad.core.variable import Variable


class Kind(NamedTuple):
    """One row of the table: how the engine handles one type of data."""

    name: str
    zeros: Callable[[Any, Any], Any]
    add: Callable[[Variable, Variable], Variable]
    accumulate: Callable[[Variable, Variable, bool], Variable]
    seed: Callable[[Variable, int], Any]
    has_shape: bool = True


def _accumulate_numbers(leaf: Variable, grad: Variable, create_graph: bool) -> Variable:
    """d(loss)/d(leaf) so far plus the new share.

    The engine may hand the same gradient to several inputs (a + b gives both the same one),
    so a leaf keeps its own copy: changing one .grad in place never changes another."""
    if leaf._grad is not None:
        # The sum is a new array already, and an operation minigrad.compile records.
        if grad.dtype != leaf._grad.dtype:
            grad = grad.to(leaf._grad.dtype)
        return leaf._grad + grad
    if create_graph:
        return grad.clone()  # recorded, so higher derivatives still flow through it
    return type(grad)._make(grad._data.astype(leaf._data.dtype))


def _seed_numbers(output: Variable, index: int) -> Any:
    """d(output)/d(output) = 1, defined only for an output with one element."""
    if output._data.size != 1:
        raise RuntimeError(
            f"grad can be implicitly created only for scalar outputs; this output has "
            f"shape {output.shape}. Reduce it first (e.g. .sum()) or pass a gradient of "
            f"that shape."
        )
    return np.ones_like(output._data)


NUMBERS = Kind(
    "numeric",
    zeros=lambda shape, dtype: np.zeros(shape, dtype=dtype),
    add=lambda first, second: first + second,
    accumulate=_accumulate_numbers,
    seed=_seed_numbers,
)

# The kind of each type of data; NumPy arrays are numbers.
KINDS: dict[type, Kind] = {np.ndarray: NUMBERS}


def register(data_type: type, kind: Kind) -> None:
    """Teach the engine a new type of data (done by minigrad.text and the device code)."""
    KINDS[data_type] = kind


def kind_of(data: Any) -> Kind | None:
    """The kind of `data`, or None for a value the engine cannot differentiate."""
    return KINDS.get(type(data)) or (NUMBERS if isinstance(data, np.ndarray) else None)


def shape_of(data: Any) -> Any:
    """What the engine remembers of an input: its shape, or the name of a shapeless kind."""
    kind = kind_of(data)
    return data.shape if kind is None or kind.has_shape else kind.name


def describe(data: Any) -> str:
    """'numeric', 'text', ...: how an error names the kind of `data`."""
    kind = kind_of(data)
    return kind.name if kind is not None else type(data).__name__
