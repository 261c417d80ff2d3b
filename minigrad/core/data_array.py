"""What `x.data` gives: the Variable's NumPy array, which also answers PyTorch's methods.

A Function's forward computes on `x.data` with NumPy, as the lessons teach, so `.data` is
the array itself. PyTorch code from before `torch.no_grad` uses `.data` as a tensor
instead: `p.data.sub_(lr * p.grad)`, `p.grad.data.zero_()`, `m.weight.data.normal_(0, 0.02)`,
`y.data.norm()`. A DataArray serves both: a NumPy view of the Variable's memory (nothing
is copied; a write is seen by the Variable) with two additions.

- NumPy on it gives plain arrays (the engine's own type). Written into in place, it takes
  a Variable operand as its numbers, recording nothing: `p.data += -lr * p.grad` updates
  p's array. With a Variable on the other side, `x.data * v` is v's operation, recorded for
  v, as PyTorch's `x.data * v` is a tensor that carries v's graph.
- A name NumPy arrays lack (`zero_`, `normal_`, `clamp_`, `copy_`, `sub_`, `norm`, ...) is
  the Variable method of that name, run under no_grad on a Variable over the same memory,
  as PyTorch's `.data` is a tensor that shares storage and records nothing. An in-place
  method writes the array and returns it; any other returns a Variable.

A name both have means what the call, as written, means: with NumPy's keywords (axis=,
ddof=, keepdims=: what np.std(a) or np.sort(a) pass) NumPy's; with PyTorch's (dim=,
keepdim=) or in the plain spellings old PyTorch code uses where the two differ
(`x.data.max(1)` gives (values, indices), `std()` is unbiased, `sort(1)` does not sort in
place, `transpose(0, 1)` swaps, `repeat(2, 1)` tiles, `view(-1)`) PyTorch's.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from minigrad.core import grad_mode


def _views(value: Any) -> Any:
    """value with each DataArray in it (in lists and tuples too) as a plain ndarray view."""
    if isinstance(value, DataArray):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_views(item) for item in value)
    return value


def _plain(value: Any) -> Any:
    """A NumPy operand: a DataArray as a plain ndarray view, a Variable as its array."""
    if isinstance(value, DataArray):
        return np.asarray(value)
    if isinstance(value, DataArray.variable_type):
        return value._data
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value


class DataArray(np.ndarray):
    """A NumPy view of a Variable's array that also speaks PyTorch (see above)."""

    # Variable, set by core/variable.py once it is defined (it imports this module).
    variable_type: type = type(None)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        outputs = kwargs.get("out")
        if outputs is None and any(isinstance(v, DataArray.variable_type) for v in inputs):
            return NotImplemented  # x.data * v is v's operation (v.__rmul__), recorded
        if outputs is not None:
            kwargs["out"] = _plain(outputs)
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if outputs is not None and len(outputs) == 1 and isinstance(outputs[0], DataArray):
            return outputs[0]  # `a += b` keeps a, so `p.data += ...` keeps p's array
        return result

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        # What NumPy functions make from a DataArray (np.where, np.dot, ...) comes out plain.
        if return_scalar and array.ndim == 0:
            return array[()]
        return np.asarray(array) if isinstance(array, np.ndarray) else array

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # np.tile(x.data, 2), np.std(x.data): NumPy's own code on plain views of the same
        # memory (it calls methods, repeat(2, 0) say, as NumPy means them), plain results.
        return func(*_views(args), **{key: _views(value) for key, value in kwargs.items()})

    def __repr__(self) -> str:
        return repr(np.asarray(self))  # array([...]), the array it is

    def __reduce__(self) -> Any:
        # Pickled as a plain array; as the very array it views when it views all of one, so
        # pickling a Variable (which holds both) writes its numbers once.
        if self._views_all_of_base():
            return (np.asarray, (self.base,))
        return np.asarray(self).__reduce__()

    def __deepcopy__(self, memo: dict) -> Any:
        # As pickling: copy.deepcopy(model) copies each parameter's numbers once.
        if self._views_all_of_base():
            return copy.deepcopy(self.base, memo)
        return np.asarray(self).copy()

    def _views_all_of_base(self) -> bool:
        base = self.base
        return (type(base) is np.ndarray and base.dtype == self.dtype
                and base.shape == self.shape and base.strides == self.strides
                and base.ctypes.data == self.ctypes.data)

    def __getattr__(self, name: str) -> Any:
        # Only names an ndarray lacks arrive here: PyTorch's tensor methods.
        if name.startswith("__"):
            raise AttributeError(name)
        found = getattr(DataArray.variable_type, name, None)
        if isinstance(found, property):  # x.data.device, .requires_grad: of a detached Variable
            with grad_mode.no_grad():
                return getattr(DataArray.variable_type._make(np.asarray(self)), name)
        if found is None:
            raise AttributeError(
                f"x.data is x's NumPy array, which has no attribute {name!r}, and minigrad "
                f"does not have PyTorch's Tensor.{name} (yet). Check the spelling, or write "
                f"it with the operations minigrad has, on the Variable under "
                f"`with minigrad.no_grad():`."
            )
        return _BoundToData(self, name)

    @property
    def size(self) -> _Size:  # type: ignore[override]
        """NumPy's element count, which PyTorch code also calls: x.data.size(0)."""
        return _Size(np.ndarray.size.__get__(self), self.shape)

    @property
    def device(self) -> Any:  # type: ignore[override]
        """The Variable's device (NumPy 2's array API says "cpu"; PyTorch code reads .type)."""
        return DataArray.variable_type._make(np.asarray(self)).device


class _Size(int):
    """x.data.size: the element count NumPy code reads, callable as PyTorch's size(dim)."""

    def __new__(cls, count: int, shape: tuple) -> _Size:
        made = super().__new__(cls, count)
        made.shape = shape
        return made

    def __call__(self, dim: int | None = None) -> Any:
        variable = DataArray.variable_type._make(np.empty(self.shape, dtype=np.bool_))
        return variable.size() if dim is None else variable.size(dim)


# NumPy's keywords: a call that uses one is NumPy code (np.std(a) calls a.std(ddof=0, ...)).
_NUMPY_KEYWORDS = {"axis", "keepdims", "ddof", "out", "kind", "order", "initial", "where"}
# PyTorch's keywords: a call that uses one is PyTorch code.
_TORCH_KEYWORDS = {"dim", "keepdim", "unbiased", "correction", "descending", "stable",
                   "start_dim", "end_dim", "as_tuple"}


def _means_pytorch(name: str, args: tuple, kwargs: dict, ndim: int) -> bool:
    """Whether a call of a name NumPy and PyTorch both have, as written, is PyTorch code.

    Keywords decide first. Otherwise the names whose plain calls mean different things go
    to PyTorch (old PyTorch code calls them so; NumPy code in a forward passes axis=):
    max(1) and min(1) give (values, indices), std() and var() are unbiased, sort(1) returns
    (values, indices) instead of sorting in place, transpose(0, 1) swaps two dims,
    repeat(2, 1) tiles, flatten(1) flattens from a dim. The rest (sum(0), mean(), ...)
    mean the same in both, up to the result's type, and stay NumPy's."""
    if kwargs.keys() & _NUMPY_KEYWORDS:
        return False
    if kwargs.keys() & _TORCH_KEYWORDS:
        return True
    integers = all(isinstance(arg, (int, np.integer)) for arg in args)
    if name in ("max", "min"):
        return len(args) == 1 and integers
    if name in ("std", "var", "sort"):
        return True
    if name == "transpose":
        return len(args) == 2 and integers
    if name == "repeat":
        tiles = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        return len(tiles) >= max(ndim, 1) and integers
    if name == "flatten":
        return len(args) >= 1 and integers
    if name == "nonzero":  # NumPy's tuple of arrays; np.nonzero(a) never comes here
        return True
    if name == "squeeze":  # squeeze(1) of a dim that is not 1: PyTorch leaves it
        return len(args) == 1 and integers
    if name in ("put", "argsort"):  # put(index, source) of Variables is not in place
        return any(isinstance(arg, DataArray.variable_type) for arg in args)
    return False


def _numpy_or_torch(name: str) -> Any:
    """ndarray's method `name`, or the Variable's when the call is PyTorch code."""
    numpy_method = getattr(np.ndarray, name)

    def method(self: DataArray, *args: Any, **kwargs: Any) -> Any:
        if _means_pytorch(name, args, kwargs, self.ndim):
            return _BoundToData(self, name)(*args, **kwargs)
        return numpy_method(self, *args, **kwargs)

    method.__name__ = name
    return method


def _view(self: DataArray, *args: Any, **kwargs: Any) -> Any:
    """ndarray.view(dtype), or PyTorch's view(*sizes) when given sizes."""
    sizes = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    if sizes and not kwargs and all(isinstance(size, int) for size in sizes):
        return _BoundToData(self, "view")(*args)
    return np.ndarray.view(self, *args, **kwargs)


for _name in ("sum", "mean", "max", "min", "std", "var", "prod", "argmax", "argmin", "all",
              "any", "cumsum", "cumprod", "sort", "transpose", "repeat", "flatten", "nonzero",
              "squeeze", "put", "argsort"):
    setattr(DataArray, _name, _numpy_or_torch(_name))
DataArray.view = _view


class _BoundToData:
    """`data.name(...)` for a Variable method `name`, called on a Variable over data's
    memory: an in-place one (name_) under no_grad, giving data back for chaining; any other
    recorded for its Variable arguments (x.data.mul(v) carries v's graph)."""

    def __init__(self, data: DataArray, name: str) -> None:
        self.data = data
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        array = np.asarray(self.data)
        variable = DataArray.variable_type._make(array)
        if not self.name.endswith("_"):  # x.data.mul(v): recorded for v, as in PyTorch
            return getattr(variable, self.name)(*args, **kwargs)
        with grad_mode.no_grad():  # an in-place change through .data records nothing
            result = getattr(variable, self.name)(*args, **kwargs)
        if result is variable:
            return self.data
        return result

    def __repr__(self) -> str:
        return f"<PyTorch method {self.name!r} of x.data, run on the Variable's numbers>"
