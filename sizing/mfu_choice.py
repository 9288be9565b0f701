"""Where the training cost's MFU comes from, in one place (issue 36: one answer per question):
`mfu=` when given, the explicit override; else, with a GPU count, the step model's for the plan
sizing.parallel.predict_run finds (the plan `sizing parallel --gpus N` prints); else the constant
DEFAULT_MFU, said to be assumed."""

from __future__ import annotations

from sizing.inputs import ModelConfig, Workload
from sizing.vocabulary import DEFAULT_MFU


def step_model_mfu(cfg: ModelConfig, work: Workload, gpu: str, mfu_given: float | None):
    """The step model's plan for work.gpus GPUs (sizing.parallel.best_layout_mfu, imported only
    here), when it sets the MFU: no MFU given, a GPU count, tokens to cost, a bf16/fp16 peak."""
    if mfu_given is not None or work.gpus is None or work.tokens is None or work.dtype not in (None, "bf16", "fp16"):
        return None
    from sizing.parallel import best_layout_mfu

    return best_layout_mfu(cfg, work, gpu)


def mfu_source(work: Workload, gpu: str, mfu_given: float | None, layout) -> str:
    """Where the training cost's MFU came from, in words."""
    if mfu_given is not None:
        return "given (--mfu): a constant whole-run MFU instead of the step model"
    if layout is not None:
        return (
            f"predicted by the per-operation step model for {layout.gpus} x {gpu}: {layout.layout}, recompute "
            f"{layout.recompute}, global batch {layout.global_batch} x {work.seq_len} tokens (the plan `sizing "
            "parallel --gpus N` prints)"
        )
    constant = f"constant {DEFAULT_MFU:g}, assumed"
    if work.gpus is None:
        return f"{constant}: no GPU count given (--gpus N predicts the step, layout and MFU)"
    if work.dtype not in (None, "bf16", "fp16"):
        return f"{constant}: the step model times bf16 and fp16 matmuls, not {work.dtype}"
    return f"{constant}: no layout on {work.gpus} x {gpu} fits or has step-time constants"
