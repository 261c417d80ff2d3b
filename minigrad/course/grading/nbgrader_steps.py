"""Three of nbgrader's steps, changed for a real class (config.py puts them in place; the
execution step is sandboxed_execute.py).

- QuietOverwriteCells: nbgrader saved each check cell's checksum with its hidden tests, and
  the student's copy has none, so every untouched check cell was reported as "changed".
  Only a check cell the student really edited is reported now (and, as before, restored).
  A deleted check cell is put back even when the cell before it in the release is gone too
  (nbgrader fails the whole submission with a KeyError there).
- LimitOutputLength: nbgrader limits output by lines; one 30 MB line passed. Each output is
  cut to MAX_CHARACTERS too.
- ShortCheckTracebacks (feedback): an error in a check cell is shown as its one-line
  message. A traceback quotes the lines around the failing one, which in a check cell are
  its hidden tests; a check's own CheckError already shows as its message alone. A check
  cell that failed loses any "Exercise N.k: correct." it printed before failing. Any cell
  stopped at the per-cell timeout says so in words, where nbgrader leaves the interrupt's
  bare `KeyboardInterrupt:` and `CellTimeoutError: No reply from kernel before timeout`.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import Execute, LimitOutput, NbGraderPreprocessor, OverwriteCells
from nbgrader.utils import is_grade, is_solution

from minigrad.course.make_exercises import strip_hidden_tests

MAX_CHARACTERS = 100_000  # per output: a long printout, not a runaway one
TIMEOUT_MESSAGE = (
    "this cell ran longer than the per-cell limit of {seconds} s (c.Execute.timeout) and was "
    "stopped; the cells after it still ran."
)


class QuietOverwriteCells(OverwriteCells):
    """OverwriteCells that reports a check cell's checksum only when the student changed it."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple:
        self._untouched = False
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(
                    grade_id, self.notebook_id, self.assignment_id
                ).source
            except MissingEntry:
                source = None
            if source is not None and source.count("### BEGIN HIDDEN TESTS") == 1:
                self._untouched = cell.source == strip_hidden_tests(source, grade_id)
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name: str, attr: str, old: object, new: object) -> None:
        if attr == "checksum" and self._untouched:
            return  # the released cell, as released: only its hidden tests differ
        super().report_change(name, attr, old, new)

    def add_missing_grade_cells(self, nb: NotebookNode, resources: dict) -> tuple:
        """nbgrader's rule, each missing graded cell right after the release's cell before
        it; when that one is gone too (renamed, deleted), right before the next release
        cell the submission has (the student's code for it is above that), else at the end."""
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in source_nb.source_cells]
        sources = dict(zip(order, source_nb.source_cells))
        solutions = {cell.name for cell in source_nb.solution_cells}
        for grade_cell in source_nb.grade_cells:
            # Indexed, not attributes: nbgrader's added cells have plain dicts as metadata.
            present = {
                cell["metadata"]["nbgrader"]["grade_id"]: index
                for index, cell in enumerate(nb.cells) if is_grade(cell) or is_solution(cell)
            }
            if grade_cell.name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook",
                             grade_cell.name)
            at = order.index(grade_cell.name)
            before = order[at - 1] if at > 0 else None
            later = [present[name] for name in order[at + 1:] if name in present]
            if before in present:
                index = present[before] + 1
            elif at == 0:
                index = 0
            else:
                index = min(later) if later else len(nb.cells)
            nb.cells.insert(index, self.missing_cell_transform(
                sources[grade_cell.name], grade_cell.max_score,
                is_solution=grade_cell.name in solutions,
            ))
        return nb, resources


class LimitOutputLength(LimitOutput):
    """LimitOutput that also cuts each text output to MAX_CHARACTERS."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple:
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        for output in cell.get("outputs", []):
            text = output.get("text")
            if isinstance(text, str) and len(text) > MAX_CHARACTERS:
                cut = len(text) - MAX_CHARACTERS
                note = f"\n... Output truncated ({cut:,} more characters) ..."
                output.text = text[:MAX_CHARACTERS] + note
        return cell, resources


class ShortCheckTracebacks(NbGraderPreprocessor):
    """In feedback, each error of a check cell as `Name: message`, a timeout in words (see
    the module's docstring)."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple:
        roles = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code":
            _explain_timeout(cell, self._cell_timeout())
        if cell.cell_type == "code" and roles.get("grade") and not roles.get("solution"):
            errors = [output for output in cell.outputs if output.output_type == "error"]
            for output in errors:
                output.traceback = [f"{output.ename}: {output.evalue}"]
            if errors:
                # A cell that failed scored 0, whatever "correct." it printed first (a
                # patched check, or the visible check before a hidden test failed).
                for output in cell.outputs:
                    if output.output_type == "stream":
                        output.text = _without_correct(output.text)
                cell.outputs = [o for o in cell.outputs if o.get("text", True) != ""]
        return cell, resources

    def _cell_timeout(self) -> int | None:
        """The per-cell limit autograde ran with: c.Execute.timeout in the course's config
        (feedback is generated with the same nbgrader_config.py), else nbgrader's default."""
        configured = self.config.Execute.get("timeout") if "Execute" in self.config else None
        if isinstance(configured, int):
            return configured
        return Execute.class_traits()["timeout"].default_value


def _explain_timeout(cell: NotebookNode, seconds: int | None) -> None:
    """A timed-out cell's two errors (the interrupt's KeyboardInterrupt, nbgrader's
    CellTimeoutError) replaced by one that says what happened."""
    stopped = ("CellTimeoutError", "KeyboardInterrupt")
    errors = [output for output in cell.outputs if output.output_type == "error"]
    if not any(output.ename == "CellTimeoutError" for output in errors):
        return
    message = TIMEOUT_MESSAGE.format(seconds=seconds)
    cell.outputs = [output for output in cell.outputs
                    if output.output_type != "error" or output.ename not in stopped]
    cell.outputs.append(NotebookNode(output_type="error", ename="CellTimeoutError",
                                     evalue=message, traceback=[f"CellTimeoutError: {message}"]))


def _without_correct(text: str) -> str:
    kept = [line for line in text.splitlines(keepends=True) if not _says_correct(line)]
    return "".join(kept)


def _says_correct(line: str) -> bool:
    # "Exercise 3.2: correct." or "Exercise 16.1: correct on these cases. Grading also ..."
    words = line.strip()
    return words.startswith("Exercise ") and (
        words.endswith(": correct.") or ": correct on these cases." in words
    )
