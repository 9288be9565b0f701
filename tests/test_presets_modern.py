"""The modern presets (sizing/data/presets.json): exact against transformers, and within the
rounding of the published figures (the rounding is the figure's own: "671B" is +-0.5B,
"20.91B" +-0.005B; a source that truncates is checked as published <= ours < published + unit)."""

import json
from decimal import Decimal
from pathlib import Path

import pytest

from sizing.formulas.params import active_params, token_embedding_params, total_params
from sizing.inputs.presets import PRESETS, published_value

FIXTURES = Path(__file__).parent / "fixtures"
COUNTS = json.loads((FIXTURES / "hf_counts_modern.json").read_text())["counts"]
COUNTS |= json.loads((FIXTURES / "hf_counts_2025.json").read_text())["counts"]  # tests/test_hf_2025.py
MODERN = [p for p in PRESETS.values() if p.published is not None]
NAMES = {
    "deepseek-v3",
    "deepseek-v2-lite",
    "qwen3-8b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "qwen1.5-moe-a2.7b",
    "gemma-2-9b",
    "gemma-2-27b",
    "gemma-3-27b",
    "llama-4-scout",
    "llama-4-maverick",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "phi-3-mini",
    "olmo-2-7b",
    "kimi-k2",
    "glm-4.5-air",
    "minimax-m2",
}


def unit(text: str) -> Decimal:
    """The place of the last significant printed digit: "671B" -> 1e9, "400B" -> 1e11, "2.4B" -> 1e8."""
    scale = {"T": Decimal(10) ** 12, "B": Decimal(10) ** 9, "M": Decimal(10) ** 6}[text[-1]]
    digits = text[:-1].replace(",", "")
    if "." in digits:
        return scale / Decimal(10) ** len(digits.split(".")[1])
    trailing = len(digits) - len(digits.rstrip("0"))
    return scale * Decimal(10) ** trailing


def agrees(ours: int, text: str, rounding: str) -> bool:
    published, step = Decimal(str(published_value(text))), unit(text)
    if rounding == "truncate":
        return published <= ours < published + step
    return abs(ours - published) <= step / 2


def test_the_issue_lists_every_modern_preset():
    assert {p.name for p in MODERN} == NAMES


@pytest.mark.parametrize("preset", MODERN, ids=lambda p: p.name)
def test_total_and_active_equal_transformers(preset):
    counted = COUNTS[preset.hf_id.replace("/", "__")]
    assert total_params(preset.config) == counted["total"]
    assert active_params(preset.config) == counted["active"]


@pytest.mark.parametrize("preset", MODERN, ids=lambda p: p.name)
def test_published_figures_agree_to_their_rounding(preset):
    pub, counted = preset.published, COUNTS[preset.hf_id.replace("/", "__")]
    total = counted["multimodal_total"] if pub.total_counts == "with_vision" else total_params(preset.config)
    assert agrees(total, pub.total, pub.rounding), (total, pub.total)
    assert preset.published_params_rounded == published_value(pub.total)
    if pub.active is not None:
        active = active_params(preset.config)
        if pub.active_counts == "active_without_embedding":
            active -= token_embedding_params(preset.config)
        assert agrees(active, pub.active, pub.rounding), (active, pub.active)


def test_rounding_rules():
    assert unit("671B") == 10**9 and unit("400B") == 10**11 and unit("20.91B") == 10**7
    assert agrees(671_026_404_352, "671B", "round") and not agrees(671_600_000_000, "671B", "round")
    assert agrees(3_353_032_704, "3.3B", "truncate") and not agrees(3_353_032_704, "3.3B", "round")


def test_deepseek_v3_in_numbers():
    cfg = PRESETS["deepseek-v3"].config
    assert (cfg.n_moe_layers, cfg.n_dense_layers) == (58, 3)
    # one MoE layer: router 7168·256 + 256 experts and 1 shared, each 3·7168·2048
    assert active_params(cfg) == 37_552_282_624
    assert total_params(cfg) - active_params(cfg) == (256 - 8) * 3 * 7168 * 2048 * 58
