"""The primitives the per-operation step model is built of: what an operation's time depends on
besides its shape (Hardware), seconds by kind for one pass (Times), a block linear's forward and
backward GEMMs with what goes with them (fp8 casts, LoRA adapters, QLoRA dequantisation), and
memory-bound traffic at the achievable HBM bandwidth (sizing.parallel.ops, moe_ops)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.parallel.gemm import linear_train_seconds
from sizing.parallel.links import Link
from sizing.parallel.stepdata import GpuConstants

ACT_BYTES = 2  # bf16/fp16 activations
MASK_BYTES = 1  # a dropout mask element (uint8/bool)
# An elementwise backward reads the saved input and the incoming gradient and writes the input
# gradient (3 tensors) where the forward read one and wrote one (2): a norm, an activation, a
# softmax. A residual add or a dropout moves as much backward as forward (1x). 1.5 is charged.
BACKWARD_TRAFFIC = 1.5
# fp8 (Transformer Engine on Hopper, whose fp8 GEMMs take only the TN layout): each operand is cast
# and transposed in one kernel (cast_transpose): read bf16 2 B, write the fp8 copy 1 B and its
# transpose 1 B = 4 B per element. Delayed scaling takes the scale from the amax history, which
# the cast kernel updates as it goes; current (dynamic) scaling first reads the tensor once more
# for its amax (+2 B). Per sizing/data/step_time.json "fp8_recipes".
FP8_CAST_TRANSPOSE_BYTES = 4
FP8_AMAX_PASS_BYTES = 2
NF4_WEIGHT_BYTES = 4.127 / 8  # QLoRA's NF4 with double quantisation (sizing.parallel.finetune)


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
    attention_kernel: str = "best"  # the stack's fused attention kernel (sizing.parallel.attention)
    eager: bool = False  # elementwise ops unfused (sizing.parallel.eager)
    peak_per_exp: float = 0.0  # nominal matmul peak / exponential throughput (the softmax's cost)
    fp8_current_scaling: bool = False  # fp8 recipe: current (an amax pass per cast) or delayed
    frozen_base: bool = False  # LoRA / QLoRA: base weights frozen, no weight gradients
    adapter_rank: int = 0  # LoRA rank on adapted projections
    adapted: tuple[str, ...] = ()  # which block linears carry adapters (qkv, o, up, down)
    nf4_base: bool = False  # QLoRA: base weights dequantised from NF4 at every use
    tp_overlap: bool = False  # tp collectives pipelined with the GEMMs (Transformer Engine userbuffers)
    ep_overlap: str = "none"  # what hides the all-to-alls: none, shared (the shared experts), paired (DualPipe)
    etp_link: Link | None = None  # the expert-tensor-parallel group (ranks 1 apart inside the tp group)
    comm_sms: int = 0  # SMs an overlapped all-to-all kernel takes from the GEMMs beside it
    fp8_dispatch: bool = False  # the dispatch (and its backward twin) sends fp8 activations with 1x128 scales
    routed_groups: int = 0  # node- or device-limited routing: each token sent once per group, to at most this many
    a2a_slowdown: float = 1.0  # the dispatcher's all-to-all time over the link model's (NCCL: 1.95)


@dataclass
class Times:
    """Seconds by kind for one pass."""

    by_kind: dict[str, float] = field(default_factory=dict)

    def add(self, kind: str, seconds: float) -> None:
        self.by_kind[kind] = self.by_kind.get(kind, 0.0) + seconds

    def total(self) -> float:
        return sum(self.by_kind.values())


def add_linear(hw: Hardware, fwd: Times, bwd: Times, m: int, n: int, k: int, count: int = 1, name: str = "") -> None:
    """A block linear (x: m x k, W: k x n): forward, dgrad and (unless frozen) wgrad GEMMs, its
    fp8 casts, a LoRA adapter where `name` is adapted, QLoRA's dequantisation of W."""
    hbm = hw.hbm_bytes_per_second
    grads = not hw.frozen_base
    f, b = linear_train_seconds(m, n, k, hw.gemm_peak, hw.consts, hw.gemm_dtype, count, hbm, grads)
    fwd.add("gemm", f)
    bwd.add("gemm", b)
    if hw.gemm_dtype == "fp8":  # x and W cast-transposed forward, the output gradient backward
        per = FP8_CAST_TRANSPOSE_BYTES + (FP8_AMAX_PASS_BYTES if hw.fp8_current_scaling else 0)
        fwd.add("memory", count * (m * k + k * n) * per / hbm)
        bwd.add("memory", count * m * n * per / hbm)
    if hw.nf4_base:  # dequantise W to bf16 for the forward and for dgrad
        dequant = count * k * n * (NF4_WEIGHT_BYTES + ACT_BYTES) / hbm
        fwd.add("memory", dequant)
        bwd.add("memory", dequant)
    if name in hw.adapted and hw.adapter_rank:
        r, peak = hw.adapter_rank, hw.peak  # adapters train in bf16: x A (m x r), then (x A) B (m x n)
        for rows, cols, inner in ((m, r, k), (m, n, r)):
            af, ab = linear_train_seconds(rows, cols, inner, peak, hw.consts, "bf16", count, hbm)
            fwd.add("gemm", af)
            bwd.add("gemm", ab)


def add_memory(hw: Hardware, fwd: Times, bwd: Times, n_bytes: float, kind: str = "memory") -> None:
    fwd.add(kind, n_bytes / hw.hbm_bytes_per_second)
    bwd.add(kind, BACKWARD_TRAFFIC * n_bytes / hw.hbm_bytes_per_second)
