"""The GEMM time model (sizing.parallel.gemm) against published shape sweeps: OpenXLA's measured
cuBLAS table for the H100 (bf16, 375 shapes) and DeepGEMM's fp8 table (H800 SXM5, the H100's
compute), and its parts with exact arithmetic."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from sizing.parallel.gemm import gemm_seconds, linear_train_seconds, tile_work_flops
from sizing.parallel.stepdata import GemmFit, gpu_constants

H100 = gpu_constants("h100-sxm")
A100 = gpu_constants("a100-80gb")
H100_BF16, H100_FP8, A100_BF16 = 989.4e12, 1978.9e12, 312e12
H100_HBM = 3.35e12 * 0.9
SWEEP = json.loads((Path(__file__).parent / "fixtures" / "xla_h100_bf16_gemm_sweep.json").read_text())["rows"]


def _tflops(b, m, n, k, consts=H100, peak=H100_BF16, dtype="bf16"):
    return 2 * b * m * n * k / gemm_seconds(m, n, k, peak, consts, dtype, b, H100_HBM) / 1e12


def test_bf16_model_against_the_openxla_h100_sweep():
    """375 measured shapes (b 1-4, M, N, K 256-4096): median |error| 5%; 3% and at most 12% on the
    shapes with an output of at least 2048^2 (those of transformer training); tiny outputs with
    long K are split-K, whose reduction the model costs only as memory traffic (up to +47%)."""
    errors = [_tflops(b, m, n, k) / measured - 1 for b, m, n, k, measured in SWEEP]
    assert len(errors) == 375
    assert statistics.median(abs(e) for e in errors) <= 0.055
    big = [e for e, (b, m, n, _k, _t) in zip(errors, SWEEP, strict=True) if b * m * n >= 2048 * 2048]
    assert statistics.median(abs(e) for e in big) <= 0.035 and max(abs(e) for e in big) <= 0.12


def test_fp8_model_against_deepgemm_training_shapes():
    """DeepGEMM's M = 4096 rows (deepseek-ai/DeepGEMM README at 989c9e3): within 16% each."""
    rows = [
        (2112, 7168, 1127),
        (24576, 1536, 1212),
        (32768, 512, 775),
        (7168, 16384, 1520),
        (4096, 7168, 1410),
        (7168, 2048, 1168),
    ]
    for n, k, measured in rows:
        assert _tflops(1, 4096, n, k, peak=H100_FP8, dtype="fp8") == pytest.approx(measured, rel=0.16)


def test_a100_share_reproduces_mamf_on_a_large_gemm():
    """The A100's share is set so that an 8192^3 GEMM runs at the measured MAMF, 267.9 of 312."""
    assert _tflops(1, 8192, 8192, 8192, A100, A100_BF16) == pytest.approx(267.9, rel=0.01)


def test_k_overhead_fixed_cost_and_roofline():
    """One 256 x 128 tile on one SM, K = 1024: 2 x 256 x 128 x (1024 + K0) FLOP-equivalents; a 1 x 1
    GEMM is memory-bound or launch-bound, never faster than the fixed kernel cost."""
    k0 = H100.gemm_fit("bf16").k_overhead
    work, split = tile_work_flops(256, 128, 1024, 1, replace(H100, tiles=((256, 128, 1.0),), split_k=(1,)), "bf16")
    assert split == 1 and work == 2 * 256 * 128 * (1024 + k0)
    assert gemm_seconds(1, 1, 1, H100_BF16, H100, "bf16", 1, H100_HBM) >= H100.gemm_kernel_s
    # operands of a skinny GEMM (M 16, N = K = 8192): 2 (16 x 8192 + 8192^2 + 16 x 8192) bytes at HBM speed
    skinny = gemm_seconds(16, 8192, 8192, H100_BF16, H100, "bf16", 1, H100_HBM)
    assert skinny >= 2 * (16 * 8192 * 2 + 8192 * 8192) / H100_HBM


def test_frozen_weight_skips_wgrad():
    f, b = linear_train_seconds(4096, 4096, 4096, H100_BF16, H100, "bf16", 1, H100_HBM)
    f2, b2 = linear_train_seconds(4096, 4096, 4096, H100_BF16, H100, "bf16", 1, H100_HBM, weight_grad=False)
    assert f2 == f and b2 == pytest.approx(b / 2)  # square: dgrad and wgrad are the same shape


def test_unknown_dtype_is_named():
    from sizing.validate import SizingError

    with pytest.raises(SizingError, match="no GEMM kernel model for fp8 on a100"):
        A100.gemm_fit("fp8")
    assert replace(A100, gemm=(("bf16", GemmFit(0.5, 0)),)).gemm_share("bf16") == 0.5


def test_grouped_fp8_gemms_against_deepgemm_contiguous_layout():
    """DeepGEMM's grouped GEMMs for MoE training (contiguous layout, deepseek-ai/DeepGEMM README at
    989c9e3, H800): 4 x 8192 and 8 x 4096 tokens per expert group (DeepSeek-V3's shapes: with EP 64
    a rank's 4 local experts get 8,192 tokens each), as one grouped GEMM whose tiles fill the waves
    together: within 6% each (1,346 and 1,214 TFLOP/s measured)."""
    rows = [
        (4, 8192, 4096, 7168, 1346),
        (4, 8192, 7168, 2048, 1214),
        (8, 4096, 4096, 7168, 1346),
        (8, 4096, 7168, 2048, 1214),
    ]
    for groups, m, n, k, measured in rows:
        assert _tflops(groups, m, n, k, peak=H100_FP8, dtype="fp8") == pytest.approx(measured, rel=0.06)
