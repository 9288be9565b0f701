"""transformer-sizing: exact parameters, FLOPs, training cost and memory of transformer LLMs.

Pure Python (no torch): `from sizing import estimate, ModelConfig, get_preset`.
"""

import sys
import types

# The release, stated once here and read by pyproject.toml (setuptools' dynamic version) and
# `sizing --version`: no importlib.metadata lookup at run time.
__version__ = "0.1.0"

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

# Every name is loaded from its module on first use (PEP 562), so that importing the package
# (which every `sizing.*` import does first) loads nothing: `sizing --help` never loads the
# formulas, and `sizing estimate` only what it uses.
_LAZY = {
    "Estimate": "sizing.estimate",
    "PRESETS": "sizing.inputs",
    "ConfigError": "sizing.inputs",
    "ModelConfig": "sizing.inputs",
    "get_preset": "sizing.inputs",
    "llama_ffn_dim": "sizing.inputs",
    "active_params": "sizing.formulas",
    "flop_breakdown": "sizing.formulas",
    "param_components": "sizing.formulas",
    "total_params": "sizing.formulas",
    "sweep": "sizing.plan.sweeps",
    # the shared words and checks that reference_model takes from the package
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


class _Package(types.ModuleType):
    """`sizing.estimate` is the function (the one-call answer), not the module of the same name:
    importing the module sizing.estimate binds it on the package, and this keeps the function."""

    @property
    def estimate(self):
        from sizing.estimate import estimate

        return estimate

    @estimate.setter
    def estimate(self, module) -> None:  # the import system binding the submodule sizing.estimate
        pass


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
