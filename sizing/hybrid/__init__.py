"""Hybrid state-space / linear-attention models (Mamba-2, Jamba, Nemotron-H, Bamba, Falcon-H1,
Qwen3-Next, Kimi Linear, Granite 4.0-H):
per-layer mixers and MLPs, parameters, FLOPs, KV cache of the attention layers and the
recurrent state of the others. See docs/hybrid.md."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "GatedDeltaNet": "sizing.hybrid.mixers",
    "HybridConfig": "sizing.hybrid.config",
    "hybrid_config": "sizing.hybrid.config",
    "hybrid_of": "sizing.hybrid.config",
    "KimiDeltaAttention": "sizing.hybrid.mixers",
    "HYBRID_CONVERTERS": "sizing.hybrid.hf_2025",
    "HYBRID_PRESETS": "sizing.hybrid.presets",
    "Mamba2Mixer": "sizing.hybrid.mixers",
    "active_params": "sizing.hybrid.model",
    "all_attention_kv_bytes": "sizing.hybrid.memory",
    "decode_flops_per_token": "sizing.hybrid.model",
    "prefill_flops": "sizing.hybrid.model",
    "hybrid_activation_terms": "sizing.hybrid.activations",
    "hybrid_activations_bytes": "sizing.hybrid.activations",
    "hybrid_from_hf_config": "sizing.hybrid.hf_2025",
    "hybrid_inference_memory": "sizing.hybrid.memory",
    "hybrid_preset": "sizing.hybrid.presets",
    "kv_cache_bytes": "sizing.hybrid.memory",
    "max_batch": "sizing.hybrid.memory",
    "max_context": "sizing.hybrid.memory",
    "param_components": "sizing.hybrid.model",
    "prefill_flop_components": "sizing.hybrid.model",
    "state_bytes": "sizing.hybrid.memory",
    "total_params": "sizing.hybrid.model",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
