"""Will it fit for inference: weights in a dtype + KV cache + the prefill activation peak
against one GPU, the largest batch and context that fit, and what would fit when nothing does.
Not counted: the CUDA context and kernels (~0.3-1 GiB), allocator fragmentation, quantisation
scales of 8/4-bit weights; the headroom is what is left for those.
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig, default_gpu_for, format_gib, get_gpu
from sizing.memory.kv import (
    cached_positions,
    dtype_bytes,
    inference_weights_bytes,
    kv_cache_bytes_per_rank,
    kv_heads_per_rank,
    naive_kv_cache_bytes_per_rank,
)
from sizing.memory.prefill import inference_prefill_peak_bytes, prefill_activation_peak_bytes
from sizing.memory.results import InferenceMemory
from sizing.memory.runtime import RuntimeReserve
from sizing.memory.search import bigger_gpus, largest_fitting, resolve_model_arg
from sizing.validate import require_choice, require_int
from sizing.vocabulary import (
    DTYPE_BITS,
    ceil_div,
)

PerGpu = Callable[..., dict]  # per_gpu(micro_batch, zero, dp, recompute) -> bytes by kind


def inference_memory(
    model: ModelConfig | str,
    context: int | None = None,
    batch: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    gpu: str | None = None,
    name: str | None = None,
    prefill_chunk: int | None = None,
    activation_dtype: str = "bf16",
    quant: str | None = None,
    tp: int = 1,
    runtime_reserve: RuntimeReserve | None = None,
) -> InferenceMemory:
    """Weights + KV cache + the prefill activation peak (prefill.py: one sequence's context per
    forward, or `prefill_chunk` tokens), the largest batch at this context and the largest
    context at this batch, on one of `tp` tensor-parallel GPUs: the weights split evenly, the KV
    heads as kv_heads_per_rank says (replicated when tp > h_kv; an MLA latent whole on each).
    `quant` names a deployed format (quant.py) whose bytes replace N x weight_dtype."""
    gpu = gpu if gpu is not None else default_gpu_for(model if isinstance(model, str) else None)
    cfg, name, context = resolve_model_arg(model, name, context, what="context")
    _check_inference_args(cfg, weight_dtype, kv_dtype, context, batch, tp)
    gpu_entry = get_gpu(gpu)
    capacity = gpu_entry.memory_bytes - (runtime_reserve.total_bytes if runtime_reserve is not None else 0)
    w = _weights_per_rank(cfg, quant, weight_dtype, tp)
    a = dtype_bytes(1, require_choice("activation_dtype", activation_dtype, DTYPE_BITS))
    kv_cache, kv_and_peak = _kv_functions(cfg, kv_dtype, tp, prefill_chunk, a)
    kv = kv_cache(context, batch)
    peak = kv_and_peak(context, batch) - kv
    limits = _fit_limits(cfg, w, kv_cache, kv_and_peak, context, batch, prefill_chunk, a, capacity)
    fits = w + kv + peak <= capacity
    reason, would = None, []
    if not fits:
        found = (limits["max_batch"], limits["max_context"], peak, tp, w, capacity)
        reason, would = _inference_advice(cfg, context, batch, weight_dtype, kv_dtype, gpu_entry, *found)
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
        gpu_memory_bytes=gpu_entry.memory_bytes,
        fits=fits,
        reason=reason,
        would_fit=tuple(would),
        prefill_peak_bytes=peak,
        prefill_chunk=prefill_chunk,
        quant=quant,
        weights_note=_quant_note(cfg, quant) if quant is not None else _plain_dtype_note(weight_dtype),
        tp=tp,
        runtime_reserve=runtime_reserve,
        **limits,
        **_kv_detail_fields(cfg, context, batch, kv_dtype, tp),
    )


def _quant_note(cfg: ModelConfig, quant: str) -> str | None:
    """quant.py's note on a format whose name has meant two files (an MoE's K-quant mix)."""
    from sizing.memory.quant import quant_note

    return quant_note(cfg, quant)


def _plain_dtype_note(weight_dtype: str) -> str | None:
    """quant.py's note on a bare int4/int8 weight dtype; quant.py loads only when there is one."""
    if weight_dtype not in ("int4", "int8"):
        return None
    from sizing.memory.quant import plain_dtype_note

    return plain_dtype_note(weight_dtype)


def _weights_per_rank(cfg: ModelConfig, quant: str | None, weight_dtype: str, tp: int) -> int:
    """One of tp ranks' weight bytes: a deployed format's real bytes, else N x weight_dtype."""
    if quant is not None:  # a deployed format (quant.py, loaded only then)
        from sizing.memory.quant import quantized_weights

        whole = quantized_weights(cfg, quant).bytes
    else:
        whole = inference_weights_bytes(cfg, weight_dtype)
    return ceil_div(whole, tp)


def _check_inference_args(
    cfg: ModelConfig, weight_dtype: str, kv_dtype: str, context: int, batch: int, tp: int
) -> None:
    """A SizingError naming the first bad setting."""
    require_choice("weight_dtype", weight_dtype, DTYPE_BITS)
    require_choice("kv_dtype", kv_dtype, DTYPE_BITS)
    require_int("context", context)
    require_int("batch", batch)
    kv_heads_per_rank(cfg, tp)  # tp divides h_kv or is a multiple of it; else a SizingError says which


def _kv_functions(
    cfg: ModelConfig, kv_dtype: str, tp: int, prefill_chunk: int | None, a: int
) -> tuple[Callable[[int, int], int], Callable[[int, int], int]]:
    """kv_cache(context, batch) on one rank, and kv_and_peak(context, batch): that plus the
    prefill activation peak; the fit searches vary context and batch."""

    def kv_cache(c: int, bb: int) -> int:
        return kv_cache_bytes_per_rank(cfg, c, bb, kv_dtype, tp)

    def kv_and_peak(c: int, bb: int) -> int:
        return kv_cache(c, bb) + inference_prefill_peak_bytes(cfg, c, bb, prefill_chunk, a)

    return kv_cache, kv_and_peak


def _fit_limits(
    cfg: ModelConfig,
    w: int,
    kv_cache: Callable[[int, int], int],
    kv_and_peak: Callable[[int, int], int],
    context: int,
    batch: int,
    prefill_chunk: int | None,
    a: int,
    capacity: int,
) -> dict:
    """The largest batch at this context; the largest context at this batch, whether none bounds
    it, and what limits it."""
    max_batch = largest_fitting(lambda bb: w + kv_and_peak(context, bb), capacity)
    window = cfg.local_window if cfg.n_global_layers == 0 else None  # every layer's cache is capped
    # past the window the cache stops growing; an unchunked prefill's peak does not (a chunk caps it)
    unbounded = (
        window is not None
        and prefill_chunk is not None
        and w + kv_cache(window, batch) + prefill_activation_peak_bytes(cfg, prefill_chunk, 1, a) <= capacity
    )
    max_context = None if unbounded else largest_fitting(lambda c: w + kv_and_peak(c, batch), capacity)
    limited_by = "window" if unbounded else "memory" if max_context else None
    if cfg.position == "learned" and (unbounded or (max_context or 0) > cfg.max_positions):
        # a learned position table has no row beyond max_positions
        max_context, unbounded, limited_by = cfg.max_positions, False, "max_positions"
    return dict(
        max_batch=max_batch, max_context=max_context, context_unbounded=unbounded, max_context_limited_by=limited_by
    )


def _kv_detail_fields(cfg: ModelConfig, context: int, batch: int, kv_dtype: str, tp: int) -> dict:
    """One sequence's cache, the positions a sliding window keeps, and (MLA) the per-head K/V
    cache the latent replaces, for the report."""
    return dict(
        kv_cache_bytes_per_sequence=kv_cache_bytes_per_rank(cfg, context, 1, kv_dtype, tp),
        cached_positions=cached_positions(cfg, context),
        kv_cache_bytes_naive=naive_kv_cache_bytes_per_rank(cfg, context, batch, kv_dtype, tp) if cfg.is_mla else None,
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
    tp: int = 1,
    weights: int | None = None,
    capacity: int | None = None,
) -> tuple[str, list[str]]:
    """Why weights + KV cache + prefill peak do not fit on one of tp GPUs and what would:
    (reason, would-fit suggestions). capacity: the GPU less the runtime reserve (default: the
    whole GPU)."""
    gib = format_gib
    capacity = gpu_entry.memory_bytes if capacity is None else capacity
    w = ceil_div(inference_weights_bytes(cfg, weight_dtype), tp) if weights is None else weights
    kv = kv_cache_bytes_per_rank(cfg, context, batch, kv_dtype, tp)
    per_seq = kv_cache_bytes_per_rank(cfg, context, 1, kv_dtype, tp)
    would = []
    if w > capacity:
        reason = f"the weights alone ({weight_dtype}) need {gib(w)}, more than the {gib(capacity)} of {gpu_entry.key}"
        for dt in ("int8", "int4"):
            if (
                DTYPE_BITS[dt] < DTYPE_BITS[weight_dtype]
                and ceil_div(inference_weights_bytes(cfg, dt), tp) + per_seq <= capacity
            ):
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
    bigger = bigger_gpus(w + kv + peak)
    if bigger:
        would.append(f"a GPU with at least {gib(w + kv + peak)}: " + ", ".join(g.key for g in bigger))
    if w + per_seq > capacity:
        would.append(
            f"weights and KV cache split over at least {ceil_div((w + per_seq) * tp, capacity)} "
            f"{gpu_entry.key} GPUs (tensor/pipeline parallelism, batch 1)"
        )
    return reason, would
