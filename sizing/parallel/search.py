"""The smallest layout that fits: fewest GPUs first, then the shortest step (which holds the
communication that is not hidden, the pipeline bubble and the recomputation, so a layout that
saves bytes on the wire by recomputing everything does not win for free).

Candidates per GPU count N (a power of two, or the count asked for): tp a power of two up to
the node (8) dividing the heads and kv heads, with sequence parallelism (never slower, and it
shards the norms' activations); pp any divisor of N / tp up to L (uneven stages where pp does
not divide L: first and last lighter), 1F1B or interleaved with v = 2, 4, 8 chunks (at most the
layers of the fullest stage); cp a power of two up to 8 dividing T (flash attention only; its
ring is costed, not free); dp = N / (tp pp cp) dividing the global batch, m = global batch / dp
micro-batches (gradient accumulation), at least pp; ZeRO-1, or FSDP (ZeRO-3 per parameter; FSDP only
when the base layout names it, as `--emit torchtitan` does);
for MoE, ep the largest power of two dividing E and the stage's tp x cp x dp ranks, with expert
tensor parallelism 1 (Megatron-Core's expert grid: sizing.parallel.layout); recomputation none,
selective or full unless one is asked for; micro-batch 1.

With the per-operation step model (the default), every candidate's step time is predicted
first (memoised per block shape), and memory is checked in order of predicted time: the first
candidate that fits is the fastest that fits. In constant-MFU mode each fitting candidate's
plan is built and the shortest kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product

from sizing.inputs import ModelConfig, Workload, as_config, as_workload, get_gpu
from sizing.memory import layout_runtime_reserve
from sizing.parallel.batches import FINETUNE_GLOBAL_BATCH, default_global_batch
from sizing.parallel.layout import GPUS_PER_NODE, ParallelLayout
from sizing.parallel.memory import most_loaded
from sizing.parallel.plan import ParallelPlan, parallel_plan, plan_workload
from sizing.parallel.schedule import stage_split
from sizing.parallel.stepdata import has_constants
from sizing.parallel.stepdata import stack as stack_entry
from sizing.parallel.steptime import StepOptions, predict_step
from sizing.validate import SizingError, require_int, show
from sizing.vocabulary import RECOMPUTE_MODES

MAX_SEARCH_GPUS = 2**15


def _powers_of_two(limit: int) -> list[int]:
    out, n = [], 1
    while n <= limit:
        out.append(n)
        n *= 2
    return out


def _largest_power_of_two_dividing(*values: int) -> int:
    n = 1
    while all(v % (2 * n) == 0 for v in values):
        n *= 2
    return n


def candidate_layouts(
    cfg: ModelConfig, seq_len: int, world: int, global_batch: int, attention_impl: str, base: ParallelLayout
) -> list[ParallelLayout]:
    """Every layout of `world` GPUs the search tries (see the module docstring)."""
    out = []
    for tp in _powers_of_two(min(GPUS_PER_NODE, world)):
        if cfg.n_heads % tp or cfg.kv_heads % tp or seq_len % tp:
            continue
        for pp in _divisors(world // tp, cfg.n_layers):
            for cp in _powers_of_two(8 if attention_impl == "flash" else 1):
                if world % (tp * pp * cp) or seq_len % (cp * tp):
                    continue
                dp = world // (tp * pp * cp)
                if global_batch % dp:
                    continue
                m = global_batch // dp
                if pp > 1 and m < pp:
                    continue
                ep = _largest_power_of_two_dividing(cfg.n_experts, tp * cp * dp) if cfg.is_moe else 1
                fullest = max(stage_split(cfg.n_layers, pp))
                chunks = [1] + ([v for v in (2, 4, 8) if v <= fullest] if pp > 1 else [])
                shardings = ((base.fsdp,) if base.fsdp else (None, "full")) if dp * cp > 1 else (None,)
                for v, fsdp in product(chunks, shardings):
                    out.append(
                        replace(
                            base,
                            dp=dp,
                            tp=tp,
                            pp=pp,
                            cp=cp,
                            ep=ep,
                            etp=1,
                            zero=1 if dp * cp > 1 and fsdp is None else 0,
                            fsdp=fsdp,
                            sequence_parallel=tp > 1,
                            pp_schedule="interleaved" if v > 1 else "1f1b",
                            v=v,
                            micro_batches=m,
                            micro_batch=1,
                        )
                    )
    return out


def _divisors(n: int, limit: int) -> list[int]:
    """Divisors of n up to limit (at most sqrt(n) steps: never a loop over L or N)."""
    out, d = set(), 1
    while d * d <= n:
        if n % d == 0:
            out.update((d, n // d))
        d += 1
    return sorted(x for x in out if x <= limit)


@dataclass(frozen=True)
class SearchResult:
    best: ParallelPlan | None
    tried: int
    gpus: tuple[int, ...]  # GPU counts searched


def stack_base(base: ParallelLayout, work: Workload, step_options: StepOptions | None) -> ParallelLayout:
    """The search's base as the stack shards data: the PyTorch-native stacks (fsdp, torchtitan,
    composer) shard with FSDP and have no ZeRO-1 (sizing/data/step_time.json, data_sharding), so
    their searched layouts are FSDP-sharded unless the base says how."""
    key = (step_options.stack if step_options is not None else work.stack) or StepOptions().stack
    if base.fsdp is None and base.zero == 0 and stack_entry(key).data_sharding == "fsdp":
        return replace(base, fsdp="full")
    return base


def search_layout(
    cfg: ModelConfig,
    work: Workload,
    max_gpus: int = MAX_SEARCH_GPUS,
    base: ParallelLayout | None = None,
    **plan_options,
) -> SearchResult:
    """The best fitting plan for `work` on exactly work.gpus GPUs, or on the fewest GPUs up to
    `max_gpus` when work.gpus is None; at work.global_batch sequences per step (None: the default
    of sizing.parallel.batches), trying every recompute mode when work.recompute is None. `cfg`
    may also be a Preset or a preset name; plan_options are parallel_plan's (gpu, mfu, ...).
    Questions ask sizing.parallel.predict_run, which also tries the batch rounded to the GPUs."""
    cfg = as_config(cfg)
    work = as_workload(work)
    cfg.check_context(work.seq_len, "seq_len")
    if base is not None and not isinstance(base, ParallelLayout):
        raise SizingError(f"base ({show(base)}) must be a ParallelLayout")
    require_int("max_gpus", max_gpus, 1, MAX_SEARCH_GPUS)
    base = stack_base(base or ParallelLayout(), work, plan_options.get("step_options"))
    global_batch = work.global_batch or default_global_batch(work.seq_len)
    modes = RECOMPUTE_MODES if work.recompute is None else (work.recompute,)
    counts = (work.gpus,) if work.gpus is not None else tuple(_powers_of_two(max_gpus))
    tried = 0
    constant = plan_options.get("mfu") is not None or plan_options.get("compute_efficiency") is not None
    fast = not constant and has_constants(get_gpu(plan_options.get("gpu", "h100")).key)
    for world in counts:
        layouts = candidate_layouts(cfg, work.seq_len, world, global_batch, work.attention_impl, base)
        tried += len(layouts)
        at = work.with_(gpus=world, global_batch=global_batch)
        if fast:
            best = _fastest_fitting(cfg, layouts, at, modes, plan_options)
        else:
            fitting = [plan for layout in layouts for plan in _fitting_plans(cfg, layout, at, modes, plan_options)]
            best = min(fitting, key=lambda p: (p.step_seconds, p.per_gpu_bytes)) if fitting else None
        if best is not None:
            return SearchResult(best, tried, counts[: counts.index(world) + 1])
    return SearchResult(None, tried, counts)


def _fastest_fitting(cfg: ModelConfig, layouts: list, work: Workload, modes, plan_options: dict):
    """The plan of the fastest (layout, recompute) by predicted step time that fits in memory."""
    gpu = get_gpu(plan_options.get("gpu", "h100"))
    options = plan_options.get("step_options") or StepOptions()
    timed = []
    for i, layout in enumerate(layouts):
        try:
            layout.check_model(cfg, work.seq_len, work.attention_impl)
        except SizingError:
            continue
        for mode in modes:
            # under flash attention selective recomputation costs nothing (its backward recomputes
            # the scores anyway): time it as none, ordered just after it
            same = mode == "selective" and options.attention_kernel == "flash"
            seconds = predict_step(cfg, layout, work.seq_len, gpu.key, "none" if same else mode, options).step_seconds
            timed.append((seconds, same, i, mode))
    for _, _, i, mode in sorted(timed):
        lay = replace(layouts[i], finetune=work.finetune)
        _, terms = most_loaded(cfg, lay, plan_workload(work.with_(recompute=mode), plan_options.get("step_options")))
        reserve = layout_runtime_reserve(lay.dp, lay.tp, lay.pp, lay.cp, lay.ep, lay.etp).total_bytes  # as plan.fits
        if terms["total_bytes"] + reserve <= gpu.memory_bytes:
            return parallel_plan(cfg, layouts[i], work.with_(recompute=mode), **plan_options)
    return None


def _fitting_plans(cfg: ModelConfig, layout: ParallelLayout, work: Workload, modes, plan_options: dict) -> list:
    """The plans of `layout` that fit, one per recompute mode. Memory first (cheap), the plan
    (collectives, step) only for what fits; full recomputation saves the most, so when it does
    not fit no mode does."""
    gpu = get_gpu(plan_options.get("gpu", "h100"))
    try:
        layout.check_model(cfg, work.seq_len, work.attention_impl)
    except SizingError:
        return []
    lay = replace(layout, finetune=work.finetune)
    out = []
    for mode in sorted(modes, key=lambda m: m != "full"):
        _, terms = most_loaded(cfg, lay, plan_workload(work.with_(recompute=mode), plan_options.get("step_options")))
        reserve = layout_runtime_reserve(layout.dp, layout.tp, layout.pp, layout.cp, layout.ep, layout.etp).total_bytes
        if terms["total_bytes"] + reserve > gpu.memory_bytes:
            if mode == "full":
                return []
            continue
        out.append(parallel_plan(cfg, layout, work.with_(recompute=mode), **plan_options))
    return out


# What else could fit on the same GPUs, each a (label, layout changes, workload changes).
ALTERNATIVES: tuple[tuple[str, dict, dict], ...] = (
    ("optimizer states offloaded to CPU", {"offload_optimizer": True}, {}),
    ("pure bf16 (no fp32 master copy)", {}, {"precision": "bf16"}),
    ("8-bit Adam", {}, {"optimizer": "adam8bit"}),
    ("pure bf16 and 8-bit Adam", {}, {"precision": "bf16", "optimizer": "adam8bit"}),
    ("LoRA (r 16, all linears)", {}, {"finetune": "lora"}),
    ("QLoRA (NF4 base, r 16, all linears)", {}, {"finetune": "qlora"}),
)
# The alternatives that change how the model is trained or held, not only its numbers.
LAYOUT_ALTERNATIVES = frozenset(
    label for label, layout_changes, work_changes in ALTERNATIVES if layout_changes or "finetune" in work_changes
)


def would_fit(
    cfg: ModelConfig,
    work: Workload,
    base: ParallelLayout | None = None,
    more_gpus: bool = True,
    **plan_options,
) -> list[tuple[str, ParallelPlan | None]]:
    """(what, the best plan with it) for each alternative that fits on work.gpus GPUs (LoRA and
    QLoRA at FINETUNE_GLOBAL_BATCH), and the fewest GPUs that fit as asked (`more GPUs`)."""
    work = as_workload(work)
    if work.gpus is None:
        raise SizingError("would_fit needs the GPUs asked about: Workload(..., gpus=N)")
    base = base or ParallelLayout()
    global_batch = work.global_batch or default_global_batch(work.seq_len)
    out = []
    for label, layout_changes, work_changes in ALTERNATIVES:
        # a fine-tuning hint at a fine-tuning batch (one the GPU count divides), never above the one asked for
        finetune = "finetune" in work_changes
        batch = min(global_batch, max(FINETUNE_GLOBAL_BATCH, work.gpus)) if finetune else global_batch
        asked = work.with_(global_batch=batch, **work_changes)
        result = search_layout(cfg, asked, base=replace(base, **layout_changes), **plan_options)
        if result.best is not None:
            out.append((label, result.best))
    if more_gpus:
        result = search_layout(cfg, work.with_(gpus=None), base=base, **plan_options)
        if result.best is not None and result.best.layout.world > work.gpus:
            out.append((f"{result.best.layout.world} GPUs", result.best))
    return out
