"""The reference GPT's position-wise layers: norms (LayerNorm, RMSNorm), the MLP (plain or
gated) and the mixture of experts. Module names match sizing.formulas.params' component keys."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from sizing.inputs import ModelConfig

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
    over experts on the tokens routed to each: every token visits exactly k experts. Shared
    experts (DeepSeek, Qwen2-MoE, Llama-4) run on every token, gated by a sigmoid in Qwen2-MoE."""

    def __init__(self, cfg: ModelConfig, dropout: float):
        super().__init__()
        self.top_k = cfg.top_k
        self.router = nn.Linear(cfg.d_model, cfg.n_experts, bias=cfg.router_bias)
        self.experts = nn.ModuleList(MLP(cfg, cfg.expert_ff, with_dropout=False) for _ in range(cfg.n_experts))
        if cfg.n_shared_experts:  # one MLP of E_s·f_s, as HF DeepSeek / Qwen2-MoE / Llama-4 build it
            self.shared = MLP(cfg, cfg.n_shared_experts * cfg.shared_ff, with_dropout=False)
        if cfg.shared_expert_gate:
            self.shared_gate = nn.Linear(cfg.d_model, 1, bias=False)
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
        if hasattr(self, "shared"):  # every token, beside the routed experts
            shared = self.shared(flat)
            if hasattr(self, "shared_gate"):
                shared = torch.sigmoid(self.shared_gate(flat)) * shared
            out = out + shared
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
