"""How a planned shape trains (issue 36 item 5, one answer per question): the step model's plan
for it, the layout `sizing parallel` finds (on --gpus GPUs, else the fewest that fit), so its
MFU, GPU-hours band and fit come from the same search as `sizing parallel` and `sizing estimate
--gpus`. A constant MFU is only the explicit override (`mfu=`, the CLI's --mfu): then, and for a
GPU without step-time constants or a shape no layout fits, the fit is the ZeRO-3 check of
sizing.memory and the MFU the constant, said so."""

from __future__ import annotations

from typing import NamedTuple

from sizing.inputs import ModelConfig, Workload
from sizing.vocabulary import DEFAULT_MFU, RECOMPUTE_MODES


class ShapeRun(NamedTuple):
    mfu: float  # model FLOPs (attention counted full) / (GPU-seconds x dense peak)
    mfu_source: str
    gpus: int  # the GPUs the days are counted on
    fits: bool
    fit_setting: str  # the layout that fits, or the ZeRO setting, or why none does
    max_micro_batch: int | None
    band: object = None  # the step's StepBand (sizing.parallel.band); None for a constant MFU


def shape_run(cfg: ModelConfig, seq_len: int, gpu: str, num_gpus: int | None, mfu: float | None) -> ShapeRun:
    """The shape's run on `gpu`: the step model's plan (module docstring) unless `mfu` is given."""
    if mfu is None:
        from sizing.parallel import best_layout_plan, layout_mfu

        work = Workload(seq_len, recompute=None, gpus=num_gpus)
        plan = best_layout_plan(cfg, work, gpu)
        if plan is not None:
            lay = plan.layout
            setting = (
                f"{lay.label()} on {lay.world} GPUs, recompute {plan.work.recompute}, global batch "
                f"{lay.global_batch()} (as `sizing parallel`)"
            )
            source = f"per-operation step model, {lay.label()} on {lay.world} x {gpu}"
            band = plan.predicted.band
            return ShapeRun(layout_mfu(cfg, work, plan).mfu, source, lay.world, True, setting, None, band)
    fits, setting, max_b = zero_fit(cfg, seq_len, gpu, num_gpus or 1)
    if mfu is not None:
        source = "given (--mfu): a constant whole-run MFU instead of the step model"
    else:
        mfu, source = DEFAULT_MFU, f"constant {DEFAULT_MFU:g}, assumed: no layout of the step model on {gpu} fits"
    return ShapeRun(mfu, source, num_gpus or 1, fits, setting, max_b)


def zero_fit(cfg: ModelConfig, seq_len: int, gpu: str, num_gpus: int) -> tuple[bool, str, int | None]:
    """The first of: ZeRO-3 over num_gpus GPUs with recompute none, selective, full (bf16-mixed
    AdamW, micro-batch 1) that fits one GPU. Tensor/pipeline layouts are not searched here."""
    from sizing.memory import training_memory

    zero = 3 if num_gpus > 1 else 0
    for recompute in RECOMPUTE_MODES:
        m = training_memory(cfg, seq_len, 1, zero=zero, dp=num_gpus, recompute=recompute, gpu=gpu)
        if m.fits:
            return True, f"ZeRO-{zero} over {num_gpus} GPU(s), recompute {recompute}", m.max_micro_batch
    from sizing.parallel import min_gpus_hint, min_gpus_that_fit  # the one "how many GPUs" answer

    fewest = min_gpus_that_fit(cfg, Workload(seq_len, recompute=None), gpu=gpu)
    why = min_gpus_hint(fewest) if fewest is not None else m.reason
    return False, f"not with ZeRO-{zero} over {num_gpus} GPU(s) at any recompute; {why}", None
