"""Function: an operation with a hand-written forward and backward.

Subclass Function, write `forward` and `backward` as static methods and call
`MyFunction.apply(...)`. When an input requires grad, `apply` records one BackwardNode:
the node is also the `ctx` that forward filled, and the engine later calls
`MyFunction.backward(node, *grad_outputs)` to get one gradient per input.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core import checks, fast_path, mistakes, saved
from minigrad.core import outputs as outputs_of
from minigrad.core.inputs import record_inputs
from minigrad.core.state import state
from minigrad.core.variable import Variable
from minigrad.devices import DeviceMismatchError


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
        """Keep values for `jvp`, which reads them as ctx.saved_tensors (autodiff/forward_ad.py)."""
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


class BackwardNode(FunctionCtx):
    """One recorded call of a Function: the ctx of its forward and a node of the graph.

    `next_functions[i]` is (node, output_nr) for input i: where its gradient goes next.
    """

    # Slots keep nodes small and cheap for the garbage collector. The edges are two tuples,
    # nodes and output numbers (ints: untracked), not a tracked (node, nr) pair per edge.
    __slots__ = (
        "_function",
        "_next_nodes",
        "_next_nrs",
        "_input_shapes",
        "_saved",
        "_saved_versions",
        "_output_metadata",
        "_input_refs",
    )
    # Rarely used, so they live on the class until a node needs its own.
    _pre_hooks: dict | None = None
    _retained: dict | None = None
    _forward_trace: list | None = None

    def __getattr__(self, name: str) -> Any:  # PyTorch's node._saved_self: see saved.py
        return saved.attribute(self, name)

    def __init__(self, function: type[Function], args: tuple) -> None:
        self.to_save = ()
        self.dirty = ()
        self._function = function
        self._input_refs = ()
        self._saved = ()
        self._saved_versions = ()
        self._output_metadata = ()
        # The usual calls (one or two NumPy Variables) take a shortcut: fast_path.py.
        if not fast_path.record_usual_inputs(self, args):
            record_inputs(self, args)  # needs_input_grad, the edges, _input_shapes

    @property
    def next_functions(self) -> tuple:
        """PyTorch's edges: ((node, output_nr), ...), one pair per input."""
        return tuple(zip(self._next_nodes, self._next_nrs))

    def name(self) -> str:
        return self._function.__name__ + "Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    # Saved values are packed after forward and checked when backward reads them, in
    # minigrad/core/saved.py.
    saved_tensors = property(saved.unpack)
    saved_variables = saved_tensors
    _pack_saved = saved.pack
    _adopt_counter = saved.adopt_counter

    def _call_backward(self, grad_outputs: list, on_arrays: bool = False) -> list:
        """Run the Function's backward and check its answer: one gradient per input. With
        `on_arrays` (see Function.backward_on_arrays) gradients and saved values go in,
        and gradients come out, as NumPy arrays: no step of the formula makes a node."""
        state.saved_as_arrays = on_arrays
        try:
            grads = self._function.backward(self, *grad_outputs)
        except (TypeError, ValueError) as error:
            mistakes.explain_backward_error(self, grad_outputs, error)
            raise
        finally:
            state.saved_as_arrays = False
        if type(grads) is not tuple:
            grads = (grads,)
        shapes = self._input_shapes
        if len(grads) != len(shapes):
            grads = checks.gradient_count(self.name(), grads, len(shapes))
        if on_arrays:
            return [checks.array_gradient(self, i, g, shapes[i]) for i, g in enumerate(grads)]
        checked = fast_path.usual_gradients(self, grads)  # NumPy, of the inputs' shapes
        if checked is None:
            checked = []
            for index, grad in enumerate(grads):
                if grad is not None:
                    grad = checks.gradient(self, index, grad, shapes[index])
                checked.append(grad)
        return checked


class Function:
    """Base class of differentiable operations. Subclass it; never instantiate it.

    Write `forward(ctx, *args)` (or `forward(*args)` plus `setup_context(ctx, inputs,
    output)`) and `backward(ctx, *grad_outputs)`, then call `apply`.
    """

    _uses_setup_context = False
    # True for a built-in op whose backward is written with operators and op functions
    # that mean the same on NumPy arrays (ops/table.py): with create_graph=False the engine
    # runs it on the arrays themselves. A Function you write gets Variables, as in PyTorch.
    backward_on_arrays = False
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
        # The thread's listener runs it: QUIET calls _apply_eagerly, a tool also notes it.
        return state.listener.apply(cls, args, kwargs)

    @classmethod
    def _apply_eagerly(cls, args: tuple, kwargs: dict) -> Any:
        """apply as the engine runs it: record a node when an input requires grad."""
        recording = False
        if state.grad_enabled:
            for value in args:
                if isinstance(value, Variable) and value._requires_grad:
                    recording = True
                    break
        # When recording, the node is forward's ctx; else a plain ctx, no graph bookkeeping.
        ctx = BackwardNode(cls, args) if recording else FunctionCtx(_NO_GRAD * len(args))
        raw, outputs = _run_forward(cls, ctx, args, kwargs)
        if recording:
            outputs_of.attach_outputs(ctx, outputs)
            if ctx.to_save:
                ctx._pack_saved(outputs)
            if state.anomaly_enabled:
                ctx._forward_trace = traceback.format_stack()[:-2]
        elif isinstance(raw, (Variable, tuple)):
            outputs_of.make_results_not_require_grad(outputs, args)
        return outputs if isinstance(raw, tuple) else outputs[0]


_NO_GRAD = (False,)


def _run_forward(cls: type[Function], ctx: FunctionCtx, args: tuple, kwargs: dict) -> tuple:
    """Call forward with grad recording off: (what it returned, its outputs as Variables)."""
    previous = state.grad_enabled
    state.grad_enabled = False  # what forward computes is never recorded
    try:
        if cls._uses_setup_context:
            # The second style: forward(*args), then setup_context fills ctx from the outputs.
            raw = cls._forward(*args, **kwargs)
            outputs = outputs_of.wrap(cls, raw)
            cls.setup_context(ctx, args, outputs if isinstance(raw, tuple) else outputs[0])
        else:
            raw = cls._forward(ctx, *args, **kwargs)
            outputs = None
    except (DeviceMismatchError, TypeError) as error:
        mistakes.raise_clearer_forward_error(cls, args, kwargs, error)
        raise
    finally:
        state.grad_enabled = previous
    if outputs is None:
        fresh = fast_path.fresh_output(cls, ctx, raw)
        if fresh is not None:
            return raw, fresh  # one new array, the usual case: see fast_path.py
    return raw, outputs_of.collect(cls, ctx, args, raw, outputs)


# ------------------------------------------------------------------ once_differentiable


def once_differentiable(backward: Callable) -> Callable:
    """Mark a backward that cannot itself be differentiated (it works on raw values).

    It runs with recording off. Under create_graph=True its results are not what the
    caller asked for (they carry no graph), so each is placed behind a node that raises
    the moment a later backward reaches it: double backward fails loudly, never silently.
    """

    @functools.wraps(backward)
    def run_once(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        previous = state.grad_enabled
        # Grad mode is on during backward only when create_graph=True was asked for.
        wants_graph = previous
        state.grad_enabled = False
        try:
            grads = backward(ctx, *grad_outputs)
        finally:
            state.grad_enabled = previous
        if not wants_graph or not isinstance(ctx, BackwardNode):
            return grads
        # create_graph=True asked for a graph of this backward, which it cannot give: mark
        # each result with a node that raises when a later backward reaches it.
        single = not isinstance(grads, tuple)
        marked = tuple(
            _marked_once_differentiable(g, ctx)
            if isinstance(g, (Variable, np.ndarray, np.generic))
            else g
            for g in ((grads,) if single else grads)
        )
        return marked[0] if single else marked

    return run_once


def _marked_once_differentiable(grad: Variable | np.ndarray, ctx: BackwardNode) -> Variable:
    """grad's value, behind a node that raises; it points where ctx's own node points, so
    backward() and grad() meet it on their way to the Function's inputs."""
    node = BackwardNode(_OnceDifferentiableError, ())
    node._next_nodes, node._next_nrs = ctx._next_nodes, ctx._next_nrs
    node.needs_input_grad = ctx.needs_input_grad
    node._input_shapes = ctx._input_shapes
    # NumPy arithmetic on 0-d arrays gives scalars (np.generic): those are marked too.
    marked = Variable._make(grad.data if isinstance(grad, Variable) else np.asarray(grad))
    outputs_of.attach_outputs(node, (marked,))
    return marked


class _OnceDifferentiableError(Function):
    """The node behind results of a @once_differentiable backward under create_graph."""

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable: its backward works on raw values and records no graph. "
            "Write the backward with Variable operations (without the decorator) to allow it."
        )


__all__ = ["BackwardNode", "Function", "FunctionCtx", "once_differentiable"]
