"""The per-GPU constants of the step-time model, read once from sizing/data/step_time.json.

Each entry holds what the step-time model needs beyond sizing/hardware.py's peaks and
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

from ..validate import SizingError

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

    def gemm_share(self, dtype: str) -> float:
        if dtype not in self.gemm_fraction:
            raise SizingError(
                f"no achievable GEMM share for {dtype} on {self.key}; measured for: {', '.join(self.gemm_fraction)}"
            )
        return self.gemm_fraction[dtype]


@dataclass(frozen=True)
class Stack:
    """What a training software stack does that changes time (overlap, reduction dtype, dropout)."""

    key: str
    dp_overlap: bool
    grad_bytes: int
    dropout: bool
    grad_accumulation_bytes: int  # per parameter per micro-batch (0: fused into the wgrad GEMM)


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
    )


def has_constants(gpu_key: str) -> bool:
    data = _data()
    return data["aliases"].get(gpu_key, gpu_key) in data["gpus"]


STACKS: tuple[str, ...] = ("megatron-2021", "megatron-deepspeed", "megatron-core", "fsdp")
DEFAULT_STACK = "megatron-core"


@cache
def stack(key: str) -> Stack:
    data = _data()["stacks"]
    if key not in data:
        raise SizingError(f"stack ({key!r}) must be one of: {', '.join(data)}")
    e = data[key]
    return Stack(key, e["dp_overlap"], e["grad_bytes"], e["dropout"], e["grad_accumulation_bytes"])
