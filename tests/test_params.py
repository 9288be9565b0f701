"""Parameter counts: the seed's worked example, every published count, and properties."""

import pytest
from hypothesis import given, settings
from strategies import configs

from sizing import ModelConfig, get_preset, llama_ffn_dim
from sizing.formulas.params import (
    PARAM_GROUPS,
    active_params,
    non_embedding_params,
    param_components,
    param_groups,
    total_params,
)
from sizing.inputs.presets import PRESETS


def test_seed_llama2_7b_worked_example():
    """The seed tutorial 000 (section 1.3): Llama 2 7B by hand, L=32, d=4096, V=32000, d_ff=11008."""
    cfg = get_preset("llama2-7b").config
    d, L, V, f = 4096, 32, 32000, 11008
    groups = param_groups(cfg)
    assert groups["attention"]["per_layer"] == 4 * d * d == 67_108_864
    assert groups["mlp"]["per_layer"] == 3 * d * f == 135_266_304
    assert L * (groups["attention"]["per_layer"] + groups["mlp"]["per_layer"]) == 6_476_005_376
    assert groups["embeddings"]["count"] == 2 * V * d == 262_144_000
    assert groups["norms"]["count"] == 2 * d * L + d == 266_240
    assert total_params(cfg) == 6_738_415_616


def test_groups_partition_the_components():
    keys = [k for group in PARAM_GROUPS.values() for k in group]
    assert len(keys) == len(set(keys))
    for preset in PRESETS.values():
        components = {c.key for c in param_components(preset.config)}
        assert components <= set(keys)
        assert sum(g["count"] for g in param_groups(preset.config).values()) == total_params(preset.config)


def test_llama_ffn_rule():
    assert llama_ffn_dim(4096, 256) == 11008  # llama-7b
    assert llama_ffn_dim(8192, 4096, 1.3) == 28672  # llama2-70b
    assert llama_ffn_dim(4096, 1024, 1.3) == 14336  # llama3-8b
    assert llama_ffn_dim(16384, 4096, 1.2) == 53248  # llama3.1-405b


@pytest.mark.parametrize("name", [p.name for p in PRESETS.values() if p.published_params])
def test_exact_published_counts(name):
    preset = PRESETS[name]
    assert total_params(preset.config) == preset.published_params


# Presets with `published` figures are checked to each figure's own rounding in test_presets_modern.py.
@pytest.mark.parametrize("name", [p.name for p in PRESETS.values() if p.published_params_rounded and not p.published])
def test_rounded_published_counts(name):
    # Papers print 2-3 significant figures (GPT-3 XL "1.32B" vs exact 1.3157B: 0.33%; Qwen2 "0.49B"
    # vs 0.494B: 0.8%): 1% covers that rounding and nothing more.
    preset = PRESETS[name]
    assert total_params(preset.config) == pytest.approx(preset.published_params_rounded, rel=0.01)


def test_reference_figures_architectures(reference_figures):
    """Every exact count in tests/fixtures/reference-figures.json (the project's copy of the seed
    figures, with their sources), from its own shape fields."""
    by_hf_id = {p.hf_id: p for p in PRESETS.values() if p.hf_id}
    checked = 0
    for arch in reference_figures["architectures"]:
        preset = by_hf_id[arch["hf_id"]]
        cfg = preset.config
        assert (cfg.d_model, cfg.d_ff, cfg.n_layers, cfg.n_heads, cfg.kv_heads, cfg.d_head, cfg.vocab_size) == (
            arch["hidden_size"],
            arch["intermediate_size"],
            arch["num_hidden_layers"],
            arch["num_attention_heads"],
            arch["num_key_value_heads"],
            arch["head_dim"],
            arch["vocab_size"],
        )
        assert total_params(cfg) == arch["total_params"]
        checked += 1
    assert checked == len(reference_figures["architectures"]) >= 9


def test_reference_figures_gpt3_table(reference_figures):
    names = ["gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b"]
    for name, row in zip(names, reference_figures["gpt3_table"], strict=True):
        cfg = PRESETS[name].config
        assert cfg.n_layers == row["n_layers"] and cfg.d_head == row["d_head"]
        assert total_params(cfg) == row["params_gpt2_style_computed"]
        # Table D.1 prints params in millions to 3-4 figures; XL's 1,320M vs 1,315.7M is the widest gap.
        assert total_params(cfg) == pytest.approx(row["d1_params_millions"] * 1e6, rel=0.005)


def test_gpt2_formula_by_hand():
    cfg = get_preset("gpt2").config
    d, L, V, P = 768, 12, 50257, 1024
    per_layer = 12 * d * d + 13 * d  # 4d^2+4d attention, 8d^2+5d MLP, 4d two LayerNorms
    assert total_params(cfg) == V * d + P * d + L * per_layer + 2 * d == 124_439_808


def test_moe_active_params_mixtral():
    cfg = get_preset("mixtral-8x7b").config
    d, f, L = 4096, 14336, 32
    expert = 3 * d * f
    assert total_params(cfg) - active_params(cfg) == (8 - 2) * expert * L
    assert active_params(cfg) == 12_879_925_248  # the paper's "12.9B active"


def test_non_embedding_excludes_lookup_tables_only():
    cfg = get_preset("gpt2").config
    assert non_embedding_params(cfg) == total_params(cfg) - 50257 * 768 - 1024 * 768
    llama = get_preset("llama2-7b").config  # untied lm_head stays: it is a matmul per token
    assert non_embedding_params(llama) == total_params(llama) - 32000 * 4096


def test_tied_head_bias_counted_once():
    cfg = ModelConfig(
        vocab_size=100,
        d_model=16,
        n_layers=1,
        n_heads=2,
        d_ff=32,
        position="none",
        tied_embeddings=True,
        lm_head_bias=True,
    )
    parts = {c.key: c.count for c in param_components(cfg)}
    assert parts["lm_head"] == 100 and parts["tok_emb"] == 100 * 16


def test_padded_vocab():
    cfg = get_preset("gpt2").config.with_overrides({"vocab_pad_multiple": "64"})
    assert cfg.padded_vocab == 50304
    assert total_params(cfg) - total_params(get_preset("gpt2").config) == (50304 - 50257) * 768


@settings(max_examples=200, deadline=None)
@given(configs())
def test_properties(cfg):
    parts = param_components(cfg)
    assert sum(c.count for c in parts) == total_params(cfg)
    assert all(c.count > 0 for c in parts)
    assert all(c.count == c.per_layer * cfg.n_layers for c in parts if c.per_layer is not None and c.layers == "L")
    assert 0 < active_params(cfg) <= total_params(cfg)
    assert non_embedding_params(cfg) < total_params(cfg)  # the token table is never empty
    # Adding a layer adds exactly one layer's worth.
    deeper = cfg.with_overrides({"n_layers": cfg.n_layers + 1})
    assert total_params(deeper) - total_params(cfg) == sum(c.per_layer for c in parts if c.per_layer is not None)
