"""The Python API: one call gives the result object that every output format renders.

>>> from sizing import estimate
>>> est = estimate("llama2-7b")
>>> est.params.total
6738415616
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, NamedTuple

from sizing.formulas import ATTENTION_NOTES, CONVENTIONS, model_flops_per_token, mtp_summary
from sizing.formulas import flops as F
from sizing.formulas import params as P
from sizing.inputs import (
    GPU,
    ModelConfig,
    ModelTarget,
    Preset,
    Workload,
    as_workload,
    default_gpu_for,
    get_gpu,
    parse_length,
    parse_quantity,
    resolve_target,
)
from sizing.mfu_choice import assumed_plan, mfu_source, step_model_mfu
from sizing.training import (
    DEFAULT_PUE,
    TrainingRun,
    check_hardware_options,
    cost_usd,
    gpu_hours,
    run_energy,
    training_flops,
    wall_clock_days,
)
from sizing.validate import MAX_COUNT, MAX_SEQ_LEN, MAX_TOKENS, SizingError, require_int
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU, mfu_meaning


class ParamSummary(NamedTuple):  # NamedTuples: no code generated at start-up (a dataclass costs ~1 ms)
    total: int
    non_embedding: int
    active: int
    embedding: int
    components: tuple[P.ParamComponent, ...]


class TrainingCost(NamedTuple):
    run: TrainingRun
    gpu: GPU
    dtype: str
    flops: int | float  # model FLOPs: forward + backward
    hardware_flops: int | float  # what the GPUs execute: + recomputation
    flops_6n: int
    peak_flops_per_second: float
    gpu_hours: float
    gpu_hours_6n: float
    wall_clock_days: float
    cost_usd: float | None


@dataclass(frozen=True)
class Estimate:
    """What estimate() was asked, checked; every result is computed on first access and kept
    (functools.cached_property), so a caller pays only for what it reads: the parameter count
    alone costs one sum, and the memory summary (the fit searches, ~1 ms) runs only when read."""

    name: str
    source: str | None
    config: ModelConfig
    work: Workload  # T, attention convention, recompute, tokens, GPUs, dtype (sizing.inputs.Workload)
    gpu: str = DEFAULT_GPU  # the GPU the training cost is priced on (its table key)
    mfu_given: float | None = None  # a constant MFU the caller chose (--mfu); None: the step model's
    price_per_gpu_hour: float | None = None
    seq_len_source: str = "given"  # where T came from: given, the preset's context, a config file field
    memory_gpu: str | None = None  # the GPU of the memory summary; None: no summary (memory=False)
    power_watts: float | None = None  # the energy inputs (sizing.training.energy): None is the GPU's TDP
    pue: float = DEFAULT_PUE
    grid_kg_co2_per_kwh: float | None = None

    @property
    def seq_len(self) -> int:
        return self.work.seq_len

    @property
    def attention(self) -> str:
        return self.work.attention

    @property
    def recompute(self) -> str:
        """The FLOP table's recomputation: as asked, else none (a searched layout names its own)."""
        return self.work.recompute or "none"

    @cached_property
    def plan(self):
        """The ParallelPlan work.gpus GPUs assume (sizing.mfu_choice.assumed_plan); None: no GPU count or fit."""
        return assumed_plan(self.config, self.work, self.gpu)

    @cached_property
    def mfu_layout(self):
        """sizing.parallel's LayoutMfu of that plan (layout, global batch, recompute, step, MFU),
        when the MFU is the step model's; else None."""
        return step_model_mfu(self.config, self.work, self.plan, self.mfu_given)

    @property
    def mfu_source(self) -> str:
        """Where the MFU came from, in words (the output prints it beside the MFU)."""
        return mfu_source(self.work, self.gpu, self.mfu_given, self.mfu_layout)

    @cached_property
    def run(self) -> TrainingRun | None:
        """The training run priced (None: no token count, so no training cost)."""
        if self.work.tokens is None:
            return None
        mfu = self.mfu_given if self.mfu_given is not None else getattr(self.mfu_layout, "mfu", DEFAULT_MFU)
        w = self.work
        return TrainingRun(w.tokens, self.gpu, w.dtype, mfu, w.gpus or 1, self.price_per_gpu_hour)

    @cached_property
    def params(self) -> ParamSummary:
        return param_summary(self.config)

    @cached_property
    def flops(self) -> F.FlopBreakdown:
        return F.flop_breakdown(self.config, self.seq_len, self.attention, self.recompute)

    @cached_property
    def kaplan_6n_per_token(self) -> int:
        return F.kaplan_6n_per_token(self.params.active)

    @cached_property
    def training(self) -> TrainingCost | None:
        return None if self.run is None else training_cost(self.config, self.flops, self.params.active, self.run)

    @cached_property
    def energy(self):
        """sizing.training.energy's Energy of the training run; None without one."""
        if self.training is None:
            return None
        return run_energy(self.training.gpu_hours, self.run.gpu, self.power_watts, self.pue, self.grid_kg_co2_per_kwh)

    @cached_property
    def memory(self):
        """sizing.memory's MemorySummary (what `sizing estimate` prints), or None when memory=False.
        With a GPU count, its training part is the assumed layout's most-loaded GPU
        (sizing.parallel.LayoutMemory), so the memory and the cost describe one run; without, one
        GPU at micro-batch 1, no ZeRO."""
        if self.memory_gpu is None:
            return None
        from sizing.memory import summary_for_estimate  # sizing.memory never imports this module

        summary = summary_for_estimate(self.config, self.seq_len, self.memory_gpu)
        if self.plan is None or self.memory_gpu != self.gpu:
            return summary
        from sizing.parallel import LayoutMemory

        return replace(summary, training=LayoutMemory(self.plan))

    @cached_property
    def mtp(self) -> dict | None:
        """The config's multi-token-prediction modules (sizing.formulas.mtp), sized apart from every
        total above; None when it has none."""
        if not self.config.mtp_modules:
            return None
        return mtp_summary(self.config, self.seq_len, self.config.mtp_modules, self.attention)

    @property
    def decode_per_token(self) -> int:
        """Inference: forward FLOPs of one new token with a KV cache holding seq_len positions."""
        return F.decode_flops_per_token(self.config, self.flops.seq_len)

    def to_row(self) -> dict[str, Any]:
        """The flat form: one dict of scalars with the documented columns of sizing.rows.COLUMNS."""
        from sizing.rows import estimate_row

        return estimate_row(self)

    def to_frame(self):
        """A one-row pandas DataFrame of to_row() (pandas imported here, on demand)."""
        from sizing.rows import rows_frame

        return rows_frame([self.to_row()])

    @property
    def decode_per_token_absorbed(self) -> int | None:
        """MLA only: decode with the up-projections absorbed into q and o (latent cache); None otherwise."""
        return F.decode_flops_by_form(self.config, self.flops.seq_len).get("absorbed")

    def _training_dict(self, attention: str) -> dict[str, Any]:
        """The `training` object of to_dict(): the cost of the run and, where known, its energy."""
        t = self.training
        out = {
            "tokens": t.run.tokens,
            "flops": t.flops,
            "hardware_flops": t.hardware_flops,
            "hfu": t.run.mfu * t.hardware_flops / t.flops,
            "flops_6n": t.flops_6n,
            "gpu": t.gpu.key,
            "gpu_name": t.gpu.name,
            "dtype": t.dtype,
            "peak_flops_per_second": t.peak_flops_per_second,
            "mfu": t.run.mfu,
            "mfu_source": self.mfu_source,
            "mfu_meaning": mfu_meaning(attention, t.dtype),
            "mfu_layout": self.mfu_layout.to_dict() if self.mfu_layout is not None else None,
            "gpu_hours": t.gpu_hours,
            "gpu_hours_band": self._band(t.gpu_hours),
            "gpu_hours_6n": t.gpu_hours_6n,
            "num_gpus": t.run.num_gpus,
            "wall_clock_days": t.wall_clock_days,
            "wall_clock_days_band": self._band(t.wall_clock_days),
            "price_per_gpu_hour": t.run.price_per_gpu_hour,
            "cost_usd": t.cost_usd,
        }
        if self.energy is not None:
            out.update(self.energy.to_dict())
        return out

    def _band(self, value: float) -> list[float] | None:
        """The band of a time answer proportional to the step (GPU-hours, days), from the step
        model's band (sizing.parallel.band); None when the MFU did not come from the step model."""
        band = self.mfu_layout.band if self.mfu_layout is not None else None
        return None if band is None else list(band.scaled(value))

    def to_dict(self) -> dict[str, Any]:
        fl = self.flops
        out: dict[str, Any] = {
            "model": {"name": self.name, "source": self.source, "config": self.config.to_dict()},
            "params": {
                "total": self.params.total,
                "non_embedding": self.params.non_embedding,
                "active": self.params.active,
                "embedding": self.params.embedding,
                "components": {c.key: c.count for c in self.params.components},
                "per_layer": {c.key: c.per_layer for c in self.params.components if c.per_layer is not None},
                "formulas": {c.key: c.formula for c in self.params.components},
            },
            "flops": {
                "attention": fl.attention,
                "seq_len": fl.seq_len,
                "seq_len_source": self.seq_len_source,
                "recompute": fl.recompute,
                "forward_per_token": fl.per_token(fl.forward),
                "backward_per_token": fl.per_token(fl.backward),
                "recompute_per_token": fl.per_token(fl.recompute_flops),
                "training_per_token": fl.per_token(fl.training),
                "kaplan_6n_per_token": self.kaplan_6n_per_token,
                "decode_per_token": self.decode_per_token,
                "decode_per_token_absorbed": self.decode_per_token_absorbed,  # null unless MLA
                "components": {c.key: c.forward_per_token for c in fl.components},
                "formulas": {c.key: c.formula for c in fl.components},
            },
            "training": None,
            "workload": self.work.to_dict(),
            "conventions": dict(CONVENTIONS, attention=ATTENTION_NOTES[fl.attention]),
        }
        if self.training:
            out["training"] = self._training_dict(fl.attention)
        if self.memory is not None:
            out["memory"] = self.memory.to_dict()
        if self.mtp is not None:
            out["mtp"] = dict(self.mtp, checkpoint_total=self.params.total + self.mtp["params_checkpoint"])
        return out


def param_summary(cfg: ModelConfig) -> ParamSummary:
    components = tuple(P.param_components(cfg))
    total = sum(c.count for c in components)
    embedding = P.embedding_params(cfg)
    return ParamSummary(total, total - embedding, total - P.inactive_expert_params(cfg), embedding, components)


def training_cost(cfg: ModelConfig, breakdown: F.FlopBreakdown, active: int, run: TrainingRun) -> TrainingCost:
    gpu = get_gpu(run.gpu)
    dtype = run.dtype or gpu.default_dtype
    peak = gpu.peak_flops_per_second(dtype)
    # Model FLOPs: forward + backward. Recomputation is hardware work, not model work: MFU
    # (PaLM's definition) leaves it out, so the GPU-hours at a given MFU do too.
    flops = training_flops(model_flops_per_token(breakdown), run.tokens)
    hardware = training_flops(breakdown.per_token(breakdown.training), run.tokens)
    flops_6n = training_flops(F.kaplan_6n_per_token(active), run.tokens)
    hours = gpu_hours(flops, peak, run.mfu)
    return TrainingCost(
        run=run,
        gpu=gpu,
        dtype=dtype,
        flops=flops,
        hardware_flops=hardware,
        flops_6n=flops_6n,
        peak_flops_per_second=peak,
        gpu_hours=hours,
        gpu_hours_6n=gpu_hours(flops_6n, peak, run.mfu),
        wall_clock_days=wall_clock_days(hours, run.num_gpus),
        cost_usd=cost_usd(hours, run.price_per_gpu_hour),
    )


def estimate(
    model: str | ModelConfig | Preset,
    *,
    work: Workload | None = None,
    seq_len: int | str | None = None,
    attention: str = "full",
    recompute: str | None = None,
    tokens: int | str | None = None,
    gpu: str | None = None,
    dtype: str | None = None,
    mfu: float | None = None,
    num_gpus: int | None = None,
    price_per_gpu_hour: float | None = None,
    name: str | None = None,
    memory: bool = True,
    power_watts: float | None = None,
    pue: float = DEFAULT_PUE,
    grid_kg_co2_per_kwh: float | None = None,
) -> Estimate:
    """Parameters, FLOPs, training cost and memory for a preset name, a path to a config file
    (a Hugging Face config.json or this tool's JSON, read by sizing.inputs.hf.config_file), a Preset or
    a ModelConfig. The workload is `work` (sizing.inputs.Workload), or the loose keywords that make
    one (seq_len, attention, recompute, tokens, num_gpus, dtype), not both. seq_len defaults to the
    preset's training context or the file's pretraining context (`seq_len_source` says which);
    tokens to the preset's published count; both may be typed as the CLI takes them ("4096", "2T").

    The MFU of the training cost: `mfu` when given (a constant, the explicit override); else, with
    num_gpus, the step model's for the fastest layout that fits on those GPUs at the default global
    batch (sizing.parallel.predict_run: the plan `sizing parallel --gpus N` prints; `mfu_layout`
    names it); else the constant DEFAULT_MFU, and `mfu_source` says it was assumed.
    memory=True (the default) gives `memory`, the summary `sizing estimate` prints, so to_dict()
    is the CLI's JSON; memory=False leaves it None. gpu defaults to H100 unless the preset's
    published run names another (sizing.inputs.default_gpu). power_watts (default: the GPU's TDP), pue
    and grid_kg_co2_per_kwh give the run's energy and CO2 (sizing.training.energy). Inputs are checked
    here; every result is computed when first read (Estimate)."""
    target = resolve_target(model)
    loose = dict(seq_len=seq_len, attention=attention, recompute=recompute, tokens=tokens, gpus=num_gpus, dtype=dtype)
    work, seq_len_source = _workload(target, work, loose)
    gpu = get_gpu(gpu if gpu is not None else default_gpu_for(target.preset.name if target.preset else None)).key
    check_hardware_options(gpu, work.dtype, DEFAULT_MFU if mfu is None else mfu, work.gpus or 1, price_per_gpu_hour)
    run_energy(0.0, gpu, power_watts, pue, grid_kg_co2_per_kwh)  # the energy inputs, checked with or without tokens
    return Estimate(
        name=name or target.name,
        source=target.preset.source if target.preset else None,
        config=target.config,
        work=work,
        gpu=gpu,
        mfu_given=mfu,
        price_per_gpu_hour=price_per_gpu_hour,
        seq_len_source=seq_len_source,
        memory_gpu=gpu if memory else None,
        power_watts=power_watts,
        pue=pue,
        grid_kg_co2_per_kwh=grid_kg_co2_per_kwh,
    )


def _workload(target: ModelTarget, work: Workload | None, loose: dict) -> tuple[Workload, str]:
    """The estimate's Workload: `work` as given (its T checked against the model), or one built
    from the loose keywords, with the model's context and published tokens as defaults."""
    if work is not None:
        given = [k for k, v in loose.items() if v is not None and not (k == "attention" and v == "full")]
        if given:
            raise SizingError(f"give the workload as work=Workload(...) or as {', '.join(given)}, not both")
        target.config.check_context(as_workload(work).seq_len, "seq_len")
        return work, "given"
    seq_len, source = _seq_len(target, loose.pop("seq_len"))
    tokens = loose.pop("tokens")
    if tokens is None and target.preset is not None:
        tokens = target.preset.training_tokens
    elif tokens is not None:
        tokens = _count("tokens", tokens, MAX_TOKENS)
    if loose["gpus"] is not None:
        require_int("num_gpus", loose["gpus"], maximum=MAX_COUNT)
    return Workload(seq_len, tokens=tokens, **loose), source


def _seq_len(target: ModelTarget, seq_len: int | str | None) -> tuple[int, str]:
    """(T, where it came from): as given, else the preset's or file's context; checked against the model."""
    if seq_len is None:
        if target.context is None:
            raise SizingError("seq_len must be given for a config that is not a preset and states no context")
        seq_len, source = target.context, target.context_source
    else:
        seq_len, source = _count("seq_len", seq_len, MAX_SEQ_LEN), "given"
    target.config.check_context(seq_len, "seq_len")
    return seq_len, source


_resolve_model = resolve_target  # the name sizing.plan.sweeps imports


def _count(name: str, value: int | str, maximum: int) -> int:
    """An int, or the CLI's string, exactly: tokens in SI ('2T'), a seq_len with K = 1024 ('128K')."""
    if isinstance(value, str):
        value = (parse_length if name == "seq_len" else parse_quantity)(value, name, maximum)
    return require_int(name, value, 1, maximum)
