"""The one constant per software stack the step model does not derive: the share of its kernel
time a stack loses to what runs between and around the kernels (framework and Python overhead,
gaps between kernel launches, allocator and hook work, communication kernels competing for SMs).

The per-operation terms are costed from kernel measurements; a running job is slower than the
sum of its kernels by an amount that depends on its software, not its shape. That difference is
one number per stack, `overhead`, fitted across the published runs of that stack from many
sources (sizing.parallel.calibration), never per row, and stored with its fit description in
sizing/data/step_time.json "stack_overhead". A stack with no published runs takes the pooled
value of all runs (and the bands say it has no neighbours). A calibration file from
`sizing calibrate` replaces the built-in values for the stacks it fitted.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from sizing.parallel.stepdata import _data, stack

_ACTIVE: dict[str, float] = {}  # a calibration file's values in force (sizing.parallel.calibration.use)


@cache
def builtin_overheads() -> dict:
    """The fitted overheads of sizing/data/step_time.json "stack_overhead": stack -> value, plus
    "family:<name>" for each family and "pooled" over every run."""
    entry = _data().get("stack_overhead", {})
    return {k: v["overhead"] for k, v in entry.get("fitted", {}).items()}


def fitted_overhead_table() -> dict:
    """The "stack_overhead" fits with what each was fitted on (runs, sources)."""
    return _data().get("stack_overhead", {}).get("fitted", {})


def lookup(fitted: dict, stack_key: str) -> float:
    """A stack's own fitted overhead, else its family's, else the pooled one (0 when nothing is fitted)."""
    if stack_key in fitted:
        return fitted[stack_key]
    family = f"family:{stack(stack_key).family}"
    return fitted.get(family, fitted.get("pooled", 0.0))


def overhead_fraction(opts, gpu_key: str) -> float:
    """The stack's overhead on its kernel time: the run's own (StepOptions.overhead), a calibration
    file's, the built-in fitted one (sizing/data/step_time.json)."""
    if opts.overhead is not None:
        return opts.overhead
    if opts.stack in _ACTIVE:
        return _ACTIVE[opts.stack]
    return lookup(builtin_overheads(), opts.stack)


def set_active(values: dict[str, float]) -> None:
    """Use a calibration's stack overheads for every prediction after this (sizing calibrate's file)."""
    _ACTIVE.clear()
    _ACTIVE.update(values)


def load_calibration(path: str | Path) -> dict[str, float]:
    """The stack overheads of a calibration file written by `sizing calibrate`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {k: float(v["overhead"]) for k, v in data["stacks"].items()}
