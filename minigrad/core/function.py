"""Function: an operation with a hand-written forward and backward.

Subclass Function, write `forward` and `backward` as static methods and call
`MyFunction.apply(...)`. When an input requires grad, `apply` records one BackwardNode:
the node is also the `ctx` that forward filled, and the engine later calls
`MyFunction.backward(node, *grad_outputs)` to get one gradient per input.
"""

from __future__ import annotations

import functools
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core import checks, errors, fast_path, kinds, saved
from minigrad.core.fast_path import shared
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
            errors.explain_backward_error(self, grad_outputs, error)
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
        raise errors.function_instantiated(type(self))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Decided once per class: which of the two forward styles this Function uses.
        cls._uses_setup_context = cls.setup_context is not Function.setup_context
        # apply calls the forward you wrote as `_forward`; `forward` itself gets a guard
        # that explains a direct call, Square.forward(x), meant as Square.apply(x).
        errors.guard_forward(cls)

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
            attach_outputs(ctx, outputs)
            if ctx.to_save:
                ctx._pack_saved(outputs)
            if state.anomaly_enabled:
                ctx._forward_trace = traceback.format_stack()[:-2]
        elif isinstance(raw, (Variable, tuple)):
            make_results_not_require_grad(outputs, args)
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
            outputs = wrap(cls, raw)
            cls.setup_context(ctx, args, outputs if isinstance(raw, tuple) else outputs[0])
        else:
            raw = cls._forward(ctx, *args, **kwargs)
            outputs = None
    except (DeviceMismatchError, TypeError) as error:
        errors.raise_clearer_forward_error(cls, args, kwargs, error)
        raise
    finally:
        state.grad_enabled = previous
    if outputs is None:
        fresh = fast_path.fresh_output(cls, ctx, raw)
        if fresh is not None:
            return raw, fresh  # one new array, the usual case: see fast_path.py
    return raw, collect(cls, ctx, args, raw, outputs)


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
    attach_outputs(node, (marked,))
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


# ------------------------------------------------------------------------- inputs
#
# BackwardNode's general case of recording inputs: any number, some not Variables.
#
# The usual calls (one or two NumPy Variables that require grad, then plain values) are
# recorded straight in BackwardNode.__init__; everything else comes here.

def record_inputs(node: Any, args: tuple) -> None:
    """Fill needs_input_grad, next_functions and the input shapes of `node`."""
    needs_input_grad, edges, shapes = [], [], []
    # Inputs that take no gradient have no edge; drawings still want to show them
    # (data, constants), so the node keeps weak references that never extend a lifetime.
    for index, value in enumerate(args):
        if isinstance(value, Variable):
            needs_input_grad.append(value._requires_grad)
            data = value._data
            shapes.append(data.shape if type(data) is np.ndarray else kinds.shape_of(data))
            if value._requires_grad:
                if value._grad_fn is not None:
                    edges.append((value._grad_fn, value._output_nr))
                else:
                    edges.append(value._edge_to_accumulator())
                continue
            edges.append((None, 0))
            if not node._input_refs:
                node._input_refs = [None] * len(args)
            node._input_refs[index] = weakref.ref(value)
        else:
            needs_input_grad.append(False)
            edges.append((None, 0))
            shapes.append(None)
    node.needs_input_grad = tuple(needs_input_grad)
    node._next_nodes, next_nrs = tuple(zip(*edges)) or ((), ())
    node._next_nrs = shared(next_nrs)  # a pair per edge would be one more object each
    node._input_shapes = tuple(shapes)


# ------------------------------------------------------------------------- outputs
#
# The less usual outputs of a Function: apply's helpers beyond one fresh array.
#
# Forward may return several values, plain numbers, an input unchanged (an identity), an
# input it changed in place (marked with ctx.mark_dirty), or a view of an input's memory.
# Each is turned into the Variables apply returns, with the graph and version bookkeeping
# PyTorch gives it.

def is_input(value: Any, args: tuple) -> bool:
    """Whether `value` is one of `args` itself (identity: Variables compare elementwise)."""
    for arg in args:
        if value is arg:
            return True
    return False


def wrap(cls: type, raw: Any) -> tuple:
    """Turn what forward returned into a tuple of Variables (other values pass through)."""
    if type(raw) is np.ndarray:
        return (Variable._make(raw),)
    if isinstance(raw, np.generic):
        # NumPy gives scalars for 0-d results; Variables always hold arrays.
        return (Variable._make(np.asarray(raw)),)
    if raw is None:
        raise checks.forward_returned_none(cls)
    values = raw if isinstance(raw, tuple) else (raw,)
    outputs = []
    for value in values:
        if isinstance(value, np.ndarray) or kinds.kind_of(value) is not None:
            value = Variable._make(value)
        elif isinstance(value, (np.generic, int, float)) and not isinstance(value, bool):
            value = Variable._make(np.asarray(value))
        outputs.append(value)
    return tuple(outputs)


def collect(cls: type, ctx: Any, args: tuple, raw: Any, outputs: tuple | None) -> tuple:
    """forward's result as a tuple of outputs (Variables), with inputs changed in place
    marked and views sharing their base's version counter."""
    if outputs is None:
        outputs = wrap(cls, raw)
    # Only a forward that returned Variables can have returned one of its inputs.
    if isinstance(raw, (Variable, tuple)):
        outputs = copy_returned_inputs(outputs, args, ctx)
    if ctx.dirty:
        mark_dirty_inputs(ctx, outputs)
    if cls._output_is_view:
        share_version_counter(outputs[0], args[0])
    return outputs


def copy_returned_inputs(outputs: tuple, args: tuple, ctx: Any) -> tuple:
    """An input returned unchanged (an identity forward) comes back as a new Variable sharing
    its data, so the input's own grad_fn is never rewritten. Inputs marked dirty (changed in
    place) stay the same object: their history is rebased onto the new node."""
    copied = []
    for value in outputs:
        if isinstance(value, Variable) and is_input(value, args) and not is_input(value, ctx.dirty):
            value = Variable._make(value.data, value._shared_version_counter())
        copied.append(value)
    return tuple(copied)


def mark_dirty_inputs(ctx: Any, outputs: tuple) -> None:
    """Inputs forward changed in place (ctx.mark_dirty): returned, and a version newer."""
    for variable in ctx.dirty:
        if not is_input(variable, outputs):
            raise checks.dirty_not_returned()
        if state.grad_enabled and variable._grad_fn is None and variable._requires_grad:
            raise checks.leaf_changed_in_place(
                "Apply the Function under `with minigrad.no_grad():`, or to a .clone()."
            )
        variable._shared_version_counter().value += 1


def share_version_counter(output: Any, source: Any) -> None:
    """A view (reshape, transpose, ...) shares its base's version counter."""
    if isinstance(output, Variable) and isinstance(source, Variable):
        if type(output._data) is np.ndarray and _is_view_of(output._data, source._data):
            output._version_counter = source._shared_version_counter()
            output._version_counter.add_view(output)
            output._is_view = True


def _is_view_of(data: np.ndarray, source: Any) -> bool:
    # NumPy points a view's .base at the array that owns the memory: a cheap first test.
    owner = data.base
    if owner is not None and (owner is source or owner is getattr(source, "base", None)):
        return True
    return bool(np.may_share_memory(data, source))


def make_results_not_require_grad(outputs: tuple, args: tuple) -> None:
    for output in outputs:
        # Fresh Variables made inside forward (afnio's style) are results, not leaves.
        if isinstance(output, Variable) and output._grad_fn is None and not is_input(output, args):
            output._requires_grad = False


def attach_outputs(node: Any, outputs: tuple) -> None:
    """Make each differentiable output a non-leaf whose gradient goes to `node`."""
    if fast_path.attach_one_float_output(node, outputs):
        return  # the usual case, one float array: fast_path.py
    metadata = []
    for index, output in enumerate(outputs):
        if not isinstance(output, Variable):
            metadata.append(None)
            continue
        data = output._data
        # Shape and dtype (and the kind, if not NumPy's) let the engine hand backward zeros
        # for an output that got no gradient, non-differentiable ones included (as PyTorch).
        kind = None if type(data) is np.ndarray else kinds.kind_of(data)
        if kind is None:
            metadata.append((data.shape, data.dtype))
        else:
            metadata.append((data.shape, data.dtype, kind) if kind.has_shape else ((), None, kind))
        if (
            (kind is None or kind.has_shape)
            and data.dtype.kind != "f"
            or is_input(output, node.non_differentiable)
        ):
            output._requires_grad = False
            continue
        # The node keeps no reference to its outputs (each output holds the node): a
        # drawing finds those still alive through the garbage collector (autodiff/graph.py).
        output._grad_fn = node
        output._output_nr = index
        output._requires_grad = True
    node._output_metadata = tuple(metadata)


def zeros_for(metadata: Any) -> Variable | None:
    """The gradient of an output that received none: zeros of its shape, dtype and kind."""
    if metadata is None:
        return None  # not a Variable (a plain value forward passed through): no gradient
    if len(metadata) == 3:  # (shape, dtype, kind): not a NumPy array
        shape, dtype, kind = metadata
        return Variable._make(kind.zeros(shape, dtype))
    shape, dtype = metadata
    zeros = Variable._make(np.zeros(shape, dtype=dtype))
    state.listener.constants([zeros])  # minigrad.compile keeps these zeros as a constant
    return zeros


__all__ = ["BackwardNode", "Function", "FunctionCtx", "once_differentiable"]
