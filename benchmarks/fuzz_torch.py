"""The fuzz that compares minigrad with PyTorch call by call (tests/fuzz_torch.py), with a
new seed each run: random calls of the functions and Variable methods both libraries have,
each classified (both return and agree, both raise the same class, a class divergence, a
silent divergence, missing behaviour, a leak). Prints the counts per category and the first
examples of each distinct finding; a finding is replayed with the seed it prints.

    python benchmarks/fuzz_torch.py                      # 10,000 calls, a time-based seed
    python benchmarks/fuzz_torch.py --seed 12345         # replay a run
    python benchmarks/fuzz_torch.py --calls 50000 --examples 3

Needs PyTorch. Exits 1 when there is a finding (a leak or a divergence).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests"))

import fuzz_torch  # noqa: E402 (tests/ is put on the path first)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000, help="how many calls (10,000)")
    parser.add_argument("--seed", type=int, default=None, help="replay a run (default: time)")
    parser.add_argument("--examples", type=int, default=1, help="examples per finding (1)")
    options = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: this fuzz compares minigrad with it.", file=sys.stderr)
        return 2
    seed = options.seed if options.seed is not None else time.time_ns() % 2**31
    print(f"seed {seed} (replay: python benchmarks/fuzz_torch.py --seed {seed} "
          f"--calls {options.calls}); torch {torch.__version__}")
    start = time.perf_counter()
    results = fuzz_torch.fuzz(torch, seed, options.calls)
    took = time.perf_counter() - start
    print(f"{len(results)} calls over {len(fuzz_torch.targets(torch))} APIs in {took:.1f} s")
    print()
    print(fuzz_torch.report(results, options.examples))
    found = sum(fuzz_torch.counts(results)[category] for category in fuzz_torch.FINDINGS)
    print()
    print(f"findings: {found} calls (leaks and divergences); seed {seed}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
