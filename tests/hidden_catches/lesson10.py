"""Answers that pass lesson 10's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not.

Exercise 10.2 has none: eight predictions, which the hidden tests only check again."""

CAUGHT = {
    # Every input buffer made a float64 copy (dtype=float): right for the check's tapes, all
    # float64, wrong for the grade's float32 and int64 tapes (the results change dtype).
    "Exercise 10.1": [
        "buffers = {slot: np.array(value, dtype=float) for slot, value in "
        "enumerate(example_inputs)}\n"
        "for function, slots, output in tape:\n"
        "    buffers[output] = function(*[buffers[slot] for slot in slots])\n"
        "\n"
        "def replay(*inputs):\n"
        "    for slot, value in enumerate(inputs):\n"
        "        np.copyto(buffers[slot], value)\n"
        "    for function, slots, output in tape:\n"
        "        function(*[buffers[slot] for slot in slots], out=buffers[output])\n"
        "    return buffers[tape[-1][2]]\n"
        "\n"
        "return replay",
    ],
    # requires_grad compared one way only (the call of Exercise 10.2's d): an input that
    # required grad in the trace and no longer does is let through to the replay.
    "Exercise 10.3": [
        "if len(traced_args) != len(new_args):\n"
        "    return True\n"
        "for traced, new in zip(traced_args, new_args):\n"
        "    if isinstance(traced, minigrad.Variable) != isinstance(new, minigrad.Variable):\n"
        "        return True\n"
        "    if isinstance(traced, minigrad.Variable):\n"
        "        if traced.shape != new.shape or traced.dtype != new.dtype:\n"
        "            return True\n"
        "        if new.requires_grad and not traced.requires_grad:\n"
        "            return True\n"
        "    elif type(traced) is not type(new) or traced != new:\n"
        "        return True\n"
        "return False",
    ],
}
