"""Int arguments that only steer `if` tests: keyed by the tests' outcomes, not the value.

    def step(x, y, i):
        loss = criterion(model(x), y) / 4
        loss.backward()
        if (i + 1) % 4 == 0:        # gradient accumulation: update every 4th call
            optimizer.step()
            optimizer.zero_grad()

Keyed by its value, `i` would make a new variant on every call. But the step does only
one of two things, and which one depends on the test alone. When the step's own code
uses an int parameter nowhere but inside `if` tests (and conditional expressions) built
from that parameter, numbers, arithmetic, comparisons and names of globals or enclosing
variables, and never assigns to it, the call is keyed by the outcomes of those tests:
two variants here, one that steps and one that does not.

An int passed as it is to `manual_seed` (`torch.manual_seed(k)`, reproducible dropout
from a call number) is a seed: the replay seeds the generator again with the argument's
value of each call (compiled.py), so the seed keys nothing either.

Anything else (the int passed to another function, used as an index, stored, formatted)
keeps keying by value, which is always safe.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

from minigrad.compiler.side_effects import definition_lines, definition_of, per_code

_ALLOWED = (
    ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Constant, ast.Name, ast.Load,
    ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)  # fmt: skip


def tests_of(fn: Any) -> dict[str, list[Callable[[int], bool]]]:
    """For each int parameter of `fn` used only in `if` tests: the tests, each a function
    of the parameter's value, keyed by both the parameter's position (as a str) and its
    name, as guards.key_of names arguments. Empty when the source cannot be read."""
    read = definition_of(fn)
    if read is None:
        return {}
    bound = inspect.ismethod(fn)  # a bound method's first parameter is no argument
    fn = inspect.unwrap(fn)
    code, definition = read
    parameters = [argument.arg for argument in definition.args.posonlyargs + definition.args.args]
    if bound:
        parameters = parameters[1:]
    keyword_only = [argument.arg for argument in definition.args.kwonlyargs]
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    found: dict[str, list[Callable[[int], bool]]] = {}
    for position, name in [*enumerate(parameters), *((None, n) for n in keyword_only)]:
        tests = _tests_using(definition, name, parents, set(parameters + keyword_only), fn)
        if tests is not None:
            if position is not None:
                found[str(position)] = tests
            found[name] = tests
    return found


@per_code
def seeds_of(fn: Any) -> dict[str, frozenset]:
    """The parameters the step's own code passes to `manual_seed(...)`: name -> the lines
    (as the code object numbers them) of those calls."""
    read = definition_lines(fn)
    if read is None:
        return {}
    _, definition, offset = read
    found: dict[str, set] = {}
    for node in ast.walk(definition):
        if _is_seed_call(node):
            found.setdefault(node.args[0].id, set()).add(node.lineno + offset)
    return {name: frozenset(lines) for name, lines in found.items()}


def _is_seed_call(node: ast.AST) -> bool:
    """`manual_seed(name)` or `anything.manual_seed(name)`, the name its only argument."""
    if not isinstance(node, ast.Call) or node.keywords or len(node.args) != 1:
        return False
    if not isinstance(node.args[0], ast.Name):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "manual_seed") or (
        isinstance(func, ast.Name) and func.id == "manual_seed"
    )


def _tests_using(
    definition: ast.AST, name: str, parents: dict, parameters: set, fn: Any
) -> list[Callable[[int], bool]] | None:
    """The tests `name` appears in, when it appears nowhere else but as the seed of a
    `manual_seed(name)` call; else None (also when it appears nowhere)."""
    tests: list[ast.expr] = []
    seeded = False
    for node in ast.walk(definition):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return None  # assigned to: its value is no longer the argument's
        if _is_seed_call(parents.get(node)):
            seeded = True
            continue
        test = _enclosing_test(node, parents)
        if test is None:
            return None
        other_names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)} - {name}
        if other_names & parameters:
            return None  # a test on two arguments: key by value
        if all(test is not seen for seen in tests):
            tests.append(test)
    if not tests and not seeded:
        return None
    return [_as_function(test, name, fn) for test in tests]


def _enclosing_test(node: ast.AST, parents: dict) -> ast.expr | None:
    """The `if` test (or conditional expression's test) made of allowed nodes only that
    contains `node`; None when `node` is used any other way."""
    current = node
    while True:
        parent = parents.get(current)
        if parent is None:
            return None
        if isinstance(parent, (ast.If, ast.IfExp)) and parent.test is current:
            return current
        if not isinstance(parent, _ALLOWED):
            return None
        current = parent


def _as_function(test: ast.expr, name: str, fn: Any) -> Callable[[int], bool]:
    """The test as a function of the parameter's value; other names are read from fn's
    globals and enclosing variables at each call, as the step would read them."""
    code = compile(ast.Expression(body=test), "<if test>", "eval")
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    namespace = fn.__globals__

    def outcome(value: int) -> bool:
        local = {free: cell.cell_contents for free, cell in cells.items()}
        local[name] = value
        return bool(eval(code, namespace, local))  # noqa: S307 (the user's own test)

    outcome.source = ast.unparse(test)  # type: ignore[attr-defined]
    return outcome
