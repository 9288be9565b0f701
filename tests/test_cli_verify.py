"""`sizing verify`: formula vs reference model from the command line."""

import json
import sys

import pytest
from click.testing import CliRunner

from sizing.cli import main


def _run(*args):
    return CliRunner().invoke(main, ["verify", *args])


def test_verify_registered_without_importing_torch():
    # registration imports sizing.cli_verify, which must not pull torch in
    assert "verify" in main.list_commands(None)
    import sizing.cli.verify as module

    assert "torch" not in vars(module)


def test_without_torch_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    result = _run("--params", "--preset", "gpt2")
    assert result.exit_code == 2
    assert "pip install 'transformer-sizing[verify]'" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_params_two_presets_match():
    pytest.importorskip("torch")
    result = _run("--params", "--preset", "gpt2", "--preset", "mixtral-8x7b")
    assert result.exit_code == 0, result.output
    assert "gpt2: params OK" in result.output and "mixtral-8x7b: params OK" in result.output
    header = result.output.splitlines()[1].split()
    assert header[:4] == ["component", "formula", "counted", "difference"]
    assert "46,702,792,704" in result.output  # mixtral-8x7b total
    assert "all 2 check(s) on 2 model(s) match" in result.output


def test_no_flag_runs_every_check_and_json_parses():
    pytest.importorskip("torch")
    result = _run("--preset", "gpt2", "--set", "n_layers=2", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] is True
    assert [r["check"] for r in data["results"]] == ["params", "flops", "memory"]
    entry = next(r for r in data["results"] if r["check"] == "params")
    assert entry["check"] == "params" and entry["model"] == "gpt2 (n_layers=2)"
    rows = {r["component"]: r for r in entry["rows"]}
    assert rows["attn.q"]["formula"] == rows["attn.q"]["counted"] == 2 * (768 * 768 + 768)
    assert all(r["difference"] == 0 for r in entry["rows"])


def test_markdown_format():
    pytest.importorskip("torch")
    result = _run("--params", "-p", "phi-2", "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert "## phi-2: params OK" in result.output and "| component |" in result.output


def test_planted_mismatch_exits_non_zero(monkeypatch):
    pytest.importorskip("torch")
    import sizing.params

    original = sizing.params.q_proj_params
    monkeypatch.setattr(sizing.params, "q_proj_params", lambda cfg: original(cfg) + 1)
    result = _run("--params", "--preset", "gpt2")
    assert result.exit_code == 1
    assert "MISMATCH" in result.output
    line = next(ln for ln in result.output.splitlines() if ln.startswith("attn.q"))
    assert line.split()[3] == "-12"  # counted - formula: one extra parameter per layer in the formula
    json_result = _run("--params", "--preset", "gpt2", "--format", "json")
    assert json_result.exit_code == 1 and json.loads(json_result.output)["ok"] is False


@pytest.mark.parametrize("args, message", [
    ((), "no model given"),
    (("--preset", "nope"), "unknown preset"),
    (("--all", "--preset", "gpt2"), "--all alone"),
    (("--preset", "gpt2", "--set", "n_layers=0"), "n_layers"),
])
def test_user_errors_exit_2(args, message):
    result = _run("--params", *args)
    assert result.exit_code == 2
    assert message in result.output
