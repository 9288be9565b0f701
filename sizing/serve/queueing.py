"""Queueing formulas the load model (load.py) is built from, each with its source. Pure
arithmetic on service times in seconds; nothing here knows about models or GPUs.

* M/G/1, first come first served, Poisson arrivals at rate λ, service times S (a discrete
  mixture): utilisation ρ = λ·E[S]; mean wait (Pollaczek-Khinchine) E[W] = λ·E[S²] / (2(1 - ρ));
  tail P(W > x) ~ C·e^(-γx), the Cramér-Lundberg approximation, γ > 0 the root of
  λ·(E[e^(γS)] - 1) = γ and C = (1 - ρ) / (λ·E[S e^(γS)] - 1) (Asmussen, Applied Probability and
  Queues, 2nd ed. 2003, ch. XIII.5; exact for M/M/1, where γ = μ - λ and C = ρ). Capped at
  P(W > 0) = ρ.
* A wait plus an independent uniform delay on [0, a] (the residual of the iteration an arrival
  lands in: the M/G/1 queue with vacations decomposes into the M/G/1 wait plus the residual
  vacation, Fuhrmann & Cooper, Operations Research 33(5), 1985): closed form.
* Compound Poisson Y = X_1 + ... + X_K, K ~ Poisson(Λ), X from a discrete mixture: the exact
  Poisson count with the exact jump law for K = 1 and a normal sum for K >= 2 while Λ <= 50;
  past that, the normal law of Y (its mean Λ·E[X], variance Λ·E[X²]; the central limit).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from statistics import NormalDist

_NORMAL = NormalDist()
POISSON_SUM_LIMIT = 50.0  # past this mean count, Y is taken as normal
_QUANTILE_NODES = 16  # equiprobable normal nodes for E[f(Y)]
Mixture = Sequence[tuple[float, float]]  # (value, probability)


@dataclass(frozen=True)
class WaitTail:
    """The M/G/1 FCFS waiting time: P(W > x) = min(ρ, C·e^(-γx)) for x >= 0."""

    utilization: float  # ρ
    decay: float  # γ, per second (inf: no wait)
    constant: float  # C
    mean_seconds: float  # Pollaczek-Khinchine

    def exceed(self, x: float) -> float:
        if x < 0:
            return 1.0
        if self.utilization == 0:
            return 0.0
        return min(self.utilization, self.constant * math.exp(-self.decay * x))

    def _integral(self, z: float) -> float:
        """∫_0^z P(W > x) dx for z >= 0, and z for z < 0 (where P = 1)."""
        if z < 0:
            return z
        if self.utilization == 0:
            return 0.0
        flat = max(0.0, math.log(self.constant / self.utilization) / self.decay)  # where C e^-γx = ρ
        head = self.utilization * min(z, flat)
        if z <= flat:
            return head
        return head + self.constant / self.decay * (math.exp(-self.decay * flat) - math.exp(-self.decay * z))

    def exceed_with_uniform(self, y: float, width: float) -> float:
        """P(W + U > y), U uniform on [0, width], independent of W."""
        if width <= 0:
            return self.exceed(y)
        return min(1.0, max(0.0, (self._integral(y) - self._integral(y - width)) / width))


def mg1_wait(rate: float, services: Mixture) -> WaitTail:
    """The M/G/1 FCFS wait for Poisson arrivals at `rate` and service times `services`
    ((seconds, probability) pairs). ρ must be below 1."""
    rho = rate * sum(s * p for s, p in services)
    if not rho < 1:
        raise ValueError(f"utilization {rho} >= 1: no steady state")
    if rho == 0:
        return WaitTail(0.0, math.inf, 0.0, 0.0)
    mean = rate * sum(s * s * p for s, p in services) / (2 * (1 - rho))
    gamma = _adjustment_coefficient(rate, services)
    slope = rate * sum(s * math.exp(gamma * s) * p for s, p in services) - 1
    return WaitTail(rho, gamma, (1 - rho) / slope, mean)


def _adjustment_coefficient(rate: float, services: Mixture) -> float:
    """γ > 0 with rate·(E[e^(γS)] - 1) = γ: f(γ) = rate·(M(γ) - 1) - γ is convex, f(0) = 0 and
    f'(0) = ρ - 1 < 0, so the positive root is unique; bracketed by doubling, then bisection."""
    longest = max(s for s, p in services if p > 0)

    def f(g: float) -> float:
        return rate * (sum(p * math.exp(min(g * s, 700.0)) for s, p in services) - 1) - g

    lo, hi = 0.0, 1.0 / longest
    while f(hi) <= 0:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) <= 0 else (lo, mid)
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2


@dataclass(frozen=True)
class CompoundPoisson:
    """Y = X_1 + ... + X_K, K ~ Poisson(mean_count), X drawn from `jumps`."""

    mean_count: float  # Λ
    jumps: tuple[tuple[float, float], ...]  # (seconds, probability)

    @cached_property
    def _moments(self) -> tuple[float, float]:
        m1 = sum(x * p for x, p in self.jumps)
        return m1, sum(x * x * p for x, p in self.jumps) - m1 * m1

    @cached_property
    def _terms(self) -> list[tuple[int, float]]:
        """(k, P(K = k)) over the range that carries all but ~1e-12 of the mass."""
        lam = self.mean_count
        lo = max(0, math.floor(lam - 9 * math.sqrt(lam) - 2))
        hi = math.ceil(lam + 9 * math.sqrt(lam) + 10)
        return [(k, math.exp(k * math.log(lam) - lam - math.lgamma(k + 1))) for k in range(lo, hi + 1)]

    def exceed(self, y: float) -> float:
        """P(Y > y)."""
        m1, var = self._moments
        lam = self.mean_count
        if lam <= 0 or m1 <= 0:
            return 1.0 if y < 0 else 0.0
        if lam > POISSON_SUM_LIMIT:
            return 1 - _NORMAL.cdf((y - lam * m1) / math.sqrt(lam * (var + m1 * m1)))
        total = 0.0
        for k, pk in self._terms:
            if k == 0:
                total += pk * (y < 0)
            elif k == 1:
                total += pk * sum(p for x, p in self.jumps if x > y)
            else:
                total += pk * _normal_exceed(y, k * m1, k * var)
        return min(1.0, total)

    def expect(self, f: Callable[[float], float]) -> float:
        """E[f(Y)], the normal parts on equiprobable nodes."""
        m1, var = self._moments
        lam = self.mean_count
        if lam <= 0 or m1 <= 0:
            return f(0.0)
        if lam > POISSON_SUM_LIMIT:
            return _normal_expect(f, lam * m1, lam * (var + m1 * m1))
        total = 0.0
        for k, pk in self._terms:
            if k == 0:
                total += pk * f(0.0)
            elif k == 1:
                total += pk * sum(p * f(x) for x, p in self.jumps)
            else:
                total += pk * _normal_expect(f, k * m1, k * var)
        return total


def _normal_exceed(y: float, mean: float, var: float) -> float:
    if var <= 0:
        return 1.0 if mean > y else 0.0
    return 1 - _NORMAL.cdf((y - mean) / math.sqrt(var))


_NODES = tuple(_NORMAL.inv_cdf((i + 0.5) / _QUANTILE_NODES) for i in range(_QUANTILE_NODES))


def _normal_expect(f: Callable[[float], float], mean: float, var: float) -> float:
    if var <= 0:
        return f(mean)
    sd = math.sqrt(var)
    return sum(f(mean + sd * z) for z in _NODES) / _QUANTILE_NODES


def poisson_quantile(mean: float, q: float) -> int:
    """The smallest k with P(Poisson(mean) <= k) >= q."""
    k, pk = 0, math.exp(-mean)
    total = pk
    while total < q and k < 10 * mean + 100:
        k += 1
        pk *= mean / k
        total += pk
    return k


def quantile(exceed: Callable[[float], float], q: float, start: float) -> float:
    """The smallest t with exceed(t) <= 1 - q, for a non-increasing `exceed`: doubling from
    `start` (> 0), then bisection to 1e-9 relative."""
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
