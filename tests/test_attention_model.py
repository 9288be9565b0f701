"""The fused-attention kernel model (sizing.parallel.attention): block efficiency by sequence,
causal masking and context-parallel chunks, the softmax's exponentials by head dim, the backward's
2.5x FLOP convention, and the kernels' shares."""

from __future__ import annotations

import pytest

from sizing.parallel.attention import BACKWARD_FLOP_RATIO, block_efficiency, flash_seconds, softmax_share
from sizing.parallel.stepdata import gpu_constants

H100, A100 = gpu_constants("h100-sxm"), gpu_constants("a100-80gb")


def test_block_efficiency_causal_by_sequence():
    """n = T/128 query tiles; causal computes n(n+1)/2 blocks for n^2/2 useful, plus one block of fixed
    work per tile: n^2/2 / (n(n+1)/2 + n)."""
    assert block_efficiency(512, True, 128, 1.0) == pytest.approx(8 / (10 + 4))  # n = 4
    assert block_efficiency(2048, True, 128, 1.0) == pytest.approx(128 / (136 + 16))  # n = 16
    assert block_efficiency(16384, True, 128, 1.0) == pytest.approx(8192 / (8256 + 128))  # n = 128
    assert block_efficiency(2048, False, 128, 1.0) == pytest.approx(16 / 17)  # non-causal: n / (n + 1)


def test_context_parallel_runs_at_the_efficiency_of_its_chunks():
    """128K over cp 16: 8K chunks, one diagonal (causal) and the rest full under load balancing."""
    n = 65536 // 128 // 8  # 64 tiles per chunk
    useful = n * n / 2 + 7.5 * n * n
    computed = n * (n + 1) / 2 + 7.5 * n * n + 16 * n
    assert block_efficiency(131072, True, 128, 1.0, cp=16) == pytest.approx(useful / computed)
    assert block_efficiency(131072, True, 128, 1.0, cp=16) < block_efficiency(131072, True, 128, 1.0)


def test_softmax_share_by_head_dim():
    """FA2 on the H100 (no overlap): exps at 3.9e12/s against the 989.4 TFLOP/s matmul peak cost
    peak_per_exp / (4 d) of the forward per FLOP: 0.5 at d 128 (already in the 0.34 share), 1.0 at 64."""
    fa2, fa3 = H100.attention_kernel("fa2"), H100.attention_kernel("fa3")
    ppe = 989.4e12 / 3.9e12
    assert softmax_share(fa2, 0.34, 128, 128, ppe, 1.0) == pytest.approx(0.34)
    assert softmax_share(fa2, 0.34, 64, 64, ppe, 1.0) == pytest.approx(1 / (1 / 0.34 - ppe / 512 + ppe / 256))
    assert softmax_share(fa3, 0.60, 64, 64, ppe, 1.0) == 0.60  # FA3 overlaps the exps with the matmuls


def test_backward_counts_two_and_a_half_forward_flops():
    """At the reference point (16K, causal, head dim 128) forward = F / (peak x fwd share) and
    backward = 2.5 F / (peak x bwd share), plus 1 and 3 kernel launches."""
    flops, peak = 1e15, 989.4e12
    ppe = peak / H100.exp_per_second
    f, b = flash_seconds(flops, H100, "fa3", peak, ppe, 128, 128, 16384)
    fa3 = H100.attention_kernel("fa3")
    assert f == pytest.approx(flops / (peak * fa3.forward) + H100.gemm_kernel_s)
    assert b == pytest.approx(BACKWARD_FLOP_RATIO * flops / (peak * fa3.backward) + 3 * H100.gemm_kernel_s)


def test_kernels_are_ordered_and_best_is_the_fastest():
    """FA1 (and its 2023 Triton port) < FA2 < FA3 / cuDNN on the H100; FA2 is the A100's best."""
    shares = {name: k.forward for name, k in H100.attention}
    assert shares["fa1"] < shares["fa2"] < shares["fa3"] == shares["cudnn"]
    assert H100.best_attention == "cudnn" and A100.best_attention == "fa2"
    with pytest.raises(Exception, match="attention kernel"):
        A100.attention_kernel("fa3")
