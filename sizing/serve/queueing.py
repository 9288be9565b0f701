"""Small probability tools the load model (load.py, rounds.py, latency.py) is built from: Poisson
probabilities, the quantile of a non-increasing tail by bisection, weighted quantiles of a
discrete law, the variance kept by averaging an M/G/∞ population over a window, and a law cut
into nodes of about equal mass. Pure arithmetic; nothing here knows about models or GPUs."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

POISSON_TAIL = 1e-9  # Poisson mass left out of a truncated sum
_SQRT2 = math.sqrt(2.0)


def normal_cdf(x: float) -> float:
    """P(Z <= x), Z standard normal: statistics.NormalDist().cdf's own arithmetic (0.5·(1 + erf(x/√2))),
    without its method call, on the load model's hot path."""
    return 0.5 * (1.0 + math.erf(x / _SQRT2))


def poisson_terms(mean: float, tail: float = POISSON_TAIL) -> list[tuple[int, float]]:
    """(k, P(K = k)) for K ~ Poisson(mean), k from 0 until all but `tail` of the mass is in."""
    if mean <= 0:
        return [(0, 1.0)]
    terms, k, total = [], 0, 0.0
    log_mean = math.log(mean)
    while total < 1 - tail and k < mean + 40 * math.sqrt(mean) + 50:
        p = math.exp(k * log_mean - mean - math.lgamma(k + 1))
        terms.append((k, p))
        total += p
        k += 1
    return terms


def quantile(exceed: Callable[[float], float], q: float, start: float) -> float:
    """The smallest t with exceed(t) <= 1 - q, for a non-increasing `exceed`: doubling from
    `start` (> 0), then bisection to 1e-9 relative; inf when none below 1e12."""
    target = 1 - q
    if exceed(0.0) <= target:
        return 0.0
    hi = max(start, 1e-12)
    while exceed(hi) > target:
        hi *= 2
        if hi > 1e12:
            return math.inf
    lo = 0.0
    while hi - lo > 1e-9 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if exceed(mid) > target else (lo, mid)
    return hi


class CompoundPoisson:
    """Y = X_1 + ... + X_K, K ~ Poisson(mean_count), the X independent draws from `jumps`
    ((value, probability)). P(Y > y): the Poisson count exact with the jump law exact for K = 1
    and the sum normal for K >= 2, while the mean count is at most 50; past it Y is normal (the
    central limit), mean Λ·E[X] and variance Λ·E[X²]."""

    def __init__(self, mean_count: float, jumps: Sequence[tuple[float, float]]):
        self.mean_count, self.jumps = mean_count, sorted(jumps)
        self.m1 = sum(x * p for x, p in jumps)
        self.m2 = sum(x * x * p for x, p in jumps)
        self.terms = poisson_terms(mean_count) if 0 < mean_count <= 50 else []
        var = self.m2 - self.m1**2
        # per term k >= 2 (when var > 0): (k·E[X], sd of the sum), the same floats exceed() used to compute each call
        self._normal_terms = [(k * self.m1, math.sqrt(k * var)) if var > 0 else None for k, _ in self.terms]

    @property
    def mean(self) -> float:
        return self.mean_count * self.m1

    def exceed(self, y: float) -> float:
        lam, m1, var = self.mean_count, self.m1, self.m2 - self.m1**2
        if lam <= 0 or self.m2 <= 0:
            return 1.0 if y < 0 else 0.0
        if not self.terms:
            return 1 - normal_cdf((y - lam * m1) / math.sqrt(lam * self.m2))
        total = 0.0
        for (k, pk), normal in zip(self.terms, self._normal_terms, strict=True):
            if k == 0:
                total += pk * (y < 0)
            elif k == 1:
                total += pk * sum(p for x, p in self.jumps if x > y)
            elif var <= 0:
                total += pk * (k * m1 > y)
            else:
                total += pk * (1 - 0.5 * (1.0 + math.erf((y - normal[0]) / normal[1] / _SQRT2)))
        return min(1.0, total)


class DiscreteLaw:
    """A law given by weighted points (value, probability), sorted once: tail probabilities and
    quantiles by bisection over the cumulative sums."""

    def __init__(self, points: Sequence[tuple[float, float]]):
        merged = sorted(points)
        total = sum(p for _, p in merged)
        self.values = [v for v, _ in merged]
        self.cumulative, acc = [], 0.0
        for _, p in merged:
            acc += p / total
            self.cumulative.append(acc)

    def exceed(self, t: float) -> float:
        """P(X > t)."""
        import bisect

        i = bisect.bisect_right(self.values, t)
        return 1.0 - (self.cumulative[i - 1] if i else 0.0)

    def quantile(self, q: float) -> float:
        """The smallest value whose cumulative probability reaches q."""
        import bisect

        i = bisect.bisect_left(self.cumulative, q - 1e-12)
        return self.values[min(i, len(self.values) - 1)]

    def nodes(self, m: int) -> list[float]:
        """m equiprobable quantile nodes (midpoints of m equal slices of probability)."""
        return [self.quantile((i + 0.5) / m) for i in range(m)]


def life_average_share(window: float, lives: Sequence[tuple[float, float]]) -> float:
    """Var(average of N over a window T) / Var(N), N an M/G/∞ population (Poisson arrivals) with
    lives L of shares w: its autocorrelation at lag s is E[(L - s)+]/E[L], so the share is
    (2/T²)∫_0^T (T - s)·E[(L - s)+]/E[L] ds, each life in closed form with m = min(T, L):
    T·L·m - (T + L)·m²/2 + m³/3. One life L = T gives 2/3."""
    mean = sum(life * w for life, w in lives)
    total = 0.0
    for life, w in lives:
        m = min(window, life)
        total += w * (window * life * m - (window + life) * m * m / 2 + m**3 / 3)
    return 2 * total / (window * window * mean)


def equal_mass_nodes(law: Sequence[tuple[int, float]], bounds: Sequence[float]) -> list[tuple[float, float]]:
    """A law on integers cut at the cumulative probabilities `bounds` (increasing, the last 1),
    each slice as (its mean value, its mass); the value 0 kept apart."""
    nodes, acc, weighted, done = [], 0.0, 0.0, 0.0
    last = law[-1][0]
    for n, p in law:
        acc, weighted = acc + p, weighted + n * p
        bound = next((x for x in bounds if x > done + 1e-15), 1.0)
        if n == 0 or n == last or done + acc >= bound - 1e-15:
            nodes.append((weighted / acc, acc))
            done, acc, weighted = done + acc, 0.0, 0.0
    return nodes
