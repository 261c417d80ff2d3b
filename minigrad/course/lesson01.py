"""Checks for lesson 01 (Variables and graphs).

Exercise 1.1 predicts which Variables are leaves and which require grad; 1.2 walks
`next_functions` and names every node once; 1.3 rebuilds the expression behind a drawing.
Each check builds its own Variables and graphs, so it never depends on the notebook's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.variable import AccumulateGrad, Variable
from minigrad.course import check

# --------------------------------------------------------------------------- shared helpers


def _walk(output: Variable) -> list[Any]:
    """Every node reachable from output.grad_fn, each once (the reference walk, a loop)."""
    if output.grad_fn is None:
        return []
    nodes, seen, to_visit = [], {output.grad_fn}, [output.grad_fn]
    while to_visit:
        node = to_visit.pop()
        nodes.append(node)
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in seen:
                seen.add(next_node)
                to_visit.append(next_node)
    return nodes


def _names(output: Variable) -> list[str]:
    """The names of the nodes in output's graph, each node once."""
    return [node.name() for node in _walk(output)]


def _listing(counts: Counter) -> str:
    """A Counter of names written as 'AddBackward, 2 x MulBackward'."""
    parts = []
    for name in sorted(counts):
        number = counts[name]
        parts.append(name if number == 1 else f"{number} x {name}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- Exercise 1.1


def variables_1_1() -> dict[str, Variable]:
    """The Variables of Exercise 1.1, made exactly as in the lesson's cell."""
    weight = Variable([0.5, -1.0], requires_grad=True, name="weight")
    data = Variable([1.0, 2.0], name="data")
    scaled = 2 * data
    hidden = weight * scaled
    score = hidden.sum()
    prompt = Variable("Summarise the report:", role="instructions", requires_grad=True)
    request = prompt + " keep it short"
    return {
        "weight": weight,
        "data": data,
        "scaled": scaled,
        "hidden": hidden,
        "score": score,
        "prompt": prompt,
        "request": request,
    }


# Why each Variable is (or is not) a leaf, and why it does (or does not) require grad.
_WHY_LEAF = {
    "weight": "you created `weight` yourself, so it is a leaf: only results of recorded "
    "operations are not.",
    "data": "you created `data` yourself, so it is a leaf: only results of recorded "
    "operations are not.",
    "scaled": "`scaled = 2 * data` has no input that requires grad, so no node is recorded: "
    "its grad_fn is None, and that makes it a leaf.",
    "hidden": "`hidden = weight * scaled` was recorded (weight requires grad), so it has a "
    "grad_fn (MulBackward) and is not a leaf.",
    "score": "`score = hidden.sum()` was recorded (hidden requires grad), so it has a grad_fn "
    "(SumBackward) and is not a leaf.",
    "prompt": "you created `prompt` yourself, so it is a leaf: text Variables follow the same "
    "rules as numbers.",
    "request": "`request = prompt + ...` was recorded (prompt requires grad), so it has a "
    "grad_fn (ConcatBackward) and is not a leaf.",
}
_WHY_GRAD = {
    "weight": "`weight` was created with requires_grad=True.",
    "data": "`data` was created without requires_grad=True, and requires_grad is False "
    "unless you ask for it.",
    "scaled": "a result requires grad only when at least one input does; neither `2` nor "
    "`data` does.",
    "hidden": "one of its inputs, `weight`, requires grad, so the result does too.",
    "score": "it is computed from `hidden`, which requires grad, so it does too.",
    "prompt": "`prompt` was created with requires_grad=True.",
    "request": "one of its inputs, `prompt`, requires grad, so the result does too.",
}


def _as_pair(exercise: str, name: str, value: Any) -> tuple[bool, bool]:
    """One prediction as (is_leaf, requires_grad), or a CheckError about its form."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        check.fail(
            exercise,
            f'predictions["{name}"] should be a pair (is_leaf, requires_grad), e.g. '
            f"(True, False); got {value!r}.",
        )
    for part in value:
        if part is None:
            check.fail(
                exercise,
                f'predictions["{name}"] still holds None: replace it with True or False.',
            )
        if not isinstance(part, (bool, np.bool_)):
            check.fail(
                exercise,
                f'predictions["{name}"] should hold two booleans (True or False); got {value!r}.',
            )
    return bool(value[0]), bool(value[1])


def check_1_1(predictions: Any) -> None:
    """predictions maps each Variable's name to (is_leaf, requires_grad)."""
    exercise = "1.1"
    if predictions is None:  # the cell assigns None before the learner's answer
        check.not_written(exercise)
    variables = variables_1_1()
    if not isinstance(predictions, dict):
        check.fail(
            exercise,
            f"predictions should be a dict such as {{'weight': (True, True), ...}}; got "
            f"{check.with_article(predictions)}.",
        )
    missing = [name for name in variables if name not in predictions]
    if missing:
        check.fail(exercise, f"predictions has no entry for {', '.join(missing)}.")
    extra = [str(name) for name in predictions if name not in variables]
    if extra:
        check.fail(
            exercise,
            f"predictions has entries for {', '.join(extra)}, which are not among the "
            f"Variables of the exercise ({', '.join(variables)}).",
        )
    pairs = {name: _as_pair(exercise, name, predictions[name]) for name in variables}
    truth = {name: (v.is_leaf, v.requires_grad) for name, v in variables.items()}
    if pairs == truth:
        check.passed(exercise)
        return
    swapped = {name: (grad, leaf) for name, (leaf, grad) in truth.items()}
    if pairs == swapped:
        check.fail(
            exercise,
            "every pair is the right answer the wrong way round: the order is "
            "(is_leaf, requires_grad).",
        )
    hints = []
    for name, (leaf, grad) in truth.items():
        said_leaf, said_grad = pairs[name]
        if said_leaf != leaf:
            hints.append(f"- {name}: is_leaf is {leaf}, not {said_leaf}: {_WHY_LEAF[name]}")
        if said_grad != grad:
            hints.append(f"- {name}: requires_grad is {grad}, not {said_grad}: {_WHY_GRAD[name]}")
    verb = "is" if len(hints) == 1 else "are"
    check.fail(exercise, f"{len(hints)} of the 14 answers {verb} off:\n" + "\n".join(hints))


# --------------------------------------------------------------------------- Exercise 1.2


def graphs_1_2() -> list[tuple[str, Variable]]:
    """Fresh graphs for Exercise 1.2, each with a description that names its trap."""
    cases = []
    w = Variable(0.5, requires_grad=True, name="w")
    x = Variable(1.5, name="x")
    b = Variable(-0.25, requires_grad=True, name="b")
    cases.append(("y = w * x + b, where x needs no gradient", w * x + b))

    s = Variable(2.0, requires_grad=True, name="s")
    h = s * 3.0
    cases.append(("y = h * h + h, where h = s * 3 (h is used three times)", h * h + h))

    u = Variable([1.0, -2.0, 0.5], name="u")
    v = Variable([0.3, 0.2, 0.1], requires_grad=True, name="v")
    cases.append(("loss = (v * u).sum()", (v * u).sum()))

    prompt = Variable("Write a haiku about", role="instructions", requires_grad=True)
    topic = Variable("autumn", role="topic")
    cases.append(("reply = prompt + ' ' + topic, a text graph", prompt + " " + topic))

    leaf = Variable(1.0, requires_grad=True, name="leaf")
    cases.append(("a leaf on its own (its grad_fn is None)", leaf))

    # Longer than Python's recursion limit: a walk must be a loop, not a recursion.
    chain = Variable(0.1, requires_grad=True, name="start")
    for _ in range(3000):
        chain = chain.tanh()
    cases.append(("a chain of 3000 tanh", chain))
    return cases


def _call_walk(exercise: str, function: Callable, output: Variable, what: str) -> Any:
    """function(output), with the usual reasons it fails turned into hints."""

    def hint(error: BaseException) -> str | None:
        # Matched by type and fields: AttributeError's .obj is the object that lacked the
        # attribute (None for an entry (None, 0), a tuple for an unpacked pair), and the
        # graph itself says whether the output was a leaf.
        if isinstance(error, RecursionError):
            return (
                "A recursive walk runs out of Python's stack on long graphs. Use a loop and "
                "a list of nodes still to visit instead."
            )
        if output.grad_fn is None and isinstance(error, (AttributeError, TypeError)):
            return "A leaf has grad_fn None and so no graph: return an empty list for it."
        if not isinstance(error, AttributeError) or error.name is None:
            return None
        if isinstance(error.obj, tuple):
            return (
                "Each entry of next_functions is a pair (node, output_nr): unpack it, "
                "`for next_node, _ in node.next_functions:`."
            )
        if error.obj is None:
            return (
                "An input that needs no gradient appears in next_functions as (None, 0): "
                "skip the None entries."
            )
        return None

    return check.call(exercise, f"on {what}, backward_node_names", function, output, hints=[hint])


def _compare_names(exercise: str, got: Any, output: Variable, what: str) -> None:
    """The names returned for `output` against the graph's nodes, with a hint when they differ."""
    if isinstance(got, (set, frozenset)):
        check.fail(
            exercise,
            "return a list, not a set: a set keeps one MulBackward even when the graph has "
            "two different MulBackward nodes.",
        )
    if not isinstance(got, (list, tuple)):
        check.fail(
            exercise,
            f"backward_node_names should return a list of names; got {check.with_article(got)} "
            f"(on {what}). Did you forget to `return` the list?",
        )
    for item in got:
        if not isinstance(item, str):
            if callable(getattr(item, "name", None)):
                check.fail(
                    exercise,
                    f"the list holds nodes such as {item!r}; return their names: node.name().",
                )
            check.fail(
                exercise,
                f"the list should hold names (str); it holds {check.with_article(item)} "
                f"({item!r}).",
            )
    expected = _names(output)
    got_counts, expected_counts = Counter(got), Counter(expected)
    if got_counts == expected_counts:
        return
    missing, extra = expected_counts - got_counts, got_counts - expected_counts
    graph = (
        f"on {what}, you returned [{_listing(got_counts)}]; the graph has "
        f"[{_listing(expected_counts)}]"
    )
    if not extra and set(got_counts) == set(expected_counts) and max(got_counts.values()) == 1:
        check.fail(
            exercise,
            f"{graph}. Different nodes can share a name (two MulBackward, two "
            f"AccumulateGrad): remember the nodes you have seen (a set of node objects), "
            f"not their names.",
        )
    if "AccumulateGrad" in expected_counts and "AccumulateGrad" not in got_counts:
        check.fail(
            exercise,
            f"{graph}. No AccumulateGrad: a leaf that requires grad appears in "
            f"next_functions as (AccumulateGrad, 0), and it is a node of the graph too.",
        )
    if not extra and missing == Counter([output.grad_fn.name()]):
        check.fail(
            exercise,
            f"{graph}. The output's own grad_fn, {output.grad_fn.name()}, is missing: start "
            f"the walk at output.grad_fn itself, not at its next_functions.",
        )
    if extra and not missing:
        check.fail(
            exercise,
            f"{graph}: some nodes are listed more than once. A node can be reached along "
            f"several paths (a Variable used twice); keep a set of the nodes you have "
            f"already seen and skip them.",
        )
    check.fail(
        exercise,
        f"{graph}. Missing: [{_listing(missing)}]; not in the graph: [{_listing(extra)}].",
    )


def check_1_2(backward_node_names: Callable[[Variable], list[str]]) -> None:
    """backward_node_names(output) lists the name of every node in output's graph once."""
    exercise = "1.2"
    if not callable(backward_node_names):
        check.fail(
            exercise,
            f"pass the function itself, backward_node_names, not its result "
            f"(got {check.with_article(backward_node_names)}).",
        )
    for what, output in graphs_1_2():
        got = _call_walk(exercise, backward_node_names, output, what)
        _compare_names(exercise, got, output, what)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 1.3


def _mystery(a: Variable, b: Variable, c: Variable) -> Variable:
    return (a * c + a.tanh() * b).sum()


def _mystery_value(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    return float(np.sum(a * c + np.tanh(a) * b))


def _leaves_1_3(seed: int, size: int = 3) -> tuple[Variable, Variable, Variable]:
    rng = np.random.default_rng(seed)
    a = Variable(rng.normal(size=size).round(2), requires_grad=True, name="a")
    b = Variable(rng.normal(size=size).round(2), requires_grad=True, name="b")
    c = Variable(rng.normal(size=size).round(2), name="c")
    return a, b, c


def mystery_graph() -> Variable:
    """The Variable whose graph Exercise 1.3 shows (draw it; its code is the exercise)."""
    out = _mystery(*_leaves_1_3(1))
    out.name = "out"
    return out


def _signature(node: Any) -> str:
    """The graph below `node` as text; inputs sorted, so a * b and b * a read the same."""
    if type(node) is AccumulateGrad:
        leaf = node.variable
        return f"leaf {leaf.name if leaf is not None and leaf.name else '?'}"
    inputs = sorted(_signature(n) for n, _ in node.next_functions if n is not None)
    return f"{node.name()}({', '.join(inputs)})"


_MISSING_HINTS = {
    "SumBackward": "The drawing ends in SumBackward: did you forget `.sum()` at the end?",
    "TanhBackward": "One path from `a` goes through TanhBackward: `a.tanh()`.",
    "AddBackward": "The two products meet in an AddBackward: add them with `+`.",
    "MulBackward": "The drawing has two MulBackward nodes: two products.",
}


def check_1_3(build: Callable[[Variable, Variable, Variable], Variable]) -> None:
    """build(a, b, c) returns a Variable with the graph that mystery_graph() draws."""
    exercise = "1.3"
    if not callable(build):
        check.fail(
            exercise, f"pass the function itself, build_mystery; got {check.with_article(build)}."
        )
    expected_names = Counter(_names(mystery_graph()))
    expected_signature = _signature(mystery_graph().grad_fn)
    # Vectors of length 3, then of length 1: with one entry a sum equals its only entry.
    for seed, size in ((10, 3), (11, 3), (12, 1)):
        a, b, c = _leaves_1_3(seed, size)
        values = (a.data.copy(), b.data.copy(), c.data.copy())
        out = check.call(exercise, "build_mystery(a, b, c)", build, a, b, c)
        if not isinstance(out, Variable):
            check.fail(
                exercise,
                f"build_mystery should return a Variable; got {check.with_article(out)}. Work "
                f"with "
                f"the Variables a, b, c themselves, not with their .data.",
            )
        if out.grad_fn is None:
            check.fail(
                exercise,
                "the result has no grad_fn, so no graph was recorded: build it with Variable "
                "operations on a, b and c (not NumPy on .data).",
            )
        nodes = _walk(out)
        if len(nodes) > 50:
            check.fail(
                exercise,
                f"your graph has {len(nodes)} nodes; the drawing has "
                f"{sum(expected_names.values())}.",
            )
        got_names = Counter(node.name() for node in nodes)
        if got_names != expected_names:
            missing = expected_names - got_names
            extra = got_names - expected_names
            if "SumBackward" in missing and "MeanBackward" in extra:
                hints = [
                    "The drawing ends in SumBackward: add the entries up with `.sum()`, "
                    "not `.mean()`."
                ]
            else:
                hints = [_MISSING_HINTS[name] for name in sorted(missing) if name in _MISSING_HINTS]
            text = (
                f"your graph has [{_listing(got_names)}], the drawing [{_listing(expected_names)}]"
            )
            if extra:
                text += f"; yours has extra [{_listing(extra)}]"
            if missing.get("AccumulateGrad") or extra.get("AccumulateGrad"):
                hints.append(
                    "There is one AccumulateGrad per blue box (a and b); the grey box c needs "
                    "no gradient and has none."
                )
            check.fail(exercise, text + ". " + " ".join(hints) if hints else text + ".")
        got_signature = _signature(out.grad_fn)
        if got_signature != expected_signature:
            check.fail(
                exercise,
                f"your graph has the right nodes but connects them differently. Written out "
                f"(inputs in brackets; the grey c is not listed, as it has no node) it reads "
                f"{got_signature}. Compare which boxes feed each ellipse in the drawing.",
            )
        if out.shape != ():
            check.fail(exercise, f"the result should be a scalar; it has shape {out.shape}.")
        expected = _mystery_value(*values)
        if not np.allclose(out.data, expected, rtol=1e-6, atol=1e-8):
            check.fail(
                exercise,
                f"the graph is right but its value is {float(out.data):.4g}, expected "
                f"{expected:.4g}. A number in place of a Variable draws no box of its own: "
                f"is the grey box c what multiplies a?",
            )
    check.passed(exercise)
