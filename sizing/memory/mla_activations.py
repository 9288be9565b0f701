"""Saved activations of multi-head latent attention (MLA, DeepSeek-V2 sec. 2.1, arXiv:2405.04434)
under a training stack's fused kernels (sizing.memory.stack_activations), per token and layer.

MLA projects the block's normed input down to latents and up to the heads:
c_q = q_a(x) (r_q wide; absent without q_lora_rank, q read straight off x), normed, q = q_b(c_q)
(h x (d_nope + d_rope)); kv_a(x) = [c_kv (r_kv), k_rope (d_rope, one RoPE key shared by the
heads)], c_kv normed, [k_nope, v] = kv_b(c_kv) (h x (d_nope + d_v)). Kept for backward, as a fused
stack keeps a pre-norm block (RMSNorm: its input and rstd, the output its GEMM saves):

* the latent norms' inputs c_q and c_kv (a bytes), their rstd (fp32), their outputs as q_b and
  kv_b save them (bf16, or fp8 under fp8 GEMMs), the RoPE key k_rope (a bytes);
* q, k (h x (d_nope + d_rope)) and v (h x d_v) for the attention kernel's backward, its output
  (h x d_v) and fp32 logsumexp (flash), or its probabilities (unfused);
* the output projection's saved input (fp8 beside the bf16 output under TE).

A stack's `recomputed` conventions (sizing.parallel.memory_stack) drop what its backward
re-runs: "norm" the norm outputs; "mla_up" q, k and v, recomputed from the latents kept above
(DeepSeek-V3, arXiv:2412.19437 sec. 3.2.3: "We recompute all RMSNorm operations and MLA
up-projections during back-propagation"). `attn_out_bits` keeps the attention output once, in a
format both the attention's backward and the output projection read (DeepSeek-V3 sec. 3.3.3:
E5M6, 12 bits, in 1 x 128 tiles with fp32 scales).
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.inputs import ModelConfig
from sizing.memory.fp8 import get_fp8_recipe
from sizing.memory.states import FP32_BYTES
from sizing.vocabulary import ceil_div

SavedInput = Callable[[int], int]


def attention_output_bytes(n_elements: int, bits: int, recipe: str) -> int:
    """One copy of the attention output in a `bits`-wide format with the recipe's input scales
    (DeepSeek-V3's E5M6: 12 bits, one fp32 scale per 1 x 128 tile)."""
    r = get_fp8_recipe(recipe)
    scales = r.scale_bytes * ceil_div(n_elements, r.input_block) if r.input_block else 0
    return ceil_div(n_elements * bits, 8) + scales


def mla_terms(
    cfg: ModelConfig,
    terms,
    b: int,
    T: int,
    a: int,
    flash: bool,
    selective: bool,
    g: SavedInput,
    recomputed: tuple[str, ...] = (),
    out_copy: int | None = None,
) -> None:
    """MLA's saved tensors of one layer (module docstring). g: a GEMM's saved input bytes;
    out_copy: the attention output's bytes when one copy serves attention and the output
    projection (None: TE's bf16 output beside g's copy)."""
    t, h = b * T, cfg.n_heads
    keep_norm_out = "norm" not in recomputed
    latents = [("attn.q_a_norm", cfg.q_lora_rank)] if cfg.q_lora_rank is not None else []
    for prefix, width in [*latents, ("attn.kv_a_norm", cfg.kv_lora_rank)]:
        terms.add(f"{prefix}.input", f"b·T·{width}·a (latent)", t * width * a)
        terms.add(f"{prefix}.rstd", "b·T·4", t * FP32_BYTES)
        if keep_norm_out:
            terms.add(f"{prefix}.output", f"b·T·{width} (the up-projection's saved input)", g(t * width))
    terms.add("attn.k_rope", "b·T·d_rope·a (the RoPE key shared by the heads)", t * cfg.qk_rope_head_dim * a)
    qk, v = t * h * cfg.qk_head_width, t * h * cfg.v_head_width
    if "mla_up" not in recomputed:
        terms.add("attn.q", "b·T·h·(d_nope + d_rope)·a", qk * a)
        terms.add("attn.k", "b·T·h·(d_nope + d_rope)·a", qk * a)
        terms.add("attn.v", "b·T·h·d_v·a", v * a)
    if selective:  # the attention core re-runs: only the output projection's input is kept
        terms.add("attn.o.input", "b·T·h·d_v (the GEMM's saved input)", g(v))
        return
    if not flash:
        terms.add("attn.probs", "b·h·T·T·a (fused softmax output)", b * h * T * T * a)
        terms.add("attn.o.input", "b·T·h·d_v (the GEMM's saved input)", g(v))
        return
    terms.add("attn.logsumexp", "b·h·T·4", b * h * T * FP32_BYTES)
    if out_copy is not None:
        terms.add("attn.out", "b·T·h·d_v (one copy: attention backward and o's wgrad)", out_copy)
        return
    terms.add("attn.out", "b·T·h·d_v·a (also the o input)", v * a)
    if g(v) != v * a:
        terms.add("attn.o.input", "b·T·h·d_v (fp8 copy)", g(v))
