"""Every formula string that `sizing estimate` and the reports print is evaluated against the
function it names, on random configs: a formula text that drifts from its code fails here.

The text is parsed by a small evaluator of its own (numbers, the symbols of sizing.formulas.params and
sizing.formulas.flops, + - · * / and parentheses, and pairs(T,W)); nothing is passed to eval().
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import configs, modern_configs

from sizing.formulas.flops import FLOP_TERMS, flop_breakdown, flop_components
from sizing.formulas.params import PARAM_TERMS, param_components
from sizing.inputs.config import ModelConfig
from sizing.inputs.presets import PRESETS
from sizing.vocabulary import ATTENTION_CONVENTIONS

# ---- the evaluator ----
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z][A-Za-z0-9_]*)|([-+·*/(),]))")
# A formula may end in a note in words, "V (bias; weight tied to tok_emb)": text, not arithmetic.
_NOTE = re.compile(r"\s+\([^()]*[A-Za-z]{3,}[^()]*\)$")


def _pairs(T: Fraction, W: Fraction) -> Fraction:
    """Query-key pairs of a causal sequence of T with a window of W keys: the first W queries
    ramp up (1..W keys), the rest see W. Written here from the definition, not imported."""
    W = min(W, T)
    return W * (W + 1) / 2 + (T - W) * W


def _chunks(T: Fraction, C: Fraction) -> Fraction:
    """Causal pairs with chunked attention: each whole chunk of C is causal within itself, and so
    is the partial chunk at the end. Written here from the definition, not imported."""
    C = min(C, T)
    whole, rest = T // C, T - (T // C) * C
    return whole * C * (C + 1) / 2 + rest * (rest + 1) / 2


FUNCTIONS = {"pairs": _pairs, "chunks": _chunks}


def symbols(cfg: ModelConfig, seq_len: int | None = None) -> dict[str, Fraction]:
    """The meaning of every symbol the formulas use (sizing.formulas.params' docstring)."""
    values = {
        "V": cfg.padded_vocab,
        "d": cfg.d_model,
        "L": cfg.n_layers,
        "h": cfg.n_heads,
        "h_kv": cfg.kv_heads,
        "d_h": cfg.d_head,
        "f": cfg.d_ff,
        "f_e": cfg.expert_ff,
        "E": cfg.n_experts,
        "k": cfg.top_k,
        "P": cfg.max_positions,
        "L_moe": cfg.n_moe_layers,
        "L_dense": cfg.n_dense_layers,
        "E_s": cfg.n_shared_experts,
        "f_s": cfg.shared_ff,
        "L_local": cfg.n_local_layers,
        "L_global": cfg.n_global_layers,
    }
    if cfg.attention_chunk is not None:
        values["C"] = cfg.attention_chunk
    if cfg.is_mla:
        values |= {"d_n": cfg.qk_nope_head_dim, "d_r": cfg.qk_rope_head_dim, "d_v": cfg.v_head_dim}
        values |= {"r_kv": cfg.kv_lora_rank, "r_q": cfg.q_lora_rank or 0}
    if cfg.has_indexer:  # DeepSeek-V3.2's sparse attention
        values |= {"H_I": cfg.index_heads, "d_I": cfg.index_head_dim, "k_I": cfg.index_topk}
    if seq_len is not None:
        values["T"] = seq_len
    if cfg.sliding_window is not None:
        values["W"] = cfg.sliding_window
    return {name: Fraction(value) for name, value in values.items()}


def evaluate(text: str, env: dict[str, Fraction]) -> Fraction:
    """The value of a formula text; ValueError for anything that is not one."""
    tokens = _tokenize(_NOTE.sub("", text))
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take(expected=None):
        nonlocal position
        token = peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"{text!r}: expected {expected or 'more'} at token {position}, got {token!r}")
        position += 1
        return token

    def expression():
        value = term()
        while peek() in ("+", "-"):
            value = value + term() if take() == "+" else value - term()
        return value

    def term():
        value = factor()
        while peek() in ("·", "*", "/"):
            value = value * factor() if take() in ("·", "*") else value / factor()
        return value

    def factor():
        token = take()
        if token == "(":
            value = expression()
            take(")")
            return value
        if token.isdigit():
            return Fraction(int(token))
        if token in FUNCTIONS:
            take("(")
            args = [expression()]
            while peek() == ",":
                take(",")
                args.append(expression())
            take(")")
            return FUNCTIONS[token](*args)
        if token in env:
            return env[token]
        raise ValueError(f"{text!r}: unknown symbol {token!r}")

    value = expression()
    if peek() is not None:
        raise ValueError(f"{text!r}: unexpected {peek()!r}")
    return value


def _tokenize(text: str) -> list[str]:
    tokens, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            raise ValueError(f"{text!r}: cannot read {text[position:]!r}")
        tokens.append(next(group for group in match.groups() if group is not None))
        position = match.end()
    return tokens


# ---- the evaluator itself ----
def test_evaluator_reads_the_notation():
    env = {"L": Fraction(2), "d": Fraction(3), "T": Fraction(4), "W": Fraction(2), "h_kv": Fraction(5)}
    assert evaluate("2·L·d", env) == 12
    assert evaluate("d + d", env) == 6
    assert evaluate("2·L·(T+1)/2", env) == 10
    assert evaluate("E·(2·d + L)", {**env, "E": Fraction(3)}) == 24
    assert evaluate("pairs(T,W)/T", env) == Fraction(2 * 3 // 2 + 2 * 2, 4)
    assert evaluate("h_kv·d (a note in words)", env) == 15
    assert evaluate("d - L * 2", env) == -1


@pytest.mark.parametrize(
    "text", ["__import__('os')", "d.real", "d ** 2", "x", "2·", "(d", "d d", "d; L", "lambda: 0", "pairs(T)", "open(d)"]
)
def test_evaluator_refuses_anything_else(text):
    env = {"d": Fraction(3), "L": Fraction(2), "T": Fraction(4)}
    with pytest.raises((ValueError, TypeError)):
        evaluate(text, env)


# ---- every formula against its function ----
def _check_params(cfg: ModelConfig) -> None:
    env = symbols(cfg)
    for c in param_components(cfg):
        expected = c.per_layer if c.per_layer is not None else c.count
        assert evaluate(c.formula, env) == expected, (c.key, c.formula, cfg)


def _check_flops(cfg: ModelConfig, seq_len: int, attention: str) -> None:
    env = symbols(cfg, seq_len)
    for c in flop_components(cfg, seq_len, attention):
        value = evaluate(c.formula, env)
        assert value == Fraction(c.forward_per_sequence, seq_len), (c.key, c.formula, attention, seq_len, cfg)
        assert c.forward_per_token == (int(value) if value.denominator == 1 else pytest.approx(float(value)))


# 100 random configs each in the default run; 300 under `slow` (CI runs both tiers)
DEFAULT_EXAMPLES, EXHAUSTIVE_EXAMPLES = 100, 300


def _params_property(cfg):
    _check_params(cfg)


def _flops_property(cfg, seq_len, attention):
    _check_flops(cfg, seq_len, attention)


def _modern_property(cfg, seq_len, attention):
    _check_params(cfg)
    _check_flops(cfg, seq_len, attention)


def _tiers(strategies, prop):
    """The property at DEFAULT_EXAMPLES, and a `slow` copy at EXHAUSTIVE_EXAMPLES."""
    quick = settings(max_examples=DEFAULT_EXAMPLES, deadline=None)(given(*strategies)(prop))
    exhaustive = settings(max_examples=EXHAUSTIVE_EXAMPLES, deadline=None)(given(*strategies)(prop))
    return quick, pytest.mark.slow(exhaustive)


SIZES = (st.integers(1, 64), st.sampled_from(ATTENTION_CONVENTIONS))
test_param_formulas_match_their_functions, test_param_formulas_exhaustive = _tiers((configs(),), _params_property)
test_flop_formulas_match_their_functions, test_flop_formulas_exhaustive = _tiers((configs(), *SIZES), _flops_property)
test_formulas_of_the_modern_switches, test_modern_formulas_exhaustive = _tiers(
    (modern_configs(), *SIZES), _modern_property
)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_formulas_of_every_preset(name):
    cfg = PRESETS[name].config
    _check_params(cfg)
    for attention in ATTENTION_CONVENTIONS:
        for seq_len in (1, 4096, 8191):
            _check_flops(cfg, seq_len, attention)


def test_every_declared_component_is_checked():
    """Each declaration shows up for some preset, so the checks above reach all of them."""
    params = {c.key for p in PRESETS.values() for c in param_components(p.config)}
    flops = {c.key for p in PRESETS.values() for c in flop_breakdown(p.config, 8).components}
    assert params == {t.key for t in PARAM_TERMS}
    assert flops == {t.key for t in FLOP_TERMS}
