"""Tests of lesson 10's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson10

EXERCISES = Path(__file__).parent.parent / "lessons" / "exercises" / "10_compile.ipynb"

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


def replay_slicing_inputs(tape, example_inputs):
    """Copies each input with buffer[:] = value, which a 0-d buffer does not allow."""
    buffers = {slot: np.array(value, copy=True) for slot, value in enumerate(example_inputs)}
    for function, slots, output in tape:
        buffers[output] = function(*[buffers[slot] for slot in slots])

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            buffers[slot][:] = value
        for function, slots, output in tape:
            function(*[buffers[slot] for slot in slots], out=buffers[output])
        return buffers[tape[-1][2]]

    return replay


def replay_returning_the_largest_slot(tape, example_inputs):
    """Returns the buffer of the largest slot number, taken for the last step's."""
    buffers = {slot: np.array(value, copy=True) for slot, value in enumerate(example_inputs)}
    for function, slots, output in tape:
        buffers[output] = function(*[buffers[slot] for slot in slots])

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            np.copyto(buffers[slot], value)
        for function, slots, output in tape:
            function(*[buffers[slot] for slot in slots], out=buffers[output])
        return buffers[max(buffers)]

    return replay


def replay_returning_the_count_less_one(tape, example_inputs):
    """Returns buffers[len(buffers) - 1]: the largest slot written another way."""
    buffers = {slot: np.array(value, copy=True) for slot, value in enumerate(example_inputs)}
    for function, slots, output in tape:
        buffers[output] = function(*[buffers[slot] for slot in slots])

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            np.copyto(buffers[slot], value)
        for function, slots, output in tape:
            function(*[buffers[slot] for slot in slots], out=buffers[output])
        return buffers[len(buffers) - 1]

    return replay


def replay_with_slots_as_list_positions(tape, example_inputs):
    """Buffers in a list in the order they are made, a slot taken as a position in it."""
    buffers = [np.array(value, copy=True) for value in example_inputs]
    for function, slots, _ in tape:
        buffers.append(function(*[buffers[slot] for slot in slots]))

    def replay(*inputs):
        for buffer, value in zip(buffers, inputs):
            np.copyto(buffer, value)
        for function, slots, output in tape:
            function(*[buffers[slot] for slot in slots], out=buffers[output])
        return buffers[-1]

    return replay


def replay_with_float_buffers(tape, example_inputs):
    """Every input buffer a float64 copy: right on float64 tapes, the check's only kind."""
    buffers = {slot: np.array(value, dtype=float) for slot, value in enumerate(example_inputs)}
    for function, slots, output in tape:
        buffers[output] = function(*[buffers[slot] for slot in slots])

    def replay(*inputs):
        for slot, value in enumerate(inputs):
            np.copyto(buffers[slot], value)
        for function, slots, output in tape:
            function(*[buffers[slot] for slot in slots], out=buffers[output])
        return buffers[tape[-1][2]]

    return replay


def test_10_1_a_tape_numbers_its_outputs_out_of_step_order() -> None:
    """The last step's output slot is not the largest, so neither the largest slot nor a
    list position stands in for it (issue 36: both passed the visible check before)."""
    outputs = [[output for _, _, output in tape] for _, tape, _ in lesson10._TAPES]
    assert any(slots[-1] != max(slots) for slots in outputs)


def test_10_1_the_out_of_order_tape_has_no_gap_in_its_slots() -> None:
    """Its slots run 0, 1, ... without a gap, so len(buffers) - 1 is the largest slot, not
    the last step's: buffers[len(buffers) - 1] is caught as well as max(buffers)."""
    for _, tape, shapes in lesson10._TAPES:
        outputs = [output for _, _, output in tape]
        if outputs[-1] != max(outputs):
            assert sorted(outputs) == list(range(len(shapes), len(shapes) + len(tape)))
            assert len(shapes) + len(tape) - 1 != outputs[-1]
            return
    raise AssertionError("no tape numbers its outputs out of step order")


@pytest.mark.parametrize(
    ("outputs", "hint"),
    [
        ([9, 4, 7], {9: "the largest slot number", 4: r"len\(buffers\) - 1"}),
        ([5, 3, 4], {5: "the largest slot number", 3: "which step 1 writes"}),
    ],
)
def test_10_1_each_other_slot_is_named(outputs, hint) -> None:
    """Any output slot but the last step's gets a hint naming its number and what it is."""
    tape = [(np.add, (0, 1), outputs[0])]
    tape += [(np.multiply, (previous, 0), output) for previous, output in zip(outputs, outputs[1:])]
    inputs = [np.arange(1.0, 4.0), np.arange(2.0, 5.0)]
    mistakes = lesson10._other_slots(tape, inputs)
    assert len(mistakes) == len(outputs) - 1
    for slot, what in hint.items():
        assert any(
            re.search(f"that is the value of slot {slot}, {what}.*slot {outputs[-1]}:", text)
            for text in mistakes
        ), (slot, list(mistakes))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            replay_returning_the_largest_slot,
            r"the result of replay\(\*inputs\), call 1, for .*slots 4, 2, 3.*: that is the "
            r"value of slot 4, the largest slot number .*not the last step's, slot 3: "
            r".*tape\[-1\]\[2\]",
        ),
        (
            replay_returning_the_count_less_one,
            r"the result of replay\(\*inputs\), call 1, for .*slots 4, 2, 3.*: that is the "
            r"value of slot 4, the largest slot number \(and len\(buffers\) - 1.*not the last "
            r"step's, slot 3: .*tape\[-1\]\[2\]",
        ),
        (
            replay_with_slots_as_list_positions,
            r"raised IndexError: .*The slots name the values; they are not positions in a list",
        ),
    ],
)
def test_10_1_slots_taken_for_positions_are_named(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson10.check_10_1(answer)


def _hidden_tests_of(exercise):
    """The `hidden_tests` function of the lesson's check cell for `exercise`."""
    lesson = Path(__file__).parent.parent / "lessons" / "10_compile.ipynb"
    for cell in json.loads(lesson.read_text())["cells"]:
        source = "".join(cell["source"])
        if source.startswith(f"# Check Exercise {exercise}"):
            hidden = source.split("### BEGIN HIDDEN TESTS")[1].split("grading.run_hidden(")[0]
            namespace: dict = {}
            exec(hidden, namespace)  # noqa: S102 - the lesson's own cell
            return namespace["hidden_tests"]
    raise AssertionError(f"no check cell for Exercise {exercise}")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            replay_returning_the_largest_slot,
            r"for a tape whose output slots are 9, 4, 7.*: that is the value of slot 9, the "
            r"largest slot number, not the last step's, slot 7: .*tape\[-1\]\[2\]",
        ),
        (
            replay_returning_the_count_less_one,
            r"for a tape whose output slots are 9, 4, 7.*: that is the value of slot 4, "
            r"len\(buffers\) - 1, .*not the last step's, slot 7: .*tape\[-1\]\[2\]",
        ),
    ],
)
def test_10_1_hidden_tests_name_the_slot_returned(answer, hint) -> None:
    from minigrad.course import check

    with pytest.raises(CheckError, match=hint):
        _hidden_tests_of("10.1")(check, answer)


def test_10_1_hidden_tests_pass_the_reference() -> None:
    from minigrad.course import check

    _hidden_tests_of("10.1")(check, build_replay)


def test_10_1_float_buffers_pass_the_visible_check(capsys) -> None:
    """What the visible check does not try (the lesson says so): tapes in other dtypes."""
    lesson10.check_10_1(replay_with_float_buffers)
    assert "Exercise 10.1: correct." in capsys.readouterr().out


def test_10_1_hidden_tapes_have_a_0d_input() -> None:
    assert any(() in shapes for _, _, shapes in lesson10._TAPES)


def test_10_1_slicing_a_0d_buffer_is_named() -> None:
    with pytest.raises(CheckError, match=r"raised IndexError: .* has no axis to slice"):
        lesson10.check_10_1(replay_slicing_inputs)


# --------------------------------------------------------------------------- Exercise 10.2

RIGHT_10_2 = {"a": False, "b": True, "c": True, "d": True, "e": True, "f": True, "g": False,
              "h": True}  # fmt: skip


def test_10_2_reference_passes(capsys) -> None:
    lesson10.check_10_2(dict(RIGHT_10_2))
    assert "Exercise 10.2: correct." in capsys.readouterr().out


def test_10_2_numpy_bools_in_another_order_pass(capsys) -> None:
    answer = {letter: np.bool_(RIGHT_10_2[letter]) for letter in sorted(RIGHT_10_2, reverse=True)}
    lesson10.check_10_2(answer)
    assert "correct" in capsys.readouterr().out


def test_10_2_answers_agree_with_minigrad_compile() -> None:
    """The expected predictions are what minigrad.compile does with each changed call."""
    minigrad.manual_seed(0)
    rng = np.random.default_rng(0)
    model = minigrad.nn.Sequential(minigrad.nn.Linear(6, 5), minigrad.nn.ReLU(),
                                   minigrad.nn.Linear(5, 3))  # fmt: skip
    optimizer = minigrad.optim.SGD(model.parameters(), lr=0.1)

    def step(x, onehot, scale):
        optimizer.zero_grad()
        loss = -(model(x).log_softmax(1) * onehot).sum() * scale / x.shape[0]
        loss.backward()
        optimizer.step()
        return loss.item()

    x_data = rng.standard_normal((8, 6))
    onehot = minigrad.Variable(np.eye(3)[rng.integers(0, 3, size=8)])
    x = minigrad.Variable(x_data)
    compiled = minigrad.compile(step)
    for _ in range(3):
        compiled(x, onehot, 1.0)
    calls = {
        "a": (minigrad.Variable(rng.standard_normal((8, 6))), onehot, 1.0),
        "b": (minigrad.Variable(x_data[:4]), minigrad.Variable(onehot.data[:4]), 1.0),
        "c": (minigrad.Variable(x_data.astype(np.float32)), onehot, 1.0),
        "d": (minigrad.Variable(x_data, requires_grad=True), onehot, 1.0),
        "e": (x, onehot, 0.5),
        "f": (x, onehot, 1),
        "g": (x, onehot, sum([0.25] * 4)),
        "h": (x, onehot, 1.0),
    }
    for letter, args in calls.items():
        before = compiled.replays
        if letter == "h":
            with minigrad.no_grad(), pytest.raises(minigrad.core.errors.NoGradFnError):
                compiled(*args)
        else:
            compiled(*args)
        assert (compiled.replays == before) == RIGHT_10_2[letter], letter
        compiled(x, onehot, 1.0) if letter != "h" else None


@pytest.mark.parametrize(
    ("change", "hint"),
    [
        ({"a": True}, r"a \(the next batch.*\): the replay serves it, .*would never replay"),
        ({"c": False}, r"c \(the same batch as float32\): must trace again, because the dtypes"),
        ({"f": False}, "keyed by its type as well as by its value"),
        ({"g": True}, "not with `is`"),
        ({"h": False}, "Grad mode is part of what a replay assumed"),
        ({"b": False, "d": False}, r"2 of the 8 predictions are off:\n- b .*\n- d "),
        (dict.fromkeys(RIGHT_10_2, True), "every call is predicted to need a new trace"),
        (dict.fromkeys(RIGHT_10_2, False), "no call is predicted to need a new trace"),
    ],
)
def test_10_2_mistakes(change, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson10.check_10_2({**RIGHT_10_2, **change})


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ([False, True], "must_trace should be a dict"),
        ({k: v for k, v in RIGHT_10_2.items() if k != "h"}, "no prediction for 'h'"),
        ({**RIGHT_10_2, "i": True}, "entries for 'i', which are not among the calls"),
        ({**RIGHT_10_2, "b": "yes"}, r"must_trace\['b'\] should be True .* got a str"),
        ({**RIGHT_10_2, "b": 1}, r"must_trace\['b'\] should be True .* got an int"),
    ],
)
def test_10_2_badly_formed_answers(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson10.check_10_2(answer)


# --------------------------------------------------------------------------- Exercise 10.3


def needs_new_trace(traced_args, new_args):
    if len(traced_args) != len(new_args):
        return True
    for a, b in zip(traced_args, new_args):
        if isinstance(a, minigrad.Variable) != isinstance(b, minigrad.Variable):
            return True
        if isinstance(a, minigrad.Variable):
            if (a.shape, a.dtype, a.requires_grad) != (b.shape, b.dtype, b.requires_grad):
                return True
        elif type(a) is not type(b) or a != b:
            return True
    return False


def needs_new_trace_by_keys(traced_args, new_args):
    """Written differently: one key per argument, the lists of keys compared."""

    def key(value):
        if isinstance(value, minigrad.Variable):
            return ("Variable", tuple(value.shape), str(value.dtype), value.requires_grad)
        return (type(value).__name__, value)

    return [key(a) for a in traced_args] != [key(b) for b in new_args]


def test_10_3_reference_passes(capsys) -> None:
    lesson10.check_10_3(needs_new_trace)
    assert "Exercise 10.3: correct." in capsys.readouterr().out


def test_10_3_keys_pass(capsys) -> None:
    lesson10.check_10_3(needs_new_trace_by_keys)
    assert "correct" in capsys.readouterr().out


def test_10_3_numpy_bool_passes(capsys) -> None:
    lesson10.check_10_3(lambda a, b: np.bool_(needs_new_trace(a, b)))
    assert "correct" in capsys.readouterr().out


def test_10_3_hidden_cases_have_the_edges() -> None:
    cases = lesson10._guard_cases(np.random.default_rng(0))
    labels = " | ".join(label for label, *_ in cases)
    assert "0-d" in labels and "1, then 1.0" in labels and "True, then 1" in labels
    assert "1, then True" in labels
    equal_objects = [
        (a, b) for _, traced, new, _, _ in cases for a, b in zip(traced, new)
        if type(a) is float and type(b) is float and a == b and a is not b
    ]  # fmt: skip
    assert equal_objects, "a pair of equal numbers in different objects"


def _variables(a, b) -> bool:
    return isinstance(a, minigrad.Variable) and isinstance(b, minigrad.Variable)


def _replacing(rule):
    """The reference with one comparison replaced: rule(a, b) returns True/False to decide
    that pair, or None to leave it to the reference."""

    def answer(traced_args, new_args):
        if len(traced_args) != len(new_args):
            return True
        for a, b in zip(traced_args, new_args):
            decided = rule(a, b)
            if decided is None:
                decided = needs_new_trace([a], [b])
            if decided:
                return True
        return False

    return answer


def compares_data(a, b):
    if _variables(a, b):
        return needs_new_trace([a], [b]) or not np.array_equal(a.data, b.data)
    return None


def variables_by_identity(a, b):
    return (a is not b) if _variables(a, b) else None


def variables_with_not_equal(a, b):
    if _variables(a, b):
        if a != b:  # elementwise, then bool() of a Variable
            return True
        return needs_new_trace([a], [b])
    return None


def ndim_not_shape(a, b):
    if _variables(a, b):
        return (a.ndim, a.dtype, a.requires_grad) != (b.ndim, b.dtype, b.requires_grad)
    return None


def size_not_shape(a, b):
    if _variables(a, b):
        return (a.data.size, a.dtype, a.requires_grad) != (b.data.size, b.dtype, b.requires_grad)
    return None


def len_not_shape(a, b):
    if _variables(a, b):
        return (len(a), a.dtype, a.requires_grad) != (len(b), b.dtype, b.requires_grad)
    return None


def ignores_dtype(a, b):
    if _variables(a, b):
        return (a.shape, a.requires_grad) != (b.shape, b.requires_grad)
    return None


def ignores_requires_grad(a, b):
    if _variables(a, b):
        return (a.shape, a.dtype) != (b.shape, b.dtype)
    return None


def _numbers(a, b) -> bool:
    return not isinstance(a, minigrad.Variable) and not isinstance(b, minigrad.Variable)


def ignores_numbers(a, b):
    return (type(a) is not type(b)) if _numbers(a, b) else None


def numbers_by_identity(a, b):
    return (a is not b) if _numbers(a, b) else None


def numbers_by_value_only(a, b):
    return (a != b) if _numbers(a, b) else None


def float_or_not(a, b):
    """Kinds by isinstance(..., float): True and 1 are both 'not a float'."""
    if _numbers(a, b):
        return isinstance(a, float) != isinstance(b, float) or a != b
    return None


def type_by_isinstance(a, b):
    """Kinds by isinstance(new, type(traced)): lets True through where 1 was traced."""
    if _numbers(a, b):
        return not isinstance(b, type(a)) or a != b
    return None


def no_kind_check(traced_args, new_args):
    if len(traced_args) != len(new_args):
        return True
    for a, b in zip(traced_args, new_args):
        if (a.shape, a.dtype, a.requires_grad) != (b.shape, b.dtype, b.requires_grad):
            return True
    return False


def kinds_by_getattr(traced_args, new_args):
    """No kind check, numbers compared with != even against a Variable."""
    if len(traced_args) != len(new_args):
        return True
    for a, b in zip(traced_args, new_args):
        if isinstance(a, minigrad.Variable):
            if (a.shape, a.dtype, a.requires_grad) != tuple(
                getattr(b, name, None) for name in ("shape", "dtype", "requires_grad")
            ):
                return True
        elif a != b or type(a) is not type(b):  # != first: a Variable in b compares elementwise
            return True
    return False


def ignores_count(traced_args, new_args):
    return needs_new_trace(traced_args[: len(new_args)], new_args[: len(traced_args)])


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_replacing(compares_data), r"next batch.* returned True, expected False: .*differ only"),
        (_replacing(variables_by_identity), r"returned True, expected False: .*`a is b`"),
        (_replacing(variables_with_not_equal), r"raised RuntimeError: .*compares numbers elem"),
        (_replacing(ndim_not_shape), r"8 rows, then one of 5 rows.* compare \.shape"),
        (_replacing(size_not_shape), r"\(\) and \(1,\) hold one number each"),
        (_replacing(len_not_shape), r"raised TypeError: .* has no len\(\): compare \.shape"),
        (_replacing(ignores_dtype), r"the dtypes differ \(float64, then float32\)"),
        (_replacing(ignores_requires_grad), "requires_grad differs"),
        (_replacing(ignores_numbers), r"0.1, then 0.05 .*a Python number gets no buffer"),
        (_replacing(numbers_by_identity), r"`is` asks about the objects"),
        (_replacing(numbers_by_value_only), r"1, then 1.0 returned False.*1 == 1.0 in Python"),
        (_replacing(float_or_not), r"True, then 1 returned False.*bool is a subclass of int"),
        (_replacing(type_by_isinstance), r"1, then True returned False.*isinstance\(new, type"),
        (no_kind_check, r"raised AttributeError: .*A plain number has no \.shape"),
        (kinds_by_getattr, r"raised RuntimeError: .*compares numbers element by element"),
        (ignores_count, r"2 and 3 arguments: zip\(\) stops at the shorter list"),
        (lambda a, b: None, r"returned None; return True .* without `return` gives None"),
        (lambda a, b: (0, "shape"), "returned a tuple; return a plain True or False"),
        (lambda a, b: "no", "returned a str; return a plain True or False"),
    ],
)
def test_10_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson10.check_10_3(answer)


# --------------------------------------------------------------------------- errors in the answers


def _stub(exercise: str):
    def stub(*args):
        raise NotImplementedError(f"Exercise {exercise}: ...")

    return stub


@pytest.mark.parametrize(
    ("check", "exercise"),
    [(lesson10.check_10_1, "10.1"), (lesson10.check_10_3, "10.3")],
)
def test_unwritten_exercises_say_so(check, exercise: str) -> None:
    pattern = rf"^Exercise {exercise} is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        check(_stub(exercise))


def test_10_2_unwritten_says_so() -> None:
    """The cell assigns must_trace = None before the solution region, so a check run on the
    unfinished exercise says it is not written instead of a NameError."""
    pattern = r"^Exercise 10.2 is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        lesson10.check_10_2(None)


def test_10_2_student_cells_unwritten_say_so() -> None:
    """As a learner: run the student version's exercise cell (it stops at the stub), then
    its check cell, in one namespace."""
    notebook = json.loads(EXERCISES.read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    exercise = next(s for s in sources if s.startswith("# Exercise 10.2"))
    check_cell = next(s for s in sources if s.startswith("# Check Exercise 10.2"))
    namespace: dict = {}
    with pytest.raises(NotImplementedError, match="^Exercise 10.2"):
        exec(exercise, namespace)
    with pytest.raises(CheckError, match="^Exercise 10.2 is not written yet"):
        exec(check_cell, namespace)


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
