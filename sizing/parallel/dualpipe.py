"""What a DualPipe rank holds (DeepSeek-V3 Technical Report, arXiv:2412.19437 sec. 3.2.1 and
Table 2; deepseek-ai/DualPipe). The model is cut into pp stages and fed from both ends: rank s
holds stage s for the micro-batches that enter at rank 0 and stage p - 1 - s for those that
enter at rank p - 1 (examples/example_dualpipe.py: `local_full_modules =
nn.Sequential(full_modules[rank], full_modules[pp_size - 1 - rank])`), "two copies of the
model parameters" over the pipeline (Table 2: 2x parameters per device). Rank 0 (and p - 1)
thus holds the embedding and the output head together, which lets the multi-token-prediction
module share them with the main model (sec. 3.2.3): no extra copy of either is counted.

Micro-batches in flight (dualpipe/dualpipe.py `step`, ranks numbered by h = min(s, p - 1 - s),
phase 0 being stage h, the direction in which the rank is in the pipeline's first half): the
warm-up runs 2 (p/2 - h - 1) + h + 1 = p - h - 1 forwards of stage h and h + 1 of stage
p - 1 - h; each steady-state pair then runs a forward before the backward it overlaps, so the
peak is p - h of stage h with h + 1 of the other, or p - h - 1 with h + 2: p + 1 stage-sized
micro-batches in all (Table 2: "PP + 1"), each direction at most m / 2. DualPipe needs an even
pp and m >= 2 pp micro-batches (its `assert num_chunks >= num_ranks * 2`).
"""

from __future__ import annotations

from sizing.parallel.layout import ParallelLayout
from sizing.validate import SizingError


def check_dualpipe(layout: ParallelLayout) -> None:
    """One clear line where DualPipe cannot run the layout."""
    if layout.pp < 2 or layout.pp % 2:
        raise SizingError(f"schedule dualpipe needs an even pp of at least 2 (got pp {layout.pp})")
    if layout.v != 1:
        raise SizingError(f"schedule dualpipe holds one stage per direction: v must be 1 (got v {layout.v})")
    if layout.micro_batches < 2 * layout.pp:
        raise SizingError(
            f"schedule dualpipe needs at least 2 x pp = {2 * layout.pp} micro-batches (got {layout.micro_batches})"
        )


def dualpipe_stages(layout: ParallelLayout, rank: int) -> tuple[int, int]:
    """(the stage of the rank's first-half direction, its mirror): (h, p - 1 - h), h = min(s, p - 1 - s)."""
    h = min(rank, layout.pp - 1 - rank)
    return h, layout.pp - 1 - h


def dualpipe_in_flight(layout: ParallelLayout, rank: int) -> tuple[tuple[int, int], ...]:
    """The two peaks' (micro-batches of stage h, of stage p - 1 - h) in flight (module docstring)."""
    p, half = layout.pp, layout.micro_batches // 2
    h = min(rank, p - 1 - rank)
    return ((min(p - h, half), min(h + 1, half)), (min(p - h - 1, half), min(h + 2, half)))


def dualpipe_ranks(layout: ParallelLayout) -> range:
    """One rank of each pair (s, p - 1 - s): the pair holds the same stages."""
    return range(layout.pp // 2)
