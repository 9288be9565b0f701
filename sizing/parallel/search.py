"""The smallest layout that fits: fewest GPUs first, then the shortest step (which holds the
communication that is not hidden, the pipeline bubble and the recomputation, so a layout that
saves bytes on the wire by recomputing everything does not win for free).

Candidates per GPU count N (a power of two, or the count asked for): tp a power of two up to
the node (8) dividing the heads and kv heads, with sequence parallelism; pp dividing L (1F1B,
m = global batch / (dp b) micro-batches, at least pp); cp a power of two up to 8 dividing T
(flash attention only); dp = N / (tp pp cp) dividing the global batch; ZeRO-1, or FSDP
(ZeRO-3 per parameter); for MoE, ep the largest power of two dividing E and dp x cp;
recomputation none, selective or full unless one is asked for; micro-batch 1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..config import ModelConfig
from ..hardware import get_gpu
from ..memory.runtime import layout_runtime_reserve
from ..validate import SizingError, require_int
from ..vocabulary import RECOMPUTE_MODES
from .batches import FINETUNE_GLOBAL_BATCH
from .layout import GPUS_PER_NODE, ParallelLayout
from .memory import Workload, most_loaded
from .plan import ParallelPlan, parallel_plan

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
        stages = range(1, min(cfg.n_layers, world // tp) + 1)  # pp <= world / tp: never a loop over L
        for pp in (p for p in stages if cfg.n_layers % p == 0 and world % (tp * p) == 0):
            for cp in _powers_of_two(8 if attention_impl == "flash" else 1):
                if world % (tp * pp * cp) or seq_len % (cp * tp):
                    continue
                dp = world // (tp * pp * cp)
                if global_batch % dp:
                    continue
                m = global_batch // dp
                if pp > 1 and m < pp:
                    continue
                ep = _largest_power_of_two_dividing(cfg.n_experts, dp * cp) if cfg.is_moe else 1
                for fsdp in (None, "full") if dp * cp > 1 else (None,):
                    out.append(
                        replace(
                            base,
                            dp=dp,
                            tp=tp,
                            pp=pp,
                            cp=cp,
                            ep=ep,
                            zero=1 if dp * cp > 1 and fsdp is None else 0,
                            fsdp=fsdp,
                            sequence_parallel=tp > 1,
                            micro_batches=m,
                            micro_batch=1,
                        )
                    )
    return out


@dataclass(frozen=True)
class SearchResult:
    best: ParallelPlan | None
    tried: int
    gpus: tuple[int, ...]  # GPU counts searched


def search_layout(
    cfg: ModelConfig,
    seq_len: int,
    global_batch: int,
    gpus: int | None = None,
    max_gpus: int = MAX_SEARCH_GPUS,
    recompute: str | None = None,
    base: ParallelLayout | None = None,
    **plan_options,
) -> SearchResult:
    """The best fitting plan on exactly `gpus` GPUs, or on the fewest GPUs up to `max_gpus`."""
    require_int("global_batch", global_batch)
    if gpus is not None:
        require_int("gpus", gpus)
    require_int("max_gpus", max_gpus, 1, MAX_SEARCH_GPUS)
    base = base or ParallelLayout()
    impl = plan_options.get("attention_impl", "flash")
    modes = RECOMPUTE_MODES if recompute is None else (recompute,)
    counts = (gpus,) if gpus is not None else tuple(_powers_of_two(max_gpus))
    tried = 0
    for world in counts:
        fitting = []
        for layout in candidate_layouts(cfg, seq_len, world, global_batch, impl, base):
            tried += 1
            fitting += _fitting_plans(cfg, layout, seq_len, modes, plan_options)
        if fitting:
            best = min(fitting, key=lambda p: (p.step.step_seconds, p.per_gpu_bytes))
            return SearchResult(best, tried, counts[: counts.index(world) + 1])
    return SearchResult(None, tried, counts)


def _fitting_plans(cfg: ModelConfig, layout: ParallelLayout, seq_len: int, modes, plan_options: dict) -> list:
    """The plans of `layout` that fit, one per recompute mode. Memory first (cheap), the plan
    (collectives, step) only for what fits; full recomputation saves the most, so when it does
    not fit no mode does."""
    gpu = get_gpu(plan_options.get("gpu", "h100"))
    work = dict(precision=plan_options.get("precision", "bf16-mixed"), optimizer=plan_options.get("optimizer", "adamw"))
    impl = plan_options.get("attention_impl", "flash")
    try:
        layout.check_model(cfg, seq_len, impl)
    except SizingError:
        return []
    ordered = sorted(modes, key=lambda m: m != "full")
    out = []
    for mode in ordered:
        _, terms = most_loaded(cfg, layout, Workload(seq_len, recompute=mode, attention_impl=impl, **work))
        reserve = layout_runtime_reserve(layout.dp, layout.tp, layout.pp, layout.cp, layout.ep).total_bytes
        if terms["total_bytes"] + reserve > gpu.memory_bytes:
            if mode == "full":
                return []
            continue
        out.append(parallel_plan(cfg, layout, seq_len, recompute=mode, **plan_options))
    return out


# What else could fit on the same GPUs, each a (label, layout changes, plan option changes).
ALTERNATIVES: tuple[tuple[str, dict, dict], ...] = (
    ("optimizer states offloaded to CPU", {"offload_optimizer": True}, {}),
    ("pure bf16 (no fp32 master copy)", {}, {"precision": "bf16"}),
    ("8-bit Adam", {}, {"optimizer": "adam8bit"}),
    ("pure bf16 and 8-bit Adam", {}, {"precision": "bf16", "optimizer": "adam8bit"}),
    ("LoRA (r 16, all linears)", {"finetune": "lora"}, {}),
    ("QLoRA (NF4 base, r 16, all linears)", {"finetune": "qlora"}, {}),
)


def would_fit(
    cfg: ModelConfig,
    seq_len: int,
    global_batch: int,
    gpus: int,
    recompute: str | None = None,
    base: ParallelLayout | None = None,
    more_gpus: bool = True,
    **plan_options,
) -> list[tuple[str, ParallelPlan | None]]:
    """(what, the best plan with it) for each alternative that fits on `gpus` GPUs (LoRA and
    QLoRA at FINETUNE_GLOBAL_BATCH), and the fewest GPUs that fit as asked (`more GPUs`)."""
    base = base or ParallelLayout()
    out = []
    for label, layout_changes, option_changes in ALTERNATIVES:
        options = {**plan_options, **option_changes}
        # a fine-tuning hint at a fine-tuning batch (one the GPU count divides), never above the one asked for
        finetune = "finetune" in layout_changes
        batch = min(global_batch, max(FINETUNE_GLOBAL_BATCH, gpus)) if finetune else global_batch
        result = search_layout(
            cfg, seq_len, batch, gpus, recompute=recompute, base=replace(base, **layout_changes), **options
        )
        if result.best is not None:
            out.append((label, result.best))
    if more_gpus:
        result = search_layout(cfg, seq_len, global_batch, None, recompute=recompute, base=base, **plan_options)
        if result.best is not None and result.best.layout.world > gpus:
            out.append((f"{result.best.layout.world} GPUs", result.best))
    return out
