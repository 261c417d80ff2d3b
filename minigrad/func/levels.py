"""Levels: how the transforms of torch.func nest on one engine.

A transform differentiates its own inputs. grad(f)(x) runs f on a stand-in for x that
requires grad: a fresh leaf over x's data when x does not require grad, a recorded alias
of x when it does (so that whoever differentiates x from outside still reaches it).

Nesting works because a transform records its backward (create_graph=True) whenever
something outside it may differentiate its result: an enclosing transform (the depth
counts the transforms running), or a Variable the caller made that requires grad and that
the result depends on. When nothing does, the result comes back as plain data, as
PyTorch's does: grad(f)(x).requires_grad is False for an x that does not require grad.

Depth 0 is user code; a transform's own work runs at depth 1 and up.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minigrad.core.grad_mode import state
from minigrad.core.variable import AccumulateGrad, Variable
from minigrad.func.pytree import tree_map

# The leaves the transforms made (id -> the Variable, held weakly): leaves a result may
# reach without anyone outside caring.
_made: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


@contextmanager
def level() -> Iterator[None]:
    """`with level():` around a transform's work: one more transform is running."""
    state.func_depth += 1  # per thread, as grad mode is (core/grad_mode.py)
    try:
        yield
    finally:
        state.func_depth -= 1


def depth() -> int:
    """How many transforms are running around the caller (0 in user code)."""
    return state.func_depth


def differentiable(x: Variable) -> Variable:
    """x as a transform differentiates it: a Variable of the same value that requires grad
    and whose gradient the transform can ask for alone."""
    if x.requires_grad:
        # A recorded alias: its gradient is this transform's; the graph still reaches x.
        return x.view_as(x)
    leaf = x.detach().requires_grad_()  # the same array: a forward-mode tangent stays on it
    _made[id(leaf)] = leaf
    return leaf


def made_leaf(leaf: Variable) -> Variable:
    """Register a leaf a transform made for its own use (a cotangent it solves for)."""
    _made[id(leaf)] = leaf
    return leaf


def reaches_outside(values: list) -> bool:
    """Whether the graph of any Variable in values reaches a leaf requiring grad that no
    transform made: a Variable of the caller's, which may be differentiated later."""
    nodes = []
    for value in values:
        if not isinstance(value, Variable) or not value.requires_grad:
            continue
        if value.grad_fn is None:
            if _is_outside(value):
                return True
            continue
        nodes.append(value.grad_fn)
    seen: set[int] = set()
    while nodes:
        node = nodes.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if node.variable is not None and _is_outside(node.variable):
                return True
            continue
        nodes.extend(next_node for next_node, _ in node.next_functions)
    return False


def _is_outside(leaf: Variable) -> bool:
    return _made.get(id(leaf)) is not leaf


def graph_needed(values: list) -> bool:
    """Inside a transform's level: whether its results must keep their graph, because a
    transform encloses this one or because values reach a Variable of the caller's."""
    return depth() > 1 or reaches_outside(values)


def plain_unless(keep: bool, tree: Any) -> Any:
    """tree with every Variable detached, unless keep: the results of a transform that
    nothing outside will differentiate."""
    if keep:
        return tree
    return tree_map(_detached, tree)


def _detached(value: Any) -> Any:
    if isinstance(value, Variable) and value.requires_grad:
        return value.detach()
    return value


__all__ = [
    "depth",
    "differentiable",
    "graph_needed",
    "level",
    "made_leaf",
    "plain_unless",
    "reaches_outside",
]
