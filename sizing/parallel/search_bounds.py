"""What keeps the layout search short at any scale (sizing.parallel.search): bounds that skip
work which cannot change the answer, and a memory check shared between searches.

- `fewest_gpus`: no layout fits on fewer GPUs than the model's states (weights, gradients,
  optimizer) spread over all of them need, so smaller GPU counts are never tried. The sum over
  the ranks of every layout's model states is at least the unsharded total (each parameter is
  held at least once; replication only adds), so the bound is sound.
- `step_lower_bound`: the compute and pipeline bubble of the constant-efficiency step
  (sizing.parallel.step), without the exposed communication, which is never negative. A
  candidate whose bound exceeds the best step found cannot win, so its plan is never built; in
  whole-run MFU mode the bound is the step itself.
- `MemoryCheck`: whether (layout, recompute) fits, from each pipeline rank's bytes, cached across
  searches (the "fits on" list asks the same model of every GPU, and memory does not depend on
  the GPU), stopping at the first rank that does not fit, with full recomputation tried first:
  when it does not fit, no mode of that layout does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from sizing.formulas import flop_breakdown
from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig
from sizing.memory import layout_runtime_reserve
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory import Workload, candidate_stages, stage_memory, unsharded_states_bytes
from sizing.vocabulary import DEFAULT_MFU


def fewest_gpus(cfg: ModelConfig, base: ParallelLayout, gpu: GPU, precision: str, optimizer: str) -> int:
    """A lower bound on the GPUs any layout of a full fine-tune needs: its model states over the
    GPU's memory (1 for LoRA, QLoRA and CPU offload, whose states are not all on the GPUs)."""
    if base.finetune != "full" or base.offload_optimizer or base.offload_params:
        return 1
    states = unsharded_states_bytes(cfg, P.total_params(cfg), Workload(1, precision, optimizer))
    return max(1, math.ceil(states / gpu.memory_bytes))


@lru_cache(maxsize=16384)
def _stage_total(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> int:
    """GPU bytes of one pipeline rank (stage_memory's total; the plan's per_gpu_bytes is the largest)."""
    return stage_memory(cfg, layout, work, stage)["total_bytes"]


def _reserve(layout: ParallelLayout) -> int:
    """The runtime reserve ParallelPlan.fits adds to the most-loaded rank's bytes."""
    return layout_runtime_reserve(layout.dp, layout.tp, layout.pp, layout.cp, layout.ep).total_bytes


@dataclass
class MemoryCheck:
    """Whether (layout, recompute) fits one GPU, each layout's full recomputation checked first."""

    cfg: ModelConfig
    seq_len: int
    capacity: int
    work: dict  # precision, optimizer, attention_impl
    modes: tuple[str, ...]
    _too_big: set = field(default_factory=set)

    def bytes(self, layout: ParallelLayout, mode: str) -> int:
        """The most-loaded rank's bytes (most_loaded's; ParallelPlan.per_gpu_bytes, the reserve apart)."""
        work = Workload(self.seq_len, recompute=mode, **self.work)
        return max(_stage_total(self.cfg, layout, work, stage) for stage in candidate_stages(layout, self.cfg))

    def _fits(self, layout: ParallelLayout, mode: str) -> bool:
        """Every rank that can be the most loaded within the GPU (with the reserve), stopping at
        the first that is not: most layouts that do not fit fail on their first stage."""
        work, room = Workload(self.seq_len, recompute=mode, **self.work), self.capacity - _reserve(layout)
        return all(_stage_total(self.cfg, layout, work, stage) <= room for stage in candidate_stages(layout, self.cfg))

    def fits(self, layout: ParallelLayout, mode: str) -> bool:
        if layout in self._too_big:
            return False
        if mode != "full" and "full" in self.modes and not self._fits(layout, "full"):
            self._too_big.add(layout)  # full recomputation saves the most: no mode of it fits
            return False
        return self._fits(layout, mode)


@dataclass(frozen=True)
class ConstantStep:
    """The constant-efficiency step's parts that need no collective (sizing.parallel.step and
    parallel_plan's choice of peak and efficiency, mirrored here): a lower bound of the step, or
    the step itself in whole-run MFU mode (whole_run_step: model FLOPs / (peak x mfu))."""

    cfg: ModelConfig
    seq_len: int
    peak: float
    efficiency: float
    whole_run_mfu: float | None
    attention: str

    @classmethod
    def of(cls, cfg: ModelConfig, seq_len: int, gpu: GPU, plan_options: dict) -> ConstantStep:
        precision = plan_options.get("precision", "bf16-mixed")
        dtype = "fp32" if precision == "fp32" and "fp32" in gpu.peak_tflops else gpu.default_dtype
        efficiency = plan_options.get("compute_efficiency") or DEFAULT_MFU
        attention = plan_options.get("attention", "full")
        return cls(cfg, seq_len, gpu.peak_flops_per_second(dtype), efficiency, plan_options.get("mfu"), attention)

    @property
    def exact(self) -> bool:
        return self.whole_run_mfu is not None

    def lower_bound(self, layout: ParallelLayout, mode: str) -> float:
        breakdown = _breakdown(self.cfg, self.seq_len, self.attention, mode)
        sequences = layout.global_batch()
        if self.whole_run_mfu is not None:
            model = breakdown.model_training * sequences / layout.world
            return model / (self.peak * self.whole_run_mfu)
        compute = breakdown.training * sequences / layout.world / (self.peak * self.efficiency)
        return compute + compute * (layout.pp - 1) / (layout.micro_batches * layout.v)


@lru_cache(maxsize=256)
def _breakdown(cfg: ModelConfig, seq_len: int, attention: str, recompute: str):
    return flop_breakdown(cfg, seq_len, attention, recompute)
