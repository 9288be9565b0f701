"""Will it fit: training and inference memory against one GPU, the largest micro-batch, batch
or context that fits, and, when nothing does, what would (the would-fit advice).

Training memory per GPU = model states (sharded by ZeRO) + activations saved for backward
(per micro-batch) + a transient working set. Inference memory = weights in a dtype + KV
cache. Not counted anywhere: the CUDA context and kernels (~0.3-1 GiB), allocator
fragmentation, communication buffers, quantisation scales of 8/4-bit weights. The headroom
is what is left for those.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import params as P
from ..config import ModelConfig
from ..hardware import GPU, GPUS, get_gpu
from ..presets import get_preset
from ..units import format_gib
from ..validate import SizingError, require_choice, require_int, show
from ..vocabulary import (
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    DEFAULT_ATTENTION_IMPL,
    DEFAULT_GPU,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    DEFAULT_RECOMPUTE,
    DTYPE_BITS,
    RECOMPUTE_MODES,
    ceil_div,
)
from .activations import (
    activation_terms,
    activations_bytes,
    korthikanti_activations_bytes_per_layer,
    sum_terms,
    transient_bytes,
)
from .kv import cached_positions, dtype_bytes, inference_weights_bytes, kv_cache_bytes, naive_kv_cache_bytes
from .prefill import inference_prefill_peak_bytes, prefill_activation_peak_bytes
from .results import InferenceMemory, MemorySummary, TrainingMemory
from .states import (
    ZERO_STAGES,
    get_optimizer,
    get_precision,
    gradients_bytes,
    model_states_per_gpu,
    optimizer_bytes,
    weights_bytes,
    zero3_gathered_bytes,
)

PerGpu = Callable[..., dict]  # per_gpu(micro_batch, zero, dp, recompute) -> bytes by kind


# ---------------------------------------------------------------- searches
def _largest_fitting(total_for: Callable[[int], int], capacity: int, limit: int = 1 << 40) -> int | None:
    """Largest n >= 1 with total_for(n) <= capacity (total_for increasing), None if n = 1 fails."""
    if total_for(1) > capacity:
        return None
    lo, hi = 1, 2
    while hi < limit and total_for(hi) <= capacity:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if total_for(mid) <= capacity else (lo, mid)
    return lo


def _min_ranks(total_for_ranks: Callable[[int], int], capacity: int, limit: int = 1 << 20) -> int | None:
    """Smallest dp (ZeRO-3) with total_for_ranks(dp) <= capacity, None if none up to `limit`.
    From dp 2 on the per-GPU total only falls (the gathered unit is constant), so bisect there."""
    if total_for_ranks(1) <= capacity:
        return 1
    if total_for_ranks(limit) > capacity:
        return None
    lo, hi = 1, limit  # hi fits, lo does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if total_for_ranks(mid) <= capacity else (mid, hi)
    return hi


def _bigger_gpus(need_bytes: int) -> list[GPU]:
    """The three smallest GPUs with at least `need_bytes`."""
    return sorted((g for g in GPUS.values() if g.memory_bytes >= need_bytes), key=lambda g: g.memory_bytes)[:3]


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
    out["zero3_gathered_bytes"] = zero3_gathered_bytes(cfg, precision, dp) if zero == 3 else 0
    out["activations_bytes"], out["transient_bytes"] = saved(micro_batch, recompute, precision)
    out["total_bytes"] = sum(out.values())
    return out


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
    gpu: str = DEFAULT_GPU,
    name: str | None = None,
) -> TrainingMemory:
    """Training memory per GPU and the largest micro-batch that fits `gpu`. When micro-batch 1
    does not fit, `fits` is False, `max_micro_batch` None, and `would_fit` says what would
    (ZeRO-3 over at least N GPUs, full recomputation, a larger GPU)."""
    cfg, name, seq_len = _resolve(model, name, seq_len)
    get_precision(precision)
    get_optimizer(optimizer)
    require_choice("zero", zero, ZERO_STAGES)
    for what, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("dp", dp)):
        require_int(what, value)
    impl = require_choice("attention_impl", attention_impl, ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)
    require_choice("recompute", recompute, RECOMPUTE_MODES)
    gpu_entry = get_gpu(gpu)
    capacity = gpu_entry.memory_bytes
    a = get_precision(precision).activation_bytes

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

    pg = per_gpu(micro_batch)
    max_b = _largest_fitting(lambda b: per_gpu(b)["total_bytes"], capacity)
    fits = pg["total_bytes"] <= capacity
    reason, would = None, []
    if not fits:
        reason, would = _training_advice(per_gpu, pg, micro_batch, max_b, capacity, gpu_entry, zero, dp, recompute)
        lighter = _lighter_states_advice(per_gpu, capacity, precision, optimizer, zero, dp, recompute)
        if lighter:  # before the bigger GPUs; "nothing in this tool's range" no longer holds
            bigger = [w for w in would if w.startswith("a GPU with")]
            rest = [w for w in would if not w.startswith(("a GPU with", "nothing in this tool's range"))]
            would = rest + lighter + bigger
    n = P.total_params(cfg)
    terms = tuple(activation_terms(cfg, seq_len, micro_batch, impl, recompute, a))
    per_layer, outside = sum_terms(list(terms))
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
        params=n,
        weights_bytes=weights_bytes(n, precision),
        gradients_bytes=gradients_bytes(n, precision),
        optimizer_bytes=optimizer_bytes(n, precision, optimizer),
        activations_bytes=pg["activations_bytes"],
        activations_per_layer_bytes=per_layer,
        activations_outside_bytes=outside,
        transient_bytes=pg["transient_bytes"],
        per_gpu=pg,
        gpu_memory_bytes=capacity,
        max_micro_batch=max_b,
        fits=fits,
        reason=reason,
        would_fit=tuple(would),
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
    states = pg["weights_bytes"] + pg["gradients_bytes"] + pg["optimizer_bytes"] + pg["zero3_gathered_bytes"]
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
    ranks = _min_ranks(lambda r: per_gpu(1, 3, r, recompute)["total_bytes"], capacity)
    if ranks is not None:
        would.append(f"ZeRO-3 over at least {ranks} GPUs (micro-batch 1)")
    if recompute != "full":
        if per_gpu(1, zero, dp, "full")["total_bytes"] <= capacity:
            would.append(f"recompute full (micro-batch 1, ZeRO {zero}, dp {dp})")
        else:
            ranks_full = _min_ranks(lambda r: per_gpu(1, 3, r, "full")["total_bytes"], capacity)
            if ranks_full is not None and (ranks is None or ranks_full < ranks):
                would.append(f"recompute full and ZeRO-3 over at least {ranks_full} GPUs (micro-batch 1)")
    need = one["total_bytes"]
    bigger = _bigger_gpus(need)
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
            ranks = _min_ranks(lambda r, p=prec, o=opt: per_gpu(1, 3, r, "full", p, o)["total_bytes"], capacity)
            if ranks is not None and ranks < max(dp, 2) * 2:
                out.append(f"{what} and ZeRO-3 over at least {ranks} GPUs (recompute full)")
    return out


# ---------------------------------------------------------------- inference
def inference_memory(
    model: ModelConfig | str,
    context: int | None = None,
    batch: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    gpu: str = DEFAULT_GPU,
    name: str | None = None,
    prefill_chunk: int | None = None,
    activation_dtype: str = "bf16",
) -> InferenceMemory:
    """Weights + KV cache + the prefill activation peak (prefill.py: one sequence's context per
    forward, or `prefill_chunk` tokens), the largest batch at this context and the largest
    context at this batch."""
    cfg, name, context = _resolve(model, name, context, what="context")
    require_choice("weight_dtype", weight_dtype, DTYPE_BITS)
    require_choice("kv_dtype", kv_dtype, DTYPE_BITS)
    require_int("context", context)
    require_int("batch", batch)
    gpu_entry = get_gpu(gpu)
    capacity = gpu_entry.memory_bytes
    w = inference_weights_bytes(cfg, weight_dtype)
    a = dtype_bytes(1, require_choice("activation_dtype", activation_dtype, DTYPE_BITS))

    def kv_and_peak(c: int, bb: int) -> int:
        return kv_cache_bytes(cfg, c, bb, kv_dtype) + inference_prefill_peak_bytes(cfg, c, bb, prefill_chunk, a)

    kv = kv_cache_bytes(cfg, context, batch, kv_dtype)
    peak = kv_and_peak(context, batch) - kv
    max_batch = _largest_fitting(lambda bb: w + kv_and_peak(context, bb), capacity)
    window = cfg.local_window if cfg.n_global_layers == 0 else None  # every layer's cache is capped
    # past the window the cache stops growing; an unchunked prefill's peak does not (a chunk caps it)
    unbounded = (
        window is not None
        and prefill_chunk is not None
        and w + kv_cache_bytes(cfg, window, batch, kv_dtype) + prefill_activation_peak_bytes(cfg, prefill_chunk, 1, a)
        <= capacity
    )
    max_context = None if unbounded else _largest_fitting(lambda c: w + kv_and_peak(c, batch), capacity)
    limited_by = "window" if unbounded else "memory" if max_context else None
    if cfg.position == "learned" and (unbounded or (max_context or 0) > cfg.max_positions):
        # a learned position table has no row beyond max_positions
        max_context, unbounded, limited_by = cfg.max_positions, False, "max_positions"
    fits = w + kv + peak <= capacity
    reason, would = (
        (None, [])
        if fits
        else _inference_advice(cfg, context, batch, weight_dtype, kv_dtype, gpu_entry, max_batch, max_context, peak)
    )
    return InferenceMemory(
        model=name,
        config=cfg,
        context=context,
        batch=batch,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        gpu=gpu_entry.key,
        params=P.total_params(cfg),
        weights_bytes=w,
        kv_cache_bytes=kv,
        kv_cache_bytes_per_sequence=kv_cache_bytes(cfg, context, 1, kv_dtype),
        cached_positions=cached_positions(cfg, context),
        gpu_memory_bytes=capacity,
        max_batch=max_batch,
        max_context=max_context,
        context_unbounded=unbounded,
        max_context_limited_by=limited_by,
        fits=fits,
        reason=reason,
        would_fit=tuple(would),
        prefill_peak_bytes=peak,
        prefill_chunk=prefill_chunk,
        kv_cache_bytes_naive=naive_kv_cache_bytes(cfg, context, batch, kv_dtype) if cfg.is_mla else None,
    )


def _inference_advice(
    cfg: ModelConfig,
    context: int,
    batch: int,
    weight_dtype: str,
    kv_dtype: str,
    gpu_entry: GPU,
    max_batch: int | None,
    max_context: int | None,
    peak: int = 0,
) -> tuple[str, list[str]]:
    """Why weights + KV cache + prefill peak do not fit and what would: (reason, would-fit suggestions)."""
    gib, capacity = format_gib, gpu_entry.memory_bytes
    w = inference_weights_bytes(cfg, weight_dtype)
    kv = kv_cache_bytes(cfg, context, batch, kv_dtype)
    per_seq = kv_cache_bytes(cfg, context, 1, kv_dtype)
    would = []
    if w > capacity:
        reason = f"the weights alone ({weight_dtype}) need {gib(w)}, more than the {gib(capacity)} of {gpu_entry.key}"
        for dt in ("int8", "int4"):
            if DTYPE_BITS[dt] < DTYPE_BITS[weight_dtype] and inference_weights_bytes(cfg, dt) + per_seq <= capacity:
                would.append(f"{dt} weights (batch 1)")
                break
    else:
        reason = (
            f"weights {gib(w)} + KV cache {gib(kv)} + prefill peak {gib(peak)} = {gib(w + kv + peak)}, "
            f"more than the {gib(capacity)} of {gpu_entry.key}"
        )
        if max_batch:
            would.append(f"batch {max_batch} or less at context {context}")
        if max_context:
            would.append(f"context {max_context} or less at batch {batch}")
        if w + kv <= capacity:
            would.append("a smaller prefill chunk (--prefill-chunk): the prefill peak scales with its tokens")
    bigger = _bigger_gpus(w + kv + peak)
    if bigger:
        would.append(f"a GPU with at least {gib(w + kv + peak)}: " + ", ".join(g.key for g in bigger))
    if w + per_seq > capacity:
        would.append(
            f"weights and KV cache split over at least {ceil_div(w + per_seq, capacity)} "
            f"{gpu_entry.key} GPUs (tensor/pipeline parallelism, batch 1)"
        )
    return reason, would


# ---------------------------------------------------------------- sizing estimate
def summary_for_estimate(
    cfg: ModelConfig, seq_len: int, gpu_key: str, micro_batch: int = 1, name: str | None = None
) -> MemorySummary:
    """The memory block of `sizing estimate`: bf16-mixed AdamW training at micro-batch 1 (by
    default), no ZeRO, no recompute, flash attention; bf16 inference with a KV cache of
    seq_len, batch 1."""
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
        ),
        inference=inference_memory(cfg, seq_len, 1, "bf16", "bf16", gpu_key, name=name),
    )


def _resolve(
    model: ModelConfig | str, name: str | None, length: int | None, what: str = "seq_len"
) -> tuple[ModelConfig, str | None, int]:
    """(config, name, length) of a preset name or a config; a preset supplies its context."""
    if isinstance(model, str):
        preset = get_preset(model)
        model, name = preset.config, name or preset.name
        length = length if length is not None else preset.context
    elif not isinstance(model, ModelConfig):
        raise SizingError(f"model ({show(model)}) must be a preset name or a ModelConfig")
    if length is None:
        raise SizingError(f"{what} must be given for a config that is not a preset")
    return model, name, model.check_context(length, what)
