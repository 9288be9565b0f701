"""Kimi Delta Attention (Kimi Linear, arXiv:2510.26692) in plain PyTorch, built from
sizing.hybrid.KimiDeltaAttention: the chunked form and its recurrent step, for
reference_model/verify/hybrid.py (parameters by component, FLOPs, state bytes, and that the chunked
forward equals the token-by-token recurrence).

KDA is the gated delta rule with a forget gate per channel: the state S (d_k x d_v per head) decays
by diag(exp(g_t)) before the delta update S += k_t (beta_t (v_t - S^T k_t))^T. In a chunk, the decay
between positions i >= j is exp(G_i - G_j) channel by channel (G the cumulative log decay), which
factors as (x_i * exp(G_i)) . (y_j * exp(-G_j)): the chunk's contractions are gated DeltaNet's, on
decay-scaled keys and queries (the scaling is elementwise), so a FLOP counter sees the same einsums as
reference_model.model.ssm.deltanet_chunked.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reference_model.model.ssm import _causal_conv, _conv_step
from sizing.hybrid import KimiDeltaAttention


class _Pair(nn.Module):
    """A low-rank pair of projections, a: d -> D then b: D -> H·D (KDA's forget and output gates)."""

    def __init__(self, d: int, rank: int, width: int):
        super().__init__()
        self.a, self.b = nn.Linear(d, rank, bias=False), nn.Linear(rank, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


class _ForgetGate(_Pair):
    def __init__(self, m: KimiDeltaAttention):
        super().__init__(m.d_model, m.head_dim, m.width)
        self.dt_bias = nn.Parameter(torch.zeros(m.width))
        self.A_log = nn.Parameter(torch.zeros(m.n_heads))
        self.heads = m.n_heads

    def log_decay(self, x: torch.Tensor) -> torch.Tensor:
        """g (B, T, H, D) <= 0: -exp(A_log) softplus(f_b(f_a(x)) + dt_bias), per channel."""
        g = F.softplus(self(x) + self.dt_bias).unflatten(-1, (self.heads, -1))
        return -torch.exp(self.A_log)[:, None] * g


class KDABlock(nn.Module):
    def __init__(self, m: KimiDeltaAttention):
        super().__init__()
        self.m = m
        self.q_k_v_proj = nn.Linear(m.d_model, 3 * m.width, bias=False)  # HF's q, k and v projections, fused
        self.conv1d = nn.Conv1d(m.conv_channels, m.conv_channels, m.conv_kernel, groups=m.conv_channels, bias=False)
        self.forget_gate = _ForgetGate(m)
        self.b_proj = nn.Linear(m.d_model, m.n_heads, bias=False)
        self.g_proj = _Pair(m.d_model, m.head_dim, m.width)
        self.o_norm = nn.Parameter(torch.ones(m.head_dim))
        self.o_proj = nn.Linear(m.width, m.d_model, bias=False)

    def _inputs(self, u, conv):
        m = self.m
        q, k, v = F.silu(conv(self.q_k_v_proj(u))).unflatten(-1, (3, m.n_heads, m.head_dim)).unbind(-3)
        q, k = F.normalize(q, dim=-1) * m.head_dim**-0.5, F.normalize(k, dim=-1)
        return q, k, v, torch.sigmoid(self.b_proj(u)), self.forget_gate.log_decay(u)

    def _out(self, o, u):
        gate = torch.sigmoid(self.g_proj(u)).unflatten(-1, (self.m.n_heads, -1))
        y = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-6) * self.o_norm * gate
        return self.o_proj(y.flatten(-2))

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        Q = self.m.chunk
        if u.shape[1] % Q:
            raise ValueError(f"sequence length {u.shape[1]} must be a multiple of the chunk {Q}")
        q, k, v, beta, g = self._inputs(u, lambda x: _causal_conv(self.conv1d, x))
        return self._out(kda_chunked(q, k, v, beta, g, Q), u)

    def init_state(self, batch: int) -> dict[str, torch.Tensor]:
        m, dtype = self.m, self.q_k_v_proj.weight.dtype
        return {
            "conv": torch.zeros(batch, m.conv_channels, m.conv_kernel, dtype=dtype),
            "ssm": torch.zeros(batch, m.n_heads, m.head_dim, m.head_dim, dtype=torch.float32),
        }

    def step(self, u: torch.Tensor, state: dict[str, torch.Tensor]) -> torch.Tensor:
        def conv(x):
            out, state["conv"] = _conv_step(self.conv1d, state["conv"], x)
            return out

        q, k, v, beta, g = self._inputs(u, conv)
        s = state["ssm"].to(q.dtype) * torch.exp(g)[..., None]  # decay each key channel's row
        remembered = torch.einsum("bhkv,bhk->bhv", s, k)
        s = s + torch.einsum("bhk,bhv->bhkv", k, (v - remembered) * beta[..., None])
        state["ssm"] = s.to(state["ssm"].dtype)
        return self._out(torch.einsum("bhkv,bhk->bhv", s, q), u)


def kda_chunked(q, k, v, beta, g, Q):
    """Chunked KDA, the WY form with per-channel decay. q, k, v, g (B, T, H, D); beta (B, T, H)."""
    Bsz, T, H, D = k.shape
    nc = T // Q
    q, k, v, g = (t.reshape(Bsz, nc, Q, H, D).transpose(2, 3) for t in (q, k, v, g))  # (B, c, H, Q, D)
    beta = beta.reshape(Bsz, nc, Q, H).transpose(2, 3)
    G = torch.cumsum(g, dim=-2)  # per-channel cumulative log decay within the chunk
    up, down = torch.exp(G), torch.exp(-G)
    strict = torch.tril(torch.ones(Q, Q, dtype=torch.bool), -1)
    kb, vb = k * beta[..., None], v * beta[..., None]
    attn = -torch.einsum("bchld,bchsd->bchls", kb * up, k * down).masked_fill(~strict, 0)  # Q·d_k
    for i in range(1, Q):  # the triangular solve, elementwise
        attn[..., i, :i] = attn[..., i, :i] + (attn[..., i, :, None].clone() * attn[..., :, :i].clone()).sum(-2)
    tmat = attn + torch.eye(Q, dtype=attn.dtype)
    w = torch.einsum("bchls,bchsd->bchld", tmat, kb * up)  # Q·d_k
    u = torch.einsum("bchls,bchsd->bchld", tmat, vb)  # Q·d_v
    causal = torch.tril(torch.ones(Q, Q, dtype=torch.bool))
    s = torch.zeros(Bsz, H, D, D, dtype=q.dtype)
    out = []
    for i in range(nc):
        qk = torch.einsum("bhld,bhsd->bhls", q[:, i] * up[:, i], k[:, i] * down[:, i]).masked_fill(~causal, 0)
        v_new = u[:, i] - torch.einsum("bhld,bhdv->bhlv", w[:, i], s)  # d_k·d_v
        o = torch.einsum("bhld,bhdv->bhlv", q[:, i] * up[:, i], s)  # d_k·d_v
        out.append(o + torch.einsum("bhls,bhsv->bhlv", qk, v_new))  # Q·d_v
        last = G[:, i, :, -1:]  # (B, H, 1, D)
        k_end = k[:, i] * torch.exp(last - G[:, i])
        s = s * torch.exp(last).transpose(-1, -2) + torch.einsum("bhld,bhlv->bhdv", k_end, v_new)  # d_k·d_v
    return torch.stack(out, dim=1).transpose(2, 3).reshape(Bsz, T, H, D)
