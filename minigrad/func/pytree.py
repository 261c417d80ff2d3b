"""Pytrees: nested tuples, lists and dicts whose leaves are Variables (or anything else).

The transforms of torch.func take and return such nests: `grad` of a function of a dict
of parameters returns a dict of gradients, `vmap` maps over every Variable inside its
arguments. Flattening turns a nest into a list of leaves and a `TreeSpec` that says how
to put them back:

    leaves, spec = tree_flatten(({"w": w, "b": b}, x))   # [w, b, x]
    tree_unflatten([gw, gb, gx], spec)                   # ({"w": gw, "b": gb}, gx)

Containers are tuples (named tuples too), lists and dicts (in their key order); anything
else, None included, is a leaf.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class TreeSpec(NamedTuple):
    """The shape of a nest: a container kind with its children's specs, or a leaf (`*`)."""

    kind: type | None  # tuple, list, dict, a namedtuple class; None for a leaf
    keys: tuple  # a dict's keys, in order; () otherwise
    children: tuple  # one TreeSpec per child

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(child.num_leaves for child in self.children)

    def __repr__(self) -> str:
        # PyTorch's spelling, so its messages and ours read alike: TreeSpec(tuple, None, [*, *]).
        if self.kind is None:
            return "*"
        context = list(self.keys) if self.kind is dict else None
        inside = ", ".join(repr(child) for child in self.children)
        return f"TreeSpec({self.kind.__name__}, {context}, [{inside}])"


LEAF = TreeSpec(None, (), ())


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _children(tree: Any) -> tuple[type | None, tuple, list]:
    """(kind, keys, children) of one level of the nest."""
    if isinstance(tree, dict):
        return dict, tuple(tree.keys()), list(tree.values())
    if _is_namedtuple(tree):
        return type(tree), (), list(tree)
    if isinstance(tree, tuple):
        return tuple, (), list(tree)
    if isinstance(tree, list):
        return list, (), list(tree)
    return None, (), []


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    """(the leaves of tree, left to right, and its TreeSpec)."""
    leaves: list = []
    spec = _flatten_into(tree, leaves)
    return leaves, spec


def _flatten_into(tree: Any, leaves: list) -> TreeSpec:
    kind, keys, children = _children(tree)
    if kind is None:
        leaves.append(tree)
        return LEAF
    return TreeSpec(kind, keys, tuple(_flatten_into(child, leaves) for child in children))


def tree_unflatten(leaves: list, spec: TreeSpec) -> Any:
    """The nest of shape `spec` holding `leaves` (the inverse of tree_flatten)."""
    if len(leaves) != spec.num_leaves:
        raise ValueError(
            f"tree_unflatten: the spec {spec!r} holds {spec.num_leaves} leaves; got {len(leaves)}."
        )
    remaining = iter(leaves)
    return _build(spec, remaining)


def _build(spec: TreeSpec, remaining: Any) -> Any:
    if spec.kind is None:
        return next(remaining)
    children = [_build(child, remaining) for child in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.keys, children))
    if spec.kind in (tuple, list):
        return spec.kind(children)
    return spec.kind(*children)  # a namedtuple takes its fields positionally


def tree_leaves(tree: Any) -> list:
    """The leaves of tree, left to right."""
    return tree_flatten(tree)[0]


def tree_map(function: Any, tree: Any) -> Any:
    """The same nest with function applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([function(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix: Any, tree: Any, is_leaf: Any) -> list | None:
    """One value of `prefix` per leaf of `tree`, or None when prefix does not fit tree.

    `prefix` has tree's shape down to some depth, and a single value (a leaf by `is_leaf`)
    stands for the whole sub-nest below it: vmap's in_dims=(None, 0) for the arguments
    (params_dict, x) gives None to every parameter and 0 to x."""
    if is_leaf(prefix):
        return [prefix] * tree_flatten(tree)[1].num_leaves
    kind, keys, children = _children(prefix)
    tree_kind, tree_keys, tree_children = _children(tree)
    if kind is None or tree_kind is None or len(children) != len(tree_children):
        return None
    if (kind is dict) != (tree_kind is dict) or (kind is list) != (tree_kind is list):
        return None  # a tuple prefix fits a tuple or a named tuple; a list only a list
    if kind is dict:
        if set(keys) != set(tree_keys):
            return None
        by_key = dict(zip(keys, children))
        children = [by_key[key] for key in tree_keys]  # in the tree's order, as it flattens
    values: list = []
    for sub_prefix, sub_tree in zip(children, tree_children):
        sub_values = broadcast_prefix(sub_prefix, sub_tree, is_leaf)
        if sub_values is None:
            return None
        values.extend(sub_values)
    return values


__all__ = [
    "TreeSpec",
    "broadcast_prefix",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_unflatten",
]
