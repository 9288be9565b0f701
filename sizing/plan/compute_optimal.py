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
from sizing.inputs import ModelConfig, get_gpu, get_preset
from sizing.training import HOURS_PER_DAY, SECONDS_PER_HOUR, gpu_hours, training_flops, wall_clock_days
from sizing.validate import MAX_COUNT, MAX_FLOAT, SizingError, require_choice, require_int, require_mfu, require_number
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU, RECOMPUTE_MODES

DEFAULT_LAW = "epoch"  # the corrected Approach 3 fit picks the shapes' target N
DEFAULT_LIKE = "llama3-8b"
DEFAULT_SEQ_LEN = 4096
# The smallest budget planned (either spelling: flops, or gpus x days): 1e10 FLOPs trains a
# model of a few hundred parameters, where the laws (fitted from 7e7 parameters up) say nothing.
MIN_BUDGET_FLOPS = 1e10
BUDGET_WHAT = f"a FLOP budget between {MIN_BUDGET_FLOPS:g} and {MAX_FLOAT:g}"
# d_model / n_layers of published families: (ratio, the families that use about it)
ASPECT_RATIOS = (
    (64, "deep: GPT-2 / GPT-3 small (768 / 12)"),
    (102, "Llama-2/3 70B (8192 / 80)"),
    (128, "Llama-2 7B, Llama-3 8B, GPT-3 175B (4096 / 32, 12288 / 96)"),
)
WIDTH_MULTIPLE = 128
FF_MULTIPLE = 256
GQA_KV_HEADS = 8


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
    label: str  # the aspect-ratio family
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


@dataclass(frozen=True)
class Plan:
    flops: float
    budget_note: str  # where C came from
    gpu: str
    mfu: float
    num_gpus: int
    law: str  # the key of the law that set the shapes' target
    optima: tuple[Optimum, ...]
    shapes: tuple[Shape, ...]
    inference: InferenceAware | None
    inference_law: str | None = None  # the loss law of the inference-aware search
    shapes_note: str | None = None  # why no shape is listed (N_opt below the family's smallest shape)

    def optimum(self, key: str) -> Optimum:
        return next(o for o in self.optima if o.key == key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "flops": self.flops,
            "budget": self.budget_note,
            "convention": "C = 6·N·D (N with embeddings), as the laws were fitted; shapes' exact FLOPs beside",
            "gpu": self.gpu,
            "mfu": self.mfu,
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
    mfu: float = DEFAULT_MFU,
    law: str = DEFAULT_LAW,
    like: str = DEFAULT_LIKE,
    seq_len: int = DEFAULT_SEQ_LEN,
    inference_tokens: float | None = None,
    fewest_gpus_hint: bool = True,
) -> Plan:
    """The optimum of each law for `flops` (or gpus x days at mfu on gpu), then one shape per
    ASPECT_RATIOS near the optimum of `law`. `gpus` (default 1 with a FLOP budget) sets the
    days and the ZeRO-3 data-parallel degree of the fit check; a shape that does not fit names
    the fewest GPUs that do, unless `fewest_gpus_hint` is False (a layout search per shape)."""
    require_choice("law", law, tuple(LAWS))
    require_mfu("mfu", mfu)
    gpu_key = get_gpu(gpu).key
    if flops is None:
        if gpus is None or days is None:
            raise SizingError("give a FLOP budget (flops=1e23), or gpus and days (gpus=1024, days=30)")
        require_int("gpus", gpus)
        require_number("days", days, 0, 1e6, exclusive_minimum=True, what="a number of days in (0, 1e6]")
        flops = budget_flops(gpus, days, gpu_key, mfu)
        note = f"{gpus:,} {gpu_key} x {days:g} days x peak x MFU {mfu:g}"
        # one lower bound for both spellings of the budget: below it the laws extrapolate to nonsense
        if not MIN_BUDGET_FLOPS <= flops <= MAX_FLOAT:
            raise SizingError(f"gpus x days ({gpus:,} x {days:g}) gives a budget of {flops:.3g} FLOPs; {BUDGET_WHAT}")
    else:
        if days is not None:
            raise SizingError("give either flops or gpus and days, not both")
        require_number("flops", flops, MIN_BUDGET_FLOPS, MAX_FLOAT, what=BUDGET_WHAT)
        note = "given"
    num_gpus = require_int("gpus", gpus if gpus is not None else 1, 1, MAX_COUNT)
    optima = tuple(_optimum(law_, flops) for law_ in LAWS.values())
    target = next(o for o in optima if o.key == law).params
    base = get_preset(like)
    base_cfg = base.config
    if base_cfg.is_moe:
        raise SizingError(f"like ({like}) must be a dense preset: the laws were fitted on dense models")
    if base_cfg.position == "learned":  # a learned table long enough for the shapes' context
        base_cfg = dataclasses.replace(base_cfg, max_positions=max(base_cfg.max_positions, seq_len))
    shapes, used = [], set()
    shapes_note = _below_smallest(base_cfg, like, LAWS[law], target)
    for ratio, label in () if shapes_note else ASPECT_RATIOS:
        cfg = _nearest(base_cfg, ratio, target, used)
        if cfg.d_model in used:  # the narrowest width again: one row per distinct shape
            continue
        used.add(cfg.d_model)
        shapes.append(_shape(cfg, label, flops, seq_len, gpu_key, mfu, num_gpus, fewest_gpus_hint))
    ia = None
    if inference_tokens is not None:
        require_number("inference_tokens", inference_tokens, 0, MAX_FLOAT, exclusive_minimum=True)
        loss_law = LAWS[law] if law in {x.key for x in LOSS_LAWS} else LAWS[DEFAULT_LAW]
        ia = inference_aware(loss_law, flops, inference_tokens)
    return Plan(flops, note, gpu_key, mfu, num_gpus, law, optima, tuple(shapes), ia, ia and loss_law.key, shapes_note)


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


def _shape(
    cfg: ModelConfig, label: str, flops: float, seq_len: int, gpu: str, mfu: float, num_gpus: int, hint: bool = True
) -> Shape:
    cfg.check_context(seq_len, "seq_len")
    n, active = P.total_params(cfg), P.active_params(cfg)
    tokens = round(tokens_for_budget(flops, active))
    per_token = model_flops_per_token(flop_breakdown(cfg, seq_len))
    entry = get_gpu(gpu)
    total = training_flops(per_token, tokens)
    hours = gpu_hours(total, entry.peak_flops_per_second(entry.default_dtype), mfu)
    fits, setting, max_b = _fit(cfg, seq_len, gpu, num_gpus, hint)
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
        wall_clock_days(hours, num_gpus),
        fits,
        setting,
        max_b,
        within_budget=total <= flops,
        tokens_within_budget=min(tokens, math.floor(flops / per_token)),
    )


def _fit(cfg: ModelConfig, seq_len: int, gpu: str, num_gpus: int, hint: bool = True) -> tuple[bool, str, int | None]:
    """The first of: ZeRO-3 over num_gpus GPUs with recompute none, selective, full (bf16-mixed
    AdamW, micro-batch 1) that fits one GPU. Tensor/pipeline layouts are not searched here."""
    from sizing.memory import training_memory

    zero = 3 if num_gpus > 1 else 0
    for recompute in RECOMPUTE_MODES:
        m = training_memory(cfg, seq_len, 1, zero=zero, dp=num_gpus, recompute=recompute, gpu=gpu)
        if m.fits:
            return True, f"ZeRO-{zero} over {num_gpus} GPU(s), recompute {recompute}", m.max_micro_batch
    from sizing.inputs import Workload
    from sizing.parallel import min_gpus_hint, min_gpus_that_fit  # the one "how many GPUs" answer

    fewest = min_gpus_that_fit(cfg, Workload(seq_len, recompute=None), gpu=gpu) if hint else None
    why = min_gpus_hint(fewest) if fewest is not None else m.reason
    return False, f"not with ZeRO-{zero} over {num_gpus} GPU(s) at any recompute; {why}", None
