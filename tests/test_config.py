"""ModelConfig (sizing/inputs/config.py): every field checked against its declared type, `--set`
values parsed exactly, and the one context-length check every command shares (issue 11)."""

import dataclasses

import pytest

from sizing.inputs.config import ConfigError, ModelConfig, parse_field_value
from sizing.inputs.presets import PRESETS
from sizing.validate import MAX_COUNT, MAX_SEQ_LEN, SizingError

GPT2 = PRESETS["gpt2"].config
LLAMA = PRESETS["llama2-7b"].config


def test_config_error_is_a_sizing_error_and_a_value_error():
    with pytest.raises(ConfigError) as info:
        dataclasses.replace(GPT2, qkv_bias="false")
    assert isinstance(info.value, SizingError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "field, value, words",
    [
        # bools are bools: a non-empty string is truthy, so "false" would add a bias
        ("qkv_bias", "false", ["qkv_bias ('false')", "true or false"]),
        ("tied_embeddings", "no", ["tied_embeddings ('no')", "true or false"]),
        ("final_norm", 1, ["final_norm (1)", "true or false"]),
        ("norm_bias", "yes", ["norm_bias ('yes')", "true or false"]),
        # ints are ints: not bools, not floats, within MAX_COUNT
        ("n_layers", True, ["n_layers (True)", "positive integer"]),
        ("n_layers", 12.0, ["n_layers (12.0)", "positive integer"]),
        ("n_layers", "12", ["n_layers ('12')", "positive integer"]),
        ("d_model", MAX_COUNT + 1, ["d_model", f"at most {MAX_COUNT:,}"]),
        ("vocab_size", 10**400, ["vocab_size (an integer of 401 digits)"]),
        ("n_kv_heads", 0, ["n_kv_heads (0)", "positive integer"]),
        ("max_positions", -1, ["max_positions (-1)", "integer >= 0"]),
        # floats are finite numbers within bounds
        ("rope_theta", float("inf"), ["rope_theta (inf)", "finite"]),
        ("rope_theta", 1e31, ["rope_theta", "at most 1e+30"]),
        ("norm_eps", float("nan"), ["norm_eps (nan)", "finite"]),
        ("norm_eps", 0.0, ["norm_eps (0.0)", "> 0"]),
        ("rope_theta", "10000", ["rope_theta ('10000')", "finite number"]),
        ("rotary_fraction", True, ["rotary_fraction (True)", "(0, 1]"]),
        ("rotary_fraction", 1.5, ["rotary_fraction (1.5)", "(0, 1]"]),
        # kinds are among their choices, and unhashable values do not crash the check
        ("mlp", "swish", ["mlp ('swish')", "gelu, relu, swiglu, geglu"]),
        ("position", ["rope"], ["position (['rope'])", "learned, rope, none"]),
    ],
)
def test_every_field_is_type_checked(field, value, words):
    with pytest.raises(ConfigError) as info:
        dataclasses.replace(GPT2, **{field: value})
    for word in words:
        assert word in str(info.value)


def test_the_first_bad_field_in_declared_order_is_named():
    # the checks take a fast pass by kind (ints, bools, choices, floats) first; a failure there
    # reruns them in declared order, so the message names the same field as before: n_layers
    # is declared before qkv_bias and mlp, norm_eps after them
    with pytest.raises(ConfigError, match=r"^n_layers \(0\)"):
        dataclasses.replace(GPT2, mlp="swish", qkv_bias="no", n_layers=0, norm_eps=0.0)
    with pytest.raises(ConfigError, match=r"^mlp \('swish'\)"):  # mlp is declared before qkv_bias
        dataclasses.replace(GPT2, norm_eps=float("nan"), qkv_bias="no", mlp="swish")


def test_values_off_the_fast_path_take_the_full_check():
    class Layers(int):  # an int subclass: not the exact type the fast pass tests, valid all the same
        pass

    cfg = dataclasses.replace(GPT2, n_layers=Layers(6), rope_theta=10000, rotary_fraction=1)
    assert (cfg.n_layers, cfg.rope_theta, cfg.rotary_fraction) == (6, 10000, 1)


def test_valid_values_of_each_type_are_kept():
    cfg = dataclasses.replace(
        LLAMA, rope_theta=500000, norm_eps=1e-6, rotary_fraction=1, n_kv_heads=None, norm_bias=None, sliding_window=4096
    )
    assert (cfg.rope_theta, cfg.norm_eps, cfg.rotary_fraction, cfg.kv_heads) == (500000, 1e-6, 1, 32)
    for preset in PRESETS.values():  # every preset passes its own checks
        assert ModelConfig(**preset.config.to_dict()) == preset.config


def test_from_dict_checks_types_and_names():
    with pytest.raises(ConfigError, match=r"qkv_bias \('false'\)"):
        ModelConfig.from_dict(dict(GPT2.to_dict(), qkv_bias="false"))
    with pytest.raises(ConfigError, match="must be a dict"):
        ModelConfig.from_dict(["d_model"])
    with pytest.raises(ConfigError) as info:
        ModelConfig.from_dict(dict(GPT2.to_dict(), **{"x\nError: forged": 1}))
    assert "\n" not in str(info.value) and "'x\\nError: forged'" in str(info.value)


# ---- --set FIELD=VALUE
@pytest.mark.parametrize(
    "field, text, value",
    [
        ("n_layers", "48", 48),
        ("n_layers", "1_000", 1000),
        ("n_layers", "4e3", 4000),
        ("n_layers", "96.0", 96),
        ("n_layers", str(MAX_COUNT), MAX_COUNT),
        ("max_positions", "0", 0),
        ("head_dim", "none", None),
        ("norm_bias", "null", None),
        ("qkv_bias", "yes", True),
        ("qkv_bias", "OFF", False),
        ("rope_theta", "5e5", 500000.0),
        ("norm_eps", "1e-6", 1e-6),
        ("mlp", " swiglu ", "swiglu"),
    ],
)
def test_parse_field_value(field, text, value):
    type_name = {f.name: f.type for f in dataclasses.fields(ModelConfig)}[field]
    assert parse_field_value(field, type_name, text) == value


@pytest.mark.parametrize(
    "field, text, words",
    [
        # integers are never parsed through float: 2**53 + 1 would silently become 2**53
        ("n_layers", "9007199254740993", ["n_layers ('9007199254740993')", f"at most {MAX_COUNT:,}"]),
        ("n_layers", "1e999999", ["n_layers ('1e999999')", "at most"]),
        ("n_layers", "1.5", ["n_layers ('1.5')", "must be an integer"]),
        ("n_layers", "0x10", ["must be an integer"]),
        ("n_layers", "nan", ["must be an integer"]),
        ("n_layers", "0", ["n_layers (0)", "positive integer"]),
        ("rope_theta", "inf", ["rope_theta ('inf')", "finite"]),
        ("norm_eps", "Infinity", ["norm_eps ('Infinity')", "finite"]),
        ("rope_theta", "1e400", ["rope_theta ('1e400')", "finite"]),
        ("rope_theta", "nan", ["finite"]),
        ("rotary_fraction", "true", ["rotary_fraction ('true')", "must be a number"]),
        ("qkv_bias", "maybe", ["qkv_bias ('maybe')", "true or false"]),
    ],
)
def test_parse_field_value_refuses(field, text, words):
    type_name = {f.name: f.type for f in dataclasses.fields(ModelConfig)}[field]
    with pytest.raises(ConfigError) as info:
        parse_field_value(field, type_name, text)
    for word in words:
        assert word in str(info.value)


def test_overrides_are_exact_and_checked_again():
    assert GPT2.with_overrides({"n_layers": "2_000"}).n_layers == 2000
    assert GPT2.with_overrides({"vocab_size": str(MAX_COUNT)}).vocab_size == MAX_COUNT
    with pytest.raises(ConfigError, match=r"rope_theta \(inf\)"):
        GPT2.with_overrides({"rope_theta": float("inf")})  # non-strings go straight to the checks
    with pytest.raises(ConfigError, match="did you mean n_layers"):
        GPT2.with_overrides({"n_layer": "3"})


# ---- the context check shared by estimate, memory, verify and profile
def test_check_context():
    assert GPT2.check_context(1024) == 1024
    assert LLAMA.check_context(MAX_SEQ_LEN) == MAX_SEQ_LEN  # RoPE has no table
    with pytest.raises(SizingError) as info:
        GPT2.check_context(1025, "--context")
    assert "--context (1025)" in str(info.value) and "max_positions 1024" in str(info.value)
    for bad in (0, -1, True, 1.5, "1024", MAX_SEQ_LEN + 1, 10**160):
        with pytest.raises(SizingError, match="seq_len"):
            LLAMA.check_context(bad)


def test_every_preset_context_fits_its_position_table():
    for preset in PRESETS.values():
        assert preset.config.check_context(preset.context) == preset.context
