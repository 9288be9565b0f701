"""Hybrid state-space / linear-attention models (Mamba-2, Jamba, Nemotron-H, Bamba, Qwen3-Next):
per-layer mixers and MLPs, parameters, FLOPs, KV cache of the attention layers and the
recurrent state of the others. See docs/hybrid.md."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "GatedDeltaNet": "sizing.hybrid.mixers",
    "HYBRID_PRESETS": "sizing.hybrid.presets",
    "Mamba2Mixer": "sizing.hybrid.mixers",
    "all_attention_kv_bytes": "sizing.hybrid.memory",
    "decode_flops_per_token": "sizing.hybrid.model",
    "prefill_flops": "sizing.hybrid.model",
    "hybrid_from_hf_config": "sizing.hybrid.hf",
    "hybrid_inference_memory": "sizing.hybrid.memory",
    "hybrid_preset": "sizing.hybrid.presets",
    "max_batch": "sizing.hybrid.memory",
    "max_context": "sizing.hybrid.memory",
    "total_params": "sizing.hybrid.model",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
