"""The per-operation step-time model: one training step on the most-loaded GPU, operation by
operation (sizing.parallel.ops, blocktime), stage by stage (sizing.parallel.schedule), plus the
exposed communication (sizing.parallel.exposed), the optimizer step and the stack's overhead
(sizing.parallel.overhead).

step = pipeline(stage times per micro-batch) + exposed dp reduction + optimizer step + the
stack's overhead on its kernels, where a stage's time per micro-batch is its blocks' forward +
backward (+ recompute), its share of the embedding (first) or lm_head and loss (last), and its
point-to-point sends (2 v per micro-batch, activations forward and gradients backward, on the
critical path).

MFU = model FLOPs (sizing.formulas.flops, 6N-style matmuls + causal attention, no recompute) / (step x
dense bf16 peak); HFU adds the recomputed forward. Narayanan et al. 2021's TFLOP/s formula
(96 B s l h^2 (1 + s/6h + V/16lh)) counts the recompute forward, i.e. is an HFU; Megatron-Core's
logged throughput and the Llama 3 paper count model FLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache

from sizing.inputs import ModelConfig
from sizing.parallel import blocktime as B
from sizing.parallel.band import StepBand, step_band
from sizing.parallel.exposed import dp_exposed_seconds, sp_norm_grad_seconds, tied_grad_seconds
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.mixers import is_moe_kind
from sizing.parallel.ops import ACT_BYTES, Times
from sizing.parallel.overhead import overhead_fraction
from sizing.parallel.schedule import pipeline_seconds, stage_split
from sizing.parallel.stepoptions import DEFAULT_BUCKET_PARAMS, StepOptions
from sizing.parallel.whole_flops import training_flop_breakdown

__all__ = [
    "DEFAULT_BUCKET_PARAMS",
    "KINDS",
    "PredictedStep",
    "StepOptions",
    "dp_exposed_seconds",
    "predict_step",
    "sp_norm_grad_seconds",
    "tied_grad_seconds",
]

ADAM_BYTES_PER_PARAM = 30  # read fp32 grad, param, m, v (16), write param, m, v (12), bf16 copy (2)
KINDS = (
    "gemm",
    "attention",
    "memory",
    "recompute",
    "tp",
    "cp",
    "ep",
    "pp",
    "bubble",
    "dp",
    "optimizer",
    "overhead",
)
KERNEL_KINDS = ("gemm", "attention", "memory", "recompute")  # what runs on the SMs (the stack's overhead scales it)


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
    kernel_seconds: float = 0.0  # GPU kernel time the stack's overhead multiplies (sizing.parallel.overhead)
    band: StepBand | None = None  # how far to trust it (sizing.parallel.band)
    gpu_key: str = ""

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
            "kernel_seconds": self.kernel_seconds,
            "band": self.band.to_dict() if self.band is not None else None,
            "mfu_band": list(self.band.scaled(self.mfu, inverse=True)) if self.band is not None else None,
            "assumptions": list(self.assumptions),
        }


DEFAULT_OPTIONS = StepOptions()


def predict_step(
    cfg: ModelConfig, layout: ParallelLayout, seq_len: int, gpu: str, recompute: str = "none", opts=DEFAULT_OPTIONS
) -> PredictedStep:
    """The step with the stack's overhead (the run's own, a calibration file's, or the fitted one,
    looked up at every call so that --calibration applies) and its band."""
    key = B.gpu_of(gpu).key
    if opts.routed_groups is None and cfg.routed_groups and B.stack_of(opts).ep_kernels == "dedicated":
        # the model's group-limited routing saves bytes only where dedicated kernels send a token
        # once per node (DeepEP); NCCL's all-to-all still sends each of the k copies to its rank
        opts = replace(opts, routed_groups=cfg.routed_groups)
    return _finish(
        _predict(cfg, layout, seq_len, key, recompute, opts), overhead_fraction(opts, key), opts.stack, cfg.is_moe
    )


def _finish(base: PredictedStep, overhead: float, stack_key: str, moe: bool) -> PredictedStep:
    seconds = dict(base.seconds)
    seconds["overhead"] = overhead * base.kernel_seconds
    step = sum(seconds.values())
    band = step_band(step, stack_key, base.gpu_key, moe)
    return replace(base, seconds=seconds, step_seconds=step, band=band)


@lru_cache(maxsize=8192)
def _predict(cfg, layout, seq_len, gpu_key, recompute, opts) -> PredictedStep:
    st = B.stack_of(opts)
    mini = B.block_layout(layout)
    hw = B.hardware(gpu_key, mini, opts)
    split = stage_split(cfg.n_layers, layout.pp, opts.stage_layers or layout.stage_layers)
    kinds_of = B.stage_kind_counts(cfg, split)  # (kind, blocks) per stage: dense / MoE, or a hybrid's layers
    names = {kind for row in kinds_of for kind, _ in row}
    per = {
        k: B.per_block(cfg, mini, seq_len, gpu_key, recompute, opts, k) for k in names if k is not True or cfg.is_moe
    }
    per.setdefault(True, {})
    embedding, lm_head, loss = B.head_seconds(cfg, mini, seq_len, gpu_key, opts)
    tower, tower_params = B.tower_seconds(cfg, mini, gpu_key, recompute, opts)
    p2p = 0.0
    if layout.pp > 1 and opts.schedule != "dualpipe":  # DualPipe hides the pp sends under the paired chunk
        link = B.link_for(gpu_key, 2, layout.tp * layout.cp * layout.dp, layout.gpus_per_node, opts)
        t = layout.micro_batch * seq_len // layout.cp
        p2p = 2 * layout.v * link.seconds("send", t * cfg.d_model * ACT_BYTES / layout.tp, 2)  # scatter-gather
    weights = {kind: B.block_params(cfg, kind, layout.tp, layout.ep, layout.etp) for kind in names}
    trained = {kind: B.trainable_block_params(cfg, kind, mini) for kind in names}
    full = layout.finetune == "full"
    vocab_params = cfg.padded_vocab * cfg.d_model / layout.tp
    accumulate = st.grad_accumulation_bytes / hw.hbm_bytes_per_second
    last = len(split) - 1

    routed = B.routed_block_params(cfg, layout.ep, layout.etp) if cfg.is_moe else 0.0

    def stage(i: int) -> tuple[Times, float, float, float]:
        """(kinds per micro-batch, parameters, trained parameters, routed-expert parameters) of stage i."""
        kinds, n_moe = Times(), sum(blocks for kind, blocks in kinds_of[i] if is_moe_kind(kind))
        params = sum(blocks * weights[kind] for kind, blocks in kinds_of[i])
        grads = sum(blocks * trained[kind] for kind, blocks in kinds_of[i])
        for kind, blocks in kinds_of[i]:
            for k, sec in per[kind].items():
                kinds.add(k, blocks * sec)
        if i == 0:
            kinds.add("memory", embedding)
            params += vocab_params + tower_params
            grads += vocab_params + tower_params if full else 0
            for k, sec in tower.items():  # a vision-language model's tower, on the first stage
                kinds.add(k, sec)
        if i == last:
            kinds.add("gemm", lm_head)
            kinds.add("memory", loss)
            own = 0 if cfg.tied_embeddings and layout.pp == 1 else vocab_params
            params += own
            grads += own if full else 0
        kinds.add("memory", grads * accumulate)
        kinds.add("pp", p2p)
        return kinds, params, grads, n_moe * routed if full else 0.0

    stages = [stage(i) for i in range(len(split))]
    totals = [s[0].total() for s in stages]
    slowest = totals.index(max(totals))
    return _assemble(cfg, layout, seq_len, gpu_key, recompute, opts, st, hw, split, totals, *stages[slowest])


@lru_cache(maxsize=1024)
def _flops(cfg, seq_len, recompute):
    return training_flop_breakdown(cfg, seq_len, "causal", recompute)


def _assemble(cfg, layout, seq_len, gpu_key, recompute, opts, st, hw, split, stages, kinds, params, grads, experts):
    m = layout.micro_batches
    schedule = opts.schedule or layout.pp_schedule
    weights = kinds.by_kind.get("gemm", 0.0) / 3 / max(1e-30, max(stages))  # weight-gradient GEMMs' share
    pipe = pipeline_seconds(stages, m, layout.v, schedule, weights) if layout.pp > 1 else m * stages[0]
    seconds = {k: 0.0 for k in KINDS}
    for k, s in kinds.by_kind.items():
        seconds["memory" if k == "softmax" else k] += m * s
    seconds["bubble"] = pipe - m * max(stages)
    overlap = st.dp_overlap if opts.dp_overlap is None else opts.dp_overlap
    units = max(split) + 1  # FSDP units: one per block, plus the embedding / head
    dp = dp_exposed_seconds(layout, gpu_key, hw, opts, st, params, max(stages), overlap, units, grads, experts)
    seconds["dp"] = dp + tied_grad_seconds(cfg, layout, gpu_key, opts, st)
    seconds["tp"] += sp_norm_grad_seconds(cfg, layout, gpu_key, opts, st, max(split))
    shards, expert_shards = max(1, layout.shard_degree), max(1, layout.expert_shard_degree())
    local = (grads - experts) / shards + experts / expert_shards  # experts' states shard over edp
    seconds["optimizer"] = local * ADAM_BYTES_PER_PARAM / hw.hbm_bytes_per_second
    kernels = sum(seconds[k] for k in KERNEL_KINDS) * (1 + seconds["bubble"] / max(1e-30, m * max(stages)))
    step = sum(seconds.values())  # the stack's overhead is added by predict_step
    fb = _flops(cfg, seq_len, recompute)
    sequences = layout.global_batch()
    gpu = B.gpu_of(gpu_key)
    return PredictedStep(
        seconds,
        step,
        tuple(stages),
        tuple(split),
        fb.model_training * sequences / layout.world,
        fb.training * sequences / layout.world,
        gpu.peak_flops_per_second("bf16" if "bf16" in gpu.peak_tflops else "fp16"),
        sequences * seq_len,
        layout.world,
        _assumptions(layout, opts, st, hw, overlap),
        kernels,
        None,
        gpu_key,
    )


def _assumptions(layout, opts, st, hw, overlap) -> tuple[str, ...]:
    dropout = "on" if (st.dropout if opts.dropout is None else opts.dropout) else "off"
    reduction = "overlapped except one bucket" if overlap else "after the backward, exposed"
    kernel = hw.attention_kernel if opts.attention_kernel == "flash" else "unfused"
    kernel = hw.consts.best_attention if kernel == "best" else kernel
    out = (
        f"stack {st.key}: dp reduction {reduction}, {st.grad_bytes}-byte gradients, dropout {dropout}, "
        f"{st.loss} cross-entropy",
        f"attention kernel {kernel}; GEMMs in {hw.gemm_dtype}"
        + (f" ({st.fp8_recipe} scaling, cast and transposed per operand)" if hw.gemm_dtype == "fp8" else ""),
        ("tp collectives pipelined with the GEMMs" if st.tp_overlap else "tp collectives on the critical path")
        + "; pp sends on the critical path; cp ring hidden under attention while it lasts",
    )
    if layout.finetune != "full":
        out += (
            f"{layout.finetune}: base weights frozen (no weight gradients), rank-{layout.lora_rank} adapters train",
        )
    if layout.offload_optimizer or layout.offload_params:
        out += ("CPU offload (transfers, the CPU optimizer step) is not in the step model",)
    return out
