"""Checks of lesson 01: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson01

EXERCISES = Path(__file__).parent.parent / "lessons" / "exercises" / "01_variables_and_graphs.ipynb"

# --------------------------------------------------------------------------- Exercise 1.1

RIGHT_1_1 = {
    "weight": (True, True),
    "data": (True, False),
    "scaled": (True, False),
    "hidden": (False, True),
    "score": (False, True),
    "prompt": (True, True),
    "request": (False, True),
}


def _with(**changes: Any) -> dict[str, Any]:
    answer = dict(RIGHT_1_1)
    answer.update(changes)
    return answer


def test_1_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson01.check_1_1(RIGHT_1_1)
    assert "Exercise 1.1: correct." in capsys.readouterr().out


def test_1_1_accepts_lists_and_numpy_booleans(capsys: pytest.CaptureFixture) -> None:
    """Written differently: lists instead of tuples, NumPy booleans, another key order."""
    answer = {name: [np.bool_(leaf), grad] for name, (leaf, grad) in reversed(RIGHT_1_1.items())}
    lesson01.check_1_1(answer)
    assert "Exercise 1.1: correct." in capsys.readouterr().out


def test_1_1_matches_the_variables_it_describes() -> None:
    variables = lesson01.variables_1_1()
    assert {n: (v.is_leaf, v.requires_grad) for n, v in variables.items()} == RIGHT_1_1


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # A result of operations on no-grad inputs still counts as recorded.
        (_with(scaled=(False, False)), "scaled: is_leaf is True.*grad_fn is None"),
        (_with(scaled=(True, True)), "scaled: requires_grad is False.*at least one input"),
        # Anything made by an operation is taken for a non-leaf... or the reverse.
        (_with(hidden=(True, True)), "hidden: is_leaf is False.*has a grad_fn"),
        (_with(request=(True, True)), "request: is_leaf is False.*ConcatBackward"),
        # requires_grad believed to be on by default.
        (_with(data=(True, True)), "data: requires_grad is False.*unless you ask"),
        # A created Variable taken for a non-leaf because it requires grad.
        (_with(weight=(False, True)), "weight: is_leaf is True.*you created"),
        # Text Variables believed to follow other rules.
        (_with(prompt=(True, False)), "prompt: requires_grad is True"),
        (_with(score=(False, False)), "score: requires_grad is True.*computed from `hidden`"),
        ({n: (g, leaf) for n, (leaf, g) in RIGHT_1_1.items()}, "wrong way round"),
        (_with(data=(None, None)), "still holds None"),
        (_with(data=True), "should be a pair"),
        (_with(data=("yes", "no")), "two booleans"),
        ({k: v for k, v in RIGHT_1_1.items() if k != "score"}, "no entry for score"),
        (_with(loss=(False, True)), "entries for loss"),
        ([(True, True)], "should be a dict"),
    ],
)
def test_1_1_mistakes_get_a_hint(answer: Any, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson01.check_1_1(answer)


def test_1_1_lists_every_wrong_answer() -> None:
    with pytest.raises(CheckError, match="3 of the 14") as info:
        lesson01.check_1_1(_with(scaled=(False, True), hidden=(True, True)))
    assert str(info.value).count("\n- ") == 3


# --------------------------------------------------------------------------- Exercise 1.2


def reference_names(output: minigrad.Variable) -> list[str]:
    if output.grad_fn is None:
        return []
    names, seen, to_visit = [], {output.grad_fn}, [output.grad_fn]
    while to_visit:
        node = to_visit.pop()
        names.append(node.name())
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in seen:
                seen.add(next_node)
                to_visit.append(next_node)
    return names


def visits_twice(output: minigrad.Variable) -> list[str]:
    """No seen set: a node reached along two paths is listed twice."""
    if output.grad_fn is None:
        return []
    names, to_visit = [], [output.grad_fn]
    while to_visit:
        node = to_visit.pop()
        names.append(node.name())
        to_visit.extend(n for n, _ in node.next_functions if n is not None)
    return names


def skips_accumulate_grad(output: minigrad.Variable) -> list[str]:
    """Only BackwardNodes: the leaves' AccumulateGrad nodes are left out."""
    return [n for n in reference_names(output) if n != "AccumulateGrad"]


def crashes_on_none(output: minigrad.Variable) -> list[str]:
    """Follows every entry of next_functions, None included."""
    if output.grad_fn is None:
        return []
    names, seen, to_visit = [], set(), [output.grad_fn]
    while to_visit:
        node = to_visit.pop()
        if node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        to_visit.extend(n for n, _ in node.next_functions)
    return names


def dedups_by_name(output: minigrad.Variable) -> list[str]:
    """Remembers names instead of nodes: two MulBackward become one."""
    if output.grad_fn is None:
        return []
    names, to_visit = [], [output.grad_fn]
    while to_visit:
        node = to_visit.pop()
        if node.name() in names:
            continue
        names.append(node.name())
        to_visit.extend(n for n, _ in node.next_functions if n is not None)
    return names


def recursive(output: minigrad.Variable) -> list[str]:
    """A recursive walk: right on small graphs, out of stack on a long chain."""
    if output.grad_fn is None:
        return []
    seen: set = set()

    def visit(node: Any) -> None:
        if node is None or node in seen:
            return
        seen.add(node)
        for next_node, _ in node.next_functions:
            visit(next_node)

    visit(output.grad_fn)
    return [node.name() for node in seen]


def forgets_leaves(output: minigrad.Variable) -> list[str]:
    """Does not handle an output whose grad_fn is None."""
    names, seen, to_visit = [], {output.grad_fn}, [output.grad_fn]
    while to_visit:
        node = to_visit.pop()
        names.append(node.name())
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in seen:
                seen.add(next_node)
                to_visit.append(next_node)
    return names


def starts_too_late(output: minigrad.Variable) -> list[str]:
    """Starts from grad_fn's next_functions, so grad_fn itself is missing."""
    names = reference_names(output)
    if names:
        names.remove(output.grad_fn.name())
    return names


def forgets_to_unpack(output: minigrad.Variable) -> list[str]:
    """Treats each (node, output_nr) pair of next_functions as a node."""
    if output.grad_fn is None:
        return []
    names, seen, to_visit = [], set(), [output.grad_fn]
    while to_visit:
        node = to_visit.pop()
        if node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        to_visit.extend(pair for pair in node.next_functions if pair[0] is not None)
    return names


def returns_nodes(output: minigrad.Variable) -> list[Any]:
    """Returns the node objects instead of their names."""
    return [output.grad_fn] if output.grad_fn is not None else []


def returns_a_set(output: minigrad.Variable) -> set[str]:
    return set(reference_names(output))


def forgets_return(output: minigrad.Variable) -> None:
    reference_names(output)


def test_1_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson01.check_1_2(reference_names)
    assert "Exercise 1.2: correct." in capsys.readouterr().out


def breadth_first_by_id(output: minigrad.Variable) -> list[str]:
    """Another right answer: a queue (breadth first) and the ids of the nodes seen."""
    from collections import deque

    names: list[str] = []
    queue = deque([output.grad_fn] if output.grad_fn is not None else [])
    seen = {id(node) for node in queue}
    while queue:
        node = queue.popleft()
        names.append(node.name())
        for next_node, _output_nr in node.next_functions:
            if next_node is not None and id(next_node) not in seen:
                seen.add(id(next_node))
                queue.append(next_node)
    return names


def test_1_2_accepts_a_breadth_first_walk(capsys: pytest.CaptureFixture) -> None:
    lesson01.check_1_2(breadth_first_by_id)
    assert "Exercise 1.2: correct." in capsys.readouterr().out


def test_1_2_hidden_graphs_hold_the_edge_cases() -> None:
    """A leaf alone (no graph at all), a value used three times, and a chain longer than
    Python's recursion limit are among the check's graphs."""
    cases = dict(lesson01.graphs_1_2())
    assert cases["a leaf on its own (its grad_fn is None)"].grad_fn is None
    assert len(reference_names(cases["a chain of 3000 tanh"])) > sys.getrecursionlimit()
    used_thrice = cases["y = h * h + h, where h = s * 3 (h is used three times)"]
    assert sorted(reference_names(used_thrice)) == [
        "AccumulateGrad",
        "AddBackward",
        "MulBackward",
        "MulBackward",
    ]


def test_1_2_graphs_have_the_expected_nodes() -> None:
    counts = [len(reference_names(output)) for _, output in lesson01.graphs_1_2()]
    assert counts == [4, 4, 3, 3, 0, 3001]


@pytest.mark.parametrize(
    ("walk", "hint"),
    [
        (visits_twice, "listed more than once.*set of the nodes"),
        (skips_accumulate_grad, "No AccumulateGrad"),
        (crashes_on_none, "\\(None, 0\\): skip the None entries"),
        (dedups_by_name, "Different nodes can share a name"),
        (recursive, "RecursionError.*Use a loop"),
        (forgets_leaves, "A leaf has grad_fn None.*empty list"),
        (starts_too_late, "start the walk at output.grad_fn itself"),
        (forgets_to_unpack, "pair \\(node, output_nr\\): unpack it"),
        (returns_nodes, "return their names: node.name\\(\\)"),
        (returns_a_set, "return a list, not a set"),
        (forgets_return, "got None .*forget to `return`"),
        ("backward_node_names", "pass the function itself"),
    ],
)
def test_1_2_mistakes_get_a_hint(walk: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson01.check_1_2(walk)


def test_1_2_unwritten_exercise_says_so() -> None:
    def unwritten(output: minigrad.Variable) -> list[str]:
        raise NotImplementedError("Exercise 1.2: ...")

    with pytest.raises(CheckError, match=r"^Exercise 1\.2 is not written yet: replace the"):
        lesson01.check_1_2(unwritten)


# --------------------------------------------------------------------------- Exercise 1.3


def test_1_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson01.check_1_3(lambda a, b, c: (a * c + a.tanh() * b).sum())
    # The same graph written in another order, with the function form of tanh.
    lesson01.check_1_3(lambda a, b, c: (b * minigrad.tanh(a) + c * a).sum())
    assert capsys.readouterr().out.count("Exercise 1.3: correct.") == 2


def test_1_3_hidden_data_has_a_vector_of_length_one() -> None:
    """The check also builds a, b, c of length 1: an answer that indexes entry 1 or 2, or
    that only works on length 3, fails there."""
    sizes = []

    def build(a: minigrad.Variable, b: minigrad.Variable, c: minigrad.Variable) -> Any:
        sizes.append(a.shape)
        return (a * c + a.tanh() * b).sum()

    lesson01.check_1_3(build)
    assert sizes == [(3,), (3,), (1,)]

    def only_three(a: minigrad.Variable, b: minigrad.Variable, c: minigrad.Variable) -> Any:
        # the same graph, but the values come from a reshape that needs three entries
        return (a * c.reshape(3) + a.tanh() * b).sum()

    with pytest.raises(CheckError, match="raised"):
        lesson01.check_1_3(only_three)


def test_1_3_mystery_graph_is_the_reference() -> None:
    out = lesson01.mystery_graph()
    assert out.name == "out"
    assert sorted(reference_names(out)) == [
        "AccumulateGrad",
        "AccumulateGrad",
        "AddBackward",
        "MulBackward",
        "MulBackward",
        "SumBackward",
        "TanhBackward",
    ]


def _numpy_only(a: minigrad.Variable, b: minigrad.Variable, c: minigrad.Variable) -> Any:
    import numpy as np

    return minigrad.Variable(np.sum(a.data * c.data + np.tanh(a.data) * b.data))


@pytest.mark.parametrize(
    ("build", "hint"),
    [
        (lambda a, b, c: a * c + a.tanh() * b, "forget `.sum\\(\\)`"),
        (lambda a, b, c: (a * c + a.tanh() * b).mean(), "with `.sum\\(\\)`, not `.mean\\(\\)`"),
        (lambda a, b, c: (a * c + a * b).sum(), "TanhBackward: `a.tanh\\(\\)`"),
        (lambda a, b, c: (a * b + a.tanh() * c).sum(), "connects them differently"),
        (lambda a, b, c: (a * 2.0 + a.tanh() * b).sum(), "is the grey box c what multiplies a"),
        (lambda a, b, c: (a * c - a.tanh() * b).sum(), "add them with `\\+`"),
        (lambda a, b, c: (a * c + b.tanh() * b).sum(), "connects them differently"),
        (_numpy_only, "no grad_fn.*not NumPy on .data"),
        (lambda a, b, c: ((a * c + a.tanh() * b).sum()).data, "should return a Variable"),
        (lambda a, b: (a + b).sum(), "raised TypeError"),
    ],
)
def test_1_3_mistakes_get_a_hint(build: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson01.check_1_3(build)


def test_1_3_needs_c_to_have_no_gradient_node() -> None:
    def c_made_a_parameter(a: Any, b: Any, c: Any) -> Any:
        c = minigrad.Variable(c.data, requires_grad=True, name="c")
        return (a * c + a.tanh() * b).sum()

    with pytest.raises(CheckError, match="grey box c needs no gradient"):
        lesson01.check_1_3(c_made_a_parameter)


def test_1_1_one_wrong_answer_is_singular() -> None:
    with pytest.raises(CheckError, match=r"1 of the 14 answers is off:\n- data"):
        lesson01.check_1_1(_with(data=(True, True)))


def test_1_3_hints_are_sentences() -> None:
    """Several hints in one message: each starts with a capital letter after a full stop."""
    with pytest.raises(CheckError) as info:
        lesson01.check_1_3(lambda a, b, c: a * c + a * b)
    message = str(info.value)
    assert "the drawing [" in message
    assert ". The drawing ends in SumBackward: did you forget `.sum()` at the end? " in message
    assert "? One path from `a` goes through TanhBackward: `a.tanh()`." in message
    # no hint begins in lower case after a sentence's end
    assert re.search(r"[.?] [a-z]", message) is None


def test_1_3_unwritten_exercise_says_so() -> None:
    def build_mystery(a: Any, b: Any, c: Any) -> Any:
        raise NotImplementedError("Exercise 1.3: rebuild the drawn computation from a, b and c")

    with pytest.raises(CheckError, match=r"^Exercise 1\.3 is not written yet: replace the"):
        lesson01.check_1_3(build_mystery)


def test_1_2_errors_are_matched_by_type_and_fields_not_words() -> None:
    """An AttributeError about a None the learner made themselves (no .obj: raised by
    hand) gets no None-entry hint, even though its message mentions NoneType."""

    def raises_by_hand(output: minigrad.Variable) -> list[str]:
        raise AttributeError("'NoneType' object has no attribute 'name'")

    with pytest.raises(CheckError) as info:
        lesson01.check_1_2(raises_by_hand)
    assert str(info.value).endswith(
        "raised AttributeError: 'NoneType' object has no attribute 'name'."
    )


def test_1_2_other_errors_are_reported_as_such() -> None:
    def crashes(output: minigrad.Variable) -> list[str]:
        raise KeyError("node")

    with pytest.raises(CheckError, match=r"backward_node_names raised KeyError: 'node'\.$"):
        lesson01.check_1_2(crashes)


def test_1_1_placeholder_none_means_not_written() -> None:
    """The cell assigns predictions = None before the solution region, so the check of an
    unfinished exercise says so (it was a NameError)."""
    pattern = r"^Exercise 1.1 is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        lesson01.check_1_1(None)


def test_1_1_student_cells_unwritten_say_so() -> None:
    """As a learner: run the student version's exercise cell (it stops at the stub), then
    its check cell, in one namespace."""
    notebook = json.loads(EXERCISES.read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    exercise_cell = next(s for s in sources if s.startswith("# Exercise 1.1:"))
    check_cell = next(s for s in sources if s.startswith("# Check Exercise 1.1"))
    namespace: dict = {}
    with pytest.raises(NotImplementedError, match="^Exercise 1.1"):
        exec(exercise_cell, namespace)
    with pytest.raises(CheckError, match="^Exercise 1.1 is not written yet"):
        exec(check_cell, namespace)
