"""The per-GPU constants of the step-time model, read once from sizing/data/step_time.json.

Each entry holds what the step-time model needs beyond sizing/inputs/hardware.py's peaks and
bandwidths: SM count and GEMM output tile (for tile and wave quantization), the achievable
share of the dense peak on large GEMMs per dtype (a cited measurement, not a fit), the
flash-attention kernel shares, the achievable HBM share, the collective bus-bandwidth shares
and per-call latencies of NVLink and the network. Every number's source sits beside it in
the JSON file and in docs/step-time.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sizing.validate import SizingError

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "step_time.json"


@dataclass(frozen=True)
class GpuConstants:
    key: str
    sms: int
    tile: tuple[int, int]
    gemm_fraction: dict
    flash_forward: float
    flash_backward: float
    hbm_fraction: float
    nvlink_fraction: float
    network_fraction: float
    nvlink_latency_s: float
    network_latency_s: float
    flash2_forward: float = 0.0  # FlashAttention-2, what torch's SDPA runs (the best kernel on Ampere)
    flash2_backward: float = 0.0
    tdp_w: float = 0.0  # board power the GEMM share was measured at (0: no cap modelled)

    def clock_fraction(self, power_limit_w: float | None) -> float:
        """Compute clock under a power cap relative to the uncapped one: (cap / tdp)^(1/3), from
        dynamic power ~ V^2 f with V ~ f (sizing/data/step_time.json, power_cap_source)."""
        if not power_limit_w or not self.tdp_w or power_limit_w >= self.tdp_w:
            return 1.0
        return (power_limit_w / self.tdp_w) ** (1 / 3)

    def gemm_share(self, dtype: str) -> float:
        if dtype not in self.gemm_fraction:
            raise SizingError(
                f"no achievable GEMM share for {dtype} on {self.key}; measured for: {', '.join(self.gemm_fraction)}"
            )
        return self.gemm_fraction[dtype]


@dataclass(frozen=True)
class Stack:
    """What a training software stack does that changes time: overlap, reduction dtype, dropout,
    which kernels it fuses, which flash kernel it calls, what selective recompute means to it."""

    key: str
    dp_overlap: bool
    grad_bytes: int
    dropout: bool
    grad_accumulation_bytes: int  # per parameter per micro-batch (0: fused into the wgrad GEMM)
    elementwise: str = "fused"  # fused (one kernel per op) or eager (ATen composite paths, counted)
    flash: str = "best"  # best: the GPU's fastest flash kernel; flash2: FlashAttention-2 (torch SDPA)
    selective: str = "attention"  # attention (Korthikanti) or op (torchtitan: every other mm saved)
    kernel_launch_s: float = 0.0  # host cost per kernel launch (eager); 0 where launches are hidden
    tied_grad_allreduce: bool = False  # DeepSpeed's pipeline engine: tied embedding grads after the flush


@cache
def _data() -> dict:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


@cache
def gpu_constants(gpu_key: str) -> GpuConstants:
    data = _data()
    key = data["aliases"].get(gpu_key, gpu_key)
    if key not in data["gpus"]:
        known = sorted(set(data["gpus"]) | set(data["aliases"]))
        raise SizingError(
            f"gpu ({gpu_key}) has no step-time constants; modelled: {', '.join(known)} (use --mfu for a constant "
            "efficiency on other GPUs)"
        )
    e = data["gpus"][key]
    return GpuConstants(
        gpu_key,
        e["sms"],
        tuple(e["tile"]),
        dict(e["gemm_fraction"]),
        e["attention"]["flash_forward"],
        e["attention"]["flash_backward"],
        e["hbm_fraction"],
        e["nvlink_fraction"],
        e["network_fraction"],
        e["nvlink_latency_us"] * 1e-6,
        e["network_latency_us"] * 1e-6,
        e["attention"]["flash2_forward"],
        e["attention"]["flash2_backward"],
        e["tdp_w"],
    )


def has_constants(gpu_key: str) -> bool:
    data = _data()
    return data["aliases"].get(gpu_key, gpu_key) in data["gpus"]


STACKS: tuple[str, ...] = (
    "megatron-2021",
    "megatron-deepspeed",
    "megatron-core",
    "fsdp",
    "composer",
    "torchtitan-eager",
    "torchtitan-compile",
)
DEFAULT_STACK = "megatron-core"


@cache
def stack(key: str) -> Stack:
    data = _data()["stacks"]
    if key not in data:
        raise SizingError(f"stack ({key!r}) must be one of: {', '.join(data)}")
    e = data[key]
    return Stack(
        key,
        e["dp_overlap"],
        e["grad_bytes"],
        e["dropout"],
        e["grad_accumulation_bytes"],
        e["elementwise"],
        e["flash"],
        e["selective"],
        e["kernel_launch_us"] * 1e-6,
        e["tied_grad_allreduce"],
    )
