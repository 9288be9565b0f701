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

from reference_model.model.dsa import DSAIndexer, IndexScores
from reference_model.model.layers import RMSNorm
from reference_model.model.mla_absorbed import absorbed_mla_attention
from sizing import ATTENTION_IMPL_ALIASES, ATTENTION_IMPLS, require_choice
from sizing.inputs import ModelConfig


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


def allowed_keys(
    q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None, chunk: int | None = None
) -> torch.Tensor:
    """Boolean (T_q, T_k): key j visible from query i iff 0 <= pos_j <= pos_i and
    pos_j > pos_i - window (query i sees keys in (i - W, i]), or with chunked attention iff
    pos_j is in pos_i's chunk (pos_j // C == pos_i // C, Llama-4)."""
    q, k = q_pos[:, None], k_pos[None, :]
    ok = (k <= q) & (k >= 0)
    if window is not None:
        ok &= k > q - window
    if chunk is not None:
        ok &= torch.div(k, chunk, rounding_mode="floor") == torch.div(q, chunk, rounding_mode="floor")
    return ok


def layer_window(cfg: ModelConfig, layer: int) -> tuple[int | None, int | None]:
    """(sliding window, chunk) of one layer: the config's local pattern, or (None, None) for a
    global layer (every full_attention_every-th)."""
    if not cfg.is_local_layer(layer):
        return None, None
    return cfg.sliding_window, cfg.attention_chunk


def layer_cache_len(cfg: ModelConfig, layer: int, total: int) -> int:
    """Positions one layer's cache holds for `total` positions: W, one chunk, or all of them."""
    window, chunk = layer_window(cfg, layer)
    cap = window if window is not None else chunk
    return total if cap is None else min(total, cap)


# ---------------------------------------------------------------- KV cache
class KVCache:
    """Preallocated per-layer K and V of shape (B, kv_heads, cache_len, d_head); under MLA the
    latent c_kv (B, 1, cache_len, r_kv) and the shared rope key (B, 1, cache_len, d_r) instead.

    Each layer's cache_len is its cap (layer_cache_len): min(prompt + new tokens, W) for a
    sliding layer, one chunk for a chunked one, everything for a global one. A capped cache is
    a ring buffer (slot = position % cache_len); `pos[layer]` holds the absolute position in each
    slot (-1 while empty), and the mask hides whatever a slot holds from another window or chunk.
    """

    def __init__(self, cfg: ModelConfig, batch: int, total: int, device, dtype):
        if cfg.is_mla:  # DSA's index key rides beside the latent (DeepSeek-V3.2)
            widths = (cfg.kv_lora_rank + (cfg.index_head_dim if cfg.has_indexer else 0), cfg.qk_rope_head_dim)
            heads = 1
        else:
            widths = (cfg.d_head, cfg.d_head)
            heads = cfg.kv_heads
        self.lens = [layer_cache_len(cfg, i, total) for i in range(cfg.n_layers)]
        self.k = [torch.zeros((batch, heads, n, widths[0]), device=device, dtype=dtype) for n in self.lens]
        self.v = [torch.zeros((batch, heads, n, widths[1]), device=device, dtype=dtype) for n in self.lens]
        self.pos = [torch.full((n,), -1, dtype=torch.long, device=device) for n in self.lens]
        self.seen = 0  # positions written so far (a Python int: works on the meta device)

    def tensors(self) -> list[torch.Tensor]:
        """Every cache tensor (K and V of each layer; latent and rope key under MLA)."""
        return [t for pair in zip(self.k, self.v, strict=True) for t in pair]

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.tensors())

    def slots(self, layer: int, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(positions that stay in the layer's cache, their slots): the last cache_len of them."""
        n = self.lens[layer]
        keep = positions[-n:]
        return keep, keep % n

    def write(self, layer: int, positions: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        keep, slots = self.slots(layer, positions)
        n = keep.shape[0]
        self.k[layer].index_copy_(2, slots, k[:, :, -n:])
        self.v[layer].index_copy_(2, slots, v[:, :, -n:])

    @property
    def cache_len(self) -> int:
        """The longest layer cache (every layer's, unless some layers are capped by a window or chunk)."""
        return max(self.lens)

    def filled(self, layer: int) -> int:
        """Slots of `layer` holding a position: slots fill in order, so they are the first `filled`."""
        return min(self.seen, self.lens[layer])

    def positions_after(self, layer: int, positions: torch.Tensor) -> torch.Tensor:
        """The absolute position in each slot of `layer` once `positions` are written."""
        keep, slots = self.slots(layer, positions)
        pos = self.pos[layer].clone()
        pos[slots] = keep
        return pos

    def advance(self, positions: torch.Tensor) -> None:
        """Record the positions now held (after every layer has written its K and V)."""
        for layer in range(len(self.lens)):
            keep, slots = self.slots(layer, positions)
            self.pos[layer][slots] = keep
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


class QKNorm(nn.Module):
    """RMSNorm of q or k over the last dim (each head's d_h), in float32, as layers.RMSNorm: with a
    d_h gain shared by the heads ("head"), or no gain (Llama-4's L2 norm: "unweighted")."""

    def __init__(self, width: int | None, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width)) if width is not None else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.weight is not None:
            h = h * self.weight.float()
        return h.to(x.dtype)


def _rotation(step: Step):
    """The step's RoPE as a function of (B, heads, T, d) (identity without positions)."""
    return (lambda t: t) if step.rope is None else (lambda t: apply_rope(t, *step.rope))


def _rms(width: int, eps: float) -> nn.Module:
    return RMSNorm(width, eps=eps)


class Attention(nn.Module):
    """Causal self-attention, or multi-head latent attention (MLA) when cfg.kv_lora_rank is set:

        q = q_b(q_a_norm(q_a(x)))  (or q(x) without a query rank), split per head into nope + rope
        [c_kv, k_rope] = kv_a(x);  [k_nope, v] = kv_b(kv_a_norm(c_kv)) per head;  k_rope shared by heads

    Per layer (`layer`): a sliding window or a chunk unless the layer is global, RoPE unless it
    is a NoPE layer. qk_norm normalises q and k before RoPE ("width": over all heads, OLMo-2);
    sinks add one learned logit per head to every softmax (GPT-OSS), so attention uses the math path."""

    def __init__(self, cfg: ModelConfig, dropout: float, layer: int = 0):
        super().__init__()
        self.cfg = cfg
        self.layer = layer  # index into the KV cache; the layer's window, chunk and RoPE
        self.window, self.chunk = layer_window(cfg, layer)
        self.use_rope = cfg.uses_rope(layer)
        self.n_heads, self.kv_heads, self.d_head = cfg.n_heads, cfg.kv_heads, cfg.d_head
        self.qk_width, self.v_width = cfg.qk_head_width, cfg.v_head_width
        if cfg.is_mla:
            self._build_mla(cfg)
        else:
            self.q = nn.Linear(cfg.d_model, cfg.q_width, bias=cfg.qkv_bias)
            self.k = nn.Linear(cfg.d_model, cfg.kv_width, bias=cfg.qkv_bias)
            self.v = nn.Linear(cfg.d_model, cfg.kv_width, bias=cfg.qkv_bias)
        if cfg.qk_norm == "width":
            self.q_norm, self.k_norm = _rms(cfg.q_width, cfg.norm_eps), _rms(cfg.kv_width, cfg.norm_eps)
        elif cfg.qk_norm != "none":
            width = cfg.d_head if cfg.qk_norm == "head" else None
            self.q_norm, self.k_norm = QKNorm(width, cfg.norm_eps), QKNorm(width, cfg.norm_eps)
        if cfg.attention_sinks:
            self.sinks = nn.Parameter(torch.zeros(cfg.n_heads))
        self.scores = AttnScores(self.qk_width)
        self.drop = nn.Dropout(dropout)
        self.av = AttnValues()
        self.o = nn.Linear(cfg.n_heads * self.v_width, cfg.d_model, bias=cfg.attn_out_bias)
        self.checkpoint_core = False  # set by GPT.set_checkpointing("selective")
        self.mla_impl = "naive"  # MLA decode: "naive" or "absorbed" (GPT.set_mla_impl)

    def _build_mla(self, cfg: ModelConfig) -> None:
        h, width = cfg.n_heads, cfg.qk_head_width
        if cfg.q_lora_rank is None:
            self.q = nn.Linear(cfg.d_model, h * width, bias=False)
        else:
            self.q_a = nn.Linear(cfg.d_model, cfg.q_lora_rank, bias=cfg.qkv_bias)
            self.q_a_norm = _rms(cfg.q_lora_rank, cfg.norm_eps)
            self.q_b = nn.Linear(cfg.q_lora_rank, h * width, bias=False)
        if cfg.has_indexer:
            self.indexer, self.index_scores = DSAIndexer(cfg), IndexScores()
        self.kv_a = nn.Linear(cfg.d_model, cfg.kv_lora_rank + cfg.qk_rope_head_dim, bias=cfg.qkv_bias)
        self.kv_a_norm = _rms(cfg.kv_lora_rank, cfg.norm_eps)
        self.kv_b = nn.Linear(cfg.kv_lora_rank, h * (cfg.qk_nope_head_dim + cfg.v_head_dim), bias=False)

    def core(
        self,
        q: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        step: Step,
        k_pos: torch.Tensor,
        sparse: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The attention core: softmax(q k^T / sqrt(d_qk) + mask) v, (B, h, T, d_v); K/V heads
        repeated to the query heads (GQA/MQA). What selective recomputation re-runs."""
        T, window, chunk = q.shape[2], self.window, self.chunk
        rep = self.n_heads // keys.shape[1]
        if rep > 1:  # GQA / MQA: each K/V head serves `rep` query heads
            keys, values = keys.repeat_interleave(rep, dim=1), values.repeat_interleave(rep, dim=1)

        mask = allowed_keys(step.positions, k_pos, window, chunk)
        mask = mask if sparse is None else mask & sparse  # DSA: the indexer's top-k keys only
        if step.attn_impl == "flash" and not self.cfg.attention_sinks:
            p = self.drop.p if self.training else 0.0
            if sparse is None and step.cache is None and chunk is None and (window is None or window >= T):
                return F.scaled_dot_product_attention(q, keys, values, dropout_p=p, is_causal=True)  # its own mask
            return F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, dropout_p=p)
        scores = self.scores(q, keys)  # (B, h, T, T_k)
        scores = scores.masked_fill(~mask, float("-inf"))
        if self.cfg.attention_sinks:  # one more logit per head, dropped after the softmax
            sink = self.sinks.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1).to(scores.dtype)
            probs = F.softmax(torch.cat((scores, sink), dim=-1), dim=-1, dtype=torch.float32)[..., :-1]
        else:
            probs = F.softmax(scores, dim=-1, dtype=torch.float32)
        return self.av(self.drop(probs.to(values.dtype)), values)

    def _qkv(self, x: torch.Tensor, step: Step):
        """q (B, h, T, d_qk), and what the cache stores for the new tokens: (k, v) per kv head, or
        under MLA (c_kv, k_rope) with one head of width r_kv and d_r."""
        B, T, _ = x.shape
        cfg = self.cfg
        if cfg.is_mla:
            self.q_latent = None if cfg.q_lora_rank is None else self.q_a_norm(self.q_a(x))
            q = self.q(x) if cfg.q_lora_rank is None else self.q_b(self.q_latent)
            q = q.view(B, T, self.n_heads, self.qk_width).transpose(1, 2)
            c_kv, k_rope = self.kv_a(x).unsqueeze(1).split((cfg.kv_lora_rank, cfg.qk_rope_head_dim), dim=-1)
            if step.rope is not None:
                nope, rope = q.split((cfg.qk_nope_head_dim, cfg.qk_rope_head_dim), dim=-1)
                q = torch.cat((nope, apply_rope(rope, *step.rope)), dim=-1)
                k_rope = apply_rope(k_rope, *step.rope)
            if cfg.has_indexer:  # the index key is cached with the latent
                c_kv = torch.cat((c_kv, self.indexer.key(x, _rotation(step))), dim=-1)
            return q, c_kv, k_rope
        if cfg.qk_norm == "width":
            q, k = self.q_norm(self.q(x)), self.k_norm(self.k(x))
        else:
            q, k = self.q(x), self.k(x)
        q = q.view(B, T, self.n_heads, self.d_head).transpose(1, 2)
        k = k.view(B, T, self.kv_heads, self.d_head).transpose(1, 2)
        v = self.v(x).view(B, T, self.kv_heads, self.d_head).transpose(1, 2)
        if cfg.qk_norm in ("head", "unweighted") and (cfg.qk_norm == "head" or self.use_rope):
            q, k = self.q_norm(q), self.k_norm(k)  # Llama-4 normalises the RoPE layers only
        if step.rope is not None and self.use_rope:
            q, k = apply_rope(q, *step.rope), apply_rope(k, *step.rope)
        return q, k, v

    def _expand_latent(self, c_kv: torch.Tensor, k_rope: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """MLA's per-head K and V from the cached latent and rope key (B, 1, T_k, .)."""
        cfg = self.cfg
        B, _, Tk, _ = c_kv.shape
        kv = self.kv_b(self.kv_a_norm(c_kv.squeeze(1))).view(B, Tk, self.n_heads, -1).transpose(1, 2)
        k_nope, v = kv.split((cfg.qk_nope_head_dim, cfg.v_head_dim), dim=-1)
        return torch.cat((k_nope, k_rope.expand(-1, self.n_heads, -1, -1)), dim=-1), v

    def with_cache(self, step: Step, k: torch.Tensor, v: torch.Tensor):
        """(keys, values, key positions) with the KV cache, reading only filled slots, as a
        paged-attention kernel does. A decode step (one new token) stores its K and V first, then
        reads the min(C, W) filled slots (with a window the slot it overwrote held a position the
        window has left). A prefill (or a later chunk) reads the slots filled before it (none for
        the first) and its own new keys, then stores them (the last cache_len of them)."""
        cache, layer = step.cache, self.layer
        if k.shape[2] == 1:
            cache.write(layer, step.positions, k, v)
            n = min(cache.seen + 1, cache.lens[layer])
            return cache.k[layer][:, :, :n], cache.v[layer][:, :, :n], cache.positions_after(layer, step.positions)[:n]
        n = cache.filled(layer)
        if n == 0:
            keys, values, k_pos = k, v, step.positions
        else:
            keys = torch.cat((cache.k[layer][:, :, :n], k), dim=2)
            values = torch.cat((cache.v[layer][:, :, :n], v), dim=2)
            k_pos = torch.cat((cache.pos[layer][:n], step.positions))
        cache.write(layer, step.positions, k, v)
        return keys, values, k_pos

    def forward(self, x: torch.Tensor, step: Step) -> torch.Tensor:
        B, T, _ = x.shape
        q, k, v = self._qkv(x, step)
        if step.cache is None:
            keys, values, k_pos = k, v, step.positions
        else:
            keys, values, k_pos = self.with_cache(step, k, v)
        sparse = None
        if self.cfg.has_indexer:  # DSA: split the index keys off the latent, pick each query's top-k
            keys, index_keys = keys.split((self.cfg.kv_lora_rank, self.cfg.index_head_dim), dim=-1)
            allowed = allowed_keys(step.positions, k_pos, self.window, self.chunk)
            sparse = self.indexer.sparse_mask(x, self.q_latent, index_keys, allowed, _rotation(step), self.index_scores)
        if self.cfg.is_mla and self.mla_impl == "absorbed" and step.cache is not None and T == 1:
            mask = allowed_keys(step.positions, k_pos, self.window, self.chunk)
            mask = mask if sparse is None else mask & sparse
            out = absorbed_mla_attention(self, q, keys, values, mask)  # over the latent, W_UK/W_UV folded
            return self.o(out.transpose(1, 2).reshape(B, T, self.n_heads * self.v_width))
        if self.cfg.is_mla:  # the cache holds the latent: up-project every cached position
            keys, values = self._expand_latent(keys, values)

        if self.checkpoint_core and step.cache is None and torch.is_grad_enabled():
            # selective recomputation (Korthikanti et al. 2022): keep q, k, v; re-run the core in backward
            out = _checkpoint(self.core, q, keys, values, step, k_pos, sparse, use_reentrant=False)
        else:
            out = self.core(q, keys, values, step, k_pos, sparse)
        out = out.transpose(1, 2).reshape(B, T, self.n_heads * self.v_width)
        return self.o(out)
