"""The default serving efficiencies, one pair per GPU type, calibrated against the project's own
table of published measurements (sizing/serve/published.py: TensorRT-LLM v0.6.1, static batch).

For each GPU type with rows, (compute efficiency, bandwidth efficiency) is the point of a 0.05
grid over [0.1, 1] x [0.1, 1] that minimises Σ log(measured / predicted)² over that GPU's rows
(throughput rows as output tokens/s per GPU, latency rows as first-token ms): one model per GPU
type, no per-row fitting. tests/test_serve_calibration.py checks the stated pairs are that grid
minimum (no neighbour does better) and the spread below. A GPU without rows keeps the stated
assumptions DEFAULT_SERVE_COMPUTE_EFFICIENCY / DEFAULT_SERVE_BANDWIDTH_EFFICIENCY.

    GPU        rows  compute  bandwidth  measured / predicted (min .. max)  RMS log error
    h100-sxm   10    0.40     0.45       0.43 .. 1.76                       0.43
    a100-80gb  5     0.70     0.60       0.68 .. 1.31                       0.23

The H100 rows run FP8 (weights, KV cache and matmuls), the A100 rows FP16; the pair is applied
to every dtype on that GPU. The spread is what one pair per GPU cannot absorb: engines reach a
different share of the roofline at different batch and sequence shapes.
"""

from __future__ import annotations

import math

from ..hardware import get_gpu
from ..vocabulary import DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, DEFAULT_SERVE_COMPUTE_EFFICIENCY

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


def predicted(row, compute_efficiency: float, bandwidth_efficiency: float) -> float:
    """A published row's metric predicted at these efficiencies (first-token ms, or output
    tokens/s per GPU with the prefill included)."""
    from .estimate import serve

    est = serve(
        row.preset,
        row.prompt,
        row.output,
        row.batch,
        row.gpu,
        tp=row.tp,
        weight_dtype=row.dtype,
        kv_dtype=row.dtype,
        activation_dtype=row.dtype,
        compute_efficiency=compute_efficiency,
        bandwidth_efficiency=bandwidth_efficiency,
    )
    if row.metric == "first-token latency ms":
        return est.ttft_seconds * 1e3
    return est.output_tokens_per_second / row.tp


def log_errors(rows, compute_efficiency: float, bandwidth_efficiency: float) -> list[float]:
    """log(measured / predicted) per row: > 0 where the measurement is better than predicted."""
    out = []
    for row in rows:
        p = predicted(row, compute_efficiency, bandwidth_efficiency)
        ratio = row.value / p if row.metric != "first-token latency ms" else p / row.value
        out.append(math.log(ratio))
    return out


def squared_error(rows, compute_efficiency: float, bandwidth_efficiency: float) -> float:
    return sum(e * e for e in log_errors(rows, compute_efficiency, bandwidth_efficiency))
