"""The Python API: one call gives the result object that every output format renders.

>>> from sizing import estimate
>>> est = estimate("llama2-7b")
>>> est.params.total
6738415616
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import flops as F
from . import params as P
from .config import ModelConfig
from .conventions import ATTENTION_NOTES, CONVENTIONS, model_flops_per_token
from .hardware import GPU, get_gpu
from .presets import Preset, get_preset
from .training import TrainingRun, cost_usd, gpu_hours, training_flops, wall_clock_days
from .vocabulary import DEFAULT_GPU, DEFAULT_MFU


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
    name: str
    source: str | None
    config: ModelConfig
    params: ParamSummary
    flops: F.FlopBreakdown
    kaplan_6n_per_token: int
    training: TrainingCost | None
    memory: Any = None  # filled by sizing.memory when asked for

    @property
    def decode_per_token(self) -> int:
        """Inference: forward FLOPs of one new token with a KV cache holding seq_len positions."""
        return F.decode_flops_per_token(self.config, self.flops.seq_len)

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
                "gpu_hours": t.gpu_hours,
                "gpu_hours_6n": t.gpu_hours_6n,
                "num_gpus": t.run.num_gpus,
                "wall_clock_days": t.wall_clock_days,
                "price_per_gpu_hour": t.run.price_per_gpu_hour,
                "cost_usd": t.cost_usd,
            }
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
    seq_len: int | None = None,
    attention: str = "full",
    recompute: str = "none",
    tokens: int | None = None,
    gpu: str = DEFAULT_GPU,
    dtype: str | None = None,
    mfu: float = DEFAULT_MFU,
    num_gpus: int = 1,
    price_per_gpu_hour: float | None = None,
    name: str | None = None,
) -> Estimate:
    """Parameters, FLOPs and training cost for a preset name, a Preset or a ModelConfig.
    seq_len and tokens default to the preset's training context and published tokens."""
    preset = get_preset(model) if isinstance(model, str) else model if isinstance(model, Preset) else None
    cfg = preset.config if preset else model
    if seq_len is None:
        if preset is None:
            raise ValueError("seq_len must be given for a config that is not a preset")
        seq_len = preset.context
    if tokens is None and preset is not None:
        tokens = preset.training_tokens
    summary = param_summary(cfg)
    breakdown = F.flop_breakdown(cfg, seq_len, attention, recompute)
    cost = None
    if tokens is not None:
        run = TrainingRun(
            tokens=tokens, gpu=gpu, dtype=dtype, mfu=mfu, num_gpus=num_gpus, price_per_gpu_hour=price_per_gpu_hour
        )
        cost = training_cost(cfg, breakdown, summary.active, run)
    return Estimate(
        name=name or (preset.name if preset else "custom"),
        source=preset.source if preset else None,
        config=cfg,
        params=summary,
        flops=breakdown,
        kaplan_6n_per_token=F.kaplan_6n_per_token(summary.active),
        training=cost,
    )
