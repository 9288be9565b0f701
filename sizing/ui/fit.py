"""What fills the GPU, as the page's stacked bar draws it, and the advice that makes a model
fit: both read from the answer's JSON (each segment names its path; nothing is added up here
that the JSON does not list).

A bar: {segments: [{label, path, value}], capacity: {label, path, value}} where the segments
are the memory of one GPU by part (weights, gradients, optimizer states, activations, KV
cache, runtime reserve) and the capacity is the GPU's memory.
"""

from __future__ import annotations

from sizing.ui.cards import get

# The parts of a training GPU's memory, in the order they are stacked (key in `per_gpu`, words).
TRAINING_PARTS = (
    ("base_weights_bytes", "frozen base weights"),
    ("weights_bytes", "weights"),
    ("adapter_weights_bytes", "adapter weights"),
    ("gradients_bytes", "gradients"),
    ("optimizer_bytes", "optimizer states"),
    ("zero3_gathered_bytes", "ZeRO-3 gathered weights"),
    ("gathered_unit_bytes", "FSDP gathered unit"),
    ("activations_bytes", "activations"),
    ("activations_blocks_bytes", "activations (blocks)"),
    ("activations_embedding_bytes", "activations (embedding)"),
    ("activations_head_loss_bytes", "activations (head and loss)"),
    ("activations_shared_bytes", "activations (shared)"),
    ("logits_bytes", "logits"),
    ("recompute_block_bytes", "recomputed block"),
    ("transient_bytes", "transient buffers"),
    ("comm_buffer_bytes", "communication buffers"),
)


def _segment(result, path: str, words: str) -> dict | None:
    value = get(result, path)
    return {"label": words, "path": path, "value": value} if isinstance(value, (int, float)) and value > 0 else None


def _bar(result, parts: list[tuple[str, str]], capacity: str) -> dict | None:
    segments = [s for s in (_segment(result, path, words) for path, words in parts) if s is not None]
    size = get(result, capacity)
    if not segments or not isinstance(size, (int, float)):
        return None
    return {"segments": segments, "capacity": {"label": "GPU memory", "path": capacity, "value": size}}


def _training(result, section: str = "per_gpu") -> list[tuple[str, str]]:
    """The per-GPU parts the JSON lists, in stacking order; parts it has that TRAINING_PARTS does
    not name are stacked after them under their key (a new term is never dropped from the bar)."""
    terms = get(result, section) or {}
    known = [k for k, _ in TRAINING_PARTS]
    named = [(f"{section}.{k}", words) for k, words in TRAINING_PARTS if k in terms]
    rest = [(f"{section}.{k}", k.removesuffix("_bytes").replace("_", " ")) for k in terms if k not in known]
    rest = [(p, w) for p, w in rest if not p.endswith("total_bytes") and "cpu_" not in p]
    # `activations_bytes` is the sum of the activation parts where both are listed
    if any(p.endswith("activations_blocks_bytes") for p, _ in named):
        named = [(p, w) for p, w in named if not p.endswith(".activations_bytes")]
    return named + rest


def bar(endpoint: str, result) -> dict | None:
    """The stacked bar of one GPU's memory, or None where the question has none."""
    reserve = [("runtime_reserve_bytes", "runtime reserve (CUDA context, NCCL)")]
    if endpoint in ("memory", "parallel", "estimate") and isinstance(result, dict):
        if endpoint == "estimate":
            return None
        if "terms" in result:  # the engine's split: budget, weights, outside torch, activations
            return None
        if "kv_cache_bytes" in result:
            parts = [("weights_bytes", "weights"), ("kv_cache_bytes", "KV cache"),
                     ("prefill_peak_bytes", "prefill activations")]  # fmt: skip
            return _bar(result, parts + reserve, "gpu_memory_bytes")
        return _bar(result, _training(result) + reserve, "gpu_memory_bytes")
    if endpoint == "serve" and "memory" in result:
        parts = [("memory.weights_bytes_per_gpu", "weights"), ("memory.kv_bytes_per_gpu", "KV cache"),
                 ("memory.prefill_peak_bytes", "prefill activations")]  # fmt: skip
        return _bar(result, parts, "memory.gpu_memory_bytes")
    if endpoint == "hybrid" and get(result, "fit.gpu_memory_bytes") is not None:
        parts = [("memory_bytes.weights", "weights"), ("memory_bytes.kv_cache", "KV cache (attention layers)"),
                 ("memory_bytes.conv_state", "convolution state"),
                 ("memory_bytes.ssm_state", "recurrent state")]  # fmt: skip
        return _bar(result, parts, "fit.gpu_memory_bytes")
    return None


def advice(endpoint: str, result) -> list[str]:
    """What the answer says would make it fit (its reason and `would_fit` lines), in its words."""
    if not isinstance(result, dict):
        return []
    lines = [result["reason"]] if isinstance(result.get("reason"), str) else []
    lines += [line for line in result.get("would_fit") or [] if isinstance(line, str)]
    if endpoint == "serve" and result.get("rejected") and not result.get("best"):
        lines += sorted({r["why_not"] for r in result["rejected"] if r.get("why_not")})
    return lines
