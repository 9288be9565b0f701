"""Probes that measure the reference model: memory, parallel, pipeline, serving."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "PIPELINE_PROBES": "reference_model.probes.pipeline",
    "PROBE_LAYOUTS": "reference_model.probes.parallel",
    "TOLERANCE": "reference_model.probes.memory",
    "check_activations": "reference_model.probes.memory",
    "check_cuda_memory": "reference_model.probes.memory",
    "check_kv_cache": "reference_model.probes.memory",
    "check_model_states": "reference_model.probes.memory",
    "probe_layout": "reference_model.probes.parallel",
    "probe_pipeline": "reference_model.probes.pipeline",
    "reference_sdpa_extras": "reference_model.probes.memory",
    "reference_selective_extras": "reference_model.probes.memory",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
