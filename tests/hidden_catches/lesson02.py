"""Answers that pass lesson 02's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # Every path followed: a node reached again moves to the end of the list. The order is
    # right, but x doubled 16 times has 65,536 paths (the check's graphs have a handful).
    "Exercise 2.2": [
        "order, stack = [], [root]\n"
        "while stack:\n"
        "    node = stack.pop()\n"
        "    if node in order:\n"
        "        order.remove(node)\n"
        "    order.append(node)\n"
        "    for next_node, _ in node.next_functions:\n"
        "        if next_node is not None:\n"
        "            stack.append(next_node)\n"
        "return order"
    ],
    # The gradient's NumPy array returned instead of the Variable minigrad.grad gives.
    "Exercise 2.4": ["(slope,) = minigrad.grad(f(x), x)\nreturn slope.data"],
}
