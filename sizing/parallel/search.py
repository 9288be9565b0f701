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
candidate that fits is the fastest that fits. In constant-efficiency or whole-run MFU mode the
candidates go in order of a lower bound of their step (sizing.parallel.search_bounds), each
timed without its memory, which is checked only for one that can beat the best so far. GPU
counts below what the model states alone need are never tried, and memory is checked stage by
stage, cached across searches (search_bounds). `first_fit` asks only whether some layout fits
(the UI's fits-on list): the most sharded layouts first, the first that fits returned.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product

from sizing.inputs import ModelConfig, Workload, as_config, as_workload, get_gpu
from sizing.parallel.batches import FINETUNE_GLOBAL_BATCH, default_global_batch
from sizing.parallel.layout import GPUS_PER_NODE, ParallelLayout
from sizing.parallel.plan import ParallelPlan, constant_step, parallel_plan, plan_workload
from sizing.parallel.schedule import stage_split
from sizing.parallel.search_bounds import ConstantStep, MemoryCheck, fewest_gpus
from sizing.parallel.stepdata import has_constants
from sizing.parallel.stepdata import stack as stack_entry
from sizing.parallel.steptime import StepOptions, predict_step
from sizing.validate import SizingError, require_bool, require_int, show
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
    gpus: tuple[int, ...]  # GPU counts searched (those below fewest_gpus are ruled out without a try)


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
    first_fit: bool = False,
    **plan_options,
) -> SearchResult:
    """The best fitting plan for `work` on exactly work.gpus GPUs, or on the fewest GPUs up to
    `max_gpus` when work.gpus is None; at work.global_batch sequences per step (None: the default
    of sizing.parallel.batches), trying every recompute mode when work.recompute is None. `cfg`
    may also be a Preset or a preset name; plan_options are parallel_plan's (gpu, mfu, ...).
    `first_fit`: any plan that fits, not the fastest (whether one fits is all the UI's fits-on
    list asks of every GPU). Questions ask sizing.parallel.predict_run, which also tries the
    batch rounded to the GPUs."""
    cfg = as_config(cfg)
    work = as_workload(work)
    cfg.check_context(work.seq_len, "seq_len")
    if base is not None and not isinstance(base, ParallelLayout):
        raise SizingError(f"base ({show(base)}) must be a ParallelLayout")
    require_int("max_gpus", max_gpus, 1, MAX_SEARCH_GPUS)
    require_bool("first_fit", first_fit)
    base = stack_base(base or ParallelLayout(), work, plan_options.get("step_options"))
    gpu = get_gpu(plan_options.get("gpu", "h100"))
    global_batch = work.global_batch or default_global_batch(work.seq_len)
    modes = RECOMPUTE_MODES if work.recompute is None else (work.recompute,)
    counts = (work.gpus,) if work.gpus is not None else tuple(_powers_of_two(max_gpus))
    stored = plan_workload(work, plan_options.get("step_options"))  # memory as the plan counts it
    memory = MemoryCheck(cfg, stored, gpu.memory_bytes, modes)
    at_least = fewest_gpus(cfg, base, gpu, stored) if work.gpus is None else 1
    constant = plan_options.get("mfu") is not None or plan_options.get("compute_efficiency") is not None
    fastest = _fastest_fitting if not constant and has_constants(gpu.key) else _best_constant
    fastest = _first_fitting if first_fit else fastest
    tried = 0
    for world in counts:
        if world < at_least:
            continue  # the model states alone need more GPUs
        layouts = [
            layout
            for layout in candidate_layouts(cfg, work.seq_len, world, global_batch, work.attention_impl, base)
            if _fits_model(layout, cfg, work)
        ]
        tried += len(layouts)
        best = fastest(cfg, layouts, work.with_(gpus=world, global_batch=global_batch), modes, memory, plan_options)
        if best is not None:
            return SearchResult(best, tried, counts[: counts.index(world) + 1])
    return SearchResult(None, tried, counts)


def _fits_model(layout: ParallelLayout, cfg: ModelConfig, work: Workload) -> bool:
    try:
        layout.check_model(cfg, work.seq_len, work.attention_impl)
    except SizingError:
        return False
    return True


def _fastest_fitting(cfg: ModelConfig, layouts: list, work: Workload, modes, memory: MemoryCheck, plan_options: dict):
    """The plan of the fastest (layout, recompute) by predicted step time that fits in memory:
    every step predicted first (memoised per block shape), memory checked in that order."""
    gpu = get_gpu(plan_options.get("gpu", "h100"))
    options = plan_options.get("step_options") or StepOptions()
    timed = []
    for i, layout in enumerate(layouts):
        for mode in modes:
            # under flash attention selective recomputation costs nothing (its backward recomputes
            # the scores anyway): time it as none, ordered just after it
            same = mode == "selective" and options.attention_kernel == "flash"
            seconds = predict_step(cfg, layout, work.seq_len, gpu.key, "none" if same else mode, options).step_seconds
            timed.append((seconds, same, i, mode))
    for _, _, i, mode in sorted(timed):
        if memory.fits(layouts[i], mode):
            return parallel_plan(cfg, layouts[i], work.with_(recompute=mode), **plan_options)
    return None


def _first_fitting(cfg: ModelConfig, layouts: list, work: Workload, modes, memory: MemoryCheck, plan_options: dict):
    """A plan that fits, found quickly: the most sharded layouts and the most recomputation first
    (the fewest bytes per GPU), so one check usually answers; memory is shared between GPUs."""
    order = sorted(range(len(layouts)), key=lambda i: (-_model_parallel(layouts[i]), layouts[i].fsdp is None, i))
    for i in order:
        for mode in sorted(modes, key=lambda m: (m != "full", m != "selective")):
            if memory.fits(layouts[i], mode):
                return parallel_plan(cfg, layouts[i], work.with_(recompute=mode), **plan_options)
    return None


def _model_parallel(layout: ParallelLayout) -> int:
    return layout.tp * layout.pp * layout.cp * layout.ep * layout.etp


def _best_constant(cfg: ModelConfig, layouts: list, work: Workload, modes, memory: MemoryCheck, plan_options: dict):
    """The fitting plan of the shortest step, then the fewest bytes, under a constant efficiency
    (or a whole-run MFU). Candidates go in order of a lower bound of their step (search_bounds);
    each is timed (constant_step: no memory needed), its memory checked only when it can beat
    the best so far, and the search stops when the bound passes the best step."""
    gpu = get_gpu(plan_options.get("gpu", "h100"))
    step = ConstantStep.of(cfg, work, gpu, plan_options)
    if step.exact and "full" in modes:  # every mode's step is the same: full recomputation holds the fewest bytes
        modes = ("full",)
    bounded = sorted((step.lower_bound(layout, mode), i, mode) for i, layout in enumerate(layouts) for mode in modes)
    best, best_key = None, None
    for bound, i, mode in bounded:
        if best_key is not None and bound > best_key[0]:
            break  # no later candidate can be faster
        seconds = (
            bound if step.exact else _constant_seconds(cfg, layouts[i], work.with_(recompute=mode), gpu, plan_options)
        )
        if best_key is not None and seconds > best_key[0]:
            continue
        if memory.fits(layouts[i], mode):
            key = (seconds, memory.bytes(layouts[i], mode))
            if best_key is None or key < best_key:
                best, best_key = (i, mode), key
    if best is None:
        return None
    return parallel_plan(cfg, layouts[best[0]], work.with_(recompute=best[1]), **plan_options)


def _constant_seconds(cfg: ModelConfig, layout: ParallelLayout, work: Workload, gpu, options: dict) -> float:
    """The step parallel_plan would give `layout` in constant-efficiency mode, without its memory."""
    stored = plan_workload(work, options.get("step_options"))
    rates = {key: options.get(key) for key in ("mfu", "compute_efficiency", "nvlink_gbs", "network_gbs")}
    _, st = constant_step(cfg, layout, stored, gpu, options.get("overlap"), options.get("fused", True), **rates)
    return st.step_seconds


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
