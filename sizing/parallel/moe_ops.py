"""A mixture-of-experts block's own operations on one rank, for one micro-batch: the router, the
token permutation, the local experts as grouped GEMMs at their per-rank shape, the dispatch and
combine all-to-alls over the ep ranks and the expert-tensor-parallel gathers, and how much of
that communication the stack hides.

Megatron-Core's expert grid (sizing.parallel.layout): a rank holds n = t / tp tokens after the
attention (sequence parallelism; t = b T / cp the tokens of a tp group), routes each to k experts,
and sends those n k copies over the ep ranks (all-to-all-v). With expert tensor parallelism the
etp ranks of a group then all-gather what each received (n k tokens each) so every rank of the
group computes its 1/etp of the expert width for all of them, and reduce-scatter the outputs
before the combine (arXiv:2504.14960 sec. 3.3, Fig. 2; backward: the reverse). A local expert
thus gets ep etp n k / E tokens, times the load factor: the most-loaded rank sets the time.

What the all-to-alls overlap (`Hardware.ep_overlap`, a stack's or a run's property):
* none: on the critical path (Megatron-Core's default dispatcher, 2024-25);
* shared: under the shared experts' GEMMs of the same pass (DeepSeek-V2 sec. 3.1.3: "we overlap
  the computation of shared experts with the expert parallel all-to-all communication");
* paired: under the computation of another micro-batch's chunk (DeepSeek-V3's DualPipe, arXiv:
  2412.19437 sec. 3.2.1: a forward and a backward chunk interleaved so that "both all-to-all and
  PP communication can be fully hidden"): what exceeds the block's compute shows, and while the
  all-to-all runs its kernels hold `comm_sms` SMs (20 of 132 on H800, sec. 3.2.2) the GEMMs lack.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.ops_base import ACT_BYTES, Hardware, Times, add_linear, add_memory

ROUTER_SCORE_BYTES = 4  # router logits, softmax / sigmoid and top-k in fp32
COMPUTE_KINDS = ("gemm", "attention", "memory")
FP8_DISPATCH_BYTES = 1 + 4 / 128  # an fp8 element and its share of one fp32 scale per 1 x 128 tile


def expert_share(cfg: ModelConfig, layout: ParallelLayout, t: int, cf: float) -> tuple[int, int, int, int]:
    """One rank's expert work under ep x etp: (local experts E / ep, routed tokens per local
    expert ep etp n k / E x the load factor, expert width per rank f_e / etp, tokens this rank
    holds and dispatches n = t / tp); see the module."""
    tokens = max(1, t // layout.tp)
    per_expert = max(1, round(tokens * layout.etp * layout.ep * cfg.top_k * cf / cfg.n_experts))
    return cfg.n_experts // layout.ep, per_expert, cfg.expert_ff // layout.etp, tokens


def experts(cfg: ModelConfig, layout: ParallelLayout, hw: Hardware, fwd: Times, bwd: Times, t: int, cf: float):
    """Router, permutation, the local experts, the shared experts and the communication of one
    MoE block; returns ((all-to-all forward, backward) seconds, (shared-expert GEMM forward,
    backward) seconds) for ep_exposed, which adds the all-to-alls as the stack hides them."""
    d = cfg.d_model
    local, per_expert, f, tokens = expert_share(cfg, layout, t, cf)
    add_linear(hw, fwd, bwd, tokens, cfg.n_experts, d)  # the router, on this rank's n tokens
    routed = tokens * cfg.top_k * cf  # the d-vectors this rank sends (and gets back)
    # scores and top-k over n x E, then permute the routed copies into expert order and
    # unpermute them back with their weights (each a read and a write of d); with several local
    # experts the received tokens are sorted by local expert again after the dispatch and back
    # before the combine (Megatron-Core's alltoall dispatcher, sort_chunks_by_idxs)
    passes = 4 if local > 1 and layout.ep > 1 else 2
    add_memory(hw, fwd, bwd, tokens * cfg.n_experts * 2 * ROUTER_SCORE_BYTES + passes * routed * d * 2 * ACT_BYTES)
    add_linear(hw, fwd, bwd, per_expert, f * (cfg.mlp_matrices - 1), d, local)
    add_linear(hw, fwd, bwd, per_expert, d, f, local)
    add_memory(hw, fwd, bwd, local * per_expert * f * cfg.mlp_matrices * ACT_BYTES)
    shared = (0.0, 0.0)
    if cfg.n_shared_experts:
        fs = cfg.n_shared_experts * cfg.shared_ff // layout.tp
        before = (fwd.by_kind.get("gemm", 0.0), bwd.by_kind.get("gemm", 0.0))
        add_linear(hw, fwd, bwd, t, fs * (cfg.mlp_matrices - 1), d)
        add_linear(hw, fwd, bwd, t, d, fs)
        shared = (fwd.by_kind["gemm"] - before[0], bwd.by_kind["gemm"] - before[1])
    routed_bytes = routed * d * ACT_BYTES
    dispatch = FP8_DISPATCH_BYTES if hw.fp8_dispatch else ACT_BYTES
    a2a = all_to_all_seconds(hw, tokens * cf, cfg.top_k, d * dispatch, layout.ep)
    a2a += all_to_all_seconds(hw, tokens * cf, cfg.top_k, d * ACT_BYTES, layout.ep)  # the combine
    if layout.etp > 1 and hw.etp_link is not None:  # gather what the group received, scatter it back
        gathered = layout.etp * routed_bytes
        etp = hw.etp_link.seconds("all_gather", gathered, layout.etp)
        etp += hw.etp_link.seconds("reduce_scatter", gathered, layout.etp)
        fwd.add("ep", etp)
        bwd.add("ep", etp)
    return (a2a, a2a), shared


def all_to_all_seconds(hw: Hardware, tokens: float, top_k: int, bytes_per_token: float, ep: int) -> float:
    """One dispatch (or combine) of `tokens` tokens routed to top_k experts each over ep ranks.
    Plain routing sends every routed copy (sizing.parallel.links, all-to-all). Node-limited
    routing (`routed_groups` M; DeepSeek-V3 sec. 3.2.2: at most 4 nodes per token, sent once over
    InfiniBand to the same-index GPU of each node, then forwarded over NVLink; DeepSeek-V2 sec.
    2.2.3: at most M = 3 devices) sends each token once per group: across nodes M (N - 1) / N
    copies leave through the rank's NIC (N nodes in the ep group) while the k copies move over
    NVLink inside the target nodes, the two overlapped; inside a node M (ep - 1) / ep copies.
    NCCL's all-to-all moves its bytes `a2a_slowdown` times slower than dedicated dispatch kernels,
    which run at the link model's bandwidth (sizing/data/step_time.json "moe")."""
    link = hw.ep_link
    if ep <= 1:
        return 0.0
    if not hw.routed_groups:
        latency = link.latency("all_to_all", ep)
        moved = link.seconds("all_to_all", tokens * top_k * bytes_per_token, ep) - latency
        return latency + moved * hw.a2a_slowdown
    nvlink = (link.nvlink_gbs or link.gbs) * 1e9
    if link.name == "network" and link.nic_gbs:
        nodes = -(-ep // max(1, link.members_per_node))
        inter = tokens * min(hw.routed_groups, nodes) * (nodes - 1) / nodes * bytes_per_token / (link.nic_gbs * 1e9)
        intra = tokens * top_k * bytes_per_token / nvlink
        return link.latency("all_to_all", ep) + max(inter, intra)
    copies = min(hw.routed_groups, top_k, ep) * (ep - 1) / ep
    return link.latency("all_to_all", ep) + tokens * copies * bytes_per_token / nvlink


def ep_exposed(hw: Hardware, fwd: Times, bwd: Times, a2a: tuple[float, float], shared: tuple[float, float]) -> None:
    """Add the all-to-alls to the "ep" kind as the stack overlaps them (see the module)."""
    if hw.ep_overlap == "paired":
        compute = sum(p.by_kind.get(k, 0.0) for p in (fwd, bwd) for k in COMPUTE_KINDS)
        total = a2a[0] + a2a[1]
        hidden = min(total, compute)
        steal = hidden * hw.comm_sms / hw.consts.sms  # the GEMMs beside it run on fewer SMs
        exposed = total - hidden + steal
        fwd.add("ep", exposed * a2a[0] / total if total else 0.0)
        bwd.add("ep", exposed * a2a[1] / total if total else 0.0)
        return
    for part, comm, under in ((fwd, a2a[0], shared[0]), (bwd, a2a[1], shared[1])):
        part.add("ep", max(0.0, comm - under) if hw.ep_overlap == "shared" else comm)
