"""The MFU `sizing estimate --gpus N` and estimate(num_gpus=N) quote when no MFU is given: that
of the plan sizing.parallel.run.predict_run finds (the fastest layout that fits on exactly N
GPUs, at the default global batch of sizing.parallel.batches), the same plan `sizing parallel
--gpus N` prints.

The step model's MFU counts causal attention (docs/conventions.md); the estimate's training cost
counts attention by its own convention, so the figure handed back is converted to it: the same
step time, the estimate's model FLOPs over it. None when the GPU has no step-time constants or
nothing fits: the estimate then keeps the constant and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.formulas import flop_breakdown
from sizing.inputs import ModelConfig, Workload
from sizing.parallel.run import MFU_MEANING, predict_run
from sizing.parallel.stepdata import has_constants


@dataclass(frozen=True)
class LayoutMfu:
    mfu: float  # under the estimate's attention convention
    layout: str
    recompute: str
    global_batch: int  # sequences per step
    step_seconds: float
    gpus: int
    predicted_mfu: float  # the step model's own figure (causal attention)

    def to_dict(self) -> dict:
        return {
            "mfu": self.mfu,
            "layout": self.layout,
            "recompute": self.recompute,
            "global_batch": self.global_batch,
            "step_seconds": self.step_seconds,
            "gpus": self.gpus,
            "predicted_mfu_causal": self.predicted_mfu,
            "model": "per-operation step model, fastest layout that fits (sizing parallel --gpus N)",
            "mfu_meaning": MFU_MEANING,
        }


def best_layout_mfu(cfg: ModelConfig, work: Workload, gpu_key: str) -> LayoutMfu | None:
    """The searched plan's MFU for `work` (work.gpus GPUs) on gpu_key, in work.attention's convention."""
    if not has_constants(gpu_key):
        return None
    best = predict_run(cfg, work, gpu_key)
    if best is None or best.predicted is None:
        return None
    pred = best.predicted
    ratio = flop_breakdown(cfg, work.seq_len, work.attention, "none").model_training / pred_flops(cfg, work.seq_len)
    lay = best.layout
    return LayoutMfu(
        min(1.0, pred.mfu * ratio), lay.label(), best.work.recompute, lay.global_batch(), pred.step_seconds,
        lay.world, pred.mfu,
    )  # fmt: skip


def pred_flops(cfg: ModelConfig, seq_len: int) -> int:
    """Model training FLOPs per sequence as the step model counts them (causal attention)."""
    return flop_breakdown(cfg, seq_len, "causal", "none").model_training
