"""Parameter counts of the dense block's parts and of what sits outside the blocks: embeddings,
norms, the Q/K/V/O projections and the MLP. One function per component; symbols as in
sizing/params.py, which declares each one (PARAM_TERMS) and sums them."""

from __future__ import annotations

from sizing.inputs import ModelConfig


# ---- outside the blocks ----
def token_embedding_params(cfg: ModelConfig) -> int:
    return cfg.padded_vocab * cfg.d_model  # V x d lookup table


def position_embedding_params(cfg: ModelConfig) -> int:
    return cfg.max_positions * cfg.d_model if cfg.position == "learned" else 0  # P x d; RoPE has none


def norm_params(cfg: ModelConfig) -> int:
    """One norm over d features: gain (and LayerNorm's bias)."""
    return cfg.d_model * (2 if cfg.has_norm_bias else 1)


def embedding_norm_params(cfg: ModelConfig) -> int:
    """BLOOM's word_embeddings_layernorm: one norm on the embedding output, before the blocks."""
    return norm_params(cfg) if cfg.embedding_norm else 0


def final_norm_params(cfg: ModelConfig) -> int:
    return norm_params(cfg) if cfg.final_norm else 0


def lm_head_params(cfg: ModelConfig) -> int:
    """d x V unembedding unless tied to the token embedding (then counted once, there).
    A bias (Phi-2) is its own tensor even when the weight is tied."""
    weight = 0 if cfg.tied_embeddings else cfg.d_model * cfg.padded_vocab
    return weight + (cfg.padded_vocab if cfg.lm_head_bias else 0)


# ---- attention, per layer ----
def q_proj_params(cfg: ModelConfig) -> int:
    """h·d_h query heads; under MLA without a query rank, h·(d_n + d_r) and no bias (DeepSeek-V2-Lite)."""
    if cfg.is_mla:
        return cfg.d_model * cfg.n_heads * cfg.qk_head_width
    return cfg.d_model * cfg.q_width + (cfg.q_width if cfg.qkv_bias else 0)


def k_proj_params(cfg: ModelConfig) -> int:
    return cfg.d_model * cfg.kv_width + (cfg.kv_width if cfg.qkv_bias else 0)


def v_proj_params(cfg: ModelConfig) -> int:
    return k_proj_params(cfg)  # same shape as K


def o_proj_params(cfg: ModelConfig) -> int:
    """h heads of d_v (= d_h unless MLA) back to d."""
    width = cfg.n_heads * cfg.v_head_width
    return width * cfg.d_model + (cfg.d_model if cfg.attn_out_bias else 0)


# ---- MLP, per layer (per expert for MoE) ----
def mlp_up_params(cfg: ModelConfig, width: int) -> int:
    return cfg.d_model * width + (width if cfg.mlp_bias else 0)


def mlp_gate_params(cfg: ModelConfig, width: int) -> int:
    return mlp_up_params(cfg, width) if cfg.gated_mlp else 0


def mlp_down_params(cfg: ModelConfig, width: int) -> int:
    return width * cfg.d_model + (cfg.d_model if cfg.mlp_bias else 0)


def mlp_params(cfg: ModelConfig, width: int) -> int:
    return mlp_up_params(cfg, width) + mlp_gate_params(cfg, width) + mlp_down_params(cfg, width)
