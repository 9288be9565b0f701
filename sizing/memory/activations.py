"""Activations: every tensor autograd saves for backward in one training micro-batch, term by
term, and the transient working set beside them. Derived from what the reference model
(reference_model/model/gpt.py) saves and checked against it with saved_tensors_hooks
(reference_model/probes/memory.py) to within 2%. Korthikanti et al. 2022's closed form is
kept beside ours for comparison.

Symbols: L layers, d d_model, h query heads, h_kv kv heads, d_h head width, f MLP width, f_e
expert width, k top-k, V padded vocab, r rotary dims, b micro-batch (sequences per GPU), T
sequence length, a bytes per activation element.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import ModelConfig
from sizing.memory.states import FP32_BYTES, INDEX_BYTES
from sizing.validate import require_choice, require_int
from sizing.vocabulary import (
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    DEFAULT_ATTENTION_IMPL,
    DEFAULT_RECOMPUTE,
    RECOMPUTE_MODES,
)

# MLP kind -> tensors of width f that autograd saves per token, as the reference model computes
# them: GELU saves its input (up output) and the down projection its output; ReLU's backward
# reads its own output, which is also the down input (one tensor); a gated MLP
# down(act(gate(x)) * up(x)) saves gate output, act output, up output and the product.
MLP_SAVED_TENSORS: dict[str, int] = {"gelu": 2, "relu": 1, "swiglu": 4, "geglu": 4}


def activations_not_modelled(cfg: ModelConfig) -> tuple[str, ...]:
    """The parts of `cfg` whose saved tensors the activation terms below do not cover (they
    were derived and checked byte for byte on the architectures before these). Every output
    that shows activations names them; `sizing verify` skips the byte comparison for them."""
    parts = {
        "latent attention (MLA: q_a/q_b, kv_a/kv_b and their norms)": cfg.is_mla,
        "qk-norm": cfg.qk_norm != "none",
        f"{cfg.norm_placement} norms": cfg.norm_placement in ("sandwich", "branch_post"),
        "attention sinks": cfg.attention_sinks,
        "shared experts": cfg.n_shared_experts > 0,
        "dense/MoE layer mix (counted as all-MoE)": cfg.is_moe and cfg.n_dense_layers > 0,
        "chunked attention": cfg.attention_chunk is not None,
        "local/global layer mix": cfg.local_window is not None and cfg.n_global_layers > 0,
        "DSA indexer (DeepSeek-V3.2)": cfg.has_indexer,
    }
    return tuple(name for name, present in parts.items() if present)


@dataclass(frozen=True)
class ActivationTerm:
    key: str
    formula: str  # bytes in symbols
    bytes: int  # for the whole micro-batch; per layer if per_layer
    per_layer: bool


class _Terms(list):
    """The list activation_terms builds: add() appends one ActivationTerm."""

    def add(self, key: str, formula: str, n_bytes: int, per_layer: bool = True) -> None:
        self.append(ActivationTerm(key, formula, n_bytes, per_layer))


def activation_terms(
    cfg: ModelConfig,
    seq_len: int,
    micro_batch: int = 1,
    attention_impl: str = DEFAULT_ATTENTION_IMPL,
    recompute: str = DEFAULT_RECOMPUTE,
    activation_bytes: int = 2,
    moe_layer: bool | None = None,
) -> list[ActivationTerm]:
    """Every tensor autograd keeps for backward during one training forward of b sequences of
    T tokens, term by term (per-layer terms once; multiply by L). `activation_bytes` a is the
    compute dtype (4 fp32, 2 bf16). Derived from what the reference model saves (counted by
    reference_model/probes/memory.py with saved_tensors_hooks, each storage once):

    * Norms. LayerNorm saves its input (a) and mean, rstd (fp32 on CUDA; the CPU kernel keeps
      them in the input dtype, 2 bytes less per token and statistic in bf16). RMSNorm, computed
      in fp32 as x * rsqrt(mean(x^2) + eps) * g, saves x upcast to fp32 (in bf16 one copy per
      norm that reads it), rstd (fp32), the normalised x (fp32, before the gain) and, when
      a < 4, the gain's fp32 copy (d.4, per norm, not per token). The norm output (a) is saved
      by the linears that read it.
    * Attention `math` (QK^T, masked_fill, softmax in fp32, AV): q, k and v as the matmuls read
      them (k and v repeated to h heads for GQA/MQA), the boolean (T, T) mask (1 byte, per
      layer, not per sequence), the fp32 softmax output b.h.T.T.4 and, when a < 4, its cast to
      the compute dtype that AV reads; the output projection's input.
    * Attention `flash` (a fused kernel: FlashAttention, torch SDPA's flash kernels): q, k, v
      (k and v at h_kv heads: the kernels take GQA natively), the output (in (b, T, h, d_h)
      layout, so it is also the output projection's input) and the fp32 logsumexp b.h.T.4.
      No T x T tensor. (The reference model's sdpa path saves a little more on some configs;
      reference_model/probes/memory.py names each extra.)
    * recompute `selective` (Korthikanti et al. 2022, section 4.2): the attention core is
      recomputed, so only its inputs q, k, v and the output projection's input stay.
      recompute `full`: each block keeps only its input b.T.d.a (checkpointed blocks); the
      RoPE tables then live in the checkpoint closures, not in saved tensors, and are left
      out (2.T.r.a bytes).
    * MLP: MLP_SAVED_TENSORS tensors of width f per token. MoE (top-k, loop over experts): the
      router's fp32 softmax over the k logits and the top-k indices, and per routed token
      (b.T.k of them): the (token, slot) int64 pair from torch.where, the gathered input, the
      expert's hidden tensors, the expert output, the gate weight and the weighted output
      saved by index_add_. `moe_layer` picks the block's kind where dense and MoE layers mix
      (True: an MoE block, False: a dense MLP of d_ff; None: the config's kind, MoE if it has experts).
    * Outside the blocks: token ids (int64), learned position ids (T, int64), the embedding
      norm (BLOOM; as a block norm, but its output is the first block's input and is saved
      there), RoPE cos/sin (T x r each, shared by all layers), the final norm, the lm_head
      input, the fp32 log-softmax of the loss (b.T.V.4), the int64 targets and nll_loss's
      fp32 total weight.
    """
    impl = _checked_impl(seq_len, micro_batch, attention_impl, recompute, activation_bytes)
    b, T, a = micro_batch, seq_len, activation_bytes
    d = cfg.d_model
    terms = _Terms()
    if recompute == "full":
        terms.add("block.input", "b·T·d·a (checkpointed block keeps its input)", b * T * d * a)
    else:
        _block_terms(cfg, terms, b, T, a, impl, recompute, cfg.is_moe if moe_layer is None else moe_layer)

    _outside_terms(cfg, terms, b, T, a, recompute)
    return list(terms)


def _checked_impl(seq_len: int, micro_batch: int, attention_impl: str, recompute: str, activation_bytes: int) -> str:
    """The run's options checked before any formula sees them; the attention kernel's canonical name."""
    impl = require_choice("attention_impl", attention_impl, ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)
    require_choice("recompute", recompute, RECOMPUTE_MODES)
    for name, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("activation_bytes", activation_bytes)):
        require_int(name, value)
    return impl


def _outside_terms(cfg: ModelConfig, terms: _Terms, b: int, T: int, a: int, recompute: str, norm=None) -> None:
    """The tensors saved outside the blocks: ids, positions, embedding and final norms, RoPE tables,
    the lm_head input and the loss's (activation_terms' docstring derives each). `norm`: how a
    norm saves its tensors (the reference model's eager norm by default; a fused kernel's in
    sizing.memory.stack_activations)."""
    norm = norm or _norm_terms
    terms.add("tok_emb.ids", "b·T·8 (int64)", b * T * INDEX_BYTES, False)
    if cfg.position == "learned":
        terms.add("pos_emb.positions", "T·8 (int64)", T * INDEX_BYTES, False)
    if cfg.embedding_norm:
        norm(cfg, terms, "emb_norm", b, T, a, with_output=False, per_layer=False)  # output: block 0's input
    if cfg.position == "rope" and recompute != "full":
        terms.add("rope.cos_sin", "2·T·r·a (shared by all layers)", 2 * T * cfg.rotary_dim * a, False)
    if cfg.final_norm:
        norm(cfg, terms, "norm_f", b, T, a, with_output=False, per_layer=False)
    d, V = cfg.d_model, cfg.padded_vocab
    terms.add("lm_head.input", "b·T·d·a", b * T * d * a, False)
    terms.add("loss.log_probs", "b·T·V·4 (fp32 log-softmax)", b * T * V * FP32_BYTES, False)
    terms.add("loss.targets", "b·T·8 (int64)", b * T * INDEX_BYTES, False)
    terms.add("loss.total_weight", "4 (fp32 scalar of nll_loss)", FP32_BYTES, False)


def _block_terms(cfg: ModelConfig, terms: _Terms, b: int, T: int, a: int, impl: str, recompute: str, moe: bool) -> None:
    """One transformer block without full recomputation: norms, attention, MLP, in order."""
    # ---- norms and residual stream
    if cfg.parallel_block:
        _norm_terms(cfg, terms, "attn_norm", b, T, a)
        if not cfg.shared_block_norm:
            # both norms read x: LayerNorm (and fp32 RMSNorm) saves that one tensor once
            _norm_terms(cfg, terms, "mlp_norm", b, T, a, with_input=cfg.norm == "rmsnorm" and a != FP32_BYTES)
    elif cfg.norm_placement == "pre":
        _norm_terms(cfg, terms, "attn_norm", b, T, a)
    else:
        terms.add("attn.input", "b·T·d·a (block input)", b * T * cfg.d_model * a)
    # ---- attention
    _attention_terms(cfg, terms, b, T, a, impl, recompute)
    # ---- norm before the MLP (sequential blocks)
    if not cfg.parallel_block:
        if cfg.norm_placement == "pre":
            _norm_terms(cfg, terms, "mlp_norm", b, T, a)
        else:  # post: norm(x + attn(x)) feeds the MLP
            _norm_terms(cfg, terms, "attn_norm", b, T, a)
    # ---- MLP / MoE
    _ffn_terms(cfg, terms, b, T, a, moe)
    if not cfg.parallel_block and cfg.norm_placement == "post":
        _norm_terms(cfg, terms, "mlp_norm", b, T, a, with_output=False)  # its output is the next block's input


def _norm_terms(
    cfg: ModelConfig,
    terms: _Terms,
    prefix: str,
    b: int,
    T: int,
    a: int,
    with_input: bool = True,
    with_output: bool = True,
    per_layer: bool = True,
) -> None:
    d = cfg.d_model
    if cfg.norm == "layernorm":
        if with_input:
            terms.add(f"{prefix}.input", "b·T·d·a", b * T * d * a, per_layer)
        terms.add(f"{prefix}.stats", "b·T·2·4 (mean, rstd)", b * T * 2 * FP32_BYTES, per_layer)
    else:
        if with_input:
            terms.add(f"{prefix}.input_fp32", "b·T·d·4", b * T * d * FP32_BYTES, per_layer)
        terms.add(f"{prefix}.rstd", "b·T·4", b * T * FP32_BYTES, per_layer)
        terms.add(f"{prefix}.normalized_fp32", "b·T·d·4", b * T * d * FP32_BYTES, per_layer)
        if a != FP32_BYTES:  # the gain upcast to fp32 for the product, saved by it
            terms.add(f"{prefix}.gain_fp32", "d·4", d * FP32_BYTES, per_layer)
    if with_output:
        terms.add(f"{prefix}.output", "b·T·d·a", b * T * d * a, per_layer)


def _attention_terms(cfg: ModelConfig, terms: _Terms, b: int, T: int, a: int, impl: str, recompute: str) -> None:
    h, dh = cfg.n_heads, cfg.d_head
    q_bytes, kv_bytes = b * T * h * dh * a, b * T * cfg.kv_heads * dh * a
    if recompute == "selective" or impl == "flash":
        terms.add("attn.q", "b·T·h·d_h·a", q_bytes)
        terms.add("attn.k", "b·T·h_kv·d_h·a", kv_bytes)
        terms.add("attn.v", "b·T·h_kv·d_h·a", kv_bytes)
        if recompute == "selective":
            terms.add("attn.o.input", "b·T·h·d_h·a", q_bytes)
        else:
            terms.add("attn.out", "b·T·h·d_h·a (also the o input)", q_bytes)
            terms.add("attn.logsumexp", "b·h·T·4", b * h * T * FP32_BYTES)
        return
    # math: every matmul operand is saved; K and V repeated to h heads (repeat_interleave)
    terms.add("attn.q", "b·T·h·d_h·a", q_bytes)
    terms.add("attn.k", "b·T·h·d_h·a (repeated to h heads)", q_bytes)
    terms.add("attn.v", "b·T·h·d_h·a (repeated to h heads)", q_bytes)
    terms.add("attn.mask", "T·T (bool, shared by the batch)", T * T)
    terms.add("attn.probs_fp32", "b·h·T·T·4 (softmax output)", b * h * T * T * FP32_BYTES)
    if a != FP32_BYTES:
        terms.add("attn.probs", "b·h·T·T·a (cast for AV)", b * h * T * T * a)
    terms.add("attn.o.input", "b·T·h·d_h·a", q_bytes)


def _ffn_terms(cfg: ModelConfig, terms: _Terms, b: int, T: int, a: int, moe: bool) -> None:
    n = MLP_SAVED_TENSORS[cfg.mlp]
    if not moe:
        terms.add("mlp.hidden", f"{n}·b·T·f·a ({cfg.mlp})", n * b * T * cfg.d_ff * a)
        return
    k, d = cfg.top_k, cfg.d_model
    routed = b * T * k
    terms.add("moe.router.probs", "b·T·k·4 (fp32 softmax of the top-k logits)", routed * FP32_BYTES)
    terms.add("moe.router.topk_ids", "b·T·k·8 (int64)", routed * INDEX_BYTES)
    terms.add("moe.experts.routing_ids", "b·T·k·16 (int64 token, slot)", routed * 2 * INDEX_BYTES)
    terms.add("moe.experts.input", "b·T·k·d·a", routed * d * a)
    terms.add("moe.experts.hidden", f"{n}·b·T·k·f_e·a ({cfg.mlp})", n * routed * cfg.expert_ff * a)
    terms.add("moe.experts.output", "2·b·T·k·d·a (expert output, weighted output)", 2 * routed * d * a)
    terms.add("moe.experts.gate_weight", "b·T·k·a", routed * a)


def sum_terms(terms: list[ActivationTerm]) -> tuple[int, int]:
    """(bytes per layer, bytes outside the blocks) of a list of terms."""
    per_layer = sum(t.bytes for t in terms if t.per_layer)
    outside = sum(t.bytes for t in terms if not t.per_layer)
    return per_layer, outside


def activations_bytes_per_layer(
    cfg: ModelConfig,
    seq_len: int,
    micro_batch: int = 1,
    attention_impl: str = DEFAULT_ATTENTION_IMPL,
    recompute: str = DEFAULT_RECOMPUTE,
    activation_bytes: int = 2,
    moe_layer: bool | None = None,
) -> int:
    """Bytes one transformer block (of the kind `moe_layer` picks) saves for backward for a
    micro-batch (activation_terms)."""
    terms = activation_terms(cfg, seq_len, micro_batch, attention_impl, recompute, activation_bytes, moe_layer)
    return sum_terms(terms)[0]


def activations_bytes(
    cfg: ModelConfig,
    seq_len: int,
    micro_batch: int = 1,
    attention_impl: str = DEFAULT_ATTENTION_IMPL,
    recompute: str = DEFAULT_RECOMPUTE,
    activation_bytes: int = 2,
) -> int:
    """All saved activations of one micro-batch: the blocks of each kind x their per-layer bytes
    (L x per layer where every block is alike; MoE and dense blocks apart where they mix, as in
    DeepSeek's first dense layers) + outside the blocks."""
    terms = activation_terms(cfg, seq_len, micro_batch, attention_impl, recompute, activation_bytes)
    per_layer, outside = sum_terms(terms)
    if not cfg.is_moe or cfg.n_dense_layers == 0:
        return cfg.n_layers * per_layer + outside
    args = (cfg, seq_len, micro_batch, attention_impl, recompute, activation_bytes)
    dense = activations_bytes_per_layer(*args, moe_layer=False)
    return cfg.n_moe_layers * per_layer + cfg.n_dense_layers * dense + outside


def transient_bytes(
    cfg: ModelConfig,
    seq_len: int,
    micro_batch: int = 1,
    attention_impl: str = DEFAULT_ATTENTION_IMPL,
    recompute: str = DEFAULT_RECOMPUTE,
    activation_bytes: int = 2,
    moe_layer: bool | None = None,
) -> int:
    """Working set beyond the saved activations (an estimate; not measured on CPU): the logits
    b.T.V.a (returned by forward, alive through backward) and their fp32 gradient b.T.V.4;
    with recomputation, one block's recomputed activations during its backward (a block of
    the kind `moe_layer` picks, as activation_terms)."""
    b, T, V, a = micro_batch, seq_len, cfg.padded_vocab, activation_bytes
    logits = b * T * V * (a + FP32_BYTES)
    if recompute == "none":
        return logits
    args = (cfg, seq_len, micro_batch, attention_impl)
    full_layer = activations_bytes_per_layer(*args, "none", activation_bytes, moe_layer)
    return logits + full_layer - activations_bytes_per_layer(*args, recompute, activation_bytes, moe_layer)


def korthikanti_activations_bytes_per_layer(
    cfg: ModelConfig, seq_len: int, micro_batch: int = 1, recompute: str = DEFAULT_RECOMPUTE
) -> int:
    """Korthikanti et al. 2022 (arXiv:2205.05198), eq. (1) and section 4: a GPT block with 16-bit
    activations, 1-byte dropout masks, a 4h GELU MLP, MHA, no tensor/sequence parallelism:
    sbh(34 + 5as/h) bytes per layer; selective recompute 34sbh; full recompute 2sbh.
    s = T, b = micro-batch, h = d_model, a = n_heads. For comparison only."""
    s, b, h, a = seq_len, micro_batch, cfg.d_model, cfg.n_heads
    if recompute == "full":
        return 2 * s * b * h
    if recompute == "selective":
        return 34 * s * b * h
    return 34 * s * b * h + 5 * a * s * s * b


KORTHIKANTI_LABEL = {"none": "sbh(34 + 5as/h)", "selective": "34·sbh", "full": "2·sbh"}
