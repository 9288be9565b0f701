"""Whole models that are not one stack of identical attention + MLP blocks (hybrids, vision-language
models, any architecture transformers builds), sized for `sizing estimate` and `sizing memory`:
see sizing/whole/model.py."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "EXACTNESS_KEYS": "sizing.whole.model",
    "WholeEstimate": "sizing.whole.estimate",
    "WholeModel": "sizing.whole.model",
    "WholePlan": "sizing.whole.parallel",
    "config_kind": "sizing.whole.resolve",
    "default_context": "sizing.whole.resolve",
    "hybrid_whole_model": "sizing.whole.hybrid",
    "native_refusal": "sizing.whole.resolve",
    "native_whole_model": "sizing.whole.resolve",
    "vision_whole_model": "sizing.whole.vision",
    "whole_inference_memory": "sizing.whole.memory",
    "whole_preset_config": "sizing.whole.resolve",
    "whole_parallel_plan": "sizing.whole.parallel",
    "whole_training_memory": "sizing.whole.memory",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
