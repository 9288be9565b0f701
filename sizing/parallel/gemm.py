"""Time of one GEMM on one GPU, by shape: cuBLAS's tiles, waves and split-K, the K-loop overhead,
the operand traffic and a fixed cost per kernel.

NVIDIA's Matrix Multiplication Background User's Guide (docs.nvidia.com/deeplearning/performance/
dl-performance-matrix-multiplication) describes how a GEMM with an M x N output runs: thread
blocks compute tm x tn output tiles, one per SM at a time, so

* tile quantization: ceil(M/tm) ceil(N/tn) tiles are computed in full even where M or N is not
  a multiple of the tile;
* wave quantization: the tiles run in waves of `sms`; a last partial wave takes as long as a
  full one;
* a tile streams K through a software pipeline; its prologue (filling the pipeline) and
  epilogue (writing C) cost about as much as K0 more steps of K, so a tile takes time in
  proportion to K + K0 (short-K GEMMs run well below the peak);
* cuBLAS picks, per shape, among tile sizes (smaller tiles fill more SMs at a lower per-SM
  rate) and splits K over more blocks when M x N has too few tiles (split-K, whose partial
  sums are reduced through memory);
* a GEMM whose operands (2 (MK + KN + MN) bytes in bf16) take longer to move than its FLOPs
  take to compute is memory-bound (the roofline, the same guide's "arithmetic intensity");
* every kernel has a fixed cost (launch, first wave ramp, tail).

time = max(min over tiles and splits of waves x 2 tm tn (K/split + K0) / (per-SM rate x tile
efficiency), operand bytes / HBM) + fixed. The constants per GPU and dtype (sizing/data/
step_time.json "gemm") are fitted to published shape sweeps: OpenXLA's H100 cuBLAS table (375
shapes, bf16) and DeepGEMM's H800 fp8 table; tests/test_gemm_model.py checks the model against
the sweep.
"""

from __future__ import annotations

from functools import lru_cache

from sizing.parallel.stepdata import GpuConstants
from sizing.vocabulary import ceil_div

OPERAND_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1}
OUTPUT_BYTES = 2  # C in bf16 (fp8 GEMMs write bf16 too)
SPLIT_PARTIAL_BYTES = 4  # split-K writes fp32 partial sums and reads them back once


@lru_cache(maxsize=65536)
def tile_wave_efficiency(m: int, n: int, tile: tuple[int, int], sms: int, batch: int = 1) -> float:
    """Useful share of the tile slots a GEMM with an M x N output occupies (1.0 = no loss); a
    batched or grouped GEMM of `batch` such outputs fills its waves with all their tiles."""
    if m <= 0 or n <= 0:
        return 1.0
    best = 0.0
    for tm, tn in (tile, (tile[1], tile[0])):
        tiles = batch * ceil_div(m, tm) * ceil_div(n, tn)
        waves = ceil_div(tiles, sms)
        best = max(best, batch * m * n / (waves * sms * tm * tn))
    return best


def gemm_flops(m: int, n: int, k: int) -> int:
    """2 FLOPs per multiply-add: 2 M N K."""
    return 2 * m * n * k


@lru_cache(maxsize=65536)
def tile_work_flops(m: int, n: int, k: int, count: int, consts: GpuConstants, dtype: str) -> tuple[float, int]:
    """(FLOP-equivalents one SM works through, split) of the best tile and split-K choice: waves x
    2 tm tn (K/split + K0) / tile efficiency. Divided by the per-SM rate it is the compute time."""
    k0 = consts.gemm_fit(dtype).k_overhead
    best, best_split = float("inf"), 1
    for tm, tn, rel in consts.tiles:
        for split in consts.split_k:
            if split > 1 and k < 2 * split * tm:  # too short to split
                continue
            depth = k / split + k0
            for rows, cols in ((tm, tn), (tn, tm)):
                tiles = count * ceil_div(m, rows) * ceil_div(n, cols) * split
                work = ceil_div(tiles, consts.sms) * 2 * rows * cols * depth / rel
                if work < best:
                    best, best_split = work, split
    return best, best_split


def gemm_seconds(
    m: int,
    n: int,
    k: int,
    peak: float,
    consts: GpuConstants,
    dtype: str,
    count: int = 1,
    hbm_bytes_per_second: float | None = None,
) -> float:
    """A batched (or grouped) GEMM of `count` products (M x K) @ (K x N) at `peak` FLOP/s of
    `dtype`: compute (tiles, waves, split-K, K-loop overhead), memory-bound where its operands
    take longer to move, plus the fixed cost of one kernel."""
    if m <= 0 or n <= 0 or k <= 0 or count <= 0:
        return 0.0
    per_sm = peak * consts.gemm_share(dtype) / consts.sms
    work, split = tile_work_flops(m, n, k, count, consts, dtype)
    seconds = work / per_sm
    if hbm_bytes_per_second:
        operands = count * (OPERAND_BYTES[dtype] * (m * k + k * n) + OUTPUT_BYTES * m * n)
        if split > 1:
            seconds += count * m * n * split * 2 * SPLIT_PARTIAL_BYTES / hbm_bytes_per_second
        seconds = max(seconds, operands / hbm_bytes_per_second)
    return seconds + consts.gemm_kernel_s


def linear_train_seconds(
    m: int,
    n: int,
    k: int,
    peak: float,
    consts: GpuConstants,
    dtype: str,
    count: int = 1,
    hbm_bytes_per_second: float | None = None,
    weight_grad: bool = True,
):
    """(forward, backward) seconds of a linear layer y = x W, x: M x K, W: K x N. Backward is two
    GEMMs at their own shapes: dgrad (M x N) @ (N x K) and wgrad (K x M) @ (M x N); a frozen
    weight (LoRA's base) skips wgrad."""
    fwd = gemm_seconds(m, n, k, peak, consts, dtype, count, hbm_bytes_per_second)
    dgrad = gemm_seconds(m, k, n, peak, consts, dtype, count, hbm_bytes_per_second)
    wgrad = gemm_seconds(k, n, m, peak, consts, dtype, count, hbm_bytes_per_second) if weight_grad else 0.0
    return fwd, dgrad + wgrad
