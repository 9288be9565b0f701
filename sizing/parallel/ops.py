"""The operations of one transformer block for one micro-batch on one GPU, with their shapes after
TP / SP / CP / EP, and their forward and backward seconds by kind.

Per rank: t = b T / cp tokens enter each GEMM (sequence parallelism all-gathers them back to
t before the column-parallel GEMMs); column-parallel outputs and row-parallel inputs are split
over tp. Kinds:

* gemm: QKV (or MLA's projections), attention out, MLP up/gate/down, router, experts; each at
  its shape through sizing.parallel.gemm (tile and wave quantization, achievable share);
* attention: the score and value products. `flash`: one fused kernel at its measured share of
  peak (forward, backward apart; causal work halves the pairs). `unfused` (Megatron 2021-22):
  batched GEMMs per head at tile efficiency plus the softmax (and dropout) as memory traffic;
* memory: norms, residual adds, activation, rotary, dropout, fp8 casts, at the achievable
  HBM bandwidth: elements read + written x bytes, backward 1.5 x the forward's traffic
  (BACKWARD_TRAFFIC);
* tp: the TP collectives on the critical path: two all-reduces per block forward and two
  backward, or with SP the same bytes as all-gather + reduce-scatter pairs;
* ep: the two all-to-alls (dispatch, combine) per MoE block forward and two backward, and the
  expert-tensor-parallel gathers, as the stack overlaps them (sizing.parallel.moe_ops);
* cp: the ring pass of K and V around cp ranks, exposed only beyond the attention it hides
  under.
"""

from __future__ import annotations

from sizing.formulas import attended_pairs
from sizing.inputs import ModelConfig
from sizing.parallel import eager
from sizing.parallel.attention import flash_seconds
from sizing.parallel.gemm import gemm_seconds
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.moe_ops import ep_exposed, expert_share, experts
from sizing.parallel.ops_base import (
    ACT_BYTES,
    BACKWARD_TRAFFIC,
    MASK_BYTES,
    Hardware,
    Times,
    add_linear,
    add_memory,
)

__all__ = [
    "ACT_BYTES",
    "BACKWARD_TRAFFIC",
    "Hardware",
    "Times",
    "attention_core",
    "attention_projections",
    "block_times",
    "expert_share",
    "experts",
    "mlp",
    "recompute_times",
]


def attention_projections(cfg: ModelConfig, hw: Hardware, fwd: Times, bwd: Times, t: int, tp: int) -> None:
    d = cfg.d_model
    if cfg.kv_lora_rank is not None:  # MLA (DeepSeek-V2 sec. 2.1): down- and up-projections
        q_out = cfg.n_heads * cfg.qk_head_width // tp
        if cfg.q_lora_rank is not None:
            add_linear(hw, fwd, bwd, t, cfg.q_lora_rank, d)
            add_linear(hw, fwd, bwd, t, q_out, cfg.q_lora_rank)
        else:
            add_linear(hw, fwd, bwd, t, q_out, d)
        add_linear(hw, fwd, bwd, t, cfg.kv_lora_rank + cfg.qk_rope_head_dim, d)
        add_linear(hw, fwd, bwd, t, cfg.n_heads * (cfg.qk_nope_head_dim + cfg.v_head_dim) // tp, cfg.kv_lora_rank)
        add_linear(hw, fwd, bwd, t, d, cfg.n_heads * cfg.v_head_width // tp, name="o")
        return
    add_linear(hw, fwd, bwd, t, (cfg.q_width + 2 * cfg.kv_width) // tp, d, name="qkv")  # fused, column-parallel
    add_linear(hw, fwd, bwd, t, d, cfg.q_width // tp, name="o")  # attention out, row-parallel


def mlp(cfg: ModelConfig, hw: Hardware, fwd: Times, bwd: Times, t: int, tp: int) -> None:
    f = cfg.d_ff // tp
    add_linear(hw, fwd, bwd, t, f * (cfg.mlp_matrices - 1), cfg.d_model, name="up")  # up (+ gate), fused
    add_linear(hw, fwd, bwd, t, cfg.d_model, f, name="down")
    if hw.eager:
        add_memory(hw, fwd, bwd, eager.activation_bytes(cfg, t, f))
    else:
        add_memory(hw, fwd, bwd, t * f * (cfg.mlp_matrices) * ACT_BYTES)  # activation: read 1-2 f, write f


def attention_core(
    cfg: ModelConfig,
    layout: ParallelLayout,
    hw: Hardware,
    fwd: Times,
    bwd: Times,
    b: int,
    seq_len: int,
    kernel: str,
    document: int | None = None,
) -> tuple[float, float]:
    """Score and value products of b sequences on this rank; returns the (forward, backward)
    seconds of the products alone (what a CP ring pass can hide under). `document`: packed
    sequences of documents this long attend within their document (varlen flash attention),
    as Llama-4's chunked attention does within its chunks."""
    heads = cfg.n_heads // layout.tp
    qk, vw = cfg.qk_head_width, cfg.v_head_width
    if kernel == "flash":
        chunks = [c for c in (document, cfg.attention_chunk) if c]
        chunk = min(chunks) if chunks else None
        pairs = attended_pairs(seq_len, "causal", cfg.sliding_window, chunk) / layout.cp
        flops = 2 * b * heads * pairs * (qk + vw)
        span = min(seq_len, chunk) if chunk else seq_len
        f, bw = flash_seconds(
            flops,
            hw.consts,
            hw.attention_kernel,
            hw.peak,
            hw.peak_per_exp,
            qk,
            vw,
            span,
            layout.cp if span == seq_len else 1,
            cfg.sliding_window,
        )
        fwd.add("attention", f)
        bwd.add("attention", bw)
        return f, bw
    q = seq_len // layout.cp
    s = q
    hbm = hw.hbm_bytes_per_second
    f = gemm_seconds(q, s, qk, hw.peak, hw.consts, "fp16", b * heads, hbm)
    f += gemm_seconds(q, vw, s, hw.peak, hw.consts, "fp16", b * heads, hbm)
    fwd.add("attention", f)
    bwd.add("attention", 2 * f)
    return f, 2 * f


def softmax_bytes(cfg: ModelConfig, layout: ParallelLayout, b: int, seq_len: int, dropout: bool) -> float:
    """Unfused attention's memory traffic: the fused scale-mask-softmax reads and writes the b h/tp
    T x T scores; dropout reads them again, writes them and its mask."""
    scores = b * (cfg.n_heads // layout.tp) * (seq_len // layout.cp) * seq_len
    per = 2 * ACT_BYTES + ((2 * ACT_BYTES + MASK_BYTES) if dropout else 0)
    return scores * per


def elementwise_bytes(cfg: ModelConfig, layout: ParallelLayout, t: int, dropout: bool, rotary: bool = True) -> float:
    """Norms (read, write d), residual adds (read 2 d, write d), bias-dropout-add masks and rotary
    (read, write q and k; `rotary` False for a block without attention: a hybrid's state-mixer
    layer), per block; with SP these run on t / tp tokens, without it on all t."""
    d = cfg.d_model
    tokens = t // layout.tp if layout.sequence_parallel else t
    per_token = cfg.norms_per_block * 2 * d + 2 * 3 * d
    per_token_bytes = per_token * ACT_BYTES + (2 * d * MASK_BYTES if dropout else 0)
    rope = 0
    if rotary and cfg.position == "rope":
        rope = t * 2 * (cfg.q_width + cfg.kv_width) // layout.tp * ACT_BYTES
    return tokens * per_token_bytes + rope


def tp_comm(cfg: ModelConfig, layout: ParallelLayout, hw: Hardware, fwd: Times, bwd: Times, t: int) -> None:
    """Two all-reduces of the t x d activations per block each way (Megatron's f and g); with SP
    an all-gather and a reduce-scatter in their place, the same bytes on the wire. On the
    critical path, unless the stack overlaps them with the GEMMs next to them (Transformer
    Engine's userbuffers, tp_comm_overlap): the collective is split into tp chunks pipelined
    with the GEMM's chunks, so what shows is the first chunk, or the excess over the GEMMs."""
    if layout.tp == 1:
        return
    n_bytes = t * cfg.d_model * ACT_BYTES
    if layout.sequence_parallel:
        one = hw.tp_link.seconds("all_gather", n_bytes, layout.tp) + hw.tp_link.seconds(
            "reduce_scatter", n_bytes, layout.tp
        )
    else:
        one = hw.tp_link.seconds("all_reduce", n_bytes, layout.tp)
    for part, gemm in ((fwd, fwd.by_kind.get("gemm", 0.0)), (bwd, bwd.by_kind.get("gemm", 0.0))):
        total = 2 * one
        part.add("tp", max(total / layout.tp, total - gemm) if hw.tp_overlap else total)


def cp_ring(cfg: ModelConfig, layout: ParallelLayout, hw: Hardware, fwd: Times, bwd: Times, t: int, hide) -> None:
    """Ring attention passes this rank's K and V (forward), and K, V and their gradients
    (backward), cp - 1 times; exposed only beyond the attention products it overlaps."""
    if layout.cp == 1:
        return
    kv = t * 2 * cfg.kv_width // layout.tp * ACT_BYTES
    f = (layout.cp - 1) * hw.cp_link.seconds("send", kv, 2)
    b = 2 * f
    fwd.add("cp", max(0.0, f - hide[0]))
    bwd.add("cp", max(0.0, b - hide[1]))


def block_times(
    cfg: ModelConfig,
    layout: ParallelLayout,
    hw: Hardware,
    seq_len: int,
    moe: bool,
    kernel: str,
    dropout: bool,
    capacity_factor: float,
    document: int | None = None,
) -> tuple[Times, Times]:
    """(forward, backward) of one block for one micro-batch on one rank."""
    fwd, bwd = Times(), Times()
    b, tp = layout.micro_batch, layout.tp
    t = b * seq_len // layout.cp
    attention_projections(cfg, hw, fwd, bwd, t, tp)
    hide = attention_core(cfg, layout, hw, fwd, bwd, b, seq_len, kernel, document)
    if kernel != "flash":
        add_memory(hw, fwd, bwd, softmax_bytes(cfg, layout, b, seq_len, dropout), "softmax")
    if moe:
        a2a, shared = experts(cfg, layout, hw, fwd, bwd, t, capacity_factor)
    else:
        mlp(cfg, hw, fwd, bwd, t, tp)
    if hw.eager:
        add_memory(hw, fwd, bwd, eager.elementwise_bytes(cfg, layout, t))
    else:
        add_memory(hw, fwd, bwd, elementwise_bytes(cfg, layout, t, dropout))
    tp_comm(cfg, layout, hw, fwd, bwd, t)
    cp_ring(cfg, layout, hw, fwd, bwd, t, hide)
    if moe:
        ep_exposed(hw, fwd, bwd, a2a, shared)
    return fwd, bwd


OP_SAC_MM_RECOMPUTED = 0.5  # torchtitan's op-level policy saves every other mm's output


def recompute_times(fwd: Times, mode: str, kernel: str, selective: str = "attention") -> Times:
    """What backward runs again first: full, the whole forward (collectives included);
    selective, the attention core (free under flash, whose backward recomputes it anyway).
    A stack whose selective checkpointing is op-level (torchtitan's `selective_ac_option: op`,
    torchtitan/distributed/activation_checkpoint.py: `_save_list` keeps mm, attention and
    reduce-scatter outputs but recomputes every second mm) reruns half the forward GEMMs and all
    of its elementwise ops; the attention and the collectives are saved."""
    out = Times()
    if mode == "selective" and selective == "op":
        out.add("gemm", OP_SAC_MM_RECOMPUTED * fwd.by_kind.get("gemm", 0.0))
        out.add("memory", fwd.by_kind.get("memory", 0.0))
        return out
    if mode == "full":
        for kind, s in fwd.by_kind.items():
            out.add(kind, s)
    elif mode == "selective" and kernel != "flash":
        out.add("attention", fwd.by_kind.get("attention", 0.0))
        out.add("softmax", fwd.by_kind.get("softmax", 0.0))
    return out
