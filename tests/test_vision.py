"""Vision-language models (sizing.vision.model, vision_hf, vision_prefill) against transformers.

Ground truth: tests/fixtures/hf_counts_vision.json (tools/hf_counts_vision.py) and, for the whole
configs of Gemma-3-27B and Llama-4, `multimodal_total` in tests/fixtures/hf_counts_modern.json
(tools/hf_counts_modern.py): AutoModelForImageTextToText on the meta device, transformers 5.24.0.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.formulas.flops import flop_breakdown
from sizing.formulas.params import total_params
from sizing.inputs.config import ConfigError
from sizing.validate import SizingError
from sizing.vision.hf import vlm_from_hf_config
from sizing.vision.model import parse_image_size
from sizing.vision.prefill import prefill_with_images, vlm_params
from sizing.vision.presets import VISION_PRESETS, vision_preset

FIXTURES = Path(__file__).parent / "fixtures"
COUNTED = json.loads((FIXTURES / "hf_counts_vision.json").read_text())
MODERN = json.loads((FIXTURES / "hf_counts_modern.json").read_text())["counts"]


def test_fixture_covers_every_preset():
    assert COUNTED["transformers"] == "5.24.0"
    assert set(COUNTED["counts"]) == {p.name for p in VISION_PRESETS}


@pytest.mark.parametrize("preset", VISION_PRESETS, ids=lambda p: p.name)
def test_whole_model_equals_transformers(preset):
    counted = COUNTED["counts"][preset.name]
    assert counted["hf_config"] == json.loads(json.dumps(preset.hf_config))
    text, vision = vlm_from_hf_config(preset.hf_config)
    parts = vlm_params(text, vision)
    assert parts["total"] == counted["total"] == sum(v for k, v in parts.items() if k != "total")
    assert vision.total() == counted["vision"] == parts["vision_tower"] + parts["projector"]
    assert abs(parts["total"] / preset.published_total - 1) <= preset.rounding  # published, within its rounding


@pytest.mark.parametrize(
    "stem", ["google__gemma-3-27b-pt", "meta-llama__Llama-4-Scout-17B-16E", "meta-llama__Llama-4-Maverick-17B-128E"]
)
def test_whole_configs_of_the_modern_fixture(stem):
    d = json.loads((FIXTURES / "hf_configs_modern" / f"{stem}.json").read_text())
    text, vision = vlm_from_hf_config(d)
    assert total_params(text) == MODERN[stem]["total"]  # the text-only sizing, as sizing estimate gives it
    assert vlm_params(text, vision)["total"] == MODERN[stem]["multimodal_total"]


def test_gemma3_siglip_by_hand():
    # SigLIP-So400m at 896 px: h 1152, i 4304, 27 blocks, 64 x 64 patches of 14 px
    _, v = vlm_from_hf_config(vision_preset("gemma-3-4b").hf_config)
    h, i = 1152, 4304
    block = 4 * (h * h + h) + (h * i + i) + (i * h + h) + 2 * 2 * h
    assert v.tower.params() == {
        "vision.patch_embed": 3 * 14 * 14 * h + h,
        "vision.positions": 4096 * h,
        "vision.attn": 27 * 4 * (h * h + h),
        "vision.mlp": 27 * ((h * i + i) + (i * h + h)),
        "vision.norms": 27 * 4 * h,
        "vision.outer_norms": 2 * h,
    }
    assert sum(v.tower.params().values()) == 27 * block + 3 * 14 * 14 * h + h + 4096 * h + 2 * h
    assert v.projector_params() == {"projector.mm_input_projection": h * 2560, "projector.mm_soft_emb_norm": h}
    # 256 tokens per image (4 x 4 average pooling of the 64 x 64 grid)
    assert v.image_tokens(896, 896) == v.image_tokens(300, 2000) == 256
    keys = 4096  # bidirectional: every patch meets the 4096 of its image
    flops = 2 * 3 * 196 * h * 4096 + 27 * 4096 * 2 * (4 * h * h + 2 * h * i) + 27 * 2 * 2 * h * 4096 * keys
    assert v.tower.encoder_flops(4096) == flops
    assert v.image_flops(896, 896) == flops + 2 * h * 2560 * 256


def test_image_tokens_by_family():
    _, llava = vlm_from_hf_config(vision_preset("llava-1.5-7b").hf_config)
    assert llava.image_tokens(1000, 500) == (336 // 14) ** 2 == 576  # resized to 336; CLS dropped
    _, qwen = vlm_from_hf_config(vision_preset("qwen2.5-vl-7b").hf_config)
    # 1080 -> 1092 (39 x 28), 1920 -> 1932 (69 x 28): 78 x 138 patches, merged 2 x 2
    assert qwen.image_tokens(1080, 1920) == 78 * 138 // 4 == 2691
    _, scout = vlm_from_hf_config(vision_preset("llama-4-scout-full").hf_config)
    assert scout.image_tokens(336, 336) == 576 // 4 == 144  # one tile, pixel shuffle 0.5
    assert scout.image_tokens(672, 1008) == (6 + 1) * 144  # 2 x 3 tiles + the global view


def test_qwen_window_attention_flops():
    _, qwen = vlm_from_hf_config(vision_preset("qwen2.5-vl-7b").hf_config)
    t = qwen.tower
    N = 1024
    # 4 full-attention blocks see all N patches, 28 windowed ones the 8 x 8 = 64 of their window
    attention = 2 * 2 * 1280 * N * (4 * N + 28 * 64)
    weights = 32 * N * 2 * (4 * 1280 * 1280 + 3 * 1280 * 3420)
    assert t.encoder_flops(N) == 2 * 3 * 2 * 14 * 14 * 1280 * N + weights + attention


def test_prefill_with_images_adds_tokens_and_encoder():
    text, v = vlm_from_hf_config(vision_preset("llava-1.5-7b").hf_config)
    out = prefill_with_images(text, v, 100, 2, 336, 336)
    assert out["sequence_tokens"] == 100 + 2 * 576
    assert out["text_forward_flops"] == flop_breakdown(text, 1252, "causal").forward
    assert out["prefill_flops"] == out["text_forward_flops"] + 2 * v.image_flops(336, 336)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (dict(vision_config="x"), "vision_config"),
        (dict(model_type="idefics3"), "model_type"),
        (dict(mm_tokens_per_image=200), "mm_tokens_per_image"),
    ],
)
def test_refused_naming_the_field(change, field):
    with pytest.raises(ConfigError, match=field):
        vlm_from_hf_config(dict(vision_preset("gemma-3-4b").hf_config, **change))


@pytest.mark.parametrize("text", ["12x", "axb", "0x5", "896"])
def test_bad_image_size(text):
    with pytest.raises(SizingError, match="--image-size"):
        parse_image_size(text)


def test_cli():
    out = CliRunner().invoke(main, ["vision", "--preset", "gemma-3-27b-full", "--format", "json"])
    assert out.exit_code == 0, out.output
    s = json.loads(out.output)
    assert s["params"]["total"] == 27_432_406_640 and s["text_only_params"] == 27_009_346_304
    bad = CliRunner().invoke(main, ["vision", "--preset", "gemma-3-4b", "--image-size", "12x"])
    assert bad.exit_code == 2 and bad.output.startswith("Error: --image-size") and bad.output.count("\n") == 1


def test_estimate_sizes_a_whole_config_whole():
    """The whole Gemma-3 config: every part counted, equal to transformers' image-text model."""
    path = FIXTURES / "hf_configs_modern" / "google__gemma-3-27b-pt.json"
    out = CliRunner().invoke(main, ["estimate", "--config", str(path), "--seq-len", "4096", "--format", "json"])
    assert out.exit_code == 0, out.output
    counted = json.loads((FIXTURES / "hf_counts_modern.json").read_text())["counts"]["google__gemma-3-27b-pt"]
    result = json.loads(out.output)
    assert result["model"]["kind"] == "vision-language"
    assert result["params"]["total"] == counted["multimodal_total"] == 27_432_406_640
    plain = FIXTURES / "hf_configs_modern" / "Qwen__Qwen3-8B.json"
    out = CliRunner().invoke(main, ["estimate", "--config", str(plain), "--seq-len", "4096", "--format", "json"])
    assert "kind" not in json.loads(out.output)["model"]  # a stack: the formulas' own estimate
