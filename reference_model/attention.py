"""Causal self-attention of the reference GPT: positions (RoPE), the causal and sliding-window
mask, the KV cache, and the attention module itself, computed two ways:

    math   q @ k^T, mask, softmax, @ v as separate modules (`attn.scores`, `attn.av`), so
           FLOP counters see every matmul and saved-activation probes every T x T tensor;
    flash  torch's fused kernel, F.scaled_dot_product_attention ("sdpa": sizing's `flash`).

The names are sizing.vocabulary.ATTENTION_IMPLS; `sdpa` is accepted as an alias of `flash`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint as _checkpoint

from sizing.config import ModelConfig
from sizing.validate import require_choice
from sizing.vocabulary import ATTENTION_IMPL_ALIASES, ATTENTION_IMPLS


def attention_impl_name(impl: str, name: str = "attn_impl") -> str:
    """The canonical implementation ("math" or "flash") for any accepted name ("sdpa" -> "flash");
    a SizingError (a ValueError) that lists the valid names otherwise."""
    return require_choice(name, impl, ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)


# ---------------------------------------------------------------- positions
def rope_tables(cfg: ModelConfig, positions: torch.Tensor, dtype: torch.dtype):
    """cos, sin of shape (T, rotary_dim) for absolute `positions` (GPT-NeoX / HF layout:
    the first rotary_dim dims of each head rotate as two halves)."""
    r = cfg.rotary_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, r, 2, device=positions.device, dtype=torch.float32) / r))
    freqs = torch.outer(positions.to(torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x: (B, heads, T, d_head); rotates x[..., :rotary_dim] (partial rotary keeps the rest)."""
    r = cos.shape[-1]
    rot, keep = x[..., :r], x[..., r:]
    rot = rot * cos + _rotate_half(rot) * sin
    return torch.cat((rot, keep), dim=-1) if keep.shape[-1] else rot


def allowed_keys(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None) -> torch.Tensor:
    """Boolean (T_q, T_k): key j visible from query i iff 0 <= pos_j <= pos_i and
    pos_j > pos_i - window (query i sees keys in (i - W, i])."""
    q, k = q_pos[:, None], k_pos[None, :]
    ok = (k <= q) & (k >= 0)
    if window is not None:
        ok &= k > q - window
    return ok


# ---------------------------------------------------------------- KV cache
class KVCache:
    """Preallocated per-layer K and V of shape (B, kv_heads, cache_len, d_head).

    cache_len = min(prompt + new tokens, sliding_window): with a window the cache is a ring
    buffer (slot = position % cache_len). `pos` holds the absolute position in each slot
    (-1 while empty). Bytes: 2 * L * kv_heads * d_head * cache_len * batch * element size.
    """

    def __init__(self, cfg: ModelConfig, batch: int, cache_len: int, device, dtype):
        shape = (batch, cfg.kv_heads, cache_len, cfg.d_head)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.pos = torch.full((cache_len,), -1, dtype=torch.long, device=device)
        self.cache_len = cache_len
        self.seen = 0  # positions written so far (a Python int: works on the meta device)

    def tensors(self) -> list[torch.Tensor]:
        """Every cache tensor (K and V of each layer)."""
        return [t for pair in zip(self.k, self.v, strict=True) for t in pair]

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.tensors())

    def slots(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(positions that stay in the cache, their slots): the last cache_len of them."""
        keep = positions[-self.cache_len :]
        return keep, keep % self.cache_len

    def write(self, layer: int, positions: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        keep, slots = self.slots(positions)
        n = keep.shape[0]
        self.k[layer].index_copy_(2, slots, k[:, :, -n:])
        self.v[layer].index_copy_(2, slots, v[:, :, -n:])

    @property
    def filled(self) -> int:
        """Slots holding a position: slots fill in order, so they are the first `filled`."""
        return min(self.seen, self.cache_len)

    def positions_after(self, positions: torch.Tensor) -> torch.Tensor:
        """The absolute position in each slot once `positions` are written."""
        keep, slots = self.slots(positions)
        pos = self.pos.clone()
        pos[slots] = keep
        return pos

    def advance(self, positions: torch.Tensor) -> None:
        """Record the positions now held (after every layer has written its K and V)."""
        keep, slots = self.slots(positions)
        self.pos[slots] = keep
        self.seen += positions.shape[0]


@dataclass
class Step:
    """What every block needs for one forward: query positions, RoPE tables, cache, impl."""

    positions: torch.Tensor  # (T,) absolute positions of the new tokens
    end: int  # one past the last position (a Python int: works on the meta device)
    rope: tuple[torch.Tensor, torch.Tensor] | None
    cache: KVCache | None
    attn_impl: str  # canonical: "math" or "flash"


# ---------------------------------------------------------------- attention
class AttnScores(nn.Module):
    """q @ k^T / sqrt(d_h): its own module so FLOP counters attribute it to `attn.scores`."""

    def __init__(self, d_head: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(d_head)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return (q @ k.transpose(-2, -1)) * self.scale


class AttnValues(nn.Module):
    """probs @ v: attributed to `attn.av`."""

    def forward(self, probs: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return probs @ v


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, dropout: float):
        super().__init__()
        self.cfg = cfg
        self.n_heads, self.kv_heads, self.d_head = cfg.n_heads, cfg.kv_heads, cfg.d_head
        self.q = nn.Linear(cfg.d_model, cfg.q_width, bias=cfg.qkv_bias)
        self.k = nn.Linear(cfg.d_model, cfg.kv_width, bias=cfg.qkv_bias)
        self.v = nn.Linear(cfg.d_model, cfg.kv_width, bias=cfg.qkv_bias)
        self.scores = AttnScores(cfg.d_head)
        self.drop = nn.Dropout(dropout)
        self.av = AttnValues()
        self.o = nn.Linear(cfg.q_width, cfg.d_model, bias=cfg.attn_out_bias)
        self.layer = 0  # set by GPT: index into the KV cache
        self.checkpoint_core = False  # set by GPT.set_checkpointing("selective")

    def core(
        self, q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, step: Step, k_pos: torch.Tensor
    ) -> torch.Tensor:
        """The attention core: softmax(q k^T / sqrt(d_h) + mask) v, (B, h, T, d_h); K/V heads
        repeated to the query heads (GQA/MQA). What selective recomputation re-runs."""
        T, window = q.shape[2], self.cfg.sliding_window
        rep = self.n_heads // self.kv_heads
        if rep > 1:  # GQA / MQA: each K/V head serves `rep` query heads
            keys, values = keys.repeat_interleave(rep, dim=1), values.repeat_interleave(rep, dim=1)

        if step.attn_impl == "flash":
            p = self.drop.p if self.training else 0.0
            if step.cache is None and (window is None or window >= T):  # plain causal: the kernel's own mask
                return F.scaled_dot_product_attention(q, keys, values, dropout_p=p, is_causal=True)
            mask = allowed_keys(step.positions, k_pos, window)
            return F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, dropout_p=p)
        scores = self.scores(q, keys)  # (B, h, T, T_k)
        mask = allowed_keys(step.positions, k_pos, window)
        scores = scores.masked_fill(~mask, float("-inf"))
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(values.dtype)
        return self.av(self.drop(probs), values)

    def with_cache(self, step: Step, k: torch.Tensor, v: torch.Tensor):
        """(keys, values, key positions) with the KV cache, reading only filled slots, as a
        paged-attention kernel does. A decode step (one new token) stores its K and V first, then
        reads the min(C, W) filled slots (with a window the slot it overwrote held a position the
        window has left). A prefill (or a later chunk) reads the slots filled before it (none for
        the first) and its own new keys, then stores them (the last cache_len of them)."""
        cache, layer = step.cache, self.layer
        if k.shape[2] == 1:
            cache.write(layer, step.positions, k, v)
            n = min(cache.seen + 1, cache.cache_len)
            return cache.k[layer][:, :, :n], cache.v[layer][:, :, :n], cache.positions_after(step.positions)[:n]
        n = cache.filled
        if n == 0:
            keys, values, k_pos = k, v, step.positions
        else:
            keys = torch.cat((cache.k[layer][:, :, :n], k), dim=2)
            values = torch.cat((cache.v[layer][:, :, :n], v), dim=2)
            k_pos = torch.cat((cache.pos[:n], step.positions))
        cache.write(layer, step.positions, k, v)
        return keys, values, k_pos

    def forward(self, x: torch.Tensor, step: Step) -> torch.Tensor:
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)
        k = self.k(x).view(B, T, self.kv_heads, self.d_head).transpose(1, 2)
        v = self.v(x).view(B, T, self.kv_heads, self.d_head).transpose(1, 2)
        if step.rope is not None:
            q, k = apply_rope(q, *step.rope), apply_rope(k, *step.rope)

        if step.cache is None:
            keys, values, k_pos = k, v, step.positions
        else:
            keys, values, k_pos = self.with_cache(step, k, v)

        if self.checkpoint_core and step.cache is None and torch.is_grad_enabled():
            # selective recomputation (Korthikanti et al. 2022): keep q, k, v; re-run the core in backward
            out = _checkpoint(self.core, q, keys, values, step, k_pos, use_reentrant=False)
        else:
            out = self.core(q, keys, values, step, k_pos)
        out = out.transpose(1, 2).reshape(B, T, self.n_heads * self.d_head)
        return self.o(out)
