"""Prefill under continuous batching as rounds: the step-level service of the load model
(load.py). Each iteration takes every waiting prompt token up to the chunk c (the token budget
less the decodes), first come first served, several prompts in one iteration when they fit
(vLLM, Sarathi-Serve). So the prompts that arrive while one batch of prompts is prefilled are
prefilled together next: a round. A round of a prompts (a·P̄ tokens, P̄ the mix's mean prompt)
takes m(a) = ⌈a·P̄ / c⌉ iterations,

    T(a) = (m - 1)·t(c) + t(a·P̄ - (m - 1)·c),    T(0) = t_dec (one iteration of decodes only)

with t(k) one engine iteration carrying k prompt tokens (batching.ContinuousBatching.step), and
the next round holds the Poisson(λ·T(a)) prompts that arrived meanwhile: a Markov chain on a
(an exhaustive batch-service queue; Chaudhry & Templeton, A First Course in Bulk Queues, 1983).
Its stationary law, solved numerically, gives

* the mean iteration a decode sees, τ = E[T] / E[m], and the spread of its average over a
  life of n iterations, Var(T - τ·m) / (E[m]·n), inflated by (1 + φ)/(1 - φ) for the
  correlation φ of consecutive rounds (a long round gathers a long next one);
* TTFT: an arrival lands in a round of a prompts (time-average: rounds weighted by T(a)) at a
  uniform point u; it waits the rest, (1 - u)·T(a), then is prefilled in the next round
  behind the b ~ Poisson(λ·u·T(a)) that arrived before it and beside the f ~ Poisson(λ·(1 -
  u)·T(a)) after it, which share its last iteration: done after ⌈(b·P̄ + P_j)/c⌉ iterations.

A prefill-only instance (disaggregated serving, no decodes) idles when no prompt waits: an
arrival then starts a round alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from statistics import NormalDist

from sizing.serve.queueing import poisson_terms

MAX_ROUND_PROMPTS = 128  # past this the prompts are taken not to settle (the chain is solved directly: (top + 1)³)
_U_NODES = 8  # midpoints of the arrival's position in its round
_SUM_NODES = tuple(NormalDist().inv_cdf((i + 0.5) / 5) for i in range(5))  # a sum of prompts, at 5 nodes
_TTFT_TAIL = 1e-5  # Poisson mass left out per position when the TTFT points are built (ahead)
_BEHIND_TAIL = 1e-3  # and behind (they only fill the last iteration)


class PrefillSaturated(ValueError):
    """The prompts arrive faster than the iterations can prefill them."""


@dataclass(frozen=True)
class Rounds:
    rate: float
    chunk: int  # c, prompt tokens per iteration
    prompts: tuple[tuple[int, float], ...]  # the mix's prompt lengths and their shares
    decodes: bool  # False: a prefill-only instance, idle when no prompt waits
    iteration: Callable[[int], float]  # t(k): one iteration with k prompt tokens
    law: tuple[tuple[int, float], ...] = ()  # per round: (a, probability)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_memo", {})

    def _cached(self, key, compute):
        memo = self._memo
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    # ---- one round
    @cached_property
    def _mean_var(self) -> tuple[float, float]:
        mean = sum(p * w for p, w in self.prompts)
        return mean, sum(w * (p - mean) ** 2 for p, w in self.prompts)

    def tokens(self, a: int) -> list[tuple[int, float]]:
        return self._cached(("tokens", a), lambda: self._tokens(a))

    def _tokens(self, a: int) -> list[tuple[int, float]]:
        """The prompt tokens of a round of a prompts: 0, one prompt of the mix, or for a >= 2 the
        sum's normal law (mean a·P̄, variance a·Var P) at equiprobable nodes."""
        if a == 0:
            return [(0, 1.0)]
        if a == 1 or len(self.prompts) == 1:
            return [(a * p, w) for p, w in self.prompts]
        mean, var = self._mean_var
        sd = math.sqrt(a * var)
        return [(max(1, round(a * mean + sd * z)), 1 / len(_SUM_NODES)) for z in _SUM_NODES]

    def _time(self, tokens: int) -> float:
        """Iterations of `tokens` prompt tokens, c at a time: (m - 1)·t(c) + t(rest)."""
        return self._cached(("time", tokens), lambda: self._time_of(tokens))

    def _time_of(self, tokens: int) -> float:
        if tokens == 0:
            return self.iteration(0)
        full = (tokens - 1) // self.chunk
        return full * self.iteration(self.chunk) + self.iteration(tokens - full * self.chunk)

    def iterations(self, a: int) -> float:
        """E[m(a)]."""
        return sum(w * max(1, math.ceil(k / self.chunk)) for k, w in self.tokens(a))

    def seconds(self, a: int) -> float:
        """E[T(a)]; for an idle prefill-only instance, the mean idle time 1/λ."""
        if a == 0 and not self.decodes:
            return 1 / self.rate
        return self._cached(("seconds", a), lambda: sum(w * self._time(k) for k, w in self.tokens(a)))

    def next_round(self, a: int) -> list[tuple[int, float]]:
        """The prompts arriving during a round of a: Poisson(λ·T) mixed over the round's tokens."""
        if a == 0 and not self.decodes:
            return [(1, 1.0)]  # the idle period ends with one arrival
        return self._cached(("next", a), lambda: self._arrivals(a))

    def _arrivals(self, a: int) -> list[tuple[int, float]]:
        law: dict[int, float] = {}
        for k, w in self.tokens(a):
            for b, p in poisson_terms(self.rate * self._time(k)):
                law[b] = law.get(b, 0.0) + w * p
        return sorted(law.items())

    # ---- the chain
    @cached_property
    def time_weights(self) -> list[tuple[int, float]]:
        """The round an arrival lands in: P(a) x T(a), normalised (Poisson arrivals see time averages)."""
        w = [(a, p * self.seconds(a)) for a, p in self.law]
        total = sum(x for _, x in w)
        return [(a, x / total) for a, x in w]

    @cached_property
    def busy(self) -> float:
        """Share of time spent prefilling (rounds with prompts)."""
        return sum(p for a, p in self.time_weights if a > 0)

    @cached_property
    def tau(self) -> float:
        """Mean iteration seen by a decode: E[T] / E[m]."""
        return sum(p * self.seconds(a) for a, p in self.law) / sum(p * self.iterations(a) for a, p in self.law)

    @cached_property
    def busy_periods_per_iteration(self) -> float:
        """Prefill busy periods (runs of rounds with prompts) that start per iteration a decode
        sees: P(a = 0)·P(0 -> a >= 1) / E[m]."""
        p0 = dict(self.law).get(0, 0.0)
        leave = 1 - dict(self.next_round(0)).get(0, 0.0)
        return p0 * leave / sum(p * self.iterations(a) for a, p in self.law)

    @cached_property
    def busy_period_excess(self) -> list[tuple[float, float]]:
        """What one prefill busy period adds to the decodes' time (rounds in a row are
        correlated: a long round gathers a long next one), at 5 equiprobable nodes of the
        lognormal law with its mean and variance. Per round, X = T_k - m_k·t_dec; over a busy
        period from round a, m1(a) = E[X_a] + Σ_{b>=1} P(a, b)·m1(b) and
        m2(a) = E[X_a²] + 2·E[X_a]·Σ P(a, b)·m1(b) + Σ P(a, b)·m2(b), solved by iteration."""
        t_dec, busy = self.iteration(0), [a for a, _ in self.law if a > 0]
        moments = {}
        for a in busy:
            nodes = [(self._time(k) - max(1, math.ceil(k / self.chunk)) * t_dec, w) for k, w in self.tokens(a)]
            moments[a] = (sum(x * w for x, w in nodes), sum(x * x * w for x, w in nodes))
        m1, m2 = dict.fromkeys(busy, 0.0), dict.fromkeys(busy, 0.0)
        for _ in range(500):
            on1 = {a: sum(p * m1.get(b, 0.0) for b, p in self.next_round(a) if b > 0) for a in busy}
            on2 = {a: sum(p * m2.get(b, 0.0) for b, p in self.next_round(a) if b > 0) for a in busy}
            new1 = {a: moments[a][0] + on1[a] for a in busy}
            new2 = {a: moments[a][1] + 2 * moments[a][0] * on1[a] + on2[a] for a in busy}
            done = all(abs(new1[a] - m1[a]) <= 1e-12 + 1e-9 * abs(new1[a]) for a in busy)
            m1, m2 = new1, new2
            if done:
                break
        start = [(b, p) for b, p in self.next_round(0) if b > 0 and b in m1]
        total = sum(p for _, p in start) or 1.0
        mean = sum(p * m1[b] for b, p in start) / total
        second = sum(p * m2[b] for b, p in start) / total
        return _lognormal_nodes(mean, max(0.0, second - mean * mean))

    # ---- TTFT
    def ttft_points(self, prompt: int) -> list[tuple[float, float]]:
        """(TTFT seconds, probability) of a prompt of `prompt` tokens over where it lands: a
        round of a prompts holding k tokens, lasting T_k, weighted by P(a)·P(k | a)·T_k."""
        points, total = [], sum(p * self.seconds(a) for a, p in self.law)
        for a, pa in self.law:
            if a == 0 and not self.decodes:  # idle: it starts a round alone
                points += [(t, pa * self.seconds(0) / total * w) for t, w in self._done(0, prompt, 0)]
                continue
            for k, wk in self.tokens(a):
                t_round = self._time(k)
                for i in range(_U_NODES):
                    u = (i + 0.5) / _U_NODES
                    weight = pa * wk * t_round / total / _U_NODES
                    wait = (1 - u) * t_round
                    behind = poisson_terms(self.rate * (1 - u) * t_round, _BEHIND_TAIL)  # share its last iteration
                    for b, pb in poisson_terms(self.rate * u * t_round, _TTFT_TAIL):
                        for f, pf in behind:
                            w_bf = weight * pb * pf
                            points += [(wait + t, w_bf * w) for t, w in self._done(b, prompt, f)]
        return points

    def _done(self, ahead: int, prompt: int, behind: int) -> list[tuple[float, float]]:
        """(time, probability) from a round's start until a prompt behind `ahead` prompts, with
        `behind` after it (at the mean prompt), has its last token prefilled."""
        return self._cached(("done", ahead, prompt, behind), lambda: self._done_of(ahead, prompt, behind))

    def _done_of(self, ahead: int, prompt: int, behind: int) -> list[tuple[float, float]]:
        out = []
        after = round(behind * self._mean_var[0])
        for before, w in self.tokens(ahead):
            m = math.ceil((before + prompt) / self.chunk)
            rest = before + prompt + after - (m - 1) * self.chunk
            out.append(((m - 1) * self.iteration(self.chunk) + self.iteration(min(self.chunk, rest)), w))
        return out


def prefill_rounds(
    rate: float,
    chunk: int,
    iteration: Callable[[int], float],
    prompts: tuple[tuple[int, float], ...],
    decodes: bool = True,
    start: int = 8,
) -> Rounds:
    """The rounds' stationary law, the chain cut where its mass ends (from `start` states, doubled);
    PrefillSaturated when the rounds grow without bound (λ·T(a) >= a for large a)."""
    r = Rounds(rate, chunk, prompts, decodes, iteration)
    big = MAX_ROUND_PROMPTS
    if rate * r.seconds(big) >= big:
        raise PrefillSaturated(
            f"prompts of {r._mean_var[0]:,.0f} tokens at {rate:.4g}/s need more than one iteration's prefill per "
            f"iteration ({chunk} tokens per iteration)"
        )
    top = max(8, start)
    while True:
        law = _stationary(r, top)
        if law[-1][1] < 1e-8 or top >= big:  # the direct solve leaves ~1e-10 of round-off there
            break
        top = min(big, top * 2)
    if law[-1][1] >= 1e-5:
        raise PrefillSaturated(f"prefill rounds past {big} prompts at {rate:.4g}/s: the queue does not settle")
    return Rounds(rate, chunk, prompts, decodes, iteration, tuple((a, p) for a, p in law if p > 1e-14))


def _stationary(r: Rounds, top: int) -> list[tuple[int, float]]:
    """The chain on 0..top (arrivals past top folded onto top): π = π·P with Σπ = 1, solved
    directly (Gauss-Jordan with partial pivoting) on (Pᵀ - I) with its last row replaced by ones."""
    size = top + 1
    matrix = [[0.0] * size + [0.0] for _ in range(size)]  # rows: equations, last column: right side
    for a in range(size):
        matrix[a][a] -= 1.0
        for b, p in r.next_round(a):
            matrix[min(b, top)][a] += p
    matrix[top] = [1.0] * size + [1.0]
    for col in range(size):
        pivot = max(range(col, size), key=lambda i: abs(matrix[i][col]))
        matrix[col], matrix[pivot] = matrix[pivot], matrix[col]
        head = matrix[col]
        scale = head[col]
        for i in range(size):
            factor = matrix[i][col] / scale if i != col else 0.0
            if factor:
                row = matrix[i]
                for k in range(col, size + 1):
                    row[k] -= factor * head[k]
    pi = [max(0.0, matrix[i][size] / matrix[i][i]) for i in range(size)]
    total = sum(pi)
    return [(a, x / total) for a, x in enumerate(pi)]


def _lognormal_nodes(mean: float, var: float, n: int = 5) -> list[tuple[float, float]]:
    """n equiprobable nodes of the lognormal law with this mean and variance (a point when the
    variance is 0 or the mean is not positive)."""
    if mean <= 0 or var <= 0:
        return [(max(mean, 0.0), 1.0)]
    sigma2 = math.log(1 + var / mean**2)
    mu = math.log(mean) - sigma2 / 2
    normal = NormalDist()
    return [(math.exp(mu + math.sqrt(sigma2) * normal.inv_cdf((i + 0.5) / n)), 1 / n) for i in range(n)]
