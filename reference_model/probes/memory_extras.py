"""Named byte differences between what the reference model saves for backward and what
sizing.memory's formulas count, so that the memory check can add them to the formula (or
name them as the remainder) instead of widening its tolerance:

  reference_sdpa_extras       what the reference `sdpa` (flash) path saves beyond a fused kernel:
                              K and V repeated to h heads before the kernel; with a window shorter
                              than T, the (T, T) mask the kernel converts to an additive one; with
                              partial rotary, a copy of the kernel's output;
  reference_selective_extras  what its selective recomputation keeps beyond the formula;
  cpu_remainders              where CPU kernels save in another dtype than CUDA, which the formula
                              follows (in bf16 the CPU LayerNorm keeps mean/rstd in bf16, not fp32).

Pure arithmetic on the config (no torch): reference_model/profile/run.py uses the first two too.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing import memory as M
from sizing.inputs import ModelConfig


@dataclass(frozen=True)
class Remainder:
    """A named difference between the model's saved bytes and sizing's formula."""

    what: str
    per_layer: int  # bytes per block
    outside: int  # bytes outside the blocks


def reference_sdpa_extras(cfg: ModelConfig, seq_len: int, batch: int, activation_bytes: int) -> list[Remainder]:
    """What the reference model's sdpa path saves beyond a fused kernel (sizing's `flash`):
    these are properties of reference_model/model/gpt.py, not of attention, so they are not in
    the formula; the check adds them to it before the 2% comparison."""
    b, T, a, h, dh = batch, seq_len, activation_bytes, cfg.n_heads, cfg.d_head
    extras = []
    if cfg.kv_heads != h:
        extras.append(
            Remainder(
                f"K and V repeated from h_kv = {cfg.kv_heads} to h = {h} heads before the kernel "
                "(repeat_interleave): 2.b.T.(h - h_kv).d_h.a",
                2 * b * T * (h - cfg.kv_heads) * dh * a,
                0,
            )
        )
    if cfg.sliding_window is not None and cfg.sliding_window < T:
        extras.append(
            Remainder("the boolean window mask, converted by the kernel to an additive T.T.a mask", T * T * a, 0)
        )
    if cfg.position == "rope" and cfg.rotary_dim < cfg.d_head:
        extras.append(
            Remainder(
                "partial rotary: torch.cat leaves q (b, h, T, d_h)-contiguous, the kernel's output "
                "follows, so out.transpose(1, 2).reshape copies it for the o input: b.T.h.d_h.a",
                b * T * h * dh * a,
                0,
            )
        )
    return extras


def reference_selective_extras(cfg: ModelConfig, seq_len: int) -> list[Remainder]:
    """What the reference model's selective recomputation keeps beyond the formula: the
    position indices (T int64, shared by every layer) that the checkpointed attention core
    needs to rebuild its mask. With learned positions the embedding saves them anyway."""
    if cfg.position == "learned":
        return []
    return [
        Remainder(
            "position indices kept by the checkpointed attention core to rebuild its mask: T.8 (int64), "
            "once for all layers",
            0,
            seq_len * 8,
        )
    ]


def cpu_remainders(
    cfg: ModelConfig, seq_len: int, batch: int, activation_bytes: int, recompute: str
) -> list[Remainder]:
    """Where the CPU kernels save in another dtype than the formula (which follows CUDA)."""
    if cfg.norm != "layernorm" or activation_bytes == M.FP32_BYTES:
        return []
    per_norm = -2 * batch * seq_len * (M.FP32_BYTES - activation_bytes)
    in_blocks = 0 if recompute == "full" else cfg.norms_per_block * per_norm
    return [
        Remainder(
            "LayerNorm mean/rstd: the CPU kernel keeps them in the input dtype (fp32 on CUDA, as the "
            "formula counts): -2.b.T.(4 - a) per LayerNorm",
            in_blocks,
            per_norm * (cfg.final_norm + cfg.embedding_norm),
        )
    ]
