"""Vision-language models: vision tower + projector + language model, image tokens, prefill."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "cross_layer_flops": "sizing.vision.mllama",
    "cross_layer_params": "sizing.vision.mllama",
    "GEMMA3N_TYPES": "sizing.vision.gemma3n",
    "gemma3n_kv_elements": "sizing.vision.gemma3n",
    "gemma3n_params": "sizing.vision.gemma3n",
    "gemma3n_text_decode_flops": "sizing.vision.gemma3n",
    "gemma3n_text_flops": "sizing.vision.gemma3n",
    "gemma3n_text_shape": "sizing.vision.gemma3n",
    "gemma3n_timm_tower": "sizing.vision.gemma3n",
    "VISION_PRESETS": "sizing.vision.presets",
    "VisionConfig": "sizing.vision.config",
    "tower_config": "sizing.vision.config",
    "vision_config": "sizing.vision.config",
    "vision_of": "sizing.vision.config",
    "VISION_TYPES": "sizing.vision.hf",
    "VisionLanguage": "sizing.vision.model",
    "VisionTower": "sizing.vision.model",
    "parse_image_size": "sizing.vision.model",
    "prefill_with_images": "sizing.vision.prefill",
    "text_only_label": "sizing.vision.hf",
    "vision_preset": "sizing.vision.presets",
    "vlm_active_params": "sizing.vision.prefill",
    "vlm_from_hf_config": "sizing.vision.hf",
    "vlm_params": "sizing.vision.prefill",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
