"""The default serving efficiencies (sizing/serve/calibration.py): one pair per GPU type, the
0.05-grid minimum of the squared log error over that GPU's published rows (no neighbour of the
grid does better), and the spread the module and docs/serving.md state, recomputed."""

from __future__ import annotations

import math

import pytest

from sizing.serve.calibration import GRID_STEP, SERVE_EFFICIENCY_BY_GPU, default_efficiencies
from sizing.serve.calibration_fit import log_errors, squared_error
from sizing.serve.published import PUBLISHED_SERVING
from sizing.vocabulary import DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, DEFAULT_SERVE_COMPUTE_EFFICIENCY

# the spread stated in calibration.py and docs/serving.md: (rows, min ratio, max ratio, RMS log error)
STATED = {"h100-sxm": (10, 0.43, 1.76, 0.43), "a100-80gb": (5, 0.68, 1.31, 0.23)}


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


def test_a_gpu_without_rows_keeps_the_stated_assumptions():
    assert default_efficiencies("h100") == SERVE_EFFICIENCY_BY_GPU["h100-sxm"]
    assert default_efficiencies("h200") == (DEFAULT_SERVE_COMPUTE_EFFICIENCY, DEFAULT_SERVE_BANDWIDTH_EFFICIENCY)
