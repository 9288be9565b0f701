"""The serving defects of issue 25, each pinned by its arithmetic: the MLA latent whole on every
TP rank, one MLA implementation per run, the served context, KV heads replicated when tp > h_kv,
chunked prefill's KV re-reads, the TP all-reduce latency, and exit 3 with what would fit."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from sizing import get_preset
from sizing.cli import main
from sizing.formulas.flops import decode_flops_per_token, mla_absorbed_decode_flops_per_token
from sizing.memory.kv import kv_cache_bytes, kv_cache_bytes_per_rank, kv_heads_per_rank, naive_kv_cache_bytes
from sizing.serve import serve
from sizing.serve.work import chunked_prefill_kv_reread_bytes, decode_step_flops, step_bytes
from sizing.validate import SizingError

DSV3 = get_preset("deepseek-v3").config
L_DS, R_KV, D_R = 61, 512, 64


def test_mla_latent_is_whole_on_every_tp_rank():
    # (r_kv 512 + d_r 64) x 61 layers x 4096 positions x 2 bytes: no head axis to split over tp 8
    whole = (512 + 64) * 61 * 4096 * 2
    assert whole == 287_834_112
    assert kv_cache_bytes_per_rank(DSV3, 4096, 1, "bf16", tp=8) == whole == kv_cache_bytes(DSV3, 4096)
    est = serve("deepseek-v3", 4000, 96, gpu="h200", tp=8, weight_dtype="fp8")
    assert est.kv_bytes_per_gpu == whole  # prompt + output = 4096, batch 1
    step = est.last_step  # the decode step reads the whole latent on each rank, the weights / 8
    assert step.bytes.kv_bytes_per_rank == step.bytes.kv_bytes
    assert step.roofline.bytes == pytest.approx(step.bytes.weight_bytes / 8 + step.bytes.kv_bytes)


def test_mla_implementation_picks_flops_and_bytes_together():
    C, b = 4096, 4
    absorbed = step_bytes(DSV3, C, b, "fp8", "bf16", tp=8, mla="absorbed")
    naive = step_bytes(DSV3, C, b, "fp8", "bf16", tp=8, mla="naive")
    assert absorbed.kv_bytes == 61 * 576 * C * b * 2
    assert naive.kv_bytes == 61 * 128 * (192 + 128) * C * b * 2 == naive_kv_cache_bytes(DSV3, C, b)
    assert naive.kv_bytes_per_rank == naive.kv_bytes // 8  # per-head K and V split by head
    assert decode_step_flops(DSV3, C, b, "absorbed") == b * mla_absorbed_decode_flops_per_token(DSV3, C)
    assert decode_step_flops(DSV3, C, b, "naive") == b * decode_flops_per_token(DSV3, C)
    a = serve("deepseek-v3", 4000, 96, batch=b, gpu="h200", tp=8, weight_dtype="fp8")
    n = serve("deepseek-v3", 4000, 96, batch=b, gpu="h200", tp=8, weight_dtype="fp8", mla="naive")
    assert a.settings.mla == "absorbed" and n.settings.mla == "naive"
    assert a.last_step.flops == b * mla_absorbed_decode_flops_per_token(DSV3, 4095)
    assert n.last_step.flops == b * decode_flops_per_token(DSV3, 4095)
    with pytest.raises(SizingError, match=r"mla \('fast'\) must be one of"):
        serve("deepseek-v3", 100, 4, mla="fast")


def test_deepseek_v3_serves_a_32k_prompt():
    preset = get_preset("deepseek-v3")
    assert preset.context == 4096 and preset.served_context == 131072 and "YaRN" in preset.served_context_source
    est = serve("deepseek-v3", 32768, 256, gpu="h200", tp=8, weight_dtype="fp8")
    assert est.fits
    assert est.kv_bytes_per_gpu == 576 * 61 * (32768 + 256) * 2
    assert any("within the served one (131072" in n for n in est.notes)
    with pytest.raises(SizingError, match=r"prompt \(131073\) exceeds the model's served context \(131072\)"):
        serve("deepseek-v3", 131073, 2, gpu="h200", tp=8)


def test_llama3_70b_serves_on_tp16_with_kv_heads_replicated():
    cfg = get_preset("llama3-70b").config
    assert kv_heads_per_rank(cfg, 16) == 1 and kv_heads_per_rank(cfg, 4) == 2
    est = serve("llama3-70b", 1000, 200, gpu="h100", tp=16)
    # one K/V head per rank: 2 x 1 x 128 x 80 layers x 1200 positions x 2 bytes
    assert est.kv_bytes_per_gpu == 2 * 1 * 128 * 80 * 1200 * 2 == 49_152_000
    assert any("replicated on 2 ranks" in n for n in est.notes)
    with pytest.raises(SizingError, match=r"tp \(3\) must divide n_heads"):
        serve("llama3-70b", 1000, 200, gpu="h100", tp=3)
    with pytest.raises(SizingError, match=r"must divide n_kv_heads \(8\) or be a multiple of it"):
        kv_heads_per_rank(cfg, 12)


def test_chunked_prefill_counts_the_kv_reread():
    cfg = get_preset("llama2-7b").config
    per_position = 2 * 32 * 32 * 128 * 2  # K and V, 32 layers, 32 heads x 128, bf16: 524,288 bytes
    # 4 chunks of 1024: chunks 2, 3, 4 re-read 1024, 2048, 3072 cached positions
    assert chunked_prefill_kv_reread_bytes(cfg, 4096, 1024) == (1024 + 2048 + 3072) * per_position == 3_221_225_472
    assert chunked_prefill_kv_reread_bytes(cfg, 4096, 4096) == 0
    assert chunked_prefill_kv_reread_bytes(cfg, 4096, None) == 0
    whole = serve("llama2-7b", 4096, 16, gpu="h100")
    chunked = serve("llama2-7b", 4096, 16, gpu="h100", prefill_chunk=1024)
    weights = step_bytes(cfg, 4096, 1, new_tokens=1024).weight_bytes
    assert chunked.prefill_bytes == 4 * weights + 4096 * per_position + 3_221_225_472
    assert whole.prefill_bytes == step_bytes(cfg, 4096, 1, new_tokens=4096).weight_bytes + 4096 * per_position


def test_all_reduce_latency_is_on_the_decode_path():
    # llama3-70b on tp 8, batch 1: 160 all-reduces per token, each >= 10.18 µs of NCCL latency
    est = serve("llama3-70b", 1000, 200, gpu="h100", tp=8)
    assert est.last_step.roofline.comm_seconds > 160 * 10.18e-6


def _run(*args):
    return CliRunner().invoke(main, ["serve", *args])


def test_not_fitting_exits_3_naming_what_fits():
    result = _run("--preset", "llama3.1-405b", "--gpu", "h100", "--prompt", "1000", "--output", "200")
    assert result.exit_code == 3, result.output
    assert "does not fit" in result.output and "756.90 GiB per GPU" in result.output
    assert "would fit: --tp 16" in result.output  # 810 GB of bf16 weights / 8 > 80 GB, / 16 fits
    assert "would fit: --weight-dtype fp8 at --tp 8" in result.output  # 405 GB of fp8 / 8 = 51 GB
    big = _run(*"--preset llama3-70b --gpu h100 --tp 8 --batch 512 --prompt 1000 --output 200".split())
    assert big.exit_code == 3 and "would fit: --batch" in big.output
    fits = _run(*"--preset llama3-70b --gpu h100 --tp 8 --prompt 1000 --output 200 --format json".split())
    assert fits.exit_code == 0


def test_memory_inference_takes_tp():
    # llama3-70b at C 8192, batch 16, tp 16: weights / 16 and one K/V head per rank
    from sizing.memory import inference_memory

    mem = inference_memory("llama3-70b", 8192, 16, gpu="h100", tp=16)
    assert mem.weights_bytes == -(-2 * 70_553_706_496 // 16)
    assert mem.kv_cache_bytes == 2 * 80 * 1 * 128 * 2 * 8192 * 16 == 5_368_709_120
    result = CliRunner().invoke(
        main,
        "memory --preset llama3-70b --inference --context 8192 --batch 16 --tp 16 --gpu h100 --format json".split(),
    )
    assert result.exit_code == 0, result.output
    assert '"kv_cache_bytes": 5368709120' in result.output and '"tp": 16' in result.output
    refused = CliRunner().invoke(main, "memory --preset llama3-70b --tp 16".split())
    assert refused.exit_code == 2 and "--tp applies to inference" in refused.output


@given(h_kv_log=st.integers(0, 4), tp_log=st.integers(0, 6), context=st.integers(1, 50_000), batch=st.integers(1, 64))
def test_kv_per_rank_times_tp_covers_the_cache(h_kv_log, tp_log, context, batch):
    """tp ranks together hold every K/V head at least once: exactly the cache when tp divides
    h_kv, tp / h_kv copies of it when tp is a multiple (one head per rank)."""
    import dataclasses

    h_kv, tp = 2**h_kv_log, 2**tp_log
    cfg = dataclasses.replace(get_preset("llama2-7b").config, n_kv_heads=h_kv)
    per_rank = kv_cache_bytes_per_rank(cfg, context, batch, "bf16", tp)
    whole = kv_cache_bytes(cfg, context, batch, "bf16")
    assert per_rank * tp == whole * max(1, tp // h_kv)
