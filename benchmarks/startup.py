"""Whole-process time of `sizing estimate --preset llama2-7b` and `sizing --help`, each as a ratio
to a bare `python -c 'import click'` timed in the same round, and proof that no heavy module is
imported on those paths. Targets: estimate <= 2.0x, --help <= 1.7x (issue 22).

    python benchmarks/startup.py            # print the figures as markdown; --runs N to change
    python benchmarks/startup.py --record   # also write them, with the date, the machine and the
                                            # load, to benchmarks/startup.md (commit that file)

Paired: every round runs each command once, in turn, so a burst of load from other processes
hits the floor and the command alike; the ratio of a round is command / floor, and the figure is
the median over the rounds. The commands run as `python -m sizing` from the checkout (the
`sizing` script may point at another install). Bytecode is cached (a normal install: a fresh
PYTHONPYCACHEPREFIX, filled by the warm-up run, so the checkout is left untouched).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# writes a temporary file beside the record, then os.replace
from sizing.report.files import write_bytes_atomic

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "startup.md"
# Never on these paths: each takes hundreds of milliseconds to import.
HEAVY = ("torch", "pandas", "numpy", "fvcore", "matplotlib", "reference_model")
# Light, but kept off the path: importlib.metadata alone is ~40 ms (tabulate asks it for its version).
AVOIDED = ("importlib.metadata",)
FLOOR = ("python -c 'import click' (the floor)", [sys.executable, "-c", "import click"])
TIMED = [
    ("python -m sizing estimate --preset llama2-7b", ["estimate", "--preset", "llama2-7b"], 2.0),
    ("python -m sizing --help", ["--help"], 1.7),
]
INTERPRETER = ("python -c pass (interpreter)", [sys.executable, "-c", "pass"])


def run_once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, env=env, cwd=ROOT)
    return (time.perf_counter() - start) * 1000


def paired_times(runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    """Milliseconds per command, one of each per round, in the same order every round."""
    cmds = [FLOOR, *[(label, [sys.executable, "-m", "sizing", *args]) for label, args, _ in TIMED], INTERPRETER]
    for _, cmd in cmds:
        run_once(cmd, env)  # warm the caches (and write the bytecode)
    times: dict[str, list[float]] = {label: [] for label, _ in cmds}
    for _ in range(runs):
        for label, cmd in cmds:
            times[label].append(run_once(cmd, env))
    return times


def imported_on_path(args: list[str], names: tuple[str, ...]) -> list[str]:
    code = (
        f"import sys; sys.argv = ['sizing', *{args!r}]\n"
        "from sizing.cli import main\n"
        "try:\n    main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        f"print(repr([m for m in {names!r} if m in sys.modules]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return eval(result.stdout.strip().splitlines()[-1])  # a list literal we printed ourselves


def table(times: dict[str, list[float]]) -> list[str]:
    floor = times[FLOOR[0]]
    lines = ["| command | median ms | median ratio to the floor | target |", "|---|---:|---:|---:|"]
    targets = {label: target for label, _, target in TIMED}
    for label, values in times.items():
        ratio = statistics.median(v / f for v, f in zip(values, floor, strict=True))
        target = f"<= {targets[label]:.1f}x" if label in targets else ""
        lines.append(f"| `{label}` | {statistics.median(values):.0f} | {ratio:.2f}x | {target} |")
    return lines


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:  # Linux names the CPU model here; elsewhere the architecture is enough
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    return (
        f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


def load() -> str:
    try:
        return f"load average (1 min) {os.getloadavg()[0]:.2f}"
    except OSError:  # not on every platform
        return "load average unknown"


def measure(runs: int) -> str:
    """The figures as a markdown page (what --record writes)."""
    load_before = load()
    with tempfile.TemporaryDirectory() as prefix:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = prefix
        times = paired_times(runs, env)
    load_after = load()
    found = {label: imported_on_path(args, HEAVY + AVOIDED) for label, args, _ in TIMED}
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    return "\n".join(
        [
            "# Startup of `sizing estimate` and `sizing --help`",
            "",
            f"Recorded {today} by `python benchmarks/startup.py --record --runs {runs}` (see its docstring).",
            "",
            f"Machine: {machine()}; {load_before} before, {load_after} after (other processes share the CPUs).",
            "",
            "Paired rounds, bytecode cached; the ratio is the median over rounds of command / floor.",
            "",
            *table(times),
            "",
            *[
                f"Heavy or avoided modules imported by `{label}`: {', '.join(m) or 'none'}."
                for label, m in found.items()
            ],
            "",
            "Import-time breakdown: `python -X importtime -m sizing estimate -p llama2-7b`.",
            "",
        ]
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=31, help="paired rounds (default 31)")
    parser.add_argument("--record", action="store_true", help=f"also write the figures to {RECORD.relative_to(ROOT)}")
    parser.add_argument("--out", type=Path, default=RECORD, help="with --record: the file to write")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    page = measure(args.runs)
    print(page)
    if args.record:
        write_bytes_atomic(args.out, page.encode())
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
