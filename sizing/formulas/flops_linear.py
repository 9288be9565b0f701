"""Forward FLOPs of the weight matmuls, one function per component: the Q/K/V/O projections,
MLA's down- and up-projections, the dense MLP, the router, the experts and the lm_head. Each
returns the FLOPs of one sequence of T tokens summed over the layers that hold it; sizing/flops.py
declares them (FLOP_TERMS) with their formulas."""

from __future__ import annotations

from sizing.inputs import ModelConfig

MATMUL_FLOPS_PER_MAC = 2  # one multiply + one add


def _linear_flops(
    cfg: ModelConfig, seq_len: int, in_features: int, out_features: int, layers: int | None = None
) -> int:
    """A d_in x d_out weight applied to T tokens in `layers` blocks (default every block)."""
    n = cfg.n_layers if layers is None else layers
    return MATMUL_FLOPS_PER_MAC * in_features * out_features * seq_len * n


def q_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    """d -> h·d_h; under MLA without a query rank, d -> h·(d_n + d_r)."""
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.n_heads * cfg.qk_head_width)


def k_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.kv_width)


def v_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.kv_width)


def o_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.n_heads * cfg.v_head_width, cfg.d_model)


# MLA as trained (DeepSeek-V2 section 2.1): the down- and up-projections run on every token.
def mla_q_a_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.q_lora_rank)


def mla_q_b_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.q_lora_rank, cfg.n_heads * cfg.qk_head_width)


def mla_kv_a_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.kv_lora_rank + cfg.qk_rope_head_dim)


def mla_kv_b_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.kv_lora_rank, cfg.n_heads * (cfg.qk_nope_head_dim + cfg.v_head_dim))


def dsa_indexer_flops(cfg: ModelConfig, seq_len: int) -> int:
    """DeepSeek-V3.2's indexer projections on every token: wq_b r_q -> H_I·d_I, wk d -> d_I and
    weights_proj d -> H_I (the LayerNorm counts 0, as every norm)."""
    H, d_i = cfg.index_heads, cfg.index_head_dim
    return _linear_flops(cfg, seq_len, 1, cfg.q_lora_rank * H * d_i + cfg.d_model * d_i + cfg.d_model * H)


def mlp_matrix_flops(cfg: ModelConfig, seq_len: int) -> int:
    """One dense d x f (or f x d) MLP matrix, in the dense layers."""
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.d_ff, cfg.n_dense_layers)


def router_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.n_experts, cfg.n_moe_layers)


def active_expert_flops(cfg: ModelConfig, seq_len: int) -> int:
    """top_k experts per token, each with the MLP's matrices at the expert width, in the MoE layers."""
    return cfg.top_k * cfg.mlp_matrices * _linear_flops(cfg, seq_len, cfg.d_model, cfg.expert_ff, cfg.n_moe_layers)


def shared_expert_flops(cfg: ModelConfig, seq_len: int) -> int:
    """The shared experts run on every token of an MoE layer: one MLP of width E_s·f_s."""
    width = cfg.n_shared_experts * cfg.shared_ff
    return cfg.mlp_matrices * _linear_flops(cfg, seq_len, cfg.d_model, width, cfg.n_moe_layers)


def shared_expert_gate_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, 1, cfg.n_moe_layers)  # Qwen2-MoE: d -> 1


def lm_head_flops(cfg: ModelConfig, seq_len: int) -> int:
    return MATMUL_FLOPS_PER_MAC * cfg.d_model * cfg.padded_vocab * seq_len  # once, after the blocks
