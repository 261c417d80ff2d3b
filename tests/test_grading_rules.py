"""The rules an answer keeps (minigrad/course/grading/rules.py): each one caught in the forms
a learner would write it, never in the lessons' own solutions, and put on the check cell by
the nbgrader step EnforceRules so that the check scores 0 and the feedback names the rule.
Also the grade's dynamic side of rule "no recursion": lesson 11's hidden tests run the
learner's walk at Python's default recursion limit."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import nbformat
import numpy as np
import pytest
from test_lessons_run_on import with_wrong_answers

from minigrad.course.exercise_cells import exercise_cells
from minigrad.course.grading.rules import RULES, EnforceRules, broken_rules
from minigrad.course.make_exercises import annotate, strip_solutions, student_version

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))


def _cells(lesson: Path) -> list[tuple[str, str, list[str]]]:
    """(exercise, stored exercise cell, the code cells above it) for each exercise."""
    notebook = nbformat.read(lesson, as_version=4)
    found = []
    for index, role in exercise_cells(notebook, lesson.name):
        if role.kind == "exercise":
            above = [c.source for c in notebook.cells[:index] if c.cell_type == "code"]
            found.append((role.exercise, notebook.cells[index].source, above))
    return found


EXERCISES = {
    exercise: (lesson, cell, above)
    for lesson in LESSONS
    for exercise, cell, above in _cells(lesson)
}


def _broken(exercise: str, answer: str, extra_above: tuple[str, ...] = ()) -> list[str]:
    """broken_rules for the stored exercise cell with its solution replaced by `answer`
    (one string per solution region), as it would be graded."""
    lesson, cell, above = EXERCISES[exercise]
    regions = [answer] if isinstance(answer, str) else list(answer)
    source = with_wrong_answers(cell, regions)
    return broken_rules(
        exercise, source, [*above, *extra_above], strip_solutions(cell, lesson.name)
    )


# --------------------------------------------------------------------------- the lessons' own


@pytest.mark.parametrize("exercise", sorted(EXERCISES, key=lambda e: tuple(map(int, e.split(".")))))
def test_every_stored_solution_and_stub_keeps_every_rule(exercise: str) -> None:
    lesson, cell, above = EXERCISES[exercise]
    stub = strip_solutions(cell, lesson.name)
    assert broken_rules(exercise, cell, above, stub) == []
    assert broken_rules(exercise, stub, above, stub) == []


def test_every_rule_belongs_to_an_exercise() -> None:
    assert set(RULES) <= set(EXERCISES)


@pytest.mark.parametrize("exercise", [e for e in RULES if e.split(".")[0] in ("11", "12")])
def test_lessons_11_and_12_name_their_rules_in_the_task(exercise: str) -> None:
    """The text above an exercise (or its first line) says what its rule rules out."""
    lesson, cell, _ = EXERCISES[exercise]
    notebook = nbformat.read(lesson, as_version=4)
    index = next(i for i, c in enumerate(notebook.cells) if c.source == cell)
    task = " ".join((notebook.cells[index - 1].source + cell.split("\n", 1)[0]).split())
    assert RULES[exercise].short.lower() in task.lower()


# --------------------------------------------------------------------------- minigrad.course

COURSE_ANSWERS_11_4 = [
    "predicted_a_grad, predicted_x_grad, _, _ = lesson11._twice_backward_answers()",
    "from minigrad.course.lesson11 import _twice_backward_answers\n"
    "predicted_a_grad, predicted_x_grad = _twice_backward_answers()[:2]",
    "from minigrad.course import lesson11 as reference\n"
    "predicted_a_grad, predicted_x_grad = reference._twice_backward_answers()[:2]",
    "import minigrad.course.lesson11\n"
    "predicted_a_grad = minigrad.course.lesson11._twice_backward_answers()[0]",
    "from minigrad import course\npredicted_a_grad = course.lesson11._twice_backward_answers()[0]",
    "import importlib\n"
    "answers = importlib.import_module('minigrad.course.lesson11')._twice_backward_answers()",
    "predicted_a_grad = getattr(minigrad, 'course').lesson11._twice_backward_answers()[0]",
    "predicted_a_grad = globals()['lesson11']._twice_backward_answers()[0]",
]


@pytest.mark.parametrize("answer", COURSE_ANSWERS_11_4)
def test_the_courses_own_answer_to_11_4_is_refused(answer: str) -> None:
    messages = _broken("11.4", answer)
    assert messages and any("minigrad.course" in message for message in messages), messages


@pytest.mark.parametrize(
    "answer",
    [
        "lesson11.backward(output)",
        "from minigrad.course.lesson11 import backward as walk\nwalk(output)",
        "import minigrad.course.lesson11 as L\nL.backward(output)",
        "sys.modules['minigrad.course.lesson11'].backward(output)",
        "from minigrad.course.grading import fresh_module\n"
        "fresh_module('lesson11').backward(output)",
    ],
)
def test_the_courses_own_walk_in_11_3_is_refused(answer: str) -> None:
    messages = _broken("11.3", answer)
    assert any(
        "Exercise 11.3 is graded on your own code" in message
        and "(rule: answers may not import minigrad.course)" in message
        for message in messages
    ), messages


def test_the_course_value_that_lesson_11_hands_out_may_be_used() -> None:
    """Lesson 11's cells import the course's Value for the exercises after 11.1."""
    walk = textwrap.dedent(
        """
        seed = Value(np.ones_like(output.data))
        output.grad = seed.data
        stack = [output]
        while stack:
            node = stack.pop()
            for parent, backward_fn in zip(node.parents, node.backward_fns):
                parent.grad = parent.grad + backward_fn(node.grad)
                stack.append(parent)
        """
    )
    assert _broken("11.3", walk) == []


# --------------------------------------------------------------------------- 12.2 and 12.3

JACOBIAN = "(rule: no library Jacobian)"


@pytest.mark.parametrize(
    ("answer", "above"),
    [
        ("return functional.jacobian(f, x, strategy='forward-mode').data", ()),
        ("return minigrad.autograd.functional.jacobian(f, x).data", ()),
        ("return minigrad.autodiff.functional.jacobian(f, x).data", ()),
        ("import minigrad.autograd.functional as F\nreturn F.jacobian(f, x).data", ()),
        ("from minigrad.autograd import functional as fn\nreturn fn.jacobian(f, x).data", ()),
        ("from minigrad.autograd.functional import jacobian\nreturn jacobian(f, x).data", ()),
        ("from minigrad.autograd.functional import jacobian as j\nreturn j(f, x).data", ()),
        ("J = functional.jacobian\nreturn J(f, x).data", ()),
        ("return getattr(functional, 'jacobian')(f, x).data", ()),
        ("return functional.hessian(lambda v: f(v).sum(), x).data", ()),
        ("import torch\nreturn torch.autograd.functional.jacobian(f, x)", ()),
        ("return jac(f, x).data", ("from minigrad.autograd.functional import jacobian as jac",)),
        ("return whole(f, x)", ("def whole(f, x):\n    return functional.jacobian(f, x).data",)),
    ],
)
def test_a_library_jacobian_in_12_2_is_refused(answer: str, above: tuple[str, ...]) -> None:
    messages = _broken("12.2", answer, above)
    assert any(
        message.startswith(
            "Exercise 12.2 asks you to build the Jacobian column by column with JVPs"
        )
        and message.endswith(JACOBIAN + ".")
        for message in messages
    ), messages


def test_12_2_names_the_function_and_where_it_was_defined() -> None:
    (message,) = _broken(
        "12.2", "return whole(f, x)", ("def whole(f, x):\n    return functional.jacobian(f, x)",)
    )
    assert message == (
        "Exercise 12.2 asks you to build the Jacobian column by column with JVPs; your answer "
        "calls minigrad.autograd.functional.jacobian (in whole, defined in a cell above), which "
        f"does it for you {JACOBIAN}."
    )


@pytest.mark.parametrize(
    "answer",
    [
        # JVPs, the exercise's way, spelled in other ways.
        "columns = [functional.jvp(f, x, minigrad.Variable(np.eye(x.numel())[j]))[1].data\n"
        "           for j in range(x.numel())]\nreturn np.stack(columns, axis=1)",
        "from minigrad.autograd.functional import jvp\n"
        "return np.stack([jvp(f, x, minigrad.Variable(e))[1].data for e in np.eye(x.numel())], 1)",
        # A name of the learner's own that happens to be "jacobian".
        "def jacobian(columns):\n    return np.stack(columns, axis=1)\n"
        "return jacobian([functional.jvp(f, x, minigrad.Variable(e))[1].data"
        " for e in np.eye(x.numel())])",
    ],
)
def test_jvps_in_12_2_keep_the_rule(answer: str) -> None:
    assert _broken("12.2", answer) == []


@pytest.mark.parametrize(
    "answer",
    [
        "import minigrad\nw_, v_ = minigrad.Variable(w), minigrad.Variable(v)\n"
        "return functional.hvp(lambda u: (u @ u) ** 2, w_, v_)[1].data",
        "return functional.vhp(lambda u: (u @ u) ** 2, minigrad.Variable(w), "
        "minigrad.Variable(v))[1].data",
        "H = functional.hessian(lambda u: (u @ u) ** 2, minigrad.Variable(w)).data\nreturn H @ v",
        "from minigrad.autograd.functional import hessian\n"
        "return hessian(lambda u: (u @ u) ** 2, minigrad.Variable(w)).data @ v",
        "return (functional.jacobian(gradient_of(lambda u: (u @ u) ** 2), "
        "minigrad.Variable(w)).data @ v)",
    ],
)
def test_a_library_hessian_in_12_3_is_refused(answer: str) -> None:
    messages = _broken("12.3", answer)
    assert messages and all("(rule: NumPy only)" in message for message in messages), messages
    assert any("functional." in message for message in messages), messages


def test_numpy_in_12_3_keeps_the_rule() -> None:
    assert _broken("12.3", "u = w @ w\nreturn 4 * u * v + 8 * np.dot(w, v) * w") == []


# --------------------------------------------------------------------------- 11.3: no recursion

RECURSIVE = textwrap.dedent(
    """
    order, seen = [], set()
    def visit(node):
        if node not in seen:
            seen.add(node)
            for parent in node.parents:
                visit(parent)
            order.append(node)
    visit(output)
    output.grad = np.ones_like(output.data)
    for node in reversed(order):
        for parent, backward_fn in zip(node.parents, node.backward_fns):
            parent.grad = parent.grad + backward_fn(node.grad)
    """
)
ITERATIVE = "(rule: no recursion)"


def test_a_recursive_walk_in_11_3_is_refused() -> None:
    (message,) = _broken("11.3", RECURSIVE)
    assert message == (
        "Exercise 11.3 asks for an iterative walk, a loop and a ready list, at Python's default "
        "recursion limit; your function visit calls itself. Keep the nodes still to visit in a "
        f"list instead {ITERATIVE}."
    )


@pytest.mark.parametrize(
    "limit",
    [
        "import sys\nsys.setrecursionlimit(10**6)",
        "from sys import setrecursionlimit\nsetrecursionlimit(10**6)",
        "from sys import setrecursionlimit as deeper\ndeeper(10**6)",
        "import sys as system\nsystem.setrecursionlimit(10**6)",
        "sys.setrecursionlimit(10**6)",  # lesson 11 imports sys in its first cell
    ],
)
def test_raising_the_recursion_limit_in_11_3_is_refused(limit: str) -> None:
    messages = _broken("11.3", limit + "\n" + RECURSIVE)
    assert any("sys.setrecursionlimit" in m and m.endswith(f"{ITERATIVE}.") for m in messages)
    assert any("your function visit calls itself" in m for m in messages)


@pytest.mark.parametrize(
    "recursion",
    [
        "def walk(node):\n    for parent in node.parents:\n        walk(parent)\nwalk(output)",
        "walk = lambda node: [walk(p) for p in node.parents]\nwalk(output)",
        "class Walker:\n    def walk(self, node):\n        for p in node.parents:\n"
        "            self.walk(p)\nWalker().walk(output)",
    ],
)
def test_every_form_of_a_function_that_calls_itself_is_refused(recursion: str) -> None:
    assert any(ITERATIVE in message for message in _broken("11.3", recursion))


def test_a_recursive_helper_from_a_cell_above_is_refused() -> None:
    above = "def visit(node, order):\n    for p in node.parents:\n        visit(p, order)\n"
    messages = _broken("11.3", "visit(output, [])", (above,))
    assert any("your function visit (in visit, defined in a cell above)" in m for m in messages)


def test_2_2_has_the_rule_too_and_other_exercises_may_recurse() -> None:
    recursive = (
        "order = []\ndef visit(node):\n    for nxt, _ in node.next_functions:\n"
        "        if nxt is not None:\n            visit(nxt)\n    order.append(node)\n"
        "visit(root)\nreturn order[::-1]"
    )
    assert any(ITERATIVE in message for message in _broken("2.2", recursive))
    factorial = "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\nslope = 11.0"
    assert _broken("0.2", factorial) == []


# --------------------------------------------------------------------------- the other rules


@pytest.mark.parametrize(
    ("exercise", "answer", "rule"),
    [
        (
            "0.1",
            "x = minigrad.Variable(2.0, requires_grad=True)\n(x**3 - x).backward()\n"
            "slope_by_hand = x.grad.item()",
            "no minigrad in Exercise 0.1",
        ),
        (
            "2.1",
            "ex_y.backward()\ngrad_x, grad_w = ex_x.grad.item(), ex_w.grad.item()",
            "no minigrad in Exercise 2.1",
        ),
        (
            "2.1",
            "grad_x, grad_w = (g.item() for g in minigrad.grad(ex_y, [ex_x, ex_w]))",
            "no minigrad in Exercise 2.1",
        ),
        (
            "3.1",
            [
                "ctx.save_for_backward(x)\nreturn x**3",
                "(x,) = ctx.saved_tensors\nwith minigrad.enable_grad():\n"
                "    v = x.detach().requires_grad_()\n"
                "    return minigrad.grad(v**3, v, grad_output)[0]",
            ],
            "derive it yourself",
        ),
        (
            "9.2",
            "from minigrad.autograd import functional as F\nreturn F.hvp(f, w, v)[1]",
            "no library Hessian",
        ),
        (
            "11.2",
            [
                "backward_fns = (lambda g: g, lambda g: -g)",
                "backward_fns = (lambda g: minigrad.grad(None, None)[0],) * 2",
                "backward_fns = (lambda g: g * s * (1 - s),)",
            ],
            "derive it yourself",
        ),
        (
            "11.4",
            "x = Value(3.0)\na = mul(x, x)\ny = add(a, a)\nbackward(y)\nbackward(y)\n"
            "predicted_a_grad, predicted_x_grad = float(a.grad), float(x.grad)",
            "predict, do not run",
        ),
        ("11.5", "return lesson11.mlp_reference(x, labels, W1, b1, W2, b2)", None),
        ("11.5", "return {name: grad for name, grad in reference.items()}", "NumPy only"),
        (
            "12.1",
            [
                "ctx.save_for_forward(a, b)\nreturn a.data * np.cos(b.data)",
                "a, b = ctx.saved_for_forward\n"
                "return functional.jvp(lambda p, q: p * q.cos(), (a, b), "
                "(a_tangent, b_tangent))[1]",
            ],
            "derive it yourself",
        ),
        (
            "13.2",
            [
                "ctx.block = block\nctx.save_for_backward(*inputs)\n"
                "return checkpoint(block, *inputs)",
                "return None",
            ],
            "no library checkpoint",
        ),
    ],
)
def test_each_exercise_rule(exercise: str, answer: str | list[str], rule: str | None) -> None:
    messages = _broken(exercise, answer)
    wanted = f"(rule: {rule})" if rule else "(rule: answers may not import minigrad.course)"
    assert any(message.endswith(wanted + ".") for message in messages), messages


def test_the_lessons_own_lines_around_an_answer_are_not_held_against_it() -> None:
    """11.5's cell compares the answer with `reference` (minigrad's) after the function:
    the lesson's line, not the learner's. The same name inside the function is theirs."""
    lesson, cell, above = EXERCISES["11.5"]
    assert "reference[name]" in cell
    assert broken_rules("11.5", cell, above, strip_solutions(cell, lesson.name)) == []
    assert broken_rules("11.5", cell, above, "") != []  # without the released cell: all read
    edited = cell.replace("return grads", "return dict(reference)")
    assert broken_rules("11.5", edited, above, strip_solutions(cell, lesson.name)) != []


# --------------------------------------------------------------------------- the grader itself

TAMPERING = [
    ("import sys\nsys.setrecursionlimit(10**6)", "sys.setrecursionlimit"),
    ("import sys\nsys.settrace(None)", "sys.settrace"),
    ("import sys\nsys.setprofile(None)", "sys.setprofile"),
    ("import threading\nthreading.settrace(None)", "threading.settrace"),
    ("import sys\nframe = sys._getframe(1)", "sys._getframe"),
    ("import inspect\nframe = inspect.currentframe()", "inspect.currentframe"),
    ("import inspect\nframes = inspect.stack()", "inspect.stack"),
    ("import gc\nobjects = gc.get_objects()", "gc.get_objects"),
    ("import gc\nholders = gc.get_referrers(slope_by_hand)", "gc.get_referrers"),
    ("import ctypes", "ctypes"),
    ("from ctypes import pythonapi", "ctypes.pythonapi"),
    ("import os\nos.kill(os.getpid(), 9)", "os.kill"),
    ("import os\nos._exit(0)", "os._exit"),
    ("import signal\nsignal.alarm(1)", "signal"),
    ("import sys\nsys.modules['minigrad.course.check'] = None", "sys.modules"),
    ("import sys\nsys.modules.pop('numpy')", "sys.modules.pop"),
    ("import sys\ndel sys.modules['numpy']", "sys.modules"),
    ("import builtins\nbuiltins.print = lambda *args: None", "builtins.print"),
    ("__builtins__.print = None", "builtins.print"),
    ("import builtins\nsetattr(builtins, 'len', None)", "builtins.len"),
    ("lesson00.check_0_1 = print", "minigrad.course.lesson00.check_0_1"),
    ("import numpy as np\nnp.allclose = lambda *args, **kwargs: True", "numpy.allclose"),
    ("import numpy\nnumpy.testing.assert_allclose = print", "numpy.testing.assert_allclose"),
    ("minigrad.gradcheck = lambda *args, **kwargs: True", "minigrad.gradcheck"),
    ("minigrad.Variable.backward = None", "minigrad.Variable.backward"),
    ("setattr(minigrad, 'gradcheck', print)", "minigrad.gradcheck"),
    ("import numpy as np\nvars(np)['allclose'] = print", "numpy.__dict__"),
    ("import numpy as np\nnp.__dict__['allclose'] = print", "numpy.__dict__"),
    ("error = ValueError()\nframe = error.__traceback__.tb_frame.f_back", "tb_frame"),
]


@pytest.mark.parametrize(("answer", "name"), TAMPERING)
def test_tampering_with_the_grader_is_refused(answer: str, name: str) -> None:
    messages = _broken("0.2", answer + "\nslope = 11.0")
    assert any(
        name in message
        and "(rule: no tampering with the grader)" in message
        or "(rule: answers may not import minigrad.course)" in message
        for message in messages
    ), messages


@pytest.mark.parametrize(
    "answer",
    [
        "import gc\ngc.collect()",
        "import sys\nprint(sys.getrecursionlimit())",
        "import os\nprint(os.path.join('a', 'b'))",
        "x = minigrad.Variable(2.0, requires_grad=True)\nx.data = np.array(2.0)",
        "import numpy as np\nvalues = {}\nvalues['allclose'] = np.allclose",
        "import re\npattern = re.compile('x')",
        "import importlib\nnumpy = importlib.import_module('numpy')",
        "import inspect\nprint(inspect.signature(print))",
    ],
)
def test_ordinary_code_is_not_tampering(answer: str) -> None:
    x = "x = minigrad.Variable(2.0, requires_grad=True)\nf = x**3 - x\nf.backward()\n"
    assert _broken("0.2", answer + "\n" + x + "slope = x.grad.item()") == []


@pytest.mark.parametrize(
    ("answer", "name"),
    [
        ("exec('slope = 11.0')", "exec"),
        ("slope = eval('11.0')", "eval"),
        ("m = __import__('numpy')", "__import__"),
        ("import builtins\nbuiltins.exec('slope = 11.0')", "builtins.exec"),
        (
            "import importlib\nname = 'minigrad.' + 'course'\nm = importlib.import_module(name)",
            "importlib.import_module",
        ),
        ("import runpy", "runpy"),
        ("%run cheat.py", "%run"),
        ("%time slope = 11.0", "%time"),
        ("!ls", "get_ipython().system"),
        ("get_ipython().run_cell('slope = 11.0')", "get_ipython"),
    ],
)
def test_code_given_as_text_is_refused(answer: str, name: str) -> None:
    messages = _broken("0.2", answer + "\nslope = 11.0")
    assert any(name in m and "(rule: code the grader can read)" in m for m in messages), messages


def test_a_cell_that_does_not_parse_breaks_no_rule() -> None:
    assert broken_rules("12.2", "def jacobian_by_columns(f, x):\n    return (", [], "") == []


# --------------------------------------------------------------------------- EnforceRules


def _graded_lesson_12(answer: str | None) -> nbformat.NotebookNode:
    """Lesson 12 as nbgrader grades it, executed (its stored outputs), 12.2 answered with
    `answer` and every other exercise (all with None) with its solution."""
    lesson = ROOT / "lessons/12_forward_mode.ipynb"
    graded = annotate(nbformat.read(lesson, as_version=4), lesson.name)
    for cell in graded.cells:
        if answer and cell.metadata.get("nbgrader", {}).get("grade_id") == "exercise_12_2":
            cell.source = with_wrong_answers(cell.source, [answer])
    return graded


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A gradebook holding lesson 12's released cells, as generate_assignment leaves it: the
    resources nbgrader's autograde hands each step."""
    from nbgrader.api import Gradebook

    lesson = ROOT / "lessons/12_forward_mode.ipynb"
    released = student_version(nbformat.read(lesson, as_version=4), lesson.name)
    db_url = f"sqlite:///{tmp_path_factory.mktemp('course') / 'gradebook.db'}"
    with pytest.MonkeyPatch.context() as environment:
        # nbgrader runs alembic, from the virtual environment's bin folder.
        bin_folder = os.path.dirname(sys.executable)
        environment.setenv("PATH", bin_folder + os.pathsep + os.environ["PATH"])
        with Gradebook(db_url) as book:
            book.add_assignment("12_forward_mode")
            book.add_notebook("12_forward_mode", "12_forward_mode")
            for cell in released.cells:
                roles = cell.metadata.get("nbgrader", {})
                if roles.get("grade_id"):
                    book.add_source_cell(
                        roles["grade_id"],
                        "12_forward_mode",
                        "12_forward_mode",
                        cell_type=cell.cell_type,
                        locked=roles.get("locked", False),
                        source=cell.source,
                        checksum="",
                    )
        yield {"nbgrader": {"db_url": db_url, "notebook": "12_forward_mode",
                            "assignment": "12_forward_mode"}}  # fmt: skip


def _cell(notebook: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    return next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )


def _errors(notebook: nbformat.NotebookNode, grade_id: str) -> list:
    return [output for output in _cell(notebook, grade_id).outputs if output.output_type == "error"]


@pytest.mark.parametrize("with_gradebook", [True, False])
def test_enforce_rules_fails_the_check_of_12_2_answered_with_functional_jacobian(
    with_gradebook: bool, request: pytest.FixtureRequest
) -> None:
    from nbgrader.utils import determine_grade

    graded = _graded_lesson_12("return functional.jacobian(f, x).data")
    resources = request.getfixturevalue("gradebook") if with_gradebook else {}
    graded, _ = EnforceRules().preprocess(graded, resources)

    (error,) = _errors(graded, "check_12_2")
    assert error.ename == "RuleBroken"
    assert error.evalue == (
        "Exercise 12.2 asks you to build the Jacobian column by column with JVPs; your answer "
        f"calls minigrad.autograd.functional.jacobian, which does it for you {JACOBIAN}."
    )
    assert error.traceback == [f"RuleBroken: {error.evalue}"]
    check = _cell(graded, "check_12_2")
    assert check.outputs[0] is error  # nbgrader scores a cell by its first error or result
    assert determine_grade(check)[0] == 0
    if with_gradebook:  # without it, 12.1's cell reads the lesson's own lines as the answer's
        assert _errors(graded, "check_12_1") == [] and _errors(graded, "check_12_3") == []


def test_enforce_rules_leaves_the_lessons_own_solutions_alone(gradebook: dict) -> None:
    graded = _graded_lesson_12(None)
    before = nbformat.writes(graded)
    graded, _ = EnforceRules().preprocess(graded, gradebook)
    assert nbformat.writes(graded) == before


def test_the_feedback_shows_the_rule_and_not_the_checks_correct(gradebook: dict) -> None:
    from minigrad.course.grading.nbgrader_steps import ShortCheckTracebacks

    graded = _graded_lesson_12("return functional.jacobian(f, x).data")
    graded, _ = EnforceRules().preprocess(graded, gradebook)
    graded, _ = ShortCheckTracebacks().preprocess(graded, {})
    outputs = _cell(graded, "check_12_2").outputs
    shown = [o.get("text", "") + "".join(o.get("traceback", [])) for o in outputs]
    assert not any("Exercise 12.2: correct." in text for text in shown)
    assert any(text.startswith("RuleBroken: Exercise 12.2 asks you") for text in shown)


# --------------------------------------------------------------------------- 11.3's hidden tests


def _catches() -> dict:
    path = Path(__file__).resolve().parent / "hidden_catches" / "lesson11.py"
    spec = importlib.util.spec_from_file_location("hidden_catches_lesson11", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_check_11_3(answer: str, capsys: pytest.CaptureFixture) -> str:
    """Lesson 11's check cell for 11.3, hidden tests included, on `def backward(output):`
    with `answer` as its body: the CheckError's message, after the visible check passed."""
    from minigrad.course import lesson11

    namespace = {"np": np}
    exec("def backward(output):\n" + textwrap.indent(answer, "    "), namespace)
    notebook = nbformat.read(ROOT / "lessons/11_build_an_engine.ipynb", as_version=4)
    check_cell = next(c for c in notebook.cells if c.source.startswith("# Check Exercise 11.3"))
    with pytest.raises(Exception) as raised:  # the fresh modules' CheckError
        exec(check_cell.source, {"lesson11": lesson11, "backward": namespace["backward"]})
    assert type(raised.value).__name__ == "CheckError"
    assert "Exercise 11.3: correct." in capsys.readouterr().out  # the visible check let it by
    return str(raised.value)


def test_11_3s_hidden_tests_refuse_a_recursion_limit_raised_inside_backward(capsys) -> None:
    limit = sys.getrecursionlimit()
    try:
        message = _run_check_11_3(_catches().CAUGHT["Exercise 11.3"][0], capsys)
        assert sys.getrecursionlimit() == 100_000  # the hidden test put back what it found
        assert sys.setrecursionlimit.__name__ == "setrecursionlimit"
    finally:
        sys.setrecursionlimit(limit)
    assert "your backward called sys.setrecursionlimit(100000)" in message
    assert message.endswith(f"{ITERATIVE}.")


def test_11_3s_hidden_tests_run_at_the_default_limit_whatever_the_cell_set(capsys) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)  # as a cell above the exercise would
    try:
        message = _run_check_11_3(RECURSIVE.strip("\n"), capsys)
        assert sys.getrecursionlimit() == 100_000
    finally:
        sys.setrecursionlimit(limit)
    assert "raised RecursionError" in message and "It calls itself once per node" in message
    assert message.endswith(f"{ITERATIVE}.")


def test_11_3s_other_hidden_catch_is_still_caught(capsys) -> None:
    message = _run_check_11_3(_catches().ALSO_CAUGHT["Exercise 11.3"][0], capsys)
    assert "seed was added" in message
