"""The nbgrader configuration of a course folder made from the lessons.

A course folder's nbgrader_config.py is three lines:

    from minigrad.course.grading.config import configure
    c = get_config()
    configure(c, course_id="minigrad")
"""

from __future__ import annotations

from traitlets.config import Config

from minigrad.course.exercise_cells import TEXT_STUB

# Per cell, while grading: the slowest lesson cell takes about 8 s on a shared 2-core
# machine, so a minute leaves room and still ends a submission that never stops.
CELL_TIMEOUT_S = 60
# nbgrader's own CourseDirectory.ignore, and the files a browser would open as a page.
IGNORED_BY_NBGRADER = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]
PAGES = ["*.html", "*.htm", "*.xhtml", "*.svg", "*.xml", "*.js"]


def configure(
    c: Config,
    course_id: str = "minigrad",
    exchange: str | None = None,
    cell_timeout_s: int = CELL_TIMEOUT_S,
) -> Config:
    """Set `c` up for this course: named stubs, restored deleted check cells, a per-cell
    timeout, collecting that repairs renamed and unreadable notebooks, the per-exercise CSV
    export; `exchange` is the local exchange folder (nbgrader's
    default is /usr/local/share/nbgrader/exchange)."""
    from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
    from nbgrader.preprocessors import (
        ClearHiddenTests,
        ClearSolutions,
        Execute,
        LimitOutput,
        OverwriteCells,
        SaveAutoGrades,
    )

    from minigrad.course.grading.named_stubs import NamedStubs
    from minigrad.course.grading.nbgrader_steps import (
        LimitOutputLength,
        QuietOverwriteCells,
        ShortCheckTracebacks,
    )
    from minigrad.course.grading.not_graded_yet import NotGradedYet
    from minigrad.course.grading.repair_cells import RepairCells
    from minigrad.course.grading.rules import EnforceRules
    from minigrad.course.grading.safe_outputs import protect
    from minigrad.course.grading.sandboxed_execute import SandboxedExecute

    c.CourseDirectory.course_id = course_id
    default = GenerateAssignment.class_traits()["preprocessors"].make_dynamic_default()
    c.GenerateAssignment.preprocessors = _replaced(default, {ClearSolutions: NamedStubs})
    autograde = Autograde.class_traits()
    # A tampered notebook (a pasted check cell, forged grade ids or points, bad metadata) is
    # repaired first, against the release, before any of nbgrader's steps validates it.
    c.Autograde.sanitize_preprocessors = [RepairCells, *_replaced(
        autograde["sanitize_preprocessors"].make_dynamic_default(),
        {OverwriteCells: QuietOverwriteCells},
    )]
    # Each submission's kernel runs in a sandbox (sandboxed_execute.py); each exercise is
    # graded on the learner's own code: a broken rule fails its check before SaveAutoGrades
    # scores it (rules.py).
    steps = _replaced(
        autograde["autograde_preprocessors"].make_dynamic_default(),
        {Execute: SandboxedExecute, LimitOutput: LimitOutputLength},
    )
    at = steps.index(SaveAutoGrades)
    c.Autograde.autograde_preprocessors = [*steps[:at], EnforceRules, *steps[at:]]
    # Feedback shows each hidden test's message (its CheckError), not its code.
    feedback = GenerateFeedback.class_traits()["preprocessors"].make_dynamic_default()
    c.GenerateFeedback.preprocessors = [ClearHiddenTests, ShortCheckTracebacks, NotGradedYet,
                                        *feedback]
    c.ClearSolutions.text_stub = TEXT_STUB
    # A student who deletes a check cell still gets it graded: nbgrader puts it back.
    c.OverwriteCells.add_missing_cells = True
    # A cell that runs longer is interrupted and marked as an error; the rest still runs.
    c.Execute.timeout = cell_timeout_s
    c.Execute.interrupt_on_timeout = True
    # A renamed or unreadable notebook is repaired when collected (grading/collect.py).
    c.ExchangeFactory.collect = "minigrad.course.grading.collect.RepairingCollect"
    c.ExportApp.plugin_class = "minigrad.course.grading.csv_export.ExerciseGradesCsv"
    if exchange is not None:
        c.Exchange.root = exchange
    # Student HTML and scripts are neutralised in the autograded notebook (which formgrader
    # renders) and in the feedback, which also carries a script-blocking policy
    # (safe_outputs.py). formgrader serves a submission's own files as they are: web pages
    # and SVG among them are not copied into the autograded folder.
    protect(c)
    c.CourseDirectory.ignore = [*IGNORED_BY_NBGRADER, *PAGES]
    return c


def _replaced(steps: list, replacements: dict) -> list:
    """`steps` with each class in `replacements` swapped for its replacement."""
    return [replacements.get(step, step) for step in steps]
