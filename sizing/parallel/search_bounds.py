"""What keeps the layout search short at any scale (sizing.parallel.search): bounds that skip
work which cannot change the answer, and a memory check shared between searches.

- `fewest_gpus`: no layout fits on fewer GPUs than the model's states (weights, gradients,
  optimizer) spread over all of them need, so smaller GPU counts are never tried. The sum over
  the ranks of every layout's model states is at least the unsharded total (each parameter is
  held at least once; replication only adds), counted at the least any layout stores (the
  smaller of the stack's gradient buffer and the precision's own, which ZeRO-3 and FSDP keep;
  no weights where the GEMM weights are primary fp8), so the bound is sound.
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
from dataclasses import dataclass, field, replace
from functools import lru_cache

from sizing.formulas import flop_breakdown
from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig, Workload
from sizing.memory import get_precision, gradients_bytes, layout_runtime_reserve, optimizer_bytes, weights_bytes
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory import candidate_stages, stage_memory
from sizing.parallel.memory_stack import work_conventions
from sizing.vocabulary import DEFAULT_MFU, RECOMPUTE_MODES


def fewest_gpus(cfg: ModelConfig, base: ParallelLayout, gpu: GPU, work: Workload) -> int:
    """A lower bound on the GPUs any layout of a full fine-tune needs: its model states over the
    GPU's memory (1 for LoRA, QLoRA and CPU offload, whose states are not all on the GPUs).
    `work` as the plan stores it (sizing.parallel.plan.plan_workload: its stack's conventions)."""
    if work.finetune != "full" or base.finetune != "full" or base.offload_optimizer or base.offload_params:
        return 1
    return max(1, math.ceil(least_states_bytes(cfg, work) / gpu.memory_bytes))


def least_states_bytes(cfg: ModelConfig, work: Workload) -> int:
    """The fewest bytes of model states any layout holds, summed over its ranks (module docstring)."""
    n, p = P.total_params(cfg), work.precision
    conv, own = work_conventions(work), get_precision(p).grad_bytes
    grad = own if conv.grad_bytes is None else min(own, conv.grad_bytes)
    weights = 0 if conv.fp8_params else weights_bytes(n, p)
    return weights + gradients_bytes(n, p, grad) + optimizer_bytes(n, p, work.optimizer)


@lru_cache(maxsize=16384)
def _stage_total(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> int:
    """GPU bytes of one pipeline rank (stage_memory's total; the plan's per_gpu_bytes is the
    largest), with the layout as the plan holds it: the workload's fine-tuning mode."""
    if layout.finetune != work.finetune:
        layout = replace(layout, finetune=work.finetune)
    return stage_memory(cfg, layout, work, stage)["total_bytes"]


def _reserve(layout: ParallelLayout) -> int:
    """The runtime reserve ParallelPlan.fits adds to the most-loaded rank's bytes."""
    return layout_runtime_reserve(layout.dp, layout.tp, layout.pp, layout.cp, layout.ep, layout.etp).total_bytes


@dataclass
class MemoryCheck:
    """Whether (layout, recompute) fits one GPU, each layout's full recomputation checked first.
    `work` as the plan stores it (plan_workload); its recompute is set per check, and the fields
    memory does not read (GPUs, batch, tokens) are cleared, so one cache serves every GPU count."""

    cfg: ModelConfig
    work: Workload
    capacity: int
    modes: tuple[str, ...]
    _too_big: set = field(default_factory=set)
    _by_mode: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        held = self.work.with_(gpus=None, global_batch=None, tokens=None)
        self._by_mode = {mode: held.with_(recompute=mode) for mode in RECOMPUTE_MODES}

    def bytes(self, layout: ParallelLayout, mode: str) -> int:
        """The most-loaded rank's bytes (most_loaded's; ParallelPlan.per_gpu_bytes, the reserve apart)."""
        work = self._by_mode[mode]
        return max(_stage_total(self.cfg, layout, work, stage) for stage in candidate_stages(layout, self.cfg))

    def _fits(self, layout: ParallelLayout, mode: str) -> bool:
        """Every rank that can be the most loaded within the GPU (with the reserve), stopping at
        the first that is not: most layouts that do not fit fail on their first stage."""
        work, room = self._by_mode[mode], self.capacity - _reserve(layout)
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
    def of(cls, cfg: ModelConfig, work: Workload, gpu: GPU, plan_options: dict) -> ConstantStep:
        fp32 = work.precision == "fp32" and "fp32" in gpu.peak_tflops
        dtype = work.dtype or ("fp32" if fp32 else gpu.default_dtype)
        efficiency = plan_options.get("compute_efficiency") or DEFAULT_MFU
        peak = gpu.peak_flops_per_second(dtype)
        return cls(cfg, work.seq_len, peak, efficiency, plan_options.get("mfu"), work.attention)

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
