"""Values a node saves for backward: packed once forward ran, checked when backward reads.

Each saved Variable's version is remembered; `ctx.saved_tensors` refuses one changed in
place since (InplaceModifiedError), or read after backward freed it (BackwardTwiceError).
An output saved by its own Function is kept without its grad_fn (the node itself), so
the node and the output never form a reference cycle.
"""

from __future__ import annotations

from typing import Any

from minigrad.autodiff.errors import BackwardTwiceError, InplaceModifiedError
from minigrad.autodiff.shared import SHARED, shared
from minigrad.variable import Variable


class SavedOutput:
    """An output saved for backward, kept without its grad_fn to avoid a reference cycle."""

    __slots__ = ("data", "version_counter", "output_nr")

    def __init__(self, output: Variable) -> None:
        self.data = output._data
        self.version_counter = output._shared_version_counter()
        self.output_nr = output._output_nr

    def unpack(self, node: Any) -> Variable:
        variable = Variable._make(self.data, self.version_counter)
        variable.grad_fn = node
        variable._output_nr = self.output_nr
        variable._requires_grad = True
        return variable


def unpack(node: Any) -> tuple:
    """`node.saved_tensors`: the saved values, each Variable checked against its version."""
    saved = node._saved
    if saved is None:
        raise BackwardTwiceError(node.name())
    unpacked = None  # made only when a saved output must be rebuilt
    for index, (value, version) in enumerate(zip(saved, node._saved_versions)):
        if type(value) is SavedOutput:
            if unpacked is None:
                unpacked = list(saved)
            unpacked[index] = value = value.unpack(node)
        if isinstance(value, Variable):
            counter = value._version_counter
            if (0 if counter is None else counter.value) != version:
                raise InplaceModifiedError(node.name(), value.shape, value._version, version)
    return saved if unpacked is None else tuple(unpacked)


def pack(node: Any, outputs: tuple) -> None:
    """Move ctx.to_save into the node, remembering each Variable's version."""
    to_save = node.to_save
    saved, versions = None, []
    for index, value in enumerate(to_save):
        if isinstance(value, Variable):
            if _among(value, outputs):
                # Saved without its grad_fn (the node itself): no reference cycle.
                if saved is None:
                    saved = list(to_save)
                saved[index] = value = SavedOutput(value)
                versions.append(value.version_counter.value)
            else:
                counter = value._version_counter
                versions.append(0 if counter is None else counter.value)
        else:
            versions.append(None)
    node._saved = to_save if saved is None else tuple(saved)
    # Nodes share equal version tuples, (0, 0) and the like: fewer objects to collect.
    versions = tuple(versions)
    node._saved_versions = SHARED.get(versions) or shared(versions)
    node.to_save = ()


def free(node: Any) -> None:
    """Drop saved values after backward, so their memory can go (retain_graph keeps them).

    As in PyTorch, a node that saved nothing stays usable: backward can pass through it
    again, and only a node whose saved values are gone raises the "second time" error.
    """
    if node._saved:
        node._saved = None


def _among(value: Any, values: tuple) -> bool:
    for other in values:
        if value is other:
            return True
    return False
