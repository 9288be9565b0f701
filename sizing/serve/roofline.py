"""The roofline: time of a forward from its FLOPs and bytes on one GPU, the tensor-parallel
all-reduce time, the ridge point, and the decode time summed over every step of a request.

    compute seconds   = FLOPs / (peak x compute efficiency)
    memory seconds    = bytes / (HBM bandwidth x bandwidth efficiency)
    step seconds      = max(compute, memory) + TP all-reduce seconds + the engine's fixed cost
    bound             = "compute" or "memory", whichever term is larger

Williams, Waterman & Patterson 2009 (the roofline model); the ridge point is the arithmetic
intensity peak / bandwidth (FLOPs per byte) at which the two terms are equal. Kernel launch,
scheduling and sampling are one fixed cost per forward (the GPU's calibrated step overhead,
sizing/serve/calibration.py; 0 for the bound): the time is a lower bound at efficiency 1 and
overhead 0, and an estimate at the stated efficiencies. Each all-reduce also pays a fixed
latency (tp_allreduce_latency_seconds), on the critical path of every forward.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sizing.parallel import ring_all_reduce_seconds
from sizing.validate import require_int


def compute_seconds(flops: float, peak_flops_per_second: float, efficiency: float) -> float:
    return flops / (peak_flops_per_second * efficiency)


def memory_seconds(n_bytes: float, bytes_per_second: float, efficiency: float) -> float:
    return n_bytes / (bytes_per_second * efficiency)


def tp_ring_allreduce_seconds(n_bytes: int, tp: int, link_bytes_per_second: float, efficiency: float) -> float:
    """Ring all-reduce of `n_bytes` over tp ranks (2(n-1)/n of the buffer per rank; the training
    collectives' own formula, sizing/parallel/comms.py) at the per-direction link bandwidth x
    efficiency. 0 for tp = 1."""
    require_int("tp", tp)
    return ring_all_reduce_seconds(n_bytes, tp, link_bytes_per_second * efficiency / 1e9)


# NCCL's own cost model for a ring all-reduce in the low-latency (LL) protocol, the one it picks
# for the small buffers of a decode step (NVIDIA/nccl src/graph/tuning.cc: baseLat Ring/LL
# 3.6 µs; hwLat NVLink Ring/LL 0.47 µs per step; a ring all-reduce takes 2(n - 1) steps).
NCCL_RING_LL_BASE_SECONDS = 3.6e-6
NCCL_NVLINK_RING_LL_STEP_SECONDS = 0.47e-6


def tp_allreduce_latency_seconds(tp: int) -> float:
    """The fixed cost of one ring all-reduce over tp ranks on NVLink: base + 2(tp - 1) steps x
    the per-step latency (NCCL's tuning model); 10.18 µs at tp 8, 0 at tp 1."""
    require_int("tp", tp)
    if tp == 1:
        return 0.0
    return NCCL_RING_LL_BASE_SECONDS + 2 * (tp - 1) * NCCL_NVLINK_RING_LL_STEP_SECONDS


def tp_allreduces_per_layer(parallel_block: bool) -> int:
    """Megatron-LM tensor parallelism (Shoeybi et al. 2019): one all-reduce after the attention
    output projection and one after the MLP down projection; a parallel block (GPT-J) sums both
    branches before one all-reduce."""
    return 1 if parallel_block else 2


@dataclass(frozen=True)
class StepOverhead:
    """The engine's cost of one forward outside the roofline: kernel launches and their gaps,
    scheduling, sampling. Per layer: each layer launches the same kernels (norms, GEMMs,
    attention, all-reduces), so a prefill forward pays `prefill` and a decode (or mixed) step
    `step` for every layer it runs; each sequence in the forward adds `per_sequence`. Zero for the
    bound; the calibrated values are in sizing/data/serve_efficiency.json (calibration.py)."""

    prefill: float = 0.0  # seconds per layer of a prefill forward
    step: float = 0.0  # seconds per layer of a decode or mixed step
    per_sequence: float = 0.0

    def seconds(self, sequences: int, prefill: bool = False, layers: int = 1) -> float:
        return (self.prefill if prefill else self.step) * layers + self.per_sequence * sequences

    def to_dict(self) -> dict:
        return {
            "prefill_forward_seconds_per_layer": self.prefill,
            "decode_step_seconds_per_layer": self.step,
            "per_sequence_seconds": self.per_sequence,
        }


NO_OVERHEAD = StepOverhead()
GPUS_PER_NODE = 8  # one NVLink domain (DGX/HGX nodes of 8): tensor parallelism past it crosses the network


@dataclass(frozen=True)
class Roofline:
    """One forward on one GPU: its work, its two times and the bound."""

    flops: float  # per GPU
    bytes: float  # per GPU
    compute_seconds: float
    memory_seconds: float
    comm_seconds: float
    overhead_seconds: float = 0.0  # the engine's fixed cost of one forward (calibration.py)

    @property
    def seconds(self) -> float:
        return max(self.compute_seconds, self.memory_seconds) + self.comm_seconds + self.overhead_seconds

    @property
    def bound(self) -> str:
        return "compute" if self.compute_seconds >= self.memory_seconds else "memory"

    @property
    def arithmetic_intensity(self) -> float:
        """FLOPs per byte read."""
        return self.flops / self.bytes if self.bytes else float("inf")

    def to_dict(self) -> dict:
        return {
            "seconds": self.seconds,
            "compute_seconds": self.compute_seconds,
            "memory_seconds": self.memory_seconds,
            "tp_allreduce_seconds": self.comm_seconds,
            "step_overhead_seconds": self.overhead_seconds,
            "bound": self.bound,
            "arithmetic_intensity_flops_per_byte": self.arithmetic_intensity if self.bytes else None,
        }


def ridge_intensity(peak_flops_per_second: float, bytes_per_second: float, compute_eff: float, bw_eff: float) -> float:
    """FLOPs per byte at which compute and memory time are equal (the roofline's ridge point)."""
    return (peak_flops_per_second * compute_eff) / (bytes_per_second * bw_eff)


def smallest_compute_bound_batch(step_at_batch: Callable[[int], Roofline], limit: int = 1 << 24) -> int | None:
    """The smallest batch whose step is compute-bound (doubling, then bisection: compute time
    grows with b faster than memory time once the weights are amortised); None up to `limit`
    (a step whose bytes grow as fast as its FLOPs, e.g. attention over a long cache, never turns)."""
    if step_at_batch(1).bound == "compute":
        return 1
    lo, hi = 1, 2
    while step_at_batch(hi).bound != "compute":
        if hi >= limit:
            return None
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if step_at_batch(mid).bound == "compute" else (mid, hi)
    return hi


def sum_of_steps(step_seconds: Callable[[int], tuple[float, float, float]], first: int, last: int) -> float:
    """Σ over k = first..last of max(c(k), m(k)) + a(k), where step_seconds(k) = (c, m, a) are
    affine in k (compute, memory and all-reduce seconds of a decode step attending k keys).
    Exact: c - m changes sign at most once on the range, so each side is an arithmetic series;
    two evaluations fix each line."""
    if last < first:
        return 0.0
    c0, m0, a0 = step_seconds(first)
    if last == first:
        return max(c0, m0) + a0
    c1, m1, a1 = step_seconds(first + 1)
    dc, dm, da = c1 - c0, m1 - m0, a1 - a0

    def series(lo: int, hi: int, v0: float, dv: float) -> float:  # Σ_{k=lo}^{hi} v0 + dv·(k - first)
        n = hi - lo + 1
        return n * v0 + dv * ((lo - first) + (hi - first)) * n / 2 if n > 0 else 0.0

    total = series(first, last, a0, da)
    d0, dd = c0 - m0, dc - dm  # c - m at k is d0 + dd·(k - first)
    crossing = first - d0 / dd if dd != 0 else math.inf  # c = m there
    if not math.isfinite(crossing):  # parallel lines (or a slope too small to cross in range)
        return total + (series(first, last, c0, dc) if d0 >= 0 else series(first, last, m0, dm))
    if dd > 0:  # memory-bound below the crossing, compute-bound from it on
        split = min(last + 1, max(first, math.ceil(crossing)))
        return total + series(first, split - 1, m0, dm) + series(split, last, c0, dc)
    split = min(last, max(first - 1, math.floor(crossing)))  # compute-bound up to the crossing
    return total + series(first, split, c0, dc) + series(split + 1, last, m0, dm)
