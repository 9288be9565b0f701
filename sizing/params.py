"""Exact parameter counts, one function per component.

Symbols: V vocab rows (padded), d d_model, L layers, h query heads, h_kv kv heads,
d_h head width, f MLP hidden width, E experts, P learned position rows.

Component keys match the reference model's module paths with the layer index and the
expert index removed (`blocks.3.attn.q.weight` -> `attn.q`), so verification compares
dicts component by component. The total is the sum of the components: breakdown and total
cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import ModelConfig


@dataclass(frozen=True)
class ParamComponent:
    key: str
    label: str
    formula: str
    per_layer: int | None  # None for the parts outside the blocks
    count: int  # over the whole model


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
    return cfg.d_model * cfg.q_width + (cfg.q_width if cfg.qkv_bias else 0)


def k_proj_params(cfg: ModelConfig) -> int:
    return cfg.d_model * cfg.kv_width + (cfg.kv_width if cfg.qkv_bias else 0)


def v_proj_params(cfg: ModelConfig) -> int:
    return k_proj_params(cfg)  # same shape as K


def o_proj_params(cfg: ModelConfig) -> int:
    return cfg.q_width * cfg.d_model + (cfg.d_model if cfg.attn_out_bias else 0)


# ---- MLP, per layer (per expert for MoE) ----
def mlp_up_params(cfg: ModelConfig, width: int) -> int:
    return cfg.d_model * width + (width if cfg.mlp_bias else 0)


def mlp_gate_params(cfg: ModelConfig, width: int) -> int:
    return mlp_up_params(cfg, width) if cfg.gated_mlp else 0


def mlp_down_params(cfg: ModelConfig, width: int) -> int:
    return width * cfg.d_model + (cfg.d_model if cfg.mlp_bias else 0)


def expert_params(cfg: ModelConfig) -> int:
    """One expert: the same MLP as a dense layer, at the expert width."""
    f = cfg.expert_ff
    return mlp_up_params(cfg, f) + mlp_gate_params(cfg, f) + mlp_down_params(cfg, f)


def router_params(cfg: ModelConfig) -> int:
    return cfg.d_model * cfg.n_experts + (cfg.n_experts if cfg.router_bias else 0)


def param_components(cfg: ModelConfig) -> list[ParamComponent]:
    """Every parameter tensor group of the model, in forward order. Zero-sized parts
    (no position table, no embedding norm, tied head, dense model's router) are left out."""
    L = cfg.n_layers
    d, V, f = cfg.d_model, cfg.padded_vocab, cfg.d_ff
    nb = " + d" if cfg.has_norm_bias else ""
    rows: list[ParamComponent] = []

    def add(key, label, formula, per_layer=None, count=None):
        total = per_layer * L if per_layer is not None else count
        if total:
            rows.append(ParamComponent(key, label, formula, per_layer, total))

    bias = lambda on, term: f" + {term}" if on else ""  # noqa: E731  (formula text only)
    add("tok_emb", "token embedding", "V·d", count=token_embedding_params(cfg))
    add("pos_emb", "learned positions", "P·d", count=position_embedding_params(cfg))
    add("emb_norm", "embedding norm", f"d{nb}", count=embedding_norm_params(cfg))
    add("attn_norm", "attention norm" if not cfg.shared_block_norm else "block norm (shared)",
        f"d{nb}", per_layer=norm_params(cfg))
    add("attn.q", "W_Q", "d·h·d_h" + bias(cfg.qkv_bias, "h·d_h"), per_layer=q_proj_params(cfg))
    add("attn.k", "W_K", "d·h_kv·d_h" + bias(cfg.qkv_bias, "h_kv·d_h"), per_layer=k_proj_params(cfg))
    add("attn.v", "W_V", "d·h_kv·d_h" + bias(cfg.qkv_bias, "h_kv·d_h"), per_layer=v_proj_params(cfg))
    add("attn.o", "W_O", "h·d_h·d" + bias(cfg.attn_out_bias, "d"), per_layer=o_proj_params(cfg))
    if not cfg.shared_block_norm:
        add("mlp_norm", "MLP norm", f"d{nb}", per_layer=norm_params(cfg))
    if cfg.is_moe:
        add("moe.router", "router", "d·E" + bias(cfg.router_bias, "E"), per_layer=router_params(cfg))
        add("moe.experts", f"experts ({cfg.n_experts} x {cfg.mlp})",
            f"E·{cfg.mlp_matrices}·d·f_e" + bias(cfg.mlp_bias, f"E·({cfg.mlp_matrices - 1}·f_e + d)"),
            per_layer=cfg.n_experts * expert_params(cfg))
    else:
        add("mlp.up", "MLP up", "d·f" + bias(cfg.mlp_bias, "f"), per_layer=mlp_up_params(cfg, f))
        add("mlp.gate", "MLP gate", "d·f" + bias(cfg.mlp_bias, "f"), per_layer=mlp_gate_params(cfg, f))
        add("mlp.down", "MLP down", "f·d" + bias(cfg.mlp_bias, "d"), per_layer=mlp_down_params(cfg, f))
    add("norm_f", "final norm", f"d{nb}", count=final_norm_params(cfg))
    head_formula = "V (bias; weight tied to tok_emb)" if cfg.tied_embeddings else "d·V" + bias(cfg.lm_head_bias, "V")
    add("lm_head", "lm_head", head_formula, count=lm_head_params(cfg))
    return rows


def total_params(cfg: ModelConfig) -> int:
    return sum(c.count for c in param_components(cfg))


def embedding_params(cfg: ModelConfig) -> int:
    """The lookup tables: token and learned position embeddings (Kaplan et al. 2020 leave
    these out of N). An untied lm_head is a matmul on every token and stays in."""
    return token_embedding_params(cfg) + position_embedding_params(cfg)


def non_embedding_params(cfg: ModelConfig) -> int:
    return total_params(cfg) - embedding_params(cfg)


def inactive_expert_params(cfg: ModelConfig) -> int:
    """Parameters of the experts a token does not visit: (E - k) experts per layer."""
    return (cfg.n_experts - cfg.top_k) * expert_params(cfg) * cfg.n_layers if cfg.is_moe else 0


def active_params(cfg: ModelConfig) -> int:
    """Parameters used for one token: everything but the (E - k) experts not routed to."""
    return total_params(cfg) - inactive_expert_params(cfg)


def layer_params(cfg: ModelConfig) -> int:
    return sum(c.per_layer for c in param_components(cfg) if c.per_layer is not None)


# The seed's worked-example view (000_56565e6abcdabd53.txt): components grouped the way a
# person adds them up by hand. Every key lands in exactly one group.
PARAM_GROUPS: dict[str, tuple[str, ...]] = {
    "attention": ("attn.q", "attn.k", "attn.v", "attn.o"),
    "mlp": ("mlp.up", "mlp.gate", "mlp.down", "moe.router", "moe.experts"),
    "norms": ("emb_norm", "attn_norm", "mlp_norm", "norm_f"),
    "embeddings": ("tok_emb", "pos_emb", "lm_head"),
}


def param_groups(cfg: ModelConfig) -> dict[str, dict[str, int | None]]:
    """{group: {"per_layer": int | None, "count": int}}; the counts sum to the total."""
    out = {}
    for group, keys in PARAM_GROUPS.items():
        rows = [c for c in param_components(cfg) if c.key in keys]
        per_layer = [c.per_layer for c in rows if c.per_layer is not None]
        out[group] = {
            "per_layer": sum(per_layer) if per_layer and len(per_layer) == len(rows) else None,
            "count": sum(c.count for c in rows),
        }
    return out
