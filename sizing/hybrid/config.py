"""A hybrid as the training and serving questions take a model: its base ModelConfig (the attention,
MLP and MoE sizes, the embedding and head) with the hybrid's layer pattern and state mixer beside it.

`HybridConfig` is a ModelConfig, so every question that reads a config's widths (tensor parallelism's
head checks, the embedding on the first pipeline stage, the lm_head on the last, the MoE's experts)
reads the base's; the layer pattern is read by the questions' own per-mixer functions
(sizing.parallel.mixers, sizing.serve.whole), never by sizing.formulas, which sizes stacks of identical
blocks. Its per-layer pattern answers `is_moe_layer` and the MoE / dense counts from the pattern, so a
hybrid's MoE layers are where its config puts them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sizing.hybrid.model import HybridModel
from sizing.inputs import ModelConfig
from sizing.validate import SizingError


@dataclass(frozen=True)
class HybridConfig(ModelConfig):
    hybrid: HybridModel | None = None  # the layer pattern and the state mixer (never None once built)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.hybrid, HybridModel):
            raise SizingError("a HybridConfig needs its HybridModel (sizing.hybrid.hybrid_config builds one)")

    def is_moe_layer(self, i: int) -> bool:
        return self.hybrid.layers[i][1] == "moe"

    @property
    def n_moe_layers(self) -> int:
        return self.hybrid.count(mlp="moe")

    @property
    def n_dense_layers(self) -> int:
        return self.hybrid.count(mlp="dense")


def hybrid_config(m: HybridModel) -> HybridConfig:
    """The HybridConfig of `m`: its base's fields, with `m` beside them."""
    base = {f.name: getattr(m.base, f.name) for f in dataclasses.fields(ModelConfig)}
    return HybridConfig(**base, hybrid=m)


def hybrid_of(cfg) -> HybridModel | None:
    """The HybridModel a config carries (a HybridConfig), None for a stack of identical blocks."""
    return getattr(cfg, "hybrid", None)
