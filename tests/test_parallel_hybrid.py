"""Hybrids and vision-language models under a parallel layout (sizing.parallel.mixers, towers): on one
GPU every parameter is there once, as sizing.hybrid and sizing.vision count them; under tensor
parallelism each state-mixer tensor splits as Megatron-Core and vLLM shard it (by hand below)."""

from __future__ import annotations

import pytest

from sizing.hybrid import HYBRID_PRESETS, hybrid_config, param_components
from sizing.inputs import Workload
from sizing.parallel import ParallelLayout, parallel_plan
from sizing.vision import VISION_PRESETS, vision_config, vlm_from_hf_config, vlm_params


def weights_bytes(cfg, tp: int = 1, seq_len: int = 1024) -> int:
    plan = parallel_plan(cfg, ParallelLayout(tp=tp, dp=1), Workload(seq_len), gpu="h100")
    return plan.to_dict()["per_gpu"]["weights_bytes"]


@pytest.mark.parametrize("preset", HYBRID_PRESETS, ids=lambda p: p.name)
def test_one_gpu_holds_every_hybrid_parameter_once(preset):
    """bf16 weights (2 bytes each) of every tensor the layer kinds hold: sizing.hybrid's exact total."""
    m = preset.model()
    assert weights_bytes(hybrid_config(m)) == 2 * sum(param_components(m).values())


@pytest.mark.parametrize("preset", VISION_PRESETS, ids=lambda p: p.name)
def test_one_gpu_holds_the_language_model_tower_and_projector(preset):
    text, vision = vlm_from_hf_config(preset.hf_config)
    assert weights_bytes(vision_config(text, vision), seq_len=4096) == 2 * vlm_params(text, vision)["total"]


def test_mamba2_under_tp2_by_hand():
    """Mamba2-2.7B (d 2560, d_inner 5120, 80 heads, 1 group of N = 128, conv 4 with bias, tied
    embedding of V = 50,288) on tp 2: in_proj's z + x and dt rows, the conv's x channels and bias,
    dt_bias / A_log / D, the gated norm and out_proj split in two; B and C (one group: tp does not
    divide it) whole on both ranks with their conv channels; the pre-norm and final norm replicated;
    the embedding vocabulary-parallel."""
    d, e, H, bc = 2560, 5120, 80, 2 * 128
    per_layer = (
        2 * e * d // 2  # in_proj z + x, column-parallel
        + bc * d  # in_proj B + C, whole
        + H * d // 2  # in_proj dt
        + e * 4 // 2  # conv over x
        + bc * 4  # conv over B + C, whole
        + e // 2  # conv bias over x
        + bc  # conv bias over B + C
        + 3 * H // 2  # dt_bias, A_log, D
        + e // 2  # gated norm gain
        + d * e // 2  # out_proj, row-parallel
        + d  # the layer's pre-norm, replicated
    )
    assert per_layer == 20_437_880
    per_rank = 64 * per_layer + 50288 * d // 2 + d  # + the embedding's half (tied head) + the final norm
    assert weights_bytes(hybrid_config(next(p for p in HYBRID_PRESETS if p.name == "mamba2-2.7b").model()), tp=2) == (
        2 * per_rank
    )


def test_llava_tower_and_projector_under_tp2_by_hand():
    """LLaVA-1.5-7B's CLIP ViT-L/14-336 (24 blocks of 1024, MLP 4096, biases, LayerNorm) and its 2-layer
    projector on tp 2, as Megatron-Core's LLaVA splits them: q, k, v, fc1 and projector.linear_1
    column-parallel (weights and biases halved), o, fc2 and linear_2 row-parallel (weights halved, biases
    whole), norms, the patch convolution, class token and 577 positions replicated. What the first
    stage holds beyond the language model's own tp-2 shard."""
    h, f = 1024, 4096
    block = 4 * h * h // 2 + 3 * h // 2 + h + f * h // 2 + f // 2 + h * f // 2 + h + 2 * 2 * h
    assert block == 6_301_184
    outside = 3 * 14 * 14 * h + h + 577 * h + 2 * 2 * h  # conv, class token, positions, pre and post norms
    projector = f * h // 2 + f // 2 + f * f // 2 + f
    expected = 24 * block + outside + projector
    assert expected == 162_918_400
    text, vision = vlm_from_hf_config(next(p for p in VISION_PRESETS if p.name == "llava-1.5-7b").hf_config)
    tower = weights_bytes(vision_config(text, vision), tp=2, seq_len=4096) - weights_bytes(text, tp=2, seq_len=4096)
    assert tower == 2 * expected
