"""One door for every architecture: `sizing estimate` and `sizing memory` take a hybrid, a
vision-language model, or any model_type transformers knows, as a preset or a config.json, directly.

Hybrids and vision-language models are sized by their own formulas (sizing.hybrid, sizing.vision):
estimate's total equals what `sizing hybrid` / `sizing vision` count, for every preset and the hub's
own file layouts. Any other model_type is counted by transformers on the meta device (the `hf`
extra), labelled so on every output; without the extra, the refusal names it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing import ModelConfig
from sizing.cli import main
from sizing.formulas import flop_breakdown
from sizing.hybrid import HYBRID_PRESETS, param_components
from sizing.vision import VISION_PRESETS, vlm_from_hf_config, vlm_params

FIXTURES = Path(__file__).parent / "fixtures"
META_LABEL = "counted by transformers on the meta device, not by formula"


def estimate_json(*args: str) -> dict:
    out = CliRunner().invoke(main, ["estimate", *args, "--format", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


@pytest.mark.parametrize("preset", HYBRID_PRESETS, ids=lambda p: p.name)
def test_estimate_sizes_every_hybrid_preset_as_sizing_hybrid_does(preset):
    result = estimate_json("--preset", preset.name, "--seq-len", "4096")
    assert result["model"]["kind"] == "hybrid"
    assert result["params"]["total"] == sum(param_components(preset.model()).values())


@pytest.mark.parametrize("preset", VISION_PRESETS, ids=lambda p: p.name)
def test_estimate_sizes_every_vision_preset_as_sizing_vision_does(preset):
    result = estimate_json("--preset", preset.name, "--seq-len", "4096")
    assert result["model"]["kind"] == "vision-language"
    assert result["params"]["total"] == vlm_params(*vlm_from_hf_config(preset.hf_config))["total"]


def test_the_hubs_qwen2_5_vl_layout_is_read(tmp_path):
    """Qwen2.5-VL's config.json on the hub: the text fields at the top level, vision_config nested."""
    nested = next(p for p in VISION_PRESETS if p.name == "qwen2.5-vl-7b").hf_config
    hub = {**nested["text_config"], "model_type": "qwen2_5_vl", "vision_config": nested["vision_config"]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(hub))
    result = estimate_json("--config", str(path), "--seq-len", "4096")
    assert result["params"]["total"] == vlm_params(*vlm_from_hf_config(nested))["total"] == 8_292_166_656


def test_memory_takes_a_vision_preset():
    out = CliRunner().invoke(main, ["memory", "--preset", "qwen2.5-vl-7b", "--seq-len", "4096", "--format", "json"])
    assert out.exit_code in (0, 3), out.output
    memory = json.loads(out.output)["memory"]
    # bf16-mixed AdamW: 2 + 2 + 12 bytes for each of 8,292,166,656 parameters
    assert memory["model_states_bytes"] == 16 * 8_292_166_656
    assert memory["activations_bytes"] > 0


def test_an_alias_names_a_known_architecture():
    """Kimi-K2's hub config says model_type kimi_k2 and architectures DeepseekV3ForCausalLM."""
    path = FIXTURES / "hf_configs_2025" / "moonshotai__Kimi-K2-Instruct.json"
    counted = json.loads((FIXTURES / "hf_counts_2025.json").read_text())["counts"][path.stem]
    result = estimate_json("--config", str(path))
    assert "kind" not in result["model"]  # a stack, sized by formula
    assert result["params"]["total"] == counted["total"] == 1_026_408_209_408
    assert result["flops"]["seq_len"] == 4096  # rope_scaling.original_max_position_embeddings


def test_set_is_refused_for_a_whole_model():
    out = CliRunner().invoke(main, ["estimate", "--preset", "jamba-v0.1", "--seq-len", "64", "--set", "n_layers=2"])
    assert out.exit_code == 2 and "--set applies to attention + MLP stacks" in out.output


# ---- the generic path (the `hf` extra)
@pytest.fixture(scope="module")
def seed_oss(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    data = transformers.AutoConfig.for_model("seed_oss", num_hidden_layers=2).to_dict()
    path = tmp_path_factory.mktemp("seed") / "config.json"
    path.write_text(json.dumps(dict(data, model_type="seed_oss")))
    return path


def test_a_type_not_modelled_is_counted_by_transformers_and_labelled(seed_oss):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model("seed_oss", num_hidden_layers=2))
    result = estimate_json("--config", str(seed_oss), "--seq-len", "128")
    assert result["model"]["label"] == META_LABEL and result["model"]["kind"] == "transformers"
    assert result["params"]["total"] == sum(p.numel() for p in model.parameters())
    # Seed-OSS is Llama with biased q, k, v: FlopCounterMode over its forward equals the `full` formula
    c = model.config
    stack = ModelConfig(
        vocab_size=c.vocab_size,
        d_model=c.hidden_size,
        n_layers=c.num_hidden_layers,
        n_heads=c.num_attention_heads,
        n_kv_heads=c.num_key_value_heads,
        head_dim=c.head_dim,
        d_ff=c.intermediate_size,
        mlp="swiglu",
        norm="rmsnorm",
        position="rope",
        qkv_bias=True,
    )
    assert result["flops"]["forward_per_token"] == flop_breakdown(stack, 128, "full").forward // 128
    table = CliRunner().invoke(main, ["estimate", "--config", str(seed_oss), "--seq-len", "128"])
    assert META_LABEL in table.output


def test_memory_inference_of_a_type_not_modelled(seed_oss):
    args = ["memory", "--config", str(seed_oss), "--inference", "--context", "256", "--batch", "2"]
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    assert out.exit_code == 0, out.output
    memory = json.loads(out.output)["memory"]
    from transformers import AutoConfig

    cfg = AutoConfig.for_model("seed_oss", num_hidden_layers=2)
    # K and V of 2 layers x 8 kv heads x 128 dims x 256 positions x 2 sequences, bf16
    assert memory["kv_cache_bytes"] == 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * cfg.head_dim * 256 * 2 * 2


def test_without_the_extra_the_refusal_names_it(seed_oss, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if transformers were not installed
    out = CliRunner().invoke(main, ["estimate", "--config", str(seed_oss), "--seq-len", "128"])
    assert out.exit_code == 2 and "pip install 'transformer-sizing[hf]'" in out.output
    assert out.output.count("\n") == 1


def test_remote_code_runs_only_with_the_flag(tmp_path):
    pytest.importorskip("transformers")
    path = tmp_path / "config.json"
    code = {"AutoConfig": "configuration_mine.MineConfig", "AutoModelForCausalLM": "modeling_mine.MineForCausalLM"}
    path.write_text(json.dumps({"model_type": "mine_unknown", "hidden_size": 64, "auto_map": code}))
    out = CliRunner().invoke(main, ["estimate", "--config", str(path), "--seq-len", "16"])
    assert out.exit_code == 2 and "--run-remote-code" in out.output and "trust_remote_code" in out.output
    marker = tmp_path / "ran"
    (tmp_path / "configuration_mine.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    out = CliRunner().invoke(main, ["estimate", "--config", str(path), "--seq-len", "16"])
    assert out.exit_code == 2 and not marker.exists()  # without the flag, nothing of the folder ran


def test_the_hubs_infinite_dt_clamp_is_read_and_no_other_infinity(tmp_path):
    """transformers saves Mamba-2's default dt clamp (0, inf) as [0.0, Infinity] (Nemotron-H, Granite
    4.0-H): that field is read; an Infinity anywhere else is refused naming its key."""
    path = FIXTURES / "hf_configs_2025" / "toy__nemotron_h-moe.json"
    assert "Infinity" in path.read_text()
    counted = json.loads((FIXTURES / "hf_counts_2025.json").read_text())["counts"][path.stem]["total"]
    assert estimate_json("--config", str(path), "--seq-len", "64")["params"]["total"] == counted == 3_346_096
    bad = tmp_path / "config.json"
    bad.write_text(path.read_text().replace('"vocab_size"', '"rope_theta": Infinity, "vocab_size"', 1))
    out = CliRunner().invoke(main, ["estimate", "--config", str(bad), "--seq-len", "64"])
    assert out.exit_code == 2 and "Infinity in 'rope_theta'" in out.output
