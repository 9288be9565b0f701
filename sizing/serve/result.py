"""The result of sizing.serve: plain data, exact integers for FLOPs and bytes, to_dict() for
JSON (strict: no NaN or Infinity). It never renders itself; sizing.render.serve does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sizing.inputs import GPU, ModelConfig
from sizing.serve.roofline import NO_OVERHEAD, Roofline, StepOverhead
from sizing.serve.work import StepBytes
from sizing.vocabulary import (
    DEFAULT_MLA_IMPL,
    DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
)

SECONDS_PER_HOUR = 3600
PER_MILLION = 10**6


@dataclass(frozen=True)
class ServeSettings:
    batch: int
    prompt: int
    output: int
    tp: int
    gpus: int
    weight_dtype: str
    kv_dtype: str
    activation_dtype: str
    attention: str  # the prefill's convention
    compute_efficiency: float = DEFAULT_SERVE_COMPUTE_EFFICIENCY
    bandwidth_efficiency: float = DEFAULT_SERVE_BANDWIDTH_EFFICIENCY
    price_per_gpu_hour: float = DEFAULT_SERVE_PRICE_PER_GPU_HOUR
    prefill_chunk: int | None = None
    mla: str = DEFAULT_MLA_IMPL  # MLA decode implementation (ignored without latent attention)
    overhead: StepOverhead = NO_OVERHEAD  # the engine's fixed costs per forward (calibration.py)
    # KV bytes a decode step reads per cached byte: 1 for kernels that read each KV head once for
    # its query group (FlashAttention, FlashInfer, vLLM and TensorRT-LLM since v0.7's GQA/XQA
    # kernels); h / h_kv for TensorRT-LLM's generation kernel before v0.7 on a GQA model, which read
    # a KV head once per query head (the published rows of that engine carry it: published.py)
    kv_read_repeat: int = 1
    # the attention kernel's share of the HBM bandwidth on its KV reads (paged, scattered blocks:
    # lower than the GEMMs'); None: the bandwidth efficiency (calibration.py fits it per GPU)
    attention_efficiency: float | None = None

    @property
    def kv_efficiency(self) -> float:
        """The share of HBM bandwidth the attention kernel reads the KV cache at."""
        return self.bandwidth_efficiency if self.attention_efficiency is None else self.attention_efficiency

    @property
    def replicas(self) -> int:
        return self.gpus // self.tp

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "prompt_tokens": self.prompt,
            "output_tokens": self.output,
            "tp": self.tp,
            "gpus": self.gpus,
            "replicas": self.replicas,
            "weight_dtype": self.weight_dtype,
            "kv_dtype": self.kv_dtype,
            "activation_dtype": self.activation_dtype,
            "prefill_attention": self.attention,
            "compute_efficiency": self.compute_efficiency,
            "bandwidth_efficiency": self.bandwidth_efficiency,
            "price_per_gpu_hour": self.price_per_gpu_hour,
            "prefill_chunk": self.prefill_chunk,
            "mla": self.mla,
            "overhead": self.overhead.to_dict(),
            "kv_read_repeat": self.kv_read_repeat,
            "attention_efficiency": self.kv_efficiency,
        }


@dataclass(frozen=True)
class StepEstimate:
    """One decode step of the batch with `context` cached positions (the new token included)."""

    context: int
    flops: int  # the whole step, all GPUs of one replica
    bytes: StepBytes  # likewise
    roofline: Roofline  # per GPU

    def to_dict(self) -> dict[str, Any]:
        return {"context": self.context, "flops": self.flops, **self.bytes.to_dict(), **self.roofline.to_dict()}


@dataclass(frozen=True)
class ServeEstimate:
    model: str | None
    config: ModelConfig = field(repr=False)
    gpu: GPU = field(repr=False)
    settings: ServeSettings
    peak_flops_per_second: float
    prefill_flops: int
    prefill_forwards: int
    prefill_bytes: float
    prefill: Roofline
    first_step: StepEstimate
    last_step: StepEstimate
    decode_seconds: float  # all O - 1 decode steps
    mean_context: int
    ridge_batch: int | None  # smallest batch whose decode step (at mean_context) is compute-bound
    ridge_intensity: float  # FLOPs per byte at the ridge, at the stated efficiencies
    weights_bytes_per_gpu: int
    kv_bytes_per_request: int  # one sequence at prompt + output
    kv_bytes_per_gpu: int
    prefill_peak_bytes: int
    max_batch: int | None  # at prompt + output, per replica; None: batch 1 does not fit
    notes: tuple[str, ...] = ()

    # ---- latency
    @property
    def ttft_seconds(self) -> float:
        """Time to first token: the batch's prefill."""
        return self.prefill.seconds

    @property
    def tpot_seconds(self) -> float:
        """Time per output token after the first: the mean decode step."""
        return self.decode_seconds / (self.settings.output - 1)

    @property
    def request_seconds(self) -> float:
        return self.ttft_seconds + self.decode_seconds

    # ---- throughput
    @property
    def decode_tokens_per_second_per_sequence(self) -> float:
        return 1 / self.tpot_seconds

    @property
    def decode_tokens_per_second(self) -> float:
        """All replicas, decode only: gpus / tp x b / TPOT."""
        return self.settings.replicas * self.settings.batch / self.tpot_seconds

    @property
    def decode_tokens_per_second_per_gpu(self) -> float:
        return self.decode_tokens_per_second / self.settings.gpus

    @property
    def output_tokens_per_second(self) -> float:
        """All replicas, prefill included: b·O output tokens every request time."""
        s = self.settings
        return s.replicas * s.batch * s.output / self.request_seconds

    @property
    def prefill_tokens_per_second(self) -> float:
        s = self.settings
        return s.replicas * s.batch * s.prompt / self.ttft_seconds

    # ---- cost
    @property
    def _usd_per_replica_second(self) -> float:
        return self.settings.price_per_gpu_hour * self.settings.tp / SECONDS_PER_HOUR

    @property
    def usd_per_million_output_tokens(self) -> float:
        """The decode time of one token of the batch: price x tp x TPOT / b."""
        return self._usd_per_replica_second * self.tpot_seconds / self.settings.batch * PER_MILLION

    @property
    def usd_per_million_input_tokens(self) -> float:
        """The prefill time of one prompt token: price x tp x TTFT / (b·P)."""
        s = self.settings
        return self._usd_per_replica_second * self.ttft_seconds / (s.batch * s.prompt) * PER_MILLION

    # ---- memory
    @property
    def memory_bytes_per_gpu(self) -> int:
        return self.weights_bytes_per_gpu + self.kv_bytes_per_gpu + self.prefill_peak_bytes

    @property
    def fits(self) -> bool:
        return self.memory_bytes_per_gpu <= self.gpu.memory_bytes

    @property
    def decode_bound(self) -> str:
        first, last = self.first_step.roofline.bound, self.last_step.roofline.bound
        return first if first == last else f"{first} then {last}"

    def to_dict(self) -> dict[str, Any]:
        s = self.settings
        return {
            "model": self.model,
            "gpu": self.gpu.key,
            "settings": s.to_dict(),
            "peak_flops_per_second": self.peak_flops_per_second,
            "hbm_bytes_per_second": self.gpu.hbm_bytes_per_second,
            "link_bytes_per_second": None if self.gpu.nvlink_gbs is None else self.gpu.nvlink_gbs * 1e9,
            "prefill": {
                "flops": self.prefill_flops,
                "attention": s.attention,
                "forwards": self.prefill_forwards,
                "bytes": self.prefill_bytes,
                **self.prefill.to_dict(),
            },
            "decode": {
                "steps": s.output - 1,
                "first_step": self.first_step.to_dict(),
                "last_step": self.last_step.to_dict(),
                "seconds": self.decode_seconds,
                "bound": self.decode_bound,
                "ridge_batch": self.ridge_batch,
                "ridge_batch_context": self.mean_context,
                "ridge_intensity_flops_per_byte": self.ridge_intensity,
            },
            "latency": {
                "ttft_seconds": self.ttft_seconds,
                "tpot_seconds": self.tpot_seconds,
                "request_seconds": self.request_seconds,
            },
            "throughput": {
                "decode_tokens_per_second_per_sequence": self.decode_tokens_per_second_per_sequence,
                "decode_tokens_per_second_per_gpu": self.decode_tokens_per_second_per_gpu,
                "decode_tokens_per_second": self.decode_tokens_per_second,
                "output_tokens_per_second": self.output_tokens_per_second,
                "prefill_tokens_per_second": self.prefill_tokens_per_second,
            },
            "cost": {
                "usd_per_million_input_tokens": self.usd_per_million_input_tokens,
                "usd_per_million_output_tokens": self.usd_per_million_output_tokens,
            },
            "memory": {
                "weights_bytes_per_gpu": self.weights_bytes_per_gpu,
                "kv_bytes_per_gpu": self.kv_bytes_per_gpu,
                "kv_bytes_per_request": self.kv_bytes_per_request,
                "prefill_peak_bytes": self.prefill_peak_bytes,
                "total_bytes_per_gpu": self.memory_bytes_per_gpu,
                "gpu_memory_bytes": self.gpu.memory_bytes,
                "fits": self.fits,
                "max_batch": self.max_batch,
            },
            "notes": list(self.notes),
        }
