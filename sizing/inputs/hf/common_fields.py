"""The fields every Hugging Face config.json may carry, checked whatever the family: a field a
converter does not read (a Jamba's `rms_norm_eps`, a vision tower's `hidden_act`) must still be
of the type transformers gives it, so a config that transformers would refuse is refused here
too, naming the field, and never sized as if the field were absent.

Checked for the config, and for each nested `*_config` object (`text_config`, `vision_config`),
by every reader: `estimate --config` (sizing.inputs.hf.read) and the family readers of
sizing.hybrid and sizing.vision alike (`check_common_fields`)."""

from __future__ import annotations

from typing import Any

from sizing.inputs.config import ConfigError
from sizing.inputs.hf.fields import _KINDS
from sizing.validate import MAX_JSON_DEPTH, show

# field -> kind (sizing.inputs.hf.fields._KINDS; "?": null allowed, as transformers' defaults are)
COMMON_FIELDS: dict[str, str] = {
    "vocab_size": "size",
    "hidden_size": "size",
    "num_hidden_layers": "size",
    "num_attention_heads": "size",
    "num_key_value_heads": "size?",
    "head_dim": "size?",
    "intermediate_size": "size?",
    "max_position_embeddings": "size?",
    "num_experts": "index?",
    "num_local_experts": "index?",
    "num_experts_per_tok": "index?",  # 0 in a dense config (granite-4.0-h-micro: num_local_experts 0)
    "sliding_window": "index?",  # 0 with use_sliding_window false (transformers' qwen2_moe walk)
    "sliding_window_pattern": "size?",
    "no_rope_layers": "list?",
    "num_channels": "size",
    "patch_size": "size",
    "image_size": "size",
    "projection_dim": "size",
    "rms_norm_eps": "positive",
    "layer_norm_eps": "positive",
    "layer_norm_epsilon": "positive",
    "norm_eps": "positive",
    "rope_theta": "positive",
    "rope_local_base_freq": "positive",
    "query_pre_attn_scalar": "positive?",
    "initializer_range": "num",
    "attention_dropout": "num",
    "hidden_act": "str",
    "hidden_activation": "str?",
    "torch_dtype": "str?",
    "tie_word_embeddings": "bool",
    "attention_bias": "bool",
    "mlp_bias": "bool",
    "use_cache": "bool",
    "rope_scaling": "dict?",
    "rope_parameters": "dict?",
    "vision_feature_select_strategy": "str",
    "vision_feature_layer": "int",
}


def check_common_fields(d: dict, where: str = "", depth: int = 0, who: str | None = None) -> None:
    """ConfigError naming the first common field of `d` (and of its nested `*_config` objects,
    MAX_JSON_DEPTH deep at most: a dict built in Python may even contain itself) whose value is
    not of its kind."""
    who = who or f"Hugging Face config (model_type {show(d.get('model_type'))})"  # the outermost's
    for name, value in d.items():
        kind = COMMON_FIELDS.get(name)
        if kind is not None and not _fits(value, kind, name):
            what = _KINDS[kind.rstrip("?")][1] + (" or null" if kind.endswith("?") else "")
            raise ConfigError(f"{who}: field '{where}{name}' ({show(value)}) must be {what}")
        if name.endswith("_config") and isinstance(value, dict) and depth < MAX_JSON_DEPTH:
            check_common_fields(value, f"{where}{name}.", depth + 1, who)


def _fits(value: Any, kind: str, name: str) -> bool:
    if value is None:
        return kind.endswith("?")
    if name == "vision_feature_layer" and isinstance(value, list):  # one layer, or several (a list)
        return bool(value) and all(_KINDS["int"][0](v) for v in value)
    return _KINDS[kind.rstrip("?")][0](value)
