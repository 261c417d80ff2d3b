"""Deliberately wrong answers for lesson 00's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # A sign error in the derivative: 3x² + 1 instead of 3x² - 1.
    "Exercise 0.1": ["slope_by_hand = 3 * 2.0**2 + 1"],
    # The -x term forgotten: the slope of x**3 alone.
    "Exercise 0.2": [
        "x = minigrad.Variable(2.0, requires_grad=True)\n"
        "f = x**3\n"
        "f.backward()\n"
        "slope = x.grad.item()"
    ],
    # The two gradients read off the wrong leaves.
    "Exercise 0.3": [
        "a = minigrad.Variable(2.0, requires_grad=True)\n"
        "b = minigrad.Variable(3.0, requires_grad=True)\n"
        "f = a * b + b**2\n"
        "f.backward()\n"
        "grad_a, grad_b = b.grad.item(), a.grad.item()"
    ],
    # The chain rule's inner derivative 2x forgotten: (x² + 1)² differentiated to 2(x² + 1).
    "Exercise 0.4": ["return (x**2 + 1) ** 2 + x * 2 * (x**2 + 1)"],
}
