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

from sizing.inputs import ModelConfig, Workload
from sizing.parallel.run import MFU_MEANING, predict_run
from sizing.parallel.stepdata import has_constants
from sizing.parallel.whole_flops import training_flop_breakdown
from sizing.validate import MIN_MFU


@dataclass(frozen=True)
class LayoutMfu:
    mfu: float  # under the estimate's attention convention
    layout: str
    recompute: str
    global_batch: int  # sequences per step
    step_seconds: float
    gpus: int
    predicted_mfu: float  # the step model's own figure (causal attention)
    band: object = None  # the step's StepBand (sizing.parallel.band)

    def to_dict(self) -> dict:
        return {
            "mfu": self.mfu,
            "layout": self.layout,
            "recompute": self.recompute,
            "global_batch": self.global_batch,
            "step_seconds": self.step_seconds,
            "gpus": self.gpus,
            "predicted_mfu_causal": self.predicted_mfu,
            "step_band": self.band.to_dict() if self.band is not None else None,
            "mfu_band": list(self.band.scaled(self.mfu, inverse=True)) if self.band is not None else None,
            "model": "per-operation step model, fastest layout that fits (sizing parallel --gpus N)",
            "mfu_meaning": MFU_MEANING,
        }


def best_layout_plan(cfg: ModelConfig, work: Workload, gpu_key: str):
    """The step model's plan for work.gpus GPUs (the fastest layout that fits: predict_run, as
    `sizing parallel --gpus N`); None when the GPU has no step-time constants or nothing fits."""
    if not has_constants(gpu_key):
        return None
    best = predict_run(cfg, work, gpu_key)
    return None if best is None or best.predicted is None else best


def layout_mfu(cfg: ModelConfig, work: Workload, best) -> LayoutMfu:
    """The MFU of `best` (a ParallelPlan of the step model) in work.attention's convention."""
    pred = best.predicted
    model = training_flop_breakdown(cfg, work.seq_len, work.attention, "none").model_training
    ratio = model / pred_flops(cfg, work.seq_len)
    lay = best.layout
    # an MFU under the estimate's floor (a latency-bound ring over absurdly many GPUs) is quoted at the floor
    mfu = min(1.0, max(MIN_MFU, pred.mfu * ratio))
    return LayoutMfu(
        mfu, lay.label(), best.work.recompute, lay.global_batch(), pred.step_seconds, lay.world, pred.mfu, pred.band
    )


def best_layout_mfu(cfg: ModelConfig, work: Workload, gpu_key: str) -> LayoutMfu | None:
    """The searched plan's MFU for `work` (work.gpus GPUs) on gpu_key, in work.attention's convention."""
    best = best_layout_plan(cfg, work, gpu_key)
    return None if best is None else layout_mfu(cfg, work, best)


@dataclass(frozen=True)
class LayoutMemory:
    """The training memory `sizing estimate --gpus N` shows: the most-loaded GPU of the layout it
    assumed (the plan `sizing parallel --gpus N` prints), so the memory and the training cost
    describe one run. Read like sizing.memory's TrainingMemory where the two share a field."""

    plan: object  # the ParallelPlan

    @property
    def gpu(self) -> str:
        return self.plan.gpu.key

    @property
    def per_gpu_bytes(self) -> int:
        return self.plan.per_gpu_bytes

    @property
    def fits(self) -> bool:
        return self.plan.fits

    @property
    def max_micro_batch(self) -> None:
        """Not searched: the layout fixes its micro-batch (the flat row's column stays empty)."""
        return None

    def to_dict(self) -> dict:
        keys = ("layout_label", "layout", "global_batch", "recompute", "precision", "optimizer", "gpu")
        keys += ("gpu_memory_bytes", "most_loaded_stage", "per_gpu", "per_gpu_bytes", "runtime_reserve_bytes")
        keys += ("headroom_bytes", "fits", "verdict", "verdict_band_bytes", "memory_stack")
        whole = self.plan.to_dict()
        return {"assumed": "the layout of the training cost (sizing parallel --gpus N)", **{k: whole[k] for k in keys}}


def pred_flops(cfg: ModelConfig, seq_len: int) -> int:
    """Model training FLOPs per sequence as the step model counts them (causal attention)."""
    return training_flop_breakdown(cfg, seq_len, "causal", "none").model_training
