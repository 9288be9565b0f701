"""Training activations of a hybrid: what one layer of each kind saves for backward, term by term, as
sizing.memory's ActivationTerm (bytes for a micro-batch of b sequences of T tokens; a bytes per
activation element, 2 in bf16).

A layer's attention, norms, MLP and MoE keep sizing.memory's terms for the base config (the stack's
conventions: eager or fused kernels, flash or math attention, recomputation); its state mixer keeps
what the training kernels save, per token:

* Mamba-2, the memory-efficient path transformers (NemotronH/Bamba/GraniteMoeHybrid/Mamba2 mixers'
  training branch), mamba_ssm's Mamba2 module and Megatron-Core run:
  `mamba_split_conv1d_scan_combined` (mamba_ssm/ops/triton/ssd_combined.py, MambaSplitConv1dScanCombinedFn:
  `ctx.save_for_backward(zxbcdt, conv1d_weight, conv1d_bias, out_x, A, D, dt_bias, initial_states,
  seq_idx, rmsnorm_weight, rstd, outproj_weight, outproj_bias)`): the in_proj output zxbcdt
  (d_inner + conv channels + H), the scan's output before the gated norm out_x (d_inner), the norm's
  fp32 rstd per group (G) and, before it all, the in_proj input (the mixer norm's output). The conv,
  the scan, the gated norm and out_proj's input are recomputed in backward. (Megatron-Core applies
  the gated norm and out_proj outside the function: 2 d_inner more.)
* Mamba-1 (Jamba; transformers' cuda path: causal_conv1d, x_proj, Jamba's dt/B/C RMSNorms, dt_proj,
  mamba_ssm's selective_scan_fn with z, out_proj): the in_proj output xz (2e: x for the conv, z for the
  scan), the conv output (e: the scan's u and x_proj's input), the three norms (eager fp32: input,
  normalised, rstd, and their outputs), delta (e), the scan's output and its gated output (2e: SelectiveScanFn
  saves `u, delta, A, B, C, D, z, delta_bias, x, out`; out_proj saves out_z) and the scan's fp32 chunk
  states x (e·2N per 2048 tokens).
* Gated DeltaNet (Qwen3-Next as transformers builds it, fla's chunk_gated_delta_rule with the q/k
  L2 norm in the kernel; fla/ops/gated_delta_rule/chunk.py saves `q, q_rstd, k, k_rstd, v, g, beta, A`):
  the in_proj_qkvz output (z, a view of it, is the gated norm's gate), the conv's input (the
  concatenated q, k, v) and output (v is a view of it), the normalised q and k with their fp32 rstd,
  the gates (softplus' fp32 input and output, the kernel's fp32 cumulative g; beta), the WY matrix A
  (Q per token and value head, chunk Q = 64), the kernel's output (the norm's input), the norm's fp32
  rstd and output (out_proj's input).
* Kimi Delta Attention (fla's layers/kda.py with chunk_kda; fla/ops/kda/chunk.py saves `q, q_rstd, k,
  k_rstd, v, g_cumsum, g_input, beta_raw, beta, A_log, dt_bias, Aqk, Akk`, the gate computed in the
  kernel, w, u, h recomputed): q, k, v projections (their short convs' inputs), v's conv output, the
  normalised q and k with their rstd, the forget gate's low-rank hidden (D) and output (the kernel's
  g_input), beta before and after its sigmoid, Aqk and Akk (Q per token and head each), the output
  gate's hidden (D) and output (the norm's gate), the kernel's output, the norm's rstd and output.

Under tensor parallelism every mixer term splits with the heads (sizing.parallel.stage_activations).
Recomputation: `full` keeps each layer's input only; `selective` recomputes the attention core and
leaves the state mixers' terms as they are. These are the kernels' saved tensors; they are an
estimate where the modeling code's eager ops around the kernels keep more (transformers' PyTorch
fallback without the kernels keeps every intermediate of the scan: hf_meta does not give them).
"""

from __future__ import annotations

from sizing.hybrid.mixers import GatedDeltaNet, KimiDeltaAttention, Mamba1Mixer, Mamba2Mixer
from sizing.hybrid.model import HybridModel
from sizing.memory import FP32_BYTES, ActivationTerm, stack_activation_terms, sum_terms
from sizing.vocabulary import ceil_div

SCAN_CHUNK_TOKENS = 2048  # mamba_ssm's selective scan keeps its state once per 2048 tokens (csrc/selective_scan)
_MIXER_KEYS = ("attn_norm.", "attn.")
_MLP_KEYS = ("mlp_norm.", "mlp.", "moe.")


def _term(key: str, formula: str, n_bytes: int) -> ActivationTerm:
    return ActivationTerm(key, formula, n_bytes, True)


def mamba2_terms(m: Mamba2Mixer, tokens: int, a: int) -> list[ActivationTerm]:
    zxbcdt = m.d_inner + m.conv_channels + m.n_heads
    out = [
        _term("mamba.zxbcdt", "b·T·(d_inner + conv channels + H)·a (in_proj output)", tokens * zxbcdt * a),
        _term("mamba.out_x", "b·T·d_inner·a (scan output before the gated norm)", tokens * m.d_inner * a),
    ]
    if m.gated_norm:
        out.append(_term("mamba.norm_rstd", "b·T·G·4 (the gated norm's rstd)", tokens * m.n_groups * FP32_BYTES))
    return out


def mamba1_terms(m: Mamba1Mixer, tokens: int, a: int, seq_len: int, batch: int) -> list[ActivationTerm]:
    e, N, R = m.d_inner, m.d_state, m.dt_rank
    norm_widths = R + 2 * N if m.bc_dt_norms else 0
    states = batch * e * ceil_div(seq_len, SCAN_CHUNK_TOKENS) * 2 * N * FP32_BYTES
    return [
        _term("mamba.xz", "b·T·2e·a (in_proj output: the conv's x, the scan's z)", tokens * 2 * e * a),
        _term("mamba.conv_out", "b·T·e·a (the scan's u, x_proj's input)", tokens * e * a),
        _term("mamba.dt_b_c", "b·T·(R + 2N)·(8 + a) + b·T·12 (dt, B, C norms)", tokens * (norm_widths * (8 + a) + 12)),
        _term("mamba.delta", "b·T·e·a (dt_proj output)", tokens * e * a),
        _term("mamba.scan_out", "2·b·T·e·a (the scan's output and its gated output)", tokens * 2 * e * a),
        _term("mamba.scan_states", "b·e·⌈T/2048⌉·2N·4 (fp32 chunk states)", states),
    ]


def deltanet_terms(m: GatedDeltaNet, tokens: int, a: int, chunk: int) -> list[ActivationTerm]:
    kd, vd, hk, hv = m.key_dim, m.value_dim, m.n_k_heads, m.n_v_heads
    conv = m.conv_channels
    return [
        _term("deltanet.qkvz", "b·T·(2kd + 2vd)·a (in_proj_qkvz output)", tokens * (2 * kd + 2 * vd) * a),
        _term("deltanet.conv", "2·b·T·(2kd + vd)·a (the conv's input and output)", tokens * 2 * conv * a),
        _term("deltanet.qk_l2norm", "b·T·(2kd·a + 2h_k·4)", tokens * (2 * kd * a + 2 * hk * FP32_BYTES)),
        _term("deltanet.gates", "b·T·h_v·(3·4 + a) (g in fp32, beta)", tokens * hv * (3 * FP32_BYTES + a)),
        _term("deltanet.wy", f"b·T·h_v·Q·a (the WY matrix A, Q = {chunk})", tokens * hv * chunk * a),
        _term("deltanet.o_norm", "b·T·(2vd·a + h_v·4) (o, norm output, rstd)", tokens * (2 * vd * a + hv * FP32_BYTES)),
    ]  # fmt: skip


def kda_terms(m: KimiDeltaAttention, tokens: int, a: int, chunk: int) -> list[ActivationTerm]:
    hd, D, H = m.width, m.head_dim, m.n_heads
    return [
        _term("kda.qkv", "b·T·4hd·a (q, k, v projections; v's conv output)", tokens * 4 * hd * a),
        _term("kda.qk_l2norm", "b·T·(2hd·a + 2H·4)", tokens * (2 * hd * a + 2 * H * FP32_BYTES)),
        _term("kda.forget_gate", "b·T·(D + hd)·a (its hidden, the kernel's g_input)", tokens * (D + hd) * a),
        _term("kda.beta", "b·T·H·(a + 4) (before and after the sigmoid)", tokens * H * (a + FP32_BYTES)),
        _term("kda.A", f"2·b·T·H·Q·a (Aqk, Akk; Q = {chunk})", tokens * 2 * H * chunk * a),
        _term("kda.output_gate", "b·T·(D + hd)·a (its hidden, the norm's gate)", tokens * (D + hd) * a),
        _term("kda.o_norm", "b·T·(2hd·a + H·4) (o, norm output, rstd)", tokens * (2 * hd * a + H * FP32_BYTES)),
    ]  # fmt: skip


def mixer_activation_terms(m: HybridModel, seq_len: int, micro_batch: int, a: int) -> list[ActivationTerm]:
    """The state mixer's saved tensors in one layer (module docstring)."""
    mixer, tokens = m.mixer, micro_batch * seq_len
    if isinstance(mixer, Mamba2Mixer):
        return mamba2_terms(mixer, tokens, a)
    if isinstance(mixer, Mamba1Mixer):
        return mamba1_terms(mixer, tokens, a, seq_len, micro_batch)
    if isinstance(mixer, KimiDeltaAttention):
        return kda_terms(mixer, tokens, a, mixer.chunk)
    return deltanet_terms(mixer, tokens, a, mixer.chunk)


def hybrid_activation_terms(
    m: HybridModel,
    kind: tuple[str, str],
    seq_len: int,
    micro_batch: int = 1,
    attention_impl: str = "flash",
    recompute: str = "none",
    activation_bytes: int = 2,
    **conventions,
) -> list[ActivationTerm]:
    """Every term one layer of `kind` (mixer, mlp) keeps in a micro-batch (per-layer terms once), and
    the terms outside the blocks: sizing.memory's for the base config with the mixer's and MLP's parts
    kept as the layer has them, the state mixer's added (module docstring)."""
    mixer, mlp = kind
    a = activation_bytes
    base = stack_activation_terms(
        m.base, seq_len, micro_batch, attention_impl, recompute, a, mlp == "moe", **conventions
    )
    out = []
    for t in base:
        if t.per_layer and t.key.startswith(_MIXER_KEYS):
            if mixer == "none" or (mixer == "mamba" and t.key.startswith("attn.")):
                continue
        if t.per_layer and t.key.startswith(_MLP_KEYS) and mlp == "none":
            continue
        out.append(t)
    if recompute == "full":  # the checkpointed layer keeps its input only
        return out
    tokens = micro_batch * seq_len
    if m.gated_attention and mixer in ("attention", "both"):
        gate = 2 * tokens * m.base.q_width * a
        out.append(_term("attn.output_gate", "2·b·T·h·d_h·a (sigmoid(gate), the gated output)", gate))
    if mixer in ("mamba", "both"):
        out += mixer_activation_terms(m, seq_len, micro_batch, a)
    return out


def hybrid_activations_bytes(
    m: HybridModel, seq_len: int, micro_batch: int = 1, attention_impl: str = "flash", recompute: str = "none",
    activation_bytes: int = 2,
) -> int:  # fmt: skip
    """All saved activations of one micro-batch: each kind of layer x its layers + outside the blocks."""
    args = (seq_len, micro_batch, attention_impl, recompute, activation_bytes)
    total = outside = 0
    for kind in sorted(set(m.layers)):
        per_layer, outside = sum_terms(hybrid_activation_terms(m, kind, *args))
        total += m.layers.count(kind) * per_layer
    return total + outside
