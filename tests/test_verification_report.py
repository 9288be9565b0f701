"""reports/verification.md is what `sizing report --with-verification` writes today: a stale
page would claim agreement the code no longer has. (The checks themselves are asserted one by
one in test_reference_params, test_flop_verify and test_memory_probe; this only pins the page.)"""

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("pandas")

from sizing.report import build as report

COMMITTED = Path(__file__).resolve().parents[1] / "reports" / report.VERIFICATION_FILE


def test_verification_page_is_fresh_and_all_ok():
    fresh = report.verification_markdown(echo=lambda _line: None)
    assert fresh is not None
    assert "MISMATCH" not in fresh
    assert COMMITTED.read_text() == fresh, "reports/verification.md is stale: run `sizing report --with-verification`"
