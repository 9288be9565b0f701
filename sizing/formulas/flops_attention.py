"""Forward FLOPs of the attention products QK^T and AV, and the query-key pairs they score under
each convention (`full`: T x T; `causal`: T(T+1)/2, capped by a sliding window or a chunk).
Apart from the weight matmuls (flops_linear.py): these grow with T^2, not with the parameters."""

from __future__ import annotations

from sizing.formulas.flops_linear import MATMUL_FLOPS_PER_MAC
from sizing.inputs import ModelConfig


def attended_pairs(seq_len: int, attention: str, window: int | None = None, chunk: int | None = None) -> int:
    """Query-key pairs scored in one sequence of T tokens (per head, per layer). `causal`: query i
    (1-based) sees keys 1..i, at most the last W of them with a window, or only those of its own
    chunk of C positions with chunked attention (Llama-4). `full`: T x T whatever the mask."""
    T = seq_len
    if attention == "full":
        return T * T
    if chunk is not None:
        C = min(chunk, T)
        full_chunks, rest = divmod(T, C)
        return full_chunks * C * (C + 1) // 2 + rest * (rest + 1) // 2  # each chunk is causal within itself
    if window is None or window >= T:
        return T * (T + 1) // 2  # query i (1-based) sees keys 1..i
    W = window
    return W * (W + 1) // 2 + (T - W) * W  # the first W queries ramp up, the rest see W keys


def layer_pairs(cfg: ModelConfig, seq_len: int, attention: str) -> int:
    """Query-key pairs of one sequence summed over the layers: local layers (a sliding window or a
    chunk) and global ones (every full_attention_every-th, or all) each at their own cap. Under
    DSA, `causal` caps every query at the k_I keys its indexer picks (the sparse kernel's work);
    `full` stays T x T, the dense masked attention transformers' DeepseekV32 runs."""
    local = global_ = attended_pairs(seq_len, attention)
    if attention == "causal" and cfg.has_indexer:  # DSA: each query attends to its top-k keys at most
        return cfg.n_layers * attended_pairs(seq_len, attention, cfg.index_topk)
    if attention == "causal" and cfg.local_window is not None:
        local = attended_pairs(seq_len, attention, cfg.sliding_window, cfg.attention_chunk)
    return cfg.n_local_layers * local + cfg.n_global_layers * global_


def attention_matmul_flops(n_layers: int, n_heads: int, d_head: int, pairs: int) -> int:
    """One attention product, QK^T or AV, over `pairs` query-key pairs per head, all layers:
    a d_h-long dot product (QK^T) or a d_h-wide row update (AV) per pair per query head.
    The one attention formula: training, decoding and PaLM's 12·L·H·Q·T all call it.
    `pairs` may be summed over layers already (then n_layers is 1)."""
    return MATMUL_FLOPS_PER_MAC * n_layers * n_heads * d_head * pairs


def attention_scores_flops(cfg: ModelConfig, seq_len: int, attention: str) -> int:
    """QK^T over one sequence, at the q/k head width (d_h; d_n + d_r under MLA). Query heads set
    the cost; GQA shares K between heads but each head still scores its own pairs."""
    return attention_matmul_flops(1, cfg.n_heads, cfg.qk_head_width, layer_pairs(cfg, seq_len, attention))


def attention_values_flops(cfg: ModelConfig, seq_len: int, attention: str) -> int:
    """A @ V: each pair's weight scales a value row of d_h (d_v under MLA)."""
    return attention_matmul_flops(1, cfg.n_heads, cfg.v_head_width, layer_pairs(cfg, seq_len, attention))


def index_scores_flops(cfg: ModelConfig, seq_len: int, attention: str) -> int:
    """DSA's indexer scores every (query, key) pair the causal mask allows: H_I dot products of d_I
    and their weighted sum over the heads, 2·H_I·(d_I + 1) FLOPs per pair, in every layer
    (`full`: T keys per query, as for attention)."""
    pairs = cfg.n_layers * attended_pairs(seq_len, attention)
    return attention_matmul_flops(1, cfg.index_heads, cfg.index_head_dim + 1, pairs)
