"""Hugging Face config.json of the hybrids of 2025-26 -> HybridModel, and the one reader of every
hybrid model_type (`hybrid_from_hf_config`, HYBRID_CONVERTERS):

- kimi_linear (Kimi Linear): Kimi Delta Attention layers and MLA layers (no query rank) by
  `layer_types`, the checkpoint's `linear_attn_config` (`full_attn_layers` / `kda_layers`, 1-based)
  or the class default (layer i is MLA when i > 0 and i % 4 == 0); the first k layers a dense
  SwiGLU MLP (`mlp_layer_types` or `first_k_dense_replace`), the rest MoE with one shared expert;
- granitemoehybrid (Granite 4.0-H): Mamba-2 or attention by `layer_types` (`layers_block_type`),
  every layer an MoE of `num_local_experts` beside a shared SwiGLU MLP of
  `shared_intermediate_size` (no MoE when num_local_experts is 0: Granite 4.0-H-Micro).

Defaults are those of the transformers 5.25 config classes (KimiLinearConfig,
GraniteMoeHybridConfig); the modeling code the counts follow is modeling_kimi_linear.py and
modeling_granitemoehybrid.py. tests/fixtures/hf_counts_2025.json holds transformers' counts.
"""

from __future__ import annotations

from sizing.hybrid.hf import HYBRID_CONVERTERS as _EARLIER
from sizing.hybrid.hf import MAX_LAYERS, _base, _layers_count, _name
from sizing.hybrid.mixers import KimiDeltaAttention, Mamba2Mixer
from sizing.hybrid.model import HybridModel
from sizing.inputs import ConfigError
from sizing.inputs.hf import _get, check_common_fields, first_dense_from_types
from sizing.validate import show

_FULL, _LINEAR = "full_attention", "linear_attention"
_LEGACY = {"attention": _FULL, "mamba": _LINEAR}  # transformers' remap_legacy_layer_types


def _layer_types(d: dict, L: int, default: list[str]) -> list[str]:
    """`layer_types` (or `layers_block_type`) as full / linear attention per layer, or `default`."""
    types = d.get("layer_types", d.get("layers_block_type"))
    if types is None:
        return default
    if not isinstance(types, list) or len(types) != L or any(_LEGACY.get(t, t) not in (_FULL, _LINEAR) for t in types):
        raise ConfigError(f"layer_types ({show(types)}) must give {_FULL} or {_LINEAR} for each of {L} layers")
    return [_LEGACY.get(t, t) for t in types]


def _kimi_layer_types(d: dict, L: int) -> list[str]:
    linear = d.get("linear_attn_config")
    if d.get("layer_types") is None and isinstance(linear, dict) and {"full_attn_layers", "kda_layers"} <= set(linear):
        full, kda = linear["full_attn_layers"], linear["kda_layers"]
        if not all(isinstance(x, list) for x in (full, kda)) or sorted(full + kda) != list(range(1, L + 1)):
            raise ConfigError(
                f"linear_attn_config full_attn_layers and kda_layers must list layers 1..{L} once each "
                f"(got {show(full)} and {show(kda)})"
            )
        return [_FULL if i + 1 in full else _LINEAR for i in range(L)]
    return _layer_types(d, L, [_FULL if i and i % 4 == 0 else _LINEAR for i in range(L)])


def _kimi_linear(d: dict) -> HybridModel:
    L = _layers_count(d)
    linear = d.get("linear_attn_config") if isinstance(d.get("linear_attn_config"), dict) else {}
    dense = min(first_dense_from_types(d, L, 1), L)
    types = _kimi_layer_types(d, L)
    kinds = tuple(
        ("attention" if t == _FULL else "mamba", "dense" if i < dense else "moe") for i, t in enumerate(types)
    )
    bias = _get(d, "attention_bias", default=False, kind="bool")
    base = _base(
        d,
        n_heads=_get(d, "num_attention_heads", default=32),
        d_ff=_get(d, "intermediate_size", default=9216),
        mlp="swiglu",
        position="rope",
        qkv_bias=bias,
        attn_out_bias=bias,
        kv_lora_rank=_get(d, "kv_lora_rank", default=512),
        q_lora_rank=_get(d, "q_lora_rank", default=None, kind="int?"),
        qk_nope_head_dim=_get(d, "qk_nope_head_dim", default=128),
        qk_rope_head_dim=_get(d, "qk_rope_head_dim", default=64),
        v_head_dim=_get(d, "v_head_dim", default=128),
        n_experts=_get(d, "num_experts", "num_local_experts", default=256),
        top_k=_get(d, "num_experts_per_token", "num_experts_per_tok", default=8),
        expert_d_ff=_get(d, "moe_intermediate_size", default=1024),
        n_shared_experts=_get(d, "num_shared_experts", "n_shared_experts", default=1),
    )
    mixer = KimiDeltaAttention(
        d_model=base.d_model,
        n_heads=_get(linear, "num_heads", default=_get(d, "linear_num_heads", default=32)),
        head_dim=_get(linear, "head_dim", default=_get(d, "linear_head_dim", default=128)),
        conv_kernel=_get(linear, "short_conv_kernel_size", default=_get(d, "linear_conv_kernel_dim", default=4)),
    )
    return HybridModel(_name(d), base, mixer, kinds)


def _granitemoehybrid(d: dict) -> HybridModel:
    L = _layers_count(d)
    types = _layer_types(d, L, [_LINEAR] * L)
    n_experts = _get(d, "num_local_experts", default=8)
    kinds = tuple(("attention" if t == _FULL else "mamba", "moe" if n_experts else "dense") for t in types)
    d_model, heads = _get(d, "hidden_size", default=4096), _get(d, "num_attention_heads", default=32)
    bias = _get(d, "attention_bias", default=False, kind="bool")
    shared = _get(d, "shared_intermediate_size", default=1024)
    moe = dict(n_experts=n_experts, top_k=_get(d, "num_experts_per_tok", default=2), n_shared_experts=1)
    moe |= dict(expert_d_ff=_get(d, "intermediate_size", default=11008), shared_expert_d_ff=shared)
    base = _base(
        dict(d, hidden_size=d_model),
        n_heads=heads,
        n_kv_heads=_get(d, "num_key_value_heads", default=None, kind="int?"),
        head_dim=_get(d, "head_dim", default=None, kind="int?"),
        d_ff=shared,  # the dense layers of a model without experts: the shared MLP alone
        mlp="swiglu",
        qkv_bias=bias,
        attn_out_bias=bias,
        **(moe if n_experts else {}),
    )
    expand = _get(d, "mamba_expand", default=2)
    n_heads = _get(d, "mamba_n_heads", default=128)
    head_dim = d.get("mamba_d_head", "auto")
    head_dim = expand * d_model // n_heads if head_dim in ("auto", None) else _get(d, "mamba_d_head")
    mixer = Mamba2Mixer(
        d_model=d_model,
        n_heads=n_heads,
        head_dim=head_dim,
        d_state=_get(d, "mamba_d_state", default=256),
        n_groups=_get(d, "mamba_n_groups", default=1),
        conv_kernel=_get(d, "mamba_d_conv", default=4),
        conv_bias=_get(d, "mamba_conv_bias", default=True, kind="bool"),
        proj_bias=_get(d, "mamba_proj_bias", default=False, kind="bool"),
        chunk=_get(d, "mamba_chunk_size", default=256),
        d_inner_proj=expand * d_model,
    )
    if mixer.n_heads * mixer.head_dim != expand * d_model:
        raise ConfigError(f"mamba_d_head x mamba_n_heads must equal mamba_expand x hidden_size ({expand * d_model})")
    return HybridModel(_name(d), base, mixer, kinds)


HYBRID_CONVERTERS = {**_EARLIER, "kimi_linear": _kimi_linear, "granitemoehybrid": _granitemoehybrid}
__all__ = ["HYBRID_CONVERTERS", "MAX_LAYERS", "hybrid_from_hf_config"]


def hybrid_from_hf_config(d: dict) -> HybridModel:
    if not isinstance(d, dict):
        raise ConfigError(f"a Hugging Face config must be a JSON object, got {type(d).__name__}")
    check_common_fields(d)  # the fields every config carries, as `estimate --config` checks them
    model_type = d.get("model_type")
    if not isinstance(model_type, str) or model_type not in HYBRID_CONVERTERS:
        raise ConfigError(
            f"model_type ({show(model_type)}) is not a hybrid this tool sizes; hybrids: {', '.join(HYBRID_CONVERTERS)}"
        )
    return HYBRID_CONVERTERS[model_type](d)
