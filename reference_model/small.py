"""A preset at toy size with every architecture switch kept, for the checks that need real
tensors (fvcore's trace, saved-activation bytes) on a CPU in seconds."""

from __future__ import annotations

import dataclasses

from sizing.config import ModelConfig


def small_config(cfg: ModelConfig, seq_len: int = 32) -> ModelConfig:
    """`cfg` at toy size with its switches kept: 2 layers, head width 16, 4 query heads with
    the same kind of attention (MHA stays MHA, GQA becomes 4 query / 2 kv heads, MQA 4 / 1),
    an explicit head_dim where the preset's d_head is not d_model / h, the MLP width ratio, up
    to 4 experts, a window of T/2 so that it bites, vocab 96, enough learned positions."""
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
        n_layers=2,
        n_heads=h,
        n_kv_heads=kv,
        head_dim=d_head if explicit_head else None,
        d_ff=ratio(cfg.d_ff),
        expert_d_ff=ratio(cfg.expert_d_ff) if cfg.expert_d_ff is not None else None,
        n_experts=experts,
        top_k=min(cfg.top_k, experts),
        sliding_window=seq_len // 2 if cfg.sliding_window is not None else None,
        max_positions=2 * seq_len + 2 if cfg.position == "learned" else cfg.max_positions,
    )
