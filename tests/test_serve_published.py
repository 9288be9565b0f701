"""Published serving figures beside the roofline bound (sizing/serve/published.py): the bound
(efficiencies 1) is never below a published throughput, never above a published first-token
latency. The share of the bound reached is shown in reports/serving.md, not asserted: engines
differ."""

from __future__ import annotations

import pytest

from sizing.inputs.presets import PRESETS
from sizing.serve.published import PUBLISHED_SERVING, bound_for


@pytest.mark.parametrize("row", PUBLISHED_SERVING, ids=lambda r: f"{r.preset}-{r.gpu}-b{r.batch}-{r.prompt}x{r.output}")
def test_the_bound_is_never_beaten(row):
    assert row.preset in PRESETS and row.source
    bound = bound_for(row)
    if row.metric == "first-token latency ms":
        assert bound <= row.value
    else:
        assert bound >= row.value
