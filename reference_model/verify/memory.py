"""`sizing verify --memory`: the memory probes (memory_probe.py) on a toy-size model of each
config, as one CheckResult: saved activations for each attention path and recompute mode,
the KV cache from generate(), and weights, gradients and AdamW state.
"""

from __future__ import annotations

import time

from reference_model.model import small_config
from reference_model.probes import TOLERANCE, check_model_states
from reference_model.verify.check import CheckResult
from reference_model.verify.memory_checks import ACTIVATION_CASES, activation_rows, cuda_rows, kv_cache_row  # noqa: F401
from sizing.inputs import ModelConfig
from sizing.memory import activations_not_modelled


def verify_memory(name: str, cfg: ModelConfig, *, toy_seq_len: int = 32, toy_batch: int = 2, **options) -> CheckResult:
    """`_verify_memory`, measured once per toy config within one `run_checks` (its `toy_cache`)."""
    cache = options.get("toy_cache")
    key = memory_share_key(name, cfg, toy_seq_len=toy_seq_len, toy_batch=toy_batch)
    if cache is not None and key in cache:
        first, result = cache[key]
        note = f"{name}: the same toy config as {first}, measured once for both"
        return CheckResult("memory", name, result.headers, result.rows, result.ok, 0.0, [*result.notes, note])
    result = _verify_memory(name, cfg, toy_seq_len=toy_seq_len, toy_batch=toy_batch)
    if cache is not None:
        cache[key] = (name, result)
    return result


def memory_share_key(name: str, cfg: ModelConfig, *, toy_seq_len: int = 32, toy_batch: int = 2, **_options) -> tuple:
    """What the memory checks of two models can share: one toy-size measurement (the key of its
    cache in `verify_memory`). The parallel runner runs models with one key in one process, in order."""
    return ("memory", small_config(cfg, toy_seq_len), toy_seq_len, toy_batch, activations_not_modelled(cfg))


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
    else:
        ok &= activation_rows(small, seq_len, batch, rows, notes)
    ok &= kv_cache_row(small, seq_len, batch, rows)
    states = check_model_states(small)
    ok &= states.ok
    for quantity, formula, measured in states.rows:
        rows.append([quantity, formula, measured, measured - formula, "exact" if formula == measured else "MISMATCH"])
    ok &= cuda_rows(small, rows, notes)
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
