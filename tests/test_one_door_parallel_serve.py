"""One door for `sizing parallel` and `sizing serve`: a hybrid, a vision-language model, Gemma 3n or
any model_type transformers knows, as a preset or a config.json, goes through sizing.cli.any_model as
`estimate` and `memory` do. Hybrids and VLMs are laid out tensor by tensor (HybridConfig,
VisionConfig) and served on the step model; a model counted whole is trained data-parallel with
ZeRO / FSDP (sizing.whole.parallel) and served on one GPU per replica (sizing.serve.whole)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.hybrid import HYBRID_PRESETS
from sizing.inputs import get_gpu
from sizing.serve import serve_hybrid, serve_vlm
from sizing.serve.calibration import serve_efficiency
from sizing.vision import VISION_PRESETS

QWEN_VL_PARAMS = 8_292_166_656  # tests/test_one_door.py: the language model, tower and projector


def run_json(*args: str, codes=(0,)) -> dict:
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    assert out.exit_code in codes, out.output
    return json.loads(out.output)


def _written(tmp_path, data: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_parallel_of_a_hybrid_config_is_its_presets(tmp_path):
    """Nemotron-H-8B's config.json answers as its preset does: the same HybridConfig, the same plan."""
    preset = next(p for p in HYBRID_PRESETS if p.name == "nemotron-h-8b")
    args = ("-T", "4096", "--dp", "8", "--zero", "1", "--gpu", "h100")
    by_preset = run_json("parallel", "--preset", preset.name, *args)
    by_config = run_json("parallel", "--config", _written(tmp_path, preset.hf_config), *args)
    assert by_config["per_gpu"] == by_preset["per_gpu"] and by_config["step_seconds"] == by_preset["step_seconds"]


def test_parallel_of_a_vlm_holds_the_tower_and_projector():
    """Qwen2.5-VL-7B on dp 8, ZeRO-1, bf16-mixed AdamW: every GPU holds all 8,292,166,656 parameters
    (the tower and projector on the first and only stage) in bf16, their gradients as megatron-core
    keeps them (fp32: 4 bytes), and 12 / 8 bytes of optimizer state each."""
    plan = run_json("parallel", "--preset", "qwen2.5-vl-7b", "-T", "4096", "--dp", "8", "--zero", "1")
    per_gpu = plan["per_gpu"]
    assert per_gpu["weights_bytes"] == 2 * QWEN_VL_PARAMS == 16_584_333_312
    assert per_gpu["gradients_bytes"] == 4 * QWEN_VL_PARAMS
    assert per_gpu["optimizer_bytes"] == 12 * QWEN_VL_PARAMS // 8 == 12_438_249_984


def test_serve_of_a_hybrid_config_is_its_presets(tmp_path):
    preset = next(p for p in HYBRID_PRESETS if p.name == "nemotron-h-8b")
    args = ("--prompt", "4096", "--output", "256", "--batch", "4", "--gpu", "h100")
    result = run_json("serve", "--config", _written(tmp_path, preset.hf_config), *args)
    expected = serve_hybrid("nemotron-h-8b", 4096, 256, batch=4, gpu="h100")
    assert result["kind"] == "hybrid" and result["memory_bytes_per_gpu"] == expected.memory
    assert result["ttft_seconds"] == expected.ttft_seconds and result["tpot_seconds"] == expected.tpot_seconds


def test_serve_of_the_hubs_qwen2_5_vl_layout(tmp_path):
    """The hub's layout (text fields at the top level, vision_config nested) serves as the preset."""
    nested = next(p for p in VISION_PRESETS if p.name == "qwen2.5-vl-7b").hf_config
    hub = {**nested["text_config"], "model_type": "qwen2_5_vl", "vision_config": nested["vision_config"]}
    args = ("--prompt", "1000", "--output", "200", "--images", "2", "--image-size", "1024x768")
    result = run_json("serve", "--config", _written(tmp_path, hub), *args)
    expected = serve_vlm("qwen2.5-vl-7b", 1000, 200, images=2, image_size=(1024, 768), gpu="h100")
    assert result["kind"] == "vlm" and result["prompt_tokens"] == expected.prompt
    assert result["ttft_seconds"] == pytest.approx(expected.ttft_seconds, rel=1e-12)


def test_serve_refuses_what_a_whole_model_does_not_honour():
    jamba = ["serve", "--preset", "jamba-v0.1", "--prompt", "64", "--output", "8"]
    out = CliRunner().invoke(main, [*jamba, "--rate", "2"])
    assert out.exit_code == 2 and "--rate" in out.output and out.output.count("\n") == 1
    out = CliRunner().invoke(main, [*jamba, "--images", "1"])
    assert out.exit_code == 2 and "vision-language" in out.output


# ---- Gemma 3n and the generic path (the `hf` extra)
@pytest.fixture(scope="module")
def seed_oss(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    data = transformers.AutoConfig.for_model("seed_oss", num_hidden_layers=2).to_dict()
    path = tmp_path_factory.mktemp("seed") / "config.json"
    path.write_text(json.dumps(dict(data, model_type="seed_oss")))
    return path


def test_parallel_of_a_model_counted_whole_is_data_parallel(seed_oss):
    """ZeRO-3 over 8 GPUs: 16 bytes per parameter (bf16 weights and gradients, fp32 master, 2 moments)
    sharded 8 ways; no tensor or pipeline parallelism (refused when asked)."""
    plan = run_json("parallel", "--config", str(seed_oss), "-T", "256", "--gpus", "8", "--zero", "3")
    n = run_json("estimate", "--config", str(seed_oss), "--seq-len", "256")["params"]["total"]
    assert plan["layout"] == {"dp": 8, "zero": 3, "tp": 1, "pp": 1, "cp": 1, "ep": 1}
    assert plan["per_gpu"]["model_states_bytes"] == 16 * n // 8
    assert plan["step_seconds"] > 0 and plan["global_batch"] % 8 == 0
    out = CliRunner().invoke(main, ["parallel", "--config", str(seed_oss), "-T", "256", "--tp", "2"])
    assert out.exit_code == 2 and "--tp" in out.output and "data-parallel" in out.output


def test_serve_of_a_model_counted_whole(seed_oss):
    """Seed-OSS cut to 2 layers, batch 2, prompt 256, output 64: the weights in bf16, K and V of 2
    layers x 8 heads x 128 dims at 320 positions for 2 sequences; each decode step reads at least
    every weight at the GPU's calibrated bandwidth."""
    from transformers import AutoConfig

    cfg = AutoConfig.for_model("seed_oss", num_hidden_layers=2)
    result = run_json("serve", "--config", str(seed_oss), "--prompt", "256", "--output", "64", "--batch", "2")
    n = run_json("estimate", "--config", str(seed_oss), "--seq-len", "256")["params"]["total"]
    memory = result["memory_bytes_per_gpu"]
    assert memory["weights"] == 2 * n
    kv = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * cfg.head_dim * 2  # K and V, bf16, per position
    assert memory["kv_cache"] == 2 * 320 * kv and memory["state"] == 0
    h100 = get_gpu("h100")
    floor = 2 * n / (h100.hbm_bytes_per_second * serve_efficiency("h100").bandwidth)
    assert floor < result["tpot_seconds"] < 2 * floor + 1e-3
    assert result["ttft_seconds"] > 0 and result["fits"] is True
    out = CliRunner().invoke(main, ["serve", "--config", str(seed_oss), "--prompt", "64", "--output", "8", "--tp", "2"])
    assert out.exit_code == 2 and "--tp" in out.output


def test_gemma3n_is_served_and_trained_whole(tmp_path):
    transformers = pytest.importorskip("transformers")
    data = dict(transformers.AutoConfig.for_model("gemma3n_text").to_dict(), model_type="gemma3n_text")
    path = _written(tmp_path, data)
    served = CliRunner().invoke(main, ["serve", "--config", path, "--prompt", "512", "--output", "64"])
    trained = CliRunner().invoke(main, ["parallel", "--config", path, "-T", "1024", "--gpus", "8"])
    assert served.exit_code == 0 and "time per output token" in served.output, served.output
    assert trained.exit_code in (0, 3) and "ZeRO" in trained.output, trained.output


@pytest.mark.parametrize("name", ["jamba-v0.1", "qwen2.5-vl-7b"])
def test_memory_inference_of_a_config_is_its_presets(tmp_path, name):
    """`memory --inference --config` of a hybrid or VLM answers as its preset (the same route)."""
    preset = next(p for p in (*HYBRID_PRESETS, *VISION_PRESETS) if p.name == name)
    args = ("memory", "--inference", "--context", "8192", "--batch", "2")
    by_preset = run_json(*args, "--preset", name, codes=(0, 3))
    by_config = run_json(*args, "--config", _written(tmp_path, preset.hf_config), codes=(0, 3))
    for result in (by_preset, by_config):
        result.pop("model", None)
        result.pop("name", None)
    assert by_config == by_preset


def test_a_counted_models_mtp_modules_are_said(tmp_path):
    """A generic-path config stating num_nextn_predict_layers: transformers' Seed-OSS builds no MTP
    module, so the output says they are in no number (the total is the model's without them)."""
    transformers = pytest.importorskip("transformers")
    data = transformers.AutoConfig.for_model("seed_oss", num_hidden_layers=2).to_dict()
    plain = run_json("estimate", "--config", _written(tmp_path, dict(data, model_type="seed_oss")), "-T", "64")
    (tmp_path / "mtp").mkdir()
    stated = dict(data, model_type="seed_oss", num_nextn_predict_layers=2)
    result = run_json("estimate", "--config", _written(tmp_path / "mtp", stated), "-T", "64")
    assert result["params"]["total"] == plain["params"]["total"]
    assert result["model"]["details"]["mtp_modules"] == 2 and result["model"]["details"]["mtp_params_built"] == 0
    assert any(
        "2 multi-token-prediction module(s)" in note and "in no number" in note for note in result["model"]["notes"]
    )
