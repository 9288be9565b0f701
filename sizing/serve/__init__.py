"""Serving: prefill and decode on the roofline, time to first token, time per output token,
tokens/s, $ per million tokens and memory per GPU.

    from sizing.serve import serve
    est = serve("llama2-7b", prompt=4096, output=256, gpu="h100")
    est.ttft_seconds, est.tpot_seconds, est.to_dict()

work.py (FLOPs and bytes of a prefill and a decode step, from sizing.flops / params / memory),
roofline.py (times, the TP all-reduce, the ridge point, the sum over decode steps),
estimate.py (serve()), result.py (ServeEstimate). `sizing serve` renders the same object.
"""

from __future__ import annotations

from .estimate import serve
from .result import ServeEstimate, ServeSettings, StepEstimate
from .roofline import Roofline, ridge_intensity, tp_ring_allreduce_seconds
from .work import decode_step_flops, expected_experts_hit, prefill_flops, step_bytes

__all__ = [
    "Roofline",
    "ServeEstimate",
    "ServeSettings",
    "StepEstimate",
    "decode_step_flops",
    "expected_experts_hit",
    "prefill_flops",
    "ridge_intensity",
    "serve",
    "step_bytes",
    "tp_ring_allreduce_seconds",
]
