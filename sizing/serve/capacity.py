"""Capacity planning: how many GPUs serve R requests/s of P prompt and O output tokens with
TTFT <= x and TPOT <= y? For each layout (tp, weight dtype, KV dtype) the continuous-batching
model (batching.py) finds the largest goodput of one replica under the SLOs (its concurrency is
the batch searched), at the GPU's calibrated efficiencies (calibration.py); replicas =
⌈R / goodput⌉, GPUs = replicas x tp, and

    $ per M output tokens = GPUs x price per GPU-hour / (R x O x 3600) x 10^6

(every GPU paid for the hour while R requests/s flow). The answer is the layout with the fewest
GPUs, then the lowest cost. Searched: tp in 1, 2, 4, 8 (one NVLink domain; each must divide the
query heads and split or replicate the KV heads), weights bf16 / fp8 / int4, KV cache bf16 / fp8;
matmuls in bf16 (the dense peak of the GPU, conservative for fp8 engines). Pipeline parallelism
is not modelled by sizing.serve, so pp is 1 throughout and the table says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sizing.inputs import ModelConfig, get_gpu
from sizing.serve.batching import DEFAULT_BLOCK_SIZE, DEFAULT_TOKEN_BUDGET, BatchingPoint, ContinuousBatching
from sizing.serve.calibration import default_efficiencies
from sizing.serve.estimate import context_notes
from sizing.serve.fit import valid_tp
from sizing.serve.result import ServeSettings
from sizing.validate import MAX_PRICE, SizingError, require_int, require_number, require_rate, show
from sizing.vocabulary import (
    DEFAULT_MLA_IMPL,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
)

SEARCH_TP = (1, 2, 4, 8)
SEARCH_WEIGHT_DTYPES = ("bf16", "fp8", "int4")
SEARCH_KV_DTYPES = ("bf16", "fp8")
_PRECISION = {"bf16": 0, "fp8": 1, "int8": 1, "int4": 2}  # rank: less quantised first
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}


def parse_seconds(text: str | float, name: str) -> float:
    """'2s', '50ms', '500us' or a bare number of seconds -> seconds (positive, finite)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return require_number(name, text, 0, 1e6)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs)?\s*", str(text))
    if not match:
        raise SizingError(f"{name} ({show(text)}) must be a duration such as 2s, 50ms or 0.05")
    return require_number(name, float(match.group(1)) * _UNITS[match.group(2) or "s"], 0, 1e6, shown=str(text))


@dataclass(frozen=True)
class CapacityRow:
    tp: int
    pp: int
    weight_dtype: str
    kv_dtype: str
    point: BatchingPoint | None  # the goodput point of one replica; None: no concurrency meets the SLOs
    replicas: int | None
    gpus: int | None
    usd_per_million_output_tokens: float | None
    why_not: str | None = None

    def to_dict(self) -> dict:
        return {
            "tp": self.tp,
            "pp": self.pp,
            "weight_dtype": self.weight_dtype,
            "kv_dtype": self.kv_dtype,
            "replicas": self.replicas,
            "gpus": self.gpus,
            "usd_per_million_output_tokens": self.usd_per_million_output_tokens,
            "goodput": None if self.point is None else self.point.to_dict(),
            "why_not": self.why_not,
        }


@dataclass(frozen=True)
class CapacityPlan:
    model: str | None
    gpu: str
    rate: float
    prompt: int
    output: int
    slo_ttft_seconds: float | None
    slo_tpot_seconds: float | None
    price_per_gpu_hour: float
    rows: tuple[CapacityRow, ...]

    @property
    def feasible(self) -> list[CapacityRow]:
        return sorted(
            (r for r in self.rows if r.gpus is not None),
            key=lambda r: (r.gpus, _PRECISION[r.weight_dtype], _PRECISION[r.kv_dtype], r.tp),
        )

    @property
    def best(self) -> CapacityRow | None:
        """Fewest GPUs (cost follows: the same price per GPU); among equals the least quantised
        weights, then KV cache, then the smallest tp."""
        rows = self.feasible
        return rows[0] if rows else None

    def to_dict(self) -> dict:
        best = self.best
        return {
            "model": self.model,
            "gpu": self.gpu,
            "rate_requests_per_second": self.rate,
            "prompt_tokens": self.prompt,
            "output_tokens": self.output,
            "slo_ttft_seconds": self.slo_ttft_seconds,
            "slo_tpot_seconds": self.slo_tpot_seconds,
            "price_per_gpu_hour": self.price_per_gpu_hour,
            "best": None if best is None else best.to_dict(),
            "layouts": [r.to_dict() for r in self.feasible],
            "rejected": [r.to_dict() for r in self.rows if r.gpus is None],
        }


def plan_capacity(
    model: ModelConfig,
    rate: float,
    prompt: int,
    output: int,
    gpu: str,
    slo_ttft: float | None = None,
    slo_tpot: float | None = None,
    price: float = DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    name: str | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    block_size: int = DEFAULT_BLOCK_SIZE,
    compute_efficiency: float | None = None,
    bandwidth_efficiency: float | None = None,
    mla: str = DEFAULT_MLA_IMPL,
    trained_context: int | None = None,
    served_context: int | None = None,
) -> CapacityPlan:
    """Every layout of the search, with its replicas, GPUs and $/M output tokens at `rate`. The
    prompt and output pass `sizing serve`'s context check (estimate.context_notes)."""
    require_rate("rate", rate)
    require_int("prompt", prompt)
    require_int("output", output, minimum=2)
    context_notes(model, prompt, output, trained_context, served_context)
    require_number("price", price, 0, MAX_PRICE)
    gpu_entry = get_gpu(gpu)
    calibrated = default_efficiencies(gpu_entry.key)
    compute_efficiency = calibrated[0] if compute_efficiency is None else compute_efficiency
    bandwidth_efficiency = calibrated[1] if bandwidth_efficiency is None else bandwidth_efficiency
    rows = []
    for tp in SEARCH_TP:
        if not valid_tp(model, tp) or (tp > 1 and gpu_entry.nvlink_gbs is None):
            continue
        for weight_dtype in SEARCH_WEIGHT_DTYPES:
            for kv_dtype in SEARCH_KV_DTYPES:
                s = ServeSettings(
                    1, prompt, output, tp, tp, weight_dtype, kv_dtype, "bf16", "causal",
                    compute_efficiency, bandwidth_efficiency, price, None, mla,
                )  # fmt: skip
                cb = ContinuousBatching(model, gpu_entry, s, token_budget, block_size)
                rows.append(_row(cb, rate, output, price, slo_ttft, slo_tpot))
    return CapacityPlan(name, gpu_entry.key, rate, prompt, output, slo_ttft, slo_tpot, price, tuple(rows))


def _row(cb: ContinuousBatching, rate: float, output: int, price: float, slo_ttft, slo_tpot) -> CapacityRow:
    s = cb.settings
    head = (s.tp, 1, s.weight_dtype, s.kv_dtype)
    if cb.max_concurrency_without_preemption < 1:
        return CapacityRow(*head, None, None, None, None, cb.why_nothing_fits())
    point = cb.goodput(slo_ttft, slo_tpot)
    if point is None:
        return CapacityRow(*head, None, None, None, None, "no concurrency meets the SLOs")
    replicas = math.ceil(rate / point.requests_per_second)
    gpus = replicas * s.tp
    usd = gpus * price / (rate * output * 3600) * 1e6
    return CapacityRow(*head, point, replicas, gpus, usd)
