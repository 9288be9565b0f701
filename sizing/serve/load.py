"""Latency under load: p50/p90/p99 of TTFT, TPOT and end-to-end latency, throughput and goodput
of one replica under continuous batching with chunked prefill, for Poisson arrivals at a rate
and a request mix (requests.py). An analytic model; tests/test_serve_load_des.py checks it
against a step-level discrete-event simulation of the same scheduler (SimPy).

The scheduler (vLLM / Sarathi-Serve): every iteration runs one token of each decoding sequence
and, while prompts wait, up to c = token_budget - N prompt tokens, first come first served; its
time is one engine iteration on the roofline (batching.ContinuousBatching.step). With N
sequences decoding at the mix's mean decode context:

    t_dec          = step(N decodes)                                  an iteration without prefill
    S_j            = ⌈P_j/c⌉ iterations of N decodes + a chunk of P_j  a class-j prompt's prefill
    X_j            = S_j - ⌈P_j/c⌉·t_dec                               the time it adds to a decode

* Prefill is an M/G/1 queue with vacations (DistServe, Zhong et al. 2024, sec. 3.1 takes the
  prefill as M/D/1; here the service times S_j of the mix): an arrival waits for the iteration
  in progress (uniform on [0, t_dec]; Fuhrmann & Cooper 1985), then the M/G/1 wait W
  (queueing.mg1_wait), then its own S_j: TTFT_j = U + W + S_j.
* A decoding request sees one token per iteration. The prompts that arrive during its life,
  Poisson at λ, each add X: TPOT_j = t_dec + Y_j / (O_j - 1), Y_j compound Poisson with mean
  count λ·(O_j - 1)·TPOT. Mean TPOT = t_dec / (1 - λ·E[X]); TPOT as vLLM's benchmark reports it,
  (latency - TTFT) / (O - 1) per request (vllm benchmarks/benchmark_serving.py).
* N by Little's law: N = λ·E[O - 1]·TPOT (a fixed point: t_dec grows with N).
* End-to-end_j = TTFT_j + (O_j - 1)·TPOT_j, the two taken independent.
* Percentiles are over requests: the classes mixed by their shares.

Stable while ρ = λ·E[S] < 1 and the budget leaves room for prefill (N < token_budget). The KV
cache is checked at the planning percentile: the blocks of ⌈(P + O)/B⌉ per sequence held by
the N + ρ sequences in the engine (Poisson) must fit. Assumptions, stated: prompts are not
packed together in one iteration (conservative for prompts shorter than the ridge, where a
chunk is nearly free); N taken at its mean (its fluctuation is not in the tails); TTFT and
TPOT of one request independent; no preemption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.serve.batching import ContinuousBatching
from sizing.serve.queueing import WaitTail, mg1_wait
from sizing.serve.requests import RequestMix


@dataclass(frozen=True)
class LoadState:
    """The steady state of one replica at `rate` requests/s."""

    rate: float
    nodes: tuple[tuple[float, float], ...]  # the law of N (sequences decoding): (n, probability)
    arrivals_see: tuple[tuple[float, float, tuple[float, ...]], ...]  # per node: (p, t_dec or 0 idle, S_j)
    decoding: float  # E[N]
    decode_seconds: float  # t_dec at E[N]
    services: tuple[tuple[float, int], ...]  # per class at E[N]: (S_j seconds, iterations ⌈P_j/c⌉)
    wait: WaitTail  # the M/G/1 wait, service times mixed over N and the classes
    tpot_mean_seconds: float
    seen: tuple[tuple[float, float], ...]  # t_dec(N) as a decoding request sees it (N size-biased): (seconds, p)
    life_shrink: tuple[float, ...]  # per class: sd of t_dec(N) averaged over its life / sd of t_dec(N)

    @property
    def utilization(self) -> float:
        return self.wait.utilization


class Saturated(ValueError):
    """No steady state at this rate; the message says which limit binds, with its numbers."""


class ServingLoad:
    """The load model of one replica (ContinuousBatching's settings) serving `mix`."""

    def __init__(self, cb: ContinuousBatching, mix: RequestMix):
        self.cb, self.mix = cb, mix
        self.context = mix.mean_decode_context
        self._steps: dict[int, tuple[float, tuple[tuple[float, int], ...]]] = {}

    # ---- the iterations at N decodes (integer N, memoised; real N interpolated)
    def _iterations(self, n: int) -> tuple[float, tuple[tuple[float, int], ...]]:
        """(t_dec, per class (S_j, iterations)) at n sequences decoding."""
        if n not in self._steps:
            cb = self.cb
            t_dec = cb.step(max(n, 1), self.context).seconds  # below one, the iteration of the one that decodes
            chunk = cb.token_budget - n
            services = []
            for c in self.mix.classes:
                full, rest = divmod(c.prompt, chunk)
                seconds = full * cb.step(n, self.context, ((chunk, c.prompt),)).seconds
                seconds += cb.step(n, self.context, ((rest, c.prompt),)).seconds if rest else 0.0
                services.append((seconds, full + (rest > 0)))
            self._steps[n] = (t_dec, tuple(services))
        return self._steps[n]

    def _at(self, n: float) -> tuple[float, tuple[tuple[float, int], ...]]:
        lo = math.floor(n)
        f = n - lo
        t0, s0 = self._iterations(lo)
        if f == 0:
            return t0, s0
        t1, s1 = self._iterations(lo + 1)
        mixed = tuple(((1 - f) * a + f * b, ia) for (a, ia), (b, _) in zip(s0, s1, strict=True))
        return (1 - f) * t0 + f * t1, mixed

    def _kappa(self, rate: float, n: float) -> float:
        """λ·E[X] at n decoding: the share by which prefill stretches the decode iterations."""
        t_dec, services = self._at(n)
        return rate * sum(c.share * (s - k * t_dec) for c, (s, k) in zip(self.mix.classes, services, strict=True))

    # ---- the law of N
    def law(self, rate: float) -> list[tuple[int, float]]:
        """P(N = n), N the sequences decoding: a processor-sharing queue whose capacity depends on
        its occupancy (each of n sequences gets a token per iteration of mean τ(n) = t_dec(n) /
        (1 - λ·E[X])), so π(n) ∝ Π_{k<=n} λ·E[O - 1]·τ(k)/k, insensitive to the output-length law
        (Kelly, Reversibility and Stochastic Networks, 1979, sec. 3.3, symmetric queues)."""
        a = rate * self.mix.mean_decode_steps
        top = self.cb.token_budget - 1  # N below the budget leaves prefill a token
        logs, n = [0.0], 0
        while not (n > 0 and logs[-1] < max(logs) - 36 and logs[-1] < logs[-2]):
            n += 1
            kappa = self._kappa(rate, n) if n <= top else 1.0
            if kappa >= 1 or n > top:
                raise Saturated(self._why_saturated(rate, n, top, kappa))
            logs.append(logs[-1] + math.log(a * self._at(n)[0] / (1 - kappa) / n))
        peak = max(logs)
        weights = [math.exp(x - peak) for x in logs]
        total = sum(weights)
        return [(k, w / total) for k, w in enumerate(weights) if w / total > 1e-12]

    def _why_saturated(self, rate: float, n: int, top: int, kappa: float) -> str:
        if n > top:
            return (
                f"{rate:.4g} requests/s keep more than {top} sequences decoding, the token budget "
                f"({self.cb.token_budget}) less one prefill token"
            )
        return (
            f"at {rate:.4g} requests/s the prompts' prefill takes {kappa:.0%} of the iterations' time at "
            f"{n} sequences decoding: the decodes never finish"
        )

    def state(self, rate: float) -> LoadState:
        """The steady state at `rate`; Saturated naming the binding limit when there is none."""
        law = self.law(rate)
        nodes = _compress(law)
        shares = [c.share for c in self.mix.classes]
        mixture, arrivals = [], []
        for n, p in nodes:
            t_n, services = self._at(n)
            mixture += [(s, p * w) for (s, _), w in zip(services, shares, strict=True)]
            arrivals.append((p, t_n if n > 0 else 0.0, tuple(s for s, _ in services)))
        rho = rate * sum(s * p for s, p in mixture)
        if rho >= 1:
            raise Saturated(f"prefill utilisation {rho:.3f} >= 1 at {rate:.4g} requests/s: the prompts arrive faster")
        mean_n = sum(n * p for n, p in law)
        t_dec, services = self._at(mean_n)
        tpot = mean_n / (rate * self.mix.mean_decode_steps)  # Little: E[N] = λ·E[(O - 1)·TPOT]
        seen = tuple((self._at(n)[0], n * p / mean_n) for n, p in nodes if n > 0)
        shrink = tuple(
            math.sqrt(_life_average_share((c.output - 1) * tpot, self._lives(tpot))) for c in self.mix.classes
        )
        wait = mg1_wait(rate, mixture)
        return LoadState(rate, tuple(nodes), tuple(arrivals), mean_n, t_dec, services, wait, tpot, seen, shrink)

    def _lives(self, tpot: float) -> list[tuple[float, float]]:
        return [((c.output - 1) * tpot, c.share) for c in self.mix.classes]


def _compress(law: list[tuple[int, float]], groups: int = 12) -> list[tuple[float, float]]:
    """The law of N in at most `groups` nodes of about equal mass (each at its mean n); N = 0
    kept apart (the engine idle)."""
    nodes, acc, n_acc, done = [], 0.0, 0.0, 0.0
    for n, p in law:
        acc, n_acc = acc + p, n_acc + n * p
        if n == 0 or done + acc >= (len(nodes) + 1) / groups or n == law[-1][0]:
            nodes.append((n_acc / acc, acc))
            done, acc, n_acc = done + acc, 0.0, 0.0
    return nodes


def _life_average_share(window: float, lives: list[tuple[float, float]]) -> float:
    """The decode iteration a request sees varies with N, averaged over its life: Var(average of
    N over a window T) / Var(N) for an M/G/∞ population with lives L (shares w): (2/T²)∫_0^T (T - s)·ρ(s) ds, ρ(s) = E[(L - s)+]/E[L]; each term in closed form with
    m = min(T, L): T·L·m - (T + L)·m²/2 + m³/3."""
    mean = sum(life * w for life, w in lives)
    total = 0.0
    for life, w in lives:
        m = min(window, life)
        total += w * (window * life * m - (window + life) * m * m / 2 + m**3 / 3)
    return 2 * total / (window * window * mean)
