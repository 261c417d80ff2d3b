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
    # BuggyHeadline's backward kept as it is: the tagline's feedback returned in title's
    # slot, and title's assigned to title.grad (replacing what it held) instead of returned.
    "Exercise 7.3": [
        "title, tagline = ctx.saved_variables\n"
        "for_title, for_tagline = [], []\n"
        "for line in feedback.data.splitlines():\n"
        '    if line.startswith(f"[{title.role}]"):\n'
        "        for_title.append(line)\n"
        '    elif line.startswith(f"[{tagline.role}]"):\n'
        "        for_tagline.append(line)\n"
        "    else:\n"
        "        for_title.append(line)\n"
        "        for_tagline.append(line)\n"
        'title.grad = minigrad.Variable("\\n".join(for_title), role=f"feedback to {title.role}")\n'
        'note = minigrad.Variable("\\n".join(for_tagline), role=f"feedback to {tagline.role}")\n'
        "return note, None",
    ],
}
