"""The modern model types of sizing/inputs/hf/families.py against Hugging Face's own modeling code.

Ground truth: tests/fixtures/hf_counts_modern.json, written by tools/hf_counts_modern.py with
transformers 5.24.0 (its "_source"): total parameters of the model transformers builds on the
meta device for each file of tests/fixtures/hf_configs_modern/, and the active count derived
from the routed-expert tensors that model holds (total - experts x (E - k) / E).
"""

import hashlib
import json
from pathlib import Path

import pytest

from sizing.formulas.params import active_params, total_params
from sizing.inputs.config import ConfigError
from sizing.inputs.hf.read import from_hf_config

FIXTURES = Path(__file__).parent / "fixtures"
CONFIG_DIR = FIXTURES / "hf_configs_modern"
COUNTED = json.loads((FIXTURES / "hf_counts_modern.json").read_text())
COUNTS = COUNTED["counts"]
FILES = sorted(CONFIG_DIR.glob("*.json"))


def hf(name: str) -> dict:
    return json.loads((CONFIG_DIR / f"{name}.json").read_text())


def test_counts_name_their_transformers_version_and_cover_every_file():
    assert COUNTED["transformers"] == "5.24.0" and "5.24.0" in COUNTED["_source"]
    assert {p.stem for p in FILES} == set(COUNTS)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_total_and_active_equal_transformers(path):
    counted = COUNTS[path.stem]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == counted["sha256"]  # the counts are of this file
    cfg = from_hf_config(json.loads(path.read_text()))
    assert total_params(cfg) == counted["total"]
    assert active_params(cfg) == counted["active"]
    assert cfg.n_moe_layers == counted["moe_layers"]


def test_every_new_model_type_has_a_fixture():
    types = {COUNTS[p.stem]["model_type"] for p in FILES}
    assert types >= {
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
    }
    assert {json.loads(p.read_text())["model_type"] for p in FILES} >= {"gemma3", "llama4"}  # via text_config


def test_patterns_read_from_the_files():
    v3 = from_hf_config(hf("deepseek-ai__DeepSeek-V3"))
    assert (v3.kv_lora_rank, v3.q_lora_rank, v3.first_dense_layers, v3.n_shared_experts) == (512, 1536, 3, 1)
    lite = from_hf_config(hf("deepseek-ai__DeepSeek-V2-Lite"))
    assert lite.q_lora_rank is None and lite.n_moe_layers == 26
    scout = from_hf_config(hf("meta-llama__Llama-4-Scout-17B-16E"))
    assert (scout.attention_chunk, scout.full_attention_every, scout.nope_layer_every) == (8192, 4, 4)
    assert scout.qk_norm == "unweighted" and scout.moe_layer_step == 1
    maverick = from_hf_config(hf("meta-llama__Llama-4-Maverick-17B-128E"))
    assert maverick.moe_layer_step == 2 and maverick.d_ff == 16384 and maverick.expert_ff == 8192
    gemma3 = from_hf_config(hf("google__gemma-3-27b-pt"))
    assert (gemma3.sliding_window, gemma3.full_attention_every, gemma3.norm_placement) == (1024, 6, "sandwich")
    oss = from_hf_config(hf("openai__gpt-oss-20b"))
    assert oss.attention_sinks and oss.router_bias and oss.full_attention_every == 2
    toy = from_hf_config(hf("toy__qwen3_moe-first-dense-step2"))
    assert (toy.first_dense_layers, toy.moe_layer_step) == (2, 2)
    assert [i for i in range(6) if toy.is_moe_layer(i)] == [3, 5]


def test_four_and_five_spellings_agree():
    four = dict(hf("Qwen__Qwen3-8B"), rope_theta=1e6)
    five = {k: v for k, v in four.items() if k not in ("rope_theta", "rope_scaling")}
    five["rope_parameters"] = {"rope_type": "default", "rope_theta": 1e6}
    assert from_hf_config(four) == from_hf_config(five)


@pytest.mark.parametrize("model_type", ["mamba", "zamba2", "rwkv"])
def test_hybrids_are_refused_with_the_reason(model_type):
    with pytest.raises(ConfigError, match=rf"model_type '{model_type}' is not supported: .*(state-space|hybrid|recur)"):
        from_hf_config({"model_type": model_type, "hidden_size": 64})


@pytest.mark.parametrize(
    ("model_type", "command"),
    [
        ("jamba", "hybrid"),
        ("qwen3_next", "hybrid"),
        ("mamba2", "hybrid"),
        ("llava", "vision"),
        ("qwen2_5_vl", "vision"),
    ],
)
def test_models_another_command_sizes_are_refused_naming_it(model_type, command):
    with pytest.raises(ConfigError, match=rf"model_type '{model_type}' is not a stack .*`sizing {command} --config`"):
        from_hf_config({"model_type": model_type, "hidden_size": 64})


_CANNOT = [
    ("deepseek-ai__DeepSeek-V3", {"moe_layer_freq": 2}, "moe_layer_freq"),
    ("deepseek-ai__DeepSeek-V3", {"num_key_value_heads": 8}, "num_key_value_heads"),
    ("Qwen__Qwen3-30B-A3B", {"mlp_only_layers": [4]}, "mlp_only_layers"),
    ("Qwen__Qwen3-8B", {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 20}, "sliding"),
    ("google__gemma-2-9b", {"layer_types": ["full_attention"] * 40 + ["sliding_attention"] * 2}, "layer_types"),
    ("google__gemma-2-9b", {"use_bidirectional_attention": True}, "bidirectional"),
    ("toy__llama4_text-moe-layers-5x", {"moe_layers": [0, 5]}, "moe_layers"),
    ("toy__llama4_text-moe-layers-5x", {"no_rope_layers": [0, 1, 1, 1, 1, 1]}, "no_rope_layers"),
]


@pytest.mark.parametrize(("name", "change", "field"), _CANNOT, ids=[c[2] for c in _CANNOT])
def test_fields_that_cannot_be_honoured_are_errors(name, change, field):
    with pytest.raises(ConfigError, match=field):
        from_hf_config(dict(hf(name), **change))


def test_a_multimodal_config_needs_its_text_config():
    with pytest.raises(ConfigError, match="text_config"):
        from_hf_config({"model_type": "llama4"})
    bad = dict(hf("google__gemma-3-27b-pt"))
    bad["text_config"] = dict(bad["text_config"], model_type="llama4_text")
    with pytest.raises(ConfigError, match=r"text_config\.model_type"):
        from_hf_config(bad)
