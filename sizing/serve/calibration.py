"""The default serving efficiencies, one pair per GPU type, calibrated against the project's own
table of published measurements (sizing/serve/published.py: TensorRT-LLM v0.6.1, static batch).

For each GPU type with rows, (compute efficiency, bandwidth efficiency) is the point of a 0.05
grid over [0.1, 1] x [0.1, 1] that minimises Σ log(measured / predicted)² over that GPU's rows
(throughput rows as output tokens/s per GPU, latency rows as first-token ms): one model per GPU
type, no per-row fitting. calibration_fit.py scores a pair against the rows;
tests/test_serve_calibration.py checks the stated pairs are that grid minimum (no neighbour
does better) and the spread below. A GPU without rows keeps the stated
assumptions DEFAULT_SERVE_COMPUTE_EFFICIENCY / DEFAULT_SERVE_BANDWIDTH_EFFICIENCY.

    GPU        rows  compute  bandwidth  measured / predicted (min .. max)  RMS log error
    h100-sxm   10    0.40     0.45       0.43 .. 1.76                       0.43
    a100-80gb  5     0.70     0.60       0.68 .. 1.31                       0.23

The H100 rows run FP8 (weights, KV cache and matmuls), the A100 rows FP16; the pair is applied
to every dtype on that GPU. The spread is what one pair per GPU cannot absorb: engines reach a
different share of the roofline at different batch and sequence shapes.
"""

from __future__ import annotations

from sizing.inputs import get_gpu
from sizing.vocabulary import DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, DEFAULT_SERVE_COMPUTE_EFFICIENCY

CALIBRATION_SOURCE = "fit to sizing/serve/published.py (TensorRT-LLM v0.6.1 performance page)"
SERVE_EFFICIENCY_BY_GPU: dict[str, tuple[float, float]] = {
    "h100-sxm": (0.40, 0.45),
    "a100-80gb": (0.70, 0.60),
}
GRID_STEP = 0.05


def default_efficiencies(gpu: str) -> tuple[float, float]:
    """(compute, bandwidth) efficiency `sizing serve` uses on `gpu` when none is given."""
    key = get_gpu(gpu).key
    return SERVE_EFFICIENCY_BY_GPU.get(key, (DEFAULT_SERVE_COMPUTE_EFFICIENCY, DEFAULT_SERVE_BANDWIDTH_EFFICIENCY))
