"""MLA decode in the absorbed form (DeepSeek-V2 section 2.1.2), as DeepSeek, vLLM and SGLang
serve it: attention runs over the cached latent c_kv and the shared rope key, with kv_b's key
half W_UK folded into the query and its value half W_UV applied after AV, so kv_b never runs on
the cache. Per new token and layer, the matmuls are (B batch, h heads, C cached positions):

    q_nope @ W_UK        2·h·d_n·r_kv           the query in latent space
    [q_lat, q_rope] @ [c_kv, k_rope]^T          2·h·(r_kv + d_r)·C   (attn.scores)
    probs @ c_kv         2·h·r_kv·C             (attn.av)
    o_lat @ W_UV^T       2·h·r_kv·d_v           back to per-head values

which is sizing.formulas.flops.mla_absorbed_decode_flops_per_token. The output equals the naive form's
(tests/test_mla_absorbed.py): only the order of the products changes.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def absorbed_mla_attention(attn, q: torch.Tensor, c_kv: torch.Tensor, k_rope: torch.Tensor, mask: torch.Tensor):
    """softmax(q·K^T / sqrt(d_n + d_r)) V over the latent cache, (B, h, T, d_v), without expanding
    K or V per head. q: (B, h, T, d_n + d_r); c_kv (B, 1, C, r_kv) as cached (normalised here,
    elementwise); k_rope (B, 1, C, d_r); mask (T, C), True where a key is visible."""
    cfg = attn.cfg
    h, d_n, d_v, r = attn.n_heads, cfg.qk_nope_head_dim, cfg.v_head_dim, cfg.kv_lora_rank
    w = attn.kv_b.weight.view(h, d_n + d_v, r)  # per head: rows of k_nope, then rows of v
    w_uk, w_uv = w[:, :d_n, :], w[:, d_n:, :]
    q_nope, q_rope = q.split((d_n, cfg.qk_rope_head_dim), dim=-1)
    q_lat = q_nope @ w_uk  # (B, h, T, d_n) @ (h, d_n, r) -> (B, h, T, r)
    latent = attn.kv_a_norm(c_kv)
    scores = attn.scores(torch.cat((q_lat, q_rope), dim=-1), torch.cat((latent, k_rope), dim=-1))
    probs = F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1, dtype=torch.float32)
    o_lat = attn.av(probs.to(latent.dtype), latent)  # (B, h, T, r)
    return o_lat @ w_uv.transpose(-2, -1)  # (B, h, T, d_v)
