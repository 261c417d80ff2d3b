"""`nbgrader export`, one row per student and one column per exercise: the class's grade table.

nbgrader's own CSV has one row per student and assignment with the assignment's total; an
instructor of this course also wants to see which exercise a class got wrong. Columns:
student_id, then "2.1", "2.2", ... for every graded cell of every assignment (points scored;
"?" while a written answer waits for a grader; "!" where autograding failed, which its log
says why; "" when the student submitted nothing for that assignment), then total and
max_score, both over the assignments that student submitted (with --assignment, over those):
a student who handed in one lesson of two is not shown out of both.
"""

from __future__ import annotations

import csv

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin


class ExerciseGradesCsv(ExportPlugin):
    """Writes the table to `--to` (default grades.csv)."""

    def export(self, gradebook: Gradebook) -> None:
        destination = self.to or "grades.csv"
        assignments = sorted(gradebook.assignments, key=lambda assignment: assignment.name)
        if self.assignment:
            assignments = [a for a in assignments if a.name in self.assignment]
        columns = []  # (assignment name, notebook name, grade cell name)
        for assignment in assignments:
            for notebook in sorted(assignment.notebooks, key=lambda n: n.name):
                for cell in notebook.grade_cells:
                    columns.append((assignment.name, notebook.name, cell.name, cell.max_score))
        columns.sort(key=_column_order)
        students = sorted(student.id for student in gradebook.students)
        if self.student:
            students = [s for s in students if s in self.student]
        submitted = {
            (assignment.name, submission.student.id)
            for assignment in assignments for submission in assignment.submissions
        }
        self.log.info("Exporting %d students x %d exercises to %s", len(students), len(columns),
                      destination)
        with open(destination, "w", newline="") as file:
            writer = csv.writer(file)
            labels = [_label(column[2]) for column in columns]
            writer.writerow(["student_id", *labels, "total", "max_score"])
            for student in students:
                scores = [_score(gradebook, student, *column[:3]) for column in columns]
                total = sum(score for score in scores if isinstance(score, float))
                max_score = sum(column[3] for column in columns
                                if (column[0], student) in submitted)
                writer.writerow([student] + [_text(score) for score in scores]
                                + [_text(total), _text(max_score)])


def _column_order(column: tuple) -> tuple:
    """Exercises in their numeric order: 2.10 after 2.9."""
    lesson, exercise = _label(column[2]).split(".") if "." in _label(column[2]) else (0, 0)
    return (int(lesson), int(exercise), column[2])


def _label(grade_id: str) -> str:
    """'2.1' for the grade id 'check_2_1' or 'answer_2_1'; other ids as they are."""
    parts = grade_id.split("_")
    if len(parts) == 3 and parts[0] in ("check", "answer") and parts[1].isdigit():
        return f"{parts[1]}.{parts[2]}"
    return grade_id


def _score(gradebook: Gradebook, student: str, assignment: str, notebook: str, cell: str):
    """Points as a float, "?" when a grader still has to score it, None when not submitted."""
    try:
        grade = gradebook.find_grade(cell, notebook, assignment, student)
    except MissingEntry:
        return None
    if grade.needs_manual_grade and grade.manual_score is None:
        # A check cell is never graded by hand: still waiting means autograding failed.
        return "!" if cell.startswith("check_") else "?"
    return float(grade.score)


def _text(score) -> str:
    if score is None:
        return ""
    if isinstance(score, float):
        return f"{score:g}"
    return score

