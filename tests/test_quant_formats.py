"""Quantized formats: bits per weight from each format's storage, and checkpoint sizes as shipped."""

from fractions import Fraction

import pytest

from sizing.inputs.presets import get_preset
from sizing.memory.checkpoints import published_checkpoints
from sizing.memory.quant import (
    FORMATS,
    block_matrix_params,
    get_format,
    gptq_bits,
    quantized_weights,
    routed_expert_matrix_params,
    use_more_bits,
)
from sizing.validate import SizingError

GIB = 2**30

# Each format's bits per weight with its arithmetic (sources in sizing/memory/quant.py's docstring).
BITS = {
    "gptq-int4-g128": Fraction(4) + Fraction(16 + 4, 128),  # int4 + fp16 scale + int4 zero per 128
    "gptq-int4-g32": Fraction(4) + Fraction(16 + 4, 32),
    "awq-int4-g128": Fraction(4) + Fraction(16 + 4, 128),
    "mxfp4": Fraction(4) + Fraction(8, 32),  # OCP MX: E8M0 scale per 32 -> 4.25
    "mxfp4-experts": Fraction(17, 4),
    "nvfp4": Fraction(4) + Fraction(8, 16),  # E4M3 scale per 16 -> 4.5
    "fp8": Fraction(8),
    "int8-w8a8": Fraction(8),  # int8 weights; the per-channel scales (< 0.1%) not counted
    "fp8-block128": Fraction(8) + Fraction(32, 128 * 128),  # fp32 scale per 128x128 block
    "q8_0": Fraction((32 * 1 + 2) * 8, 32),  # block_q8_0: 32 int8 + fp16 d = 34 bytes -> 8.5
    "q4_0": Fraction((16 + 2) * 8, 32),  # block_q4_0: 16 bytes nibbles + fp16 d = 18 bytes -> 4.5
    "q4_k_m": Fraction((2 * 2 + 12 + 128) * 8, 256),  # block_q4_K: 144 bytes per 256 -> 4.5
    "q4_k_m-2023": Fraction((2 * 2 + 12 + 128) * 8, 256),
    "q5_k_m-2023": Fraction((2 * 2 + 12 + 32 + 128) * 8, 256),
    "q5_k_m": Fraction((2 * 2 + 12 + 32 + 128) * 8, 256),  # block_q5_K: + 32 bytes high bits -> 5.5
    "q6_k": Fraction((128 + 64 + 16 + 2) * 8, 256),  # block_q6_K: 210 bytes per 256 -> 6.5625
}


@pytest.mark.parametrize("key", sorted(FORMATS))
def test_bits_per_weight(key):
    assert FORMATS[key].bits == BITS[key]


def test_bits_as_decimals():
    assert float(BITS["gptq-int4-g128"]) == 4.15625
    assert (float(BITS["q8_0"]), float(BITS["q4_0"]), float(BITS["q6_k"])) == (8.5, 4.5, 6.5625)
    assert (float(BITS["mxfp4"]), float(BITS["nvfp4"]), float(BITS["fp8-block128"])) == (4.25, 4.5, 8.001953125)
    assert gptq_bits(64) == Fraction(4) + Fraction(20, 64)


def test_gpt_oss_120b_as_shipped_within_one_percent():
    """MXFP4 experts, bf16 elsewhere. Published: 60.8 GiB checkpoint (gpt-oss model card,
    arXiv:2508.10925 Table 1). Experts: 36 layers x 128 x 3·2880·2880 = 114,661,785,600 weights."""
    cfg = get_preset("gpt-oss-120b").config
    assert routed_expert_matrix_params(cfg) == 36 * 128 * 3 * 2880 * 2880 == 114_661_785_600
    q = quantized_weights(cfg, "mxfp4-experts")
    rest = 116_829_156_672 - 114_661_785_600  # bf16: attention, expert biases, router, embeddings, head
    assert q.bytes == 114_661_785_600 * 17 // 32 + rest * 2
    assert abs(q.bytes / GIB - 60.8) / 60.8 < 0.01  # 60.77 GiB


def test_gpt_oss_20b_as_shipped_within_one_percent():
    """Published 12.8 GiB (arXiv:2508.10925 Table 1)."""
    q = quantized_weights(get_preset("gpt-oss-20b").config, "mxfp4-experts")
    assert abs(q.bytes / GIB - 12.8) / 12.8 < 0.01


@pytest.mark.parametrize("row", published_checkpoints(), ids=lambda r: f"{r.model}-{r.format}")
def test_published_checkpoint_sizes(row):
    """sizing/data/published_checkpoints.json, each within 1% (the files also hold the tokenizer
    and metadata, a few MB; the sources round to 0.01 GB / 0.1 GiB). Measured: Mixtral-8x22B
    Q4_K_M and Q5_K_M +0.02%, Llama-3.1-8B Q4_K_M +0.12%, GPT-OSS-120B -0.05%, 20B +0.13%."""
    assert abs(row.error) < 0.01, (row.model, row.format, row.predicted_bytes, row.published_bytes)


def test_moe_k_quant_mix_of_2023():
    """Mixtral-8x7B, 32 layers of 8 experts: llama.cpp before PR #4872 kept the experts' ffn_down
    (8 x 14336 x 4096 per layer) and attn_output (4096 x 4096) at the base type; since, ffn_down is
    Q6_K in the 16 use_more_bits layers and attn_output Q5_K. Dense models: the same mix either way."""
    cfg = get_preset("mixtral-8x7b").config
    new, old = quantized_weights(cfg, "q4_k_m"), quantized_weights(cfg, "q4_k_m-2023")
    down, out = 8 * 14336 * 4096, 4096 * 4096
    gained = 16 * down * (Fraction(105, 16) - Fraction(9, 2)) + 32 * out * (Fraction(11, 2) - Fraction(9, 2))
    assert (new.bytes - old.bytes) * 8 == gained
    dense = get_preset("llama2-7b").config
    assert quantized_weights(dense, "q4_k_m").bytes == quantized_weights(dense, "q4_k_m-2023").bytes


def test_llama2_7b_q4_k_m_mix_counts():
    """32 layers: use_more_bits picks 0..3, 28..31 and (i - 4) % 3 == 2 -> 6, 9, ..., 27: 16 layers
    of attn_v (4096·4096) + ffn_down (11008·4096) in Q6_K; output.weight Q6_K, norms f32."""
    picked = [i for i in range(32) if use_more_bits(i, 32)]
    assert picked == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]
    cfg = get_preset("llama2-7b").config
    q = quantized_weights(cfg, "q4_k_m")
    assert q.upgraded_params == 16 * (4096 * 4096 + 11008 * 4096)
    assert q.quantized_params == block_matrix_params(cfg) - q.upgraded_params
    assert q.other_params == 32 * 2 * 4096 + 4096  # two RMSNorm gains per layer + the final norm
    bits = (
        q.quantized_params * Fraction(9, 2)
        + q.upgraded_params * Fraction(105, 16)
        + 32000 * 4096 * Fraction(9, 2)  # token table at the base type
        + 32000 * 4096 * Fraction(105, 16)  # output.weight in Q6_K
        + q.other_params * 32
    )
    assert q.bytes * 8 == bits


def test_weight_only_and_w8a8():
    assert get_format("q4_k_m").weight_only and get_format("mxfp4").weight_only
    assert get_format("fp8").compute_dtype == "fp8" and not get_format("fp8-block128").weight_only


def test_unknown_format_names_the_valid_ones():
    with pytest.raises(SizingError, match=r"quant .*q4_k_m"):
        get_format("q3_k_xl")


def test_low_precision_peaks():
    """Dense = half the datasheets' sparse headline: H100 INT8 3,958 -> 1,978.9; HGX B200 FP4 18 PF -> 9."""
    from sizing.inputs.hardware import get_gpu, low_precision_peak_flops_per_second

    assert low_precision_peak_flops_per_second(get_gpu("h100"), "int8") == 1978.9e12
    assert low_precision_peak_flops_per_second(get_gpu("b200"), "fp4") == 2 * get_gpu("b200").peak_tflops["fp8"] * 1e12
    with pytest.raises(SizingError, match="no 'fp4' peak"):
        low_precision_peak_flops_per_second(get_gpu("h100"), "fp4")
