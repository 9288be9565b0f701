"""The collectives of one training step on the most-communicating GPU, dimension by dimension
(sizes per micro-batch from the layout; times from comms.py).

* dp, ZeRO 0 (DDP): one all-reduce of the gradients per step (DDP buckets it; bytes as one).
  ZeRO 1/2 (Megatron's distributed optimizer): reduce-scatter of the gradients and
  all-gather of the updated weights, once per step. ZeRO-3 / FSDP (torch FSDP2): per
  micro-batch, every unit (each block, and the root holding the embedding, final norm and
  lm_head) is all-gathered for forward, every block again for backward (the root stays
  gathered: FSDP2 does not reshard the root after forward) and its gradient reduce-scattered;
  HSDP adds an all-reduce of each gradient shard across the replicas. Experts reduce over the
  expert-data-parallel group (dp x cp / ep).
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
  the b.T.k routed d-vectors (uniform routing assumed).
"""

from __future__ import annotations

from ..config import ModelConfig
from ..hardware import GPU
from ..memory.states import get_precision
from ..vocabulary import ceil_div
from .comms import Collective
from .layout import ParallelLayout
from .memory import (
    Workload,
    block_tensors_per_ep_rank,
    fsdp2_local_numel,
    stage_layers,
    tp_local_numel,
    unit_gather_bytes,
)
from .shapes import Tensor, first_stage_tensors, last_stage_tensors

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


def dp_collectives(cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links) -> list[Collective]:
    prec = get_precision(work.precision)
    w, g = prec.weight_bytes, prec.grad_bytes
    S, m, L = layout.shard_degree, layout.micro_batches, stage_layers(cfg, layout)
    groups = [("dense", [t for t in block_tensors_per_ep_rank(cfg, layout) if not t.expert], S, layout.dp * layout.cp)]
    experts = [t for t in block_tensors_per_ep_rank(cfg, layout) if t.expert]
    if experts and layout.ep > 1:
        groups.append(("expert", experts, layout.expert_shard_degree(), layout.dp * layout.cp // layout.ep))
    elif experts:
        groups[0][1].extend(experts)
    root = first_stage_tensors(cfg) + last_stage_tensors(cfg, layout.pp) if layout.pp == 1 else first_stage_tensors(cfg)
    trainable = layout.finetune == "full"
    out = []
    link, gbs = links.span_link(layout.tp * layout.cp * layout.dp)
    if layout.zero_stage == 3 and S > 1:
        for label, block, ranks, _ in groups:
            shard = _unit_numel(block, layout, ranks)
            out.append(
                Collective(
                    "dp",
                    "all_gather",
                    f"{label} block weights (fwd + bwd)",
                    2 * L * m,
                    unit_gather_bytes(block, layout, work.precision, ranks),
                    ranks,
                    link,
                    gbs,
                )
            )
            if trainable:
                out.append(
                    Collective(
                        "dp", "reduce_scatter", f"{label} block gradients", L * m, shard * ranks * g, ranks, link, gbs
                    )
                )
        root_shard = _unit_numel(root, layout, S)
        out.append(
            Collective(
                "dp",
                "all_gather",
                "root weights (embedding, norm, lm_head)",
                m,
                unit_gather_bytes(root, layout, work.precision, S),
                S,
                link,
                gbs,
            )
        )
        if trainable:
            out.append(Collective("dp", "reduce_scatter", "root gradients", m, root_shard * S * g, S, link, gbs))
        replicas = layout.dp * layout.cp // S
        if layout.fsdp == "hybrid" and replicas > 1 and trainable:
            rlink, rgbs = links.span_link(layout.world)
            what = "gradient shards across replicas (HSDP)"
            block_shard = _unit_numel(groups[0][1], layout, S)
            out.append(Collective("dp", "all_reduce", f"block {what}", L * m, block_shard * g, replicas, rlink, rgbs))
            out.append(Collective("dp", "all_reduce", f"root {what}", m, root_shard * g, replicas, rlink, rgbs))
        return out
    if not trainable:  # LoRA: only the adapters' gradients, small; counted as one all-reduce
        return out
    for label, block, _, ranks in groups:
        tensors = block * 1
        n = L * sum(tp_local_numel(t, layout) for t in tensors)
        if label == "dense":
            n += sum(tp_local_numel(t, layout) for t in root)
        if ranks == 1:
            continue
        if layout.zero == 0:
            out.append(Collective("dp", "all_reduce", f"{label} gradients", 1, n * g, ranks, link, gbs))
        else:
            padded = ceil_div(n, ranks) * ranks
            out.append(Collective("dp", "reduce_scatter", f"{label} gradients", 1, padded * g, ranks, link, gbs))
            out.append(Collective("dp", "all_gather", f"{label} updated weights", 1, padded * w, ranks, link, gbs))
    return out


def tp_backward_all_reduces(cfg: ModelConfig, fused: bool = True) -> int:
    """Backward all-reduces per layer without sequence parallelism: one per column-parallel
    input (2 with fused QKV and fused up/gate), or one per column-parallel linear."""
    if fused:
        return 2
    mlp = 0 if cfg.is_moe else (2 if cfg.gated_mlp else 1)
    return 3 + mlp


def tp_collectives(
    cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links, fused: bool = True
) -> list[Collective]:
    """Tensor-parallel collectives of the step (see the module docstring). `fused` True:
    Megatron-LM (fused QKV and up/gate; with SP the column-parallel inputs are saved sharded
    and gathered again for the weight gradients, 2 more all-gathers per layer). False: torch
    DTensor on the reference model's separate linears (one backward all-reduce per
    column-parallel linear; with SP the gathered inputs are saved, no re-gather)."""
    if layout.tp == 1:
        return []
    a = get_precision(work.precision).activation_bytes
    b, T, m, L = layout.micro_batch, work.seq_len // layout.cp, layout.micro_batches, stage_layers(cfg, layout)
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
            coll("all_gather", "sequence-parallel block inputs and output gradients", (fwd + 2 + regather) * L * m),
            coll("reduce_scatter", "sequence-parallel block outputs and input gradients", (fwd + 2) * L * m),
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
        bwd = tp_backward_all_reduces(cfg, fused)
        out = [coll("all_reduce", "attention and MLP outputs (fwd), inputs' gradients (bwd)", (fwd + bwd) * L * m)]
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
    kv = 2 * layout.micro_batch * T * (cfg.kv_heads // layout.tp) * cfg.d_head * a
    passes = 3 + (1 if work.recompute == "full" else 0)  # forward 1, backward 2 (K, V and dK, dV), recompute 1
    sends = passes * (layout.cp - 1) * stage_layers(cfg, layout) * layout.micro_batches
    link, gbs = links.span_link(layout.tp * layout.cp)
    return [
        Collective("cp", "send", "K and V chunks around the ring (fwd), K, V, dK, dV (bwd)", sends, kv, 2, link, gbs)
    ]


def ep_collectives(cfg: ModelConfig, layout: ParallelLayout, work: Workload, links: Links) -> list[Collective]:
    if layout.ep == 1:
        return []
    a = get_precision(work.precision).activation_bytes
    S = layout.micro_batch * (work.seq_len // layout.cp) * cfg.top_k * cfg.d_model * a
    link, gbs = links.span_link(layout.tp * layout.ep)
    count = 4 * stage_layers(cfg, layout) * layout.micro_batches
    return [
        Collective(
            "ep", "all_to_all", "routed tokens: dispatch and combine, fwd and bwd", count, S, layout.ep, link, gbs
        )
    ]


def step_collectives(
    cfg: ModelConfig,
    layout: ParallelLayout,
    work: Workload,
    gpu: GPU,
    nvlink_gbs: float | None = None,
    network_gbs: float | None = None,
    fused: bool = True,
) -> list[Collective]:
    """Every collective of one step on one GPU, dimension by dimension."""
    links = Links(layout, gpu, nvlink_gbs, network_gbs)
    return (
        dp_collectives(cfg, layout, work, links)
        + tp_collectives(cfg, layout, work, links, fused)
        + pp_collectives(cfg, layout, work, links)
        + cp_collectives(cfg, layout, work, links)
        + ep_collectives(cfg, layout, work, links)
    )


def seconds_by_dimension(collectives: list[Collective]) -> dict[str, float]:
    out = dict.fromkeys(DIMENSIONS, 0.0)
    for c in collectives:
        out[c.dimension] += c.seconds_per_step
    return out
