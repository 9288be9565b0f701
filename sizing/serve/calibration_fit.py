"""The score of a serving-efficiency pair against published rows (what calibration.py's pairs
minimise): each row predicted by serve() at the pair, its log ratio to the measurement."""

from __future__ import annotations

import math

from sizing.serve.published import predicted


def log_errors(
    rows, compute_efficiency: float, bandwidth_efficiency: float, overhead=None, attention=None
) -> list[float]:
    """log(measured / predicted) per row: > 0 where the measurement is better than predicted
    (at the engine's calibrated overheads unless `overhead` is given; the attention efficiency
    = the bandwidth efficiency unless `attention` is given)."""
    out = []
    for row in rows:
        p = predicted(row, compute_efficiency, bandwidth_efficiency, overhead, attention)
        ratio = row.value / p if row.metric != "first-token latency ms" else p / row.value
        out.append(math.log(ratio))
    return out


def squared_error(rows, compute_efficiency: float, bandwidth_efficiency: float) -> float:
    return sum(e * e for e in log_errors(rows, compute_efficiency, bandwidth_efficiency))
