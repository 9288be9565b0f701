"""The continuous-batching and capacity parts of reports/serving.md (sizing/report/serving_capacity.py):
the capacity answer with its derivation, the throughput-vs-latency data (one curve per tp), the
calibration rows; built in-process, reports/ is not touched."""

from __future__ import annotations

from sizing.report.serving_capacity import (
    CURVE_TPS,
    calibration_section,
    capacity_section,
    throughput_latency_data,
)
from sizing.serve.published import PUBLISHED_SERVING


def test_capacity_section_states_the_answer_and_its_derivation():
    text = capacity_section()
    assert "**answer: 1 replica(s) x (tp 4, pp 1), fp8 weights, bf16 KV = 4 GPUs, $1.111/M output tokens" in text
    assert "⌈10 / 10.05⌉ = 1 replicas x tp 4 = 4 GPUs" in text
    assert "| tp x pp" in text


def test_throughput_vs_latency_has_one_rising_curve_per_tp():
    data = throughput_latency_data()
    assert list(data["series"]) == [f"tp {tp}" for tp in CURVE_TPS]
    for s in data["series"].values():
        assert s["concurrency"][0] == 1 and s["tpot_ms"] == sorted(s["tpot_ms"])
        assert s["tokens_per_second_per_gpu"] == sorted(s["tokens_per_second_per_gpu"])


def test_calibration_section_has_every_calibrated_row():
    fitted, unseen = calibration_section().split("Published rows the fit did not see")
    assert fitted.count("| h100-sxm") + fitted.count("| a100-80gb") + fitted.count("| h200") == len(PUBLISHED_SERVING)
    assert unseen.count("| yes") == 5 and unseen.count("| no") == 2  # tests/test_serve_published_unseen.py
