"""Sweep throughput through the Python API: grid points (each a distinct, validated ModelConfig)
per second, with every count checked exact against `estimate()`. Target: at least 20,000
configs per second (CPU time) on the project's 2-core machine.

    python benchmarks/sweep.py            # print the figures as markdown
    python benchmarks/sweep.py --record   # also write them to benchmarks/sweep.md (commit that file)

Times are the process's CPU time (time.process_time), less disturbed than wall time by the other
processes that share the machine. Three grids are timed, best of --repeats runs each (the best
run is the one least disturbed by other processes; the median is shown beside it):
- configs: n_layers 8..128 x d_model 1024..16384 step 256 x n_kv_heads {8, 32} on Llama-2-7B,
  one run point (2T tokens on an H100): every point builds and validates its own ModelConfig;
- configs x runs: fewer configs, each at 2 token counts x 3 GPUs x 3 MFUs (the run points reuse
  each config's parameters and FLOPs);
- the DataFrame: sizing.sweep() on the first grid, pandas included.
The `estimate()` path (formula text, memory=False, every row field read: the result computes its
parts on access) is timed on 500 points for comparison.
Exactness: 300 points spread over the first grid are recomputed with estimate() and every
headline column must be equal (integers exactly).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sizing import estimate, get_preset  # noqa: E402
from sizing.plan.sweeps import HEADLINE_COLUMNS, grid_size, sweep, sweep_rows  # noqa: E402
from sizing.report.files import write_bytes_atomic  # noqa: E402

RECORD = ROOT / "benchmarks" / "sweep.md"
TARGET_PER_SECOND = 20_000  # issue 22
BASE = "llama2-7b"
CONFIG_GRID = {"n_layers": "8:128:1", "d_model": "1024:16384:256", "n_kv_heads": [8, 32], "tokens": "2T", "gpu": "h100"}
RUN_GRID = {
    "n_layers": "16:64:1",
    "d_model": "2048:8192:512",
    "tokens": ["1T", "2T"],
    "gpu": ["a100", "h100", "b200"],
    "mfu": [0.3, 0.4, 0.5],
}


SPIN_LOOPS = 5_000_000  # the paired baseline: ~0.25 CPU s of plain Python on the project's machine
SPINS: list[float] = []  # its CPU seconds, one per timed run of the first grid


def spin() -> float:
    """CPU seconds of a fixed pure-Python loop: the baseline each timed run is paired with."""
    start = time.process_time()
    s = 0
    for i in range(SPIN_LOOPS):
        s += i
    return time.process_time() - start


def best_and_median(fn, repeats: int, paired: list[float] | None = None) -> tuple[float, float, object]:
    """Best and median CPU seconds of `fn` over `repeats` runs; with `paired`, the spin is timed
    before each run and appended there."""
    times, result = [], None
    for _ in range(repeats):
        if paired is not None:
            paired.append(spin())
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return min(times), statistics.median(times), result


def check_exact(rows: list[dict], n: int = 300) -> int:
    """Recompute n rows spread over the grid with estimate() and compare every headline column."""
    base = get_preset(BASE).config
    step = max(1, len(rows) // n)
    checked = 0
    for row in rows[::step][:n]:
        cfg = dataclasses.replace(base, n_layers=row["n_layers"], d_model=row["d_model"], n_kv_heads=row["n_kv_heads"])
        ref = estimate(cfg, seq_len=row["seq_len"], tokens=row["tokens"], gpu=row["gpu"], memory=False).to_row()
        diff = [c for c in HEADLINE_COLUMNS if ref[c] != row[c] or type(ref[c]) is not type(row[c])]
        if diff:
            raise SystemExit(f"sweep row differs from estimate() in {diff}: {row}")
        checked += 1
    return checked


def estimate_path_rate(points: int = 500) -> float:
    base = get_preset(BASE).config
    start = time.process_time()
    for i in range(points):
        cfg = dataclasses.replace(base, n_layers=8 + i % 120)
        estimate(cfg, seq_len=4096, tokens=2 * 10**12, gpu="h100", memory=False).to_row()  # every field read
    return points / (time.process_time() - start)


def measure(repeats: int) -> str:
    lines = []
    n_config = grid_size(CONFIG_GRID)
    best, median, (rows, skipped) = best_and_median(lambda: sweep_rows(BASE, CONFIG_GRID), repeats, SPINS)
    checked = check_exact(rows)
    lines.append(_row("configs (each point its own ModelConfig)", n_config, best, median, len(skipped)))
    n_run = grid_size(RUN_GRID)
    best2, median2, (_, skipped2) = best_and_median(lambda: sweep_rows(BASE, RUN_GRID), repeats)
    lines.append(_row("configs x run points (2 tokens x 3 GPUs x 3 MFUs)", n_run, best2, median2, len(skipped2)))
    best3, median3, frame = best_and_median(lambda: sweep(BASE, CONFIG_GRID), max(1, repeats // 2))
    lines.append(
        _row("sizing.sweep() DataFrame (pandas included)", n_config, best3, median3, len(frame.attrs["skipped"]))
    )
    rate = estimate_path_rate()
    verdict = "met" if n_config / best >= TARGET_PER_SECOND else "NOT met"
    today = datetime.date.today().isoformat()
    return "\n".join(
        [
            "# Sweep throughput (Python API)",
            "",
            f"Recorded {today} by `python benchmarks/sweep.py --record --repeats {repeats}` (see its docstring); "
            f"target: at least {TARGET_PER_SECOND:,} configs per second.",
            "",
            f"Machine: {_machine()}. Shared with other processes: best of {repeats} runs, median beside it.",
            "",
            "| grid | points | best CPU s | configs/s (best) | configs/s (median) | skipped |",
            "|---|---:|---:|---:|---:|---:|",
            *lines,
            "",
            f"Target {verdict} on the first grid ({n_config / best:,.0f} configs/s). Exactness: {checked} points "
            f"recomputed with `estimate()`, every headline column equal ({', '.join(HEADLINE_COLUMNS)}).",
            "",
            f"Paired baseline: {SPIN_LOOPS:,} additions of plain Python before each run of the first grid, "
            f"median {statistics.median(SPINS):.3f} CPU s; the first grid's median run is "
            f"{median / statistics.median(SPINS):.2f}x it (the target, 20,000 configs/s, is "
            f"{n_config / TARGET_PER_SECOND / statistics.median(SPINS):.2f}x on this machine).",
            "",
            f"For comparison, `estimate(cfg, memory=False)` one config at a time (formula text included): "
            f"{rate:,.0f} configs/s.",
            "",
        ]
    )


def _row(name: str, points: int, best: float, median: float, skipped: int) -> str:
    return f"| {name} | {points:,} | {best:.3f} | {points / best:,.0f} | {points / median:,.0f} | {skipped:,} |"


def _machine() -> str:
    import os
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--record", action="store_true", help=f"also write {RECORD.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    text = measure(args.repeats)
    print(text)
    if args.record:
        write_bytes_atomic(RECORD, text.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
