"""Time of one GEMM on one GPU: FLOPs / (dense peak x achievable share x tile-and-wave efficiency).

NVIDIA's Matrix Multiplication Background User's Guide (docs.nvidia.com/deeplearning/performance/
dl-performance-matrix-multiplication) describes two quantization losses of a GEMM whose output
C (M x N) is computed in tiles of tm x tn by thread blocks, one tile per SM at a time:

* tile quantization: ceil(M/tm) ceil(N/tn) tiles are computed in full even where M or N is
  not a multiple of the tile, so the work done is that of the padded output;
* wave quantization: the tiles run in waves of `sms` (one per SM); a last partial wave
  occupies the GPU as long as a full one.

efficiency = M N / (waves x sms x tm x tn), with waves = ceil(tiles / sms). The achievable share
of peak on large, aligned GEMMs (MAMF, a cited measurement per GPU and dtype) multiplies it.
cuBLAS picks the better of the two tile orientations, so both are tried. K (the reduction) is
not quantized here: it streams through each tile and its remainder costs at most one k-step.
"""

from __future__ import annotations

from functools import lru_cache

from sizing.parallel.stepdata import GpuConstants
from sizing.vocabulary import ceil_div


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


def gemm_seconds(m: int, n: int, k: int, peak: float, consts: GpuConstants, dtype: str, count: int = 1) -> float:
    """A batched (or grouped) GEMM of `count` products (M x K) @ (K x N) at `peak` FLOP/s of `dtype`."""
    if m <= 0 or n <= 0 or k <= 0 or count <= 0:
        return 0.0
    eff = consts.gemm_share(dtype) * tile_wave_efficiency(m, n, consts.tile, consts.sms, count)
    return count * gemm_flops(m, n, k) / (peak * eff)


def linear_train_seconds(m: int, n: int, k: int, peak: float, consts: GpuConstants, dtype: str, count: int = 1):
    """(forward, backward) seconds of a linear layer y = x W, x: M x K, W: K x N. Backward is two
    GEMMs at their own shapes: dgrad (M x N) @ (N x K) and wgrad (K x M) @ (M x N)."""
    fwd = gemm_seconds(m, n, k, peak, consts, dtype, count)
    dgrad = gemm_seconds(m, k, n, peak, consts, dtype, count)
    wgrad = gemm_seconds(k, n, m, peak, consts, dtype, count)
    return fwd, dgrad + wgrad
