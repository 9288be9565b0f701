"""The one answer to "how long is a training step, at what MFU, on which layout": every
question that times training asks it here (`sizing estimate --gpus`, `sizing parallel`, the
Python estimate(num_gpus=...), the UI), so they cannot disagree. The step itself is the
per-operation model behind parallel_plan (sizing.parallel.steptime); a constant MFU is only the
explicit override (`mfu=`, the CLI's --mfu).

    >>> from sizing.inputs import Workload
    >>> plan = predict_run("llama2-7b", Workload(4096, recompute=None, gpus=64), "h100-sxm")
    >>> plan.layout.label(), plan.work.global_batch, round(plan.mfu, 3)  # doctest: +SKIP

With a layout, that layout's plan; without, the fastest layout that fits on work.gpus GPUs (the
fewest that fit when work.gpus is None), searched at work.global_batch, else at the default
(sizing.parallel.batches: 4M tokens per step, then that rounded up to a multiple of the GPUs
when no layout divides it), trying every recompute mode when work.recompute is None. The plan's
workload states the GPUs, global batch and recompute it assumed.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig, Workload, as_config, as_workload
from sizing.parallel.batches import batches_to_try
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.plan import ParallelPlan, parallel_plan
from sizing.parallel.search import MAX_SEARCH_GPUS, search_layout
from sizing.vocabulary import mfu_meaning

# What "MFU" means beside every step-model MFU: the step model counts attention causal.
MFU_MEANING = mfu_meaning("causal", "bf16 (fp8 under precision fp8)")


def predict_run(
    cfg: ModelConfig,
    work: Workload,
    gpu: str = "h100",
    *,
    layout: ParallelLayout | None = None,
    base: ParallelLayout | None = None,
    max_gpus: int = MAX_SEARCH_GPUS,
    first_fit: bool = False,
    **plan_options,
) -> ParallelPlan | None:
    """The plan of `work` on `gpu`: of `layout` when given, else of the searched layout (module
    docstring); None when nothing fits. plan_options are parallel_plan's (mfu, step_options,
    compute_efficiency, name, ...). `first_fit`: a layout that fits, not the fastest (the UI's
    fits-on list asks only whether one does: sizing.parallel.search_layout)."""
    cfg, work = as_config(cfg), as_workload(work)
    if layout is not None:
        return parallel_plan(cfg, layout, work, gpu, **plan_options)
    for batch in batches_to_try(work.seq_len, work.gpus, work.global_batch):
        at = work.with_(global_batch=batch)
        best = search_layout(cfg, at, max_gpus, base, first_fit, gpu=gpu, **plan_options).best
        if best is not None:
            return best
    return None
