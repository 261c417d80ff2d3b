"""nbgrader's solution clearing, replaced by the course's own: each exercise keeps its
named `raise NotImplementedError("Exercise N.k: ...")` stub (nbgrader's ClearSolutions writes
one fixed stub for every cell), so `nbgrader generate_assignment` writes the student version
`make exercises` writes."""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import ClearSolutions

from minigrad.course.exercise_cells import classify
from minigrad.course.make_exercises import student_cell


class NamedStubs(ClearSolutions):
    """ClearSolutions that turns each cell into make_exercises' student form."""

    def preprocess_cell(
        self, cell: NotebookNode, resources: dict, cell_index: int
    ) -> tuple[NotebookNode, dict]:
        where = f"{resources.get('unique_key', 'notebook')}, cell {cell_index}"
        role = classify(cell, where)
        if role is not None and not cell.metadata.get("nbgrader"):
            # The same refusal as ClearSolutions: a solution outside a solution cell would
            # reach students, or never be graded.
            raise RuntimeError(
                f"{where}: this cell is an exercise cell but has no nbgrader metadata; run "
                f"`make exercises` (it writes the metadata) and copy the lesson again."
            )
        student_cell(cell, role, where, keep_hidden_tests=True)
        return cell, resources
