"""Latency under load: the steady state of one replica under continuous batching with chunked
prefill, for Poisson arrivals at a rate and a request mix (requests.py). An analytic model;
tests/test_serve_load_des.py checks it against a step-level discrete-event simulation of the same
scheduler (SimPy). latency.py turns the state into percentiles.

The scheduler (vLLM, Sarathi-Serve): every iteration runs one token of each decoding sequence
and up to c = token_budget - N waiting prompt tokens, first come first served; its time is one
engine iteration on the roofline (batching.ContinuousBatching.step), the decodes at the mix's
mean decode context.

* Prefill comes in rounds (rounds.py): the prompts that arrive while a batch of prompts is
  prefilled are prefilled together next. The rounds' chain gives the mean iteration a decode
  sees, τ(N) = t_dec(N) + Δ(N), its spread, and the TTFT law.
* N, the sequences decoding, is a processor-sharing population whose speed depends on its size:
  each of n sequences gets one token per iteration of mean τ(n), so (Kelly, Reversibility and
  Stochastic Networks, 1979, sec. 3.3: symmetric queues, insensitive to the output-length law)

      π(n) ∝ Π_{k=1..n} λ·E[O - 1]·τ(k) / k,      E[N] = λ·E[(O - 1)·TPOT]  (Little's law)

* A decoding request sees N size-biased (it is one of them); its TPOT is τ(N) averaged over its
  life, whose spread is that of an M/G/∞ population averaged over the life
  (queueing.life_average_share), plus the rounds' noise. TPOT as vLLM's benchmark reports it,
  (latency - TTFT) / (O - 1) per request (vllm benchmarks/benchmark_serving.py).

Stable while the rounds settle (the prompts' prefill keeps up) and N stays below the budget.
Assumptions, stated: the rounds are taken at E[N] (TTFT does not follow N's fluctuation); a
round's prompts are the mix's mean prompt (the tagged request's own prompt exact); TTFT and TPOT
of one request independent; the KV cache checked at the planning percentile, not simulated
(no preemption).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.serve.batching import ContinuousBatching
from sizing.serve.queueing import equal_mass_nodes, life_average_share
from sizing.serve.requests import RequestMix
from sizing.serve.rounds import PrefillSaturated, Rounds, prefill_rounds

# where the law of N is cut into nodes: finer in the upper tail, where the p99 sits
NODE_BOUNDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1.0)


class Saturated(ValueError):
    """No steady state at this rate; the message says which limit binds, with its numbers."""


@dataclass(frozen=True)
class LoadState:
    """The steady state of one replica at `rate` requests/s."""

    rate: float
    decoding: float  # E[N]
    decode_seconds: float  # t_dec at E[N]
    rounds: Rounds  # the prefill rounds at E[N]
    tpot_mean_seconds: float  # by Little's law
    seen: tuple[tuple[float, float], ...]  # τ(N) as a decoding request sees it (N size-biased): (seconds, p)
    life_shrink: tuple[float, ...]  # per class: sd of τ(N) averaged over its life / sd of τ(N)

    @property
    def utilization(self) -> float:
        """Share of time the replica prefills."""
        return self.rounds.busy


class ServingLoad:
    """The load model of one replica (ContinuousBatching's settings) serving `mix`."""

    def __init__(self, cb: ContinuousBatching, mix: RequestMix):
        self.cb, self.mix = cb, mix
        self.context = mix.mean_decode_context
        self.prompts = tuple((c.prompt, c.share) for c in mix.classes)
        self._times: dict[tuple[int, int], float] = {}
        self._rounds: dict[tuple[float, int], Rounds] = {}
        self._top = 8

    def iteration_seconds(self, n: int, tokens: int) -> float:
        """One iteration: n decodes (at least one's weights read) and `tokens` prompt tokens of the
        replica's prompt (the mix's token-weighted prompt: capacity.CapacityQuestion.replica)."""
        key = (n, tokens)
        if key not in self._times:
            self._times[key] = self.cb.step(max(n, 1) if not tokens else n, self.context, tokens).seconds
        return self._times[key]

    def rounds(self, rate: float, n: int) -> Rounds:
        key = (rate, n)
        if key not in self._rounds:
            chunk = self.cb.token_budget - n
            r = prefill_rounds(rate, chunk, lambda k: self.iteration_seconds(n, k), self.prompts, True, self._top)
            self._top = max(8, len(r.law) // 2)  # where the next chain starts: they are alike
            self._rounds[key] = r
        return self._rounds[key]

    def tau(self, rate: float, n: float) -> float:
        """τ(n): the mean iteration at n decoding, interpolated between the integers around n."""
        lo = math.floor(n)
        t0 = self.rounds(rate, lo).tau if lo else self.iteration_seconds(1, 0)
        if n == lo:
            return t0
        return t0 + (n - lo) * (self.rounds(rate, lo + 1).tau - t0)

    def _tau_on_grid(self, rate: float, n: float) -> float:
        """τ(n) from the chain at n = 1, 2, 3, then powers of 2, linear between: the chain is
        solved at about ten n per rate."""
        if n <= 4:
            return self.tau(rate, n)
        lo = math.floor(math.log2(n))
        a, b = 2**lo, min(2 ** (lo + 1), self.cb.token_budget - 1)
        if a == b or a == n:
            return self.tau(rate, a)
        return self.tau(rate, a) + (n - a) / (b - a) * (self.tau(rate, b) - self.tau(rate, a))

    def law(self, rate: float) -> list[tuple[int, float]]:
        """P(N = n) ∝ Π_{k<=n} λ·E[O - 1]·τ(k)/k, cut where it falls 36 nepers under its peak."""
        a = rate * self.mix.mean_decode_steps
        top = self.cb.token_budget - 1  # N below the budget leaves prefill a token
        logs, n = [0.0], 0
        while not (n > 0 and logs[-1] < max(logs) - 36 and logs[-1] < logs[-2]):
            n += 1
            if n > top:
                raise Saturated(
                    f"{rate:.4g} requests/s keep more than {top} sequences decoding, the token budget "
                    f"({self.cb.token_budget}) less one prefill token"
                )
            try:
                tau = self._tau_on_grid(rate, n)
            except PrefillSaturated as exc:
                raise Saturated(f"{exc} at {n} sequences decoding") from None
            logs.append(logs[-1] + math.log(a * tau / n))
        peak = max(logs)
        weights = [math.exp(x - peak) for x in logs]
        total = sum(weights)
        return [(k, w / total) for k, w in enumerate(weights) if w / total > 1e-12]

    def _elasticity(self, rate: float, n: float) -> float:
        """d ln τ / d ln N at n, from the grid, kept in [0, 0.9]."""
        lo, hi = max(1.0, 0.8 * n), max(2.0, 1.25 * n)
        slope = (self._tau_on_grid(rate, hi) - self._tau_on_grid(rate, lo)) / (hi - lo)
        return min(0.9, max(0.0, slope * n / self._tau_on_grid(rate, max(1.0, n))))

    def state(self, rate: float) -> LoadState:
        """The steady state at `rate`; Saturated naming the binding limit when there is none."""
        law = self.law(rate)
        mean_n = sum(n * p for n, p in law)
        nodes = equal_mass_nodes(law, NODE_BOUNDS)
        seen = tuple((self._tau_on_grid(rate, n), n * p / mean_n) for n, p in nodes if n > 0)
        tpot = mean_n / (rate * self.mix.mean_decode_steps)  # Little: E[N] = λ·E[(O - 1)·TPOT]
        lives = [((c.output - 1) * tpot, c.share) for c in self.mix.classes]
        # N relaxes slower than a life when slower iterations keep sequences longer: its
        # linearised rate is (1 - e)/L, e = d ln τ / d ln N, so the autocorrelation is stretched by 1/(1 - e)
        stretch = 1 / (1 - self._elasticity(rate, mean_n))
        stretched = [(life * stretch, w) for life, w in lives]
        shrink = tuple(math.sqrt(life_average_share(life, stretched)) for life, _ in lives)
        n_mid = max(1, round(mean_n))
        return LoadState(rate, mean_n, self.iteration_seconds(n_mid, 0), self.rounds(rate, n_mid), tpot, seen, shrink)
