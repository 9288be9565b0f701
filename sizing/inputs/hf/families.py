"""Hugging Face converters for the architectures of 2024-26: DeepSeek-V2/V3 (latent attention,
shared experts, first-k dense layers), Qwen2-MoE / Qwen3 / Qwen3-MoE, Gemma-2/3 (four norms per
block, local/global layers), Llama-4 (chunked attention, NoPE layers, interleaved MoE), GPT-OSS
(sinks, biased router and experts), Phi-3 (fused projections: the same counts) and OLMo-2.

Defaults are those of the transformers 5.24.0 config classes, so a config.json gives the model
transformers builds (tests/fixtures/hf_counts_modern.json). Per-layer lists (`layer_types`,
`no_rope_layers`, `moe_layers`, `mlp_only_layers`) are read as the periodic patterns
ModelConfig holds (`full_attention_every`, `nope_layer_every`, `moe_layer_step`,
`first_dense_layers`); a list that is no such pattern is refused with the reason, never
approximated.
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.inputs.config import ConfigError
from sizing.inputs.hf.families_2025 import CONVERTERS_2025, deepseek_v32_fields, mtp_modules
from sizing.inputs.hf.fields import (
    _checked,
    _common,
    _get,
    _mlp,
    _qwen2_window,
    _rope,
    _rope_decoder,
    _unsupported,
    _who,
)
from sizing.validate import show

# Model types another command sizes (sizing/hybrid, sizing/vision_hf): the refusal names it.
SIZED_BY_COMMAND: dict[str, str] = {
    **dict.fromkeys(
        ("mamba2", "jamba", "nemotron_h", "bamba", "falcon_h1", "qwen3_next", "kimi_linear", "granitemoehybrid"),
        "sizing hybrid --config",
    ),
    **dict.fromkeys(("llava", "qwen2_5_vl"), "sizing vision --config"),
}

# Not transformers (attention + MLP) stacks: refused with this reason.
_RECURRENT = "its layers are state-space or linear-recurrence mixers"
REFUSED_MODEL_TYPES: dict[str, str] = {
    "mamba": _RECURRENT,
    "falcon_mamba": _RECURRENT,
    "rwkv": _RECURRENT,
    "xlstm": _RECURRENT,
    "recurrent_gemma": _RECURRENT + " (RG-LRU) interleaved with local attention",
    "zamba": "a hybrid: Mamba layers with a shared attention block",
    "zamba2": "a hybrid: Mamba-2 layers with shared attention blocks",
    "lfm2": "a hybrid: short convolutions interleaved with attention layers",
    "minimax": "a hybrid: lightning (linear) attention layers interleaved with softmax attention",
}


def _every(d: dict, field: str, marked: list[bool], what: str) -> int:
    """The n with marked[i] == ((i + 1) % n == 0) for every layer i (0 when none is marked):
    the periodic pattern `field` spells as a list. Any other list is refused."""
    if not any(marked):
        return 0
    n = marked.index(True) + 1
    if n == 1 and not all(marked):
        n = 0
    if n and all(m == ((i + 1) % n == 0) for i, m in enumerate(marked)):
        return n
    raise _unsupported(
        d,
        field,
        "<list>",
        f"its {what} layers are not every n-th layer (layer i when (i + 1) % n == 0), the "
        "one per-layer pattern the calculator holds",
    )


def _layer_list(d: dict, field: str, n_layers: int, allowed: tuple) -> list | None:
    value = d.get(field)
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == n_layers and all(v in allowed for v in value)):
        raise ConfigError(
            f"{_who(d)}: field '{field}' ({show(value)}) must be a list of {n_layers} (num_hidden_layers) "
            f"of {' or '.join(map(repr, allowed))}"
        )
    return value


def _n_layers(d: dict) -> int:
    return _checked(d, "num_hidden_layers", _get(d, "num_hidden_layers"))


def _bias(d: dict, default: bool) -> dict:
    bias = _get(d, "attention_bias", default=default, kind="bool")  # q, k, v and o alike
    return {"qkv_bias": bias, "attn_out_bias": bias}


def _local_layers(d: dict, window: int | None, default_every: int, local: str = "sliding_attention") -> dict:
    """sliding_window plus the layers that attend to all keys, from `layer_types` (5.x, and 4.x
    gemma2/gpt_oss) or the family's default pattern (every `default_every`-th layer full)."""
    if window is None:
        return {"sliding_window": None}
    types = _layer_list(d, "layer_types", _n_layers(d), ("full_attention", local))
    if types is None:
        every = default_every
    else:
        if all(t == "full_attention" for t in types):
            return {"sliding_window": None}
        every = _every(d, "layer_types", [t == "full_attention" for t in types], "full-attention")
    return {"sliding_window": window, "full_attention_every": every}


# ---- DeepSeek-V2 / V3: latent attention, shared experts, the first k layers dense
def _deepseek(d: dict, v3: bool) -> dict:
    base = _common(d)
    kv = _get(d, "num_key_value_heads", default=None, kind="int?")
    if kv not in (None, base["n_heads"]):
        raise _unsupported(d, "num_key_value_heads", kv, "latent attention has one key and value per query head")
    if _get(d, "moe_layer_freq", default=1) != 1:
        raise _unsupported(
            d,
            "moe_layer_freq",
            d["moe_layer_freq"],
            "transformers' DeepseekV2/V3 ignore it while DeepSeek's own code makes layer i MoE when "
            "i % freq == 0; every released model uses 1",
        )
    shared = _get(d, "n_shared_experts", default=1 if v3 else 2, kind="int?") or 0
    return dict(
        base,
        d_ff=_get(d, "intermediate_size", default=18432 if v3 else 11008),
        mlp=_mlp(d, "hidden_act", default="silu", gated=True),
        norm="rmsnorm",
        position="rope",
        rope_theta=_rope(d, "rope_theta", default=10000.0),
        tied_embeddings=_get(d, "tie_word_embeddings", default=False, kind="bool"),
        norm_eps=_get(d, "rms_norm_eps", default=1e-6, kind="num"),
        mlp_bias=False if v3 else _get(d, "mlp_bias", default=False, kind="bool"),
        **_bias(d, False),
        kv_lora_rank=_get(d, "kv_lora_rank", default=512),
        q_lora_rank=_get(d, "q_lora_rank", default=1536, kind="int?"),
        qk_nope_head_dim=_get(d, "qk_nope_head_dim", default=128),
        qk_rope_head_dim=_get(d, "qk_rope_head_dim", default=64),
        v_head_dim=_get(d, "v_head_dim", default=128),
        n_experts=_get(d, "n_routed_experts", default=256 if v3 else 64),
        top_k=_get(d, "num_experts_per_tok", default=8) if v3 else _get(d, "num_experts_per_tok"),
        expert_d_ff=_get(d, "moe_intermediate_size", default=2048 if v3 else 1407),
        n_shared_experts=shared,
        first_dense_layers=_get(d, "first_k_dense_replace", default=3 if v3 else 0, kind="int?") or 0,
        mtp_modules=mtp_modules(d),
        routed_groups=_routed_groups(d),
    )


def _routed_groups(d: dict) -> int:
    """Group-limited routing (DeepSeek-V2 device-limited, V3 node-limited): topk_group of n_group
    groups; none when the experts form one group (Kimi K2, DeepSeek-V2-Lite)."""
    groups = _get(d, "n_group", default=1, kind="int?") or 1
    return _get(d, "topk_group", default=1, kind="int?") or 0 if groups > 1 else 0


# ---- Qwen: qk-norm (Qwen3), experts with a dense-layer list (sparse step, mlp_only_layers)
def _qwen_moe_layers(d: dict) -> dict:
    step = _checked(d, "decoder_sparse_step", _get(d, "decoder_sparse_step", default=1))
    only = d.get("mlp_only_layers") or []
    if not (isinstance(only, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in only)):
        raise ConfigError(f"{_who(d)}: field 'mlp_only_layers' ({show(only)}) must be a list of layer indices")
    if sorted(set(only)) != list(range(len(only))):
        raise _unsupported(
            d,
            "mlp_only_layers",
            only,
            "only the first k layers can be dense (first_dense_layers); these are not 0..k-1",
        )
    return {"moe_layer_step": step, "first_dense_layers": len(only)}


def _qwen2_moe(d: dict) -> dict:
    shared = _checked(d, "shared_expert_intermediate_size", _get(d, "shared_expert_intermediate_size", default=5632))
    return dict(
        _rope_decoder(d, tie=False, kv=16),
        qkv_bias=_get(d, "qkv_bias", default=True, kind="bool"),  # q, k, v only; 4.x: always
        sliding_window=_qwen2_window(d),
        n_experts=_get(d, "num_experts", default=60),
        top_k=_get(d, "num_experts_per_tok", default=4),
        expert_d_ff=_get(d, "moe_intermediate_size", default=1408),
        n_shared_experts=1,
        shared_expert_d_ff=shared,
        shared_expert_gate=True,
        **_qwen_moe_layers(d),
    )


def _qwen3(d: dict) -> dict:
    return dict(
        _rope_decoder(d, tie=False, kv=32, head_dim=128),
        **_bias(d, False),
        qk_norm="head",
        sliding_window=_qwen2_window(d),
    )


def _qwen3_moe(d: dict) -> dict:
    return dict(
        _rope_decoder(d, tie=False, kv=4, head_dim=None),
        **_bias(d, False),
        qk_norm="head",
        sliding_window=_qwen2_window(d),
        n_experts=_get(d, "num_experts", default=128),
        top_k=_get(d, "num_experts_per_tok", default=8),
        expert_d_ff=_get(d, "moe_intermediate_size", default=768),
        **_qwen_moe_layers(d),
    )


# ---- Gemma-2 / 3: four norms per block, local layers with a full one every n
def _gemma_next(d: dict, gemma3: bool) -> dict:
    if _get(d, "use_bidirectional_attention", default=False, kind="bool?"):
        raise _unsupported(d, "use_bidirectional_attention", True, "a bidirectional encoder is not a causal LM")
    window = _get(d, "sliding_window", default=4096, kind="int?")
    every = _get(d, "sliding_window_pattern", default=6) if gemma3 else 2
    return dict(
        _rope_decoder(
            d,
            tie=True,
            kv=4,
            head_dim=256,
            act=("hidden_activation", "hidden_act"),
            act_default="gelu_pytorch_tanh",
        ),
        **_bias(d, False),
        norm_placement="sandwich",
        qk_norm="head" if gemma3 else "none",
        **_local_layers(d, window, every),
    )


# ---- Llama-4: chunked attention on RoPE layers, a NoPE layer every n, interleaved MoE
def _llama4(d: dict) -> dict:
    n_layers = _n_layers(d)
    interval = _checked(d, "no_rope_layer_interval", _get(d, "no_rope_layer_interval", default=4))
    rope_flags = _layer_list(d, "no_rope_layers", n_layers, (0, 1)) if d.get("no_rope_layers") else None
    nope = interval if rope_flags is None else _every(d, "no_rope_layers", [f == 0 for f in rope_flags], "NoPE")
    step = _checked(d, "interleave_moe_layer_step", _get(d, "interleave_moe_layer_step", default=1))
    moe_layers = d.get("moe_layers")
    if moe_layers is not None:
        if not (isinstance(moe_layers, list) and all(isinstance(i, int) for i in moe_layers)):
            raise ConfigError(f"{_who(d)}: field 'moe_layers' ({show(moe_layers)}) must be a list of layer indices")
        step = _every(d, "moe_layers", [i in moe_layers for i in range(n_layers)], "MoE")
        if step == 0:
            raise _unsupported(d, "moe_layers", moe_layers, "an MoE config without MoE layers")
    chunk = _get(d, "attention_chunk_size", default=8192, kind="int?")
    qk_norm = _get(d, "use_qk_norm", default=True, kind="bool")
    return dict(
        _rope_decoder(d, tie=False, eps=1e-5, theta=500000.0, kv=8, head_dim=128),
        **_bias(d, False),
        d_ff=_get(d, "intermediate_size_mlp", default=16384),  # the dense layers
        n_experts=_get(d, "num_local_experts", default=16),
        top_k=_get(d, "num_experts_per_tok", default=1),
        expert_d_ff=_get(d, "intermediate_size", default=8192),
        n_shared_experts=1,  # Llama4TextMLP at intermediate_size, the routed experts' width
        moe_layer_step=step,
        qk_norm="unweighted" if qk_norm else "none",  # an L2 norm: no parameters
        nope_layer_every=nope,
        attention_chunk=chunk,
        full_attention_every=nope if chunk is not None else 0,  # the NoPE layers attend to all keys
    )


# ---- GPT-OSS: sinks, biased router and experts, alternating 128-key windows
def _gpt_oss(d: dict) -> dict:
    return dict(
        _rope_decoder(d, tie=False, eps=1e-5, theta=150000.0, kv=8, head_dim=64),
        **_bias(d, True),
        n_experts=_get(d, "num_local_experts", default=128),
        top_k=_get(d, "num_experts_per_tok", default=4),
        router_bias=True,
        mlp_bias=True,  # gate_up_proj_bias and down_proj_bias of every expert
        attention_sinks=True,
        **_local_layers(d, _get(d, "sliding_window", default=128, kind="int?"), 2),
    )


# ---- Phi-3 (fused qkv_proj and gate_up_proj: the same counts as separate ones) and OLMo-2
def _phi3(d: dict) -> dict:
    return dict(
        _rope_decoder(d, tie=False, eps=1e-5),
        sliding_window=_get(d, "sliding_window", default=None, kind="int?"),
    )


def _olmo2(d: dict) -> dict:
    return dict(_rope_decoder(d, tie=False, eps=1e-5), **_bias(d, False), qk_norm="width", norm_placement="branch_post")


def _text_config(model_type: str) -> Callable[[dict], dict]:
    """A multimodal config (gemma3, llama4): its `text_config`, sized as the text model alone."""

    def convert(d: dict) -> dict:
        text = d.get("text_config")
        if not isinstance(text, dict):
            raise ConfigError(f"{_who(d)} lacks the object 'text_config' that holds the language model")
        text = dict(text)
        text.setdefault("model_type", model_type)
        if text["model_type"] != model_type:
            raise ConfigError(f"{_who(d)}: text_config.model_type ({show(text['model_type'])}) must be '{model_type}'")
        if "tie_word_embeddings" not in text and "tie_word_embeddings" in d:
            text["tie_word_embeddings"] = d["tie_word_embeddings"]
        return MODERN_CONVERTERS[model_type](text)

    return convert


MODERN_CONVERTERS: dict[str, Callable[[dict], dict]] = {
    "deepseek_v2": lambda d: _deepseek(d, v3=False),
    "deepseek_v3": lambda d: _deepseek(d, v3=True),
    "qwen2_moe": _qwen2_moe,
    "qwen3": _qwen3,
    "qwen3_moe": _qwen3_moe,
    "gemma2": lambda d: _gemma_next(d, gemma3=False),
    "gemma3_text": lambda d: _gemma_next(d, gemma3=True),
    "llama4_text": _llama4,
    "gpt_oss": _gpt_oss,
    "phi3": _phi3,
    "olmo2": _olmo2,
    "deepseek_v32": lambda d: dict(_deepseek(d, v3=True), **deepseek_v32_fields(d)),
    **CONVERTERS_2025,
}
MODERN_CONVERTERS["gemma3"] = _text_config("gemma3_text")
MODERN_CONVERTERS["llama4"] = _text_config("llama4_text")
