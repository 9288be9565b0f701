"""The per-GPU constants and the software stacks of the step-time model, read once from
sizing/data/step_time.json.

Each GPU entry holds what the step-time model needs beyond sizing/inputs/hardware.py's peaks and
bandwidths: the SM count; the GEMM kernel model (cuBLAS's output tiles with their relative
efficiency, split-K, the asymptotic share of peak and the K-loop overhead per dtype, a fixed cost
per kernel), derived from published cuBLAS/DeepGEMM shape sweeps; the attention kernels' shares
of peak (FlashAttention-1/2/3, cuDNN) forward and backward with the block size and the special-
function (exp) throughput that set their sequence-length and head-dim dependence; the achievable
HBM share; the collective bus-bandwidth shares and per-call latencies of NVLink and the network.
Every number's source sits beside it in the JSON file and in docs/step-time.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sizing.validate import SizingError

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "step_time.json"


@dataclass(frozen=True)
class GemmFit:
    """One dtype's GEMM kernel: the share of the dense peak the largest tile reaches on a full
    wave as K grows, and the K-loop overhead K0 (prologue, epilogue and pipeline fill in units
    of K: a tile's time goes as K + K0)."""

    share: float
    k_overhead: float


@dataclass(frozen=True)
class AttentionKernel:
    """A fused attention kernel's share of the dense bf16 peak, forward and backward (backward
    FLOPs counted 2.5x the forward's, the FlashAttention benchmarks' convention), measured with
    causal masking, head dim 128 at `measured_seq`; `overlaps_softmax`: the kernel hides the
    exponentials under the matmuls (FA3's ping-pong, cuDNN on Hopper), so head dim does not
    change its share."""

    forward: float
    backward: float
    overlaps_softmax: bool = False


@dataclass(frozen=True)
class GpuConstants:
    key: str
    sms: int
    tiles: tuple[tuple[int, int, float], ...]  # (rows, cols, efficiency relative to the largest)
    split_k: tuple[int, ...]
    gemm_kernel_s: float  # fixed time of one GEMM kernel (launch, prologue, tail)
    gemm: tuple[tuple[str, GemmFit], ...]  # (dtype, its kernel model)
    attention: tuple[tuple[str, AttentionKernel], ...]  # (kernel name, its shares)
    best_attention: str
    attention_seq: int  # sequence length the attention shares were measured at
    attention_block: int  # query / key block of the flash kernels
    attention_tile_overhead: float  # fixed work per query tile, in key blocks
    exp_per_second: float  # special-function unit throughput (exp2)
    hbm_fraction: float
    nvlink_fraction: float
    network_fraction: float
    tdp_w: float = 0.0  # board power the GEMM share was measured at (0: no cap modelled)
    nccl_base_s: float = 0.0  # NCCL ring latency: base, per step inside a node, per step across nodes
    nccl_hop_nvlink_s: float = 0.0
    nccl_hop_network_s: float = 0.0
    nccl_channels: int = 0  # CUDA blocks (one SM each) a collective runs on while it overlaps compute

    def clock_fraction(self, power_limit_w: float | None) -> float:
        """Compute clock under a power cap relative to the uncapped one: (cap / tdp)^(1/3), from
        dynamic power ~ V^2 f with V ~ f (sizing/data/step_time.json, power_cap_source)."""
        if not power_limit_w or not self.tdp_w or power_limit_w >= self.tdp_w:
            return 1.0
        return (power_limit_w / self.tdp_w) ** (1 / 3)

    def gemm_fit(self, dtype: str) -> GemmFit:
        fits = dict(self.gemm)
        if dtype not in fits:
            raise SizingError(f"no GEMM kernel model for {dtype} on {self.key}; modelled: {', '.join(fits)}")
        return fits[dtype]

    def gemm_share(self, dtype: str) -> float:
        return self.gemm_fit(dtype).share

    def attention_kernel(self, name: str) -> AttentionKernel:
        kernels = dict(self.attention)
        key = self.best_attention if name == "best" else name
        if key not in kernels:
            raise SizingError(f"attention kernel ({name}) must be one of: best, {', '.join(kernels)}")
        return kernels[key]


@dataclass(frozen=True)
class Stack:
    """What a training software stack does that changes time: overlap, reduction dtype, dropout,
    which kernels it fuses, which flash kernel it calls, what selective recompute means to it."""

    key: str
    dp_overlap: bool
    grad_bytes: int
    dropout: bool
    grad_accumulation_bytes: int  # per parameter per micro-batch (0: fused into the wgrad GEMM)
    elementwise: str = "fused"  # fused (one kernel per op) or eager (ATen composite paths, counted)
    flash: str = "best"  # the attention kernel it calls (best: the GPU's fastest; fa1, fa2, fa3, cudnn)
    selective: str = "attention"  # attention (Korthikanti) or op (torchtitan: every other mm saved)
    kernel_launch_s: float = 0.0  # host cost per kernel launch (eager); 0 where launches are hidden
    tied_grad_allreduce: bool = False  # DeepSpeed's pipeline engine: tied embedding grads after the flush
    loss: str = "eager"  # cross-entropy kernel: fused (one pass over bf16 logits) or eager (fp32 upcast)
    fp8_recipe: str = "delayed"  # fp8 scaling: delayed (amax history) or current (an amax pass per cast)
    tp_overlap: bool = False  # tp collectives pipelined with the GEMMs (Transformer Engine userbuffers)
    family: str = "megatron"  # megatron or fsdp: whose fitted overhead a stack without runs takes
    ep_overlap: str = "none"  # what hides the MoE all-to-alls (sizing.parallel.moe_ops)
    fp8_dispatch: bool = False  # under fp8, the MoE dispatch sends fp8 activations (DeepSeek-V3)
    ep_kernels: str = "nccl"  # MoE dispatch/combine: nccl (all-to-all) or dedicated (DeepEP-class kernels)
    tp_sequence_parallel: bool = False  # tp always comes with sequence parallelism (torchtitan)
    data_sharding: str = "any"  # what the layout search may pick: any (ZeRO-1 or FSDP) or fsdp only
    param_gather_overlap: bool = False  # ZeRO-1 weight all-gather hidden in the next forward (Megatron-Core)


@cache
def _data() -> dict:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


def _gpu_entry(gpu_key: str) -> tuple[str, dict]:
    data = _data()
    key = data["aliases"].get(gpu_key, gpu_key)
    if key not in data["gpus"]:
        known = sorted(set(data["gpus"]) | set(data["aliases"]))
        raise SizingError(
            f"gpu ({gpu_key}) has no step-time constants; modelled: {', '.join(known)} (use --mfu for a constant "
            "efficiency on other GPUs)"
        )
    return key, data["gpus"][key]


@cache
def gpu_constants(gpu_key: str) -> GpuConstants:
    _, e = _gpu_entry(gpu_key)
    g, a = e["gemm"], e["attention"]
    kernels = tuple(
        (name, AttentionKernel(k["forward"], k["backward"], name in a["overlaps_softmax"]))
        for name, k in a["kernels"].items()
    )
    return GpuConstants(
        gpu_key,
        e["sms"],
        tuple((int(t[0]), int(t[1]), float(t[2])) for t in g["tiles"]),
        tuple(g["split_k"]),
        g["kernel_us"] * 1e-6,
        tuple((dtype, GemmFit(g["share"][dtype], g["k_overhead"][dtype])) for dtype in g["share"]),
        kernels,
        a["best"],
        a["measured_seq"],
        a["block"],
        a["tile_overhead_blocks"],
        a["exp_per_second"],
        e["hbm_fraction"],
        e["nvlink_fraction"],
        e["network_fraction"],
        e["tdp_w"],
        *(_data()["nccl_latency"][k] * 1e-6 for k in ("base_us", "hop_nvlink_us", "hop_network_us")),
        _data()["nccl_latency"]["channels"],
    )


def has_constants(gpu_key: str) -> bool:
    data = _data()
    return data["aliases"].get(gpu_key, gpu_key) in data["gpus"]


STACKS: tuple[str, ...] = (
    "megatron-2021",
    "megatron-deepspeed",
    "megatron-core",
    "fsdp",
    "llama3",
    "composer",
    "torchtitan-eager",
    "torchtitan-compile",
    "hai-llm",
)
DEFAULT_STACK = "megatron-core"


@cache
def stack(key: str) -> Stack:
    data = _data()["stacks"]
    if key not in data:
        raise SizingError(f"stack ({key!r}) must be one of: {', '.join(data)}")
    e = data[key]
    return Stack(
        key,
        e["dp_overlap"],
        e["grad_bytes"],
        e["dropout"],
        e["grad_accumulation_bytes"],
        e["elementwise"],
        e["flash"],
        e["selective"],
        e["kernel_launch_us"] * 1e-6,
        e["tied_grad_allreduce"],
        e["loss"],
        e["fp8_recipe"],
        e["tp_overlap"],
        e["family"],
        e.get("ep_overlap", "none"),
        e.get("fp8_dispatch", False),
        e.get("ep_kernels", "nccl"),
        e.get("tp_sequence_parallel", False),
        e.get("data_sharding", "any"),
        e.get("param_gather_overlap", False),
    )


def moe_load_factor() -> float:
    """Tokens of the most-loaded expert over the mean (sizing/data/step_time.json "moe")."""
    return _data()["moe"]["load_factor"]


def nccl_all_to_all_slowdown() -> float:
    """NCCL's all-to-all time over that of dedicated dispatch kernels (step_time.json "moe")."""
    return _data()["moe"]["nccl_all_to_all_slowdown"]


def moe_comm_sms() -> int:
    """SMs an all-to-all kernel overlapped with compute holds (sizing/data/step_time.json "moe")."""
    return _data()["moe"]["comm_sms"]
