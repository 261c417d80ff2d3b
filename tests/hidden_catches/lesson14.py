"""Answers that pass lesson 14's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not. Exercise 14.1
is a prediction about one page: its hidden part only runs the check again."""

CAUGHT = {
    # zero_grad at the end of each step (PyTorch's step(); zero_grad() idiom), validation
    # fixed: right while the note starts with no feedback, but the first step acts on
    # whatever feedback the note carried before training.
    "Exercise 14.2": [
        "history = []\n"
        "for batch in batches:\n"
        "    _, explanations = loss_fn(note, batch)\n"
        "    minigrad.backward(explanations)\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n"
        "    with minigrad.no_grad():\n"
        "        val_score, _ = loss_fn(note, val_set)\n"
        "    history.append((val_score, note.data))\n"
        "return history"
    ],
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
