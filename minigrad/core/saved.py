"""Values a node saves for backward: packed once forward ran, checked when backward reads.

Each saved Variable's version is remembered; `ctx.saved_tensors` refuses one changed in
place since (InplaceModifiedError), or read after backward freed it (BackwardTwiceError).
An output saved by its own Function is kept without its grad_fn (the node itself), so
the node and the output never form a reference cycle: as its bare array (nothing for the
garbage collector to track) until it gets a version counter, then as a SavedOutput.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from minigrad.core.errors import BackwardTwiceError, InplaceModifiedError, missing_name
from minigrad.core.fast_path import SHARED, shared
from minigrad.core.state import state
from minigrad.core.variable import AccumulateGrad, Variable


class SavedOutput:
    """An output saved for backward, kept without its grad_fn to avoid a reference cycle."""

    __slots__ = ("data", "version_counter", "output_nr")

    def __init__(self, output: Variable) -> None:
        self.data = output._data
        self.version_counter = output._shared_version_counter()
        self.output_nr = output._output_nr

    def unpack(self, node: Any) -> Variable:
        return _as_output(self.data, node, self.output_nr, self.version_counter)


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
            value = Variable._make(value._data, value._version_counter)
            value._grad_fn, value._output_nr, value._requires_grad = node, self.output_nr, True
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
                counter = value._version_counter
                versions.append(0 if counter is None else counter.value)
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
    """Output `output_nr` of `node` again, from its saved data."""
    variable = Variable._make(data, counter)
    variable._grad_fn, variable._output_nr, variable._requires_grad = node, output_nr, True
    return variable


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
                output = Variable._make(value.data, value.version_counter)
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
    return unpack(node)[position]


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
    if index is None:
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
        return saved.index(inputs[index])
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
