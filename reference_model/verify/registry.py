"""The checks of `sizing verify`, registered in one place, and the calls sizing/cli/verify.py
makes: `check_units` (the work of a run) and `iter_checks` (running it on every CPU), or
`run_checks` (both, the results in order).

Each per-model check is a function (name, cfg, **options) -> CheckResult (check.py) with a table
(headers, rows) and an `ok` flag, and lives beside the probe it reports on:

    params  counting.verify_params       numel() by component of the model built on meta
    flops   verify.flops.verify_flops    FlopCounterMode and fvcore, full size on meta and toy size on CPU
    memory  verify.memory.verify_memory  saved activations, KV cache and optimizer state on CPU

To add a check: write the function beside its probe, register it in CHECKS (with a SHARE_KEYS
entry if models can share its work), or in STANDALONE if it needs no model, and add its flag to
sizing/cli/verify.py. The runner (runner.py) schedules whatever is registered. The order of
CHECKS is the order `sizing verify` reports them with no flag.

Imports flow one way: check <- probes <- verify <- verify_report (reports/verification.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator

from reference_model.counting import verify_params
from reference_model.verify.check import CheckResult
from reference_model.verify.flops import flops_share_key, verify_flops
from reference_model.verify.memory import memory_share_key, verify_memory
from reference_model.verify.runner import run_units
from reference_model.verify.units import Unit, ordered, plan_units
from sizing.inputs import ModelConfig

__all__ = [
    "CHECKS",
    "SHARE_KEYS",
    "STANDALONE",
    "CheckResult",
    "check_units",
    "iter_checks",
    "run_checks",
    "verify_flops",
    "verify_memory",
    "verify_params",
]

# name -> check function, in the order `sizing verify` runs them with no flag.
CHECKS: dict[str, Callable[..., CheckResult]] = {
    "params": verify_params,
    "flops": verify_flops,
    "memory": verify_memory,
}
# check -> (name, cfg, **options) -> the key of the work two models' checks can share (a toy
# model): the parallel runner runs the models of one key in one process, one after another.
SHARE_KEYS: dict[str, Callable[..., tuple]] = {"flops": flops_share_key, "memory": memory_share_key}
# Checks that need no model, each returning a CheckResult or a list of them: name -> (module,
# function), looked up when a run is planned (so a test's stand-in for the function is seen).
STANDALONE: dict[str, tuple[str, str]] = {
    "parallel": ("reference_model.verify.parallel", "verify_parallel"),
    "hybrid": ("reference_model.verify.hybrid", "verify_hybrid_presets"),
}


def check_units(
    models: list[tuple[str, ModelConfig]],
    checks: list[str] | None = None,
    standalone: list[str] = (),
    share: bool = True,
    **options,
) -> list[Unit]:
    """The units of work (units.py) of every requested check (default: all of CHECKS) on every
    (name, config), then each requested STANDALONE check. Options a check does not take are
    ignored by it (seq_len and counter are the FLOP check's). share=False: every model counted
    on its own, as the verification page always has (no "same toy config as" notes)."""
    names = list(CHECKS) if not checks else checks
    unknown = [c for c in names if c not in CHECKS] + [c for c in standalone if c not in STANDALONE]
    if unknown:
        raise KeyError(f"unknown check(s) {', '.join(unknown)}; available: {', '.join([*CHECKS, *STANDALONE])}")
    functions = {name: _standalone(name) for name in standalone}
    return plan_units(models, {c: CHECKS[c] for c in names}, SHARE_KEYS if share else {}, functions, options)


def _standalone(name: str) -> Callable[[], CheckResult | list[CheckResult]]:
    module, function = STANDALONE[name]
    return getattr(importlib.import_module(module), function)


def iter_checks(units: list[Unit], workers: int | None = None) -> Iterator[tuple[Unit, list[CheckResult]]]:
    """(unit, results) as each unit finishes, on `workers` processes (default: every usable CPU)."""
    return run_units(units, workers)


def run_checks(
    models: list[tuple[str, ModelConfig]],
    checks: list[str] | None = None,
    *,
    workers: int | None = 1,
    standalone: list[str] = (),
    **options,
) -> list[CheckResult]:
    """Every requested check on every (name, config), then the standalone ones, in that order
    (models outermost), on `workers` processes (1: here, one after another; None: every usable CPU)."""
    units = check_units(models, checks, standalone, **options)
    return ordered(list(run_units(units, workers)))
