"""The published conventions (sizing.formulas.conventions), each checked against the formula as its
paper prints it, and "model training FLOPs of a run" against the estimate that reports it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import configs

from sizing import estimate
from sizing.formulas.conventions import (
    COMPONENTS,
    CONVENTION_TABLE,
    chinchilla_convention,
    kaplan_6n_convention,
    kaplan_table_convention,
    megatron_convention,
    model_flops_per_token,
    model_training_flops,
    ours_convention,
    palm_attention_flops_per_token,
    palm_convention,
    palm_flops_per_token,
)
from sizing.formulas.flops import decode_flops_per_token, flop_breakdown, kaplan_6n_per_token
from sizing.formulas.params import active_params, total_params
from sizing.inputs.presets import PRESETS, get_preset


@given(st.integers(1, 200), st.integers(1, 128), st.integers(1, 512), st.integers(1, 10**6))
def test_palm_attention_is_12_l_h_q_t(L, H, Q, T):
    assert palm_attention_flops_per_token(L, H, Q, T) == 12 * L * H * Q * T
    assert palm_flops_per_token(7, L, H, Q, T) == 6 * 7 + 12 * L * H * Q * T


def test_palm_540b_as_the_paper_prints_it():
    """(6N + 12·L·H·Q·T)·D with PaLM-540B's shape: 2.555e24, 1.1% above its 6ND of 2527.2 ZFLOPs."""
    per_token = palm_flops_per_token(540 * 10**9, 118, 48, 256, 2048)
    assert per_token == 6 * 540 * 10**9 + 12 * 118 * 48 * 256 * 2048
    assert kaplan_6n_per_token(540 * 10**9) * 780 * 10**9 == 25_272 * 10**20  # 2527.2 ZFLOPs


@settings(max_examples=100, deadline=None)
@given(configs(), st.integers(1, 64))
def test_palm_attention_equals_ours_full(cfg, T):
    """PaLM's 12·L·H·Q·T is our QK^T + AV, full attention, times 3 (forward + backward)."""
    assert palm_convention(cfg, T)["attention"] == ours_convention(cfg, T, "full")["attention"]


@settings(max_examples=100, deadline=None)
@given(configs(), st.integers(1, 64))
def test_6n_counts_every_active_parameter(cfg, T):
    parts = kaplan_6n_convention(cfg, T)
    assert set(parts) == set(COMPONENTS)
    assert sum(parts.values()) == 6 * active_params(cfg)
    assert parts["attention"] == 0


@settings(max_examples=100, deadline=None)
@given(configs(), st.integers(1, 64), st.sampled_from(["full", "causal"]))
def test_ours_is_three_forwards(cfg, T, attention):
    b = flop_breakdown(cfg, T, attention)
    # exact but for a causal window, where per-token figures are floats
    assert sum(ours_convention(cfg, T, attention).values()) == pytest.approx(3 * b.per_token(b.forward))
    assert model_flops_per_token(b) == b.per_token(b.forward + b.backward)


def test_megatron_equals_ours_on_gpt3():
    """GPT-3 is the model Megatron's formula assumes (MHA, a 4h two-matrix MLP, tied head)."""
    cfg = get_preset("gpt3-175b").config
    assert sum(megatron_convention(cfg, 2048).values()) == sum(ours_convention(cfg, 2048).values())
    L, h, s, V = cfg.n_layers, cfg.d_model, 2048, cfg.padded_vocab
    assert megatron_convention(cfg, s)["lm_head"] == 6 * h * V  # 72·l·h²·V/(12hl)
    assert megatron_convention(cfg, s, recompute=True)["lm_head"] == 6 * h * V  # 96·l·h²·V/(16hl)
    assert megatron_convention(cfg, s, recompute=True)["linear"] == 96 * L * h * h


def test_chinchilla_and_kaplan_table_as_printed():
    cfg = get_preset("gpt3-175b").config
    d, f, V, L, H, T = cfg.d_model, cfg.d_ff, cfg.padded_vocab, cfg.n_layers, cfg.n_heads, 2048
    chinchilla = chinchilla_convention(cfg, T)
    assert chinchilla["softmax"] == 3 * L * 3 * H * T
    assert chinchilla["attention"] == 3 * L * 4 * T * d  # logits + softmax @ V, key_size·heads = d
    assert chinchilla["embedding"] == chinchilla["lm_head"] == 3 * 2 * V * d
    kaplan = kaplan_table_convention(cfg, T)
    assert kaplan["linear"] == 3 * 2 * 2 * d * L * (2 * d + f)
    assert kaplan["attention"] == 3 * 2 * L * T * d


def test_convention_table_covers_every_component():
    cfg = get_preset("llama2-7b").config
    for label, function, source in CONVENTION_TABLE:
        assert set(function(cfg, 4096)) == set(COMPONENTS), label
        assert source


def test_model_training_flops_is_what_estimate_reports():
    for name in ("llama2-7b", "mixtral-8x7b", "gpt2", "mistral-7b"):
        preset = PRESETS[name]
        tokens = preset.training_tokens or 10**12
        est = estimate(preset, tokens=tokens)
        assert est.training.flops == model_training_flops(preset.config, preset.context, tokens)
        assert est.training.flops_6n == kaplan_6n_per_token(est.params.active) * tokens
    causal = estimate("mistral-7b", attention="causal", seq_len=8192, tokens=10**12)
    assert causal.training.flops == model_training_flops(causal.config, 8192, 10**12, "causal")


def test_decode_attends_the_window_only():
    """Decoding past the window costs what decoding at the window does (Mistral, W = 4096)."""
    cfg = get_preset("mistral-7b").config
    assert decode_flops_per_token(cfg, 32768) == decode_flops_per_token(cfg, 4096)
    assert decode_flops_per_token(cfg, 4096) - decode_flops_per_token(cfg, 4095) == 2 * 2 * 32 * 32 * 128


def test_gpt3_6n_uses_total_params():
    cfg = get_preset("gpt3-175b").config
    assert kaplan_6n_per_token(total_params(cfg)) == 6 * total_params(cfg)
