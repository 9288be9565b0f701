"""Verification of the analytic formulas against the reference model. `sizing verify`
only parses options and renders; the checks live here.

Each check is a function (name, cfg, **options) -> CheckResult with a table (headers,
rows) and an `ok` flag, registered in CHECKS. To add a check (FLOPs, memory): write the
function, register it in CHECKS, and add its flag to sizing/cli_verify.py (see the hook
there). The order of CHECKS is the order `sizing verify` runs them with no flag.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from sizing.config import ModelConfig
from sizing.params import param_components


@dataclass
class CheckResult:
    check: str  # "params", later "flops", "memory"
    model: str  # preset name or config path
    headers: list[str]
    rows: list[list[Any]]  # raw values (ints stay ints; the CLI formats them)
    ok: bool
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "model": self.model, "ok": self.ok, "seconds": round(self.seconds, 3),
                "rows": [dict(zip(self.headers, row)) for row in self.rows], "notes": self.notes}


def verify_params(name: str, cfg: ModelConfig, **_options) -> CheckResult:
    """Parameters by component: sizing's formula vs numel() of the model built on meta."""
    from .counting import compare_params

    start = time.perf_counter()
    rows = compare_params(cfg)
    seconds = time.perf_counter() - start
    expressions = {c.key: (f"L·({c.formula})" if c.per_layer is not None else c.formula)
                   for c in param_components(cfg)}
    table = [[r.component, r.formula, r.counted, r.difference, expressions.get(r.component, "")] for r in rows]
    total_formula, total_counted = sum(r.formula for r in rows), sum(r.counted for r in rows)
    table.append(["total", total_formula, total_counted, total_counted - total_formula, ""])
    ok = all(r.difference == 0 for r in rows)
    return CheckResult("params", name, ["component", "formula", "counted", "difference", "expression"], table, ok,
                       seconds)


def verify_flops(name: str, cfg: ModelConfig, seq_len: int | None = None, counter: str = "both",
                 **_options) -> CheckResult:
    """Matmul FLOPs by component, forward and training (forward + backward):
    - the model at full size on the meta device, counted by FlopCounterMode, at `seq_len`
      (default: the preset's training context, else 2048);
    - the same switches at toy size (small_config) on CPU, counted by the chosen counters
      (fvcore needs real tensors), with a checkpointed run that must re-count one forward."""
    from sizing.presets import PRESETS

    from .flop_verify import check_flops
    from .small import small_config

    start = time.perf_counter()
    preset = PRESETS.get(name)
    T = seq_len or (preset.context if preset else 2048)
    if cfg.position == "learned":
        T = min(T, cfg.max_positions)
    runs = []
    if counter in ("torch", "both"):
        runs.append(("full size, meta", check_flops(cfg, name, T, device="meta", counters="torch", batch=1)))
    small_T = 32
    runs.append(("toy size, cpu", check_flops(small_config(cfg, small_T), name, small_T, device="cpu",
                                             counters=counter, batch=2, recompute=counter != "fvcore")))
    rows, notes = [], []
    for run, check in runs:
        for phase, phase_rows in (("forward", check.forward), ("training", check.training),
                                  ("recompute", check.recompute), ("recompute selective", check.recompute_selective)):
            for r in phase_rows:
                diffs = r.differences()
                rows.append([run, phase, r.component, r.expected, r.torch, r.fvcore,
                             max(diffs, key=abs) if diffs else None])
        label = f"{run} (batch {check.batch}, T {check.seq_len})"
        if check.flop_counter_mode_total is not None:
            notes.append(f"{label}: FlopCounterMode total {check.flop_counter_mode_total:,} = sum of components "
                         f"{check.component_total:,}: {check.flop_counter_mode_total == check.component_total}")
        for counter_name, ops in check.uncounted_matmuls.items():
            if ops:
                notes.append(f"{label}: UNCOUNTED MATMULS by {counter_name}: {ops}")
        for counter_name, ops in check.skipped.items():
            top = ", ".join(f"{op} x{n}" for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:12])
            notes.append(f"{label}: {counter_name} skipped (no FLOP formula; not matmuls): {top}"
                         + (f" and {len(ops) - 12} more" if len(ops) > 12 else ""))
        for term, values in check.extra_terms.items():
            if any(values.values()):
                notes.append(f"{label}: {term}: {values}")
    notes.append("FLOPs: 2 per multiply-add (fvcore counts 1: multiplied by 2); attention convention: full "
                 "(dense masked matmul, T keys per query)")
    ok = all(check.ok for _, check in runs)
    return CheckResult("flops", name, ["run", "phase", "component", "formula", "torch", "fvcore", "difference"],
                       rows, ok, time.perf_counter() - start, notes)


def verify_memory(name: str, cfg: ModelConfig, **options) -> CheckResult:
    """Activation, KV-cache and optimizer-state bytes (reference_model/memory_probe.py)."""
    from .memory_probe import verify_memory as run

    return run(name, cfg, **{k: v for k, v in options.items() if k in ("batch",)})


# name -> check function, in the order `sizing verify` runs them with no flag.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "params": verify_params,
    "flops": verify_flops,
    "memory": verify_memory,
}


def run_checks(models: list[tuple[str, ModelConfig]], checks: list[str] | None = None,
               **options) -> list[CheckResult]:
    """Every requested check (default: all of CHECKS) on every (name, config)."""
    names = list(CHECKS) if not checks else checks
    unknown = [c for c in names if c not in CHECKS]
    if unknown:
        raise KeyError(f"unknown check(s) {', '.join(unknown)}; available: {', '.join(CHECKS)}")
    return [CHECKS[check](name, cfg, **options) for name, cfg in models for check in names]


def verification_report_markdown() -> str:
    """reports/verification.md (the hook `sizing report --with-verification` calls)."""
    from .verify_report import verification_report_markdown as render

    return render()
