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


# ---- `sizing ui` in a browser (tests/test_ui_browser.py, tests/test_ui_journeys.py): one server and
# one Chromium for the whole session, a fresh context per test (tests/ui_pages.py has the helpers)
@pytest.fixture(scope="session")
def ui_server():
    import threading

    from sizing.ui.server import make_server

    srv = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


@pytest.fixture(scope="session")
def chromium_browser():
    from playwright.sync_api import sync_playwright
    from ui_pages import CHROMIUM, LAUNCH_ARGS

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def ui_page(chromium_browser):
    """A page at desktop size that fails its test on a page error, a console error (other than a
    400's, which a bad-input flow expects) or an HTTP 5xx."""
    from ui_pages import TIMEOUT_MS, watch

    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    failures = watch(page)
    yield page
    context.close()
    assert not failures
