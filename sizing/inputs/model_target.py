"""What a question's model argument names, resolved once: a preset name, a path to a config file
(a Hugging Face config.json or this tool's JSON), a Preset or a ModelConfig, with the context a
question uses when it is given none (the preset's training context, the file's pretraining
context) and where that context came from."""

from __future__ import annotations

import os
from typing import NamedTuple

from sizing.inputs.config import ModelConfig
from sizing.inputs.presets import Preset, get_preset
from sizing.validate import SizingError, show


class ModelTarget(NamedTuple):  # a NamedTuple, not a dataclass: nothing to generate at start-up
    name: str
    config: ModelConfig
    preset: Preset | None
    context: int | None
    context_source: str | None


def resolve_target(model: str | os.PathLike | ModelConfig | Preset) -> ModelTarget:
    """A preset name, a config file path, a Preset or a ModelConfig -> config and default context.
    A string that names a preset is the preset; else, a path to a file or directory."""
    if isinstance(model, Preset):
        return ModelTarget(model.name, model.config, model, model.context, f"{model.name}'s training context")
    if isinstance(model, ModelConfig):
        return ModelTarget("custom", model, None, None, None)
    if isinstance(model, (str, os.PathLike)):
        text = os.fspath(model)
        looks_like_path = text.endswith(".json") or os.sep in text or "/" in text or os.path.exists(text)
        try:
            return resolve_target(get_preset(text))
        except SizingError:
            if not looks_like_path:
                raise
        from sizing.inputs.hf import read_config_file  # only a path pays for the HF mapping

        read = read_config_file(text)
        return ModelTarget(text, read.config, None, read.context, read.context_source(text))
    raise SizingError(f"model ({show(model)}) must be a preset name, a config file path, a Preset or a ModelConfig")
