"""Answers that pass lesson 14's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not. Exercise 14.1
is a prediction about one page: its hidden part only runs the check again. Exercise 14.2's
visible check watches every backward and starts a second run from a note that holds
feedback, so the answers that once passed it (zero_grad at the end of a step, a validation
backward cleared by `note.grad = None`) fail there now."""

CAUGHT = {
    # Stops at a perfect validation score, as section 1's loop stops at a score of 1: fewer
    # rows than minibatches once validation reaches 1.0 (the check's data never does).
    "Exercise 14.3": [
        "best = validate(prompt)\n"
        "rows = []\n"
        "for batch in batches:\n"
        "    previous = prompt.data\n"
        "    take_step(batch)\n"
        "    score = validate(prompt)\n"
        "    reverted = score < best\n"
        "    if reverted:\n"
        "        prompt.data = previous\n"
        "    else:\n"
        "        best = score\n"
        "    rows.append((score, reverted))\n"
        "    if best == 1.0:\n"
        "        break\n"
        "return rows"
    ],
}
