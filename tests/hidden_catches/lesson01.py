"""Answers that pass lesson 01's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # A node is marked as seen only when it is taken off the list, and a node taken off
    # twice is not skipped: w * w puts the same AccumulateGrad on the list twice.
    "Exercise 1.2": [
        "if output.grad_fn is None:\n"
        "    return []\n"
        "names, seen, to_visit = [], set(), [output.grad_fn]\n"
        "while to_visit:\n"
        "    node = to_visit.pop()\n"
        "    seen.add(node)\n"
        "    names.append(node.name())\n"
        "    for next_node, _ in node.next_functions:\n"
        "        if next_node is not None and next_node not in seen:\n"
        "            to_visit.append(next_node)\n"
        "return names"
    ],
    # .sum(0) for .sum(): the same number on the check's vectors, not on a matrix.
    "Exercise 1.3": ["return (a * c + a.tanh() * b).sum(0)"],
}
