"""Parameter counts of the parts only some architectures have: multi-head latent attention (MLA),
q/k norms, attention sinks, MoE experts, shared experts and the router. Kept apart from the dense
block's parts (params_dense.py) so that each file reads as one family."""

from __future__ import annotations

from sizing.formulas.params_dense import mlp_params
from sizing.inputs import ModelConfig


# Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 section 2.1; HF DeepseekV3Attention):
# q = W_qb · norm(W_qa · x), [c_kv, k_rope] = W_kva · x, [k_nope, v] = W_kvb · norm(c_kv).
# The biases follow attention_bias on q_a, kv_a (qkv_bias here) and o (attn_out_bias).
def mla_q_a_params(cfg: ModelConfig) -> int:
    return cfg.d_model * cfg.q_lora_rank + (cfg.q_lora_rank if cfg.qkv_bias else 0)


def mla_q_b_params(cfg: ModelConfig) -> int:
    return cfg.q_lora_rank * cfg.n_heads * cfg.qk_head_width


def mla_kv_a_params(cfg: ModelConfig) -> int:
    """d -> the latent c_kv (r_kv) and the one rope key every head shares (d_r)."""
    width = cfg.kv_lora_rank + cfg.qk_rope_head_dim
    return cfg.d_model * width + (width if cfg.qkv_bias else 0)


def mla_kv_b_params(cfg: ModelConfig) -> int:
    return cfg.kv_lora_rank * cfg.n_heads * (cfg.qk_nope_head_dim + cfg.v_head_dim)


def dsa_indexer_params(cfg: ModelConfig) -> int:
    """DeepSeek-V3.2's lightning indexer (arXiv:2512.02556 section 2.1; HF DeepseekV32Indexer): wq_b
    r_q -> H_I·d_I from MLA's query latent, wk d -> d_I (one key per token, shared by the heads),
    its LayerNorm (weight and bias, 2·d_I) and weights_proj d -> H_I, the per-head weights."""
    if not cfg.index_heads:
        return 0
    H, d_i = cfg.index_heads, cfg.index_head_dim
    return cfg.q_lora_rank * H * d_i + cfg.d_model * d_i + 2 * d_i + cfg.d_model * H


def qk_norm_params(cfg: ModelConfig, kv: bool) -> int:
    """RMSNorm gain of q (kv False) or k: one d_h vector shared by the heads ("head": Qwen3,
    Gemma-3), one over the whole projection ("width": OLMo-2), none ("unweighted": Llama-4)."""
    if cfg.qk_norm == "head":
        return cfg.d_head
    if cfg.qk_norm == "width":
        return cfg.kv_width if kv else cfg.q_width
    return 0


def attention_sink_params(cfg: ModelConfig) -> int:
    return cfg.n_heads if cfg.attention_sinks else 0  # GPT-OSS: one logit per head


def expert_params(cfg: ModelConfig) -> int:
    """One expert: the same MLP as a dense layer, at the expert width."""
    return mlp_params(cfg, cfg.expert_ff)


def shared_expert_params(cfg: ModelConfig) -> int:
    """The shared experts of one MoE layer, built as one MLP of width E_s·f_s as HF DeepSeek and
    Qwen2-MoE build them (with a bias, the fused MLP has one down bias, not E_s)."""
    return mlp_params(cfg, cfg.n_shared_experts * cfg.shared_ff) if cfg.n_shared_experts else 0


def shared_expert_gate_params(cfg: ModelConfig) -> int:
    return cfg.d_model if cfg.shared_expert_gate else 0  # Qwen2-MoE: Linear(d, 1, bias=False)


def router_params(cfg: ModelConfig) -> int:
    """W_router d x E (+ E bias: GPT-OSS). DeepSeek-V3's e_score_correction_bias is a buffer in
    HF's modeling code (nn.Buffer), not a parameter: not counted."""
    return cfg.d_model * cfg.n_experts + (cfg.n_experts if cfg.router_bias else 0)
