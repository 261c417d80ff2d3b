"""Tests of lesson 10's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson10

# --------------------------------------------------------------------------- Exercise 10.1


def build_replay(tape, example_inputs):
    buffers = {slot: np.array(value, copy=True) for slot, value in enumerate(example_inputs)}
    for function, slots, output in tape:  # one plain run sizes every buffer
        buffers[output] = function(*[buffers[slot] for slot in slots])
    steps = [
        (function, [buffers[slot] for slot in slots], buffers[output])
        for function, slots, output in tape
    ]
    result = buffers[tape[-1][2]]

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            np.copyto(buffers[slot], value)
        for function, arguments, out in steps:
            function(*arguments, out=out)
        return result

    return replay


def build_replay_looking_up_slots(tape, example_inputs):
    """Slots looked up on every call, out passed by position: also right."""
    buffers = [np.array(value, copy=True) for value in example_inputs]
    for function, slots, output in tape:
        value = function(*[buffers[slot] for slot in slots])
        buffers.extend([None] * (output + 1 - len(buffers)))
        buffers[output] = value

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            buffers[slot][...] = value
        for function, slots, output in tape:
            function(*[buffers[slot] for slot in slots], buffers[output])
        return buffers[tape[-1][2]]

    return replay


def replay_without_out(tape, example_inputs):
    def replay(*inputs):
        values = dict(enumerate(inputs))
        for function, slots, output in tape:
            values[output] = function(*[values[slot] for slot in slots])
        return values[tape[-1][2]]

    return replay


def replay_without_copying_inputs(tape, example_inputs):
    inner = build_replay(tape, example_inputs)
    return lambda *inputs: inner(*example_inputs)


def replay_rebinding_inputs(tape, example_inputs):
    buffers = {slot: np.array(value, copy=True) for slot, value in enumerate(example_inputs)}
    for function, slots, output in tape:
        buffers[output] = function(*[buffers[slot] for slot in slots])
    steps = [
        (function, [buffers[slot] for slot in slots], buffers[output])
        for function, slots, output in tape
    ]

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            buffers[slot] = value  # the steps still hold the old arrays
        for function, arguments, out in steps:
            function(*arguments, out=out)
        return buffers[tape[-1][2]]

    return replay


def replay_in_reverse(tape, example_inputs):
    """Runs the steps from the last to the first, as backward walks a graph."""
    buffers = {slot: np.array(value, copy=True) for slot, value in enumerate(example_inputs)}
    for function, slots, output in tape:
        buffers[output] = function(*[buffers[slot] for slot in slots])

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            np.copyto(buffers[slot], value)
        for function, slots, output in reversed(tape):
            function(*[buffers[slot] for slot in slots], out=buffers[output])
        return buffers[tape[-1][2]]

    return replay


def replay_returning_a_copy(tape, example_inputs):
    inner = build_replay(tape, example_inputs)
    return lambda *inputs: inner(*inputs).copy()


def replay_in_the_example_arrays(tape, example_inputs):
    buffers = dict(enumerate(example_inputs))  # the caller's arrays, not copies
    for function, slots, output in tape:
        buffers[output] = function(*[buffers[slot] for slot in slots])

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            np.copyto(buffers[slot], value)
        for function, slots, output in tape:
            function(*[buffers[slot] for slot in slots], out=buffers[output])
        return buffers[tape[-1][2]]

    return replay


def test_10_1_reference_passes(capsys) -> None:
    lesson10.check_10_1(build_replay)
    assert "Exercise 10.1: correct." in capsys.readouterr().out


def test_10_1_slot_lookup_passes(capsys) -> None:
    lesson10.check_10_1(build_replay_looking_up_slots)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (replay_without_out, r"step 0 \(np.multiply\) was called without out="),
        (replay_without_copying_inputs, "returned the result for earlier inputs: copy"),
        (replay_rebinding_inputs, "Rebinding a name or a dict entry"),
        (replay_in_reverse, "run them in the order they were recorded"),
        (replay_returning_a_copy, "returned a new array on each call"),
        (replay_in_the_example_arrays, "changed the example inputs"),
        (lambda tape, example_inputs: None, "return the function replay"),
    ],
)
def test_10_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson10.check_10_1(answer)


def test_10_1_a_return_inside_the_loop() -> None:
    def returns_inside_the_loop(tape, example_inputs):
        buffers = {slot: np.array(value, copy=True) for slot, value in enumerate(example_inputs)}
        for function, slots, output in tape:
            buffers[output] = function(*[buffers[slot] for slot in slots])

        def replay(*inputs):
            for slot, value in enumerate(inputs):
                np.copyto(buffers[slot], value)
            for function, slots, output in tape:
                function(*[buffers[slot] for slot in slots], out=buffers[output])
                return buffers[output]  # indented one level too far

        return replay

    with pytest.raises(CheckError, match=r"the steps that ran were \[0\]; .* exactly once"):
        lesson10.check_10_1(returns_inside_the_loop)


# --------------------------------------------------------------------------- Exercise 10.2


def same_signature(args_a, args_b):
    for position, (a, b) in enumerate(zip(args_a, args_b)):
        kind_a = "Variable" if isinstance(a, minigrad.Variable) else type(a).__name__
        kind_b = "Variable" if isinstance(b, minigrad.Variable) else type(b).__name__
        if kind_a != kind_b:
            return position, "kind"
        if kind_a == "Variable":
            for what in ("shape", "dtype", "requires_grad"):
                if getattr(a, what) != getattr(b, what):
                    return position, what
        elif a != b:
            return position, "value"
    if len(args_a) != len(args_b):
        return min(len(args_a), len(args_b)), "count"
    return None


def _with(answer_change):
    """The reference answer with one piece changed by `answer_change(position, a, b)`,
    which returns a result to use, or False to go on with the reference logic."""

    def answer(args_a, args_b):
        for position, (a, b) in enumerate(zip(args_a, args_b)):
            changed = answer_change(position, a, b)
            if changed is not False:
                if changed is not None:
                    return changed
                continue
            found = same_signature([a], [b])
            if found is not None:
                return position, found[1]
        if len(args_a) != len(args_b):
            return min(len(args_a), len(args_b)), "count"
        return None

    return answer


def _variables(a, b) -> bool:
    return isinstance(a, minigrad.Variable) and isinstance(b, minigrad.Variable)


def compares_data(position, a, b):
    if _variables(a, b) and a.shape == b.shape and not np.array_equal(a.data, b.data):
        return position, "value"
    return False


def ignores_dtype(position, a, b):
    if _variables(a, b) and a.shape == b.shape and a.requires_grad == b.requires_grad:
        return None
    return False


def ignores_requires_grad(position, a, b):
    if _variables(a, b) and a.shape == b.shape and a.dtype == b.dtype:
        return None
    return False


def values_with_equality_only(position, a, b):
    if not isinstance(a, minigrad.Variable) and not isinstance(b, minigrad.Variable):
        return (position, "value") if a != b else None
    return False


def numbers_ignored(position, a, b):
    if not isinstance(a, minigrad.Variable) and type(a) is type(b):
        return None
    return False


def no_kind_check(args_a, args_b):
    for position, (a, b) in enumerate(zip(args_a, args_b)):
        for what in ("shape", "dtype", "requires_grad"):
            if getattr(a, what) != getattr(b, what):  # a float has no .shape
                return position, what
    return None


def ignores_count(args_a, args_b):
    return same_signature(args_a[: len(args_b)], args_b[: len(args_a)])


def last_difference(args_a, args_b):
    found = None
    for position in range(min(len(args_a), len(args_b))):
        here = same_signature([args_a[position]], [args_b[position]])
        if here is not None:
            found = position, here[1]
    if found is None and len(args_a) != len(args_b):
        return min(len(args_a), len(args_b)), "count"
    return found


def dtype_before_shape(args_a, args_b):
    for position, (a, b) in enumerate(zip(args_a, args_b)):
        if _variables(a, b) and a.dtype != b.dtype:
            return position, "dtype"
        here = same_signature([a], [b])
        if here is not None:
            return position, here[1]
    return same_signature(args_a, args_b)


def test_10_2_reference_passes(capsys) -> None:
    lesson10.check_10_2(same_signature)
    assert "Exercise 10.2: correct." in capsys.readouterr().out


def test_10_2_list_answer_passes(capsys) -> None:
    lesson10.check_10_2(lambda a, b: None if (r := same_signature(a, b)) is None else list(r))
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_with(compares_data), "a Variable's numbers are not part of the signature"),
        (_with(ignores_dtype), r"the dtypes differ \(float64 vs float32\)"),
        (_with(ignores_requires_grad), "requires_grad differs"),
        (_with(values_with_equality_only), "1 == 1.0 in Python"),
        (_with(numbers_ignored), "a Python number is baked into the trace"),
        (no_kind_check, "A plain number has no .shape or .dtype"),
        (ignores_count, "zip\\(\\) stops at the shorter list"),
        (last_difference, "that is the last difference"),
        (dtype_before_shape, "check shape first"),
        (lambda a, b: "argument 1 changed", "return None, or a pair"),
    ],
)
def test_10_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson10.check_10_2(answer)


# --------------------------------------------------------------------------- errors in the answers


def _stub(exercise: str):
    def stub(*args):
        raise NotImplementedError(f"Exercise {exercise}: ...")

    return stub


@pytest.mark.parametrize(
    ("check", "exercise"),
    [(lesson10.check_10_1, "10.1"), (lesson10.check_10_2, "10.2")],
)
def test_unwritten_exercises_say_so(check, exercise: str) -> None:
    pattern = rf"^Exercise {exercise} is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        check(_stub(exercise))


def test_10_1_an_error_inside_replay_is_reported_as_such() -> None:
    def replay_raises(tape, example_inputs):
        def replay(*inputs):
            raise KeyError("slot 7")

        return replay

    with pytest.raises(CheckError, match=r"replay\(\*inputs\), call 1, .* raised KeyError"):
        lesson10.check_10_1(replay_raises)


def build_replay_reading_the_callers_arrays(tape, example_inputs):
    # Correct numbers, but the steps read the arrays of each call: no input buffers.
    slots = {}

    def replay(*inputs):
        for index, value in enumerate(inputs):
            slots[index] = value
        for function, inputs_of, output in tape:
            if output not in slots:
                shapes = [slots[i].shape for i in inputs_of]
                slots[output] = np.empty(np.broadcast_shapes(*shapes))
            function(*[slots[i] for i in inputs_of], out=slots[output])
        return slots[tape[-1][2]]

    return replay


def test_10_1_reading_the_callers_arrays_is_named() -> None:
    with pytest.raises(CheckError, match="read an array replay was called with"):
        lesson10.check_10_1(build_replay_reading_the_callers_arrays)
