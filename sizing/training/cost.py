"""Training compute and what it costs: FLOPs -> GPU-seconds at an MFU -> hours, days, dollars.

GPU-seconds = FLOPs / (peak FLOP/s x MFU). MFU (PaLM, Chowdhery et al. 2022) is the share
of the peak that the model's own FLOPs use; recomputation is not model FLOPs, so pass the
FLOPs that match the MFU you assume.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import get_gpu
from sizing.validate import MAX_COUNT, MAX_TOKENS, require_int, require_mfu, require_price
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU

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
        check_hardware_options(self.gpu, self.dtype, self.mfu, self.num_gpus, self.price_per_gpu_hour)


def check_hardware_options(
    gpu: str, dtype: str | None, mfu: float, num_gpus: int, price_per_gpu_hour: float | None
) -> None:
    """The run's hardware fields, checked whether or not there are tokens to cost: an unknown
    GPU, a dtype it has no rate for, an MFU outside (0, 1] or a price that is not a number is
    a SizingError, never accepted quietly because no training cost was asked for."""
    gpu_entry = get_gpu(gpu)
    if dtype is not None:
        gpu_entry.peak_flops_per_second(dtype)
    require_mfu("mfu", mfu)
    require_int("num_gpus", num_gpus, maximum=MAX_COUNT)
    if price_per_gpu_hour is not None:
        require_price("price_per_gpu_hour", price_per_gpu_hour)
