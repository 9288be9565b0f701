"""Saved activations and the working set of one pipeline rank: sizing.memory's terms (the
reference model's, or a training stack's: sizing.memory.stack_activations) at the rank's
sequence share T / cp, each term split as tensor, sequence and expert parallelism split it,
times the micro-batches in flight on the stage."""

from __future__ import annotations

from sizing.hybrid import hybrid_activation_terms, hybrid_of
from sizing.inputs import ModelConfig, Workload
from sizing.memory import get_precision, stack_activation_terms, stack_transient_bytes, sum_terms
from sizing.parallel.finetune import adapted
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory_stack import work_conventions
from sizing.parallel.shapes import block_kinds
from sizing.parallel.stages import (
    block_tensors_per_ep_rank,
    chunk_in_flight,
    chunk_layers,
    stage_kinds,
)
from sizing.vision import tower_config, vision_of
from sizing.vocabulary import ceil_div

# Activation terms split over tp with the heads or the MLP width (Megatron's column-parallel outputs).
_TP_SPLIT = ("attn.q", "attn.k", "attn.v", "attn.out", "attn.o.input", "attn.logsumexp", "attn.probs")
_TP_SPLIT += ("attn.probs_fp32", "mlp.hidden", "mlp.down.input", "moe.experts.hidden", "moe.shared.hidden")
# Terms that do not scale with the tokens of a rank (per-layer constants).
_CONSTANT = ("attn.mask", "loss.total_weight", "attn_norm.gain_fp32", "mlp_norm.gain_fp32")
_CONSTANT += ("norm_f.gain_fp32", "emb_norm.gain_fp32")
# Terms of the tokens routed to the rank's experts: under expert tensor parallelism every rank of
# an etp group processes the tokens of all its etp ranks, each for a slice of the expert width.
_ROUTED = ("moe.experts.routing_ids", "moe.experts.input", "moe.experts.output", "moe.experts.gate_weight")
# LoRA / QLoRA: a frozen weight needs no input for its gradient, so a GEMM input kept only for
# the weight gradient is not saved unless an adapter reads it: torch's autograd saves an mm operand
# only for an input that requires grad, Transformer Engine only when the weight does
# (module/linear.py: `backward_needs_input = is_grad_enabled and weight.requires_grad`).
# term -> the targets whose adapters read it (sizing.parallel.layout.LORA_TARGETS)
_FROZEN_GEMM_INPUTS = {
    "attn_norm.output": ("q", "k", "v"),
    "attn.o.input": ("o",),
    "mlp_norm.output": ("up", "gate"),
    "mlp.down.input": ("down",),
}
# A hybrid's state-mixer terms (sizing.hybrid.activations) split with the mixer's heads, as does
# Qwen3-Next's attention output gate.
_MIXER_SPLIT = ("mamba.", "deltanet.", "kda.", "attn.output_gate")
_FIRST_STAGE = ("tok_emb.", "pos_emb.", "emb_norm.")
_LAST_STAGE = ("norm_f.", "lm_head.", "loss.")


def _scale(key: str, n_bytes: int, layout: ParallelLayout) -> int:
    """One activation term's share on a tp rank: heads / MLP width split over tp; the rest of
    the residual stream split over tp only with sequence parallelism; the loss's log-softmax
    over the vocabulary when vocab-parallel (Megatron's parallel cross-entropy); the routed
    tokens' d-wide terms x etp / tp (the expert-tensor-parallel group's tokens; the expert
    hidden is split over tp either way: etp x 1/etp of the width)."""
    if key in _ROUTED:
        return ceil_div(n_bytes * layout.etp, layout.tp)
    if key in _CONSTANT or layout.tp == 1:
        return n_bytes
    if key in _TP_SPLIT or key.startswith(_MIXER_SPLIT):
        return ceil_div(n_bytes, layout.tp)
    if key == "loss.log_probs":
        return ceil_div(n_bytes, layout.tp) if layout.vocab_parallel else n_bytes
    if key.startswith(("lm_head.", "loss.")) or key in ("tok_emb.ids", "pos_emb.positions", "rope.cos_sin"):
        return n_bytes  # the lm_head and the loss see the gathered sequence; ids and tables are whole
    return ceil_div(n_bytes, layout.tp) if layout.sequence_parallel else n_bytes


def _frozen_only(key: str, layout: ParallelLayout) -> bool:
    """A GEMM input kept only for frozen weights without adapters (LoRA / QLoRA)."""
    readers = _FROZEN_GEMM_INPUTS.get(key)
    return layout.finetune != "full" and readers is not None and not set(readers) & set(layout.lora_targets)


def _frozen_down_input(cfg: ModelConfig, term, layout: ParallelLayout, moe: bool | None, work: Workload) -> int:
    """Under LoRA with no adapter on `down`: the reference model's MLP term holds the down
    projection's input (the gated product, or GeLU's output) among its tensors; not saved. ReLU's
    output is its own backward's input too, so it stays."""
    dense = not (cfg.is_moe if moe is None else moe)
    if term.key != "mlp.hidden" or layout.finetune == "full" or "down" in layout.lora_targets or not dense:
        return 0
    conv = work_conventions(work)
    if cfg.mlp == "relu" or conv.kernels == "fused" or (work.recompute == "selective" and conv.selective == "op"):
        return 0  # fused terms keep it apart (mlp.down.input); op-level checkpointing saves mm outputs
    a = get_precision(work.precision).activation_bytes
    return ceil_div(layout.micro_batch * (work.seq_len // layout.cp) * cfg.d_ff * a, layout.tp)


def activation_parts(
    cfg: ModelConfig, layout: ParallelLayout, work: Workload, moe: bool | None = None
) -> dict[str, int]:
    """Bytes of one micro-batch on one rank: per layer (of an MoE block, a dense one, or the
    config's kind when `moe` is None), first-stage extras, last-stage extras, and shared (RoPE
    tables), from sizing.memory's terms at T / cp tokens per sequence."""
    a = get_precision(work.precision).activation_bytes
    t_local = work.seq_len // layout.cp
    kwargs = work_conventions(work).activation_kwargs()
    args = (t_local, layout.micro_batch, work.attention_impl, work.recompute, a)
    if hybrid_of(cfg) is not None:  # a hybrid layer of kind `moe` (its first layer's kind when None)
        moe = moe if isinstance(moe, tuple) else hybrid_of(cfg).layers[0]
        terms = hybrid_activation_terms(hybrid_of(cfg), moe, *args, **kwargs)
    else:
        terms = stack_activation_terms(cfg, *args, moe, **kwargs)
    parts = {"per_layer": 0, "first": 0, "last": 0, "shared": 0}
    for t in terms:
        if _frozen_only(t.key, layout):
            continue
        share = _scale(t.key, t.bytes, layout) - _frozen_down_input(cfg, t, layout, moe, work)
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
    if vision_of(cfg) is not None:  # the tower runs on the first stage, once per micro-batch
        parts["first"] += tower_activation_bytes(cfg, layout, work)
    if layout.finetune != "full":  # each adapter keeps its r-wide hidden A x for B's backward
        n_adapted = sum(1 for t in block_tensors_per_ep_rank(cfg, layout, moe) if adapted(t, layout.lora_targets))
        parts["per_layer"] += n_adapted * layout.micro_batch * t_local * layout.lora_rank * a
    return parts


def activation_terms_on_stage(
    cfg: ModelConfig, layout: ParallelLayout, work: Workload, stage: int, flights: int | None = None
) -> dict[str, int]:
    """The stage's saved activations at its peak: each chunk's blocks (dense and MoE blocks each
    at their own per-layer bytes) times that chunk's micro-batches in flight (`flights` where a
    schedule other than the layout's sets them: DualPipe, sizing.parallel.dualpipe), plus the extras."""
    parts = activation_parts(cfg, layout, work)
    per_kind = {cfg.is_moe: parts["per_layer"]}

    def flying(chunk: int) -> int:
        return chunk_in_flight(layout, stage, chunk) if flights is None else flights

    blocks = 0
    for chunk in range(layout.v):
        for moe, n in block_kinds(cfg, chunk_layers(cfg, layout, stage, chunk)):
            if moe not in per_kind:
                per_kind[moe] = activation_parts(cfg, layout, work, moe)["per_layer"]
            blocks += per_kind[moe] * n * flying(chunk)
    first = parts["first"] * flying(0) if stage == 0 else 0
    last = parts["last"] * flying(layout.v - 1) if stage == layout.pp - 1 else 0
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
    kwargs = work_conventions(work).transient_kwargs()
    logits = stack_transient_bytes(*args, "none", a, **kwargs)
    if work.recompute == "none":
        block = 0
    elif hybrid_of(cfg) is not None:  # the largest layer re-run: its terms less those it keeps
        block = max(_rerun_bytes(cfg, layout, work, kind) for kind, _ in stage_kinds(cfg, layout, stage))
    else:
        kinds = [moe for moe, _ in stage_kinds(cfg, layout, stage)] or [None]
        block = max(stack_transient_bytes(*args, work.recompute, a, moe, **kwargs) for moe in kinds) - logits
    if layout.vocab_parallel:
        logits = ceil_div(logits, layout.tp)
    return {
        "logits_bytes": logits if stage == layout.pp - 1 else 0,
        "recompute_block_bytes": ceil_div(block, layout.tp),
    }


def _rerun_bytes(cfg: ModelConfig, layout: ParallelLayout, work: Workload, kind) -> int:
    """A recomputed hybrid layer's activations during its backward: all its terms less those kept."""
    a = get_precision(work.precision).activation_bytes
    args = (work.seq_len // layout.cp, layout.micro_batch, work.attention_impl)
    kwargs = work_conventions(work).activation_kwargs()
    m = hybrid_of(cfg)
    full = sum_terms(hybrid_activation_terms(m, kind, *args, "none", a, **kwargs))[0]
    kept = sum_terms(hybrid_activation_terms(m, kind, *args, work.recompute, a, **kwargs))[0]
    return full - kept


def tower_activation_bytes(cfg: ModelConfig, layout: ParallelLayout, work: Workload) -> int:
    """A vision-language model's tower on one micro-batch: its blocks' saved tensors (sizing.memory's
    terms for the tower's ViT blocks, each pass of patches a sequence: images x tiles per sequence),
    split over tp as the language model's blocks are (Megatron-Core's LLaVA: one tp group)."""
    runs, patches = cfg.tower_runs()
    if runs == 0:
        return 0
    tower = tower_config(vision_of(cfg))
    a = get_precision(work.precision).activation_bytes
    kwargs = work_conventions(work).activation_kwargs()
    terms = stack_activation_terms(
        tower, patches, runs * layout.micro_batch, work.attention_impl, work.recompute, a, False, **kwargs
    )
    return tower.n_layers * sum(_scale(t.key, t.bytes, layout) for t in terms if t.per_layer)
