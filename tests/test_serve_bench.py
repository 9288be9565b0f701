"""The serving measurement hook (issue 14): reference_model/profile/serve_bench.py on CPU with a toy
model, a functional test of the code path only (never a performance figure), and the report
page's "not yet measured" until a CUDA run's JSON is committed as reports/serving-measured.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sizing.report.serving_page import measured_section
from sizing.serve.bench import MEASURED_FILE, MEASURED_HEADERS, SERVE_BENCH, measured_rows

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def functional(tmp_path_factory):
    pytest.importorskip("torch")
    from reference_model.profile.serve_bench import main

    out = tmp_path_factory.mktemp("serve") / MEASURED_FILE
    assert main(["--device", "cpu", "--tiny", "--out", str(out)]) == 0
    return out


def test_cpu_run_writes_a_functional_test_json(functional):
    data = json.loads(functional.read_text())
    assert data["functional_test_only"] and data["gpu"] is None and data["run"] == SERVE_BENCH.run
    assert [p["batch"] for p in data["points"]] == [1, 2]
    for p in data["points"]:
        assert p["ttft_seconds"] > 0 and p["decode_seconds"] > 0
        assert p["decode_tokens_per_second"] == pytest.approx(p["batch"] * (data["output"] - 1) / p["decode_seconds"])


def test_the_page_refuses_a_functional_test(functional):
    assert "**Not yet measured**" in measured_section(functional.parent)
    assert "holds a functional test" in measured_section(functional.parent)


def test_the_committed_page_says_not_yet_measured_until_a_gpu_run():
    page = (REPO / "reports" / "serving.md").read_text()
    measured = REPO / "reports" / MEASURED_FILE
    if measured.is_file() and not json.loads(measured.read_text()).get("functional_test_only"):
        assert "**Not yet measured**" not in page
    else:
        assert "**Not yet measured**: no GPU session has run it." in page


def test_measured_rows_set_each_point_beside_the_bound(functional):
    """The table code the first GPU run will use, fed the CPU run's points with a GPU key for the
    prediction side only: the ratios must be the measured figures over the predictions."""
    data = json.loads(functional.read_text()) | {"gpu": "h100-sxm"}
    rows = measured_rows(data)
    assert len(rows) == 2 and all(len(r) == len(MEASURED_HEADERS) for r in rows)
    assert rows[0][0] == "1" and rows[0][1] == f"{data['points'][0]['ttft_seconds'] * 1e3:.2f} ms"


def test_gpu_profile_script_runs_the_serving_benchmark():
    script = (REPO / "benchmarks" / "gpu_profile.sh").read_text()
    assert "python -m reference_model.profile.serve_bench --device cuda" in script and MEASURED_FILE in script
