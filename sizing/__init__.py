"""transformer-sizing: exact parameters, FLOPs, training cost and memory of transformer LLMs.

Pure Python (no torch): `from sizing import estimate, ModelConfig, get_preset`.
"""

# The release, stated once here and read by pyproject.toml (setuptools' dynamic version) and
# `sizing --version`: no importlib.metadata lookup at run time.
__version__ = "0.1.0"

from sizing.estimate import Estimate, estimate
from sizing.formulas import active_params, flop_breakdown, param_components, total_params
from sizing.inputs import PRESETS, ConfigError, ModelConfig, get_preset, llama_ffn_dim

__all__ = [
    "PRESETS",
    "ConfigError",
    "Estimate",
    "ModelConfig",
    "__version__",
    "active_params",
    "estimate",
    "flop_breakdown",
    "get_preset",
    "llama_ffn_dim",
    "param_components",
    "sweep",
    "total_params",
]


# Loaded on first use (PEP 562): `sizing.sweep` (so that `sizing estimate` never loads the sweep
# code), and the shared words and checks that reference_model takes from the package.
_LAZY = {
    "sweep": "sizing.plan.sweeps",
    "ATTENTION_CONVENTIONS": "sizing.vocabulary",
    "ATTENTION_IMPLS": "sizing.vocabulary",
    "ATTENTION_IMPL_ALIASES": "sizing.vocabulary",
    "DEFAULT_MFU": "sizing.vocabulary",
    "FLOP_COUNTERS": "sizing.vocabulary",
    "MAX_SEQ_LEN": "sizing.validate",
    "MLA_IMPLS": "sizing.vocabulary",
    "RECOMPUTE_MODES": "sizing.vocabulary",
    "SizingError": "sizing.validate",
    "attention_impl": "sizing.vocabulary",
    "require_choice": "sizing.validate",
    "require_int": "sizing.validate",
    "show": "sizing.validate",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sizing' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
