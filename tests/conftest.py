import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _reference_figures_path() -> Path:
    """../shared/reference-figures.json beside the checkout (CI lays shared/ next to the clone)."""
    for candidate in (REPO.parent / "shared" / "reference-figures.json", REPO / "shared" / "reference-figures.json"):
        if candidate.exists():
            return candidate
    return Path()


@pytest.fixture(scope="session")
def reference_figures():
    path = _reference_figures_path()
    if not path.is_file():
        pytest.skip("../shared/reference-figures.json not present")
    return json.loads(path.read_text())
