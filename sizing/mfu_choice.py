"""Where the training cost's MFU comes from, in one place (issue 36: one answer per question):
`mfu=` when given, the explicit override; else, with a GPU count, the step model's for the plan
sizing.parallel.predict_run finds (the plan `sizing parallel --gpus N` prints); else the constant
DEFAULT_MFU, said to be assumed."""

from __future__ import annotations

from sizing.inputs import ModelConfig, Workload
from sizing.vocabulary import DEFAULT_MFU


def assumed_plan(cfg: ModelConfig, work: Workload, gpu: str):
    """The run a GPU count assumes: the step model's plan for work.gpus GPUs (the fastest layout
    that fits, as `sizing parallel --gpus N`; sizing.parallel.best_layout_plan, imported only here),
    when there is one to search: a GPU count and a bf16/fp16 peak. Its layout sets the memory
    shown, and, unless an MFU is given, the training cost's MFU."""
    if work.gpus is None or work.dtype not in (None, "bf16", "fp16"):
        return None
    from sizing.parallel import best_layout_plan

    return best_layout_plan(cfg, work, gpu)


def step_model_mfu(cfg: ModelConfig, work: Workload, plan, mfu_given: float | None):
    """The MFU of the assumed plan (sizing.parallel.layout_mfu) when it sets the training cost's:
    no MFU given, tokens to cost, a plan."""
    if mfu_given is not None or work.tokens is None or plan is None:
        return None
    from sizing.parallel import layout_mfu

    return layout_mfu(cfg, work, plan)


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
