"""What sizing predicts for a profiled step, before anything is measured: the model FLOPs of a
step, the GPU-hours of the preset's published run at a measured MFU, and the bytes the
reference model's own attention path saves beyond the formula (the byte formulas themselves
are sizing.memory.step_peak's)."""

from __future__ import annotations

from reference_model.probes import reference_sdpa_extras, reference_selective_extras
from sizing import ATTENTION_CONVENTIONS, DEFAULT_MFU
from sizing.formulas import flop_breakdown, model_training_flops
from sizing.inputs import ModelConfig, Preset
from sizing.memory import dtype_bytes
from sizing.training import gpu_hours


def model_flops_per_step(cfg: ModelConfig, seq_len: int, micro_batch: int, recompute: str = "none") -> dict:
    """Model FLOPs (forward + backward matmuls) of one step of b sequences, per attention
    convention, and `hardware_full`: what the hardware runs with recomputation (full convention)."""
    tokens_per_step = micro_batch * seq_len
    out = {c: model_training_flops(cfg, seq_len, tokens_per_step, c) for c in ATTENTION_CONVENTIONS}
    out["hardware_full"] = micro_batch * flop_breakdown(cfg, seq_len, "full", recompute).training
    return out


def reference_extras_bytes(
    cfg: ModelConfig, seq_len: int, micro_batch: int, dtype: str, attn_impl: str, recompute: str
) -> int:
    """Bytes the reference model's sdpa path saves beyond the fused-kernel formula, all layers
    (memory_probe.reference_sdpa_extras: GQA's repeated K/V, a window mask, partial-rotary copy).
    0 with the math path (the formula's `math` terms are the reference path) or with full
    recompute (blocks keep only their input); with selective recompute, the position indices
    the checkpointed core keeps (memory_probe.reference_selective_extras)."""
    if recompute == "selective":
        return sum(cfg.n_layers * r.per_layer + r.outside for r in reference_selective_extras(cfg, seq_len))
    if attn_impl != "sdpa" or recompute == "full":
        return 0
    element_bytes = dtype_bytes(1, dtype)  # the model is built in the dtype
    return cfg.n_layers * sum(r.per_layer for r in reference_sdpa_extras(cfg, seq_len, micro_batch, element_bytes))


def published_run_projection(
    preset: Preset | None,
    peak_flops_per_second: float | None,
    mfu: float | None,
    measured_config: ModelConfig,
    measured_seq_len: int,
) -> dict | None:
    """GPU-hours the calculator predicts for the preset's published run (its own config, context
    and tokens, full attention, no recompute) at the measured MFU, and at the default MFU."""
    if preset is None or not preset.training_tokens or peak_flops_per_second is None or not mfu:
        return None
    flops = model_training_flops(preset.config, preset.context, preset.training_tokens)
    same = measured_config == preset.config and measured_seq_len == preset.context
    return {
        "preset": preset.name,
        "tokens": preset.training_tokens,
        "seq_len": preset.context,
        "model_flops": flops,
        "mfu": mfu,
        "gpu_hours": gpu_hours(flops, peak_flops_per_second, mfu),
        "default_mfu": DEFAULT_MFU,
        "gpu_hours_at_default_mfu": gpu_hours(flops, peak_flops_per_second, DEFAULT_MFU),
        "measured_on_same_shape": same,
        "note": "MFU measured on the published shape"
        if same
        else (
            f"MFU measured on the profiled shape (T {measured_seq_len}"
            + ("" if measured_config == preset.config else ", config changed by --set")
            + f"), applied to "
            f"{preset.name} at T {preset.context}"
        ),
    }
