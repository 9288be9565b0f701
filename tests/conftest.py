import json
import os
from pathlib import Path

# One intra-op thread for every torch test, set before anything imports torch (subprocesses
# inherit it): the models here are tiny, and on a shared 2-core runner OpenMP's spinning workers
# cost more than they give (measured under load: tests/test_serve_reference.py 14.5 CPU s with
# 2 threads, 2.9 with 1). A value set by the caller is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

REPO = Path(__file__).resolve().parents[1]
# A copy of the project's seed file of published figures (architectures, GPT-3 Table D.1,
# training runs, GPU peaks), each entry with its source. Kept in the repository so that a
# plain clone tests the code's tables (sizing/inputs/published.py, sizing/inputs/hardware.py, presets)
# against it; refresh it from shared/reference-figures.json when that file changes.
REFERENCE_FIGURES = REPO / "tests" / "fixtures" / "reference-figures.json"


@pytest.fixture(scope="session")
def reference_figures():
    return json.loads(REFERENCE_FIGURES.read_text())


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models: one intra-op thread is as fast, and far faster on a busy 2-core runner
    (spinning OpenMP workers); restored afterwards so other test modules are unaffected."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
