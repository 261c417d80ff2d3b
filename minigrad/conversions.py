"""A Variable's conversions to plain Python and NumPy values, attached to Variable here.

item(), numpy(), tolist(), len(), bool(), float(), int(), `__index__` (a 0-d integer
Variable indexes a list), type(), and `__array_ufunc__`, which hands `array * v` back to
the Variable and refuses other NumPy functions on a Variable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core import grad_mode, mistakes
from minigrad.core.tracing import tracer
from minigrad.core.variable import Variable


def item(self: Variable) -> Any:
    """The single value as a Python number (or the text of a text Variable)."""
    if self.is_text:
        return self._data
    if self._data.size != 1:
        raise ValueError(
            f"only one element Variables can be converted to Python scalars; this one "
            f"has shape {self.shape}. Pick one element first, e.g. v[0].item()."
        )
    value = self._data.item()
    if tracer.recorder is not None:  # minigrad.compile: a value leaves the arrays here
        tracer.recorder.item(self, value)
    return value


def numpy(self: Variable) -> np.ndarray:
    """The data as a NumPy array (shared, not copied).

    As in PyTorch, a Variable that requires grad refuses while grad mode is on (NumPy
    would lose the graph silently); inside a Function's forward or under no_grad it
    is allowed."""
    if tracer.recorder is not None:
        tracer.recorder.escape(self, "numpy()")
    if self.is_text:
        raise TypeError("a text Variable has no NumPy form; use .item() or .data for its str.")
    if self._requires_grad and grad_mode._state.enabled:
        raise RuntimeError(
            "Can't call numpy() on a Variable that requires grad. Use var.detach().numpy() instead."
        )
    if devices.is_on_cuda(self._data):
        return self._data.to_host()  # a copy: NumPy cannot see GPU memory
    return self._data


def __array__(self: Variable, dtype: Any = None, copy: bool | None = None) -> np.ndarray:  # noqa: N807
    """np.asarray(v), np.array([v, w]): the data, as numpy() gives it (and refuses it)."""
    data = numpy(self)
    if dtype is not None and data.dtype != dtype:
        return data.astype(dtype)
    return data.copy() if copy else data


def tolist(self: Variable) -> Any:
    if tracer.recorder is not None:
        tracer.recorder.escape(self, "tolist()")
    return self._data if self.is_text else self._data.tolist()


def __len__(self: Variable) -> int:  # noqa: N807 (attached as Variable.__len__)
    if self.is_text:
        return len(self._data)
    if self.ndim == 0:
        raise TypeError("len() of a 0-d Variable is undefined; use .item() for its value.")
    return self.shape[0]


def __bool__(self: Variable) -> bool:  # noqa: N807
    if tracer.recorder is not None:
        tracer.recorder.escape(self, "bool()")
    if self.is_text:
        return bool(self._data)
    if self._data.size == 0:
        raise RuntimeError("a Variable with no elements has no truth value.")
    if self._data.size != 1:
        raise RuntimeError(
            f"The truth value of a Variable with more than one element is ambiguous "
            f"(shape {self.shape}); use (v > 0).data.all() or .any()."
        )
    return bool(self._data)


def __float__(self: Variable) -> float:  # noqa: N807
    if self.is_text:
        raise TypeError("float() of a text Variable: only numeric Variables convert to numbers.")
    return float(self.item())


def __int__(self: Variable) -> int:  # noqa: N807
    if self.is_text:
        raise TypeError("int() of a text Variable: only numeric Variables convert to numbers.")
    return int(self.item())


def __index__(self: Variable) -> int:  # noqa: N807
    """As an index: classes[prediction.argmax()] works for a single integer value."""
    if self.is_text or self._data.dtype.kind not in "iu" or self._data.size != 1:
        kind = "a text Variable" if self.is_text else f"dtype {self.dtype}, shape {self.shape}"
        raise TypeError(
            f"only integer Variables of a single element can be converted to an index; got "
            f"{kind}. Use .long() for floats, or pick one element first."
        )
    return int(self.item())


# PyTorch's legacy type names (x.type() -> "torch.FloatTensor"), by NumPy dtype.
_TYPE_NAMES = {
    "float16": "torch.HalfTensor",
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "int8": "torch.CharTensor",
    "uint8": "torch.ByteTensor",
    "int16": "torch.ShortTensor",
    "int32": "torch.IntTensor",
    "int64": "torch.LongTensor",
    "bool": "torch.BoolTensor",
}


def type_name_or_cast(self: Variable, dtype: Any = None) -> Any:
    """With no dtype, the type's name ("torch.FloatTensor"); with one (a dtype, or such a
    name), this Variable in that dtype (itself when it already has it), as .to(dtype)."""
    if self.is_text:
        raise TypeError("type() is for numeric Variables; a text Variable has no dtype.")
    if dtype is None:
        return _TYPE_NAMES.get(str(self._data.dtype), f"torch.{self._data.dtype}")
    if isinstance(dtype, str):
        names = {name: dtype_name for dtype_name, name in _TYPE_NAMES.items()}
        if dtype not in names:
            raise ValueError(
                f"type() expects a dtype or one of {sorted(names)}; got {dtype!r}."
            )
        dtype = names[dtype]
    return self.to(dtype)


# The NumPy ufuncs behind the operators, with the Variable's method for each side.
_OPERATORS = {
    np.add: ("__add__", "__radd__"),
    np.subtract: ("__sub__", "__rsub__"),
    np.multiply: ("__mul__", "__rmul__"),
    np.divide: ("__truediv__", "__rtruediv__"),
    np.power: ("__pow__", "__rpow__"),
    np.matmul: ("__matmul__", "__rmatmul__"),
    np.less: ("__lt__", "__gt__"),
    np.less_equal: ("__le__", "__ge__"),
    np.greater: ("__gt__", "__lt__"),
    np.greater_equal: ("__ge__", "__le__"),
    np.equal: ("__eq__", "__eq__"),
    np.not_equal: ("__ne__", "__ne__"),
}


# `array * v` makes NumPy call np.multiply(array, v), which lands here: the operator is
# handed back to the Variable (v.__rmul__(array)). Any other NumPy function on a
# Variable, np.exp(v) say, would drop the graph, so it raises and says what to write.
def __array_ufunc__(  # noqa: N807
    self: Variable, ufunc: Any, method: str, *inputs: Any, **kwargs: Any
) -> Any:
    operator = _OPERATORS.get(ufunc) if method == "__call__" and not kwargs else None
    if operator is not None:
        left, right = inputs
        if isinstance(left, Variable):
            return getattr(left, operator[0])(right)
        return getattr(right, operator[1])(left)
    raise mistakes.numpy_on_variable(ufunc, method, inputs, kwargs)


type_name_or_cast.__name__ = "type"  # Variable.type, PyTorch's name (not the builtin's)
_ATTACHED = (item, numpy, tolist, __len__, __bool__, __float__, __int__, __index__)
for _method in (*_ATTACHED, type_name_or_cast, __array__, __array_ufunc__):
    _method.__qualname__ = f"Variable.{_method.__name__}"
    setattr(Variable, _method.__name__, _method)
del _method
