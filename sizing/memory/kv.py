"""Inference bytes: weights in a storage dtype and the KV cache.

Symbols: L layers, h_kv kv heads, d_h head width, W sliding window, C context.
"""

from __future__ import annotations

from .. import params as P
from ..config import ModelConfig
from ..validate import require_choice, require_int
from ..vocabulary import DTYPE_BITS, ceil_div


def dtype_bytes(n_elements: int, dtype: str) -> int:
    """Bytes of n elements stored in `dtype`, rounded up to a whole byte (int4 packs two)."""
    bits = DTYPE_BITS[require_choice("dtype", dtype, DTYPE_BITS)]
    return ceil_div(n_elements * bits, 8)


def cached_positions(cfg: ModelConfig, context: int) -> int:
    """Positions the KV cache holds: the context, capped by a sliding window (ring buffer)."""
    return context if cfg.sliding_window is None else min(context, cfg.sliding_window)


def kv_cache_bytes(cfg: ModelConfig, context: int, batch: int = 1, dtype: str = "bf16") -> int:
    """2 x L x h_kv x d_h x bytes x min(C, W) x batch. The 2 is K and V; GQA/MQA caches h_kv
    heads, not h. Llama-2-70B, C 4096, bf16: 2.80.8.128.2.4096 = 1,342,177,280 bytes per sequence."""
    require_int("context", context)
    require_int("batch", batch)
    return dtype_bytes(2 * cfg.n_layers * cfg.kv_heads * cfg.d_head * cached_positions(cfg, context) * batch, dtype)


def inference_weights_bytes(cfg: ModelConfig, dtype: str = "bf16") -> int:
    """All N parameters (every expert of an MoE) in `dtype`; int4 packs two per byte."""
    return dtype_bytes(P.total_params(cfg), dtype)
