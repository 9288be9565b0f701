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
    fit_groups,
    serve_efficiency,
    session_per_sequence_seconds,
)
from sizing.serve.calibration_fit import log_errors, squared_error
from sizing.serve.published import PUBLISHED_SERVING
from sizing.serve.roofline import StepOverhead
from sizing.vocabulary import DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, DEFAULT_SERVE_COMPUTE_EFFICIENCY

# the spread stated in calibration.py and docs/serving.md: (rows, min ratio, max ratio, RMS log error)
STATED = {"h100-sxm": (10, 0.93, 1.19, 0.09), "a100-80gb": (5, 0.85, 1.09, 0.09), "h200": (7, 0.77, 1.10, 0.14)}


@pytest.mark.parametrize("gpu", sorted(SERVE_EFFICIENCY_BY_GPU))
def test_each_pair_is_the_grid_minimum_of_its_gpus_rows(gpu):
    """The grid minimum over the rows of its fit group (H100 and H200: one pair for the GH100 die),
    and the spread over its own rows as stated."""
    group = next(g for g in fit_groups().values() if gpu in g)
    fitted = [r for r in PUBLISHED_SERVING if r.gpu in group]
    rows = [r for r in PUBLISHED_SERVING if r.gpu == gpu]
    c, b = SERVE_EFFICIENCY_BY_GPU[gpu]
    at = squared_error(fitted, c, b)
    for dc in (-GRID_STEP, 0, GRID_STEP):
        for db in (-GRID_STEP, 0, GRID_STEP):
            nc, nb = round(c + dc, 2), round(b + db, 2)
            if (dc or db) and 0.1 <= nc <= 1 and 0.1 <= nb <= 1:
                assert squared_error(fitted, nc, nb) >= at, (nc, nb)
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


def _session_overhead() -> StepOverhead:
    """The fitted overheads with the static session harness's per-sequence cost (its rows pay it)."""
    return dataclasses.replace(engine_overhead(), per_sequence=session_per_sequence_seconds())


def _total_error(overhead: StepOverhead) -> float:
    """Σ over every calibration row of the squared log error at its GPU's pair and `overhead`."""
    total = 0.0
    for gpu, (c, b) in SERVE_EFFICIENCY_BY_GPU.items():
        rows = [r for r in PUBLISHED_SERVING if r.gpu == gpu]
        total += sum(e * e for e in log_errors(rows, c, b, overhead))
    return total


def test_the_engine_overheads_are_the_grid_minimum():
    """The overheads are a minimum of the joint fit (tools/fit_serve_efficiency.py; the grid in
    sizing/data/serve_efficiency.json): with the pairs held, one grid step either way (10 us and 5 us
    per layer, 2 us per sequence of the session harness) improves the total by under 1% (re-fitting
    every pair per candidate is too slow for a test): 170 us, 40 us per layer, 26 us."""
    o = _session_overhead()
    at = _total_error(o)
    for field, step in (("prefill", 10e-6), ("step", 5e-6), ("per_sequence", 2e-6)):
        for sign in (-1, 1):
            moved = dataclasses.replace(o, **{field: getattr(o, field) + sign * step})
            if getattr(moved, field) >= 0:
                assert _total_error(moved) >= 0.99 * at, (field, sign)


def test_a_current_engine_pays_no_per_sequence_cost_and_old_gqa_rows_read_kv_per_query_head():
    """The model of a current engine has no per-sequence cost (the session harness's 26 us is its
    rows'); the Llama-2-70B rows of TensorRT-LLM before v0.7 read the KV h / h_kv = 64 / 8 times."""
    assert engine_overhead().per_sequence == 0 and session_per_sequence_seconds() == pytest.approx(26e-6)
    old = [r for r in PUBLISHED_SERVING if r.preset == "llama2-70b"]
    assert old and all(r.kv_read_repeat() == 8 for r in old)
    assert all(r.kv_read_repeat() == 1 for r in PUBLISHED_SERVING if r.preset != "llama2-70b")
