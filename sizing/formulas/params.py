"""Exact parameter counts, one function per component.

Symbols: V vocab rows (padded), d d_model, L layers, h query heads, h_kv kv heads,
d_h head width, f MLP hidden width, f_e expert MLP width, E experts, k experts per token,
P learned position rows. Formulas multiply with '·'. The layer patterns: L_moe MoE layers,
L_dense dense ones (L = L_moe + L_dense); E_s shared experts of width f_s. Latent attention
(MLA): r_q query rank, r_kv key/value latent rank, d_n and d_r the per-head q/k widths
without and with RoPE, d_v the per-head value width. DeepSeek-V3.2's sparse attention (DSA):
H_I indexer heads of d_I, each query attending to its top k_I keys.

Component keys match the reference model's module paths with the layer index and the
expert index removed (`blocks.3.attn.q.weight` -> `attn.q`), so verification compares
dicts component by component. The total is the sum of the components: breakdown and total
cannot disagree. PARAM_TERMS declares every component once (key, label, formula, function);
tests/test_formula_strings.py evaluates each formula against its function.

"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sizing.formulas.params_dense import (  # noqa: F401  (re-exported: sizing.formulas.params is their public home)
    embedding_norm_params,
    final_norm_params,
    k_proj_params,
    lm_head_params,
    mlp_down_params,
    mlp_gate_params,
    mlp_params,
    mlp_up_params,
    norm_params,
    o_proj_params,
    position_embedding_params,
    q_proj_params,
    token_embedding_params,
    v_proj_params,
)
from sizing.formulas.params_formulas import (  # noqa: F401
    LAYER_KINDS,
    PARAM_GROUPS,
    Text,
    _branch_label,
    _experts_formula,
    _has_qk_norm,
    _lm_head_formula,
    _mla_q,
    _mlp_formula,
    _norm_formula,
    _not_mla,
    _plain_q,
    _plus,
    _q_formula,
    _qk_norm_formula,
    _rms,
    _sandwich,
    _shared_formula,
    _text,
    layer_count,
    layer_symbol,
)
from sizing.formulas.params_moe import (
    attention_sink_params,
    dsa_indexer_params,
    expert_params,
    mla_kv_a_params,
    mla_kv_b_params,
    mla_q_a_params,
    mla_q_b_params,
    qk_norm_params,
    router_params,
    shared_expert_gate_params,
    shared_expert_params,
)
from sizing.inputs import ModelConfig, as_config

# ---- the declarations: key, label, formula, function ----


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
    per_layer: bool  # a part of blocks (the count is the layer count of `layers` times it)
    present: Callable[[ModelConfig], bool] = _always
    layers: str = "all"  # a LAYER_KINDS key: every block, the MoE blocks or the dense ones


# Functions are called through their module names (lambdas) so that monkeypatching one in a
# test reaches the declarations too.
PARAM_TERMS: tuple[ParamTerm, ...] = (  # in forward order
    ParamTerm("tok_emb", "token embedding", "V·d", lambda cfg: token_embedding_params(cfg), per_layer=False),
    ParamTerm("pos_emb", "learned positions", "P·d", lambda cfg: position_embedding_params(cfg), per_layer=False),
    ParamTerm("emb_norm", "embedding norm", _norm_formula, lambda cfg: embedding_norm_params(cfg), per_layer=False),
    ParamTerm(
        "attn_norm",
        lambda cfg: "block norm (shared)" if cfg.shared_block_norm else _branch_label(cfg, "attention"),
        _norm_formula,
        lambda cfg: norm_params(cfg),
        per_layer=True,
    ),
    ParamTerm("attn.q", "W_Q", _q_formula, lambda cfg: q_proj_params(cfg), per_layer=True, present=_plain_q),
    ParamTerm(
        "attn.q_a",
        "W_Q down (MLA)",
        lambda cfg: "d·r_q" + _plus(cfg.qkv_bias, "r_q"),
        lambda cfg: mla_q_a_params(cfg),
        per_layer=True,
        present=_mla_q,
    ),
    ParamTerm("attn.q_a_norm", "q latent norm (MLA)", "r_q", _rms("q_lora_rank"), per_layer=True, present=_mla_q),
    ParamTerm(
        "attn.q_b", "W_Q up (MLA)", "r_q·h·(d_n + d_r)", lambda cfg: mla_q_b_params(cfg), per_layer=True, present=_mla_q
    ),
    ParamTerm(
        "attn.k",
        "W_K",
        lambda cfg: "d·h_kv·d_h" + _plus(cfg.qkv_bias, "h_kv·d_h"),
        lambda cfg: k_proj_params(cfg),
        per_layer=True,
        present=_not_mla,
    ),
    ParamTerm(
        "attn.v",
        "W_V",
        lambda cfg: "d·h_kv·d_h" + _plus(cfg.qkv_bias, "h_kv·d_h"),
        lambda cfg: v_proj_params(cfg),
        per_layer=True,
        present=_not_mla,
    ),
    ParamTerm(
        "attn.kv_a",
        "W_KV down + rope key (MLA)",
        lambda cfg: "d·(r_kv + d_r)" + _plus(cfg.qkv_bias, "r_kv + d_r"),
        lambda cfg: mla_kv_a_params(cfg),
        per_layer=True,
        present=lambda cfg: cfg.is_mla,
    ),
    ParamTerm(
        "attn.kv_a_norm",
        "kv latent norm (MLA)",
        "r_kv",
        _rms("kv_lora_rank"),
        per_layer=True,
        present=lambda c: c.is_mla,
    ),
    ParamTerm(
        "attn.kv_b",
        "W_KV up (MLA)",
        "r_kv·h·(d_n + d_v)",
        lambda cfg: mla_kv_b_params(cfg),
        per_layer=True,
        present=lambda cfg: cfg.is_mla,
    ),
    ParamTerm(
        "attn.indexer",
        "DSA indexer",
        "r_q·H_I·d_I + d·d_I + 2·d_I + d·H_I",
        lambda cfg: dsa_indexer_params(cfg),
        per_layer=True,
        present=lambda cfg: cfg.has_indexer,
    ),
    ParamTerm(
        "attn.q_norm",
        "q norm",
        _qk_norm_formula(False),
        lambda cfg: qk_norm_params(cfg, False),
        per_layer=True,
        present=_has_qk_norm,
    ),
    ParamTerm(
        "attn.k_norm",
        "k norm",
        _qk_norm_formula(True),
        lambda cfg: qk_norm_params(cfg, True),
        per_layer=True,
        present=_has_qk_norm,
    ),
    ParamTerm(
        "attn.sinks",
        "attention sinks",
        "h",
        lambda cfg: attention_sink_params(cfg),
        per_layer=True,
        present=lambda cfg: cfg.attention_sinks,
    ),
    ParamTerm(
        "attn.o",
        "W_O",
        lambda cfg: ("h·d_v·d" if cfg.is_mla else "h·d_h·d") + _plus(cfg.attn_out_bias, "d"),
        lambda cfg: o_proj_params(cfg),
        per_layer=True,
    ),
    ParamTerm(
        "attn_post_norm",
        "attention output norm",
        _norm_formula,
        lambda cfg: norm_params(cfg),
        per_layer=True,
        present=_sandwich,
    ),
    ParamTerm(
        "mlp_norm",
        lambda cfg: _branch_label(cfg, "MLP"),
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
        present=lambda cfg: cfg.is_moe,
        layers="moe",
    ),
    ParamTerm(
        "moe.experts",
        lambda cfg: f"experts ({cfg.n_experts} x {cfg.mlp})",
        _experts_formula,
        lambda cfg: cfg.n_experts * expert_params(cfg),
        per_layer=True,
        present=lambda cfg: cfg.is_moe,
        layers="moe",
    ),
    ParamTerm(
        "moe.shared",
        lambda cfg: f"shared experts ({cfg.n_shared_experts} x {cfg.mlp})",
        _shared_formula,
        lambda cfg: shared_expert_params(cfg),
        per_layer=True,
        present=lambda cfg: cfg.n_shared_experts > 0,
        layers="moe",
    ),
    ParamTerm(
        "moe.shared_gate",
        "shared-expert gate",
        "d",
        lambda cfg: shared_expert_gate_params(cfg),
        per_layer=True,
        present=lambda cfg: cfg.shared_expert_gate,
        layers="moe",
    ),
    ParamTerm(
        "mlp.up",
        "MLP up",
        lambda cfg: "d·f" + _plus(cfg.mlp_bias, "f"),
        lambda cfg: mlp_up_params(cfg, cfg.d_ff),
        per_layer=True,
        layers="dense",
    ),
    ParamTerm(
        "mlp.gate",
        "MLP gate",
        lambda cfg: "d·f" + _plus(cfg.mlp_bias, "f"),
        lambda cfg: mlp_gate_params(cfg, cfg.d_ff),
        per_layer=True,
        layers="dense",
    ),
    ParamTerm(
        "mlp.down",
        "MLP down",
        lambda cfg: "f·d" + _plus(cfg.mlp_bias, "d"),
        lambda cfg: mlp_down_params(cfg, cfg.d_ff),
        per_layer=True,
        layers="dense",
    ),
    ParamTerm(
        "mlp_post_norm",
        "MLP output norm",
        _norm_formula,
        lambda cfg: norm_params(cfg),
        per_layer=True,
        present=_sandwich,
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
    layers: str = "L"  # for block parts: how many blocks hold it, as a symbol (L, L_moe, L_dense)


def param_components(cfg: ModelConfig) -> list[ParamComponent]:
    """Every parameter tensor group of the model, in forward order. Zero-sized parts
    (no position table, no embedding norm, tied head, dense model's router) are left out.
    `cfg` may also be a Preset or a preset name."""
    cfg = as_config(cfg)
    rows = []
    for term in PARAM_TERMS:
        if not term.present(cfg):
            continue
        size = term.params(cfg)
        per_layer = size if term.per_layer else None
        count = term_count(cfg, term, size)
        if count:
            label, formula = _text(term.label, cfg), _text(term.formula, cfg)
            symbol = layer_symbol(cfg, term.layers)
            rows.append(ParamComponent(term.key, label, formula, per_layer, count, symbol))
    return rows


def term_count(cfg: ModelConfig, term: ParamTerm, size: int | None = None) -> int:
    """A component's parameters in the whole model: per layer x its layers' count for block parts."""
    size = term.params(cfg) if size is None else size
    return size * layer_count(cfg, term.layers) if term.per_layer else size


def total_params(cfg: ModelConfig) -> int:
    """The sum of the components (param_components), without building their text: sweeps call it
    for thousands of configs. `cfg` may also be a Preset or a preset name."""
    cfg = as_config(cfg)
    layers = {kind: count(cfg) for kind, (count, _symbol) in LAYER_KINDS.items()}  # once, not per term
    return sum(t.params(cfg) * (layers[t.layers] if t.per_layer else 1) for t in PARAM_TERMS if t.present(cfg))


def embedding_params(cfg: ModelConfig) -> int:
    """The lookup tables: token and learned position embeddings (Kaplan et al. 2020 leave
    these out of N). An untied lm_head is a matmul on every token and stays in."""
    return token_embedding_params(cfg) + position_embedding_params(cfg)


def non_embedding_params(cfg: ModelConfig) -> int:
    return total_params(cfg) - embedding_params(cfg)


def inactive_expert_params(cfg: ModelConfig) -> int:
    """Parameters of the experts a token does not visit: (E - k) experts per layer."""
    return (cfg.n_experts - cfg.top_k) * expert_params(cfg) * cfg.n_moe_layers if cfg.is_moe else 0


def active_params(cfg: ModelConfig) -> int:
    """Parameters used for one token: everything but the (E - k) experts not routed to in each
    MoE layer (dense layers, shared experts, router and the k routed experts all count)."""
    cfg = as_config(cfg)
    return total_params(cfg) - inactive_expert_params(cfg)


def layer_params(cfg: ModelConfig) -> int:
    """Parameters of the largest block: a dense block or an MoE block, whichever is bigger."""
    sizes = {"all": 0, "moe": 0, "dense": 0}
    for term in PARAM_TERMS:
        if term.per_layer and term.present(cfg) and layer_count(cfg, term.layers):
            sizes[term.layers] += term.params(cfg)
    return sizes["all"] + max(sizes["moe"], sizes["dense"])


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
