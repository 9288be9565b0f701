"""Will it fit, in three levels: fits, tight, does not fit.

The tensors of a training step are counted byte by byte (states, activations, the working set)
and the runtime reserve (CUDA context, NCCL buffers: runtime.py) is taken off the GPU. What a run
holds beyond that is not knowable ahead of it: the caching allocator keeps freed blocks
reserved and fragments them, NCCL and CUDA graphs take buffers by their own settings, and a
framework frees some tensors earlier or later than the peak counted here. GMLake (Guo et al.,
ASPLOS 2024, arXiv:2401.08156) measured that memory on eight LLM training and fine-tuning runs on
A100 80GB: PyTorch's caching allocator held 9.2 GB on average (up to 25 GB) that virtual-memory
stitching gave back, 15% fragmentation on average (up to 33%). So within ALLOCATOR_SHARE of the
GPU's capacity, on either side, the answer is "tight" rather than yes or no:

* fits: headroom (GPU - reserve - tensors) of at least the band;
* tight: headroom within +-band: "tight (X GiB headroom)" or "tight (over by X GiB)" - a run
  like it may fit or fail with its allocator settings (expandable_segments), NCCL buffers and
  what the framework frees early;
* does not fit: over by more than the band.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import format_gib

ALLOCATOR_GB_MEASURED = 9.2  # GMLake: average memory the caching allocator held beyond the tensors
GPU_GB_MEASURED = 80  # on A100 80GB
ALLOCATOR_SHARE = ALLOCATOR_GB_MEASURED / GPU_GB_MEASURED  # 0.115 of a GPU's capacity, either side
ALLOCATOR_SOURCE = "GMLake, arXiv:2401.08156: 9.2 GB of allocator fragmentation on average on 80 GB GPUs"
VERDICTS: tuple[str, ...] = ("fits", "tight", "does not fit")


@dataclass(frozen=True)
class FitVerdict:
    level: str  # one of VERDICTS
    headroom_bytes: int  # GPU - reserve - tensors; negative when over
    band_bytes: int  # the allocator's unknowables, either side

    @property
    def may_fit(self) -> bool:
        """Not a clear "does not fit" (the exit code is 3 only then)."""
        return self.level != "does not fit"

    def describe(self) -> str:
        """One line: 'fits (X GiB headroom)', 'tight (X GiB headroom, ...)', 'tight (over by X GiB,
        ...)' or 'does not fit (over by X GiB, ...)'."""
        band = (
            f"within the {format_gib(self.band_bytes)} the allocator may hold beyond the tensors ({ALLOCATOR_SOURCE})"
        )
        if self.level == "fits":
            return f"fits ({format_gib(self.headroom_bytes)} headroom)"
        if self.level == "tight" and self.headroom_bytes >= 0:
            return f"tight ({format_gib(self.headroom_bytes)} headroom, {band})"
        over = f"over by {format_gib(-self.headroom_bytes)}"
        if self.level == "tight":
            return f"tight ({over}, {band}: it may still run)"
        return f"does not fit ({over}, more than the {format_gib(self.band_bytes)} band of the allocator's unknowables)"

    def to_dict(self) -> dict:
        return {"verdict": self.level, "headroom_bytes": self.headroom_bytes, "verdict_band_bytes": self.band_bytes}


def allocator_band_bytes(capacity_bytes: int) -> int:
    """ALLOCATOR_SHARE of the GPU's capacity, in whole bytes."""
    return round(ALLOCATOR_SHARE * capacity_bytes)


def fit_verdict(tensors_bytes: int, reserve_bytes: int, capacity_bytes: int) -> FitVerdict:
    """The three-level answer for a per-GPU peak of `tensors_bytes` with `reserve_bytes` of
    runtime reserve on a GPU of `capacity_bytes`."""
    headroom = capacity_bytes - reserve_bytes - tensors_bytes
    band = allocator_band_bytes(capacity_bytes)
    if headroom >= band:
        level = "fits"
    elif headroom > -band:
        level = "tight"
    else:
        level = "does not fit"
    return FitVerdict(level, headroom, band)
