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

_edge_to_accumulator = Variable._edge_to_accumulator


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
_BOTH = (True, True)
# For n inputs of which only the first is a Variable: its flags, the others' edges and shapes.
_FIRST_ONLY = [(True,) + (False,) * (n - 1) for n in range(1, 5)]
_FIRST_ONLY.insert(0, ())
_NO_EDGES = [(), ()] + [(_NO_EDGE,) * (n - 1) for n in range(2, 5)]
_NO_SHAPES = [(), ()] + [(None,) * (n - 1) for n in range(2, 5)]
# Shape tuples recur (every 0-d op has the same ones): nodes share one copy of each, so a
# node holds no tuple of its own for them (fewer objects for the garbage collector).
_SHARED: dict = {}


def _shared(value: tuple) -> tuple:
    found = _SHARED.get(value)
    if found is None:
        if len(_SHARED) >= 4096:
            return value
        found = _SHARED[value] = value
    return found


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
        self._record_inputs(args)

    def _record_inputs(self, args: tuple) -> None:
        """The general case: any number of inputs, some of them not Variables."""
        needs_input_grad, edges, shapes = [], [], []
        # Inputs that take no gradient have no edge; drawings still want to show them
        # (data, constants), so the node keeps weak references that never extend a lifetime.
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

    def name(self) -> str:
        return self._function.__name__ + "Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is None:
            raise BackwardTwiceError(self.name())
        unpacked = None  # made only when a saved output must be rebuilt
        for index, (value, version) in enumerate(zip(saved, self._saved_versions)):
            if type(value) is _SavedOutput:
                if unpacked is None:
                    unpacked = list(saved)
                unpacked[index] = value = value.unpack(self)
            if isinstance(value, Variable):
                counter = value._version_counter
                if (0 if counter is None else counter.value) != version:
                    raise InplaceModifiedError(self.name(), value.shape, value._version, version)
        return saved if unpacked is None else tuple(unpacked)

    saved_variables = saved_tensors

    def _pack_saved(self, outputs: tuple) -> None:
        """Move ctx.to_save into the node, remembering each Variable's version."""
        to_save = self.to_save
        saved, versions = None, []
        for index, value in enumerate(to_save):
            if isinstance(value, Variable):
                if _is_input(value, outputs):
                    # Saved without its grad_fn (the node itself): no reference cycle.
                    if saved is None:
                        saved = list(to_save)
                    saved[index] = value = _SavedOutput(value)
                    versions.append(value.version_counter.value)
                else:
                    counter = value._version_counter
                    versions.append(0 if counter is None else counter.value)
            else:
                versions.append(None)
        self._saved = to_save if saved is None else tuple(saved)
        # Nodes share equal version tuples, (0, 0) and the like: fewer objects to collect.
        versions = tuple(versions)
        self._saved_versions = _SHARED.get(versions) or _shared(versions)
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
        if _grad_state.enabled:
            for value in args:
                if isinstance(value, Variable) and value._requires_grad:
                    return _apply_recording(cls, args, kwargs)
        return _apply_without_graph(cls, args, kwargs)


def _run_forward(cls: type[Function], ctx: FunctionCtx, args: tuple, kwargs: dict) -> tuple:
    """Call forward (grad recording off) and return (what it returned, its outputs)."""
    previous = _grad_state.enabled
    _grad_state.enabled = False  # what forward computes is never recorded
    try:
        if cls._uses_setup_context:
            raw = cls._forward(*args, **kwargs)
            outputs = _wrap_outputs(cls, raw)
            cls.setup_context(ctx, args, _unwrap_like(raw, outputs))
        else:
            raw = cls._forward(ctx, *args, **kwargs)
            outputs = None
    except (DeviceMismatchError, TypeError) as error:
        clearer = _forward_error(cls, args, kwargs, error)
        if clearer is None:
            raise
        raise clearer from None
    finally:
        _grad_state.enabled = previous
    return raw, _outputs_of(cls, ctx, args, raw, outputs)


def _forward_error(cls: type, args: tuple, kwargs: dict, error: Exception) -> Exception | None:
    """A clearer error than the one forward raised, or None to let that one through."""
    if isinstance(error, DeviceMismatchError):
        # The kernels noticed two devices; say it about Variables, whatever the op.
        return mixed_devices(error)
    # forward's parameters may not fit the call (a forward without ctx, ...).
    return mistakes.forward_call_error(cls, args, kwargs)


def _outputs_of(
    cls: type[Function], ctx: FunctionCtx, args: tuple, raw: Any, outputs: tuple | None
) -> tuple:
    """forward's result as a tuple of outputs (Variables), with inputs changed in place
    marked and views sharing their base's version counter."""
    if outputs is None:
        if type(raw) is np.ndarray:
            outputs = (Variable._make(raw),)
        elif isinstance(raw, np.generic):
            # NumPy gives scalars for 0-d results; Variables always hold arrays.
            outputs = (Variable._make(np.asarray(raw)),)
        else:
            outputs = _wrap_outputs(cls, raw)
    # Only a forward that returned Variables can have returned one of its inputs.
    if isinstance(raw, (Variable, tuple)):
        outputs = _copy_returned_inputs(outputs, args, ctx)
    if ctx.dirty:
        _mark_dirty_inputs(ctx, outputs)
    if cls._output_is_view:
        _share_version_counter(outputs[0], args[0])
    return outputs


def _apply_without_graph(cls: type[Function], args: tuple, kwargs: dict) -> Any:
    """apply when nothing is recorded: no node, no graph bookkeeping."""
    count = len(args)
    ctx = _new(FunctionCtx)
    ctx.to_save = ctx.dirty = ()
    ctx.needs_input_grad = _NO_GRADS[count] if count < 4 else (False,) * count
    if cls._uses_setup_context:
        raw, outputs = _run_forward(cls, ctx, args, kwargs)
    else:
        previous = _grad_state.enabled
        _grad_state.enabled = False  # what forward computes is never recorded
        try:
            raw = cls._forward(ctx, *args, **kwargs)
        except (DeviceMismatchError, TypeError) as error:
            clearer = _forward_error(cls, args, kwargs, error)
            if clearer is None:
                raise
            raise clearer from None
        finally:
            _grad_state.enabled = previous
        if type(raw) is np.ndarray and not ctx.dirty and not cls._output_is_view:
            return Variable._make(raw)  # the usual case: one fresh array
        outputs = _outputs_of(cls, ctx, args, raw, None)
    if isinstance(raw, (Variable, tuple)):
        _make_results_not_require_grad(outputs, args)
    return _unwrap_like(raw, outputs)


def _apply_recording(cls: type[Function], args: tuple, kwargs: dict) -> Any:
    """apply when an input requires grad: the node is forward's ctx, then the outputs' grad_fn."""
    node = BackwardNode(cls, args)
    raw, outputs = _run_forward(cls, node, args, kwargs)
    _attach_outputs(node, outputs)
    if node.to_save:
        node._pack_saved(outputs)
    if anomaly._enabled:
        node._forward_trace = traceback.format_stack()[:-2]
    return outputs[0] if type(raw) is np.ndarray else _unwrap_like(raw, outputs)


_new = object.__new__
_NO_GRADS = ((), (False,), (False, False), (False, False, False))


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
    if len(outputs) == 1 and not node.non_differentiable:  # the usual case, one array
        output = outputs[0]
        if type(output) is Variable:
            data = output._data
            if type(data) is np.ndarray and data.dtype.kind == "f":
                metadata = ((data.shape, data.dtype),)
                node._output_metadata = _SHARED.get(metadata) or _shared(metadata)
                output.grad_fn = node
                output._output_nr = 0
                output._requires_grad = True
                # A single output's weak reference is kept bare, not in a tuple.
                node._output_refs = weakref.ref(output)
                return
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
