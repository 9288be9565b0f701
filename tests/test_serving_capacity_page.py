"""The continuous-batching, capacity and load parts of reports/serving.md
(sizing/report/serving_capacity.py, serving_load.py): the capacity answer on p99 SLOs with its
derivation, the bf16-pinned answer, the throughput-vs-latency data (one curve per tp), the
latency-vs-rate curves, the calibration rows; built in-process, reports/ is not touched."""

from __future__ import annotations

import pytest

from sizing.report.serving_capacity import (
    CURVE_TPS,
    calibration_section,
    capacity_section,
    throughput_latency_data,
)
from sizing.report.serving_load import RATE_SHARES, latency_vs_rate_data, latency_vs_rate_section
from sizing.serve.published import PUBLISHED_SERVING


def test_capacity_section_states_the_answer_its_derivation_and_the_pinned_precision():
    text = capacity_section()
    assert "**answer: 5 replica(s) x (tp 1, pp 1), int4 weights, fp8 KV = 5 GPUs, $1.389/M output tokens" in text
    assert "replicas x tp 1 = 5 GPUs" in text
    assert "answer: 4 replica(s) x (tp 2, pp 1), bf16 weights, bf16 KV = 8 GPUs" in text
    assert "| tp x pp" in text


def test_throughput_vs_latency_has_one_rising_curve_per_tp():
    data = throughput_latency_data()
    assert list(data["series"]) == [f"tp {tp}" for tp in CURVE_TPS]
    for s in data["series"].values():
        assert s["concurrency"][0] == 1 and s["tpot_ms"] == sorted(s["tpot_ms"])
        assert s["tokens_per_second_per_gpu"] == sorted(s["tokens_per_second_per_gpu"])


@pytest.fixture(scope="module")
def load_data():
    return latency_vs_rate_data()


def test_latency_percentiles_rise_with_the_rate(load_data):
    assert load_data["rate"] == pytest.approx([s * load_data["saturation_rate"] for s in RATE_SHARES])
    for key in ("ttft_0.99_ms", "tpot_0.99_ms", "tpot_0.5_ms", "e2e_0.99_ms"):
        assert load_data[key] == sorted(load_data[key]), key
    for p50, p99 in zip(load_data["ttft_0.5_ms"], load_data["ttft_0.99_ms"], strict=True):
        assert p50 <= p99
    text = latency_vs_rate_section(load_data)
    assert text.count("\n|") == len(RATE_SHARES) + 2  # the header, its separator and one row per rate


def test_calibration_section_has_every_calibrated_row():
    fitted, unseen = calibration_section().split("Published rows the fit did not see")
    assert fitted.count("| h100-sxm") + fitted.count("| a100-80gb") + fitted.count("| h200") == len(PUBLISHED_SERVING)
    assert unseen.count("| yes") == 9 and unseen.count("| no") == 2  # test_serve_published_unseen.py (4 L40S rows)
