"""One parallel training plan: a layout checked against the model, the most-loaded rank's memory
term by term, the step's collectives and the step time. The public entry point of
sizing.parallel (`parallel_plan`), and its plain result (`ParallelPlan.to_dict`).

Step time has three modes. By default the per-operation model of sizing.parallel.steptime
predicts it for GPUs with step-time constants. `compute_efficiency=X` (the CLI's
`--compute-efficiency`) is the constant-efficiency mode: hardware FLOPs (recompute included) /
(peak x X) plus exposed communication and bubble (sizing.parallel.step), also used, at
DEFAULT_MFU, for GPUs without constants. `mfu=X` (`--mfu`) is the whole-run constant, the one
meaning MFU has everywhere: step = model FLOPs / (peak x X), communication and bubble inside X."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig, Workload, as_config, as_workload, get_gpu
from sizing.memory import FitVerdict, RuntimeReserve, fit_verdict, get_optimizer, get_precision, layout_runtime_reserve
from sizing.parallel.comms import Collective
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory import most_loaded
from sizing.parallel.notes import not_modelled
from sizing.parallel.step import StepTime, step_time
from sizing.parallel.stepdata import has_constants
from sizing.parallel.stepdata import stack as stack_entry
from sizing.parallel.steptime import PredictedStep, StepOptions, predict_step
from sizing.parallel.traffic import step_collectives
from sizing.training import HOURS_PER_DAY, SECONDS_PER_HOUR
from sizing.validate import SizingError, require_bool, require_link_gbs, require_mfu, show
from sizing.vocabulary import DEFAULT_MFU, mfu_meaning


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
    predicted: PredictedStep | None = None  # the per-operation model (None: a constant mode)
    whole_run_mfu: float | None = None  # mfu=X: the step is model FLOPs / (peak x X)

    @property
    def step_model(self) -> str:
        if self.predicted is not None:
            return "per-operation"
        if self.whole_run_mfu is not None:
            return f"constant whole-run MFU {self.whole_run_mfu:g}"
        return f"constant compute efficiency {self.step.mfu:g}"

    @property
    def step_seconds(self) -> float:
        return self.predicted.step_seconds if self.predicted is not None else self.step.step_seconds

    @property
    def mfu(self) -> float:
        """Model FLOPs (6N-style matmuls + attention) / (step x dense peak): one meaning everywhere."""
        return self.predicted.mfu if self.predicted is not None else self.step.predicted_mfu

    @property
    def mfu_meaning(self) -> str:
        """What `mfu` means: the step model counts attention causal, at the dense peak of the matmul dtype."""
        if self.predicted is not None:
            return mfu_meaning("causal", "fp8" if self.work.precision == "fp8" else "bf16")
        dtype = self.work.dtype or ("fp32" if self.work.precision == "fp32" else "bf16")
        return mfu_meaning(self.work.attention, dtype)

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
        return layout_runtime_reserve(lay.dp, lay.tp, lay.pp, lay.cp, lay.ep, lay.etp)

    @property
    def fits(self) -> bool:
        """The point estimate: the most-loaded GPU's tensors plus the runtime reserve fit the GPU
        (what the layout search asks of a layout)."""
        return self.per_gpu_bytes + self.runtime_reserve.total_bytes <= self.gpu_memory_bytes

    @property
    def memory_verdict(self) -> FitVerdict:
        """fits / tight / does not fit, with the allocator's band (sizing.memory.verdict)."""
        return fit_verdict(self.per_gpu_bytes, self.runtime_reserve.total_bytes, self.gpu_memory_bytes)

    @property
    def comm_bytes_per_step(self) -> int:
        return sum(c.wire_bytes_per_step for c in self.collectives)

    @property
    def tokens(self) -> int | None:
        return self.work.tokens

    @property
    def gpu_hours(self) -> float | None:
        if self.tokens is None:
            return None
        steps = self.tokens / (self.layout.global_batch() * self.work.seq_len)
        return steps * self.step_seconds * self.layout.world / SECONDS_PER_HOUR

    @property
    def gpu_hours_band(self) -> list[float] | None:
        """The GPU-hours' band from the step's (sizing.parallel.band); None without tokens or a band."""
        if self.gpu_hours is None or self.predicted is None or self.predicted.band is None:
            return None
        return list(self.predicted.band.scaled(self.gpu_hours))

    @property
    def wall_clock_days(self) -> float | None:
        """Days the training tokens take on this layout's GPUs: GPU-hours / GPUs / 24."""
        if self.gpu_hours is None:
            return None
        return self.gpu_hours / self.layout.world / HOURS_PER_DAY

    @property
    def wall_clock_days_band(self) -> list[float] | None:
        """The days' band from the step's, as the GPU-hours'."""
        if self.wall_clock_days is None or self.predicted is None or self.predicted.band is None:
            return None
        return list(self.predicted.band.scaled(self.wall_clock_days))

    @property
    def not_modelled(self) -> tuple[str, ...]:
        return not_modelled(self.config, self.layout)

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "params": P.total_params(self.config),
            "layout": self.layout.to_dict(),
            "layout_label": self.layout.label(),
            "workload": self.work.to_dict(),
            "global_batch": self.layout.global_batch(),
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
            **self.memory_verdict.to_dict(),
            "memory_stack": self.work.stack,
            "collectives": [c.to_dict() for c in self.collectives],
            "comm_wire_bytes_per_step": self.comm_bytes_per_step,
            "step_model": self.step_model,
            "step": self.predicted.to_dict() if self.predicted is not None else self.step.to_dict(),
            "step_seconds": self.step_seconds,
            "mfu": self.mfu,
            "mfu_meaning": self.mfu_meaning,
            "tokens": self.tokens,
            "gpu_hours": self.gpu_hours,
            "gpu_hours_band": self.gpu_hours_band,
            "wall_clock_days": self.wall_clock_days,
            "wall_clock_days_band": self.wall_clock_days_band,
            "not_modelled": list(self.not_modelled),
        }


def parallel_plan(
    cfg: ModelConfig,
    layout: ParallelLayout,
    work: Workload,
    gpu: str = "h100",
    *,
    mfu: float | None = None,
    compute_efficiency: float | None = None,
    overlap: dict[str, float] | None = None,
    nvlink_gbs: float | None = None,
    network_gbs: float | None = None,
    name: str | None = None,
    fused: bool = True,
    step_options: StepOptions | None = None,
) -> ParallelPlan:
    """Memory of the most-loaded rank, the step's collectives and its time, for `work` (what is
    run: sizing.inputs.Workload) on `layout` of `gpu`s. `cfg` may also be a Preset or a preset
    name (which then names the plan). The rest choose the step model (module docstring) and the
    links' bandwidths."""
    name = cfg if name is None and isinstance(cfg, str) else name
    cfg = as_config(cfg)
    if not isinstance(layout, ParallelLayout):
        raise SizingError(f"layout ({show(layout)}) must be a ParallelLayout, e.g. ParallelLayout(tp=8, dp=4)")
    work = as_workload(work)
    layout = _layout_for(layout, work)
    work = _stated(work, layout)
    cfg.check_context(work.seq_len)
    get_precision(work.precision)
    get_optimizer(work.optimizer)
    _check_rates(mfu, compute_efficiency, nvlink_gbs, network_gbs)
    _check_options(name, fused, step_options)
    layout.check_model(cfg, work.seq_len, work.attention_impl)
    gpu_entry = get_gpu(gpu)
    if work.precision == "fp8" and "fp8" not in gpu_entry.peak_tflops:
        raise SizingError(
            f"precision fp8 needs a GPU with fp8 tensor cores; {gpu_entry.key} has: {', '.join(gpu_entry.peak_tflops)}"
        )
    work = plan_workload(work, step_options)
    layout = stack_layout(layout, work.stack)
    stage, terms = most_loaded(cfg, layout, work)
    rates = dict(mfu=mfu, compute_efficiency=compute_efficiency, nvlink_gbs=nvlink_gbs, network_gbs=network_gbs)
    collectives, st = constant_step(cfg, layout, work, gpu_entry, overlap, fused, **rates)
    T, recompute = work.seq_len, work.recompute
    predicted = None
    if mfu is None and compute_efficiency is None and has_constants(gpu_entry.key) and work.precision != "fp32":
        options = step_options or StepOptions(nvlink_gbs=nvlink_gbs, network_gbs=network_gbs)
        if work.attention_impl != "flash":  # eager / math attention: batched GEMMs and a softmax over the T x T scores
            options = replace(options, attention_kernel="unfused")
        predicted = predict_step(cfg, layout, T, gpu_entry.key, recompute, options)
    return ParallelPlan(name, cfg, layout, work, gpu_entry, stage, terms, tuple(collectives), st, predicted, mfu)


def _layout_for(layout: ParallelLayout, work: Workload) -> ParallelLayout:
    """The layout with the workload's fine-tuning mode (the memory model reads it from the
    layout), after checking that the two agree on what they both state."""
    if work.recompute is None:
        raise SizingError("recompute must be none, selective or full for one plan (None lets a layout search choose)")
    if layout.finetune != "full" and layout.finetune != work.finetune:
        raise SizingError(
            f"finetune is the workload's ({work.finetune}); the layout says {layout.finetune}: "
            "give it once, in the Workload"
        )
    if work.gpus is not None and work.gpus != layout.world:
        raise SizingError(f"gpus ({work.gpus}) must be the layout's dp x tp x pp x cp ({layout.world})")
    if work.global_batch is not None and work.global_batch != layout.global_batch():
        raise SizingError(
            f"global_batch ({work.global_batch}) must be the layout's dp x micro-batch x micro-batches "
            f"({layout.global_batch()})"
        )
    return layout if layout.finetune == work.finetune else replace(layout, finetune=work.finetune)


def _stated(work: Workload, layout: ParallelLayout) -> Workload:
    """The workload with what the layout decides written in (GPUs, global batch), so the plan
    states the run it assumed."""
    if work.gpus == layout.world and work.global_batch == layout.global_batch():
        return work
    return work.with_(gpus=layout.world, global_batch=layout.global_batch())


def stack_layout(layout: ParallelLayout, stack_key: str | None) -> ParallelLayout:
    """The layout as the stack runs it: torchtitan has no tensor parallelism without sequence
    parallelism (its parallelize plan shards the norms' inputs over the sequence), so tp > 1
    there is tp with SP (sizing/data/step_time.json, the stack's tp_sequence_parallel)."""
    if layout.tp > 1 and not layout.sequence_parallel and stack_key and stack_entry(stack_key).tp_sequence_parallel:
        return replace(layout, sequence_parallel=True)
    return layout


def plan_workload(work: Workload, step_options: StepOptions | None) -> Workload:
    """The plan's workload stored as the step's stack stores it (sizing.parallel.memory_stack):
    the stack, fp8 recipe, gradient-buffer settings and pipeline schedule (DualPipe's two stages
    per rank) of `step_options` when given, else the
    workload's own (its stack, or the default stack when it names none), so memory and step time
    describe the same software. StepOptions.reference_memory keeps the reference model's eager
    accounting (what `sizing memory` counts)."""
    opts = step_options or StepOptions(
        stack=work.stack or StepOptions().stack,
        fp8_recipe=work.fp8_recipe,
        fp8_params=work.fp8_params,
        grad_reduce=work.grad_reduce,
    )
    stack = None if opts.reference_memory else opts.stack
    return work.with_(
        stack=stack,
        fp8_recipe=opts.fp8_recipe,
        fp8_params=opts.fp8_params,
        grad_reduce=opts.grad_reduce,
        schedule=opts.schedule if step_options is not None else work.schedule,
    )


def constant_step(
    cfg: ModelConfig,
    layout: ParallelLayout,
    work: Workload,
    gpu: GPU,
    overlap: dict[str, float] | None = None,
    fused: bool = True,
    *,
    mfu: float | None = None,
    compute_efficiency: float | None = None,
    nvlink_gbs: float | None = None,
    network_gbs: float | None = None,
) -> tuple[list[Collective], StepTime]:
    """The step's collectives and its constant-efficiency time (sizing.parallel.step) for `work`
    as the plan stores it (plan_workload): at `compute_efficiency` (DEFAULT_MFU when None), or at
    a whole-run `mfu`. The search times its candidates with this before building a plan (no
    memory needed for that)."""
    collectives = step_collectives(cfg, layout, work, gpu, nvlink_gbs, network_gbs, fused)
    dtype = work.dtype or ("fp32" if work.precision == "fp32" and "fp32" in gpu.peak_tflops else None)
    constant = compute_efficiency or DEFAULT_MFU
    T, recompute = work.seq_len, work.recompute
    st = step_time(cfg, layout, T, collectives, gpu, constant, recompute, work.attention, dtype, overlap)
    return collectives, st if mfu is None else whole_run_step(st, mfu)


def _check_rates(
    mfu: float | None, compute_efficiency: float | None, nvlink_gbs: float | None, network_gbs: float | None
) -> None:
    """parallel_plan's optional numbers, checked before any formula sees them."""
    if mfu is not None and compute_efficiency is not None:
        raise SizingError("give mfu (the whole run's) or compute_efficiency (of the compute alone), not both")
    for what, value in (("mfu", mfu), ("compute_efficiency", compute_efficiency)):
        if value is not None:
            require_mfu(what, value)
    for what, gbs in (("nvlink_gbs", nvlink_gbs), ("network_gbs", network_gbs)):
        if gbs is not None:
            require_link_gbs(what, gbs)


def _check_options(name, fused, step_options) -> None:
    """parallel_plan's other arguments, of the right type before any formula reads them."""
    if name is not None and not isinstance(name, str):
        raise SizingError(f"name ({show(name)}) must be a string or None")
    require_bool("fused", fused)
    if step_options is not None and not isinstance(step_options, StepOptions):
        raise SizingError(f"step_options ({show(step_options)}) must be a StepOptions or None")


def whole_run_step(st: StepTime, mfu: float) -> StepTime:
    """The step at a whole-run MFU: model FLOPs / (peak x mfu); communication and bubble are
    inside the constant (none exposed on top), so the step's MFU is `mfu` exactly."""
    compute = st.model_flops_per_gpu / (st.peak_flops_per_second * mfu)
    efficiency = st.hardware_flops_per_gpu / (st.peak_flops_per_second * compute)
    exposed = {dim: 0.0 for dim in st.exposed_seconds}
    return replace(st, mfu=efficiency, compute_seconds=compute, exposed_seconds=exposed, bubble_seconds=0.0)
