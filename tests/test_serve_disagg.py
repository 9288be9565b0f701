"""Disaggregated serving (sizing/serve/disagg.py, `sizing serve --rate --disaggregated`): the KV
transfer's arithmetic, each pool sized on its own SLO, the P:D ratio and the per-GPU goodput."""

from __future__ import annotations

import math

import pytest

from sizing import get_preset
from sizing.serve.calibration import default_efficiencies
from sizing.serve.capacity import capacity_question, plan_capacity
from sizing.serve.disagg import kv_transfer_seconds, plan_disaggregated

L70 = get_preset("llama3-70b").config
L8 = get_preset("llama3-8b").config


def _question(cfg, rate, slo_ttft, slo_tpot):
    return capacity_question(
        cfg, rate, 1000, 200, "h100", slo_ttft, slo_tpot, 2.0, 8192, 16, None, None, "absorbed", 0.99, None, "bf16"
    )


def test_kv_transfer_arithmetic():
    q = _question(L70, 10, 1.0, 0.05)
    # llama3-70b, 1000 prompt tokens, bf16, tp 2: each rank holds 8 / 2 = 4 KV heads:
    # 2 (K, V) x 80 layers x 4 heads x 128 x 2 bytes x 1000 = 163,840,000 bytes per rank
    shard = 2 * 80 * 4 * 128 * 2 * 1000
    # H100's network link: 50 GB/s per GPU x the calibrated bandwidth efficiency (0.9), + 25 µs: 3.666 ms
    bw = default_efficiencies("h100-sxm")[1]
    assert kv_transfer_seconds(q, 2, "bf16", 1000, "network") == pytest.approx(shard / (50e9 * bw) + 25e-6)
    assert kv_transfer_seconds(q, 2, "bf16", 1000, "nvlink") == pytest.approx(shard / (450e9 * bw) + 10e-6)


@pytest.fixture(scope="module")
def split():
    q = _question(L8, 20, 0.5, 0.03)
    return q, plan_disaggregated(q, tps=(1, 2), weight_dtypes=("bf16",), kv_dtypes=("bf16",), link="nvlink")


def test_pools_are_sized_each_on_its_own(split):
    _, d = split
    p, dec = d.prefill, d.decode
    assert p.instances == math.ceil(20 / p.max_rate) and dec.instances == math.ceil(20 / dec.max_rate)
    assert d.gpus == p.instances * p.tp + dec.instances * dec.tp
    assert d.requests_per_second_per_gpu == pytest.approx(1 / (p.tp / p.max_rate + dec.tp / dec.max_rate))
    assert d.to_dict()["prefill_to_decode_gpus"] == [p.gpus, dec.gpus]


def test_compared_with_co_located_at_the_same_slos(split):
    _, d = split
    co = plan_capacity(L8, 20, 1000, 200, "h100", 0.5, 0.03, weight_dtypes=("bf16",), kv_dtypes=("bf16",), tps=(1, 2))
    best = co.best
    # a decode instance runs no prefill, so one serves more requests/s within the TPOT SLO than a co-located replica
    assert d.decode.max_rate > best.limit.max_rate
    assert d.gpus is not None and best.gpus is not None
