"""Megatron-LM's own count of a training iteration's FLOPs, the formula its logged TFLOP/s and
the MFU of papers built on it are quoted with, so that a published MFU converts back to the step
it was measured at (sizing.parallel.published_steps, convention `megatron-mfu`).

megatron/training/training.py, num_floating_point_operations, as of NVIDIA/Megatron-LM commit
8873b55d6a (2025-03-06, "Fixes in number of floating-point operation estimates for MoE and
attention layer"; the version the MoE Parallel Folding paper's MFU, arXiv:2504.14960, April
2025, is read with):

    12 B s L h^2 [ (1 + g/a + s/(2h)) (a d_h / h)
                   + (f_dense L_dense + (f_moe k + f_shared) L_moe) (3/2 if SwiGLU) / (L h)
                   + V / (2 L h) ]

B sequences of s tokens, L layers of width h, a query heads of d_h, g key/value groups, k routed
experts of width f_moe per token, V the padded vocabulary: 3 GEMMs per weight (forward, dgrad,
wgrad) x 2 FLOPs per multiply-add x 2 matrices per sublayer, causal attention counted half, the
router and the embedding not counted. Multi-latent attention has its own formula in later
versions and is not covered here.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig


def megatron_iteration_flops(cfg: ModelConfig, seq_len: int, sequences: int, causal_half: bool = True) -> float:
    """FLOPs of one iteration of `sequences` sequences by Megatron-LM's formula (see the module).
    causal_half False: the formula before commit 8873b55d6a (2025-03), attention counted full,
    s/h in place of s/(2h) (the one Megatron-LM's July 2024 H100 scaling table is quoted with)."""
    h, layers, s = cfg.d_model, cfg.n_layers, seq_len
    heads = cfg.n_heads
    groups = cfg.kv_heads
    attention = (1 + groups / heads + s / h / (2 if causal_half else 1)) * cfg.q_width / h
    gated = 1.5 if cfg.mlp_matrices == 3 else 1.0
    moe_layers = cfg.n_moe_layers if cfg.is_moe else 0
    dense_layers = layers - moe_layers
    per_moe = cfg.expert_ff * cfg.top_k + cfg.n_shared_experts * cfg.shared_ff if cfg.is_moe else 0
    mlp = (cfg.d_ff * dense_layers + per_moe * moe_layers) * gated / (layers * h)
    logits = cfg.padded_vocab / (2 * layers * h)
    return 12 * sequences * s * layers * h * h * (attention + mlp + logits)
