"""The units of work of `sizing verify` (runner.py runs them): what a unit is, how a run's
checks become units, how one is run, and how their results return to the serial order.

A *unit* is one call that cannot be split further without losing shared work:
- a per-model check (reference_model.verify.registry.CHECKS) on the models that share its
  `SHARE_KEYS` key, one after another in one process with one toy cache, so that presets of one
  family that shrink to one toy model build and count it once (gpt2-medium/large/xl);
- a per-model check without a share key on one model;
- a check that needs no model (registry.STANDALONE: the parallel probes, the hybrid presets).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reference_model.verify.check import CheckResult
from sizing.inputs import ModelConfig


@dataclass(frozen=True)
class Unit:
    """One call: `check` on each of `models` with `options` (a shared toy cache among them), or
    `check()` alone when `models` is empty. `positions`: where its results go in the serial
    order, one per model (a standalone check: one position for its whole list)."""

    positions: tuple[int, ...]
    label: str
    check: Callable[..., Any]
    models: tuple[tuple[str, ModelConfig], ...] = ()
    options: dict = field(default_factory=dict)
    cost: int = 1  # a rough ordering of the work: the most expensive units start first

    @property
    def size(self) -> int:
        """How many checks the unit stands for (its models, or one standalone check)."""
        return max(1, len(self.models))


def model_cost(cfg: ModelConfig) -> int:
    """How much building and counting `cfg` costs, roughly: its blocks times its experts."""
    return cfg.n_layers * (1 + cfg.n_experts)


def plan_units(
    models: list[tuple[str, ModelConfig]],
    checks: dict[str, Callable[..., CheckResult]],
    share_keys: dict[str, Callable[..., Any]],
    standalone: dict[str, Callable[[], Any]],
    options: dict,
) -> list[Unit]:
    """The units of a run. Result positions follow the serial order: for each model, each check
    in `checks` order; then each standalone check."""
    groups: dict[tuple, list[int]] = {}
    by_position: dict[int, tuple[str, str, ModelConfig]] = {}
    position = 0
    for name, cfg in models:
        for check in checks:
            key_fn = share_keys.get(check)
            key = (check, key_fn(name, cfg, **options)) if key_fn else (check, "model", position)
            groups.setdefault(key, []).append(position)
            by_position[position] = (check, name, cfg)
            position += 1
    units = []
    for positions in groups.values():
        check = by_position[positions[0]][0]
        members = tuple((by_position[p][1], by_position[p][2]) for p in positions)
        label = f"{check} {', '.join(name for name, _ in members)}"
        cost = sum(model_cost(cfg) for _, cfg in members)
        units.append(Unit(tuple(positions), label, checks[check], members, dict(options), cost))
    for name, fn in standalone.items():
        units.append(Unit((position,), name, fn))
        position += 1
    return units


def ordered(finished: list[tuple[Unit, list[CheckResult]]]) -> list[CheckResult]:
    """Every unit's results in the serial order, whatever order the units finished in."""
    placed = []
    for unit, results in finished:
        if unit.models:
            placed += [((p, 0), r) for p, r in zip(unit.positions, results, strict=True)]
        else:
            placed += [((unit.positions[0], k), r) for k, r in enumerate(results)]
    return [r for _, r in sorted(placed, key=lambda item: item[0])]


def run_unit(unit: Unit) -> list[CheckResult]:
    """The unit's results, in its models' order (a standalone check: its own list)."""
    if not unit.models:
        out = unit.check()
        return list(out) if isinstance(out, (list, tuple)) else [out]
    options = dict(unit.options, toy_cache={})  # shared by the models of this unit only
    return [unit.check(name, cfg, **options) for name, cfg in unit.models]


def worker_failure(unit: Unit, text: str) -> RuntimeError:
    return RuntimeError(f"the check {unit.label!r} failed in a worker process:\n{text}")


def format_exception(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
