"""Where eager time goes: cProfile of the scalar chain (a) and the MLP step (b), by file.

    .venv/bin/python benchmarks/profile_eager.py

Each row is the self time (cProfile's tottime) spent in one file, as a share of the whole
run, and the calls made there: the engine's Python bookkeeping against NumPy's work.
cProfile slows Python calls more than C work, so the shares lean towards Python; read
them as proportions, and the benchmarks (make bench) for times.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chain  # noqa: E402
import mlp  # noqa: E402

ROOT = str(Path(__file__).resolve().parents[1])


def _where(filename: str) -> str:
    if filename.startswith(ROOT):
        return filename[len(ROOT) + 1 :]
    if "numpy" in filename:
        return "numpy (Python parts)"
    if filename.startswith("~") or filename == "<built-in>":
        return "builtins and C functions (NumPy's ufuncs included)"
    return "other: " + Path(filename).name


def profile(run, title: str, rows: int = 12) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    functions = []
    total = 0.0
    for (filename, line, name), (_, calls, tottime, _, _) in stats.stats.items():
        where = _where(filename)
        by_file[where][0] += tottime
        by_file[where][1] += calls
        functions.append((tottime, calls, f"{where}:{line} {name}"))
        total += tottime
    print(f"\n### {title}\n")
    print("| file | self time | calls |")
    print("|---|---:|---:|")
    for where, (seconds, calls) in sorted(by_file.items(), key=lambda item: -item[1][0])[:rows]:
        print(f"| {where} | {seconds / total:.0%} | {calls:,} |")
    print("\n| function | self time | calls |")
    print("|---|---:|---:|")
    for seconds, calls, name in sorted(functions, reverse=True)[:rows]:
        print(f"| {name} | {seconds / total:.0%} | {calls:,} |")


def main() -> None:
    profile(lambda: chain.minigrad_chain(20_000), "(a) scalar chain, 20,000 steps")
    step = mlp.minigrad_step_fn(mlp.make_problem())
    profile(lambda: [step() for _ in range(200)], "(b) MLP step, 200 steps")


if __name__ == "__main__":
    main()
