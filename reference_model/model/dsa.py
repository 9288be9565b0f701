"""DeepSeek-V3.2's lightning indexer (DSA), built from a ModelConfig with index_heads set:

    q_I = wq_b(c_q)            (B, T, H_I, d_I), from MLA's query latent c_q = q_a_norm(q_a(x))
    k_I = k_norm(wk(x))        (B, T, d_I), one key per token shared by the heads (cached)
    w   = weights_proj(x)      (B, T, H_I)
    I[t, s] = sum_j w[t, j] * relu(q_I[t, j] . k_I[s])       (two matmuls: H_I·d_I and H_I per pair)

RoPE rotates the first d_r dims of q_I and k_I (as HF DeepseekV32Indexer does). Each query then
attends to the keys of its top index_topk scores among those the causal mask allows; every score is
computed (the `full` count of sizing.formulas.flops.index_scores_flops).
"""

from __future__ import annotations

import torch
import torch.nn as nn

from sizing.inputs import ModelConfig


class DSAIndexer(nn.Module):
    trained_by_own_loss = True  # a KL loss to the main attention, not the LM loss (reference_model.probes.memory)

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, d_i = cfg.index_heads, cfg.index_head_dim
        self.heads, self.d_i, self.topk = H, d_i, cfg.index_topk
        self.wq_b = nn.Linear(cfg.q_lora_rank, H * d_i, bias=False)
        self.wk = nn.Linear(cfg.d_model, d_i, bias=False)
        self.k_norm = nn.LayerNorm(d_i, eps=1e-6)
        self.weights_proj = nn.Linear(cfg.d_model, H, bias=False)

    def key(self, x: torch.Tensor, rotate) -> torch.Tensor:
        """The index key of each new token, (B, 1, T, d_I): what the cache keeps beside the latent.
        `rotate` applies the step's RoPE (the attention's own apply_rope) to (B, heads, T, d). The
        input is detached: the indexer learns from its own loss, not the LM's (DeepSeek-V3.2-Exp 2.2)."""
        return rotate(self.k_norm(self.wk(x.detach())).unsqueeze(1)).detach()

    def sparse_mask(self, x: torch.Tensor, q_latent: torch.Tensor, keys: torch.Tensor, allowed, rotate, scorer):
        """(B, 1, T, T_k) boolean: the top-k allowed keys of each query by index score; `scorer` is
        the attention's IndexScores (so counters file its matmuls as attn.index_scores)."""
        B, T, _ = x.shape  # no gradient reaches the indexer from here: the top-k mask is boolean
        q = self.wq_b(q_latent).view(B, T, self.heads, self.d_i).transpose(1, 2)  # (B, H, T, d_I)
        q = rotate(q).transpose(1, 2)  # (B, T, H, d_I)
        index = scorer(q, keys, self.weights_proj(x))  # (B, T, T_k)
        index = index.masked_fill(~allowed, float("-inf"))
        k = min(self.topk, index.shape[-1])
        kth = index.topk(k, dim=-1).values[..., -1:]  # each query's k-th best score (ties keep both)
        return ((index >= kth) & allowed).unsqueeze(1)


class IndexScores(nn.Module):
    """I[t, s] = sum_j w[t, j] relu(q_I[t, j] . k_I[s]): H_I·d_I and H_I multiply-adds per pair."""

    def forward(self, q: torch.Tensor, keys: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        scores = torch.relu(torch.matmul(q, keys.squeeze(1).transpose(-1, -2).unsqueeze(1)))  # (B, T, H, T_k)
        return torch.matmul(weights.unsqueeze(-2), scores).squeeze(-2)


def fill_own_loss_grads(model: nn.Module) -> None:
    """A module trained by a loss of its own (this indexer: a KL loss to the main attention, its input
    detached from the LM loss, DeepSeek-V3.2-Exp report section 2.2) gets no gradient from the LM
    loss; a zero gradient stands in for its own, so that an optimizer keeps its states as training
    does (reference_model/probes/memory.py)."""
    for module in model.modules():
        if getattr(module, "trained_by_own_loss", False):
            for p in module.parameters():
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
