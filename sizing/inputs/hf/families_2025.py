"""Hugging Face converters for the decoder families of 2025-26 that are stacks of attention + MLP
blocks: GLM-4.5/4.6 (`glm4_moe`), MiniMax-M2 (`minimax_m2`), DeepSeek-V3.2 (`deepseek_v32`: MLA
with DSA's lightning indexer), and the aliases that name an architecture already known (Kimi-K2's
`kimi_k2` is DeepSeek-V3's). Each reads its family's own fields as transformers 5.25's modeling
code builds them (`transformers/models/<type>/modeling_<type>.py`); the defaults are those of its
config class. Counts: tests/fixtures/hf_counts_2025.json (tools/hf_counts_2025.py).

Multi-token-prediction modules (`num_nextn_predict_layers`) are read into `mtp_modules` and sized
apart (sizing.formulas.mtp): transformers builds none of them, and no published total counts them.
"""

from __future__ import annotations

from sizing.inputs.config import ConfigError
from sizing.inputs.hf.fields import _checked, _get, _rope, _rope_decoder, _unsupported, _who
from sizing.validate import show


def mtp_modules(d: dict) -> int:
    """The MTP modules a checkpoint carries beside the model (0 when the file states none)."""
    value = _get(d, "num_nextn_predict_layers", "num_mtp_layers", default=0, kind="int?") or 0
    return _checked(d, "num_nextn_predict_layers", value, minimum=0)


def first_dense_from_types(d: dict, n_layers: int, default: int) -> int:
    """The first k dense layers, from `mlp_layer_types` ("dense" / "sparse" per layer; DeepSeek-V3.2,
    Kimi-Linear) when given, else `first_k_dense_replace` (default `default`). A list whose dense
    layers are not the first k is refused: the calculator holds that pattern only."""
    types = d.get("mlp_layer_types")
    if types is None:
        return _checked(d, "first_k_dense_replace", _get(d, "first_k_dense_replace", default=default), 0)
    if not (isinstance(types, list) and len(types) == n_layers and set(types) <= {"dense", "sparse"}):
        raise ConfigError(
            f"{_who(d)}: field 'mlp_layer_types' ({show(types)}) must list 'dense' or 'sparse' for each of "
            f"{n_layers} layers"
        )
    k = types.index("sparse") if "sparse" in types else n_layers
    if any(t != "sparse" for t in types[k:]):
        raise _unsupported(d, "mlp_layer_types", "<list>", "only the first k layers can be dense")
    return k


def _glm4_moe(d: dict) -> dict:
    """GLM-4.5 / 4.6 / Air (Glm4MoeForCausalLM): q/k/v biased by attention_bias, o never; half the
    head rotated (partial_rotary_factor 0.5); per-head q/k RMSNorm with use_qk_norm; the first
    first_k_dense_replace layers dense at intermediate_size, the rest MoE (sigmoid router d x E, its
    e_score_correction_bias a buffer) with one shared MLP of n_shared_experts x moe_intermediate_size."""
    bias = _get(d, "attention_bias", default=False, kind="bool")
    layers = _checked(d, "num_hidden_layers", _get(d, "num_hidden_layers"))
    return dict(
        _rope_decoder(d, tie=False, eps=1e-5),
        rotary_fraction=_rope(d, "partial_rotary_factor", default=0.5),  # Glm4MoeConfig's default
        qkv_bias=bias,
        attn_out_bias=False,
        qk_norm="head" if _get(d, "use_qk_norm", default=False, kind="bool") else "none",
        n_experts=_get(d, "n_routed_experts", "num_local_experts", default=128),
        top_k=_get(d, "num_experts_per_tok", default=8),
        expert_d_ff=_get(d, "moe_intermediate_size", default=1408),
        n_shared_experts=_get(d, "n_shared_experts", default=1, kind="int?") or 0,
        first_dense_layers=min(first_dense_from_types(d, layers, 1), layers),
        mtp_modules=mtp_modules(d),
    )


def _minimax_m2(d: dict) -> dict:
    """MiniMax-M2 (MiniMaxM2ForCausalLM): RMSNorm over the whole q (h·d_h) and k (h_kv·d_h), RoPE on
    `rotary_dim` of each head, every layer MoE (sigmoid router d x E, no shared expert; its
    e_score_correction_bias a buffer), no biases."""
    base = _rope_decoder(d, tie=False, kv=8, head_dim=128)
    rotary_dim = _get(d, "rotary_dim", default=None, kind="int?")  # the released checkpoints' spelling
    head_dim = base["head_dim"] or base["d_model"] // base["n_heads"]
    fraction = 1.0 if rotary_dim is None else rotary_dim / head_dim
    return dict(
        base,
        rotary_fraction=_rope(d, "partial_rotary_factor", default=fraction),
        qk_norm="width",
        n_experts=_get(d, "num_local_experts", "num_experts", default=256),
        top_k=_get(d, "num_experts_per_tok", default=8),
        mtp_modules=mtp_modules(d),
    )


def deepseek_v32_fields(d: dict) -> dict:
    """DeepSeek-V3.2's additions to DeepSeek-V3 (DeepseekV32Indexer): the indexer's heads, head width
    and the keys each query keeps; the dense layers may be spelled as mlp_layer_types."""
    if _get(d, "q_lora_rank", default=1536, kind="int?") is None:
        raise _unsupported(d, "q_lora_rank", None, "DeepSeek-V3.2's indexer reads the query latent (q_lora_rank)")
    layers = _checked(d, "num_hidden_layers", _get(d, "num_hidden_layers"))
    return {
        "index_heads": _get(d, "index_n_heads", default=64),
        "index_head_dim": _get(d, "index_head_dim", default=128),
        "index_topk": _get(d, "index_topk", default=2048),
        "first_dense_layers": min(first_dense_from_types(d, layers, 3), layers),
    }


# A model_type that names an architecture already sized under another name. Kimi-K2's config.json
# says `kimi_k2` with architectures ["DeepseekV3ForCausalLM"] (moonshotai/Kimi-K2-Instruct).
MODEL_TYPE_ALIASES: dict[str, str] = {"kimi_k2": "deepseek_v3"}

CONVERTERS_2025 = {
    "glm4_moe": _glm4_moe,
    "minimax_m2": _minimax_m2,
}
