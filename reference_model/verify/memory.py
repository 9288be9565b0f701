"""`sizing verify --memory`: the memory probes (memory_probe.py) on a toy-size model of each
config, as one CheckResult: saved activations for each attention path and recompute mode,
the KV cache from generate(), and weights, gradients and AdamW state.
"""

from __future__ import annotations

import time

import torch

from reference_model.model import small_config
from reference_model.probes import TOLERANCE, check_activations, check_cuda_memory, check_kv_cache, check_model_states
from reference_model.verify.check import CheckResult
from sizing.inputs import ModelConfig
from sizing.memory import activations_not_modelled

ACTIVATION_CASES = (
    ("math", "none"),
    ("sdpa", "none"),
    ("math", "selective"),
    ("sdpa", "selective"),
    ("sdpa", "full"),
    ("math", "full"),
)


def verify_memory(name: str, cfg: ModelConfig, *, toy_seq_len: int = 32, toy_batch: int = 2, **options) -> CheckResult:
    """`_verify_memory`, measured once per toy config within one `run_checks` (its `toy_cache`)."""
    cache = options.get("toy_cache")
    key = ("memory", small_config(cfg, toy_seq_len), toy_seq_len, toy_batch, activations_not_modelled(cfg))
    if cache is not None and key in cache:
        first, result = cache[key]
        note = f"{name}: the same toy config as {first}, measured once for both"
        return CheckResult("memory", name, result.headers, result.rows, result.ok, 0.0, [*result.notes, note])
    result = _verify_memory(name, cfg, toy_seq_len=toy_seq_len, toy_batch=toy_batch)
    if cache is not None:
        cache[key] = (name, result)
    return result


def _verify_memory(name: str, cfg: ModelConfig, *, toy_seq_len: int = 32, toy_batch: int = 2) -> CheckResult:
    """The `memory` check of `sizing verify`: on small_config(cfg) (same switches, toy size),
    activations for math / sdpa / full recompute, the KV cache of generate(), and weights,
    gradients and AdamW state after one step. The other checks' options (the FLOP check's
    seq_len and counter) do not apply and are ignored."""
    start = time.perf_counter()
    seq_len, batch = toy_seq_len, toy_batch
    small = small_config(cfg, seq_len)
    rows, notes, ok = [], [], True
    missing = activations_not_modelled(cfg)
    if missing:
        rows.append(["activations: not modelled", "", "", "", ", ".join(missing)])
        notes.append(f"activation bytes not compared: sizing.memory does not model {', '.join(missing)}")
    for impl, recompute in () if missing else ACTIVATION_CASES:
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
    kv = check_kv_cache(small, prompt=seq_len // 4, new_tokens=seq_len - seq_len // 4, batch=batch)
    ok &= kv.ok
    rows.append(
        [
            f"KV cache (generate, context {kv.prompt + kv.new_tokens})",
            kv.formula,
            kv.measured,
            kv.measured - kv.formula,
            "exact" if kv.ok else "MISMATCH",
        ]
    )
    states = check_model_states(small)
    ok &= states.ok
    for quantity, formula, measured in states.rows:
        rows.append([quantity, formula, measured, measured - formula, "exact" if formula == measured else "MISMATCH"])
    if torch.cuda.is_available() and small.sliding_window is None:
        cuda = check_cuda_memory(small)
        ok &= cuda.ok
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
    else:
        notes.append(
            "GPU max_memory_allocated check skipped: "
            + (
                "no CUDA device"
                if not torch.cuda.is_available()
                else "a windowed mask sends CUDA SDPA to another kernel"
            )
        )
    notes.append(
        f"{name} at toy size: d_model {small.d_model}, {small.n_layers} layers, {small.n_heads} heads / "
        f"{small.kv_heads} kv, T {seq_len}, batch {batch}, fp32 on CPU; tolerance {TOLERANCE:.0%} for "
        "activations, exact for the rest"
    )
    notes.append(
        f"AdamW also keeps {states.param_tensors} 4-byte `step` tensors ({states.step_bytes} bytes), "
        "bookkeeping outside the per-parameter formula"
    )
    return CheckResult(
        "memory",
        name,
        ["quantity", "formula", "measured", "difference", "relative"],
        rows,
        ok,
        time.perf_counter() - start,
        notes,
    )
