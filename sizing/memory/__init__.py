"""Memory: bytes for training and inference per GPU, the KV cache, and "will it fit".

One small function per quantity; every byte count is an exact integer and the unit is in
the name. The package follows the data flow:

* states.py: weights, gradients and optimizer states per precision policy and optimizer
  (bf16 mixed AdamW: 2 + 2 + 12 = 16 bytes per parameter), ZeRO / FSDP sharding.
* activations.py: what autograd saves for backward, term by term, checked against the
  reference model (reference_model/probes/memory.py); the transient working set.
* kv.py: inference weights in a storage dtype and the KV cache.
* fit.py: training_memory against a GPU, the largest micro-batch that fits and the would-fit
  advice; summary_for_estimate for `sizing estimate`.
* inference_fit.py: inference_memory (weights + KV cache + prefill peak), the largest batch and
  context that fit. search.py: the searches both use.
* results.py: the result dataclasses (to_dict only; sizing.render.memory renders them).
* fp8.py: the fp8 copies Transformer Engine keeps of GEMM weights and saved inputs, per recipe.
* stack_activations.py: saved activations as a training stack's kernels keep them (fused norms
  and activations, fp8 GEMM inputs, op-level selective checkpointing).
* verdict.py: fits / tight / does not fit, with the allocator's band.

This module is the public API: import from `sizing.memory`, not from the parts.
"""

from __future__ import annotations

from sizing.memory.activations import (
    KORTHIKANTI_LABEL,
    MLP_SAVED_TENSORS,
    ActivationTerm,
    activation_terms,
    activations_bytes,
    activations_bytes_per_layer,
    korthikanti_activations_bytes_per_layer,
    transient_bytes,
)
from sizing.memory.fit import summary_for_estimate, training_memory
from sizing.memory.inference_fit import inference_memory
from sizing.memory.kv import cached_positions, dtype_bytes, inference_weights_bytes, kv_cache_bytes
from sizing.memory.results import InferenceMemory, MemorySummary, TrainingMemory
from sizing.memory.states import (
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
from sizing.vocabulary import ATTENTION_IMPL_ALIASES as ATTENTION_ALIASES
from sizing.vocabulary import ATTENTION_IMPLS, DTYPE_BITS, RECOMPUTE_MODES

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


# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "DEFAULT_MAX_NUM_BATCHED_TOKENS": "sizing.memory.engine",
    "ENGINES": "sizing.memory.engine",
    "ALLOCATOR_SHARE": "sizing.memory.verdict",
    "ALLOCATOR_SOURCE": "sizing.memory.verdict",
    "DEFAULT_FP8_RECIPE": "sizing.memory.fp8",
    "EngineMemory": "sizing.memory.engine",
    "EngineRun": "sizing.memory.engine",
    "startup_logs": "sizing.memory.engine_logs",
    "published_checkpoints": "sizing.memory.checkpoints",
    "engine_memory_for": "sizing.memory.engine",
    "engine_weights_bytes_per_rank": "sizing.memory.engine_weights",
    "reported_memory_bytes": "sizing.memory.engine_data",
    "vllm_default_batch": "sizing.memory.engine_data",
    "FORMATS": "sizing.memory.quant",
    "FP8_RECIPES": "sizing.memory.fp8",
    "FitVerdict": "sizing.memory.verdict",
    "KERNELS": "sizing.memory.stack_activations",
    "SELECTIVE_KINDS": "sizing.memory.stack_activations",
    "MEMORY_POLICY": "sizing.memory.step_peak",
    "RuntimeReserve": "sizing.memory.runtime",
    "activations_not_modelled": "sizing.memory.activations",
    "default_runtime_reserve": "sizing.memory.runtime",
    "engine_memory": "sizing.memory.engine",
    "fit_verdict": "sizing.memory.verdict",
    "fp8_saved_input_bytes": "sizing.memory.fp8",
    "fp8_weight_copies_bytes": "sizing.memory.fp8",
    "get_format": "sizing.memory.quant",
    "weight_format": "sizing.memory.quant",
    "deployed_weights_bytes": "sizing.memory.quant",
    "DEPLOYED_AS": "sizing.memory.quant",
    "given_runtime_reserve": "sizing.memory.runtime",
    "kv_cache_bytes_per_rank": "sizing.memory.kv",
    "kv_cache_formula": "sizing.memory.kv",
    "kv_heads_per_rank": "sizing.memory.kv",
    "largest_fitting": "sizing.memory.search",
    "layout_runtime_reserve": "sizing.memory.runtime",
    "model_states_bytes": "sizing.memory.step_peak",
    "naive_kv_cache_bytes": "sizing.memory.kv",
    "naive_kv_cache_bytes_per_rank": "sizing.memory.kv",
    "plain_dtype_note": "sizing.memory.quant",
    "prefill_activation_peak_bytes": "sizing.memory.prefill",
    "prefill_tokens": "sizing.memory.prefill",
    "quantized_weights": "sizing.memory.quant",
    "routed_expert_matrix_params": "sizing.memory.quant",
    "stack_activation_terms": "sizing.memory.stack_activations",
    "sum_terms": "sizing.memory.activations",
    "stack_transient_bytes": "sizing.memory.stack_activations",
    "chunked_loss_rows": "sizing.memory.stack_activations",
    "step_peak_estimate_bytes": "sizing.memory.step_peak",
    "training_memory_in_dtype": "sizing.memory.step_peak",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
