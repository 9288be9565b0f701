"""The model argument of the public formula functions (total_params, flop_breakdown,
parallel_plan, ...): a ModelConfig, a Preset, or a preset name, as `estimate` takes them;
anything else is one SizingError line. Checked with one isinstance in the common case, since
sweeps call the formulas for thousands of configs."""

from __future__ import annotations

from typing import Any

from sizing.inputs.config import ModelConfig
from sizing.validate import SizingError, show


def as_config(model: Any, name: str = "cfg") -> ModelConfig:
    """`model` as a ModelConfig: itself, a Preset's config, or the config of the preset it names."""
    if isinstance(model, ModelConfig):
        return model
    from sizing.inputs.presets import Preset, get_preset  # only a name or a Preset pays for the lookup

    if isinstance(model, Preset):
        return model.config
    if isinstance(model, str):
        return get_preset(model).config  # an unknown name: UnknownName, a SizingError naming close matches
    raise SizingError(f"{name} ({show(model)}) must be a ModelConfig, a Preset or a preset name")
