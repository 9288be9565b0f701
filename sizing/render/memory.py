"""Render sizing.memory results (TrainingMemory, InferenceMemory, MemorySummary) as a table,
markdown, JSON or CSV. `sizing memory` prints render_memory(result, fmt, details=True);
`sizing estimate` embeds render_memory(summary, fmt) and flat_items(summary) in its CSV."""

from __future__ import annotations

import json
from typing import Any

from sizing.inputs import format_gib, format_int
from sizing.memory import (
    KORTHIKANTI_LABEL,
    InferenceMemory,
    MemorySummary,
    TrainingMemory,
    activations_not_modelled,
    get_optimizer,
    get_precision,
    kv_cache_formula,
    kv_heads_per_rank,
)
from sizing.render.tables import csv_text, heading, table
from sizing.vocabulary import DTYPE_BITS

MemoryResult = TrainingMemory | InferenceMemory | MemorySummary


def render_memory(result: MemoryResult, fmt: str = "table", details: bool = False) -> str:
    """fmt table | markdown | json | csv; details adds the term-by-term activation table."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2)
    if fmt == "csv":
        return csv_text(["key", "value"], [list(item) for item in flat_items(result)])
    if isinstance(result, MemorySummary):
        return "\n".join(
            [render_memory(result.training, fmt, details), "", render_memory(result.inference, fmt, details)]
        )
    if isinstance(result, TrainingMemory):
        return _training_text(result, fmt, details)
    return _inference_text(result, fmt)


def flat_items(result: MemoryResult) -> list[tuple[str, Any]]:
    """(key, value) pairs of to_dict(), nested keys joined with '.', lists joined with '; ': for CSV."""
    out: list[tuple[str, Any]] = []
    _flatten("", result.to_dict(), out)
    return out


def _flatten(prefix: str, value: Any, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
    elif isinstance(value, (list, tuple)):
        out.append((prefix, "; ".join(str(v) for v in value)))
    else:
        out.append((prefix, value))


def _gib(n_bytes: int | None) -> str:
    return "" if n_bytes is None else format_gib(n_bytes)


def _does_not_fit(reason: str | None, would_fit: tuple[str, ...]) -> str:
    return "\n".join([f"does not fit: {reason}"] + [f"  would fit: {s}" for s in would_fit])


# ---------------------------------------------------------------- training
def training_heading(mem: TrainingMemory) -> str:
    return (
        f"Training memory per GPU: {mem.precision} {mem.optimizer}, ZeRO {mem.zero} over dp {mem.dp}, "
        f"micro-batch {mem.micro_batch}, T = {mem.seq_len}, recompute {mem.recompute}, "
        f"{mem.attention_impl} attention, {mem.gpu}"
    )


def training_rows(mem: TrainingMemory) -> list[list]:
    """quantity, formula (bytes), whole model, per GPU."""
    pg = mem.per_gpu
    prec = get_precision(mem.precision)
    rows = [
        ["weights", f"N·{prec.weight_bytes}", _gib(mem.weights_bytes), _gib(pg["weights_bytes"])],
        ["gradients", f"N·{prec.grad_bytes}", _gib(mem.gradients_bytes), _gib(pg["gradients_bytes"])],
        ["optimizer states", _optimizer_formula(mem), _gib(mem.optimizer_bytes), _gib(pg["optimizer_bytes"])],
    ]
    if pg["fp8_weight_copies_bytes"]:
        rows.append(["fp8 weight copies", "2·N_GEMM (fp8 data + transpose)", "", _gib(pg["fp8_weight_copies_bytes"])])
    if pg["zero3_gathered_bytes"]:
        rows.append(["ZeRO-3 gathered unit", "(w + g bytes)·largest unit", "", _gib(pg["zero3_gathered_bytes"])])
    recomputing = mem.recompute != "none"
    rows += [
        [
            f"activations (b={mem.micro_batch}, T={mem.seq_len})",
            _activations_formula(mem),
            _gib(mem.activations_bytes),
            _gib(pg["activations_bytes"]),
        ],
        [
            "transient (logits + grad" + (", recompute" if recomputing else "") + ")",
            "b·T·V·(a+4)" + (" + 1 layer" if recomputing else ""),
            _gib(mem.transient_bytes),
            _gib(pg["transient_bytes"]),
        ],
        ["total", "", _gib(mem.total_bytes), _gib(mem.per_gpu_bytes)],
        [f"GPU {mem.gpu}", "", "", _gib(mem.gpu_memory_bytes)],
        *_reserve_rows(mem, 4),
        ["headroom", "GPU - " + ("reserve - " if mem.runtime_reserve else "") + "total", "", _gib(mem.headroom_bytes)],
        ["max micro-batch", "", "", str(mem.max_micro_batch) if mem.max_micro_batch else "none fits"],
        [
            "Korthikanti et al. 2022 activations",
            f"L·{KORTHIKANTI_LABEL[mem.recompute]} (16-bit, for comparison)",
            _gib(mem.korthikanti_bytes),
            _gib(mem.korthikanti_bytes),
        ],
    ]
    return rows


def _optimizer_formula(mem: TrainingMemory) -> str:
    prec = get_precision(mem.precision)
    master = f"N·{prec.master_bytes} master + " if prec.master_bytes else ""
    if mem.optimizer == "adam8bit":
        return master + "2·(N + 4·⌈N/2048⌉)"
    return master + f"{get_optimizer(mem.optimizer).states}·N·{prec.state_bytes}"


def _reserve_rows(mem, width: int) -> list[list]:
    """The runtime reserve's row (CUDA context, NCCL, allocator: sizing.memory.runtime), if any."""
    r = mem.runtime_reserve
    if r is None:
        return []
    what = "given (--runtime-reserve)" if r.given else "CUDA context + NCCL buffers (not tensors)"
    return [["runtime reserve", what, *[""] * (width - 3), _gib(r.total_bytes)]]


def reserve_line(mem) -> str | None:
    """What the reserve is made of and what nvidia-smi will show, under the verdict."""
    r = mem.runtime_reserve
    if r is None:
        return None
    return f"{r.describe()}; nvidia-smi shows about the total + this + the allocator's cache"


def training_verdict(mem: TrainingMemory) -> str:
    """The three-level answer (sizing.memory.verdict): fits, tight, does not fit; when the
    point estimate is over, why and what would fit."""
    verdict = mem.memory_verdict
    if not mem.fits:
        if verdict.level == "does not fit":
            return _does_not_fit(mem.reason, mem.would_fit)
        return "\n".join([f"{verdict.describe()}: {mem.reason}"] + [f"  would fit: {s}" for s in mem.would_fit])
    head = "fits" if verdict.level == "fits" else verdict.describe()
    return (
        f"{head}: micro-batch {mem.micro_batch} uses {_gib(mem.per_gpu_bytes)} of {_gib(mem.gpu_memory_bytes)}"
        + (f" less the runtime reserve {_gib(mem.runtime_reserve_bytes)}" if mem.runtime_reserve else "")
        + f"; largest micro-batch that fits: {mem.max_micro_batch}"
    )


def activation_rows(mem: TrainingMemory) -> list[list]:
    """term, formula, bytes, counted (per layer or once)."""
    return [[t.key, t.formula, format_int(t.bytes), "per layer" if t.per_layer else "once"] for t in mem.terms]


def _training_text(mem: TrainingMemory, fmt: str, details: bool) -> str:
    parts = [
        heading(training_heading(mem), fmt),
        table(["quantity", "formula (bytes)", "whole model", "per GPU"], training_rows(mem), fmt),
        training_verdict(mem),
        *filter(None, [reserve_line(mem)]),
    ]
    missing = activations_not_modelled(mem.config)
    if missing:
        parts.append(f"Activations do not model: {', '.join(missing)} (their saved tensors are not counted).")
    if details:
        a = get_precision(mem.precision).activation_bytes
        parts += [
            "",
            heading(f"Activations saved for backward, term by term (a = {a} bytes)", fmt),
            table(["term", "formula", "bytes", "counted"], activation_rows(mem), fmt),
        ]
    return "\n".join(parts)


# ---------------------------------------------------------------- inference
def inference_heading(mem: InferenceMemory) -> str:
    return (
        f"Inference memory: weights {mem.quant or mem.weight_dtype}, KV cache {mem.kv_dtype}, context {mem.context}, "
        f"batch {mem.batch}, {mem.gpu}" + (f", per GPU of tp {mem.tp}" if mem.tp > 1 else "")
    )


def _kv_formula(mem: InferenceMemory) -> str:
    cfg = mem.config
    if cfg.is_mla or (cfg.n_local_layers and cfg.n_global_layers):
        per_rank = " (whole on each TP rank)" if cfg.is_mla and mem.tp > 1 else ""
        return kv_cache_formula(cfg, mem.context, mem.batch, mem.kv_dtype) + per_rank
    heads = "h_kv" if mem.tp == 1 else f"({cfg.kv_heads} kv heads over tp {mem.tp}: {kv_heads_per_rank(cfg, mem.tp)})"
    return f"2·L·{heads}·d_h·{DTYPE_BITS[mem.kv_dtype] / 8:g}·{mem.cached_positions}·{mem.batch}"


def inference_rows(mem: InferenceMemory) -> list[list]:
    """quantity, formula (bytes), GiB."""
    window_size = mem.config.local_window
    window = f" (window {window_size})" if window_size and window_size < mem.context else ""
    max_ctx = (
        "unbounded (window caps the cache)"
        if mem.context_unbounded
        else format_int(mem.max_context)
        if mem.max_context
        else "none fits"
    )
    if mem.max_context_limited_by == "max_positions":
        max_ctx += " (max_positions)"
    return [
        _weights_row(mem),
        [
            f"KV cache ({mem.kv_dtype}, C={mem.context}{window}, batch {mem.batch})",
            _kv_formula(mem),
            _gib(mem.kv_cache_bytes),
        ],
        *(
            [["KV cache, naive (full per-head K and V)", "h·(d_n + d_r + d_v) per position", _gib(naive)]]
            if (naive := mem.kv_cache_bytes_naive) is not None
            else []
        ),
        ["total", "", _gib(mem.total_bytes)],
        [
            "prefill activation peak ("
            + (f"chunk {mem.prefill_chunk} tokens" if mem.prefill_chunk else "one sequence's context unchunked")
            + ")",
            "max(attention, MLP, logits) of one forward",
            _gib(mem.prefill_peak_bytes),
        ],
        ["peak (total + prefill)", "", _gib(mem.peak_bytes)],
        [f"GPU {mem.gpu}", "", _gib(mem.gpu_memory_bytes)],
        *_reserve_rows(mem, 3),
        ["headroom", "GPU - " + ("reserve - " if mem.runtime_reserve else "") + "peak", _gib(mem.headroom_bytes)],
        [f"max batch at C={mem.context}", "", format_int(mem.max_batch) if mem.max_batch else "none fits"],
        [f"max context at batch {mem.batch}", "", max_ctx],
    ]


def _weights_row(mem: InferenceMemory) -> list:
    if mem.quant is None:
        from sizing.memory import DEPLOYED_AS

        deployed = DEPLOYED_AS.get(mem.weight_dtype)
        width = f"N·{DTYPE_BITS[mem.weight_dtype] / 8:g}"
        formula = f"{width} in the blocks, token table and lm_head 16-bit ({deployed})" if deployed else width
        return [f"weights ({mem.weight_dtype})", formula, _gib(mem.weights_bytes)]
    from sizing.memory import get_format

    f = get_format(mem.quant)
    kept = "16-bit non-expert weights" if f.scope == "experts" else "embeddings/lm_head/norms as the format keeps them"
    return [
        f"weights ({mem.quant})",
        f"{float(f.bits):g} bits/weight ({f.arithmetic}); {kept}",
        _gib(mem.weights_bytes),
    ]


def inference_verdict(mem: InferenceMemory) -> str:
    note = f"\nnote: {mem.weights_note}" if mem.weights_note else ""
    if not mem.fits:
        return _does_not_fit(mem.reason, mem.would_fit) + note
    return (
        f"fits: {_gib(mem.peak_bytes)} of {_gib(mem.gpu_memory_bytes)} at the prefill peak "
        + ("(less the runtime reserve)" if mem.runtime_reserve else "(not counted: CUDA context, fragmentation)")
        + note
    )


def _inference_text(mem: InferenceMemory, fmt: str) -> str:
    return "\n".join(
        [
            heading(inference_heading(mem), fmt),
            table(["quantity", "formula (bytes)", "GiB"], inference_rows(mem), fmt),
            inference_verdict(mem),
            *filter(None, [reserve_line(mem)]),
        ]
    )


def _activations_formula(mem: TrainingMemory) -> str:
    """L·per layer + outside; where MoE and dense blocks mix, the dense ones apart (their
    per-layer bytes are what the blocks hold beyond the MoE ones, over their count)."""
    cfg, per, outside = mem.config, mem.activations_per_layer_bytes, mem.activations_outside_bytes
    if not cfg.is_moe or cfg.n_dense_layers == 0:
        return f"L·{_gib(per)} + {_gib(outside)} outside"
    dense = (mem.activations_bytes - outside - cfg.n_moe_layers * per) // cfg.n_dense_layers
    return f"L_moe·{_gib(per)} + L_dense·{_gib(dense)} + {_gib(outside)} outside"
