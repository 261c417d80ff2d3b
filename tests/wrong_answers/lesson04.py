"""Deliberately wrong answers for lesson 04's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The model runs with grad on and the graph is thrown away afterwards.
    "Exercise 4.1": ["return [model_fn(x).detach() for x in xs]"],
    # The lesson's draft with the skip added: it rebinds the loop variable.
    "Exercise 4.2": [
        "with minigrad.no_grad():\n"
        "    for p in params:\n"
        "        if p.grad is None:\n"
        "            continue\n"
        "        p = p - lr * p.grad\n"
        "        p.grad = None"
    ],
    # set_grad_enabled as a plain call: the mode leaks into the caller.
    "Exercise 4.3": [
        "minigrad.set_grad_enabled(training)\nreturn ((xs @ w - ys) ** 2).mean()"
    ],
    # The tanh count, one array per layer: sin keeps its input as well.
    "Exercise 4.4": ["return layers * batch * width * itemsize"],
}
