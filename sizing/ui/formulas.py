"""Estimate's formula strings with the model's numbers plugged in, for the page: "d·h·d_h"
becomes "4096·32·128". The symbols mean what sizing.formulas.params' docstring says they mean (the same
table tests/test_formula_strings.py evaluates every formula with); a symbol not in the table is
left as written."""

from __future__ import annotations

import re

from sizing.inputs import ModelConfig

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# names that are functions of the formulas, not symbols: pairs(T,W), chunks(T,C)
_FUNCTIONS = frozenset({"pairs", "chunks"})
# a formula may end in a note in words, "V (bias; weight tied to tok_emb)": kept as written
_NOTE = re.compile(r"\s+\([^()]*[A-Za-z]{3,}[^()]*\)$")


def formula_symbols(cfg: ModelConfig, seq_len: int | None) -> dict[str, int]:
    """Symbol -> value for one model at T = seq_len."""
    values = {
        "V": cfg.padded_vocab,
        "d": cfg.d_model,
        "L": cfg.n_layers,
        "h": cfg.n_heads,
        "h_kv": cfg.kv_heads,
        "d_h": cfg.d_head,
        "f": cfg.d_ff,
        "f_e": cfg.expert_ff,
        "E": cfg.n_experts,
        "k": cfg.top_k,
        "P": cfg.max_positions,
        "L_moe": cfg.n_moe_layers,
        "L_dense": cfg.n_dense_layers,
        "E_s": cfg.n_shared_experts,
        "f_s": cfg.shared_ff,
        "L_local": cfg.n_local_layers,
        "L_global": cfg.n_global_layers,
    }
    if cfg.attention_chunk is not None:
        values["C"] = cfg.attention_chunk
    if cfg.is_mla:
        values |= {"d_n": cfg.qk_nope_head_dim, "d_r": cfg.qk_rope_head_dim, "d_v": cfg.v_head_dim}
        values |= {"r_kv": cfg.kv_lora_rank, "r_q": cfg.q_lora_rank or 0}
    if seq_len is not None:
        values["T"] = seq_len
    if cfg.sliding_window is not None:
        values["W"] = cfg.sliding_window
    return values


def plug(formula: str, symbols: dict[str, int]) -> str:
    """The formula with each known symbol replaced by its value; a trailing note kept."""
    note = _NOTE.search(formula)
    body = formula[: note.start()] if note else formula

    def value(match: re.Match) -> str:
        name = match.group(0)
        return name if name in _FUNCTIONS or name not in symbols else str(symbols[name])

    return _IDENTIFIER.sub(value, body) + (note.group(0) if note else "")


def plugged_formulas(result: dict) -> dict:
    """{"symbols", "params": {key: {formula, plugged, value, per_layer}}, "flops": {...}} from
    `sizing estimate --format json`'s result."""
    cfg = ModelConfig(**result["model"]["config"])
    symbols = formula_symbols(cfg, result["flops"]["seq_len"])
    out = {"symbols": symbols}
    for part in ("params", "flops"):
        section = result[part]
        per_layer = section.get("per_layer", {})
        out[part] = {
            key: {
                "formula": text,
                "plugged": plug(text, symbols),
                "value": section["components"].get(key),
                "per_layer": per_layer.get(key),
            }
            for key, text in section["formulas"].items()
        }
    return out
