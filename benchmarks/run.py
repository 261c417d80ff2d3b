"""Run minigrad's benchmarks and print a Markdown table with the ratios to each baseline.

    make bench            # or: .venv/bin/python benchmarks/run.py [--quick]

Baselines are measured in the same run, on the same machine: timings on a shared, noisy
machine only mean something as ratios. Every timing is the median of several repeats,
and within each repeat minigrad, NumPy by hand and PyTorch run in turn (the order
rotating from one repeat to the next), so they all see the same machine load.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chain  # noqa: E402
import compiled  # noqa: E402
import floor  # noqa: E402
import gc_share  # noqa: E402
import mlp  # noqa: E402
import ops  # noqa: E402

Measure = Callable[[], float | None]

IMPORT_PROBE = (
    "import sys, time; t = time.perf_counter(); import minigrad; "
    "print(time.perf_counter() - t, 'numba' in sys.modules)"
)

# Budgets (issue 13).
CHAIN_GC_ON_BUDGET = 1.8  # x PyTorch, gc on
CHAIN_GC_OFF_BUDGET = 1.1  # x PyTorch, gc off
MLP_BUDGET = 3.5  # x NumPy by hand
NO_GRAD_OP_BUDGET = 1.5  # µs over the NumPy call
RECORDED_OP_BUDGET = 3.0  # µs over the NumPy call
IMPORT_BUDGET = 0.300  # seconds, without numba
COMPILED_MLP_BUDGET = 1.3  # x NumPy by hand (issue 14)
COMPILED_LOOP_BUDGET = 0.5  # x PyTorch eager per node (issue 14)
OPTIMIZER_STEP_BUDGET = 1.3  # x the same step by hand in NumPy (issue 21)
FALLBACK_BUDGET = 0.95  # eager / compiled, after the compiler gave up (issue 21)


@dataclass(frozen=True)
class Settings:
    """Sizes and repeat counts of one run."""

    repeats: int  # interleaved repeats behind every median
    nodes: int  # chain length of (a)
    steps: int  # MLP steps per repeat of (b)
    op_calls: int  # calls per repeat of each per-operation timing
    gc_steps: int  # chain steps built to count GC-tracked objects


FULL = Settings(repeats=5, nodes=chain.NODES, steps=1000, op_calls=10_000, gc_steps=10_000)
QUICK = Settings(repeats=2, nodes=10_000, steps=200, op_calls=2_000, gc_steps=2_000)


@dataclass
class Row:
    """One line of the table; empty cells print as nothing."""

    label: str
    minigrad: str
    numpy: str = "n/a"
    torch: str = "n/a"
    vs_numpy: str = "n/a"
    vs_torch: str = "n/a"
    budget: str = ""

    def markdown(self) -> str:
        cells = (self.label, self.minigrad, self.numpy, self.torch)
        cells += (self.vs_numpy, self.vs_torch, self.budget)
        return "| " + " | ".join(cells) + " |"


# Statistics and formatting.


def interleaved(measures: dict[str, Measure | None], repeats: int) -> dict[str, list[float]]:
    """Call each measure once per repeat, in turn; the order rotates from repeat to repeat.

    Measures that are None (PyTorch not installed) or that return None are left out.
    """
    live = {name: measure for name, measure in measures.items() if measure is not None}
    names = list(live)
    results: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            value = live[name]()
            if value is not None:
                results[name].append(value)
    return {name: values for name, values in results.items() if values}


def median(values: Sequence[float] | None) -> float | None:
    return statistics.median(values) if values else None


def median_difference(values: Sequence[float] | None, baselines: Sequence[float]) -> float | None:
    """Median over repeats of value minus baseline, each pair from the same repeat."""
    if not values:
        return None
    return statistics.median(v - b for v, b in zip(values, baselines))


def ratio(value: float | None, baseline: float | None) -> str:
    return "n/a" if value is None or baseline is None else f"{value / baseline:.2f}x"


def us(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f} µs"


def over(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f} µs"


def verdict(value: float | None, limit: float) -> str:
    if value is None:
        return "n/a"
    return "met" if value <= limit else "not met"


def budget(text: str, value: float | None, limit: float) -> str:
    """A budget and whether `value` meets it, e.g. '<= 1.8x PyTorch: met'."""
    return f"{text}: {verdict(value, limit)}"


def budget_at_least(text: str, value: float | None, floor: float) -> str:
    """A floor and whether `value` reaches it, e.g. '>= 0.95x eager speed: met'."""
    if value is None:
        return f"{text}: n/a"
    return f"{text}: {'met' if value >= floor else 'not met'}"


def torch_version() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.__version__


# The benchmarks. Each returns its rows of the table and fills in `results`.


@dataclass
class Results:
    """What the budgets line needs, filled in by the benchmarks below."""

    chain_on: float | None = None  # minigrad / PyTorch, gc on
    chain_off: float | None = None  # minigrad / PyTorch, gc off
    mlp: float | None = None  # minigrad / NumPy
    no_grad_op: float | None = None  # worst µs over NumPy
    recorded_op: float | None = None  # worst µs over NumPy
    import_seconds: float | None = None
    numba_loaded: bool = False
    compiled_mlp: float | None = None  # compiled / NumPy
    compiled_loop: float | None = None  # compiled (tracing included) / PyTorch eager
    optimizer_steps: dict[str, float] = field(default_factory=dict)  # compiled / NumPy
    fallbacks: dict[str, float] = field(default_factory=dict)  # eager / compiled speed


def bench_chain(settings: Settings, results: Results) -> list[Row]:
    """(a), (a-gc-off), (a'), the GC share and the GC-tracked objects per node."""
    nodes = settings.nodes
    for warm_up in (chain.minigrad_chain, chain.torch_chain, floor.bare_chain):
        warm_up(1000)
    with_gc = gc_share.with_gc
    has_torch = torch_version() is not None
    times = interleaved(
        {
            "minigrad on": with_gc(lambda: chain.minigrad_chain(nodes), True),
            "torch on": with_gc(lambda: chain.torch_chain(nodes), True) if has_torch else None,
            "floor": with_gc(lambda: floor.bare_chain(nodes), True),
            "minigrad off": with_gc(lambda: chain.minigrad_chain(nodes), False),
            "minigrad raised": with_gc(
                lambda: chain.minigrad_chain(nodes), True, gc_share.RAISED_THRESHOLD
            ),
            "torch off": with_gc(lambda: chain.torch_chain(nodes), False) if has_torch else None,
        },
        settings.repeats,
    )
    mg_on, mg_off = median(times["minigrad on"]), median(times["minigrad off"])
    torch_on, torch_off = median(times.get("torch on")), median(times.get("torch off"))
    bare = median(times["floor"])
    mg_raised = median(times["minigrad raised"])
    results.chain_on = None if torch_on is None else mg_on / torch_on
    results.chain_off = None if torch_off is None else mg_off / torch_off

    mg_share = gc_share.gc_share(mg_on, mg_off)
    torch_share = gc_share.gc_share(torch_on, torch_off)
    mg_objects = gc_share.minigrad_tracked_per_step(settings.gc_steps)
    torch_objects = gc_share.torch_tracked_per_step(settings.gc_steps)
    per_node = gc_share.RECORDED_PER_STEP

    def objects(count: float | None) -> str:
        return "n/a" if count is None else f"{count:.1f} / step, {count / per_node:.2f} / node"

    def share(fraction: float | None) -> str:
        return "n/a" if fraction is None else f"{fraction:.0%}"

    name = f"chain tanh(x*w+b), {nodes:,} nodes, fwd+bwd, per node"
    return [
        Row(
            f"(a) {name}, gc on",
            us(mg_on),
            torch=us(torch_on),
            vs_torch=ratio(mg_on, torch_on),
            budget=budget(
                f"<= {CHAIN_GC_ON_BUDGET}x PyTorch", results.chain_on, CHAIN_GC_ON_BUDGET
            ),
        ),
        Row(
            f"(a-gc-off) {name}, gc off",
            us(mg_off),
            torch=us(torch_off),
            vs_torch=ratio(mg_off, torch_off),
            budget=budget(
                f"<= {CHAIN_GC_OFF_BUDGET}x PyTorch", results.chain_off, CHAIN_GC_OFF_BUDGET
            ),
        ),
        Row(
            f"(a-gc-raised) {name}, gc on at threshold {gc_share.RAISED_THRESHOLD}",
            us(mg_raised),
            torch=us(torch_on),
            vs_torch=ratio(mg_raised, torch_on),
        ),
        Row(
            "(a') the same chain on a bare Python graph (the floor), gc on",
            us(bare),
            torch=us(torch_on),
            vs_torch=ratio(bare, torch_on),
        ),
        Row(
            "GC share of the chain time: (gc on - gc off) / gc on",
            share(mg_share),
            torch=share(torch_share),
        ),
        Row(
            f"GC-tracked objects alive per chain step / per recorded node "
            f"({per_node} nodes a step; {settings.gc_steps:,} steps)",
            objects(mg_objects),
            torch=objects(torch_objects),
        ),
    ]


def bench_mlp(settings: Settings, results: Results) -> list[Row]:
    """(b) and (b'): one MLP training step."""
    problem = mlp.make_problem()
    measure = mlp.step_measure
    times = interleaved(
        {
            "minigrad": measure(mlp.minigrad_step_fn(problem), settings.steps),
            "numpy": measure(mlp.numpy_step_fn(problem), settings.steps),
            "torch": measure(mlp.torch_step_fn(problem), settings.steps),
            "floor": measure(
                floor.bare_mlp_step_fn(problem, mlp.LEARNING_RATE, mlp.BATCH), settings.steps
            ),
        },
        settings.repeats,
    )
    mg, np_, bare = median(times["minigrad"]), median(times["numpy"]), median(times["floor"])
    torch_ = median(times.get("torch"))
    results.mlp = mg / np_
    return [
        Row(
            "(b) MLP step 32x64->128->10 (fwd+bwd+SGD)",
            us(mg, 0),
            us(np_, 0),
            us(torch_, 0),
            ratio(mg, np_),
            ratio(mg, torch_),
            budget(f"<= {MLP_BUDGET}x NumPy", results.mlp, MLP_BUDGET),
        ),
        Row(
            "(b') the same step on a bare tape of closures (the floor)",
            us(bare, 0),
            us(np_, 0),
            us(torch_, 0),
            ratio(bare, np_),
            ratio(bare, torch_),
        ),
    ]


def bench_compiled(settings: Settings, results: Results) -> list[Row]:
    """(d) the MLP step compiled, (e) the scalar training loop compiled, trace times."""
    problem = mlp.make_problem()
    measure = mlp.step_measure
    times = interleaved(
        {
            "compiled": measure(compiled.compiled_mlp_step_fn(problem), settings.steps),
            "numpy": measure(mlp.numpy_step_fn(problem), settings.steps),
            "torch": measure(mlp.torch_step_fn(problem), settings.steps),
        },
        settings.repeats,
    )
    mg, np_, torch_ = median(times["compiled"]), median(times["numpy"]), median(times.get("torch"))
    results.compiled_mlp = mg / np_
    loop = interleaved(
        {kind: compiled.scalar_loop_measure(kind) for kind in ("compiled", "replay", "torch")},
        settings.repeats,
    )
    with_trace, replay, torch_loop = (median(loop.get(k)) for k in ("compiled", "replay", "torch"))
    results.compiled_loop = None if torch_loop is None else with_trace / torch_loop
    optimizer_times = interleaved(
        {
            "sgd": measure(compiled.optimizer_mlp_step_fn(problem, "sgd"), settings.steps),
            "numpy sgd": measure(mlp.numpy_step_fn(problem), settings.steps),
            "adam": measure(compiled.optimizer_mlp_step_fn(problem, "adam"), settings.steps),
            "numpy adam": measure(compiled.numpy_adam_step_fn(problem), settings.steps),
        },
        settings.repeats,
    )
    optimizer_rows = []
    for name, label in (("sgd", "optim.SGD"), ("adam", "optim.Adam")):
        mine, by_hand = median(optimizer_times[name]), median(optimizer_times[f"numpy {name}"])
        results.optimizer_steps[label] = mine / by_hand
        optimizer_rows.append(
            Row(
                f"(d') the MLP step with `{label}`, `zero_grad()`, `return loss`, compiled",
                us(mine, 0),
                us(by_hand, 0),
                vs_numpy=ratio(mine, by_hand),
                budget=budget(
                    f"<= {OPTIMIZER_STEP_BUDGET}x NumPy", mine / by_hand, OPTIMIZER_STEP_BUDGET
                ),
            )
        )
    fallback_times = interleaved(
        {
            f"{how} {kind}": measure(
                compiled.fallback_step_fn(problem, how, kind == "compiled"), settings.steps
            )
            for how in ("numpy", "int")
            for kind in ("eager", "compiled")
        },
        settings.repeats,
    )
    for how, label in (("numpy", "logs a NumPy grad norm"), ("int", "takes the step number")):
        eager = median(fallback_times[f"{how} eager"])
        fell_back = median(fallback_times[f"{how} compiled"])
        speed = eager / fell_back
        results.fallbacks[label] = speed
        optimizer_rows.append(
            Row(
                f"(f) the (d') SGD step that {label}: compiled, fallen back, vs eager",
                us(fell_back, 0),
                numpy="",
                vs_numpy=f"{speed:.2f}x eager speed",
                budget=budget_at_least(
                    f">= {FALLBACK_BUDGET}x eager speed", speed, FALLBACK_BUDGET
                ),
            )
        )
    mlp_trace = median([compiled.trace_seconds_of_mlp(problem) for _ in range(settings.repeats)])
    loop_trace = median([compiled.scalar_trace_seconds() for _ in range(settings.repeats)])
    loop_label = f"{compiled.LOOP_STEPS}-step scalar loop tanh(w*x+b), per node"
    return [
        Row(
            "(d) the MLP step, `minigrad.compile`d",
            us(mg, 0),
            us(np_, 0),
            us(torch_, 0),
            ratio(mg, np_),
            ratio(mg, torch_),
            budget(f"<= {COMPILED_MLP_BUDGET}x NumPy", results.compiled_mlp, COMPILED_MLP_BUDGET),
        ),
        *optimizer_rows,
        Row(
            f"(e) {loop_label}, compiled, tracing included",
            us(with_trace, 2),
            torch=us(torch_loop, 2),
            vs_torch=ratio(with_trace, torch_loop),
            budget=budget(
                f"<= {COMPILED_LOOP_BUDGET}x PyTorch", results.compiled_loop, COMPILED_LOOP_BUDGET
            ),
        ),
        Row(
            "(e') the same loop, replays only (already traced)",
            us(replay, 2),
            torch=us(torch_loop, 2),
            vs_torch=ratio(replay, torch_loop),
        ),
        Row(
            "tracing time (the first 3 calls): the MLP step / the scalar step",
            f"{mlp_trace * 1e3:.1f} ms / {loop_trace * 1e3:.1f} ms",
            numpy="",
            torch="",
            vs_numpy="",
            vs_torch="",
        ),
    ]


def bench_ops(settings: Settings, results: Results) -> list[Row]:
    """(c): each operation with no grad and recorded, over its NumPy call."""
    rows: list[Row] = []
    worst: dict[bool, float | None] = {False: None, True: None}  # keyed by recorded
    calls = settings.op_calls
    for case in ops.op_cases():
        times = interleaved(
            {
                "numpy": ops.numpy_measure(case, calls),
                "no grad": ops.minigrad_measure(case, calls, recorded=False),
                "recorded": ops.minigrad_measure(case, calls, recorded=True),
                "torch no grad": ops.torch_measure(case, calls, recorded=False),
                "torch recorded": ops.torch_measure(case, calls, recorded=True),
            },
            settings.repeats,
        )
        numpy_times = times["numpy"]
        for recorded, key, limit in (
            (False, "no grad", NO_GRAD_OP_BUDGET),
            (True, "recorded", RECORDED_OP_BUDGET),
        ):
            difference = median_difference(times[key], numpy_times)
            if worst[recorded] is None or difference > worst[recorded]:
                worst[recorded] = difference
            minigrad_us, torch_us = median(times[key]), median(times.get(f"torch {key}"))
            rows.append(
                Row(
                    f"(c) {case.label}, {key}, per call",
                    us(minigrad_us, 2),
                    us(median(numpy_times), 2),
                    us(torch_us, 2),
                    over(difference),
                    ratio(minigrad_us, torch_us),
                    budget(f"<= {limit:g} µs over NumPy", difference, limit),
                )
            )
    results.no_grad_op, results.recorded_op = worst[False], worst[True]
    return rows


def import_time(repeats: int) -> tuple[float, bool]:
    """Median wall time of `import minigrad` in a fresh interpreter, and whether numba came."""
    times, numba_loaded = [], False
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True
        )
        seconds, loaded = out.stdout.split()
        times.append(float(seconds))
        numba_loaded = numba_loaded or loaded == "True"
    return statistics.median(times), numba_loaded


def bench_import(settings: Settings, results: Results) -> list[Row]:
    """`import minigrad`, which must not pull numba in."""
    seconds, results.numba_loaded = import_time(settings.repeats)
    results.import_seconds = seconds
    return [
        Row(
            "`import minigrad`, fresh interpreter",
            f"{seconds * 1000:.0f} ms",
            *([""] * 4),
            f"<= {IMPORT_BUDGET * 1000:.0f} ms without numba: {import_verdict(results)}",
        )
    ]


def import_verdict(results: Results) -> str:
    return "not met" if results.numba_loaded else verdict(results.import_seconds, IMPORT_BUDGET)


# Output.


def header(settings: Settings, quick: bool) -> str:
    import numpy

    import minigrad

    return (
        f"minigrad {minigrad.__version__}, Python {platform.python_version()}, "
        f"NumPy {numpy.__version__}, PyTorch {torch_version() or 'not installed'}, "
        f"{platform.machine()}, {time.strftime('%Y-%m-%d')}"
        f"{', --quick (smaller sizes: a smoke run)' if quick else ''}.\n\n"
        f"Every timing is the median of {settings.repeats} interleaved repeats: within each "
        "repeat minigrad, NumPy by hand and PyTorch run in turn, so they see the same "
        "machine load. (c) rows: minigrad vs NumPy is the median over repeats of minigrad's "
        "time minus the NumPy call's time, in µs; garbage collector on unless the row says "
        "gc off; PyTorch on one thread; NumPy's BLAS on "
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'its default number of')} thread(s) "
        "(make bench sets OPENBLAS_NUM_THREADS=1)."
    )


def budgets_line(results: Results) -> str:
    def item(text: str, value: float | None, limit: float, shown: str) -> str:
        return f"{budget(text, value, limit)} ({shown})"

    worst_no_grad, worst_recorded = results.no_grad_op, results.recorded_op
    import_ms = f"{results.import_seconds * 1e3:.0f} ms"
    if results.numba_loaded:
        import_ms += ", numba imported"
    items = [
        item(
            f"(a) <= {CHAIN_GC_ON_BUDGET}x PyTorch gc on",
            results.chain_on,
            CHAIN_GC_ON_BUDGET,
            "no PyTorch" if results.chain_on is None else f"{results.chain_on:.2f}x",
        ),
        item(
            f"<= {CHAIN_GC_OFF_BUDGET}x gc off",
            results.chain_off,
            CHAIN_GC_OFF_BUDGET,
            "no PyTorch" if results.chain_off is None else f"{results.chain_off:.2f}x",
        ),
        item(f"(b) <= {MLP_BUDGET}x NumPy", results.mlp, MLP_BUDGET, f"{results.mlp:.2f}x"),
        item(
            f"no-grad op <= {NO_GRAD_OP_BUDGET:g} µs over NumPy",
            worst_no_grad,
            NO_GRAD_OP_BUDGET,
            f"worst {over(worst_no_grad)}",
        ),
        item(
            f"recorded op <= {RECORDED_OP_BUDGET:g} µs over NumPy",
            worst_recorded,
            RECORDED_OP_BUDGET,
            f"worst {over(worst_recorded)}",
        ),
        f"import <= {IMPORT_BUDGET * 1000:.0f} ms without numba: {import_verdict(results)} "
        f"({import_ms})",
    ]
    compiled_items = [
        item(
            f"(d) compiled MLP step <= {COMPILED_MLP_BUDGET}x NumPy",
            results.compiled_mlp,
            COMPILED_MLP_BUDGET,
            f"{results.compiled_mlp:.2f}x",
        ),
        item(
            f"(e) compiled scalar loop <= {COMPILED_LOOP_BUDGET}x PyTorch per node",
            results.compiled_loop,
            COMPILED_LOOP_BUDGET,
            "no PyTorch" if results.compiled_loop is None else f"{results.compiled_loop:.2f}x",
        ),
    ]
    optimizer_items = [
        item(
            f"(d') compiled step with {label} <= {OPTIMIZER_STEP_BUDGET}x NumPy by hand",
            value,
            OPTIMIZER_STEP_BUDGET,
            f"{value:.2f}x",
        )
        for label, value in results.optimizer_steps.items()
    ]
    for label, value in results.fallbacks.items():
        text = f"(f) a step that {label}, fallen back, >= {FALLBACK_BUDGET}x eager speed"
        optimizer_items.append(f"{budget_at_least(text, value, FALLBACK_BUDGET)} ({value:.2f}x)")
    return (
        "Budgets (issue 13): " + "; ".join(items) + ".\n"
        "Budgets (issue 14): " + "; ".join(compiled_items) + ".\n"
        "Budgets (issue 21): " + "; ".join(optimizer_items) + "."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer nodes and steps (a smoke run)")
    args = parser.parse_args()
    settings = QUICK if args.quick else FULL

    results = Results()
    rows = bench_chain(settings, results)
    rows += bench_mlp(settings, results)
    rows += bench_compiled(settings, results)
    rows += bench_ops(settings, results)
    rows += bench_import(settings, results)

    print(header(settings, args.quick))
    print()
    print(
        "| benchmark | minigrad | NumPy by hand | PyTorch | minigrad vs NumPy "
        "| minigrad vs PyTorch | budget |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(row.markdown())
    print()
    print(f"numba imported by `import minigrad`: {results.numba_loaded}")
    print(budgets_line(results))


if __name__ == "__main__":
    main()
