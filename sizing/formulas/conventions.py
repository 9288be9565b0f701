"""Training compute under the published conventions, each written once: this tool's count,
Kaplan's 6N, PaLM's Appendix B, Megatron's, Chinchilla's Appendix F and Kaplan's Table 1.

`model_training_flops` is this tool's figure for a run (forward + backward matmul FLOPs, no
recomputation: PaLM's "model FLOPs"); every report, the profiler and `estimate` call it.

Every `*_convention` function below returns training FLOPs per token by component (the keys
of COMPONENTS), each formula applied as its paper writes it. Pure Python: `reports/
conventions.md` (sizing.report.conventions_page) renders them.
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.formulas.flops import (
    MATMUL_FLOPS_PER_MAC,
    SELECTIVE_RECOMPUTE_KEYS,
    TRAINING_PER_FORWARD,
    FlopBreakdown,
    attention_matmul_flops,
    flop_breakdown,
    kaplan_6n_per_token,
)
from sizing.formulas.params import active_params, token_embedding_params
from sizing.inputs import ModelConfig
from sizing.training import training_flops

# ---- this tool's conventions, as `sizing estimate --format json` states them
CONVENTIONS = {
    "flop": "2 FLOPs per multiply-add",
    "counted_ops": "matrix products only (linear layers, QK^T, AV, lm_head); norms, softmax, activations, "
    "RoPE, residual adds and the embedding lookup count 0",
    "backward": "2 x forward for matmuls",
    "recompute_full": "one more forward of the transformer blocks (lm_head is not checkpointed)",
    "kaplan_6n": "6 x active parameters (embeddings included), the approximation",
    "non_embedding": "total minus the token and learned-position lookup tables",
}
ATTENTION_NOTES = {
    "full": "full: every query against every key, T keys per query (FlopCounterMode, PaLM MFU, nanoGPT)",
    "causal": "causal: query i meets min(i, window) keys, T(T+1)/2 pairs per sequence without a window",
}


# ---- this tool's figure for a run
def model_flops_per_token(breakdown: FlopBreakdown) -> int | float:
    """Forward + backward matmul FLOPs per token (model FLOPs: recomputation is hardware work
    and is left out, as MFU does)."""
    return breakdown.per_token(breakdown.model_training)


def model_training_flops(cfg: ModelConfig, seq_len: int, tokens: int, attention: str = "full") -> int | float:
    """Model FLOPs for `tokens` training tokens in sequences of `seq_len`."""
    return training_flops(model_flops_per_token(flop_breakdown(cfg, seq_len, attention)), tokens)


# ---- PaLM (Chowdhery et al. 2022, Appendix B): 6N + 12·L·H·Q·T per token
def palm_attention_flops_per_token(n_layers: int, n_heads: int, d_head: int, seq_len: int) -> int:
    """PaLM's 12·L·H·Q·T: QK^T and AV over T keys per query (full attention), forward +
    backward: 3 x 2 products x 2·L·H·Q·T."""
    scores = values = attention_matmul_flops(n_layers, n_heads, d_head, pairs=seq_len)
    return TRAINING_PER_FORWARD * (scores + values)


def palm_flops_per_token(n_params: int, n_layers: int, n_heads: int, d_head: int, seq_len: int) -> int:
    """PaLM's model FLOPs per token, the basis of its MFU: 6N + 12·L·H·Q·T."""
    return kaplan_6n_per_token(n_params) + palm_attention_flops_per_token(n_layers, n_heads, d_head, seq_len)


# ---- the published conventions side by side, training FLOPs per token by component
COMPONENTS = {
    "linear": "linear layers of the blocks",
    "attention": "attention QKᵀ + AV",
    "softmax": "softmax",
    "lm_head": "lm_head (logits)",
    "embedding": "token embedding lookup",
    "other": "biases, norms, position table",
}


def _empty() -> dict[str, int]:
    return dict.fromkeys(COMPONENTS, 0)


def ours_convention(cfg: ModelConfig, T: int, attention: str = "full") -> dict[str, int]:
    """This tool: matmuls only, backward = 2 x forward (so training = 3 x forward)."""
    out = _empty()
    for c in flop_breakdown(cfg, T, attention).components:
        kind = "attention" if c.key in SELECTIVE_RECOMPUTE_KEYS else "lm_head" if c.key == "lm_head" else "linear"
        out[kind] += TRAINING_PER_FORWARD * c.forward_per_token
    return out


def block_weights(cfg: ModelConfig) -> int:
    """Weights of the blocks' linear layers one token meets (top-k experts for MoE): their
    forward FLOPs per token over the 2 FLOPs of a multiply-add."""
    return (
        sum(
            c.forward_per_token
            for c in flop_breakdown(cfg, 1, "full").components
            if c.key not in SELECTIVE_RECOMPUTE_KEYS and c.key != "lm_head"
        )
        // MATMUL_FLOPS_PER_MAC
    )


def kaplan_6n_convention(cfg: ModelConfig, T: int) -> dict[str, int]:
    """6 x every active parameter: lookup tables, biases and norms included, attention scores left out."""
    out = _empty()
    out["linear"] = kaplan_6n_per_token(block_weights(cfg))
    # the head's weight, or the tied table that serves as it
    out["lm_head"] = kaplan_6n_per_token(cfg.d_model * cfg.padded_vocab)
    out["embedding"] = 0 if cfg.tied_embeddings else kaplan_6n_per_token(token_embedding_params(cfg))
    out["other"] = kaplan_6n_per_token(active_params(cfg)) - sum(out.values())
    return out


def palm_convention(cfg: ModelConfig, T: int) -> dict[str, int]:
    """PaLM Appendix B: 6N + 12·L·H·Q·T (N: all parameters here; see the notes)."""
    out = kaplan_6n_convention(cfg, T)
    out["attention"] = palm_attention_flops_per_token(cfg.n_layers, cfg.n_heads, cfg.d_head, T)
    return out


def megatron_convention(cfg: ModelConfig, T: int, recompute: bool = False) -> dict[str, int]:
    """Per iteration, B sequences of s tokens, l layers, hidden h, vocab V (divided by B·s here):
    model FLOPs 72·B·s·l·h²·(1 + s/6h + V/12hl); with full recomputation (Narayanan et al.
    2021, section 5.1) 96·B·s·l·h²·(1 + s/6h + V/16hl)."""
    L, h, s, V = cfg.n_layers, cfg.d_model, T, cfg.padded_vocab  # the paper's l is L here
    k, head_divisor = (96, 16) if recompute else (72, 12)
    out = _empty()
    out["linear"] = k * L * h * h
    out["attention"] = k * L * h * h * s // (6 * h)
    # 72·l·h²·V/(12hl) = 96·l·h²·V/(16hl) = 6hV: the head is not recomputed
    out["lm_head"] = k * L * h * h * V // (head_divisor * h * L)
    return out


def chinchilla_convention(cfg: ModelConfig, T: int) -> dict[str, int]:
    """Hoffmann et al. 2022 Appendix F, per sequence divided by T; backward = 2 x forward.
    Assumes MHA projections (key_size·num_heads for K and V too) and a two-matrix dense block."""
    d, f, V, L, H = cfg.d_model, cfg.d_ff, cfg.padded_vocab, cfg.n_layers, cfg.n_heads
    kh = cfg.q_width  # key_size x num_heads
    train = TRAINING_PER_FORWARD
    out = _empty()
    out["embedding"] = train * 2 * V * d
    out["linear"] = train * L * (2 * 3 * d * kh + 2 * kh * d + 2 * (d * f + d * f))
    out["attention"] = train * L * (2 * T * kh + 2 * T * kh)
    out["softmax"] = train * L * 3 * H * T
    out["lm_head"] = train * 2 * d * V
    return out


def kaplan_table_convention(cfg: ModelConfig, T: int) -> dict[str, int]:
    """Kaplan et al. 2020 Table 1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn with
    N = 2·d_model·n_layer·(2·d_attn + d_ff) (non-embedding); training ≈ 3 × C_forward."""
    d, L, d_attn, d_ff = cfg.d_model, cfg.n_layers, cfg.q_width, cfg.d_ff
    n = 2 * d * L * (2 * d_attn + d_ff)
    out = _empty()
    out["linear"] = TRAINING_PER_FORWARD * 2 * n
    out["attention"] = TRAINING_PER_FORWARD * 2 * L * T * d_attn
    return out


Convention = Callable[[ModelConfig, int], dict[str, int]]

CONVENTION_TABLE: list[tuple[str, Convention, str]] = [
    # (name, function, what it is)
    ("ours, full", lambda cfg, T: ours_convention(cfg, T, "full"), "this tool, `--attention full` (the default)"),
    ("ours, causal", lambda cfg, T: ours_convention(cfg, T, "causal"), "this tool, `--attention causal`"),
    ("6N", kaplan_6n_convention, "Kaplan et al. 2020; GPT-3 Table D.1"),
    ("PaLM", palm_convention, "Chowdhery et al. 2022 (arXiv:2204.02311) Appendix B"),
    ("Megatron", megatron_convention, "Korthikanti et al. 2022 / Narayanan et al. 2021, model FLOPs (no recompute)"),
    (
        "Megatron + recompute",
        lambda cfg, T: megatron_convention(cfg, T, True),
        "Narayanan et al. 2021 (arXiv:2104.04473) §5.1",
    ),
    ("Chinchilla", chinchilla_convention, "Hoffmann et al. 2022 (arXiv:2203.15556) Appendix F"),
    ("Kaplan Table 1", kaplan_table_convention, "Kaplan et al. 2020 (arXiv:2001.08361) Table 1"),
]
