"""Proof by counting that a causal kernel needs T(T+1)/2 query-key pairs (min(i, W) keys for
query i with a sliding window), not T².

A dense masked attention computes all T² scores and throws the upper triangle away, and
that is what FlopCounterMode counts (the `full` convention). A causal kernel skips the masked
work in tiles: `blocked_causal_attention` computes, for each tile of `block` queries, only the
keys that tile can see. Counting it with FlopCounterMode gives

    block = 1: exactly the causal pairs, T(T+1)/2 (windowed: sum of min(i, W));
    block = b: the causal pairs plus the masked half of each diagonal tile, about T(b-1)/2 more
               — what tiled kernels such as FlashAttention really execute.

Its output equals the masked math attention, so the count is of a real attention.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from reference_model.model import allowed_keys


def blocked_causal_attention(q, k, v, block: int = 1, window: int | None = None) -> torch.Tensor:
    """q, k, v: (B, h, T, d_h). Query tile [a, b) meets keys [max(0, a - W + 1), b) only."""
    T, scale = q.shape[-2], 1.0 / math.sqrt(q.shape[-1])
    outputs = []
    for start in range(0, T, block):
        end = min(start + block, T)
        lo = 0 if window is None else max(0, start - window + 1)
        scores = (q[..., start:end, :] @ k[..., lo:end, :].transpose(-2, -1)) * scale
        mask = allowed_keys(torch.arange(start, end), torch.arange(lo, end), window)
        probs = F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        outputs.append(probs @ v[..., lo:end, :])
    return torch.cat(outputs, dim=-2)


def masked_attention(q, k, v, window: int | None = None) -> torch.Tensor:
    """The dense reference: all T² scores, then the causal (and window) mask."""
    T = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = allowed_keys(torch.arange(T), torch.arange(T), window)
    return F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v


def count_attention_flops(fn, *args, **kwargs) -> tuple[int, torch.Tensor]:
    """(FLOPs counted by FlopCounterMode, output) for one call."""
    with FlopCounterMode(display=False) as counter:
        out = fn(*args, **kwargs)
    return counter.get_total_flops(), out
