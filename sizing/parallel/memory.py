"""Per-GPU training memory under a parallel layout, term by term, for every pipeline stage; the
most-loaded rank is the stage with the largest total (rank 0 of its tp / dp groups, which
torch.chunk gives the largest piece of an uneven split).

Every byte count reuses sizing.memory: model states through states.model_states_per_gpu
(ZeRO flat shards) or weights/gradients/optimizer_bytes of the FSDP2 per-parameter shards,
activations through activations.activation_terms at the rank's sequence share, scaled term
by term by the tensor/sequence-parallel split, and the logits' working set through
activations.transient_bytes. Nothing here re-derives a per-parameter or per-token size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from sizing.inputs import ModelConfig
from sizing.memory import (
    activation_terms,
    get_precision,
    gradients_bytes,
    model_states_per_gpu,
    optimizer_bytes,
    transient_bytes,
    weights_bytes,
)
from sizing.parallel.finetune import adapted, lora_adapter_params, nf4_bytes, quantized_by_qlora
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.schedule import chunk_sizes, chunk_starts, stage_split
from sizing.parallel.shapes import (
    Tensor,
    block_kinds,
    block_tensors,
    count_moe_layers,
    first_stage_tensors,
    last_stage_tensors,
)
from sizing.vocabulary import ceil_div

# Activation terms split over tp with the heads or the MLP width (Megatron's column-parallel outputs).
_TP_SPLIT = ("attn.q", "attn.k", "attn.v", "attn.out", "attn.o.input", "attn.logsumexp", "attn.probs")
_TP_SPLIT += ("attn.probs_fp32", "mlp.hidden", "moe.experts.hidden")
# Terms that do not scale with the tokens of a rank (per-layer constants).
_CONSTANT = ("attn.mask", "loss.total_weight", "attn_norm.gain_fp32", "mlp_norm.gain_fp32")
_CONSTANT += ("norm_f.gain_fp32", "emb_norm.gain_fp32")
_FIRST_STAGE = ("tok_emb.", "pos_emb.", "emb_norm.")
_LAST_STAGE = ("norm_f.", "lm_head.", "loss.")


@dataclass(frozen=True)
class Workload:
    seq_len: int
    precision: str = "bf16-mixed"
    optimizer: str = "adamw"
    recompute: str = "none"
    attention_impl: str = "flash"


# ---------------------------------------------------------------- which tensors a stage holds
def stage_layers(cfg: ModelConfig, layout: ParallelLayout) -> int:
    """Layers on the fullest pipeline rank: L / pp, or the largest stage of an uneven split
    (sizing.parallel.schedule.stage_split: Llama 3's 126 layers on 16 stages hold 7, 8 x 14, 7)."""
    return max(stage_split(cfg.n_layers, layout.pp, layout.stage_layers))


def chunk_layers(cfg: ModelConfig, layout: ParallelLayout, stage: int, chunk: int) -> range:
    """The layers of model chunk `chunk` on pipeline rank `stage`, in model order chunk 0 of every
    rank, then chunk 1, ... (Megatron-LM's interleaved assignment; v = 1: rank s holds layers
    s L/p .. (s + 1) L/p - 1 when pp divides L)."""
    sizes = chunk_sizes(cfg.n_layers, layout.pp, layout.v, layout.stage_layers)
    start = chunk_starts(cfg.n_layers, layout.pp, layout.v, layout.stage_layers)[stage][chunk]
    return range(start, start + sizes[stage][chunk])


def stage_kinds(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> list[tuple[bool, int]]:
    """(is MoE, blocks) on pipeline rank `stage`, over all its chunks: one entry for a model whose
    blocks are all alike, two where dense and MoE layers mix (DeepSeek's first dense layers)."""
    counts: dict[bool, int] = {}
    for chunk in range(layout.v):
        for moe, n in block_kinds(cfg, chunk_layers(cfg, layout, stage, chunk)):
            counts[moe] = counts.get(moe, 0) + n
    return sorted(counts.items())


def stage_signature(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> tuple:
    """What tells two stages' blocks apart: the MoE layers of each chunk (stages alike in it
    hold the same tensors and activations per micro-batch)."""
    chunks = [chunk_layers(cfg, layout, stage, c) for c in range(layout.v)]
    return tuple((len(r), count_moe_layers(cfg, r)) for r in chunks)


def block_tensors_per_ep_rank(cfg: ModelConfig, layout: ParallelLayout, moe: bool | None = None) -> list[Tensor]:
    """One block's tensors on EP rank 0 (an MoE block, a dense one, or the config's kind when
    `moe` is None): the dense part and E / ep experts."""
    keep = cfg.n_experts // layout.ep if cfg.is_moe else 0
    return [replace(t, copies=keep) if t.expert else t for t in block_tensors(cfg, moe)]


def stage_tensors(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> list[tuple[Tensor, int]]:
    """(tensor, copies) on pipeline rank `stage`: its blocks, plus the first/last stage's extras."""
    out = [(t, n) for moe, n in stage_kinds(cfg, layout, stage) for t in block_tensors_per_ep_rank(cfg, layout, moe)]
    if stage == 0:
        out += [(t, 1) for t in first_stage_tensors(cfg)]
    if stage == layout.pp - 1:
        out += [(t, 1) for t in last_stage_tensors(cfg, layout.pp)]
    return out


def tp_local_numel(tensor: Tensor, layout: ParallelLayout) -> int:
    """Rank 0's elements of every copy of `tensor` after tensor parallelism."""
    n = tensor.copies
    for size in tensor.tp_local_shape(layout.tp, layout.vocab_parallel):
        n *= size
    return n


def fsdp2_local_numel(tensor: Tensor, layout: ParallelLayout, ranks: int) -> int:
    """Rank 0's FSDP2 shard of a (tp-local) tensor: dim 0 chunked over the shard ranks
    (torch.chunk; FSDP2 pads the others to this size for its all-gather buffer)."""
    shape = tensor.tp_local_shape(layout.tp, layout.vocab_parallel)
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
    expert parameters (each over its own data-parallel group)."""
    p, o = work.precision, work.optimizer
    if layout.fsdp is not None:
        n = sum(c * fsdp2_local_numel(t, layout, _shards(layout, t)) for t, c in tensors)
        return model_states_per_gpu(n, p, o, 0, 1)
    dense = sum(c * tp_local_numel(t, layout) for t, c in tensors if not t.expert)
    expert = sum(c * tp_local_numel(t, layout) for t, c in tensors if t.expert)
    a = model_states_per_gpu(dense, p, o, layout.zero, layout.shard_degree)
    b = model_states_per_gpu(expert, p, o, layout.zero, layout.expert_shard_degree())
    return {k: a[k] + b[k] for k in a}


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
        c * lora_adapter_params(t, layout.lora_rank, layout.tp) for t, c in tensors if adapted(t, layout.lora_targets)
    )


def stored_weight_bytes(tensor: Tensor, n: int, layout: ParallelLayout, precision: str) -> int:
    """Bytes of n elements of `tensor` as stored: NF4 for QLoRA's quantised linears, 16-bit for
    a frozen LoRA base, the precision's weight dtype when trained."""
    if layout.finetune == "qlora" and quantized_by_qlora(tensor):
        return tensor.copies * nf4_bytes(n // tensor.copies)  # each copy quantised in its own blocks
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
    else:
        n = adapter_params(tensors, layout)
        states = model_states_per_gpu(n, work.precision, work.optimizer, layout.zero_stage, layout.shard_degree)
        base = frozen_base_bytes(tensors, layout, work)
    gpu = {
        "base_weights_bytes": base,
        "weights_bytes": states["weights_bytes"],
        "gradients_bytes": states["gradients_bytes"],
        "optimizer_bytes": states["optimizer_bytes"],
        "gathered_unit_bytes": gathered_unit_bytes(cfg, layout, work, stage),
    }
    cpu = {"optimizer_bytes": 0, "weights_bytes": 0, "gradients_bytes": 0}
    if layout.offload_optimizer:
        cpu["optimizer_bytes"], gpu["optimizer_bytes"] = gpu["optimizer_bytes"], 0
    if layout.offload_params:
        for key in ("weights_bytes", "gradients_bytes"):
            cpu[key], gpu[key] = gpu[key], 0
    return {**gpu, **{f"cpu_{k}": v for k, v in cpu.items()}}


# ---------------------------------------------------------------- activations
def in_flight(layout: ParallelLayout, stage: int) -> int:
    """Model-chunk micro-batches whose activations rank `stage` holds at its peak. 1F1B
    (Narayanan et al. 2021, PipeDream-Flush): min(p - s, m), so the first stage holds p.
    Interleaved (Megatron-LM's schedule): the warm-up forwards 2(p - s - 1) + (v - 1) p plus
    the first steady-state one, at most m v; summed over the rank's chunks this is
    Korthikanti et al. 2022's p (1 + (p - 1)/(p v)) micro-batches of L/p layers on the first rank."""
    p, m, v = layout.pp, layout.micro_batches, layout.v
    if p == 1:
        return 1
    if v == 1:
        return min(p - stage, m)
    return min(m * v, 2 * (p - stage - 1) + (v - 1) * p + 1)


def chunk_in_flight(layout: ParallelLayout, stage: int, chunk: int) -> int:
    """Of the in-flight forwards, those of model chunk `chunk`: forwards run chunk by chunk, p
    micro-batches at a time, so forward i is chunk (i // p) mod v; counted in closed form."""
    if layout.v == 1:
        return in_flight(layout, stage)
    p, cycle = layout.pp, layout.pp * layout.v
    full, rest = divmod(in_flight(layout, stage), cycle)
    return full * p + min(max(rest - chunk * p, 0), p)


def _scale(key: str, n_bytes: int, layout: ParallelLayout) -> int:
    """One activation term's share on a tp rank: heads / MLP width split over tp; the rest of
    the residual stream split over tp only with sequence parallelism; the loss's log-softmax
    over the vocabulary when vocab-parallel (Megatron's parallel cross-entropy)."""
    if key in _CONSTANT or layout.tp == 1:
        return n_bytes
    if key in _TP_SPLIT:
        return ceil_div(n_bytes, layout.tp)
    if key == "loss.log_probs":
        return ceil_div(n_bytes, layout.tp) if layout.vocab_parallel else n_bytes
    if key.startswith(("lm_head.", "loss.")) or key in ("tok_emb.ids", "pos_emb.positions", "rope.cos_sin"):
        return n_bytes  # the lm_head and the loss see the gathered sequence; ids and tables are whole
    return ceil_div(n_bytes, layout.tp) if layout.sequence_parallel else n_bytes


def activation_parts(
    cfg: ModelConfig, layout: ParallelLayout, work: Workload, moe: bool | None = None
) -> dict[str, int]:
    """Bytes of one micro-batch on one rank: per layer (of an MoE block, a dense one, or the
    config's kind when `moe` is None), first-stage extras, last-stage extras, and shared (RoPE
    tables), from sizing.memory's terms at T / cp tokens per sequence."""
    a = get_precision(work.precision).activation_bytes
    t_local = work.seq_len // layout.cp
    terms = activation_terms(cfg, t_local, layout.micro_batch, work.attention_impl, work.recompute, a, moe)
    parts = {"per_layer": 0, "first": 0, "last": 0, "shared": 0}
    for t in terms:
        share = _scale(t.key, t.bytes, layout)
        where = (
            "per_layer"
            if t.per_layer
            else "first"
            if t.key.startswith(_FIRST_STAGE)
            else "last"
            if t.key.startswith(_LAST_STAGE)
            else "shared"
        )
        parts[where] += share
    if layout.finetune != "full":  # each adapter keeps its r-wide hidden A x for B's backward
        n_adapted = sum(1 for t in block_tensors_per_ep_rank(cfg, layout, moe) if adapted(t, layout.lora_targets))
        parts["per_layer"] += n_adapted * layout.micro_batch * t_local * layout.lora_rank * a
    return parts


def activation_terms_on_stage(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> dict[str, int]:
    """The stage's saved activations at its peak: each chunk's blocks (dense and MoE blocks each
    at their own per-layer bytes) times that chunk's micro-batches in flight, plus the extras."""
    parts = activation_parts(cfg, layout, work)
    per_kind = {cfg.is_moe: parts["per_layer"]}
    blocks = 0
    for chunk in range(layout.v):
        for moe, n in block_kinds(cfg, chunk_layers(cfg, layout, stage, chunk)):
            if moe not in per_kind:
                per_kind[moe] = activation_parts(cfg, layout, work, moe)["per_layer"]
            blocks += per_kind[moe] * n * chunk_in_flight(layout, stage, chunk)
    first = parts["first"] * chunk_in_flight(layout, stage, 0) if stage == 0 else 0
    last = parts["last"] * chunk_in_flight(layout, stage, layout.v - 1) if stage == layout.pp - 1 else 0
    return {
        "activations_blocks_bytes": blocks,
        "activations_embedding_bytes": first,
        "activations_head_loss_bytes": last,
        "activations_shared_bytes": parts["shared"],
    }


def transient_terms(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> dict[str, int]:
    """The logits and their gradient on the last stage (split over tp when vocab-parallel) and,
    with recomputation, one block's re-run activations (split over tp): the largest kind of
    block the stage holds where dense and MoE blocks mix."""
    a = get_precision(work.precision).activation_bytes
    args = (cfg, work.seq_len // layout.cp, layout.micro_batch, work.attention_impl)
    logits = transient_bytes(*args, "none", a)
    if work.recompute == "none":
        block = 0
    else:
        kinds = [moe for moe, _ in stage_kinds(cfg, layout, stage)] or [None]
        block = max(transient_bytes(*args, work.recompute, a, moe) for moe in kinds) - logits
    if layout.vocab_parallel:
        logits = ceil_div(logits, layout.tp)
    return {
        "logits_bytes": logits if stage == layout.pp - 1 else 0,
        "recompute_block_bytes": ceil_div(block, layout.tp),
    }


# ---------------------------------------------------------------- totals
GPU_TERMS = (
    "base_weights_bytes",
    "weights_bytes",
    "gradients_bytes",
    "optimizer_bytes",
    "gathered_unit_bytes",
    "activations_blocks_bytes",
    "activations_embedding_bytes",
    "activations_head_loss_bytes",
    "activations_shared_bytes",
    "logits_bytes",
    "recompute_block_bytes",
)


def stage_memory(cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int) -> dict[str, int]:
    """Every term on pipeline rank `stage`, the GPU total and the CPU (offloaded) total."""
    out = model_state_terms(cfg, layout, work, stage)
    out.update(activation_terms_on_stage(cfg, layout, work, stage))
    out.update(transient_terms(cfg, layout, work, stage))
    out["total_bytes"] = sum(out[k] for k in GPU_TERMS)
    out["cpu_total_bytes"] = out["cpu_optimizer_bytes"] + out["cpu_weights_bytes"] + out["cpu_gradients_bytes"]
    return out


def candidate_stages(layout: ParallelLayout, cfg: ModelConfig | None = None) -> tuple[int, ...]:
    """Stages that can be the most loaded: the first (most in flight, embedding), the last
    (lm_head, loss, logits) and the second (most in flight among stages without extras); where
    stages hold different blocks (dense and MoE layers), also the first stage of each kind of
    holding (in flight falls with the stage, so it is the most loaded of its kind)."""
    stages = {0, min(1, layout.pp - 1), layout.pp - 1}
    if cfg is not None and cfg.is_moe and cfg.n_dense_layers:
        stages |= _first_of_each_holding(cfg, layout.pp, layout.v, layout.stage_layers)
    return tuple(sorted(stages))


@lru_cache(maxsize=1024)
def _first_of_each_holding(cfg: ModelConfig, pp: int, v: int, given: tuple[int, ...] | None) -> frozenset[int]:
    """The first stage of each distinct holding of dense and MoE layers (depends on the split
    alone: computed once for the hundreds of layouts of a search that share it)."""
    layout = ParallelLayout(
        pp=pp, v=v, micro_batches=pp, stage_layers=given, pp_schedule="interleaved" if v > 1 else "1f1b"
    )
    seen: dict[tuple, int] = {}
    for stage in range(pp):
        seen.setdefault(stage_signature(cfg, layout, stage), stage)
    return frozenset(seen.values())


def most_loaded(cfg: ModelConfig, layout: ParallelLayout, work: Workload) -> tuple[int, dict[str, int]]:
    """(stage, terms) of the rank with the largest GPU total."""
    best = None
    for stage in candidate_stages(layout, cfg):
        terms = stage_memory(cfg, layout, work, stage)
        if best is None or terms["total_bytes"] > best[1]["total_bytes"]:
            best = (stage, terms)
    return best


def unsharded_states_bytes(cfg: ModelConfig, n_params: int, work: Workload) -> int:
    """The whole model's weights + gradients + optimizer states (for the "x smaller" line)."""
    p, o = work.precision, work.optimizer
    return weights_bytes(n_params, p) + gradients_bytes(n_params, p) + optimizer_bytes(n_params, p, o)
