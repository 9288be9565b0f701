"""Serving a model known only as numbers (sizing.whole.WholeModel: Gemma 3n, or any architecture
transformers counts on the meta device), on the GPU's calibrated serving efficiencies and overheads
(sizing.serve.calibration), one GPU per replica (tensor parallelism needs the model's own plan):

    TTFT = max(b·F(P) / (peak x e_c), (W + b·KV(P) + b·S) / (HBM x e_b)) + the prefill overhead
    step(C) = max(b·f(C) / (peak x e_c), W / (HBM x e_b) + (b·KV(C) + 2·b·S) / (HBM x e_kv)) + the step overhead

with F(P) the forward FLOPs of a sequence of P tokens, f(C) one decode token's FLOPs at C cached
positions, W every weight (an MoE's experts too: an upper bound), KV(C) one sequence's KV cache and
S its recurrent state (read and written each step). f and KV are taken at the prompt's end (P) and
at the output's end (P + O) and interpolated linearly between them (exact for full attention, an
over-estimate where a sliding window caps the cache inside the range); the decode steps are summed
exactly on those lines (roofline.sum_of_steps).
"""

from __future__ import annotations

from sizing.inputs import get_gpu
from sizing.memory import DTYPE_BITS, dtype_bytes
from sizing.serve.calibration import serve_efficiency
from sizing.serve.hybrid_vlm import OtherServe
from sizing.serve.roofline import compute_seconds, memory_seconds, sum_of_steps
from sizing.validate import SizingError, require_int


def _kv_bytes(m, kv_dtype: str) -> int:
    """One sequence's KV cache at m.seq_len in kv_dtype (measured in bf16, rescaled by the bits)."""
    if m.kv_cache_bytes is None:
        raise SizingError(f"{m.name}: its KV cache was not measured (exact['kv_cache']: {m.exact['kv_cache']})")
    return m.kv_cache_bytes * DTYPE_BITS[kv_dtype] // DTYPE_BITS["bf16"]


def serve_whole(
    at_prompt, at_end, batch: int = 1, gpu: str = "h100", weight_dtype: str = "bf16", kv_dtype: str = "bf16",
    layers: int = 1,
) -> OtherServe:  # fmt: skip
    """`at_prompt` and `at_end` (the same WholeModel at P and at P + O tokens) served as a static batch
    of `batch` sequences on one GPU (module docstring); `layers` scales the engine's per-layer overhead."""
    b = require_int("batch", batch, 1)
    P, end = at_prompt.seq_len, at_end.seq_len
    n_out = require_int("output", end - P, 2)
    entry, rates = get_gpu(gpu), serve_efficiency(gpu)
    peak, hbm = entry.peak_flops_per_second("bf16"), entry.hbm_bytes_per_second
    kv_rate = rates.attention or rates.bandwidth
    weights = dtype_bytes(at_end.total_params, weight_dtype)
    kv0, kv1, state = _kv_bytes(at_prompt, kv_dtype), _kv_bytes(at_end, kv_dtype), at_end.state_bytes or 0
    f0, f1 = at_prompt.decode_flops_per_token, at_end.decode_flops_per_token
    prefill = max(
        compute_seconds(b * at_prompt.forward_flops_per_sequence, peak, rates.compute),
        memory_seconds(weights + b * (kv0 + state), hbm, rates.bandwidth),
    )
    ttft = prefill + rates.overhead.seconds(b, True, layers)

    def seconds_at(context: int) -> tuple[float, float, float]:
        share = (context - P) / n_out  # 0 at the prompt's end, 1 at the output's
        flops = b * (f0 + (f1 - f0) * share)
        cache = b * (kv0 + (kv1 - kv0) * share + 2 * state)
        moved = memory_seconds(weights, hbm, rates.bandwidth) + memory_seconds(cache, hbm, kv_rate)
        return compute_seconds(flops, peak, rates.compute), moved, rates.overhead.seconds(b, False, layers)

    decode = sum_of_steps(seconds_at, P + 1, end - 1)
    memory = {"weights": weights, "kv_cache": b * kv1, "state": b * state}
    notes = (
        f"{at_end.label}: one GPU per replica (tensor parallelism needs the model's own parallel plan)",
        "every weight read each decode step (an MoE's experts too: an upper bound); the KV cache and decode FLOPs "
        f"taken at {P:,} and {end:,} tokens and interpolated between them",
        f"prefill attention counted {at_prompt.attention}; efficiencies {rates.compute:g} (compute) / "
        f"{rates.bandwidth:g} (bandwidth) of {entry.key}: {rates.basis}",
    )
    return OtherServe(
        at_end.name,
        at_end.kind,
        entry.key,
        b,
        P,
        n_out,
        1,
        ttft,
        decode / (n_out - 1),
        memory,
        entry.memory_bytes,
        notes,
    )
