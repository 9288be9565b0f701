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
* ep: the two all-to-alls (dispatch, combine) per MoE block forward and two backward;
* cp: the ring pass of K and V around cp ranks, exposed only beyond the attention it hides
  under.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.formulas import attended_pairs
from sizing.inputs import ModelConfig
from sizing.parallel import eager
from sizing.parallel.gemm import gemm_seconds, linear_train_seconds
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.links import Link
from sizing.parallel.stepdata import GpuConstants

ACT_BYTES = 2  # bf16/fp16 activations
MASK_BYTES = 1  # a dropout mask element (uint8/bool)
# An elementwise backward reads the saved input and the incoming gradient and writes the input
# gradient (3 tensors) where the forward read one and wrote one (2): a norm, an activation, a
# softmax. A residual add or a dropout moves as much backward as forward (1x). 1.5 is charged.
BACKWARD_TRAFFIC = 1.5
FP8_CAST_ELEMENT_BYTES = 3  # fp8 scaling: read a bf16 operand (2 B), write its fp8 copy (1 B)


@dataclass(frozen=True)
class Hardware:
    """What an operation's time depends on besides its shape."""

    consts: GpuConstants
    peak: float  # dense FLOP/s of the activation dtype (bf16/fp16)
    gemm_peak: float  # dense FLOP/s of the GEMM dtype (the fp8 peak under fp8 training)
    gemm_dtype: str
    hbm_bytes_per_second: float  # achievable
    tp_link: Link
    cp_link: Link
    ep_link: Link
    flash_forward: float = 0.0  # share of peak of the stack's flash kernel (0: the GPU's best)
    flash_backward: float = 0.0
    eager: bool = False  # elementwise ops unfused (sizing.parallel.eager)

    def flash_shares(self) -> tuple[float, float]:
        if self.flash_forward:
            return self.flash_forward, self.flash_backward
        return self.consts.flash_forward, self.consts.flash_backward


@dataclass
class Times:
    """Seconds by kind for one pass."""

    by_kind: dict[str, float] = field(default_factory=dict)

    def add(self, kind: str, seconds: float) -> None:
        self.by_kind[kind] = self.by_kind.get(kind, 0.0) + seconds

    def total(self) -> float:
        return sum(self.by_kind.values())


def _linear(hw: Hardware, fwd: Times, bwd: Times, m: int, n: int, k: int, count: int = 1) -> None:
    f, b = linear_train_seconds(m, n, k, hw.gemm_peak, hw.consts, hw.gemm_dtype, count)
    fwd.add("gemm", f)
    bwd.add("gemm", b)
    if hw.gemm_dtype == "fp8":  # cast both operands to fp8 before each of the three GEMMs
        elements = count * (m * k + k * n)
        fwd.add("memory", elements * FP8_CAST_ELEMENT_BYTES / hw.hbm_bytes_per_second)
        bwd.add("memory", 2 * (count * m * n) * FP8_CAST_ELEMENT_BYTES / hw.hbm_bytes_per_second)


def _memory(hw: Hardware, fwd: Times, bwd: Times, n_bytes: float, kind: str = "memory") -> None:
    fwd.add(kind, n_bytes / hw.hbm_bytes_per_second)
    bwd.add(kind, BACKWARD_TRAFFIC * n_bytes / hw.hbm_bytes_per_second)


def attention_projections(cfg: ModelConfig, hw: Hardware, fwd: Times, bwd: Times, t: int, tp: int) -> None:
    d = cfg.d_model
    if cfg.kv_lora_rank is not None:  # MLA (DeepSeek-V2 sec. 2.1): down- and up-projections
        q_out = cfg.n_heads * cfg.qk_head_width // tp
        if cfg.q_lora_rank is not None:
            _linear(hw, fwd, bwd, t, cfg.q_lora_rank, d)
            _linear(hw, fwd, bwd, t, q_out, cfg.q_lora_rank)
        else:
            _linear(hw, fwd, bwd, t, q_out, d)
        _linear(hw, fwd, bwd, t, cfg.kv_lora_rank + cfg.qk_rope_head_dim, d)
        _linear(hw, fwd, bwd, t, cfg.n_heads * (cfg.qk_nope_head_dim + cfg.v_head_dim) // tp, cfg.kv_lora_rank)
        _linear(hw, fwd, bwd, t, d, cfg.n_heads * cfg.v_head_width // tp)
        return
    _linear(hw, fwd, bwd, t, (cfg.q_width + 2 * cfg.kv_width) // tp, d)  # fused QKV, column-parallel
    _linear(hw, fwd, bwd, t, d, cfg.q_width // tp)  # attention out, row-parallel


def mlp(cfg: ModelConfig, hw: Hardware, fwd: Times, bwd: Times, t: int, tp: int) -> None:
    f = cfg.d_ff // tp
    _linear(hw, fwd, bwd, t, f * (cfg.mlp_matrices - 1), cfg.d_model)  # up (+ gate), fused
    _linear(hw, fwd, bwd, t, cfg.d_model, f)  # down
    if hw.eager:
        _memory(hw, fwd, bwd, eager.activation_bytes(cfg, t, f))
    else:
        _memory(hw, fwd, bwd, t * f * (cfg.mlp_matrices) * ACT_BYTES)  # activation: read 1-2 f, write f


def expert_share(cfg: ModelConfig, layout: ParallelLayout, t: int, cf: float) -> tuple[int, int, int, int]:
    """One rank's expert work under ep x etp (Megatron-Core's expert grid, sizing.parallel.layout):
    (local experts E / ep, routed tokens per local expert, expert width per rank f_e / etp,
    tokens this rank dispatches). A rank's etp group brings t etp / tp tokens (t the tokens of a
    tp group; etp = tp is the whole group's t), and each local expert gets those of its ep ranks
    routed to it: t' ep k / E (x the capacity factor)."""
    tokens = max(1, t * layout.etp // layout.tp)
    per_expert = max(1, round(tokens * layout.ep * cfg.top_k * cf / cfg.n_experts))
    return cfg.n_experts // layout.ep, per_expert, cfg.expert_ff // layout.etp, tokens


def experts(cfg: ModelConfig, layout: ParallelLayout, hw: Hardware, fwd: Times, bwd: Times, t: int, cf: float):
    """Router, then the local experts as grouped GEMMs at their per-rank shape (expert_share)."""
    d, tp = cfg.d_model, layout.tp
    _linear(hw, fwd, bwd, t, cfg.n_experts, d)
    local, per_expert, f, tokens = expert_share(cfg, layout, t, cf)
    _linear(hw, fwd, bwd, per_expert, f * (cfg.mlp_matrices - 1), d, local)
    _linear(hw, fwd, bwd, per_expert, d, f, local)
    _memory(hw, fwd, bwd, local * per_expert * f * cfg.mlp_matrices * ACT_BYTES)
    if cfg.n_shared_experts:
        fs = cfg.n_shared_experts * cfg.shared_ff // tp
        _linear(hw, fwd, bwd, t, fs * (cfg.mlp_matrices - 1), d)
        _linear(hw, fwd, bwd, t, d, fs)
    routed_bytes = tokens * cfg.top_k * cf * d * ACT_BYTES  # tokens this rank sends out (and gets back)
    fwd.add("ep", hw.ep_link.seconds("all_to_all", routed_bytes, layout.ep, 2))
    bwd.add("ep", hw.ep_link.seconds("all_to_all", routed_bytes, layout.ep, 2))


def attention_core(
    cfg: ModelConfig, layout: ParallelLayout, hw: Hardware, fwd: Times, bwd: Times, b: int, seq_len: int, kernel: str
) -> tuple[float, float]:
    """Score and value products of b sequences on this rank; returns the (forward, backward)
    seconds of the products alone (what a CP ring pass can hide under)."""
    heads = cfg.n_heads // layout.tp
    qk, vw = cfg.qk_head_width, cfg.v_head_width
    if kernel == "flash":
        pairs = attended_pairs(seq_len, "causal", cfg.sliding_window) / layout.cp
        flops = 2 * b * heads * pairs * (qk + vw)
        share_f, share_b = hw.flash_shares()
        f = flops / (hw.peak * share_f)
        bw = 2 * flops / (hw.peak * share_b)
        fwd.add("attention", f)
        bwd.add("attention", bw)
        return f, bw
    q = seq_len // layout.cp
    s = q
    f = gemm_seconds(q, s, qk, hw.peak, hw.consts, "fp16", b * heads)
    f += gemm_seconds(q, vw, s, hw.peak, hw.consts, "fp16", b * heads)
    fwd.add("attention", f)
    bwd.add("attention", 2 * f)
    return f, 2 * f


def softmax_bytes(cfg: ModelConfig, layout: ParallelLayout, b: int, seq_len: int, dropout: bool) -> float:
    """Unfused attention's memory traffic: the fused scale-mask-softmax reads and writes the b h/tp
    T x T scores; dropout reads them again, writes them and its mask."""
    scores = b * (cfg.n_heads // layout.tp) * (seq_len // layout.cp) * seq_len
    per = 2 * ACT_BYTES + ((2 * ACT_BYTES + MASK_BYTES) if dropout else 0)
    return scores * per


def elementwise_bytes(cfg: ModelConfig, layout: ParallelLayout, t: int, dropout: bool) -> float:
    """Norms (read, write d), residual adds (read 2 d, write d), bias-dropout-add masks and rotary
    (read, write q and k), per block; with SP these run on t / tp tokens, without it on all t."""
    d = cfg.d_model
    tokens = t // layout.tp if layout.sequence_parallel else t
    per_token = cfg.norms_per_block * 2 * d + 2 * 3 * d
    per_token_bytes = per_token * ACT_BYTES + (2 * d * MASK_BYTES if dropout else 0)
    rope = 0
    if cfg.position == "rope":
        rope = t * 2 * (cfg.q_width + cfg.kv_width) // layout.tp * ACT_BYTES
    return tokens * per_token_bytes + rope


def tp_comm(cfg: ModelConfig, layout: ParallelLayout, hw: Hardware, fwd: Times, bwd: Times, t: int) -> None:
    """Two all-reduces of the t x d activations per block each way (Megatron's f and g); with SP
    an all-gather and a reduce-scatter in their place, the same bytes on the wire."""
    if layout.tp == 1:
        return
    n_bytes = t * cfg.d_model * ACT_BYTES
    if layout.sequence_parallel:
        one = hw.tp_link.seconds("all_gather", n_bytes, layout.tp) + hw.tp_link.seconds(
            "reduce_scatter", n_bytes, layout.tp
        )
    else:
        one = hw.tp_link.seconds("all_reduce", n_bytes, layout.tp)
    fwd.add("tp", 2 * one)
    bwd.add("tp", 2 * one)


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
) -> tuple[Times, Times]:
    """(forward, backward) of one block for one micro-batch on one rank."""
    fwd, bwd = Times(), Times()
    b, tp = layout.micro_batch, layout.tp
    t = b * seq_len // layout.cp
    attention_projections(cfg, hw, fwd, bwd, t, tp)
    hide = attention_core(cfg, layout, hw, fwd, bwd, b, seq_len, kernel)
    if kernel != "flash":
        _memory(hw, fwd, bwd, softmax_bytes(cfg, layout, b, seq_len, dropout), "softmax")
    if moe:
        experts(cfg, layout, hw, fwd, bwd, t, capacity_factor)
    else:
        mlp(cfg, hw, fwd, bwd, t, tp)
    if hw.eager:
        _memory(hw, fwd, bwd, eager.elementwise_bytes(cfg, layout, t))
    else:
        _memory(hw, fwd, bwd, elementwise_bytes(cfg, layout, t, dropout))
    tp_comm(cfg, layout, hw, fwd, bwd, t)
    cp_ring(cfg, layout, hw, fwd, bwd, t, hide)
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
