"""What one profile runs: the settings of `profile_training`, checked once when they are made.

Needs no torch: `sizing profile` builds and checks its settings before it imports torch, so
bad input gets its one line even where torch is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs.config import ModelConfig
from sizing.validate import (
    MAX_SEQ_LEN,
    SizingError,
    require_bool,
    require_choice,
    require_int,
    require_peak_tflops,
    show,
)
from sizing.vocabulary import RECOMPUTE_MODES, TRAINING_DTYPES

# The reference model's attention paths, named after torch (model.ATTN_IMPLS): "sdpa", the fused
# kernel (flash on CUDA; sizing's vocabulary calls it "flash"), and "math" (QK^T, softmax, AV).
ATTENTION_IMPLS: tuple[str, ...] = ("sdpa", "math")
DEVICES: tuple[str, ...] = ("cuda", "cpu")
MAX_SEED = 2**63 - 1  # torch.manual_seed takes a 64-bit seed


class ProfileError(SizingError):
    """A setting that cannot be profiled (no CUDA, does not fit, bad value): one line for the user."""


@dataclass(frozen=True)
class ProfileSettings:
    """One profile: b sequences of T tokens per step, `warmup` untimed then `steps` timed
    steps, the model built in `dtype` with `attention_impl`, checkpointing `recompute`,
    optionally torch.compile'd, on `device` ("cuda", "cuda:N" or "cpu"). `peak_tflops`
    overrides sizing's GPU table for the MFU; `seed` fixes the weights and the tokens."""

    seq_len: int
    micro_batch: int = 1
    steps: int = 10
    warmup: int = 3
    dtype: str = "bf16"
    attention_impl: str = "sdpa"
    compile: bool = False
    recompute: str = "none"
    device: str = "cuda"
    peak_tflops: float | None = None
    seed: int = 0

    def __post_init__(self):
        try:
            require_int("seq_len", self.seq_len, 1, MAX_SEQ_LEN)
            require_int("micro_batch", self.micro_batch)
            require_int("steps", self.steps)
            require_int("warmup", self.warmup, 0)
            require_choice("dtype", self.dtype, TRAINING_DTYPES)
            require_choice("attention_impl", self.attention_impl, ATTENTION_IMPLS)
            require_bool("compile", self.compile)
            require_choice("recompute", self.recompute, RECOMPUTE_MODES)
            if not isinstance(self.device, str) or self.device.split(":", 1)[0] not in DEVICES:
                raise SizingError(f"device ({show(self.device)}) must be one of: {', '.join(DEVICES)} (or cuda:N)")
            if self.peak_tflops is not None:
                require_peak_tflops("peak_tflops", self.peak_tflops)
            require_int("seed", self.seed, 0, MAX_SEED)
        except SizingError as exc:
            raise ProfileError(str(exc)) from None
        if self.compile and self.warmup < 1:
            raise ProfileError("--compile needs --warmup 1 or more (the first step compiles)")

    @property
    def tokens_per_step(self) -> int:
        return self.micro_batch * self.seq_len

    @property
    def on_cuda(self) -> bool:
        return self.device.startswith("cuda")

    def check_model(self, cfg: ModelConfig) -> None:
        """What the model itself rules out: a sequence longer than a learned position table."""
        if cfg.position == "learned" and self.seq_len > cfg.max_positions:
            raise ProfileError(
                f"--seq-len ({self.seq_len}) exceeds the learned position table (max_positions "
                f"{cfg.max_positions}); use a shorter --seq-len or --set max_positions={self.seq_len}"
            )
