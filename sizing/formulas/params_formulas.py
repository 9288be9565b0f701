"""The formula text of parameter components: the strings PARAM_TERMS (sizing/params.py) shows,
built from a config's switches (biases, MLA, norm placement), the layer symbols they use
(L, L_moe, L_dense) and when an optional part is present. No parameter counts here."""

from __future__ import annotations

from collections.abc import Callable

from sizing.inputs import ModelConfig

Text = str | Callable[[ModelConfig], str]  # fixed text, or text built from the config


def _text(text: Text, cfg: ModelConfig) -> str:
    return text if isinstance(text, str) else text(cfg)


def _plus(on: bool, term: str) -> str:
    """An optional bias term of a formula."""
    return f" + {term}" if on else ""


def _norm_formula(cfg: ModelConfig) -> str:
    return "d" + _plus(cfg.has_norm_bias, "d")


def _lm_head_formula(cfg: ModelConfig) -> str:
    if cfg.tied_embeddings:
        return "V (bias; weight tied to tok_emb)"  # present only with a bias
    return "d·V" + _plus(cfg.lm_head_bias, "V")


def _mlp_formula(m: int, width: str, bias: bool, copies: str = "") -> str:
    return f"{copies}{m}·d·{width}" + _plus(bias, f"{copies}({m - 1}·{width} + d)")


def _experts_formula(cfg: ModelConfig) -> str:
    return _mlp_formula(cfg.mlp_matrices, "f_e", cfg.mlp_bias, "E·")


def _shared_formula(cfg: ModelConfig) -> str:
    return _mlp_formula(cfg.mlp_matrices, "E_s·f_s", cfg.mlp_bias)


def _q_formula(cfg: ModelConfig) -> str:
    return "d·h·(d_n + d_r)" if cfg.is_mla else "d·h·d_h" + _plus(cfg.qkv_bias, "h·d_h")


def _plain_q(cfg: ModelConfig) -> bool:
    return not cfg.is_mla or cfg.q_lora_rank is None


def _mla_q(cfg: ModelConfig) -> bool:
    return cfg.is_mla and cfg.q_lora_rank is not None


def _not_mla(cfg: ModelConfig) -> bool:
    return not cfg.is_mla


def _qk_norm_formula(kv: bool) -> Callable[[ModelConfig], str]:
    return lambda cfg: "d_h" if cfg.qk_norm == "head" else ("h_kv·d_h" if kv else "h·d_h")


def _has_qk_norm(cfg: ModelConfig) -> bool:
    return cfg.qk_norm in ("head", "width")


def _sandwich(cfg: ModelConfig) -> bool:
    return cfg.norm_placement == "sandwich"


def _branch_label(cfg: ModelConfig, sublayer: str) -> str:
    return f"{sublayer} output norm" if cfg.norm_placement == "branch_post" else f"{sublayer} norm"


def _rms(width: str) -> Callable[[ModelConfig], int]:
    return lambda cfg: getattr(cfg, width)  # an RMSNorm gain over `width` features, no bias


# Which blocks a per-layer part sits in: its layer count and the symbol formulas write for it.
LAYER_KINDS: dict[str, tuple[Callable[[ModelConfig], int], str]] = {
    "all": (lambda cfg: cfg.n_layers, "L"),
    "moe": (lambda cfg: cfg.n_moe_layers, "L_moe"),
    "dense": (lambda cfg: cfg.n_dense_layers, "L_dense"),
}


def layer_count(cfg: ModelConfig, kind: str) -> int:
    return LAYER_KINDS[kind][0](cfg)


def layer_symbol(cfg: ModelConfig, kind: str) -> str:
    """ "L" when the part is in every block (a dense model, an all-MoE model), else L_moe / L_dense."""
    return "L" if layer_count(cfg, kind) == cfg.n_layers else LAYER_KINDS[kind][1]


# The seed's worked-example view (000_56565e6abcdabd53.txt): components grouped the way a
# person adds them up by hand. Every key lands in exactly one group.
PARAM_GROUPS: dict[str, tuple[str, ...]] = {
    "attention": (
        "attn.q",
        "attn.q_a",
        "attn.q_b",
        "attn.k",
        "attn.v",
        "attn.kv_a",
        "attn.kv_b",
        "attn.indexer",
        "attn.sinks",
        "attn.o",
    ),
    "mlp": ("mlp.up", "mlp.gate", "mlp.down", "moe.router", "moe.experts", "moe.shared", "moe.shared_gate"),
    "norms": (
        "emb_norm",
        "attn_norm",
        "attn.q_a_norm",
        "attn.kv_a_norm",
        "attn.q_norm",
        "attn.k_norm",
        "attn_post_norm",
        "mlp_norm",
        "mlp_post_norm",
        "norm_f",
    ),
    "embeddings": ("tok_emb", "pos_emb", "lm_head"),
}
