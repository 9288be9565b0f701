"""The decode time of a model with chunked local attention (Llama-4's attention_chunk), exactly.

A decode step at context C attends C keys in a global layer and L = (C - 1) mod chunk + 1 in a
chunked one, so its compute, memory and all-reduce seconds are affine in (C, L): affine in C
within one chunk, restarting at the next. roofline.sum_of_steps sums one chunk exactly; chunks
in a row that are wholly compute- or memory-bound have sums affine in the chunk index, so a run
of them is an arithmetic series. The chunks where the bound switches inside are summed one by one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sizing.serve.roofline import sum_of_steps

Seconds = Callable[[int], tuple[float, float, float]]  # context -> (compute, memory, all-reduce) seconds


def chunked_decode_seconds(step_seconds: Seconds, first: int, last: int, chunk: int) -> float:
    """Σ over C = first..last of max(compute, memory) + all-reduce seconds of a decode step."""
    if last < first:
        return 0.0
    j_first, j_last = (first - 1) // chunk, (last - 1) // chunk
    if j_first == j_last or chunk == 1:  # within one chunk, or L always 1: affine in C throughout
        return sum_of_steps(step_seconds, first, last)
    total = sum_of_steps(step_seconds, first, (j_first + 1) * chunk)  # the partial chunks at both ends
    total += sum_of_steps(step_seconds, j_last * chunk + 1, last)
    lo, hi = j_first + 1, j_last - 1  # the whole chunks between
    if lo > hi:
        return total
    at = _affine(step_seconds, lo * chunk, chunk)

    def whole(j: int) -> float:
        return sum_of_steps(lambda c: at(c, c - j * chunk), j * chunk + 1, (j + 1) * chunk)

    def gap(j: int, keys: int) -> float:  # compute - memory seconds: its sign is the bound
        c, m, _ = at(j * chunk + keys, keys)
        return c - m

    j = lo
    while j <= hi:
        end = _uniform_until(gap, j, hi, chunk)
        n = end - j + 1
        s0 = whole(j)
        s1 = whole(j + 1) if n > 1 else s0
        total += n * s0 + (s1 - s0) * n * (n - 1) / 2
        j = end + 1
    return total


def _affine(step_seconds: Seconds, base: int, chunk: int) -> Callable[[int, int], tuple[float, float, float]]:
    """(C, L) -> seconds, from three steps: L = 1 and 2 in one chunk, L = 1 in the next."""
    v1, v2, v3 = step_seconds(base + 1), step_seconds(base + 2), step_seconds(base + chunk + 1)
    g_c = [(b - a) / chunk for a, b in zip(v1, v3, strict=True)]
    g_l = [(b - a) - g for a, b, g in zip(v1, v2, g_c, strict=True)]

    def at(context: int, keys: int) -> tuple[float, float, float]:
        dc, dl = context - (base + 1), keys - 1
        return tuple(v + gc * dc + gl * dl for v, gc, gl in zip(v1, g_c, g_l, strict=True))

    return at


def _uniform_until(gap: Callable[[int, int], float], j: int, hi: int, chunk: int) -> int:
    """The last chunk index (at most hi) up to which chunks j.. are wholly on the side of the
    roofline chunk j is on; j itself when the bound switches inside chunk j."""
    ends = [gap(j, 1), gap(j, chunk)]  # the gap is affine in L, so its two ends bound it
    if (ends[0] >= 0) != (ends[1] >= 0):
        return j
    last = hi
    for keys, now in zip((1, chunk), ends, strict=True):
        slope = gap(j + 1, keys) - now
        if slope != 0 and (now >= 0) != (slope > 0):  # moving toward the crossing
            steps = math.floor(abs(now) / abs(slope))
            last = min(last, j + steps if now != 0 else j)
    return max(j, last)
