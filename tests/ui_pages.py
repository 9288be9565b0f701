"""Helpers of the browser tests of `sizing ui` (the fixtures are in tests/conftest.py): the
system Chromium, waiting for an answer, the numbers a page shows, overflow, axe-core and the
screenshots docs/ui.md shows.

Playwright's own browser download is never used: `executable_path` is Debian's Chromium. The
browser tests skip without it on a developer machine, and must run in CI (CI=true)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
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
TIMEOUT_MS = 120_000  # a busy 2-core runner is slow
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def require_browser() -> None:
    """Skip the module on a machine without Chromium, except in CI, where it must run."""
    if not os.environ.get("CI"):
        if not Path(CHROMIUM).exists():
            pytest.skip(f"no {CHROMIUM} (the browser tests run in CI)", allow_module_level=True)
        pytest.importorskip("playwright.sync_api")


def watch(page) -> list[str]:
    """Failures the page reports: page errors, console errors (a 400's is an expected bad input)
    and any HTTP response of 500 or more."""
    failures: list[str] = []
    page.on("pageerror", lambda exc: failures.append(f"page error: {exc}"))
    page.on("response", lambda r: r.status >= 500 and failures.append(f"{r.status} {r.url}"))
    page.on(
        "console",
        lambda m: (
            m.type == "error"
            and "status of 400" not in m.text
            and m.location.get("url")
            and failures.append(f"{m.text} ({m.location})")
        ),
    )
    return failures


def settle(page) -> None:
    """Wait until the page's last question (and its charts) have come back. (Every wait here is a
    function, never an expression: the page's CSP forbids the eval Playwright uses for one.)"""
    page.wait_for_selector("body[data-state=done]", state="attached")


def open_page(page, server, query: str = "") -> None:
    from sizing.ui.server import url_of

    page.goto(url_of(server) + query)
    settle(page)


def page_query(page) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(page.url).query, keep_blank_values=True)


def cards(page) -> list[dict]:
    """The answer cards as drawn: label, JSON path, exact value, unit and the text shown."""
    return page.eval_on_selector_all(
        "#cards .card",
        "cs => cs.map(c => ({label: c.querySelector('.label').textContent, path: c.dataset.path,"
        " value: JSON.parse(c.dataset.value), unit: c.dataset.unit, text: c.querySelector('.value').textContent,"
        " band: c.querySelector('.band') ? JSON.parse(c.querySelector('.band').dataset.band) : null}))",
    )


def table(page, table_id: str) -> dict[str, object]:
    """{row key: exact value} of a two-column table the page drew (each cell carries its JSON value)."""
    return page.eval_on_selector(
        f"#{table_id}",
        "t => Object.fromEntries([...t.tBodies[0].rows]"
        ".map(r => [r.dataset.key, JSON.parse(r.cells[1].dataset.value)]))",
    )


def overflow(page) -> int:
    """Pixels the page is wider than the window (0: no horizontal scroll)."""
    return page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


def serious_axe_violations(page) -> list[str]:
    """axe-core's serious and critical violations of the page as it is (axe-playwright-python)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def shown_number(text: str) -> float:
    """The number a formatted value shows: '6.74 B' -> 6.74e9, '127 GiB' -> 127 * 2^30, '161 ms' -> 0.161,
    '1 × 10²⁴ FLOPs' -> 1e24, '59.3%' -> 0.593, '$4.56' -> 4.56."""
    import re

    sup = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
    text = text.replace(",", "").replace("$", "").strip()
    power = re.match(r"^([\d.]+) × 10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", text)
    if power:
        return float(power.group(1)) * 10 ** int(power.group(2).translate(sup))
    number, _, rest = text.partition(" ")
    if number.endswith("%"):
        return float(number[:-1]) / 100
    if number.endswith("×"):
        return float(number[:-1])
    scale = {"k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24,
             "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "B/s": 1, "µs": 1e-6, "ms": 1e-3, "s": 1,
             "min": 60, "h": 3600, "MWh": 1e3, "kWh": 1}  # fmt: skip
    unit = rest.split(" ")[0] if rest else ""
    return float(number) * scale.get(unit, 1)


def save_screenshot(page, path: Path, full_page: bool = False) -> None:
    """A small PNG: the screenshot in 64 colours (Pillow), optimised."""
    from PIL import Image

    data = page.screenshot(full_page=full_page)
    image = Image.open(io.BytesIO(data)).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, optimize=True)


def as_json(value):
    return json.loads(json.dumps(value))


def act(page, action) -> None:
    """Do something that asks a new question, then wait for its answer (or error)."""
    before = page.evaluate("document.body.dataset.seq || '0'")
    action()
    page.wait_for_function(
        "seq => document.body.dataset.state === 'done' && document.body.dataset.seq !== seq", arg=before
    )
