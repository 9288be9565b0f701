"""Hugging Face config.json -> ModelConfig (sizing/inputs/hf/read.py).

Ground truth: tests/fixtures/hf_counts.json, the totals transformers 5.24.0 itself gives
for the configs in tests/fixtures/hf_configs/ (see its "_source"). The small configs in
BRANCHES were counted the same way, one per converter branch.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.formulas.params import total_params
from sizing.inputs.config import ConfigError, ModelConfig
from sizing.inputs.hf.config_file import load_config_file
from sizing.inputs.hf.read import SUPPORTED_MODEL_TYPES, from_hf_config
from sizing.inputs.presets import PRESETS

FIXTURES = Path(__file__).parent / "fixtures"
CONFIG_DIR = FIXTURES / "hf_configs"
COUNTS = {k: v for k, v in json.loads((FIXTURES / "hf_counts.json").read_text()).items() if k != "_source"}
CONFIG_FILES = sorted(CONFIG_DIR.glob("*.json"))
LLAMA2_7B = CONFIG_DIR / "meta-llama__Llama-2-7b-hf.json"


def hf(path: Path) -> dict:
    return json.loads(path.read_text())


# ---- exact totals against transformers ----
def test_every_fixture_has_a_count():
    assert {p.stem for p in CONFIG_FILES} == set(COUNTS) and len(COUNTS) == 36


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.stem)
def test_total_matches_transformers(path):
    assert total_params(from_hf_config(hf(path))) == COUNTS[path.stem]


_PRESETS_WITH_FIXTURE = [p for p in PRESETS.values() if p.hf_id and p.hf_id.replace("/", "__") in COUNTS]


def test_presets_with_fixture_cover_every_family():
    assert {p.family for p in _PRESETS_WITH_FIXTURE} >= {
        "gpt2",
        "llama",
        "llama2",
        "llama3",
        "mistral",
        "mixtral",
        "opt",
        "gpt_neox",
        "qwen2",
        "gemma",
        "phi",
        "falcon",
        "bloom",
    }


@pytest.mark.parametrize("preset", _PRESETS_WITH_FIXTURE, ids=lambda p: p.name)
def test_preset_total_matches_its_hf_config(preset):
    assert total_params(preset.config) == COUNTS[preset.hf_id.replace("/", "__")]


_LL = dict(
    model_type="llama",
    vocab_size=1000,
    hidden_size=256,
    intermediate_size=688,
    num_hidden_layers=2,
    num_attention_heads=8,
    num_key_value_heads=2,
    rms_norm_eps=1e-5,
)
_OPT = dict(
    model_type="opt",
    vocab_size=1000,
    hidden_size=128,
    ffn_dim=512,
    num_hidden_layers=2,
    num_attention_heads=4,
    max_position_embeddings=64,
)
_NEOX = dict(
    model_type="gpt_neox",
    vocab_size=1000,
    hidden_size=128,
    intermediate_size=512,
    num_hidden_layers=2,
    num_attention_heads=4,
    max_position_embeddings=64,
)
_PHI = dict(
    model_type="phi",
    vocab_size=1000,
    hidden_size=128,
    intermediate_size=512,
    num_hidden_layers=2,
    num_attention_heads=4,
)
_FALCON = dict(model_type="falcon", vocab_size=1000, hidden_size=128, max_position_embeddings=64)
_SMALL = dict(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=2)
_BLOOM = dict(model_type="bloom", vocab_size=1000, n_layer=2, n_head=4)

# (config, total from transformers 5.24.0 on the meta device): one per branch and default
BRANCHES = {
    "llama_defaults": (
        dict(
            model_type="llama",
            vocab_size=1000,
            hidden_size=256,
            intermediate_size=688,
            num_hidden_layers=2,
            num_attention_heads=8,
        ),
        2094336,
    ),
    "llama_bias_tied_head_dim": (
        dict(_LL, attention_bias=True, mlp_bias=True, tie_word_embeddings=True, head_dim=64),
        1974720,
    ),
    "mistral_default_kv_null_window": (
        dict(_SMALL, model_type="mistral", num_attention_heads=16, sliding_window=None),
        1692928,
    ),
    "mixtral_num_experts": (
        dict(
            _SMALL,
            model_type="mixtral",
            num_attention_heads=8,
            num_key_value_heads=2,
            num_experts=4,
            num_experts_per_tok=1,
        ),
        3988736,
    ),
    "qwen2_all_layers_slide_tied": (
        dict(
            _SMALL,
            model_type="qwen2",
            num_attention_heads=8,
            num_key_value_heads=8,
            use_sliding_window=True,
            sliding_window=128,
            max_window_layers=0,
            tie_word_embeddings=True,
        ),
        1569536,
    ),
    "gemma_default_head_dim": (
        dict(
            _SMALL,
            model_type="gemma",
            num_attention_heads=4,
            num_key_value_heads=1,
            hidden_activation="gelu_pytorch_tanh",
        ),
        2354432,
    ),
    "gemma_bias_untied": (
        dict(
            _SMALL,
            model_type="gemma",
            num_attention_heads=4,
            num_key_value_heads=4,
            head_dim=64,
            hidden_act="gelu_pytorch_tanh",
            attention_bias=True,
            tie_word_embeddings=False,
        ),
        1826048,
    ),
    "gpt2_n_inner_untied": (
        dict(
            model_type="gpt2",
            vocab_size=1000,
            hidden_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=64,
            n_inner=300,
            tie_word_embeddings=False,
        ),
        552024,
    ),
    "opt_post_ln": (dict(_OPT, do_layer_norm_before=False), 532992),
    "opt_remove_final_ln": (dict(_OPT, _remove_final_layer_norm=True), 532992),
    "opt_no_bias_untied_gelu": (
        dict(_OPT, enable_bias=False, tie_word_embeddings=False, activation_function="gelu"),
        658944,
    ),
    "neox_rotary_pct": (dict(_NEOX, rotary_pct=0.5, rotary_emb_base=10000), 652800),
    "neox_sequential_no_bias_tied": (
        dict(_NEOX, use_parallel_residual=False, attention_bias=False, tie_word_embeddings=True),
        523776,
    ),
    "phi_defaults": (dict(_PHI, partial_rotary_factor=0.5, rope_theta=10000.0), 653288),
    "phi_gqa_tied": (dict(_PHI, num_key_value_heads=2, tie_word_embeddings=True), 492264),
    "falcon_multi_query": (dict(_FALCON, num_hidden_layers=2, num_attention_heads=4, multi_query=True), 472832),
    "falcon_mha_sequential_bias": (
        dict(_FALCON, num_hidden_layers=2, num_attention_heads=4, multi_query=False, parallel_attn=False, bias=True),
        524800,
    ),
    "falcon_new_arch": (
        dict(
            _FALCON,
            num_hidden_layers=2,
            num_attention_heads=8,
            num_kv_heads=2,
            new_decoder_architecture=True,
            ffn_hidden_size=300,
        ),
        364800,
    ),
    "falcon_new_arch_one_ln": (
        dict(
            _FALCON,
            num_hidden_layers=2,
            num_attention_heads=8,
            num_kv_heads=2,
            new_decoder_architecture=True,
            num_ln_in_parallel_attn=1,
        ),
        472832,
    ),
    "falcon_alibi_untied": (
        dict(_FALCON, num_hidden_layers=2, num_attention_heads=4, alibi=True, tie_word_embeddings=False),
        600832,
    ),
    "bloom_defaults_tied": (dict(_BLOOM, hidden_size=128), 525056),
    "bloom_untied": (dict(_BLOOM, hidden_size=128, tie_word_embeddings=False), 653056),
    "bloom_n_embed_over_hidden_size": (dict(_BLOOM, hidden_size=64, n_embed=128), 525056),
}


@pytest.mark.parametrize("name", BRANCHES)
def test_branch_total_matches_transformers(name):
    config, count = BRANCHES[name]
    assert total_params(from_hf_config(config)) == count


# ---- transformers 4.x and 5.x spellings give the same ModelConfig ----
_RS = dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192)
SPELLINGS = {
    "llama_rope_theta": (
        dict(_LL, rope_theta=500000.0, rope_scaling=dict(_RS, rope_type="llama3")),
        dict(_LL, rope_parameters=dict(_RS, rope_type="llama3", rope_theta=500000.0)),
    ),
    "gpt2_names": (
        dict(model_type="gpt2", vocab_size=1000, n_embd=128, n_layer=2, n_head=4, n_positions=64, n_inner=None),
        dict(
            model_type="gpt2",
            vocab_size=1000,
            hidden_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=64,
        ),
    ),
    "neox_rotary": (
        dict(_NEOX, rotary_pct=0.5, rotary_emb_base=20000),
        dict(_NEOX, rope_parameters={"rope_type": "default", "rope_theta": 20000.0, "partial_rotary_factor": 0.5}),
    ),
    "neox_rotary_flat_5x": (
        dict(_NEOX, rotary_pct=0.5, rotary_emb_base=20000),
        dict(_NEOX, partial_rotary_factor=0.5, rope_theta=20000.0),
    ),
    "phi_partial": (
        dict(_PHI, partial_rotary_factor=0.4, rope_theta=10000.0),
        dict(_PHI, rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.4}),
    ),
    "falcon_old_names": (
        dict(_FALCON, n_embed=128, n_layer=2, n_head=8, n_head_kv=2, new_decoder_architecture=True),
        dict(_FALCON, num_hidden_layers=2, num_attention_heads=8, num_kv_heads=2, new_decoder_architecture=True),
    ),
    "gemma_activation": (
        dict(
            _SMALL,
            model_type="gemma",
            num_attention_heads=4,
            num_key_value_heads=1,
            hidden_activation="gelu_pytorch_tanh",
        ),
        dict(_SMALL, model_type="gemma", num_attention_heads=4, num_key_value_heads=1, hidden_act="gelu_pytorch_tanh"),
    ),
    "mixtral_experts": (
        dict(_SMALL, model_type="mixtral", num_attention_heads=8, num_local_experts=4),
        dict(_SMALL, model_type="mixtral", num_attention_heads=8, num_experts=4),
    ),
    "bloom_names": (
        dict(_BLOOM, n_embed=128),
        dict(model_type="bloom", vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4),
    ),
}


@pytest.mark.parametrize("name", SPELLINGS)
def test_4x_and_5x_spellings_agree(name):
    old, new = SPELLINGS[name]
    assert from_hf_config(old) == from_hf_config(new)


def test_spelling_values_land_in_the_right_fields():
    assert from_hf_config(SPELLINGS["llama_rope_theta"][1]).rope_theta == 500000.0
    neox = from_hf_config(SPELLINGS["neox_rotary"][0])
    assert (neox.rotary_fraction, neox.rope_theta) == (0.5, 20000)
    assert from_hf_config(SPELLINGS["phi_partial"][1]).rotary_fraction == 0.4
    assert from_hf_config(SPELLINGS["gpt2_names"][0]).d_ff == 4 * 128  # n_inner null -> 4d
    falcon = from_hf_config(SPELLINGS["falcon_old_names"][0])
    assert (falcon.d_model, falcon.n_layers, falcon.n_heads, falcon.kv_heads) == (128, 2, 8, 2)


# ---- what each family maps to ----
def test_llama_family_mapping():
    cfg = from_hf_config(hf(CONFIG_DIR / "meta-llama__Llama-2-70b-hf.json"))
    assert (cfg.mlp, cfg.norm, cfg.position, cfg.n_kv_heads, cfg.head_dim) == ("swiglu", "rmsnorm", "rope", 8, None)
    assert (cfg.norm_eps, cfg.rope_theta, cfg.tied_embeddings, cfg.qkv_bias) == (1e-5, 10000.0, False, False)
    assert from_hf_config(hf(CONFIG_DIR / "huggyllama__llama-7b.json")).n_kv_heads is None  # MHA stays None


def test_gemma_mapping():
    cfg = from_hf_config(hf(CONFIG_DIR / "google__gemma-7b.json"))
    assert (cfg.mlp, cfg.norm, cfg.head_dim, cfg.d_head, cfg.tied_embeddings) == ("geglu", "rmsnorm", 256, 256, True)


def test_mixtral_mapping():
    cfg = from_hf_config(hf(CONFIG_DIR / "mistralai__Mixtral-8x7B-v0.1.json"))
    assert (cfg.n_experts, cfg.top_k, cfg.expert_ff, cfg.router_bias) == (8, 2, 14336, False)
    assert (cfg.rope_theta, cfg.sliding_window) == (1e6, None)


def test_sliding_window():
    assert from_hf_config(hf(CONFIG_DIR / "mistralai__Mistral-7B-v0.1.json")).sliding_window == 4096
    mistral = dict(_SMALL, model_type="mistral", num_attention_heads=8)
    assert from_hf_config(mistral).sliding_window == 4096  # MistralConfig's default
    assert from_hf_config(dict(mistral, sliding_window=None)).sliding_window is None
    qwen = hf(CONFIG_DIR / "Qwen__Qwen2-7B.json")
    assert from_hf_config(qwen).sliding_window is None  # use_sliding_window false
    assert from_hf_config(dict(qwen, use_sliding_window=True, max_window_layers=0)).sliding_window == 131072
    assert from_hf_config(dict(qwen, use_sliding_window=True)).sliding_window is None  # max_window_layers 28 = L
    assert (
        from_hf_config(
            dict(qwen, use_sliding_window=True, sliding_window=4096, layer_types=["sliding_attention"] * 28)
        ).sliding_window
        == 4096
    )


def test_opt_mapping():
    cfg = from_hf_config(hf(CONFIG_DIR / "facebook__opt-125m.json"))
    assert (cfg.mlp, cfg.position, cfg.max_positions, cfg.final_norm) == ("relu", "learned", 2050, True)
    post = from_hf_config(dict(_OPT, do_layer_norm_before=False))
    assert (post.norm_placement, post.final_norm) == ("post", False)


def test_neox_phi_falcon_blocks():
    neox = from_hf_config(hf(CONFIG_DIR / "EleutherAI__pythia-160m.json"))
    assert (neox.parallel_block, neox.shared_block_norm, neox.rotary_fraction) == (True, False, 0.25)
    seq = from_hf_config(dict(_NEOX, use_parallel_residual=False))
    assert (seq.parallel_block, seq.shared_block_norm, seq.norms_per_block) == (False, False, 2)
    phi = from_hf_config(hf(CONFIG_DIR / "microsoft__phi-2.json"))
    assert (phi.shared_block_norm, phi.lm_head_bias, phi.rotary_fraction, phi.mlp) == (True, True, 0.4, "gelu")
    f7 = from_hf_config(hf(CONFIG_DIR / "tiiuae__falcon-7b.json"))
    assert (f7.n_kv_heads, f7.shared_block_norm, f7.qkv_bias, f7.position) == (1, True, False, "rope")
    f40 = from_hf_config(hf(CONFIG_DIR / "tiiuae__falcon-40b.json"))
    assert (f40.n_kv_heads, f40.parallel_block, f40.shared_block_norm) == (8, True, False)
    assert from_hf_config(dict(_FALCON, num_hidden_layers=2, num_attention_heads=4, alibi=True)).position == "none"


def test_bloom_mapping():
    cfg = from_hf_config(hf(CONFIG_DIR / "bigscience__bloom.json"))
    assert (cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.d_ff, cfg.vocab_size) == (14336, 70, 112, 4 * 14336, 250880)
    assert (cfg.embedding_norm, cfg.position, cfg.norm, cfg.has_norm_bias, cfg.final_norm) == (
        True,
        "none",
        "layernorm",
        True,
        True,
    )
    assert (cfg.qkv_bias, cfg.attn_out_bias, cfg.mlp_bias, cfg.tied_embeddings, cfg.mlp) == (
        True,
        True,
        True,
        True,
        "gelu",
    )
    assert (cfg.parallel_block, cfg.norm_placement, cfg.lm_head_bias) == (False, "pre", False)


@pytest.mark.parametrize(
    "act, gated, kind",
    [
        ("silu", True, "swiglu"),
        ("gelu", True, "geglu"),
        ("gelu_pytorch_tanh", True, "geglu"),
        ("gelu", False, "gelu"),
        ("gelu_new", False, "gelu"),
        ("relu", False, "relu"),
    ],
)
def test_activation_names(act, gated, kind):
    config = dict(_LL, hidden_act=act) if gated else dict(_OPT, activation_function=act)
    assert from_hf_config(config).mlp == kind


# ---- errors: ConfigError naming the field ----
@pytest.mark.parametrize(
    "config, words",
    [
        (dict(_LL, model_type="bert"), ["'bert'", "not supported", "llama", "falcon", "gpt_neox"]),
        ({k: v for k, v in _LL.items() if k != "hidden_size"}, ["'hidden_size'", "model_type 'llama'"]),
        ({k: v for k, v in _OPT.items() if k != "ffn_dim"}, ["'ffn_dim'", "model_type 'opt'"]),
        (
            dict(model_type="gpt2", vocab_size=10, n_embd=64, n_head=4, n_positions=8),
            ["'n_layer'", "'num_hidden_layers'"],
        ),
        (dict(_LL, hidden_size="256"), ["'hidden_size'", "integer"]),
        (dict(_LL, tie_word_embeddings="yes"), ["'tie_word_embeddings'", "true or false"]),
        (dict(_PHI, qk_layernorm=True), ["qk_layernorm", "not supported"]),
        (dict(_OPT, word_embed_proj_dim=64), ["word_embed_proj_dim", "project_in", "not supported"]),
        (
            dict(
                model_type="gpt2",
                vocab_size=10,
                n_embd=64,
                n_layer=2,
                n_head=4,
                n_positions=8,
                add_cross_attention=True,
            ),
            ["add_cross_attention", "not supported"],
        ),
        (dict(_LL, hidden_act="tanh"), ["'tanh'", "hidden_act", "silu"]),
        (dict(_OPT, activation_function="silu"), ["'silu'", "activation_function"]),
        (
            dict(_SMALL, model_type="qwen2", num_attention_heads=8, use_sliding_window=True, max_window_layers=1),
            ["use_sliding_window", "1 of 2 layers"],
        ),
        (dict(_LL, num_key_value_heads=3), ["model_type 'llama'", "n_kv_heads (3)"]),
    ],
)
def test_errors_name_the_field(config, words):
    with pytest.raises(ConfigError) as info:
        from_hf_config(config)
    for word in words:
        assert word in str(info.value)


def test_supported_model_types():
    assert set(SUPPORTED_MODEL_TYPES) == {
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "gemma",
        "gpt2",
        "opt",
        "gpt_neox",
        "phi",
        "falcon",
        "bloom",
        "deepseek_v2",
        "deepseek_v3",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "gemma2",
        "gemma3_text",
        "llama4_text",
        "gpt_oss",
        "phi3",
        "olmo2",
        "gemma3",
        "llama4",
        "deepseek_v32",
        "glm4_moe",
        "minimax_m2",
    }


# ---- load_config_file ----
def test_load_hf_file_and_directory(tmp_path):
    assert total_params(load_config_file(str(LLAMA2_7B))) == 6738415616
    (tmp_path / "config.json").write_text(LLAMA2_7B.read_text())
    assert load_config_file(str(tmp_path)) == load_config_file(str(LLAMA2_7B))


def test_own_form_round_trips(tmp_path):
    for name in ("llama2-70b", "mixtral-8x7b", "phi-2", "opt-125m", "gemma-2b"):
        cfg = PRESETS[name].config
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(cfg.to_dict()))
        assert load_config_file(str(path)) == cfg


def test_own_form_from_estimate_json(tmp_path):
    result = CliRunner().invoke(main, ["estimate", "--preset", "mixtral-8x7b", "--format", "json"])
    assert result.exit_code == 0, result.output
    path = tmp_path / "estimate.json"
    path.write_text(result.output)
    assert load_config_file(str(path)) == PRESETS["mixtral-8x7b"].config


def test_own_form_partial_dict_uses_defaults(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(dict(vocab_size=1000, d_model=128, n_layers=2, n_heads=4, d_ff=512, max_positions=64)))
    assert load_config_file(str(path)) == ModelConfig(
        vocab_size=1000, d_model=128, n_layers=2, n_heads=4, d_ff=512, max_positions=64
    )


@pytest.mark.parametrize(
    "content, words",
    [
        (None, ["not found"]),
        ('{"model_type": "llama",\n  "vocab_size": 32000,,\n}', ["not valid JSON", "line 2", "column"]),
        ("from transformers import AutoConfig\n", ["is not JSON"]),
        (b"\x89safetensors\xff\xfe\x00", ["is not JSON"]),
        ("", ["is empty"]),
        ("[1, 2]", ["JSON object"]),
        ('{"d_model": NaN}', ["NaN"]),
        ('{"hidden_size": 4096, "num_hidden_layers": 32, "architectures": ["LlamaForCausalLM"]}', ["no 'model_type'"]),
        ('{"d_model": 64, "n_layer": 2}', ["unknown config field", "n_layer"]),
        ('{"model_type": "llama", "vocab_size": 32000}', ["'hidden_size'", "model_type 'llama'"]),
    ],
)
def test_load_errors_name_the_file(tmp_path, content, words):
    path = tmp_path / "config.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_config_file(str(path))
    message = str(info.value)
    assert f"'{path}'" in message
    for word in words:
        assert word in message


# ---- the CLI ----
def test_cli_estimate_from_hf_config():
    result = CliRunner().invoke(main, ["estimate", "--config", str(LLAMA2_7B), "--seq-len", "4096", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["params"]["total"] == 6738415616


def test_cli_bad_config_file_is_one_line_exit_2(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "vocab_size": 32000}')
    for bad in (path, tmp_path / "missing.json"):
        result = CliRunner().invoke(main, ["estimate", "--config", str(bad), "--seq-len", "4096"])
        assert result.exit_code == 2
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: config file")
