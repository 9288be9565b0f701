"""What the reports take from sizing.memory: the summary `sizing estimate` shows (bf16 mixed
AdamW training, bf16 inference), checked against one GPU."""

from __future__ import annotations

from typing import Any

from sizing.inputs import ModelConfig
from sizing.memory import summary_for_estimate
from sizing.vocabulary import DEFAULT_GPU

MEMORY_GPU = DEFAULT_GPU  # the GPU whose capacity the fit checks use
TRAINING_KEYS = (
    "precision",
    "optimizer",
    "micro_batch",
    "zero_stage",
    "recompute",
    "attention_impl",
    "weights_bytes",
    "gradients_bytes",
    "optimizer_bytes",
    "activations_bytes",
    "transient_bytes",
    "total_bytes",
    "gpu",
    "fits",
    "max_micro_batch",
)
INFERENCE_KEYS = (
    "weight_dtype",
    "kv_dtype",
    "context",
    "batch",
    "weights_bytes",
    "kv_cache_bytes",
    "total_bytes",
    "gpu",
    "fits",
    "max_batch",
    "max_context",
)


def summary(cfg: ModelConfig, seq_len: int, micro_batch: int = 1) -> dict[str, Any]:
    """{"training": ..., "inference": ...} as `sizing estimate` embeds it."""
    return summary_for_estimate(cfg, seq_len, MEMORY_GPU, micro_batch=micro_batch).to_dict()


def inference_bytes(cfg: ModelConfig, seq_len: int) -> dict[str, int]:
    """{weights_bytes, kv_cache_bytes, total_bytes, ...} at `seq_len`, batch 1, bf16."""
    return summary(cfg, seq_len)["inference"]
