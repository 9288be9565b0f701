"""sizing.memory.kv: the KV cache and inference weights by storage dtype."""

import pytest

from sizing import get_preset
from sizing.memory import dtype_bytes, inference_weights_bytes, kv_cache_bytes

LLAMA2_7B = get_preset("llama2-7b").config
N_7B = 6_738_415_616


def test_dtype_bytes_round_up_to_a_whole_byte():
    assert dtype_bytes(3, "int4") == 2 and dtype_bytes(4, "int4") == 2 and dtype_bytes(3, "fp32") == 12
    with pytest.raises(ValueError, match=r"dtype \('int3'\) must be one of: fp32, bf16"):
        dtype_bytes(1, "int3")


def test_llama2_70b_kv_cache_at_4096_bf16():
    cfg = get_preset("llama2-70b").config
    assert (cfg.n_layers, cfg.kv_heads, cfg.d_head) == (80, 8, 128)
    per_sequence = 2 * 80 * 8 * 128 * 2 * 4096  # K and V x layers x kv heads x head_dim x bf16 bytes x context
    assert kv_cache_bytes(cfg, 4096, 1, "bf16") == per_sequence == 1_342_177_280
    assert kv_cache_bytes(cfg, 4096, 8, "bf16") == 8 * per_sequence


def test_kv_cache_uses_kv_heads_and_the_window():
    llama2_7b_mha = kv_cache_bytes(LLAMA2_7B, 4096)
    assert llama2_7b_mha == 2 * 32 * 32 * 128 * 2 * 4096  # MHA: 32 kv heads, 2 GiB per sequence
    falcon = get_preset("falcon-7b").config  # MQA: one kv head of 64
    assert kv_cache_bytes(falcon, 2048) == 2 * 32 * 1 * 64 * 2 * 2048
    mistral = get_preset("mistral-7b").config  # window 4096 caps the cache
    assert kv_cache_bytes(mistral, 32768) == kv_cache_bytes(mistral, 4096) == 2 * 32 * 8 * 128 * 2 * 4096
    assert kv_cache_bytes(mistral, 1000) == 2 * 32 * 8 * 128 * 2 * 1000
    assert kv_cache_bytes(LLAMA2_7B, 4096, 1, "int4") * 8 == kv_cache_bytes(LLAMA2_7B, 4096, 1, "fp32")


def test_kv_cache_rejects_a_non_positive_context_or_batch():
    with pytest.raises(ValueError, match=r"context \(0\) must be a positive integer"):
        kv_cache_bytes(LLAMA2_7B, 0)
    with pytest.raises(ValueError, match=r"batch \(-2\) must be a positive integer"):
        kv_cache_bytes(LLAMA2_7B, 128, -2)


def test_inference_weights_by_dtype():
    assert inference_weights_bytes(LLAMA2_7B, "bf16") == 2 * N_7B
    # int8 is served W8A8: the block matmuls 1 byte; token table, lm_head (32000 x 4096 each) and the
    # 65 norms of 4096 stay 16-bit (sizing.memory.quant.deployed_weights_bytes)
    assert inference_weights_bytes(LLAMA2_7B, "int8") == N_7B + 2 * 32000 * 4096 + 65 * 4096
    assert inference_weights_bytes(LLAMA2_7B, "int4") == N_7B // 2
    mixtral = get_preset("mixtral-8x7b").config  # every expert is resident
    assert inference_weights_bytes(mixtral, "bf16") == 2 * 46_702_792_704
