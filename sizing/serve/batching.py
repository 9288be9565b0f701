"""Continuous batching, as vLLM, SGLang and TensorRT-LLM serve: a steady-state analytic model
(not a simulator) of iteration-level scheduling with chunked prefill (Yu et al. 2022, Orca;
Agrawal et al. 2024, Sarathi-Serve) and a paged KV cache (Kwon et al. 2023, vLLM).

Each iteration runs one forward over every running decode (one token each) plus up to
`token_budget` - n tokens of prefill (vLLM's max_num_batched_tokens), the weights read once.
For n sequences decoding at the request mix's mean context P + O/2 (decode FLOPs and KV bytes
are affine in the context, so the mean context gives the mean step):

    D(n)       = n·P / (O - 1)     prefill tokens per iteration that keep n sequences decoding
    c          = min(token_budget - n, P)                        one prompt's chunk
    k(n)       = min(token_budget - n, max(c, D))                prefill tokens of a mixed iteration
    t_dec(n)   = roofline(n decode tokens)                       an iteration without prefill
    t_mix(n)   = roofline(n decode tokens + k prefill tokens)
    duty(n)    = D / k             the share of iterations that carry prefill
    TPOT(n)    = duty·t_mix + (1 - duty)·t_dec                   mean time between two tokens
    TTFT(n)    = ⌈P / c⌉ · t_mix(n)                              a prompt prefilled in chunks of c
    requests/s = n / ((O - 1)·TPOT);  output tokens/s = requests/s · O

n is sustainable while duty <= 1 (the prefill keeps up: D <= token_budget - n). The prefill chunk re-reads the KV of
the prompt's earlier chunks (work.chunked_prefill_kv_reread_bytes), and writes its own.

Paged KV: blocks of `block_size` tokens per sequence; a sequence at context C holds ⌈C/B⌉ blocks
(the last partly empty: the waste). Blocks available per GPU = (GPU memory - weights - the
activation peak of a token_budget forward) / one block's bytes. Concurrency limits:
  * no preemption ever: every sequence at its longest, ⌈(P + O)/B⌉ blocks each;
  * preemption threshold: the mean occupancy over a request's life, Σ_C ⌈C/B⌉ / (O - 1);
    above it the cache is short on average and the scheduler must preempt (recompute/swap).

Goodput (Zhong et al. 2024, DistServe): the largest requests/s at a concurrency whose TTFT and
TPOT meet the SLOs and that fits without preemption.

Assumptions, stated: one request class per mix entry averaged to mean P and O; arrivals find
no queue (TTFT excludes queueing); one prefill at a time takes the spare budget (FCFS); MoE
routing uniform. tests/test_serve_batching.py runs a step-by-step scheduler over the same mix
and finds the same TPOT, TTFT and throughput within these assumptions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sizing.inputs import GPU, ModelConfig
from sizing.memory import prefill_activation_peak_bytes
from sizing.serve.estimate import StepModel, serving_machine
from sizing.serve.quant_bytes import weights_step_bytes
from sizing.serve.result import ServeSettings
from sizing.serve.roofline import Roofline
from sizing.serve.work import (
    chunked_prefill_kv_reread_bytes,
    decode_step_flops,
    kv_read_bytes_per_rank,
    prefill_flops,
)
from sizing.validate import SizingError, require_int
from sizing.vocabulary import ceil_div

DEFAULT_TOKEN_BUDGET = 8192  # vLLM's max_num_batched_tokens for chunked prefill on large GPUs (V1 default)
DEFAULT_BLOCK_SIZE = 16  # vLLM's default KV block (tokens per page)


def ceil_sum(first: int, last: int, block: int) -> int:
    """Σ_{C=first}^{last} ⌈C / B⌉, exactly: with S(n) = Σ_{C=1}^{n} ⌈C/B⌉ = B·q(q+1)/2 + r·(q+1)
    for n = qB + r."""

    def s(n: int) -> int:
        q, r = divmod(n, block)
        return block * q * (q + 1) // 2 + r * (q + 1)

    return s(last) - s(first - 1)


def engine_iteration(
    machine: StepModel, decodes: int, context: int, prefill_tokens: int = 0, chunk: int | None = None
) -> Roofline:
    """The time of one engine iteration (the serving step model's, stable for callers such as the
    load simulator): `decodes` sequences decoding one token each at `context` cached positions,
    plus `prefill_tokens` tokens of prompts of the settings' prompt length, prefilled in chunks of
    `chunk` (their mean causal FLOPs per token, the KV they write and the earlier chunks' KV they
    re-read), the weights read once, the TP all-reduces of every token, and the engine's overhead
    for a step over the decoding sequences plus the prompts in it. With no prefill it is exactly
    `sizing serve`'s decode step of `decodes` sequences at `context`. Build `machine` with
    sizing.serve.estimate.serving_machine(cfg, gpu, settings)."""
    s, cfg = machine.s, machine.cfg
    require_int("decodes", decodes, minimum=0)
    require_int("prefill_tokens", prefill_tokens, minimum=0)
    if decodes + prefill_tokens < 1:
        raise SizingError("an iteration needs at least one decode or one prefill token")
    flops = decode_step_flops(cfg, context, decodes, s.mla) if decodes else 0
    kv = kv_read_bytes_per_rank(cfg, context, decodes, s.kv_dtype, s.tp, s.mla) * s.kv_read_repeat if decodes else 0
    prompts = 0
    if prefill_tokens:
        share = prefill_tokens / s.prompt  # prompts' worth of prefill in this iteration
        flops += share * prefill_flops(cfg, s.prompt, 1, s.attention)
        kv += share * kv_read_bytes_per_rank(cfg, s.prompt, 1, s.kv_dtype, s.tp, s.mla)
        kv += share * chunked_prefill_kv_reread_bytes(cfg, s.prompt, chunk, 1, s.kv_dtype, s.tp, s.mla)
        prompts = math.ceil(share)
    tokens = decodes + prefill_tokens
    if prefill_tokens == 0:  # a decode step: exactly serve's (the token table's unread rows too)
        return machine.decode_step(context, decodes).roofline
    weights = weights_step_bytes(cfg, context, 1, s.weight_dtype, s.kv_dtype, new_tokens=tokens, tp=s.tp, mla=s.mla)
    return machine.roofline(flops, weights.weight_bytes / s.tp + kv, tokens, decodes + prompts, kv_bytes=kv)


@dataclass(frozen=True)
class BatchingPoint:
    """The steady state at n sequences decoding."""

    concurrency: int
    iteration_decode_seconds: float  # an iteration of n decodes only
    iteration_mixed_seconds: float  # n decodes + one prefill chunk of `chunk` tokens
    chunk: int
    duty: float  # share of iterations carrying a prefill chunk (<= 1: the prefill keeps up)
    tpot_seconds: float
    ttft_seconds: float
    requests_per_second: float  # one replica
    output_tokens_per_second: float  # one replica
    output_tokens_per_second_per_gpu: float
    bound: str  # of the mixed iteration

    @property
    def sustainable(self) -> bool:
        return self.duty <= 1

    def to_dict(self) -> dict:
        return {**self.__dict__, "sustainable": self.sustainable}


@dataclass(frozen=True)
class ContinuousBatching:
    """The model of one replica (tp GPUs) serving a request mix of mean prompt P and output O."""

    cfg: ModelConfig = field(repr=False)
    gpu: GPU = field(repr=False)
    settings: ServeSettings  # prompt / output: the mix's means; batch unused
    token_budget: int = DEFAULT_TOKEN_BUDGET
    block_size: int = DEFAULT_BLOCK_SIZE

    def __post_init__(self) -> None:
        require_int("token_budget", self.token_budget, minimum=2)
        require_int("block_size", self.block_size)
        object.__setattr__(self, "_machine", serving_machine(self.cfg, self.gpu, self.settings))
        object.__setattr__(self, "_steps", {})

    # ---- the iteration on the roofline
    @property
    def decode_context(self) -> int:
        """The mean context of a decode step, P + O/2 (contexts P+1 .. P+O-1), rounded down."""
        s = self.settings
        return s.prompt + s.output // 2

    def iteration(self, decodes: int, prefill_tokens: int, chunk: int | None = None) -> Roofline:
        """One forward: `decodes` sequences at the mean context plus `prefill_tokens` of prompts
        prefilled in chunks of `chunk` (engine_iteration)."""
        return engine_iteration(self._machine, decodes, self.decode_context, prefill_tokens, chunk)

    def step(self, decodes: int, context: int, prefill_tokens: int = 0) -> Roofline:
        """One engine iteration (engine_iteration) at `context`, the prompts cut in chunks of the
        budget the decodes leave, memoised: the load model (load.py) and its simulation
        (tests/serving_des.py) ask for the same iterations many times."""
        key = (decodes, max(context, 1), prefill_tokens)  # without decodes the context is not read
        cache = self._steps
        if key not in cache:
            chunk = min(self.token_budget - decodes, self.settings.prompt) if prefill_tokens else None
            cache[key] = engine_iteration(self._machine, *key, chunk)
        return cache[key]

    def point(self, n: int) -> BatchingPoint:
        """The steady state at n sequences decoding (n < token_budget)."""
        require_int("concurrency", n)
        s = self.settings
        spare = self.token_budget - n  # prefill tokens an iteration can take
        if spare < 1:
            raise SizingError(f"concurrency ({n}) must be below the token budget ({self.token_budget})")
        chunk = min(spare, s.prompt)  # one prompt's share of one iteration
        demand = n * s.prompt / (s.output - 1)  # prefill tokens per iteration that keep n decoding
        carried = min(spare, max(chunk, math.ceil(demand)))  # prefill tokens of a mixed iteration
        t_dec = self.iteration(n, 0).seconds
        mixed = self.iteration(n, carried, chunk)
        duty = demand / carried
        tpot = min(duty, 1.0) * mixed.seconds + (1 - min(duty, 1.0)) * t_dec
        rps = n / ((s.output - 1) * tpot)
        tokens = rps * s.output
        return BatchingPoint(
            concurrency=n,
            iteration_decode_seconds=t_dec,
            iteration_mixed_seconds=mixed.seconds,
            chunk=carried,
            duty=duty,
            tpot_seconds=tpot,
            ttft_seconds=ceil_div(s.prompt, chunk) * mixed.seconds,
            requests_per_second=rps,
            output_tokens_per_second=tokens,
            output_tokens_per_second_per_gpu=tokens / s.tp,
            bound=mixed.bound,
        )

    # ---- the paged KV cache
    @property
    def block_bytes(self) -> int:
        """One block of block_size positions on one rank (all layers)."""
        s = self.settings
        return kv_read_bytes_per_rank(self.cfg, self.block_size, 1, s.kv_dtype, s.tp, s.mla)

    @property
    def kv_capacity_bytes(self) -> int:
        """GPU memory - weights / tp - the activation peak of a token_budget forward."""
        m, s = self._machine, self.settings
        weights, _, _ = m.memory(1)
        a = 2 if s.activation_dtype in ("bf16", "fp16") else 4 if s.activation_dtype == "fp32" else 1
        peak = prefill_activation_peak_bytes(self.cfg, self.token_budget, 1, a)
        return self.gpu.memory_bytes - weights - peak

    def why_nothing_fits(self) -> str:
        """The binding constraint, with its numbers, when not one sequence fits: the weights alone,
        or the KV cache of one sequence at P + O in what the weights and activation peak leave."""
        from sizing.inputs import format_gib

        s, gpu = self.settings, self.gpu
        weights, _, _ = self._machine.memory(1)
        where = f"{gpu.key} ({format_gib(gpu.memory_bytes)}) at tp {s.tp}"
        if weights > gpu.memory_bytes:
            return f"the weights ({s.weight_dtype}) need {format_gib(weights)} per GPU, more than {where}"
        one = self.blocks_at_longest * self.block_bytes
        left = max(0, self.kv_capacity_bytes)
        return (
            f"KV cache for one sequence of {s.prompt + s.output} tokens ({format_gib(one)}, {s.kv_dtype}) exceeds the "
            f"{format_gib(left)} left after weights {format_gib(weights)} and the activation peak on {where}"
        )

    @property
    def blocks(self) -> int:
        return max(0, self.kv_capacity_bytes // self.block_bytes)

    @property
    def blocks_at_longest(self) -> int:
        s = self.settings
        return ceil_div(s.prompt + s.output, self.block_size)

    @property
    def mean_blocks(self) -> float:
        """Blocks a sequence holds, averaged over its decode steps (contexts P+1 .. P+O-1)."""
        s = self.settings
        return ceil_sum(s.prompt + 1, s.prompt + s.output - 1, self.block_size) / (s.output - 1)

    @property
    def mean_waste_tokens(self) -> float:
        """Empty slots of the last block, averaged over the decode steps: < block_size."""
        s = self.settings
        mean_context = (2 * s.prompt + s.output) / 2
        return self.mean_blocks * self.block_size - mean_context

    @property
    def max_concurrency_without_preemption(self) -> int:
        return self.blocks // self.blocks_at_longest

    @property
    def preemption_threshold(self) -> int:
        """Above this concurrency the mean occupancy exceeds the blocks: preemption is certain."""
        return math.floor(self.blocks / self.mean_blocks)

    # ---- the curve and the SLOs
    def curve(self, points: int = 12) -> list[BatchingPoint]:
        """Points from 1 to the largest concurrency that fits without preemption and keeps up."""
        top = min(self.max_concurrency_without_preemption, self.token_budget - 1)
        if top < 1:
            return []
        ns = sorted({max(1, round(top ** (i / (points - 1)))) for i in range(points)} | {top})
        return [p for p in (self.point(n) for n in ns) if p.sustainable]

    def goodput(self, slo_ttft: float | None, slo_tpot: float | None) -> BatchingPoint | None:
        """The point of highest requests/s whose TTFT and TPOT meet the SLOs, within the KV
        cache without preemption and with the prefill keeping up; None when none does."""
        top = min(self.max_concurrency_without_preemption, self.token_budget - 1)

        def ok(n: int) -> bool:
            p = self.point(n)
            return (
                p.sustainable
                and (slo_ttft is None or p.ttft_seconds <= slo_ttft)
                and (slo_tpot is None or p.tpot_seconds <= slo_tpot)
            )

        if top < 1 or not ok(1):
            return None
        lo, hi = 1, top  # TPOT and TTFT grow with n: the largest n that meets both
        if ok(hi):
            return self.point(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return self.point(lo)
