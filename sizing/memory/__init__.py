"""Memory: bytes for training and inference per GPU, the KV cache, and "will it fit".

One small function per quantity; every byte count is an exact integer and the unit is in
the name. Symbols: N parameters, L layers, d d_model, h query heads, h_kv kv heads, d_h
head width, f MLP width, f_e expert width, E experts, k top-k, V padded vocab, r rotary
dims, b micro-batch (sequences per GPU), T sequence length, a bytes per activation element,
W sliding window, C context.

Training memory per GPU = model states (weights + gradients + optimizer states, sharded by
ZeRO) + activations saved for backward (per micro-batch) + a transient working set.

* Model states: the precision policy sets bytes per parameter (PRECISIONS), the optimizer
  the number of states (OPTIMIZERS). bf16 mixed precision with AdamW is 2 + 2 + 12 = 16 bytes
  per parameter: Rajbhandari et al. 2020 (ZeRO, arXiv:1910.02054, section 3.1: "2Ψ + 2Ψ +
  KΨ" with K = 12 for the fp32 master weights, momentum and variance), which Megatron-LM
  and DeepSpeed use. (Megatron-LM with fp32 gradient-accumulation buffers keeps 4-byte
  gradients, 18 bytes per parameter: not a policy here.)
* ZeRO (stage 1 shards the optimizer states, 2 also the gradients, 3 also the weights)
  divides the sharded parts by the data-parallel degree dp, rounded up. FSDP FULL_SHARD is
  stage 3, SHARD_GRAD_OP stage 2. Stage 3 gathers one unit's full weights (and reduces its
  full gradients) at a time: `zero3_gathered_bytes`.
* Activations: what autograd saves for backward, term by term, derived from what the
  reference model (reference_model/model.py) saves and checked against it with
  saved_tensors_hooks (reference_model/memory_probe.py) to within 2%; see
  `activation_terms` for each term and its source.

Inference memory = weights in a dtype + KV cache (`kv_cache_bytes`). Not counted anywhere:
the CUDA context and kernels (~0.3-1 GiB), allocator fragmentation, communication buffers,
quantisation scales of 8/4-bit weights. The headroom is what is left for those.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .. import params as P
from ..config import ModelConfig
from ..flops import RECOMPUTE_MODES
from ..hardware import GPUS, get_gpu
from ..render.tables import csv_text, heading, table
from ..units import format_gib, format_int

# ---------------------------------------------------------------- element sizes
# Bits per element of each storage dtype (int4: two weights per byte).
DTYPE_BITS: dict[str, int] = {"fp32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 4}
FP32_BYTES = 4  # softmax/log-softmax outputs, norm statistics, logsumexp: kept in fp32
INDEX_BYTES = 8  # int64 token ids and indices saved by embedding, topk, indexing, nll_loss


def dtype_bytes(n_elements: int, dtype: str) -> int:
    """Bytes of n elements stored in `dtype`, rounded up to a whole byte (int4 packs two)."""
    bits = _dtype_bits(dtype)
    return -(-n_elements * bits // 8)


def _dtype_bits(dtype: str) -> int:
    if dtype not in DTYPE_BITS:
        raise ValueError(f"dtype ({dtype!r}) must be one of: {', '.join(DTYPE_BITS)}")
    return DTYPE_BITS[dtype]


# ---------------------------------------------------------------- precision and optimizer
@dataclass(frozen=True)
class Precision:
    key: str
    weight_bytes: int  # per parameter: the copy forward and backward read
    grad_bytes: int  # per parameter
    master_bytes: int  # per parameter: fp32 master copy held by the optimizer (0: weights are the master)
    state_bytes: int  # per optimizer state element (AdamW m and v, SGD momentum)
    activation_bytes: int  # a: bytes per activation element (the compute dtype)
    description: str


_MIXED = ("{0} weights and gradients for compute; fp32 master weights and optimizer states "
          "(ZeRO paper 2Ψ + 2Ψ + 12Ψ for Adam; Megatron-LM / DeepSpeed accounting)")
PRECISIONS: dict[str, Precision] = {
    "fp32": Precision("fp32", 4, 4, 0, 4, 4, "fp32 weights, gradients, optimizer states and activations"),
    "bf16-mixed": Precision("bf16-mixed", 2, 2, 4, 4, 2, _MIXED.format("bf16")),
    "fp16-mixed": Precision("fp16-mixed", 2, 2, 4, 4, 2,
                            _MIXED.format("fp16") + "; loss scaling adds no per-parameter bytes"),
    "bf16": Precision("bf16", 2, 2, 0, 2, 2,
                      "pure bf16: weights, gradients and optimizer states in bf16, no master copy"),
}


@dataclass(frozen=True)
class Optimizer:
    key: str
    states: int  # per-parameter state tensors
    description: str


ADAM8BIT_BLOCK = 2048  # bitsandbytes block-wise quantisation block (Dettmers et al. 2022, arXiv:2110.02861)
OPTIMIZERS: dict[str, Optimizer] = {
    "adamw": Optimizer("adamw", 2, "AdamW: first and second moments m, v (Loshchilov & Hutter 2019)"),
    "sgd": Optimizer("sgd", 1, "SGD with momentum: one momentum buffer"),
    "adam8bit": Optimizer("adam8bit", 2, f"8-bit AdamW (bitsandbytes): m, v in 1 byte each + one fp32 absmax per "
                          f"{ADAM8BIT_BLOCK}-element block per state (Dettmers et al. 2022)"),
}


def get_precision(key: str) -> Precision:
    if key not in PRECISIONS:
        raise ValueError(f"precision ({key!r}) must be one of: {', '.join(PRECISIONS)}")
    return PRECISIONS[key]


def get_optimizer(key: str) -> Optimizer:
    if key not in OPTIMIZERS:
        raise ValueError(f"optimizer ({key!r}) must be one of: {', '.join(OPTIMIZERS)}")
    return OPTIMIZERS[key]


def weights_bytes(n_params: int, precision: str) -> int:
    """N x weight bytes: the copy the forward reads (bf16 under mixed precision)."""
    return n_params * get_precision(precision).weight_bytes


def gradients_bytes(n_params: int, precision: str) -> int:
    """N x gradient bytes: one gradient per parameter (.grad)."""
    return n_params * get_precision(precision).grad_bytes


def optimizer_state_bytes(n_params: int, precision: str, optimizer: str) -> int:
    """The optimizer's own states: states x N x state bytes; 8-bit Adam: 2 x (N x 1 byte +
    4 bytes per 2048-element block). torch.optim also keeps a 4-byte `step` per parameter
    tensor (bookkeeping, not counted; the probe lists it)."""
    opt = get_optimizer(optimizer)
    if opt.key == "adam8bit":
        return opt.states * (n_params + FP32_BYTES * -(-n_params // ADAM8BIT_BLOCK))
    return opt.states * n_params * get_precision(precision).state_bytes


def master_weights_bytes(n_params: int, precision: str) -> int:
    """fp32 master copy under mixed precision (4N), none otherwise."""
    return n_params * get_precision(precision).master_bytes


def optimizer_bytes(n_params: int, precision: str, optimizer: str) -> int:
    """What ZeRO calls optimizer states: master weights + the optimizer's states.
    bf16-mixed AdamW: 4N + 8N = 12N."""
    return master_weights_bytes(n_params, precision) + optimizer_state_bytes(n_params, precision, optimizer)


# ---------------------------------------------------------------- ZeRO / FSDP
ZERO_STAGES: dict[int, tuple[str, ...]] = {  # stage -> the model states it shards (Rajbhandari et al. 2020)
    0: (),
    1: ("optimizer",),
    2: ("optimizer", "gradients"),
    3: ("optimizer", "gradients", "weights"),
}


def shard_bytes(n_bytes: int, dp: int) -> int:
    """One rank's share of a state sharded over dp ranks (rounded up: flat buffers are padded)."""
    return -(-n_bytes // dp)


def largest_unit_params(cfg: ModelConfig) -> int:
    """Parameters of the largest unit ZeRO-3/FSDP gathers at once: a transformer block (all
    its experts), the token embedding or the lm_head."""
    return max(P.layer_params(cfg), P.token_embedding_params(cfg) + P.position_embedding_params(cfg),
               P.lm_head_params(cfg))


def zero3_gathered_bytes(cfg: ModelConfig, precision: str, dp: int) -> int:
    """ZeRO-3 working set: one unit's full weights gathered and its full gradients before the
    reduce-scatter, (weight + gradient bytes) x largest unit. DeepSpeed's
    estimate_zero3_model_states_mem_needs uses 4 x largest_layer_params (fp16 + fp16).
    0 without sharding (dp 1)."""
    if dp <= 1:
        return 0
    prec = get_precision(precision)
    return (prec.weight_bytes + prec.grad_bytes) * largest_unit_params(cfg)


# ---------------------------------------------------------------- activations
ATTENTION_IMPLS = ("math", "flash")
ATTENTION_ALIASES = {"sdpa": "flash"}
# MLP kind -> tensors of width f that autograd saves per token, as the reference model computes
# them: GELU saves its input (up output) and the down projection its output; ReLU's backward
# reads its own output, which is also the down input (one tensor); a gated MLP
# down(act(gate(x)) * up(x)) saves gate output, act output, up output and the product.
MLP_SAVED_TENSORS: dict[str, int] = {"gelu": 2, "relu": 1, "swiglu": 4, "geglu": 4}


@dataclass(frozen=True)
class ActivationTerm:
    key: str
    formula: str  # bytes in symbols
    bytes: int  # for the whole micro-batch; per layer if per_layer
    per_layer: bool


def activation_terms(cfg: ModelConfig, seq_len: int, micro_batch: int = 1, attention_impl: str = "flash",
                     recompute: str = "none", activation_bytes: int = 2) -> list[ActivationTerm]:
    """Every tensor autograd keeps for backward during one training forward of b sequences of
    T tokens, term by term (per-layer terms once; multiply by L). `activation_bytes` a is the
    compute dtype (4 fp32, 2 bf16). Derived from what the reference model saves (counted by
    reference_model/memory_probe.py with saved_tensors_hooks, each storage once):

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
      reference_model/memory_probe.py names each extra.)
    * recompute `selective` (Korthikanti et al. 2022, section 4.2): the attention core is
      recomputed, so only its inputs q, k, v and the output projection's input stay.
      recompute `full`: each block keeps only its input b.T.d.a (checkpointed blocks); the
      RoPE tables then live in the checkpoint closures, not in saved tensors, and are left
      out (2.T.r.a bytes).
    * MLP: MLP_SAVED_TENSORS tensors of width f per token. MoE (top-k, loop over experts): the
      router's fp32 softmax over the k logits and the top-k indices, and per routed token
      (b.T.k of them): the (token, slot) int64 pair from torch.where, the gathered input, the
      expert's hidden tensors, the expert output, the gate weight and the weighted output
      saved by index_add_.
    * Outside the blocks: token ids (int64), learned position ids (T, int64), the embedding
      norm (BLOOM; as a block norm, but its output is the first block's input and is saved
      there), RoPE cos/sin (T x r each, shared by all layers), the final norm, the lm_head
      input, the fp32 log-softmax of the loss (b.T.V.4), the int64 targets and nll_loss's
      fp32 total weight.
    """
    impl = ATTENTION_ALIASES.get(attention_impl, attention_impl)
    _check_choice("attention_impl", impl, ATTENTION_IMPLS)
    _check_choice("recompute", recompute, RECOMPUTE_MODES)
    for name, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("activation_bytes", activation_bytes)):
        _check_positive(name, value)
    b, T, a = micro_batch, seq_len, activation_bytes
    d, V = cfg.d_model, cfg.padded_vocab
    rows: list[ActivationTerm] = []

    def add(key: str, formula: str, n_bytes: int, per_layer: bool = True) -> None:
        rows.append(ActivationTerm(key, formula, n_bytes, per_layer))

    def norm(prefix: str, with_input: bool = True, with_output: bool = True, per_layer: bool = True) -> None:
        if cfg.norm == "layernorm":
            if with_input:
                add(f"{prefix}.input", "b·T·d·a", b * T * d * a, per_layer)
            add(f"{prefix}.stats", "b·T·2·4 (mean, rstd)", b * T * 2 * FP32_BYTES, per_layer)
        else:
            if with_input:
                add(f"{prefix}.input_fp32", "b·T·d·4", b * T * d * FP32_BYTES, per_layer)
            add(f"{prefix}.rstd", "b·T·4", b * T * FP32_BYTES, per_layer)
            add(f"{prefix}.normalized_fp32", "b·T·d·4", b * T * d * FP32_BYTES, per_layer)
            if a != FP32_BYTES:  # the gain upcast to fp32 for the product, saved by it
                add(f"{prefix}.gain_fp32", "d·4", d * FP32_BYTES, per_layer)
        if with_output:
            add(f"{prefix}.output", "b·T·d·a", b * T * d * a, per_layer)

    if recompute == "full":
        add("block.input", "b·T·d·a (checkpointed block keeps its input)", b * T * d * a)
    else:
        # ---- norms and residual stream
        if cfg.parallel_block:
            norm("attn_norm")
            if not cfg.shared_block_norm:
                # both norms read x: LayerNorm (and fp32 RMSNorm) saves that one tensor once
                norm("mlp_norm", with_input=cfg.norm == "rmsnorm" and a != FP32_BYTES)
        elif cfg.norm_placement == "pre":
            norm("attn_norm")
        else:
            add("attn.input", "b·T·d·a (block input)", b * T * d * a)
        # ---- attention
        _attention_terms(cfg, add, b, T, a, impl, recompute)
        # ---- norm before the MLP (sequential blocks)
        if not cfg.parallel_block:
            if cfg.norm_placement == "pre":
                norm("mlp_norm")
            else:  # post: norm(x + attn(x)) feeds the MLP
                norm("attn_norm")
        # ---- MLP / MoE
        _ffn_terms(cfg, add, b, T, a)
        if not cfg.parallel_block and cfg.norm_placement == "post":
            norm("mlp_norm", with_output=False)  # its output is the next block's input

    # ---- outside the blocks
    add("tok_emb.ids", "b·T·8 (int64)", b * T * INDEX_BYTES, False)
    if cfg.position == "learned":
        add("pos_emb.positions", "T·8 (int64)", T * INDEX_BYTES, False)
    if cfg.embedding_norm:
        norm("emb_norm", with_output=False, per_layer=False)  # its output is block 0's input
    if cfg.position == "rope" and recompute != "full":
        add("rope.cos_sin", "2·T·r·a (shared by all layers)", 2 * T * cfg.rotary_dim * a, False)
    if cfg.final_norm:
        norm("norm_f", with_output=False, per_layer=False)
    add("lm_head.input", "b·T·d·a", b * T * d * a, False)
    add("loss.log_probs", "b·T·V·4 (fp32 log-softmax)", b * T * V * FP32_BYTES, False)
    add("loss.targets", "b·T·8 (int64)", b * T * INDEX_BYTES, False)
    add("loss.total_weight", "4 (fp32 scalar of nll_loss)", FP32_BYTES, False)
    return rows


def _attention_terms(cfg, add, b, T, a, impl, recompute) -> None:
    h, dh = cfg.n_heads, cfg.d_head
    q_bytes, kv_bytes = b * T * h * dh * a, b * T * cfg.kv_heads * dh * a
    if recompute == "selective" or impl == "flash":
        add("attn.q", "b·T·h·d_h·a", q_bytes)
        add("attn.k", "b·T·h_kv·d_h·a", kv_bytes)
        add("attn.v", "b·T·h_kv·d_h·a", kv_bytes)
        if recompute == "selective":
            add("attn.o.input", "b·T·h·d_h·a", q_bytes)
        else:
            add("attn.out", "b·T·h·d_h·a (also the o input)", q_bytes)
            add("attn.logsumexp", "b·h·T·4", b * h * T * FP32_BYTES)
        return
    # math: every matmul operand is saved; K and V repeated to h heads (repeat_interleave)
    add("attn.q", "b·T·h·d_h·a", q_bytes)
    add("attn.k", "b·T·h·d_h·a (repeated to h heads)", q_bytes)
    add("attn.v", "b·T·h·d_h·a (repeated to h heads)", q_bytes)
    add("attn.mask", "T·T (bool, shared by the batch)", T * T)
    add("attn.probs_fp32", "b·h·T·T·4 (softmax output)", b * h * T * T * FP32_BYTES)
    if a != FP32_BYTES:
        add("attn.probs", "b·h·T·T·a (cast for AV)", b * h * T * T * a)
    add("attn.o.input", "b·T·h·d_h·a", q_bytes)


def _ffn_terms(cfg, add, b, T, a) -> None:
    n = MLP_SAVED_TENSORS[cfg.mlp]
    if not cfg.is_moe:
        add("mlp.hidden", f"{n}·b·T·f·a ({cfg.mlp})", n * b * T * cfg.d_ff * a)
        return
    k, d = cfg.top_k, cfg.d_model
    routed = b * T * k
    add("moe.router.probs", "b·T·k·4 (fp32 softmax of the top-k logits)", routed * FP32_BYTES)
    add("moe.router.topk_ids", "b·T·k·8 (int64)", routed * INDEX_BYTES)
    add("moe.experts.routing_ids", "b·T·k·16 (int64 token, slot)", routed * 2 * INDEX_BYTES)
    add("moe.experts.input", "b·T·k·d·a", routed * d * a)
    add("moe.experts.hidden", f"{n}·b·T·k·f_e·a ({cfg.mlp})", n * routed * cfg.expert_ff * a)
    add("moe.experts.output", "2·b·T·k·d·a (expert output, weighted output)", 2 * routed * d * a)
    add("moe.experts.gate_weight", "b·T·k·a", routed * a)


def _sum_terms(terms: list[ActivationTerm]) -> tuple[int, int]:
    per_layer = sum(t.bytes for t in terms if t.per_layer)
    outside = sum(t.bytes for t in terms if not t.per_layer)
    return per_layer, outside


def activations_bytes_per_layer(cfg: ModelConfig, seq_len: int, micro_batch: int = 1, attention_impl: str = "flash",
                                recompute: str = "none", activation_bytes: int = 2) -> int:
    """Bytes one transformer block saves for backward for a micro-batch (activation_terms)."""
    terms = activation_terms(cfg, seq_len, micro_batch, attention_impl, recompute, activation_bytes)
    return _sum_terms(terms)[0]


def activations_bytes(cfg: ModelConfig, seq_len: int, micro_batch: int = 1, attention_impl: str = "flash",
                      recompute: str = "none", activation_bytes: int = 2) -> int:
    """All saved activations of one micro-batch: L x per layer + outside the blocks."""
    terms = activation_terms(cfg, seq_len, micro_batch, attention_impl, recompute, activation_bytes)
    per_layer, outside = _sum_terms(terms)
    return cfg.n_layers * per_layer + outside


def transient_bytes(cfg: ModelConfig, seq_len: int, micro_batch: int = 1, attention_impl: str = "flash",
                    recompute: str = "none", activation_bytes: int = 2) -> int:
    """Working set beyond the saved activations (an estimate; not measured on CPU): the logits
    b.T.V.a (returned by forward, alive through backward) and their fp32 gradient b.T.V.4;
    with recomputation, one block's recomputed activations during its backward."""
    b, T, V, a = micro_batch, seq_len, cfg.padded_vocab, activation_bytes
    logits = b * T * V * (a + FP32_BYTES)
    if recompute == "none":
        return logits
    args = (cfg, seq_len, micro_batch, attention_impl)
    full_layer = activations_bytes_per_layer(*args, "none", activation_bytes)
    return logits + full_layer - activations_bytes_per_layer(*args, recompute, activation_bytes)


def korthikanti_activations_bytes_per_layer(cfg: ModelConfig, seq_len: int, micro_batch: int = 1,
                                            recompute: str = "none") -> int:
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


# ---------------------------------------------------------------- KV cache and inference weights
def cached_positions(cfg: ModelConfig, context: int) -> int:
    """Positions the KV cache holds: the context, capped by a sliding window (ring buffer)."""
    return context if cfg.sliding_window is None else min(context, cfg.sliding_window)


def kv_cache_bytes_per_token(cfg: ModelConfig, dtype: str = "bf16") -> int:
    """One cached position of one sequence: 2 (K and V) x L x h_kv x d_h elements."""
    return dtype_bytes(2 * cfg.n_layers * cfg.kv_heads * cfg.d_head, dtype)


def kv_cache_bytes(cfg: ModelConfig, context: int, batch: int = 1, dtype: str = "bf16") -> int:
    """2 x L x h_kv x d_h x bytes x min(C, W) x batch. The 2 is K and V; GQA/MQA caches h_kv
    heads, not h. Llama-2-70B, C 4096, bf16: 2.80.8.128.2.4096 = 1,342,177,280 bytes per sequence."""
    _check_positive("context", context)
    _check_positive("batch", batch)
    return dtype_bytes(2 * cfg.n_layers * cfg.kv_heads * cfg.d_head * cached_positions(cfg, context) * batch, dtype)


def inference_weights_bytes(cfg: ModelConfig, dtype: str = "bf16") -> int:
    """All N parameters (every expert of an MoE) in `dtype`; int4 packs two per byte."""
    return dtype_bytes(P.total_params(cfg), dtype)


# ---------------------------------------------------------------- results
def _gib(n_bytes: int | None) -> str:
    return "" if n_bytes is None else format_gib(n_bytes)


def _flatten(prefix: str, value: Any, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
    elif isinstance(value, (list, tuple)):
        out.append((prefix, "; ".join(str(v) for v in value)))
    else:
        out.append((prefix, value))


class _Renderable:
    """to_dict() -> render(fmt) for table | markdown | json | csv, and flat_items()."""

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def flat_items(self) -> list[tuple[str, Any]]:
        """(key, value) pairs, nested keys joined with '.', for CSV."""
        out: list[tuple[str, Any]] = []
        _flatten("", self.to_dict(), out)
        return out

    def render(self, fmt: str = "table", details: bool = False) -> str:
        """fmt table | markdown | json | csv; details adds the term-by-term tables."""
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2)
        if fmt == "csv":
            return csv_text(["key", "value"], [list(item) for item in self.flat_items()])
        return self._render_text(fmt, details)

    def _render_text(self, fmt: str, details: bool) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class TrainingMemory(_Renderable):
    """Training memory for one configuration; bytes exact. Per-GPU figures are after ZeRO
    sharding; `weights_bytes` & co. are the whole model's."""

    model: str | None
    config: ModelConfig = field(repr=False)
    seq_len: int
    micro_batch: int
    precision: str
    optimizer: str
    zero: int
    dp: int
    recompute: str
    attention_impl: str
    gpu: str
    params: int
    weights_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activations_bytes: int
    activations_per_layer_bytes: int
    activations_outside_bytes: int
    transient_bytes: int
    per_gpu: dict  # weights, gradients, optimizer, zero3_gathered, activations, transient, total (bytes)
    gpu_memory_bytes: int
    max_micro_batch: int | None  # None: even one sequence per GPU does not fit
    fits: bool
    reason: str | None
    would_fit: tuple[str, ...]
    terms: tuple[ActivationTerm, ...] = field(repr=False)
    korthikanti_per_layer_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        """Unsharded: model states + activations + transient of one micro-batch (= per GPU at dp 1)."""
        return (self.weights_bytes + self.gradients_bytes + self.optimizer_bytes + self.activations_bytes
                + self.transient_bytes)

    @property
    def per_gpu_bytes(self) -> int:
        return self.per_gpu["total_bytes"]

    @property
    def headroom_bytes(self) -> int:
        return self.gpu_memory_bytes - self.per_gpu_bytes

    def to_dict(self) -> dict[str, Any]:
        prec, opt = get_precision(self.precision), get_optimizer(self.optimizer)
        return {
            "model": self.model,
            "seq_len": self.seq_len,
            "micro_batch": self.micro_batch,
            "precision": self.precision,
            "precision_note": prec.description,
            "optimizer": self.optimizer,
            "optimizer_note": opt.description,
            "zero_stage": self.zero,
            "dp": self.dp,
            "recompute": self.recompute,
            "attention_impl": self.attention_impl,
            "params": self.params,
            "weights_bytes": self.weights_bytes,
            "gradients_bytes": self.gradients_bytes,
            "optimizer_bytes": self.optimizer_bytes,
            "model_states_bytes_per_param": (self.weights_bytes + self.gradients_bytes + self.optimizer_bytes)
            / self.params,
            "activations_bytes": self.activations_bytes,
            "activations_per_layer_bytes": self.activations_per_layer_bytes,
            "activations_outside_blocks_bytes": self.activations_outside_bytes,
            "activation_terms": {t.key: t.bytes for t in self.terms},
            "transient_bytes": self.transient_bytes,
            "total_bytes": self.total_bytes,
            "per_gpu": dict(self.per_gpu),
            "per_gpu_bytes": self.per_gpu_bytes,
            "gpu": self.gpu,
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "headroom_bytes": self.headroom_bytes,
            "fits": self.fits,
            "max_micro_batch": self.max_micro_batch,
            "reason": self.reason,
            "would_fit": list(self.would_fit),
            "korthikanti": {
                "formula": KORTHIKANTI_LABEL[self.recompute] + " bytes per layer (Korthikanti et al. 2022, "
                "16-bit GPT block with dropout masks)",
                "per_layer_bytes": self.korthikanti_per_layer_bytes,
                "activations_bytes": self.korthikanti_per_layer_bytes * self.config.n_layers,
            },
        }

    def summary_rows(self) -> list[list]:
        pg, L = self.per_gpu, self.config.n_layers
        prec = get_precision(self.precision)
        n = "N"
        rows = [
            ["weights", f"{n}·{prec.weight_bytes}", _gib(self.weights_bytes), _gib(pg["weights_bytes"])],
            ["gradients", f"{n}·{prec.grad_bytes}", _gib(self.gradients_bytes), _gib(pg["gradients_bytes"])],
            ["optimizer states", self._optimizer_formula(), _gib(self.optimizer_bytes), _gib(pg["optimizer_bytes"])],
        ]
        if pg["zero3_gathered_bytes"]:
            rows.append(["ZeRO-3 gathered unit", "(w + g bytes)·largest unit", "", _gib(pg["zero3_gathered_bytes"])])
        rows += [
            [f"activations (b={self.micro_batch}, T={self.seq_len})",
             f"L·{_gib(self.activations_per_layer_bytes)} + {_gib(self.activations_outside_bytes)} outside",
             _gib(self.activations_bytes), _gib(pg["activations_bytes"])],
            ["transient (logits + grad" + (", recompute" if self.recompute != "none" else "") + ")",
             "b·T·V·(a+4)" + (" + 1 layer" if self.recompute != "none" else ""),
             _gib(self.transient_bytes), _gib(pg["transient_bytes"])],
            ["total", "", _gib(self.total_bytes), _gib(self.per_gpu_bytes)],
            [f"GPU {self.gpu}", "", "", _gib(self.gpu_memory_bytes)],
            ["headroom", "GPU - total", "", _gib(self.headroom_bytes)],
            ["max micro-batch", "", "", str(self.max_micro_batch) if self.max_micro_batch else "none fits"],
            ["Korthikanti et al. 2022 activations", f"L·{KORTHIKANTI_LABEL[self.recompute]} (16-bit, for comparison)",
             _gib(self.korthikanti_per_layer_bytes * L), _gib(self.korthikanti_per_layer_bytes * L)],
        ]
        return rows

    def _optimizer_formula(self) -> str:
        prec = get_precision(self.precision)
        master = f"N·{prec.master_bytes} master + " if prec.master_bytes else ""
        if self.optimizer == "adam8bit":
            return master + "2·(N + 4·⌈N/2048⌉)"
        return master + f"{get_optimizer(self.optimizer).states}·N·{prec.state_bytes}"

    def verdict(self) -> str:
        if self.fits:
            return (f"fits: micro-batch {self.micro_batch} uses {_gib(self.per_gpu_bytes)} of "
                    f"{_gib(self.gpu_memory_bytes)}; largest micro-batch that fits: {self.max_micro_batch}")
        lines = [f"does not fit: {self.reason}"]
        lines += [f"  would fit: {s}" for s in self.would_fit]
        return "\n".join(lines)

    def heading_text(self) -> str:
        return (f"Training memory per GPU: {self.precision} {self.optimizer}, ZeRO {self.zero} over dp {self.dp}, "
                f"micro-batch {self.micro_batch}, T = {self.seq_len}, recompute {self.recompute}, "
                f"{self.attention_impl} attention, {self.gpu}")

    def _render_text(self, fmt: str, details: bool) -> str:
        parts = [heading(self.heading_text(), fmt),
                 table(["quantity", "formula (bytes)", "whole model", "per GPU"], self.summary_rows(), fmt),
                 self.verdict()]
        if details:
            rows = [[t.key, t.formula, format_int(t.bytes), "per layer" if t.per_layer else "once"]
                    for t in self.terms]
            parts += ["", heading(f"Activations saved for backward, term by term (a = "
                                  f"{get_precision(self.precision).activation_bytes} bytes)", fmt),
                      table(["term", "formula", "bytes", "counted"], rows, fmt)]
        return "\n".join(parts)


@dataclass(frozen=True)
class InferenceMemory(_Renderable):
    model: str | None
    config: ModelConfig = field(repr=False)
    context: int
    batch: int
    weight_dtype: str
    kv_dtype: str
    gpu: str
    params: int
    weights_bytes: int
    kv_cache_bytes: int
    kv_cache_bytes_per_sequence: int
    cached_positions: int
    gpu_memory_bytes: int
    max_batch: int | None  # at this context; None when the weights alone do not fit
    max_context: int | None  # at this batch; None when unbounded (window) or nothing fits
    context_unbounded: bool
    max_context_limited_by: str | None  # "memory", "max_positions" (learned table), "window" (unbounded)
    fits: bool
    reason: str | None
    would_fit: tuple[str, ...]

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_cache_bytes

    @property
    def headroom_bytes(self) -> int:
        return self.gpu_memory_bytes - self.total_bytes

    def to_dict(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "model": self.model,
            "context": self.context,
            "batch": self.batch,
            "weight_dtype": self.weight_dtype,
            "kv_dtype": self.kv_dtype,
            "params": self.params,
            "weights_bytes": self.weights_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "kv_cache_bytes_per_sequence": self.kv_cache_bytes_per_sequence,
            "kv_cache_formula": f"2 x L {cfg.n_layers} x kv_heads {cfg.kv_heads} x head_dim {cfg.d_head} x "
                                f"{DTYPE_BITS[self.kv_dtype] / 8:g} bytes x {self.cached_positions} positions x "
                                f"batch {self.batch}",
            "cached_positions": self.cached_positions,
            "total_bytes": self.total_bytes,
            "gpu": self.gpu,
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "headroom_bytes": self.headroom_bytes,
            "fits": self.fits,
            "max_batch": self.max_batch,
            "max_context": self.max_context,
            "context_unbounded": self.context_unbounded,
            "max_context_limited_by": self.max_context_limited_by,
            "reason": self.reason,
            "would_fit": list(self.would_fit),
        }

    def summary_rows(self) -> list[list]:
        cfg = self.config
        window = f" (window {cfg.sliding_window})" if cfg.sliding_window and cfg.sliding_window < self.context else ""
        max_ctx = ("unbounded (window caps the cache)" if self.context_unbounded
                   else format_int(self.max_context) if self.max_context else "none fits")
        if self.max_context_limited_by == "max_positions":
            max_ctx += " (max_positions)"
        return [
            [f"weights ({self.weight_dtype})", f"N·{DTYPE_BITS[self.weight_dtype] / 8:g}", _gib(self.weights_bytes)],
            [f"KV cache ({self.kv_dtype}, C={self.context}{window}, batch {self.batch})",
             f"2·L·h_kv·d_h·{DTYPE_BITS[self.kv_dtype] / 8:g}·{self.cached_positions}·{self.batch}",
             _gib(self.kv_cache_bytes)],
            ["total", "", _gib(self.total_bytes)],
            [f"GPU {self.gpu}", "", _gib(self.gpu_memory_bytes)],
            ["headroom", "GPU - total", _gib(self.headroom_bytes)],
            [f"max batch at C={self.context}", "", format_int(self.max_batch) if self.max_batch else "none fits"],
            [f"max context at batch {self.batch}", "", max_ctx],
        ]

    def verdict(self) -> str:
        if self.fits:
            return (f"fits: {_gib(self.total_bytes)} of {_gib(self.gpu_memory_bytes)} "
                    "(not counted: CUDA context, activations of the forward pass, fragmentation)")
        return "\n".join([f"does not fit: {self.reason}"] + [f"  would fit: {s}" for s in self.would_fit])

    def heading_text(self) -> str:
        return (f"Inference memory: weights {self.weight_dtype}, KV cache {self.kv_dtype}, context {self.context}, "
                f"batch {self.batch}, {self.gpu}")

    def _render_text(self, fmt: str, details: bool) -> str:
        return "\n".join([heading(self.heading_text(), fmt),
                          table(["quantity", "formula (bytes)", "GiB"], self.summary_rows(), fmt), self.verdict()])


@dataclass(frozen=True)
class MemorySummary(_Renderable):
    """What `sizing estimate` embeds: training (bf16 mixed AdamW, micro-batch 1, no ZeRO, no
    recompute, flash attention) and inference (bf16 weights and KV cache at T, batch 1)."""

    training: TrainingMemory
    inference: InferenceMemory

    def to_dict(self) -> dict[str, Any]:
        return {"training": self.training.to_dict(), "inference": self.inference.to_dict()}

    def _render_text(self, fmt: str, details: bool) -> str:
        return "\n".join([self.training.render(fmt, details), "", self.inference.render(fmt, details)])


# ---------------------------------------------------------------- will it fit
def _largest_fitting(total_for, capacity: int, limit: int = 1 << 40) -> int | None:
    """Largest n >= 1 with total_for(n) <= capacity (total_for increasing), None if n = 1 fails."""
    if total_for(1) > capacity:
        return None
    lo, hi = 1, 2
    while hi < limit and total_for(hi) <= capacity:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if total_for(mid) <= capacity else (lo, mid)
    return lo


def _per_gpu_training(cfg: ModelConfig, seq_len: int, micro_batch: int, precision: str, optimizer: str, zero: int,
                      dp: int, recompute: str, attention_impl: str) -> dict[str, int]:
    n = P.total_params(cfg)
    sharded = ZERO_STAGES[zero]
    ranks = lambda part: dp if part in sharded else 1  # noqa: E731
    a = get_precision(precision).activation_bytes
    out = {
        "weights_bytes": shard_bytes(weights_bytes(n, precision), ranks("weights")),
        "gradients_bytes": shard_bytes(gradients_bytes(n, precision), ranks("gradients")),
        "optimizer_bytes": shard_bytes(optimizer_bytes(n, precision, optimizer), ranks("optimizer")),
        "zero3_gathered_bytes": zero3_gathered_bytes(cfg, precision, dp) if zero == 3 else 0,
        "activations_bytes": activations_bytes(cfg, seq_len, micro_batch, attention_impl, recompute, a),
        "transient_bytes": transient_bytes(cfg, seq_len, micro_batch, attention_impl, recompute, a),
    }
    out["total_bytes"] = sum(out.values())
    return out


def training_memory(model: ModelConfig | str, seq_len: int | None = None, micro_batch: int = 1,
                    precision: str = "bf16-mixed", optimizer: str = "adamw", zero: int = 0, dp: int = 1,
                    recompute: str = "none", attention_impl: str = "flash", gpu: str = "a100-80gb",
                    name: str | None = None) -> TrainingMemory:
    """Training memory per GPU and the largest micro-batch that fits `gpu`. When micro-batch 1
    does not fit, `fits` is False, `max_micro_batch` None, and `would_fit` says what would
    (ZeRO-3 over at least N GPUs, full recomputation, a larger GPU)."""
    cfg, name, seq_len = _resolve(model, name, seq_len)
    get_precision(precision)
    get_optimizer(optimizer)
    if zero not in ZERO_STAGES:
        raise ValueError(f"zero ({zero!r}) must be one of: {', '.join(map(str, ZERO_STAGES))}")
    for what, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("dp", dp)):
        _check_positive(what, value)
    impl = ATTENTION_ALIASES.get(attention_impl, attention_impl)
    _check_choice("attention_impl", impl, ATTENTION_IMPLS)
    _check_choice("recompute", recompute, RECOMPUTE_MODES)
    gpu_entry = get_gpu(gpu)
    capacity = gpu_entry.memory_bytes
    a = get_precision(precision).activation_bytes

    def per_gpu(b: int, zero_=zero, dp_=dp, recompute_=recompute) -> dict[str, int]:
        return _per_gpu_training(cfg, seq_len, b, precision, optimizer, zero_, dp_, recompute_, impl)

    pg = per_gpu(micro_batch)
    max_b = _largest_fitting(lambda b: per_gpu(b)["total_bytes"], capacity)
    fits = pg["total_bytes"] <= capacity
    reason, would = None, []
    if not fits:
        reason, would = _training_advice(cfg, per_gpu, pg, micro_batch, max_b, capacity, gpu_entry, zero, dp, recompute)
    n = P.total_params(cfg)
    terms = tuple(activation_terms(cfg, seq_len, micro_batch, impl, recompute, a))
    per_layer, outside = _sum_terms(list(terms))
    return TrainingMemory(
        model=name, config=cfg, seq_len=seq_len, micro_batch=micro_batch, precision=precision, optimizer=optimizer,
        zero=zero, dp=dp, recompute=recompute, attention_impl=impl, gpu=gpu_entry.key, params=n,
        weights_bytes=weights_bytes(n, precision), gradients_bytes=gradients_bytes(n, precision),
        optimizer_bytes=optimizer_bytes(n, precision, optimizer), activations_bytes=pg["activations_bytes"],
        activations_per_layer_bytes=per_layer, activations_outside_bytes=outside,
        transient_bytes=pg["transient_bytes"], per_gpu=pg, gpu_memory_bytes=capacity, max_micro_batch=max_b,
        fits=fits, reason=reason, would_fit=tuple(would), terms=terms,
        korthikanti_per_layer_bytes=korthikanti_activations_bytes_per_layer(cfg, seq_len, micro_batch, recompute),
    )


def _training_advice(cfg, per_gpu, pg, micro_batch, max_b, capacity, gpu_entry, zero, dp, recompute):
    gib = _gib
    states = pg["weights_bytes"] + pg["gradients_bytes"] + pg["optimizer_bytes"] + pg["zero3_gathered_bytes"]
    if max_b is not None:  # a smaller micro-batch fits
        reason = (f"micro-batch {micro_batch} needs {gib(pg['total_bytes'])} per GPU, more than the "
                  f"{gib(capacity)} of {gpu_entry.key}")
        return reason, [f"micro-batch {max_b} or less (gradient accumulation for the rest)"]
    one = per_gpu(1)
    if states > capacity:
        reason = (f"model states alone (weights {gib(pg['weights_bytes'])} + gradients {gib(pg['gradients_bytes'])} + "
                  f"optimizer {gib(pg['optimizer_bytes'])}" + (f" + gathered unit {gib(pg['zero3_gathered_bytes'])}"
                                                                if pg["zero3_gathered_bytes"] else "")
                  + f") need {gib(states)} per GPU, more than the {gib(capacity)} of {gpu_entry.key}")
    else:
        reason = (f"micro-batch 1 needs {gib(one['total_bytes'])} per GPU (model states {gib(states)}, activations "
                  f"{gib(one['activations_bytes'])}, transient {gib(one['transient_bytes'])}), more than the "
                  f"{gib(capacity)} of {gpu_entry.key}")
    would = []
    ranks = _min_ranks(lambda r: per_gpu(1, 3, r, recompute)["total_bytes"], capacity)
    if ranks is not None:
        would.append(f"ZeRO-3 over at least {ranks} GPUs (micro-batch 1)")
    if recompute != "full":
        if per_gpu(1, zero, dp, "full")["total_bytes"] <= capacity:
            would.append(f"recompute full (micro-batch 1, ZeRO {zero}, dp {dp})")
        else:
            ranks_full = _min_ranks(lambda r: per_gpu(1, 3, r, "full")["total_bytes"], capacity)
            if ranks_full is not None and (ranks is None or ranks_full < ranks):
                would.append(f"recompute full and ZeRO-3 over at least {ranks_full} GPUs (micro-batch 1)")
    need = one["total_bytes"]
    bigger = sorted((g for g in GPUS.values() if g.memory_bytes >= need), key=lambda g: g.memory_bytes)
    if bigger:
        would.append(f"a GPU with at least {gib(need)}: " + ", ".join(g.key for g in bigger[:3]))
    if not would:
        would.append("nothing in this tool's range: shard activations too (tensor/sequence/pipeline parallelism)")
    return reason, would


def _min_ranks(total_for_ranks, capacity: int, limit: int = 1 << 20) -> int | None:
    """Smallest dp (ZeRO-3) with total_for_ranks(dp) <= capacity, None if none up to `limit`.
    From dp 2 on the per-GPU total only falls (the gathered unit is constant), so bisect there."""
    if total_for_ranks(1) <= capacity:
        return 1
    if total_for_ranks(limit) > capacity:
        return None
    lo, hi = 1, limit  # hi fits, lo does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if total_for_ranks(mid) <= capacity else (mid, hi)
    return hi


def inference_memory(model: ModelConfig | str, context: int | None = None, batch: int = 1,
                     weight_dtype: str = "bf16", kv_dtype: str = "bf16", gpu: str = "a100-80gb",
                     name: str | None = None) -> InferenceMemory:
    """Weights + KV cache, the largest batch at this context and the largest context at this batch."""
    cfg, name, context = _resolve(model, name, context, what="context")
    _dtype_bits(weight_dtype)
    _dtype_bits(kv_dtype)
    _check_positive("context", context)
    _check_positive("batch", batch)
    gpu_entry = get_gpu(gpu)
    capacity = gpu_entry.memory_bytes
    n = P.total_params(cfg)
    w = inference_weights_bytes(cfg, weight_dtype)
    per_seq = kv_cache_bytes(cfg, context, 1, kv_dtype)
    kv = kv_cache_bytes(cfg, context, batch, kv_dtype)
    max_batch = _largest_fitting(lambda bb: w + kv_cache_bytes(cfg, context, bb, kv_dtype), capacity)
    window = cfg.sliding_window
    unbounded = window is not None and w + kv_cache_bytes(cfg, window, batch, kv_dtype) <= capacity
    max_context = None if unbounded else _largest_fitting(
        lambda c: w + kv_cache_bytes(cfg, c, batch, kv_dtype), capacity)
    limited_by = "window" if unbounded else "memory" if max_context else None
    if cfg.position == "learned" and (unbounded or (max_context or 0) > cfg.max_positions):
        # a learned position table has no row beyond max_positions
        max_context, unbounded, limited_by = cfg.max_positions, False, "max_positions"
    fits = w + kv <= capacity
    reason, would = None, []
    if not fits:
        if w > capacity:
            reason = (f"the weights alone ({weight_dtype}) need {_gib(w)}, more than the {_gib(capacity)} of "
                      f"{gpu_entry.key}")
            for dt in ("int8", "int4"):
                if DTYPE_BITS[dt] < DTYPE_BITS[weight_dtype] and inference_weights_bytes(cfg, dt) + per_seq <= capacity:
                    would.append(f"{dt} weights (batch 1)")
                    break
        else:
            reason = (f"weights {_gib(w)} + KV cache {_gib(kv)} = {_gib(w + kv)}, more than the {_gib(capacity)} "
                      f"of {gpu_entry.key}")
            if max_batch:
                would.append(f"batch {max_batch} or less at context {context}")
            if max_context:
                would.append(f"context {max_context} or less at batch {batch}")
        bigger = sorted((g for g in GPUS.values() if g.memory_bytes >= w + kv), key=lambda g: g.memory_bytes)
        if bigger:
            would.append(f"a GPU with at least {_gib(w + kv)}: " + ", ".join(g.key for g in bigger[:3]))
        if w + per_seq > capacity:
            would.append(f"weights and KV cache split over at least {-(-(w + per_seq) // capacity)} "
                         f"{gpu_entry.key} GPUs (tensor/pipeline parallelism, batch 1)")
    return InferenceMemory(
        model=name, config=cfg, context=context, batch=batch, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
        gpu=gpu_entry.key, params=n, weights_bytes=w, kv_cache_bytes=kv, kv_cache_bytes_per_sequence=per_seq,
        cached_positions=cached_positions(cfg, context), gpu_memory_bytes=capacity, max_batch=max_batch,
        max_context=max_context, context_unbounded=unbounded, max_context_limited_by=limited_by, fits=fits,
        reason=reason, would_fit=tuple(would),
    )


def summary_for_estimate(cfg: ModelConfig, seq_len: int, gpu_key: str, micro_batch: int = 1,
                         name: str | None = None) -> MemorySummary:
    """The memory block of `sizing estimate`: bf16-mixed AdamW training at micro-batch 1 (by
    default), no ZeRO, no recompute, flash attention; bf16 inference with a KV cache of
    seq_len, batch 1."""
    return MemorySummary(
        training=training_memory(cfg, seq_len, micro_batch, "bf16-mixed", "adamw", 0, 1, "none", "flash", gpu_key,
                                 name=name),
        inference=inference_memory(cfg, seq_len, 1, "bf16", "bf16", gpu_key, name=name),
    )


# ---------------------------------------------------------------- helpers
def _resolve(model, name, length, what="seq_len"):
    if isinstance(model, str):
        from ..presets import get_preset

        preset = get_preset(model)
        return preset.config, name or preset.name, length if length is not None else preset.context
    if length is None:
        raise ValueError(f"{what} must be given for a config that is not a preset")
    return model, name, length


def _check_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} ({value!r}) must be a positive integer")


def _check_choice(name: str, value: Any, choices) -> None:
    if value not in choices:
        raise ValueError(f"{name} ({value!r}) must be one of: {', '.join(map(str, choices))}")


__all__ = [
    "ActivationTerm", "DTYPE_BITS", "InferenceMemory", "MemorySummary", "OPTIMIZERS", "PRECISIONS",
    "TrainingMemory", "ZERO_STAGES", "activation_terms", "activations_bytes", "activations_bytes_per_layer",
    "cached_positions", "dtype_bytes", "gradients_bytes", "inference_memory", "inference_weights_bytes",
    "korthikanti_activations_bytes_per_layer", "kv_cache_bytes", "kv_cache_bytes_per_token", "master_weights_bytes",
    "optimizer_bytes", "optimizer_state_bytes", "shard_bytes", "summary_for_estimate", "training_memory",
    "transient_bytes", "weights_bytes", "zero3_gathered_bytes",
]
