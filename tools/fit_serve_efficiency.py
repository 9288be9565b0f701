"""Refit the serving step model's efficiencies (sizing/data/serve_efficiency.json): one (compute,
bandwidth, attention) triple per GPU type with calibration rows and one engine overhead set for
all, the log-space least squares over the rows of sizing/data/published_serving.json whose `use`
is "calibration".

    python tools/fit_serve_efficiency.py            # prints the fit; writes nothing

The triple moves on a 0.05 grid over [0.1, 1]^3 and the overheads on the grid the data file states,
by coordinate descent from the file's current values until no single grid step improves the total
(tests/test_serve_calibration.py checks the result is such a minimum). Slow: a few minutes.
"""

from __future__ import annotations

import dataclasses
import math

from sizing.serve.calibration import (
    engine_overhead,
    fit_groups,
    fitted_attention,
    fitted_efficiencies,
    session_per_sequence_seconds,
)
from sizing.serve.calibration_fit import log_errors
from sizing.serve.published import PUBLISHED_SERVING
from sizing.serve.roofline import StepOverhead

STEP = 0.05
FIT_ATTENTION = False  # True: a third efficiency, the attention kernel's, per GPU (overfits 5-10 rows)
OVERHEAD_STEPS = {
    "prefill": (10e-6, 500e-6),
    "step": (5e-6, 100e-6),
    "per_sequence": (2e-6, 40e-6),
}  # per layer; per seq


def _error(rows, triple, overhead) -> float:
    return sum(e * e for e in log_errors(rows, triple[0], triple[1], overhead, triple[2] if FIT_ATTENTION else None))


def fit_pair(rows, start: tuple, overhead: StepOverhead) -> tuple[tuple, float]:
    """The (compute, bandwidth, attention) triple on the grid no neighbour improves, from `start`."""
    best, at = start, _error(rows, start, overhead)
    steps = (-STEP, 0, STEP)
    while True:
        moves = [
            (round(best[0] + dc, 2), round(best[1] + db, 2), round(best[2] + da, 2))
            for dc in steps
            for db in steps
            for da in (steps if FIT_ATTENTION else (0,))
            if dc or db or da
        ]
        scored = [(_error(rows, m, overhead), m) for m in moves if all(0.1 <= x <= 1 for x in m)]
        err, move = min(scored)
        if err >= at:
            return best, at
        best, at = move, err


def fit_all(pairs: dict, overhead: StepOverhead) -> tuple[dict, float]:
    """Each fit group's pair (GPUs of one die share one: the group field of the data file)."""
    total, fitted = 0.0, {}
    for gpus in fit_groups().values():
        rows = [r for r in PUBLISHED_SERVING if r.gpu in gpus]
        pair, err = fit_pair(rows, pairs[gpus[0]], overhead)
        fitted.update(dict.fromkeys(gpus, pair))
        total += err
    return fitted, total


def main() -> None:
    attention = fitted_attention()
    pairs = {gpu: (c, b, attention[gpu] or b) for gpu, (c, b) in fitted_efficiencies().items()}
    overhead = dataclasses.replace(engine_overhead(), per_sequence=session_per_sequence_seconds())
    pairs, total = fit_all(pairs, overhead)
    improved = True
    while improved:
        improved = False
        for field, (step, top) in OVERHEAD_STEPS.items():
            for sign in (-1, 1):
                value = round(getattr(overhead, field) + sign * step, 9)
                if not 0 <= value <= top:
                    continue
                trial = dataclasses.replace(overhead, **{field: value})
                trial_pairs, trial_total = fit_all(pairs, trial)
                if trial_total < total - 1e-12:
                    overhead, pairs, total, improved = trial, trial_pairs, trial_total, True
                    print(f"  {field} -> {value:g}: total {total:.4f}", flush=True)
    print("overhead (per_sequence: the static session harness's):", overhead)
    for gpu, pair in pairs.items():
        rows = [r for r in PUBLISHED_SERVING if r.gpu == gpu]
        errors = log_errors(rows, pair[0], pair[1], overhead, pair[2])
        ratios = [math.exp(e) for e in errors]
        rms = math.sqrt(sum(e * e for e in errors) / len(errors))
        spread = f"ratios {min(ratios):.2f}..{max(ratios):.2f}, RMS {rms:.2f}"
        print(f"{gpu}: compute, bandwidth, attention {pair}, rows {len(rows)}, {spread}")


if __name__ == "__main__":
    main()
