"""Deliberately wrong answers for lesson 10's exercises (tests/test_lessons_run_on.py)."""

WRONG = {
    # Every step allocates a new array (no out=, no buffers): right numbers, no replay.
    "Exercise 10.1": [
        """
def replay(*inputs):
    values = dict(enumerate(inputs))
    for function, slots, output in tape:
        values[output] = function(*[values[slot] for slot in slots])
    return values[tape[-1][2]]

return replay
"""
    ],
    # New numbers taken for a reason to trace again, and 1 taken for the same as 1.0.
    "Exercise 10.2": [
        """
must_trace = {"a": True, "b": True, "c": True, "d": True, "e": True, "f": False, "g": False,
              "h": True}
"""
    ],
    # Numbers compared by value only (1 == 1.0, True == 1), and dtype forgotten.
    "Exercise 10.3": [
        """
if len(traced_args) != len(new_args):
    return True
for traced, new in zip(traced_args, new_args):
    if isinstance(traced, minigrad.Variable) != isinstance(new, minigrad.Variable):
        return True
    if isinstance(traced, minigrad.Variable):
        if (traced.shape, traced.requires_grad) != (new.shape, new.requires_grad):
            return True
    elif traced != new:
        return True
return False
"""
    ],
}
