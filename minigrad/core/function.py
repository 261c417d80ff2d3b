"""Function: an operation with a hand-written forward and backward.

Subclass Function, write `forward` and `backward` as static methods and call
`MyFunction.apply(...)`. When an input requires grad, `apply` records one BackwardNode:
the node is also the `ctx` that forward filled, and the engine later calls
`MyFunction.backward(node, *grad_outputs)` to get one gradient per input.
"""

from __future__ import annotations

import functools
import inspect
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core import checks, errors, fast_path
from minigrad.core.errors import BackwardTwiceError, InplaceModifiedError, missing_name
from minigrad.core.fast_path import SHARED, shared
from minigrad.core.grad_mode import state
from minigrad.core.variable import AccumulateGrad, Variable, kind_of, shape_of
from minigrad.devices import DeviceMismatchError

# ------------------------------------------------------------------------- saved
#
# Values a node saves for backward: packed once forward ran, checked when backward reads.
#
# Each saved Variable's version is remembered; `ctx.saved_tensors` refuses one changed in
# place since (InplaceModifiedError), or read after backward freed it (BackwardTwiceError).
# An output saved by its own Function is kept without its grad_fn (the node itself), so
# the node and the output never form a reference cycle: as its bare array (nothing for the
# garbage collector to track) until it gets a version counter, then as a SavedOutput.

class SavedOutput:
    """An output saved for backward, kept without its grad_fn to avoid a reference cycle."""

    __slots__ = ("array", "version_counter", "output_nr")

    def __init__(self, output: Variable) -> None:
        self.array = output._data
        self.version_counter = output._shared_version_counter()
        self.output_nr = output._output_nr

    def unpack(self, node: Any) -> Variable:
        return _as_output(self.array, node, self.output_nr, self.version_counter)


class PackedValue:
    """A saved Variable as a saved_tensors_hooks pack hook returned it, with its unpack hook."""

    __slots__ = ("packed", "unpack_hook", "output_nr", "shape")

    def __init__(
        self, packed: Any, unpack_hook: Callable, output_nr: int | None, shape: tuple
    ) -> None:
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.output_nr = output_nr  # set when the node saved one of its own outputs
        self.shape = shape  # the packed Variable's: unpack must give it back

    def unpack(self, node: Any) -> Variable:
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Variable):
            raise TypeError(
                f"a saved_tensors_hooks unpack hook must return a Variable; it returned "
                f"{type(value).__name__} (for {node.name()}). Return what the pack hook was "
                f"given, rebuilt from what it kept."
            )
        if tuple(value.shape) != tuple(self.shape):
            # A backward computed from a value of another shape would be silently wrong.
            raise RuntimeError(
                f"a saved_tensors_hooks unpack hook returned a Variable of shape "
                f"{tuple(value.shape)} (for {node.name()}), but the Variable packed had shape "
                f"{tuple(self.shape)}. Return what the pack hook was given, rebuilt from what "
                f"it kept."
            )
        if self.output_nr is not None:  # the node's own output: its history is the node
            value = _as_output(value._data, node, self.output_nr, value._version_counter)
        return value


class saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """`with saved_tensors_hooks(pack, unpack):` each Variable a Function saves for backward
    is stored as pack(variable), and backward reads unpack(stored) instead: to count saved
    values, to keep them elsewhere (on disk, compressed), or to drop and recompute them."""

    def __init__(self, pack_hook: Callable[[Variable], Any], unpack_hook: Callable) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError(
                "saved_tensors_hooks(pack_hook, unpack_hook) needs two functions: pack(variable) "
                "-> anything, and unpack(anything) -> Variable."
            )
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self) -> saved_tensors_hooks:
        state.saved_tensors_hooks = (*state.saved_tensors_hooks, self.hooks)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        state.saved_tensors_hooks = state.saved_tensors_hooks[:-1]


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (PyTorch's name)
    """`with save_on_cpu():` each saved Variable is kept in host memory, and moved back to
    its device when backward reads it: GPU memory traded for copies. `pin_memory` is taken
    for PyTorch's code and changes nothing (NumPy memory is never pinned)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(_to_cpu, _to_its_device)


def _to_cpu(variable: Variable) -> tuple:
    return variable.device, variable.cpu()


def _to_its_device(packed: tuple) -> Variable:
    device, variable = packed
    return variable.to(device)


def unpack(node: Any) -> tuple:
    """`node.saved_tensors`: the saved values, each Variable checked against its version."""
    saved = node._saved
    if saved is None:
        raise BackwardTwiceError(node.name())
    unpacked = None  # made only when a saved output must be rebuilt
    for index, (value, version) in enumerate(zip(saved, node._saved_versions)):
        if type(value) is PackedValue:
            # The hooks own these values: what unpack returns is not version-checked.
            state.listener.unsupported(
                "saved_tensors_hooks (a replay would not call them); use them outside "
                "the compiled step"
            )
            if unpacked is None:
                unpacked = list(saved)
            unpacked[index] = value.unpack(node)
            continue
        if type(value) is SavedOutput:
            if unpacked is None:
                unpacked = list(saved)
            unpacked[index] = value = value.unpack(node)
        elif type(version) is tuple:  # ("output", nr): the node's own output, a bare array
            if not state.saved_as_arrays:  # (a backward run on arrays takes the array)
                if unpacked is None:
                    unpacked = list(saved)
                unpacked[index] = _as_output(value, node, version[1])
            continue  # no counter was ever made for it: never changed in place
        if isinstance(value, Variable):
            counter = value._version_counter
            if (0 if counter is None else counter.value) != version:
                raise InplaceModifiedError(node.name(), value.shape, value._version, version)
    saved = saved if unpacked is None else tuple(unpacked)
    if state.saved_as_arrays:  # a backward running on arrays (function.py)
        return tuple(value._data if isinstance(value, Variable) else value for value in saved)
    return saved


def pack(node: Any, outputs: tuple) -> None:
    """Move ctx.to_save into the node, remembering each Variable's version."""
    to_save = node.to_save
    saved, versions = None, []
    for index, value in enumerate(to_save):
        if isinstance(value, Variable):
            if any(value is output for output in outputs):  # one of its own outputs
                # Saved without its grad_fn (the node itself): no reference cycle.
                if saved is None:
                    saved = list(to_save)
                if value._version_counter is None and not state.saved_tensors_hooks:
                    saved[index] = value._data
                    versions.append(shared(("output", value._output_nr)))
                    continue
                saved[index] = value = SavedOutput(value)
                versions.append(value.version_counter.value)
            else:
                if value._inference and not state.inference_enabled:
                    raise checks.inference_saved(node, index)
                counter = value._version_counter
                versions.append(0 if counter is None else counter.value)
        elif value is not None and not (kind_of(value) or isinstance(value, (str, np.generic))):
            raise checks.not_saveable(node, index, value)  # a number, a list: refused
        else:
            versions.append(None)
    if state.saved_tensors_hooks:
        saved = _packed_by_hooks(saved or list(to_save), outputs)
    node._saved = to_save if saved is None else tuple(saved)
    # Nodes share equal version tuples, (0, 0) and the like: fewer objects to collect.
    versions = tuple(versions)
    node._saved_versions = SHARED.get(versions) or shared(versions)
    node.to_save = ()


def _as_output(data: Any, node: Any, output_nr: int, counter: Any = None) -> Variable:
    """Output `output_nr` of `node` again, from its saved data (a second Variable for it)."""
    variable = Variable._make(data, counter)
    variable._grad_fn, variable._output_nr, variable._requires_grad = node, output_nr, True
    REBUILT[id(variable)] = variable  # drawings prefer the output itself (autodiff/graph.py)
    return variable


# id -> each saved output rebuilt as a Variable, while it lives: tools that look for a
# node's output (graph.live_outputs) take the one forward made when it is still alive.
REBUILT: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def adopt_counter(node: Any, output: Variable) -> None:
    """`output` of `node` was just given a version counter: if the node saved it as a bare
    array, keep it as a SavedOutput with that counter, which unpack checks."""
    saved, versions = node._saved, node._saved_versions
    marker = ("output", output._output_nr)
    if saved and marker in versions and saved[versions.index(marker)] is output._data:
        index = versions.index(marker)
        node._saved = (*saved[:index], SavedOutput(output), *saved[index + 1 :])
        versions = (*versions[:index], output._version_counter.value, *versions[index + 1 :])
        node._saved_versions = shared(versions)


def free(node: Any) -> None:
    """Drop saved values after backward, so their memory can go (retain_graph keeps them).

    As in PyTorch, a node that saved nothing stays usable: backward can pass through it
    again, and only a node whose saved values are gone raises the "second time" error.
    """
    if node._saved:
        node._saved = None


def _packed_by_hooks(saved: list, outputs: tuple) -> list:
    """The innermost saved_tensors_hooks' pack hook applied to each saved Variable."""
    stack = state.saved_tensors_hooks
    pack_hook, unpack_hook = stack[-1]
    # As in PyTorch, a pack hook runs with the hooks off: a hook that computes with its
    # Variable (x * 4) saves values of its own, which must not be packed by it again.
    state.saved_tensors_hooks = ()
    try:
        for index, value in enumerate(saved):
            if type(value) is SavedOutput:
                # The hook sees the output without its history (which would hold the node).
                output = Variable._make(value.array, value.version_counter)
                saved[index] = PackedValue(
                    pack_hook(output), unpack_hook, value.output_nr, output.shape
                )
            elif isinstance(value, Variable):
                saved[index] = PackedValue(pack_hook(value), unpack_hook, None, value.shape)
    finally:
        state.saved_tensors_hooks = stack
    return saved


# ------------------------------------------------------------ PyTorch's node._saved_self


def attribute(node: Any, name: str) -> Variable:
    """PyTorch's `node._saved_self`, `_saved_other`, `_saved_<argument>`, `_saved_result`:
    the value `node` saved for backward from its first input, second input, the input of
    that name in its Function's forward, or its output (a new Variable equal to it)."""
    prefix = "_saved_"
    named = isinstance(name, str) and name.startswith(prefix)
    if not named:
        if name in _NODE_METHODS_MISSING:  # a PyTorch Node method minigrad lacks
            raise missing_name("autograd.graph.Node", name, dir(type(node)))
        # Most often a ctx attribute that forward did not set (ctx.scale for ctx.k).
        kept = ", ".join(f"ctx.{key}" for key in sorted(vars(node)))
        raise AttributeError(
            f"{_node_name(node)!r} object has no attribute {name!r}"
            + (f"; forward set {kept}" if kept else "; forward set no attribute on ctx")
        )
    saved = node._saved
    if saved is None:
        raise RuntimeError(
            f"{node.name()}.{name}: the saved values were freed by a backward; pass "
            "retain_graph=True to that backward to read them after it."
        )
    wanted = name[len(prefix) :]
    if wanted in ("result", "result0"):
        position = _saved_output_position(node, saved)
    else:
        position = _saved_input_position(node, saved, _input_index(node, wanted))
    if position is None:
        raise AttributeError(
            f"{node.name()} saved no value for {wanted!r}: it saved "
            f"{len(saved)} value(s) for backward. graph.saved_values(node) lists them."
        )
    value = unpack(node)[position]
    if value is None and getattr(node, "numbers", None):  # x * 2 kept its 2 on ctx
        return node.numbers[position]
    return value


# PyTorch's autograd.graph.Node methods minigrad does not have (yet).
_NODE_METHODS_MISSING = ("register_hook", "register_prehook", "metadata")


def _node_name(node: Any) -> str:
    """The node's name, MulBackward, even for a node whose construction did not finish."""
    try:
        function = object.__getattribute__(node, "_function")
    except AttributeError:
        return type(node).__name__
    return function.__name__ + "Backward"


def _input_index(node: Any, wanted: str) -> int | None:
    """Which input `wanted` names: self and other (PyTorch's names), or forward's own."""
    if wanted in ("self", "other"):
        return 0 if wanted == "self" else 1
    forward = node._function.forward
    names = [p for p in inspect.signature(forward).parameters if p != "ctx"]
    return names.index(wanted) if wanted in names else None


def output_nr_at(node: Any, position: int) -> int | None:
    """Which of its own outputs `node` saved at `position` of its saved values (None when
    the value there is not one of them)."""
    version = node._saved_versions[position]
    if type(version) is tuple:  # ("output", nr): kept as a bare array
        return version[1]
    return getattr(node._saved[position], "output_nr", None)  # SavedOutput, PackedValue


def _saved_output_position(node: Any, saved: tuple) -> int | None:
    for position in range(len(saved)):
        if output_nr_at(node, position) == 0:
            return position
    return None


def _saved_input_position(node: Any, saved: tuple, index: int | None) -> int | None:
    if index is None or index >= len(node._next_nodes):  # _saved_other of a one-input op
        return None
    inputs = [
        value for position, value in enumerate(saved) if output_nr_at(node, position) is None
    ]
    variable = _input_variable(node, index)
    for position, value in enumerate(saved):
        if variable is not None and value is variable:
            return position
    # Kept by saved_tensors_hooks, a value is no longer the input itself: when forward
    # saved each input in order, input `index` is the `index`-th value saved.
    if len(inputs) == len(node._next_nodes) and index < len(inputs):
        # by identity: == on Variables compares elementwise
        return next(position for position, value in enumerate(saved) if value is inputs[index])
    return None


def _input_variable(node: Any, index: int) -> Variable | None:
    """The Variable that input `index` of `node` was, when the node can tell: a leaf (its
    AccumulateGrad holds it), a constant (held weakly), or a value the node saved."""
    next_node, output_nr = node._next_nodes[index], node._next_nrs[index]
    if next_node is None:
        refs = node._input_refs
        return refs[index]() if refs and refs[index] is not None else None
    if type(next_node) is AccumulateGrad:  # the leaf itself
        return next_node.variable
    for value in node._saved:
        if isinstance(value, Variable) and value._grad_fn is next_node:
            if value._output_nr == output_nr:
                return value
    return None



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
    """One recorded call of a Function: the ctx of its forward and a node of the graph,
    whose `next_functions` say where each Variable input's gradient goes next."""

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
    _overwritten: tuple | None = None  # (nr, weakref) of an output changed in place since

    def __getattr__(self, name: str) -> Any:  # PyTorch's node._saved_self: see attribute()
        return attribute(self, name)

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
        """PyTorch's edges: ((node, output_nr), ...), one pair per Variable input. As in PyTorch,
        an argument such as a dim or an exponent 2 is not listed, but a number operand of
        + - * / is (PyTorch wraps it into a Tensor): (None, 0)."""
        if getattr(self._function, "lists_number_operands", False):  # ops/arithmetic.py
            return tuple(zip(self._next_nodes, self._next_nrs))
        edges = zip(self._next_nodes, self._next_nrs, self._input_shapes)
        return tuple((node, output_nr) for node, output_nr, shape in edges if shape is not None)

    def name(self) -> str:
        return self._function.__name__ + "Backward"

    def __call__(self, *grad_outputs: Any) -> Any:
        """node(grad, ...): this one step of backward, as PyTorch's nodes are called: the
        gradient of each input (None where there is none), or None when no grad is given."""
        for index, grad in enumerate(grad_outputs):
            if grad is not None and not isinstance(grad, Variable):
                raise TypeError(
                    f"{self.name()}(...): argument {index} is not a Variable but "
                    f"{type(grad).__name__}; pass the gradient of each output, or None."
                )
        if all(grad is None for grad in grad_outputs):
            return None
        everything = self._call_backward(list(grad_outputs))
        # One gradient per Variable input (an argument such as a dim has none), as PyTorch.
        grads = [g for g, shape in zip(everything, self._input_shapes) if shape is not None]
        return grads[0] if len(grads) == 1 else tuple(grads)

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    # Saved values are packed after forward and checked when backward reads them, in
    # "saved values", above.
    saved_tensors = property(unpack)
    saved_variables = saved_tensors
    _pack_saved = pack
    _adopt_counter = adopt_counter

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
            arrays = [checks.array_gradient(self, i, g, shapes[i]) for i, g in enumerate(grads)]
            return fast_path.as_variables(arrays)
        checked = fast_path.usual_gradients(self, grads)  # NumPy, of the inputs' shapes
        if checked is None:
            checked = []
            for index, grad in enumerate(grads):
                if grad is not None or self.needs_input_grad[index]:
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
        # apply calls your forward as `_forward`; `forward` explains a call meant as .apply(x).
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
        """apply as the engine runs it: forward with recording off; then, when grad mode is
        on and an input requires grad, the node (forward's ctx) gets the outputs and packs
        the values forward saved."""
        previous = state.grad_enabled
        recording = False
        if previous:
            for value in args:
                if isinstance(value, Variable) and value._requires_grad:
                    recording = True
                    break
        # When recording, the node is forward's ctx; else a plain ctx, no graph bookkeeping.
        ctx = BackwardNode(cls, args) if recording else FunctionCtx(_NO_GRAD * len(args))
        state.grad_enabled = False  # what forward computes is never recorded
        try:
            if cls._uses_setup_context:
                # The second style: forward(*args), then setup_context fills ctx from them.
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
        if cls._uses_setup_context:
            outputs = collect(cls, ctx, args, raw, outputs)
        else:  # one new array is the usual case (fast_path.py); anything else is collected
            outputs = fast_path.fresh_output(cls, ctx, raw) or collect(cls, ctx, args, raw, None)
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
    marked = Variable._make(grad._data if isinstance(grad, Variable) else np.asarray(grad))
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
    # An input without gradient has no edge: drawings find it through a weak reference.
    for index, value in enumerate(args):
        if isinstance(value, Variable):
            needs_input_grad.append(value._requires_grad)
            data = value._data
            shapes.append(data.shape if type(data) is np.ndarray else shape_of(data))
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
    """Forward's result as Variables over plain arrays (not x.data's views); others pass."""
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
        if isinstance(value, np.ndarray) or kind_of(value) is not None:
            value = Variable._make(np.asarray(value) if isinstance(value, np.ndarray) else value)
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
            value = Variable._make(value._data, value._shared_version_counter())
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
        kind = None if type(data) is np.ndarray else kind_of(data)
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
