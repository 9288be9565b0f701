"""Vision-language presets: each the model's whole Hugging Face config (the fields that set a size),
the published total and its source. tools/hf_counts_vision.py counts each with transformers'
own modeling code (AutoModelForImageTextToText on the meta device) into
tests/fixtures/hf_counts_vision.json. Gemma-3-27B and Llama-4-Scout/Maverick's whole configs are
tests/fixtures/hf_configs_modern/ (counted there, `multimodal_total`).
"""

from __future__ import annotations

from dataclasses import dataclass

_SIGLIP_400M = dict(
    model_type="siglip_vision_model",
    hidden_size=1152,
    image_size=896,
    intermediate_size=4304,
    num_attention_heads=16,
    num_hidden_layers=27,
    patch_size=14,
    vision_use_head=False,
)

# The whole configs of two presets that sizing.presets sizes as their language model alone
# (meta-llama/Llama-4-Scout-17B-16E and google/gemma-3-27b-pt config.json, as in
# tests/fixtures/hf_configs_modern/, counted there as `multimodal_total`).
_LLAMA4_SCOUT = {
    "model_type": "llama4",
    "text_config": {
        "model_type": "llama4_text",
        "vocab_size": 202048,
        "hidden_size": 5120,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_local_experts": 16,
        "num_experts_per_tok": 1,
        "interleave_moe_layer_step": 1,
        "use_qk_norm": True,
        "attention_chunk_size": 8192,
        "no_rope_layers": [],
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 16.0,
            "high_freq_factor": 1.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
        "rms_norm_eps": 1e-05,
        "max_position_embeddings": 10485760,
        "hidden_act": "silu",
        "attention_bias": False,
        "tie_word_embeddings": False,
    },
    "tie_word_embeddings": False,
    "vision_config": {
        "model_type": "llama4_vision_model",
        "hidden_size": 1408,
        "intermediate_size": 5632,
        "num_attention_heads": 16,
        "num_hidden_layers": 34,
        "projector_input_dim": 4096,
        "projector_output_dim": 4096,
        "vision_output_dim": 4096,
        "pixel_shuffle_ratio": 0.5,
        "patch_size": 14,
        "image_size": 336,
        "norm_eps": 1e-05,
        "rope_theta": 10000,
        "vision_feature_layer": -1,
        "vision_feature_select_strategy": "default",
        "hidden_act": "gelu",
        "num_channels": 3,
    },
}
_GEMMA3_27B = {
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "num_hidden_layers": 62,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
        "query_pre_attn_scalar": 168,
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0,
        "vocab_size": 262208,
        "rms_norm_eps": 1e-06,
        "hidden_activation": "gelu_pytorch_tanh",
    },
    "vision_config": {
        "model_type": "siglip_vision_model",
        "hidden_size": 1152,
        "image_size": 896,
        "intermediate_size": 4304,
        "num_attention_heads": 16,
        "num_hidden_layers": 27,
        "patch_size": 14,
        "vision_use_head": False,
    },
    "mm_tokens_per_image": 256,
}


@dataclass(frozen=True)
class VisionPreset:
    name: str
    hf_config: dict
    published_total: float
    rounding: float  # relative half-unit of the published figure
    source: str


VISION_PRESETS: tuple[VisionPreset, ...] = (
    VisionPreset(
        "llava-1.5-7b",
        # llava-hf/llava-1.5-7b-hf config.json: Vicuna-7B + CLIP ViT-L/14 at 336 px + a 2-layer MLP
        dict(
            model_type="llava",
            vision_feature_layer=-2,
            vision_feature_select_strategy="default",
            text_config=dict(
                model_type="llama",
                hidden_size=4096,
                intermediate_size=11008,
                num_hidden_layers=32,
                num_attention_heads=32,
                num_key_value_heads=32,
                vocab_size=32064,
                max_position_embeddings=4096,
                rms_norm_eps=1e-5,
                tie_word_embeddings=False,
            ),
            vision_config=dict(
                model_type="clip_vision_model",
                hidden_size=1024,
                intermediate_size=4096,
                num_hidden_layers=24,
                num_attention_heads=16,
                patch_size=14,
                image_size=336,
                projection_dim=768,
            ),
        ),
        7.06e9,
        0.005 / 7.06,
        "llava-hf/llava-1.5-7b-hf on the Hugging Face hub: 7.06B params",
    ),
    VisionPreset(
        "qwen2.5-vl-7b",
        # Qwen/Qwen2.5-VL-7B-Instruct config.json
        dict(
            model_type="qwen2_5_vl",
            text_config=dict(
                model_type="qwen2_5_vl_text",
                hidden_size=3584,
                intermediate_size=18944,
                num_hidden_layers=28,
                num_attention_heads=28,
                num_key_value_heads=4,
                vocab_size=152064,
                max_position_embeddings=128000,
                rope_theta=1000000.0,
                rms_norm_eps=1e-6,
                tie_word_embeddings=False,
            ),
            vision_config=dict(
                depth=32,
                hidden_size=1280,
                intermediate_size=3420,
                num_heads=16,
                in_chans=3,
                out_hidden_size=3584,
                patch_size=14,
                spatial_merge_size=2,
                temporal_patch_size=2,
                window_size=112,
                fullatt_block_indexes=[7, 15, 23, 31],
            ),
        ),
        8.29e9,
        0.005 / 8.29,
        "Qwen/Qwen2.5-VL-7B-Instruct on the Hugging Face hub: 8.29B params",
    ),
    VisionPreset(
        "gemma-3-4b",
        # google/gemma-3-4b-pt config.json
        dict(
            model_type="gemma3",
            mm_tokens_per_image=256,
            text_config=dict(
                model_type="gemma3_text",
                hidden_size=2560,
                intermediate_size=10240,
                num_hidden_layers=34,
                num_attention_heads=8,
                num_key_value_heads=4,
                head_dim=256,
                sliding_window=1024,
                vocab_size=262208,
            ),
            vision_config=_SIGLIP_400M,
        ),
        4.3e9,
        0.05 / 4.3,
        "Gemma 3 report (arXiv:2503.19786) Table 1, 4B: 417M vision + 675M embedding + 3,209M other = 4.3B",
    ),
    VisionPreset(
        "llama-4-scout-full",
        _LLAMA4_SCOUT,
        109e9,
        0.5 / 109,
        "Meta, meta-llama/Llama-4-Scout-17B-16E card: 109B total parameters (17B active)",
    ),
    VisionPreset(
        "gemma-3-27b-full",
        _GEMMA3_27B,
        27.4e9,
        0.05 / 27.4,
        "Gemma 3 report (arXiv:2503.19786) Table 1, 27B: 417M vision + 1,416M embedding + 25,600M other",
    ),
)


def vision_preset(name: str) -> VisionPreset:
    for p in VISION_PRESETS:
        if p.name == name:
            return p
    raise KeyError(name)
