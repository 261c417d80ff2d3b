"""Four of nbgrader's steps, changed for a real class (config.py puts them in place).

- ResumingExecute: a kernel that dies in a cell (`os._exit`, a crash, running out of
  memory) makes nbgrader drop the whole submission, so every exercise scores nothing. Here
  the cell gets an error output saying so, a new kernel runs the cells before it again
  (their outputs are kept from the first run), and grading goes on after it.
- QuietOverwriteCells: nbgrader saved each check cell's checksum with its hidden tests, and
  the student's copy has none, so every untouched check cell was reported as "changed".
  Only a check cell the student really edited is reported now (and, as before, restored).
- LimitOutputLength: nbgrader limits output by lines; one 30 MB line passed. Each output is
  cut to MAX_CHARACTERS too.
- ShortCheckTracebacks (feedback): an error in a check cell is shown as its one-line
  message. A traceback quotes the lines around the failing one, which in a check cell are
  its hidden tests; a check's own CheckError already shows as its message alone. A check
  cell that failed loses any "Exercise N.k: correct." it printed before failing.
"""

from __future__ import annotations

import copy

from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbformat import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import Execute, LimitOutput, NbGraderPreprocessor, OverwriteCells

from minigrad.course.make_exercises import strip_hidden_tests

MAX_CHARACTERS = 100_000  # per output: a long printout, not a runaway one


class ResumingExecute(Execute):
    """Execute that survives a kernel's death in one cell (see the module's docstring)."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple:
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            cell.outputs.append(_dead_kernel_output())
            self.log.warning("The kernel died in cell %d; restarting it and going on", index)
            self._restart_before(index)
            return cell, self.resources

    def _restart_before(self, index: int) -> None:
        """A new kernel, with the code cells before `index` run again in it (into copies:
        their outputs are those of the first run)."""
        run_sync(self.km.restart_kernel)(now=True)
        self.kc.stop_channels()
        self.start_new_kernel_client()
        originals = list(self.nb.cells[:index])
        for position, earlier in enumerate(originals):
            if earlier.cell_type == "code":
                # nbclient stores the cell it ran at its index: put the first run's back below.
                try:
                    self.execute_cell(copy.deepcopy(earlier), position, store_history=False)
                except DeadKernelError:
                    run_sync(self.km.restart_kernel)(now=True)
                    self.kc.stop_channels()
                    self.start_new_kernel_client()
        self.nb.cells[:index] = originals


def _dead_kernel_output() -> NotebookNode:
    message = (
        "the Python kernel died while running this cell (os._exit, a crash, or running out of "
        "memory), so it has no result. Grading went on in a new kernel after running the "
        "cells above again."
    )
    return NotebookNode(
        output_type="error",
        ename="KernelDied",
        evalue=message,
        traceback=[f"KernelDied: {message}"],
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
    """In feedback, each error of a check cell as `Name: message` (see the module's docstring)."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple:
        roles = cell.metadata.get("nbgrader", {})
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


def _without_correct(text: str) -> str:
    kept = [line for line in text.splitlines(keepends=True) if not _says_correct(line)]
    return "".join(kept)


def _says_correct(line: str) -> bool:
    words = line.strip()
    return words.startswith("Exercise ") and words.endswith(": correct.")
