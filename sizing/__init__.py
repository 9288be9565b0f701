"""transformer-sizing: exact parameters, FLOPs, training cost and memory of transformer LLMs.

Pure Python (no torch): `from sizing import estimate, ModelConfig, get_preset`.
"""

# The release, stated once here and read by pyproject.toml (setuptools' dynamic version) and
# `sizing --version`: no importlib.metadata lookup at run time.
__version__ = "0.1.0"

from .config import ConfigError, ModelConfig, llama_ffn_dim
from .estimate import Estimate, estimate
from .flops import flop_breakdown
from .params import active_params, param_components, total_params
from .presets import PRESETS, get_preset

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


def __getattr__(name: str):
    """`sizing.sweep` (sizing.sweeps.sweep), imported on first use: `sizing estimate` never loads it."""
    if name == "sweep":
        from .sweeps import sweep

        return sweep
    raise AttributeError(f"module 'sizing' has no attribute {name!r}")
