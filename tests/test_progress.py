"""Progress on long work (sizing/cli/progress.py): a click bar on stderr when it is a terminal,
nothing when it is piped or the output is JSON. The commands run here on a real pseudo-terminal
(os.openpty), so the bar is drawn exactly as a user sees it."""

import io
import os
import subprocess
import sys
import threading

import pytest

from sizing.cli.progress import Progress, progress_bar, progress_wanted

BIG_GRID = ["--set", "n_layers=8:128:1", "--set", "d_model=1024:16384:256", "--tokens", "1T,2T"]  # 14,762 points


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_only_on_a_terminal_and_never_for_json():
    assert progress_wanted("table", _Terminal()) and progress_wanted(None, _Terminal())
    assert not progress_wanted("json", _Terminal())
    assert not progress_wanted("table", io.StringIO())  # piped


def test_the_bar_counts_steps_and_keeps_notes_on_screen():
    screen = _Terminal()
    with progress_bar(3, "verify", "table", stream=screen) as bar:
        bar.advance(1, "params gpt2")
        bar.note("MISMATCH gpt2 (flops)")
        bar.advance(2, "flops gpt2")
    text = screen.getvalue()
    assert "verify" in text and "1/3" in text and "3/3" in text and "params gpt2" in text
    assert "\rMISMATCH gpt2 (flops)" in text and text.endswith("\n")


def test_quiet_when_piped_but_messages_still_said(capsys):
    piped = io.StringIO()
    with progress_bar(3, "report", "table", stream=piped) as bar:
        assert type(bar) is Progress
        bar.advance(1, "plots")
        bar.note("a progress note")
        bar.say("note: verification.md not written")  # a message, not progress: always shown
    assert piped.getvalue() == ""
    assert capsys.readouterr().err == "note: verification.md not written\n"


def _run_on_terminal(*args: str, timeout: float = 300) -> tuple[int, str, str]:
    """(exit code, stdout, what a terminal on stderr showed) of `python -m sizing ARGS`."""
    master, slave = os.openpty()
    env = {**os.environ, "COLUMNS": "100", "LINES": "30"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sizing", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    shown = []

    def read():  # drain the terminal while the command runs, so it never blocks on a full buffer
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the command closed its end
                return
            if not data:
                return
            shown.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=timeout)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, out.decode(), b"".join(shown).decode(errors="replace")


def test_sweep_shows_progress_on_a_terminal():
    code, out, terminal = _run_on_terminal("sweep", "-p", "llama2-7b", *BIG_GRID, "--format", "csv")
    assert code == 0
    assert "sweep" in terminal and "14762/14762" in terminal and "#" in terminal
    assert out.count("\n") == 14_762 + 1  # the rows, on stdout only


def test_sweep_is_quiet_when_piped_or_json():
    piped = subprocess.run(
        [sys.executable, "-m", "sizing", "sweep", "-p", "llama2-7b", *BIG_GRID, "--format", "csv"],
        capture_output=True,
        check=True,
    )
    assert piped.stderr == b""
    code, _out, terminal = _run_on_terminal("sweep", "-p", "llama2-7b", *BIG_GRID, "--format", "json")
    assert code == 0 and terminal == ""


def test_verify_shows_each_check_on_a_terminal():
    # (--format json keeps it quiet: progress_wanted, above; one torch start is enough here)
    pytest.importorskip("torch")
    code, out, terminal = _run_on_terminal("verify", "--params", "-p", "gpt2", "-p", "opt-125m")
    assert code == 0 and "all 2 check(s) on 2 model(s) match" in out
    assert "verify" in terminal and "2/2" in terminal


def test_verify_streams_a_mismatch_as_it_is_found(monkeypatch):
    """The CLI's loop over finished units (sizing/cli/verify.py `_run`): a failed check is
    written above the bar when it comes back, before the run ends."""
    pytest.importorskip("torch")
    import sizing.cli.verify as cli_verify
    from reference_model.verify import units as verify_units
    from reference_model.verify.check import CheckResult
    from sizing.inputs import PRESETS

    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    calls = []  # (model, what the terminal showed when its check began)

    def check(name, cfg, **options):
        calls.append((name, screen.getvalue()))
        return CheckResult("stand-in", name, ["x"], [[1]], ok=len(calls) > 1)  # the first to run fails

    models = [(n, PRESETS[n].config) for n in ("gpt2", "opt-125m")]
    results = cli_verify._run(verify_units.plan_units(models, {"stand-in": check}, {}, {}, {}), "table")
    (first, _), (_second, shown) = calls
    assert [r.model for r in results] == ["gpt2", "opt-125m"]  # the serial order, whichever ran first
    assert not next(r for r in results if r.model == first).ok
    assert f"MISMATCH {first} (stand-in)" in shown  # on screen before the second check began
