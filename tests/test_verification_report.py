"""reports/verification.md is what `sizing report --with-verification` writes today: a stale
page would claim agreement the code no longer has. (The checks themselves are asserted one by
one in test_reference_params, test_flop_verify and test_memory_probe; this only pins the page.)

The default run does not count again what other tests count: test_reference_params counts every
preset's parameters on meta and test_flop_verify the FLOPs, each asserting count == formula. It
checks the page against what the checks print when every count equals the formula (built from the
formulas alone: `counting.agreed_params`, `flop_verify.formula_check`), so a changed formula, or a
page showing a disagreement, fails it; the memory section, measured on toy models that no other
test covers for every family, is regenerated exactly. The full regeneration, every count included
(minutes on 2 cores), runs with `-m slow` (CI runs it)."""

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("pandas")

from reference_model.counting.params import verify_params
from reference_model.verify.flops import formula_check, verify_flops
from reference_model.verify.memory import verify_memory
from reference_model.verify.report import (
    FAMILY_PRESETS,
    _flops_table,
    _memory_section,
    _params_section,
)
from sizing.inputs.presets import PRESETS
from sizing.report import build as report

COMMITTED = Path(__file__).resolve().parents[1] / "reports" / report.VERIFICATION_FILE
STALE = "reports/verification.md is stale: run `sizing report --with-verification`"


@pytest.mark.slow
def test_verification_page_is_fresh_and_all_ok():
    fresh = report.verification_markdown(echo=lambda _line: None)
    assert fresh is not None
    assert "MISMATCH" not in fresh
    assert COMMITTED.read_text() == fresh, STALE


def test_verification_page_sections_are_fresh_and_all_ok():
    page = COMMITTED.read_text()
    assert "MISMATCH" not in page
    checks = len(PRESETS) + 2 * len(FAMILY_PRESETS)  # params on every preset; FLOPs and memory per family
    assert f"{checks} of {checks} checks match." in page, STALE
    params = {name: verify_params(name, preset.config, count=False) for name, preset in PRESETS.items()}
    assert "\n".join(_params_section(params)) in page, STALE
    memory = {name: verify_memory(name, PRESETS[name].config) for name in FAMILY_PRESETS}
    assert "\n".join(_memory_section(memory)) in page, STALE
    for name in FAMILY_PRESETS:
        agreed = verify_flops(name, PRESETS[name].config, check_fn=formula_check)
        assert f"### {name}: FLOPs by component (OK)\n\n{_flops_table(agreed)}\n" in page, f"{name}: {STALE}"
