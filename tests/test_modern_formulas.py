"""FLOPs and KV cache of the new pieces, written out by hand: MLA's projections, scores at
d_n + d_r and AV at d_v, shared experts, dense vs MoE layers, local/global and chunked layers
under `causal`, MLA decode in both forms, the latent KV cache and its saving."""

from sizing.formulas.flops import (
    attended_pairs,
    decode_flops_by_form,
    decode_flops_per_token,
    flop_breakdown,
    flop_components,
)
from sizing.inputs.presets import PRESETS
from sizing.memory.kv import kv_cache_bytes, naive_kv_cache_bytes


def _flops(name, T=4096, attention="full"):
    return {c.key: c.forward_per_sequence for c in flop_components(PRESETS[name].config, T, attention)}


def test_deepseek_v3_forward_by_component():
    T, L, d, h = 4096, 61, 7168, 128
    f = _flops("deepseek-v3", T)
    assert f["attn.q_a"] == 2 * L * d * 1536 * T
    assert f["attn.q_b"] == 2 * L * 1536 * h * (128 + 64) * T
    assert f["attn.kv_a"] == 2 * L * d * (512 + 64) * T
    assert f["attn.kv_b"] == 2 * L * 512 * h * (128 + 128) * T
    assert f["attn.scores"] == 2 * L * h * (128 + 64) * T * T  # scores at nope + rope
    assert f["attn.av"] == 2 * L * h * 128 * T * T  # AV at v_head_dim
    assert f["attn.o"] == 2 * L * h * 128 * d * T
    assert f["moe.router"] == 2 * 58 * d * 256 * T
    assert f["moe.experts"] == 2 * 58 * 8 * 3 * d * 2048 * T  # 8 routed of 256
    assert f["moe.shared"] == 2 * 58 * 3 * d * 2048 * T  # 1 shared
    assert f["mlp.up"] == f["mlp.gate"] == f["mlp.down"] == 2 * 3 * d * 18432 * T  # 3 dense layers
    assert "attn.k" not in f and "attn.q" not in f


def test_qwen15_moe_shared_expert_and_gate():
    f = _flops("qwen1.5-moe-a2.7b", 1)
    assert f["moe.shared"] == 2 * 24 * 3 * 2048 * 5632
    assert f["moe.shared_gate"] == 2 * 24 * 2048


def test_llama4_maverick_interleaves_dense_and_moe_layers():
    f = _flops("llama-4-maverick", 1)
    assert f["mlp.up"] == 2 * 24 * 5120 * 16384  # 24 dense layers at intermediate_size_mlp
    assert f["moe.experts"] == 2 * 24 * 1 * 3 * 5120 * 8192  # 24 MoE layers, top-1
    assert f["moe.shared"] == 2 * 24 * 3 * 5120 * 8192


def test_causal_pairs_per_layer_kind():
    assert attended_pairs(10, "causal", chunk=4) == 2 * (4 * 5 // 2) + 2 * 3 // 2  # chunks 4, 4, 2
    assert attended_pairs(10, "full", chunk=4) == 100  # full ignores masks
    gemma = PRESETS["gemma-2-9b"].config  # 21 sliding (W 4096) + 21 global layers
    T = 8192
    f = _flops("gemma-2-9b", T, "causal")
    sliding = 4096 * 4097 // 2 + (T - 4096) * 4096
    assert f["attn.scores"] == 2 * 16 * 256 * (21 * sliding + 21 * T * (T + 1) // 2)
    assert _flops("gemma-2-9b", T, "full")["attn.scores"] == 2 * gemma.n_layers * 16 * 256 * T * T
    scout = _flops("llama-4-scout", 16384, "causal")  # 36 chunked (8192) + 12 NoPE global layers
    chunked = 2 * (8192 * 8193 // 2)
    assert scout["attn.scores"] == 2 * 40 * 128 * (36 * chunked + 12 * 16384 * 16385 // 2)


def test_mla_decode_naive_and_absorbed():
    cfg = PRESETS["deepseek-v3"].config
    C, L, h = 4096, 61, 128
    forms = decode_flops_by_form(cfg, C)
    weights = flop_breakdown(cfg, 1).forward - 2 * L * h * (192 + 128)  # T=1: scores and AV over 1 key
    assert forms["naive"] == decode_flops_per_token(cfg, C) == weights + 2 * L * h * (192 + 128) * C
    assert forms["absorbed"] == weights + 2 * L * h * ((512 + 64) + 512) * C  # kv_b folded: same per-token cost
    assert forms["absorbed"] > forms["naive"]  # more FLOPs per key, ...


def test_mla_kv_cache_is_the_latent_plus_the_rope_key():
    cfg = PRESETS["deepseek-v3"].config
    assert kv_cache_bytes(cfg, 4096) == 61 * (512 + 64) * 4096 * 2  # ... a far smaller cache
    assert naive_kv_cache_bytes(cfg, 4096) == 61 * 128 * (192 + 128) * 4096 * 2
    assert naive_kv_cache_bytes(cfg, 4096) // kv_cache_bytes(cfg, 4096) == 71  # 40,960 / 576 per token per layer


def test_local_layers_cache_at_most_their_window_or_chunk():
    gemma = PRESETS["gemma-2-9b"].config
    assert kv_cache_bytes(gemma, 8192) == 2 * 8 * 256 * (21 * 4096 + 21 * 8192) * 2
    oss = PRESETS["gpt-oss-20b"].config  # 12 layers of 128, 12 global
    assert kv_cache_bytes(oss, 1000) == 2 * 8 * 64 * (12 * 128 + 12 * 1000) * 2
    scout = PRESETS["llama-4-scout"].config  # 36 chunked layers hold one chunk at most
    assert kv_cache_bytes(scout, 100_000) == 2 * 8 * 128 * (36 * 8192 + 12 * 100_000) * 2
    assert decode_flops_per_token(scout, 8193) - decode_flops_per_token(scout, 8192) == 2 * 2 * 40 * 128 * (
        12 - 36 * 8191
    )  # position 8193 opens a new chunk
