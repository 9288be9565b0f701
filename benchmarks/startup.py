"""Startup as a user meets it: the `sizing` console script of `pip install .` in a clean virtual
environment, timed against `python -c 'import click'` in the same environment, paired and
interleaved; and the Python API's `sizing.estimate("llama2-7b")` per call. Targets (issue 35):
`sizing estimate --preset llama2-7b` <= 2.0x the click import (aim 1.5x), `sizing --help` <= 1.7x,
`sizing.estimate()` <= 0.1 ms; no heavy module imported on either path.

    python benchmarks/startup.py                 # build the venv, print the figures as markdown
    python benchmarks/startup.py --record        # also write them, with the date, the machine and
                                                 # the load, to benchmarks/startup.md (commit it)
    python benchmarks/startup.py --venv DIR      # reuse (or keep) the venv at DIR
    python benchmarks/startup.py --pip-args "--no-index --find-links wheels/"   # offline

The venv: `python -m venv`, then `pip install <a copy of this checkout>` (the README's install: the
package and its dependencies, nothing else), so neither an editable-install hook nor a crowded
site-packages is measured. Paired: every round runs the floor and each command once, in turn, so
a burst of load from other processes hits both; the ratio of a round is command / floor and the
figure is the median over rounds, of wall time and of CPU time (user + system of the child, less
sensitive to other processes). Bytecode is cached, as after a normal install (the warm-up run
writes it into the venv's site-packages). On a shared machine the figures move by ~20%: record on
a quiet one.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "startup.md"
# Never on these paths: each takes hundreds of milliseconds to import.
HEAVY = ("torch", "pandas", "numpy", "fvcore", "matplotlib", "reference_model", "huggingface_hub")
# Light, but kept off the path: importlib.metadata alone is ~40 ms (tabulate asks it for its version).
AVOIDED = ("importlib.metadata",)
TIMED = [
    ("sizing estimate --preset llama2-7b", ["estimate", "--preset", "llama2-7b"], 2.0),
    ("sizing --help", ["--help"], 1.7),
]
FLOOR = "python -c 'import click' (the floor)"
API_TARGET_US = 100.0
# Figures are recorded only from a quiet machine: the 1-minute load average below this before and
# after the run (on 2 shared cores a busy neighbour moves a ratio by ~20%). Otherwise --record
# writes that the figures need a quiet run, and none of them.
QUIET_LOAD = 0.5
# copied into the temporary source tree that pip installs (not the venvs, caches or reports)
IGNORED = shutil.ignore_patterns(".git", ".venv*", "build", "*.egg-info", "__pycache__", "reports", "tests", "docs")


def build_venv(venv: Path, pip_args: list[str]) -> Path:
    """A fresh venv at `venv` with this checkout installed as a user installs it; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    python = venv / "bin" / "python"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "transformer-sizing"
        shutil.copytree(ROOT, source, ignore=IGNORED)
        cmd = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pip_args, str(source)]
        subprocess.run(cmd, check=True)
    return python


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run of cmd."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, env=env, cwd=tempfile.gettempdir())
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def paired_times(python: Path, runs: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) per command, one of each per round, in the same order every round."""
    script = python.parent / "sizing"
    cmds = [(FLOOR, [str(python), "-c", "import click"])]
    cmds += [(label, [str(script), *args]) for label, args, _ in TIMED]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    for _, cmd in cmds:
        run_once(cmd, env)  # warm the caches and write the bytecode, as a first run after install does
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in cmds}
    for _ in range(runs):
        for label, cmd in cmds:
            times[label].append(run_once(cmd, env))
    return times


API_CODE = """
import statistics, time
from sizing import estimate
estimate("llama2-7b")
def per_call():
    t = time.process_time()
    for _ in range(2000):
        estimate("llama2-7b")
    return (time.process_time() - t) / 2000 * 1e6
print(statistics.median(per_call() for _ in range(9)))
"""


def api_microseconds(python: Path) -> float:
    """CPU microseconds per `sizing.estimate("llama2-7b")` (median of 9 x 2,000 calls)."""
    out = subprocess.run([str(python), "-c", API_CODE], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def imported_on_path(python: Path, args: list[str]) -> list[str]:
    names = HEAVY + AVOIDED
    code = (
        f"import sys; sys.argv = ['sizing', *{args!r}]\n"
        "from sizing.cli import main\n"
        "try:\n    main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        f"print('imported:', *(m for m in {names!r} if m in sys.modules))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1].split()[1:]  # the command's own output comes first


def table(times: dict[str, list[tuple[float, float]]]) -> list[str]:
    floor = times[FLOOR]
    lines = [
        "| command | median wall ms | wall ratio | median CPU ms | CPU ratio | target |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    targets = {label: target for label, _, target in TIMED}
    for label, values in times.items():
        cells = []
        for i in (0, 1):
            ratio = statistics.median(v[i] / f[i] for v, f in zip(values, floor, strict=True))
            cells += [f"{statistics.median(v[i] for v in values):.0f}", f"{ratio:.2f}x"]
        target = f"<= {targets[label]:.1f}x" if label in targets else ""
        lines.append(f"| `{label}` | {' | '.join(cells)} | {target} |")
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
        f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs, CPython {platform.python_version()}"
    )


def load() -> float | None:
    """The 1-minute load average, None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def load_text(value: float | None) -> str:
    return "load average unknown" if value is None else f"load average (1 min) {value:.2f}"


def quiet(*loads: float | None) -> bool:
    return all(v is not None and v < QUIET_LOAD for v in loads)


def measure(python: Path, runs: int, command: str) -> tuple[str, str]:
    """(the figures as a markdown page, the page --record writes): the figures from a quiet
    machine (QUIET_LOAD), else a page that says they need a quiet run."""
    load_before = load()
    times = paired_times(python, runs)
    api = api_microseconds(python)
    load_after = load()
    found = {label: imported_on_path(python, args) for label, args, _ in TIMED}
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    head = [
        "# Startup of `sizing estimate`, `sizing --help` and `sizing.estimate()`",
        "",
        f"Run {today} by `{command}` (see its docstring): the console script of `pip install .` "
        "in a clean venv, against `python -c 'import click'` in the same venv.",
        "",
        f"Machine: {machine()}; {load_text(load_before)} before, {load_text(load_after)} after.",
        "",
    ]
    imports = [
        f"Heavy or avoided modules imported by `{label}`: {', '.join(m) or 'none'}." for label, m in found.items()
    ]
    needs_quiet = "\n".join(
        [
            *head,
            f"**Needs a quiet run**: the load average was not below {QUIET_LOAD} before and after, so no "
            "figure is recorded (rerun `python benchmarks/startup.py --record` on a quiet machine).",
            "",
            *imports,
            "",
        ]
    )
    figures = "\n".join(
        [
            *head,
            f"Paired rounds ({runs}), bytecode cached; a ratio is the median over rounds of command / floor.",
            "",
            *table(times),
            "",
            f'`sizing.estimate("llama2-7b")`: {api:.1f} us CPU per call (target <= {API_TARGET_US:.0f} us).',
            "",
            *imports,
            "",
            "Import-time breakdown: `python -X importtime -m sizing estimate -p llama2-7b` in that venv.",
            "",
        ]
    )
    return figures, figures if quiet(load_before, load_after) else needs_quiet


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=31, help="paired rounds (default 31)")
    parser.add_argument("--record", action="store_true", help=f"also write the figures to {RECORD.relative_to(ROOT)}")
    parser.add_argument("--out", type=Path, default=RECORD, help="with --record: the file to write")
    parser.add_argument("--venv", type=Path, help="build the venv here and keep it (default: a temporary one)")
    parser.add_argument("--reuse", action="store_true", help="with --venv: use it as it is, without rebuilding")
    parser.add_argument("--pip-args", default="", help="extra arguments for pip install (e.g. offline wheels)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = "python benchmarks/startup.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        venv = args.venv or Path(tmp) / "venv"
        python = venv / "bin" / "python" if args.reuse else build_venv(venv, shlex.split(args.pip_args))
        page, recorded = measure(python, args.runs, command.strip())
    print(page)
    if args.record:
        from sizing.report.files import write_bytes_atomic  # a temporary file beside the record, then os.replace

        write_bytes_atomic(args.out, recorded.encode())
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
