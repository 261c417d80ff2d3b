"""The argument checks the transforms share: argnums, the Variables to differentiate, and
what a function returns (one output, or (output, aux) with has_aux=True).

The messages start with PyTorch's own words (torch.func raises the same classes: a
RuntimeError for argnums, a ValueError for a non-Tensor input), then say what to do.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.variable import Variable
from minigrad.func.pytree import tree_flatten


def wrapped_argnums(argnums: Any, count: int) -> tuple[int, ...]:
    """argnums (an int or a tuple of ints, negative ones counting from the end) as
    non-negative positions among `count` positional arguments."""
    as_tuple = argnums if isinstance(argnums, tuple) else (argnums,)
    if not isinstance(argnums, (int, tuple)) or not all(isinstance(a, int) for a in as_tuple):
        got = type(argnums) if not isinstance(argnums, tuple) else argnums
        raise RuntimeError(
            f"argnums must be int or Tuple[int, ...], got: {got}. Name the positional "
            f"argument(s) to differentiate by position: argnums=0 or argnums=(0, 2)."
        )
    if not as_tuple:
        raise RuntimeError(
            "argnums must be non-empty: name at least one positional argument to "
            "differentiate, e.g. argnums=0."
        )
    positions = []
    for argnum in as_tuple:
        if argnum < -count or argnum >= count:
            raise RuntimeError(
                f"Got argnum={argnum}, but only {count} positional inputs. argnums counts the "
                f"positional arguments of the call from 0 (keyword arguments are never "
                f"differentiated)."
            )
        positions.append(argnum % count)
    if len(set(positions)) != len(positions):
        raise RuntimeError(
            f"argnums elements must be unique, got {tuple(positions)}. Name each argument "
            f"once (negative numbers count from the end: -1 is the last)."
        )
    return tuple(positions)


def chosen(args: tuple, argnums: Any) -> tuple[Any, tuple[int, ...]]:
    """(the arguments argnums names: one argument for an int, a tuple of them for a tuple;
    their positions)."""
    positions = wrapped_argnums(argnums, len(args))
    if isinstance(argnums, tuple):
        return tuple(args[p] for p in positions), positions
    return args[positions[0]], positions


def replaced(args: tuple, positions: tuple[int, ...], values: Any, was_tuple: bool) -> tuple:
    """args with the arguments at positions replaced by values (a tuple when was_tuple)."""
    new = list(args)
    if not was_tuple:
        values = (values,)
    for position, value in zip(positions, values):
        new[position] = value
    return tuple(new)


def differentiable_leaves(tree: Any) -> list[Variable]:
    """The Variables of tree (a Variable or a nest of them), every leaf checked: a
    ValueError for anything else, as PyTorch's transforms raise."""
    leaves, _ = tree_flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Variable):
            raise ValueError(
                f"Thing passed to transform API must be Tensor, got {type(leaf)}. Wrap "
                f"numbers with minigrad.tensor(...), or pass them through an argument that "
                f"argnums does not name."
            )
        if leaf.is_text:
            raise ValueError(
                "Thing passed to transform API must be a numeric Tensor, got a text "
                "Variable: text has no derivatives (use text.backward() for feedback)."
            )
    return leaves


def split_aux(output: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    """(output, aux) of what func returned; aux is None without has_aux."""
    if not has_aux:
        return output, None
    if not isinstance(output, tuple) or len(output) != 2:
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is "
            f"True; got {_kind(output)}. Return both, or leave has_aux=False."
        )
    return output


def check_tensors(tree: Any, what: str) -> list[Variable]:
    """The leaves of tree, each a numeric Variable; else a RuntimeError naming `what`."""
    leaves, _ = tree_flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Variable) or leaf.is_text:
            raise RuntimeError(
                f"{what}, got unsupported type {_kind(leaf)}. Return minigrad Variables "
                f"(wrap numbers with minigrad.tensor(...))."
            )
    return leaves


def _kind(value: Any) -> str:
    if isinstance(value, Variable) and value.is_text:
        return "a text Variable"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return str(type(value))


__all__ = [
    "check_tensors",
    "chosen",
    "differentiable_leaves",
    "replaced",
    "split_aux",
    "wrapped_argnums",
]
