"""Compute-optimal scaling laws: how many parameters N and tokens D for a budget of C FLOPs.

Every law here counts compute as C = 6·N·D (Kaplan's approximation, the convention of
Hoffmann et al. 2022), N with embeddings included. `sizing plan` turns an optimum into
concrete shapes whose exact FLOPs come from sizing.formulas.flops.

* Approach 1 of Hoffmann et al. 2022 ("Training Compute-Optimal Large Language Models",
  arXiv:2203.15556, §3.1 and Table 2): N_opt ∝ C^a, D_opt ∝ C^b with a = 0.50, b = 0.50. The
  paper gives the exponents, not the constants; the projection is anchored at its own
  Approach 1 point for Gopher's budget, 5.76e23 FLOPs -> 67B parameters (Table 3), and
  D_opt = C / (6·N_opt).
* Approach 3 (§3.3, Eq. 2 and 10): the fitted loss L(N, D) = E + A/N^α + B/D^β with
  E = 1.69, A = 406.4, B = 410.7, α = 0.34, β = 0.28; its optimum under C = 6ND has the closed
  form (Eq. 4) N_opt = G·(C/6)^a, D_opt = G⁻¹·(C/6)^b, G = (αA/(βB))^(1/(α+β)),
  a = β/(α+β), b = α/(α+β).
* The Epoch AI replication (Besiroglu, Erdil, Barnett, You 2024, "Chinchilla Scaling: A
  replication attempt", arXiv:2404.10102): the same form refitted on the data of Hoffmann's
  Figure 4, E = 1.8172, A = 482.01, B = 2085.43, α = 0.3478, β = 0.3658 (the published
  Approach 3 fit did not converge, they find; theirs implies ~20 tokens per parameter).
* The rule of thumb: ~20 tokens per parameter (Hoffmann et al.'s Table 3 projections), so
  C = 6·N·20N and N = sqrt(C / 120).
* Inference-aware sizing (Sardana, Portes, Doubov, Frankle 2023, "Beyond Chinchilla-Optimal",
  arXiv:2401.00448, Eq. 3): for a loss ℓ and D_inf tokens to be served, minimise the lifetime
  FLOPs 6·N·D_tr + 2·N·D_inf subject to L(N, D_tr) = ℓ. No closed form; solved numerically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.formulas.flops import KAPLAN_FLOPS_PER_PARAM, kaplan_6n_per_token

FLOPS_PER_PARAM_TOKEN = KAPLAN_FLOPS_PER_PARAM  # C = 6·N·D: the laws' compute convention
INFERENCE_FLOPS_PER_PARAM_TOKEN = 2  # one forward per served token (Sardana et al.'s 2·N·D_inf)
TOKENS_PER_PARAM_RULE = 20


def compute_flops(n_params: float, tokens: float) -> float:
    """C = 6·N·D (Kaplan's 6N per token, sizing.formulas.flops), the compute convention of every law here."""
    return kaplan_6n_per_token(n_params) * tokens


def tokens_for_budget(flops: float, n_params: float) -> float:
    """D with 6·N·D = C."""
    return flops / kaplan_6n_per_token(n_params)


def inference_flops(n_params: float, served_tokens: float) -> float:
    """2·N·D_inf: one forward per served token (Sardana et al. 2023)."""
    return INFERENCE_FLOPS_PER_PARAM_TOKEN * n_params * served_tokens


@dataclass(frozen=True)
class ParametricLaw:
    """L(N, D) = E + A/N^α + B/D^β (Hoffmann et al. 2022, Eq. 2), in nats per token."""

    key: str
    name: str
    source: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float

    def loss(self, n_params: float, tokens: float) -> float:
        return self.E + self.A / n_params**self.alpha + self.B / tokens**self.beta

    @property
    def a(self) -> float:
        """N_opt ∝ C^a, a = β/(α+β)."""
        return self.beta / (self.alpha + self.beta)

    @property
    def b(self) -> float:
        """D_opt ∝ C^b, b = α/(α+β)."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def G(self) -> float:
        """G = (αA / (βB))^(1/(α+β)) (Hoffmann et al. 2022, Eq. 4)."""
        return (self.alpha * self.A / (self.beta * self.B)) ** (1 / (self.alpha + self.beta))

    def optimal_params(self, flops: float) -> float:
        """N_opt(C) = G·(C/6)^a: the N minimising L(N, C/(6N))."""
        return self.G * (flops / FLOPS_PER_PARAM_TOKEN) ** self.a

    def optimal_tokens(self, flops: float) -> float:
        """D_opt(C) = G⁻¹·(C/6)^b (= C / (6·N_opt), since a + b = 1)."""
        return (flops / FLOPS_PER_PARAM_TOKEN) ** self.b / self.G

    def coefficients(self) -> str:
        return f"E={self.E:g}, A={self.A:g}, B={self.B:g}, α={self.alpha:g}, β={self.beta:g}"

    def tokens_for_loss(self, n_params: float, loss: float) -> float | None:
        """D with L(N, D) = loss; None when N alone cannot reach it (A/N^α ≥ loss − E)."""
        room = loss - self.E - self.A / n_params**self.alpha
        return (self.B / room) ** (1 / self.beta) if room > 0 else None


@dataclass(frozen=True)
class PowerLawProjection:
    """N_opt = N₀·(C/C₀)^a and D_opt = D₀·(C/C₀)^b through an anchor (C₀, N₀), D₀ = C₀/(6N₀)."""

    key: str
    name: str
    source: str
    a: float
    b: float
    anchor_flops: float
    anchor_params: float

    def optimal_params(self, flops: float) -> float:
        return self.anchor_params * (flops / self.anchor_flops) ** self.a

    def optimal_tokens(self, flops: float) -> float:
        anchor_tokens = tokens_for_budget(self.anchor_flops, self.anchor_params)
        return anchor_tokens * (flops / self.anchor_flops) ** self.b

    def flops_for_params(self, n_params: float) -> float:
        """The budget whose optimum is n_params: C = C₀·(N/N₀)^(1/a) (Table 3's FLOPs column)."""
        return self.anchor_flops * (n_params / self.anchor_params) ** (1 / self.a)

    def coefficients(self) -> str:
        return f"a={self.a:g}, b={self.b:g}; anchor {self.anchor_params:.3g} params at {self.anchor_flops:.3g} FLOPs"


@dataclass(frozen=True)
class TokensPerParamRule:
    key: str
    name: str
    source: str
    tokens_per_param: float

    def optimal_params(self, flops: float) -> float:
        return math.sqrt(flops / (FLOPS_PER_PARAM_TOKEN * self.tokens_per_param))

    def optimal_tokens(self, flops: float) -> float:
        return self.tokens_per_param * self.optimal_params(flops)

    def coefficients(self) -> str:
        return f"D = {self.tokens_per_param:g}·N"


SARDANA_SOURCE = (
    "Sardana, Portes, Doubov, Frankle 2023, Beyond Chinchilla-Optimal: Accounting for Inference in "
    "Language Model Scaling Laws, arXiv:2401.00448 (Eq. 3), with the law that set the shapes"
)
HOFFMANN_PAPER = "Hoffmann et al. 2022, Training Compute-Optimal Large Language Models, arXiv:2203.15556"
GOPHER_FLOPS = 5.76e23  # Gopher's training compute, the budget Chinchilla was sized for
APPROACH1_GOPHER_PARAMS = 67e9  # Approach 1's optimum at that budget (Table 3)

HOFFMANN_APPROACH1 = PowerLawProjection(
    "hoffmann-a1",
    "Hoffmann et al. Approach 1",
    f"{HOFFMANN_PAPER}: Table 2 (a = 0.50, b = 0.50), anchored at Table 3's 67B for 5.76e23 FLOPs",
    a=0.50,
    b=0.50,
    anchor_flops=GOPHER_FLOPS,
    anchor_params=APPROACH1_GOPHER_PARAMS,
)
HOFFMANN_APPROACH3 = ParametricLaw(
    "hoffmann-a3",
    "Hoffmann et al. Approach 3",
    f"{HOFFMANN_PAPER}: Eq. 10",
    E=1.69,
    A=406.4,
    B=410.7,
    alpha=0.34,
    beta=0.28,
)
EPOCH_REPLICATION = ParametricLaw(
    "epoch",
    "Epoch AI replication",
    "Besiroglu, Erdil, Barnett, You 2024, Chinchilla Scaling: A replication attempt, arXiv:2404.10102",
    E=1.8172,
    A=482.01,
    B=2085.43,
    alpha=0.3478,
    beta=0.3658,
)
TWENTY_TOKENS = TokensPerParamRule(
    "20-tokens", "~20 tokens per parameter", f"{HOFFMANN_PAPER}: Table 3's projections", TOKENS_PER_PARAM_RULE
)
LAWS = {law.key: law for law in (HOFFMANN_APPROACH1, HOFFMANN_APPROACH3, EPOCH_REPLICATION, TWENTY_TOKENS)}
LOSS_LAWS = (HOFFMANN_APPROACH3, EPOCH_REPLICATION)  # the two that predict a loss

# Hoffmann et al. 2022, Table 3 (Approach 1): parameters, FLOPs, tokens, as printed
HOFFMANN_TABLE3 = (
    (400e6, 1.92e19, 8.0e9),
    (1e9, 1.21e20, 20.2e9),
    (10e9, 1.23e22, 205.1e9),
    (67e9, 5.76e23, 1.5e12),
    (175e9, 3.85e24, 3.7e12),
    (280e9, 9.90e24, 5.9e12),
    (520e9, 3.43e25, 11.0e12),
    (1e12, 1.27e26, 21.2e12),
    (10e12, 1.30e28, 216.2e12),
)


def _golden_minimum(f, lo: float, hi: float, iterations: int = 200) -> float:
    """The x in [lo, hi] minimising a unimodal f (golden-section search)."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return (a + b) / 2


def numeric_optimum(law: ParametricLaw, flops: float) -> tuple[float, float]:
    """(N, D) minimising L(N, C/(6N)) by search over log N: the check of the closed form."""
    log_n = _golden_minimum(lambda x: law.loss(math.exp(x), tokens_for_budget(flops, math.exp(x))), 0.0, 80.0)
    n = math.exp(log_n)
    return n, tokens_for_budget(flops, n)


@dataclass(frozen=True)
class InferenceAware:
    """Sardana et al.'s optimum for a loss and D_inf served tokens, beside the compute-optimal model."""

    loss: float
    inference_tokens: float
    params: float
    tokens: float
    training_flops: float  # 6·N·D_tr
    inference_flops: float  # 2·N·D_inf
    optimal_params: float  # the compute-optimal model of the same loss
    optimal_tokens: float

    @property
    def total_flops(self) -> float:
        return self.training_flops + self.inference_flops

    @property
    def optimal_training_flops(self) -> float:
        return compute_flops(self.optimal_params, self.optimal_tokens)

    @property
    def optimal_inference_flops(self) -> float:
        return inference_flops(self.optimal_params, self.inference_tokens)

    @property
    def optimal_total_flops(self) -> float:
        return self.optimal_training_flops + self.optimal_inference_flops


def inference_aware(law: ParametricLaw, flops: float, inference_tokens: float) -> InferenceAware:
    """Sardana et al. 2023 (Eq. 3): the loss of the compute-optimal model for `flops`, reached
    with the fewest lifetime FLOPs 6·N·D_tr + 2·N·D_inf. Searched over log N between the
    smallest N that can reach the loss and N_opt (serving only makes a smaller model pay)."""
    n_opt, d_opt = law.optimal_params(flops), law.optimal_tokens(flops)
    target = law.loss(n_opt, d_opt)
    n_min = (law.A / (target - law.E)) ** (1 / law.alpha)  # A/N^α = ℓ − E: infinite tokens

    def lifetime(log_n: float) -> float:
        n = math.exp(log_n)
        d = law.tokens_for_loss(n, target)
        return math.inf if d is None else compute_flops(n, d) + inference_flops(n, inference_tokens)

    n = math.exp(_golden_minimum(lifetime, math.log(n_min) + 1e-9, math.log(n_opt)))
    d = law.tokens_for_loss(n, target)
    return InferenceAware(
        target,
        inference_tokens,
        n,
        d,
        compute_flops(n, d),
        inference_flops(n, inference_tokens),
        n_opt,
        d_opt,
    )
