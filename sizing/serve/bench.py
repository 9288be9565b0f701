"""The serving measurement plan (torch-free): which model benchmarks/gpu_profile.sh times, at
which batches, and how a measurement is set beside the prediction.

reference_model/profile/serve_bench.py runs it on a device and writes a JSON file; committed as
reports/serving-measured.json (from a CUDA run only), `sizing report` puts each measured
TTFT and decode tokens/s beside the roofline bound (efficiency 1) and the estimate at the
default efficiencies, with their ratios. Until then the page says "not yet measured".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sizing.inputs import ModelConfig, planned_run
from sizing.serve.estimate import serve

MEASURED_FILE = "serving-measured.json"  # under reports/, copied there from a GPU session's $OUT


@dataclass(frozen=True)
class ServeBenchPlan:
    run: str  # a planned run of sizing/inputs/planned_runs.py whose model is timed
    prompt: int
    output: int  # tokens generated; the first comes from the prefill
    batches: tuple[int, ...]
    repeats: int
    dtype: str

    def config(self) -> ModelConfig:
        return planned_run(self.run).config()


# Llama-3.2-1B shape (the planned profile run llama-1b-gqa), bf16, eager (no CUDA graphs).
SERVE_BENCH = ServeBenchPlan("llama-1b-gqa", prompt=512, output=33, batches=(1, 8, 64), repeats=3, dtype="bf16")


def predictions(cfg: ModelConfig, gpu: str, prompt: int, output: int, batch: int) -> dict[str, Any]:
    """TTFT and decode tokens/s: the roofline bound (efficiencies 1) and the default estimate."""
    bound = serve(cfg, prompt, output, batch, gpu, compute_efficiency=1.0, bandwidth_efficiency=1.0)
    estimate = serve(cfg, prompt, output, batch, gpu)
    return {
        "bound_ttft_seconds": bound.ttft_seconds,
        "bound_decode_tokens_per_second": bound.decode_tokens_per_second,
        "estimate_ttft_seconds": estimate.ttft_seconds,
        "estimate_decode_tokens_per_second": estimate.decode_tokens_per_second,
        "decode_bound": estimate.decode_bound,
    }


def measured_rows(measured: dict[str, Any]) -> list[list[str]]:
    """One row per batch: measured TTFT and decode tokens/s beside the bound and the estimate."""
    gpu = measured["gpu"]
    cfg = SERVE_BENCH.config()
    rows = []
    for point in measured["points"]:
        p = predictions(cfg, gpu, measured["prompt"], measured["output"], point["batch"])
        ttft, tps = point["ttft_seconds"], point["decode_tokens_per_second"]
        rows.append(
            [
                str(point["batch"]),
                f"{ttft * 1e3:.2f} ms",
                f"{p['bound_ttft_seconds'] * 1e3:.2f} ms",
                f"{ttft / p['bound_ttft_seconds']:.2f}",
                f"{tps:,.0f}",
                f"{p['bound_decode_tokens_per_second']:,.0f}",
                f"{tps / p['bound_decode_tokens_per_second']:.2f}",
                f"{tps / p['estimate_decode_tokens_per_second']:.2f}",
            ]
        )
    return rows


MEASURED_HEADERS = [
    "batch",
    "TTFT measured",
    "TTFT bound",
    "measured / bound",
    "decode tokens/s measured",
    "decode tokens/s bound",
    "measured / bound",
    "measured / estimate",
]
