"""Reading a Hugging Face config.json (JSON only, never code) into a ModelConfig."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "MODEL_TYPE_ALIASES": "sizing.inputs.hf.families_2025",
    "SUPPORTED_MODEL_TYPES": "sizing.inputs.hf.read",
    "SHOW_DOWNLOAD_PROGRESS": "sizing.inputs.hf.hub",
    "_get": "sizing.inputs.hf.fields",
    "_layer_indices": "sizing.inputs.hf.fields",
    "_read_json_object": "sizing.inputs.hf.config_file",
    "_read_regular_file": "sizing.inputs.hf.config_file",
    "check_common_fields": "sizing.inputs.hf.common_fields",
    "first_dense_from_types": "sizing.inputs.hf.families_2025",
    "from_hf_config": "sizing.inputs.hf.read",
    "load_config_file": "sizing.inputs.hf.config_file",
    "load_family_config": "sizing.inputs.hf.config_file",
    "looks_like_hub_id": "sizing.inputs.hf.hub",
    "mtp_modules": "sizing.inputs.hf.families_2025",
    "read_config_json": "sizing.inputs.hf.config_file",
    "read_config_file": "sizing.inputs.hf.config_file",
    "resolve_model_type": "sizing.inputs.hf.aliases",
    "stated_contexts": "sizing.inputs.hf.context",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
