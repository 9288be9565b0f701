"""The probability tools of the load model (sizing/serve/queueing.py) against closed forms."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.serve.queueing import (
    CompoundPoisson,
    DiscreteLaw,
    equal_mass_nodes,
    life_average_share,
    poisson_terms,
    quantile,
)


@given(st.floats(0.01, 200))
def test_poisson_terms_carry_the_mass_and_the_mean(mean):
    terms = poisson_terms(mean)
    assert sum(p for _, p in terms) == pytest.approx(1, abs=1e-8)
    assert sum(k * p for k, p in terms) == pytest.approx(mean, rel=1e-6)


def test_quantile_of_an_exponential():
    # P(X > t) = e^{-2t}: the p99 is ln(100)/2 = 2.302585...
    assert quantile(lambda t: math.exp(-2 * t), 0.99, 1.0) == pytest.approx(math.log(100) / 2, rel=1e-8)
    assert quantile(lambda t: 0.3 * math.exp(-t), 0.5, 1.0) == 0.0  # an atom of 0.7 at zero holds the median


def test_discrete_law_quantiles_and_tails():
    law = DiscreteLaw([(3.0, 0.2), (1.0, 0.5), (2.0, 0.3)])
    assert law.quantile(0.5) == 1.0 and law.quantile(0.51) == 2.0 and law.quantile(0.99) == 3.0
    assert law.exceed(1.0) == pytest.approx(0.5) and law.exceed(2.5) == pytest.approx(0.2)


def test_life_average_share_of_one_life_is_two_thirds():
    # M/D/∞: autocorrelation (1 - s/L)+; averaged over T = L: (2/L²)∫_0^L (L - s)(1 - s/L) ds = 2/3
    assert life_average_share(5.0, [(5.0, 1.0)]) == pytest.approx(2 / 3)
    # a window much longer than the life averages the fluctuation away: (2/T²)∫_0^1 (100 - s)(1 - s) ds
    # = 2 (100 - 50.5 + 1/3) / 100² ~ 1/T
    assert life_average_share(100.0, [(1.0, 1.0)]) == pytest.approx(2 * (100 - 50.5 + 1 / 3) / 100**2)


def test_compound_poisson_with_one_jump_is_a_scaled_poisson():
    y = CompoundPoisson(2.0, [(0.5, 1.0)])  # Y = 0.5 K, K ~ Poisson(2)
    p_k_le_3 = sum(math.exp(-2) * 2**k / math.factorial(k) for k in range(4))
    assert y.exceed(1.5) == pytest.approx(1 - p_k_le_3, abs=1e-9)  # Y > 1.5 <=> K >= 4
    assert y.mean == 1.0


def test_equal_mass_nodes_keep_mass_and_mean():
    law = [(n, math.exp(-10) * 10**n / math.factorial(n)) for n in range(40)]
    nodes = equal_mass_nodes(law, (0.25, 0.5, 0.75, 0.99, 1.0))
    assert sum(p for _, p in nodes) == pytest.approx(sum(p for _, p in law))
    assert sum(n * p for n, p in nodes) == pytest.approx(sum(n * p for n, p in law))
    assert nodes[0][0] == 0  # zero kept apart


@settings(max_examples=60, deadline=None)
@given(
    mean=st.floats(0.01, 50),
    jumps=st.lists(st.tuples(st.floats(0, 2), st.floats(0.01, 1)), min_size=1, max_size=6),
    y=st.floats(-1, 50),
)
def test_compound_poisson_tail_is_the_normal_dist_formula_bit_for_bit(mean, jumps, y):
    """exceed() keeps its per-term means and deviations and inlines NormalDist.cdf (speed, issue 35):
    the same floats as the plain formula, P(K=0)·[y<0] + P(K=1)·P(X>y) + Σ P(K=k)·(1 - Φ((y - k·m1)/√(k·var)))."""
    total = sum(p for _, p in jumps)
    jumps = [(x, p / total) for x, p in jumps]
    law = CompoundPoisson(mean, jumps)
    m1 = sum(x * p for x, p in jumps)
    m2 = sum(x * x * p for x, p in jumps)
    var = m2 - m1**2
    if m2 <= 0:  # every jump 0 (or its square below the smallest float): Y = 0
        assert law.exceed(y) == (1.0 if y < 0 else 0.0)
        return
    want = 0.0
    for k, pk in law.terms:
        if k == 0:
            want += pk * (y < 0)
        elif k == 1:
            want += pk * sum(p for x, p in sorted(jumps) if x > y)
        elif var <= 0:
            want += pk * (k * m1 > y)
        else:
            want += pk * (1 - NormalDist().cdf((y - k * m1) / math.sqrt(k * var)))
    assert law.exceed(y) == min(1.0, want)
