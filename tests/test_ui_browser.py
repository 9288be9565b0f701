"""`sizing ui` in a real browser: Debian's Chromium driven by Playwright. Each flow reads the
numbers the page shows and asserts they equal the API's answer for the same request, and the API
equals `--format json` (tests/test_ui_api.py), so a change to any number breaks one of them.

Skipped on a machine without /usr/bin/chromium, except in CI (CI=true), where it must run.
Playwright's own browser download is never used (`executable_path` is the system Chromium).
With SIZING_UI_SCREENSHOT=PATH the README's screenshot is written to PATH (docs/ui.md says when).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from test_ui_api import static_digest

from sizing.ui.api import ENDPOINTS, answer, fits_by_gpu
from sizing.ui.server import make_server, url_of

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
HF_CONFIG = ROOT / "tests" / "fixtures" / "hf_configs" / "Qwen__Qwen2-0.5B.json"
STATIC = ROOT / "sizing" / "ui" / "static"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 120_000  # the fit list asks all 16 GPUs; a busy 2-core runner is slow

if not os.environ.get("CI"):  # in CI a missing browser or Playwright is a failure, not a skip
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no {CHROMIUM} (the browser tests run in CI)", allow_module_level=True)
    pytest.importorskip("playwright.sync_api")
from playwright.sync_api import sync_playwright  # noqa: E402  (after the skip: absent on a bare machine)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    srv = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


@pytest.fixture(scope="module")
def chromium_browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def ui_page(chromium_browser):
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    failures = []
    tab.on("pageerror", lambda exc: failures.append(f"page error: {exc}"))
    tab.on("response", lambda r: r.status >= 500 and failures.append(f"{r.status} {r.url}"))
    # a 400 (bad input) is part of a flow; anything else the console reports is a failure
    tab.on("console", lambda m: m.type == "error" and "status of 400" not in m.text and failures.append(m.text))
    yield tab
    context.close()
    assert not failures


def settle(ui_page):
    """Wait until the page's last question, its chart and its fit list have all come back."""
    ui_page.wait_for_selector("body[data-state=done]", state="attached")


def open_page(ui_page, server, query: str = ""):
    ui_page.goto(url_of(server) + query)
    settle(ui_page)


def page_pairs(ui_page) -> tuple[str, list[tuple[str, str]]]:
    """The tab and the request pairs the page's URL holds (the page sends the same)."""
    pairs = parse_qsl(urlsplit(ui_page.url).query, keep_blank_values=True)
    tab = dict(pairs)["tab"]
    has_config = any(k == "config_text" for k, _ in pairs)
    kept = []
    for key, value in pairs:
        if key == "tab" or (key == "preset" and has_config):
            continue
        kept.append(("preset" if key == "with" else key, value))
    return tab, kept


def table(ui_page, table_id: str) -> dict[str, object]:
    """{row key: exact value} of a table the page drew (each cell carries its JSON value)."""
    return ui_page.eval_on_selector(
        f"#{table_id}",
        "t => Object.fromEntries([...t.tBodies[0].rows]"
        ".map(r => [r.dataset.key, JSON.parse(r.cells[1].dataset.value)]))",
    )


def leaves(value, prefix=""):
    """The page's flattening of an answer (app.js leaves()): dotted path -> scalar."""
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        out = {}
        for key, item in items:
            out |= leaves(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    return {prefix: value}


def assert_page_equals_api(ui_page):
    """Every number of the page's answer, its command and verdict equal the API's for the page's request."""
    tab, pairs = page_pairs(ui_page)
    expected = answer(tab, pairs)
    assert table(ui_page, "all-numbers") == leaves(expected["result"])
    assert ui_page.inner_text("#command") == expected["command"]
    assert ui_page.get_attribute("#verdict", "data-fits") == json.dumps(expected["verdict"])
    breakdown = leaves(expected["result"])
    for key, value in table(ui_page, "breakdown").items():
        path = key.split(" (")[0]
        if path in breakdown:
            assert value == breakdown[path], key
    return tab, pairs, expected


@pytest.mark.parametrize("tab", ENDPOINTS)
def test_every_tab_shows_the_api_numbers(ui_page, server, tab):
    open_page(ui_page, server, f"?tab={tab}")
    assert ui_page.get_attribute(f"#tabs button[data-tab={tab}]", "class") == "active"
    _, pairs, _ = assert_page_equals_api(ui_page)
    assert ui_page.locator("#formulas tbody tr").count() > 0
    assert ui_page.eval_on_selector("#chart", "c => c.width > 0 && !!Chart.getChart(c)")
    # serve also draws its roofline: the prefill and the first decode step at FLOPs / seconds
    roofline = ui_page.eval_on_selector("#chart2", "c => Chart.getChart(c)?.data.datasets.map(d => d.data[0].y)")
    if tab == "serve":
        result = answer(tab, pairs)["result"]
        prefill, step = result["prefill"], result["decode"]["first_step"]
        assert roofline[1:] == [prefill["flops"] / prefill["seconds"], step["flops"] / step["seconds"]]
    else:
        assert roofline is None and not ui_page.is_visible("#chart2")
    fits = [row["gpu"] for row in fits_by_gpu(tab, pairs) if row["fits"]]
    assert json.loads(ui_page.get_attribute("#fit-gpus", "data-gpus")) == fits


def test_pick_a_preset_and_read_the_exact_total(ui_page, server):
    open_page(ui_page, server)
    ui_page.select_option("#preset", "llama3-8b")
    settle(ui_page)
    # llama3-8b: 8,030,261,248 parameters (Meta's model card: 8.03B; tests/test_params.py)
    assert table(ui_page, "breakdown")["params.total"] == 8_030_261_248
    assert ui_page.inner_text("#breakdown tr[data-key='params.total'] td.num") == "8,030,261,248"
    assert_page_equals_api(ui_page)
    # the training FLOPs run past 2^53: shown and compared as the exact integer
    flops = answer("estimate", [("preset", "llama3-8b")])["result"]["training"]["flops"]
    assert isinstance(flops, str) and table(ui_page, "breakdown")["training.flops"] == flops


def test_changing_the_gpu_flips_the_verdict(ui_page, server):
    open_page(ui_page, server, "?tab=memory&preset=llama2-7b")
    assert ui_page.get_attribute("#verdict", "data-fits") == "false"  # 126.6 GiB on an 80 GiB A100
    ui_page.select_option("#options select[name=gpu]", "h200")
    settle(ui_page)
    assert ui_page.get_attribute("#verdict", "data-fits") == "true"  # 141 GB H200
    assert ui_page.inner_text("#verdict").startswith("Fits on h200")
    assert_page_equals_api(ui_page)


def test_paste_a_config(ui_page, server):
    open_page(ui_page, server)
    ui_page.fill("#config_text", HF_CONFIG.read_text())
    ui_page.click("#run")
    settle(ui_page)
    assert table(ui_page, "breakdown")["params.total"] == 494_032_768  # Qwen2-0.5B, tests/fixtures/hf_counts.json
    assert ui_page.inner_text("#command") == "sizing estimate --config config.json --format json"
    assert_page_equals_api(ui_page)


def test_bad_input_shows_the_cli_message(ui_page, server):
    open_page(ui_page, server)
    ui_page.fill("#options input[name=seq-len]", "-3")
    ui_page.click("#run")
    settle(ui_page)
    assert ui_page.is_visible("#error") and not ui_page.is_visible("#answer")
    assert (
        ui_page.inner_text("#error") == "Error: --seq-len (-3) must be a positive integer (at most 1,099,511,627,776)"
    )


def test_a_link_reproduces_the_page(ui_page, server, chromium_browser):
    open_page(ui_page, server, "?tab=serve")
    ui_page.fill("#set", "n_layers=40")
    ui_page.fill("#options input[name=batch]", "16")
    ui_page.select_option("#options select[name=gpu]", "h100-sxm")
    settle(ui_page)
    link = ui_page.get_attribute("#permalink", "href")
    assert link == urlsplit(ui_page.url).path + "?" + urlsplit(ui_page.url).query
    numbers = table(ui_page, "all-numbers")
    other = chromium_browser.new_page()
    other.set_default_timeout(TIMEOUT_MS)
    other.goto(url_of(server) + link.lstrip("/"))
    settle(other)
    assert other.input_value("#set") == "n_layers=40"
    assert other.input_value("#options input[name=batch]") == "16"
    assert table(other, "all-numbers") == numbers
    assert assert_page_equals_api(other)[1][:2] == [("preset", "llama2-7b"), ("set", "n_layers=40")]
    other.close()


def test_compare_two_models(ui_page, server):
    open_page(ui_page, server, "?tab=compare&preset=llama2-7b")
    ui_page.select_option("#compare_with", ["mistral-7b"])
    settle(ui_page)
    _, _, expected = assert_page_equals_api(ui_page)
    assert [row["model"] for row in expected["result"]["rows"]] == ["llama2-7b", "mistral-7b"]
    breakdown = table(ui_page, "breakdown")
    assert breakdown["llama2-7b: params_total"] == 6_738_415_616
    assert breakdown["mistral-7b: params_total"] == 7_241_732_096


def test_screenshot(ui_page, server):
    """The README's picture: written with SIZING_UI_SCREENSHOT=PATH, with the hash of the files
    it shows beside it; tests/test_ui_api.py checks that hash against the files."""
    target = os.environ.get("SIZING_UI_SCREENSHOT")
    if not target:
        pytest.skip("set SIZING_UI_SCREENSHOT=docs/img/ui.png to write the README's screenshot")
    ui_page.set_viewport_size({"width": 1280, "height": 1150})
    open_page(ui_page, server, "?tab=memory&preset=llama3-8b&seq-len=4096&zero=3&dp=8&gpu=h100-sxm")
    ui_page.screenshot(path=target)
    Path(target + ".sha256").write_text(static_digest() + "\n")
