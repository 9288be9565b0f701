"""What a question is asked about: the architecture (config), presets, GPUs, HF configs, units."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "ATTENTION_IMPLS": "sizing.inputs.profile_settings",
    "ConfigError": "sizing.inputs.config",
    "NotModelled": "sizing.inputs.config",
    "DEVICES": "sizing.inputs.profile_settings",
    "DTYPES": "sizing.inputs.hardware",
    "GIB": "sizing.inputs.units",
    "GPU": "sizing.inputs.hardware",
    "GPUS": "sizing.inputs.hardware",
    "ModelConfig": "sizing.inputs.config",
    "ModelTarget": "sizing.inputs.model_target",
    "PLANNED_RUNS": "sizing.inputs.planned_runs",
    "PLANNED_RUN_NAMES": "sizing.inputs.planned_runs",
    "PRESETS": "sizing.inputs.presets",
    "PlannedRun": "sizing.inputs.planned_runs",
    "Preset": "sizing.inputs.presets",
    "ProfileError": "sizing.inputs.profile_settings",
    "ProfileSettings": "sizing.inputs.profile_settings",
    "SCRIPT": "sizing.inputs.planned_runs",
    "Workload": "sizing.inputs.workload",
    "as_workload": "sizing.inputs.workload",
    "TARGET_MFU": "sizing.inputs.planned_runs",
    "add_user_file": "sizing.inputs.data_files",
    "as_config": "sizing.inputs.model_arg",
    "default_gpu_for": "sizing.inputs.default_gpu",
    "format_float": "sizing.inputs.units",
    "format_gib": "sizing.inputs.units",
    "format_int": "sizing.inputs.units",
    "format_si": "sizing.inputs.units",
    "get_gpu": "sizing.inputs.hardware",
    "get_preset": "sizing.inputs.presets",
    "gpu_for_device_name": "sizing.inputs.hardware",
    "llama_ffn_dim": "sizing.inputs.config",
    "model_args": "sizing.inputs.planned_runs",
    "parse_field_value": "sizing.inputs.config",
    "parse_quantity": "sizing.inputs.units",
    "parse_length": "sizing.inputs.units",
    "LENGTH_NOTE": "sizing.inputs.units",
    "QUANTITY_NOTE": "sizing.inputs.units",
    "planned_run": "sizing.inputs.planned_runs",
    "published_value": "sizing.inputs.presets",
    "resolve_target": "sizing.inputs.model_target",
    "settings_args": "sizing.inputs.planned_runs",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
