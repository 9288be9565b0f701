"""Serving with weights in a deployed format (sizing/serve/quant_bytes.py): `sizing serve --quant`."""

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.presets import get_preset
from sizing.memory.quant import quantized_weights
from sizing.serve import serve
from sizing.serve.quant_bytes import model_weights_bytes, weight_split_bytes, weights_step_bytes
from sizing.serve.work import step_bytes, unread_table_params


def test_a_dtype_reads_what_step_bytes_reads():
    cfg = get_preset("mixtral-8x7b").config
    assert weights_step_bytes(cfg, 2048, 4, "bf16", "bf16") == step_bytes(cfg, 2048, 4, "bf16", "bf16")
    # int8 and fp8 weights are served as their W8A8 formats (token table and lm_head 16-bit)
    assert weights_step_bytes(cfg, 2048, 4, "int8", "bf16") == weights_step_bytes(cfg, 2048, 4, "int8-w8a8", "bf16")
    assert model_weights_bytes(cfg, "fp8") == quantized_weights(cfg, "fp8").bytes


def test_a_format_reads_its_packed_bytes():
    """Llama-2-7B in Q4_K_M, batch 1: every weight but 31,999 unread token-table rows (Q4_K, 4.5
    bits) is read: the file's bytes less those rows."""
    cfg = get_preset("llama2-7b").config
    whole = quantized_weights(cfg, "q4_k_m").bytes
    moved = weights_step_bytes(cfg, 1024, 1, "q4_k_m", "bf16")
    assert unread_table_params(cfg, 1) == 31_999 * 4096
    assert moved.weight_bytes == whole - 31_999 * 4096 * 9 // 16
    assert model_weights_bytes(cfg, "q4_k_m") == whole


def test_moe_format_split():
    """GPT-OSS-120B as shipped: a step touching every expert reads the whole checkpoint but the unread rows."""
    cfg = get_preset("gpt-oss-120b").config
    rest, one = weight_split_bytes(cfg, "mxfp4-experts")
    assert one == 3 * 2880 * 2880 * 17 // 32 + (2 * 2880 + 2880) * 2  # MXFP4 matrices + bf16 biases
    moved = weights_step_bytes(cfg, 1024, 4096, "mxfp4-experts", "bf16")
    assert moved.experts_read_per_layer == pytest.approx(128)
    assert moved.weight_bytes == pytest.approx(rest + 36 * 128 * one - unread_table_params(cfg, 4096) * 2)


def test_serve_in_a_format():
    est = serve("gpt-oss-120b", prompt=1024, output=256, gpu="h100", weight_dtype="mxfp4-experts")
    assert est.weights_bytes_per_gpu == quantized_weights(get_preset("gpt-oss-120b").config, "mxfp4-experts").bytes
    assert any("weight-only" in note for note in est.notes)
    # on one GPU type (the efficiencies are calibrated per GPU): fewer bytes per decode step
    on_h200 = serve("gpt-oss-120b", prompt=1024, output=256, gpu="h200", weight_dtype="mxfp4-experts")
    bf16 = serve("gpt-oss-120b", prompt=1024, output=256, gpu="h200")
    assert on_h200.tpot_seconds < bf16.tpot_seconds


def test_cli():
    args = ["serve", "--preset", "llama2-7b", "--gpu", "h100", "--prompt", "1024", "--output", "256"]
    r = CliRunner().invoke(main, [*args, "--quant", "q4_k_m"])
    assert r.exit_code == 0 and "weights q4_k_m" in r.output
    r = CliRunner().invoke(main, [*args, "--quant", "q4_k_m", "--weight-dtype", "int4"])
    assert r.exit_code == 2 and "leave out --weight-dtype" in r.output


def test_a_bare_int4_says_what_it_assumes():
    est = serve("llama2-7b", prompt=100, output=20, weight_dtype="int4")
    assert any("exactly 4 bits" in note for note in est.notes)
