"""The FLOPs of one training sequence that the step and MFU are counted against, for any config the
parallel questions take: a stack's (sizing.formulas.flop_breakdown), a hybrid's (sizing.hybrid:
its attention layers, state mixers' projections and chunked scans, MLPs and MoE), a vision-language
model's (its language model's, plus each training sequence's images through the tower and projector:
sizing.vision). Backward is twice the forward, as sizing.formulas counts it; recomputation adds the
forward of what it runs again (every layer but the head under `full`, the attention core under
`selective`)."""

from __future__ import annotations

from dataclasses import dataclass

from sizing.formulas import flop_breakdown
from sizing.hybrid import hybrid_of, prefill_flop_components
from sizing.inputs import ModelConfig
from sizing.vision import vision_of

BACKWARD_PER_FORWARD = 2


@dataclass(frozen=True)
class WholeFlops:
    """The totals of sizing.formulas.FlopBreakdown the step model reads, for one sequence."""

    seq_len: int
    forward: int
    recompute_flops: int

    @property
    def model_training(self) -> int:
        return (1 + BACKWARD_PER_FORWARD) * self.forward

    @property
    def training(self) -> int:
        return self.model_training + self.recompute_flops


def hybrid_flops(cfg: ModelConfig, seq_len: int, attention: str, recompute: str) -> WholeFlops:
    parts = prefill_flop_components(hybrid_of(cfg), seq_len, attention)
    forward = sum(parts.values())
    if recompute == "full":
        again = forward - parts.get("lm_head", 0)
    elif recompute == "selective":
        again = parts.get("attention.scores_and_values", 0)
    else:
        again = 0
    return WholeFlops(seq_len, forward, again)


def vision_flops(cfg: ModelConfig, seq_len: int, attention: str, recompute: str) -> WholeFlops:
    """The language model's sequence (its image tokens among the T) and the images through the tower
    and projector; full recomputation runs the tower's forward again too."""
    text = flop_breakdown(cfg, seq_len, attention, recompute)
    images = cfg.images * cfg.vision.image_flops(*cfg.image_size) if cfg.images else 0
    again = text.recompute_flops + (images if recompute == "full" else 0)
    return WholeFlops(seq_len, text.forward + images, again)


def training_flop_breakdown(cfg: ModelConfig, seq_len: int, attention: str = "full", recompute: str = "none"):
    """flop_breakdown for a stack; the same totals (forward, model_training, training) for a hybrid or
    a vision-language model."""
    if hybrid_of(cfg) is not None:
        return hybrid_flops(cfg, seq_len, attention, recompute)
    if vision_of(cfg) is not None:
        return vision_flops(cfg, seq_len, attention, recompute)
    return flop_breakdown(cfg, seq_len, attention, recompute)
