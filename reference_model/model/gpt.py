"""One configurable PyTorch GPT built from `sizing.ModelConfig` (no second config class).

Module paths mirror the component keys of `sizing.formulas.params.param_components` with the layer
and expert indices removed, so parameter counters and FLOP counters can attribute every
tensor and every matmul to one analytic component:

    tok_emb, pos_emb (learned positions only)
    emb_norm                                    if cfg.embedding_norm (BLOOM): norm of the embedding sum
    blocks.{i}.attn_norm
    blocks.{i}.attn.q / .k / .v / .o            separate nn.Linear each (no fused qkv)
    blocks.{i}.attn.q_a / .q_a_norm / .q_b / .kv_a / .kv_a_norm / .kv_b   latent attention (MLA) instead
    blocks.{i}.attn.q_norm / .k_norm / .sinks   qk-norm and attention sinks, where the config has them
    blocks.{i}.attn_post_norm, .mlp_post_norm   the sandwich's output norms (Gemma-2/3)
    blocks.{i}.attn.scores / .av                parameter-free: q @ k^T and probs @ v (math path)
    blocks.{i}.mlp_norm                         absent with shared_block_norm
    blocks.{i}.mlp.up / .gate / .down           gate for gated kinds only
    blocks.{i}.moe.router, blocks.{i}.moe.experts.{j}.up / .gate / .down   in MoE layers (is_moe_layer)
    blocks.{i}.moe.shared.up / .gate / .down, blocks.{i}.moe.shared_gate    shared experts, Qwen2-MoE's gate
    norm_f                                      if cfg.final_norm
    lm_head                                     owns its weight unless tied (then reads tok_emb.weight)

Every size comes from the config's resolved properties (d_head, kv_width, expert_ff,
padded_vocab, rotary_dim, ...), never re-derived here. The layers live in attention.py
(positions, mask, KV cache, attention) and layers.py (norms, MLP, MoE); this module
assembles them, initialises them as GPT-2 does, and builds the model on a device.
"""

from __future__ import annotations

import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint as _checkpoint

from reference_model.model.attention import (
    Attention,
    KVCache,
    QKNorm,
    Step,
    allowed_keys,
    attention_impl_name,
    rope_tables,
)
from reference_model.model.layers import MLP, MoE, RMSNorm, make_norm
from sizing import ATTENTION_IMPL_ALIASES, ATTENTION_IMPLS, MLA_IMPLS, RECOMPUTE_MODES, require_choice
from sizing.inputs import ModelConfig

__all__ = ["ATTN_IMPLS", "GPT", "KVCache", "allowed_keys", "build", "init_weights"]

# Every name `attn_impl` accepts: sizing's implementations ("math", "flash") and their aliases
# ("sdpa": torch's fused kernel, which is `flash`). reference_model/profile/run.py checks its
# option against this tuple.
ATTN_IMPLS: tuple[str, ...] = ATTENTION_IMPLS + tuple(ATTENTION_IMPL_ALIASES)


# ---------------------------------------------------------------- block and model
class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, dropout: float, layer: int = 0):
        super().__init__()
        self.cfg = cfg
        self.attn_norm = make_norm(cfg)
        self.attn = Attention(cfg, dropout, layer)
        if cfg.norm_placement == "sandwich":
            self.attn_post_norm = make_norm(cfg)
        if not cfg.shared_block_norm:
            self.mlp_norm = make_norm(cfg)
        self.is_moe = cfg.is_moe_layer(layer)
        if self.is_moe:
            self.moe = MoE(cfg, dropout)
        else:
            self.mlp = MLP(cfg, cfg.d_ff, dropout)
        if cfg.norm_placement == "sandwich":
            self.mlp_post_norm = make_norm(cfg)

    def ffn(self, x: torch.Tensor) -> torch.Tensor:
        return self.moe(x) if self.is_moe else self.mlp(x)

    def forward(self, x: torch.Tensor, step: Step) -> torch.Tensor:
        cfg = self.cfg
        if cfg.parallel_block:  # x + attn(n(x)) + mlp(n'(x)), n' = n when shared
            h = self.attn_norm(x)
            return x + self.attn(h, step) + self.ffn(h if cfg.shared_block_norm else self.mlp_norm(x))
        if cfg.norm_placement == "pre":  # x + f(norm(x))
            x = x + self.attn(self.attn_norm(x), step)
            return x + self.ffn(self.mlp_norm(x))
        if cfg.norm_placement == "sandwich":  # Gemma-2/3: x + n2(f(n1(x)))
            x = x + self.attn_post_norm(self.attn(self.attn_norm(x), step))
            return x + self.mlp_post_norm(self.ffn(self.mlp_norm(x)))
        if cfg.norm_placement == "branch_post":  # OLMo-2: x + n(f(x))
            x = x + self.attn_norm(self.attn(x, step))
            return x + self.mlp_norm(self.ffn(x))
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
        self.config = cfg
        self.attn_impl = attention_impl_name(attn_impl)  # canonical: "math" or "flash"
        self.checkpoint_mode = "none"  # a RECOMPUTE_MODES name; see set_checkpointing
        self.last_kv_cache: KVCache | None = None
        self.tok_emb = nn.Embedding(cfg.padded_vocab, cfg.d_model)
        if cfg.position == "learned":
            self.pos_emb = nn.Embedding(cfg.max_positions, cfg.d_model)
        if cfg.embedding_norm:
            self.emb_norm = make_norm(cfg)
        self.blocks = nn.ModuleList(Block(cfg, dropout, i) for i in range(cfg.n_layers))
        if cfg.final_norm:
            self.norm_f = make_norm(cfg)
        self.lm_head = LMHead(cfg, self.tok_emb)

    # ---- switches
    def set_attn_impl(self, impl: str) -> GPT:
        """ "math", "flash" or its alias "sdpa" (sizing.vocabulary)."""
        self.attn_impl = attention_impl_name(impl)
        return self

    def set_mla_impl(self, impl: str) -> GPT:
        """How MLA decode steps run (sizing.vocabulary.MLA_IMPLS): "naive" up-projects the cached
        latent to per-head K and V; "absorbed" attends over the latent (reference_model/model/mla_absorbed.py)."""
        impl = require_choice("mla_impl", impl, MLA_IMPLS)
        for block in self.blocks:
            block.attn.mla_impl = impl
        return self

    def set_checkpointing(self, mode: bool | str | None = True) -> GPT:
        """Activation checkpointing while gradients are enabled (torch.utils.checkpoint,
        use_reentrant=False), one of sizing.vocabulary.RECOMPUTE_MODES: "full" (or True)
        checkpoints each block, whose forward runs again in backward; "selective" checkpoints
        the attention core only (QK^T, mask, softmax, dropout, AV: Korthikanti et al. 2022);
        "none" (or False) turns it off."""
        if isinstance(mode, bool) or mode is None:
            mode = "full" if mode else "none"
        self.checkpoint_mode = require_choice("checkpoint", mode, RECOMPUTE_MODES)
        for block in self.blocks:
            block.attn.checkpoint_core = self.checkpoint_mode == "selective"
        return self

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())  # parameters() yields a tied tensor once

    # ---- forward
    def make_step(
        self, T: int, start: int = 0, device=None, cache: KVCache | None = None, attn_impl: str | None = None
    ) -> Step:
        """What every block needs to run T new tokens at positions start..start+T-1: the
        positions, the RoPE tables, the cache and the (canonical) attention implementation."""
        cfg = self.config
        device = self.tok_emb.weight.device if device is None else device
        positions = torch.arange(start, start + T, device=device)
        rope = rope_tables(cfg, positions, self.tok_emb.weight.dtype) if cfg.position == "rope" else None
        impl = self.attn_impl if attn_impl is None else attention_impl_name(attn_impl)
        return Step(positions, start + T, rope, cache, impl)

    def _hidden(self, idx: torch.Tensor, step: Step) -> torch.Tensor:
        cfg = self.config
        x = self.tok_emb(idx)
        if cfg.position == "learned":
            if step.end > cfg.max_positions:
                raise ValueError(f"sequence reaches position {step.end}, beyond max_positions ({cfg.max_positions})")
            x = x + self.pos_emb(step.positions)
        if cfg.embedding_norm:
            x = self.emb_norm(x)
        use_ckpt = self.checkpoint_mode == "full" and step.cache is None and torch.is_grad_enabled()
        for block in self.blocks:
            x = _checkpoint(block, x, step, use_reentrant=False) if use_ckpt else block(x, step)
        if step.cache is not None:
            step.cache.advance(step.positions)
        return self.norm_f(x) if cfg.final_norm else x

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, attn_impl: str | None = None):
        """idx (B, T) token ids -> (logits (B, T, padded_vocab), loss or None)."""
        step = self.make_step(idx.shape[1], 0, idx.device, None, attn_impl)
        logits = self.lm_head(self._hidden(idx, step))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(
        self,
        idx: torch.Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        attn_impl: str | None = None,
    ) -> torch.Tensor:
        """Sample `max_new_tokens` after the prompt idx (B, T0) with a KV cache; returns
        (B, T0 + new). temperature 0 (or top_k 1) is greedy. Padding rows of a padded
        vocab are never sampled. The cache stays in `self.last_kv_cache`."""
        cfg = self.config
        B, T0 = idx.shape
        total = T0 + max_new_tokens
        if cfg.position == "learned" and total > cfg.max_positions:
            raise ValueError(
                f"prompt ({T0}) + new tokens ({max_new_tokens}) exceed max_positions ({cfg.max_positions})"
            )
        cache = KVCache(cfg, B, total, idx.device, self.tok_emb.weight.dtype)  # each layer at its cap
        self.last_kv_cache = cache
        out = idx
        # the lm_head on the last position only (what serving engines project), as sizing.serve counts
        logits = self.lm_head(self._hidden(idx, self.make_step(T0, 0, idx.device, cache, attn_impl))[:, -1])
        for i in range(max_new_tokens):
            nxt = self._sample(logits, temperature, top_k)
            out = torch.cat((out, nxt), dim=1)
            if i + 1 < max_new_tokens:
                step = self.make_step(1, T0 + i, idx.device, cache, attn_impl)
                logits = self.lm_head(self._hidden(nxt, step)[:, -1])
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
INIT_STD = 0.02  # GPT-2 / nanoGPT: every Linear and Embedding weight ~ N(0, 0.02)
# Projections that write into the residual stream: 2 per layer (attention out, MLP or expert down).
RESIDUAL_OUTPUTS = (".attn.o", ".down")


@torch.no_grad()
def init_weights(model: GPT, seed: int | None = None) -> None:
    """GPT-2's init as nanoGPT writes it: Linear and Embedding weights N(0, 0.02), learned
    positions included (nanoGPT's 0.02; GPT-2's own code used 0.01); biases 0; norm gains 1 and
    norm biases 0; the projections that add into the residual stream (attn.o, mlp.down, every
    expert's down) N(0, 0.02 / sqrt(2L)), since 2L of them sum along the residual path
    (GPT-2 paper, section 2.3). A tied head *is* the embedding and starts as it does; an
    untied head is N(0, 0.02). Logits then start near 0 and the first loss near ln V."""
    device = model.tok_emb.weight.device
    generator = torch.Generator(device=device).manual_seed(seed) if seed is not None else None
    residual_std = INIT_STD / math.sqrt(2 * model.config.n_layers)
    for name, module in model.named_modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            std = residual_std if name.endswith(RESIDUAL_OUTPUTS) else INIT_STD
            nn.init.normal_(module.weight, 0.0, std, generator=generator)
        elif isinstance(module, (nn.LayerNorm, RMSNorm, QKNorm)) and module.weight is not None:
            module.weight.fill_(1.0)
        elif isinstance(module, Attention) and module.cfg.attention_sinks:
            module.sinks.zero_()  # sinks start at logit 0
        elif isinstance(module, LMHead) and not module.tied:
            nn.init.normal_(module.weight, 0.0, INIT_STD, generator=generator)
        bias = getattr(module, "bias", None)
        if isinstance(bias, nn.Parameter):
            bias.zero_()


@contextlib.contextmanager
def _without_default_init():
    """nn.Linear and nn.Embedding skip their own reset_parameters while the model is built on
    meta: init_weights sets every weight afterwards (or nothing is allocated), and the default
    init of DeepSeek-V3's 45,000 linears is half the build time."""
    saved = nn.Linear.reset_parameters, nn.Embedding.reset_parameters
    nn.Linear.reset_parameters = nn.Embedding.reset_parameters = lambda self: None
    try:
        yield
    finally:
        nn.Linear.reset_parameters, nn.Embedding.reset_parameters = saved


def build(
    cfg: ModelConfig,
    device="cpu",
    attn_impl: str = "math",
    dtype: torch.dtype | None = None,
    dropout: float = 0.0,
    seed: int | None = None,
    checkpoint: bool | str = False,
) -> GPT:
    """The reference GPT for `cfg` on `device`. device="meta" allocates nothing and skips
    init (any preset, llama3.1-405b included, builds in about a second). attn_impl: "math",
    "flash" or "sdpa" (= flash). `seed` makes the init reproducible; `checkpoint` ("full"/True,
    "selective", "none"/False) sets activation checkpointing (see GPT.set_checkpointing)."""
    if not isinstance(cfg, ModelConfig):
        raise TypeError(f"build() takes a sizing.ModelConfig, got {type(cfg).__name__}")
    device = torch.device(device)
    with torch.device("meta"), _without_default_init():
        model = GPT(cfg, attn_impl=attn_impl, dropout=dropout)
    if device.type != "meta":
        model = model.to_empty(device=device)
        init_weights(model, seed)
    if dtype is not None:
        model = model.to(dtype)
    return model.set_checkpointing(checkpoint)
