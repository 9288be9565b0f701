"""A ViT tower in plain PyTorch, built from sizing.vision.model.VisionTower: patch embedding (a Linear
over flattened patches: the same parameters and FLOPs as the conv with stride = kernel), class
token and learned positions where the tower has them, pre-norm blocks (q, k, v, o and the MLP,
each Linear with a bias), bidirectional attention over the image's patches or over windows of
`window_patches` in windowed blocks, and the outer norms. Used by hybrid_verify.py."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from sizing.vision import VisionTower


class _Norm(nn.Module):
    def __init__(self, h: int, bias: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.bias = nn.Parameter(torch.zeros(h)) if bias else None

    def forward(self, x):
        if self.bias is not None:
            return F.layer_norm(x, x.shape[-1:], self.weight, self.bias)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class ViTBlock(nn.Module):
    def __init__(self, t: VisionTower, windowed: bool):
        super().__init__()
        h, i = t.hidden, t.intermediate
        self.heads, self.window = t.heads, t.window_patches if windowed else None
        self.norm1, self.norm2 = _Norm(h, t.norm_bias), _Norm(h, t.norm_bias)
        self.q, self.k, self.v, self.o = (nn.Linear(h, h) for _ in range(4))
        self.fc1 = nn.Linear(h, i)
        self.gate = nn.Linear(h, i) if t.gated_mlp else None
        self.fc2 = nn.Linear(i, h)

    def _attention(self, x):
        B, N, h = x.shape
        W = self.window or N
        q, k, v = (p(x).reshape(B * N // W, W, self.heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        scores = torch.softmax(q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5, dim=-1)
        return self.o((scores @ v).transpose(1, 2).reshape(B, N, h))

    def forward(self, x):
        x = x + self._attention(self.norm1(x))
        y = self.norm2(x)
        y = F.silu(self.gate(y)) * self.fc1(y) if self.gate is not None else F.gelu(self.fc1(y))
        return x + self.fc2(y)


class ViTTower(nn.Module):
    def __init__(self, t: VisionTower):
        super().__init__()
        self.t = t
        kernel = t.channels * t.temporal_patch * t.patch * t.patch
        self.patch_embed = nn.Linear(kernel, t.hidden, bias=t.patch_bias)
        self.class_token = nn.Parameter(torch.zeros(t.hidden)) if t.class_token else None
        n_pos = t.patches_per_side**2 + (1 if t.class_token else 0)
        self.positions = nn.Parameter(torch.zeros(n_pos, t.hidden)) if t.learned_positions else None
        full = t.layers if t.full_attention_layers is None else t.full_attention_layers
        self.blocks = nn.ModuleList(ViTBlock(t, windowed=i >= full) for i in range(t.layers))
        self.pre_norm = _Norm(t.hidden, t.norm_bias) if t.pre_norm else None
        self.post_norm = _Norm(t.hidden, t.norm_bias) if t.post_norm else None

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        """patches (B, N, c·t·p·p), already cut from the image."""
        x = self.patch_embed(patches)
        if self.class_token is not None:
            x = torch.cat([self.class_token.expand(x.shape[0], 1, -1), x], dim=1)
        if self.positions is not None:
            x = x + self.positions[: x.shape[1]]
        if self.pre_norm is not None:
            x = self.pre_norm(x)
        for block in self.blocks:
            x = block(x)
        return self.post_norm(x) if self.post_norm is not None else x
