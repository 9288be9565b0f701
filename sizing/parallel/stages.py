"""What one pipeline rank holds: its layers (uneven stages, interleaved chunks), the kinds of
block among them (dense or MoE), one block's tensors on an expert-parallel rank, the
micro-batches in flight at its peak, and the stages that can be the most loaded. The memory
terms (memory.py, stage_activations.py) and the collectives (traffic.py) are built on these.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from sizing.inputs import ModelConfig
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.schedule import chunk_sizes, chunk_starts, stage_split
from sizing.parallel.shapes import (
    Tensor,
    block_kinds,
    block_tensors,
    count_moe_layers,
    first_stage_tensors,
    last_stage_tensors,
)


# ---------------------------------------------------------------- which tensors a stage holds
def stage_layers(cfg: ModelConfig, layout: ParallelLayout) -> int:
    """Layers on the fullest pipeline rank: L / pp, or the largest stage of an uneven split
    (sizing.parallel.schedule.stage_split: Llama 3's 126 layers on 16 stages hold 7, 8 x 14, 7)."""
    return max(stage_split(cfg.n_layers, layout.pp, layout.stage_layers))


def chunk_layers(cfg: ModelConfig, layout: ParallelLayout, stage: int, chunk: int) -> range:
    """The layers of model chunk `chunk` on pipeline rank `stage`, in model order chunk 0 of every
    rank, then chunk 1, ... (Megatron-LM's interleaved assignment; v = 1: rank s holds layers
    s L/p .. (s + 1) L/p - 1 when pp divides L)."""
    sizes = chunk_sizes(cfg.n_layers, layout.pp, layout.v, layout.stage_layers)
    start = chunk_starts(cfg.n_layers, layout.pp, layout.v, layout.stage_layers)[stage][chunk]
    return range(start, start + sizes[stage][chunk])


def stage_kinds(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> list[tuple[bool, int]]:
    """(is MoE, blocks) on pipeline rank `stage`, over all its chunks: one entry for a model whose
    blocks are all alike, two where dense and MoE layers mix (DeepSeek's first dense layers)."""
    counts: dict[bool, int] = {}
    for chunk in range(layout.v):
        for moe, n in block_kinds(cfg, chunk_layers(cfg, layout, stage, chunk)):
            counts[moe] = counts.get(moe, 0) + n
    return sorted(counts.items())


def stage_signature(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> tuple:
    """What tells two stages' blocks apart: the MoE layers of each chunk (stages alike in it
    hold the same tensors and activations per micro-batch)."""
    chunks = [chunk_layers(cfg, layout, stage, c) for c in range(layout.v)]
    if getattr(cfg, "hybrid", None) is not None:  # a hybrid: its kinds of layer per chunk
        return tuple(tuple(block_kinds(cfg, r)) for r in chunks)
    return tuple((len(r), count_moe_layers(cfg, r)) for r in chunks)


def mixed_blocks(cfg: ModelConfig) -> bool:
    """Stages may hold different blocks: dense and MoE layers mix (DeepSeek's first dense layers), or
    a hybrid's layers differ."""
    return (cfg.is_moe and cfg.n_dense_layers > 0) or getattr(cfg, "hybrid", None) is not None


def block_tensors_per_ep_rank(cfg: ModelConfig, layout: ParallelLayout, moe: bool | None = None) -> list[Tensor]:
    """One block's tensors on EP rank 0 (an MoE block, a dense one, or the config's kind when
    `moe` is None): the dense part and E / ep experts."""
    keep = cfg.n_experts // layout.ep if cfg.is_moe else 0
    return [replace(t, copies=keep) if t.expert else t for t in block_tensors(cfg, moe)]


def stage_tensors(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> list[tuple[Tensor, int]]:
    """(tensor, copies) on pipeline rank `stage`: its blocks, plus the first/last stage's extras."""
    out = [(t, n) for moe, n in stage_kinds(cfg, layout, stage) for t in block_tensors_per_ep_rank(cfg, layout, moe)]
    if stage == 0:
        out += [(t, 1) for t in first_stage_tensors(cfg)]
    if stage == layout.pp - 1:
        out += [(t, 1) for t in last_stage_tensors(cfg, layout.pp)]
    return out


# ---------------------------------------------------------------- micro-batches in flight
def in_flight(layout: ParallelLayout, stage: int) -> int:
    """Model-chunk micro-batches whose activations rank `stage` holds at its peak. 1F1B
    (Narayanan et al. 2021, PipeDream-Flush): min(p - s, m), so the first stage holds p.
    Interleaved (Megatron-LM's schedule): the warm-up forwards 2(p - s - 1) + (v - 1) p plus
    the first steady-state one, at most m v; summed over the rank's chunks this is
    Korthikanti et al. 2022's p (1 + (p - 1)/(p v)) micro-batches of L/p layers on the first rank."""
    p, m, v = layout.pp, layout.micro_batches, layout.v
    if p == 1:
        return 1
    if v == 1:
        return min(p - stage, m)
    return min(m * v, 2 * (p - stage - 1) + (v - 1) * p + 1)


def chunk_in_flight(layout: ParallelLayout, stage: int, chunk: int) -> int:
    """Of the in-flight forwards, those of model chunk `chunk`: forwards run chunk by chunk, p
    micro-batches at a time, so forward i is chunk (i // p) mod v; counted in closed form."""
    if layout.v == 1:
        return in_flight(layout, stage)
    p, cycle = layout.pp, layout.pp * layout.v
    full, rest = divmod(in_flight(layout, stage), cycle)
    return full * p + min(max(rest - chunk * p, 0), p)


def candidate_stages(layout: ParallelLayout, cfg: ModelConfig | None = None) -> tuple[int, ...]:
    """Stages that can be the most loaded: the first (most in flight, embedding), the last
    (lm_head, loss, logits) and the second (most in flight among stages without extras); where
    stages hold different blocks (dense and MoE layers), also the first stage of each kind of
    holding (in flight falls with the stage, so it is the most loaded of its kind)."""
    stages = {0, min(1, layout.pp - 1), layout.pp - 1}
    if cfg is not None and mixed_blocks(cfg):
        stages |= _first_of_each_holding(cfg, layout.pp, layout.v, layout.stage_layers)
    return tuple(sorted(stages))


@lru_cache(maxsize=1024)
def _first_of_each_holding(cfg: ModelConfig, pp: int, v: int, given: tuple[int, ...] | None) -> frozenset[int]:
    """The first stage of each distinct holding of dense and MoE layers (depends on the split
    alone: computed once for the hundreds of layouts of a search that share it)."""
    layout = ParallelLayout(
        pp=pp, v=v, micro_batches=pp, stage_layers=given, pp_schedule="interleaved" if v > 1 else "1f1b"
    )
    seen: dict[tuple, int] = {}
    for stage in range(pp):
        seen.setdefault(stage_signature(cfg, layout, stage), stage)
    return frozenset(seen.values())
