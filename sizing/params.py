"""Exact parameter counts, one function per component.

Symbols: V vocab rows (padded), d d_model, L layers, h query heads, h_kv kv heads,
d_h head width, f MLP hidden width, f_e expert MLP width, E experts, k experts per token,
P learned position rows. Formulas multiply with '·'.

Component keys match the reference model's module paths with the layer index and the
expert index removed (`blocks.3.attn.q.weight` -> `attn.q`), so verification compares
dicts component by component. The total is the sum of the components: breakdown and total
cannot disagree. PARAM_TERMS declares every component once (key, label, formula, function);
tests/test_formula_strings.py evaluates each formula against its function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .config import ModelConfig


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


# ---- the declarations: key, label, formula, function ----
Text = str | Callable[[ModelConfig], str]  # fixed text, or text built from the config


def _always(cfg: ModelConfig) -> bool:
    return True


@dataclass(frozen=True)
class ParamTerm:
    """One component, declared once. `formula` is in the symbols of the module docstring and
    counts what `params` returns: per layer for block parts, the whole model otherwise."""

    key: str
    label: Text
    formula: Text
    params: Callable[[ModelConfig], int]
    per_layer: bool  # a part of every block (the count is L times it)
    present: Callable[[ModelConfig], bool] = _always


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


def _experts_formula(cfg: ModelConfig) -> str:
    m = cfg.mlp_matrices
    return f"E·{m}·d·f_e" + _plus(cfg.mlp_bias, f"E·({m - 1}·f_e + d)")


def _is_moe(cfg: ModelConfig) -> bool:
    return cfg.is_moe


def _is_dense(cfg: ModelConfig) -> bool:
    return not cfg.is_moe


# Functions are called through their module names (lambdas) so that monkeypatching one in a
# test reaches the declarations too.
PARAM_TERMS: tuple[ParamTerm, ...] = (  # in forward order
    ParamTerm("tok_emb", "token embedding", "V·d", lambda cfg: token_embedding_params(cfg), per_layer=False),
    ParamTerm("pos_emb", "learned positions", "P·d", lambda cfg: position_embedding_params(cfg), per_layer=False),
    ParamTerm("emb_norm", "embedding norm", _norm_formula, lambda cfg: embedding_norm_params(cfg), per_layer=False),
    ParamTerm(
        "attn_norm",
        lambda cfg: "block norm (shared)" if cfg.shared_block_norm else "attention norm",
        _norm_formula,
        lambda cfg: norm_params(cfg),
        per_layer=True,
    ),
    ParamTerm(
        "attn.q",
        "W_Q",
        lambda cfg: "d·h·d_h" + _plus(cfg.qkv_bias, "h·d_h"),
        lambda cfg: q_proj_params(cfg),
        per_layer=True,
    ),
    ParamTerm(
        "attn.k",
        "W_K",
        lambda cfg: "d·h_kv·d_h" + _plus(cfg.qkv_bias, "h_kv·d_h"),
        lambda cfg: k_proj_params(cfg),
        per_layer=True,
    ),
    ParamTerm(
        "attn.v",
        "W_V",
        lambda cfg: "d·h_kv·d_h" + _plus(cfg.qkv_bias, "h_kv·d_h"),
        lambda cfg: v_proj_params(cfg),
        per_layer=True,
    ),
    ParamTerm(
        "attn.o",
        "W_O",
        lambda cfg: "h·d_h·d" + _plus(cfg.attn_out_bias, "d"),
        lambda cfg: o_proj_params(cfg),
        per_layer=True,
    ),
    ParamTerm(
        "mlp_norm",
        "MLP norm",
        _norm_formula,
        lambda cfg: norm_params(cfg),
        per_layer=True,
        present=lambda cfg: not cfg.shared_block_norm,
    ),
    ParamTerm(
        "moe.router",
        "router",
        lambda cfg: "d·E" + _plus(cfg.router_bias, "E"),
        lambda cfg: router_params(cfg),
        per_layer=True,
        present=_is_moe,
    ),
    ParamTerm(
        "moe.experts",
        lambda cfg: f"experts ({cfg.n_experts} x {cfg.mlp})",
        _experts_formula,
        lambda cfg: cfg.n_experts * expert_params(cfg),
        per_layer=True,
        present=_is_moe,
    ),
    ParamTerm(
        "mlp.up",
        "MLP up",
        lambda cfg: "d·f" + _plus(cfg.mlp_bias, "f"),
        lambda cfg: mlp_up_params(cfg, cfg.d_ff),
        per_layer=True,
        present=_is_dense,
    ),
    ParamTerm(
        "mlp.gate",
        "MLP gate",
        lambda cfg: "d·f" + _plus(cfg.mlp_bias, "f"),
        lambda cfg: mlp_gate_params(cfg, cfg.d_ff),
        per_layer=True,
        present=_is_dense,
    ),
    ParamTerm(
        "mlp.down",
        "MLP down",
        lambda cfg: "f·d" + _plus(cfg.mlp_bias, "d"),
        lambda cfg: mlp_down_params(cfg, cfg.d_ff),
        per_layer=True,
        present=_is_dense,
    ),
    ParamTerm("norm_f", "final norm", _norm_formula, lambda cfg: final_norm_params(cfg), per_layer=False),
    ParamTerm("lm_head", "lm_head", _lm_head_formula, lambda cfg: lm_head_params(cfg), per_layer=False),
)


@dataclass(frozen=True)
class ParamComponent:
    key: str
    label: str
    formula: str  # counts per_layer for block parts, count otherwise
    per_layer: int | None  # None for the parts outside the blocks
    count: int  # over the whole model


def param_components(cfg: ModelConfig) -> list[ParamComponent]:
    """Every parameter tensor group of the model, in forward order. Zero-sized parts
    (no position table, no embedding norm, tied head, dense model's router) are left out."""
    rows = []
    for term in PARAM_TERMS:
        if not term.present(cfg):
            continue
        size = term.params(cfg)
        per_layer = size if term.per_layer else None
        count = size * cfg.n_layers if term.per_layer else size
        if count:
            rows.append(ParamComponent(term.key, _text(term.label, cfg), _text(term.formula, cfg), per_layer, count))
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
