"""Published serving measurements, each with its source, to set beside the roofline bound.

They are what they are: other kernels, fused and quantised engines, their own batching. The
bound (`sizing serve` at efficiencies 1) must never be below one of them; how far below the
bound a measurement sits is the share of the roofline the engine reached.

TensorRT-LLM's performance page of v0.6.1 (static batching with gptSessionBenchmark: every
sequence of a batch prefilled, then decoded to the full output length, which is the batch
`sizing serve` models). Throughput is output tokens per second (per GPU on H100); the
first-token latency rows are batch 1. "LLaMA 7B" is LLaMA-1 7B, "LLaMA 70B" Llama-2-70B (GQA).
H100 runs FP8 weights, KV cache and matmuls; A100 FP16 (the page does not say which A100: the
80 GB SXM, the faster of the two, keeps the bound an upper bound).
"""

from __future__ import annotations

from dataclasses import dataclass

TRTLLM_V061 = (
    "NVIDIA TensorRT-LLM docs/source/performance.md (data of v0.6.1), "
    "github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/docs/source/performance.md"
)


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
    source: str = TRTLLM_V061


_TPS, _TTFT = "output tokens/s per GPU", "first-token latency ms"


def _row(preset, gpu, dtype, batch, tp, prompt, output, value, metric=_TPS):
    return PublishedServing(preset, gpu, dtype, batch, tp, prompt, output, value, metric)


PUBLISHED_SERVING: tuple[PublishedServing, ...] = (
    _row("llama-7b", "h100-sxm", "fp8", 768, 1, 128, 128, 19_694),
    _row("llama-7b", "h100-sxm", "fp8", 112, 1, 128, 2048, 6_818),
    _row("llama-7b", "h100-sxm", "fp8", 80, 1, 2048, 128, 2_244),
    _row("llama-7b", "h100-sxm", "fp8", 48, 1, 2048, 2048, 2_740),
    _row("llama2-70b", "h100-sxm", "fp8", 1024, 2, 128, 128, 2_657),
    _row("llama2-70b", "h100-sxm", "fp8", 480, 4, 128, 2048, 1_486),
    _row("llama2-70b", "h100-sxm", "fp8", 96, 2, 2048, 128, 306),
    _row("llama2-70b", "h100-sxm", "fp8", 64, 2, 2048, 2048, 547),
    _row("llama-7b", "a100-80gb", "fp16", 384, 1, 128, 128, 5_586),
    _row("llama-7b", "a100-80gb", "fp16", 60, 1, 128, 2048, 1_928),
    _row("llama-7b", "a100-80gb", "fp16", 52, 1, 2048, 128, 591),
    _row("llama-7b", "h100-sxm", "fp8", 1, 1, 128, 2, 7, _TTFT),
    _row("llama-7b", "h100-sxm", "fp8", 1, 1, 2048, 2, 36, _TTFT),
    _row("llama-7b", "a100-80gb", "fp16", 1, 1, 128, 2, 16, _TTFT),
    _row("llama-7b", "a100-80gb", "fp16", 1, 1, 2048, 2, 133, _TTFT),
)


def predicted(row: PublishedServing, compute_efficiency: float, bandwidth_efficiency: float) -> float:
    """A published row's metric predicted at these efficiencies: output tokens/s per GPU
    (prefill included, static batch) or the first-token latency in ms."""
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
    )
    if row.metric == _TTFT:
        return est.ttft_seconds * 1e3
    return est.output_tokens_per_second / row.tp


def bound_for(row: PublishedServing) -> float:
    """The roofline bound for a published row, in the row's metric: its prediction at
    efficiencies 1."""
    return predicted(row, 1.0, 1.0)
