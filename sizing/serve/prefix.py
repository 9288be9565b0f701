"""Prefix caching: b requests that share their first S prompt tokens (a system prompt, a
few-shot block, a document) prefill only their own P - S tokens and share the prefix's KV
blocks (vLLM automatic prefix caching, SGLang RadixAttention).

* Shared tokens: whole KV blocks only: S' = floor(S / block) x block (vLLM hashes full blocks;
  block 16 by default; SGLang's radix tree shares at one-token granularity: block 1).
* Prefill FLOPs skipped: the suffix's queries still attend to every earlier key, so under the
  `causal` convention the suffix costs prefill(P) - prefill(S') (the lm_head counted once):
  exactly the positions S' + 1 .. P. The `full` convention has no such split: refused.
* Prefill bytes: the weights once per forward, the suffix's KV written and the prefix's read.
* KV cache: b·KV(P + O) - (b - 1)·KV(S'): the prefix cached once. Layers with a sliding window
  evict the prefix once past it: refused for such models (not modelled).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.formulas import lm_head_flops
from sizing.inputs import ModelConfig
from sizing.memory import dtype_bytes, kv_cache_bytes
from sizing.serve.roofline import compute_seconds, memory_seconds, tp_allreduces_per_layer, tp_ring_allreduce_seconds
from sizing.serve.work import prefill_flops, step_bytes
from sizing.validate import SizingError, require_int

DEFAULT_PREFIX_BLOCK = 16  # vLLM --block-size


def shared_prefix_tokens(prefix: int, block: int = DEFAULT_PREFIX_BLOCK) -> int:
    """The prefix tokens whose KV blocks are shared: whole blocks only."""
    return require_int("prefix", prefix, minimum=0) // require_int("block", block) * block


def suffix_prefill_flops(cfg: ModelConfig, prompt: int, shared: int, batch: int = 1) -> int:
    """b·(blocks over positions shared+1 .. P + lm_head on the last): causal prefill(P) - prefill(S)."""
    if shared == 0:
        return prefill_flops(cfg, prompt, batch, "causal")
    return (
        prefill_flops(cfg, prompt, batch, "causal")
        - prefill_flops(cfg, shared, batch, "causal")
        + batch * (lm_head_flops(cfg, 1))
    )


def shared_kv_cache_bytes(cfg: ModelConfig, context: int, shared: int, batch: int, kv_dtype: str) -> int:
    """b·KV(C) - (b - 1)·KV(S): every sequence's own tokens plus one copy of the shared prefix."""
    return kv_cache_bytes(cfg, context, batch, kv_dtype) - (batch - 1) * (
        kv_cache_bytes(cfg, shared, 1, kv_dtype) if shared else 0
    )


@dataclass(frozen=True)
class PrefixCache:
    prefix: int
    shared: int
    block: int
    prefill_flops: int  # with the prefix cached
    prefill_flops_uncached: int
    ttft_seconds: float
    ttft_seconds_uncached: float
    kv_bytes: int  # the batch at P + O, the prefix once
    kv_bytes_unshared: int

    def to_dict(self) -> dict:
        return {
            "prefix_tokens": self.prefix,
            "shared_tokens": self.shared,
            "block_size": self.block,
            "prefill_flops": self.prefill_flops,
            "prefill_flops_uncached": self.prefill_flops_uncached,
            "ttft_seconds": self.ttft_seconds,
            "ttft_seconds_uncached": self.ttft_seconds_uncached,
            "kv_cache_bytes": self.kv_bytes,
            "kv_cache_bytes_unshared": self.kv_bytes_unshared,
        }


def prefix_cache(est, prefix: int, block: int = DEFAULT_PREFIX_BLOCK) -> PrefixCache:
    """The prefix-cached prefill and KV of a ServeEstimate's workload (the batch prefilled at once)."""
    cfg, s, gpu = est.config, est.settings, est.gpu
    if cfg.local_window is not None:
        raise SizingError("prefix caching with sliding-window layers is not modelled (the window evicts the prefix)")
    if s.attention != "causal":
        raise SizingError(
            "prefix caching needs --attention causal: the suffix's FLOPs are a difference of causal counts"
        )
    if prefix >= s.prompt:
        raise SizingError(f"prefix ({prefix}) must be shorter than the prompt ({s.prompt})")
    shared = shared_prefix_tokens(prefix, block)
    b, suffix = s.batch, s.prompt - shared
    flops = suffix_prefill_flops(cfg, s.prompt, shared, b)
    weights = step_bytes(cfg, s.prompt, b, s.weight_dtype, s.kv_dtype, new_tokens=suffix).weight_bytes
    kv_written = kv_cache_bytes(cfg, s.prompt, b, s.kv_dtype) - (
        kv_cache_bytes(cfg, shared, b, s.kv_dtype) if shared else 0
    )
    kv_read = kv_cache_bytes(cfg, shared, 1, s.kv_dtype) if shared else 0
    comm = 0.0
    if s.tp > 1:
        buffer = b * suffix * cfg.d_model * dtype_bytes(1, s.activation_dtype)
        comm = cfg.n_layers * tp_allreduces_per_layer(cfg.parallel_block)
        comm *= tp_ring_allreduce_seconds(buffer, s.tp, gpu.nvlink_gbs * 1e9, s.bandwidth_efficiency)
    ttft = max(
        compute_seconds(flops / s.tp, est.peak_flops_per_second, s.compute_efficiency),
        memory_seconds((weights + kv_written + kv_read) / s.tp, gpu.hbm_bytes_per_second, s.bandwidth_efficiency),
    )
    context = s.prompt + s.output
    return PrefixCache(
        prefix,
        shared,
        block,
        flops,
        est.prefill_flops,
        ttft + comm,
        est.ttft_seconds,
        shared_kv_cache_bytes(cfg, context, shared, b, s.kv_dtype),
        kv_cache_bytes(cfg, context, b, s.kv_dtype),
    )
