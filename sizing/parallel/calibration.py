"""Fitting the stack overheads (sizing.parallel.overhead) to measured steps, and the
leave-one-source-out cross-validation that says how far to trust the model.

An observation is one measured step with the model's prediction at zero overhead split into the
kernel time the overhead multiplies and the rest: predicted(k) = base + k x kernels. Per stack,
k minimises the sum over its observations of |log(predicted / measured)|, each observation
weighted 1 / (observations of its source), so that every source counts once and a 200-row table
does not outvote a 3-row paper. A stack without observations takes the pooled k fitted over all
of them. The same code fits the built-in constants (tools/fit_step_overheads.py) and a user's
measurements (`sizing calibrate`).

Leave-one-source-out: for each source, refit every stack's k without that source's rows and
predict them; the errors of those predictions are the model's cross-validated errors, which the
bands (sizing.parallel.band) are made of.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from sizing.parallel.overhead import lookup
from sizing.parallel.stepdata import stack

GRID_LOW, GRID_HIGH, GRID_STEP = -0.3, 2.0, 0.005  # overhead search range: -30% to +200% of kernel time
POOLED = "pooled"
MIN_SOURCES = 2  # a stack gets its own overhead only when its runs come from this many sources
MIN_RUNS = 5  # and number at least this many (two one-row sources would be a constant per row)


@dataclass(frozen=True)
class Observation:
    name: str
    source: str
    stack: str
    gpu: str
    moe: bool
    base_seconds: float  # predicted step at zero overhead
    kernel_seconds: float  # what the overhead multiplies
    measured_seconds: float

    def predicted(self, overhead: float) -> float:
        return self.base_seconds + overhead * self.kernel_seconds

    def error(self, overhead: float) -> float:
        """predicted / measured - 1 (negative: predicted too fast)."""
        return self.predicted(overhead) / self.measured_seconds - 1


def _loss(obs: list[Observation], weights: list[float], overhead: float) -> float:
    total = 0.0
    for o, w in zip(obs, weights, strict=True):
        p = o.predicted(overhead)
        total += w * (abs(math.log(p / o.measured_seconds)) if p > 0 else 1e9)
    return total


def fit_overhead(obs: list[Observation]) -> float:
    """The k that minimises the source-weighted sum of |log error| (grid, then a finer grid)."""
    if not obs:
        return 0.0
    per_source = Counter(o.source for o in obs)
    weights = [1 / per_source[o.source] for o in obs]
    steps = round((GRID_HIGH - GRID_LOW) / GRID_STEP)
    best = min((GRID_LOW + i * GRID_STEP for i in range(steps + 1)), key=lambda k: _loss(obs, weights, k))
    fine = [best + GRID_STEP * (i / 20 - 1) for i in range(41)]
    return round(min(fine, key=lambda k: _loss(obs, weights, k)), 4)


def own_stacks(obs: list[Observation], min_sources: int = MIN_SOURCES, min_runs: int = MIN_RUNS) -> frozenset[str]:
    """The stacks that get a constant of their own: those whose runs come from at least
    `min_sources` sources and number at least `min_runs` (a constant is fitted across sources,
    never to one table, nor to a row or two)."""
    sources: dict[str, set[str]] = defaultdict(set)
    runs: Counter = Counter()
    for o in obs:
        sources[o.stack].add(o.source)
        runs[o.stack] += 1
    return frozenset(s for s, found in sources.items() if len(found) >= min_sources and runs[s] >= min_runs)


def fit_stacks(
    obs: list[Observation], min_sources: int = MIN_SOURCES, own=None, min_runs: int = MIN_RUNS
) -> dict[str, float]:
    """stack -> fitted overhead for the stacks of `own` (default: own_stacks); "family:<f>" over
    each family's runs (what every other stack takes); POOLED over all."""
    own = own_stacks(obs, min_sources, min_runs) if own is None else own
    groups: dict[str, list[Observation]] = defaultdict(list)
    for o in obs:
        if o.stack in own:
            groups[o.stack].append(o)
        groups[f"family:{stack(o.stack).family}"].append(o)
    out = {key: fit_overhead(rows) for key, rows in sorted(groups.items())}
    out[POOLED] = fit_overhead(obs)
    return out


def overhead_for(fitted: dict[str, float], stack_key: str) -> float:
    return lookup(fitted, stack_key)


def cross_validate(
    obs: list[Observation], unit=lambda o: o.source, min_sources: int = MIN_SOURCES, min_runs: int = MIN_RUNS
) -> dict[str, float]:
    """Leave-one-unit-out: name -> the error of each observation predicted with the stack
    overheads refitted without its unit (source by default; any grouping, e.g. a publication).
    Which stacks have a constant of their own is decided once, on all the runs (the model's
    structure); each fold refits the values, and a stack left without runs takes its family's."""
    own = own_stacks(obs, min_sources, min_runs)
    out = {}
    for held in sorted({unit(o) for o in obs}):
        fitted = fit_stacks([o for o in obs if unit(o) != held], own=own)
        for o in obs:
            if unit(o) == held:
                out[o.name] = o.error(overhead_for(fitted, o.stack))
    return out


@dataclass(frozen=True)
class ErrorSummary:
    rows: int
    median_abs: float
    worst: float
    too_fast: float  # share of rows predicted faster than measured

    def to_dict(self) -> dict:
        return {"rows": self.rows, "median_abs": self.median_abs, "worst": self.worst, "too_fast": self.too_fast}


def summarise(errors: list[float]) -> ErrorSummary:
    if not errors:
        return ErrorSummary(0, 0.0, 0.0, 0.0)
    return ErrorSummary(
        len(errors),
        statistics.median(abs(e) for e in errors),
        max(errors, key=abs),
        sum(e < 0 for e in errors) / len(errors),
    )
