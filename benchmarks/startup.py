"""Whole-process time of `sizing estimate --preset llama2-7b`, and proof that no heavy module
is imported on that path. Target: median under 150 ms on the project's 2-core machine.

    python benchmarks/startup.py            # print the figures as markdown; --runs N to change
    python benchmarks/startup.py --record   # also write them, with the date and the machine,
                                            # to benchmarks/startup.md (commit that file)

Two conditions are timed. "Bytecode cached" is a normal install: every module's .pyc exists
(a fresh PYTHONPYCACHEPREFIX, filled by the warm-up run, so the checkout is left untouched).
"As this environment runs it" keeps the environment as it is: on the project's machine
PYTHONDONTWRITEBYTECODE=1, so the modules of the checkout are compiled from source every run.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
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
TARGET_MS = 150
# Never on the estimate path: these take hundreds of milliseconds to import.
HEAVY = ("torch", "pandas", "numpy", "fvcore", "matplotlib", "reference_model")
# Allowed on the path (the text tables); its cost is measured as its own row.
LIGHT_DEPENDENCIES = ("click", "tabulate")
ESTIMATE_ARGS = ["estimate", "--preset", "llama2-7b"]


def commands() -> list[tuple[str, list[str]]]:
    script = shutil.which("sizing")
    if script is None:
        raise SystemExit("`sizing` is not on PATH: run `pip install -e .` first")
    return [
        ("sizing estimate --preset llama2-7b", [script, *ESTIMATE_ARGS]),
        ("python -m sizing estimate --preset llama2-7b", [sys.executable, "-m", "sizing", *ESTIMATE_ARGS]),
        ("python -c 'import click, tabulate'", [sys.executable, "-c", "import click, tabulate"]),
        ("python -c pass (interpreter floor)", [sys.executable, "-c", "pass"]),
    ]


def time_runs(cmd: list[str], runs: int, env: dict[str, str]) -> list[float]:
    subprocess.run(cmd, capture_output=True, check=True, env=env, cwd=ROOT)  # warm the caches
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True, env=env, cwd=ROOT)
        out.append((time.perf_counter() - start) * 1000)
    return out


def imported_on_estimate_path(names: tuple[str, ...]) -> list[str]:
    code = (
        f"import sys; sys.argv = ['sizing', *{ESTIMATE_ARGS!r}]\n"
        "from sizing.cli import main\n"
        "try:\n    main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        f"print(repr([m for m in {names!r} if m in sys.modules]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return eval(result.stdout.strip().splitlines()[-1])  # a list literal we printed ourselves


def timing_table(runs: int, env: dict[str, str]) -> list[str]:
    lines = ["| command | median ms | min ms | max ms |", "|---|---:|---:|---:|"]
    for label, cmd in commands():
        times = time_runs(cmd, runs, env)
        lines.append(f"| `{label}` | {statistics.median(times):.0f} | {min(times):.0f} | {max(times):.0f} |")
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


def measure(runs: int) -> str:
    """The figures as a markdown page (what --record writes)."""
    as_is = dict(os.environ)
    with tempfile.TemporaryDirectory() as prefix:
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = prefix
        cached_rows = timing_table(runs, cached)
    as_is_rows = timing_table(runs, as_is)
    heavy = imported_on_estimate_path(HEAVY)
    light = imported_on_estimate_path(LIGHT_DEPENDENCIES)
    dont_write = os.environ.get("PYTHONDONTWRITEBYTECODE", "unset")
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    return "\n".join(
        [
            "# Startup of `sizing estimate`",
            "",
            (
                f"Recorded {today} by `python benchmarks/startup.py --record --runs {runs}` "
                f"(see its docstring); target: median under {TARGET_MS} ms, whole process."
            ),
            "",
            f"Machine: {machine()}.",
            "",
            "## Bytecode cached (a normal install)",
            "",
            *cached_rows,
            "",
            f"## As this environment runs it (PYTHONDONTWRITEBYTECODE={dont_write})",
            "",
            *as_is_rows,
            "",
            f"Heavy modules imported by `sizing estimate`: {', '.join(heavy) or 'none'}.",
            (
                f"Light dependencies imported by `sizing estimate`: {', '.join(light) or 'none'} "
                "(their cost is the `import click, tabulate` row minus the interpreter floor)."
            ),
            "",
            "Import-time breakdown: `python -X importtime -m sizing estimate -p llama2-7b`.",
            "",
        ]
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="timed runs per row (default 21)")
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
