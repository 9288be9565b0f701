"""One answer to "how many GPUs does this need?": the fewest GPUs on which some layout fits,
found by the layout search (sizing.parallel.search), which every command that hints quotes.

Counting ZeRO-3 ranks alone (any integer) would give another answer, 15 A100-80GB for
Llama-2-70B where the layout search over powers of two finds 16, so `sizing memory`, `sizing
parallel` and `sizing plan` all call `min_gpus_that_fit` with the same global batch.

The global batch decides which data-parallel degrees divide it, so a question states it
(sizing.parallel.batches: default_global_batch for pretraining, FINETUNE_GLOBAL_BATCH for
fine-tuning).
"""

from __future__ import annotations

from sizing.inputs import GIB, ModelConfig, Workload, as_workload
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.plan import ParallelPlan
from sizing.parallel.search import MAX_SEARCH_GPUS, search_layout


def min_gpus_that_fit(
    cfg: ModelConfig,
    work: Workload,
    *,
    base: ParallelLayout | None = None,
    max_gpus: int = MAX_SEARCH_GPUS,
    **plan_options,
) -> ParallelPlan | None:
    """The fastest plan on the fewest GPUs (a power of two up to max_gpus) that fits `work`
    (its gpus ignored; its global_batch, else the default of sizing.parallel.batches), or None. plan_options are
    parallel_plan's (gpu, mfu, step_options, ...)."""
    return search_layout(cfg, as_workload(work).with_(gpus=None), max_gpus, base, **plan_options).best


def min_gpus_hint(plan: ParallelPlan) -> str:
    """The line every command quotes: the count, the layout and the bytes per GPU."""
    return (
        f"the fewest GPUs: {plan.layout.world} ({plan.layout.label()}, recompute {plan.work.recompute}, "
        f"{plan.per_gpu_bytes / GIB:.2f} GiB per GPU; sizing parallel finds the same)"
    )
