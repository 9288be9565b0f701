"""Compute-optimal planning: a FLOP budget (or GPUs x days at an MFU) -> N_opt and D_opt under
each law of sizing.formulas.scaling, then concrete shapes near the chosen N_opt with exact parameters,
FLOPs, GPU-hours and whether they fit for training (sizing.memory).

>>> from sizing.plan.compute_optimal import plan
>>> p = plan(flops=5.76e23)
>>> round(p.optimum("epoch").params / 1e9, 1)
72.2

Shapes follow the family of a base preset (`like`, default llama3-8b: its vocabulary, MLP,
norm, position and FFN-to-width ratio) at the width-to-depth ratios of published families
(ASPECT_RATIOS), with d_model a multiple of width_step (1024 from ~5B parameters), the base's
head size, 8 KV heads where the base uses GQA (as Llama-3) and the head count allows, and d_ff
at the base's ratio rounded up to a multiple of 256.
Each shape trains on D = C / (6·N) tokens (the budget under the laws' convention); its exact
model FLOPs (sizing.formulas.flops) are a little above C because 6N leaves out attention, so a shape
whose exact FLOPs exceed C is marked over budget, with the tokens C pays for at its exact FLOPs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from sizing.formulas import (
    LAWS,
    LOSS_LAWS,
    InferenceAware,
    flop_breakdown,
    inference_aware,
    model_flops_per_token,
    tokens_for_budget,
)
from sizing.formulas import params as P
from sizing.inputs import ModelConfig, format_si, get_gpu, get_preset
from sizing.plan.shape_run import shape_run
from sizing.training import HOURS_PER_DAY, SECONDS_PER_HOUR, gpu_hours, training_flops, wall_clock_days
from sizing.validate import MAX_COUNT, MAX_FLOAT, SizingError, require_choice, require_int, require_mfu, require_number
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU

DEFAULT_LAW = "epoch"  # the corrected Approach 3 fit picks the shapes' target N
DEFAULT_LIKE = "llama3-8b"
DEFAULT_SEQ_LEN = 4096
# The smallest budget planned (either spelling: flops, or gpus x days): 1e10 FLOPs trains a
# model of a few hundred parameters, where the laws (fitted from 7e7 parameters up) say nothing.
MIN_BUDGET_FLOPS = 1e10
BUDGET_WHAT = f"a FLOP budget between {MIN_BUDGET_FLOPS:g} and {MAX_FLOAT:g}"
# d_model / n_layers of published families: (ratio, its word, the families that use about it).
# A shape is named by its size and this word ("96.2B deep"), never by a family of another size.
ASPECT_RATIOS = (
    (64, "deep", "GPT-2 / GPT-3 small (768 / 12)"),
    (102, "balanced", "Llama-2/3 70B (8192 / 80)"),
    (128, "wide", "Llama-2 7B, Llama-3 8B, GPT-3 175B (4096 / 32, 12288 / 96)"),
)
WIDTH_MULTIPLE = 128
FF_MULTIPLE = 256
GQA_KV_HEADS = 8
MAX_BUDGET_ROUNDS = 6  # fixed-point rounds of a gpus x days budget's MFU (_budget_mfu)


@dataclass(frozen=True)
class Optimum:
    key: str
    name: str
    source: str
    coefficients: str
    params: float
    tokens: float
    losses: dict[str, float]  # predicted loss (nats/token) under each loss law, by key

    @property
    def tokens_per_param(self) -> float:
        return self.tokens / self.params


@dataclass(frozen=True)
class Shape:
    label: str  # its size and aspect ("96.2B deep")
    config: ModelConfig
    params: int
    active_params: int
    seq_len: int
    tokens: int
    training_flops_per_token: int | float
    training_flops: int | float
    gpu_hours: float
    days: float
    fits: bool
    fit_setting: str  # the first training setting that fits, or why none does
    max_micro_batch: int | None
    # D = C / (6N) is the laws' convention; the exact FLOPs add attention, so that D can cost
    # more than C. These say whether it stays within the budget, and how many tokens C pays for.
    within_budget: bool = True
    tokens_within_budget: int = 0
    aspect: str = ""  # the width-to-depth ratio aimed at and the published families near it
    mfu: float = DEFAULT_MFU  # of the GPU-hours: the step model's for the shape's layout, or the given constant
    mfu_source: str = ""
    gpus: int = 1  # the GPUs its days are counted on (--gpus, else the fewest its layout needs)
    gpu_hours_band: tuple[float, float] | None = None  # from the step's band (sizing.parallel.band)
    days_band: tuple[float, float] | None = None


@dataclass(frozen=True)
class Plan:
    flops: float
    budget_note: str  # where C came from
    gpu: str
    mfu: float | None  # the budget's MFU (gpus x days); None for a FLOP budget without --mfu
    num_gpus: int
    law: str  # the key of the law that set the shapes' target
    optima: tuple[Optimum, ...]
    shapes: tuple[Shape, ...]
    inference: InferenceAware | None
    inference_law: str | None = None  # the loss law of the inference-aware search
    shapes_note: str | None = None  # why no shape is listed (N_opt below the family's smallest shape)
    mfu_given: float | None = None  # --mfu: the shapes' constant MFU; None: each shape's step model

    def optimum(self, key: str) -> Optimum:
        return next(o for o in self.optima if o.key == key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "flops": self.flops,
            "budget": self.budget_note,
            "convention": "C = 6·N·D (N with embeddings), as the laws were fitted; shapes' exact FLOPs beside",
            "gpu": self.gpu,
            "mfu": self.mfu,
            "mfu_given": self.mfu_given,
            "num_gpus": self.num_gpus,
            "law_for_shapes": self.law,
            "optima": [{**dataclasses.asdict(o), "tokens_per_param": o.tokens_per_param} for o in self.optima],
            "shapes": [_shape_dict(s) for s in self.shapes],
            "inference_aware": None if self.inference is None else _inference_dict(self.inference),
            "inference_law": self.inference_law,
            "shapes_note": self.shapes_note,
        }


def _shape_dict(s: Shape) -> dict[str, Any]:
    c = s.config
    out = {k: v for k, v in dataclasses.asdict(s).items() if k != "config"}
    shape = {"d_model": c.d_model, "n_layers": c.n_layers, "n_heads": c.n_heads, "n_kv_heads": c.kv_heads}
    return {**out, **shape, "d_ff": c.d_ff, "config": c.to_dict()}


def _inference_dict(ia: InferenceAware) -> dict[str, Any]:
    return {**dataclasses.asdict(ia), "total_flops": ia.total_flops, "optimal_total_flops": ia.optimal_total_flops}


def budget_flops(gpus: int, days: float, gpu: str, mfu: float, dtype: str | None = None) -> float:
    """C = GPUs x seconds x peak x MFU: the model FLOPs a cluster delivers."""
    entry = get_gpu(gpu)
    return (
        gpus * days * HOURS_PER_DAY * SECONDS_PER_HOUR * entry.peak_flops_per_second(dtype or entry.default_dtype) * mfu
    )


def plan(
    flops: float | None = None,
    *,
    gpus: int | None = None,
    days: float | None = None,
    gpu: str = DEFAULT_GPU,
    mfu: float | None = None,
    law: str = DEFAULT_LAW,
    like: str = DEFAULT_LIKE,
    seq_len: int = DEFAULT_SEQ_LEN,
    inference_tokens: float | None = None,
) -> Plan:
    """The optimum of each law for `flops` (or gpus x days at an MFU on gpu), then one shape per
    ASPECT_RATIOS near the optimum of `law`. Each shape trains on the layout the step model
    finds on `gpus` GPUs (else the fewest that fit), at that layout's MFU (sizing.plan.shape_run);
    `mfu` given is a constant instead, the explicit override, with the ZeRO-3 fit check over
    `gpus` (default 1). A gpus x days budget without `mfu` is at the step model's MFU of the
    balanced shape its budget gives (_budget_mfu)."""
    require_choice("law", law, tuple(LAWS))
    if mfu is not None:
        require_mfu("mfu", mfu)
    gpu_key = get_gpu(gpu).key
    base_cfg = _base_config(like, seq_len)
    mfu_given = mfu  # the shapes' constant MFU, when given; else each shape's step model
    if flops is None:
        flops, mfu, note = _gpu_days_budget(base_cfg, law, gpus, days, gpu_key, mfu, seq_len)
    else:
        if days is not None:
            raise SizingError("give either flops or gpus and days, not both")
        require_number("flops", flops, MIN_BUDGET_FLOPS, MAX_FLOAT, what=BUDGET_WHAT)
        note = "given"
    num_gpus = require_int("gpus", gpus if gpus is not None else 1, 1, MAX_COUNT)
    optima = tuple(_optimum(law_, flops) for law_ in LAWS.values())
    target = next(o for o in optima if o.key == law).params
    shapes, used = [], set()
    shapes_note = _below_smallest(base_cfg, like, LAWS[law], target)
    for ratio, word, families in () if shapes_note else ASPECT_RATIOS:
        cfg = _nearest(base_cfg, ratio, target, used)
        if cfg.d_model in used:  # the narrowest width again: one row per distinct shape
            continue
        used.add(cfg.d_model)
        shape = _shape(cfg, word, flops, seq_len, gpu_key, mfu_given, gpus)
        aspect = f"d_model / layers {cfg.d_model / cfg.n_layers:.0f} (aimed at {ratio}: {families})"
        shapes.append(dataclasses.replace(shape, label=f"{format_si(shape.params)} {word}", aspect=aspect))
    ia = None
    if inference_tokens is not None:
        require_number("inference_tokens", inference_tokens, 0, MAX_FLOAT, exclusive_minimum=True)
        loss_law = LAWS[law] if law in {x.key for x in LOSS_LAWS} else LAWS[DEFAULT_LAW]
        ia = inference_aware(loss_law, flops, inference_tokens)
    loss_key = ia and loss_law.key
    return Plan(flops, note, gpu_key, mfu, num_gpus, law, optima, tuple(shapes), ia, loss_key, shapes_note, mfu_given)


def _below_smallest(base: ModelConfig, like: str, law, target: float) -> str | None:
    """A note when N_opt is below the family's smallest shape (one layer at the narrowest
    width), whose every row would be that one shape at many times N_opt; None otherwise."""
    smallest = P.total_params(shape_config(base, width_step(target), 1))
    if target >= smallest:
        return None
    lo, hi = 0.0, math.log10(MAX_FLOAT)  # log10 of the budget whose N_opt is the smallest shape
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if law.optimal_params(10**mid) < smallest else (lo, mid)
    return (
        f"N_opt ({target:.3g} parameters) is below the smallest {like} shape (d_model {width_step(target)}, "
        f"1 layer: {smallest:,} parameters); no shape matches this budget: from about {10**hi:.2g} FLOPs it does"
    )


def _optimum(law, flops: float) -> Optimum:
    n, d = law.optimal_params(flops), law.optimal_tokens(flops)
    losses = {x.key: x.loss(n, d) for x in LOSS_LAWS}
    return Optimum(law.key, law.name, law.source, law.coefficients(), n, d, losses)


def width_step(target_params: float) -> int:
    """d_model's multiple: 1024 from ~5B parameters (heads of 128 dims, a multiple of 8 heads
    for 8 KV heads and tensor parallelism), 256 from ~300M, else 128."""
    return 1024 if target_params >= 5e9 else 256 if target_params >= 3e8 else 128


def shape_config(base: ModelConfig, d_model: int, n_layers: int) -> ModelConfig:
    """The base family at width d_model and depth n_layers: heads of the base's head size (at
    most 64 below d_model 2048; see _head_size); 8 KV heads when the base uses grouped-query
    attention and there are at least 16 heads in a multiple of 8, else one per head; d_ff at the
    base's d_ff / d_model ratio rounded up to a multiple of 256."""
    head_dim = _head_size(base, d_model)
    n_heads = max(1, d_model // head_dim)
    gqa = base.kv_heads < base.n_heads and n_heads % GQA_KV_HEADS == 0 and n_heads >= 2 * GQA_KV_HEADS
    kv = GQA_KV_HEADS if gqa else n_heads
    ff = FF_MULTIPLE * -(-round(d_model * base.d_ff / base.d_model) // FF_MULTIPLE)
    return dataclasses.replace(
        base,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        n_kv_heads=kv,
        head_dim=None,
        d_ff=ff,
        expert_d_ff=None if base.expert_d_ff is None else ff,
    )


def _head_size(base: ModelConfig, d_model: int) -> int:
    """The base's head size (at most 64 below d_model 2048) when it divides d_model and, with
    partial RoPE, rotates a positive even number of dims; else the largest smaller one that
    does (Phi-2 rotates 0.4 of its heads: 64 would rotate 25 dims, 32 rotates 12)."""
    preferred = base.d_head if d_model >= 2048 else min(base.d_head, 64)

    def valid(h: int) -> bool:
        rotated = int(h * base.rotary_fraction)
        partial = base.position == "rope" and base.rotary_fraction != 1.0
        return d_model % h == 0 and (not partial or (rotated > 0 and rotated % 2 == 0))

    return next((h for h in range(preferred, 1, -1) if valid(h)), preferred)


def _nearest(base: ModelConfig, ratio: float, target: float, used: set[int]) -> ModelConfig:
    """For each width (a multiple of width_step) not in `used`, the depth whose exact parameter
    count is nearest the target; of those, the width whose d_model / n_layers is nearest `ratio`."""
    step = width_step(target)
    best, best_gap = None, float("inf")
    for d in range(step, 1 << 17, step):
        one = shape_config(base, d, 1)
        per_layer = P.layer_params(one)
        outside = P.total_params(one) - per_layer
        if outside + per_layer > target * 1.5:
            break
        layers = max(1, round((target - outside) / per_layer))
        if d in used:
            continue
        gap = abs(math.log(d / layers / ratio))
        if gap < best_gap:
            best, best_gap = shape_config(base, d, layers), gap
    return best if best is not None else shape_config(base, step, 1)


def _base_config(like: str, seq_len: int) -> ModelConfig:
    """The family's base: a dense preset, a learned position table long enough for seq_len."""
    base_cfg = get_preset(like).config
    if base_cfg.is_moe:
        raise SizingError(f"like ({like}) must be a dense preset: the laws were fitted on dense models")
    if base_cfg.position == "learned":  # a learned table long enough for the shapes' context
        base_cfg = dataclasses.replace(base_cfg, max_positions=max(base_cfg.max_positions, seq_len))
    return base_cfg


def _gpu_days_budget(base: ModelConfig, law: str, gpus, days, gpu: str, mfu: float | None, seq_len: int):
    """(C, the MFU it assumes, where C came from) of a gpus x days budget: at `mfu` when given,
    else at the step model's (_budget_mfu)."""
    if gpus is None or days is None:
        raise SizingError("give a FLOP budget (flops=1e23), or gpus and days (gpus=1024, days=30)")
    require_int("gpus", gpus)
    require_number("days", days, 0, 1e6, exclusive_minimum=True, what="a number of days in (0, 1e6]")
    mfu_source = "given"
    if mfu is None:
        mfu, mfu_source = _budget_mfu(base, law, gpus, days, gpu, seq_len)
    flops = budget_flops(gpus, days, gpu, mfu)
    # one lower bound for both spellings of the budget: below it the laws extrapolate to nonsense
    if not MIN_BUDGET_FLOPS <= flops <= MAX_FLOAT:
        raise SizingError(f"gpus x days ({gpus:,} x {days:g}) gives a budget of {flops:.3g} FLOPs; {BUDGET_WHAT}")
    return flops, mfu, f"{gpus:,} {gpu} x {days:g} days x peak x MFU {mfu:.3g} ({mfu_source})"


def _budget_mfu(base: ModelConfig, law: str, gpus: int, days: float, gpu: str, seq_len: int) -> tuple[float, str]:
    """The MFU of a gpus x days budget: the step model's for the balanced shape (d_model / layers
    ~102) at the N_opt that budget gives, found by fixed-point iteration from DEFAULT_MFU (the
    MFU sets the budget, the budget the shape, the shape the MFU); a few rounds agree to 0.1%."""
    mfu, source = DEFAULT_MFU, f"constant {DEFAULT_MFU:g}, assumed: no layout of the step model fits"
    for _ in range(MAX_BUDGET_ROUNDS):
        target = LAWS[law].optimal_params(budget_flops(gpus, days, gpu, mfu))
        if _below_smallest(base, "", LAWS[law], target):
            break
        cfg = _nearest(base, ASPECT_RATIOS[1][0], target, set())
        run = shape_run(cfg, seq_len, gpu, gpus, None)
        if run.band is None:
            break
        done = abs(run.mfu - mfu) <= 1e-3 * mfu
        mfu, source = run.mfu, f"step model, balanced {format_si(P.total_params(cfg))} shape on {gpus} x {gpu}"
        if done:
            break
    return mfu, source


def _shape(
    cfg: ModelConfig, label: str, flops: float, seq_len: int, gpu: str, mfu: float | None, gpus: int | None
) -> Shape:
    cfg.check_context(seq_len, "seq_len")
    n, active = P.total_params(cfg), P.active_params(cfg)
    tokens = round(tokens_for_budget(flops, active))
    per_token = model_flops_per_token(flop_breakdown(cfg, seq_len))
    entry = get_gpu(gpu)
    total = training_flops(per_token, tokens)
    run = shape_run(cfg, seq_len, entry.key, gpus, mfu)
    hours = gpu_hours(total, entry.peak_flops_per_second(entry.default_dtype), run.mfu)
    days = wall_clock_days(hours, run.gpus)
    return Shape(
        label,
        cfg,
        n,
        active,
        seq_len,
        tokens,
        per_token,
        total,
        hours,
        days,
        run.fits,
        run.fit_setting,
        run.max_micro_batch,
        within_budget=total <= flops,
        tokens_within_budget=min(tokens, math.floor(flops / per_token)),
        mfu=run.mfu,
        mfu_source=run.mfu_source,
        gpus=run.gpus,
        gpu_hours_band=None if run.band is None else run.band.scaled(hours),
        days_band=None if run.band is None else run.band.scaled(days),
    )
