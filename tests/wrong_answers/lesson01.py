"""Deliberately wrong answers for lesson 01's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # `scaled = 2 * data` taken for a recorded result: it is a leaf, nothing was recorded.
    "Exercise 1.1": [
        "predictions = {\n"
        '    "weight": (True, True),\n'
        '    "data": (True, False),\n'
        '    "scaled": (False, False),\n'
        '    "hidden": (False, True),\n'
        '    "score": (False, True),\n'
        '    "prompt": (True, True),\n'
        '    "request": (False, True),\n'
        "}"
    ],
    # No set of nodes already seen: a node reached along two paths is listed twice.
    "Exercise 1.2": [
        "if output.grad_fn is None:\n"
        "    return []\n"
        "names, to_visit = [], [output.grad_fn]\n"
        "while to_visit:\n"
        "    node = to_visit.pop()\n"
        "    names.append(node.name())\n"
        "    to_visit.extend(n for n, _ in node.next_functions if n is not None)\n"
        "return names"
    ],
    # b and c exchanged: the right nodes, wired differently.
    "Exercise 1.3": ["return (a * b + a.tanh() * c).sum()"],
}
