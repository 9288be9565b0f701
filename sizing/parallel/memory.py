"""Per-GPU training memory under a parallel layout, term by term, for every pipeline stage; the
most-loaded rank is the stage with the largest total (rank 0 of its tp / dp groups, which
torch.chunk gives the largest piece of an uneven split).

Every byte count reuses sizing.memory: model states through states.model_states_per_gpu
(ZeRO flat shards: DeepSpeed, Megatron's distributed optimizer) or weights/gradients/
optimizer_bytes of the FSDP2 per-parameter shards; Transformer Engine's fp8 weight copies
through sizing.memory.fp8; activations and the working set in stage_activations.py. A
Workload's `stack` settles the conventions (sizing.parallel.memory_stack): the gradient buffer
(Megatron's fp32 main grads), the fp8 copies, primary fp8 weights. Routed experts are split over
ep x etp and their states sharded over the expert-data-parallel group (ParallelLayout). Nothing
here re-derives a per-parameter or per-token size.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig, Workload
from sizing.memory import (
    FP32_BYTES,
    fp8_weight_copies_bytes,
    get_precision,
    gradients_bytes,
    model_states_per_gpu,
    optimizer_bytes,
    weights_bytes,
)
from sizing.parallel.dualpipe import check_dualpipe, dualpipe_in_flight, dualpipe_ranks, dualpipe_stages
from sizing.parallel.finetune import (
    adapted,
    int8_bytes,
    lora_adapter_params,
    nf4_bytes,
    quantized_by_qlora,
    trained_in_full,
)
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory_stack import work_conventions
from sizing.parallel.shapes import Tensor, first_stage_tensors, last_stage_tensors
from sizing.parallel.stage_activations import activation_parts, activation_terms_on_stage, transient_terms
from sizing.parallel.stages import (
    block_tensors_per_ep_rank,
    candidate_stages,
    chunk_layers,
    in_flight,
    stage_kinds,
    stage_layers,
    stage_tensors,
)
from sizing.vocabulary import ceil_div

__all__ = [  # stages.py and stage_activations.py names kept importable from here, where they were
    "CPU_TERMS",
    "GPU_TERMS",
    "Workload",
    "activation_parts",
    "block_tensors_per_ep_rank",
    "candidate_stages",
    "chunk_layers",
    "fsdp2_local_numel",
    "in_flight",
    "most_loaded",
    "stage_kinds",
    "stage_layers",
    "stage_memory",
    "stage_tensors",
    "tp_local_numel",
    "unit_gather_bytes",
]


def tp_local_numel(tensor: Tensor, layout: ParallelLayout) -> int:
    """Rank 0's elements of every copy of `tensor` after tensor parallelism."""
    n = tensor.copies
    for size in tensor.tp_local_shape(layout.split_of(tensor.expert), layout.vocab_parallel):
        n *= size
    return n


def fsdp2_local_numel(tensor: Tensor, layout: ParallelLayout, ranks: int) -> int:
    """Rank 0's FSDP2 shard of a (tp-local) tensor: dim 0 chunked over the shard ranks
    (torch.chunk; FSDP2 pads the others to this size for its all-gather buffer)."""
    shape = tensor.tp_local_shape(layout.split_of(tensor.expert), layout.vocab_parallel)
    rest = 1
    for size in shape[1:]:
        rest *= size
    return ceil_div(shape[0], ranks) * rest * tensor.copies


# ---------------------------------------------------------------- model states
def _shards(layout: ParallelLayout, tensor: Tensor) -> int:
    return layout.expert_shard_degree() if tensor.expert else layout.shard_degree


def trained_states_bytes(tensors: list[tuple[Tensor, int]], layout: ParallelLayout, work: Workload) -> dict[str, int]:
    """Weights, gradients and optimizer states of the trained parameters on one rank (full
    fine-tuning): FSDP2 per-parameter shards, or ZeRO's flat shards of the dense and the
    expert parameters (each over its own data-parallel group). The stack's gradient buffer
    (Megatron's fp32 main grads) applies under ZeRO 0-2; sharded states (ZeRO-3, FSDP) are
    counted 2 + 2 + 12 over d, which is FSDP2's 4 (fp32 sharded parameters, the master) + 4
    (fp32 gradients) + 8 (moments) over d too."""
    p, o = work.precision, work.optimizer
    conv = work_conventions(work)
    if layout.fsdp is not None:  # FSDP2 keeps its sharded parameters in fp32 as the master: 16/d either way
        n = sum(c * fsdp2_local_numel(t, layout, _shards(layout, t)) for t, c in tensors)
        gemm = sum(c * fsdp2_local_numel(t, layout, _shards(layout, t)) for t, c in tensors if fp8_gemm_weight(t))
        out = model_states_per_gpu(n, p, o, 0, 1)
        out["weights_bytes"] -= weights_bytes(gemm, p) if conv.fp8_params else 0
        return out
    out = dict.fromkeys(("weights_bytes", "gradients_bytes", "optimizer_bytes"), 0)
    for expert, shards in ((False, layout.shard_degree), (True, layout.expert_shard_degree())):
        group = [(t, c) for t, c in tensors if t.expert == expert]
        n = sum(c * tp_local_numel(t, layout) for t, c in group)
        grad = conv.grad_bytes if layout.zero < 3 else None  # ZeRO-3: 16/d, as FSDP2's fp32 shards
        part = model_states_per_gpu(n, p, o, layout.zero, shards, grad, conv.moment_bytes)
        if conv.fp8_params:  # primary fp8 weights: the GEMM weights keep only their fp8 copies
            gemm = sum(c * tp_local_numel(t, layout) for t, c in group if fp8_gemm_weight(t))
            part["weights_bytes"] -= model_states_per_gpu(gemm, p, o, layout.zero, shards)["weights_bytes"]
        for key in out:
            out[key] += part[key]
    return out


def ema_bytes(tensors: list[tuple[Tensor, int]], layout: ParallelLayout) -> int:
    """An EMA of the trained parameters in fp32, sharded as the master weights (DeepSeek-V3,
    arXiv:2412.19437 sec. 3.2.3: "the EMA parameters are stored in CPU memory"; the dtype and the
    sharding are not stated: the master weights' assumed)."""
    total = 0
    for expert, shards in ((False, layout.shard_degree), (True, layout.expert_shard_degree())):
        group = [(t, c) for t, c in tensors if t.expert == expert]
        if layout.fsdp is not None:
            n = sum(c * fsdp2_local_numel(t, layout, shards) for t, c in group)
            total += FP32_BYTES * n
        else:
            n = sum(c * tp_local_numel(t, layout) for t, c in group)
            total += ceil_div(FP32_BYTES * n, shards if layout.zero >= 1 else 1)
    return total


def frozen_base_bytes(tensors: list[tuple[Tensor, int]], layout: ParallelLayout, work: Workload) -> int:
    """LoRA / QLoRA: the frozen base weights on one rank, in the weight dtype (NF4 for the
    blocks' linears under QLoRA), sharded like weights under ZeRO-3 / FSDP."""
    total = 0
    for t, copies in tensors:
        n = tp_local_numel(t, layout)
        total += copies * stored_weight_bytes(t, n, layout, work.precision)
    return ceil_div(total, layout.shard_degree) if layout.zero_stage == 3 else total


def adapter_params(tensors: list[tuple[Tensor, int]], layout: ParallelLayout) -> int:
    return sum(
        c * lora_adapter_params(t, layout.lora_rank, layout.split_of(t.expert))
        for t, c in tensors
        if adapted(t, layout.lora_targets)
    )


def fp8_gemm_weight(tensor: Tensor) -> bool:
    """A weight Transformer Engine runs in fp8: a 2-D linear weight of a block (attention, dense
    MLP, routed and shared experts). The embedding, the lm_head (Megatron's output layer is not a
    TE module), the router and norms stay bf16."""
    return quantized_by_qlora(tensor) and tensor.name.endswith(".weight")


def fp8_copies_bytes(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> int:
    """Transformer Engine's fp8 copies of the stage's GEMM weights (sizing.memory.fp8: data +
    transpose, or rowwise + columnwise with scales), cached across micro-batches. Under ZeRO-3 /
    FSDP TE caches none (linear.py: no workspace cache with FSDP2): one unit's copies, made as
    it runs, are counted."""
    if not work_conventions(work).fp8_copies:
        return 0
    recipe = work.fp8_recipe

    def copies(tensors) -> int:
        return sum(
            c * fp8_weight_copies_bytes(tp_local_numel(t, layout), recipe) for t, c in tensors if fp8_gemm_weight(t)
        )

    if layout.zero_stage == 3 and layout.shard_degree > 1:
        return max(
            copies([(t, 1) for t in block_tensors_per_ep_rank(cfg, layout, moe)])
            for moe, _ in stage_kinds(cfg, layout, stage)
        )
    return copies(stage_tensors(cfg, layout, stage))


def stored_weight_bytes(tensor: Tensor, n: int, layout: ParallelLayout, precision: str) -> int:
    """Bytes of n elements of `tensor` as stored: NF4 for QLoRA's quantised linears, 16-bit for
    a frozen LoRA base, the precision's weight dtype when trained."""
    if layout.finetune == "qlora" and quantized_by_qlora(tensor):
        return tensor.copies * nf4_bytes(n // tensor.copies)  # each copy quantised in its own blocks
    if layout.lora_base == "int8" and quantized_by_qlora(tensor):  # one fp32 absmax per local output row
        return int8_bytes(n, n // tensor.tp_local_shape(layout.split_of(tensor.expert), layout.vocab_parallel)[-1])
    return weights_bytes(n, "bf16" if layout.finetune != "full" else precision)


def unit_gather_bytes(tensors: list[Tensor], layout: ParallelLayout, precision: str, ranks: int) -> int:
    """The all-gather buffer of one ZeRO-3 / FSDP unit: ranks x rank 0's shard (FSDP2: every
    tensor's dim 0 chunked; ZeRO-3: the flat buffer split evenly, padded)."""
    if layout.fsdp is not None:
        return ranks * sum(
            stored_weight_bytes(t, fsdp2_local_numel(t, layout, ranks), layout, precision) for t in tensors
        )
    whole = sum(stored_weight_bytes(t, tp_local_numel(t, layout), layout, precision) for t in tensors)
    return ranks * ceil_div(whole, ranks)


def gathered_unit_bytes(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int = 0) -> int:
    """ZeRO-3 / FSDP working set: the largest unit (one block of the stage with its local
    experts, the embedding, the lm_head) gathered whole as stored, and its gradient before the
    reduce-scatter (sizing.memory.zero3_gathered_bytes, per tp rank; no gradient for a frozen base)."""
    if layout.zero_stage != 3 or layout.shard_degree == 1:
        return 0
    units = [block_tensors_per_ep_rank(cfg, layout, moe) for moe, _ in stage_kinds(cfg, layout, stage)]
    units += [first_stage_tensors(cfg), last_stage_tensors(cfg, layout.pp)]
    grad = get_precision(work.precision).grad_bytes if layout.finetune == "full" else 0
    return max(
        sum(
            stored_weight_bytes(t, tp_local_numel(t, layout), layout, work.precision) + grad * tp_local_numel(t, layout)
            for t in unit
        )
        for unit in units
    )


def model_state_terms(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> dict[str, int]:
    """Model-state bytes on the GPU and in CPU memory (offload) for one pipeline rank."""
    tensors = stage_tensors(cfg, layout, stage)
    if layout.finetune == "full":
        states = trained_states_bytes(tensors, layout, work)
        base = 0
    else:  # adapters (and modules_to_save, trained in full) over a frozen base
        full = [(t, c) for t, c in tensors if trained_in_full(t, layout.lora_trained)]
        n = adapter_params(tensors, layout)
        grad = work_conventions(work).grad_bytes if layout.zero_stage < 3 else None
        states = model_states_per_gpu(n, work.precision, work.optimizer, layout.zero_stage, layout.shard_degree, grad)
        if full:
            trained = trained_states_bytes(full, layout, work)
            states = {k: states[k] + trained[k] for k in states}
        base = frozen_base_bytes([tc for tc in tensors if tc not in full], layout, work)
    gpu = {
        "base_weights_bytes": base,
        "weights_bytes": states["weights_bytes"],
        "fp8_weight_copies_bytes": fp8_copies_bytes(cfg, layout, work, stage),
        "gradients_bytes": states["gradients_bytes"],
        "optimizer_bytes": states["optimizer_bytes"],
        "gathered_unit_bytes": gathered_unit_bytes(cfg, layout, work, stage),
    }
    cpu = {"optimizer_bytes": 0, "weights_bytes": 0, "gradients_bytes": 0, "ema_bytes": 0}
    if work_conventions(work).ema == "cpu" and layout.finetune == "full":
        cpu["ema_bytes"] = ema_bytes(tensors, layout)
    if layout.offload_optimizer:
        cpu["optimizer_bytes"], gpu["optimizer_bytes"] = gpu["optimizer_bytes"], 0
    if layout.offload_params:  # FSDP CPUOffload(offload_params=True): a frozen base moves too (FSDP-QLoRA)
        cpu["weights_bytes"], gpu["base_weights_bytes"] = gpu["base_weights_bytes"], 0
        for key in ("weights_bytes", "gradients_bytes"):
            cpu[key], gpu[key] = cpu[key] + gpu[key], 0
    return {**gpu, **{f"cpu_{k}": v for k, v in cpu.items()}}


# ---------------------------------------------------------------- totals
GPU_TERMS = (
    "base_weights_bytes",
    "weights_bytes",
    "fp8_weight_copies_bytes",
    "gradients_bytes",
    "optimizer_bytes",
    "gathered_unit_bytes",
    "activations_blocks_bytes",
    "activations_embedding_bytes",
    "activations_head_loss_bytes",
    "activations_shared_bytes",
    "logits_bytes",
    "recompute_block_bytes",
    "dualpipe_mirror_states_bytes",
    "dualpipe_mirror_activations_bytes",
)
CPU_TERMS = ("cpu_optimizer_bytes", "cpu_weights_bytes", "cpu_gradients_bytes", "cpu_ema_bytes")
_STATES = ("base_weights_bytes", "weights_bytes", "fp8_weight_copies_bytes", "gradients_bytes", "optimizer_bytes")
_ACTIVATIONS = ("activations_blocks_bytes", "activations_embedding_bytes", "activations_head_loss_bytes")
_WORKING = ("gathered_unit_bytes", "logits_bytes", "recompute_block_bytes")  # one at a time


def _stage_terms(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int, flights: int | None = None):
    out = model_state_terms(cfg, layout, work, stage)
    out.update(activation_terms_on_stage(cfg, layout, work, stage, flights))
    out.update(transient_terms(cfg, layout, work, stage))
    out["dualpipe_mirror_states_bytes"] = out["dualpipe_mirror_activations_bytes"] = 0
    return out


def _with_totals(out: dict[str, int]) -> dict[str, int]:
    out["total_bytes"] = sum(out[k] for k in GPU_TERMS)
    out["cpu_total_bytes"] = sum(out[k] for k in CPU_TERMS)
    return out


def stage_memory(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> dict[str, int]:
    """Every term on pipeline rank `stage`, the GPU total and the CPU (offloaded, EMA) total;
    under DualPipe the rank's two stages (dualpipe_rank_memory)."""
    if work.schedule == "dualpipe":
        return dualpipe_rank_memory(cfg, layout, work, stage)
    return _with_totals(_stage_terms(cfg, layout, work, stage))


def dualpipe_rank_memory(cfg: ModelConfig, layout: ParallelLayout, work: Workload, rank: int) -> dict[str, int]:
    """A DualPipe rank (sizing.parallel.dualpipe): its first-half stage h term by term, and the
    mirror stage p - 1 - h it also holds as two named terms, its model states (the second copy
    of the parameters) and its saved activations; the working sets (logits, a recomputed block)
    one at a time. The larger of the schedule's two peaks."""
    check_dualpipe(layout)
    own, mirror = dualpipe_stages(layout, rank)
    best: dict[str, int] | None = None
    for n_own, n_mirror in dualpipe_in_flight(layout, rank):
        out = _stage_terms(cfg, layout, work, own, n_own)
        other = _stage_terms(cfg, layout, work, mirror, n_mirror)
        out["dualpipe_mirror_states_bytes"] = sum(other[k] for k in _STATES)
        out["dualpipe_mirror_activations_bytes"] = sum(other[k] for k in _ACTIVATIONS)
        for key in _WORKING:
            out[key] = max(out[key], other[key])
        for key in CPU_TERMS:
            out[key] += other[key]
        out = _with_totals(out)
        if best is None or out["total_bytes"] > best["total_bytes"]:
            best = out
    return best


def most_loaded(cfg: ModelConfig, layout: ParallelLayout, work: Workload) -> tuple[int, dict[str, int]]:
    """(stage, terms) of the rank with the largest GPU total (under DualPipe, each pair of ranks once)."""
    stages = dualpipe_ranks(layout) if work.schedule == "dualpipe" else candidate_stages(layout, cfg)
    best = None
    for stage in stages:
        terms = stage_memory(cfg, layout, work, stage)
        if best is None or terms["total_bytes"] > best[1]["total_bytes"]:
            best = (stage, terms)
    return best


def unsharded_states_bytes(cfg: ModelConfig, n_params: int, work: Workload) -> int:
    """The whole model's weights + gradients + optimizer states (for the "x smaller" line)."""
    p, o, grad = work.precision, work.optimizer, work_conventions(work).grad_bytes
    return weights_bytes(n_params, p) + gradients_bytes(n_params, p, grad) + optimizer_bytes(n_params, p, o)
