"""Pipeline stages and schedule: how many layers each stage holds, and the step time of a
pipeline whose stages take different times per micro-batch.

Stage split (`stage_split`): L / pp layers each when pp divides L; otherwise the middle stages
take ceil(L / pp) and the first and last share the rest (Llama 3: 126 = 7 + 14 x 8 + 7 over 16
stages, which leaves room for the embedding on the first and the lm_head and loss on the last;
BLOOM: 70 = 5 + 10 x 6 + 5 over 12); an explicit split (`--stage-layers 7,8,...,7`) overrides.

Schedule time with per-micro-batch stage times t_i (forward + backward + recompute + p2p):
  1F1B (v = 1):        (m - 1) max t + sum t
  interleaved (v):      m max t + (sum t - max t) / v
Equal stages give Narayanan et al. 2021's (m + (p - 1)/v) t, the bubble (p - 1)/(m v) of the
ideal time. With uneven stages the slowest stage sets the steady state and every stage's
time is paid once in the fill and drain.

Schedules that split the backward into its input-gradient part B and weight-gradient part W,
and fill the bubble with W (the bubbles as DeepSeek-V3's Table 2 gives them, arXiv:2412.19437,
F a forward chunk, B a full backward chunk, F&B a forward and a backward chunk overlapped):
  zero-bubble (ZB1P, Qi et al. 2023, arXiv:2401.10241; DeepSeek-V2's): (p - 1)(F + B - 2W)
  dualpipe (DeepSeek-V3, bidirectional):                            (p/2 - 1)(F&B + B - 3W)
With t = F + B per micro-batch, F = t/3 (the forward is a third of a block's GEMM work) and
W = w t (the weight-gradient GEMMs, a third of the stage's GEMM time), F&B = t (the pair's
computation; what it overlaps is communication): zero-bubble pays (1 - 2w) of 1F1B's fill and
drain, dualpipe (p/2 - 1)/(p - 1) (5/3 - 3w) of it.
"""

from __future__ import annotations

from functools import lru_cache

from sizing.validate import SizingError
from sizing.vocabulary import ceil_div


def stage_split(n_layers: int, pp: int, given: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Layers per pipeline stage (see the module docstring)."""
    if given is not None:
        if len(given) != pp:
            text = ",".join(map(str, given))
            raise SizingError(f"stage_layers ({text}) must list {pp} stages (pp), got {len(given)}")
        if any(n < 1 for n in given) or sum(given) != n_layers:
            raise SizingError(
                f"stage_layers ({','.join(map(str, given))}) must be positive and sum to n_layers ({n_layers})"
            )
        return tuple(given)
    if pp > n_layers:
        raise SizingError(f"pp ({pp}) must be at most n_layers ({n_layers})")
    if n_layers % pp == 0:
        return (n_layers // pp,) * pp
    per = ceil_div(n_layers, pp)
    rest = n_layers - per * (pp - 2)
    if pp >= 2 and 2 <= rest <= 2 * per - 1:
        first = rest // 2
        return (first,) + (per,) * (pp - 2) + (rest - first,)
    base, extra = divmod(n_layers, pp)  # balanced: the last `extra` stages take one more
    return tuple(base + (1 if i >= pp - extra else 0) for i in range(pp))


@lru_cache(maxsize=1024)
def chunk_sizes(n_layers: int, pp: int, v: int, given: tuple[int, ...] | None) -> tuple[tuple[int, ...], ...]:
    """[stage][chunk] layer counts: each stage's layers over its v chunks, the first chunks one more."""
    return tuple(tuple(n // v + (1 if c < n % v else 0) for c in range(v)) for n in stage_split(n_layers, pp, given))


@lru_cache(maxsize=1024)
def chunk_starts(n_layers: int, pp: int, v: int, given: tuple[int, ...] | None) -> tuple[tuple[int, ...], ...]:
    """[stage][chunk] first layer, in model order chunk 0 of every rank, then chunk 1, ...
    (Megatron-LM's interleaved assignment); computed once per split, as the layout search asks it
    of every stage of hundreds of layouts."""
    sizes = chunk_sizes(n_layers, pp, v, given)
    starts, layer = [[0] * v for _ in range(pp)], 0
    for chunk in range(v):
        for stage in range(pp):
            starts[stage][chunk] = layer
            layer += sizes[stage][chunk]
    return tuple(map(tuple, starts))


SCHEDULES = ("1f1b", "interleaved", "zero-bubble", "dualpipe")


def pipeline_seconds(
    stage_seconds: list[float], micro_batches: int, v: int, schedule: str = "1f1b", weight_share: float = 0.0
) -> float:
    """Step time of the pipeline from each stage's time per micro-batch; `weight_share`: the
    weight-gradient GEMMs' share of a stage's time (zero-bubble and dualpipe fill with them)."""
    slowest = max(stage_seconds)
    fill = sum(stage_seconds) - slowest  # 1F1B's fill and drain, (p - 1) t for equal stages
    if schedule == "zero-bubble":
        return micro_batches * slowest + fill * max(0.0, 1 - 2 * weight_share)
    if schedule == "dualpipe":
        pp = len(stage_seconds)
        return micro_batches * slowest + fill * max(0, pp / 2 - 1) / max(1, pp - 1) * max(0.0, 5 / 3 - 3 * weight_share)
    return micro_batches * slowest + fill / v
