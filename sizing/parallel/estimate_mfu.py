"""The MFU `sizing estimate --gpus N --gpu G` quotes when no --mfu is given: that of the fastest
layout the per-operation search (sizing.parallel.search) finds for the model on exactly N GPUs.

The estimate knows no batch, so the search runs at a global batch of 4M tokens (Llama 2,
arXiv:2307.09288 sec. 2.2; Llama 3 trains at 4-16M) in sequences of T; where no layout of N GPUs
divides it (dp x micro-batch must), at the smallest multiple of N above it, one sequence or more
per GPU. The step model's MFU counts causal
attention (docs/conventions.md); the estimate's training cost counts attention by its own
--attention convention, so the figure handed back is converted to it: the same step time, the
estimate's model FLOPs over it. None when the GPU has no step-time constants or nothing fits:
the estimate then keeps the constant and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.formulas import flop_breakdown
from sizing.inputs import ModelConfig
from sizing.parallel.search import search_layout
from sizing.parallel.stepdata import has_constants
from sizing.vocabulary import ceil_div

BATCH_TOKENS = 4 * 1024 * 1024


@dataclass(frozen=True)
class LayoutMfu:
    mfu: float  # under the estimate's attention convention
    layout: str
    recompute: str
    global_batch: int  # sequences
    step_seconds: float
    band: object = None  # the step's StepBand (sizing.parallel.band)

    def to_dict(self) -> dict:
        return {
            "mfu": self.mfu,
            "layout": self.layout,
            "recompute": self.recompute,
            "global_batch": self.global_batch,
            "step_seconds": self.step_seconds,
            "step_band": self.band.to_dict() if self.band is not None else None,
            "mfu_band": list(self.band.scaled(self.mfu, inverse=True)) if self.band is not None else None,
            "model": "per-operation step model, fastest layout that fits (sizing parallel --gpus N)",
        }


def search_batches(seq_len: int, gpus: int) -> tuple[int, ...]:
    """4M tokens in sequences of seq_len; then that rounded up to a multiple of gpus."""
    sequences = max(1, BATCH_TOKENS // seq_len)
    rounded = ceil_div(sequences, gpus) * gpus
    return (sequences,) if rounded == sequences else (sequences, rounded)


def best_layout_mfu(cfg: ModelConfig, seq_len: int, gpus: int, gpu_key: str, attention: str) -> LayoutMfu | None:
    if not has_constants(gpu_key):
        return None
    for batch in search_batches(seq_len, gpus):
        best = search_layout(cfg, seq_len, batch, gpus, gpu=gpu_key).best
        if best is not None and best.predicted is not None:
            break
    else:
        return None
    pred = best.predicted
    ratio = flop_breakdown(cfg, seq_len, attention, "none").model_training / pred_flops(cfg, seq_len)
    mfu = min(1.0, pred.mfu * ratio)
    return LayoutMfu(mfu, best.layout.label(), best.work.recompute, batch, pred.step_seconds, pred.band)


def pred_flops(cfg: ModelConfig, seq_len: int) -> int:
    """Model training FLOPs per sequence as the step model counts them (causal attention)."""
    return flop_breakdown(cfg, seq_len, "causal", "none").model_training
