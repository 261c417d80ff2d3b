"""Variable: a value (a NumPy array or a text) that can remember how it was computed.

A Variable made by you is a *leaf*. A Variable made by an operation on Variables that
require grad has a `grad_fn`: the BackwardNode that knows how to send a gradient back
to the operation's inputs. `backward()` walks those nodes and fills each leaf's `.grad`.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

# The engine, reached at call time (`core.engine.run_backward(...)`), as PyTorch's
# Tensor.backward reaches torch.autograd: the engine imports this file, not the reverse.
from minigrad import core, devices
from minigrad.core import errors, grad_mode, variable_checks
from minigrad.core.data_array import DataArray
from minigrad.core.grad_mode import state

# How repr() previews values: a few digits, and the ends of a long array.
_PREVIEW_OPTIONS = {"precision": 4, "threshold": 20, "edgeitems": 2}


def _to_data(data: Any) -> Any:
    """What a Variable holds: a NumPy array, or a str for a text Variable."""
    if isinstance(data, Variable):
        return data._data if isinstance(data._data, str) else data._data.copy()
    return variable_checks.as_data(data)


def _into_arrays(inputs: tuple, kwargs: dict) -> bool:
    """Whether a NumPy operator call writes into plain arrays (out= only) from numeric
    Variables on the CPU: `array += v`."""
    outputs = kwargs.get("out")
    if outputs is None or len(kwargs) != 1 or not all(type(o) is np.ndarray for o in outputs):
        return False
    variables = [value for value in inputs if isinstance(value, Variable)]
    return all(type(value._data) is np.ndarray for value in variables)


class Variable:
    """A value in a computation graph: `Variable(data, requires_grad=False, role=None, name=None)`.

    `data` is a NumPy array (lists and numbers go through `numpy.asarray`) or a `str`.
    """

    __slots__ = (
        "_data",
        "_grad",
        "_grad_fn",
        "_requires_grad",
        "_output_nr",
        "_version_counter",
        "role",
        "name",
        "_retains_grad",
        "_accumulator_edge", "_inference",
        "_is_view", "_data_view",
        "__weakref__",
    )

    def __init__(
        self,
        data: Any,
        requires_grad: bool = False,
        role: str | None = None,
        name: str | None = None,
    ) -> None:
        variable_checks.constructor_arguments(requires_grad, role, name)
        self._data = _to_data(data)
        self._grad = None
        self._grad_fn = None
        self._output_nr = 0
        self._version_counter = None
        self.role = role
        self.name = name
        self._retains_grad = False
        self._accumulator_edge = None
        self._is_view = False
        self._inference = state.inference_enabled  # made inside inference_mode (grad_mode.py)
        self._requires_grad = False
        self.requires_grad = requires_grad

    @classmethod
    def _make(cls, data: Any, version_counter: VersionCounter | None = None) -> Variable:
        """The fast constructor operations use: `data` is already an array or a str."""
        variable = object.__new__(cls)
        variable._data = data
        variable._grad = variable._grad_fn = None
        variable._requires_grad = False
        variable._output_nr = 0
        variable._version_counter = version_counter
        variable.role = variable.name = None
        variable._retains_grad = variable._is_view = False
        variable._accumulator_edge = None
        variable._inference = state.inference_enabled if grad_mode.inference_entered else False
        return variable

    # ------------------------------------------------------------------ attributes
    @property
    def data(self) -> Any:
        """The values: a NumPy array (a DataArray, which also takes PyTorch's `.data` methods,
        see core/data_array.py), a str (text), or a GPU array. Assignable, as in PyTorch, with
        a Variable, an array or a number; the new value is not recorded in any graph."""
        state.listener.escape(self, ".data")  # raw array work would escape minigrad.compile
        data = self._data
        if type(data) is not np.ndarray:
            return data  # a str, or an array in GPU memory
        view = getattr(self, "_data_view", None)  # x.data is x.data, as an attribute
        if view is None or view.base is not data:
            view = self._data_view = data.view(DataArray)
        return view

    @data.setter
    def data(self, value: Any) -> None:
        if value is getattr(self, "_data_view", None) and value.base is self._data:
            return  # `x.data += 1` wrote into x's array and assigns it back
        new = value._data if isinstance(value, Variable) else _to_data(value)
        self._data = variable_checks.assigned_data(self, new)

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this Variable. Settable on leaves only."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._requires_grad = variable_checks.requires_grad_value(self, value)

    def requires_grad_(self, requires_grad: bool = True) -> Variable:
        """Set requires_grad in place (leaves only) and return this Variable."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Variable | None:
        """The accumulated gradient (a Variable, or None before any backward).

        Only leaves get one (and non-leaves after retain_grad()); reading it on another
        non-leaf warns, as in PyTorch."""
        if self._grad is None and self._grad_fn is not None and not self._retains_grad:
            variable_checks.warn_non_leaf_grad()
        return self._grad

    @grad.setter
    def grad(self, value: Variable | None) -> None:
        if value is not None:
            if not isinstance(value, Variable):
                raise variable_checks.grad_not_a_variable(value)
            variable_checks.assigned_grad(self, value)
        state.listener.set_grad(self, value)
        # afnio's textual Functions set `x.grad = feedback` in backward and also return it:
        # during a backward the engine logs such assignments, to add the feedback once.
        assignments = state.grad_assignments
        if assignments is not None:
            assignments.note(self, self._grad)
        self._grad = value

    @property
    def grad_fn(self) -> Any:
        """The BackwardNode of the operation that made this Variable (None for a leaf).

        Read-only, as in PyTorch: apply sets it when it records the operation."""
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, value: Any) -> None:
        raise variable_checks.grad_fn_not_writable()

    @property
    def is_leaf(self) -> bool:
        """True for Variables you made; False for results of recorded operations."""
        return self._grad_fn is None

    @property
    def is_text(self) -> bool:
        return isinstance(self._data, str)

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape; a text Variable has shape ()."""
        data = self._data
        return () if type(data) is str else data.shape

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
            if self._grad_fn is not None:  # its node may have saved it bare: function.adopt_counter
                self._grad_fn._adopt_counter(self)
        return self._version_counter

    def numel(self) -> int:
        return 1 if self.is_text else int(self._data.size)

    def dim(self) -> int:
        return self.ndim

    def detach(self) -> Variable:
        """A new leaf sharing this data (and its version counter), cut from the graph."""
        detached = Variable._make(self._data, self._shared_version_counter())
        detached.role = self.role
        detached.name = self.name
        detached._inference = self._inference  # the same data: an inference one stays one
        return detached

    def detach_(self) -> Variable:
        """Cut this Variable from the graph, making it a leaf that does not require grad."""
        self._grad_fn = None
        self._requires_grad = False
        return self

    # ------------------------------------------------------------------ backward and hooks
    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into each leaf's `.grad` (engine.py, run_backward).

        `gradient` is d(loss)/d(self), needed unless self has a single element (then 1)."""
        if isinstance(gradient, (list, tuple)):
            raise variable_checks.gradient_not_a_variable(gradient)
        core.engine.run_backward(self, gradient, retain_graph, create_graph, inputs, "gradient")

    def register_hook(self, hook: Callable[[Variable], Variable | None]) -> RemovableHandle:
        """Call `hook(grad)` when this Variable's gradient is computed; it may return a new one."""
        error = variable_checks.hook_target_error(self, hook)
        if error is not None:
            raise error
        node = self._grad_fn if self._grad_fn is not None else self._accumulator()
        if node._pre_hooks is None:
            node._pre_hooks = {}
        hooks = node._pre_hooks.setdefault(self._output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook, node._pre_hooks, self._output_nr)

    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf after backward (leaves always keep it)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on a Variable that has requires_grad=False.")
        if self._grad_fn is None or self._retains_grad:
            return
        if self._grad_fn._retained is None:
            self._grad_fn._retained = {}
        self._grad_fn._retained[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def _accumulator(self) -> Any:
        """The AccumulateGrad node of this leaf, made once and then reused."""
        return self._edge_to_accumulator()[0]

    def _edge_to_accumulator(self) -> tuple:
        """The graph edge (AccumulateGrad node, 0) of this leaf, made once and then reused."""
        if self._accumulator_edge is None:
            self._accumulator_edge = (AccumulateGrad(self), 0)
        return self._accumulator_edge

    # ------------------------------------------------------------------ conversions
    def item(self) -> Any:
        """The single value as a Python number (or the text of a text Variable)."""
        if self.is_text:
            return self._data
        if self._data.size != 1:
            raise RuntimeError(
                f"a Variable with {self._data.size} elements cannot be converted to Scalar "
                f"(shape {self.shape}). Pick one element first, e.g. v[0].item()."
            )
        value = self._data.item()
        state.listener.item(self, value)  # minigrad.compile: a value leaves the arrays here
        return value

    def numpy(self) -> np.ndarray:
        """The data as a NumPy array (shared, not copied).

        As in PyTorch, a Variable that requires grad refuses while grad mode is on (NumPy
        would lose the graph silently); inside a Function's forward or under no_grad it
        is allowed."""
        state.listener.escape(self, "numpy()")
        if self.is_text:
            raise TypeError("a text Variable has no NumPy form; use .item() or .data for its str.")
        if self._requires_grad and state.grad_enabled:
            raise RuntimeError(
                "Can't call numpy() on a Variable that requires grad. Use var.detach().numpy() "
                "instead."
            )
        if devices.is_on_cuda(self._data):
            return self._data.to_host()  # a copy: NumPy cannot see GPU memory
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """np.asarray(v), np.array([v, w]): the data, as numpy() gives it (and refuses it)."""
        data = self.numpy()
        if dtype is not None and data.dtype != dtype:
            return data.astype(dtype)
        return data.copy() if copy else data

    def tolist(self) -> Any:
        state.listener.escape(self, "tolist()")
        return self._data if self.is_text else self._data.tolist()

    def __len__(self) -> int:
        if self.is_text:
            return len(self._data)
        if self.ndim == 0:
            raise TypeError("len() of a 0-d Variable is undefined; use .item() for its value.")
        return self.shape[0]

    def __bool__(self) -> bool:
        state.listener.escape(self, "bool()")
        if self.is_text:
            return bool(self._data)
        if self._data.size != 1:
            raise variable_checks.not_one_truth_value(self)
        return bool(self._data)

    def __float__(self) -> float:
        variable_checks.convertible_to_number(self, "float()")
        return float(self.item())

    def __int__(self) -> int:
        variable_checks.convertible_to_number(self, "int()")
        return int(self.item())

    def __index__(self) -> int:
        """As an index: classes[prediction.argmax()] works for a single integer value."""
        if self.is_text or self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise variable_checks.not_an_index(self)
        return int(self.item())

    def type(self, dtype: Any = None) -> Any:  # noqa: A003 (PyTorch's Tensor.type)
        """With no dtype, the type's name ("torch.FloatTensor"); with one (a dtype, or such a
        name), this Variable in that dtype (itself when it already has it), as .to(dtype)."""
        if dtype is None:
            return variable_checks.type_name(self)
        return self.to(variable_checks.dtype_of_type_name(self, dtype))

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """`array * v` makes NumPy call np.multiply(array, v): the operator is handed back to
        the Variable (v.__rmul__(array)). `array -= v` writes v's numbers into the array, as
        PyTorch's `p.data -= lr * p.grad` does (its .data records nothing either). Any other
        NumPy function on a Variable, np.exp(v) say, would drop the graph, so it raises and
        says what to write."""
        if method == "__call__" and ufunc in _OPERATORS and _into_arrays(inputs, kwargs):
            numbers = [value._data if isinstance(value, Variable) else value for value in inputs]
            return ufunc(*numbers, **kwargs)
        names = _OPERATORS.get(ufunc) if method == "__call__" and not kwargs else None
        if names is None:
            raise errors.numpy_on_variable(ufunc, method, inputs, kwargs)
        left, right = inputs
        if isinstance(left, Variable):
            return getattr(left, names[0])(right)
        return getattr(right, names[1])(left)

    # ------------------------------------------------------------------ printing
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
        if self._grad_fn is not None:
            extras.append(f"grad_fn=<{self._grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"{type(self).__name__}({', '.join([body] + extras)})"

    def __str__(self) -> str:
        return self._data if self.is_text else repr(self)

    def __format__(self, spec: str) -> str:
        """f"{loss:.4f}": a one-number Variable formats as its number (as PyTorch's 0-d
        tensors do), text as its str; anything else only with an empty spec."""
        variable_checks.format_spec(spec)
        if self.is_text:
            return variable_checks.formatted(self._data, spec)
        if spec and self.numel() == 1 and self.dim() == 0:
            return variable_checks.formatted(self._data.item(), spec)
        if spec:
            raise variable_checks.format_needs_one_number(self, spec)
        return str(self)

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup failed: a PyTorch method minigrad lacks, or a typo.
        raise variable_checks.missing_attribute(self, name)

    # Comparisons are elementwise, so hashing falls back to identity, as in PyTorch.
    __hash__ = object.__hash__

    # Operators (+, [], +=), in-place methods, named ops (x.exp(), x.to()): attached by the
    # op table, minigrad/ops/table.py; variable.pyi lists them for editors.


DataArray.variable_type = Variable  # x.data.zero_() runs Variable.zero_ (core/data_array.py)

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


# ------------------------------------------------------------------------- version counter
#
# VersionCounter: how many times a Variable's data was changed in place.
#
# Saved values remember the count when forward ran; backward compares, and refuses a value
# changed since. Variables sharing memory (views, detach()) share one counter.

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

    def add_view(self, view: Any) -> None:
        """Remember a view; dead ones are dropped each time the list doubles (amortised
        O(1) per view, where pruning on every call would make n views cost O(n^2))."""
        if self.views is None:
            self.views = []
        elif len(self.views) >= self._prune_at:
            self.views = [ref for ref in self.views if ref() is not None]
            self._prune_at = max(8, 2 * len(self.views))
        self.views.append(weakref.ref(view))

    def has_live_view_besides(self, variable: Any) -> bool:
        for ref in self.views or ():
            view = ref()
            if view is not None and view is not variable:
                return True
        return False


# ------------------------------------------------------------------------- accumulate grad
#
# AccumulateGrad: the graph node of a leaf, where the engine's walk ends.

class AccumulateGrad:
    """The graph node of a leaf that requires grad: it adds incoming gradients into `.grad`."""

    __slots__ = ("_variable", "_pre_hooks", "_post_hooks", "__weakref__")
    _retained = None  # only non-leaf nodes keep retained gradients
    _next_nodes = _next_nrs = next_functions = ()  # where the walk ends: no edges

    def __init__(self, variable: Any) -> None:
        # A weak reference: the leaf holds this node, so a strong one would make a cycle.
        self._variable = weakref.ref(variable)
        self._pre_hooks: dict[int, list[Callable]] | None = None
        self._post_hooks: Any = None  # register_post_accumulate_grad_hook's (ops/hooks.py)

    @property
    def variable(self) -> Any:
        return self._variable()

    def __deepcopy__(self, memo: dict) -> AccumulateGrad | None:
        # copy.deepcopy(model) copies each leaf with this node: the copy's node must point
        # at the leaf's copy, or the copy's gradients would land in the original's .grad.
        variable = self._variable()
        if variable is None:
            return None  # its leaf is gone; the copy makes a fresh node when it needs one
        node = AccumulateGrad(copy.deepcopy(variable, memo))
        node._pre_hooks = copy.deepcopy(self._pre_hooks, memo)
        node._post_hooks = copy.deepcopy(self._post_hooks, memo)
        return node

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


# ------------------------------------------------------------------------- removable handle
#
# RemovableHandle: what `register_hook` returns (PyTorch's torch.utils.hooks name).

class RemovableHandle:
    """Returned by `register_hook`; `.remove()` takes the hook away again."""

    def __init__(self, hooks: list, hook: Callable, table: dict | None = None,
                 key: Any = None) -> None:
        self._hooks = hooks
        self._hook = hook
        # The dict `hooks` is an entry of, if any: an emptied list leaves it, so that the
        # engine (and minigrad.compile) see no hooks there once the last one is removed.
        self._table = table
        self._key = key

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)
        table = self._table
        if table is not None and not self._hooks and table.get(self._key) is self._hooks:
            del table[self._key]

    # `with x.register_hook(f):` keeps the hook for the block only, as PyTorch's handle does.
    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()


# ------------------------------------------------------------------------- kinds
#
# Kinds of values: the little the engine needs to know about a Variable's data.
#
# The engine never looks inside a gradient. For each kind of data it asks this table:
#
# - `zeros(shape, dtype)`: the gradient of an output that received none;
# - `add(first, second)`: two gradients for the same value, summed (numbers) or joined
#   (feedback texts);
# - `accumulate(leaf, grad, create_graph)`: the leaf's new `.grad` once `grad` arrives;
# - `seed(output, index)`: the gradient an output starts backward with when none is given;
# - `name`: how errors describe the kind ("numeric", "text").
#
# NumPy arrays are built in (below). `minigrad.text` registers `str` (feedback joined with
# a blank line), and the device code registers arrays in GPU memory (zeros on the device).


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
    if create_graph:  # recorded, so higher derivatives still flow through it
        return grad.clone() if grad.dtype == leaf.dtype else grad.to(leaf.dtype)
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


def register_kind(data_type: type, kind: Kind) -> None:
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


