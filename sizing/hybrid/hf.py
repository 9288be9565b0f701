"""Hugging Face `config.json` of a hybrid model -> HybridModel, one converter per model_type,
reading each family's own layer-pattern fields:

- mamba2: every layer a Mamba-2 mixer, no MLP (Mamba2Config);
- jamba: attention where i % attn_layer_period == attn_layer_offset, Mamba-1 elsewhere; MoE where
  i % expert_layer_period == expert_layer_offset (JambaConfig.layers_block_type / layers_num_experts);
- nemotron_h: `hybrid_override_pattern` (M Mamba-2, * attention, - MLP, E MoE) or `layers_block_type`;
  one mixer or one MLP (dense, or Nemotron 3's MoE with a shared expert) per layer;
- bamba: attention at `attn_layer_indices`, Mamba-2 elsewhere, a SwiGLU MLP in every layer;
- qwen3_next: `layer_types` (linear_attention = gated DeltaNet, full_attention = gated attention),
  MoE where (i + 1) % decoder_sparse_step == 0 and i not in mlp_only_layers.

Defaults are those of the transformers 5.24 config classes. What is not modelled is refused
with one line naming the field.
"""

from __future__ import annotations

from sizing.hybrid.mixers import GatedDeltaNet, Mamba1Mixer, Mamba2Mixer
from sizing.hybrid.model import HybridModel
from sizing.inputs import ConfigError, ModelConfig, NotModelled
from sizing.inputs.hf import _get, _layer_indices
from sizing.validate import show


def _name(d: dict) -> str:
    return str(d.get("_name_or_path") or d.get("model_type"))


MAX_LAYERS = 100_000  # the layer pattern is listed per layer: a bound keeps a hostile config cheap


def _layers_count(d: dict) -> int:
    layers = _get(d, "num_hidden_layers", "n_layer", kind="int")
    if not 1 <= layers <= MAX_LAYERS:
        raise ConfigError(f"num_hidden_layers ({layers}) must be between 1 and {MAX_LAYERS:,}")
    return layers


def _vocab(d: dict) -> int:
    return _get(d, "vocab_size", kind="int")


def _base(d: dict, **fields) -> ModelConfig:
    """The attention / MLP / embedding sizes, as a ModelConfig (RMSNorm, no position table)."""
    out = dict(
        vocab_size=_vocab(d),
        d_model=_get(d, "hidden_size", "d_model", kind="int"),
        n_layers=_layers_count(d),
        norm="rmsnorm",
        position="none",
        tied_embeddings=_get(d, "tie_word_embeddings", "tie_embeddings", default=False, kind="bool"),
    )
    out.update(fields)
    try:
        return ModelConfig(**out)
    except ConfigError as exc:
        raise ConfigError(f"{_name(d)}: {exc}") from None


def _mamba2_from(d: dict, heads: str, head_dim: str, state: str, groups: str, kernel: str, **names) -> Mamba2Mixer:
    return Mamba2Mixer(
        d_model=_get(d, "hidden_size", "d_model", kind="int"),
        n_heads=_get(d, heads, kind="int"),
        head_dim=_get(d, head_dim, default=64, kind="int"),
        d_state=_get(d, state, default=128, kind="int"),
        n_groups=_get(d, groups, default=1, kind="int"),
        conv_kernel=_get(d, kernel, default=4, kind="int"),
        conv_bias=_get(d, names.get("conv_bias", "use_conv_bias"), default=True, kind="bool"),
        proj_bias=_get(d, names.get("proj_bias", "use_bias"), default=False, kind="bool"),
        chunk=_get(d, names.get("chunk", "chunk_size"), default=256, kind="int"),
    )


def _mamba2(d: dict) -> HybridModel:
    d_model = _get(d, "hidden_size", kind="int")
    mixer = _mamba2_from(d, "num_heads", "head_dim", "state_size", "n_groups", "conv_kernel")
    expand = _get(d, "expand", default=2, kind="positive")
    mixer = Mamba2Mixer(**{**mixer.__dict__, "d_inner_proj": int(expand * d_model)})
    L = _layers_count(d)
    base = _base(d, n_heads=mixer.n_heads if d_model % mixer.n_heads == 0 else 1, d_ff=d_model)
    return HybridModel(_name(d), base, mixer, (("mamba", "none"),) * L, layer_norms=1)


def _period(d: dict, period_field: str, period_default: int, offset_field: str, offset_default: int):
    """(period, offset) of a periodic layer pattern (layer i has it when i % period == offset):
    a period of at least 1 and an offset below it, else no layer would have it."""
    period = _get(d, period_field, default=period_default, kind="size")
    offset = _get(d, offset_field, default=offset_default, kind="index")
    if offset >= period:
        raise ConfigError(f"{offset_field} ({offset}) must be below {period_field} ({period}): no layer would match")
    return period, offset


def _jamba(d: dict) -> HybridModel:
    L, d_model = _layers_count(d), _get(d, "hidden_size", kind="int")
    period, offset = _period(d, "attn_layer_period", 8, "attn_layer_offset", 4)
    e_period, e_offset = _period(d, "expert_layer_period", 2, "expert_layer_offset", 1)
    n_experts = _get(d, "num_experts", default=16, kind="size")  # 1: every MLP dense
    kinds = tuple(
        (
            "attention" if i % period == offset else "mamba",
            "moe" if n_experts > 1 and i % e_period == e_offset else "dense",
        )
        for i in range(L)
    )
    base = _base(
        d,
        n_heads=_get(d, "num_attention_heads", default=32),
        n_kv_heads=_get(d, "num_key_value_heads", default=8),
        d_ff=_get(d, "intermediate_size", default=14336),
        mlp="swiglu",
        n_experts=n_experts if n_experts > 1 else 0,
        top_k=_get(d, "num_experts_per_tok", default=2) if n_experts > 1 else 0,
    )
    expand = _get(d, "mamba_expand", default=2, kind="size")
    mixer = Mamba1Mixer(
        d_model=d_model,
        d_inner=expand * d_model,
        d_state=_get(d, "mamba_d_state", default=16),
        dt_rank=_get(d, "mamba_dt_rank", default=-(-d_model // 16)),
        conv_kernel=_get(d, "mamba_d_conv", default=4),
        conv_bias=_get(d, "mamba_conv_bias", default=True, kind="bool"),
        proj_bias=_get(d, "mamba_proj_bias", default=False, kind="bool"),
    )
    return HybridModel(_name(d), base, mixer, kinds)


_NEMOTRON_CHARS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
# transformers 5.x names, and the legacy ones its remap_legacy_layer_types still reads
_NEMOTRON_NAMES = {"linear_attention": "mamba", "full_attention": "attention", "mlp": "mlp", "moe": "moe"}
_NEMOTRON_NAMES |= {"mamba": "mamba", "attention": "attention"}


def _nemotron_kinds(d: dict) -> list[str]:
    pattern = d.get("hybrid_override_pattern")
    if isinstance(pattern, str):
        bad = sorted(set(pattern) - set(_NEMOTRON_CHARS))
        if bad:
            raise ConfigError(f"hybrid_override_pattern ({show(pattern)}) has {bad}; valid letters: M * - E")
        return [_NEMOTRON_CHARS[c] for c in pattern]
    types = d.get("layers_block_type", d.get("layer_types"))
    if types is None:  # NemotronHConfig's default pattern
        types = ["linear_attention", "moe", "full_attention", "mlp"]
    if not isinstance(types, list) or any(t not in _NEMOTRON_NAMES for t in types):
        raise ConfigError(
            f"hybrid_override_pattern or layers_block_type ({show(types)}) must list the layers: "
            f"{', '.join(_NEMOTRON_NAMES)}"
        )
    return [_NEMOTRON_NAMES[t] for t in types]


_NEMOTRON_MAMBA_ALIASES = {
    "mamba_n_groups": "n_groups",
    "mamba_d_conv": "conv_kernel",
    "mamba_conv_bias": "use_conv_bias",
    "mamba_chunk_size": "chunk_size",
}


def _nemotron_moe_fields(d: dict) -> dict:
    """Nemotron 3's MoE ('E') layers: routed squared-ReLU experts (up, down; no bias) under a sigmoid
    router d x E (its e_score_correction_bias a buffer), and one shared expert of its own width."""
    if d.get("moe_latent_size") is not None:
        raise NotModelled("moe_latent_size (latent MoE projections) is not modelled; the MoE at d is")
    if _get(d, "mlp_bias", default=False, kind="bool"):
        raise NotModelled("mlp_bias (true) with MoE layers is not modelled: the routed experts have no bias")
    return dict(
        n_experts=_get(d, "n_routed_experts", default=8),
        top_k=_get(d, "num_experts_per_tok", default=2),
        expert_d_ff=_get(d, "moe_intermediate_size", default=7688),
        n_shared_experts=1,
        shared_expert_d_ff=_get(d, "moe_shared_expert_intermediate_size", default=7688),
    )


def _nemotron_h(d: dict) -> HybridModel:
    """One mixer or one MLP per block, one norm each; transformers sizes the stack by the pattern's
    length (num_hidden_layers is ignored when the pattern is given)."""
    kinds = _nemotron_kinds(d)
    if not 1 <= len(kinds) <= MAX_LAYERS:
        raise ConfigError(f"the layer pattern has {len(kinds)} layers; 1 to {MAX_LAYERS:,} are sized")
    d = dict(d, num_hidden_layers=len(kinds))
    for old, new in _NEMOTRON_MAMBA_ALIASES.items():  # NemotronHConfig reads the mamba_ spellings first
        if old in d:
            d[new] = d[old]
    base = _base(
        d,
        n_heads=_get(d, "num_attention_heads", default=32),
        n_kv_heads=_get(d, "num_key_value_heads", default=8),
        head_dim=_get(d, "head_dim", "attention_head_dim", default=None, kind="int?"),
        d_ff=_get(d, "intermediate_size", default=21504),
        mlp="relu",  # relu2: up, squared ReLU, down (two matrices)
        mlp_bias=_get(d, "mlp_bias", default=False, kind="bool"),
        **(_nemotron_moe_fields(d) if "moe" in kinds else {}),
    )
    mixer = _mamba2_from(
        d, "mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups", "conv_kernel", proj_bias="mamba_proj_bias"
    )
    table = {"mamba": ("mamba", "none"), "attention": ("attention", "none"), "mlp": ("none", "dense")}
    table["moe"] = ("none", "moe")
    return HybridModel(_name(d), base, mixer, tuple(table[k] for k in kinds), layer_norms=1)


def _swiglu_attention_base(d: dict, **extra):
    """The attention and SwiGLU MLP fields Bamba and Falcon-H1 read alike (HF's defaults)."""
    return _base(
        d,
        n_heads=_get(d, "num_attention_heads", default=32),
        n_kv_heads=_get(d, "num_key_value_heads", default=8),
        d_ff=_get(d, "intermediate_size", default=14336),
        mlp="swiglu",
        qkv_bias=_get(d, "attention_bias", default=False, kind="bool"),
        attn_out_bias=_get(d, "attention_bias", default=False, kind="bool"),
        mlp_bias=_get(d, "mlp_bias", default=False, kind="bool"),
        **extra,
    )


def _mamba_prefixed_mixer(d: dict):
    """The Mamba-2 mixer of configs that prefix its fields with `mamba_` (Bamba, Falcon-H1)."""
    return _mamba2_from(
        d,
        "mamba_n_heads",
        "mamba_d_head",
        "mamba_d_state",
        "mamba_n_groups",
        "mamba_d_conv",
        conv_bias="mamba_conv_bias",
        proj_bias="mamba_proj_bias",
        chunk="mamba_chunk_size",
    )


def _bamba(d: dict) -> HybridModel:
    L = _layers_count(d)
    attn = _layer_indices(d, "attn_layer_indices", L)  # null: no attention layer
    base = _swiglu_attention_base(d)
    mixer = _mamba_prefixed_mixer(d)
    kinds = tuple(("attention" if i in attn else "mamba", "dense") for i in range(L))
    return HybridModel(_name(d), base, mixer, kinds)


def _qwen3_next(d: dict) -> HybridModel:
    L = _layers_count(d)
    types = d.get("layer_types")
    if types is None:
        interval = _get(d, "full_attention_interval", default=4, kind="size")
        types = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(L)]
    if not isinstance(types, list) or len(types) != L or set(types) - {"full_attention", "linear_attention"}:
        raise ConfigError(f"layer_types ({show(types)}) must give full_attention or linear_attention for {L} layers")
    step = _get(d, "decoder_sparse_step", default=1, kind="size")
    dense_only = _layer_indices(d, "mlp_only_layers", L)
    n_experts = _get(d, "num_experts", default=512, kind="index")  # 0: every MLP dense
    kinds = tuple(
        (
            "attention" if t == "full_attention" else "mamba",
            "moe" if n_experts and i not in dense_only and (i + 1) % step == 0 else "dense",
        )
        for i, t in enumerate(types)
    )
    base = _base(
        d,
        n_heads=_get(d, "num_attention_heads", default=16),
        n_kv_heads=_get(d, "num_key_value_heads", default=2),
        head_dim=_get(d, "head_dim", default=256),
        d_ff=_get(d, "intermediate_size", default=5632),
        mlp="swiglu",
        qk_norm="head",
        n_experts=n_experts,
        top_k=_get(d, "num_experts_per_tok", default=10),
        expert_d_ff=_get(d, "moe_intermediate_size", default=512),
        n_shared_experts=1,
        shared_expert_d_ff=_get(d, "shared_expert_intermediate_size", default=512),
        shared_expert_gate=True,
        qkv_bias=_get(d, "attention_bias", default=False, kind="bool"),
        attn_out_bias=_get(d, "attention_bias", default=False, kind="bool"),
    )
    mixer = GatedDeltaNet(
        d_model=base.d_model,
        n_k_heads=_get(d, "linear_num_key_heads", default=16),
        n_v_heads=_get(d, "linear_num_value_heads", default=32),
        d_k=_get(d, "linear_key_head_dim", default=128),
        d_v=_get(d, "linear_value_head_dim", default=128),
        conv_kernel=_get(d, "linear_conv_kernel_dim", default=4),
    )
    return HybridModel(_name(d), base, mixer, kinds, gated_attention=True)


def _falcon_h1(d: dict) -> HybridModel:
    """Attention and a Mamba-2 mixer side by side in every layer, then a SwiGLU MLP. The muP
    multipliers are buffers, not parameters."""
    L = _layers_count(d)
    base = _swiglu_attention_base(d, head_dim=_get(d, "head_dim", default=None, kind="int?"))
    mixer = _mamba_prefixed_mixer(d)
    d_ssm = _get(d, "mamba_d_ssm", default=None, kind="int?")
    d_ssm = d_ssm if d_ssm is not None else int(_get(d, "mamba_expand", default=2, kind="positive") * base.d_model)
    if d_ssm != mixer.n_heads * mixer.head_dim:
        raise ConfigError(
            f"mamba_d_ssm ({d_ssm}) must equal mamba_n_heads x mamba_d_head ({mixer.n_heads * mixer.head_dim})"
        )
    gated = _get(d, "mamba_rms_norm", default=False, kind="bool")
    mixer = Mamba2Mixer(**{**mixer.__dict__, "gated_norm": gated})
    return HybridModel(_name(d), base, mixer, (("both", "dense"),) * L)


HYBRID_CONVERTERS = {
    "falcon_h1": _falcon_h1,
    "mamba2": _mamba2,
    "jamba": _jamba,
    "nemotron_h": _nemotron_h,
    "bamba": _bamba,
    "qwen3_next": _qwen3_next,
}
