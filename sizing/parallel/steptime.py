"""The per-operation step-time model: one training step on the most-loaded GPU, operation by
operation (sizing.parallel.ops), stage by stage (sizing.parallel.schedule), plus the data-parallel
gradient reduction and the optimizer step.

step = pipeline(stage times per micro-batch) + exposed dp reduction + optimizer step, where a
stage's time per micro-batch is its blocks' forward + backward (+ recompute), its share of the
embedding (first) or lm_head and loss (last), and its point-to-point sends (2 v per micro-batch,
activations forward and gradients backward, on the critical path).

MFU = model FLOPs (sizing.flops, 6N-style matmuls + causal attention, no recompute) / (step x
dense bf16 peak); HFU adds the recomputed forward. Narayanan et al. 2021's TFLOP/s formula
(96 B s l h^2 (1 + s/6h + V/16lh)) counts the recompute forward, i.e. is an HFU; Megatron-Core's
logged throughput and the Llama 3 paper count model FLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .. import params as P
from ..config import ModelConfig
from ..flops import flop_breakdown
from ..hardware import get_gpu
from ..validate import SizingError
from .layout import ParallelLayout
from .links import group_link
from .ops import ACT_BYTES, Hardware, Times, block_times, recompute_times
from .schedule import pipeline_seconds, stage_split
from .stepdata import DEFAULT_STACK, gpu_constants, stack

ADAM_BYTES_PER_PARAM = 30  # read fp32 grad, param, m, v (16), write param, m, v (12), bf16 copy (2)
LOSS_PASSES = 5  # cross-entropy over fp32 logits: max, exp-sum, write softmax; backward read, write
DEFAULT_BUCKET_PARAMS = 40_000_000  # Megatron-Core's DDP bucket (max(40M, 1M x dp) parameters)
KINDS = ("gemm", "attention", "memory", "recompute", "tp", "cp", "ep", "pp", "bubble", "dp", "optimizer")


@dataclass(frozen=True)
class StepOptions:
    stack: str = DEFAULT_STACK
    attention_kernel: str = "flash"  # flash, or unfused (batched GEMMs + softmax kernel)
    precision: str = "bf16"  # bf16 / fp16 GEMMs, or fp8 (GEMMs at the fp8 peak, bf16 elsewhere)
    capacity_factor: float = 1.0
    dp_overlap: bool | None = None  # None: the stack's
    dropout: bool | None = None  # None: the stack's
    stage_layers: tuple[int, ...] | None = None
    nvlink_gbs: float | None = None
    network_gbs: float | None = None
    bucket_params: int = DEFAULT_BUCKET_PARAMS


@dataclass(frozen=True)
class PredictedStep:
    seconds: dict  # kind -> seconds of the step (sums to step_seconds)
    step_seconds: float
    stage_seconds: tuple[float, ...]  # per micro-batch
    stage_layers: tuple[int, ...]
    model_flops_per_gpu: float
    hardware_flops_per_gpu: float
    peak_flops_per_second: float
    tokens_per_step: int
    world: int
    assumptions: tuple[str, ...] = field(default=())

    @property
    def mfu(self) -> float:
        return self.model_flops_per_gpu / (self.step_seconds * self.peak_flops_per_second)

    @property
    def hfu(self) -> float:
        return self.hardware_flops_per_gpu / (self.step_seconds * self.peak_flops_per_second)

    @property
    def tokens_per_second_per_gpu(self) -> float:
        return self.tokens_per_step / self.step_seconds / self.world

    def to_dict(self) -> dict:
        return {
            "model": "per-operation",
            "step_seconds": self.step_seconds,
            "seconds": dict(self.seconds),
            "stage_layers": list(self.stage_layers),
            "stage_seconds_per_micro_batch": list(self.stage_seconds),
            "mfu": self.mfu,
            "hfu": self.hfu,
            "mfu_convention": "model FLOPs (6N-style matmuls + causal attention) / (step x dense bf16 peak)",
            "tokens_per_second_per_gpu": self.tokens_per_second_per_gpu,
            "assumptions": list(self.assumptions),
        }


def _block_params(cfg: ModelConfig, moe: bool, layout: ParallelLayout) -> float:
    """Parameters of one block on one rank: attention and dense MLP over tp, experts over tp x ep."""
    attn = cfg.d_model * (cfg.q_width + 2 * cfg.kv_width) + cfg.q_width * cfg.d_model
    if not moe:
        return (attn + P.mlp_params(cfg, cfg.d_ff)) / layout.tp
    experts = cfg.n_experts * P.expert_params(cfg) / layout.ep + P.shared_expert_params(cfg)
    return (attn + experts) / layout.tp + P.router_params(cfg)


def _hardware(gpu_key: str, layout: ParallelLayout, opts: StepOptions) -> Hardware:
    gpu = get_gpu(gpu_key)
    consts = gpu_constants(gpu.key)
    act_dtype = "bf16" if "bf16" in gpu.peak_tflops else "fp16"
    gemm_dtype = "fp8" if opts.precision == "fp8" else act_dtype
    if gemm_dtype not in gpu.peak_tflops:
        raise SizingError(f"precision fp8 needs an fp8 peak; gpu {gpu.key} has: {', '.join(gpu.peak_tflops)}")
    node = layout.gpus_per_node

    def link(size, stride):
        return group_link(gpu, consts, size, stride, node, opts.nvlink_gbs, opts.network_gbs)

    return Hardware(
        consts,
        gpu.peak_flops_per_second(act_dtype),
        gpu.peak_flops_per_second(gemm_dtype),
        gemm_dtype,
        gpu.hbm_bytes_per_second * consts.hbm_fraction,
        link(layout.tp, 1),
        link(layout.cp, layout.tp),
        link(layout.ep, layout.tp),
    )


def _moe_layers(cfg: ModelConfig, start: int, n: int) -> int:
    return sum(1 for i in range(start, start + n) if cfg.is_moe_layer(i)) if cfg.is_moe else 0


def predict_step(
    cfg: ModelConfig, layout: ParallelLayout, seq_len: int, gpu: str, recompute: str = "none", opts=StepOptions()
) -> PredictedStep:
    return _predict(cfg, layout, seq_len, get_gpu(gpu).key, recompute, opts)


@lru_cache(maxsize=4096)
def _predict(cfg, layout, seq_len, gpu_key, recompute, opts) -> PredictedStep:
    st = stack(opts.stack)
    dropout = st.dropout if opts.dropout is None else opts.dropout
    hw = _hardware(gpu_key, layout, opts)
    kernel = opts.attention_kernel
    split = stage_split(cfg.n_layers, layout.pp, opts.stage_layers or layout.stage_layers)
    dense = block_times(cfg, layout, hw, seq_len, False, kernel, dropout, opts.capacity_factor)
    moe = block_times(cfg, layout, hw, seq_len, True, kernel, dropout, opts.capacity_factor) if cfg.is_moe else None
    t = layout.micro_batch * seq_len // layout.cp
    pp_link = group_link(
        get_gpu(gpu_key),
        hw.consts,
        2,
        layout.tp * layout.cp * layout.dp,
        layout.gpus_per_node,
        opts.nvlink_gbs,
        opts.network_gbs,
    )
    p2p_bytes = t * cfg.d_model * ACT_BYTES / (layout.tp if layout.tp > 1 else 1)  # scatter-gather over tp
    stages, kinds_slowest, params_slowest = [], None, 0.0
    start = 0
    for i, n in enumerate(split):
        n_moe = _moe_layers(cfg, start, n)
        start += n
        kinds = Times()
        for blocks, pair in ((n - n_moe, dense), (n_moe, moe)):
            if not blocks:
                continue
            f, b = pair
            for k, s in f.by_kind.items():
                kinds.add(k, blocks * s)
            for k, s in b.by_kind.items():
                kinds.add(k, blocks * s)
            kinds.add("recompute", blocks * recompute_times(f, recompute, kernel).total())
        params = (n - n_moe) * _block_params(cfg, False, layout) + n_moe * _block_params(cfg, True, layout)
        if i == 0:
            kinds.add("memory", 3 * t * cfg.d_model * ACT_BYTES / hw.hbm_bytes_per_second)  # gather + its grad
            params += cfg.padded_vocab * cfg.d_model / layout.tp
        if i == len(split) - 1:
            from .gemm import linear_train_seconds

            f, b = linear_train_seconds(
                t,
                cfg.padded_vocab // layout.tp,
                cfg.d_model,
                hw.peak,
                hw.consts,
                "bf16" if hw.gemm_dtype == "fp8" else hw.gemm_dtype,
            )
            kinds.add("gemm", f + b)
            kinds.add("memory", LOSS_PASSES * 4 * t * cfg.padded_vocab / layout.tp / hw.hbm_bytes_per_second)
            params += 0 if cfg.tied_embeddings and layout.pp == 1 else cfg.padded_vocab * cfg.d_model / layout.tp
        kinds.add("memory", params * st.grad_accumulation_bytes / hw.hbm_bytes_per_second)
        if layout.pp > 1:
            kinds.add("pp", 2 * layout.v * pp_link.seconds("send", p2p_bytes, 2))
        total = kinds.total()
        if not stages or total > max(stages):
            kinds_slowest, params_slowest = kinds, params
        stages.append(total)
    return _assemble(
        cfg, layout, seq_len, gpu_key, recompute, opts, st, hw, split, stages, kinds_slowest, params_slowest
    )


def _assemble(cfg, layout, seq_len, gpu_key, recompute, opts, st, hw, split, stages, kinds, params):
    m = layout.micro_batches
    pipe = pipeline_seconds(stages, m, layout.v) if layout.pp > 1 else m * stages[0]
    seconds = {k: 0.0 for k in KINDS}
    for k, s in kinds.by_kind.items():
        seconds["memory" if k == "softmax" else k] += m * s
    seconds["bubble"] = pipe - m * max(stages)
    dp_group = layout.dp * layout.cp
    dp_link = group_link(
        get_gpu(gpu_key), hw.consts, dp_group, layout.tp, layout.gpus_per_node, opts.nvlink_gbs, opts.network_gbs
    )
    grad_bytes = params * st.grad_bytes
    overlap = st.dp_overlap if opts.dp_overlap is None else opts.dp_overlap
    exposed_bytes = min(grad_bytes, opts.bucket_params * st.grad_bytes) if overlap else grad_bytes
    dp = dp_link.seconds("all_reduce", exposed_bytes, dp_group)
    if layout.fsdp is not None and not overlap:
        dp += dp_link.seconds("all_gather", params * ACT_BYTES, dp_group, 2)
    seconds["dp"] = dp
    shards = max(1, layout.shard_degree)
    seconds["optimizer"] = params / shards * ADAM_BYTES_PER_PARAM / hw.hbm_bytes_per_second
    step = sum(seconds.values())
    fb = flop_breakdown(cfg, seq_len, "causal", recompute)
    sequences = layout.global_batch()
    dropout = "on" if (st.dropout if opts.dropout is None else opts.dropout) else "off"
    reduction = "overlapped except one bucket" if overlap else "after the backward, exposed"
    assumptions = (
        f"stack {st.key}: dp reduction {reduction}, {st.grad_bytes}-byte gradients, dropout {dropout}",
        f"attention kernel {opts.attention_kernel}; GEMMs in {hw.gemm_dtype}",
        "tp collectives and pp sends on the critical path; cp ring hidden under attention while it lasts",
    )
    return PredictedStep(
        seconds,
        step,
        tuple(stages),
        tuple(split),
        fb.model_training * sequences / layout.world,
        fb.training * sequences / layout.world,
        get_gpu(gpu_key).peak_flops_per_second("bf16" if "bf16" in get_gpu(gpu_key).peak_tflops else "fp16"),
        sequences * seq_len,
        layout.world,
        assumptions,
    )
