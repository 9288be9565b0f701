"""The per-operation step-time model: one training step on the most-loaded GPU, operation by
operation (sizing.parallel.ops), stage by stage (sizing.parallel.schedule), plus the data-parallel
gradient reduction and the optimizer step.

step = pipeline(stage times per micro-batch) + exposed dp reduction + optimizer step, where a
stage's time per micro-batch is its blocks' forward + backward (+ recompute), its share of the
embedding (first) or lm_head and loss (last), and its point-to-point sends (2 v per micro-batch,
activations forward and gradients backward, on the critical path).

MFU = model FLOPs (sizing.formulas.flops, 6N-style matmuls + causal attention, no recompute) / (step x
dense bf16 peak); HFU adds the recomputed forward. Narayanan et al. 2021's TFLOP/s formula
(96 B s l h^2 (1 + s/6h + V/16lh)) counts the recompute forward, i.e. is an HFU; Megatron-Core's
logged throughput and the Llama 3 paper count model FLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from sizing.formulas import flop_breakdown
from sizing.formulas import params as P
from sizing.inputs import ModelConfig, get_gpu
from sizing.parallel import eager
from sizing.parallel.gemm import linear_train_seconds
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.links import group_link
from sizing.parallel.ops import ACT_BYTES, Hardware, Times, block_times, recompute_times
from sizing.parallel.schedule import pipeline_seconds, stage_split
from sizing.parallel.stepdata import DEFAULT_STACK, gpu_constants, stack
from sizing.validate import SizingError

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
    hbm_tbs: float | None = None  # None: sizing/inputs/hardware.py's (a run's own HBM where its source states one)
    power_limit_w: float | None = None  # a stated power cap: compute clocks scale (stepdata.clock_fraction)
    bucket_params: int = DEFAULT_BUCKET_PARAMS
    # how the stack stores memory (sizing.parallel.memory_stack; read by the plan's Workload, not the step)
    reference_memory: bool = False  # True: the reference model's eager accounting instead of the stack's
    fp8_recipe: str = "tensorwise"  # tensorwise (delayed / current), blockwise, mxfp8 (sizing.memory.fp8)
    fp8_params: bool | None = None  # primary fp8 weights (--fp8-param-gather); None: the stack's
    grad_reduce: str | None = None  # gradient buffer "fp32" / "bf16"; None: the stack's


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


@lru_cache(maxsize=1024)
def _block_params(cfg: ModelConfig, moe: bool, tp: int, ep: int, etp: int = 1) -> float:
    """Parameters of one block on one rank: attention, dense MLP and shared experts over tp,
    routed experts over ep x etp."""
    attn = cfg.d_model * (cfg.q_width + 2 * cfg.kv_width) + cfg.q_width * cfg.d_model
    if not moe:
        return (attn + P.mlp_params(cfg, cfg.d_ff)) / tp
    routed = cfg.n_experts * P.expert_params(cfg) / (ep * etp)
    return (attn + P.shared_expert_params(cfg)) / tp + routed + P.router_params(cfg)


@lru_cache(maxsize=64)
def _gpu(gpu_key: str):
    return get_gpu(gpu_key)


@lru_cache(maxsize=4096)
def _link(gpu_key: str, size: int, stride: int, node: int, nvlink_gbs, network_gbs):
    return group_link(_gpu(gpu_key), gpu_constants(gpu_key), size, stride, node, nvlink_gbs, network_gbs)


@lru_cache(maxsize=1024)
def _moe_counts(cfg: ModelConfig, split: tuple[int, ...]) -> tuple[int, ...]:
    out, start = [], 0
    for n in split:
        out.append(_moe_layers(cfg, start, n))
        start += n
    return tuple(out)


@lru_cache(maxsize=1024)
def _hardware(gpu_key: str, layout: ParallelLayout, opts: StepOptions) -> Hardware:
    gpu = _gpu(gpu_key)
    consts = gpu_constants(gpu.key)
    act_dtype = "bf16" if "bf16" in gpu.peak_tflops else "fp16"
    gemm_dtype = "fp8" if opts.precision == "fp8" else act_dtype
    if gemm_dtype not in gpu.peak_tflops:
        raise SizingError(f"precision fp8 needs an fp8 peak; gpu {gpu.key} has: {', '.join(gpu.peak_tflops)}")
    node = layout.gpus_per_node
    st = stack(opts.stack)
    flash = (consts.flash2_forward, consts.flash2_backward) if st.flash == "flash2" else (0.0, 0.0)
    hbm = opts.hbm_tbs * 1e12 if opts.hbm_tbs else gpu.hbm_bytes_per_second

    def link(size, stride):
        return group_link(gpu, consts, size, stride, node, opts.nvlink_gbs, opts.network_gbs)

    clock = consts.clock_fraction(opts.power_limit_w)
    return Hardware(
        consts,
        gpu.peak_flops_per_second(act_dtype) * clock,
        gpu.peak_flops_per_second(gemm_dtype) * clock,
        gemm_dtype,
        hbm * consts.hbm_fraction,
        link(layout.tp, 1),
        link(layout.cp, layout.tp),
        link(layout.ep, layout.etp),  # the ep group's ranks lie etp apart (expert order tp-ep-dp)
        *flash,
        st.elementwise == "eager",
    )


def _moe_layers(cfg: ModelConfig, start: int, n: int) -> int:
    return sum(1 for i in range(start, start + n) if cfg.is_moe_layer(i)) if cfg.is_moe else 0


def predict_step(
    cfg: ModelConfig, layout: ParallelLayout, seq_len: int, gpu: str, recompute: str = "none", opts=StepOptions()
) -> PredictedStep:
    return _predict(cfg, layout, seq_len, _gpu(gpu).key, recompute, opts)


def _block_layout(layout: ParallelLayout) -> ParallelLayout:
    """The fields one block's time depends on (tp, cp, ep, SP, micro-batch, node size), so that
    layouts differing only in dp, pp, v or sharding share the cached block times."""
    lay = layout
    return _mini(lay.tp, lay.cp, lay.ep, lay.sequence_parallel, lay.micro_batch, lay.gpus_per_node, lay.etp)


@lru_cache(maxsize=1024)
def _mini(tp: int, cp: int, ep: int, sp: bool, b: int, node: int, etp: int = 1) -> ParallelLayout:
    dp = ep * etp  # enough ranks for the expert grid: ep x etp divides tp x cp x dp
    return ParallelLayout(dp=dp, tp=tp, cp=cp, ep=ep, etp=etp, sequence_parallel=sp, micro_batch=b, gpus_per_node=node)


@lru_cache(maxsize=4096)
def _per_block(cfg, mini: ParallelLayout, seq_len, gpu_key, recompute, opts, moe: bool) -> dict:
    """{kind: seconds} of one block for one micro-batch: forward + backward + recompute."""
    st = stack(opts.stack)
    dropout = st.dropout if opts.dropout is None else opts.dropout
    hw = _hardware(gpu_key, mini, opts)
    f, b = block_times(cfg, mini, hw, seq_len, moe, opts.attention_kernel, dropout, opts.capacity_factor)
    out = Times()
    for part in (f, b):
        for k, sec in part.by_kind.items():
            out.add(k, sec)
    out.add("recompute", recompute_times(f, recompute, opts.attention_kernel, st.selective).total())
    # eager launches run ahead of the GPU asynchronously; they cost time only where the block's
    # kernels (forward, and about twice as many backward) take less than their launches
    launches = 3 * eager.kernels_per_block(cfg) * st.kernel_launch_s
    out.add("memory", max(0.0, launches - out.total()))
    return out.by_kind


@lru_cache(maxsize=1024)
def _head_seconds(cfg, mini: ParallelLayout, seq_len, gpu_key, opts) -> tuple[float, float, float]:
    """(embedding memory, lm_head GEMMs, loss memory) seconds per micro-batch; the lm_head stays in
    bf16 under fp8 training (Transformer Engine keeps it out of fp8)."""
    hw = _hardware(gpu_key, mini, opts)
    t, vocab = mini.micro_batch * seq_len // mini.cp, cfg.padded_vocab // mini.tp
    dtype = "bf16" if hw.gemm_dtype == "fp8" else hw.gemm_dtype
    f, b = linear_train_seconds(t, vocab, cfg.d_model, hw.peak, hw.consts, dtype)
    embedding = 3 * t * cfg.d_model * ACT_BYTES / hw.hbm_bytes_per_second  # gather, its gradient scatter-add
    loss = LOSS_PASSES * 4 * t * vocab / hw.hbm_bytes_per_second
    return embedding, f + b, loss


@lru_cache(maxsize=8192)
def _predict(cfg, layout, seq_len, gpu_key, recompute, opts) -> PredictedStep:
    st = stack(opts.stack)
    mini = _block_layout(layout)
    hw = _hardware(gpu_key, mini, opts)
    split = stage_split(cfg.n_layers, layout.pp, opts.stage_layers or layout.stage_layers)
    dense = _per_block(cfg, mini, seq_len, gpu_key, recompute, opts, False)
    moe = _per_block(cfg, mini, seq_len, gpu_key, recompute, opts, True) if cfg.is_moe else {}
    embedding, lm_head, loss = _head_seconds(cfg, mini, seq_len, gpu_key, opts)
    p2p = 0.0
    if layout.pp > 1:
        stride = layout.tp * layout.cp * layout.dp
        link = _link(gpu_key, 2, stride, layout.gpus_per_node, opts.nvlink_gbs, opts.network_gbs)
        t = layout.micro_batch * seq_len // layout.cp
        p2p = 2 * layout.v * link.seconds("send", t * cfg.d_model * ACT_BYTES / layout.tp, 2)  # scatter-gather
    dense_params, moe_params = (
        _block_params(cfg, False, layout.tp, layout.ep, layout.etp),
        _block_params(cfg, True, layout.tp, layout.ep, layout.etp),
    )
    vocab_params = cfg.padded_vocab * cfg.d_model / layout.tp
    accumulate = st.grad_accumulation_bytes / hw.hbm_bytes_per_second

    def stage(i: int, n: int, n_moe: int) -> tuple[Times, float]:  # i: 0 first, len - 1 last, -1 a middle one
        kinds = Times()
        for blocks, per in ((n - n_moe, dense), (n_moe, moe)):
            for k, sec in per.items():
                kinds.add(k, blocks * sec)
        params = (n - n_moe) * dense_params + n_moe * moe_params
        if i == 0:
            kinds.add("memory", embedding)
            params += vocab_params
        if i == len(split) - 1:
            kinds.add("gemm", lm_head)
            kinds.add("memory", loss)
            params += 0 if cfg.tied_embeddings and layout.pp == 1 else vocab_params
        kinds.add("memory", params * accumulate)
        kinds.add("pp", p2p)
        return kinds, params

    last = len(split) - 1
    counts = _moe_counts(cfg, split)
    per_dense, per_moe = sum(dense.values()), sum(moe.values())
    first_extra = embedding + vocab_params * accumulate
    last_extra = lm_head + loss + (0 if cfg.tied_embeddings and layout.pp == 1 else vocab_params * accumulate)
    stages = []
    for i, n in enumerate(split):  # totals first (floats); the kinds only for the slowest stage
        k = counts[i]
        total = (n - k) * (per_dense + dense_params * accumulate) + k * (per_moe + moe_params * accumulate) + p2p
        stages.append(total + (first_extra if i == 0 else 0.0) + (last_extra if i == last else 0.0))
    i = stages.index(max(stages))
    slowest = stage(i if i in (0, last) else -1, split[i], counts[i])
    return _assemble(cfg, layout, seq_len, gpu_key, recompute, opts, st, hw, split, stages, *slowest)


def sp_norm_grad_seconds(cfg, layout, gpu_key, opts, st, layers: int) -> float:
    """Under sequence parallelism each tp rank sees a slice of the sequence, so the norm weights'
    gradients are partial sums: Megatron all-reduces them over tp once per step, before the
    optimizer (allreduce_layernorm_grads), on the critical path. Bytes: layers x norms x (d, and d
    of bias for LayerNorm) x gradient bytes."""
    if not layout.sequence_parallel:
        return 0.0
    per_norm = cfg.d_model * (2 if cfg.has_norm_bias else 1)
    n_bytes = layers * cfg.norms_per_block * per_norm * st.grad_bytes
    link = _link(gpu_key, layout.tp, 1, layout.gpus_per_node, opts.nvlink_gbs, opts.network_gbs)
    return link.seconds("all_reduce", n_bytes, layout.tp)


def tied_grad_seconds(cfg, layout, gpu_key, opts, st) -> float:
    """DeepSpeed's pipeline engine all-reduces the tied embedding / lm_head gradient (vocab x d / tp
    per rank) between the first and the last stage after the flush, before the dp reduction
    (deepspeed/runtime/pipe/engine.py, _exec_reduce_tied_grads): exposed."""
    if not (st.tied_grad_allreduce and cfg.tied_embeddings and layout.pp > 1):
        return 0.0
    n_bytes = cfg.padded_vocab * cfg.d_model / layout.tp * st.grad_bytes
    stride = layout.tp * layout.cp * layout.dp * (layout.pp - 1)
    link = _link(gpu_key, 2, stride, layout.gpus_per_node, opts.nvlink_gbs, opts.network_gbs)
    return link.seconds("all_reduce", n_bytes, 2)


def dp_exposed_seconds(layout, gpu_key, hw, opts, st, params, stage_seconds, overlap) -> float:
    """The data-parallel traffic left on the critical path.

    * ZeRO 0-2 (and FSDP run as ZeRO-2, one gather per step): one gradient reduction per step
      (all-reduce; ZeRO >= 1 a reduce-scatter and a parameter all-gather, the same bytes).
      Overlapped, it runs under the last micro-batch's backward (2/3 of a stage's micro-batch
      time) in buckets: exposed = max(one bucket, traffic - that backward). Not overlapped
      (Megatron-LM 2021): all of it.
    * FSDP (ZeRO-3, resharded after forward): every micro-batch gathers the stage's parameters
      twice (forward, backward) and reduce-scatters its gradients, prefetched under that
      micro-batch's compute: exposed = m x max(0, traffic - compute) + one unit's gather.
    """
    group = layout.dp * layout.cp
    if group == 1:
        return 0.0
    link = _link(gpu_key, group, layout.tp, layout.gpus_per_node, opts.nvlink_gbs, opts.network_gbs)
    grads, weights = params * st.grad_bytes, params * ACT_BYTES
    bucket = min(grads, opts.bucket_params * st.grad_bytes)
    if layout.fsdp is not None:
        per = link.seconds("all_gather", weights, group, 2) + link.seconds("reduce_scatter", grads, group)
        return layout.micro_batches * max(0.0, per - stage_seconds) + link.seconds("all_gather", bucket, group)
    if layout.zero_stage == 0:
        total = link.seconds("all_reduce", grads, group)
    else:
        total = link.seconds("reduce_scatter", grads, group) + link.seconds("all_gather", weights, group)
    if not overlap:
        return total
    return max(link.seconds("all_reduce", bucket, group), total - 2 / 3 * stage_seconds)


@lru_cache(maxsize=1024)
def _flops(cfg, seq_len, recompute):
    return flop_breakdown(cfg, seq_len, "causal", recompute)


def _assemble(cfg, layout, seq_len, gpu_key, recompute, opts, st, hw, split, stages, kinds, params):
    m = layout.micro_batches
    pipe = pipeline_seconds(stages, m, layout.v) if layout.pp > 1 else m * stages[0]
    seconds = {k: 0.0 for k in KINDS}
    for k, s in kinds.by_kind.items():
        seconds["memory" if k == "softmax" else k] += m * s
    seconds["bubble"] = pipe - m * max(stages)
    overlap = st.dp_overlap if opts.dp_overlap is None else opts.dp_overlap
    dp = dp_exposed_seconds(layout, gpu_key, hw, opts, st, params, max(stages), overlap)
    seconds["dp"] = dp + tied_grad_seconds(cfg, layout, gpu_key, opts, st)
    seconds["tp"] += sp_norm_grad_seconds(cfg, layout, gpu_key, opts, st, max(split))
    shards = max(1, layout.shard_degree)
    seconds["optimizer"] = params / shards * ADAM_BYTES_PER_PARAM / hw.hbm_bytes_per_second
    step = sum(seconds.values())
    fb = _flops(cfg, seq_len, recompute)
    sequences = layout.global_batch()
    dropout = "on" if (st.dropout if opts.dropout is None else opts.dropout) else "off"
    reduction = "overlapped except one bucket" if overlap else "after the backward, exposed"
    assumptions = (
        f"stack {st.key}: dp reduction {reduction}, {st.grad_bytes}-byte gradients, dropout {dropout}",
        f"attention kernel {opts.attention_kernel}; GEMMs in {hw.gemm_dtype}",
        "tp collectives and pp sends on the critical path; cp ring hidden under attention while it lasts",
    )
    if layout.finetune != "full" or layout.offload_optimizer or layout.offload_params:
        assumptions += (
            "timed as full training on the GPU: LoRA/QLoRA's skipped weight gradients, NF4 dequantisation and "
            "CPU offload (transfers, the CPU optimizer step) are not in the step model",
        )
    return PredictedStep(
        seconds,
        step,
        tuple(stages),
        tuple(split),
        fb.model_training * sequences / layout.world,
        fb.training * sequences / layout.world,
        _gpu(gpu_key).peak_flops_per_second("bf16" if "bf16" in _gpu(gpu_key).peak_tflops else "fp16"),
        sequences * seq_len,
        layout.world,
        assumptions,
    )
