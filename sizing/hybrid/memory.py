"""Inference memory of a hybrid model for one context and batch: weights, the KV cache of its
attention layers (grows with the context) and the recurrent state of its other layers (does
not), set beside the all-attention model of the same size, every layer an attention layer of
the model's own attention shape (what a calculator that puts a KV cache on every layer sizes).

State dtypes: the conv state in the weights' dtype and the SSM / DeltaNet state in fp32, as
transformers 5.24's caches hold them for a bf16 model (measured: tests/fixtures/
hf_counts_hybrid.json, `state_bytes_bf16`) and as vLLM's `mamba_ssm_cache_dtype` float32 of
Nemotron-H keeps it. Training activations of the state mixers are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.hybrid.model import (
    HybridModel,
    kv_elements_per_attention_layer,
    kv_elements_per_position,
    state_elements,
    total_params,
)
from sizing.memory import dtype_bytes
from sizing.validate import require_int


@dataclass(frozen=True)
class HybridMemory:
    weights_bytes: int
    kv_cache_bytes: int  # attention layers only, whole batch
    conv_state_bytes: int  # whole batch
    ssm_state_bytes: int  # whole batch
    all_attention_kv_bytes: int  # every layer an attention layer, whole batch

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_cache_bytes + self.conv_state_bytes + self.ssm_state_bytes

    @property
    def all_attention_total_bytes(self) -> int:
        return self.weights_bytes + self.all_attention_kv_bytes


def kv_cache_bytes(m: HybridModel, context: int, batch: int = 1, dtype: str = "bf16") -> int:
    """B·C·L_attn·2·h_kv·d_h elements in `dtype`."""
    C, B = require_int("context", context, 1), require_int("batch", batch, 1)
    return dtype_bytes(B * C * kv_elements_per_position(m), dtype)


def state_bytes(m: HybridModel, batch: int = 1, conv_dtype: str = "bf16", ssm_dtype: str = "fp32") -> dict[str, int]:
    """{"conv": ..., "ssm": ...} bytes of the whole batch, whatever the context."""
    B = require_int("batch", batch, 1)
    elements = state_elements(m)
    return {"conv": dtype_bytes(B * elements["conv"], conv_dtype), "ssm": dtype_bytes(B * elements["ssm"], ssm_dtype)}


def all_attention_kv_bytes(m: HybridModel, context: int, batch: int = 1, dtype: str = "bf16") -> int:
    """The KV cache if every layer were an attention layer of the model's shape: B·C·L·2·h_kv·d_h."""
    C, B = require_int("context", context, 1), require_int("batch", batch, 1)
    return dtype_bytes(B * C * m.count() * kv_elements_per_attention_layer(m), dtype)


def hybrid_inference_memory(
    m: HybridModel,
    context: int,
    batch: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    ssm_dtype: str = "fp32",
) -> HybridMemory:
    state = state_bytes(m, batch, conv_dtype=weight_dtype, ssm_dtype=ssm_dtype)
    return HybridMemory(
        weights_bytes=dtype_bytes(total_params(m), weight_dtype),
        kv_cache_bytes=kv_cache_bytes(m, context, batch, kv_dtype),
        conv_state_bytes=state["conv"],
        ssm_state_bytes=state["ssm"],
        all_attention_kv_bytes=all_attention_kv_bytes(m, context, batch, kv_dtype),
    )


def per_sequence_bytes(
    m: HybridModel, context: int, kv_dtype: str = "bf16", weight_dtype: str = "bf16", ssm_dtype: str = "fp32"
) -> int:
    """One sequence's KV cache at `context` plus its state."""
    state = state_bytes(m, 1, conv_dtype=weight_dtype, ssm_dtype=ssm_dtype)
    return kv_cache_bytes(m, context, 1, kv_dtype) + state["conv"] + state["ssm"]


def max_batch(
    m: HybridModel,
    context: int,
    capacity_bytes: int,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    ssm_dtype: str = "fp32",
) -> int:
    """Sequences of `context` tokens that fit beside the weights in `capacity_bytes` (0: none).
    Per-sequence bytes are exact integers, so the batch is a floor division."""
    free = capacity_bytes - dtype_bytes(total_params(m), weight_dtype)
    return max(0, free // per_sequence_bytes(m, context, kv_dtype, weight_dtype, ssm_dtype))


def max_context(
    m: HybridModel,
    batch: int,
    capacity_bytes: int,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    ssm_dtype: str = "fp32",
) -> int | None:
    """The longest context a batch of `batch` fits at (0: not even one token); None: unbounded by
    memory (no attention layer: the state does not grow)."""
    B = require_int("batch", batch, 1)
    free = capacity_bytes - dtype_bytes(total_params(m), weight_dtype)
    state = state_bytes(m, B, conv_dtype=weight_dtype, ssm_dtype=ssm_dtype)
    free -= state["conv"] + state["ssm"]
    per_token = dtype_bytes(B * kv_elements_per_position(m), kv_dtype)
    if free < 0:
        return 0
    if per_token == 0:
        return None
    lo, hi = 0, free // max(1, per_token) + 1  # kv bytes are monotone in the context: bisect exactly
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if kv_cache_bytes(m, mid, B, kv_dtype) <= free:
            lo = mid
        else:
            hi = mid - 1
    return lo
