"""The collectives of one training step on the most-communicating GPU, dimension by dimension
(sizes per micro-batch from the layout; times from comms.py).

* dp, ZeRO 0 (DDP): one all-reduce of the gradients per step (DDP buckets it; bytes as one).
  ZeRO 1/2 (Megatron's distributed optimizer): reduce-scatter of the gradients and
  all-gather of the updated weights, once per step. ZeRO-3 / FSDP (torch FSDP2): per
  micro-batch, every unit (each block, and the root holding the embedding, final norm and
  lm_head) is all-gathered for forward, every block again for backward (the root stays
  gathered: FSDP2 does not reshard the root after forward) and its gradient reduce-scattered;
  HSDP adds an all-reduce of each gradient shard across the replicas. Experts reduce over the
  expert-data-parallel group, edp = tp cp dp / (ep etp) ranks (Megatron-Core's expert grid).
* tp (Megatron, Shoeybi et al. 2019): per layer and micro-batch, forward 2 all-reduces of the
  b.T.d activations (attention and MLP outputs), backward 2 (one per column-parallel input:
  fused QKV and fused up/gate; `fused=False` counts one per column-parallel linear, as torch's
  ColwiseParallel on separate q, k, v, up, gate does). Sequence parallel (Korthikanti et al.
  2022): each all-reduce becomes an all-gather + a reduce-scatter of the same buffer. Full
  recomputation repeats the forward ones. Vocab-parallel: the embedding output's all-reduce
  (first stage) and the lm_head input gradient's (last stage), 3 fp32 b.T all-reduces of the
  parallel cross-entropy (max, sum of exp, target logit).
* pp: per micro-batch and model chunk, one send of the b.T.d activations forward and one of
  their gradient backward (a middle stage sends both; split over tp with sequence parallel).
* cp (ring attention): per layer and micro-batch, (cp - 1) sends of the local K and V forward
  and 2 (cp - 1) backward (K, V and their gradients); again with full recomputation.
* ep: per MoE layer and micro-batch, 2 all-to-all forward (dispatch, combine) and 2 backward of
  the routed d-vectors over the ep ranks (uniform routing assumed): each rank sends its own
  b.T.k / tp of them (sequence parallelism leaves T / tp tokens on each tp rank); with expert
  tensor parallelism the etp group then all-gathers what its ranks received and reduce-scatters
  the outputs, etp x as many (arXiv:2504.14960 sec. 3.3). The ep group's ranks lie etp apart
  (Megatron's expert order tp-ep-dp).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sizing.inputs import GPU, ModelConfig
from sizing.memory import get_precision
from sizing.parallel.comms import Collective
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory import fsdp2_local_numel, tp_local_numel, unit_gather_bytes
from sizing.parallel.memory_stack import work_conventions
from sizing.parallel.mixers import is_moe_kind, sublayers
from sizing.parallel.shapes import Tensor, first_stage_tensors, last_stage_tensors
from sizing.parallel.stages import block_tensors_per_ep_rank, candidate_stages, mixed_blocks, stage_kinds, stage_layers
from sizing.vocabulary import ceil_div

if TYPE_CHECKING:
    from sizing.inputs import Workload

DIMENSIONS = ("dp", "tp", "pp", "cp", "ep")


class Links:
    """Which link a group uses: NVLink when its ranks sit in one node, else the network."""

    def __init__(self, layout: ParallelLayout, gpu: GPU, nvlink_gbs: float | None, network_gbs: float | None):
        self.layout = layout
        self.nvlink = nvlink_gbs if nvlink_gbs is not None else gpu.nvlink_gbs
        self.network = network_gbs if network_gbs is not None else gpu.network_gbs

    def span_link(self, span: int) -> tuple[str, float]:
        """A group whose ranks lie within `span` consecutive ranks (tp innermost)."""
        if span <= self.layout.gpus_per_node and self.nvlink:
            return "nvlink", self.nvlink
        return "network", self.network or self.nvlink or 1.0


def _unit_numel(tensors: list[Tensor], layout: ParallelLayout, ranks: int) -> int:
    """Elements of one unit's shard on rank 0 (FSDP2 per-parameter, or ZeRO-3's flat buffer)."""
    if layout.fsdp is not None:
        return sum(fsdp2_local_numel(t, layout, ranks) for t in tensors)
    return ceil_div(sum(tp_local_numel(t, layout) for t in tensors), ranks)


def _block_groups(cfg: ModelConfig, layout: ParallelLayout, moe: bool, prefix: str) -> list[tuple]:
    """(label, tensors, shard ranks, data-parallel ranks) of one kind of block on EP rank 0: its
    dense parameters, and its experts as their own group (reduced over edp) where they are laid
    out apart from the dense ones (ep > 1 or etp != tp), else with them."""
    block = block_tensors_per_ep_rank(cfg, layout, moe)
    groups = [(f"{prefix}dense", [t for t in block if not t.expert], layout.shard_degree, layout.dp * layout.cp)]
    experts = [t for t in block if t.expert]
    if experts and (layout.ep > 1 or layout.etp != layout.tp):
        groups.append((f"{prefix}expert", experts, layout.expert_shard_degree(), layout.expert_data_parallel))
    elif experts:
        groups[0][1].extend(experts)
    return groups


def _stage_groups(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> list[tuple[int, list[tuple]]]:
    """(blocks, groups) for each kind of block on `stage`; labels name the kind only where dense
    and MoE layers mix (DeepSeek's first dense layers), so other models read as before."""
    mixed = cfg.is_moe and cfg.n_dense_layers > 0
    out = []
    for moe, n in stage_kinds(cfg, layout, stage):
        prefix = ("MoE-layer " if moe else "dense-layer ") if mixed else ""
        if isinstance(moe, tuple):  # a hybrid's layer kind: its mixer and MLP
            prefix = f"{moe[0]}+{moe[1]}-layer "
        out.append((n, _block_groups(cfg, layout, moe, prefix)))
    return out


def _root_tensors(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> list[Tensor]:
    """The tensors outside the blocks on `stage`: the embedding on the first, norm and lm_head on the last."""
    out = first_stage_tensors(cfg) if stage == 0 else []
    return out + (last_stage_tensors(cfg, layout.pp) if stage == layout.pp - 1 else [])


def _zero3_collectives(cfg, layout, work, links, stage) -> list[Collective]:
    """ZeRO-3 / FSDP: every unit all-gathered per micro-batch (blocks twice), gradients
    reduce-scattered, and under HSDP all-reduced across the replicas."""
    prec = get_precision(work.precision)
    g, S, m = prec.grad_bytes, layout.shard_degree, layout.micro_batches
    trainable = layout.finetune == "full"
    link, gbs = links.span_link(layout.tp * layout.cp * layout.dp)
    kinds = _stage_groups(cfg, layout, stage)
    out = []
    for n, groups in kinds:
        for label, block, ranks, _ in groups:
            shard = _unit_numel(block, layout, ranks)
            gathered = unit_gather_bytes(block, layout, work.precision, ranks)
            out.append(
                Collective(
                    "dp", "all_gather", f"{label} block weights (fwd + bwd)", 2 * n * m, gathered, ranks, link, gbs
                )
            )
            if trainable:
                what = f"{label} block gradients"
                out.append(Collective("dp", "reduce_scatter", what, n * m, shard * ranks * g, ranks, link, gbs))
    root = _root_tensors(cfg, layout, stage)
    root_shard = _unit_numel(root, layout, S)
    if root:
        gathered = unit_gather_bytes(root, layout, work.precision, S)
        out.append(Collective("dp", "all_gather", "root weights (embedding, norm, lm_head)", m, gathered, S, link, gbs))
        if trainable:
            out.append(Collective("dp", "reduce_scatter", "root gradients", m, root_shard * S * g, S, link, gbs))
    replicas = layout.dp * layout.cp // S
    if layout.fsdp == "hybrid" and replicas > 1 and trainable:
        rlink, rgbs = links.span_link(layout.world)
        what = "gradient shards across replicas (HSDP)"
        for n, groups in kinds:
            block_shard = _unit_numel(groups[0][1], layout, S)
            prefix = groups[0][0][: -len("dense")]
            out.append(
                Collective("dp", "all_reduce", f"{prefix}block {what}", n * m, block_shard * g, replicas, rlink, rgbs)
            )
        if root:
            out.append(Collective("dp", "all_reduce", f"root {what}", m, root_shard * g, replicas, rlink, rgbs))
    return out


def dp_collectives(
    cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links, stage: int = 0
) -> list[Collective]:
    """Data-parallel collectives of pipeline rank `stage` (see the module docstring); gradients
    in the stack's gradient buffer dtype (Megatron-Core: fp32 for bf16 training)."""
    prec = get_precision(work.precision)
    w, g = prec.weight_bytes, work_conventions(work).grad_bytes or prec.grad_bytes
    if layout.zero_stage == 3 and layout.shard_degree > 1:
        return _zero3_collectives(cfg, layout, work, links, stage)
    if layout.finetune != "full":  # LoRA: only the adapters' gradients, small; counted as one all-reduce
        return []
    link, gbs = links.span_link(layout.tp * layout.cp * layout.dp)
    elements: dict[str, list] = {}  # param group -> [elements, data-parallel ranks]
    for n, groups in _stage_groups(cfg, layout, stage):
        for label, block, _, ranks in groups:
            group = label.rsplit(" ", 1)[-1]  # "dense" or "expert": one bucket per group, every kind in it
            entry = elements.setdefault(group, [0, ranks])
            entry[0] += n * sum(tp_local_numel(t, layout) for t in block)
    elements.setdefault("dense", [0, layout.dp * layout.cp])[0] += sum(
        tp_local_numel(t, layout) for t in _root_tensors(cfg, layout, stage)
    )
    out = []
    for label, (n, ranks) in elements.items():
        if ranks == 1:
            continue
        if layout.zero == 0:
            out.append(Collective("dp", "all_reduce", f"{label} gradients", 1, n * g, ranks, link, gbs))
        else:
            padded = ceil_div(n, ranks) * ranks
            out.append(Collective("dp", "reduce_scatter", f"{label} gradients", 1, padded * g, ranks, link, gbs))
            out.append(Collective("dp", "all_gather", f"{label} updated weights", 1, padded * w, ranks, link, gbs))
    return out


def tp_backward_all_reduces(cfg: ModelConfig, fused: bool = True, moe: bool | None = None) -> int:
    """Backward all-reduces per layer without sequence parallelism: one per column-parallel
    input (2 with fused QKV and fused up/gate), or one per column-parallel linear: q, k, v (MLA:
    q or q_b, and kv_b), the MLP's up (and gate) in a dense block (`moe` False; None: the
    config's kind), the shared experts' in an MoE block (routed experts are not tp-split here)."""
    if isinstance(moe, tuple):  # a hybrid layer: one per residual branch (its column-parallel input)
        return sublayers(moe)
    if fused:
        return 2
    moe = cfg.is_moe if moe is None else moe
    attn = 2 if cfg.is_mla else 3
    mlp = 2 if cfg.gated_mlp else 1
    return attn + (mlp if not moe or cfg.n_shared_experts else 0)


def stage_branches(cfg: ModelConfig, layout: ParallelLayout, stage: int) -> int:
    """Residual branches on the fullest stage, each closed by one TP reduction: two per block (attention,
    MLP), a hybrid layer's own (sizing.parallel.mixers.sublayers: it may have one)."""
    if getattr(cfg, "hybrid", None) is None:
        return 2 * stage_layers(cfg, layout)
    return sum(sublayers(kind) * n for kind, n in stage_kinds(cfg, layout, stage))


def _forward_reduces(fwd: int, kind) -> int:
    """Forward all-reduces of one block: `fwd` for a stack's two branches, per branch for a hybrid layer."""
    return fwd * sublayers(kind) // 2 if isinstance(kind, tuple) else fwd


def tp_collectives(
    cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links, fused: bool = True, stage: int = 0
) -> list[Collective]:
    """Tensor-parallel collectives of the step (see the module docstring). `fused` True:
    Megatron-LM (fused QKV and up/gate; with SP the column-parallel inputs are saved sharded
    and gathered again for the weight gradients, 2 more all-gathers per layer). False: torch
    DTensor on the reference model's separate linears (one backward all-reduce per
    column-parallel linear; with SP the gathered inputs are saved, no re-gather)."""
    if layout.tp == 1:
        return []
    a = get_precision(work.precision).activation_bytes
    b, T, m = layout.micro_batch, work.seq_len // layout.cp, layout.micro_batches
    branches = stage_branches(cfg, layout, stage)
    S = b * T * cfg.d_model * a
    fwd = 2 * (2 if work.recompute == "full" else 1)
    link, gbs = links.span_link(layout.tp)
    tp, vp = layout.tp, layout.vocab_parallel
    first = layout.pp == 1  # the first stage's extras are on the counted rank only without pipelining

    def coll(kind: str, what: str, count: int, n_bytes: int = S) -> Collective:
        return Collective("tp", kind, what, count, n_bytes, tp, link, gbs)

    if layout.sequence_parallel:
        regather = 2 if fused else 0
        out = [
            coll(
                "all_gather",
                "sequence-parallel block inputs and output gradients",
                (fwd + 2 + regather) * branches * m // 2,
            ),
            coll(
                "reduce_scatter", "sequence-parallel block outputs and input gradients", (fwd + 2) * branches * m // 2
            ),
            coll(
                "all_gather",
                "hidden states gathered for the lm_head" + (", embedding gradient" if first else ""),
                (1 + first) * m,
            ),
        ]
        if vp:
            out.append(
                coll(
                    "reduce_scatter",
                    "lm_head input gradient" + (", embedding output" if first else ""),
                    (1 + first) * m,
                )
            )
    else:
        count = sum(
            (_forward_reduces(fwd, moe) + tp_backward_all_reduces(cfg, fused, moe)) * n * m
            for moe, n in stage_kinds(cfg, layout, stage)
        )
        out = [coll("all_reduce", "attention and MLP outputs (fwd), inputs' gradients (bwd)", count)]
        if vp:
            out.append(
                coll("all_reduce", "lm_head input gradient" + (", embedding output" if first else ""), (1 + first) * m)
            )
    if vp:
        out.append(coll("all_reduce", "vocab-parallel cross-entropy (max, sum exp, target)", 3 * m, b * T * 4))
    return out


def pp_collectives(cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links) -> list[Collective]:
    if layout.pp == 1:
        return []
    a = get_precision(work.precision).activation_bytes
    S = layout.micro_batch * (work.seq_len // layout.cp) * cfg.d_model * a
    if layout.sequence_parallel:
        S = ceil_div(S, layout.tp)
    link, gbs = links.span_link(layout.world)
    sends = 2 * layout.micro_batches * layout.v if layout.pp > 2 or layout.v > 1 else layout.micro_batches
    return [Collective("pp", "send", "activations forward, their gradients backward", sends, S, 2, link, gbs)]


def cp_collectives(cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links) -> list[Collective]:
    if layout.cp == 1:
        return []
    a = get_precision(work.precision).activation_bytes
    T = work.seq_len // layout.cp
    kv = layout.micro_batch * T * (cfg.kv_heads // layout.tp) * (cfg.qk_head_width + cfg.v_head_width) * a
    passes = 3 + (1 if work.recompute == "full" else 0)  # forward 1, backward 2 (K, V and dK, dV), recompute 1
    sends = passes * (layout.cp - 1) * stage_layers(cfg, layout) * layout.micro_batches
    link, gbs = links.span_link(layout.tp * layout.cp)
    return [
        Collective("cp", "send", "K and V chunks around the ring (fwd), K, V, dK, dV (bwd)", sends, kv, 2, link, gbs)
    ]


def ep_collectives(
    cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links, stage: int = 0
) -> list[Collective]:
    if layout.ep == 1:
        return []
    a = get_precision(work.precision).activation_bytes
    S = ceil_div(layout.micro_batch * (work.seq_len // layout.cp) * cfg.top_k * cfg.d_model * a, layout.tp)
    link, gbs = links.span_link(layout.etp * layout.ep)
    moe_layers = sum(n for moe, n in stage_kinds(cfg, layout, stage) if is_moe_kind(moe))
    count = 4 * moe_layers * layout.micro_batches
    if count == 0:
        return []
    out = [
        Collective(
            "ep", "all_to_all", "routed tokens: dispatch and combine, fwd and bwd", count, S, layout.ep, link, gbs
        )
    ]
    if layout.etp > 1:
        elink, egbs = links.span_link(layout.etp)
        what = "received tokens across the expert-tensor-parallel group (fwd all-gather, bwd reduce-scatter)"
        out.append(Collective("ep", "all_gather", what, count // 2, S * layout.etp, layout.etp, elink, egbs))
        what = "expert outputs across the expert-tensor-parallel group (fwd reduce-scatter, bwd all-gather)"
        out.append(Collective("ep", "reduce_scatter", what, count // 2, S * layout.etp, layout.etp, elink, egbs))
    return out


def step_collectives(
    cfg: ModelConfig,
    layout: ParallelLayout,
    work: Workload,
    gpu: GPU,
    nvlink_gbs: float | None = None,
    network_gbs: float | None = None,
    fused: bool = True,
    stage: int | None = None,
) -> list[Collective]:
    """Every collective of one step on one GPU of pipeline rank `stage`, dimension by dimension.
    None: the first stage where every stage holds the same blocks, else the candidate stage
    (memory.candidate_stages: one of each holding of dense and MoE layers) whose collectives
    take the most seconds."""
    if stage is None:
        stages = candidate_stages(layout, cfg) if mixed_blocks(cfg) else (0,)
        options = [step_collectives(cfg, layout, work, gpu, nvlink_gbs, network_gbs, fused, s) for s in stages]
        return max(options, key=lambda cs: sum(c.seconds_per_step for c in cs))
    links = Links(layout, gpu, nvlink_gbs, network_gbs)
    return (
        dp_collectives(cfg, layout, work, links, stage)
        + tp_collectives(cfg, layout, work, links, fused, stage)
        + pp_collectives(cfg, layout, work, links)
        + cp_collectives(cfg, layout, work, links)
        + ep_collectives(cfg, layout, work, links, stage)
    )


def seconds_by_dimension(collectives: list[Collective]) -> dict[str, float]:
    out = dict.fromkeys(DIMENSIONS, 0.0)
    for c in collectives:
        out[c.dimension] += c.seconds_per_step
    return out
