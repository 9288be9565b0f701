"""Training compute and what it costs: FLOPs -> GPU-seconds at an MFU -> hours, days, dollars.

GPU-seconds = FLOPs / (peak FLOP/s x MFU). MFU (PaLM, Chowdhery et al. 2022) is the share
of the peak that the model's own FLOPs use; recomputation is not model FLOPs, so pass the
FLOPs that match the MFU you assume.
"""

from __future__ import annotations

from dataclasses import dataclass

from .validate import MAX_COUNT, MAX_PRICE, MAX_TOKENS, require_fraction, require_int, require_number
from .vocabulary import DEFAULT_GPU, DEFAULT_MFU

SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24


def training_flops(flops_per_token: int | float, tokens: int) -> int | float:
    return flops_per_token * tokens


def gpu_seconds(flops: float, peak_flops_per_second: float, mfu: float) -> float:
    return flops / (peak_flops_per_second * mfu)


def gpu_hours(flops: float, peak_flops_per_second: float, mfu: float) -> float:
    return gpu_seconds(flops, peak_flops_per_second, mfu) / SECONDS_PER_HOUR


def wall_clock_days(gpu_hours_total: float, num_gpus: int) -> float:
    return gpu_hours_total / num_gpus / HOURS_PER_DAY


def cost_usd(gpu_hours_total: float, price_per_gpu_hour: float | None) -> float | None:
    return None if price_per_gpu_hour is None else gpu_hours_total * price_per_gpu_hour


def implied_mfu(flops: float, gpu_hours_total: float, peak_flops_per_second: float) -> float:
    """The MFU a published run implies: its FLOPs over what its GPU-hours could do at peak."""
    return flops / (gpu_hours_total * SECONDS_PER_HOUR * peak_flops_per_second)


@dataclass(frozen=True)
class TrainingRun:
    """The workload: how many tokens on what hardware, at what utilisation."""

    tokens: int
    gpu: str = DEFAULT_GPU
    dtype: str | None = None  # None: the GPU's bf16 (else its first listed) rate
    mfu: float = DEFAULT_MFU
    num_gpus: int = 1
    price_per_gpu_hour: float | None = None

    def __post_init__(self):
        require_int("tokens", self.tokens, maximum=MAX_TOKENS)
        require_fraction("mfu", self.mfu)
        require_int("num_gpus", self.num_gpus, maximum=MAX_COUNT)
        if self.price_per_gpu_hour is not None:
            require_number(
                "price_per_gpu_hour",
                self.price_per_gpu_hour,
                0,
                MAX_PRICE,
                what=f"a number of USD per GPU-hour in [0, {MAX_PRICE:g}]",
            )
