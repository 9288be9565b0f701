"""Inference bytes: weights in a storage dtype and the KV cache.

Symbols: L layers, h_kv kv heads, d_h head width, W sliding window, C context; under MLA r_kv
the latent width and d_r the rope key width.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.memory.quant import deployed_weights_bytes
from sizing.validate import SizingError, require_choice, require_int
from sizing.vocabulary import DTYPE_BITS, ceil_div


def dtype_bytes(n_elements: int, dtype: str) -> int:
    """Bytes of n elements stored in `dtype`, rounded up to a whole byte (int4 packs two)."""
    bits = DTYPE_BITS[require_choice("dtype", dtype, DTYPE_BITS)]
    return ceil_div(n_elements * bits, 8)


def cached_positions(cfg: ModelConfig, context: int) -> int:
    """Positions a local layer's cache holds (every layer's when none is local): the context,
    capped by a sliding window (a ring buffer of W) or by one chunk (Llama-4 keeps the current
    chunk only). Global layers (full_attention_every) hold the whole context."""
    if cfg.sliding_window is not None:
        return min(context, cfg.sliding_window)
    if cfg.attention_chunk is not None:
        return min(context, cfg.attention_chunk)
    return context


def cached_layer_positions(cfg: ModelConfig, context: int) -> int:
    """Cached positions summed over layers: local layers at their cap, global ones at C."""
    return cfg.n_local_layers * cached_positions(cfg, context) + cfg.n_global_layers * context


def kv_elements_per_position(cfg: ModelConfig) -> int:
    """Numbers cached per token per layer: K and V, 2·h_kv·d_h; under MLA the latent and the
    shared rope key, r_kv + d_r (DeepSeek-V2 section 2.1.3), plus DSA's index key d_I
    (DeepSeek-V3.2: the indexer scores every cached token, so its key is kept beside the latent)."""
    if cfg.is_mla:
        return cfg.kv_lora_rank + cfg.qk_rope_head_dim + index_key_elements(cfg)
    return 2 * cfg.kv_heads * cfg.d_head


def index_key_elements(cfg: ModelConfig) -> int:
    """DSA's cached index key per token per layer, d_I (0 without an indexer)."""
    return cfg.index_head_dim if cfg.has_indexer else 0


def naive_kv_elements_per_position(cfg: ModelConfig) -> int:
    """Full K and V per token per layer: h·(d_n + d_r) + h·d_v under MLA (what transformers'
    DeepseekV3 caches), 2·h_kv·d_h otherwise."""
    if cfg.is_mla:
        return cfg.n_heads * (cfg.qk_head_width + cfg.v_head_width) + index_key_elements(cfg)
    return 2 * cfg.kv_heads * cfg.d_head


def kv_cache_bytes(cfg: ModelConfig, context: int, batch: int = 1, dtype: str = "bf16") -> int:
    """Σ_layers positions x elements x bytes x batch: 2 x L x h_kv x d_h x bytes x min(C, W) x batch
    with one window everywhere. The 2 is K and V; GQA/MQA caches h_kv heads, not h; MLA caches
    r_kv + d_r per position. Llama-2-70B, C 4096, bf16: 2.80.8.128.2.4096 = 1,342,177,280 bytes."""
    require_int("context", context)
    require_int("batch", batch)
    return dtype_bytes(kv_elements_per_position(cfg) * cached_layer_positions(cfg, context) * batch, dtype)


def naive_kv_cache_bytes(cfg: ModelConfig, context: int, batch: int = 1, dtype: str = "bf16") -> int:
    """The cache with full per-head K and V (MLA without the latent cache); = kv_cache_bytes otherwise."""
    require_int("context", context)
    require_int("batch", batch)
    return dtype_bytes(naive_kv_elements_per_position(cfg) * cached_layer_positions(cfg, context) * batch, dtype)


def kv_heads_per_rank(cfg: ModelConfig, tp: int) -> int:
    """K/V heads one of tp tensor-parallel ranks holds: h_kv / tp when tp divides h_kv; when tp
    is a multiple of h_kv each head is replicated over tp / h_kv ranks and every rank holds one
    (vLLM's and TensorRT-LLM's rule: a rank never holds a fraction of a head). Other tp are
    refused, naming the valid ones. Under MLA the latent has no head axis: 1 (the whole latent)."""
    require_int("tp", tp)
    if cfg.is_mla:
        return 1
    h_kv = cfg.kv_heads
    if h_kv % tp == 0:
        return h_kv // tp
    if tp % h_kv == 0:
        return 1
    valid = sorted({n for n in range(1, h_kv + 1) if h_kv % n == 0} | {h_kv * k for k in (2, 4, 8)})
    raise SizingError(
        f"tp ({tp}) must divide n_kv_heads ({h_kv}) or be a multiple of it (heads replicated); "
        f"valid: {', '.join(map(str, valid))}, ..."
    )


def kv_cache_bytes_per_rank(cfg: ModelConfig, context: int, batch: int = 1, dtype: str = "bf16", tp: int = 1) -> int:
    """The KV cache one tensor-parallel rank holds (and a decode step reads there): the heads of
    kv_heads_per_rank, 2·(h_kv per rank)·d_h per position per layer; under MLA the whole latent,
    r_kv + d_r per position, on every rank (the latent cannot be split by head, DeepSeek-V2
    section 2.1.2; vLLM and SGLang keep it whole on each TP rank). = kv_cache_bytes at tp 1."""
    heads = kv_heads_per_rank(cfg, tp)
    if cfg.is_mla:
        return kv_cache_bytes(cfg, context, batch, dtype)
    require_int("context", context)
    require_int("batch", batch)
    return dtype_bytes(2 * heads * cfg.d_head * cached_layer_positions(cfg, context) * batch, dtype)


def naive_kv_cache_bytes_per_rank(
    cfg: ModelConfig, context: int, batch: int = 1, dtype: str = "bf16", tp: int = 1
) -> int:
    """Per rank with full per-head K and V (MLA run naive: h heads split over tp ranks)."""
    if not cfg.is_mla:
        return kv_cache_bytes_per_rank(cfg, context, batch, dtype, tp)
    require_int("tp", tp)
    if cfg.n_heads % tp:
        raise SizingError(f"tp ({tp}) must divide n_heads ({cfg.n_heads})")
    return ceil_div(naive_kv_cache_bytes(cfg, context, batch, dtype), tp)


def kv_cache_formula(cfg: ModelConfig, context: int, batch: int, dtype: str) -> str:
    """The cache's formula with this config's numbers, as `sizing memory --inference` prints it."""
    size = f"{DTYPE_BITS[dtype] / 8:g}"
    positions = cached_positions(cfg, context)
    if not cfg.is_mla and not (cfg.n_local_layers and cfg.n_global_layers):
        return (
            f"2 x L {cfg.n_layers} x kv_heads {cfg.kv_heads} x head_dim {cfg.d_head} x {size} bytes x "
            f"{positions} positions x batch {batch}"
        )
    if cfg.is_mla:
        index = f" + d_I {cfg.index_head_dim}" if cfg.has_indexer else ""
        per = f"(r_kv {cfg.kv_lora_rank} + d_r {cfg.qk_rope_head_dim}{index})"
    else:
        per = f"2 x kv_heads {cfg.kv_heads} x head_dim {cfg.d_head}"
    if cfg.n_local_layers and cfg.n_global_layers:
        where = (
            f"({cfg.n_local_layers} local layers x {cached_positions(cfg, context)} + "
            f"{cfg.n_global_layers} global x {context}) positions"
        )
    else:
        where = f"L {cfg.n_layers} x {cached_positions(cfg, context)} positions"
    return f"{per} x {where} x {size} bytes x batch {batch}"


def inference_weights_bytes(cfg: ModelConfig, dtype: str = "bf16") -> int:
    """All N parameters (every expert of an MoE) as inference stores them in `dtype`: the one
    weight-bytes function (sizing.memory.quant.deployed_weights_bytes): fp8 and int8 as their
    W8A8 formats (token table and lm_head 16-bit), the other dtypes N x their width (int4 packs two
    per byte)."""
    return deployed_weights_bytes(cfg, dtype)
