"""What the page shows of an answer, without a browser: each card's value is the CLI's JSON at
the card's path, a card's band is the JSON's, the memory bar's parts add up to the JSON's
per-GPU total plus the runtime reserve, every key of an answer gets words and a unit, a hub id
is read as --config reads one, and /api/lists describes every question's form."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.ui.api import ENDPOINTS, ApiError, answer, command_args, js_safe, lists
from sizing.ui.cards import band, get
from sizing.ui.fields import fields, label, unit

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "hf_configs"

# the questions the page's journeys ask (tests/test_ui_journeys.py walks them in a browser)
# fmt: off
QUESTIONS = {
    "training budget": ("estimate", [("preset", "llama3-8b"), ("tokens", "15T"), ("gpus", "1024"), ("price", "2.5")]),
    "fit on one GPU": ("memory", [("preset", "llama3-8b"), ("gpu", "h100-sxm")]),
    "qlora on one GPU": ("memory", [("preset", "llama3-8b"), ("gpu", "rtx4090"), ("finetune", "qlora")]),
    "layout for 2048 GPUs": ("parallel", [("preset", "llama3-70b"), ("gpus", "2048"), ("tokens", "15T")]),
    "capacity for a rate": ("serve", [("preset", "llama3-8b"), ("prompt", "1024"), ("output", "256"), ("rate", "10"),
                                      ("slo-ttft", "2s"), ("slo-tpot", "50ms")]),
    "serving one batch": ("serve", [("preset", "llama3-8b"), ("prompt", "4096"), ("output", "256"), ("tp", "2")]),
    "quantized on one GPU": ("memory", [("preset", "llama3-8b"), ("inference", "1"), ("quant", "q4_k_m"),
                                        ("gpu", "rtx4090")]),
    "engine split": ("memory", [("preset", "llama3-8b"), ("inference", "1"), ("engine", "vllm")]),
    "hybrid long context": ("hybrid", [("preset", "jamba-v0.1"), ("context", "262144"), ("gpu", "h200")]),
    "vision-language": ("vision", [("preset", "qwen2.5-vl-7b"), ("images", "2")]),
    "plan": ("plan", [("flops", "1e24")]),
    "compare": ("compare", [("preset", "llama2-7b"), ("preset", "mixtral-8x7b")]),
    "speculate": ("speculate", [("preset", "llama2-70b"), ("draft", "llama2-7b")]),
    "serve layouts": ("serve-layout", [("preset", "llama3-70b"), ("gpus", "8")]),
    "sweep": ("sweep", [("preset", "llama2-7b"), ("set", "n_layers=24,32")]),
}
# fmt: on


def cli_json(args: list[str]):
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    assert out.exit_code in (0, 3), out.output
    return js_safe(json.loads(out.stdout))


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_each_card_is_the_cli_json_at_its_path(name):
    endpoint, pairs = QUESTIONS[name]
    expected = cli_json(command_args(endpoint, pairs))
    got = answer(endpoint, pairs)
    assert got["cards"], name
    for card in got["cards"]:
        assert card["value"] == get(expected, card["path"]), (name, card)
        assert card["value"] is not None and card["label"] and card["unit"]
        if card["band"] is not None:  # the step model's band, as the JSON states it
            assert (card["band"], card["band_path"]) == band(expected, card["path"])
            assert card["band"][0] <= card["value"] <= card["band"][1] or card["unit"] == "ratio"
    assert set(got["fields"]) == {path for path, _ in _leaves(expected)}


def _leaves(value, prefix=""):
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        return [leaf for key, item in items for leaf in _leaves(item, f"{prefix}.{key}" if prefix else str(key))]
    return [(prefix, value)]


def test_the_cards_answer_what_each_question_asks():
    """The issue's list: estimate (params, tokens, GPU-hours, days, $, energy), parallel (layout,
    step, MFU, days, per-GPU memory), serve (TTFT, TPOT, tok/s, $/M; for a rate GPUs and replicas)."""

    def paths(name):
        return {c["path"] for c in answer(*QUESTIONS[name])["cards"]}

    assert {"params.total", "training.tokens", "training.gpu_hours", "training.wall_clock_days", "training.cost_usd",
            "training.energy_kwh"} <= paths("training budget")  # fmt: skip
    assert {"layout_label", "step_seconds", "mfu", "wall_clock_days", "per_gpu_bytes"} <= paths("layout for 2048 GPUs")
    assert {"latency.ttft_seconds", "latency.tpot_seconds", "throughput.output_tokens_per_second",
            "cost.usd_per_million_output_tokens"} <= paths("serving one batch")  # fmt: skip
    assert {"best.gpus", "best.replicas", "best.usd_per_million_output_tokens"} <= paths("capacity for a rate")


def test_a_band_is_read_from_the_json_never_made():
    result = {"step_seconds": 2.0, "step": {"band": {"low_seconds": 1.5, "high_seconds": 2.5}, "mfu_band": [0.3, 0.5]},
              "gpu_hours": 10.0, "gpu_hours_band": [8.0, 13.0], "mfu": 0.4}  # fmt: skip
    assert band(result, "step_seconds") == ([1.5, 2.5], "step.band")
    assert band(result, "gpu_hours") == ([8.0, 13.0], "gpu_hours_band")
    assert band(result, "mfu") == ([0.3, 0.5], "step.mfu_band")
    assert band({"mfu": 0.4}, "mfu") == (None, None)


@pytest.mark.parametrize("name", ["fit on one GPU", "qlora on one GPU", "layout for 2048 GPUs", "quantized on one GPU",
                                  "serving one batch", "hybrid long context"])  # fmt: skip
def test_the_memory_bar_adds_up_to_the_json(name):
    endpoint, pairs = QUESTIONS[name]
    got = answer(endpoint, pairs)
    result, bar = got["result"], got["bar"]
    parts = sum(segment["value"] for segment in bar["segments"])
    assert all(get(result, s["path"]) == s["value"] > 0 for s in bar["segments"])
    assert bar["capacity"]["value"] == get(result, bar["capacity"]["path"])
    if "per_gpu_bytes" in result:  # training: the per-GPU parts and the runtime reserve
        assert parts == result["per_gpu_bytes"] + result["runtime_reserve_bytes"]
    elif "peak_bytes" in result:  # inference: weights + KV cache + prefill peak, and the reserve
        assert parts == result["peak_bytes"] + result["runtime_reserve_bytes"]
    elif "memory_bytes" in result:  # hybrid: weights, KV cache and the states
        assert parts == result["memory_bytes"]["total"]
    else:  # serve: weights, KV cache and the prefill peak of one GPU
        assert parts == result["memory"]["total_bytes_per_gpu"]


def test_the_advice_is_the_answers_own_words():
    got = answer(*QUESTIONS["fit on one GPU"])
    assert got["verdict"] is False
    assert got["advice"] == [got["result"]["reason"], *got["result"]["would_fit"]] and len(got["advice"]) > 1


@pytest.mark.parametrize(
    ("path", "words", "kind"),
    [
        ("per_gpu.activations_blocks_bytes", "Per GPU › activations blocks", "bytes"),
        ("params.components.attn.q", "Parameters › components › attention › Q", "params"),
        ("training.gpu_hours", "Training › GPU-hours", "hours"),
        ("training.cost_usd", "Training › cost", "usd"),
        ("latency.ttft_seconds", "Latency › time to first token", "seconds"),
        ("cost.usd_per_million_output_tokens", "Cost › $ per million output tokens", "usd"),
        ("throughput.decode_tokens_per_second", "Throughput › decode tokens per second", "tokens_per_second"),
        ("flops.components.mlp.up", "FLOPs › components › MLP › up", "flops"),
        ("flops.seq_len", "FLOPs › sequence length", "number"),
        ("training.mfu", "Training › MFU", "ratio"),
        ("layouts.0.gpus", "Layouts › #1 › GPUs", "number"),
        ("step.seconds.gemm", "Step › seconds › matmuls", "seconds"),
        ("memory_bytes.ssm_state", "Memory › SSM state", "bytes"),
        ("prefill.arithmetic_intensity_flops_per_byte", "Prefill › arithmetic intensity FLOPs per byte", "number"),
    ],
)
def test_keys_in_words_and_units(path, words, kind):
    assert (label(path), unit(path)) == (words, kind)
    assert fields({"a": 1}) == {"a": {"label": "A", "unit": "number"}}


@pytest.fixture
def offline_hub(tmp_path, monkeypatch):
    """A Hugging Face cache holding meta-llama/Llama-3.1-8B's config.json (tests/test_hub.py's layout), offline."""
    from test_hub import _cache

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return _cache(tmp_path / "hub", "meta-llama/Llama-3.1-8B", FIX / "meta-llama__Llama-3.1-8B.json")


def test_a_hub_id_is_read_as_config_reads_it(offline_hub):
    got = answer("estimate", [("hub", "meta-llama/Llama-3.1-8B"), ("memory", "0")])
    assert got["command"] == "sizing estimate --config meta-llama/Llama-3.1-8B --no-memory --format json"
    assert got["result"] == cli_json(["estimate", "--config", "meta-llama/Llama-3.1-8B", "--no-memory"])
    assert got["result"]["params"]["total"] == 8_030_261_248  # HF model card "8B"; tests/fixtures/hf_counts.json


@pytest.mark.parametrize("text", ["../../etc/passwd", "/etc/passwd", "a/b/c", "x.json", "name"])
def test_a_hub_id_is_only_an_id(text):
    with pytest.raises(ApiError, match="must be a Hugging Face model id"):
        command_args("estimate", [("hub", text)])


def test_an_existing_path_is_never_a_hub_id(tmp_path, monkeypatch):
    (tmp_path / "owner").mkdir()
    (tmp_path / "owner" / "name").write_text("{}")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ApiError, match="must be a Hugging Face model id"):
        command_args("estimate", [("hub", "owner/name")])
    shutil.rmtree(tmp_path / "owner")
    assert command_args("estimate", [("hub", "owner/name")]) == ["estimate", "--config", "owner/name"]


def test_the_lists_describe_every_questions_form():
    data = lists()
    assert set(data["options"]) == set(data["models"]) == set(ENDPOINTS)
    assert [p["name"] for p in data["hybrid_presets"]][:2] == ["mamba2-2.7b", "jamba-v0.1"]
    models = data["models"]
    assert (models["hybrid"]["presets"], models["vision"]["presets"]) == ("hybrid_presets", "vision_presets")
    assert models["compare"]["multiple"] and not models["estimate"]["multiple"]
    assert models["plan"] == {"presets": None, "multiple": False, "config": False, "set": False, "set_help": None}
    for endpoint, options in data["options"].items():
        for option in options:  # every option has words and the rule the form disables it by
            assert option["label"] and isinstance(option["needs"], list), (endpoint, option["key"])
    memory = {o["key"]: o for o in data["options"]["memory"]}
    assert memory["finetune"]["needs"] == ["!inference"] and memory["context"]["needs"] == ["inference"]
    assert memory["weight-dtype"]["needs"] == ["inference", "!quant"]
    serve = {o["key"]: o for o in data["options"]["serve"]}
    assert serve["batch"]["needs"] == ["!rate"] and serve["slo-ttft"]["needs"] == ["rate"]
    json.dumps(data, allow_nan=False)


def test_the_capacity_question_is_an_answer_with_its_own_verdict():
    got = answer(*QUESTIONS["capacity for a rate"])
    assert got["verdict"] is (got["result"]["best"] is not None) is True
    assert got["verdict_label"] == "some layout serves the rate within the latency bounds"


def test_plan_shapes_are_named_by_size():
    shapes = answer("plan", [("flops", "1e24")])["result"]["shapes"]
    # 1e24 FLOPs: three shapes near N_opt ~ 96B, named by their own size, not by a small model's
    assert [s["label"] for s in shapes] == ["96.2B deep", "96.4B balanced", "95.8B wide"]
    assert all("GPT-2" not in s["label"] for s in shapes)
    assert shapes[0]["aspect"].startswith("d_model / layers 74 (aimed at 64")


def test_a_layout_in_words():
    from sizing.ui.cards import layout_words

    assert layout_words({"dp": 1, "tp": 1, "pp": 1, "cp": 1, "ep": 1}) == "one GPU"
    assert layout_words({"dp": 512, "tp": 4, "fsdp": "full", "sequence_parallel": True}) == (
        "512 data-parallel (FSDP full) × 4 tensor-parallel (sequence parallel)"
    )
    assert layout_words({"dp": 8, "tp": 8, "pp": 4, "zero": 1, "pp_schedule": "1f1b", "micro_batches": 16}) == (
        "8 data-parallel (ZeRO-1) × 8 tensor-parallel × 4 pipeline stages (1f1b, 16 micro-batches)"
    )


@pytest.mark.parametrize(
    ("endpoint", "key"),
    [("serve", "trace"), ("parallel", "calibration"), ("estimate", "config"), ("estimate", "run-remote-code")],
)
def test_an_option_that_names_a_server_file_is_never_the_webs(endpoint, key):
    """--trace, --calibration, --config read a file where the server runs: a page cannot name one; nor can
    it make the server run a repository's model code (--run-remote-code)."""
    with pytest.raises(ApiError, match=f"^{key} is not an option of `sizing {endpoint}`"):
        command_args(endpoint, [("preset", "llama2-7b"), (key, "/etc/passwd")])
    assert key not in {o["key"] for o in lists()["options"][endpoint]}
