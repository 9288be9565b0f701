"""The checks of `sizing verify`, registered in one place, and `run_checks`, which
sizing/cli/verify.py calls.

Each check is a function (name, cfg, **options) -> CheckResult (check.py) with a table
(headers, rows) and an `ok` flag, and lives beside the probe it reports on:

    params  counting.verify_params       numel() by component of the model built on meta
    flops   flop_verify.verify_flops     FlopCounterMode and fvcore, full size on meta and toy size on CPU
    memory  memory_verify.verify_memory  saved activations, KV cache and optimizer state on CPU

To add a check: write the function beside its probe, register it in CHECKS, and add its flag
to CHECK_FLAGS in sizing/cli/verify.py. The order of CHECKS is the order `sizing verify` runs
them with no flag.

Imports flow one way: check <- probes <- verify <- verify_report (reports/verification.md).
"""

from __future__ import annotations

from collections.abc import Callable

from reference_model.counting import verify_params
from reference_model.verify.check import CheckResult
from reference_model.verify.flops import verify_flops
from reference_model.verify.memory import verify_memory
from sizing.inputs import ModelConfig

__all__ = ["CHECKS", "CheckResult", "run_checks", "verify_flops", "verify_memory", "verify_params"]

# name -> check function, in the order `sizing verify` runs them with no flag.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "params": verify_params,
    "flops": verify_flops,
    "memory": verify_memory,
}


def run_checks(models: list[tuple[str, ModelConfig]], checks: list[str] | None = None, **options) -> list[CheckResult]:
    """Every requested check (default: all of CHECKS) on every (name, config). Options a
    check does not take are ignored by it (seq_len and counter are the FLOP check's)."""
    names = list(CHECKS) if not checks else checks
    unknown = [c for c in names if c not in CHECKS]
    if unknown:
        raise KeyError(f"unknown check(s) {', '.join(unknown)}; available: {', '.join(CHECKS)}")
    options = dict(options, toy_cache={})  # toy-size results shared by presets that shrink to one toy model
    return [CHECKS[check](name, cfg, **options) for name, cfg in models for check in names]
