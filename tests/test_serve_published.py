"""Published serving figures beside the roofline bound (sizing/serve/published.py): the bound
(efficiencies 1) is never below a published throughput, never above a published first-token
latency. The share of the bound reached is shown in reports/serving.md, not asserted: engines
differ."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.inputs.presets import PRESETS
from sizing.serve.published import PUBLISHED_SERVING, TTFT_METRIC, bound_for, predicted, published_rows
from sizing.serve.roofline import NO_OVERHEAD, StepOverhead


@pytest.mark.parametrize("row", PUBLISHED_SERVING, ids=lambda r: f"{r.preset}-{r.gpu}-b{r.batch}-{r.prompt}x{r.output}")
def test_the_bound_is_never_beaten(row):
    assert row.preset in PRESETS and row.source
    bound = bound_for(row)
    if row.metric == "first-token latency ms":
        assert bound <= row.value
    else:
        assert bound >= row.value


ALL_ROWS = published_rows()


def beats(row, bound: float, value: float) -> bool:
    """True when `value` is on the wrong side of `bound` in the row's metric."""
    return value < bound if row.metric == TTFT_METRIC else value > bound


def test_no_serving_row_in_the_data_beats_its_bound():
    """Every row of sizing/data/published_serving.json, calibration and check alike (33 rows)."""
    assert len(ALL_ROWS) == 33
    assert not [r for r in ALL_ROWS if beats(r, bound_for(r), r.value)]


@pytest.mark.parametrize("row", [r for r in ALL_ROWS if r.kv_per_query_head][:3], ids=lambda r: f"{r.gpu}-b{r.batch}")
def test_the_bound_reads_each_kv_byte_once_not_the_engines_rereads(row):
    """A pre-v0.7 TensorRT-LLM GQA row re-reads its KV h / h_kv times (8 for Llama-2-70B); the
    bound is what any kernel could reach, so it reads each byte once and sits beyond the
    engine's own roofline at efficiencies 1."""
    assert row.kv_read_repeat() == 8  # 64 query heads / 8 KV heads
    engine_roofline = predicted(row, 1.0, 1.0, NO_OVERHEAD)
    assert bound_for(row) > engine_roofline  # throughput rows: the bound reaches further


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(ALL_ROWS),
    st.floats(0.05, 1.0),
    st.floats(0.05, 1.0),
    st.floats(0, 500e-6),
)
def test_no_efficiency_or_overhead_beats_the_bound(row, compute, bandwidth, step_overhead):
    """The bound is at the datasheet dense peak and bandwidth with no overhead: any efficiency at
    or below 1 and any non-negative per-layer overhead predicts a figure on its side."""
    overhead = StepOverhead(prefill=step_overhead, step=step_overhead)
    value = predicted(row, compute, bandwidth, overhead)
    slack = 1e-9 if row.metric != TTFT_METRIC else -1e-9  # float rounding only
    assert not beats(row, bound_for(row) * (1 + slack), value)
