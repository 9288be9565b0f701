"""One parallel training plan: a layout checked against the model, the most-loaded rank's memory
term by term, the step's collectives and the step time. The public entry point of
sizing.parallel (`parallel_plan`), and its plain result (`ParallelPlan.to_dict`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import params as P
from ..config import ModelConfig
from ..hardware import GPU, get_gpu
from ..memory.runtime import RuntimeReserve, layout_runtime_reserve
from ..memory.states import get_optimizer, get_precision
from ..validate import require_choice, require_fraction, require_int, require_number
from ..vocabulary import (
    ATTENTION_CONVENTIONS,
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    DEFAULT_ATTENTION,
    DEFAULT_MFU,
    RECOMPUTE_MODES,
)
from .comms import Collective
from .layout import ParallelLayout
from .memory import Workload, most_loaded
from .notes import not_modelled
from .step import StepTime, run_gpu_hours, step_time
from .traffic import step_collectives


@dataclass(frozen=True)
class ParallelPlan:
    model: str | None
    config: ModelConfig = field(repr=False)
    layout: ParallelLayout
    work: Workload
    gpu: GPU = field(repr=False)
    stage: int  # the most-loaded pipeline rank
    terms: dict  # bytes on that rank's GPU (and offloaded to CPU), term by term
    collectives: tuple[Collective, ...]
    step: StepTime
    tokens: int | None = None

    @property
    def per_gpu_bytes(self) -> int:
        return self.terms["total_bytes"]

    @property
    def gpu_memory_bytes(self) -> int:
        return self.gpu.memory_bytes

    @property
    def runtime_reserve(self) -> RuntimeReserve:
        """CUDA context + NCCL buffers of one rank (sizing.memory.runtime), off the GPU before the fit."""
        lay = self.layout
        return layout_runtime_reserve(lay.dp, lay.tp, lay.pp, lay.cp, lay.ep)

    @property
    def fits(self) -> bool:
        return self.per_gpu_bytes + self.runtime_reserve.total_bytes <= self.gpu_memory_bytes

    @property
    def comm_bytes_per_step(self) -> int:
        return sum(c.wire_bytes_per_step for c in self.collectives)

    @property
    def gpu_hours(self) -> float | None:
        if self.tokens is None:
            return None
        return run_gpu_hours(self.step, self.layout, self.work.seq_len, self.tokens)

    @property
    def not_modelled(self) -> tuple[str, ...]:
        return not_modelled(self.config, self.layout)

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "params": P.total_params(self.config),
            "layout": self.layout.to_dict(),
            "layout_label": self.layout.label(),
            "seq_len": self.work.seq_len,
            "precision": self.work.precision,
            "optimizer": self.work.optimizer,
            "recompute": self.work.recompute,
            "attention_impl": self.work.attention_impl,
            "gpu": self.gpu.key,
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "most_loaded_stage": self.stage,
            "per_gpu": dict(self.terms),
            "per_gpu_bytes": self.per_gpu_bytes,
            "runtime_reserve_bytes": self.runtime_reserve.total_bytes,
            "headroom_bytes": self.gpu_memory_bytes - self.runtime_reserve.total_bytes - self.per_gpu_bytes,
            "fits": self.fits,
            "collectives": [c.to_dict() for c in self.collectives],
            "comm_wire_bytes_per_step": self.comm_bytes_per_step,
            "step": self.step.to_dict(),
            "tokens": self.tokens,
            "gpu_hours": self.gpu_hours,
            "not_modelled": list(self.not_modelled),
        }


def parallel_plan(
    cfg: ModelConfig,
    layout: ParallelLayout,
    seq_len: int,
    gpu: str = "h100",
    precision: str = "bf16-mixed",
    optimizer: str = "adamw",
    recompute: str = "none",
    attention_impl: str = "flash",
    attention: str = DEFAULT_ATTENTION,
    mfu: float = DEFAULT_MFU,
    overlap: dict[str, float] | None = None,
    nvlink_gbs: float | None = None,
    network_gbs: float | None = None,
    tokens: int | None = None,
    name: str | None = None,
    fused: bool = True,
) -> ParallelPlan:
    """Memory of the most-loaded rank, the step's collectives and its time, for `layout`."""
    cfg.check_context(seq_len)
    get_precision(precision)
    get_optimizer(optimizer)
    require_choice("recompute", recompute, RECOMPUTE_MODES)
    impl = require_choice("attention_impl", attention_impl, ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    require_fraction("mfu", mfu)
    for what, gbs in (("nvlink_gbs", nvlink_gbs), ("network_gbs", network_gbs)):
        if gbs is not None:
            require_number(what, gbs, 0, 1e6, exclusive_minimum=True)
    if tokens is not None:
        require_int("tokens", tokens, 1, 10**30)
    layout.check_model(cfg, seq_len, impl)
    gpu_entry = get_gpu(gpu)
    work = Workload(seq_len, precision, optimizer, recompute, impl)
    stage, terms = most_loaded(cfg, layout, work)
    collectives = step_collectives(cfg, layout, work, gpu_entry, nvlink_gbs, network_gbs, fused)
    dtype = "fp32" if precision == "fp32" and "fp32" in gpu_entry.peak_tflops else None
    st = step_time(cfg, layout, seq_len, collectives, gpu_entry, mfu, recompute, attention, dtype, overlap)
    return ParallelPlan(name, cfg, layout, work, gpu_entry, stage, terms, tuple(collectives), st, tokens)
