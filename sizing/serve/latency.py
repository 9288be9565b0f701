"""The latencies of the load model (load.py) at one rate: P(latency > t) over all requests for
TTFT, TPOT and end-to-end, their percentiles, the share meeting SLOs (goodput), as one
LoadPoint. The formulas are load.py's:

    TTFT_j = U(0, t_dec(N)) + W + S_j(N)           N as an arrival sees it (Poisson arrivals
                                                   see time averages), U absent when N = 0
    TPOT_j = D_j + Y_j / (O_j - 1)                 D_j: t_dec(N) seen while decoding, its spread
                                                   shrunk to that of its life average; Y_j the
                                                   prefill that arrives meanwhile (compound Poisson)
    E2E_j  = TTFT_j + (O_j - 1)·TPOT_j             independent; quantile nodes of each, summed
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.serve.load import LoadState, ServingLoad
from sizing.serve.queueing import CompoundPoisson, quantile

PERCENTILES = (0.5, 0.9, 0.99)
_E2E_NODES = 32  # quantile nodes per class and per term, divided among the classes (at least 4)


def ttft_exceed(st: LoadState, t: float, j: int) -> float:
    """P(TTFT > t) for a class-j request."""
    total = 0.0
    for p, t_dec, services in st.arrivals_see:
        total += p * st.wait.exceed_with_uniform(t - services[j], t_dec)
    return total


def decode_excess(model: ServingLoad, st: LoadState, j: int) -> CompoundPoisson:
    """Y_j: the time the prompts arriving during a class-j decode add to it."""
    c = model.mix.classes[j]
    jumps = tuple(
        (s - k * st.decode_seconds, w.share) for (s, k), w in zip(st.services, model.mix.classes, strict=True)
    )
    return CompoundPoisson(st.rate * (c.output - 1) * st.tpot_mean_seconds, jumps)


def tpot_exceed(model: ServingLoad, st: LoadState, t: float, j: int) -> float:
    """P(TPOT > t) for a class-j request."""
    steps = model.mix.classes[j].output - 1
    y, shrink = decode_excess(model, st, j), st.life_shrink[j]
    mean = sum(d * p for d, p in st.seen)
    return sum(p * y.exceed((t - (mean + shrink * (d - mean))) * steps) for d, p in st.seen)


def _over_classes(model: ServingLoad, one) -> callable:
    return lambda t: sum(c.share * one(t, j) for j, c in enumerate(model.mix.classes))


def _scale(st: LoadState) -> float:
    return st.decode_seconds + max(s for s, _ in st.services)


def ttft_percentile(model: ServingLoad, st: LoadState, q: float) -> float:
    return quantile(_over_classes(model, lambda t, j: ttft_exceed(st, t, j)), q, _scale(st))


def tpot_percentile(model: ServingLoad, st: LoadState, q: float) -> float:
    return quantile(_over_classes(model, lambda t, j: tpot_exceed(model, st, t, j)), q, st.decode_seconds)


def e2e_percentiles(model: ServingLoad, st: LoadState, qs) -> dict[float, float]:
    """End-to-end latency: for each class, M quantile nodes of TTFT and of (O - 1)·TPOT, every
    sum of one of each (independent), weighted; the percentiles of all classes' sums."""
    classes = model.mix.classes
    m = max(4, _E2E_NODES // len(classes))
    levels = [(i + 0.5) / m for i in range(m)]
    points = []
    for j, c in enumerate(classes):
        first = [quantile(lambda t, j=j: ttft_exceed(st, t, j), q, _scale(st)) for q in levels]
        rest = [
            (c.output - 1) * quantile(lambda t, j=j: tpot_exceed(model, st, t, j), q, st.decode_seconds) for q in levels
        ]
        points += [(a + b, c.share / (m * m)) for a in first for b in rest]
    points.sort()
    out, acc, i = {}, 0.0, 0
    for q in sorted(qs):
        while i < len(points) - 1 and acc + points[i][1] < q:
            acc += points[i][1]
            i += 1
        out[q] = points[i][0]
    return {q: out[q] for q in qs}


def attainment(model: ServingLoad, st: LoadState, slo_ttft: float | None, slo_tpot: float | None) -> float | None:
    """Share of requests with TTFT <= slo_ttft and TPOT <= slo_tpot (the two independent)."""
    if slo_ttft is None and slo_tpot is None:
        return None
    total = 0.0
    for j, c in enumerate(model.mix.classes):
        ok = 1.0 if slo_ttft is None else 1 - ttft_exceed(st, slo_ttft, j)
        if slo_tpot is not None:
            ok *= 1 - tpot_exceed(model, st, slo_tpot, j)
        total += c.share * ok
    return total


def latency_at(
    model: ServingLoad, rate: float, percentiles=PERCENTILES, slo_ttft: float | None = None, slo_tpot=None
) -> LoadPoint:
    """Everything at one rate (Saturated when there is no steady state)."""
    st = model.state(rate)
    return LoadPoint(
        rate,
        st,
        {q: ttft_percentile(model, st, q) for q in percentiles},
        {q: tpot_percentile(model, st, q) for q in percentiles},
        e2e_percentiles(model, st, percentiles),
        rate * model.mix.mean_output,
        attainment(model, st, slo_ttft, slo_tpot),
        model.cb.settings.tp,
    )


@dataclass(frozen=True)
class LoadPoint:
    """What a user reads at one rate: percentiles in seconds, keyed by the percentile."""

    rate: float
    state: LoadState
    ttft: dict[float, float]
    tpot: dict[float, float]
    e2e: dict[float, float]
    output_tokens_per_second: float
    slo_attainment: float | None  # share of requests meeting both SLOs (None: no SLO given)
    tp: int

    @property
    def goodput(self) -> float | None:
        """Requests/s that meet the SLOs."""
        return None if self.slo_attainment is None else self.rate * self.slo_attainment

    def to_dict(self) -> dict:
        def pct(d: dict) -> dict:
            return {f"p{round(q * 100, 3):g}": v for q, v in d.items()}

        return {
            "rate_requests_per_second": self.rate,
            "decoding_sequences": self.state.decoding,
            "prefill_utilization": self.state.utilization,
            "decode_iteration_seconds": self.state.decode_seconds,
            "tpot_mean_seconds": self.state.tpot_mean_seconds,
            "ttft_seconds": pct(self.ttft),
            "tpot_seconds": pct(self.tpot),
            "e2e_seconds": pct(self.e2e),
            "output_tokens_per_second": self.output_tokens_per_second,
            "output_tokens_per_second_per_gpu": self.output_tokens_per_second / self.tp,
            "slo_attainment": self.slo_attainment,
            "goodput_requests_per_second": self.goodput,
        }
