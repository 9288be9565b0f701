"""What would fit when a serving estimate does not: `sizing serve` exits 3 (as `sizing memory`
does) and names, each checked by re-running the estimate, the smallest tensor-parallel degree
that fits, a lower weight dtype at this tp, the largest batch at this context, and the longest
prompt at this batch. Pipeline parallelism is not modelled by `sizing serve`, so it is not
suggested."""

from __future__ import annotations

import dataclasses

from sizing.inputs import format_gib
from sizing.memory import kv_heads_per_rank, largest_fitting
from sizing.serve.result import ServeEstimate
from sizing.validate import SizingError
from sizing.vocabulary import DTYPE_BITS

TP_CANDIDATES = (1, 2, 4, 8, 16, 32, 64)  # powers of two: the degrees serving engines offer
LOWER_WEIGHT_DTYPES = ("fp8", "int8", "int4")


def _again(est: ServeEstimate, **changes) -> ServeEstimate | None:
    """The same estimate with some settings changed; None when they are invalid for the model."""
    from sizing.serve.estimate import serve

    s = dataclasses.replace(est.settings, **changes)
    try:
        return serve(
            est.config,
            s.prompt,
            s.output,
            s.batch,
            est.gpu.key,
            s.tp,
            s.tp,
            s.weight_dtype,
            s.kv_dtype,
            s.activation_dtype,
            s.attention,
            s.compute_efficiency,
            s.bandwidth_efficiency,
            s.price_per_gpu_hour,
            s.prefill_chunk,
            name=est.model,
            mla=s.mla,
        )
    except SizingError:
        return None


def valid_tp(cfg, tp: int) -> bool:
    """tp splits the query heads evenly and the KV heads evenly or by replication."""
    if cfg.n_heads % tp:
        return False
    try:
        kv_heads_per_rank(cfg, tp)
    except SizingError:
        return False
    return True


def smallest_fitting_tp(est: ServeEstimate, **changes) -> int | None:
    """The smallest tp of TP_CANDIDATES, from this one up, at which the same batch fits (with
    `changes` to the other settings, e.g. a lower weight dtype)."""
    for tp in TP_CANDIDATES:
        if tp >= est.settings.tp and valid_tp(est.config, tp) and (tp == 1 or est.gpu.nvlink_gbs is not None):
            other = _again(est, tp=tp, **changes)
            if other is not None and other.fits:
                return tp
    return None


def would_fit(est: ServeEstimate) -> list[str]:
    """Suggestions that fit, each re-checked; [] when it fits already: the smallest tp, a lower
    weight dtype that needs fewer GPUs than that, a smaller batch, a shorter prompt."""
    if est.fits:
        return []
    s, out = est.settings, []
    tp = smallest_fitting_tp(est)
    if tp is not None:
        out.append(f"--tp {tp} (the smallest tensor-parallel degree that fits this batch)")
    for dtype in LOWER_WEIGHT_DTYPES:
        if DTYPE_BITS[dtype] < DTYPE_BITS[s.weight_dtype]:
            lower_tp = smallest_fitting_tp(est, weight_dtype=dtype)
            if lower_tp is not None and (tp is None or lower_tp < tp):
                out.append(f"--weight-dtype {dtype} at --tp {lower_tp}")
                break
    if est.max_batch and est.max_batch < s.batch:
        out.append(f"--batch {est.max_batch} or less at this prompt and output")
    if s.batch == 1 or not est.max_batch:
        prompt = largest_fitting(lambda p: _memory_at_prompt(est, p), est.gpu.memory_bytes, limit=max(1, s.prompt - 1))
        if prompt:
            out.append(f"--prompt {prompt} or less at batch {s.batch}")
    return out


def _memory_at_prompt(est: ServeEstimate, prompt: int) -> int:
    from sizing.serve.estimate import memory_bytes_per_gpu

    return memory_bytes_per_gpu(est.config, est.gpu, dataclasses.replace(est.settings, prompt=prompt))


def not_fit_reason(est: ServeEstimate) -> str:
    return (
        f"does not fit: weights {format_gib(est.weights_bytes_per_gpu)} + KV cache {format_gib(est.kv_bytes_per_gpu)}"
        f" + prefill peak {format_gib(est.prefill_peak_bytes)} = {format_gib(est.memory_bytes_per_gpu)} per GPU, "
        f"more than the {format_gib(est.gpu.memory_bytes)} of {est.gpu.key}"
    )
