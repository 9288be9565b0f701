"""Communication per GPU per training step, by collective and by parallel dimension, and its
time on the GPU's links.

Ring algorithms (Patarasuk & Yuan 2009; what NCCL's bus bandwidth measures): over n ranks, an
all-reduce of S bytes sends 2 (n - 1)/n S per GPU, an all-gather or reduce-scatter whose full
buffer is S sends (n - 1)/n S, an all-to-all of S bytes per rank sends (n - 1)/n S, a
point-to-point send sends S. Time = bytes sent / link bandwidth (GB/s = 10^9 bytes/s, per
direction): the group's link is NVLink when it fits in one node (`nvlink_gbs`), else the
network (`network_gbs`, one NIC per GPU), both from sizing/inputs/hardware.py unless overridden.

These functions are small and public so that other commands (serving's tensor-parallel
all-reduce) can share them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.vocabulary import ceil_div


# ---------------------------------------------------------------- bytes on the wire
def all_reduce_wire_bytes(n_bytes: int, n: int) -> int:
    """Ring all-reduce: reduce-scatter then all-gather, 2 (n - 1)/n x S per GPU."""
    return ceil_div(2 * (n - 1) * n_bytes, n) if n > 1 else 0


def all_gather_wire_bytes(full_bytes: int, n: int) -> int:
    """Ring all-gather of a buffer of S bytes in all (S/n per rank): (n - 1)/n x S per GPU."""
    return ceil_div((n - 1) * full_bytes, n) if n > 1 else 0


def reduce_scatter_wire_bytes(full_bytes: int, n: int) -> int:
    """Ring reduce-scatter of an S-byte input: (n - 1)/n x S per GPU."""
    return all_gather_wire_bytes(full_bytes, n)


def all_to_all_wire_bytes(n_bytes: int, n: int) -> int:
    """All-to-all of S bytes per rank (uniform): each GPU keeps 1/n and sends (n - 1)/n x S."""
    return ceil_div((n - 1) * n_bytes, n) if n > 1 else 0


def transfer_seconds(wire_bytes: int, gbs: float) -> float:
    """Seconds to send `wire_bytes` at `gbs` GB/s (10^9 bytes/s)."""
    return wire_bytes / (gbs * 1e9)


def ring_all_reduce_seconds(n_bytes: int, n: int, gbs: float) -> float:
    return transfer_seconds(all_reduce_wire_bytes(n_bytes, n), gbs)


def ring_all_gather_seconds(full_bytes: int, n: int, gbs: float) -> float:
    return transfer_seconds(all_gather_wire_bytes(full_bytes, n), gbs)


def ring_reduce_scatter_seconds(full_bytes: int, n: int, gbs: float) -> float:
    return transfer_seconds(reduce_scatter_wire_bytes(full_bytes, n), gbs)


def all_to_all_seconds(n_bytes: int, n: int, gbs: float) -> float:
    return transfer_seconds(all_to_all_wire_bytes(n_bytes, n), gbs)


def p2p_seconds(n_bytes: int, gbs: float) -> float:
    return transfer_seconds(n_bytes, gbs)


WIRE_BYTES = {
    "all_reduce": all_reduce_wire_bytes,
    "all_gather": all_gather_wire_bytes,
    "reduce_scatter": reduce_scatter_wire_bytes,
    "all_to_all": all_to_all_wire_bytes,
    "send": lambda n_bytes, n: n_bytes,
}


@dataclass(frozen=True)
class Collective:
    """One kind of collective of one parallel dimension in a training step, on one GPU."""

    dimension: str  # dp, tp, pp, cp, ep
    kind: str  # all_reduce, all_gather, reduce_scatter, all_to_all, send
    what: str  # what it moves
    count: int  # calls per step
    bytes_per_call: int  # the collective's buffer S (full size; a send's message)
    group: int  # ranks in the group
    link: str  # nvlink or network
    gbs: float  # bandwidth used, GB/s

    @property
    def bytes_per_step(self) -> int:
        return self.count * self.bytes_per_call

    @property
    def wire_bytes_per_step(self) -> int:
        return self.count * WIRE_BYTES[self.kind](self.bytes_per_call, self.group)

    @property
    def seconds_per_step(self) -> float:
        return transfer_seconds(self.wire_bytes_per_step, self.gbs)

    def to_dict(self) -> dict:
        return {
            "dimension": self.dimension,
            "collective": self.kind,
            "what": self.what,
            "count": self.count,
            "bytes_per_call": self.bytes_per_call,
            "bytes_per_step": self.bytes_per_step,
            "wire_bytes_per_step": self.wire_bytes_per_step,
            "group": self.group,
            "link": self.link,
            "gbs": self.gbs,
            "seconds_per_step": self.seconds_per_step,
        }
