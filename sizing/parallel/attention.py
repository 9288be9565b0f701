"""Time of the fused attention kernels (FlashAttention-1/2/3, cuDNN) by kernel, sequence length,
head dim, causal masking, context-parallel chunking and direction.

A kernel's share of peak is measured at one point (sizing/data/step_time.json: causal, head dim
128, sequence 16K; backward FLOPs counted 2.5x the forward's, the FlashAttention benchmarks'
convention: the backward runs five matmuls per pair where the forward runs two). Away from that
point two mechanisms change it, each derived here:

* blocks: the kernel walks Bq x Bk blocks of the score matrix (Bq = Bk = `block`). A causal
  kernel computes the diagonal blocks in full and masks half of them, and every query tile has
  a fixed cost of about `tile_overhead` blocks (loading Q, writing O and the log-sum-exp,
  rescaling). useful / computed = (n^2/2) / (n(n+1)/2 + c n) for n = T/B query tiles: 0.57 at
  T = 512, 0.84 at 2K, 0.98 at 16K. Context parallelism runs cp chunks of T/cp per rank (one
  diagonal, the rest full under load balancing), so a 128K sequence over cp 16 runs at the
  efficiency of 8K chunks;
* the softmax: every score pair needs one exponential on the special-function units (forward;
  the backward recomputes it), at `exp_per_second` against the matmul peak. Kernels that do not
  overlap the two (FA1, FA2) pay both: per pair, 2 (d_qk + d_v) matmul FLOPs at the matmul rate
  plus one exp, so a head dim of 64 spends twice the share of its time on exponentials as 128.
  FA3 and cuDNN on Hopper overlap them (FA3 sec. 3.1), so their share does not depend on it.
"""

from __future__ import annotations

from sizing.parallel.stepdata import AttentionKernel, GpuConstants
from sizing.vocabulary import ceil_div

BACKWARD_FLOP_RATIO = 2.5  # FlashAttention's benchmarks: backward FLOPs = 2.5 x forward (QK^T recomputed)
KERNELS_PER_PASS = (1, 3)  # forward: one kernel; backward: preprocess (dO . O), the main kernel, dQ conversion
REFERENCE_HEAD_DIM = 128


def block_efficiency(seq_len: int, causal: bool, block: int, overhead: float, cp: int = 1, window: int | None = None):
    """Useful share of the block work the kernel does for one rank's queries (see the module)."""
    chunk = ceil_div(seq_len, cp)
    n = max(1, ceil_div(chunk, block))
    if window is not None and window < seq_len:  # sliding window: about window/B key blocks per query tile
        keys = max(1, ceil_div(window, block))
        return keys / (keys + (1 if causal else 0) + overhead)
    if not causal:
        return n * cp / (n * cp + overhead * cp)
    useful = n * n / 2 + (cp - 1) / 2 * n * n
    computed = n * (n + 1) / 2 + (cp - 1) / 2 * n * n + overhead * n * cp
    return useful / computed


def softmax_share(kernel: AttentionKernel, share: float, d_qk: int, d_v: int, peak_per_exp: float, ratio: float):
    """The kernel's share of peak at head dims (d_qk, d_v), from its share at 128: a kernel that
    does not overlap its exponentials pays peak_per_exp / (matmul FLOPs per pair) of extra time
    per FLOP; `ratio` is the pass's FLOPs relative to the forward's (1 or 2.5)."""
    if kernel.overlaps_softmax:
        return share
    reference = peak_per_exp / (ratio * 2 * 2 * REFERENCE_HEAD_DIM)
    here = peak_per_exp / (ratio * 2 * (d_qk + d_v))
    return 1.0 / (1.0 / share - reference + here)


def flash_seconds(
    forward_flops: float,
    consts: GpuConstants,
    kernel_name: str,
    peak: float,
    peak_per_exp: float,
    d_qk: int,
    d_v: int,
    seq_len: int,
    cp: int = 1,
    window: int | None = None,
) -> tuple[float, float]:
    """(forward, backward) seconds of a causal fused attention whose forward is `forward_flops`
    (2 x pairs x (d_qk + d_v) per head) on one rank, with the sequence over `cp` ranks;
    `peak_per_exp`: the GPU's nominal matmul peak over its exponential throughput."""
    kernel = consts.attention_kernel(kernel_name)
    block, overhead = consts.attention_block, consts.attention_tile_overhead
    reference = block_efficiency(consts.attention_seq, True, block, overhead)
    blocks = block_efficiency(seq_len, True, block, overhead, cp, window) / reference
    out = []
    for share, ratio, launches in (
        (kernel.forward, 1.0, KERNELS_PER_PASS[0]),
        (kernel.backward, BACKWARD_FLOP_RATIO, KERNELS_PER_PASS[1]),
    ):
        rate = peak * softmax_share(kernel, share, d_qk, d_v, peak_per_exp, ratio) * blocks
        out.append(ratio * forward_flops / rate + launches * cp * consts.gemm_kernel_s)
    return out[0], out[1]
