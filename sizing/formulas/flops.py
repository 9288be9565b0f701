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
(forward FLOPs per token, in the symbols of sizing.formulas.params plus T and W) and its function;
tests/test_formula_strings.py evaluates each formula against its function. The functions live in
flops_linear.py (weight matmuls) and flops_attention.py (QK^T, AV); FLOP_TERMS calls them through
this module's names, so a test's monkeypatch of one reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from sizing.formulas.flops_attention import (  # noqa: F401  (re-exported: sizing.formulas.flops is their public home)
    attended_pairs,
    attention_matmul_flops,
    attention_scores_flops,
    attention_values_flops,
    index_scores_flops,
    layer_pairs,
)
from sizing.formulas.flops_linear import (  # noqa: F401
    MATMUL_FLOPS_PER_MAC,
    _linear_flops,
    active_expert_flops,
    dsa_indexer_flops,
    k_proj_flops,
    lm_head_flops,
    mla_kv_a_flops,
    mla_kv_b_flops,
    mla_q_a_flops,
    mla_q_b_flops,
    mlp_matrix_flops,
    o_proj_flops,
    q_proj_flops,
    router_flops,
    shared_expert_flops,
    shared_expert_gate_flops,
    v_proj_flops,
)
from sizing.formulas.params import layer_symbol
from sizing.inputs import ModelConfig, as_config
from sizing.validate import MAX_SEQ_LEN, require_choice, require_int
from sizing.vocabulary import ATTENTION_CONVENTIONS, RECOMPUTE_MODES

# Components that a selective recompute re-runs (Korthikanti et al. 2022, section 4.2).
SELECTIVE_RECOMPUTE_KEYS = ("attn.scores", "attn.av")
# Components that grow with the keys a query meets (T^2 per sequence), priced apart in decoding.
KEY_SCALED_KEYS = (*SELECTIVE_RECOMPUTE_KEYS, "attn.index_scores")
BACKWARD_PER_FORWARD = 2  # dL/dinput and dL/dweight products, each the size of the forward one
TRAINING_PER_FORWARD = 1 + BACKWARD_PER_FORWARD  # forward + backward, no recomputation
# Kaplan et al. 2020's 6 per parameter per training token: 2 forward + 4 backward.
KAPLAN_FLOPS_PER_PARAM = MATMUL_FLOPS_PER_MAC * TRAINING_PER_FORWARD


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
    # backward products per forward one: 2 (input and weight gradients); 0 for a part that the LM loss
    # does not train (DeepSeek-V3.2's indexer learns from its own KL loss, its input detached)
    backward_per_forward: int = BACKWARD_PER_FORWARD

    def formula_text(self, cfg: ModelConfig, attention: str) -> str:
        return self.formula if isinstance(self.formula, str) else self.formula(cfg, attention)


def _keys_per_query(cfg: ModelConfig, attention: str) -> str:
    """Keys per query summed over layers, as the formula text writes it (pairs(T,W) and
    chunks(T,C): attended_pairs; L_local / L_global: the local and global layer counts)."""
    if attention == "full":
        return "L·T"
    if cfg.has_indexer:
        return "L·pairs(T,k_I)/T"
    if cfg.local_window is None:
        return "L·(T+1)/2"
    local = "pairs(T,W)/T" if cfg.sliding_window is not None else "chunks(T,C)/T"
    if cfg.n_global_layers == 0:
        return f"L·{local}"
    return f"(L_local·{local} + L_global·(T+1)/2)"


def _attention_formula(width: Callable[[ModelConfig], str]) -> Formula:
    def text(cfg: ModelConfig, attention: str) -> str:
        keys = _keys_per_query(cfg, attention)
        if keys.startswith("L·"):  # the same cap in every layer: 2·L·h·d_h·T as before
            return f"2·L·h·{width(cfg)}·{keys[2:]}"
        return f"2·h·{width(cfg)}·{keys}"

    return text


def _layers(kind: str, text: str) -> Formula:
    """A formula over the MoE or dense layers: written with L when those are all the layers."""
    return lambda cfg, att: text.replace("L_x", layer_symbol(cfg, kind))


def _qk_width(cfg: ModelConfig) -> str:
    return "(d_n + d_r)" if cfg.is_mla else "d_h"


def _v_width(cfg: ModelConfig) -> str:
    return "d_v" if cfg.is_mla else "d_h"


def _mla(cfg: ModelConfig) -> bool:
    return cfg.is_mla


def _mla_q(cfg: ModelConfig) -> bool:
    return cfg.is_mla and cfg.q_lora_rank is not None


# The functions are called through their module names (lambdas), so that a test that plants a
# wrong formula with monkeypatch (tests/test_flop_verify.py) reaches the declarations too.
FLOP_TERMS: tuple[FlopTerm, ...] = (
    FlopTerm(
        "attn.q",
        lambda cfg, att: "2·L·d·h·(d_n + d_r)" if cfg.is_mla else "2·L·d·h·d_h",
        lambda cfg, T, att: q_proj_flops(cfg, T),
        present=lambda cfg: not _mla_q(cfg),
    ),
    FlopTerm("attn.q_a", "2·L·d·r_q", lambda cfg, T, att: mla_q_a_flops(cfg, T), present=_mla_q),
    FlopTerm("attn.q_b", "2·L·r_q·h·(d_n + d_r)", lambda cfg, T, att: mla_q_b_flops(cfg, T), present=_mla_q),
    FlopTerm("attn.k", "2·L·d·h_kv·d_h", lambda cfg, T, att: k_proj_flops(cfg, T), present=lambda cfg: not cfg.is_mla),
    FlopTerm("attn.v", "2·L·d·h_kv·d_h", lambda cfg, T, att: v_proj_flops(cfg, T), present=lambda cfg: not cfg.is_mla),
    FlopTerm("attn.kv_a", "2·L·d·(r_kv + d_r)", lambda cfg, T, att: mla_kv_a_flops(cfg, T), present=_mla),
    FlopTerm("attn.kv_b", "2·L·r_kv·h·(d_n + d_v)", lambda cfg, T, att: mla_kv_b_flops(cfg, T), present=_mla),
    FlopTerm(
        "attn.indexer",
        "2·L·(r_q·H_I·d_I + d·d_I + d·H_I)",
        lambda cfg, T, att: dsa_indexer_flops(cfg, T),
        present=lambda cfg: cfg.has_indexer,
        backward_per_forward=0,
    ),
    FlopTerm(
        "attn.index_scores",
        lambda cfg, att: "2·L·H_I·(d_I + 1)·" + ("T" if att == "full" else "(T+1)/2"),
        lambda cfg, T, att: index_scores_flops(cfg, T, att),
        present=lambda cfg: cfg.has_indexer,
        backward_per_forward=0,
    ),
    FlopTerm(
        "attn.scores",
        _attention_formula(_qk_width),
        lambda cfg, T, att: attention_scores_flops(cfg, T, att),
    ),
    FlopTerm(
        "attn.av",
        _attention_formula(_v_width),
        lambda cfg, T, att: attention_values_flops(cfg, T, att),
    ),
    FlopTerm(
        "attn.o",
        lambda cfg, att: "2·L·h·d_v·d" if cfg.is_mla else "2·L·h·d_h·d",
        lambda cfg, T, att: o_proj_flops(cfg, T),
    ),
    FlopTerm(
        "moe.router",
        _layers("moe", "2·L_x·d·E"),
        lambda cfg, T, att: router_flops(cfg, T),
        present=lambda cfg: cfg.is_moe,
    ),
    FlopTerm(
        "moe.experts",
        lambda cfg, att: f"2·{layer_symbol(cfg, 'moe')}·k·{cfg.mlp_matrices}·d·f_e",
        lambda cfg, T, att: active_expert_flops(cfg, T),
        present=lambda cfg: cfg.is_moe,
    ),
    FlopTerm(
        "moe.shared",
        lambda cfg, att: f"2·{layer_symbol(cfg, 'moe')}·{cfg.mlp_matrices}·d·E_s·f_s",
        lambda cfg, T, att: shared_expert_flops(cfg, T),
        present=lambda cfg: cfg.n_shared_experts > 0,
    ),
    FlopTerm(
        "moe.shared_gate",
        _layers("moe", "2·L_x·d"),
        lambda cfg, T, att: shared_expert_gate_flops(cfg, T),
        present=lambda cfg: cfg.shared_expert_gate,
    ),
    FlopTerm(
        "mlp.up",
        _layers("dense", "2·L_x·d·f"),
        lambda cfg, T, att: mlp_matrix_flops(cfg, T),
        present=lambda c: c.n_dense_layers > 0,
    ),
    FlopTerm(
        "mlp.gate",
        _layers("dense", "2·L_x·d·f"),
        lambda cfg, T, att: mlp_matrix_flops(cfg, T),
        present=lambda cfg: cfg.n_dense_layers > 0 and cfg.gated_mlp,
    ),
    FlopTerm(
        "mlp.down",
        _layers("dense", "2·L_x·f·d"),
        lambda cfg, T, att: mlp_matrix_flops(cfg, T),
        present=lambda c: c.n_dense_layers > 0,
    ),
    FlopTerm("lm_head", "2·d·V", lambda cfg, T, att: lm_head_flops(cfg, T), in_blocks=False),
)


def per_token(total: int, seq_len: int) -> int | float:
    """Exact integer when T divides it (always, except causal with a sliding window)."""
    whole, rest = divmod(total, seq_len)
    return whole if rest == 0 else total / seq_len  # int / int is correctly rounded, as float(Fraction) is


@dataclass(frozen=True)
class FlopComponent:
    """One component's forward FLOPs at one T, per sequence and per token."""

    key: str
    formula: str  # forward FLOPs per token (= forward_per_token)
    forward_per_sequence: int  # one sequence of seq_len tokens, exact
    forward_per_token: int | float  # forward_per_sequence / T: an int unless causal with a window
    in_blocks: bool  # re-run by full recomputation
    backward_per_forward: int = BACKWARD_PER_FORWARD  # 0: not trained by the LM loss (DSA's indexer)

    @property
    def forward(self) -> int:
        """forward_per_sequence, by its older name (reference_model.verify.flops still reads it)."""
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
                    term.key,
                    term.formula_text(cfg, attention),
                    forward,
                    per_token(forward, seq_len),
                    term.in_blocks,
                    term.backward_per_forward,
                )
            )
    return rows


def forward_flops(cfg: ModelConfig, seq_len: int, attention: str = "full") -> int:
    """Forward matmul FLOPs of one sequence: the sum of flop_components' forward, without their
    formula text or per-token values (FlopBreakdown.forward; sweeps call it for thousands of configs)."""
    return sum(term.flops(cfg, seq_len, attention) for term in FLOP_TERMS if term.present(cfg))


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
        """2 x the forward of every component the LM loss trains (DSA's indexer learns apart)."""
        return sum(c.backward_per_forward * c.forward_per_sequence for c in self.components)

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
    cfg = as_config(cfg)  # a Preset or a preset name too
    require_choice("recompute", recompute, RECOMPUTE_MODES)
    require_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    return FlopBreakdown(seq_len, attention, recompute, tuple(flop_components(cfg, seq_len, attention)))


def decode_keys(cfg: ModelConfig, context: int) -> int:
    """Keys the newest query meets, summed over layers, with `context` positions cached (the new
    one included): C in a global layer, min(C, W) in a sliding one, and in a chunked one the
    positions of the current chunk so far, (C - 1) mod chunk + 1."""
    local = context
    if cfg.has_indexer:  # DSA: the top-k keys the indexer picks
        return cfg.n_layers * min(context, cfg.index_topk)
    if cfg.sliding_window is not None:
        local = min(context, cfg.sliding_window)
    elif cfg.attention_chunk is not None:
        local = (context - 1) % cfg.attention_chunk + 1
    return cfg.n_local_layers * local + cfg.n_global_layers * context


def _weight_flops_per_token(cfg: ModelConfig) -> int:
    """Every weight matmul of one token: the components at T = 1 less QK^T and AV (from the
    FLOP_TERMS functions, without their formula text: a serving search calls it thousands of times)."""
    return sum(
        term.flops(cfg, 1, "full") for term in FLOP_TERMS if term.present(cfg) and term.key not in KEY_SCALED_KEYS
    )


def index_decode_flops_per_token(cfg: ModelConfig, context: int) -> int:
    """DSA: the new query's indexer scores over all `context` cached index keys (0 without DSA)."""
    if not cfg.has_indexer:
        return 0
    return attention_matmul_flops(cfg.n_layers, cfg.index_heads, cfg.index_head_dim + 1, pairs=context)


def decode_flops_per_token(cfg: ModelConfig, context: int) -> int:
    """Forward FLOPs to generate one token with a KV cache holding `context` positions
    (the new one included): every weight matmul once, plus QK^T and AV of one query over the
    keys each layer keeps (decode_keys; under DSA the top k_I, after the indexer scores all C).
    Equal to the `full` per-token forward at T = C when there is no window. Under MLA this is the
    naive form (decode_flops_by_form)."""
    keys = decode_keys(cfg, context)
    scores = attention_matmul_flops(1, cfg.n_heads, cfg.qk_head_width, pairs=keys)  # one query
    values = attention_matmul_flops(1, cfg.n_heads, cfg.v_head_width, pairs=keys)
    return _weight_flops_per_token(cfg) + index_decode_flops_per_token(cfg, context) + scores + values


def mla_absorbed_decode_flops_per_token(cfg: ModelConfig, context: int) -> int:
    """MLA decode with the up-projections absorbed (DeepSeek-V2 section 2.1.2): the cache holds
    the latent c_kv and the rope key; W_UK folds into the query (q_nope -> r_kv per head,
    2·h·d_n·r_kv) and W_UV into the output (2·h·r_kv·d_v), so kv_b never runs on the cache.
    Scores then cost 2·h·(r_kv + d_r) per key and AV 2·h·r_kv per key: more FLOPs per key
    than the naive form, but a cache of r_kv + d_r numbers per token instead of h·(d_n + d_r + d_v)."""
    L, h, r_kv = cfg.n_layers, cfg.n_heads, cfg.kv_lora_rank
    keys = decode_keys(cfg, context)
    weights = _weight_flops_per_token(cfg) - mla_kv_b_flops(cfg, 1)  # kv_b is absorbed ...
    absorbed = MATMUL_FLOPS_PER_MAC * L * h * r_kv * (cfg.qk_nope_head_dim + cfg.v_head_dim)  # ... into q and o
    scores = attention_matmul_flops(1, h, r_kv + cfg.qk_rope_head_dim, pairs=keys)
    values = attention_matmul_flops(1, h, r_kv, pairs=keys)
    return weights + absorbed + index_decode_flops_per_token(cfg, context) + scores + values


def decode_flops_by_form(cfg: ModelConfig, context: int) -> dict[str, int]:
    """{"naive": ..., "absorbed": ...} under MLA (naive: K and V up-projected and cached per head,
    as transformers' DeepseekV3 runs it); {"naive": ...} otherwise."""
    out = {"naive": decode_flops_per_token(cfg, context)}
    if cfg.is_mla:
        out["absorbed"] = mla_absorbed_decode_flops_per_token(cfg, context)
    return out


def kaplan_6n_per_token(n_params: int) -> int:
    """Kaplan et al. 2020's C ~ 6N per training token (2N forward + 4N backward), the
    approximation: it ignores attention scores and counts lookups as matmuls. Every 6N of
    the tool (estimate, reports, the published-convention table) is this function."""
    return KAPLAN_FLOPS_PER_PARAM * n_params
