"""The latencies of the load model (load.py) at one rate: P(latency > t) over all requests for
TTFT, TPOT and end-to-end, their percentiles and the share meeting SLOs (goodput), as one
LoadPoint. Percentiles are over requests: the classes mixed by their shares.

    TTFT_j = the rounds' law for a prompt of P_j tokens (rounds.Rounds.ttft_points)
    TPOT_j = τ(N) averaged over the life (N as a decoding request sees it, its spread shrunk to
             the life average's) + the rounds' noise over O_j - 1 iterations (normal)
    E2E_j  = TTFT_j + (O_j - 1)·TPOT_j, independent: every sum of quantile nodes of each
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

from sizing.serve.load import LoadState, ServingLoad
from sizing.serve.queueing import CompoundPoisson, DiscreteLaw, quantile

PERCENTILES = (0.5, 0.9, 0.99)
_E2E_NODES = 24  # quantile nodes per class and per term, divided among the classes (at least 4)
_NORMAL = NormalDist()


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
            "prefill_busy_share": self.state.utilization,
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


@dataclass
class Latencies:
    """The laws at one state, built once and asked many times."""

    model: ServingLoad
    st: LoadState
    _ttft: dict = field(default_factory=dict)
    _excess: dict = field(default_factory=dict)

    def ttft_law(self, j: int) -> DiscreteLaw:
        if j not in self._ttft:
            self._ttft[j] = DiscreteLaw(self.st.rounds.ttft_points(self.model.mix.classes[j].prompt))
        return self._ttft[j]

    def ttft_exceed(self, t: float, j: int) -> float:
        return self.ttft_law(j).exceed(t)

    def decode_excess(self, j: int) -> CompoundPoisson:
        """Y_j: what the prefill busy periods during a class-j request's O_j - 1 iterations add."""
        if j not in self._excess:
            rounds, steps = self.st.rounds, self.model.mix.classes[j].output - 1
            self._excess[j] = CompoundPoisson(steps * rounds.busy_periods_per_iteration, rounds.busy_period_excess)
        return self._excess[j]

    def tpot_exceed(self, t: float, j: int) -> float:
        """P(TPOT > t) for a class-j request: τ(N) averaged over its life, plus its own rounds'
        excess less their mean (τ holds the mean)."""
        st, steps = self.st, self.model.mix.classes[j].output - 1
        y = self.decode_excess(j)
        mean = sum(d * p for d, p in st.seen)
        total = 0.0
        for d, p in st.seen:
            centre = mean + st.life_shrink[j] * (d - mean)
            total += p * y.exceed((t - centre) * steps + y.mean)
        return total

    def over_classes(self, exceed, t: float) -> float:
        return sum(c.share * exceed(t, j) for j, c in enumerate(self.model.mix.classes))

    def ttft_percentile(self, q: float) -> float:
        return quantile(lambda t: self.over_classes(self.ttft_exceed, t), q, self.st.decode_seconds)

    def tpot_percentile(self, q: float) -> float:
        return quantile(lambda t: self.over_classes(self.tpot_exceed, t), q, self.st.decode_seconds)

    def e2e_percentiles(self, qs) -> dict[float, float]:
        """For each class, m quantile nodes of TTFT and of (O - 1)·TPOT; every sum of one of each
        (independent), weighted by the class's share."""
        classes = self.model.mix.classes
        m = max(4, _E2E_NODES // len(classes))
        points = []
        for j, c in enumerate(classes):
            first = self.ttft_law(j).nodes(m)
            rest = [
                (c.output - 1) * quantile(lambda t, j=j: self.tpot_exceed(t, j), (i + 0.5) / m, self.st.decode_seconds)
                for i in range(m)
            ]
            points += [(a + b, c.share / (m * m)) for a in first for b in rest]
        law = DiscreteLaw(points)
        return {q: law.quantile(q) for q in qs}

    def attainment(self, slo_ttft: float | None, slo_tpot: float | None) -> float | None:
        """Share of requests with TTFT <= slo_ttft and TPOT <= slo_tpot (the two independent)."""
        if slo_ttft is None and slo_tpot is None:
            return None
        total = 0.0
        for j, c in enumerate(self.model.mix.classes):
            ok = 1.0 if slo_ttft is None else 1 - self.ttft_exceed(slo_ttft, j)
            if slo_tpot is not None:
                ok *= 1 - self.tpot_exceed(slo_tpot, j)
            total += c.share * ok
        return total


def latency_at(
    model: ServingLoad, rate: float, percentiles=PERCENTILES, slo_ttft: float | None = None, slo_tpot=None
) -> LoadPoint:
    """Everything at one rate (load.Saturated when there is no steady state)."""
    lat = Latencies(model, model.state(rate))
    return LoadPoint(
        rate,
        lat.st,
        {q: lat.ttft_percentile(q) for q in percentiles},
        {q: lat.tpot_percentile(q) for q in percentiles},
        lat.e2e_percentiles(percentiles),
        rate * model.mix.mean_output,
        lat.attainment(slo_ttft, slo_tpot),
        model.cb.settings.tp,
    )
