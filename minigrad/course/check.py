"""What every exercise check is built from: CheckError and comparisons that explain.

A check cell calls one function of minigrad.course.lessonNN. It prints a line when the
answer is right and otherwise raises CheckError with the mistake it most likely is, e.g.
"the gradient for `w` has shape (3, 4), expected (4, 3): did you forget a transpose?".
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from minigrad.autodiff.gradcheck import GradcheckError, gradcheck
from minigrad.core.function import Function
from minigrad.core.variable import Variable

# A rule that turns an exception raised by the learner's code into a hint: either a
# function `error -> hint or None`, or (exception types, hint), or (exception types,
# predicate on the error, hint). Rules look at an error's type and fields (the engine's
# typed errors carry their data: GradientCountError.expected, NoGradFnError.index, ...),
# never at its wording, which may change.
HintRule = (
    Callable[[BaseException], str | None]
    | tuple[type[BaseException] | tuple[type[BaseException], ...], str]
    | tuple[
        type[BaseException] | tuple[type[BaseException], ...],
        Callable[[BaseException], bool],
        str,
    ]
)


class CheckError(Exception):
    """An exercise's answer is not right yet; the message says what to look at.

    In IPython and Jupyter a CheckError shows as its message alone, not as a traceback
    through the checks: IPython calls `_render_traceback_` for the lines to print. When the
    learner's own code raised the error behind it, the line of their code that did follows.
    Elsewhere (pytest, plain Python) it is an ordinary exception with a normal traceback.
    """

    def _render_traceback_(self) -> list[str]:
        lines = [f"{type(self).__name__}: {self}"]
        behind = self.__cause__ or self.__context__
        if behind is not None and not isinstance(behind, CheckError):
            try:
                lines += _learner_line(behind)
            except Exception:  # noqa: BLE001 - the message alone is still the useful part
                pass
        return lines


def _learner_line(error: BaseException) -> list[str]:
    """Where the learner's code raised `error`: the deepest frame of its traceback that is
    neither minigrad nor an installed package, as ["Your code, Cell In[5], line 3, in f:",
    "    source line"]; [] when there is none."""
    found = None
    library = _library_folders()
    traceback = error.__traceback__
    while traceback is not None:
        code = traceback.tb_frame.f_code
        filename = code.co_filename
        if not filename.startswith("<frozen") and not os.path.abspath(filename).startswith(library):
            found = (filename, traceback.tb_lineno, code.co_name)
        traceback = traceback.tb_next
    if found is None:
        return []
    filename, line, function = found
    where = f"{_cell_or_file(filename)}, line {line}"
    if function != "<module>":
        where += f", in {function}"
    source = linecache.getline(filename, line).strip()
    return [f"Your code, {where}:"] + ([f"    {source}"] if source else [])


def _library_folders() -> tuple[str, ...]:
    """minigrad's own folders (the kernels too) and those of the installed packages."""
    folders = {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    kernels = sys.modules.get("minigrad.kernels")  # loaded only when a kernel was used
    if kernels is not None and getattr(kernels, "__file__", None):
        folders.add(os.path.dirname(os.path.abspath(kernels.__file__)))
    paths = sysconfig.get_paths()
    folders.update(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib"))
    return tuple(os.path.join(folder, "") for folder in folders)


def _cell_or_file(filename: str) -> str:
    """'Cell In[5]' for a notebook cell (as IPython names it), else the file name."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    named = getattr(getattr(shell, "compile", None), "format_code_name", None)
    label = named(filename) if named is not None else None
    return f"{label[0]} {label[1]}" if label else filename


def passed(exercise: str, grading_also: str = "") -> None:
    """Report a correct answer; `grading_also` names what the grading tries beyond the
    visible cases, so that "correct" is not read as "graded"."""
    # One write, newline included: print() writes the text and the newline separately, and
    # Jupyter can flush between the two, which stores the line as two outputs.
    more = f" Grading also checks {grading_also}." if grading_also else ""
    sys.stdout.write(f"Exercise {exercise}: correct on these cases.{more}\n" if more else
                     f"Exercise {exercise}: correct.\n")


def fail(exercise: str, message: str) -> NoReturn:
    """Raise CheckError for `exercise` with a hint."""
    raise CheckError(f"Exercise {exercise}: {message}")


def not_written(exercise: str) -> NoReturn:
    """Raise the CheckError for an exercise whose student stub still raises."""
    raise CheckError(
        f"Exercise {exercise} is not written yet: replace the `raise NotImplementedError(...)` "
        f"line with your code."
    )


def is_stub(error: BaseException) -> bool:
    """True for the NotImplementedError("Exercise N.k: ...") of an unwritten exercise."""
    return isinstance(error, NotImplementedError) and str(error).startswith("Exercise ")


def explain_error(
    exercise: str, what: str, error: BaseException, hints: Sequence[HintRule] = ()
) -> NoReturn:
    """Raise a CheckError for an exception the learner's code raised.

    An unwritten exercise says so; any other error is reported as "`what` raised
    X: message", followed by the hint of the first rule in `hints` that matches it (write
    hints as full sentences).
    """
    if isinstance(error, CheckError):
        raise error
    if is_stub(error):
        not_written(exercise)
    text = f"{what} raised {type(error).__name__}: {_sentence(str(error))}"
    for rule in hints:
        hint = _apply_rule(rule, error)
        if hint:
            fail(exercise, f"{text} {hint}")
    fail(exercise, text)


def call(
    exercise: str,
    what: str,
    function: Callable[..., Any],
    *args: Any,
    hints: Sequence[HintRule] = (),
) -> Any:
    """function(*args) for a function the learner wrote; whatever it raises becomes a
    CheckError with a hint (see explain_error). `what` names the call, e.g.
    "second_derivative(f, x)"."""
    try:
        return function(*args)
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        explain_error(exercise, what, error, hints)


def _apply_rule(rule: HintRule, error: BaseException) -> str | None:
    if callable(rule):
        return rule(error)
    if len(rule) == 2:
        types, hint = rule
        return hint if isinstance(error, types) else None
    types, predicate, hint = rule
    if isinstance(predicate, str):
        raise TypeError(
            "a hint rule matches an error by its type and fields, not by text in its message; "
            f"got the text {predicate!r}: pass a predicate such as "
            "`lambda error: error.expected == 2`."
        )
    if isinstance(error, types) and predicate(error):
        return hint
    return None


def _sentence(text: str) -> str:
    """A message as one sentence: one final full stop (or ? or !), no trailing space."""
    text = text.strip()
    if not text:
        return "(no message)."
    return text if text[-1] in ".?!" else text + "."


def type_name(value: Any) -> str:
    """The name of value's type, as a learner knows it: x.data (a DataArray) is an ndarray."""
    return "ndarray" if isinstance(value, np.ndarray) else type(value).__name__


def with_article(value: Any) -> str:
    """The type of `value` with "a" or "an" in front: "a float", "an ndarray", "an int"."""
    if value is None:
        return "None"
    name = type_name(value)
    # By sound: "an ndarray" (en-dee-array), but "a uint8" and "a ufunc".
    vowel_sound = name[:1].lower() in "aeio" or name.startswith("nd")
    return f"{'an' if vowel_sound else 'a'} {name}"


def as_array(exercise: str, what: str, value: Any) -> np.ndarray:
    """The numbers inside `value` (a Variable, an array or a number), or a CheckError."""
    if isinstance(value, Variable):
        if isinstance(value.data, str):
            fail(exercise, f"{what} should hold numbers; it is a text Variable.")
        return np.asarray(value.data)
    if value is None:
        fail(exercise, f"{what} is None: did you forget to `return` it, or to run backward()?")
    if isinstance(value, (int, float, np.ndarray, np.generic, list, tuple)):
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    fail(exercise, f"{what} should be a Variable or numbers; got {with_article(value)}.")


def expect_shape(
    exercise: str, what: str, got: np.ndarray, expected: tuple, hint: str | None = None
) -> None:
    """Compare shapes. `hint` says what a wrong shape most likely means for this answer;
    without it, a reversed shape suggests a missing transpose, too many entries a missing
    sum or mean, the right number of entries a reshape."""
    got_shape, expected = tuple(np.shape(got)), tuple(expected)
    if got_shape == expected:
        return
    if hint is None:
        if got_shape == expected[::-1] and len(expected) == 2:
            hint = "did you forget a transpose?"
        elif np.size(got) > int(np.prod(expected)):
            hint = (
                "it has more entries than expected; did you forget to sum or average over an axis?"
            )
        elif tuple(n for n in got_shape if n != 1) == tuple(n for n in expected if n != 1):
            hint = (
                "the same entries with an extra or missing axis of length 1; drop keepdim "
                "(or use .squeeze()/.unsqueeze()) to match."
            )
        elif np.size(got) == int(np.prod(expected)):
            hint = "the right number of entries in the wrong arrangement; check the reshape."
        else:
            hint = (
                "it has fewer entries than expected; did you sum or average over an axis "
                "that should stay?"
            )
    fail(exercise, f"{what} has shape {got_shape}, expected {expected}: {hint}")


def expect_close(
    exercise: str,
    what: str,
    got: Any,
    expected: Any,
    mistakes: dict[str, Any] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    shape_hint: str | None = None,
) -> None:
    """Compare values. `mistakes` maps a hint to the value a known mistake would give, so
    a wrong answer that equals one of them gets that hint instead of a plain "wrong";
    `shape_hint` is what a wrong shape means here (see expect_shape)."""
    got_array = as_array(exercise, what, got)
    expected_array = np.asarray(expected, dtype=np.float64)
    expect_shape(exercise, what, got_array, expected_array.shape, shape_hint)
    if np.allclose(got_array, expected_array, rtol=rtol, atol=atol):
        return
    for hint, wrong in (mistakes or {}).items():
        wrong_array = np.asarray(wrong, dtype=np.float64)
        same_shape = wrong_array.shape == got_array.shape
        if same_shape and np.allclose(got_array, wrong_array, rtol=rtol, atol=atol):
            fail(
                exercise,
                f"{what} is {_short(got_array)}, expected {_short(expected_array)}: {hint}",
            )
    fail(exercise, f"{what} is {_short(got_array)}, expected {_short(expected_array)}.")


def _short(array: np.ndarray) -> str:
    """Numbers with 4 significant digits, a long array cut short."""
    array = np.asarray(array)
    if array.ndim == 0:
        return format(array.item(), ".4g")
    text = np.array2string(
        array, threshold=8, edgeitems=2, formatter={"float_kind": lambda v: format(v, ".4g")}
    )
    return text.replace("\n", " ")


def function_class(
    exercise: str, value: Any, name: str, backward_signature: str = "ctx, grad_output"
) -> type[Function]:
    """`value` as a Function subclass with a backward, or a CheckError saying what it is."""
    if isinstance(value, type) and issubclass(value, Function):
        if value.backward is Function.backward:
            fail(exercise, f"{name} has no backward: define `def backward({backward_signature})`.")
        return value
    owner = getattr(value, "__self__", None)
    if isinstance(owner, type) and issubclass(owner, Function):
        fail(exercise, f"pass the class itself, `{name}`, not `{name}.apply`.")
    if isinstance(value, type):
        fail(
            exercise,
            f"{name} should subclass minigrad.Function: `class {name}(minigrad.Function):`.",
        )
    fail(
        exercise,
        f"{name} should be a class that subclasses minigrad.Function; got {with_article(value)}.",
    )


def gradcheck_or_hint(
    exercise: str,
    function: Callable[..., Any],
    inputs: tuple,
    call: str,
    hints: Sequence[HintRule] = (),
) -> None:
    """minigrad.gradcheck on float64 inputs; a disagreement or an error becomes the hint."""
    try:
        gradcheck(function, inputs)
    except GradcheckError as error:
        fail(exercise, f"minigrad.gradcheck({call}) disagrees with your backward:\n{error}")
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        explain_error(exercise, f"minigrad.gradcheck({call})", error, hints)
