"""The continuous-batching model (sizing/serve/batching.py) against a step-by-step scheduler
over the same request mix: every iteration decodes each running sequence at its own context
and gives the spare token budget to the waiting prompts first come first served, in chunks,
its time on the same roofline (per-sequence FLOPs and KV bytes, the chunk's KV re-read exact).
A closed loop: a finished request is replaced at once, with progress staggered so that
finishes are spread (the model's steady state). Within the model's assumptions (the mean
context, the duty-cycle average) TPOT, throughput and TTFT agree to a few per cent."""

from __future__ import annotations

from functools import lru_cache

import pytest

from sizing import get_preset
from sizing.inputs.hardware import get_gpu
from sizing.memory.kv import kv_cache_bytes_per_rank
from sizing.serve.batching import ContinuousBatching, ceil_sum
from sizing.serve.result import ServeSettings
from sizing.serve.work import decode_step_flops, prefill_flops, step_bytes

P, OUT, BUDGET = 512, 128, 2048


def _model(tp: int = 1) -> ContinuousBatching:
    s = ServeSettings(1, P, OUT, tp, tp, "bf16", "bf16", "bf16", "causal")
    return ContinuousBatching(get_preset("llama2-7b").config, get_gpu("h100"), s, token_budget=BUDGET)


def simulate(cb: ContinuousBatching, n_total: int, lifetimes: int = 6) -> dict:
    cfg, s = cb.cfg, cb.settings
    decode_flops = lru_cache(None)(lambda c: decode_step_flops(cfg, c, 1))
    kv = lru_cache(None)(lambda c: kv_cache_bytes_per_rank(cfg, c, 1, s.kv_dtype, s.tp) if c else 0)
    prompt_flops_per_token = prefill_flops(cfg, P, 1, "causal") / P
    # request: [prefilled, generated, arrival, last token time]; staggered: request i has made i·(OUT-1)/N tokens
    reqs = [[P, 1 + i * (OUT - 1) // n_total, 0.0, 0.0] for i in range(n_total)]
    now, iters, warm = 0.0, 0, (OUT - 1) * 2
    gaps, ttfts, tokens, decodes, t0 = [], [], 0, [], None
    while iters < (OUT - 1) * lifetimes:
        measuring = iters >= warm
        if measuring and t0 is None:
            t0 = now
        running = [r for r in reqs if r[0] == P and r[1] < OUT]
        spare, flops, kv_bytes, taken = BUDGET - len(running), 0.0, 0, []
        for r in running:  # one token each at context C = P + generated (the new one included)
            flops += decode_flops(P + r[1])
            kv_bytes += kv(P + r[1])
        for r in reqs:  # FCFS prefill in the spare budget
            if r[0] < P and spare > 0:
                take = min(P - r[0], spare)
                flops += take * prompt_flops_per_token
                kv_bytes += kv(r[0] + take) - kv(r[0]) + kv(r[0])  # the chunk's KV written + earlier chunks re-read
                spare -= take
                taken.append((r, take))
        n_tokens = len(running) + sum(t for _, t in taken)
        weights = step_bytes(cfg, P, 1, s.weight_dtype, s.kv_dtype, new_tokens=n_tokens).weight_bytes
        now += cb._machine.roofline(flops, weights / s.tp + kv_bytes, n_tokens).seconds
        for r in running:
            r[1] += 1
            if measuring:
                gaps.append(now - r[3])
                tokens += 1
            r[3] = now
        for r, take in taken:
            r[0] += take
            if r[0] == P:  # the prefill yields the first token
                r[1], r[3] = 1, now
                if measuring:
                    ttfts.append(now - r[2])
                    tokens += 1
        if measuring:
            decodes.append(len(running))
        for i, r in enumerate(reqs):
            if r[1] >= OUT:
                reqs[i] = [0, 0, now, now]
        iters += 1
    return {
        "tpot": sum(gaps) / len(gaps),
        "ttft": sum(ttfts) / len(ttfts),
        "tokens_per_second": tokens / (now - t0),
        "decoding": sum(decodes) / len(decodes),
    }


@pytest.mark.parametrize("n_total", [8, 48])
def test_scheduler_loop_agrees_with_the_steady_state_model(n_total):
    cb = _model()
    sim = simulate(cb, n_total)
    point = cb.point(round(sim["decoding"]))
    assert point.sustainable
    assert sim["tpot"] == pytest.approx(point.tpot_seconds, rel=0.05)
    assert sim["tokens_per_second"] == pytest.approx(point.output_tokens_per_second, rel=0.05)
    assert sim["ttft"] == pytest.approx(point.ttft_seconds, rel=0.10)


def test_paged_blocks_and_preemption_threshold():
    cb = _model()
    # llama2-7b: 2 x 32 layers x 32 heads x 128 x 2 bytes = 524,288 bytes per position; 16 per block
    assert cb.block_bytes == 16 * 524_288
    assert ceil_sum(1, 16, 16) == 16 and ceil_sum(1, 17, 16) == 18 and ceil_sum(17, 32, 16) == 32
    assert cb.blocks_at_longest == (512 + 128) // 16 == 40
    # contexts 513 .. 639: ⌈C/16⌉ summed over the 127 decode steps
    assert cb.mean_blocks == sum(-(-c // 16) for c in range(513, 640)) / 127
    assert 0 <= cb.mean_waste_tokens < 16
    assert cb.blocks == cb.kv_capacity_bytes // cb.block_bytes
    assert cb.max_concurrency_without_preemption == cb.blocks // 40
    assert cb.max_concurrency_without_preemption <= cb.preemption_threshold


def test_goodput_meets_the_slos_and_is_the_largest():
    cb = _model()
    best = cb.goodput(slo_ttft=0.5, slo_tpot=0.02)
    assert best is not None and best.tpot_seconds <= 0.02 and best.ttft_seconds <= 0.5
    above = cb.point(best.concurrency + 1)
    assert above.tpot_seconds > 0.02 or above.ttft_seconds > 0.5 or not above.sustainable
    assert cb.goodput(slo_ttft=None, slo_tpot=1e-6) is None
    curve = cb.curve(6)
    tpots = [p.tpot_seconds for p in curve]
    assert tpots == sorted(tpots) and curve[0].concurrency == 1
