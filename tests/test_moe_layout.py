"""MoE serving layouts (sizing/serve/moe_layout.py) and `sizing serve-layout`."""

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.hardware import get_gpu
from sizing.inputs.presets import get_preset
from sizing.memory.kv import kv_cache_bytes
from sizing.memory.quant import quantized_weights
from sizing.serve.moe_layout import _Setup, compare_layouts, why_best
from sizing.serve.quant_bytes import weight_split_bytes
from sizing.serve.work import expected_experts_hit

DSV3 = get_preset("deepseek-v3").config


def _setup(cfg, gpu="h200", weights="fp8"):
    return _Setup(cfg, get_gpu(gpu), 4096, weights, "bf16", 0.6, 0.8)


def test_weight_split_sums_to_the_model():
    rest, one = weight_split_bytes(DSV3, "fp8")
    # fp8 is the W8A8 format: 1 byte per block matmul weight, the token table, lm_head and norms 16-bit
    assert rest + one * 58 * 256 == quantized_weights(DSV3, "fp8").bytes  # 58 MoE layers x 256 experts
    assert one == 3 * 7168 * 2048  # gated expert of width 2048
    oss = get_preset("gpt-oss-120b").config
    rest, one = weight_split_bytes(oss, "mxfp4-experts")
    assert rest + one * 36 * 128 == quantized_weights(oss, "mxfp4-experts").bytes


def test_tp_replicates_the_mla_latent_ep_dp_splits_the_batch():
    s = _setup(DSV3)
    tp = s.step("tp", 8, 64)
    ep = s.step("ep-dp", 8, 64)
    assert tp.kv_bytes_per_gpu == kv_cache_bytes(DSV3, 4096, 64, "bf16")  # the whole batch on every rank
    assert ep.kv_bytes_per_gpu == kv_cache_bytes(DSV3, 4096, 8, "bf16")  # its own 64 / 8 sequences
    rest, one = weight_split_bytes(DSV3, "fp8")
    assert ep.weights_bytes_per_gpu == rest + one * 58 * 32  # replicated non-experts + 256 / 8 experts
    assert ep.experts_read_per_gpu == pytest.approx(expected_experts_hit(256, 8, 64) / 8)


def test_all_to_all_bytes():
    """Dispatch + combine per MoE layer: b·k·d·2 bytes, 7/8 of them leaving the rank, over NVLink."""
    ep = _setup(DSV3).step("ep-dp", 8, 64)
    per_rank = 8 * 8 * 7168 * 2 * 7 / 8
    assert ep.comm_seconds == pytest.approx(2 * 58 * per_rank / (450e9 * 0.8))


def test_gqa_tp_shares_heads_past_the_kv_head_count():
    mixtral = get_preset("mixtral-8x7b").config  # 8 kv heads
    s = _setup(mixtral, "h100", "bf16")
    whole = kv_cache_bytes(mixtral, 4096, 32, "bf16")
    assert s.step("tp", 4, 32).kv_bytes_per_gpu == whole // 4
    assert s.step("tp", 16, 32).kv_bytes_per_gpu == whole // 8  # one head per rank, shared by two


@pytest.mark.parametrize("gpu", ["h200", "h100"])
def test_deepseek_v3_serves_best_with_ep_and_dp_attention(gpu):
    steps = compare_layouts(DSV3, gpu, 4096, "fp8-block128")
    best, tp = steps[0], next(s for s in steps if s.layout == "tp")
    assert best.layout == "ep-dp"
    assert best.tokens_per_second_per_gpu > 3 * tp.tokens_per_second_per_gpu
    assert best.batch > 5 * tp.batch  # the latent cache replicated under TP caps its batch
    assert best.memory_bytes_per_gpu <= 0.9 * get_gpu(gpu).memory_bytes
    assert "MLA latent" in why_best(steps, DSV3)
    if gpu == "h100":  # 671 GB of fp8 does not fit 8 x 80 GB at 0.9: no 8-GPU layout
        assert min(s.gpus for s in steps) == 16


def test_cli():
    r = CliRunner().invoke(main, ["serve-layout", "--preset", "deepseek-v3", "--gpu", "h200", "--format", "json"])
    data = json.loads(r.output)
    assert r.exit_code == 0 and data["layouts"][0]["layout"] == "ep-dp" and "MLA" in data["why"]
    r = CliRunner().invoke(main, ["serve-layout", "--preset", "llama2-7b", "--gpus", "1", "--gpus", "16"])
    assert r.exit_code == 0 and "EP" not in r.output and "TP 8 x PP 2" in r.output


def test_pipeline_stage_terms():
    """Llama-3.1-405B bf16 over 2 nodes, tp 8 x pp 2, 8 sequences per micro-batch: a stage holds
    63 of 126 layers; its KV holds both micro-batches (16 sequences) for those layers, split over
    the 8 KV heads; sending 8·d bf16 activations to the next stage crosses the network."""
    cfg = get_preset("llama3.1-405b").config
    s = _setup(cfg, "h100", "bf16")
    step = s.step("tp-pp", 16, 16)
    assert step.kv_bytes_per_gpu == kv_cache_bytes(cfg, 4096, 16, "bf16") * 63 // 126 // 8
    send = 8 * cfg.d_model * 2 / (50e9 * 0.8)
    stage = s.step("tp", 8, 8)  # the same tp 8 all-reduce per layer, over 126 layers
    allreduce_per_layer = stage.comm_seconds / 126
    assert step.comm_seconds == pytest.approx(2 * (63 * allreduce_per_layer + send))


def test_dense_model_across_nodes_prefers_a_pipeline():
    steps = compare_layouts(get_preset("llama3.1-405b").config, "h100", 4096, "bf16", gpu_counts=(16,))
    assert [s.layout for s in steps] == ["tp-pp", "tp"]
    assert steps[0].tokens_per_second_per_gpu > 2 * steps[1].tokens_per_second_per_gpu


def test_csv_has_one_row_per_layout():
    r = CliRunner().invoke(main, ["serve-layout", "--preset", "mixtral-8x7b", "--gpu", "h100", "--format", "csv"])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 0 and lines[0].startswith("layout,gpus,batch") and len(lines) > 2
