"""Disaggregated serving: prefill and decode on separate pools of GPUs, sized for a rate and
SLOs as DistServe (Zhong et al., OSDI 2024, arXiv:2401.09670), Splitwise (Patel et al., ISCA
2024, arXiv:2311.18677) and NVIDIA Dynamo's planner do, beside co-located serving (capacity.py).

* A prefill instance (tp_p GPUs) runs prompts only, in rounds (rounds.py, idle when no prompt
  waits): its TTFT law. The KV cache of each prompt then moves to a decode instance:
  transfer = KV bytes of the prompt on one rank / (link bandwidth x bandwidth efficiency) + the
  link's latency, every rank sending its shard at once, not overlapped with the prefill
  (conservative: Splitwise and DistServe overlap it layer by layer). The link: NVLink inside a
  node or the network between nodes (the GPU table's per-GPU figures). The first token reaches
  the user from the decode instance, after the transfer (vLLM's disaggregated-prefill proxy):
  TTFT = prefill TTFT + transfer.
* A decode instance (tp_d GPUs) runs decodes only: the decoding population's law (load.py) with
  decode-only iterations (no prefill interference: the point of disaggregating), its TPOT law and
  the KV cache at the planning percentile.
* Each pool is sized on its own: n_p = ⌈R / (most requests/s one prefill instance serves within
  the TTFT SLO)⌉, n_d likewise for TPOT; GPUs = n_p·tp_p + n_d·tp_d, the P:D ratio n_p·tp_p :
  n_d·tp_d. Weights and KV dtypes are the same on both pools; every tp pair is searched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.serve.capacity import (
    SEARCH_KV_DTYPES,
    SEARCH_TP,
    SEARCH_WEIGHT_DTYPES,
    CapacityQuestion,
    invalid_tp,
    precision_rank,
    reject_reason,
)
from sizing.serve.load import ServingLoad
from sizing.serve.queueing import DiscreteLaw
from sizing.serve.replica import HEADROOM, largest_rate, replica_max_rate
from sizing.serve.rounds import PrefillSaturated, Rounds, prefill_rounds
from sizing.serve.work import kv_read_bytes_per_rank
from sizing.validate import require_choice

KV_LINKS = ("nvlink", "network")
LINK_LATENCY_SECONDS = {"nvlink": 10e-6, "network": 25e-6}  # NCCL small-message latency (sizing/data/step_time.json)


class DecodeOnlyLoad(ServingLoad):
    """A decode instance: iterations carry no prompt tokens."""

    def rounds(self, rate: float, n: int) -> Rounds:
        return Rounds(
            rate, self.cb.token_budget - n, self.prompts, True, lambda k: self.iteration_seconds(n, k), ((0, 1.0),)
        )


def kv_transfer_seconds(q: CapacityQuestion, tp: int, kv_dtype: str, prompt: int, link: str) -> float:
    """One prompt's KV cache from a prefill instance to a decode instance: each of the tp ranks
    sends its shard over its own link at once."""
    cfg, (_, bw_eff) = q.cfg, q.efficiencies
    gbs = q.gpu.nvlink_gbs if link == "nvlink" else q.gpu.network_gbs
    shard = kv_read_bytes_per_rank(cfg, prompt, 1, kv_dtype, tp, q.mla)
    return shard / (gbs * 1e9 * bw_eff) + LINK_LATENCY_SECONDS[link]


@dataclass(frozen=True)
class Pool:
    role: str  # "prefill" or "decode"
    tp: int
    weight_dtype: str
    kv_dtype: str
    max_rate: float | None  # requests/s one instance serves within its SLO
    instances: int | None
    why_not: str | None = None

    @property
    def gpus(self) -> int | None:
        return None if self.instances is None else self.instances * self.tp

    def to_dict(self) -> dict:
        return {**self.__dict__, "gpus": self.gpus}


def prefill_pool(q: CapacityQuestion, tp: int, wd: str, kv: str, link: str) -> Pool:
    cb = q.replica(tp, wd, kv)
    rejected = reject_reason(q, cb)
    if rejected is not None:
        return Pool("prefill", tp, wd, kv, None, None, f"{rejected[0]}: {rejected[1]}")
    load = ServingLoad(cb, q.mix)
    transfers = [kv_transfer_seconds(q, tp, kv, c.prompt, link) for c in q.mix.classes]

    def rounds(rate: float) -> Rounds | None:
        try:
            return prefill_rounds(rate, cb.token_budget, lambda k: load.iteration_seconds(0, k), load.prompts, False)
        except PrefillSaturated:
            return None

    def ok(rate: float) -> bool:
        r = rounds(rate)
        if r is None or q.slo_ttft is None:
            return r is not None
        late = sum(
            c.share * DiscreteLaw(r.ttft_points(c.prompt)).exceed(q.slo_ttft - t)
            for c, t in zip(q.mix.classes, transfers, strict=True)
        )
        return late <= 1 - q.percentile

    best = largest_rate(ok)
    if q.slo_ttft is None:
        best *= HEADROOM
    if best <= 0:
        return Pool("prefill", tp, wd, kv, None, None, "TTFT SLO: missed even at the lowest load (with the transfer)")
    return Pool("prefill", tp, wd, kv, best, math.ceil(q.rate / best))


def decode_pool(q: CapacityQuestion, tp: int, wd: str, kv: str) -> Pool:
    cb = q.replica(tp, wd, kv)
    rejected = reject_reason(q, cb)
    if rejected is not None:
        return Pool("decode", tp, wd, kv, None, None, f"{rejected[0]}: {rejected[1]}")
    limit = replica_max_rate(DecodeOnlyLoad(cb, q.mix), None, q.slo_tpot, q.percentile)
    if limit.max_rate is None:
        return Pool("decode", tp, wd, kv, None, None, f"{limit.binding}: {limit.why_not}")
    return Pool("decode", tp, wd, kv, limit.max_rate, math.ceil(q.rate / limit.max_rate))


@dataclass(frozen=True)
class DisaggPlan:
    link: str
    prefill: Pool | None
    decode: Pool | None
    rejected: tuple[Pool, ...]

    @property
    def gpus(self) -> int | None:
        return None if self.prefill is None or self.decode is None else self.prefill.gpus + self.decode.gpus

    @property
    def requests_per_second_per_gpu(self) -> float | None:
        """The pools in their fluid ratio: 1 / (tp_p / λ_p + tp_d / λ_d) (DistServe's per-GPU goodput)."""
        if self.gpus is None:
            return None
        return 1 / (self.prefill.tp / self.prefill.max_rate + self.decode.tp / self.decode.max_rate)

    def to_dict(self) -> dict:
        return {
            "kv_link": self.link,
            "gpus": self.gpus,
            "prefill_to_decode_gpus": None if self.gpus is None else [self.prefill.gpus, self.decode.gpus],
            "requests_per_second_per_gpu": self.requests_per_second_per_gpu,
            "prefill": None if self.prefill is None else self.prefill.to_dict(),
            "decode": None if self.decode is None else self.decode.to_dict(),
            "rejected": [p.to_dict() for p in self.rejected],
        }


def plan_disaggregated(
    q: CapacityQuestion,
    tps=SEARCH_TP,
    weight_dtypes=SEARCH_WEIGHT_DTYPES,
    kv_dtypes=SEARCH_KV_DTYPES,
    link: str = "network",
) -> DisaggPlan:
    """The fewest GPUs over the dtypes (both pools alike) and each pool's tp, then the least
    quantised."""
    require_choice("kv_link", link, KV_LINKS)
    best, rejected = None, []
    for wd in weight_dtypes:
        for kv in kv_dtypes:
            pools = {"prefill": [], "decode": []}
            for tp in tps:
                why = invalid_tp(q, tp)
                if why is not None:
                    continue
                for pool in (prefill_pool(q, tp, wd, kv, link), decode_pool(q, tp, wd, kv)):
                    (pools[pool.role] if pool.gpus is not None else rejected).append(pool)
            if pools["prefill"] and pools["decode"]:
                p = min(pools["prefill"], key=lambda x: (x.gpus, x.tp))
                d = min(pools["decode"], key=lambda x: (x.gpus, x.tp))
                key = (p.gpus + d.gpus, precision_rank(wd), precision_rank(kv))
                if best is None or key < best[0]:
                    best = (key, p, d)
    if best is None:
        return DisaggPlan(link, None, None, tuple(rejected))
    return DisaggPlan(link, best[1], best[2], tuple(rejected))
