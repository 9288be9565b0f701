"""What the reports take from sizing.memory, when that module is present.

The memory model is optional in a build: every function here returns None when
`sizing.memory` cannot be imported, and the reports say so instead of showing numbers.
Interface used: `sizing.memory.summary_for_estimate(cfg, seq_len, gpu_key)` -> an object
whose to_dict() holds "training" and "inference" (weights_bytes, kv_cache_bytes,
total_bytes), optionally under a top-level "memory" key.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from .config import ModelConfig

MEMORY_GPU = "a100-80gb"  # the GPU whose capacity the fit checks use
MICRO_BATCH_ARGS = ("micro_batch", "micro_batch_size", "batch_size", "batch")
TRAINING_KINDS = ("weights", "gradients", "optimizer", "activations", "transient")
TRAINING_KEYS = ("precision", "optimizer", "micro_batch", "zero_stage", "recompute", "attention_impl",
                 "weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "transient_bytes",
                 "total_bytes", "gpu", "fits", "max_micro_batch")
INFERENCE_KEYS = ("weight_dtype", "kv_dtype", "context", "batch", "weights_bytes", "kv_cache_bytes", "total_bytes",
                  "gpu", "fits", "max_batch", "max_context")


def memory_module():
    try:
        return importlib.import_module(f"{__package__}.memory")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.memory":
            raise
        return None


def summary(cfg: ModelConfig, seq_len: int, **kwargs) -> dict[str, Any] | None:
    module = memory_module()
    if module is None:
        return None
    data = module.summary_for_estimate(cfg, seq_len, MEMORY_GPU, **kwargs).to_dict()
    return data.get("memory", data)


def inference_bytes(cfg: ModelConfig, seq_len: int) -> dict[str, int] | None:
    """{weights_bytes, kv_cache_bytes, total_bytes} at `seq_len`, or None without sizing.memory."""
    data = summary(cfg, seq_len)
    return None if data is None else data.get("inference")


def micro_batch_argument() -> str | None:
    """The keyword of summary_for_estimate that sets the micro-batch, if it has one."""
    module = memory_module()
    if module is None:
        return None
    params = inspect.signature(module.summary_for_estimate).parameters
    return next((name for name in MICRO_BATCH_ARGS if name in params), None)


def training_by_kind(cfg: ModelConfig, seq_len: int, micro_batches: list[int]) -> dict[str, list[int]] | None:
    """{kind: [bytes per GPU at each micro-batch]}: the parts of the training total (its
    `per_gpu` entries when present, else the top-level TRAINING_KINDS), or None when the
    memory model cannot sweep the micro-batch."""
    arg = micro_batch_argument()
    if arg is None:
        return None
    series: dict[str, list[int]] = {}
    for batch in micro_batches:
        training = summary(cfg, seq_len, **{arg: batch}).get("training", {})
        parts = training.get("per_gpu") if isinstance(training.get("per_gpu"), dict) else {
            f"{kind}_bytes": training.get(f"{kind}_bytes") for kind in TRAINING_KINDS}
        for key, value in parts.items():
            if key.endswith("_bytes") and key != "total_bytes" and isinstance(value, (int, float)):
                series.setdefault(key.removesuffix("_bytes"), []).append(value)
    return {k: v for k, v in series.items() if len(v) == len(micro_batches) and any(v)} or None


def curated(section: dict[str, Any], keys: tuple[str, ...]) -> list[tuple[str, Any]]:
    """The entries of `keys` present in a summary section (all scalar entries if none is)."""
    chosen = [(k, section[k]) for k in keys if k in section]
    return chosen or [(k, v) for k, v in sorted(section.items()) if not isinstance(v, (dict, list))]
