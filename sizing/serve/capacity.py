"""Capacity planning: how many GPUs serve R requests/s of a request mix with p99 (or another
percentile) TTFT <= x and TPOT <= y? For each layout (tp, weights, KV dtype) the load model
(load.py, replica.py) finds the most requests/s one replica serves within the SLOs at the
percentile; replicas = ⌈R / that rate⌉, GPUs = replicas x tp, and

    $ per M output tokens = GPUs x price per GPU-hour / (R x E[O] x 3600) x 10^6

(every GPU paid for the hour while R requests/s flow). The answer is the layout with the fewest
GPUs, then the least quantised weights and KV, then the smallest tp; its latency percentiles are
those at its own load, R / replicas per replica.

The search: tp in 1, 2, 4, 8 (one NVLink domain; each must divide the query heads and split or
replicate the KV heads), weights bf16 / fp8 / int4 and KV bf16 / fp8, unless the user names
them: a weight dtype or format (`--weight-dtype`, `--quant`), a KV dtype or a tp narrows the
search to it. Every layout left out says why, with its numbers: the weights do not fit, one
request's KV does not fit beside them, or an SLO is missed even at the lowest load. Layouts
that cannot beat the best found (an optimistic bound on their rate, `rate_bound`) are not
solved. Pipeline parallelism is not modelled (pp 1).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sizing.inputs import GPU, ModelConfig, get_gpu
from sizing.serve.batching import DEFAULT_BLOCK_SIZE, DEFAULT_TOKEN_BUDGET, ContinuousBatching
from sizing.serve.calibration import default_efficiencies
from sizing.serve.fit import valid_tp
from sizing.serve.latency import LoadPoint, latency_at
from sizing.serve.load import ServingLoad
from sizing.serve.replica import ReplicaLimit, lowest_rate_misses, replica_max_rate
from sizing.serve.requests import RequestMix, fixed_mix
from sizing.serve.result import ServeSettings
from sizing.validate import MAX_PRICE, SizingError, require_bool, require_number, require_rate, show
from sizing.vocabulary import DEFAULT_MLA_IMPL, DEFAULT_SERVE_PRICE_PER_GPU_HOUR

SEARCH_TP = (1, 2, 4, 8)
SEARCH_WEIGHT_DTYPES = ("bf16", "fp8", "int4")
SEARCH_KV_DTYPES = ("bf16", "fp8")
DEFAULT_PERCENTILE = 0.99
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}


def parse_seconds(text: str | float, name: str) -> float:
    """'2s', '50ms', '500us' or a bare number of seconds -> seconds (positive, finite)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return require_number(name, text, 0, 1e6)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs)?\s*", str(text))
    if not match:
        raise SizingError(f"{name} ({show(text)}) must be a duration such as 2s, 50ms or 0.05")
    return require_number(name, float(match.group(1)) * _UNITS[match.group(2) or "s"], 0, 1e6, shown=str(text))


def precision_rank(dtype: str) -> float:
    """Fewer bits per weight rank later: among equal GPU counts the least quantised wins."""
    from sizing.memory import get_format
    from sizing.vocabulary import DTYPE_BITS

    return -float(DTYPE_BITS[dtype] if dtype in DTYPE_BITS else get_format(dtype).bits)


@dataclass(frozen=True)
class CapacityRow:
    tp: int
    pp: int
    weight_dtype: str
    kv_dtype: str
    limit: ReplicaLimit | None  # None: not solved (why_not says why)
    replicas: int | None
    gpus: int | None
    usd_per_million_output_tokens: float | None
    load: LoadPoint | None = None  # latencies at R / replicas per replica
    why_not: str | None = None
    binding: str | None = None  # what stops more requests/s per replica, or why the layout is out

    def to_dict(self) -> dict:
        return {
            "tp": self.tp,
            "pp": self.pp,
            "weight_dtype": self.weight_dtype,
            "kv_dtype": self.kv_dtype,
            "replicas": self.replicas,
            "gpus": self.gpus,
            "usd_per_million_output_tokens": self.usd_per_million_output_tokens,
            "max_requests_per_second_per_replica": None if self.limit is None else self.limit.max_rate,
            "binding": self.binding,
            "at_load": None if self.load is None else self.load.to_dict(),
            "why_not": self.why_not,
        }


@dataclass(frozen=True)
class CapacityPlan:
    model: str | None
    gpu: str
    rate: float
    mix: RequestMix
    slo_ttft_seconds: float | None
    slo_tpot_seconds: float | None
    percentile: float
    price_per_gpu_hour: float
    rows: tuple[CapacityRow, ...]
    efficiency_note: str | None = None  # the GPU's efficiencies borrowed from a kin (calibration.borrowed_note)

    @property
    def prompt(self) -> float:
        return self.mix.mean_prompt

    @property
    def output(self) -> float:
        return self.mix.mean_output

    @property
    def feasible(self) -> list[CapacityRow]:
        return sorted((r for r in self.rows if r.gpus is not None), key=_order)

    @property
    def best(self) -> CapacityRow | None:
        rows = self.feasible
        return rows[0] if rows else None

    @property
    def rejected(self) -> list[CapacityRow]:
        return [r for r in self.rows if r.gpus is None]

    def to_dict(self) -> dict:
        best = self.best
        return {
            "model": self.model,
            "gpu": self.gpu,
            "rate_requests_per_second": self.rate,
            "requests": self.mix.to_dict(),
            "slo_ttft_seconds": self.slo_ttft_seconds,
            "slo_tpot_seconds": self.slo_tpot_seconds,
            "percentile": self.percentile,
            "price_per_gpu_hour": self.price_per_gpu_hour,
            "best": None if best is None else best.to_dict(),
            "layouts": [r.to_dict() for r in self.feasible],
            "rejected": [r.to_dict() for r in self.rejected],
            "efficiency_note": self.efficiency_note,
        }


def _order(r: CapacityRow) -> tuple:
    return (r.gpus, precision_rank(r.weight_dtype), precision_rank(r.kv_dtype), r.tp)


@dataclass(frozen=True)
class CapacityQuestion:
    """What every layout is asked: the model, GPU, rate, mix, SLOs and the engine's settings."""

    cfg: ModelConfig
    gpu: GPU
    rate: float
    mix: RequestMix
    slo_ttft: float | None
    slo_tpot: float | None
    percentile: float
    price: float
    token_budget: int
    block_size: int
    efficiencies: tuple[float, float]
    mla: str
    activation_dtype: str = "bf16"

    def replica(
        self, tp: int, weight_dtype: str, kv_dtype: str, prompt: int | None = None, output: int | None = None
    ) -> ContinuousBatching:
        """One replica's engine; its prompt is the mix's token-weighted prompt (the prompt a prefill
        token belongs to: an iteration's prefill FLOPs per token), its output the mix's mean."""
        c, b = self.efficiencies
        prompt = self.mix.token_prompt if prompt is None else prompt
        output = max(2, round(self.mix.mean_output)) if output is None else output
        s = ServeSettings(
            1, prompt, output, tp, tp, weight_dtype, kv_dtype,
            self.activation_dtype, "causal", c, b, self.price, None, self.mla,
        )  # fmt: skip
        return ContinuousBatching(self.cfg, self.gpu, s, self.token_budget, self.block_size)


def plan_capacity(
    model: ModelConfig,
    rate: float,
    prompt: int | None,
    output: int | None,
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
    percentile: float = DEFAULT_PERCENTILE,
    mix: RequestMix | None = None,
    weight_dtypes: tuple[str, ...] = SEARCH_WEIGHT_DTYPES,
    kv_dtypes: tuple[str, ...] = SEARCH_KV_DTYPES,
    tps: tuple[int, ...] = SEARCH_TP,
    activation_dtype: str = "bf16",
    trained_context: int | None = None,
    served_context: int | None = None,
    first_fit: bool = False,
) -> CapacityPlan:
    """Every layout of the search (narrowed to the dtypes and tps given), with its replicas,
    GPUs and $/M output tokens at `rate`; `first_fit`: stop at the first layout that serves it
    (whether one does: the UI's fits-on list). `mix` (requests.py) replaces prompt/output; each of
    its requests passes `sizing serve`'s context check (serve.notes.context_notes)."""
    from sizing.serve.calibration import borrowed_note
    from sizing.serve.notes import context_notes

    require_bool("first_fit", first_fit)
    q = capacity_question(model, rate, prompt, output, gpu, slo_ttft, slo_tpot, price, token_budget, block_size,
                  compute_efficiency, bandwidth_efficiency, mla, percentile, mix, activation_dtype)  # fmt: skip
    for c in q.mix.classes:
        context_notes(model, c.prompt, c.output, trained_context, served_context)
    rows: list[CapacityRow] = []
    best: CapacityRow | None = None
    for tp, wd, kv, bound in layouts_in_order(q, tps, weight_dtypes, kv_dtypes, rows):
        at_least = math.ceil(q.rate / bound) * tp
        if best is not None and (at_least, precision_rank(wd), precision_rank(kv), tp) > _order(best):
            rows.append(CapacityRow(tp, 1, wd, kv, None, None, None, None, None,
                                    f"not solved: needs at least {at_least} GPUs (at most {bound:.3g} requests/s "
                                    f"per replica), and {best.gpus} GPUs of {best.weight_dtype} weights do it",
                                    "bound"))  # fmt: skip
            continue
        row = _row(q, tp, wd, kv) if not first_fit else _row_verdict(q, tp, wd, kv)
        rows.append(row)
        if row.gpus is not None and (best is None or _order(row) < _order(best)):
            best = row
        if first_fit and best is not None:
            break
    borrowed = borrowed_note(q.gpu.key) if compute_efficiency is None and bandwidth_efficiency is None else None
    return CapacityPlan(name, q.gpu.key, q.rate, q.mix, q.slo_ttft, q.slo_tpot, q.percentile, q.price, tuple(rows),
                        borrowed)  # fmt: skip


def capacity_question(model, rate, prompt, output, gpu, slo_ttft, slo_tpot, price, token_budget, block_size,
              compute_efficiency, bandwidth_efficiency, mla, percentile, mix, activation_dtype):  # fmt: skip
    """The inputs checked, the GPU's calibrated efficiencies where none are given."""
    require_rate("rate", rate)
    require_number("price", price, 0, MAX_PRICE)
    require_number("percentile", percentile, 0, 1, exclusive_minimum=True, what="a share in (0, 1), e.g. 0.99")
    if percentile >= 1:
        raise SizingError(f"percentile ({show(percentile)}) must be below 1, e.g. 0.99 for p99")
    mix = mix if mix is not None else fixed_mix(prompt, output)
    gpu_entry = get_gpu(gpu)
    c, b = default_efficiencies(gpu_entry.key)
    effs = (
        c if compute_efficiency is None else compute_efficiency,
        b if bandwidth_efficiency is None else bandwidth_efficiency,
    )
    return CapacityQuestion(model, gpu_entry, rate, mix, slo_ttft, slo_tpot, percentile, price, token_budget,
                            block_size, effs, mla, activation_dtype)  # fmt: skip


def reject_reason(q: CapacityQuestion, cb: ContinuousBatching) -> tuple[str, str] | None:
    """(binding, why) when a replica cannot hold the weights or the KV cache of the mix's longest
    request (ContinuousBatching.why_nothing_fits says it with the numbers)."""
    longest = max(q.mix.classes, key=lambda c: c.prompt + c.output)
    one = q.replica(cb.settings.tp, cb.settings.weight_dtype, cb.settings.kv_dtype, longest.prompt, longest.output)
    if one.max_concurrency_without_preemption >= 1:
        return None
    weights = one._machine.memory(1)[0]
    return ("weights" if weights > q.gpu.memory_bytes else "KV for one sequence"), one.why_nothing_fits()


def _row(q: CapacityQuestion, tp: int, weight_dtype: str, kv_dtype: str) -> CapacityRow:
    head = (tp, 1, weight_dtype, kv_dtype)
    cb = q.replica(tp, weight_dtype, kv_dtype)
    rejected = reject_reason(q, cb)
    if rejected is not None:
        return CapacityRow(*head, None, None, None, None, None, rejected[1], rejected[0])
    load = ServingLoad(cb, q.mix)
    limit = replica_max_rate(load, q.slo_ttft, q.slo_tpot, q.percentile)
    if limit.max_rate is None:
        return CapacityRow(*head, limit, None, None, None, None, limit.why_not, limit.binding)
    replicas = math.ceil(q.rate / limit.max_rate)
    gpus = replicas * tp
    usd = gpus * q.price / (q.rate * q.mix.mean_output * 3600) * 1e6
    percentiles = tuple(sorted({0.5, 0.9, 0.99, q.percentile}))
    at = latency_at(load, q.rate / replicas, percentiles, q.slo_ttft, q.slo_tpot)
    return CapacityRow(*head, limit, replicas, gpus, usd, at, None, limit.binding)


def _row_verdict(q: CapacityQuestion, tp: int, weight_dtype: str, kv_dtype: str) -> CapacityRow:
    """Whether this layout serves the rate at all (the fits-on list's question): latencies and the
    KV cache grow with the rate, so some rate meets the SLOs iff the lowest one does, and replicas
    then carry any rate."""
    head = (tp, 1, weight_dtype, kv_dtype)
    cb = q.replica(tp, weight_dtype, kv_dtype)
    rejected = reject_reason(q, cb)
    if rejected is not None:
        return CapacityRow(*head, None, None, None, None, None, rejected[1], rejected[0])
    miss = lowest_rate_misses(ServingLoad(cb, q.mix), q.slo_ttft, q.slo_tpot, q.percentile)
    if miss is not None:
        return CapacityRow(*head, None, None, None, None, None, f"misses the {miss} at the lowest load", miss)
    # only the verdict: one replica's GPUs, its rate, replicas and cost left unsolved
    return CapacityRow(*head, ReplicaLimit(None, None, "verdict only"), None, tp, None, None, None, "verdict only")


def rate_bound(q: CapacityQuestion, cb: ContinuousBatching) -> float:
    """An optimistic bound on one replica's requests/s: the prompts' compute alone (no weight
    reads, no decodes) and the KV cache's sequences at the fastest iteration (one decode) with
    TPOT no shorter than it; within the TPOT SLO, only the concurrency whose iteration meets it."""
    mix, ctx = q.mix, q.mix.mean_decode_context
    prefill = cb.step(0, ctx, max(1, round(mix.mean_prompt))).compute_seconds
    per_sequence = sum(c.share * (c.output - 1) * -(-(c.prompt + c.output) // cb.block_size) for c in mix.classes)
    concurrency = max(1, math.floor(cb.blocks * mix.mean_decode_steps / per_sequence))
    if q.slo_tpot is not None:
        n, hi = 1, concurrency
        while n < hi:  # the largest concurrency whose decode iteration meets the SLO
            mid = (n + hi + 1) // 2
            n, hi = (mid, hi) if cb.step(mid, ctx).seconds <= q.slo_tpot else (n, mid - 1)
        concurrency = n
    decode = concurrency / (mix.mean_decode_steps * cb.step(1, ctx).seconds)
    return min(1 / prefill if prefill > 0 else math.inf, decode)


def layouts_in_order(q: CapacityQuestion, tps, weight_dtypes, kv_dtypes, rows: list):
    """(tp, weights, KV, rate bound) of every layout that holds its weights and one request,
    fewest GPUs at its bound first; the others appended to `rows` with the reason."""
    candidates = []
    for tp in tps:
        for wd in weight_dtypes:
            for kv in kv_dtypes:
                why = invalid_tp(q, tp)
                if why is None:
                    cb = q.replica(tp, wd, kv)
                    rejected = reject_reason(q, cb)
                    if rejected is None:
                        bound = rate_bound(q, cb)
                        candidates.append(
                            (math.ceil(q.rate / bound) * tp, precision_rank(wd), precision_rank(kv), tp, wd, kv, bound)
                        )
                        continue
                    binding, why = rejected
                else:
                    binding = "tp"
                rows.append(CapacityRow(tp, 1, wd, kv, None, None, None, None, None, why, binding))
    for *_, tp, wd, kv, bound in sorted(candidates):
        yield tp, wd, kv, bound


def invalid_tp(q: CapacityQuestion, tp: int) -> str | None:
    if not valid_tp(q.cfg, tp):
        return f"tp {tp} does not split the {q.cfg.n_heads} query heads and {q.cfg.kv_heads} KV heads evenly"
    if tp > 1 and q.gpu.nvlink_gbs is None:
        return f"tp {tp} needs a GPU link bandwidth; {q.gpu.key} has none in the table"
    return None
