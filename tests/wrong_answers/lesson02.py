"""Deliberately wrong answers for lesson 02's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The direct edge x -> q is forgotten: only the path through a reaches x.
    "Exercise 2.1": [
        "a_value = w_value * x_value\n"
        "p_value = a_value**2\n"
        "q_value = 3 * a_value + x_value\n"
        "p_bar = q_value\n"
        "q_bar = p_value\n"
        "a_bar = p_bar * 2 * a_value + q_bar * 3\n"
        "grad_x = a_bar * w_value\n"
        "grad_w = a_bar * x_value"
    ],
    # Breadth first: each node once, in the order first reached, which is not an order
    # in which every node comes after all its consumers.
    "Exercise 2.2": [
        "order, seen, queue = [], {root}, [root]\n"
        "while queue:\n"
        "    node = queue.pop(0)\n"
        "    order.append(node)\n"
        "    for next_node, _ in node.next_functions:\n"
        "        if next_node is not None and next_node not in seen:\n"
        "            seen.add(next_node)\n"
        "            queue.append(next_node)\n"
        "return order"
    ],
    # The lesson's bug fixed in the wrong place: the gradient reset after the update, so a
    # .grad that w held before the call goes into the first step (the check's last case).
    # (The lesson's bug copied as it is, `w.grad.zero_` without the call, is in
    # tests/test_course_lesson02.py.)
    "Exercise 2.3": [
        "for _ in range(steps):\n"
        "    loss = ((w * xs - ys) ** 2).mean()\n"
        "    loss.backward()\n"
        "    w.data -= lr * w.grad.data\n"
        "    w.grad = None"
    ],
    # backward() instead of minigrad.grad: x.grad and the weights' .grad change.
    "Exercise 2.4": ["f(x).backward()\nreturn x.grad"],
}
