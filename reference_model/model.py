"""One configurable PyTorch GPT built from `sizing.ModelConfig` (no second config class).

Module paths mirror the component keys of `sizing.params.param_components` with the layer
and expert indices removed, so parameter counters and FLOP counters can attribute every
tensor and every matmul to one analytic component:

    tok_emb, pos_emb (learned positions only)
    emb_norm                                    if cfg.embedding_norm (BLOOM): norm of the embedding sum
    blocks.{i}.attn_norm
    blocks.{i}.attn.q / .k / .v / .o            separate nn.Linear each (no fused qkv)
    blocks.{i}.attn.scores / .av                parameter-free: q @ k^T and probs @ v (math path)
    blocks.{i}.mlp_norm                         absent with shared_block_norm
    blocks.{i}.mlp.up / .gate / .down           gate for gated kinds only
    blocks.{i}.moe.router, blocks.{i}.moe.experts.{j}.up / .gate / .down
    norm_f                                      if cfg.final_norm
    lm_head                                     owns its weight unless tied (then reads tok_emb.weight)

Every size comes from the config's resolved properties (d_head, kv_width, expert_ff,
padded_vocab, rotary_dim, ...), never re-derived here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint as _checkpoint

from sizing.config import ModelConfig

ATTN_IMPLS = ("math", "sdpa")
CHECKPOINT_MODES = ("none", "selective", "full")
_ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "silu": F.silu}


# ---------------------------------------------------------------- norms
class RMSNorm(nn.Module):
    """x / rms(x) * weight, computed in float32 (Zhang & Sennrich 2019; the seeds' RMSNorm)."""

    def __init__(self, dim: int, eps: float = 1e-5, bias: bool = False):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        h = h * self.weight.float()
        if self.bias is not None:
            h = h + self.bias.float()
        return h.to(dtype)


def make_norm(cfg: ModelConfig) -> nn.Module:
    if cfg.norm == "layernorm":
        return nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps, bias=cfg.has_norm_bias)
    return RMSNorm(cfg.d_model, eps=cfg.norm_eps, bias=cfg.has_norm_bias)


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

    def tensors(self) -> list[torch.Tensor]:
        """Every cache tensor (K and V of each layer)."""
        return [t for pair in zip(self.k, self.v) for t in pair]

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.tensors())

    def slots(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(positions that stay in the cache, their slots): the last cache_len of them."""
        keep = positions[-self.cache_len:]
        return keep, keep % self.cache_len

    def write(self, layer: int, positions: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        keep, slots = self.slots(positions)
        n = keep.shape[0]
        self.k[layer].index_copy_(2, slots, k[:, :, -n:])
        self.v[layer].index_copy_(2, slots, v[:, :, -n:])

    def advance(self, positions: torch.Tensor) -> None:
        """Record the positions now held (after every layer has written its K and V)."""
        keep, slots = self.slots(positions)
        self.pos[slots] = keep


@dataclass
class _Step:
    """What every block needs for one forward: query positions, RoPE tables, cache, impl."""

    positions: torch.Tensor  # (T,) absolute positions of the new tokens
    end: int  # one past the last position (a Python int: works on the meta device)
    rope: tuple[torch.Tensor, torch.Tensor] | None
    cache: KVCache | None
    attn_impl: str


def allowed_keys(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None) -> torch.Tensor:
    """Boolean (T_q, T_k): key j visible from query i iff 0 <= pos_j <= pos_i and
    pos_j > pos_i - window (query i sees keys in (i - W, i])."""
    q, k = q_pos[:, None], k_pos[None, :]
    ok = (k <= q) & (k >= 0)
    if window is not None:
        ok &= k > q - window
    return ok


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

    def core(self, q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, step: _Step,
             k_pos: torch.Tensor) -> torch.Tensor:
        """The attention core: softmax(q k^T / sqrt(d_h) + mask) v, (B, h, T, d_h); K/V heads
        repeated to the query heads (GQA/MQA). What selective recomputation re-runs."""
        T, window = q.shape[2], self.cfg.sliding_window
        rep = self.n_heads // self.kv_heads
        if rep > 1:  # GQA / MQA: each K/V head serves `rep` query heads
            keys, values = keys.repeat_interleave(rep, dim=1), values.repeat_interleave(rep, dim=1)

        plain_causal = step.cache is None and (window is None or window >= T)
        if step.attn_impl == "sdpa":
            p = self.drop.p if self.training else 0.0
            if plain_causal:
                out = F.scaled_dot_product_attention(q, keys, values, dropout_p=p, is_causal=True)
            else:
                mask = allowed_keys(step.positions, k_pos, window)
                out = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, dropout_p=p)
        elif step.attn_impl == "math":
            scores = self.scores(q, keys)  # (B, h, T, T_k)
            mask = allowed_keys(step.positions, k_pos, window)
            scores = scores.masked_fill(~mask, float("-inf"))
            probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(values.dtype)
            out = self.av(self.drop(probs), values)
        else:
            raise ValueError(f"attn_impl ({step.attn_impl!r}) must be one of: {', '.join(ATTN_IMPLS)}")
        return out

    def forward(self, x: torch.Tensor, step: _Step) -> torch.Tensor:
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)
        k = self.k(x).view(B, T, self.kv_heads, self.d_head).transpose(1, 2)
        v = self.v(x).view(B, T, self.kv_heads, self.d_head).transpose(1, 2)
        if step.rope is not None:
            q, k = apply_rope(q, *step.rope), apply_rope(k, *step.rope)

        if step.cache is None:
            keys, values, k_pos = k, v, step.positions
        else:  # old cache slots + the new keys; then store the new ones
            cache = step.cache
            keys = torch.cat((cache.k[self.layer], k), dim=2)
            values = torch.cat((cache.v[self.layer], v), dim=2)
            k_pos = torch.cat((cache.pos, step.positions))
            cache.write(self.layer, step.positions, k, v)

        if self.checkpoint_core and step.cache is None and torch.is_grad_enabled():
            # selective recomputation (Korthikanti et al. 2022): keep q, k, v; re-run the core in backward
            out = _checkpoint(self.core, q, keys, values, step, k_pos, use_reentrant=False)
        else:
            out = self.core(q, keys, values, step, k_pos)
        out = out.transpose(1, 2).reshape(B, T, self.n_heads * self.d_head)
        return self.o(out)


# ---------------------------------------------------------------- MLP and MoE
class MLP(nn.Module):
    """down(act(up(x))), or for gated kinds down(act(gate(x)) * up(x)) (SwiGLU/GeGLU)."""

    def __init__(self, cfg: ModelConfig, width: int, dropout: float = 0.0, with_dropout: bool = True):
        super().__init__()
        self.up = nn.Linear(cfg.d_model, width, bias=cfg.mlp_bias)
        if cfg.gated_mlp:
            self.gate = nn.Linear(cfg.d_model, width, bias=cfg.mlp_bias)
        self.down = nn.Linear(width, cfg.d_model, bias=cfg.mlp_bias)
        self.act = _ACTIVATIONS[cfg.activation]
        self.gated = cfg.gated_mlp
        if with_dropout:
            self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.gate(x)) * self.up(x) if self.gated else self.act(self.up(x))
        out = self.down(h)
        return self.drop(out) if hasattr(self, "drop") else out


class MoE(nn.Module):
    """Top-k router (softmax over the k chosen logits, as Mixtral), experts run as a loop
    over experts on the tokens routed to each: every token visits exactly k experts."""

    def __init__(self, cfg: ModelConfig, dropout: float):
        super().__init__()
        self.top_k = cfg.top_k
        self.router = nn.Linear(cfg.d_model, cfg.n_experts, bias=cfg.router_bias)
        self.experts = nn.ModuleList(MLP(cfg, cfg.expert_ff, with_dropout=False) for _ in range(cfg.n_experts))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])
        logits = self.router(flat)
        top_logits, top_idx = torch.topk(logits, self.top_k, dim=-1)
        weights = F.softmax(top_logits, dim=-1, dtype=torch.float32).to(flat.dtype)
        out = torch.zeros_like(flat)
        for j, expert in enumerate(self.experts):
            token, slot = self._routed(top_idx, j)
            if token.numel() == 0:
                continue
            y = expert(flat[token]) * weights[token, slot, None]
            out.index_add_(0, token, y)
        return self.drop(out).view(shape)

    def _routed(self, top_idx: torch.Tensor, j: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(token, slot) pairs routed to expert j. On the meta device there are no values to
        route by: the N*k (token, slot) pairs are dealt round-robin over the experts instead,
        so shapes (and counted FLOPs: k experts per token) are those of a real forward."""
        if not top_idx.is_meta:
            return torch.where(top_idx == j)
        n_experts = len(self.experts)
        pairs = top_idx.numel()  # N * k
        count = pairs // n_experts + (1 if j < pairs % n_experts else 0)
        pair = torch.arange(count, device=top_idx.device) * n_experts + j
        return pair // self.top_k, pair % self.top_k


# ---------------------------------------------------------------- block and model
class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, dropout: float):
        super().__init__()
        self.cfg = cfg
        self.attn_norm = make_norm(cfg)
        self.attn = Attention(cfg, dropout)
        if not cfg.shared_block_norm:
            self.mlp_norm = make_norm(cfg)
        if cfg.is_moe:
            self.moe = MoE(cfg, dropout)
        else:
            self.mlp = MLP(cfg, cfg.d_ff, dropout)

    def ffn(self, x: torch.Tensor) -> torch.Tensor:
        return self.moe(x) if self.cfg.is_moe else self.mlp(x)

    def forward(self, x: torch.Tensor, step: _Step) -> torch.Tensor:
        cfg = self.cfg
        if cfg.parallel_block:  # x + attn(n(x)) + mlp(n'(x)), n' = n when shared
            h = self.attn_norm(x)
            return x + self.attn(h, step) + self.ffn(h if cfg.shared_block_norm else self.mlp_norm(x))
        if cfg.norm_placement == "pre":  # x + f(norm(x))
            x = x + self.attn(self.attn_norm(x), step)
            return x + self.ffn(self.mlp_norm(x))
        x = self.attn_norm(x + self.attn(x, step))  # post: norm(x + f(x))
        return self.mlp_norm(x + self.ffn(x))


class LMHead(nn.Module):
    """Unembedding. Owns a (padded_vocab, d) weight when untied; when tied it reads the
    token embedding's weight at call time (not registered here, so counted once and never
    untied by .to() / .to_empty()). Owns a bias if cfg.lm_head_bias."""

    def __init__(self, cfg: ModelConfig, tok_emb: nn.Embedding):
        super().__init__()
        self._tied = [tok_emb] if cfg.tied_embeddings else None  # a list: not a submodule
        if not cfg.tied_embeddings:
            self.weight = nn.Parameter(torch.empty(cfg.padded_vocab, cfg.d_model))
        self.bias = nn.Parameter(torch.zeros(cfg.padded_vocab)) if cfg.lm_head_bias else None

    @property
    def tied(self) -> bool:
        return self._tied is not None

    def effective_weight(self) -> torch.Tensor:
        return self._tied[0].weight if self._tied is not None else self.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.effective_weight(), self.bias)


class GPT(nn.Module):
    def __init__(self, cfg: ModelConfig, attn_impl: str = "math", dropout: float = 0.0):
        super().__init__()
        if attn_impl not in ATTN_IMPLS:
            raise ValueError(f"attn_impl ({attn_impl!r}) must be one of: {', '.join(ATTN_IMPLS)}")
        self.config = cfg
        self.attn_impl = attn_impl
        self.checkpointing = False  # per-block (full) checkpointing; see set_checkpointing
        self.checkpoint_mode = "none"
        self.last_kv_cache: KVCache | None = None
        self.tok_emb = nn.Embedding(cfg.padded_vocab, cfg.d_model)
        if cfg.position == "learned":
            self.pos_emb = nn.Embedding(cfg.max_positions, cfg.d_model)
        if cfg.embedding_norm:
            self.emb_norm = make_norm(cfg)
        self.blocks = nn.ModuleList(Block(cfg, dropout) for _ in range(cfg.n_layers))
        for i, block in enumerate(self.blocks):
            block.attn.layer = i
        if cfg.final_norm:
            self.norm_f = make_norm(cfg)
        self.lm_head = LMHead(cfg, self.tok_emb)

    # ---- switches
    def set_attn_impl(self, impl: str) -> "GPT":
        if impl not in ATTN_IMPLS:
            raise ValueError(f"attn_impl ({impl!r}) must be one of: {', '.join(ATTN_IMPLS)}")
        self.attn_impl = impl
        return self

    def set_checkpointing(self, mode: bool | str = True) -> "GPT":
        """Activation checkpointing while gradients are enabled (torch.utils.checkpoint,
        use_reentrant=False): "full" (or True) checkpoints each block, whose forward runs
        again in backward; "selective" checkpoints the attention core only (QK^T, mask,
        softmax, dropout, AV: Korthikanti et al. 2022); "none" (or False) turns it off."""
        mode = {True: "full", False: "none", None: "none"}.get(mode, mode)
        if mode not in CHECKPOINT_MODES:
            raise ValueError(f"checkpoint ({mode!r}) must be one of: {', '.join(CHECKPOINT_MODES)}")
        self.checkpoint_mode = mode
        self.checkpointing = mode == "full"
        for block in self.blocks:
            block.attn.checkpoint_core = mode == "selective"
        return self

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())  # parameters() yields a tied tensor once

    # ---- forward
    def _step(self, T: int, start: int, device, cache: KVCache | None, attn_impl: str | None) -> _Step:
        cfg = self.config
        positions = torch.arange(start, start + T, device=device)
        rope = rope_tables(cfg, positions, self.tok_emb.weight.dtype) if cfg.position == "rope" else None
        return _Step(positions, start + T, rope, cache, attn_impl or self.attn_impl)

    def _hidden(self, idx: torch.Tensor, step: _Step) -> torch.Tensor:
        cfg = self.config
        x = self.tok_emb(idx)
        if cfg.position == "learned":
            if step.end > cfg.max_positions:
                raise ValueError(f"sequence reaches position {step.end}, beyond max_positions ({cfg.max_positions})")
            x = x + self.pos_emb(step.positions)
        if cfg.embedding_norm:
            x = self.emb_norm(x)
        use_ckpt = self.checkpointing and step.cache is None and torch.is_grad_enabled()
        for block in self.blocks:
            x = _checkpoint(block, x, step, use_reentrant=False) if use_ckpt else block(x, step)
        if step.cache is not None:
            step.cache.advance(step.positions)
        return self.norm_f(x) if cfg.final_norm else x

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, attn_impl: str | None = None):
        """idx (B, T) token ids -> (logits (B, T, padded_vocab), loss or None)."""
        if attn_impl is not None and attn_impl not in ATTN_IMPLS:
            raise ValueError(f"attn_impl ({attn_impl!r}) must be one of: {', '.join(ATTN_IMPLS)}")
        step = self._step(idx.shape[1], 0, idx.device, None, attn_impl)
        logits = self.lm_head(self._hidden(idx, step))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 attn_impl: str | None = None) -> torch.Tensor:
        """Sample `max_new_tokens` after the prompt idx (B, T0) with a KV cache; returns
        (B, T0 + new). temperature 0 (or top_k 1) is greedy. Padding rows of a padded
        vocab are never sampled. The cache stays in `self.last_kv_cache`."""
        cfg = self.config
        B, T0 = idx.shape
        total = T0 + max_new_tokens
        if cfg.position == "learned" and total > cfg.max_positions:
            raise ValueError(f"prompt ({T0}) + new tokens ({max_new_tokens}) exceed max_positions ({cfg.max_positions})")
        cache_len = total if cfg.sliding_window is None else min(total, cfg.sliding_window)
        cache = KVCache(cfg, B, cache_len, idx.device, self.tok_emb.weight.dtype)
        self.last_kv_cache = cache
        out = idx
        logits = self.lm_head(self._hidden(idx, self._step(T0, 0, idx.device, cache, attn_impl)))[:, -1]
        for i in range(max_new_tokens):
            nxt = self._sample(logits, temperature, top_k)
            out = torch.cat((out, nxt), dim=1)
            if i + 1 < max_new_tokens:
                step = self._step(1, T0 + i, idx.device, cache, attn_impl)
                logits = self.lm_head(self._hidden(nxt, step))[:, -1]
        return out

    def _sample(self, logits: torch.Tensor, temperature: float, top_k: int | None) -> torch.Tensor:
        logits = logits.float()
        V = self.config.vocab_size
        if logits.shape[-1] > V:
            logits[:, V:] = float("-inf")
        if temperature == 0 or top_k == 1:
            return logits.argmax(-1, keepdim=True)
        logits = logits / temperature
        if top_k is not None:
            kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return torch.multinomial(F.softmax(logits, dim=-1), 1)


# ---------------------------------------------------------------- init and build
def _trunc_normal_(t: torch.Tensor, std: float, generator) -> None:
    nn.init.trunc_normal_(t, mean=0.0, std=std, a=-3 * std, b=3 * std, generator=generator)


@torch.no_grad()
def init_weights(model: GPT, seed: int | None = None) -> None:
    """The seeds' init: linear weights truncated normal, Glorot std sqrt(2/(fan_in+fan_out))
    cut at +-3 std; embeddings truncated normal std 1 cut at +-3; norm gains 1; biases 0."""
    device = model.tok_emb.weight.device
    generator = torch.Generator(device=device).manual_seed(seed) if seed is not None else None
    for module in model.modules():
        if isinstance(module, nn.Linear):
            out_f, in_f = module.weight.shape
            _trunc_normal_(module.weight, math.sqrt(2.0 / (in_f + out_f)), generator)
            if module.bias is not None:
                module.bias.zero_()
        elif isinstance(module, nn.Embedding):
            _trunc_normal_(module.weight, 1.0, generator)
        elif isinstance(module, (nn.LayerNorm, RMSNorm)):
            if module.weight is not None:
                module.weight.fill_(1.0)
            if module.bias is not None:
                module.bias.zero_()
        elif isinstance(module, LMHead):
            if not module.tied:
                V, d = module.weight.shape
                _trunc_normal_(module.weight, math.sqrt(2.0 / (d + V)), generator)
            if module.bias is not None:
                module.bias.zero_()


def build(cfg: ModelConfig, device="cpu", attn_impl: str = "math", dtype: torch.dtype | None = None,
          dropout: float = 0.0, seed: int | None = None, checkpoint: bool | str = False) -> GPT:
    """The reference GPT for `cfg` on `device`. device="meta" allocates nothing and skips
    init (any preset, llama3.1-405b included, builds in about a second). `seed` makes the
    init reproducible; `checkpoint` ("full"/True, "selective", "none"/False) sets activation
    checkpointing (see GPT.set_checkpointing)."""
    if not isinstance(cfg, ModelConfig):
        raise TypeError(f"build() takes a sizing.ModelConfig, got {type(cfg).__name__}")
    device = torch.device(device)
    with torch.device("meta"):
        model = GPT(cfg, attn_impl=attn_impl, dropout=dropout)
    if device.type != "meta":
        model = model.to_empty(device=device)
        init_weights(model, seed)
    if dtype is not None:
        model = model.to(dtype)
    return model.set_checkpointing(checkpoint)
