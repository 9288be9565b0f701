"""Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 section 2.2): D sequential MTP modules,
each predicting one token further ahead. Module k (vLLM's DeepSeekMultiTokenPredictorLayer,
the checkpoint's model.layers.61 for DeepSeek-V3, D = num_nextn_predict_layers = 1):

    h'_k = eh_proj([enorm(emb(t_{i+k})); hnorm(h_{k-1})])      eh_proj: 2d -> d, no bias
    h_k  = Block(h'_k)                                          one full MoE block (MLA + MoE)
    logits = head(shared_head.norm(h_k))

The paper shares the embedding and the output head with the main model; the checkpoint stores
a copy of each inside the module (embed_tokens, shared_head.head), so it counts them:
`mtp_params(cfg, copies=True)`. Symbols as sizing.formulas.params; the block is sizing.formulas.params'
largest block (the MoE one for DeepSeek-V3).
"""

from __future__ import annotations

from sizing.formulas import params as P
from sizing.formulas.flops import (
    MATMUL_FLOPS_PER_MAC,
    TRAINING_PER_FORWARD,
    attended_pairs,
    attention_matmul_flops,
    per_token,
)
from sizing.inputs import ModelConfig
from sizing.validate import require_choice, require_int
from sizing.vocabulary import ATTENTION_CONVENTIONS


def mtp_module_params(cfg: ModelConfig, copies: bool = False) -> dict[str, int]:
    """One MTP module by component: enorm, hnorm (d each), eh_proj (2d·d), the block, the
    shared head's norm (d); with `copies`, the embedding and head copies (V·d each)."""
    d = cfg.d_model
    out = {
        "mtp.enorm": P.norm_params(cfg),
        "mtp.hnorm": P.norm_params(cfg),
        "mtp.eh_proj": 2 * d * d,
        "mtp.block": P.layer_params(cfg),
        "mtp.head_norm": P.norm_params(cfg),
    }
    if copies:
        out["mtp.embed_copy"] = P.token_embedding_params(cfg)
        out["mtp.head_copy"] = cfg.padded_vocab * d
    return out


def mtp_params(cfg: ModelConfig, depth: int = 1, copies: bool = False) -> int:
    """D modules' parameters."""
    return require_int("mtp depth", depth, 0) * sum(mtp_module_params(cfg, copies).values())


def _block_active_params(cfg: ModelConfig) -> int:
    """The block's weights one token multiplies: the (E - k) skipped experts left out."""
    skipped = (cfg.n_experts - cfg.top_k) * P.expert_params(cfg) if cfg.is_moe else 0
    return P.layer_params(cfg) - skipped


def mtp_forward_flops_per_token(cfg: ModelConfig, keys: int) -> int:
    """Forward FLOPs of one MTP module for one token whose query meets `keys` keys: eh_proj,
    the block's active weights (norm gains counted as weights, <0.01%), QK^T and AV of one
    layer, and the head d·V (the shared head is a matmul on every token)."""
    weights = 2 * cfg.d_model * cfg.d_model + _block_active_params(cfg) + cfg.padded_vocab * cfg.d_model
    scores = attention_matmul_flops(1, cfg.n_heads, cfg.qk_head_width, keys)
    values = attention_matmul_flops(1, cfg.n_heads, cfg.v_head_width, keys)
    return MATMUL_FLOPS_PER_MAC * weights + scores + values


def mtp_training_flops(cfg: ModelConfig, seq_len: int, depth: int = 1, attention: str = "causal") -> int:
    """Forward + backward FLOPs the D modules add to one training sequence of T tokens:
    3 x D x (T x weights + the module's attention over the sequence), `attention` labelled as
    sizing.formulas.flops labels it (full: T keys per query; causal: T(T+1)/2 pairs)."""
    T, D = require_int("seq_len", seq_len, 1), require_int("mtp depth", depth, 0)
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    pairs = attended_pairs(T, attention)
    weights = mtp_forward_flops_per_token(cfg, 0) * T
    attn = attention_matmul_flops(1, cfg.n_heads, cfg.qk_head_width + cfg.v_head_width, pairs)
    return TRAINING_PER_FORWARD * D * (weights + attn)


def mtp_draft_flops_per_token(cfg: ModelConfig, context: int) -> int:
    """One draft token from an MTP module used as a speculative draft (serve), with `context`
    positions in its own cache: the module's forward at C keys. The acceptance rate, and what it
    saves, belong to the serving model (sizing.serve)."""
    return mtp_forward_flops_per_token(cfg, require_int("context", context, 1))


def mtp_summary(cfg: ModelConfig, seq_len: int, depth: int, attention: str = "full") -> dict:
    """What D MTP modules add, sized apart from the model's totals (transformers builds none, and no
    published total counts them): one module's parameters by component (with the checkpoint's embedding
    and head copies), the D modules' parameters as the paper shares them and as the checkpoint stores
    them, and their forward and training FLOPs per token at T (`attention` as the model's)."""
    D = require_int("mtp depth", depth, 1)
    training = mtp_training_flops(cfg, seq_len, D, attention)
    return {
        "depth": D,
        "module_components": mtp_module_params(cfg, copies=True),
        "params_shared": mtp_params(cfg, D),
        "params_checkpoint": mtp_params(cfg, D, copies=True),
        "forward_flops_per_token": per_token(training // TRAINING_PER_FORWARD, seq_len),
        "training_flops_per_token": per_token(training, seq_len),
    }
