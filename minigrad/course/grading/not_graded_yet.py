"""Feedback that says a written answer waits for a grader, instead of scoring it 0.

nbgrader's feedback template prints every graded cell as "Score: X / N", and before a
grader has read a written answer (a markdown cell graded by hand, Exercise 3.5) X is 0: the
student reads "0 / 2" for an answer nobody has graded yet. NotGradedYet, a feedback
preprocessor, shows such a cell without a score and opens it with "? / 2 — not graded yet".
Feedback generated again after hand-grading shows the grader's score as usual.

It changes the cell's metadata rather than nbgrader's template because formgrader's
"Generate feedback" button always renders nbgrader's own template.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

NOTE = "**Score: ? / {points:g} — not graded yet.** A grader reads this answer and scores it."


class NotGradedYet(NbGraderPreprocessor):
    """Each graded cell still waiting for a hand grade: no "0 / N", a note saying so (put
    anywhere in GenerateFeedback.preprocessors; it reads the gradebook itself)."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        where = resources["nbgrader"]
        with Gradebook(where["db_url"]) as gradebook:
            for cell in nb.cells:
                roles = cell.metadata.get("nbgrader", {})
                if not roles.get("grade"):
                    continue
                try:
                    grade = gradebook.find_grade(roles["grade_id"], where["notebook"],
                                                 where["assignment"], where["student"])
                except MissingEntry:
                    continue
                if grade.needs_manual_grade and grade.manual_score is None:
                    _mark(cell, grade.max_score)
        return nb, resources


def _mark(cell: NotebookNode, points: float) -> None:
    """No longer a graded cell for the template (so no score is printed), and a first line
    saying why; the cell stays the student's answer (its "solution" role is kept)."""
    cell.metadata.nbgrader["grade"] = False
    note = NOTE.format(points=points)
    if cell.cell_type == "code":
        note = "# " + note.replace("**", "")
    cell.source = f"{note}\n\n{cell.source}"
