"""`sizing ui` in a real browser (Debian's Chromium driven by Playwright): every question answers
with the CLI's numbers and passes axe-core at desktop and phone size; the page's state behaves
(options persist across questions and in the link, incompatible choices are disabled, a pasted
config replaces the preset, an error keeps the last answer and marks its field); long work shows
progress and can be cancelled; the serving roofline is per GPU. The journeys people bring are in
tests/test_ui_journeys.py; the fixtures (one server, one browser) in tests/conftest.py.

With SIZING_UI_SCREENSHOT=PATH the README's screenshot is written to PATH (docs/ui.md says when).
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from ui_pages import (
    PHONE,
    ROOT,
    act,
    cards,
    open_page,
    overflow,
    page_query,
    require_browser,
    save_screenshot,
    serious_axe_violations,
    settle,
    table,
)

from sizing.cli import main
from sizing.ui.api import ENDPOINTS, js_safe
from sizing.ui.cards import get
from sizing.ui.fields import leaves

require_browser()
pytestmark = pytest.mark.browser

QWEN = ROOT / "tests" / "fixtures" / "hf_configs" / "Qwen__Qwen2-0.5B.json"


def cli_of_page(page):
    """The CLI's JSON for the command line the page shows (the question it asked)."""
    args = shlex.split(page.text_content("#command"))[1:]
    out = CliRunner().invoke(main, args)
    assert out.exit_code in (0, 3), out.output
    return js_safe(json.loads(out.stdout))


def assert_page_is_the_cli(page):
    expected = cli_of_page(page)
    for card in cards(page):
        assert card["value"] == get(expected, card["path"]), card
    assert table(page, "all-numbers") == dict(leaves(expected))
    return expected


@pytest.mark.parametrize("tab", [*ENDPOINTS, "browse"])
def test_every_question_answers_and_passes_axe(ui_page, ui_server, tab):
    open_page(ui_page, ui_server, f"?tab={tab}")
    assert ui_page.get_attribute(f"#tabs [data-tab='{tab}']", "aria-selected") == "true"
    assert not ui_page.is_visible("#error"), ui_page.inner_text("#error")
    if tab != "browse":
        assert cards(ui_page), tab  # the numbers asked for come first
        assert_page_is_the_cli(ui_page)
    assert serious_axe_violations(ui_page) == []
    to_phone(ui_page)
    assert overflow(ui_page) == 0


@pytest.mark.slow
@pytest.mark.parametrize("tab", [*ENDPOINTS, "browse"])
def test_every_question_passes_axe_on_a_phone(ui_page, ui_server, tab):
    ui_page.set_viewport_size(PHONE)
    open_page(ui_page, ui_server, f"?tab={tab}")
    assert overflow(ui_page) == 0
    assert serious_axe_violations(ui_page) == []


def to_phone(page) -> None:
    """390 px wide, once the charts have followed the new width (Chart.js resizes on a ResizeObserver)."""
    page.set_viewport_size(PHONE)
    page.wait_for_function("() => window.innerWidth === 390")
    page.wait_for_function("() => document.scrollingElement.scrollWidth <= window.innerWidth")


def test_options_persist_across_questions_and_in_the_link(ui_page, ui_server, chromium_browser):
    open_page(ui_page, ui_server, "?tab=estimate&preset=llama3-8b")
    act(ui_page, lambda: ui_page.select_option("#opt-gpu", "h200"))
    act(ui_page, lambda: ui_page.click("#tabs [data-tab=memory]"))
    assert ui_page.input_value("#opt-gpu") == "h200" and ui_page.input_value("#preset") == "llama3-8b"
    assert ("gpu", "h200") in page_query(ui_page) and ("tab", "memory") in page_query(ui_page)
    assert assert_page_is_the_cli(ui_page)["gpu"] == "h200"
    other = chromium_browser.new_page()
    other.goto(ui_page.url)
    settle(other)
    assert other.input_value("#opt-gpu") == "h200"
    assert table(other, "all-numbers") == table(ui_page, "all-numbers")
    other.close()


def test_a_choice_that_rules_options_out_disables_them(ui_page, ui_server):
    """finetune=full, then Inference: the training options are disabled with the reason, not an error."""
    open_page(ui_page, ui_server, "?tab=memory&preset=llama3-8b")
    act(ui_page, lambda: ui_page.select_option("#opt-finetune", "full"))
    act(ui_page, lambda: ui_page.check("#opt-inference"))
    assert not ui_page.is_visible("#error")
    assert ui_page.is_disabled("#opt-finetune") and ui_page.is_disabled("#opt-zero")
    assert "Applies only without Inference" in ui_page.inner_text("[data-key=finetune] .why")
    assert not ui_page.is_disabled("#opt-kv-dtype")
    command = ui_page.text_content("#command")
    assert "--inference" in command and "--finetune" not in command
    assert "kv_cache_bytes" in assert_page_is_the_cli(ui_page)


def test_a_rate_disables_what_the_capacity_plan_sets(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=serve&preset=llama3-8b")
    assert ui_page.is_disabled("#opt-slo-ttft") and not ui_page.is_disabled("#opt-batch")
    act(ui_page, lambda: (ui_page.fill("#opt-rate", "5"), ui_page.press("#opt-rate", "Enter")))
    assert ui_page.is_disabled("#opt-gpus") and ui_page.is_disabled("#opt-batch")
    assert not ui_page.is_disabled("#opt-slo-ttft") and not ui_page.is_disabled("#opt-tp")  # tp narrows the search
    assert {c["path"] for c in cards(ui_page)} >= {"best.gpus", "best.replicas"}
    assert_page_is_the_cli(ui_page)


def test_a_pasted_config_replaces_the_preset(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=estimate&preset=llama2-7b")
    ui_page.check("input[name=source][value=paste]")
    assert not ui_page.is_visible("#preset")  # the dropdown's model is not the one asked about
    act(ui_page, lambda: (ui_page.fill("#config_text", QWEN.read_text()), ui_page.locator("#config_text").blur()))
    assert ui_page.inner_text("#model-name") == "Model: Pasted config.json: qwen2"
    assert ui_page.text_content("#command") == "sizing estimate --config config.json --format json"
    by_path = {c["path"]: c["value"] for c in cards(ui_page)}
    assert by_path["params.total"] == 494_032_768  # Qwen2-0.5B, tests/fixtures/hf_counts.json


def test_an_error_keeps_the_last_answer_and_marks_the_field(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=estimate&preset=llama2-7b")
    before = cards(ui_page)
    act(ui_page, lambda: (ui_page.fill("#opt-seq-len", "-3"), ui_page.press("#opt-seq-len", "Enter")))
    message = "Error: --seq-len (-3) must be a positive integer (at most 1,099,511,627,776)"
    assert ui_page.inner_text("#error") == message
    assert ui_page.get_attribute("#opt-seq-len", "aria-invalid") == "true"
    assert ui_page.inner_text("[data-key=seq-len] .field-error") == message.removeprefix("Error: ")
    assert cards(ui_page) == before and ui_page.is_visible("#stale-note")  # the last answer, marked as such
    act(ui_page, lambda: (ui_page.fill("#opt-seq-len", "2048"), ui_page.press("#opt-seq-len", "Enter")))
    assert not ui_page.is_visible("#error") and ui_page.get_attribute("#opt-seq-len", "aria-invalid") is None
    assert get(assert_page_is_the_cli(ui_page), "flops.seq_len") == 2048


def test_long_work_shows_progress_clears_old_charts_and_can_be_cancelled(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=estimate&preset=llama2-7b")
    held = []
    ui_page.route("**/api/parallel", lambda route: held.append(route))  # the answer never comes until released
    ui_page.click("#tabs [data-tab=parallel]")
    ui_page.wait_for_selector("#progress:not([hidden])")
    assert ui_page.is_visible("#cancel") and ui_page.get_attribute("#answer", "aria-busy") == "true"
    assert ui_page.eval_on_selector_all(".chart-box", "bs => bs.every(b => b.hidden)")  # the last question's charts
    assert ui_page.is_visible("#stale-note")
    ui_page.click("#cancel")
    ui_page.wait_for_selector("body[data-outcome=cancelled][data-state=done]", state="attached")
    assert ui_page.inner_text("#progress-text") == "Cancelled."
    for route in held:
        route.abort()
    ui_page.unroute("**/api/parallel")
    act(ui_page, lambda: ui_page.click("#run"))
    assert ui_page.get_attribute("body", "data-outcome") == "answer"
    assert_page_is_the_cli(ui_page)


def test_the_serving_roofline_is_per_gpu(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=serve&preset=llama3-70b&tp=4&prompt=2048&output=256")
    r = cli_of_page(ui_page)
    per_replica = r["settings"]["gpus"] / r["settings"]["replicas"]
    datasets = ui_page.eval_on_selector(
        "#chart2", "c => Chart.getChart(c).data.datasets.map(d => ({label: d.label, y: d.data.map(p => p.y)}))"
    )
    by_label = {d["label"].split(",")[0].split(":")[0]: d["y"] for d in datasets}
    prefill, step = r["prefill"], r["decode"]["first_step"]
    assert by_label["prefill"] == [int(prefill["flops"]) / prefill["seconds"] / per_replica]
    assert by_label["first decode step"] == [int(step["flops"]) / step["seconds"] / per_replica]
    # no point above one GPU's roof (the old chart drew the 4 GPUs' FLOP/s against one GPU's peak)
    assert max(by_label["prefill"] + by_label["first decode step"]) <= r["peak_flops_per_second"]
    assert any(d["label"].startswith("roofline of one") for d in datasets)  # every reference line in the legend
    assert any(d["label"].startswith("ridge point") for d in datasets)


def test_the_questions_are_reachable_by_keyboard(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=estimate")
    ui_page.focus("#tabs [data-tab=estimate]")
    act(ui_page, lambda: ui_page.keyboard.press("ArrowRight"))
    assert ui_page.get_attribute("#tabs [data-tab=memory]", "aria-selected") == "true"
    assert ui_page.evaluate("document.activeElement.dataset.tab") == "memory"
    labelled = ui_page.eval_on_selector_all(
        "#options input, #options select",
        "xs => xs.every(x => x.labels.length > 0 && x.getAttribute('aria-describedby'))",
    )
    assert labelled


def test_compare_two_models(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=compare&preset=llama2-7b")
    act(ui_page, lambda: ui_page.select_option("#compare_with", ["mistral-7b"]))
    expected = assert_page_is_the_cli(ui_page)
    assert [row["model"] for row in expected["rows"]] == ["llama2-7b", "mistral-7b"]
    by_path = {c["path"]: c["value"] for c in cards(ui_page)}
    assert (by_path["rows.0.params_total"], by_path["rows.1.params_total"]) == (6_738_415_616, 7_241_732_096)


def test_browse_presets_and_gpus(ui_page, ui_server):
    open_page(ui_page, ui_server, "?tab=browse")
    ui_page.fill("#browse-filter", "mixtral")
    names = ui_page.eval_on_selector_all("#preset-table tbody tr", "rs => rs.map(r => r.dataset.name)")
    assert names == ["mixtral-8x7b", "mixtral-8x22b"]
    act(ui_page, lambda: ui_page.click("#preset-table button:text('mixtral-8x7b')"))
    assert ui_page.get_attribute("#tabs [data-tab=estimate]", "aria-selected") == "true"
    assert ui_page.input_value("#preset") == "mixtral-8x7b"
    assert_page_is_the_cli(ui_page)


def test_screenshot(ui_page, ui_server):
    """The README's picture: written with SIZING_UI_SCREENSHOT=PATH, with the hash of the files
    it shows beside it; tests/test_ui_api.py checks that hash against the files."""
    target = os.environ.get("SIZING_UI_SCREENSHOT")
    if not target:
        pytest.skip("set SIZING_UI_SCREENSHOT=docs/img/ui.png to write the README's screenshot")
    from test_ui_api import static_digest

    open_page(ui_page, ui_server, "?tab=parallel&preset=llama3-70b&gpus=2048&tokens=15T")
    save_screenshot(ui_page, Path(target))
    Path(target + ".sha256").write_text(static_digest() + "\n")
