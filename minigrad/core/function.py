"""Function: an operation with a hand-written forward and backward.

Subclass Function, write `forward` and `backward` as static methods and call
`MyFunction.apply(...)`. When an input requires grad, `apply` records one BackwardNode:
the node is also the `ctx` that forward filled, and the engine later calls
`MyFunction.backward(node, *grad_outputs)` to get one gradient per input.
"""

from __future__ import annotations

import importlib
import traceback
from typing import Any

import numpy as np

from minigrad.core import anomaly, checks, mistakes, saved
from minigrad.core import outputs as outputs_of
from minigrad.core.grad_mode import _state as _grad_state
from minigrad.core.inputs import record_inputs
from minigrad.core.outputs import attach_outputs
from minigrad.core.outputs import collect as _outputs_of
from minigrad.core.shared import SHARED as _SHARED
from minigrad.core.shared import shared as _shared
from minigrad.core.tracing import tracer as _tracer
from minigrad.core.variable import Variable
from minigrad.devices import DeviceMismatchError

_edge_to_accumulator = Variable._edge_to_accumulator


class FunctionCtx:
    """What forward leaves for backward: saved values, flags, and any attribute you set."""

    # Usual attributes in slots; any other a forward sets (ctx.dim = 1) goes in a __dict__.
    __slots__ = ("to_save", "dirty", "needs_input_grad", "__dict__", "__weakref__")
    # Rarely changed, so they live on the class until a ctx sets its own.
    non_differentiable: tuple = ()
    materialize_grads = True

    def __init__(self, needs_input_grad: tuple[bool, ...] = ()) -> None:
        self.to_save = ()
        self.dirty = ()
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *values: Any) -> None:
        """Keep Variables (version-checked at backward), None, or plain values for backward."""
        self.to_save = values

    def save_for_forward(self, *values: Any) -> None:
        """Keep values for `jvp` (forward-mode AD, minigrad/autodiff/forward_ad.py)."""
        self.saved_for_forward = values

    def mark_dirty(self, *variables: Variable) -> None:
        """Declare inputs that forward changed in place."""
        self.dirty = variables

    def mark_non_differentiable(self, *variables: Variable) -> None:
        """Declare outputs that never get a gradient (e.g. indices)."""
        self.non_differentiable = variables

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        return self.to_save

    saved_variables = saved_tensors


_NO_EDGE = (None, 0)
_BOTH = (True, True)
# For n inputs of which only the first is a Variable: its flags, the others' edges and shapes.
_FIRST_ONLY = [(True,) + (False,) * (n - 1) for n in range(1, 5)]
_FIRST_ONLY.insert(0, ())
_NO_EDGES = [(), ()] + [(_NO_EDGE,) * (n - 1) for n in range(2, 5)]
_NO_SHAPES = [(), ()] + [(None,) * (n - 1) for n in range(2, 5)]


class BackwardNode(FunctionCtx):
    """One recorded call of a Function: the ctx of its forward and a node of the graph.

    `next_functions[i]` is (node, output_nr) for input i: where its gradient goes next.
    """

    # Slots keep nodes small (and cheap for the garbage collector to walk).
    __slots__ = (
        "_function",
        "next_functions",
        "_input_shapes",
        "_saved",
        "_saved_versions",
        "_output_metadata",
        "_input_refs",
        "_output_refs",
    )
    # Rarely used, so they live on the class until a node needs its own.
    _pre_hooks: dict | None = None
    _retained: dict | None = None
    _forward_trace: list | None = None

    def __getattr__(self, name: str) -> Any:  # PyTorch's node._saved_self: see graph.py
        return importlib.import_module("minigrad.autodiff.graph").saved_attribute(self, name)

    def __init__(self, function: type[Function], args: tuple) -> None:
        self.to_save = ()
        self.dirty = ()
        self._function = function
        self._input_refs = ()
        self._saved = ()
        self._saved_versions = ()
        self._output_metadata = ()
        self._output_refs = ()
        # The usual calls, one or two NumPy Variables that all require grad, go straight.
        count = len(args)
        if count == 2:
            a, b = args
            if (
                type(a) is Variable
                and type(b) is Variable
                and a._requires_grad
                and b._requires_grad
                and type(a._data) is np.ndarray
                and type(b._data) is np.ndarray
            ):
                self.needs_input_grad = _BOTH
                self.next_functions = (
                    _edge_to_accumulator(a) if a.grad_fn is None else (a.grad_fn, a._output_nr),
                    _edge_to_accumulator(b) if b.grad_fn is None else (b.grad_fn, b._output_nr),
                )
                shapes = (a._data.shape, b._data.shape)
                self._input_shapes = _SHARED.get(shapes) or _shared(shapes)
                return
        if 0 < count < 5:
            # One NumPy Variable first, then only plain values (dims, constants): x.T, x / 2.
            a = args[0]
            if type(a) is Variable and a._requires_grad and type(a._data) is np.ndarray:
                for value in args[1:]:
                    if isinstance(value, Variable):
                        break
                else:
                    self.needs_input_grad = _FIRST_ONLY[count]
                    edge = (
                        _edge_to_accumulator(a) if a.grad_fn is None else (a.grad_fn, a._output_nr)
                    )
                    self.next_functions = (edge, *_NO_EDGES[count])
                    shapes = (a._data.shape, *_NO_SHAPES[count])
                    self._input_shapes = _SHARED.get(shapes) or _shared(shapes)
                    return
        record_inputs(self, args)  # the general case: minigrad/core/inputs.py

    def name(self) -> str:
        return self._function.__name__ + "Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    # Saved values are packed after forward and checked when backward reads them, in
    # minigrad/core/saved.py.
    saved_tensors = property(saved.unpack)
    saved_variables = saved_tensors
    _pack_saved = saved.pack

    def _call_backward(self, grad_outputs: list) -> tuple:
        """Run the Function's backward and check its answer: one gradient per input."""
        try:
            grads = self._function.backward(self, *grad_outputs)
        except (TypeError, ValueError) as error:
            mistakes.explain_backward_error(self, grad_outputs, error)
            raise
        if type(grads) is not tuple:
            grads = (grads,)
        shapes = self._input_shapes
        if len(grads) != len(shapes):
            grads = checks.gradient_count(self.name(), grads, len(shapes))
        checked = []
        for index, grad in enumerate(grads):
            if grad is None:
                checked.append(None)
            elif (
                type(grad) is Variable
                and type(grad._data) is np.ndarray
                and grad._data.shape == shapes[index]
            ):
                # The usual case, checked cheaply; anything else gets the full check.
                checked.append(grad if self.needs_input_grad[index] else None)
            else:
                checked.append(checks.gradient(self, index, grad, shapes[index]))
        return checked


class Function:
    """Base class of differentiable operations. Subclass it; never instantiate it.

    Write `forward(ctx, *args)` (or `forward(*args)` plus `setup_context(ctx, inputs,
    output)`) and `backward(ctx, *grad_outputs)`, then call `apply`.
    """

    _uses_setup_context = False
    # True for operations whose output is a view of their first input's memory (reshape,
    # transpose, ...): the two then share a version counter, so changing one in place is
    # seen by the saved values of the other.
    _output_is_view = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise mistakes.function_instantiated(type(self))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Decided once per class: which of the two forward styles this Function uses.
        cls._uses_setup_context = cls.setup_context is not Function.setup_context
        # apply calls the forward you wrote as `_forward`; `forward` itself gets a guard
        # that explains a direct call, Square.forward(x), meant as Square.apply(x).
        mistakes.guard_forward(cls)

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Compute the outputs from the inputs. Runs with grad recording off."""
        raise NotImplementedError("You must implement the forward function of your Function.")

    _forward = forward

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        """Second style: fill ctx here, from the inputs and outputs of forward(*args)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> Any:
        """Forward mode: given each input's tangent, return each output's (J · tangent)."""
        raise NotImplementedError("You must implement the jvp function to use forward-mode AD.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        """Given d(loss)/d(output) for each output, return d(loss)/d(input) for each input."""
        raise NotImplementedError(
            "You must implement the backward of your Function to use it with backward()."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward; when an input requires grad (and grad mode is on) record a node."""
        if kwargs:
            checks.refuse_variable_keywords(cls, kwargs)
        if _tracer.recorder is not None:  # minigrad.compile is recording this step
            return _tracer.recorder.apply(cls, args, kwargs)
        if _grad_state.enabled:
            for value in args:
                if isinstance(value, Variable) and value._requires_grad:
                    return _apply_recording(cls, args, kwargs)
        return _apply_without_graph(cls, args, kwargs)


def _run_forward(cls: type[Function], ctx: FunctionCtx, args: tuple, kwargs: dict) -> tuple:
    """Call forward (grad recording off) and return (what it returned, its outputs)."""
    if not cls._uses_setup_context:
        raw = _call_forward(cls, ctx, args, kwargs)
        return raw, _outputs_of(cls, ctx, args, raw, None)
    previous = _grad_state.enabled
    _grad_state.enabled = False  # what forward computes is never recorded
    try:
        raw = cls._forward(*args, **kwargs)
        outputs = outputs_of.wrap(cls, raw)
        cls.setup_context(ctx, args, _unwrap_like(raw, outputs))
    except (DeviceMismatchError, TypeError) as error:
        mistakes.raise_clearer_forward_error(cls, args, kwargs, error)
        raise
    finally:
        _grad_state.enabled = previous
    return raw, _outputs_of(cls, ctx, args, raw, outputs)


def _call_forward(cls: type[Function], ctx: FunctionCtx, args: tuple, kwargs: dict) -> Any:
    """forward(ctx, *args), with grad recording off while it runs."""
    previous = _grad_state.enabled
    _grad_state.enabled = False  # what forward computes is never recorded
    try:
        return cls._forward(ctx, *args, **kwargs)
    except (DeviceMismatchError, TypeError) as error:
        mistakes.raise_clearer_forward_error(cls, args, kwargs, error)
        raise
    finally:
        _grad_state.enabled = previous


def _apply_without_graph(cls: type[Function], args: tuple, kwargs: dict) -> Any:
    """apply when nothing is recorded: no node, no graph bookkeeping."""
    count = len(args)
    ctx = _new(FunctionCtx)
    ctx.to_save = ctx.dirty = ()
    ctx.needs_input_grad = _NO_GRADS[count] if count < 4 else (False,) * count
    if cls._uses_setup_context:
        raw, outputs = _run_forward(cls, ctx, args, kwargs)
    else:
        raw = _call_forward(cls, ctx, args, kwargs)
        if type(raw) is np.ndarray and not ctx.dirty and not cls._output_is_view:
            return Variable._make(raw)  # the usual case: one fresh array
        outputs = _outputs_of(cls, ctx, args, raw, None)
    if isinstance(raw, (Variable, tuple)):
        outputs_of.make_results_not_require_grad(outputs, args)
    return _unwrap_like(raw, outputs)


def _apply_recording(cls: type[Function], args: tuple, kwargs: dict) -> Any:
    """apply when an input requires grad: the node is forward's ctx, then the outputs' grad_fn."""
    node = BackwardNode(cls, args)
    if cls._uses_setup_context:
        raw, outputs = _run_forward(cls, node, args, kwargs)
    else:
        raw = _call_forward(cls, node, args, kwargs)
        if type(raw) is np.ndarray and not node.dirty and not cls._output_is_view:
            outputs = (Variable._make(raw),)  # the usual case: one fresh array
        else:
            outputs = _outputs_of(cls, node, args, raw, None)
    attach_outputs(node, outputs)
    if node.to_save:
        node._pack_saved(outputs)
    if anomaly._state.enabled:
        node._forward_trace = traceback.format_stack()[:-2]
    return outputs[0] if type(raw) is np.ndarray else _unwrap_like(raw, outputs)


_new = object.__new__
_NO_GRADS = ((), (False,), (False, False), (False, False, False))


def _unwrap_like(raw: Any, outputs: tuple) -> Any:
    return outputs if isinstance(raw, tuple) else outputs[0]

def __getattr__(name: str) -> Any:
    if name == "once_differentiable":  # PyTorch's torch.autograd.function path; see once.py
        return importlib.import_module("minigrad.core.once").once_differentiable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BackwardNode", "Function", "FunctionCtx"]
