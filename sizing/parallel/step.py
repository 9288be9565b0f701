"""Step time of a parallel layout and the GPU-hours of a run.

step = compute + exposed communication + pipeline bubble, where

* compute = the hardware FLOPs of the step on one GPU (model FLOPs plus recomputation,
  sizing.formulas.flops.flop_breakdown, split evenly over the world) / (peak x MFU). Here MFU is the
  efficiency of the compute itself (kernels), not of the whole step;
* exposed communication = per dimension max((1 - overlap) t, t - compute): a share `overlap`
  of it hides under compute, never more than the compute there is. Defaults: dp 1 (FSDP
  prefetch, Megatron's overlapped gradient reduce and parameter gather), cp 1 (ring attention
  sends the next K/V chunk while it computes on this one), tp, pp and ep 0 (on the critical
  path: each layer waits for its all-reduce, each stage for its input, each MoE layer for its
  tokens);
* bubble = compute x (p - 1)/(m v): the idle share (p - 1)/(m v + p - 1) of the pipelined step
  (Narayanan et al. 2021, eq. for the interleaved schedule; v = 1 is 1F1B).

The predicted MFU of the whole step, model FLOPs / (step x peak), is what a paper reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.inputs import GPU, ModelConfig
from sizing.parallel.comms import Collective
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.traffic import DIMENSIONS, seconds_by_dimension
from sizing.parallel.whole_flops import training_flop_breakdown
from sizing.training import SECONDS_PER_HOUR
from sizing.validate import SizingError, require_fraction, show

DEFAULT_OVERLAP: dict[str, float] = {"dp": 1.0, "tp": 0.0, "pp": 0.0, "cp": 1.0, "ep": 0.0}


def overlaps(given: dict[str, float] | None = None) -> dict[str, float]:
    """DEFAULT_OVERLAP with the given dimensions replaced (each a share in [0, 1])."""
    out = dict(DEFAULT_OVERLAP)
    if given is not None and not isinstance(given, dict):
        raise SizingError(f"overlap ({show(given)}) must be a dict of dimension -> share in [0, 1], e.g. {{'dp': 0.5}}")
    for dim, share in (given or {}).items():
        if dim not in DIMENSIONS:
            raise SizingError(f"overlap dimension ({dim!r}) must be one of: {', '.join(DIMENSIONS)}")
        if share != 0:
            require_fraction(f"overlap {dim}", share)
        out[dim] = float(share)
    return out


def exposed_seconds(seconds: float, overlap: float, compute_seconds: float) -> float:
    """What of `seconds` of communication is not hidden under compute."""
    return max((1.0 - overlap) * seconds, seconds - compute_seconds, 0.0)


def bubble_fraction(layout: ParallelLayout) -> float:
    """(p - 1)/(m v + p - 1): the share of a pipelined step a stage idles."""
    p, m, v = layout.pp, layout.micro_batches, layout.v
    return (p - 1) / (m * v + p - 1)


@dataclass(frozen=True)
class StepTime:
    model_flops_per_gpu: float
    hardware_flops_per_gpu: float
    peak_flops_per_second: float
    mfu: float
    compute_seconds: float
    comm_seconds: dict[str, float]
    exposed_seconds: dict[str, float]
    bubble_seconds: float
    overlap: dict[str, float] = field(default_factory=dict)

    @property
    def step_seconds(self) -> float:
        return self.compute_seconds + sum(self.exposed_seconds.values()) + self.bubble_seconds

    @property
    def predicted_mfu(self) -> float:
        return self.model_flops_per_gpu / (self.step_seconds * self.peak_flops_per_second)

    def to_dict(self) -> dict:
        return {
            "model_flops_per_gpu": self.model_flops_per_gpu,
            "hardware_flops_per_gpu": self.hardware_flops_per_gpu,
            "mfu_of_compute": self.mfu,
            "compute_seconds": self.compute_seconds,
            "comm_seconds": dict(self.comm_seconds),
            "exposed_comm_seconds": dict(self.exposed_seconds),
            "overlap": dict(self.overlap),
            "bubble_seconds": self.bubble_seconds,
            "step_seconds": self.step_seconds,
            "predicted_mfu": self.predicted_mfu,
        }


def step_time(
    cfg: ModelConfig,
    layout: ParallelLayout,
    seq_len: int,
    collectives: list[Collective],
    gpu: GPU,
    mfu: float,
    recompute: str = "none",
    attention: str = "full",
    dtype: str | None = None,
    overlap: dict[str, float] | None = None,
) -> StepTime:
    breakdown = training_flop_breakdown(cfg, seq_len, attention, recompute)
    sequences = layout.global_batch()
    model = breakdown.model_training * sequences / layout.world
    hardware = breakdown.training * sequences / layout.world
    peak = gpu.peak_flops_per_second(dtype or gpu.default_dtype)
    compute = hardware / (peak * mfu)
    shares = overlaps(overlap)
    comm = seconds_by_dimension(collectives)
    exposed = {dim: exposed_seconds(t, shares[dim], compute) for dim, t in comm.items()}
    bubble = compute * (layout.pp - 1) / (layout.micro_batches * layout.v)
    return StepTime(model, hardware, peak, mfu, compute, comm, exposed, bubble, shares)


def run_gpu_hours(step: StepTime, layout: ParallelLayout, seq_len: int, tokens: int) -> float:
    """GPU-hours of a run of `tokens` tokens: steps x step time x GPUs."""
    steps = tokens / (layout.global_batch() * seq_len)
    return steps * step.step_seconds * layout.world / SECONDS_PER_HOUR
