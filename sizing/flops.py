"""FLOPs of the matrix products, one declaration per component.

Conventions (docs/conventions.md):
- 2 FLOPs per multiply-add: x[1 x m] @ W[m x n] costs 2mn.
- Matmuls only: norms, softmax, activations, residual adds, RoPE and the embedding lookup
  count 0. The output projection (lm_head) counts, tied or not.
- Attention `full`: every query meets every key, T keys per query (what FlopCounterMode,
  PaLM's MFU and nanoGPT count for a dense masked matmul). `causal`: query i meets
  min(i, W) keys, T(T+1)/2 pairs per sequence without a window (what a causal kernel needs).
- Backward = 2 x forward (one product for the input gradient, one for the weight gradient;
  QK^T and AV likewise need two products each).
- Recompute `full` re-runs the forward of the transformer blocks (not the lm_head, which is
  not checkpointed); `selective` (Korthikanti et al. 2022) re-runs QK^T and AV only.

Each component function returns forward FLOPs for one sequence of T tokens, summed over
layers: an exact integer. FLOP_TERMS declares every component once: its key, its formula
(forward FLOPs per token, in the symbols of sizing.params plus T and W) and its function;
tests/test_formula_strings.py evaluates each formula against its function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from .config import ModelConfig
from .validate import MAX_SEQ_LEN, require_choice, require_int
from .vocabulary import ATTENTION_CONVENTIONS, RECOMPUTE_MODES

# Components that a selective recompute re-runs (Korthikanti et al. 2022, section 4.2).
SELECTIVE_RECOMPUTE_KEYS = ("attn.scores", "attn.av")
MATMUL_FLOPS_PER_MAC = 2  # one multiply + one add
BACKWARD_PER_FORWARD = 2  # dL/dinput and dL/dweight products, each the size of the forward one
TRAINING_PER_FORWARD = 1 + BACKWARD_PER_FORWARD  # forward + backward, no recomputation
# Kaplan et al. 2020's 6 per parameter per training token: 2 forward + 4 backward.
KAPLAN_FLOPS_PER_PARAM = MATMUL_FLOPS_PER_MAC * TRAINING_PER_FORWARD


def attended_pairs(seq_len: int, attention: str, window: int | None = None) -> int:
    """Query-key pairs scored in one sequence of T tokens (per head, per layer)."""
    T = seq_len
    if attention == "full":
        return T * T
    if window is None or window >= T:
        return T * (T + 1) // 2  # query i (1-based) sees keys 1..i
    W = window
    return W * (W + 1) // 2 + (T - W) * W  # the first W queries ramp up, the rest see W keys


def _linear_flops(cfg: ModelConfig, seq_len: int, in_features: int, out_features: int) -> int:
    return MATMUL_FLOPS_PER_MAC * in_features * out_features * seq_len * cfg.n_layers


def q_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.q_width)


def k_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.kv_width)


def v_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.kv_width)


def o_proj_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.q_width, cfg.d_model)


def attention_matmul_flops(n_layers: int, n_heads: int, d_head: int, pairs: int) -> int:
    """One attention product, QK^T or AV, over `pairs` query-key pairs per head, all layers:
    a d_h-long dot product (QK^T) or a d_h-wide row update (AV) per pair per query head.
    The one attention formula: training, decoding and PaLM's 12·L·H·Q·T all call it."""
    return MATMUL_FLOPS_PER_MAC * n_layers * n_heads * d_head * pairs


def attention_scores_flops(cfg: ModelConfig, seq_len: int, attention: str) -> int:
    """QK^T over one sequence. Query heads set the cost; GQA shares K between heads but each
    head still scores its own pairs."""
    pairs = attended_pairs(seq_len, attention, cfg.sliding_window if attention == "causal" else None)
    return attention_matmul_flops(cfg.n_layers, cfg.n_heads, cfg.d_head, pairs)


def attention_values_flops(cfg: ModelConfig, seq_len: int, attention: str) -> int:
    """A @ V: each pair's weight scales a d_h-wide value row: same size as QK^T."""
    return attention_scores_flops(cfg, seq_len, attention)


def mlp_matrix_flops(cfg: ModelConfig, seq_len: int) -> int:
    """One dense d x f (or f x d) MLP matrix."""
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.d_ff)


def router_flops(cfg: ModelConfig, seq_len: int) -> int:
    return _linear_flops(cfg, seq_len, cfg.d_model, cfg.n_experts)


def active_expert_flops(cfg: ModelConfig, seq_len: int) -> int:
    """top_k experts per token, each with the MLP's matrices at the expert width."""
    return cfg.top_k * cfg.mlp_matrices * _linear_flops(cfg, seq_len, cfg.d_model, cfg.expert_ff)


def lm_head_flops(cfg: ModelConfig, seq_len: int) -> int:
    return MATMUL_FLOPS_PER_MAC * cfg.d_model * cfg.padded_vocab * seq_len  # once, after the blocks


# ---- the declarations: key, formula (forward per token), function (forward per sequence)
Formula = str | Callable[[ModelConfig, str], str]  # text, or text built from (cfg, attention)
FlopFunction = Callable[[ModelConfig, int, str], int]  # (cfg, seq_len, attention) -> FLOPs


def _always(cfg: ModelConfig) -> bool:
    return True


@dataclass(frozen=True)
class FlopTerm:
    """One component, declared once."""

    key: str
    formula: Formula  # forward FLOPs per token
    flops: FlopFunction  # forward FLOPs for one sequence, summed over layers
    in_blocks: bool = True  # re-run by full recomputation
    present: Callable[[ModelConfig], bool] = _always

    def formula_text(self, cfg: ModelConfig, attention: str) -> str:
        return self.formula if isinstance(self.formula, str) else self.formula(cfg, attention)


def _keys_per_query(cfg: ModelConfig, attention: str) -> str:
    """Mean keys per query, as the formula text writes it (pairs(T,W): attended_pairs)."""
    if attention == "full":
        return "T"
    return "(T+1)/2" if cfg.sliding_window is None else "pairs(T,W)/T"


# The functions are called through their module names (lambdas), so that a test that plants a
# wrong formula with monkeypatch (tests/test_flop_verify.py) reaches the declarations too.
FLOP_TERMS: tuple[FlopTerm, ...] = (
    FlopTerm("attn.q", "2·L·d·h·d_h", lambda cfg, T, att: q_proj_flops(cfg, T)),
    FlopTerm("attn.k", "2·L·d·h_kv·d_h", lambda cfg, T, att: k_proj_flops(cfg, T)),
    FlopTerm("attn.v", "2·L·d·h_kv·d_h", lambda cfg, T, att: v_proj_flops(cfg, T)),
    FlopTerm(
        "attn.scores",
        lambda cfg, att: f"2·L·h·d_h·{_keys_per_query(cfg, att)}",
        lambda cfg, T, att: attention_scores_flops(cfg, T, att),
    ),
    FlopTerm(
        "attn.av",
        lambda cfg, att: f"2·L·h·d_h·{_keys_per_query(cfg, att)}",
        lambda cfg, T, att: attention_values_flops(cfg, T, att),
    ),
    FlopTerm("attn.o", "2·L·h·d_h·d", lambda cfg, T, att: o_proj_flops(cfg, T)),
    FlopTerm("moe.router", "2·L·d·E", lambda cfg, T, att: router_flops(cfg, T), present=lambda cfg: cfg.is_moe),
    FlopTerm(
        "moe.experts",
        lambda cfg, att: f"2·L·k·{cfg.mlp_matrices}·d·f_e",
        lambda cfg, T, att: active_expert_flops(cfg, T),
        present=lambda cfg: cfg.is_moe,
    ),
    FlopTerm("mlp.up", "2·L·d·f", lambda cfg, T, att: mlp_matrix_flops(cfg, T), present=lambda cfg: not cfg.is_moe),
    FlopTerm(
        "mlp.gate",
        "2·L·d·f",
        lambda cfg, T, att: mlp_matrix_flops(cfg, T),
        present=lambda cfg: not cfg.is_moe and cfg.gated_mlp,
    ),
    FlopTerm("mlp.down", "2·L·f·d", lambda cfg, T, att: mlp_matrix_flops(cfg, T), present=lambda cfg: not cfg.is_moe),
    FlopTerm("lm_head", "2·d·V", lambda cfg, T, att: lm_head_flops(cfg, T), in_blocks=False),
)


def per_token(total: int, seq_len: int) -> int | float:
    """Exact integer when T divides it (always, except causal with a sliding window)."""
    value = Fraction(total, seq_len)
    return int(value) if value.denominator == 1 else float(value)


@dataclass(frozen=True)
class FlopComponent:
    """One component's forward FLOPs at one T, per sequence and per token."""

    key: str
    formula: str  # forward FLOPs per token (= forward_per_token)
    forward_per_sequence: int  # one sequence of seq_len tokens, exact
    forward_per_token: int | float  # forward_per_sequence / T: an int unless causal with a window
    in_blocks: bool  # re-run by full recomputation

    @property
    def forward(self) -> int:
        """forward_per_sequence, by its older name (reference_model.flop_verify still reads it)."""
        return self.forward_per_sequence


def flop_components(cfg: ModelConfig, seq_len: int, attention: str = "full") -> list[FlopComponent]:
    """Forward matmul FLOPs of one sequence by component (components the model lacks left out)."""
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    rows = []
    for term in FLOP_TERMS:
        if term.present(cfg):
            forward = term.flops(cfg, seq_len, attention)
            rows.append(
                FlopComponent(
                    term.key, term.formula_text(cfg, attention), forward, per_token(forward, seq_len), term.in_blocks
                )
            )
    return rows


@dataclass(frozen=True)
class FlopBreakdown:
    """Matmul FLOPs of one sequence of `seq_len` tokens; per-token values divide by T."""

    seq_len: int
    attention: str
    recompute: str
    components: tuple[FlopComponent, ...]

    @cached_property  # read by every total below; the components never change (frozen)
    def forward(self) -> int:
        return sum(c.forward_per_sequence for c in self.components)

    @property
    def backward(self) -> int:
        return BACKWARD_PER_FORWARD * self.forward

    @property
    def model_training(self) -> int:
        """Forward + backward: the model FLOPs of PaLM's MFU (recomputation left out)."""
        return self.forward + self.backward

    @property
    def recompute_flops(self) -> int:
        if self.recompute == "full":
            return sum(c.forward_per_sequence for c in self.components if c.in_blocks)
        if self.recompute == "selective":
            return sum(c.forward_per_sequence for c in self.components if c.key in SELECTIVE_RECOMPUTE_KEYS)
        return 0

    @property
    def training(self) -> int:
        """What the GPUs execute: model FLOPs + recomputation (hardware FLOPs)."""
        return self.model_training + self.recompute_flops

    def per_token(self, total: int) -> int | float:
        return per_token(total, self.seq_len)


def flop_breakdown(cfg: ModelConfig, seq_len: int, attention: str = "full", recompute: str = "none") -> FlopBreakdown:
    require_choice("recompute", recompute, RECOMPUTE_MODES)
    require_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    return FlopBreakdown(seq_len, attention, recompute, tuple(flop_components(cfg, seq_len, attention)))


def decode_flops_per_token(cfg: ModelConfig, context: int) -> int:
    """Forward FLOPs to generate one token with a KV cache holding `context` positions
    (the new one included): every weight matmul once, plus QK^T and AV of one query over
    min(C, W) keys. Equal to the `full` per-token forward at T = C when there is no window."""
    keys = context if cfg.sliding_window is None else min(context, cfg.sliding_window)
    weights = sum(c.forward_per_token for c in flop_components(cfg, 1) if c.key not in SELECTIVE_RECOMPUTE_KEYS)
    scores = values = attention_matmul_flops(cfg.n_layers, cfg.n_heads, cfg.d_head, pairs=keys)  # one query
    return weights + scores + values


def kaplan_6n_per_token(n_params: int) -> int:
    """Kaplan et al. 2020's C ~ 6N per training token (2N forward + 4N backward), the
    approximation: it ignores attention scores and counts lookups as matmuls. Every 6N of
    the tool (estimate, reports, the published-convention table) is this function."""
    return KAPLAN_FLOPS_PER_PARAM * n_params
