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


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models: one intra-op thread is as fast, and far faster on a busy 2-core runner
    (spinning OpenMP workers); restored afterwards so other test modules are unaffected."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
