"""A preset at toy size with every architecture switch kept, for the checks that need real
tensors (fvcore's trace, saved-activation bytes) on a CPU in seconds."""

from __future__ import annotations

import dataclasses

from sizing.inputs import ModelConfig


def _patterns(cfg: ModelConfig) -> dict:
    """The per-layer patterns at toy size: one dense layer first, MoE every second layer,
    a global (or NoPE) layer every second, over 4 layers so each kind appears."""
    small = {
        "first_dense_layers": min(cfg.first_dense_layers, 1),
        "moe_layer_step": min(cfg.moe_layer_step, 2),
        "full_attention_every": min(cfg.full_attention_every, 2),
        "nope_layer_every": min(cfg.nope_layer_every, 2),
    }
    patterned = any(small[k] != v for k, v in (("first_dense_layers", 0), ("moe_layer_step", 1)))
    patterned |= bool(small["full_attention_every"] or small["nope_layer_every"])
    return dict(small, n_layers=4 if patterned else 2)


def _mla(cfg: ModelConfig) -> dict:
    """Latent attention at toy size: latent 24, query rank 20 (when the preset has one), heads
    of 8 without RoPE + 4 with it, values of 12 (d_v != d_n, as a check of the AV width)."""
    if not cfg.is_mla:
        return {}
    q_rank = 20 if cfg.q_lora_rank is not None else None
    return dict(kv_lora_rank=24, q_lora_rank=q_rank, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=12)


def small_config(cfg: ModelConfig, seq_len: int = 32) -> ModelConfig:
    """`cfg` at toy size with its switches kept: 2 layers (4 with per-layer patterns), head
    width 16, 4 query heads with the same kind of attention (MHA stays MHA, GQA becomes 4 query
    / 2 kv heads, MQA 4 / 1), an explicit head_dim where the preset's d_head is not d_model / h,
    the MLP width ratios, up to 4 experts, a window or chunk of T/2 so that it bites, vocab 96,
    enough learned positions, small latent-attention widths."""
    h, d_head = 4, 16
    kv = None if cfg.kv_heads == cfg.n_heads else 1 if cfg.kv_heads == 1 else 2
    explicit_head = cfg.head_dim is not None and cfg.head_dim * cfg.n_heads != cfg.d_model
    d = 48 if explicit_head else h * d_head
    ratio = lambda width: max(8, round(width / cfg.d_model * d))  # noqa: E731
    experts = min(cfg.n_experts, 4)
    return dataclasses.replace(
        cfg,
        vocab_size=96,
        d_model=d,
        n_heads=h,
        n_kv_heads=kv,
        head_dim=d_head if explicit_head else None,
        d_ff=ratio(cfg.d_ff),
        expert_d_ff=ratio(cfg.expert_d_ff) if cfg.expert_d_ff is not None else None,
        shared_expert_d_ff=ratio(cfg.shared_expert_d_ff) if cfg.shared_expert_d_ff is not None else None,
        n_experts=experts,
        top_k=min(cfg.top_k, experts),
        sliding_window=seq_len // 2 if cfg.sliding_window is not None else None,
        attention_chunk=seq_len // 2 if cfg.attention_chunk is not None else None,
        max_positions=2 * seq_len + 2 if cfg.position == "learned" else cfg.max_positions,
        **_patterns(cfg),
        **_mla(cfg),
    )
