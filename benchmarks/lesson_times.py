"""How long each lesson takes top to bottom in a fresh kernel, and its slowest cells.

    python benchmarks/lesson_times.py [lessons/NN_name.ipynb ...]

The course promises every lesson runs in at most 30 s on 2 cores, and that a cell taking
more than 5 s prints progress (a cell marked NBVAL_IGNORE_OUTPUT, so nbval does not compare
it). This runs each lesson with nbclient, as nbval does, and prints a table: total seconds,
the slowest cell, and any cell over 5 s that prints nothing while it runs. Times depend on
the machine and its load; run it on a quiet machine.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 30.0
SLOW_CELL_S = 5.0


def _seconds(cell: nbformat.NotebookNode) -> float:
    """A cell's run time from the timestamps nbclient records in its metadata."""
    times = cell.metadata.get("execution", {})
    start, end = times.get("iopub.execute_input"), times.get("shell.execute_reply")
    if not start or not end:
        return 0.0
    parse = datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def time_lesson(path: Path) -> tuple[float, list[tuple[float, int, str, bool]]]:
    """Total wall seconds, and (seconds, index, first line, prints progress) per code cell."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    total = time.perf_counter() - start
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        ignored = cell.source.startswith("# NBVAL_IGNORE_OUTPUT")
        prints = any(output.output_type == "stream" for output in cell.outputs)
        first = cell.source.split("\n", 1)[0][:50]
        cells.append((_seconds(cell), index, first, ignored and prints))
    return total, cells


def main(argv: list[str]) -> int:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    paths = [Path(arg) for arg in argv] or sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
    print(f"{'lesson':<32} {'total s':>8}  slowest cell")
    over = 0
    for path in paths:
        total, cells = time_lesson(path)
        slowest = max(cells)
        verdict = "" if total <= BUDGET_S else f"  over the {BUDGET_S:.0f} s budget"
        over += total > BUDGET_S
        print(f"{path.name:<32} {total:8.1f}  {slowest[0]:5.1f} s, cell {slowest[1]}{verdict}")
        for seconds, index, first, progress in cells:
            if seconds > SLOW_CELL_S and not progress:
                print(f"    cell {index} takes {seconds:.1f} s and prints no progress: {first!r}")
                over += 1
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
