"""How far to trust a predicted step: a band from the cross-validated errors of the published runs
most like it (sizing/data/step_time_cv.json, written by tools/fit_step_overheads.py).

Each published run was predicted with the stack overheads fitted without its source
(sizing.parallel.calibration.cross_validate); its error e = predicted / measured - 1. For a new
prediction p, the runs "of this kind" are those of the same stack on the same GPU class with the
same kind of model (dense or mixture of experts), else of the same stack family on that GPU
class, else of any stack on that GPU class (a mixture of experts on a stack with no published
MoE run takes the MoE runs of the others); their 10th and 90th percentile errors bound the
measured step: p / (1 + e90) to p / (1 + e10), and their median |e| is the "±N%". Where no
published run is of this kind (a GPU, or MoE on a GPU class, not covered) the band says so and
spans the worst cross-validated error of all runs, rather than pretend to a tight one.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sizing.parallel.stepdata import _data, stack

CV_FILE = Path(__file__).resolve().parent.parent / "data" / "step_time_cv.json"
MIN_NEIGHBOURS = 5  # fewer runs than this do not make a band of their own


@dataclass(frozen=True)
class StepBand:
    low_seconds: float
    high_seconds: float
    typical: float  # median |cross-validated error| of the runs behind the band
    runs: int
    kind: str  # which runs: "megatron-core on H100, dense"
    covered: bool  # False: no published run of this kind

    def scaled(self, value: float, inverse: bool = False) -> tuple[float, float]:
        """The band of a quantity proportional to the step (GPU-hours, days) or, `inverse`, to its
        reciprocal (MFU, tokens/s), around its predicted `value`."""
        mid = (self.low_seconds * self.high_seconds) ** 0.5
        lo, hi = self.low_seconds / mid, self.high_seconds / mid
        return (value / hi, value / lo) if inverse else (value * lo, value * hi)

    def describe(self) -> str:
        if not self.covered:
            worst = f"±{self.typical:.0%}"
            return f"no published runs of this kind ({self.kind}); the band is the worst cross-validated error, {worst}"
        return f"±{self.typical:.0%} on {self.runs} published runs of this kind ({self.kind})"

    def text(self, seconds: float) -> str:
        """'3.1 s step (2.8-3.7 s: ±9% on 42 published runs of this kind (...))'."""
        return f"{seconds:.3g} s step ({self.low_seconds:.3g}-{self.high_seconds:.3g} s: {self.describe()})"

    def to_dict(self) -> dict:
        return {
            "low_seconds": self.low_seconds,
            "high_seconds": self.high_seconds,
            "typical_error": self.typical,
            "runs": self.runs,
            "kind": self.kind,
            "covered": self.covered,
            "source": "leave-one-source-out cross-validated errors of the published runs (reports/published-runs.md)",
        }


@cache
def cv_report() -> dict:
    """sizing/data/step_time_cv.json: per-run cross-validated errors and their summaries."""
    if not CV_FILE.exists():
        return {"rows": [], "summary": {}, "summary_by_publication": {}}
    return json.loads(CV_FILE.read_text(encoding="utf-8"))


def _cv_rows() -> tuple[dict, ...]:
    return tuple(cv_report()["rows"])


def gpu_class(gpu_key: str) -> str:
    """The step-time constants a GPU uses (H200 and H800 are H100-class, the A100 40GB as the 80GB)."""
    from sizing.inputs import get_gpu

    key = get_gpu(gpu_key).key
    return _data()["aliases"].get(key, key)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@cache
def _neighbours(stack_key: str, gpu_key: str, moe: bool) -> tuple[tuple[float, ...], str]:
    rows, cls = _cv_rows(), gpu_class(gpu_key)
    family = stack(stack_key).family
    kind = "mixture of experts" if moe else "dense"
    for label, match in (
        (f"{stack_key} on {cls}, {kind}", lambda r: r["stack"] == stack_key),
        (f"{family}-family stacks on {cls}, {kind}", lambda r: r["family"] == family),
        (f"every stack on {cls}, {kind}", lambda r: True),
    ):
        errors = [r["cv_error"] for r in rows if match(r) and r["gpu_class"] == cls and r["moe"] == moe]
        if len(errors) >= MIN_NEIGHBOURS:
            return tuple(errors), label
    return (), f"{stack_key} on {cls}, {kind}"


@cache
def _band_errors(stack_key: str, gpu_key: str, moe: bool) -> tuple[float, float, float, int, str, bool]:
    """(10th and 90th percentile error, median |error|, runs, kind, covered) of a kind of run."""
    errors, kind = _neighbours(stack_key, gpu_key, moe)
    if errors:
        typical = statistics.median(abs(e) for e in errors)
        return _percentile(list(errors), 0.1), _percentile(list(errors), 0.9), typical, len(errors), kind, True
    every = [r["cv_error"] for r in _cv_rows()] or [0.0]
    worst = max(abs(e) for e in every)
    return -min(worst, 0.9), worst, worst, 0, kind, False


def step_band(step_seconds: float, stack_key: str, gpu_key: str, moe: bool) -> StepBand:
    """The band around a predicted step (see the module)."""
    lo, hi, typical, runs, kind, covered = _band_errors(stack_key, gpu_key, moe)
    return StepBand(step_seconds / (1 + hi), step_seconds / (1 + lo), typical, runs, kind, covered)
