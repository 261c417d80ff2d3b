"""nbgrader's solution clearing, replaced by the course's own: each exercise keeps its
named `raise NotImplementedError("Exercise N.k: ...")` stub (nbgrader's ClearSolutions writes
one fixed stub for every cell), so `nbgrader generate_assignment` writes the student version
`make exercises` writes.

It also reads each cell's role, points and id from its first line again (exercise_cells.py)
before nbgrader saves them, so an exercise an instructor adds or renumbers in the course's
source copy, or a check cell whose "(N points)" changed, needs no separate step: a numbering
mistake stops generate_assignment with the cell it is in.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import ClearSolutions

from minigrad.course.exercise_cells import classify
from minigrad.course.make_exercises import annotate, student_cell


class NamedStubs(ClearSolutions):
    """ClearSolutions that turns each cell into make_exercises' student form."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        name = f"{resources.get('unique_key', 'notebook')}.ipynb"
        nb.cells = annotate(nb, name).cells  # the metadata from the first lines, checked
        return super().preprocess(nb, resources)

    def preprocess_cell(
        self, cell: NotebookNode, resources: dict, cell_index: int
    ) -> tuple[NotebookNode, dict]:
        where = f"{resources.get('unique_key', 'notebook')}, cell {cell_index}"
        student_cell(cell, classify(cell, where), where, keep_hidden_tests=True)
        return cell, resources
