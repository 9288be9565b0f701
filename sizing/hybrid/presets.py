"""Hybrid presets: each the model's Hugging Face config fields (the ones that set a size; the
rest take the transformers 5.24 defaults), the published parameter count and its source.
tools/hf_counts_hybrid.py builds each with HF's own modeling code on the meta device and
records the counts in tests/fixtures/hf_counts_hybrid.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sizing.hybrid.hf_2025 import hybrid_from_hf_config
from sizing.hybrid.model import HybridModel
from sizing.inputs import data_files


@dataclass(frozen=True)
class HybridPreset:
    name: str
    hf_config: dict
    published_total: float  # parameters, as published (rounded as the source rounds)
    published_active: float | None
    rounding: float  # half a unit of the published figure's last digit, relative
    source: str
    truncated: bool = False  # the figure is a name that truncates (9B: 9 <= N < 10 billion)

    def model(self) -> HybridModel:
        return hybrid_from_hf_config(dict(self.hf_config, _name_or_path=self.name))


# the entries are data: sizing/data/hybrid_presets.json, each field checked against its type (the HF config
# object as it is: sizing reads it like any config.json)
HYBRID_PRESETS: tuple[HybridPreset, ...] = tuple(
    data_files.records(
        HybridPreset,
        data_files.builtin("hybrid_presets.json"),
        "presets",
        "hybrid_presets.json",
        "name",
        {"hf_config": lambda v, _: v},
    )
)


@cache
def hybrid_preset(name: str) -> HybridPreset:
    for p in HYBRID_PRESETS:
        if p.name == name:
            return p
    raise KeyError(name)
