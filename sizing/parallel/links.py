"""Collective time on a link, alpha + beta per message (Hockney's model, as NCCL's ring behaves).

t = alpha + wire_bytes / (bandwidth x bus share), with wire bytes those of the ring algorithm
(sizing.parallel.comms: all-reduce 2 (n-1)/n S, all-gather / reduce-scatter / all-to-all
(n-1)/n S, a send S). `bus share` is the bus bandwidth nccl-tests measure over the nominal
link (sizing/data/step_time.json), alpha the small-message latency of one call.

Which link: a group whose ranks sit in one node (stride x size <= GPUs per node) uses NVLink.
A group spanning nodes uses the network; NCCL runs one ring per NIC, so a group with r
members in each node moves r NICs' worth at once: bandwidth = network_gbs x r, never more than
NVLink (the DGX's eight NICs give an 8-GPU-per-node all-reduce ~8 x 25 GB/s on A100).

An all-to-all is not a ring: every rank sends (n - 1)/n of its buffer straight to the others,
the share bound for other nodes, (n - r)/n with r members per node, through its own NIC, the
rest over NVLink. Across nodes it therefore runs at one NIC per rank, not r of them
(`nic_gbs`): time = max(inter-node bytes / NIC, intra-node bytes / NVLink).

Latency (NCCL's own tuning model, src/graph/tuning.cc, ring algorithm, Simple protocol): a ring
collective over n ranks on `nodes` nodes takes base + (steps - inter) x hop(NVLink) + inter x
hop(network), with steps = n - 1 (all-gather, reduce-scatter) or 2 (n - 1) (all-reduce) and
inter = nodes - 1 (or twice that): a 512-rank ring pays ~3 ms per collective before a byte of
bandwidth, which is what makes FSDP's per-unit collectives of small models latency-bound at scale.
NCCL picks, by the same model, the algorithm that takes least time: its trees for all-reduce
(NCCL 2.4) and PAT for all-gather / reduce-scatter with one rank per node (NCCL 2.23) have latency
logarithmic in the ranks, base + 2 log2(n) network steps, which bounds the ring's there; an
all-gather or reduce-scatter with several ranks per node runs as a ring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.inputs import GPU
from sizing.parallel.comms import WIRE_BYTES
from sizing.parallel.stepdata import GpuConstants


@dataclass(frozen=True)
class Link:
    name: str  # nvlink or network
    gbs: float  # effective bus bandwidth, GB/s per direction
    latency_s: float
    nic_gbs: float = 0.0  # one rank's own NIC (network groups): what an all-to-all leaves a node through
    members_per_node: int = 1  # the group's ranks inside one node
    nvlink_gbs: float = 0.0
    hop_nvlink_s: float = 0.0  # NCCL ring latency per step inside a node
    hop_network_s: float = 0.0  # and per step across nodes

    def latency(self, kind: str, group: int) -> float:
        """NCCL's ring latency for `kind` over `group` ranks (see the module)."""
        local = max(1, min(self.members_per_node, group)) if self.name == "network" else group
        nodes = -(-group // local)
        steps, inter = group - 1, nodes - 1
        if kind == "all_reduce":
            steps, inter = 2 * steps, 2 * inter
        elif kind in ("send", "all_to_all"):
            steps, inter = 1, min(1, inter)
        ring = self.latency_s + (steps - inter) * self.hop_nvlink_s + inter * self.hop_network_s
        if kind == "all_reduce" or (self.name == "network" and local == 1):
            tree = self.latency_s + 2 * math.ceil(math.log2(group)) * max(self.hop_nvlink_s, self.hop_network_s)
            return min(ring, tree)
        return ring

    def seconds(self, kind: str, n_bytes: float, group: int, calls: int = 1) -> float:
        """`calls` collectives of `kind` with an S-byte buffer over `group` ranks."""
        if group <= 1 or calls <= 0 or n_bytes <= 0:
            return 0.0
        latency = self.latency(kind, group)
        if kind == "all_to_all" and self.name == "network" and self.nic_gbs:
            local = min(self.members_per_node, group)
            inter = n_bytes * (group - local) / group / (self.nic_gbs * 1e9)
            intra = n_bytes * (local - 1) / group / (self.nvlink_gbs * 1e9) if self.nvlink_gbs else 0.0
            return calls * (latency + max(inter, intra))
        wire = WIRE_BYTES[kind](int(n_bytes), group)
        return calls * (latency + wire / (self.gbs * 1e9))


def group_link(
    gpu: GPU,
    consts: GpuConstants,
    size: int,
    stride: int,
    gpus_per_node: int,
    nvlink_gbs: float | None = None,
    network_gbs: float | None = None,
) -> Link:
    """The link a group of `size` ranks `stride` apart uses (Megatron's rank order tp-cp-dp-pp)."""
    nvlink = (nvlink_gbs or gpu.nvlink_gbs or 0.0) * consts.nvlink_fraction
    hops = (consts.nccl_hop_nvlink_s, consts.nccl_hop_network_s)
    if size * stride <= gpus_per_node:
        return Link("nvlink", nvlink, consts.nccl_base_s, 0.0, size, nvlink, *hops)
    per_node = max(1, gpus_per_node // stride) if stride < gpus_per_node else 1
    nic = (network_gbs or gpu.network_gbs or 0.0) * consts.network_fraction
    network = nic * min(per_node, size)
    ring = min(network, nvlink) if nvlink else network
    return Link("network", ring, consts.nccl_base_s, nic, min(per_node, size), nvlink, *hops)
