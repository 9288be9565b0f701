"""Wall time of the long commands on every CPU, each paired with a baseline timed in the same
round (issue 35, on the project's 2-core machine):

    sizing verify --all --format json    target < 60 s
    sizing report --out <fresh folder>   target < 3 s
    python -m pytest (the default tier)  target < 120 s  (the `slow` tier with --slow: no target)

    python benchmarks/long_commands.py                      # every command; print markdown
    python benchmarks/long_commands.py --only report -n 9   # one command, 9 rounds
    python benchmarks/long_commands.py --record             # also write benchmarks/long_commands.md

The baseline is a CPU spin: the same pure-Python loop (SPIN_LOOPS additions) in one process per
CPU at once, about a second on the 2-core machine when it is quiet. It moves with the machine's
speed and load as the commands do, so command / spin compares runs on different machines and
under different loads; each round times the spin, then the command, and the figures are medians
over the rounds. The verdict is on the median wall time (the targets are seconds on 2 cores);
the ratio beside it tells a loaded run apart (the spin's own time shows the load).

Commands run the way a user runs them: the `sizing` console script beside this interpreter (its
`pip install`), else `python -m sizing`. CPU seconds are the children's (resource.getrusage),
workers included.
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from startup import load, machine  # benchmarks/startup.py: the same machine and load lines

from sizing.report.files import write_bytes_atomic

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "long_commands.md"
SPIN_LOOPS = 20_000_000  # ~1 s of one CPU on the project's machine (AMD EPYC, CPython 3.11)
SPIN = f"s = 0\nfor i in range({SPIN_LOOPS}):\n    s += i\n"


def sizing_command() -> list[str]:
    script = Path(sys.executable).parent / "sizing"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sizing"]


def commands(slow: bool) -> dict[str, tuple[list[str], float | None]]:
    """name -> (argv, target seconds); `{out}` in an argv is a fresh temporary folder."""
    sizing = sizing_command()
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    out = {
        "verify": ([*sizing, "verify", "--all", "--format", "json"], 60.0),
        "report": ([*sizing, "report", "--out", "{out}"], 3.0),
        "pytest": (pytest, 120.0),
    }
    if slow:
        out["pytest -m slow"] = ([*pytest, "-m", "slow"], None)
    return out


def spin_seconds() -> float:
    """Wall seconds of SPIN in one process per CPU, all at once."""
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(os.cpu_count() or 1)]
    for proc in procs:
        proc.wait()
    return time.perf_counter() - start


def timed(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of it and its children, exit code) of one run."""
    with tempfile.TemporaryDirectory(prefix="sizing-bench-") as tmp:
        argv = [a.replace("{out}", str(Path(tmp) / "reports")) for a in argv]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        code = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def measure(name: str, argv: list[str], rounds: int) -> dict:
    spins, walls, cpus, codes = [], [], [], set()
    for _ in range(rounds):
        spins.append(spin_seconds())
        wall, cpu, code = timed(argv)
        walls.append(wall)
        cpus.append(cpu)
        codes.add(code)
    return {
        "name": name,
        "wall": statistics.median(walls),
        "cpu": statistics.median(cpus),
        "spin": statistics.median(spins),
        "ratio": statistics.median(w / s for w, s in zip(walls, spins, strict=True)),
        "rounds": rounds,
        "ok": codes == {0},
    }


def row(m: dict, target: float | None) -> str:
    verdict = "" if target is None else ("met" if m["wall"] < target and m["ok"] else "NOT met")
    shown = "" if target is None else f"< {target:g} s"
    exit_ok = "0" if m["ok"] else "non-zero"
    return (
        f"| `{m['name']}` | {m['rounds']} | {m['wall']:.1f} | {m['cpu']:.1f} | {m['spin']:.2f} | "
        f"{m['ratio']:.1f}x | {exit_ok} | {shown} | {verdict} |"
    )


def page(results: list[tuple[dict, float | None]], argv: list[str], before: str, after: str) -> str:
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    return "\n".join(
        [
            "# Long commands: verify --all, report, pytest",
            "",
            f"Recorded {today} by `python benchmarks/long_commands.py {' '.join(argv)}` (see its docstring).",
            "",
            f"Machine: {machine()}; {before} before, {after} after (other processes share the CPUs).",
            "",
            "Medians over paired rounds: the CPU spin (one process per CPU, the baseline), then the command.",
            "",
            "| command | rounds | wall s | CPU s | spin s | wall / spin | exit | target | verdict |",
            "|---|---:|---:|---:|---:|---:|---|---|---|",
            *[row(m, target) for m, target in results],
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated: verify, report, pytest")
    parser.add_argument("-n", "--rounds", type=int, help="rounds per command (default: verify 3, report 7, pytest 1)")
    parser.add_argument("--slow", action="store_true", help="also time the `slow` tier (python -m pytest -m slow)")
    parser.add_argument("--record", action="store_true", help=f"also write {RECORD.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    chosen = commands(args.slow)
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k.split()[0] in args.only.split(",")}
    default_rounds = {"verify": 3, "report": 7}
    before = load()
    results = []
    for name, (cmd, target) in chosen.items():
        results.append((measure(name, cmd, args.rounds or default_rounds.get(name, 1)), target))
    text = page(results, sys.argv[1:] if argv is None else argv, before, load())
    print(text)
    if args.record:
        write_bytes_atomic(RECORD, text.encode())
    return 0 if all(m["ok"] for m, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
