"""Memory of a WholeModel and whether it fits one GPU: for inference, the weights in their dtype
with the KV cache and recurrent state of a batch of sequences at the model's context; for
training, the model states of sizing.memory (weights, gradients, optimizer states, ZeRO-sharded
over dp) with the activations of a micro-batch where the WholeModel knows them. Every byte count
is exact given its inputs; `fits` is None when a part is not modelled (False when the weights alone
do not fit)."""

from __future__ import annotations

from typing import Any

from sizing.inputs import get_gpu
from sizing.memory import DTYPE_BITS, default_runtime_reserve, dtype_bytes, model_states_per_gpu
from sizing.validate import require_int
from sizing.whole.model import WholeModel

GIB_BYTES = 2**30


def capacity_bytes(gpu: str, reserve_bytes: int | None = None) -> tuple[int, int]:
    """(the GPU's memory, what is left for tensors after the runtime reserve: the CUDA context)."""
    total = int(get_gpu(gpu).memory_gib * GIB_BYTES)
    reserve = default_runtime_reserve(0).total_bytes if reserve_bytes is None else reserve_bytes
    return total, total - reserve


def whole_inference_memory(
    m: WholeModel,
    gpu: str,
    batch: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    reserve_bytes: int | None = None,
) -> dict[str, Any]:
    """Weights + KV cache (bf16 as measured, rescaled to kv_dtype's bits) and state of `batch` sequences."""
    B = require_int("batch", batch, 1)
    weights = dtype_bytes(m.total_params, weight_dtype)
    gpu_bytes, free = capacity_bytes(gpu, reserve_bytes)
    known = m.kv_cache_bytes is not None and m.state_bytes is not None
    kv_per_sequence = m.kv_cache_bytes * DTYPE_BITS[kv_dtype] // DTYPE_BITS["bf16"] if known else 0
    per_sequence = kv_per_sequence + (m.state_bytes or 0)
    total = weights + B * per_sequence if known else None
    return {
        "mode": "inference",
        "gpu": get_gpu(gpu).key,
        "gpu_memory_bytes": gpu_bytes,
        "runtime_reserve_bytes": gpu_bytes - free,
        "context": m.seq_len,
        "batch": B,
        "weight_dtype": weight_dtype,
        "kv_dtype": kv_dtype,
        "weights_bytes": weights,
        "kv_cache_bytes": B * kv_per_sequence if known else None,
        "state_bytes": B * m.state_bytes if known else None,
        "total_bytes": total,
        "fits": (total <= free) if known else (False if weights > free else None),
        "max_batch": max(0, (free - weights) // per_sequence) if known and per_sequence else None,
    }


def whole_training_memory(
    m: WholeModel,
    gpu: str,
    micro_batch: int = 1,
    precision: str = "bf16-mixed",
    optimizer: str = "adamw",
    zero: int = 0,
    dp: int = 1,
    reserve_bytes: int | None = None,
) -> dict[str, Any]:
    """Model states per GPU (sizing.memory.model_states_per_gpu) + the micro-batch's activations."""
    mb = require_int("micro_batch", micro_batch, 1)
    states = model_states_per_gpu(m.total_params, precision, optimizer, zero, dp)
    activations = None if m.activation_bytes is None else mb * m.activation_bytes
    gpu_bytes, free = capacity_bytes(gpu, reserve_bytes)
    total = None if activations is None else sum(states.values()) + activations
    return {
        "mode": "training",
        "gpu": get_gpu(gpu).key,
        "gpu_memory_bytes": gpu_bytes,
        "runtime_reserve_bytes": gpu_bytes - free,
        "seq_len": m.seq_len,
        "micro_batch": mb,
        "precision": precision,
        "optimizer": optimizer,
        "zero": zero,
        "dp": dp,
        **states,
        "model_states_bytes": sum(states.values()),
        "activations_bytes": activations,
        "total_bytes": total,
        "fits": _fits(total, sum(states.values()), free),
    }


def _fits(total: int | None, known_part: int, free: int) -> bool | None:
    """True / False against the free bytes; None when a part is not modelled, unless the known part
    alone does not fit (then False)."""
    if total is not None:
        return total <= free
    return False if known_part > free else None
