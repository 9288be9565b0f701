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


# name -> check function. Add "flops" / "memory" here (in the order they should run).
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "params": verify_params,
}


def run_checks(models: list[tuple[str, ModelConfig]], checks: list[str] | None = None,
               **options) -> list[CheckResult]:
    """Every requested check (default: all of CHECKS) on every (name, config)."""
    names = list(CHECKS) if not checks else checks
    unknown = [c for c in names if c not in CHECKS]
    if unknown:
        raise KeyError(f"unknown check(s) {', '.join(unknown)}; available: {', '.join(CHECKS)}")
    return [CHECKS[check](name, cfg, **options) for name, cfg in models for check in names]
