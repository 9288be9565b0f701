"""Published serving measurements, each with its source (sizing/data/published_serving.json),
set beside the serving step model.

They are what they are: other kernels, fused and quantised engines, their own batching. The
bound (`sizing serve` at the datasheet dense peak and bandwidth, efficiencies 1, no engine overhead,
each cached KV byte read once) must never be below one of them;
how far below the bound a measurement sits is the share of the roofline the engine reached.
Rows whose `use` is "calibration" fit sizing/data/serve_efficiency.json (calibration.py);
"check" rows are kept out of the fit and only compared (published_unseen.py).

TensorRT-LLM's performance page of v0.6.1 (static batching with gptSessionBenchmark: every
sequence of a batch prefilled, then decoded to the full output length, which is the batch
`sizing serve` models). Throughput is output tokens per second (per GPU on H100); the
first-token latency rows are batch 1. "LLaMA 7B" is LLaMA-1 7B, "LLaMA 70B" Llama-2-70B (GQA).
H100 runs FP8 weights, KV cache and matmuls; A100 FP16 (the page does not say which A100: the
80 GB SXM, the faster of the two, keeps the bound an upper bound). TensorRT-LLM's H200 launch
blog (v0.5.0): H200 FP8 static-batch throughput of Llama-2-13B and 70B; its Falcon180B-H200 blog
(v0.7a, the improved GQA generation kernel): Llama-2-70B FP8 on one H200. Before v0.7 the
generation kernel read a GQA model's KV head once per query head: those rows carry
`kv_per_query_head` and are timed with h / h_kv times the KV read (ServeSettings.kv_read_repeat).
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
    kv_per_query_head: bool = False  # TensorRT-LLM before v0.7 on GQA: the KV read h / h_kv times
    harness: str = ""  # "static-session": TensorRT-LLM's gptSessionBenchmark (v0.5-v0.7), its per-sequence cost

    def kv_read_repeat(self) -> int:
        """The decode step's KV reads per cached byte under this row's engine (ServeSettings.kv_read_repeat)."""
        if not self.kv_per_query_head:
            return 1
        from sizing.inputs import get_preset

        cfg = get_preset(self.preset).config
        return cfg.n_heads // cfg.kv_heads


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
    attention_efficiency: float | None = None,
    kv_read_repeat: int | None = None,
) -> float:
    """A published row's metric predicted by the step model (the GPU's calibrated efficiencies
    and overheads where None): output tokens/s per GPU (prefill included, static batch) or the
    first-token latency in ms. A row of the static session harness pays its per-sequence cost
    (calibration.session_per_sequence_seconds, or `overhead`'s when given); others pay none."""
    import dataclasses

    from sizing.serve.calibration import engine_overhead, session_per_sequence_seconds
    from sizing.serve.estimate import serve

    if overhead is None:
        overhead = dataclasses.replace(engine_overhead(), per_sequence=session_per_sequence_seconds())
    if row.harness != "static-session":
        overhead = dataclasses.replace(overhead, per_sequence=0.0)

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
        kv_read_repeat=row.kv_read_repeat() if kv_read_repeat is None else kv_read_repeat,
        attention_efficiency=attention_efficiency,
    )
    if row.metric == TTFT_METRIC:
        return est.ttft_seconds * 1e3
    return est.output_tokens_per_second / row.tp


def bound_for(row: PublishedServing) -> float:
    """The roofline bound for a published row, in the row's metric: its prediction at the GPU's
    datasheet dense peak and HBM bandwidth (efficiencies 1), no engine overhead, and each cached
    KV byte read once (not the row's engine's h / h_kv re-reads: the bound is what any kernel
    could reach, not what this one did)."""
    return predicted(row, 1.0, 1.0, NO_OVERHEAD, kv_read_repeat=1)
