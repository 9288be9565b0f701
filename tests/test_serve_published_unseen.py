"""Published rows the calibration did not see (sizing/serve/published_unseen.py): none beats the
roofline bound, and most land within a factor 1.5 of the default prediction (the GPU's
calibrated efficiencies, or the stated 0.6 / 0.8 on a GPU without calibration rows)."""

from __future__ import annotations

import math

import pytest

from sizing.inputs.presets import PRESETS
from sizing.serve.calibration import default_efficiencies
from sizing.serve.calibration_fit import log_errors
from sizing.serve.published import bound_for
from sizing.serve.published_unseen import UNSEEN_SERVING


@pytest.mark.parametrize("row", UNSEEN_SERVING, ids=lambda r: f"{r.preset}-{r.gpu}-b{r.batch}-{r.prompt}x{r.output}")
def test_the_bound_is_never_beaten(row):
    assert row.preset in PRESETS and row.source
    bound = bound_for(row)
    assert bound <= row.value if row.metric == "first-token latency ms" else bound >= row.value


def test_most_rows_within_a_factor_1_5_of_the_default_prediction():
    ratios = []
    for row in UNSEEN_SERVING:
        (error,) = log_errors([row], *default_efficiencies(row.gpu))
        ratios.append(math.exp(error))  # measured / predicted (latency: predicted / measured)
    within = [r for r in ratios if 1 / 1.5 <= r <= 1.5]
    # 9 of 11 (the 4 L40S rows at 0.87-0.93); the 128-token first-token latencies at tp 4 land at
    # 0.81 (H100 and A100) since the overheads are per layer (80 layers, not the 32 of the rows
    # they were fitted on); the misses, 0.58 and 0.61, are H200's v0.7a Llama-2-70B at 128 in /
    # 2048 and 4096 out (its engine reached about half the bandwidth the launch-blog rows did: the
    # model over-predicts them)
    assert len(ratios) == 11 and len(within) == 9 and min(ratios) == pytest.approx(0.58, abs=0.005)


def test_l40s_own_rows_at_the_borrowed_pair():
    """L40S runs at the A100's pair (sizing/data/serve_efficiency.json, borrowed); its own
    published FP8 rows (TensorRT-LLM v0.5.0, LLaMA 7B at 128/128, 128/2048, 2048/128, 2048/2048)
    measure 0.88, 0.93, 0.87, 0.91 of the prediction: the borrowed pair over-predicts L40S by ~10%,
    within the 1.5x band the borrowed note states."""
    rows = [r for r in UNSEEN_SERVING if r.gpu == "l40s"]
    ratios = [math.exp(log_errors([r], *default_efficiencies("l40s"))[0]) for r in rows]
    assert [round(x, 2) for x in ratios] == [0.88, 0.93, 0.87, 0.91]
