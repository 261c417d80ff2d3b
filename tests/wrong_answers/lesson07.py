"""Deliberately wrong answers for lesson 07's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The feedback passed to x unchanged: the word limit stays the whole text's.
    "Exercise 7.1": [
        "ctx.save_for_backward(x)\n"
        "ctx.times = times\n"
        'return minigrad.Variable(" ".join([x.data] * times), role=x.role)',
        "(x,) = ctx.saved_variables\n"
        'return minigrad.Variable(feedback.data, role=f"feedback to {x.role}"), None',
    ],
    # `<` instead of `<=`, and one word too many kept.
    "Exercise 7.2": [
        "if len(text) < self.limit:\n"
        "    return 1.0, []\n"
        "words = text.split()\n"
        "line = minigrad.text.feedback.at_most_words(len(words) - 1, len(words))\n"
        "return self.limit / len(text), [line]",
    ],
}
