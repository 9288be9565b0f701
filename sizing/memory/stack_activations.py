"""Activations saved for backward as a training stack's kernels keep them, beside the reference
model's eager accounting (activations.py, checked byte for byte against torch).

A stack's memory conventions (sizing.parallel.memory_stack) pick:

* kernels "eager": the reference model's terms (torch eager ops: an RMSNorm saves its fp32
  upcast input and normalised tensor, a SwiGLU four f-wide tensors). HF/PEFT and torchtitan
  without compile run these.
* kernels "fused": fused norm and activation kernels, as Megatron-Core with Transformer Engine
  (TE) and torch.compile (Inductor) run them. A norm saves its input (a bytes) and its fp32
  statistics (RMSNorm rstd; LayerNorm mean and rstd): TE's LayerNormLinear / LayerNormMLP save
  `inputmat`, `mu`, `rsigma` and the norm output their GEMM reads
  (transformer_engine/pytorch/module/layernorm_linear.py). The MLP saves its activation
  function's input (the up/gate output, m f wide) and the down projection's input (f wide):
  Megatron's fused bias-SwiGLU / bias-GeLU keep only their input (megatron/core/fusions), 3 f
  per token for SwiGLU where eager torch keeps 4. Flash attention keeps q, k, v, its output and
  the fp32 logsumexp; unfused attention under these stacks keeps the bf16 softmax output of the
  fused scale-mask-softmax (no fp32 copy, no mask tensor). An MoE layer's unpermute keeps the
  expert outputs once for the routing weights' gradient.
* fp8 (TE): each fp8 Linear saves the fp8 copy of its input instead of the bf16 one
  (sizing.memory.fp8): the QKV and up/gate inputs (the norm outputs), the down projection's
  input and, beside the bf16 output flash attention keeps, the fp8 copy the output projection
  saves. Everything else stays bf16.
* selective "attention" (Korthikanti et al. 2022: the attention core is recomputed) or "op"
  (torchtitan's op-level selective checkpointing, torchtitan/distributed/activation_checkpoint.py
  up to 2025: inside each checkpointed block it saves the outputs of attention and of every
  other mm, `to_save = func in _save_list and not (func == mm and mm_count % 2 == 0)`, and
  recomputes the rest from the block's input). The mms of a Llama block run wq, wk, wv, wo, w1
  (gate), w3 (up), w2 (down), so the outputs of wq, wv, w1 and w2 are kept; the MoE experts'
  grouped GEMMs are not in the save list.

* MLA (latent attention) under fused kernels: sizing.memory.mla_activations. Shared experts
  keep their activation's input and their down projection's input, as the dense MLP does.
* A stack's `recomputed` (sizing.parallel.memory_stack, DeepSeek's HAI-LLM): "norm" keeps no
  norm output (the norm re-runs from its input in backward); "mla_up" keeps no MLA q, k, v;
  "swiglu" keeps the experts' (routed and shared) SwiGLU input only, in fp8 under fp8 GEMMs, and
  neither the down projections' inputs nor the expert outputs. `attn_out_bits` keeps the
  attention output once, in that many bits (E5M6: 12).
* Megatron-Core's `--recompute-modules` under `--recompute-granularity selective` (`modules`;
  megatron/core/transformer/transformer_config.py `recompute_modules`, applied in
  transformer_layer.py, multi_latent_attention.py, moe/experts.py, moe/shared_experts.py): the
  attention core re-runs only when "core_attn" is listed (Megatron's default list), else flash
  attention keeps its q, k, v, output and logsumexp; "layernorm" is "norm" above (the norm runs
  under CheckpointWithoutOutput, its output discarded once the next layer used it); "mla_up_proj"
  is "mla_up" (the up-projections' outputs discarded after the fused attention ran, so q, k, v go
  too); "moe" / "mlp" checkpoint the whole MoE / dense MLP (tensor_parallel.checkpoint, or
  te_checkpoint under fp8): it keeps only its input, the bf16 norm output (itself dropped under
  "layernorm"); "moe_act" recomputes the routed experts' activation: they keep its input (bf16,
  the checkpoint's) and not the down projection's; "shared_experts" checkpoints the shared
  experts: nothing of theirs is kept beyond the MoE's input.

Blocks other than pre-norm sequential ones (parallel, post-norm, sandwich) keep the eager terms.
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.inputs import ModelConfig
from sizing.memory.activations import (
    ActivationTerm,
    _attention_terms,
    _checked_impl,
    _outside_terms,
    _Terms,
    activation_terms,
    sum_terms,
)
from sizing.memory.fp8 import fp8_saved_input_bytes
from sizing.memory.mla_activations import attention_output_bytes, mla_terms
from sizing.memory.states import FP32_BYTES, INDEX_BYTES
from sizing.validate import SizingError, require_choice
from sizing.vocabulary import RECOMPUTE_MODULES

KERNELS: tuple[str, ...] = ("eager", "fused")
SELECTIVE_KINDS: tuple[str, ...] = ("attention", "op")
LOSS_KINDS: tuple[str, ...] = ("eager", "fused", "chunked")
SavedInput = Callable[[int], int]  # bytes a GEMM saves of an input of n elements


def stack_activation_terms(
    cfg: ModelConfig,
    seq_len: int,
    micro_batch: int = 1,
    attention_impl: str = "flash",
    recompute: str = "none",
    activation_bytes: int = 2,
    moe_layer: bool | None = None,
    kernels: str = "eager",
    selective: str = "attention",
    fp8_recipe: str | None = None,
    loss: str = "eager",
    recomputed: tuple[str, ...] = (),
    attn_out_bits: int | None = None,
    modules: tuple[str, ...] | None = None,
) -> list[ActivationTerm]:
    """Every tensor a stack keeps for backward in one micro-batch, term by term (per-layer terms
    once): activation_terms for the reference model's eager kernels, else the fused, op-level
    and fp8 variants above. fp8_recipe: TE's fp8 GEMMs save their inputs in fp8 (None: bf16);
    recomputed, attn_out_bits: a stack's; modules: Megatron-Core's selective recompute modules
    (module docstring; fused kernels only)."""
    require_choice("kernels", kernels, KERNELS)
    require_choice("selective", selective, SELECTIVE_KINDS)
    require_choice("loss", loss, LOSS_KINDS)
    block_recompute, recomputed = modules_recompute(recompute, modules, recomputed, kernels, selective)
    op_sac = recompute == "selective" and selective == "op"
    if kernels == "eager" and fp8_recipe is None and not op_sac:
        terms = activation_terms(cfg, seq_len, micro_batch, attention_impl, recompute, activation_bytes, moe_layer)
        return _chunked_loss(cfg, terms, micro_batch, seq_len, activation_bytes) if loss == "chunked" else terms
    impl = _checked_impl(seq_len, micro_batch, attention_impl, recompute, activation_bytes)
    b, T, a = micro_batch, seq_len, activation_bytes
    norm = _fused_norm if kernels == "fused" else None
    moe = cfg.is_moe if moe_layer is None else moe_layer
    terms = _Terms()
    if recompute == "full":
        terms.add("block.input", "b·T·d·a (checkpointed block keeps its input)", b * T * cfg.d_model * a)
    elif op_sac:
        _op_sac_block(cfg, terms, b, T, a, moe)
    elif kernels == "fused" and cfg.norm_placement == "pre" and not cfg.parallel_block:
        out_copy = _attention_out_copy(cfg, b, T, attn_out_bits, fp8_recipe)
        g = _saved_input(a, fp8_recipe)
        _fused_block(cfg, terms, b, T, a, impl, block_recompute, moe, g, recomputed, out_copy)
    else:  # the block kinds fused terms are not written for: the reference model's own
        terms = activation_terms(cfg, seq_len, micro_batch, attention_impl, recompute, activation_bytes, moe_layer)
        return _chunked_loss(cfg, terms, b, T, a) if loss == "chunked" else terms
    _outside_terms(cfg, terms, b, T, a, recompute, norm)
    return _chunked_loss(cfg, list(terms), b, T, a) if loss == "chunked" else list(terms)


# Megatron-Core's recompute modules beyond core_attn, as the `recomputed` conventions they drop
MODULE_RECOMPUTED: dict[str, str] = {
    "layernorm": "norm",
    "mla_up_proj": "mla_up",
    "moe_act": "moe_act",
    "mlp": "mlp",
    "moe": "moe",
    "shared_experts": "shared_experts",
}


def modules_recompute(
    recompute: str, modules: tuple[str, ...] | None, recomputed: tuple[str, ...], kernels: str, selective: str
) -> tuple[str, tuple[str, ...]]:
    """(the blocks' recompute mode, the recomputed conventions) under Megatron-Core's selective
    `modules`: the attention core re-runs only under core_attn (module docstring)."""
    if modules is None or recompute != "selective":
        return recompute, recomputed
    if kernels != "fused" or selective != "attention":
        raise SizingError("recompute modules need fused kernels and selective attention (a Megatron-Core stack)")
    extra = tuple(MODULE_RECOMPUTED[require_choice("recompute module", m, RECOMPUTE_MODULES)] for m in modules
                  if m != "core_attn")  # fmt: skip
    return ("selective" if "core_attn" in modules else "none"), recomputed + extra


def _chunked_loss(cfg: ModelConfig, terms: list[ActivationTerm], b: int, T: int, a: int) -> list[ActivationTerm]:
    """A fused linear cross-entropy (Liger's LigerFusedLinearCrossEntropy, axolotl's
    `liger_fused_linear_cross_entropy`) computes the loss and the lm_head input's gradient chunk
    by chunk in the forward (Liger-Kernel src/liger_kernel/ops/fused_linear_cross_entropy.py:
    `grad_input` filled per chunk), so no fp32 log-softmax over b·T·V is kept: the saved term is
    that gradient, b·T·d·a."""
    out = [t for t in terms if t.key != "loss.log_probs"]
    out.append(ActivationTerm("loss.grad_input", "b·T·d·a (chunked cross-entropy: the input's gradient)",
                              b * T * cfg.d_model * a, False))  # fmt: skip
    return out


def chunked_loss_rows(tokens: int, vocab: int, d_model: int) -> int:
    """Rows of logits a chunked cross-entropy holds at once: Liger's
    `chunk_size = next_power_of_2(cdiv(BT, cdiv(V, H)))` (fused_linear_cross_entropy.py), so that
    a chunk's logits are about as large as the hidden states; at most BT."""
    rows = 1
    while rows < -(-tokens // -(-vocab // d_model)):
        rows *= 2
    return min(rows, tokens)


def stack_transient_bytes(
    cfg: ModelConfig,
    seq_len: int,
    micro_batch: int = 1,
    attention_impl: str = "flash",
    recompute: str = "none",
    activation_bytes: int = 2,
    moe_layer: bool | None = None,
    loss: str = "eager",
    **conventions,
) -> int:
    """The working set beyond the saved activations, as sizing.memory.transient_bytes: the logits
    and, under an eager cross-entropy, their fp32 gradient (a fused one writes the gradient into
    the fp32 softmax it saved: sizing.parallel.memory_stack), plus with recomputation one
    block's re-run activations (that block's terms without recomputation less those kept)."""
    require_choice("loss", loss, LOSS_KINDS)
    b, T, V, a = micro_batch, seq_len, cfg.padded_vocab, activation_bytes
    if loss == "chunked":  # one chunk's logits at a time (chunked_loss_rows), their gradient written in place
        logits = chunked_loss_rows(b * T, V, cfg.d_model) * V * a
    else:
        logits = b * T * V * (a + (FP32_BYTES if loss == "eager" else 0))
    if recompute == "none":
        return logits
    args = (cfg, seq_len, micro_batch, attention_impl)

    def per_layer(mode: str) -> int:
        return sum_terms(stack_activation_terms(*args, mode, a, moe_layer, loss=loss, **conventions))[0]

    return logits + per_layer("none") - per_layer(recompute)


def _saved_input(a: int, fp8_recipe: str | None) -> SavedInput:
    """How a GEMM saves its input: bf16 (a bytes per element), or TE's fp8 copy."""
    if fp8_recipe is None:
        return lambda n: n * a
    return lambda n: fp8_saved_input_bytes(n, fp8_recipe)


def _fused_norm(
    cfg: ModelConfig,
    terms: _Terms,
    prefix: str,
    b: int,
    T: int,
    a: int,
    with_input: bool = True,
    with_output: bool = True,
    per_layer: bool = True,
    saved_input: SavedInput | None = None,
) -> None:
    """A fused norm kernel: its input (a), its fp32 statistics, and the output the next GEMM saves
    (bf16, or fp8 under TE's fp8 GEMMs)."""
    n = b * T * cfg.d_model
    if with_input:
        terms.add(f"{prefix}.input", "b·T·d·a", n * a, per_layer)
    if cfg.norm == "layernorm":
        terms.add(f"{prefix}.stats", "b·T·2·4 (mean, rstd)", b * T * 2 * FP32_BYTES, per_layer)
    else:
        terms.add(f"{prefix}.rstd", "b·T·4", b * T * FP32_BYTES, per_layer)
    if with_output:
        saved = saved_input or (lambda k: k * a)
        terms.add(f"{prefix}.output", "b·T·d (the GEMM's saved input)", saved(n), per_layer)


def _attention_out_copy(cfg: ModelConfig, b: int, T: int, bits: int | None, fp8_recipe: str | None) -> int | None:
    """Bytes of the one attention-output copy a stack keeps in `bits` under fp8 (None: none)."""
    if bits is None or fp8_recipe is None:
        return None
    return attention_output_bytes(b * T * cfg.n_heads * cfg.v_head_width, bits, fp8_recipe)


def _fused_block(
    cfg: ModelConfig,
    terms: _Terms,
    b: int,
    T: int,
    a: int,
    impl: str,
    recompute: str,
    moe: bool,
    g: SavedInput,
    recomputed: tuple[str, ...] = (),
    out_copy: int | None = None,
) -> None:
    """A pre-norm block under fused kernels (see the module docstring), g the GEMM inputs' bytes."""
    keep_norm_out = "norm" not in recomputed
    _fused_norm(cfg, terms, "attn_norm", b, T, a, with_output=keep_norm_out, saved_input=g)
    q = b * T * cfg.n_heads * cfg.d_head
    if cfg.is_mla:
        flash, selective = impl == "flash", recompute == "selective"
        mla_terms(cfg, terms, b, T, a, flash, selective, g, recomputed, out_copy)
    elif impl == "flash" or recompute == "selective":
        _attention_terms(cfg, terms, b, T, a, impl, recompute)
        if g(q) != q * a:  # fp8: the output projection keeps its own fp8 copy of its input
            if recompute == "selective":
                terms[:] = [t for t in terms if t.key != "attn.o.input"]
            terms.add("attn.o.input", "b·T·h·d_h (fp8 copy)", g(q))
    else:  # unfused: k, v repeated to h heads, the fused softmax's bf16 output
        for key in ("attn.q", "attn.k", "attn.v"):
            terms.add(key, "b·T·h·d_h·a", q * a)
        terms.add("attn.probs", "b·h·T·T·a (fused softmax output)", b * cfg.n_heads * T * T * a)
        terms.add("attn.o.input", "b·T·h·d_h (the GEMM's saved input)", g(q))
    checkpointed = "moe" in recomputed if moe else "mlp" in recomputed  # the whole FFN re-runs
    mlp_in = (lambda n: n * a) if checkpointed else g  # a checkpoint keeps its bf16 input
    _fused_norm(cfg, terms, "mlp_norm", b, T, a, with_output=keep_norm_out, saved_input=mlp_in)
    m = 2 if cfg.gated_mlp else 1
    if checkpointed:
        return
    if not moe:
        n = b * T * cfg.d_ff
        terms.add("mlp.hidden", f"{m}·b·T·f·a (the activation's input)", m * n * a)
        terms.add("mlp.down.input", "b·T·f (the down projection's saved input)", g(n))
        return
    _fused_moe(cfg, terms, b, T, a, g, m, recomputed)


def _fused_moe(
    cfg: ModelConfig, terms: _Terms, b: int, T: int, a: int, g: SavedInput, m: int, recomputed: tuple[str, ...] = ()
) -> None:
    """An MoE FFN under fused kernels: the router's as eager, the grouped GEMMs' inputs (fp8
    under TE), the expert activation's input, the expert outputs once; the shared experts'
    activation and down inputs. recomputed "swiglu": the experts keep only the activation's input,
    as their GEMMs save inputs (fp8 under fp8), and no expert outputs; "moe_act": the routed
    experts keep the activation's bf16 input, not the down input; "shared_experts": the shared
    experts keep nothing (module docstring)."""
    k, d = cfg.top_k, cfg.d_model
    routed = b * T * k
    terms.add("moe.router.probs", "b·T·k·4 (fp32 softmax of the top-k logits)", routed * FP32_BYTES)
    terms.add("moe.router.topk_ids", "b·T·k·8 (int64)", routed * INDEX_BYTES)
    terms.add("moe.experts.routing_ids", "b·T·k·16 (int64 token, slot)", routed * 2 * INDEX_BYTES)
    terms.add("moe.experts.input", "b·T·k·d (the grouped GEMM's saved input)", g(routed * d))
    n, fs = routed * cfg.expert_ff, b * T * cfg.n_shared_experts * cfg.shared_ff
    if "shared_experts" in recomputed:
        fs = 0
    if "swiglu" in recomputed:
        terms.add("moe.experts.hidden", f"{m}·b·T·k·f_e (the SwiGLU input, cached as a GEMM input)", g(m * n))
        if fs:
            terms.add("moe.shared.hidden", f"{m}·b·T·s·f_s (the SwiGLU input, cached as a GEMM input)", g(m * fs))
    else:
        if "moe_act" in recomputed:
            terms.add("moe.experts.hidden", f"{m}·b·T·k·f_e·a (the recomputed activation's input)", m * n * a)
        else:
            terms.add("moe.experts.hidden", f"{m}·b·T·k·f_e·a + b·T·k·f_e", m * n * a + g(n))
        terms.add("moe.experts.output", "b·T·k·d·a (expert outputs, for the routing weights)", routed * d * a)
        if fs:
            terms.add("moe.shared.hidden", f"{m}·b·T·s·f_s·a + b·T·s·f_s", m * fs * a + g(fs))
    terms.add("moe.experts.gate_weight", "b·T·k·a", routed * a)


def _op_sac_block(cfg: ModelConfig, terms: _Terms, b: int, T: int, a: int, moe: bool) -> None:
    """torchtitan's op-level selective checkpointing: the block's input, the attention's output
    and logsumexp, and the outputs of the 1st, 3rd, 5th... mm of the block."""
    d, t = cfg.d_model, b * T
    terms.add("block.input", "b·T·d·a (the checkpointed block's input)", t * d * a)
    mms = [("attn.q", cfg.q_width), ("attn.k", cfg.kv_width), ("attn.v", cfg.kv_width), ("attn.o.output", d)]
    if moe:
        mms.append(("moe.router.logits", cfg.n_experts))
    elif cfg.gated_mlp:
        mms += [("mlp.hidden", cfg.d_ff), ("mlp.hidden", cfg.d_ff), ("mlp.down.output", d)]
    else:
        mms += [("mlp.hidden", cfg.d_ff), ("mlp.down.output", d)]
    for key, width in mms[0::2]:
        terms.add(key, "b·T·width·a (a saved mm output)", t * width * a)
    terms.add("attn.out", "b·T·h·d_h·a (attention output)", t * cfg.n_heads * cfg.d_head * a)
    terms.add("attn.logsumexp", "b·h·T·4", b * cfg.n_heads * T * FP32_BYTES)
