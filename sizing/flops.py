"""FLOPs of the matrix products, one function per component.

Conventions (README, "Conventions"):
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
layers: an exact integer. Per-token figures divide by T.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .config import ModelConfig

ATTENTION_CONVENTIONS = ("full", "causal")
RECOMPUTE_MODES = ("none", "selective", "full")
# Components that a selective recompute re-runs (Korthikanti et al. 2022, section 4.2).
SELECTIVE_RECOMPUTE_KEYS = ("attn.scores", "attn.av")
MATMUL_FLOPS_PER_MAC = 2  # one multiply + one add
BACKWARD_PER_FORWARD = 2  # dL/dinput and dL/dweight products, each the size of the forward one


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


def attention_scores_flops(cfg: ModelConfig, seq_len: int, attention: str) -> int:
    """QK^T: a d_h-long dot product per query-key pair per query head. Query heads set the
    cost; GQA shares K between heads but each head still scores its own pairs."""
    pairs = attended_pairs(seq_len, attention, cfg.sliding_window if attention == "causal" else None)
    return MATMUL_FLOPS_PER_MAC * cfg.n_heads * cfg.d_head * pairs * cfg.n_layers


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


@dataclass(frozen=True)
class FlopComponent:
    key: str
    formula: str  # forward FLOPs per token
    forward: int  # forward FLOPs for one sequence of seq_len tokens
    in_blocks: bool  # re-run by full recomputation


def flop_components(cfg: ModelConfig, seq_len: int, attention: str = "full") -> list[FlopComponent]:
    """Forward matmul FLOPs of one sequence by component (zero-sized ones left out)."""
    _check_attention(attention)
    T = seq_len
    keys = "T" if attention == "full" else ("(T+1)/2" if cfg.sliding_window is None else "pairs(T,W)/T")
    rows = [
        FlopComponent("attn.q", "2·L·d·h·d_h", q_proj_flops(cfg, T), True),
        FlopComponent("attn.k", "2·L·d·h_kv·d_h", k_proj_flops(cfg, T), True),
        FlopComponent("attn.v", "2·L·d·h_kv·d_h", v_proj_flops(cfg, T), True),
        FlopComponent("attn.scores", f"2·L·h·d_h·{keys}", attention_scores_flops(cfg, T, attention), True),
        FlopComponent("attn.av", f"2·L·h·d_h·{keys}", attention_values_flops(cfg, T, attention), True),
        FlopComponent("attn.o", "2·L·h·d_h·d", o_proj_flops(cfg, T), True),
    ]
    if cfg.is_moe:
        rows += [
            FlopComponent("moe.router", "2·L·d·E", router_flops(cfg, T), True),
            FlopComponent("moe.experts", f"2·L·k·{cfg.mlp_matrices}·d·f_e", active_expert_flops(cfg, T), True),
        ]
    else:
        rows += [FlopComponent("mlp.up", "2·L·d·f", mlp_matrix_flops(cfg, T), True)]
        if cfg.gated_mlp:
            rows += [FlopComponent("mlp.gate", "2·L·d·f", mlp_matrix_flops(cfg, T), True)]
        rows += [FlopComponent("mlp.down", "2·L·f·d", mlp_matrix_flops(cfg, T), True)]
    rows.append(FlopComponent("lm_head", "2·d·V", lm_head_flops(cfg, T), False))
    return rows


def per_token(total: int, seq_len: int) -> int | float:
    """Exact integer when T divides it (always, except causal with a sliding window)."""
    value = Fraction(total, seq_len)
    return int(value) if value.denominator == 1 else float(value)


@dataclass(frozen=True)
class FlopBreakdown:
    """Matmul FLOPs of one sequence of `seq_len` tokens; per-token values divide by T."""

    seq_len: int
    attention: str
    recompute: str
    components: tuple[FlopComponent, ...]

    @property
    def forward(self) -> int:
        return sum(c.forward for c in self.components)

    @property
    def backward(self) -> int:
        return BACKWARD_PER_FORWARD * self.forward

    @property
    def recompute_flops(self) -> int:
        if self.recompute == "full":
            return sum(c.forward for c in self.components if c.in_blocks)
        if self.recompute == "selective":
            return sum(c.forward for c in self.components if c.key in SELECTIVE_RECOMPUTE_KEYS)
        return 0

    @property
    def training(self) -> int:
        return self.forward + self.backward + self.recompute_flops

    def per_token(self, total: int) -> int | float:
        return per_token(total, self.seq_len)


def flop_breakdown(cfg: ModelConfig, seq_len: int, attention: str = "full", recompute: str = "none") -> FlopBreakdown:
    if recompute not in RECOMPUTE_MODES:
        raise ValueError(f"recompute ({recompute!r}) must be one of: {', '.join(RECOMPUTE_MODES)}")
    if not isinstance(seq_len, int) or seq_len <= 0:
        raise ValueError(f"seq_len ({seq_len!r}) must be a positive integer")
    return FlopBreakdown(seq_len, attention, recompute, tuple(flop_components(cfg, seq_len, attention)))


def decode_flops_per_token(cfg: ModelConfig, context: int) -> int:
    """Forward FLOPs to generate one token with a KV cache holding `context` positions
    (the new one included): every weight matmul once, plus QK^T and AV over min(C, W) keys.
    Equal to the `full` per-token forward at T = C when there is no window."""
    keys = context if cfg.sliding_window is None else min(context, cfg.sliding_window)
    linear = sum(c.forward for c in flop_components(cfg, 1) if c.key not in SELECTIVE_RECOMPUTE_KEYS)
    return linear + 2 * MATMUL_FLOPS_PER_MAC * cfg.n_layers * cfg.n_heads * cfg.d_head * keys


def kaplan_6n_per_token(n_params: int) -> int:
    """Kaplan et al. 2020's C ~ 6N per training token (2N forward + 4N backward), the
    approximation: it ignores attention scores and counts lookups as matmuls."""
    return 6 * n_params


def _check_attention(attention: str) -> None:
    if attention not in ATTENTION_CONVENTIONS:
        raise ValueError(f"attention ({attention!r}) must be one of: {', '.join(ATTENTION_CONVENTIONS)}")
