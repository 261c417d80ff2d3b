""".item() in the middle of a step whose value only goes out with the return.

    def d_step(real):
        ...
        d_x = output.mean().item()           # read before the update, for the log
        loss.backward()
        optimizer.step()
        return loss.item(), d_x

A number read in the middle of a step could steer Python (`if d_x > 0.9: ...`), and a
replay runs no Python, so such a step stays eager. But when the step's own code does
nothing with the number except return it (directly, or in a tuple, list or dict it
returns), no branch can depend on it: the replay reads the same buffer and returns the
value this call computes. This module finds those `.item()` calls in the step's source.
"""

from __future__ import annotations

import ast
from typing import Any

from minigrad.compiler.side_effects import definition_lines, definition_of, per_code

_CONTAINERS = (ast.Tuple, ast.List, ast.Dict)


@per_code
def returned_only_lines(fn: Any) -> set[int]:
    """The source lines (as the code object numbers them) of the `.item()` calls in fn's
    own code whose value is only returned; empty when the source cannot be read."""
    read = definition_lines(fn)
    if read is None:
        return set()
    _, definition, offset = read
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    stores: dict[str, int] = {}
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
    lines = set()
    for node in ast.walk(definition):
        if _is_item_call(node) and _value_only_returned(node, definition, parents, stores):
            lines.add(node.lineno + offset)
    return lines


@per_code
def passed_on_lines(fn: Any) -> set[int]:
    """The source lines of the `.item()` calls in fn's own code written as an argument of
    a call and used nowhere else (`scheduler.step(loss.item())`): when the trace shows that
    call run as a whole (an optimizer's or a scheduler's step()), the replay passes it the
    number it computes."""
    read = definition_lines(fn)
    if read is None:
        return set()
    _, definition, offset = read
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    return {
        node.lineno + offset
        for node in ast.walk(definition)
        if _is_item_call(node)
        and isinstance(parents.get(node), ast.Call)
        and node in parents[node].args
    }


@per_code
def returned_paths(fn: Any) -> dict[str, bool]:
    """The access paths fn's own `return` reads as it returns (`opt.param_groups[0]["lr"]`
    in a returned dict), written as PathGuard labels write them, each with whether the
    function reads it nowhere else: a replay reads those again when it returns, as the
    eager step did."""
    read = definition_of(fn)
    if read is None:
        return {}
    _, definition = read
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    in_return: set[str] = set()
    elsewhere: set[str] = set()
    for node in ast.walk(definition):
        if not isinstance(node, (ast.Attribute, ast.Subscript)):
            continue
        written = _path_text(node)
        if written is None:
            continue
        whole = not isinstance(parents.get(node), (ast.Attribute, ast.Subscript))
        if whole and _reaches_return(node, definition, parents):
            in_return.add(written)
        else:
            elsewhere.add(written)  # read for something else too (or a part of a path)
    return {written: written not in elsewhere for written in in_return}


def _path_text(node: ast.AST) -> str | None:
    """`name.attr[key]...` as PathGuard labels write it; None for anything else."""
    steps = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            steps.append(f".{node.attr}")
        elif isinstance(node.slice, ast.Constant):
            steps.append(f"[{node.slice.value!r}]")
        else:
            return None
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return node.id + "".join(reversed(steps))


def _is_item_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "item"
        and not node.args
        and not node.keywords
    )


def _value_only_returned(
    call: ast.Call, definition: ast.AST, parents: dict, stores: dict[str, int]
) -> bool:
    """Whether the call's value is returned as it is, or assigned once to a name that is
    read nowhere but in what the function returns."""
    if _reaches_return(call, definition, parents):
        return True
    parent = parents.get(call)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1):
        return False
    target = parent.targets[0]
    if not isinstance(target, ast.Name) or stores.get(target.id) != 1:
        return False
    reads = [
        node for node in ast.walk(definition)
        if isinstance(node, ast.Name) and node.id == target.id and isinstance(node.ctx, ast.Load)
    ]  # fmt: skip
    return all(_reaches_return(read, definition, parents) for read in reads)


def _reaches_return(node: ast.AST, definition: ast.AST, parents: dict) -> bool:
    """Whether `node` sits in the function's own `return` expression with only tuple,
    list and dict displays between them (a dict's values, not its keys)."""
    current = node
    while True:
        parent = parents.get(current)
        if isinstance(parent, ast.Return):
            return _function_of(parent, parents) is definition
        if not isinstance(parent, _CONTAINERS):
            return False
        if isinstance(parent, ast.Dict) and current in parent.keys:
            return False
        current = parent


def _function_of(node: ast.AST, parents: dict) -> ast.AST | None:
    current = parents.get(node)
    while current is not None and not isinstance(
        current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    ):
        current = parents.get(current)
    return current
