"""The operators of a Variable (+, *, <, [], +=, ...) and its in-place methods.

Each is attached to Variable from the op table (`operator` in minigrad/ops/table.py), so
that minigrad/core/variable.py never imports the operations back. `+` and `[]` on text are
Functions of minigrad.text, which registers them in the table (TEXT_OPERATORS).
"""

# ruff: noqa: N807 (these functions are the dunder methods Variable gets: __add__, ...)
from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core import fast_path, grad_mode
from minigrad.core.grad_mode import state
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.arithmetic import Add, Div, Mul, Neg, Pow, Remainder, Sub
from minigrad.ops.comparison import compare
from minigrad.ops.elementwise import Abs, Clone
from minigrad.ops.indexing import Copy, Index, IndexPut
from minigrad.ops.matmul import MatMul
from minigrad.ops.operand import single_dim
from minigrad.ops.shape import Permute, Transpose
from minigrad.ops.table import TEXT_OPERATORS, operator


def _is_text(value: Any) -> bool:
    return isinstance(value, Variable) and isinstance(value.data, str)


def _text_operator(name: str) -> Callable:
    if name not in TEXT_OPERATORS:
        raise TypeError(f"text Variables need minigrad.text for {name}: import minigrad.text.")
    return TEXT_OPERATORS[name]


class Size(tuple):
    """A shape as PyTorch's torch.Size: a tuple of ints, which x.new(size) and a
    distribution's sample(size) read as sizes, never as data."""

    def __repr__(self) -> str:
        return f"minigrad.Size({list(self)})"


@operator
def size(self, dim: int | None = None) -> Any:
    """The shape (a minigrad.Size), or its length along `dim` (PyTorch's spelling)."""
    if dim is None:
        return Size(self.shape)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(
            f"size(): argument 'dim' (position 1) must be an int, not {type(dim).__name__}; "
            f"x.size() is the whole shape."
        )
    if self.ndim == 0:
        raise IndexError(f"size({dim}): a 0-d Variable has no dimensions; use .shape or .numel().")
    return self.shape[single_dim(dim, self.ndim)]


@operator
def __add__(self, other: Any) -> Variable:
    if self.is_text or isinstance(other, str) or _is_text(other):
        return _text_operator("__add__")(self, other)
    return Add.apply(self, other)


@operator
def __radd__(self, other: Any) -> Variable:
    if self.is_text or isinstance(other, str):
        return _text_operator("__add__")(other, self)
    return Add.apply(other, self)


@operator
def __sub__(self, other: Any) -> Variable:
    return Sub.apply(self, other)


@operator
def __rsub__(self, other: Any) -> Variable:
    return Sub.apply(other, self)


@operator
def __mul__(self, other: Any) -> Variable:
    return Mul.apply(self, other)


@operator
def __rmul__(self, other: Any) -> Variable:
    return Mul.apply(other, self)


@operator
def __truediv__(self, other: Any) -> Variable:
    return Div.apply(self, other)


@operator
def __rtruediv__(self, other: Any) -> Variable:
    return Div.apply(other, self)


@operator
def __mod__(self, other: Any) -> Variable:
    """x % y: the remainder with the sign of y, Python's rule (minigrad.remainder)."""
    return Remainder.apply(self, other)


@operator
def __rmod__(self, other: Any) -> Variable:
    return Remainder.apply(other, self)


@operator
def __pow__(self, exponent: Any) -> Variable:
    return Pow.apply(self, exponent)


@operator
def __rpow__(self, base: Any) -> Variable:
    return Pow.apply(base, self)


@operator
def __matmul__(self, other: Any) -> Variable:
    return MatMul.apply(self, other)


@operator
def __rmatmul__(self, other: Any) -> Variable:
    return MatMul.apply(other, self)


@operator
def __neg__(self) -> Variable:
    return Neg.apply(self)


@operator
def __pos__(self) -> Variable:
    return self


@operator
def __abs__(self) -> Variable:
    return Abs.apply(self)


# Comparisons give Variables of bools that are never part of a graph.
@operator
def __lt__(self, other: Any) -> Variable:
    return compare("lt", self, other)


@operator
def __le__(self, other: Any) -> Variable:
    return compare("le", self, other)


@operator
def __gt__(self, other: Any) -> Variable:
    return compare("gt", self, other)


@operator
def __ge__(self, other: Any) -> Variable:
    return compare("ge", self, other)


@operator
def __eq__(self, other: Any) -> Any:  # type: ignore[override]
    if other is None:
        return False  # as in PyTorch: `v == None` is a plain False
    return compare("eq", self, other)


@operator
def __ne__(self, other: Any) -> Any:  # type: ignore[override]
    if other is None:
        return True
    return compare("ne", self, other)


# ------------------------------------------------------------------ views


@operator.as_property
def T(self) -> Variable:  # noqa: N802 (PyTorch's name)
    """All dimensions reversed (the matrix transpose for 2-D data)."""
    if len(self.shape) == 2:
        return Transpose.apply(self, 0, 1)
    return Permute.apply(self, tuple(reversed(range(self.ndim))))


@operator.as_property
def mT(self) -> Variable:  # noqa: N802 (PyTorch's name)
    """The last two dimensions swapped: a batch of matrix transposes."""
    return Transpose.apply(self, -2, -1)


@operator
def __getitem__(self, index: Any) -> Variable:
    if self.is_text:
        return _text_operator("__getitem__")(self, index)
    if state.listener.watching:
        _state_mask_counts(index)
    return Index.apply(self, index)


def _state_mask_counts(index: Any) -> None:
    """A boolean mask picks as many elements as it holds True values, a number the output's
    shape depends on: minigrad.compile checks it before each replay."""
    for part in index if isinstance(index, tuple) else (index,):
        mask = part._data if isinstance(part, Variable) and not part.is_text else part
        if type(mask) is np.ndarray and mask.dtype == bool:
            count = int(np.count_nonzero(mask))
            state.listener.assume(
                mask,
                functools.partial(_holds_true_values, count=count),
                f"indexing: the boolean mask holds {count} True values",
            )


def _holds_true_values(mask: np.ndarray, count: int) -> bool:
    return int(np.count_nonzero(mask)) == count


# ------------------------------------------------------------------ in place


@operator
def _check_inplace(self) -> None:
    if state.grad_enabled and self.grad_fn is None and self._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. "
            "Wrap the update in `with minigrad.no_grad():` (as optimizers do), or work "
            "on a copy with .clone()."
        )
    if self.is_text:
        raise TypeError("text Variables are immutable; use `text = text + other` instead.")
    if self._inference and not state.inference_enabled:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed: this "
            "Variable was made inside minigrad.inference_mode(). Change a .clone() of it "
            "instead (made outside inference_mode), or make the change inside inference_mode()."
        )


@operator
def _assign_inplace(self, result: Variable) -> Variable:
    """Write `result` into this Variable's array and take over its history."""
    data, new = self._data, result._data
    if new.dtype != data.dtype and not np.can_cast(new.dtype, data.dtype, casting="same_kind"):
        raise RuntimeError(  # PyTorch's class
            f"result type {result.data.dtype} can't be cast to the desired output type "
            f"{self._data.dtype} of this in-place operation; use the out-of-place form "
            f"(x = x + y) or convert x first."
        )
    if new.shape != data.shape:
        raise RuntimeError(
            f"output with shape {self.shape} doesn't match the broadcast shape "
            f"{result.shape} of the in-place operation; use the out-of-place form."
        )
    if not data.flags.writeable:
        raise RuntimeError(
            "this Variable's data is a read-only view (made by expand); call .clone() "
            "before changing it in place."
        )
    # minigrad.compile replays this copy; forward mode refuses
    state.listener.copy_into(self, new)
    data[...] = new
    self._shared_version_counter().value += 1
    if result.grad_fn is not None:
        if self._grad_fn is not None:  # this node's output is overwritten: see BackwardNode
            self._grad_fn._overwritten = (self._output_nr, weakref.ref(self))
        retained = self._retains_grad
        if retained:  # .grad follows the Variable's latest value, as in PyTorch
            self.grad_fn._retained.pop(self._output_nr, None)
            self._retains_grad = False
        self._grad_fn = result._grad_fn
        self._output_nr = result._output_nr
        self._requires_grad = True
        if retained:
            self.retain_grad()
    return self


@operator
def _inplace(self, operation: Callable[[Variable], Variable]) -> Variable:
    self._check_inplace()
    if not state.grad_enabled:
        return self._assign_inplace(operation(self))
    result = operation(self._snapshot())
    counter = self._version_counter
    shares_data = self._is_view or (counter is not None and counter.has_live_view_besides(self))
    if result.requires_grad and shares_data:
        # The other Variables over this data would need their history rebased too,
        # which minigrad does not do: refuse rather than give a silently wrong gradient.
        raise RuntimeError(
            "an in-place operation on a view (a slice, reshape or transpose of another "
            "Variable), or on a Variable while a view of it is alive, cannot be recorded "
            "for backward. Work out of place (y = minigrad.cat(...), y = y * mask, ...), "
            "or take the view after the change."
        )
    return self._assign_inplace(result)


@operator
def _snapshot(self) -> Variable:
    """The current values in their own array, with this Variable's history.

    A recorded operation may save its input for backward, but our data is about to be
    overwritten, so it gets this copy instead.
    """
    if not state.listener.watching:
        original = Variable._make(self._data.copy())
    else:
        # minigrad.compile records the copy (a replay makes it again) as a Clone of the
        # values alone; the history below is this Variable's own.
        with grad_mode.no_grad():
            original = Clone.apply(Variable._make(self._data))
    original._grad_fn = self._grad_fn
    original._output_nr = self._output_nr
    original._requires_grad = self._requires_grad
    return original


@operator
def zero_(self) -> Variable:
    return self.fill_(0)


@operator
def fill_(self, value: Any) -> Variable:
    """Every element set to `value`: a number, or a 0-d Variable (as PyTorch)."""
    _check_fill_value(self, value)
    return self.copy_(value)


def _check_fill_value(target: Variable, value: Any) -> None:
    """PyTorch's checks on fill_'s value: one number that the target's dtype can hold."""
    if isinstance(value, (Variable, np.ndarray)) and not getattr(value, "is_text", False):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions. To copy a Variable in, use copy_(source)."
            )
        return
    if isinstance(value, (bool, np.bool_)) or is_on_cuda(value):
        return
    if not isinstance(value, (int, float, complex, np.number)):
        raise TypeError(
            f"fill_() expects a number or a 0-d Variable; got {type(value).__name__} "
            f"{value!r:.40}. For several values use copy_(minigrad.tensor(...))."
        )
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        raise OverflowError(
            f"fill_(): the int {value} is too big to convert: no dtype holds it. Pass it as a "
            f"float, {float(value)!r}, into a float Variable."
        )
    if target.is_text or not _overflows(value, target.dtype):
        return
    raise RuntimeError(
        f"fill_(): value {value!r} cannot be converted to type {target.dtype} without "
        f"overflow. Fill with a value the dtype holds, or convert first, e.g. x.double()."
    )


def _overflows(value: Any, dtype: np.dtype) -> bool:
    """Whether the number does not fit `dtype` (PyTorch refuses it, NumPy would wrap)."""
    if dtype.kind in "iu":
        if isinstance(value, (complex, np.complexfloating)):
            return True
        if isinstance(value, (float, np.floating)) and not np.isfinite(value):
            return True
        limits = np.iinfo(dtype)
        return not limits.min <= value < limits.max + 1
    if dtype.kind == "f":
        if isinstance(value, (complex, np.complexfloating)) and value.imag != 0:
            return True
        magnitude = abs(complex(value).real)
        return bool(np.isfinite(magnitude) and magnitude > np.finfo(dtype).max)
    return False


@operator
def copy_(self, source: Any) -> Variable:
    """Overwrite every element with `source` (broadcast); the old values get no gradient."""
    if not (_is_operand(source)):
        # Before the in-place checks, as PyTorch checks the argument's kind first.
        raise TypeError(
            f"copy_ and fill_ expect a Variable, a NumPy array or a number; got "
            f"{type(source).__name__}. Make a Variable of a list first: minigrad.tensor(...)."
        )
    return self._inplace(lambda v: Copy.apply(v, source))


def _is_operand(value: Any) -> bool:
    numeric_kinds = (Variable, np.ndarray, np.generic, int, float, complex)
    return isinstance(value, numeric_kinds) or is_on_cuda(value)


# x += y is x.add_(y); add_ and friends come from the op table (inplace=True).
@operator
def __iadd__(self, other: Any) -> Variable:
    if fast_path.in_place(np.add, self, other):  # under no_grad, as optimizers update
        return self
    return self.add_(other)


@operator
def __isub__(self, other: Any) -> Variable:
    if fast_path.in_place(np.subtract, self, other):  # under no_grad, as optimizers update
        return self
    return self.sub_(other)


@operator
def __imul__(self, other: Any) -> Variable:
    if fast_path.in_place(np.multiply, self, other):  # under no_grad, as optimizers update
        return self
    return self.mul_(other)


@operator
def __itruediv__(self, other: Any) -> Variable:
    if fast_path.in_place(np.true_divide, self, other):  # under no_grad, as optimizers update
        return self
    return self.div_(other)


@operator
def __imod__(self, other: Any) -> Variable:
    return self.remainder_(other)


@operator
def __setitem__(self, index: Any, value: Any) -> None:
    self._inplace(lambda v: IndexPut.apply(v, index, value))
