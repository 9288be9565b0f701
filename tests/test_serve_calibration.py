"""The default serving efficiencies (sizing/serve/calibration.py): one pair per GPU type, the
0.05-grid minimum of the squared log error over that GPU's published rows (no neighbour of the
grid does better), and the spread the module and docs/serving.md state, recomputed."""

from __future__ import annotations

import dataclasses
import math

import pytest

from sizing.serve.calibration import (
    GRID_STEP,
    SERVE_EFFICIENCY_BY_GPU,
    default_efficiencies,
    engine_overhead,
    serve_efficiency,
)
from sizing.serve.calibration_fit import log_errors, squared_error
from sizing.serve.published import PUBLISHED_SERVING
from sizing.serve.roofline import StepOverhead
from sizing.vocabulary import DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, DEFAULT_SERVE_COMPUTE_EFFICIENCY

# the spread stated in calibration.py and docs/serving.md: (rows, min ratio, max ratio, RMS log error)
STATED = {"h100-sxm": (10, 0.50, 1.58, 0.34), "a100-80gb": (5, 0.83, 1.08, 0.10), "h200": (7, 0.48, 1.27, 0.31)}


@pytest.mark.parametrize("gpu", sorted(SERVE_EFFICIENCY_BY_GPU))
def test_each_pair_is_the_grid_minimum_of_its_gpus_rows(gpu):
    rows = [r for r in PUBLISHED_SERVING if r.gpu == gpu]
    c, b = SERVE_EFFICIENCY_BY_GPU[gpu]
    at = squared_error(rows, c, b)
    for dc in (-GRID_STEP, 0, GRID_STEP):
        for db in (-GRID_STEP, 0, GRID_STEP):
            nc, nb = round(c + dc, 2), round(b + db, 2)
            if (dc or db) and 0.1 <= nc <= 1 and 0.1 <= nb <= 1:
                assert squared_error(rows, nc, nb) >= at, (nc, nb)
    errors = log_errors(rows, c, b)
    n, low, high, rms = STATED[gpu]
    assert len(rows) == n
    assert min(math.exp(e) for e in errors) == pytest.approx(low, abs=0.005)
    assert max(math.exp(e) for e in errors) == pytest.approx(high, abs=0.005)
    assert math.sqrt(sum(e * e for e in errors) / n) == pytest.approx(rms, abs=0.005)


def test_a_gpu_without_rows_borrows_its_kins_pair_or_keeps_the_stated_assumptions():
    assert default_efficiencies("h100") == SERVE_EFFICIENCY_BY_GPU["h100-sxm"]
    assert default_efficiencies("h800") == SERVE_EFFICIENCY_BY_GPU["h100-sxm"]  # the same die
    assert default_efficiencies("l40s") == SERVE_EFFICIENCY_BY_GPU["a100-80gb"]  # pre-Hopper kernels
    assert "as a100-80gb" in serve_efficiency("l40s").basis
    assert default_efficiencies("mi300x") == (DEFAULT_SERVE_COMPUTE_EFFICIENCY, DEFAULT_SERVE_BANDWIDTH_EFFICIENCY)


def _total_error(overhead: StepOverhead) -> float:
    """Σ over every calibration row of the squared log error at its GPU's pair and `overhead`."""
    total = 0.0
    for gpu, (c, b) in SERVE_EFFICIENCY_BY_GPU.items():
        rows = [r for r in PUBLISHED_SERVING if r.gpu == gpu]
        total += sum(e * e for e in log_errors(rows, c, b, overhead))
    return total


def test_the_engine_overheads_are_the_grid_minimum():
    """The overheads are the minimum of the joint fit, each candidate with its pairs re-fitted
    (sizing/data/serve_efficiency.json); with the pairs held, one grid step either way (1 ms,
    0.25 ms, 2 us) improves the total by under 1% (re-fitting every pair per candidate is too slow
    for a test)."""
    o = engine_overhead()
    at = _total_error(o)
    for field, step in (("prefill", 1e-3), ("step", 0.25e-3), ("per_sequence", 2e-6)):
        for sign in (-1, 1):
            moved = dataclasses.replace(o, **{field: getattr(o, field) + sign * step})
            if getattr(moved, field) >= 0 and not (field == "per_sequence" and sign > 0):  # 40 us: the grid's edge
                assert _total_error(moved) >= 0.99 * at, (field, sign)
