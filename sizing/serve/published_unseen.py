"""Published serving measurements kept out of the calibration (the rows of
sizing/data/published_serving.json whose `use` is "check"): the check that the calibrated step
model predicts rows it was not fitted to. Each must stay on the right side of the roofline
bound, and most land within a factor 1.5 of the prediction (tests/test_serve_published_unseen.py;
the table on reports/serving.md).

TensorRT-LLM's performance page (its low-latency tables are data of v0.5): first-token latency
of LLaMA 70B (Llama-2-70B, GQA) at batch 1 on tp 4, H100 FP8 and A100 FP16.
"""

from __future__ import annotations

from sizing.serve.published import published_rows


def __getattr__(name: str):
    if name == "UNSEEN_SERVING":
        return tuple(r for r in published_rows() if r.use == "check")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
