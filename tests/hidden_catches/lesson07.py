"""Answers that pass lesson 07's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not."""

CAUGHT = {
    # times kept on the class instead of ctx: right while each Repeat runs its backward
    # before the next is made, wrong for two Repeats of one x in one graph.
    "Exercise 7.1": [
        "ctx.save_for_backward(x)\n"
        "Repeat.times = times\n"
        'return minigrad.Variable(" ".join([x.data] * times), role=x.role)',
        "(x,) = ctx.saved_variables\n"
        "lines = []\n"
        "for line in feedback.data.splitlines():\n"
        "    parsed = minigrad.text.feedback.parse(line)\n"
        '    if parsed and parsed[0].kind == "at_most":\n'
        "        limit, whole = parsed[0].argument\n"
        "        line = minigrad.text.feedback.at_most_words(\n"
        "            limit // Repeat.times, whole // Repeat.times)\n"
        '    elif parsed and parsed[0].kind == "at_least":\n'
        "        limit, whole = parsed[0].argument\n"
        "        line = minigrad.text.feedback.at_least_words(\n"
        "            -(-limit // Repeat.times), whole // Repeat.times)\n"
        "    lines.append(line)\n"
        'return minigrad.Variable("\\n".join(lines), role=f"feedback to {x.role}"), None',
    ],
    # `>=` where `>` belongs: a word that ends exactly at the limit is counted as not
    # fitting. The visible cases never end a word exactly at the limit.
    "Exercise 7.2": [
        "if len(text) <= self.limit:\n"
        "    return 1.0, []\n"
        "words = text.split()\n"
        "fit, length = 0, -1\n"
        "for word in words:\n"
        "    if length + 1 + len(word) >= self.limit:\n"
        "        break\n"
        "    length += 1 + len(word)\n"
        "    fit += 1\n"
        "line = minigrad.text.feedback.at_most_words(fit, len(words))\n"
        "return self.limit / len(text), [line]",
    ],
    # The roles written as the words "title" and "tagline" instead of read from the inputs:
    # right for the visible check's roles, wrong for a "product name" and a "slogan".
    "Exercise 7.3": [
        "for_title, for_tagline = [], []\n"
        "for line in feedback.data.splitlines():\n"
        '    if line.startswith("[title]"):\n'
        "        for_title.append(line)\n"
        '    elif line.startswith("[tagline]"):\n'
        "        for_tagline.append(line)\n"
        "    else:\n"
        "        for_title.append(line)\n"
        "        for_tagline.append(line)\n"
        "title_note = tagline_note = None\n"
        "if for_title:\n"
        '    title_note = minigrad.Variable("\\n".join(for_title), role="feedback to title")\n'
        "if for_tagline:\n"
        "    tagline_note = minigrad.Variable(\n"
        '        "\\n".join(for_tagline), role="feedback to tagline")\n'
        "return title_note, tagline_note",
    ],
}
