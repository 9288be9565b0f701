"""Memory: bytes for training and inference per GPU, the KV cache, and "will it fit".

One small function per quantity; every byte count is an exact integer and the unit is in
the name. The package follows the data flow:

* states.py: weights, gradients and optimizer states per precision policy and optimizer
  (bf16 mixed AdamW: 2 + 2 + 12 = 16 bytes per parameter), ZeRO / FSDP sharding.
* activations.py: what autograd saves for backward, term by term, checked against the
  reference model (reference_model/memory_probe.py); the transient working set.
* kv.py: inference weights in a storage dtype and the KV cache.
* fit.py: training_memory against a GPU, the largest micro-batch that fits and the would-fit
  advice; summary_for_estimate for `sizing estimate`.
* inference_fit.py: inference_memory (weights + KV cache + prefill peak), the largest batch and
  context that fit. search.py: the searches both use.
* results.py: the result dataclasses (to_dict only; sizing.render.memory renders them).

This module is the public API: import from `sizing.memory`, not from the parts.
"""

from __future__ import annotations

from ..vocabulary import ATTENTION_IMPL_ALIASES as ATTENTION_ALIASES
from ..vocabulary import ATTENTION_IMPLS, DTYPE_BITS, RECOMPUTE_MODES
from .activations import (
    KORTHIKANTI_LABEL,
    MLP_SAVED_TENSORS,
    ActivationTerm,
    activation_terms,
    activations_bytes,
    activations_bytes_per_layer,
    korthikanti_activations_bytes_per_layer,
    transient_bytes,
)
from .fit import summary_for_estimate, training_memory
from .inference_fit import inference_memory
from .kv import cached_positions, dtype_bytes, inference_weights_bytes, kv_cache_bytes
from .results import InferenceMemory, MemorySummary, TrainingMemory
from .states import (
    ADAM8BIT_BLOCK,
    FP32_BYTES,
    INDEX_BYTES,
    OPTIMIZER_ALIASES,
    OPTIMIZERS,
    PRECISIONS,
    ZERO_STAGES,
    Optimizer,
    Precision,
    get_optimizer,
    get_precision,
    gradients_bytes,
    largest_unit_params,
    master_weights_bytes,
    model_states_per_gpu,
    optimizer_bytes,
    optimizer_state_bytes,
    shard_bytes,
    weights_bytes,
    zero3_gathered_bytes,
)

__all__ = [
    "ADAM8BIT_BLOCK",
    "ATTENTION_ALIASES",
    "ATTENTION_IMPLS",
    "DTYPE_BITS",
    "FP32_BYTES",
    "INDEX_BYTES",
    "KORTHIKANTI_LABEL",
    "MLP_SAVED_TENSORS",
    "OPTIMIZERS",
    "OPTIMIZER_ALIASES",
    "PRECISIONS",
    "RECOMPUTE_MODES",
    "ZERO_STAGES",
    "ActivationTerm",
    "InferenceMemory",
    "MemorySummary",
    "Optimizer",
    "Precision",
    "TrainingMemory",
    "activation_terms",
    "activations_bytes",
    "activations_bytes_per_layer",
    "cached_positions",
    "dtype_bytes",
    "get_optimizer",
    "get_precision",
    "gradients_bytes",
    "inference_memory",
    "inference_weights_bytes",
    "korthikanti_activations_bytes_per_layer",
    "kv_cache_bytes",
    "largest_unit_params",
    "master_weights_bytes",
    "model_states_per_gpu",
    "optimizer_bytes",
    "optimizer_state_bytes",
    "shard_bytes",
    "summary_for_estimate",
    "training_memory",
    "transient_bytes",
    "weights_bytes",
    "zero3_gathered_bytes",
]
