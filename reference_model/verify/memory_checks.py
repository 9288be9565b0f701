"""The rows of `sizing verify --memory`, one helper per probe: saved activations (each attention
path and recompute mode), the KV cache of generate(), weights / gradients / AdamW state, and the
CUDA allocator's view when a GPU is present. Each appends its table rows and notes and returns
whether it passed; memory_verify.py assembles them into one CheckResult.
"""

from __future__ import annotations

import torch

from reference_model.probes import check_activations, check_cuda_memory, check_kv_cache
from sizing.inputs import ModelConfig

ACTIVATION_CASES = (
    ("math", "none"),
    ("sdpa", "none"),
    ("math", "selective"),
    ("sdpa", "selective"),
    ("sdpa", "full"),
    ("math", "full"),
)


def activation_rows(small: ModelConfig, seq_len: int, batch: int, rows: list, notes: list) -> bool:
    """Saved activations for every case of ACTIVATION_CASES: the total and one layer's."""
    ok = True
    for impl, recompute in ACTIVATION_CASES:
        check = check_activations(small, impl, recompute, seq_len, batch)
        ok &= check.ok
        layer = check.measured.per_layer[0]
        rows.append(
            [
                f"activations {check.label}",
                check.expected_total,
                check.measured.total,
                check.measured.total - check.expected_total,
                f"{check.relative_error * 100:+.2f}%",
            ]
        )
        rows.append(
            [
                f"  per layer {check.label}",
                check.expected_per_layer,
                layer,
                layer - check.expected_per_layer,
                f"{(layer / check.expected_per_layer - 1) * 100:+.2f}%",
            ]
        )
        notes += check.notes()
    return ok


def kv_cache_row(small: ModelConfig, seq_len: int, batch: int, rows: list) -> bool:
    """The KV cache generate() holds after a prompt of T/4 and 3T/4 new tokens: exact."""
    kv = check_kv_cache(small, prompt=seq_len // 4, new_tokens=seq_len - seq_len // 4, batch=batch)
    rows.append(
        [
            f"KV cache (generate, context {kv.prompt + kv.new_tokens})",
            kv.formula,
            kv.measured,
            kv.measured - kv.formula,
            "exact" if kv.ok else "MISMATCH",
        ]
    )
    return kv.ok


def cuda_rows(small: ModelConfig, rows: list, notes: list) -> bool:
    """torch.cuda.max_memory_allocated against the formula, or a note saying why it was skipped."""
    if torch.cuda.is_available() and small.sliding_window is None:
        cuda = check_cuda_memory(small)
        rows.append(
            [
                "GPU forward: saved + logits (bf16)",
                cuda.formula_forward,
                cuda.measured_forward,
                cuda.measured_forward - cuda.formula_forward,
                f"{cuda.relative_error * 100:+.2f}%",
            ]
        )
        rows.append(
            [
                "GPU peak fwd+bwd over weights",
                cuda.formula_peak,
                cuda.measured_peak,
                cuda.measured_peak - cuda.formula_peak,
                "reported",
            ]
        )
        return cuda.ok
    notes.append(
        "GPU max_memory_allocated check skipped: "
        + ("no CUDA device" if not torch.cuda.is_available() else "a windowed mask sends CUDA SDPA to another kernel")
    )
    return True
