"""A failed check shows its message, not a traceback through the checks.

IPython (and so Jupyter) prints what `CheckError._render_traceback_` returns instead of a
traceback: the message, and, when the learner's own code raised the error behind it, the
line of their code that did. Outside IPython a CheckError is an ordinary exception.
"""

from __future__ import annotations

import os
import traceback

import nbformat
import pytest
from nbclient import NotebookClient

import minigrad
from minigrad.course import CheckError, check, lesson00, lesson03


def rendered(error: CheckError) -> list[str]:
    return "\n".join(error._render_traceback_()).splitlines()


def failure(function, *args) -> CheckError:
    with pytest.raises(CheckError) as caught:
        function(*args)
    return caught.value


def test_a_wrong_answer_is_its_message_alone() -> None:
    error = failure(lesson00.check_0_2, 10.0)
    assert rendered(error) == ["CheckError: Exercise 0.2: slope is 10, expected 11."]


def test_an_error_in_the_learners_code_shows_their_line() -> None:
    class Cube(minigrad.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3 / undefined_name  # noqa: F821 - the learner's slip

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * grad_output

    lines = rendered(failure(lesson03.check_3_1, Cube))
    assert len(lines) == 3
    assert lines[0].startswith("CheckError: Exercise 3.1: Cube.apply(x) raised NameError")
    assert lines[1].startswith(f"Your code, {__file__}, line ")
    assert lines[1].endswith(", in forward:")
    assert lines[2] == "    return x**3 / undefined_name  # noqa: F821 - the learner's slip"


def test_the_line_is_the_learners_even_when_minigrad_raised() -> None:
    """The learner's call into minigrad is shown, not minigrad's own line."""

    def second_derivative(f, x):
        return x.reshape(7)  # a shape that does not fit: minigrad raises inside reshape

    def call() -> None:
        check.call("9.1", "second_derivative(f, x)", second_derivative, None, minigrad.ones(3))

    lines = rendered(failure(call))
    assert "raised" in lines[0]
    assert lines[1].endswith(", in second_derivative:")
    assert lines[2].strip().startswith("return x.reshape(7)")
    assert not any("minigrad/" in line for line in lines[1:])


def test_an_unwritten_exercise_points_at_its_stub() -> None:
    def stub() -> None:
        raise NotImplementedError("Exercise 9.1: write it")

    lines = rendered(failure(check.call, "9.1", "stub()", stub))
    assert lines[0] == (
        "CheckError: Exercise 9.1 is not written yet: replace the `raise "
        "NotImplementedError(...)` line with your code."
    )
    assert lines[2].strip() == 'raise NotImplementedError("Exercise 9.1: write it")'


def test_a_wrong_gradient_found_by_gradcheck_shows_no_line() -> None:
    """gradcheck raises inside minigrad after the learner's code ran fine: no line to show."""

    class Wrong(minigrad.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output  # the factor 2x is missing

    x = minigrad.Variable([0.5, 1.5], requires_grad=True)
    lines = rendered(failure(check.gradcheck_or_hint, "3.1", Wrong.apply, (x,), "Wrong.apply, x"))
    assert lines[0].startswith("CheckError: Exercise 3.1: minigrad.gradcheck(Wrong.apply, x)")
    assert not any(line.startswith("Your code") for line in lines)


def test_outside_ipython_it_is_an_ordinary_exception() -> None:
    error = failure(lesson00.check_0_2, 10.0)
    text = "".join(traceback.format_exception(error))
    assert text.startswith("Traceback (most recent call last)")
    assert "check.py" in text and text.rstrip().endswith("slope is 10, expected 11.")


def test_ipython_prints_the_short_form(capsys: pytest.CaptureFixture) -> None:
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    shell = shell_module.InteractiveShell.instance()
    try:
        shell.run_cell("from minigrad.course import lesson00", store_history=True)
        shell.run_cell("lesson00.check_0_2(12.0)", store_history=True)
        shell.run_cell(
            "def f(x):\n    return x / 0\n\n"
            "from minigrad.course import check\n"
            "check.call('0.9', 'f(1)', f, 1)",
            store_history=True,
        )
    finally:
        shell_module.InteractiveShell.clear_instance()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "CheckError: Exercise 0.2: slope is 12, expected 11: that is the slope of x**3 "
        "alone: the derivative of -x adds -1."
    )
    assert out[1] == "CheckError: Exercise 0.9: f(1) raised ZeroDivisionError: division by zero."
    assert out[2].startswith("Your code, Cell In[") and out[2].endswith("], line 2, in f:")
    assert out[3] == "    return x / 0"
    assert len(out) == 4 and not any("check.py" in line for line in out)


def test_jupyter_shows_the_short_form() -> None:
    """A real kernel: the error output's traceback is the message (and the learner's line)."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("from minigrad.course import lesson00"),
        nbformat.v4.new_code_cell("lesson00.check_0_2(6.0)"),
        nbformat.v4.new_code_cell(
            "from minigrad.course import check\n"
            "def f(x):\n    return x.missing_method()\n"
            "check.call('0.9', 'f(1)', f, 1)"
        ),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    NotebookClient(notebook, timeout=120, allow_errors=True, kernel_name="python3").execute()
    first = notebook.cells[1].outputs[0]
    assert first.output_type == "error" and first.ename == "CheckError"
    assert first.traceback == [
        "CheckError: Exercise 0.2: slope is 6, expected 11: that is f(2) itself, the value, "
        "not its slope; call backward() and read x.grad."
    ]
    second = notebook.cells[2].outputs[0]
    assert second.traceback[0].startswith("CheckError: Exercise 0.9: f(1) raised AttributeError")
    assert second.traceback[1:] == [
        "Your code, Cell In[3], line 3, in f:",
        "    return x.missing_method()",
    ]
