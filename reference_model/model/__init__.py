"""The PyTorch GPT built from sizing.ModelConfig: blocks, attention, toy-size builds."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "CrossAttentionLayer": "reference_model.model.cross",
    "KDABlock": "reference_model.model.kda",
    "GatedDeltaNetBlock": "reference_model.model.ssm",
    "Mamba2Block": "reference_model.model.ssm",
    "ViTTower": "reference_model.model.vit",
    "allowed_keys": "reference_model.model.attention",
    "build": "reference_model.model.gpt",
    "fill_own_loss_grads": "reference_model.model.dsa",
    "small_config": "reference_model.model.small",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
