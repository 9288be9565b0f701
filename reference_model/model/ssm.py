"""State mixers in plain PyTorch, built from sizing.hybrid's specs: a Mamba-2 (SSD) block with the
chunked scan and its recurrent step, and a gated-DeltaNet block (the chunked WY form and its
recurrent step). Used by reference_model/verify/hybrid.py to check parameters, FLOPs and state
bytes, and that the chunked forward equals the token-by-token recurrence.

What a FLOP counter sees of the scans: every einsum (a bmm at the aten level), which are the
contractions sizing.hybrid.mixers counts; the decays, exp, softplus, the masks, the inter-chunk
recurrence (a loop of elementwise updates) and DeltaNet's triangular solve (a loop of
elementwise products and sums) are not matmuls and are not counted, by either side. The conv is
run on a left-padded input so that it produces exactly T outputs (2·channels·K FLOPs per token).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from sizing.hybrid import GatedDeltaNet, Mamba2Mixer


def _causal_conv(conv: nn.Conv1d, x: torch.Tensor) -> torch.Tensor:
    """Depthwise causal conv over (B, T, C) -> (B, T, C)."""
    k = conv.kernel_size[0]
    return conv(F.pad(x.transpose(1, 2), (k - 1, 0))).transpose(1, 2)


def _conv_step(conv: nn.Conv1d, state: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One token through the conv: state (B, C, K) shifts in x (B, C); out = Σ_k w·state (+ bias)."""
    state = torch.cat([state[:, :, 1:], x[:, :, None].to(state.dtype)], dim=-1)
    # a bmm per channel (what the counters see as 2·C·K per token); einsum would lower it to mul + sum
    out = torch.bmm(state.to(x.dtype).transpose(0, 1), conv.weight[:, 0, :, None])[..., 0].transpose(0, 1)
    return (out + conv.bias if conv.bias is not None else out), state


def _gated_rms(y: torch.Tensor, z: torch.Tensor, weight: torch.Tensor | None, groups: int) -> torch.Tensor:
    y = y * F.silu(z)
    if weight is None:  # Falcon-H1 without mamba_rms_norm: the gate only
        return y
    shape = y.shape
    y = y.reshape(*shape[:-1], groups, -1)
    y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6)
    return y.reshape(shape) * weight


class Mamba2Block(nn.Module):
    def __init__(self, m: Mamba2Mixer):
        super().__init__()
        self.m = m
        H, conv = m.n_heads, m.conv_channels
        self.in_proj = nn.Linear(m.d_model, m.d_inner + conv + H, bias=m.proj_bias)
        self.conv1d = nn.Conv1d(conv, conv, m.conv_kernel, groups=conv, bias=m.conv_bias)
        self.dt_bias = nn.Parameter(torch.zeros(H))
        self.A_log = nn.Parameter(torch.zeros(H))
        self.D = nn.Parameter(torch.ones(H))
        self.norm = nn.Parameter(torch.ones(m.d_inner)) if m.gated_norm else None
        self.out_proj = nn.Linear(m.d_inner, m.d_model, bias=m.proj_bias)

    def _split(self, zxbcdt):
        m = self.m
        return torch.split(zxbcdt, [m.d_inner, m.conv_channels, m.n_heads], dim=-1)

    def _xbc(self, xbc):
        m = self.m
        x, b, c = torch.split(F.silu(xbc), [m.d_inner, m.n_groups * m.d_state, m.n_groups * m.d_state], dim=-1)
        return x, b, c

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        m = self.m
        Bsz, T, _ = u.shape
        H, P, N, G, Q = m.n_heads, m.head_dim, m.d_state, m.n_groups, m.chunk
        if T % Q:
            raise ValueError(f"sequence length {T} must be a multiple of the chunk {Q}")
        z, xbc, dt = self._split(self.in_proj(u))
        x, b, c = self._xbc(_causal_conv(self.conv1d, xbc))
        dt = F.softplus(dt + self.dt_bias)
        a = -torch.exp(self.A_log) * dt  # (B, T, H) log-decay per step
        x = x.reshape(Bsz, T // Q, Q, H, P)
        xdt = x * dt.reshape(Bsz, T // Q, Q, H, 1)
        b = b.reshape(Bsz, T // Q, Q, G, N)
        c = c.reshape(Bsz, T // Q, Q, G, N)
        y = ssd_chunked(xdt, a.reshape(Bsz, T // Q, Q, H), b, c)
        y = y + x * self.D[:, None]
        y = _gated_rms(y.reshape(Bsz, T, H * P), z, self.norm, G)
        return self.out_proj(y)

    def init_state(self, batch: int) -> dict[str, torch.Tensor]:
        """The per-sequence state, as HF's cache keeps it: conv in the weights' dtype, SSM in fp32."""
        m, dtype = self.m, self.in_proj.weight.dtype
        return {
            "conv": torch.zeros(batch, m.conv_channels, m.conv_kernel, dtype=dtype),
            "ssm": torch.zeros(batch, m.n_heads, m.head_dim, m.d_state, dtype=torch.float32),
        }

    def step(self, u: torch.Tensor, state: dict[str, torch.Tensor]) -> torch.Tensor:
        """One token (B, d) with the recurrence: h = exp(dt·A)·h + dt·x⊗B, y = h·C + D·x."""
        m = self.m
        H, P, N, G = m.n_heads, m.head_dim, m.d_state, m.n_groups
        z, xbc, dt = self._split(self.in_proj(u))
        xbc, state["conv"] = _conv_step(self.conv1d, state["conv"], xbc)
        x, b, c = self._xbc(xbc)
        dt = F.softplus(dt + self.dt_bias)
        x = x.reshape(-1, H, P)
        b = b.reshape(-1, G, N).repeat_interleave(H // G, dim=1)
        c = c.reshape(-1, G, N).repeat_interleave(H // G, dim=1)
        update = torch.einsum("bhp,bhn->bhpn", x * dt[..., None], b)
        decay = torch.exp(-torch.exp(self.A_log) * dt)[..., None, None]
        state["ssm"] = (state["ssm"] * decay + update).to(state["ssm"].dtype)
        y = torch.einsum("bhpn,bhn->bhp", state["ssm"].to(x.dtype), c) + x * self.D[:, None]
        return self.out_proj(_gated_rms(y.reshape(-1, H * P), z, self.norm, G))


def ssd_chunked(x, a, b, c):
    """Chunked SSD (Dao & Gu 2024, section 6). x (B, c, Q, H, P) already scaled by dt, a (B, c, Q, H)
    the log-decays, b and c (B, c, Q, G, N). Returns y (B, c, Q, H, P)."""
    nc, Q, H = x.shape[1:4]
    G = b.shape[3]
    r = H // G
    acs = torch.cumsum(a, dim=2)  # (B, c, Q, H)
    seg = acs[:, :, :, None, :] - acs[:, :, None, :, :]  # (B, c, l, s, H)
    mask = torch.tril(torch.ones(Q, Q, dtype=torch.bool))[None, None, :, :, None]
    decay = torch.where(mask, torch.exp(seg.masked_fill(~mask, 0)), torch.zeros((), dtype=x.dtype))
    cb = torch.einsum("bclgn,bcsgn->bcgls", c, b).repeat_interleave(r, dim=2)  # G·Q·N per token
    y_diag = torch.einsum("bchls,bcshp->bclhp", cb * decay.permute(0, 1, 4, 2, 3), x)  # H·Q·P
    b_h, c_h = b.repeat_interleave(r, dim=3), c.repeat_interleave(r, dim=3)
    to_end = torch.exp(acs[:, :, -1:, :] - acs)  # decay from each position to its chunk's end
    states = torch.einsum("bclhn,bclhp->bchpn", b_h * to_end[..., None], x)  # H·N·P
    carried, s = [], torch.zeros_like(states[:, 0])
    for i in range(nc):  # the inter-chunk recurrence: elementwise
        carried.append(s)
        s = s * torch.exp(acs[:, i, -1, :])[:, :, None, None] + states[:, i]
    carried = torch.stack(carried, dim=1)
    y_off = torch.einsum("bclhn,bchpn->bclhp", c_h * torch.exp(acs)[..., None], carried)  # H·N·P
    return y_diag + y_off


class GatedDeltaNetBlock(nn.Module):
    def __init__(self, m: GatedDeltaNet):
        super().__init__()
        self.m = m
        d, hv = m.d_model, m.n_v_heads
        self.in_proj_qkvz = nn.Linear(d, 2 * m.key_dim + 2 * m.value_dim, bias=False)
        self.in_proj_ba = nn.Linear(d, 2 * hv, bias=False)
        self.conv1d = nn.Conv1d(m.conv_channels, m.conv_channels, m.conv_kernel, groups=m.conv_channels, bias=False)
        self.dt_bias = nn.Parameter(torch.ones(hv))
        self.A_log = nn.Parameter(torch.zeros(hv))
        self.norm = nn.Parameter(torch.ones(m.d_v))
        self.out_proj = nn.Linear(m.value_dim, d, bias=False)

    def _inputs(self, u, conv):
        m = self.m
        q, k, v, z = torch.split(self.in_proj_qkvz(u), [m.key_dim, m.key_dim, m.value_dim, m.value_dim], dim=-1)
        beta, a = torch.split(self.in_proj_ba(u), [m.n_v_heads, m.n_v_heads], dim=-1)
        qkv = conv(torch.cat([q, k, v], dim=-1))
        q, k, v = torch.split(F.silu(qkv), [m.key_dim, m.key_dim, m.value_dim], dim=-1)
        r = m.n_v_heads // m.n_k_heads
        shape = q.shape[:-1]
        q = F.normalize(q.reshape(*shape, m.n_k_heads, m.d_k), dim=-1).repeat_interleave(r, dim=-2)
        k = F.normalize(k.reshape(*shape, m.n_k_heads, m.d_k), dim=-1).repeat_interleave(r, dim=-2)
        v = v.reshape(*shape, m.n_v_heads, m.d_v)
        g = -torch.exp(self.A_log) * F.softplus(a + self.dt_bias)  # log-decay
        return q * m.d_k**-0.5, k, v, torch.sigmoid(beta), g, z

    def _out(self, o, z):
        """Per-head RMSNorm over d_v (one gain shared by the heads), gated by silu(z)."""
        y = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm * F.silu(z.reshape(o.shape))
        return self.out_proj(y.reshape(*o.shape[:-2], -1))

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        m = self.m
        T, Q = u.shape[1], m.chunk
        if T % Q:
            raise ValueError(f"sequence length {T} must be a multiple of the chunk {Q}")
        q, k, v, beta, g, z = self._inputs(u, lambda x: _causal_conv(self.conv1d, x))
        o = deltanet_chunked(q, k, v, beta, g, Q)
        return self._out(o, z)

    def init_state(self, batch: int) -> dict[str, torch.Tensor]:
        m, dtype = self.m, self.in_proj_qkvz.weight.dtype
        return {
            "conv": torch.zeros(batch, m.conv_channels, m.conv_kernel, dtype=dtype),
            "ssm": torch.zeros(batch, m.n_v_heads, m.d_k, m.d_v, dtype=torch.float32),
        }

    def step(self, u: torch.Tensor, state: dict[str, torch.Tensor]) -> torch.Tensor:
        def conv(x):
            out, state["conv"] = _conv_step(self.conv1d, state["conv"], x)
            return out

        q, k, v, beta, g, z = self._inputs(u, conv)
        s = state["ssm"].to(q.dtype) * torch.exp(g)[..., None, None]
        remembered = torch.einsum("bhkv,bhk->bhv", s, k)
        s = s + torch.einsum("bhk,bhv->bhkv", k, (v - remembered) * beta[..., None])
        state["ssm"] = s.to(state["ssm"].dtype)
        return self._out(torch.einsum("bhkv,bhk->bhv", s, q), z)


def deltanet_chunked(q, k, v, beta, g, Q):
    """Chunked gated delta rule, WY form (Yang et al. 2024). q, k (B, T, H, d_k), v (B, T, H, d_v),
    beta and g (B, T, H). Returns o (B, T, H, d_v)."""
    Bsz, T, H, dk = k.shape
    dv = v.shape[-1]
    nc = T // Q
    q, k, v = (t.reshape(Bsz, nc, Q, H, -1).transpose(2, 3) for t in (q, k, v))  # (B, c, H, Q, d)
    beta = beta.reshape(Bsz, nc, Q, H).transpose(2, 3)
    gc = torch.cumsum(g.reshape(Bsz, nc, Q, H).transpose(2, 3), dim=-1)  # (B, c, H, Q)
    decay = torch.exp(gc[..., :, None] - gc[..., None, :]).tril()
    strict = torch.tril(torch.ones(Q, Q, dtype=torch.bool), -1)
    kb, vb = k * beta[..., None], v * beta[..., None]
    attn = -(torch.einsum("bchld,bchsd->bchls", kb, k) * decay).masked_fill(~strict, 0)  # Q·d_k
    for i in range(1, Q):  # the triangular solve, elementwise
        attn[..., i, :i] = attn[..., i, :i] + (attn[..., i, :, None].clone() * attn[..., :, :i].clone()).sum(-2)
    tmat = attn + torch.eye(Q, dtype=attn.dtype)
    w = torch.einsum("bchls,bchsd->bchld", tmat, kb * torch.exp(gc)[..., None])  # Q·d_k
    u = torch.einsum("bchls,bchsd->bchld", tmat, vb)  # Q·d_v
    s = torch.zeros(Bsz, H, dk, dv, dtype=q.dtype)
    out = []
    for i in range(nc):
        qk = torch.einsum("bhld,bhsd->bhls", q[:, i], k[:, i]) * decay[:, i]  # Q·d_k
        v_new = u[:, i] - torch.einsum("bhld,bhdv->bhlv", w[:, i], s)  # d_k·d_v
        o = torch.einsum("bhld,bhdv->bhlv", q[:, i] * torch.exp(gc[:, i])[..., None], s)  # d_k·d_v
        out.append(o + torch.einsum("bhls,bhsv->bhlv", qk, v_new))  # Q·d_v
        last = gc[:, i, :, -1]
        k_end = k[:, i] * torch.exp(last[..., None] - gc[:, i])[..., None]
        s = s * torch.exp(last)[..., None, None] + torch.einsum("bhld,bhlv->bhdv", k_end, v_new)  # d_k·d_v
    return torch.stack(out, dim=1).transpose(2, 3).reshape(Bsz, T, H, dv)
