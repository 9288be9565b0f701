"""Generalisation audit of the step model: realistic runs it was never fitted to, each checked
for the answers a user budgeting a run relies on (docs/step-time.md, "Generalisation audit").

    python tools/step_time_audit.py              # the table; exit 1 if any check fails
    python tools/step_time_audit.py --json FILE  # also the rows as JSON

Each scenario is a public model config (a preset) at a layout its framework's own public recipes
use (torchtitan's train_configs, NeMo 2.0 recipes, Megatron-LM example scripts: cited per row),
run through `sizing parallel` exactly as a user would. Nothing here is a measured step time: the
checks are ranges that published evidence bounds (cited beside each), and pairs that must order
(an fp8 run against its bf16 twin, a small model against a large one on the same stack).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.step_time_audit_cases import MFU_RANGES, PAIRS, SCENARIOS, Scenario  # noqa: E402


@dataclass
class Outcome:
    scenario: Scenario
    rc: int
    step: float | None = None
    mfu: float | None = None
    attention_share: float | None = None
    verdict: str = ""
    stack: str = ""
    problems: tuple[str, ...] = ()
    message: str = ""


def run_cli(args: list[str]) -> tuple[int, str]:
    """`sizing ARGS` in process (click's runner): its exit code and its output."""
    from click.testing import CliRunner

    from sizing.cli import main

    result = CliRunner().invoke(main, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return 99, f"crash: {type(result.exception).__name__}: {result.exception}"
    return result.exit_code, result.output


def evaluate(sc: Scenario) -> Outcome:
    """Run one scenario and check what must hold on its own (answered, fits, MFU in range)."""
    rc, out = run_cli(["parallel", *sc.args, "--format", "json"])
    if rc not in (0, 3):
        line = out.strip().splitlines()[-1] if out.strip() else ""
        return Outcome(sc, rc, problems=("refused" if rc == 2 else "crashed",), message=line[:160])
    data = json.loads(out)
    secs = data["step"]["seconds"]
    outcome = Outcome(
        sc,
        rc,
        step=data["step_seconds"],
        mfu=data["mfu"],
        attention_share=secs["attention"] / data["step_seconds"],
        verdict=data["verdict"],
        stack=data["workload"]["stack"],
    )
    problems = []
    if rc == 3 or data["verdict"] == "does not fit":  # "tight" is an answer: within the allocator's band
        problems.append(f"declared not fitting ({data['verdict']})")
    low, high = MFU_RANGES[sc.kind]
    if not low <= outcome.mfu <= high:
        problems.append(f"MFU {outcome.mfu:.1%} outside {low:.0%}-{high:.0%} for {sc.kind}")
    if sc.min_attention_share and outcome.attention_share < sc.min_attention_share:
        problems.append(f"attention {outcome.attention_share:.0%} of the step < {sc.min_attention_share:.0%}")
    outcome.problems = tuple(problems)
    return outcome


def pair_problems(by_name: dict[str, Outcome]) -> list[tuple[str, str, str, str]]:
    """Each pair check as (name, what, value, verdict)."""
    rows = []
    for pair in PAIRS:
        a, b = by_name[pair.first], by_name[pair.second]
        if a.step is None or b.step is None:
            rows.append((pair.name, pair.what, "-", "not answered"))
            continue
        value = pair.value(a, b)
        ok = pair.low <= value <= pair.high
        verdict = "ok" if ok else f"FAIL (want {pair.low:g}-{pair.high:g})"
        rows.append((pair.name, pair.what, f"{value:.3f}", verdict))
    return rows


def table(outcomes: list[Outcome], pairs: list[tuple[str, str, str, str]]) -> str:
    lines = [
        "| scenario | stack | layout source | step s | MFU | attention share | memory | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        step = f"{o.step:.3g}" if o.step is not None else "-"
        mfu = f"{o.mfu:.1%}" if o.mfu is not None else "-"
        att = f"{o.attention_share:.0%}" if o.attention_share is not None else "-"
        verdict = "ok" if not o.problems else "FAIL: " + "; ".join(o.problems)
        verdict += f" ({o.message})" if o.message else ""
        lines.append(
            f"| {o.scenario.name} | {o.stack or '-'} | {o.scenario.source} | {step} | {mfu} | {att} | "
            f"{o.verdict or '-'} | {verdict} |"
        )
    lines += ["", "| pair check | what | value | verdict |", "|---|---|---|---|"]
    lines += [f"| {name} | {what} | {value} | {verdict} |" for name, what, value, verdict in pairs]
    return "\n".join(lines)


def run_audit() -> tuple[list[Outcome], list[tuple[str, str, str, str]]]:
    outcomes = [evaluate(sc) for sc in SCENARIOS]
    return outcomes, pair_problems({o.scenario.name: o for o in outcomes})


def failures(outcomes: list[Outcome], pairs: list[tuple[str, str, str, str]]) -> list[str]:
    bad = [f"{o.scenario.name}: {'; '.join(o.problems)}" for o in outcomes if o.problems]
    return bad + [f"{name}: {verdict}" for name, _, _, verdict in pairs if verdict != "ok"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    outcomes, pairs = run_audit()
    print(table(outcomes, pairs))
    if args.json:
        rows = [
            {"scenario": o.scenario.name, "step_seconds": o.step, "mfu": o.mfu, "problems": list(o.problems)}
            for o in outcomes
        ]
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    bad = failures(outcomes, pairs)
    print(f"\n{len(outcomes)} scenarios, {len(pairs)} pair checks, {len(bad)} failing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
