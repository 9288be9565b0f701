"""A vision-language model's whole Hugging Face config.json -> (the language model's ModelConfig,
its VisionLanguage tower + projector), for gemma3, llama4, llava and qwen2_5_vl. The language
model goes through sizing.inputs.hf.read on its `text_config`; the tower's sizes come from `vision_config`
(defaults: the transformers 5.24 config classes). Nothing is sized as something else: a tower
this module does not know is refused naming the field.
"""

from __future__ import annotations

import math

from sizing.inputs import ConfigError, ModelConfig, NotModelled
from sizing.inputs.hf import _get, _layer_indices, check_common_fields, from_hf_config
from sizing.validate import SizingError, show
from sizing.vision.mllama import mllama_from_hf_config
from sizing.vision.model import VisionLanguage, VisionTower

_TEXT_TYPES = {"gemma3": "gemma3_text", "llama4": "llama4_text", "llava": "llama", "qwen2_5_vl": "qwen2"}


def _section(d: dict, key: str) -> dict:
    sub = d.get(key)
    if not isinstance(sub, dict):
        raise ConfigError(f"{key} ({show(sub)}) must be the JSON object of the model's {key.split('_')[0]} part")
    return sub


def _text(d: dict) -> ModelConfig:
    if "text_config" not in d and "hidden_size" in d:
        # the hub's own layout of Qwen2-VL / Qwen2.5-VL: the language model's fields at the top level
        d = dict(d, text_config={k: v for k, v in d.items() if k != "vision_config"})
    text = dict(_section(d, "text_config"))
    text["model_type"] = _TEXT_TYPES[d["model_type"]]  # the family's text model, as HF builds it
    if d["model_type"] == "llama4" and "tie_word_embeddings" in d:
        text.setdefault("tie_word_embeddings", d["tie_word_embeddings"])
    return from_hf_config(text)


def _gemma3(d: dict, text_d: int) -> VisionLanguage:
    v = _section(d, "vision_config")
    h = _get(v, "hidden_size", default=1152, kind="size")
    i = _get(v, "intermediate_size", default=4304, kind="size")
    # SiglipVisionConfig builds the attention-pooling head unless vision_use_head is false (the hub's
    # Gemma-3 configs say false): a probe h, an nn.MultiheadAttention 4h² + 4h, a LayerNorm 2h and an MLP
    head = h + 4 * h * h + 4 * h + 2 * h + 2 * h * i + i + h
    extra = (("vision.head", head),) if _get(v, "vision_use_head", default=True, kind="bool") else ()
    tower = VisionTower(
        hidden=h,
        intermediate=i,
        layers=_get(v, "num_hidden_layers", default=27, kind="size"),
        heads=_get(v, "num_attention_heads", default=16, kind="size"),
        patch=_get(v, "patch_size", default=14, kind="size"),
        image_size=_get(v, "image_size", default=896, kind="size"),
    )
    tokens = _get(d, "mm_tokens_per_image", default=256, kind="size")
    side = math.isqrt(tokens)
    if side * side != tokens or tower.patches_per_side % side:
        raise ConfigError(f"mm_tokens_per_image ({tokens}) must be a square that divides the patch grid")
    return VisionLanguage(
        "gemma3",
        tower,
        (("projector.mm_input_projection", h, text_d, False),),
        (("projector.mm_soft_emb_norm", h), *extra),
        merge=tower.patches_per_side // side,  # average pooling of merge x merge patches
    )


def _llama4(d: dict, text_d: int) -> VisionLanguage:
    v = _section(d, "vision_config")
    ratio = _get(v, "pixel_shuffle_ratio", default=0.5, kind="num")
    if ratio not in (0.5, 0.25):
        raise NotModelled(f"vision_config.pixel_shuffle_ratio ({show(ratio)}) must be 0.5 or 0.25")
    i = _get(v, "intermediate_size", default=5632, kind="size")
    tower = VisionTower(
        hidden=_get(v, "hidden_size", default=768, kind="size"),
        intermediate=i,
        layers=_get(v, "num_hidden_layers", default=34, kind="size"),
        heads=_get(v, "num_attention_heads", default=16, kind="size"),
        patch=_get(v, "patch_size", default=14, kind="size"),
        image_size=_get(v, "image_size", default=448, kind="size"),
        patch_bias=False,
        class_token=True,
        pre_norm=True,
    )
    p_in = _get(v, "projector_input_dim", default=4096, kind="size")
    p_out = _get(v, "projector_output_dim", default=4096, kind="size")
    projector = (
        ("vision.adapter_fc1", i, p_in, False),
        ("vision.adapter_fc2", p_out, p_out, False),
        ("projector.linear_1", _get(v, "vision_output_dim", default=7680, kind="size"), text_d, False),
    )
    return VisionLanguage("llama4", tower, projector, merge=int(1 / ratio), tile=tower.image_size)


def _llava(d: dict, text_d: int) -> VisionLanguage:
    v = _section(d, "vision_config")
    if v.get("model_type", "clip_vision_model") != "clip_vision_model":
        raise NotModelled(f"vision_config.model_type ({show(v.get('model_type'))}) must be clip_vision_model")
    if d.get("vision_feature_select_strategy", "default") != "default":
        raise NotModelled(
            f"vision_feature_select_strategy ({show(d.get('vision_feature_select_strategy'))}) must be 'default'"
        )
    h = _get(v, "hidden_size", default=768, kind="size")
    tower = VisionTower(
        hidden=h,
        intermediate=_get(v, "intermediate_size", default=3072, kind="size"),
        layers=_get(v, "num_hidden_layers", default=12, kind="size"),
        heads=_get(v, "num_attention_heads", default=12, kind="size"),
        patch=_get(v, "patch_size", default=32, kind="size"),
        image_size=_get(v, "image_size", default=224, kind="size"),
        patch_bias=False,
        class_token=True,
        pre_norm=True,
    )
    bias = _get(d, "multimodal_projector_bias", default=True, kind="bool")
    projector = (("projector.linear_1", h, text_d, bias), ("projector.linear_2", text_d, text_d, bias))
    return VisionLanguage("llava", tower, projector)


def _qwen2_5_vl(d: dict, text_d: int) -> VisionLanguage:
    v = _section(d, "vision_config")
    h, patch = _get(v, "hidden_size", default=3584, kind="size"), _get(v, "patch_size", default=14, kind="size")
    merge = _get(v, "spatial_merge_size", default=2, kind="size")
    window = _get(v, "window_size", default=112, kind="size") // patch
    depth = _get(v, "depth", default=32, kind="size")
    full = _layer_indices(v, "fullatt_block_indexes", depth, default=[7, 15, 23, 31])
    tower = VisionTower(
        hidden=h,
        intermediate=_get(v, "intermediate_size", default=3420, kind="size"),
        layers=depth,
        heads=_get(v, "num_heads", default=16, kind="size"),
        patch=patch,
        image_size=patch * merge,
        channels=_get(v, "in_channels", "in_chans", default=3, kind="size"),
        temporal_patch=_get(v, "temporal_patch_size", default=2, kind="size"),
        patch_bias=False,
        learned_positions=False,  # 2D rotary positions
        post_norm=False,
        norm_bias=False,
        gated_mlp=True,
        window_patches=window * window,
        full_attention_layers=len(set(full)),
    )
    merged = h * merge * merge
    out = _get(v, "out_hidden_size", default=3584, kind="size")
    projector = (("projector.merger_fc1", merged, merged, True), ("projector.merger_fc2", merged, out, True))
    return VisionLanguage("qwen2_5_vl", tower, projector, (("projector.ln_q", h),), merge=merge)


_TOWERS = {"gemma3": _gemma3, "llama4": _llama4, "llava": _llava, "qwen2_5_vl": _qwen2_5_vl}
VISION_TYPES = (*_TOWERS, "mllama")  # the whole configs (with a vision_config) this module reads


def vlm_from_hf_config(d: dict) -> tuple[ModelConfig, VisionLanguage]:
    if not isinstance(d, dict):
        raise ConfigError(f"a Hugging Face config must be a JSON object, got {type(d).__name__}")
    check_common_fields(d)  # the fields every config carries, nested ones too, as `estimate --config` checks them
    model_type = d.get("model_type")
    if not isinstance(model_type, str) or model_type not in VISION_TYPES:
        raise ConfigError(
            f"model_type ({show(model_type)}) is not a vision-language model this tool sizes; "
            f"supported: {', '.join(VISION_TYPES)}"
        )
    if model_type == "mllama":  # cross-attention layers: its own reader (sizing/vision/mllama.py)
        return mllama_from_hf_config(d)
    text = _text(d)
    return text, _TOWERS[model_type](d, text.d_model)


def text_only_label(path: str) -> str:
    """The label a whole vision-language config.json carries where a command sizes its language
    model alone (sizing estimate, memory, serve): "" for any other file."""
    from sizing.inputs.hf import _read_json_object

    try:
        data = _read_json_object(path)
    except SizingError:
        return ""
    if data.get("model_type") in VISION_TYPES and isinstance(data.get("vision_config"), dict):
        return " [text model only: the vision tower and projector are not counted; `sizing vision --config` sizes them]"
    return ""
