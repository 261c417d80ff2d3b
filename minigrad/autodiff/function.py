"""Function: an operation with a hand-written forward and backward.

Subclass Function, write `forward` and `backward` as static methods and call
`MyFunction.apply(...)`. When an input requires grad, `apply` records one BackwardNode:
the node is also the `ctx` that forward filled, and the engine later calls
`MyFunction.backward(node, *grad_outputs)` to get one gradient per input.
"""

from __future__ import annotations

import inspect
import traceback
import weakref
from typing import Any

import numpy as np

from minigrad.autodiff import anomaly, checks, kinds, mistakes
from minigrad.autodiff.errors import BackwardTwiceError, InplaceModifiedError
from minigrad.autodiff.grad_mode import _state as _grad_state
from minigrad.devices import DeviceMismatchError, mixed_devices
from minigrad.variable import Variable


class FunctionCtx:
    """What forward leaves for backward: saved values, flags, and any attribute you set."""

    # The usual attributes live in slots; any other one a forward sets (ctx.dim = 1) goes
    # in a __dict__, made only then.
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


class _SavedOutput:
    """An output saved for backward, kept without its grad_fn to avoid a reference cycle."""

    __slots__ = ("data", "version_counter", "output_nr")

    def __init__(self, output: Variable) -> None:
        self.data = output._data
        self.version_counter = output._shared_version_counter()
        self.output_nr = output._output_nr

    def unpack(self, node: BackwardNode) -> Variable:
        variable = Variable._make(self.data, self.version_counter)
        variable.grad_fn = node
        variable._output_nr = self.output_nr
        variable._requires_grad = True
        return variable


_NO_EDGE = (None, 0)


class BackwardNode(FunctionCtx):
    """One recorded call of a Function: the ctx of its forward and a node of the graph.

    `next_functions[i]` is (node, output_nr) for input i: where its gradient goes next.
    """

    # Slots keep nodes small (and cheap for the garbage collector to walk); attributes a
    # forward sets on ctx still go in a __dict__, made only when one is set.
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

    def __init__(self, function: type[Function], args: tuple) -> None:
        self.to_save = ()
        self.dirty = ()
        self._function = function
        needs_input_grad, edges, shapes = [], [], []
        # Inputs that take no gradient have no edge; drawings still want to show them
        # (data, constants), so the node keeps weak references that never extend a lifetime.
        self._input_refs = ()
        for index, value in enumerate(args):
            if isinstance(value, Variable):
                needs_input_grad.append(value._requires_grad)
                data = value._data
                shapes.append(data.shape if type(data) is np.ndarray else kinds.shape_of(data))
                if value._requires_grad:
                    edges.append(_edge_to(value))
                    continue
                edges.append(_NO_EDGE)
                if not self._input_refs:
                    self._input_refs = [None] * len(args)
                self._input_refs[index] = weakref.ref(value)
            else:
                needs_input_grad.append(False)
                edges.append(_NO_EDGE)
                shapes.append(None)
        self.needs_input_grad = tuple(needs_input_grad)
        self.next_functions = tuple(edges)
        self._input_shapes = tuple(shapes)
        self._saved = ()
        self._saved_versions = ()
        self._output_metadata = ()
        self._output_refs = ()

    def name(self) -> str:
        return self._function.__name__ + "Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise BackwardTwiceError(self.name())
        unpacked = []
        for value, version in zip(self._saved, self._saved_versions):
            if type(value) is _SavedOutput:
                value = value.unpack(self)
            if isinstance(value, Variable) and value._version != version:
                raise InplaceModifiedError(self.name(), value.shape, value._version, version)
            unpacked.append(value)
        return tuple(unpacked)

    saved_variables = saved_tensors

    def _pack_saved(self, outputs: tuple) -> None:
        """Move ctx.to_save into the node, remembering each Variable's version."""
        saved, versions = [], []
        for value in self.to_save:
            if isinstance(value, Variable):
                if any(value is out for out in outputs):
                    value = _SavedOutput(value)
                    versions.append(value.version_counter.value)
                else:
                    versions.append(value._version)
            else:
                versions.append(None)
            saved.append(value)
        self._saved = tuple(saved)
        self._saved_versions = tuple(versions)
        self.to_save = ()

    def _free_saved(self) -> None:
        """Drop saved values after backward, so their memory can go (retain_graph keeps them).

        As in PyTorch, a node that saved nothing stays usable: backward can pass through it
        again, and only a node whose saved values are gone raises the "second time" error.
        """
        if self._saved:
            self._saved = None

    def _call_backward(self, grad_outputs: list) -> tuple:
        """Run the Function's backward and check its answer: one gradient per input."""
        try:
            grads = self._function.backward(self, *grad_outputs)
        except (TypeError, ValueError) as error:
            _explain_backward_error(self, grad_outputs, error)
            raise
        if type(grads) is not tuple:
            grads = (grads,)
        shapes = self._input_shapes
        if len(grads) != len(shapes):
            grads = checks.gradient_count(self.name(), grads, len(shapes))
        return tuple(
            self._check_gradient(index, grad, shape)
            for index, (grad, shape) in enumerate(zip(grads, shapes))
        )

    def _check_gradient(self, index: int, grad: Any, shape: Any) -> Variable | None:
        """The gradient for input `index`, as a Variable of the input's shape (or None)."""
        if grad is None:
            return None
        if type(grad) is Variable and type(grad._data) is np.ndarray and grad._data.shape == shape:
            return grad if self.needs_input_grad[index] else None  # the usual case
        return checks.gradient(self, index, grad, shape)  # fixes what it can, or explains


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
        raise RuntimeError(
            f"{type(self).__name__} should not be instantiated. Methods on autodiff "
            f"Functions are all static: call {type(self).__name__}.apply(...) instead."
        )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Decided once per class: which of the two forward styles this Function uses.
        cls._uses_setup_context = cls.setup_context is not Function.setup_context
        forward = cls.__dict__.get("forward")
        if forward is not None:
            # apply calls the forward you wrote as `_forward`. `forward` itself gets a guard
            # that explains a direct call, Square.forward(x), meant as Square.apply(x).
            cls._forward = forward
            function = forward.__func__ if isinstance(forward, staticmethod) else forward
            if inspect.isfunction(function):
                cls.forward = staticmethod(mistakes.guard_direct_forward(cls, function))

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
        record = _grad_state.enabled and _any_requires_grad(args)
        ctx = BackwardNode(cls, args) if record else _context_without_graph(args)

        previous = _grad_state.enabled
        _grad_state.enabled = False  # what forward computes is never recorded
        try:
            if cls._uses_setup_context:
                raw = cls._forward(*args, **kwargs)
                outputs = _wrap_outputs(cls, raw)
                cls.setup_context(ctx, args, _unwrap_like(raw, outputs))
            else:
                raw = cls._forward(ctx, *args, **kwargs)
                outputs = _wrap_outputs(cls, raw)
        except DeviceMismatchError as error:
            # The kernels noticed two devices; say it about Variables, whatever the op.
            raise mixed_devices(error) from None
        except TypeError:
            # forward's parameters may not fit the call (a forward without ctx, ...).
            clearer = mistakes.forward_call_error(cls, args, kwargs)
            if clearer is None:
                raise
            raise clearer from None
        finally:
            _grad_state.enabled = previous

        # Only a forward that returned Variables can have returned one of its inputs.
        returned_variables = isinstance(raw, (Variable, tuple))
        if returned_variables:
            outputs = _copy_returned_inputs(outputs, args, ctx)
        if ctx.dirty:
            _mark_dirty_inputs(ctx, outputs)
        if cls._output_is_view:
            _share_version_counter(outputs[0], args[0])
        if record:
            _attach_outputs(ctx, outputs)
            if ctx.to_save:
                ctx._pack_saved(outputs)
            if anomaly._enabled:
                ctx._forward_trace = traceback.format_stack()[:-1]
        elif returned_variables:
            _make_results_not_require_grad(outputs, args)
        return _unwrap_like(raw, outputs)


# --------------------------------------------------------------------------- helpers of apply


def _explain_backward_error(node: BackwardNode, grad_outputs: list, error: Exception) -> None:
    """Raise a clearer error when backward's parameters do not fit its call; add a hint to
    the usual ctx.saved_tensors slips. Anything else goes on unchanged."""
    clearer = mistakes.backward_call_error(node._function, len(grad_outputs))
    if clearer is not None:
        raise clearer from None
    note = mistakes.backward_error_note(node._function, node._saved, error)
    if note is not None:
        mistakes.add_note(error, note)


def _share_version_counter(output: Any, source: Any) -> None:
    if isinstance(output, Variable) and isinstance(source, Variable):
        if type(output._data) is np.ndarray and np.may_share_memory(output._data, source._data):
            output._version_counter = source._shared_version_counter()
            output._version_counter.add_view(output)
            output._is_view = True


def _any_requires_grad(args: tuple) -> bool:
    for value in args:
        if isinstance(value, Variable) and value._requires_grad:
            return True
    return False


def _is_input(value: Any, args: tuple) -> bool:
    for arg in args:
        if value is arg:
            return True
    return False


def _context_without_graph(args: tuple) -> FunctionCtx:
    return FunctionCtx((False,) * len(args))


def _make_results_not_require_grad(outputs: tuple, args: tuple) -> None:
    for output in outputs:
        # Fresh Variables made inside forward (afnio's style) are results, not leaves.
        if isinstance(output, Variable) and output.grad_fn is None and not _is_input(output, args):
            output._requires_grad = False


def _wrap_outputs(cls: type, raw: Any) -> tuple:
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


def _copy_returned_inputs(outputs: tuple, args: tuple, ctx: FunctionCtx) -> tuple:
    """An input returned unchanged (an identity forward) comes back as a new Variable sharing
    its data, so the input's own grad_fn is never rewritten. Inputs marked dirty (changed in
    place) stay the same object: their history is rebased onto the new node."""
    copied = []
    for value in outputs:
        if (
            isinstance(value, Variable)
            and _is_input(value, args)
            and not _is_input(value, ctx.dirty)
        ):
            value = Variable._make(value.data, value._shared_version_counter())
        copied.append(value)
    return tuple(copied)


def _unwrap_like(raw: Any, outputs: tuple) -> Any:
    return outputs if isinstance(raw, tuple) else outputs[0]


def _edge_to(value: Variable) -> tuple:
    """Where the gradient of an input goes: its grad_fn or, for a leaf, its accumulator."""
    if value.grad_fn is not None:
        return (value.grad_fn, value._output_nr)
    return value._edge_to_accumulator()


def _mark_dirty_inputs(ctx: FunctionCtx, outputs: tuple) -> None:
    for variable in ctx.dirty:
        if not _is_input(variable, outputs):
            raise checks.dirty_not_returned()
        if _grad_state.enabled and variable.grad_fn is None and variable._requires_grad:
            raise checks.leaf_changed_in_place(
                "Apply the Function under `with minigrad.no_grad():`, or to a .clone()."
            )
        variable._shared_version_counter().value += 1


def _attach_outputs(node: BackwardNode, outputs: tuple) -> None:
    """Make each differentiable output a non-leaf whose gradient goes to `node`."""
    metadata, refs = [], []
    for index, output in enumerate(outputs):
        if not isinstance(output, Variable):
            metadata.append(None)
            refs.append(None)
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
            or _is_input(output, node.non_differentiable)
        ):
            output._requires_grad = False
            refs.append(None)
            continue
        output.grad_fn = node
        output._output_nr = index
        output._requires_grad = True
        # Weak, because the output holds the node: drawings use it while the output lives.
        refs.append(weakref.ref(output))
    node._output_metadata = tuple(metadata)
    node._output_refs = tuple(refs)


__all__ = ["BackwardNode", "Function", "FunctionCtx"]
