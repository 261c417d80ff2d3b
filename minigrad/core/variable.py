"""Variable: a value (a NumPy array or a text) that can remember how it was computed.

A Variable made by you is a *leaf*. A Variable made by an operation on Variables that
require grad has a `grad_fn`: the BackwardNode that knows how to send a gradient back
to the operation's inputs. `backward()` walks those nodes and fills each leaf's `.grad`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import variable_checks as checks
from minigrad.core.accumulate_grad import AccumulateGrad
from minigrad.core.grad_log import grad_log as _grad_log
from minigrad.core.tracing import tracer as _tracer
from minigrad.core.version_counter import VersionCounter


def _to_data(data: Any) -> Any:
    """What a Variable holds: a NumPy array, or a str for a text Variable."""
    if isinstance(data, Variable):
        return data.data if isinstance(data.data, str) else data.data.copy()
    return checks.as_data(data)


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
        checks.constructor_arguments(requires_grad, role, name)
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
        variable = object.__new__(cls)
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
        if _tracer.recorder is not None:  # raw array work would escape minigrad.compile
            _tracer.recorder.escape(self, ".data")
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        new = value.data if isinstance(value, Variable) else _to_data(value)
        self._data = checks.assigned_data(self, new)

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this Variable. Settable on leaves only."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._requires_grad = checks.requires_grad_value(self, value)

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
            checks.warn_non_leaf_grad()
        return self._grad

    @grad.setter
    def grad(self, value: Variable | None) -> None:
        if value is not None:
            checks.assigned_grad(self, value)
        if _tracer.recorder is not None:
            _tracer.recorder.set_grad(self, value)
        # afnio's textual Functions set `x.grad = feedback` in backward and also return it:
        # during a backward the engine logs such assignments, to add the feedback once.
        assignments = _grad_log.entries
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
        data = self._data
        return () if type(data) is str else data.shape

    @property
    def dtype(self) -> Any:
        """The NumPy dtype; `str` for a text Variable."""
        return str if self.is_text else self._data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    # .device and .is_cuda are attached with .cpu() and .cuda(), minigrad/ops/conversion.py.

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

    # retain_grad(), retains_grad and register_hook() are attached from minigrad/hooks.py.

    def _accumulator(self) -> Any:
        """The AccumulateGrad node of this leaf, made once and then reused."""
        return self._edge_to_accumulator()[0]

    def _edge_to_accumulator(self) -> tuple:
        """The graph edge (AccumulateGrad node, 0) of this leaf, made once and then reused."""
        if self._accumulator_edge is None:
            self._accumulator_edge = (AccumulateGrad(self), 0)
        return self._accumulator_edge

    # backward() is attached by the engine, minigrad/core/engine.py.

    # item(), numpy(), tolist(), float(), ... come from conversions.py; repr() from display.py.

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup failed: a PyTorch method minigrad lacks, or a typo.
        raise checks.missing_attribute(self, name)

    # Comparisons are elementwise, so hashing falls back to identity, as in PyTorch.
    __hash__ = object.__hash__

    # Operators (+, [], +=), in-place methods, named ops (x.exp()): the op table, ops/table.py.


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

