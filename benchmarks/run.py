"""Run minigrad's benchmarks and print a Markdown table with the ratios to each baseline.

    make bench            # or: .venv/bin/python benchmarks/run.py [--quick]

Baselines are measured in the same run, on the same machine: timings on a shared, noisy
machine only mean something as ratios.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chain  # noqa: E402
import floor  # noqa: E402
import mlp  # noqa: E402

IMPORT_PROBE = (
    "import sys, time; t = time.perf_counter(); import minigrad; "
    "print(time.perf_counter() - t, 'numba' in sys.modules)"
)


def import_time(repeats: int = 5) -> tuple[float, bool]:
    """Best wall time of `import minigrad` in a fresh interpreter, and whether numba came too."""
    best, numba_loaded = float("inf"), False
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True
        )
        seconds, loaded = out.stdout.split()
        best = min(best, float(seconds))
        numba_loaded = numba_loaded or loaded == "True"
    return best, numba_loaded


def ratio(value: float, baseline: float | None) -> str:
    return "n/a" if baseline is None else f"{value / baseline:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer nodes and steps (a smoke run)")
    args = parser.parse_args()
    nodes = 10_000 if args.quick else chain.NODES
    steps = 200 if args.quick else 2000
    rounds = 1 if args.quick else 3

    # Best of a few rounds for each, alternating, so both see the same machine load.
    chain_minigrad, chain_torch, chain_floor = [], [], []
    for _ in range(rounds):
        chain_minigrad.append(chain.minigrad_chain(nodes))
        chain_torch.append(chain.torch_chain(nodes))
        chain_floor.append(floor.bare_chain(nodes))
    mg_chain = min(chain_minigrad)
    bare = min(chain_floor)
    torch_chain = None if chain_torch[0] is None else min(chain_torch)

    problem = mlp.make_problem()
    mg_step = mlp.minigrad_step_fn(problem)
    np_step = mlp.numpy_step_fn(problem)
    torch_step = mlp.torch_step_fn(problem)
    bare_step = floor.bare_mlp_step_fn(problem, mlp.LEARNING_RATE, mlp.BATCH)
    mlp_minigrad, mlp_numpy, mlp_torch, mlp_bare = [], [], [], []
    for _ in range(rounds):
        mlp_minigrad.append(mlp.time_step(mg_step, steps))
        mlp_numpy.append(mlp.time_step(np_step, steps))
        mlp_bare.append(mlp.time_step(bare_step, steps))
        if torch_step is not None:
            mlp_torch.append(mlp.time_step(torch_step, steps))
    mg_mlp, np_mlp, bare_mlp = min(mlp_minigrad), min(mlp_numpy), min(mlp_bare)
    torch_mlp = min(mlp_torch) if mlp_torch else None

    seconds, numba_loaded = import_time()
    torch_version = "not installed"
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        pass

    print(
        f"minigrad {__import__('minigrad').__version__}, Python {platform.python_version()}, "
        f"NumPy {__import__('numpy').__version__}, PyTorch {torch_version}, "
        f"{platform.machine()}, {time.strftime('%Y-%m-%d')}"
    )
    print()
    print(
        "| benchmark | minigrad | NumPy by hand | PyTorch | minigrad / NumPy | minigrad / PyTorch |"
    )
    print("|---|---|---|---|---|---|")
    torch_cell = "n/a" if torch_chain is None else f"{torch_chain:.1f} µs"
    print(
        f"| (a) chain tanh(x*w+b), {nodes:,} nodes, per node | {mg_chain:.1f} µs | n/a | "
        f"{torch_cell} | n/a | {ratio(mg_chain, torch_chain)} |"
    )
    torch_cell = "n/a" if torch_chain is None else f"{torch_chain:.1f} µs"
    print(
        f"| (a') the same chain on a bare Python graph (the floor) | {bare:.1f} µs | n/a | "
        f"{torch_cell} | n/a | {ratio(bare, torch_chain)} |"
    )
    torch_cell = "n/a" if torch_mlp is None else f"{torch_mlp:.0f} µs"
    print(
        f"| (b) MLP step 32x64->128->10 (fwd+bwd+SGD) | {mg_mlp:.0f} µs | {np_mlp:.0f} µs | "
        f"{torch_cell} | {ratio(mg_mlp, np_mlp)} | {ratio(mg_mlp, torch_mlp)} |"
    )
    print(
        f"| (b') the same step on a bare tape of closures (the floor) | {bare_mlp:.0f} µs | "
        f"{np_mlp:.0f} µs | {torch_cell} | {ratio(bare_mlp, np_mlp)} | "
        f"{ratio(bare_mlp, torch_mlp)} |"
    )
    print(f"| `import minigrad` | {seconds * 1000:.0f} ms | | | | |")
    print()
    print(f"numba imported by `import minigrad`: {numba_loaded}")
    print(
        "Budgets (issue 13): (a) <= 1.8x PyTorch per node, gc on; (b) <= 3.5x NumPy; "
        "import <= 300 ms without numba."
    )


if __name__ == "__main__":
    main()
