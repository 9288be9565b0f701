"""`sizing report`: the committed reports/ is fresh, published runs cite sources, writes are
atomic, and importing the CLI stays light. The reports are generated once per module."""

import re
import struct
import subprocess
import sys
import types
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("pandas")
pytest.importorskip("tabulate")
pytest.importorskip("matplotlib")

from sizing.cli import main
from sizing.inputs import published as pub
from sizing.inputs.presets import PRESETS
from sizing.report import build as report
from sizing.report.files import png_text, stale_files, write_atomic, write_bytes_atomic

REPORTS = Path(__file__).resolve().parents[1] / "reports"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """{relative path: bytes} of a fresh run, written to a temporary folder like `sizing report`."""
    out = tmp_path_factory.mktemp("reports")
    steps = []  # what `sizing report`'s progress bar is told, one step at a time
    written = report.write_reports(out, existing_dir=REPORTS, echo=lambda _line: None, on_step=steps.append)
    assert len(steps) == report.report_steps() and steps[-1] == "README.md"  # the index last, every job before
    return {rel: (out / rel).read_bytes() for rel in written}


def test_committed_reports_are_fresh(fresh):
    stale = stale_files(fresh, REPORTS, report.MANAGED_DIRS, report.png_equivalent)
    assert not stale, "reports/ is stale; regenerate with `sizing report` and commit:\n" + "\n".join(stale)


def test_every_file_is_generated(fresh):
    assert {"README.md", "conventions.md", "published-runs.md"} <= set(fresh)
    assert {f"presets/{name}.md" for name in PRESETS} <= set(fresh)
    assert {"plots/attention-share.png", "plots/gpu-hours.png"} <= set(fresh)
    readme = fresh["README.md"].decode()
    for name in PRESETS:
        assert f"(presets/{name}.md)" in readme
    assert "full attention" in readme and "MFU 0.4" in readme


def test_the_pages_checked_before_the_build_are_written_by_it(fresh):
    assert set(report.KNOWN_PAGES) <= set(fresh)


def test_check_lists_stale_files(fresh, tmp_path, monkeypatch):
    for rel, data in fresh.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    monkeypatch.setattr(report, "build_reports", lambda *args, **kwargs: dict(fresh))  # no second generation
    runner = CliRunner()
    result = runner.invoke(main, ["report", "--check", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output

    (tmp_path / "conventions.md").write_text("hand-edited\n")
    (tmp_path / "plots" / "gpu-hours.png").unlink()
    (tmp_path / "presets" / "old-model.md").write_text("# gone\n")
    result = runner.invoke(main, ["report", "--check", "--out", str(tmp_path)])
    assert result.exit_code == 1
    for line in ("conventions.md: differs", "plots/gpu-hours.png: missing"):
        assert line in result.output
    assert "old-model.md" not in result.output  # hand-written: the report leaves it alone, so does --check


def _table_rows(markdown: str) -> list[dict]:
    """Rows of every pipe table, as {header: cell}."""
    rows, lines = [], markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1]) <= set("|:- "):
            headers = [h.strip() for h in line.strip("|").split("|")]
            for body in lines[i + 2 :]:
                if not body.startswith("|"):
                    break
                rows.append(dict(zip(headers, [c.strip() for c in body.strip("|").split("|")], strict=True)))
    return rows


def test_published_runs_cite_a_source_and_a_difference(fresh):
    text = fresh["published-runs.md"].decode()
    rows = _table_rows(text.split("## Step time:")[0])  # the step-time section's tables: the next test
    runs = pub.GPT3_TABLE_D1 + pub.LLAMA_GPU_HOURS + pub.LLAMA3_GPU_HOURS + pub.OTHER_RUNS
    assert len(rows) >= len(runs)
    notes = dict(re.findall(r"^\[\^(\d+)\]: (.+)$", text, flags=re.MULTILINE))  # the footnotes at the end
    for row in rows:
        first = next(iter(row.values()))
        marker = re.search(r" \[\^(\d+)\]$", first)
        assert marker and notes.get(marker.group(1)), row  # every row cites a source in a footnote
        assert "source" not in row  # no wide source column any more
        assert row["difference"].rstrip().endswith("%") or "%" in row["difference"], row
    named = {re.sub(r" \[\^\d+\]$", "", row.get("model") or row.get("run")) for row in rows}
    assert {"GPT-3 175B", "LLaMA-65B", "Llama-2-70B", "Chinchilla-70B", "PaLM-540B", "OPT-175B", "BLOOM-176B"} <= named
    assert {"Llama-3-8B", "Llama-3-70B", "Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B"} <= named
    for run in runs:  # each run's source text is one of the footnotes
        assert run["source"] in notes.values(), run["model"]


def test_published_runs_list_every_step_time_run_with_error_and_band(fresh):
    """The per-operation step model's section: the cross-validated error per source and overall, then
    every published run with its error, its leave-one-source-out error and its band, citing its source."""
    text = fresh["published-runs.md"].decode()
    section = text.split("## Step time:")[1].split("## Sources")[0]
    rows = _table_rows(section)
    summary = [r for r in rows if "CV median abs. error" in r and "source" in r]
    kinds = {r["kind"]: r["runs"] for r in rows if "CV median abs. error" in r and "kind" in r}
    runs = [r for r in rows if "band" in r]
    assert summary[-1]["source"] == "all" and summary[-1]["runs"] == "336"
    assert kinds == {"dense": "275", "mixture of experts": "61"}
    assert len(runs) == 336
    notes = dict(re.findall(r"^\[\^(\d+)\]: (.+)$", text, flags=re.MULTILINE))
    for row in runs:
        marker = re.search(r" \[\^(\d+)\]$", row["run"])
        assert marker and notes.get(marker.group(1)), row
        assert row["error"].endswith("%") and row["CV error"].endswith("%") and " s (" in row["band"], row


def test_llama31_405b_implied_mfu():
    """The model card's 30.84M H100-80GB GPU-hours for 15.6T tokens: 6ND is the paper's 3.8e25
    within its rounding (two digits), and implies an MFU of about 35% of the 989 TFLOP/s bf16 peak."""
    from sizing.formulas.flops import kaplan_6n_per_token
    from sizing.formulas.params import active_params
    from sizing.inputs.hardware import get_gpu
    from sizing.inputs.presets import get_preset
    from sizing.training.cost import implied_mfu

    run = next(r for r in pub.LLAMA3_GPU_HOURS if r["model"] == "Llama-3.1-405B")
    six_nd = kaplan_6n_per_token(active_params(get_preset(run["preset"]).config)) * run["tokens"]
    assert six_nd == pytest.approx(run["flops"], rel=0.005)  # 3.8e25 has two significant digits
    peak = get_gpu(run["gpu"]).peak_flops_per_second("bf16")
    assert implied_mfu(six_nd, run["gpu_hours"], peak) == pytest.approx(0.346, abs=0.001)


def test_bloom_count_is_reproduced():
    from sizing.formulas.params import param_components, total_params
    from sizing.inputs.presets import get_preset

    run = next(r for r in pub.OTHER_RUNS if r["model"] == "BLOOM-176B")
    cfg = get_preset(run["preset"]).config
    assert total_params(cfg) == 176_247_271_424  # HF bigscience/bloom model card, embedding LayerNorm included
    assert {c.key: c.count for c in param_components(cfg)}["emb_norm"] == 2 * 14336


def test_published_figures_match_reference(reference_figures):
    runs = {r["model"]: r for r in reference_figures["training_runs"]}
    for ours in pub.GPT3_TABLE_D1 + pub.LLAMA_GPU_HOURS + pub.OTHER_RUNS:
        ref = runs[ours["model"]]
        assert ours["tokens"] == ref["tokens"], ours["model"]
        for key in ("flops", "gpu_hours"):
            if key in ours:
                assert ours[key] == ref[key], (ours["model"], key)
        assert ours["source"].split(" - ")[0].split(";")[0] in ref["source"], ours["model"]
        if "reported_mfu" in ours:
            assert f"{ours['reported_mfu'] * 100:.1f}%" in ref["reported_mfu"]
        if "reported_tflops_per_gpu" in ours:
            assert str(ours["reported_tflops_per_gpu"]) in ref["reported_mfu"]
    table = {row["name"]: row for row in reference_figures["gpt3_table"]}
    for ours in pub.GPT3_TABLE_D1:
        ref = table[ours["model"]]
        assert (ours["params_millions"], ours["pf_days"], ours["flops"]) == (
            ref["d1_params_millions"],
            ref["d1_total_compute_pf_days"],
            ref["d1_total_compute_flops"],
        )


def test_atomic_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "sheet.md"
    target.write_text("old\n")

    def failing_writer(handle):
        handle.write(b"half of the new")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_atomic(target, failing_writer)
    assert target.read_text() == "old\n"
    with pytest.raises(RuntimeError):
        write_atomic(tmp_path / "new.md", failing_writer)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheet.md"]  # no temp file, no new.md
    write_bytes_atomic(target, b"new\n")
    assert target.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["sheet.md"]


def _png(**text) -> bytes:
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    body = b"".join(chunk(b"tEXt", f"{k}\0{v}".encode("latin-1")) for k, v in text.items())
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IEND", b"")


def test_png_comparison():
    a = _png(Description="data sha256 1", Source="matplotlib 3.9")
    assert png_text(a) == {"Description": "data sha256 1", "Source": "matplotlib 3.9"}
    assert report.png_equivalent(a, _png(Description="data sha256 1", Source="matplotlib 3.10")) is None
    changed = _png(Description="data sha256 2", Source="matplotlib 3.10")
    assert report.png_equivalent(a, changed) == "plotted data changed"
    assert report.png_equivalent(a, _png(Description="data sha256 1", Source="matplotlib 3.9") + b"x")


def test_index_links_verification_only_when_present():
    from sizing.report.index import render_index

    assert "verification.md" not in render_index([], has_verification=False)
    assert "[verification.md](verification.md)" in render_index([], has_verification=True)


def test_verification_page_wraps_the_reference_model_text(monkeypatch):
    verify_report = types.ModuleType("reference_model.verify.report")
    verify_report.verification_report_markdown = lambda: "# Verification\n\nall good"
    package = types.ModuleType("reference_model")
    verify = types.ModuleType("reference_model.verify")  # the package lends the page's function
    verify.verification_report_markdown = verify_report.verification_report_markdown
    package.verify = verify
    monkeypatch.setitem(sys.modules, "reference_model", package)
    monkeypatch.setitem(sys.modules, "reference_model.verify", verify)
    monkeypatch.setitem(sys.modules, "reference_model.verify.report", verify_report)
    text = report.verification_markdown(lambda _line: None)
    assert "`sizing report --with-verification`" in text and text.endswith("all good\n")


def test_verification_page_without_torch_is_a_note(monkeypatch):
    notes = []
    monkeypatch.setitem(sys.modules, "reference_model.verify.report", None)  # import fails, as without torch
    assert report.verification_markdown(notes.append) is None
    assert report.VERIFICATION_FILE in notes[0] and "needs torch" in notes[0]


def test_import_sizing_cli_stays_light():
    code = (
        "import sys, sizing.cli; print([m for m in ('pandas', 'numpy', 'matplotlib', 'tabulate') if m in sys.modules])"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_issue_34_item_24_the_readmes_command_leaves_reports_as_committed(fresh, tmp_path, monkeypatch):
    """Issue 34 item 24: `sizing report` as the README says it (no --with-verification), run in a
    copy of the repository's reports/, rewrote the tracked manifest (it dropped verification.md,
    which only --with-verification rebuilds). Now every byte stays as committed."""
    import shutil

    copy = tmp_path / "reports"
    shutil.copytree(REPORTS, copy)
    monkeypatch.setattr(report, "build_reports", lambda *args, **kwargs: dict(fresh))  # the build once per module
    result = CliRunner().invoke(main, ["report", "--out", str(copy)])
    assert result.exit_code == 0, result.output
    committed = {p.relative_to(REPORTS): p.read_bytes() for p in REPORTS.rglob("*") if p.is_file()}
    assert {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()} == committed


def test_the_jobs_give_the_same_files_forked_or_here(monkeypatch):
    """sizing/report/jobs.py: the pages built in forked processes are the bytes built here (two
    cheap jobs of the real ones; `fork_is_safe` forced, since this test process may hold torch)."""
    from sizing.report import jobs

    monkeypatch.setattr(jobs, "JOBS", tuple(j for j in jobs.JOBS if j[1] in (jobs._pages, jobs._hybrid)))
    monkeypatch.setattr(jobs, "fork_is_safe", lambda: True)
    here = dict(jobs.run_jobs(None, workers=1))
    forked = dict(jobs.run_jobs(None, workers=2))
    assert set(here) == {label for label, _ in jobs.JOBS} and here == forked
