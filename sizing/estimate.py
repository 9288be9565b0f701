"""The Python API: one call gives the result object that every output format renders.

>>> from sizing import estimate
>>> est = estimate("llama2-7b")
>>> est.params.total
6738415616
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sizing.formulas import ATTENTION_NOTES, CONVENTIONS, model_flops_per_token
from sizing.formulas import flops as F
from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig, Preset, default_gpu_for, get_gpu, get_preset, parse_length, parse_quantity
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
from sizing.validate import MAX_SEQ_LEN, MAX_TOKENS, SizingError, require_choice, require_int, show
from sizing.vocabulary import ATTENTION_CONVENTIONS, DEFAULT_MFU, RECOMPUTE_MODES


@dataclass(frozen=True)
class ParamSummary:
    total: int
    non_embedding: int
    active: int
    embedding: int
    components: tuple[P.ParamComponent, ...]


@dataclass(frozen=True)
class TrainingCost:
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
    seq_len: int
    attention: str
    recompute: str
    run: TrainingRun | None  # None: no token count, so no training cost
    seq_len_source: str = "given"  # where T came from: given, the preset's context, a config file field
    mfu_layout: Any = None  # sizing.parallel.estimate_mfu's LayoutMfu when the MFU came from a layout search
    mfu_source: str | None = None  # where the MFU came from when not from a layout ("--mfu", a fallback)
    memory_gpu: str | None = None  # the GPU of the memory summary; None: no summary (memory=False)
    power_watts: float | None = None  # the energy inputs (sizing.training.energy): None is the GPU's TDP
    pue: float = DEFAULT_PUE
    grid_kg_co2_per_kwh: float | None = None

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
        """sizing.memory's MemorySummary (what `sizing estimate` prints), or None when memory=False."""
        if self.memory_gpu is None:
            return None
        from sizing.memory import summary_for_estimate  # sizing.memory never imports this module

        return summary_for_estimate(self.config, self.seq_len, self.memory_gpu)

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
            "conventions": dict(CONVENTIONS, attention=ATTENTION_NOTES[fl.attention]),
        }
        if self.training:
            t = self.training
            out["training"] = {
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
                "mfu_source": self.mfu_source or "constant",
                "mfu_layout": self.mfu_layout.to_dict() if self.mfu_layout is not None else None,
                "gpu_hours": t.gpu_hours,
                "gpu_hours_6n": t.gpu_hours_6n,
                "num_gpus": t.run.num_gpus,
                "wall_clock_days": t.wall_clock_days,
                "price_per_gpu_hour": t.run.price_per_gpu_hour,
                "cost_usd": t.cost_usd,
            }
            if self.energy is not None:
                out["training"].update(self.energy.to_dict())
        if self.memory is not None:
            out["memory"] = self.memory.to_dict()
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
    seq_len: int | str | None = None,
    attention: str = "full",
    recompute: str = "none",
    tokens: int | str | None = None,
    gpu: str | None = None,
    dtype: str | None = None,
    mfu: float = DEFAULT_MFU,
    num_gpus: int = 1,
    price_per_gpu_hour: float | None = None,
    name: str | None = None,
    memory: bool = True,
    power_watts: float | None = None,
    pue: float = DEFAULT_PUE,
    grid_kg_co2_per_kwh: float | None = None,
) -> Estimate:
    """Parameters, FLOPs, training cost and memory for a preset name, a path to a config file
    (a Hugging Face config.json or this tool's JSON, read by sizing.inputs.hf.config_file), a Preset or
    a ModelConfig. seq_len defaults to the preset's training context or the file's
    pretraining context (sizing.inputs.hf.context: RoPE scaling's original_max_position_embeddings,
    else max_position_embeddings; `seq_len_source` says which); tokens to the preset's published
    count. seq_len and tokens may be typed as the CLI takes them ("4096", "2T", "300B").
    memory=True (the default) gives `memory`, the summary `sizing estimate` prints, so to_dict()
    is the CLI's JSON; memory=False leaves it None. gpu defaults to H100 unless the preset's
    published run names another (sizing.inputs.default_gpu). power_watts (default: the GPU's TDP), pue
    and grid_kg_co2_per_kwh give the run's energy and CO2 (sizing.training.energy). Inputs are checked
    here; every result is computed when first read (Estimate)."""
    target = _resolve_model(model)
    cfg, preset = target.config, target.preset
    gpu = gpu if gpu is not None else default_gpu_for(preset.name if preset else None)
    seq_len, seq_len_source = _seq_len(target, seq_len)
    tokens = _count("tokens", tokens, MAX_TOKENS) if tokens is not None else preset.training_tokens if preset else None
    check_hardware_options(gpu, dtype, mfu, num_gpus, price_per_gpu_hour)
    run_energy(0.0, gpu, power_watts, pue, grid_kg_co2_per_kwh)  # the energy inputs, checked with or without tokens
    require_choice("recompute", recompute, RECOMPUTE_MODES)  # checked here: the FLOPs are computed on access
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    run = None
    if tokens is not None:
        run = TrainingRun(
            tokens=tokens, gpu=gpu, dtype=dtype, mfu=mfu, num_gpus=num_gpus, price_per_gpu_hour=price_per_gpu_hour
        )
    return Estimate(
        name=name or target.name,
        source=preset.source if preset else None,
        config=cfg,
        seq_len=seq_len,
        attention=attention,
        recompute=recompute,
        run=run,
        seq_len_source=seq_len_source,
        memory_gpu=get_gpu(gpu).key if memory else None,
        power_watts=power_watts,
        pue=pue,
        grid_kg_co2_per_kwh=grid_kg_co2_per_kwh,
    )


def _seq_len(target: _Target, seq_len: int | str | None) -> tuple[int, str]:
    """(T, where it came from): as given, else the preset's or the file's context; checked
    against the model's own limits."""
    if seq_len is None:
        if target.context is None:
            raise SizingError("seq_len must be given for a config that is not a preset and states no context")
        seq_len, source = target.context, target.context_source
    else:
        seq_len, source = _count("seq_len", seq_len, MAX_SEQ_LEN), "given"
    target.config.check_context(seq_len, "seq_len")
    return seq_len, source


@dataclass(frozen=True)
class _Target:
    name: str
    config: ModelConfig
    preset: Preset | None
    context: int | None
    context_source: str | None


def _resolve_model(model: str | ModelConfig | Preset) -> _Target:
    """A preset name, a config file path, a Preset or a ModelConfig -> config and default context.
    A string that names a preset is the preset; else, a path to a file or directory."""
    if isinstance(model, Preset):
        return _Target(model.name, model.config, model, model.context, f"{model.name}'s training context")
    if isinstance(model, ModelConfig):
        return _Target("custom", model, None, None, None)
    if isinstance(model, (str, os.PathLike)):
        text = os.fspath(model)
        looks_like_path = text.endswith(".json") or os.sep in text or "/" in text or os.path.exists(text)
        try:
            return _resolve_model(get_preset(text))
        except SizingError:
            if not looks_like_path:
                raise
        from sizing.inputs.hf import read_config_file  # only a path pays for the HF mapping

        read = read_config_file(text)
        return _Target(text, read.config, None, read.context, read.context_source(text))
    raise SizingError(f"model ({show(model)}) must be a preset name, a config file path, a Preset or a ModelConfig")


def _count(name: str, value: int | str, maximum: int) -> int:
    """An int, or a string as the CLI takes it, exactly: a token budget in SI ('2T', '1.4e12'),
    a sequence length with K = 1024 ('4096', '128K' = 131,072)."""
    if isinstance(value, str):
        value = (parse_length if name == "seq_len" else parse_quantity)(value, name, maximum)
    return require_int(name, value, 1, maximum)
