"""Serving: prefill and decode on the roofline, time to first token, time per output token,
tokens/s, $ per million tokens and memory per GPU.

    from sizing.serve import serve
    est = serve("llama2-7b", prompt=4096, output=256, gpu="h100")
    est.ttft_seconds, est.tpot_seconds, est.to_dict()

work.py (FLOPs and bytes of a prefill and a decode step, from sizing.formulas.flops / params / memory),
roofline.py (times, the TP all-reduce, the ridge point, the sum over decode steps),
estimate.py (serve()), result.py (ServeEstimate). `sizing serve` renders the same object.
"""

from __future__ import annotations

from sizing.serve.estimate import serve
from sizing.serve.result import ServeEstimate, ServeSettings, StepEstimate
from sizing.serve.roofline import Roofline, ridge_intensity, tp_ring_allreduce_seconds
from sizing.serve.work import decode_step_flops, expected_experts_hit, prefill_flops, step_bytes

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


# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "CALIBRATION_SOURCE": "sizing.serve.calibration",
    "CapacityPlan": "sizing.serve.capacity",
    "CapacityRow": "sizing.serve.capacity",
    "DisaggPlan": "sizing.serve.disagg",
    "KV_LINKS": "sizing.serve.disagg",
    "LoadPoint": "sizing.serve.latency",
    "RequestMix": "sizing.serve.requests",
    "SEARCH_KV_DTYPES": "sizing.serve.capacity",
    "SEARCH_TP": "sizing.serve.capacity",
    "SEARCH_WEIGHT_DTYPES": "sizing.serve.capacity",
    "Saturated": "sizing.serve.load",
    "ServingLoad": "sizing.serve.load",
    "capacity_question": "sizing.serve.capacity",
    "fixed_mix": "sizing.serve.requests",
    "latency_at": "sizing.serve.latency",
    "mix_from_rows": "sizing.serve.requests",
    "plan_disaggregated": "sizing.serve.disagg",
    "read_trace": "sizing.serve.requests",
    "saturation_rate": "sizing.serve.replica",
    "ContinuousBatching": "sizing.serve.batching",
    "LayoutStep": "sizing.serve.moe_layout",
    "StepModel": "sizing.serve.estimate",
    "StepOverhead": "sizing.serve.roofline",
    "NO_OVERHEAD": "sizing.serve.roofline",
    "engine_iteration": "sizing.serve.batching",
    "engine_overhead": "sizing.serve.calibration",
    "layout_step": "sizing.serve.moe_layout",
    "serve_efficiency": "sizing.serve.calibration",
    "OtherServe": "sizing.serve.hybrid_vlm",
    "TTFT_METRIC": "sizing.serve.published",
    "predicted": "sizing.serve.published",
    "published_rows": "sizing.serve.published",
    "session_per_sequence_seconds": "sizing.serve.calibration",
    "serve_hybrid": "sizing.serve.hybrid_vlm",
    "serve_vlm": "sizing.serve.hybrid_vlm",
    "serve_whole": "sizing.serve.whole",
    "serving_machine": "sizing.serve.estimate",
    "MEASURED_FILE": "sizing.serve.bench",
    "MEASURED_HEADERS": "sizing.serve.bench",
    "PUBLISHED_SERVING": "sizing.serve.published",
    "PrefixCache": "sizing.serve.prefix",
    "SERVE_BENCH": "sizing.serve.bench",
    "SERVE_EFFICIENCY_BY_GPU": "sizing.serve.calibration",
    "Speculation": "sizing.serve.speculative",
    "UNSEEN_SERVING": "sizing.serve.published_unseen",
    "WEIGHT_CHOICES": "sizing.serve.quant_bytes",
    "bound_for": "sizing.serve.published",
    "compare_layouts": "sizing.serve.moe_layout",
    "default_efficiencies": "sizing.serve.calibration",
    "log_errors": "sizing.serve.calibration_fit",
    "measured_rows": "sizing.serve.bench",
    "model_weights_bytes": "sizing.serve.quant_bytes",
    "not_fit_reason": "sizing.serve.fit",
    "parse_seconds": "sizing.serve.capacity",
    "plan_capacity": "sizing.serve.capacity",
    "prefix_cache": "sizing.serve.prefix",
    "speculate": "sizing.serve.speculative",
    "why_best": "sizing.serve.moe_layout",
    "would_fit": "sizing.serve.fit",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
