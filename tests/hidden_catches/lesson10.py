"""Answers that pass lesson 10's visible checks and fail only their hidden tests
(tests/test_hidden_tests.py): the grade tries cases the self-check does not.

Exercise 10.2 has none: eight predictions, which the hidden tests only check again."""

CAUGHT = {
    # Buffers in a list, a slot taken as a position in it: right while the output slots are
    # numbered k, k+1, ... in tape order (as in the check's tapes), wrong for slots 9, 4, 7.
    "Exercise 10.1": [
        "buffers = [np.array(value, copy=True) for value in example_inputs]\n"
        "for function, slots, output in tape:\n"
        "    buffers.append(function(*[buffers[slot] for slot in slots]))\n"
        "\n"
        "def replay(*inputs):\n"
        "    for buffer, value in zip(buffers, inputs):\n"
        "        np.copyto(buffer, value)\n"
        "    for function, slots, output in tape:\n"
        "        function(*[buffers[slot] for slot in slots], out=buffers[output])\n"
        "    return buffers[-1]\n"
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
