"""The most requests/s one replica serves within latency SLOs at a percentile: the load model
(load.py, latency.py) searched over the rate. Latencies grow with the rate, so the answer is a
bisection between a rate that meets the SLOs and one that does not (or saturates).

Checked at each rate: a steady state exists; P(TTFT > SLO) and P(TPOT > SLO) are at most 1 - q
(q the planning percentile, 0.99 for p99); the KV cache holds the sequences decoding at their
q-quantile (each with the blocks of its whole request, ⌈(P + O)/B⌉, at the mix's mean over
decode time). Without an SLO a replica is planned at HEADROOM of its saturation rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.serve.latency import Latencies
from sizing.serve.load import Saturated, ServingLoad
from sizing.validate import SizingError

HEADROOM = 0.9  # without an SLO: the share of the saturation rate a replica is planned at (a stated choice)
_RELATIVE = 0.02  # the search stops when the bracket is this narrow


@dataclass(frozen=True)
class ReplicaLimit:
    max_rate: float | None  # requests/s one replica serves within the SLOs; None: none does
    saturation_rate: float | None
    binding: str  # what stops it: "TTFT SLO", "TPOT SLO", "KV cache", "saturation" or "headroom"
    why_not: str | None = None  # when max_rate is None: the constraint with its numbers


def kv_blocks_needed(load: ServingLoad, rate: float, q: float) -> tuple[int, int]:
    """(blocks the q-quantile of the sequences in the engine hold, blocks there are)."""
    cb, mix = load.cb, load.mix
    steps = mix.mean_decode_steps
    per_sequence = sum(c.share * (c.output - 1) * -(-(c.prompt + c.output) // cb.block_size) for c in mix.classes)
    law, acc, n_q = load.law(rate), 0.0, 0
    for n, p in law:
        acc += p
        n_q = n
        if acc >= q:
            break
    return round((n_q + 1) * per_sequence / steps), cb.blocks  # + 1: the prompt being prefilled


def _misses(load: ServingLoad, rate: float, slo_ttft, slo_tpot, q: float) -> str | None:
    """What this rate misses ("TTFT SLO", "TPOT SLO", "KV cache", "saturation"), None if nothing."""
    try:
        lat = Latencies(load, load.state(rate))
    except Saturated:
        return "saturation"
    if slo_tpot is not None and lat.over_classes(lat.tpot_exceed, slo_tpot) > 1 - q:
        return "TPOT SLO"
    if slo_ttft is not None and lat.over_classes(lat.ttft_exceed, slo_ttft) > 1 - q:
        return "TTFT SLO"
    need, have = kv_blocks_needed(load, rate, q)
    return "KV cache" if need > have else None


LOWEST_RATE = 1e-6  # requests/s: below it largest_rate answers 0 (no rate meets the SLOs)


def lowest_rate_misses(load: ServingLoad, slo_ttft, slo_tpot, q: float) -> str | None:
    """What the lowest rate misses, None if nothing: whether replica_max_rate finds any rate."""
    return _misses(load, LOWEST_RATE, slo_ttft, slo_tpot, q)


def saturation_rate(load: ServingLoad) -> float:
    """The rate where the steady state ends (to 1%): doubling, then bisection."""
    return largest_rate(lambda rate: _steady(load, rate))


def _steady(load: ServingLoad, rate: float) -> bool:
    try:
        load.state(rate)
    except Saturated:
        return False
    return True


def largest_rate(ok) -> float:
    """The largest rate where ok(rate) holds (ok holds below it, fails above): 0 when it fails
    at 1e-6 requests/s."""
    if ok(1.0):
        lo, hi = 1.0, 2.0
        while ok(hi):
            lo, hi = hi, hi * 2
            if hi > 1e7:
                raise SizingError("no limit below 10 million requests/s: check the model and GPU")
    else:
        hi = 1.0
        while not ok(hi / 2):
            hi /= 2
            if hi < 1e-6:
                return 0.0
        lo = hi / 2
    while hi - lo > _RELATIVE * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def replica_max_rate(load: ServingLoad, slo_ttft: float | None, slo_tpot: float | None, q: float) -> ReplicaLimit:
    """The largest rate one replica serves within the SLOs at percentile q (without an SLO, at
    most HEADROOM of its saturation rate)."""
    if slo_ttft is None and slo_tpot is None:
        sat = saturation_rate(load)
        top = HEADROOM * sat
        if sat > 0 and _misses(load, top, None, None, q) is None:
            return ReplicaLimit(top, sat, "headroom")
    misses: list[str] = []

    def ok(rate: float) -> bool:
        miss = _misses(load, rate, slo_ttft, slo_tpot, q)
        if miss is not None:
            misses.append(miss)
        return miss is None

    best = largest_rate(ok)
    if best <= 0:
        low = LOWEST_RATE
        miss = _misses(load, low, slo_ttft, slo_tpot, q) or "saturation"
        return ReplicaLimit(None, None, miss, _why_not(load, low, miss, slo_ttft, slo_tpot, q))
    return ReplicaLimit(best, None, misses[-1] if misses else "saturation")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def _why_not(load: ServingLoad, rate: float, miss: str, slo_ttft, slo_tpot, q: float) -> str:
    """The binding constraint at the lowest load, with its numbers."""
    p = f"p{round(q * 100, 3):g}"
    if miss == "saturation":
        return "no steady state even at the lowest load"
    if miss == "KV cache":
        need, have = kv_blocks_needed(load, rate, q)
        return f"KV cache: {need} blocks needed at the lowest load, {have} fit"
    lat = Latencies(load, load.state(rate))
    if miss == "TPOT SLO":
        return f"{p} TPOT {_ms(lat.tpot_percentile(q))} even at the lowest load > SLO {_ms(slo_tpot)}"
    return f"{p} TTFT {_ms(lat.ttft_percentile(q))} even at the lowest load > SLO {_ms(slo_ttft)}"
