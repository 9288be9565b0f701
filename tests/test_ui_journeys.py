"""The questions people bring to `sizing ui`, walked in Chromium as a person would: each journey
asks from the page (a link, or typing into it), then its answer cards must equal the CLI's JSON
for the same question (`sizing ... --format json`, run here), each card's text must be its value
in human units, the page must pass axe-core with no serious or critical violation, and it must
not scroll sideways at desktop size or at 390 px. A console error or an HTTP 5xx fails the test.

With SIZING_UI_SCREENSHOTS=docs/img/ui each journey writes its two screenshots there (desktop
and 390 px), which docs/ui.md shows, and the hash of the page's files beside them.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from ui_pages import (
    DESKTOP,
    PHONE,
    ROOT,
    act,
    cards,
    open_page,
    overflow,
    require_browser,
    save_screenshot,
    serious_axe_violations,
    shown_number,
)

from sizing.cli import main
from sizing.ui.api import js_safe
from sizing.ui.cards import get
from sizing.ui.verdict import verdict

require_browser()
pytestmark = pytest.mark.browser

QWEN = ROOT / "tests" / "fixtures" / "hf_configs" / "Qwen__Qwen2-0.5B.json"
LLAMA31 = ROOT / "tests" / "fixtures" / "hf_configs" / "meta-llama__Llama-3.1-8B.json"
SHOTS = os.environ.get("SIZING_UI_SCREENSHOTS")


def cli_json(args: list[str]):
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    assert out.exit_code in (0, 3), out.output
    return js_safe(json.loads(out.stdout))


def choose_qlora(page):
    assert page.locator("#advice li").count() > 1  # it does not fit: the answer says what would
    page.select_option("#opt-finetune", "qlora")


def paste(page):
    page.check("input[name=source][value=paste]")
    page.fill("#config_text", QWEN.read_text())
    page.locator("#config_text").dispatch_event("change")


def hub_id(page):
    page.check("input[name=source][value=hub]")
    page.fill("#hub", "meta-llama/Llama-3.1-8B")
    page.locator("#hub").dispatch_event("change")


# name: (the page's link, what the person then does, the CLI's arguments, cards that must be there)
JOURNEYS = {
    "training-budget": (
        "?tab=estimate&preset=llama3-8b&tokens=15T&gpus=1024&price=2.5",
        None,
        ["estimate", "--preset", "llama3-8b", "--tokens", "15T", "--gpus", "1024", "--price", "2.5"],
        {"params.total", "training.tokens", "training.gpu_hours", "training.wall_clock_days", "training.cost_usd",
         "training.energy_kwh"},
    ),
    "fit-on-one-gpu": (
        "?tab=memory&preset=llama3-8b&gpu=h100-sxm",
        choose_qlora,
        ["memory", "--preset", "llama3-8b", "--gpu", "h100-sxm", "--finetune", "qlora"],
        {"per_gpu_bytes", "step_seconds"},
    ),
    "layout-2048-gpus": (
        "?tab=parallel&preset=llama3-70b&gpus=2048&tokens=15T",
        None,
        ["parallel", "--preset", "llama3-70b", "--gpus", "2048", "--tokens", "15T"],
        {"layout_label", "step_seconds", "mfu", "wall_clock_days", "per_gpu_bytes"},
    ),
    "capacity-for-a-rate": (
        "?tab=serve&preset=llama3-8b&prompt=1024&output=256&rate=10&slo-ttft=2s&slo-tpot=50ms",
        None,
        ["serve", "--preset", "llama3-8b", "--prompt", "1024", "--output", "256", "--rate", "10", "--slo-ttft", "2s",
         "--slo-tpot", "50ms"],
        {"best.gpus", "best.replicas", "best.usd_per_million_output_tokens", "best.at_load.ttft_seconds.p99"},
    ),
    "quantized-on-one-gpu": (
        "?tab=memory&preset=llama3-8b&inference=1&quant=q4_k_m&gpu=rtx4090",
        None,
        ["memory", "--preset", "llama3-8b", "--inference", "--quant", "q4_k_m", "--gpu", "rtx4090"],
        {"peak_bytes", "weights_bytes", "kv_cache_bytes", "max_batch"},
    ),
    "pasted-config": (
        "?tab=estimate&tokens=2T",
        paste,
        ["estimate", "--config", str(QWEN), "--tokens", "2T"],
        {"params.total", "training.gpu_hours"},
    ),
    "hub-id": (
        "?tab=estimate&tokens=15T",
        hub_id,
        ["estimate", "--config", "meta-llama/Llama-3.1-8B", "--tokens", "15T"],
        {"params.total", "training.gpu_hours"},
    ),
    "hybrid-long-context": (
        "?tab=hybrid&preset=jamba-v0.1&context=262144&gpu=h200",
        None,
        ["hybrid", "--preset", "jamba-v0.1", "--context", "262144", "--gpu", "h200"],
        {"memory_bytes.total", "memory_bytes.all_attention_total", "fit.max_batch_at_context"},
    ),
    "vision-language": (
        "?tab=vision&preset=qwen2.5-vl-7b&images=2&image-size=1080x1920",
        None,
        ["vision", "--preset", "qwen2.5-vl-7b", "--images", "2", "--image-size", "1080x1920"],
        {"params.total", "image_tokens_per_image", "prefill_flops"},
    ),
}  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def offline_hub(tmp_path_factory):
    """The server reads hub ids from a Hugging Face cache built here (tests/test_hub.py's layout), offline."""
    from test_hub import _cache

    root = tmp_path_factory.mktemp("hub")
    _cache(root, "meta-llama/Llama-3.1-8B", LLAMA31)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_CACHE", str(root))
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield


def assert_cards_are_the_cli(page, args, wanted):
    expected = cli_json(args)
    shown = cards(page)
    assert wanted <= {c["path"] for c in shown}, [c["path"] for c in shown]
    for card in shown:
        value = get(expected, card["path"])
        assert card["value"] == value, card
        if card["unit"] == "text" or (isinstance(value, str) and not value.lstrip("-").isdigit()):
            assert card["text"] == str(value), card
        else:  # the value in its unit, to the 3 significant digits shown
            assert shown_number(card["text"]) == pytest.approx(float(value), rel=6e-3), card
    return expected


@pytest.mark.parametrize("name", list(JOURNEYS))
def test_journey(ui_page, ui_server, name):
    link, action, args, wanted = JOURNEYS[name]
    open_page(ui_page, ui_server, link)
    if action is not None:
        act(ui_page, lambda: action(ui_page))
    assert not ui_page.is_visible("#error"), ui_page.inner_text("#error")
    expected = assert_cards_are_the_cli(ui_page, args, wanted)
    command = shlex.split(ui_page.text_content("#command"))
    sent = sorted(command[2:-2]) if "--config" not in args else None
    assert sent is None or sent == sorted(args[1:]), (command, args)  # the page asked the same question
    fits = verdict(args[0], expected)
    assert ui_page.get_attribute("#verdict", "data-fits") == json.dumps(fits)
    assert overflow(ui_page) == 0
    assert serious_axe_violations(ui_page) == []
    shoot(ui_page, name, "desktop")
    ui_page.set_viewport_size(PHONE)
    settle_width(ui_page)
    assert overflow(ui_page) == 0
    shoot(ui_page, name, "390")
    ui_page.set_viewport_size(DESKTOP)


def settle_width(page) -> None:
    """After a resize, wait (up to 3 s) for the charts to follow the new width (Chart.js resizes on
    a ResizeObserver); the overflow is asserted after it either way."""
    page.wait_for_function("() => window.innerWidth === 390")
    try:
        page.wait_for_function("() => document.scrollingElement.scrollWidth <= window.innerWidth", timeout=3000)
    except Exception:  # the assertion after it says what is wrong
        pass


def shoot(page, name: str, size: str) -> None:
    """docs/img/ui/<journey>-<size>.png: at desktop the window as it opens; at 390 px the answer's top."""
    if not SHOTS:
        return
    if size == "390":
        page.evaluate("document.getElementById('answer').scrollIntoView()")
    else:
        page.evaluate("window.scrollTo(0, 0)")
    save_screenshot(page, Path(SHOTS) / f"{name}-{size}.png")
    from test_ui_api import static_digest

    (Path(SHOTS) / "journeys.sha256").write_text(static_digest() + "\n")


def test_the_journey_pictures_are_the_docs():
    """docs/ui.md shows every journey's two screenshots, and each is in docs/img/ui/."""
    text = (ROOT / "docs" / "ui.md").read_text()
    for name in JOURNEYS:
        for size in ("desktop", "390"):
            picture = f"img/ui/{name}-{size}.png"
            assert picture in text and (ROOT / "docs" / picture).exists(), picture
