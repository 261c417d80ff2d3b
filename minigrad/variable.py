"""Variable: a value (a NumPy array or a text) that can remember how it was computed.

A Variable made by you is a *leaf*. A Variable made by an operation on Variables that
require grad has a `grad_fn`: the BackwardNode that knows how to send a gradient back
to the operation's inputs. `backward()` walks those nodes and fills each leaf's `.grad`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad import devices
from minigrad.missing import missing_name

# Variables whose data is a NumPy array of one of these kinds may require grad.
_DIFFERENTIABLE_KINDS = "f"
_PREVIEW_OPTIONS = {"precision": 4, "threshold": 20, "edgeitems": 2}


class VersionCounter:
    """How many times the data was changed in place; shared by Variables sharing data.

    Made only when first needed (an in-place change, a view, a saved output): most
    Variables are never changed, and an object less per Variable is time and memory saved.
    """

    __slots__ = ("value", "views", "_prune_at")

    def __init__(self) -> None:
        self.value = 0
        self.views: list[weakref.ref] | None = None  # Variables that view this data
        self._prune_at = 8

    def add_view(self, view: Variable) -> None:
        """Remember a view; dead ones are dropped each time the list doubles (amortised
        O(1) per view, where pruning on every call would make n views cost O(n^2))."""
        if self.views is None:
            self.views = []
        elif len(self.views) >= self._prune_at:
            self.views = [ref for ref in self.views if ref() is not None]
            self._prune_at = max(8, 2 * len(self.views))
        self.views.append(weakref.ref(view))

    def has_live_view_besides(self, variable: Variable) -> bool:
        for ref in self.views or ():
            view = ref()
            if view is not None and view is not variable:
                return True
        return False


class RemovableHandle:
    """Returned by `register_hook`; `.remove()` takes the hook away again."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _to_data(data: Any) -> Any:
    """What a Variable holds: a NumPy array, or a str for a text Variable."""
    if isinstance(data, str):
        return data
    if isinstance(data, Variable):
        return data.data if isinstance(data.data, str) else data.data.copy()
    if devices.is_on_cuda(data):
        return data  # already an array in GPU memory (see minigrad/devices.py)
    if isinstance(data, np.ndarray):
        array = data
    else:
        try:
            array = np.asarray(data)
        except (ValueError, TypeError) as error:
            raise TypeError(
                f"Variable data must be a number, a nested list of numbers, a NumPy array "
                f"or a str; got {type(data).__name__} that NumPy cannot convert ({error})."
            ) from None
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"Variable data must be numeric (bool, int, float) or a str; got "
            f"{type(data).__name__} holding NumPy dtype {array.dtype}. For text, pass one "
            f"str: Variable('some text', role='...')."
        )
    return array


class Variable:
    """A value in a computation graph: `Variable(data, requires_grad=False, role=None, name=None)`.

    `data` is a NumPy array (lists and numbers go through `numpy.asarray`) or a `str`.
    """

    __slots__ = (
        "_data",
        "_grad",
        "grad_fn",
        "_requires_grad",
        "_output_nr",
        "_version_counter",
        "role",
        "name",
        "_retains_grad",
        "_accumulator_edge",
        "_is_view",
        "__weakref__",
    )

    def __init__(
        self,
        data: Any,
        requires_grad: bool = False,
        role: str | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(requires_grad, bool):
            raise TypeError(
                f"requires_grad must be True or False; got {requires_grad!r} "
                f"({type(requires_grad).__name__})."
            )
        for label, value in (("role", role), ("name", name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{label} must be a str or None; got {type(value).__name__}.")
        self._data = _to_data(data)
        self._grad = None
        self.grad_fn = None
        self._output_nr = 0
        self._version_counter = None
        self.role = role
        self.name = name
        self._retains_grad = False
        self._accumulator_edge = None
        self._is_view = False
        self._requires_grad = False
        self.requires_grad = requires_grad

    @classmethod
    def _make(cls, data: Any, version_counter: VersionCounter | None = None) -> Variable:
        """The fast constructor operations use: `data` is already an array or a str."""
        variable = object.__new__(Variable)
        variable._data = data
        variable._grad = None
        variable.grad_fn = None
        variable._requires_grad = False
        variable._output_nr = 0
        variable._version_counter = version_counter
        variable.role = None
        variable.name = None
        variable._retains_grad = False
        variable._accumulator_edge = None
        variable._is_view = False
        return variable

    # ------------------------------------------------------------------ attributes

    @property
    def data(self) -> Any:
        """The values: a NumPy array, a str (text), or a GPU array. Assignable, as in PyTorch,
        with a Variable, an array or a number; the new value is not recorded in any graph."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        new = value.data if isinstance(value, Variable) else _to_data(value)
        if isinstance(new, str) != isinstance(self._data, str):
            kinds = ("text", "numeric") if isinstance(new, str) else ("numeric", "text")
            raise TypeError(
                f"cannot assign {kinds[0]} data to a {kinds[1]} Variable; make a new "
                f"Variable instead."
            )
        self._data = new

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this Variable. Settable on leaves only."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"requires_grad must be True or False; got {value!r}.")
        if self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. This Variable "
                f"was made by {self.grad_fn.name()}; to use it as a new leaf, call "
                ".detach() and set requires_grad on the result."
            )
        if value and not self.is_text and self._data.dtype.kind not in _DIFFERENTIABLE_KINDS:
            raise RuntimeError(
                f"only Variables of floating point dtype can require gradients; this one "
                f"has dtype {self._data.dtype}. Convert first, e.g. "
                f"Variable(data.astype('float64'), requires_grad=True)."
            )
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Variable:
        """Set requires_grad in place (leaves only) and return this Variable."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Variable | None:
        """The accumulated gradient (a Variable, or None before any backward).

        Only leaves get one (and non-leaves after retain_grad()); reading it on another
        non-leaf warns, as in PyTorch."""
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            mistakes.warn_non_leaf_grad()
        return self._grad

    @grad.setter
    def grad(self, value: Variable | None) -> None:
        if value is not None:
            if not isinstance(value, Variable):
                raise TypeError(
                    f"assigned grad expected to be a Variable or None but got grad of type "
                    f"{type(value).__name__}; wrap it first: Variable(...)."
                )
            if value.is_text != self.is_text:
                kinds = (
                    "text" if value.is_text else "numeric",
                    "text" if self.is_text else "numeric",
                )
                raise TypeError(f"assigned grad is {kinds[0]} but this Variable is {kinds[1]}.")
            if not self.is_text and value.shape != self.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: got shape {value.shape}, "
                    f"expected {self.shape}."
                )
            if not self.is_text and value.data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: got {value.data.dtype}, "
                    f"expected {self._data.dtype}. Convert it first, e.g. with "
                    f"Variable(g.data.astype('{self._data.dtype}'))."
                )
        # afnio's textual Functions set `x.grad = feedback` in backward and also return
        # it. While the engine runs a backward it collects such assignments here, so it
        # can put the old .grad back and add the returned feedback once, not twice.
        assignments = grad_mode._state.grad_assignments
        if assignments is not None:
            assignments.append((self, self._grad))
        self._grad = value

    @property
    def is_leaf(self) -> bool:
        """True for Variables you made; False for results of recorded operations."""
        return self.grad_fn is None

    @property
    def is_text(self) -> bool:
        return isinstance(self._data, str)

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape; a text Variable has shape ()."""
        return () if self.is_text else self._data.shape

    @property
    def dtype(self) -> Any:
        """The NumPy dtype; `str` for a text Variable."""
        return str if self.is_text else self._data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def device(self) -> devices.device:
        """Where the data lives: device("cpu") (a NumPy array) or device("cuda") (GPU memory).

        It compares equal to the str: `x.device == "cuda"`."""
        return devices.CUDA if devices.is_on_cuda(self._data) else devices.CPU

    @property
    def is_cuda(self) -> bool:
        return devices.is_on_cuda(self._data)

    @property
    def _version(self) -> int:
        """How many in-place changes this data has seen (saved Variables check it)."""
        counter = self._version_counter
        return counter.value if counter is not None else 0

    def _shared_version_counter(self) -> VersionCounter:
        if self._version_counter is None:
            self._version_counter = VersionCounter()
        return self._version_counter

    def numel(self) -> int:
        return 1 if self.is_text else int(self._data.size)

    def dim(self) -> int:
        return self.ndim

    def __len__(self) -> int:
        if self.is_text:
            return len(self._data)
        if self.ndim == 0:
            raise TypeError("len() of a 0-d Variable is undefined; use .item() for its value.")
        return self.shape[0]

    # ------------------------------------------------------------------ conversions

    def item(self) -> Any:
        """The single value as a Python number (or the text of a text Variable)."""
        if self.is_text:
            return self._data
        if self._data.size != 1:
            raise ValueError(
                f"only one element Variables can be converted to Python scalars; this one "
                f"has shape {self.shape}. Pick one element first, e.g. v[0].item()."
            )
        return self._data.item()

    def numpy(self) -> np.ndarray:
        """The data as a NumPy array (shared, not copied).

        As in PyTorch, a Variable that requires grad refuses while grad mode is on (NumPy
        would lose the graph silently); inside a Function's forward or under no_grad it
        is allowed."""
        if self.is_text:
            raise TypeError("a text Variable has no NumPy form; use .item() or .data for its str.")
        if self._requires_grad and grad_mode._state.enabled:
            raise RuntimeError(
                "Can't call numpy() on a Variable that requires grad. "
                "Use var.detach().numpy() instead."
            )
        if devices.is_on_cuda(self._data):
            return self._data.to_host()  # a copy: NumPy cannot see GPU memory
        return self._data

    def tolist(self) -> Any:
        return self._data if self.is_text else self._data.tolist()

    def detach(self) -> Variable:
        """A new leaf sharing this data (and its version counter), cut from the graph."""
        detached = Variable._make(self._data, self._shared_version_counter())
        detached.role = self.role
        detached.name = self.name
        return detached

    def detach_(self) -> Variable:
        """Cut this Variable from the graph, making it a leaf that does not require grad."""
        self.grad_fn = None
        self._requires_grad = False
        return self

    # ------------------------------------------------------------------ graph helpers

    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf after backward (leaves always keep it)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on a Variable that has requires_grad=False.")
        if self.grad_fn is None or self._retains_grad:
            return
        if self.grad_fn._retained is None:
            self.grad_fn._retained = {}
        self.grad_fn._retained[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook: Callable[[Variable], Variable | None]) -> RemovableHandle:
        """Call `hook(grad)` when this Variable's gradient is computed; it may return a new one."""
        if not callable(hook):
            raise TypeError(f"register_hook expects a function; got {type(hook).__name__}.")
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a Variable that doesn't require gradient; set "
                "requires_grad=True on the leaf first."
            )
        node = self.grad_fn if self.grad_fn is not None else self._accumulator()
        if node._pre_hooks is None:
            node._pre_hooks = {}
        hooks = node._pre_hooks.setdefault(self._output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def _accumulator(self) -> Any:
        """The AccumulateGrad node of this leaf, made once and then reused."""
        return self._edge_to_accumulator()[0]

    def _edge_to_accumulator(self) -> tuple:
        """The graph edge (AccumulateGrad node, 0) of this leaf, made once and then reused."""
        if self._accumulator_edge is None:
            self._accumulator_edge = (AccumulateGrad(self), 0)
        return self._accumulator_edge

    # backward() is attached by the engine, minigrad/autodiff/engine.py.

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        on_cuda = not self.is_text and self.device == "cuda"
        if self.is_text:
            body = repr(self._data)
        else:
            values = self._data.to_host() if on_cuda else self._data
            body = np.array2string(values, separator=", ", prefix="Variable(", **_PREVIEW_OPTIONS)
        extras = ["device='cuda'"] if on_cuda else []
        if not self.is_text and self._data.dtype != np.float64:
            extras.append(f"dtype={self._data.dtype}")
        if self.role is not None:
            extras.append(f"role={self.role!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"{type(self).__name__}({', '.join([body] + extras)})"

    def __str__(self) -> str:
        return self._data if self.is_text else repr(self)

    def __bool__(self) -> bool:
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

    def __float__(self) -> float:
        if self.is_text:
            raise TypeError(
                "float() of a text Variable: only numeric Variables convert to numbers."
            )
        return float(self.item())

    def __int__(self) -> int:
        if self.is_text:
            raise TypeError("int() of a text Variable: only numeric Variables convert to numbers.")
        return int(self.item())

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup failed: a PyTorch method minigrad lacks, or a typo.
        if name.startswith("_"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")
        if name in mistakes.CTX_NAMES:  # a Variable passed where a Function's ctx goes
            raise mistakes.ctx_attribute_error(name)
        raise missing_name("Tensor", name, dir(type(self)))

    # Comparisons are elementwise, so hashing falls back to identity, as in PyTorch.
    __hash__ = object.__hash__

    # `array * v` makes NumPy call np.multiply(array, v), which lands here: the operator is
    # handed back to the Variable (v.__rmul__(array)). Any other NumPy function on a
    # Variable, np.exp(v) say, would drop the graph, so it raises and says what to write.
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        operator = _OPERATORS.get(ufunc) if method == "__call__" and not kwargs else None
        if operator is not None:
            left, right = inputs
            if isinstance(left, Variable):
                return getattr(left, operator[0])(right)
            return getattr(right, operator[1])(left)
        raise mistakes.numpy_on_variable(ufunc, method, inputs, kwargs)

    # The operators (+, *, <, [], +=, ...), the in-place methods and the named ops
    # (x.exp(), x.sum(dim), ...) are attached from the op table, minigrad/ops/table.py.


class Parameter(Variable):
    """A Variable that is a model's weight: it always requires grad, even inside no_grad."""

    __slots__ = ()

    def __init__(
        self,
        data: Any = None,
        requires_grad: bool = True,
        role: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(np.empty(0) if data is None else data, requires_grad, role, name)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


Tensor = Variable


class AccumulateGrad:
    """The graph node of a leaf that requires grad: it adds incoming gradients into `.grad`."""

    __slots__ = ("_variable", "_pre_hooks", "next_functions", "__weakref__")
    _retained = None  # only non-leaf nodes keep retained gradients

    def __init__(self, variable: Variable) -> None:
        # A weak reference: the leaf holds this node, so a strong one would make a cycle.
        self._variable = weakref.ref(variable)
        self._pre_hooks: dict[int, list[Callable]] | None = None
        self.next_functions: tuple = ()

    @property
    def variable(self) -> Variable | None:
        return self._variable()

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


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


# grad_mode and mistakes import nothing back, but the autodiff package (whose __init__ runs
# first) imports Variable: so they are imported once Variable is defined.
from minigrad.autodiff import grad_mode, mistakes  # noqa: E402
