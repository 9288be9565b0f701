"""Will it fit for training: memory per GPU against one GPU, the largest micro-batch that fits,
and, when nothing does, what would (the would-fit advice); inference is inference_fit.py.

Training memory per GPU = model states (sharded by ZeRO) + activations saved for backward
(per micro-batch) + a transient working set. Inference memory = weights in a dtype + KV
cache. Not counted anywhere: the CUDA context and kernels (~0.3-1 GiB), allocator
fragmentation, communication buffers, quantisation scales of 8/4-bit weights. The headroom
is what is left for those.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig, default_gpu_for, format_gib, get_gpu
from sizing.memory.activations import (
    activation_terms,
    activations_bytes,
    korthikanti_activations_bytes_per_layer,
    sum_terms,
    transient_bytes,
)
from sizing.memory.fp8 import fp8_weight_copies_bytes
from sizing.memory.inference_fit import inference_memory
from sizing.memory.results import MemorySummary, TrainingMemory
from sizing.memory.runtime import RuntimeReserve, default_runtime_reserve
from sizing.memory.search import bigger_gpus, largest_fitting, min_ranks, resolve_model_arg
from sizing.memory.states import (
    ZERO_STAGES,
    get_optimizer,
    get_precision,
    gradients_bytes,
    model_states_per_gpu,
    optimizer_bytes,
    weights_bytes,
    zero3_gathered_bytes,
)
from sizing.validate import require_choice, require_int
from sizing.vocabulary import (
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    DEFAULT_ATTENTION_IMPL,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    DEFAULT_RECOMPUTE,
    RECOMPUTE_MODES,
)

PerGpu = Callable[..., dict]  # per_gpu(micro_batch, zero, dp, recompute) -> bytes by kind


# ---------------------------------------------------------------- training
def _per_gpu_training(
    cfg: ModelConfig,
    n_params: int,
    saved: Callable[[int, str, str], tuple[int, int]],
    micro_batch: int,
    precision: str,
    optimizer: str,
    zero: int,
    dp: int,
    recompute: str,
) -> dict[str, int]:
    """Bytes per GPU by kind; `saved(b, recompute, precision)` gives (activations, transient)."""
    out = model_states_per_gpu(n_params, precision, optimizer, zero, dp)
    out["fp8_weight_copies_bytes"] = gemm_fp8_copies_bytes(cfg, precision) if zero < 3 else 0
    out["zero3_gathered_bytes"] = zero3_gathered_bytes(cfg, precision, dp) if zero == 3 else 0
    out["activations_bytes"], out["transient_bytes"] = saved(micro_batch, recompute, precision)
    out["total_bytes"] = sum(out.values())
    return out


# The parameter components fp8 GEMMs run on: the blocks' linear layers (sizing.formulas.params keys).
GEMM_COMPONENTS = ("attn.q", "attn.q_a", "attn.q_b", "attn.k", "attn.v", "attn.kv_a", "attn.kv_b", "attn.o")
GEMM_COMPONENTS += ("mlp.up", "mlp.gate", "mlp.down", "moe.experts", "moe.shared")


def gemm_fp8_copies_bytes(cfg: ModelConfig, precision: str) -> int:
    """Under the fp8 policy, the fp8 copies Transformer Engine keeps of the blocks' linear weights
    (sizing.memory.fp8, per-tensor scaling: data + transpose); 0 otherwise. Under ZeRO-3 TE caches
    none (no count)."""
    if get_precision(precision).key != "fp8":
        return 0
    n = sum(c.count for c in P.param_components(cfg) if c.key in GEMM_COMPONENTS)
    return fp8_weight_copies_bytes(n)


def _saved_bytes(cfg: ModelConfig, seq_len: int, attention_impl: str) -> Callable[[int, str, str], tuple[int, int]]:
    """(activations, transient) of a micro-batch, memoised: the fit searches ask for the same
    micro-batch under many dp and ZeRO settings, which do not change them."""

    @functools.cache
    def saved(micro_batch: int, recompute: str, precision: str) -> tuple[int, int]:
        a = get_precision(precision).activation_bytes
        return (
            activations_bytes(cfg, seq_len, micro_batch, attention_impl, recompute, a),
            transient_bytes(cfg, seq_len, micro_batch, attention_impl, recompute, a),
        )

    return saved


def training_memory(
    model: ModelConfig | str,
    seq_len: int | None = None,
    micro_batch: int = 1,
    precision: str = DEFAULT_PRECISION,
    optimizer: str = DEFAULT_OPTIMIZER,
    zero: int = 0,
    dp: int = 1,
    recompute: str = DEFAULT_RECOMPUTE,
    attention_impl: str = DEFAULT_ATTENTION_IMPL,
    gpu: str | None = None,
    name: str | None = None,
    runtime_reserve: RuntimeReserve | None = None,
) -> TrainingMemory:
    """Training memory per GPU and the largest micro-batch that fits `gpu`. When micro-batch 1
    does not fit, `fits` is False, `max_micro_batch` None, and `would_fit` says what would
    (ZeRO-3 over at least N GPUs, full recomputation, a larger GPU). runtime_reserve
    (sizing.memory.runtime; None: the tensors alone) is taken off the GPU before they fit."""
    gpu = gpu if gpu is not None else default_gpu_for(model if isinstance(model, str) else None)
    cfg, name, seq_len = resolve_model_arg(model, name, seq_len)
    impl = _checked_training_args(precision, optimizer, zero, seq_len, micro_batch, dp, attention_impl, recompute)
    gpu_entry = get_gpu(gpu)
    capacity = gpu_entry.memory_bytes - (runtime_reserve.total_bytes if runtime_reserve is not None else 0)
    per_gpu = _per_gpu_function(cfg, seq_len, impl, precision, optimizer, zero, dp, recompute)
    pg = per_gpu(micro_batch)
    max_b = largest_fitting(lambda b: per_gpu(b)["total_bytes"], capacity)
    fits = pg["total_bytes"] <= capacity
    reason, would = None, []
    if not fits:
        settings = (precision, optimizer, zero, dp, recompute)
        reason, would = _not_fit_advice(per_gpu, pg, micro_batch, max_b, capacity, gpu_entry, *settings)
    return TrainingMemory(
        model=name,
        config=cfg,
        seq_len=seq_len,
        micro_batch=micro_batch,
        precision=precision,
        optimizer=optimizer,
        zero=zero,
        dp=dp,
        recompute=recompute,
        attention_impl=impl,
        gpu=gpu_entry.key,
        activations_bytes=pg["activations_bytes"],
        transient_bytes=pg["transient_bytes"],
        per_gpu=pg,
        gpu_memory_bytes=gpu_entry.memory_bytes,
        max_micro_batch=max_b,
        fits=fits,
        reason=reason,
        would_fit=tuple(would),
        runtime_reserve=runtime_reserve,
        **_formula_fields(cfg, seq_len, micro_batch, precision, optimizer, impl, recompute),
    )


def _checked_training_args(
    precision: str,
    optimizer: str,
    zero: int,
    seq_len: int,
    micro_batch: int,
    dp: int,
    attention_impl: str,
    recompute: str,
) -> str:
    """The training settings checked (a SizingError names the first bad one); the canonical
    attention implementation (sdpa -> flash)."""
    get_precision(precision)
    get_optimizer(optimizer)
    require_choice("zero", zero, ZERO_STAGES)
    for what, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("dp", dp)):
        require_int(what, value)
    impl = require_choice("attention_impl", attention_impl, ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)
    require_choice("recompute", recompute, RECOMPUTE_MODES)
    return impl


def _per_gpu_function(
    cfg: ModelConfig, seq_len: int, impl: str, precision: str, optimizer: str, zero: int, dp: int, recompute: str
) -> PerGpu:
    """per_gpu(b, zero, dp, recompute, precision, optimizer): bytes per GPU by kind, each setting
    this run's unless given; the fit search and the advice ask it about other settings."""
    n_params, saved = P.total_params(cfg), _saved_bytes(cfg, seq_len, impl)

    def per_gpu(
        b: int,
        zero_: int = zero,
        dp_: int = dp,
        recompute_: str = recompute,
        precision_: str = precision,
        optimizer_: str = optimizer,
    ) -> dict[str, int]:
        return _per_gpu_training(cfg, n_params, saved, b, precision_, optimizer_, zero_, dp_, recompute_)

    return per_gpu


def _not_fit_advice(
    per_gpu: PerGpu,
    pg: dict[str, int],
    micro_batch: int,
    max_b: int | None,
    capacity: int,
    gpu_entry: GPU,
    precision: str,
    optimizer: str,
    zero: int,
    dp: int,
    recompute: str,
) -> tuple[str, list[str]]:
    """(reason, would-fit): the layout advice, with lighter model states ahead of the bigger GPUs."""
    reason, would = _training_advice(per_gpu, pg, micro_batch, max_b, capacity, gpu_entry, zero, dp, recompute)
    lighter = _lighter_states_advice(per_gpu, capacity, precision, optimizer, zero, dp, recompute)
    if lighter:  # before the bigger GPUs; "nothing in this tool's range" no longer holds
        bigger = [w for w in would if w.startswith("a GPU with")]
        rest = [w for w in would if not w.startswith(("a GPU with", "nothing in this tool's range"))]
        would = rest + lighter + bigger
    return reason, would


def _formula_fields(
    cfg: ModelConfig, seq_len: int, micro_batch: int, precision: str, optimizer: str, impl: str, recompute: str
) -> dict:
    """The breakdown the report shows beside the per-GPU totals: whole-model states by kind, the
    activation terms (per layer and outside the layers) and Korthikanti et al.'s per-layer figure."""
    n = P.total_params(cfg)
    a = get_precision(precision).activation_bytes
    terms = tuple(activation_terms(cfg, seq_len, micro_batch, impl, recompute, a))
    per_layer, outside = sum_terms(list(terms))
    return dict(
        params=n,
        weights_bytes=weights_bytes(n, precision),
        gradients_bytes=gradients_bytes(n, precision),
        optimizer_bytes=optimizer_bytes(n, precision, optimizer),
        activations_per_layer_bytes=per_layer,
        activations_outside_bytes=outside,
        terms=terms,
        korthikanti_per_layer_bytes=korthikanti_activations_bytes_per_layer(cfg, seq_len, micro_batch, recompute),
    )


def _training_advice(
    per_gpu: PerGpu,
    pg: dict[str, int],
    micro_batch: int,
    max_b: int | None,
    capacity: int,
    gpu_entry: GPU,
    zero: int,
    dp: int,
    recompute: str,
) -> tuple[str, list[str]]:
    """Why this training setting does not fit and what would: (reason, would-fit suggestions)."""
    gib = format_gib
    states = pg["weights_bytes"] + pg["fp8_weight_copies_bytes"] + pg["gradients_bytes"] + pg["optimizer_bytes"]
    states += pg["zero3_gathered_bytes"]
    if max_b is not None:  # a smaller micro-batch fits
        reason = (
            f"micro-batch {micro_batch} needs {gib(pg['total_bytes'])} per GPU, more than the "
            f"{gib(capacity)} of {gpu_entry.key}"
        )
        return reason, [f"micro-batch {max_b} or less (gradient accumulation for the rest)"]
    one = per_gpu(1)
    if states > capacity:
        gathered = f" + gathered unit {gib(pg['zero3_gathered_bytes'])}" if pg["zero3_gathered_bytes"] else ""
        reason = (
            f"model states alone (weights {gib(pg['weights_bytes'])} + gradients {gib(pg['gradients_bytes'])} + "
            f"optimizer {gib(pg['optimizer_bytes'])}{gathered}) need {gib(states)} per GPU, more than the "
            f"{gib(capacity)} of {gpu_entry.key}"
        )
    else:
        reason = (
            f"micro-batch 1 needs {gib(one['total_bytes'])} per GPU (model states {gib(states)}, activations "
            f"{gib(one['activations_bytes'])}, transient {gib(one['transient_bytes'])}), more than the "
            f"{gib(capacity)} of {gpu_entry.key}"
        )
    would = []
    ranks = min_ranks(lambda r: per_gpu(1, 3, r, recompute)["total_bytes"], capacity)
    if ranks is not None:
        would.append(f"ZeRO-3 over at least {ranks} GPUs (micro-batch 1)")
    if recompute != "full":
        if per_gpu(1, zero, dp, "full")["total_bytes"] <= capacity:
            would.append(f"recompute full (micro-batch 1, ZeRO {zero}, dp {dp})")
        else:
            ranks_full = min_ranks(lambda r: per_gpu(1, 3, r, "full")["total_bytes"], capacity)
            if ranks_full is not None and (ranks is None or ranks_full < ranks):
                would.append(f"recompute full and ZeRO-3 over at least {ranks_full} GPUs (micro-batch 1)")
    need = one["total_bytes"]
    bigger = bigger_gpus(need)
    if bigger:
        would.append(f"a GPU with at least {gib(need)}: " + ", ".join(g.key for g in bigger))
    if not would:
        would.append("nothing in this tool's range: shard activations too (tensor/sequence/pipeline parallelism)")
    return reason, would


# Lighter model states that already exist as options: (what, precision, optimizer); None keeps the given one.
LIGHTER_STATES: tuple[tuple[str, str | None, str | None], ...] = (
    ("pure bf16 (--precision bf16: no fp32 master copy, 8 B/param with AdamW)", "bf16", None),
    ("8-bit Adam (--optimizer adam8bit)", None, "adam8bit"),
    ("pure bf16 and 8-bit Adam (--precision bf16 --optimizer adam8bit: 6 B/param)", "bf16", "adam8bit"),
)


def _lighter_states_advice(
    per_gpu: PerGpu, capacity: int, precision: str, optimizer: str, zero: int, dp: int, recompute: str
) -> list[str]:
    """Pure bf16 and/or 8-bit Adam at this ZeRO stage and dp (or with full recomputation, or
    ZeRO-3 over the fewest GPUs), where they change anything and fit."""
    out = []
    for what, prec, opt in LIGHTER_STATES:
        prec, opt = prec or precision, opt or optimizer
        if (prec, opt) == (precision, optimizer):
            continue
        for mode in dict.fromkeys((recompute, "full")):
            if per_gpu(1, zero, dp, mode, prec, opt)["total_bytes"] <= capacity:
                out.append(f"{what}, micro-batch 1, ZeRO {zero}, dp {dp}, recompute {mode}")
                break
        else:
            ranks = min_ranks(lambda r, p=prec, o=opt: per_gpu(1, 3, r, "full", p, o)["total_bytes"], capacity)
            if ranks is not None and ranks < max(dp, 2) * 2:
                out.append(f"{what} and ZeRO-3 over at least {ranks} GPUs (recompute full)")
    return out


# ---------------------------------------------------------------- sizing estimate
def summary_for_estimate(
    cfg: ModelConfig, seq_len: int, gpu_key: str, micro_batch: int = 1, name: str | None = None
) -> MemorySummary:
    """The memory block of `sizing estimate`: bf16-mixed AdamW training at micro-batch 1 (by
    default), no ZeRO, no recompute, flash attention; bf16 inference with a KV cache of
    seq_len, batch 1. Both fit against the GPU less the runtime reserve of one process on one
    GPU (the CUDA context, sizing.memory.runtime), as `sizing memory` does."""
    reserve = default_runtime_reserve(0)
    return MemorySummary(
        training=training_memory(
            cfg,
            seq_len,
            micro_batch,
            DEFAULT_PRECISION,
            DEFAULT_OPTIMIZER,
            0,
            1,
            DEFAULT_RECOMPUTE,
            DEFAULT_ATTENTION_IMPL,
            gpu_key,
            name=name,
            runtime_reserve=reserve,
        ),
        inference=inference_memory(cfg, seq_len, 1, "bf16", "bf16", gpu_key, name=name, runtime_reserve=reserve),
    )
