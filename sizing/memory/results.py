"""The results of sizing.memory: plain data with exact byte counts and to_dict() for JSON.
They never render themselves; sizing.render.memory turns them into text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sizing.inputs import ModelConfig
from sizing.memory.activations import KORTHIKANTI_LABEL, ActivationTerm, activations_not_modelled
from sizing.memory.kv import kv_cache_formula
from sizing.memory.states import get_optimizer, get_precision
from sizing.memory.verdict import FitVerdict, fit_verdict


@dataclass(frozen=True)
class TrainingMemory:
    """Training memory for one configuration; bytes exact. Per-GPU figures are after ZeRO
    sharding; `weights_bytes` & co. are the whole model's."""

    model: str | None
    config: ModelConfig = field(repr=False)
    seq_len: int
    micro_batch: int
    precision: str
    optimizer: str
    zero: int
    dp: int
    recompute: str
    attention_impl: str
    gpu: str
    params: int
    weights_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activations_bytes: int
    activations_per_layer_bytes: int
    activations_outside_bytes: int
    transient_bytes: int
    per_gpu: dict  # weights, gradients, optimizer, zero3_gathered, activations, transient, total (bytes)
    gpu_memory_bytes: int
    max_micro_batch: int | None  # None: even one sequence per GPU does not fit
    fits: bool
    reason: str | None
    would_fit: tuple[str, ...]
    terms: tuple[ActivationTerm, ...] = field(repr=False)
    korthikanti_per_layer_bytes: int = 0
    runtime_reserve: Any = None  # sizing.memory.runtime.RuntimeReserve; None: tensors only

    @property
    def total_bytes(self) -> int:
        """Unsharded: model states + activations + transient of one micro-batch (= per GPU at dp 1)."""
        return (
            self.weights_bytes
            + self.gradients_bytes
            + self.optimizer_bytes
            + self.activations_bytes
            + self.transient_bytes
        )

    @property
    def per_gpu_bytes(self) -> int:
        return self.per_gpu["total_bytes"]

    @property
    def runtime_reserve_bytes(self) -> int:
        return self.runtime_reserve.total_bytes if self.runtime_reserve is not None else 0

    @property
    def headroom_bytes(self) -> int:
        return self.gpu_memory_bytes - self.runtime_reserve_bytes - self.per_gpu_bytes

    @property
    def memory_verdict(self) -> FitVerdict:
        """fits / tight / does not fit with the allocator's band (sizing.memory.verdict); `fits`
        is the point estimate (tensors + reserve within the GPU) the searches use."""
        return fit_verdict(self.per_gpu_bytes, self.runtime_reserve_bytes, self.gpu_memory_bytes)

    @property
    def korthikanti_bytes(self) -> int:
        """Korthikanti et al.'s activations of all L layers, for comparison with ours."""
        return self.korthikanti_per_layer_bytes * self.config.n_layers

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "seq_len": self.seq_len,
            "micro_batch": self.micro_batch,
            "precision": self.precision,
            "precision_note": get_precision(self.precision).description,
            "optimizer": self.optimizer,
            "optimizer_note": get_optimizer(self.optimizer).description,
            "zero_stage": self.zero,
            "dp": self.dp,
            "recompute": self.recompute,
            "attention_impl": self.attention_impl,
            "params": self.params,
            "weights_bytes": self.weights_bytes,
            "gradients_bytes": self.gradients_bytes,
            "optimizer_bytes": self.optimizer_bytes,
            "model_states_bytes_per_param": (self.weights_bytes + self.gradients_bytes + self.optimizer_bytes)
            / self.params,
            "activations_bytes": self.activations_bytes,
            "activations_per_layer_bytes": self.activations_per_layer_bytes,
            "activations_outside_blocks_bytes": self.activations_outside_bytes,
            "activation_terms": {t.key: t.bytes for t in self.terms},
            "activations_not_modelled": list(activations_not_modelled(self.config)),
            "transient_bytes": self.transient_bytes,
            "total_bytes": self.total_bytes,
            "per_gpu": dict(self.per_gpu),
            "per_gpu_bytes": self.per_gpu_bytes,
            "gpu": self.gpu,
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "runtime_reserve_bytes": self.runtime_reserve_bytes,
            "headroom_bytes": self.headroom_bytes,
            "fits": self.fits,
            **self.memory_verdict.to_dict(),
            "max_micro_batch": self.max_micro_batch,
            "reason": self.reason,
            "would_fit": list(self.would_fit),
            "korthikanti": {
                "formula": KORTHIKANTI_LABEL[self.recompute] + " bytes per layer (Korthikanti et al. 2022, "
                "16-bit GPT block with dropout masks)",
                "per_layer_bytes": self.korthikanti_per_layer_bytes,
                "activations_bytes": self.korthikanti_bytes,
            },
        }


@dataclass(frozen=True)
class InferenceMemory:
    model: str | None
    config: ModelConfig = field(repr=False)
    context: int
    batch: int
    weight_dtype: str
    kv_dtype: str
    gpu: str
    params: int
    weights_bytes: int
    kv_cache_bytes: int
    kv_cache_bytes_per_sequence: int
    cached_positions: int
    gpu_memory_bytes: int
    max_batch: int | None  # at this context; None when the weights alone do not fit
    max_context: int | None  # at this batch; None when unbounded (window) or nothing fits
    context_unbounded: bool
    max_context_limited_by: str | None  # "memory", "max_positions" (learned table), "window" (unbounded)
    fits: bool
    reason: str | None
    would_fit: tuple[str, ...]
    prefill_peak_bytes: int = 0  # the largest transient of a prefill forward (memory/prefill.py)
    prefill_chunk: int | None = None  # tokens per prefill forward; None: one sequence's context
    kv_cache_bytes_naive: int | None = None  # MLA: full per-head K and V instead of the latent
    quant: str | None = None  # a deployed weight format (memory/quant.py) instead of N x weight_dtype
    weights_note: str | None = None  # what a bare int4/int8 weight dtype assumes
    tp: int = 1  # tensor-parallel GPUs: every byte above is one GPU's share
    runtime_reserve: Any = None  # sizing.memory.runtime.RuntimeReserve; None: tensors only

    @property
    def total_bytes(self) -> int:
        """What stays resident between prefills: weights + KV cache."""
        return self.weights_bytes + self.kv_cache_bytes

    @property
    def peak_bytes(self) -> int:
        """Resident + the prefill activation peak: what must fit."""
        return self.total_bytes + self.prefill_peak_bytes

    @property
    def runtime_reserve_bytes(self) -> int:
        return self.runtime_reserve.total_bytes if self.runtime_reserve is not None else 0

    @property
    def headroom_bytes(self) -> int:
        return self.gpu_memory_bytes - self.runtime_reserve_bytes - self.peak_bytes

    def to_dict(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "model": self.model,
            "context": self.context,
            "batch": self.batch,
            "tp": self.tp,
            "weight_dtype": self.weight_dtype,
            "quant": self.quant,
            **({"weights_note": self.weights_note} if self.weights_note else {}),
            "kv_dtype": self.kv_dtype,
            "params": self.params,
            "weights_bytes": self.weights_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "kv_cache_bytes_per_sequence": self.kv_cache_bytes_per_sequence,
            "kv_cache_formula": kv_cache_formula(cfg, self.context, self.batch, self.kv_dtype),
            "cached_positions": self.cached_positions,
            **({"kv_cache_bytes_naive": self.kv_cache_bytes_naive} if self.kv_cache_bytes_naive is not None else {}),
            "total_bytes": self.total_bytes,
            "prefill_chunk": self.prefill_chunk,
            "prefill_peak_bytes": self.prefill_peak_bytes,
            "peak_bytes": self.peak_bytes,
            "gpu": self.gpu,
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "runtime_reserve_bytes": self.runtime_reserve_bytes,
            "headroom_bytes": self.headroom_bytes,
            "fits": self.fits,
            "max_batch": self.max_batch,
            "max_context": self.max_context,
            "context_unbounded": self.context_unbounded,
            "max_context_limited_by": self.max_context_limited_by,
            "reason": self.reason,
            "would_fit": list(self.would_fit),
        }


@dataclass(frozen=True)
class MemorySummary:
    """What `sizing estimate` embeds: training (bf16 mixed AdamW, micro-batch 1, no ZeRO, no
    recompute, flash attention) and inference (bf16 weights and KV cache at T, batch 1)."""

    training: TrainingMemory
    inference: InferenceMemory

    def to_dict(self) -> dict[str, Any]:
        return {"training": self.training.to_dict(), "inference": self.inference.to_dict()}
