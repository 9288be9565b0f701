"""Mllama's cross-attention decoder layer (Llama 3.2 Vision) in plain PyTorch, built from the language
model's ModelConfig: text tokens attend to the projected vision tokens through q (from the text), k
and v (from the vision tokens), per-head q/k RMSNorms, a tanh-gated residual, then a tanh-gated SwiGLU
MLP. For reference_model/verify/hybrid.py: its parameters and FLOPs against sizing.vision.mllama."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reference_model.model.layers import RMSNorm
from sizing.inputs import ModelConfig


class CrossAttentionLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d, self.h, self.h_kv, self.dh = cfg.d_model, cfg.n_heads, cfg.kv_heads, cfg.d_head
        self.q, self.o = nn.Linear(d, cfg.q_width, bias=False), nn.Linear(cfg.q_width, d, bias=False)
        self.k, self.v = nn.Linear(d, cfg.kv_width, bias=False), nn.Linear(d, cfg.kv_width, bias=False)
        self.q_norm, self.k_norm = RMSNorm(self.dh, eps=cfg.norm_eps), RMSNorm(self.dh, eps=cfg.norm_eps)
        self.attn_gate, self.mlp_gate = nn.Parameter(torch.zeros(1)), nn.Parameter(torch.zeros(1))
        self.attn_norm, self.mlp_norm = RMSNorm(d, eps=cfg.norm_eps), RMSNorm(d, eps=cfg.norm_eps)
        self.gate = nn.Linear(d, cfg.d_ff, bias=False)
        self.up = nn.Linear(d, cfg.d_ff, bias=False)
        self.down = nn.Linear(cfg.d_ff, d, bias=False)

    def forward(self, x: torch.Tensor, vision: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        N = vision.shape[1]
        q = self.q_norm(self.q(self.attn_norm(x)).view(B, T, self.h, self.dh)).transpose(1, 2)
        k = self.k_norm(self.k(vision).view(B, N, self.h_kv, self.dh)).transpose(1, 2)
        v = self.v(vision).view(B, N, self.h_kv, self.dh).transpose(1, 2)
        rep = self.h // self.h_kv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        probs = F.softmax(torch.matmul(q, k.transpose(-1, -2)) * self.dh**-0.5, dim=-1)  # every text token: all N
        attn = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, self.h * self.dh)
        x = x + self.attn_gate.tanh() * self.o(attn)
        y = self.mlp_norm(x)
        return x + self.mlp_gate.tanh() * self.down(F.silu(self.gate(y)) * self.up(y))
