"""Vision-language presets: each the model's whole Hugging Face config (the fields that set a size),
the published total and its source. tools/hf_counts_vision.py counts each with transformers'
own modeling code (AutoModelForImageTextToText on the meta device) into
tests/fixtures/hf_counts_vision.json. Gemma-3-27B and Llama-4-Scout/Maverick's whole configs are
tests/fixtures/hf_configs_modern/ (counted there, `multimodal_total`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import data_files


@dataclass(frozen=True)
class VisionPreset:
    name: str
    hf_config: dict
    published_total: float
    rounding: float  # relative half-unit of the published figure
    source: str


# the entries are data: sizing/data/vision_presets.json, each field checked against its type (the HF config
# object as it is: sizing reads it like any config.json)
VISION_PRESETS: tuple[VisionPreset, ...] = tuple(
    data_files.records(
        VisionPreset,
        data_files.builtin("vision_presets.json"),
        "presets",
        "vision_presets.json",
        "name",
        {"hf_config": lambda v, _: v},
    )
)


def vision_preset(name: str) -> VisionPreset:
    for p in VISION_PRESETS:
        if p.name == name:
            return p
    raise KeyError(name)
