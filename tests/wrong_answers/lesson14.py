"""Deliberately wrong answers for lesson 14's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # The page's word limit handed to the description as it is, not restated in the
    # description's own terms.
    "Exercise 14.1": [
        "predicted = {\n"
        '    "title": [\n'
        "        'Remove the word \"cheap\".',\n"
        '        "Make the text match the pattern /^Handmade/.",\n'
        "    ],\n"
        '    "description": [\n'
        "        'Add the word \"dishwasher-safe\".',\n"
        '        "Shorten the text to at most 12 words (it has 16).",\n'
        '        r"Make the text match the pattern /\\.$/.",\n'
        "    ],\n"
        "}"
    ],
    # Bug 1 "fixed" by clearing what validation sent (`note.grad = None`), its backward kept:
    # no step acts on that feedback, but the backward still runs (issue 36). The half fix
    # that lets it reach the next step (zero_grad after step()) is in
    # tests/test_course_lesson14.py.
    "Exercise 14.2": [
        "history = []\n"
        "for batch in batches:\n"
        "    optimizer.zero_grad()\n"
        "    _, explanations = loss_fn(note, batch)\n"
        "    minigrad.backward(explanations)\n"
        "    optimizer.step()\n"
        "    val_score, val_explanations = loss_fn(note, val_set)\n"
        "    minigrad.backward(val_explanations)\n"
        "    note.grad = None\n"
        "    history.append((val_score, note.data))\n"
        "return history"
    ],
    # A tie reverted: `<=` where the rule is "strictly lower than the best so far".
    "Exercise 14.3": [
        "best = validate(prompt)\n"
        "rows = []\n"
        "for batch in batches:\n"
        "    previous = prompt.data\n"
        "    take_step(batch)\n"
        "    score = validate(prompt)\n"
        "    reverted = score <= best\n"
        "    if reverted:\n"
        "        prompt.data = previous\n"
        "    else:\n"
        "        best = score\n"
        "    rows.append((score, reverted))\n"
        "return rows"
    ],
}
