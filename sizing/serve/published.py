"""Published serving measurements, each with its source (sizing/data/published_serving.json),
set beside the serving step model.

They are what they are: other kernels, fused and quantised engines, their own batching. The
bound (`sizing serve` at efficiencies 1 and no engine overhead) must never be below one of them;
how far below the bound a measurement sits is the share of the roofline the engine reached.
Rows whose `use` is "calibration" fit sizing/data/serve_efficiency.json (calibration.py);
"check" rows are kept out of the fit and only compared (published_unseen.py).

TensorRT-LLM's performance page of v0.6.1 (static batching with gptSessionBenchmark: every
sequence of a batch prefilled, then decoded to the full output length, which is the batch
`sizing serve` models). Throughput is output tokens per second (per GPU on H100); the
first-token latency rows are batch 1. "LLaMA 7B" is LLaMA-1 7B, "LLaMA 70B" Llama-2-70B (GQA).
H100 runs FP8 weights, KV cache and matmuls; A100 FP16 (the page does not say which A100: the
80 GB SXM, the faster of the two, keeps the bound an upper bound). TensorRT-LLM's H200 launch
blog (v0.5.0): H200 FP8 static-batch throughput of Llama-2-13B and 70B.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sizing.inputs import data_files
from sizing.serve.roofline import NO_OVERHEAD, StepOverhead

TTFT_METRIC = "first-token latency ms"
TPS_METRIC = "output tokens/s per GPU"


@dataclass(frozen=True)
class PublishedServing:
    preset: str
    gpu: str
    dtype: str  # weights, KV cache and matmuls
    batch: int
    tp: int
    prompt: int
    output: int
    value: float
    metric: str  # "output tokens/s per GPU" | "first-token latency ms"
    source: str
    use: str = "calibration"  # or "check": kept out of the fit


@cache
def published_rows() -> tuple[PublishedServing, ...]:
    content = data_files.builtin("published_serving.json")
    sources = content["sources"]
    return tuple(PublishedServing(**{**r, "source": sources[r["source"]]}) for r in content["rows"])


def __getattr__(name: str):
    if name == "PUBLISHED_SERVING":  # the calibration rows
        return tuple(r for r in published_rows() if r.use == "calibration")
    if name == "TRTLLM_V061":
        return data_files.builtin("published_serving.json")["sources"]["trtllm-v0.6.1"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def predicted(
    row: PublishedServing,
    compute_efficiency: float | None = None,
    bandwidth_efficiency: float | None = None,
    overhead: StepOverhead | None = None,
) -> float:
    """A published row's metric predicted by the step model (the GPU's calibrated efficiencies
    and overheads where None): output tokens/s per GPU (prefill included, static batch) or the
    first-token latency in ms."""
    from sizing.serve.estimate import serve

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
        overhead=overhead,
    )
    if row.metric == TTFT_METRIC:
        return est.ttft_seconds * 1e3
    return est.output_tokens_per_second / row.tp


def bound_for(row: PublishedServing) -> float:
    """The roofline bound for a published row, in the row's metric: its prediction at
    efficiencies 1 and no engine overhead."""
    return predicted(row, 1.0, 1.0, NO_OVERHEAD)
