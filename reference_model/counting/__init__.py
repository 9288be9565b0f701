"""Counting the reference model: parameters, matmul FLOPs with two counters, causal pairs."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "FULL_SIZE_BATCH": "reference_model.counting.limits",
    "count_fvcore": "reference_model.counting.flops",
    "count_torch": "reference_model.counting.flops",
    "full_size_seq_len": "reference_model.counting.limits",
    "verify_params": "reference_model.counting.params",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
