"""Layout-search times (issue 35: every layout search <= 1 s at any scale, the UI's "fits on" list
over all GPUs included; issue 34 item 9: `sizing plan --flops` < 2 s for any budget).

    python benchmarks/search.py              # every case, 3 runs each, a markdown table
    python benchmarks/search.py --runs 5 --case plan-1e29

Each run is a fresh Python process (cold caches, as a command starts), which times the call
alone in CPU seconds (time.process_time: imports excluded, and less disturbed than wall time by
other processes on a shared machine), and, in the same process, a paired baseline: the CPU
seconds of BASELINE_CALLS calls of `sizing.estimate("llama2-7b").params.total` (a fixed amount
of pure-Python work). The figure is the median over runs of the seconds and of seconds /
baseline; the target is on the seconds, the ratio lets two machines be compared. Run it on a
quiet machine: the numbers of a loaded one are not results.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE_CALLS = 200

# name -> (target seconds, the Python statement timed; `S`, `L`, `fits` and `plan` are in scope)
CASES: dict[str, tuple[float, str]] = {
    "llama3-70b 2048 h100": (1.0, "S(L('llama3-70b'), 8192, 1024, 2048, gpu='h100')"),
    "llama3-70b 2048 mi300x": (1.0, "S(L('llama3-70b'), 8192, 1024, 2048, gpu='mi300x')"),
    "llama3-70b 2048 h100 --mfu 0.4": (1.0, "S(L('llama3-70b'), 8192, 1024, 2048, gpu='h100', mfu=0.4)"),
    "llama3.1-405b 16384 tpu-v5p": (1.0, "S(L('llama3.1-405b'), 8192, 2048, 16384, gpu='tpu-v5p')"),
    "llama3.1-405b 32768 h100": (1.0, "S(L('llama3.1-405b'), 8192, 2048, 32768, gpu='h100')"),
    "deepseek-v3 2048 mi300x": (1.0, "S(L('deepseek-v3'), 4096, 4096, 2048, gpu='mi300x')"),
    "deepseek-v3 fewest v100": (1.0, "S(L('deepseek-v3'), 4096, 4096, None, gpu='v100')"),
    "ui fits: llama3-70b 2048": (1.0, "fits('parallel', [('preset', 'llama3-70b'), ('gpus', '2048')])"),
    "ui fits: deepseek-v3 fewest": (1.0, "fits('parallel', [('preset', 'deepseek-v3')])"),
    "ui fits: memory llama2-70b": (1.0, "fits('memory', [('preset', 'llama2-70b')])"),
    "ui fits: plan 1e24": (1.0, "fits('plan', [('flops', '1e24')])"),
    "plan --flops 1e27": (2.0, "plan(1e27)"),
    "plan --flops 1e29": (2.0, "plan(1e29)"),
}

CHILD = """
import json, sys, time
from sizing import estimate
from sizing.inputs import get_preset
from sizing.parallel import search_layout as S
from sizing.plan import plan
from sizing.ui.api import fits_by_gpu as fits
L = lambda name: get_preset(name).config
estimate("gpt2").params.total  # warm the tables both sides use
start = time.process_time()
for _ in range({calls}):
    estimate("llama2-7b").params.total
baseline = time.process_time() - start
start = time.process_time()
{statement}
print(json.dumps({{"seconds": time.process_time() - start, "baseline": baseline}}))
"""


def run_case(statement: str) -> dict:
    code = CHILD.format(calls=BASELINE_CALLS, statement=statement)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", action="append", help="a case name (repeatable; default: all)")
    args = parser.parse_args()
    names = args.case or list(CASES)
    print("| case | target | CPU seconds (median) | / baseline | met |")
    print("|---|---:|---:|---:|---|")
    for name in names:
        target, statement = CASES[name]
        runs = [run_case(statement) for _ in range(args.runs)]
        seconds = statistics.median(r["seconds"] for r in runs)
        ratio = statistics.median(r["seconds"] / r["baseline"] for r in runs)
        print(f"| {name} | {target:g} s | {seconds:.3f} | {ratio:.1f}x | {'yes' if seconds <= target else 'NO'} |")
    print(f"\nbaseline: {BASELINE_CALLS} x sizing.estimate('llama2-7b').params.total, in the same process")


if __name__ == "__main__":
    main()
