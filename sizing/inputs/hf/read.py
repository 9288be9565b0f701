"""Hugging Face `config.json` (or this tool's own JSON) -> ModelConfig. Reads JSON only:
nothing is imported from the model repository and no code is executed.

One converter per `model_type`, each a few lines over shared lookups. Where a field is
absent the converter uses the default of that family's transformers config class, so a
config.json gives the model transformers would build (checked against transformers 5.24.0
counts in tests/fixtures/hf_counts.json). Both spellings are read:

* transformers 4.x: `rope_theta`, `rope_scaling`, `rotary_pct`, `rotary_emb_base` at top level;
* transformers 5.x: `rope_parameters: {rope_theta, partial_rotary_factor, ...}`;
* GPT-2's `n_embd/n_layer/n_head/n_inner/n_positions` or `hidden_size/...`;
* Falcon's older `n_embed/n_head/n_layer/n_head_kv`; BLOOM's `n_embed/n_layer/n_head`.

The sizes that decide the parameter count (vocab, width, depth, heads, MLP width) are
required: a config.json without them is an error, not a silent default.
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.inputs.config import ConfigError, ModelConfig, NotModelled
from sizing.inputs.hf.aliases import resolve_model_type
from sizing.inputs.hf.common_fields import check_common_fields
from sizing.inputs.hf.families import MODERN_CONVERTERS, REFUSED_MODEL_TYPES, SIZED_BY_COMMAND
from sizing.inputs.hf.fields import (
    _common,
    _get,
    _heads,
    _mlp,
    _qwen2_window,
    _rope,
    _rope_decoder,
    _tied,
    _unsupported,
    _who,
    _width,
)
from sizing.validate import show


def _llama(d: dict) -> dict:
    bias = _get(d, "attention_bias", default=False, kind="bool")  # q, k, v and o alike
    return dict(
        _rope_decoder(d, tie=False),
        qkv_bias=bias,
        attn_out_bias=bias,
        mlp_bias=_get(d, "mlp_bias", default=False, kind="bool"),
    )


def _mistral(d: dict) -> dict:
    return dict(_rope_decoder(d, tie=False, kv=8), sliding_window=_get(d, "sliding_window", default=4096, kind="int?"))


def _mixtral(d: dict) -> dict:
    # Router: Linear(d, E) without bias; each expert is a SwiGLU MLP of width intermediate_size
    # (expert_d_ff stays None, i.e. = d_ff, so `--set d_ff=...` resizes the experts).
    return dict(
        _rope_decoder(d, tie=False, eps=1e-5, theta=1e6, kv=8),
        sliding_window=_get(d, "sliding_window", default=None, kind="int?"),
        n_experts=_get(d, "num_local_experts", "num_experts", default=8),
        top_k=_get(d, "num_experts_per_tok", default=2),
    )


def _qwen2(d: dict) -> dict:
    return dict(_rope_decoder(d, tie=False, kv=32), qkv_bias=True, sliding_window=_qwen2_window(d))


def _gemma(d: dict) -> dict:
    bias = _get(d, "attention_bias", default=False, kind="bool")
    return dict(
        _rope_decoder(
            d, tie=True, kv=16, head_dim=256, act=("hidden_activation", "hidden_act"), act_default="gelu_pytorch_tanh"
        ),
        qkv_bias=bias,
        attn_out_bias=bias,
    )


# ---- LayerNorm families ----
def _gpt2(d: dict) -> dict:
    if _get(d, "add_cross_attention", default=False, kind="bool"):
        raise _unsupported(d, "add_cross_attention", True, "cross-attention layers are not modelled")
    base = _common(
        d,
        width=("n_embd", "hidden_size"),
        layers=("n_layer", "num_hidden_layers"),
        heads=("n_head", "num_attention_heads"),
    )
    return dict(
        base,
        d_ff=_width(d, "n_inner", 4 * base["d_model"]),
        mlp=_mlp(d, "activation_function", default="gelu_new", gated=False),
        position="learned",
        max_positions=_get(d, "n_positions", "max_position_embeddings"),
        qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True,
        tied_embeddings=_tied(d, True),
        norm_eps=_get(d, "layer_norm_epsilon", default=1e-5, kind="num"),
    )


def _opt(d: dict) -> dict:
    base = _common(d)
    proj = _get(d, "word_embed_proj_dim", default=None, kind="int?")
    if proj is not None and proj != base["d_model"]:
        raise _unsupported(
            d,
            "word_embed_proj_dim",
            proj,
            f"it differs from hidden_size ({base['d_model']}), so OPT adds project_in/project_out "
            "matrices (opt-350m), which are not modelled",
        )
    if not _get(d, "layer_norm_elementwise_affine", default=True, kind="bool"):
        raise _unsupported(d, "layer_norm_elementwise_affine", False, "norms without parameters are not modelled")
    pre = _get(d, "do_layer_norm_before", default=True, kind="bool")
    bias = _get(d, "enable_bias", default=True, kind="bool")
    return dict(
        base,
        d_ff=_get(d, "ffn_dim"),
        mlp=_mlp(d, "activation_function", default="relu", gated=False),
        norm_placement="pre" if pre else "post",
        # OPTDecoder builds final_layer_norm only for pre-LN, and not with _remove_final_layer_norm
        final_norm=pre and not _get(d, "_remove_final_layer_norm", default=False, kind="bool"),
        position="learned",
        max_positions=_get(d, "max_position_embeddings") + 2,  # OPT's offset of 2
        qkv_bias=bias,
        attn_out_bias=bias,
        mlp_bias=bias,
        tied_embeddings=_tied(d, True),
    )


def _gpt_neox(d: dict) -> dict:
    bias = _get(d, "attention_bias", default=True, kind="bool")  # query_key_value and dense
    return dict(
        _common(d),
        d_ff=_get(d, "intermediate_size"),
        mlp=_mlp(d, "hidden_act", default="gelu", gated=False),
        position="rope",
        rotary_fraction=_rope(d, "partial_rotary_factor", "rotary_pct", default=0.25),
        rope_theta=_rope(d, "rope_theta", "rotary_emb_base", default=10000.0),
        # two norms either way; use_parallel_residual False is the sequential pre-LN block
        parallel_block=_get(d, "use_parallel_residual", default=True, kind="bool"),
        qkv_bias=bias,
        attn_out_bias=bias,
        mlp_bias=True,
        tied_embeddings=_tied(d, False),
        norm_eps=_get(d, "layer_norm_eps", default=1e-5, kind="num"),
    )


def _phi(d: dict) -> dict:
    if _get(d, "qk_layernorm", default=False, kind="bool"):
        raise _unsupported(d, "qk_layernorm", True, "the per-head q/k LayerNorms are not modelled")
    base = _common(d)
    return dict(
        base,
        **_heads(d, base["d_model"], base["n_heads"], None, None),
        d_ff=_get(d, "intermediate_size"),
        mlp=_mlp(d, "hidden_act", default="gelu_new", gated=False),
        position="rope",
        rotary_fraction=_rope(d, "partial_rotary_factor", default=0.5),
        rope_theta=_rope(d, "rope_theta", default=10000.0),
        parallel_block=True,
        shared_block_norm=True,  # one input_layernorm feeds attn and MLP
        qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True,
        lm_head_bias=True,
        tied_embeddings=_tied(d, False),
        norm_eps=_get(d, "layer_norm_eps", default=1e-5, kind="num"),
    )


def _falcon(d: dict) -> dict:
    base = _common(
        d,
        width=("hidden_size", "n_embed"),
        layers=("num_hidden_layers", "n_layer"),
        heads=("num_attention_heads", "n_head"),
    )
    new_arch = _get(d, "new_decoder_architecture", default=False, kind="bool")
    parallel = _get(d, "parallel_attn", default=True, kind="bool")
    if new_arch:  # fused qkv of (2 * num_kv_heads + heads) * head_dim
        kv = _get(d, "num_kv_heads", "n_head_kv", default=None, kind="int?")
    elif _get(d, "multi_query", default=True, kind="bool"):
        kv = 1
    else:  # the old architecture without multi_query is MHA whatever num_kv_heads says
        kv = None
    n_ln = _get(d, "num_ln_in_parallel_attn", default=None, kind="int?")
    if n_ln not in (None, 1, 2):
        raise ConfigError(f"{_who(d)}: field 'num_ln_in_parallel_attn' ({show(n_ln)}) must be 1, 2 or null")
    n_ln = n_ln or (2 if new_arch else 1)
    bias = _get(d, "bias", default=False, kind="bool")
    alibi = _get(d, "alibi", default=False, kind="bool")
    return dict(
        base,
        n_kv_heads=None if kv == base["n_heads"] else kv,
        d_ff=_width(d, "ffn_hidden_size", 4 * base["d_model"]),
        mlp=_mlp(d, "activation", default="gelu", gated=False),
        position="none" if alibi else "rope",
        rope_theta=_rope(d, "rope_theta", default=10000.0),
        parallel_block=parallel or new_arch,
        shared_block_norm=parallel and n_ln == 1,
        qkv_bias=bias,
        attn_out_bias=bias,
        mlp_bias=bias,
        tied_embeddings=_tied(d, True),
        norm_eps=_get(d, "layer_norm_epsilon", default=1e-5, kind="num"),
    )


def _bloom(d: dict) -> dict:
    # BloomModel: word_embeddings -> word_embeddings_layernorm -> pre-LN blocks (fused
    # query_key_value and dense, both with bias; dense_h_to_4h / dense_4h_to_h at 4h, biased,
    # tanh GELU) -> ln_f; ALiBi, so no position table. BloomConfig lets `n_embed` override
    # hidden_size and ignores n_inner. apply_residual_connection_post_layernorm moves which
    # tensor the residual carries, not a parameter or a FLOP: it is accepted as is.
    base = _common(
        d,
        width=("n_embed", "hidden_size"),
        layers=("n_layer", "num_hidden_layers"),
        heads=("n_head", "num_attention_heads"),
    )
    return dict(
        base,
        d_ff=4 * base["d_model"],
        mlp="gelu",
        embedding_norm=True,
        position="none",
        qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True,
        tied_embeddings=_tied(d, True),
        norm_eps=_get(d, "layer_norm_epsilon", default=1e-5, kind="num"),
    )


_CONVERTERS: dict[str, Callable[[dict], dict]] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "gemma": _gemma,
    "gpt2": _gpt2,
    "opt": _opt,
    "gpt_neox": _gpt_neox,
    "phi": _phi,
    "falcon": _falcon,
    "bloom": _bloom,
    **MODERN_CONVERTERS,
}
SUPPORTED_MODEL_TYPES = tuple(_CONVERTERS)


def from_hf_config(d: dict) -> ModelConfig:
    """A Hugging Face config dict (config.json as loaded) -> ModelConfig."""
    if not isinstance(d, dict):
        raise ConfigError(f"a Hugging Face config must be a JSON object, got {type(d).__name__}")
    check_common_fields(d)
    model_type = resolve_model_type(d, _CONVERTERS)
    if model_type != d.get("model_type"):  # an alias of a known architecture (kimi_k2: DeepSeek-V3)
        d = dict(d, model_type=model_type)
    if isinstance(model_type, str) and model_type in SIZED_BY_COMMAND:
        raise NotModelled(
            f"model_type {show(model_type)} is not a stack of attention + MLP blocks: "
            f"`{SIZED_BY_COMMAND[model_type]}` sizes it"
        )
    if isinstance(model_type, str) and model_type in REFUSED_MODEL_TYPES:
        raise NotModelled(
            f"model_type {show(model_type)} is not supported: {REFUSED_MODEL_TYPES[model_type]}, and the "
            "calculator sizes transformer blocks of attention and an MLP only"
        )
    if not isinstance(model_type, str) or model_type not in _CONVERTERS:
        raise NotModelled(
            f"model_type ({show(model_type)}) is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    fields = _CONVERTERS[model_type](d)
    try:
        return ModelConfig(**fields)
    except ConfigError as exc:
        raise ConfigError(f"{_who(d)}: {exc}") from None
