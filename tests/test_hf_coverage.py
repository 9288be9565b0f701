"""docs/coverage.md: every decoder, MoE, hybrid and vision-language model_type of the installed
transformers, sized natively, by the generic path, or refused with the reason (tools/hf_coverage.py).

The page must be fresh (re-rendered from tests/fixtures/hf_coverage.json), list every relevant type
of the installed transformers (the `test` extra pins it), and every natively sized type must still
equal transformers' own count: a release that changes a family's modeling code fails here until its
reader follows (CI runs this file; the whole table is rebuilt by the slow test).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE = json.loads((REPO / "tests" / "fixtures" / "hf_coverage.json").read_text())
ROWS = {row["model_type"]: row for row in FIXTURE["rows"]}


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


coverage = _load("hf_coverage")
render = _load("hf_coverage_render")


def test_the_page_is_fresh():
    page = render.render_markdown(FIXTURE["rows"], FIXTURE["transformers"], coverage.FIXUPS)
    assert (REPO / "docs" / "coverage.md").read_text() == page, "docs/coverage.md is stale: python tools/hf_coverage.py"


def test_no_native_type_drifts_in_the_recorded_table():
    drifted = [row["model_type"] for row in FIXTURE["rows"] if row["status"] == "native-drift"]
    assert drifted == []
    assert render.totals(FIXTURE["rows"])["native-exact"] >= 30
    assert all(row.get("reason") for row in FIXTURE["rows"] if row["status"] == "refused")


@pytest.fixture(scope="module")
def transformers():
    transformers = pytest.importorskip("transformers")
    assert transformers.__version__ == FIXTURE["transformers"], (
        f"transformers {transformers.__version__} is installed, the table is of {FIXTURE['transformers']}: "
        "run python tools/hf_coverage.py"
    )
    return transformers


def test_the_table_lists_every_relevant_model_type(transformers):
    assert set(coverage.relevant_model_types()) == set(ROWS)


def test_the_architecture_table_is_fresh(transformers):
    data = json.loads((REPO / "sizing" / "data" / "hf_architectures.json").read_text())
    assert data["transformers"] == transformers.__version__ and data["architectures"] == coverage.architectures()


NATIVE = sorted(t for t, row in ROWS.items() if row["status"] == "native-exact")


@pytest.mark.parametrize("model_type", NATIVE)
def test_native_types_equal_the_installed_transformers(transformers, model_type):
    """The drift check: transformers builds the type's config on the meta device now, and this tool's
    reader gives the same total."""
    from hf_meta.build import build_on_meta
    from hf_meta.count import count_params

    data = coverage.default_config(model_type)
    try:
        built = build_on_meta(data)
    except Exception as exc:  # Gemma 3n's vision tower is built through timm, not a dependency
        if "timm" in str(exc):
            pytest.skip("needs timm")
        raise
    counted = count_params(built.model, built.config).total
    assert counted == ROWS[model_type]["transformers_total"]
    assert coverage.native_total(data)[1] == counted


@pytest.mark.slow
def test_every_row_is_reproduced(transformers):
    """The whole table measured again (minutes): statuses, classes and counts as recorded."""
    for model_type in coverage.relevant_model_types():
        row = coverage.survey(model_type)
        if "timm" in row.get("reason", ""):
            continue
        assert row == ROWS[model_type]
