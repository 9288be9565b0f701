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
    lines = result.output.splitlines()
    assert lines[0] == "## phi-2: params OK"
    header = next(line for line in lines if line.startswith("|"))
    assert [cell.strip() for cell in header.strip("|").split("|")][:4] == [
        "component",
        "formula",
        "counted",
        "difference",
    ]


def test_planted_mismatch_exits_non_zero(monkeypatch):
    pytest.importorskip("torch")
    import sizing.formulas.params

    original = sizing.formulas.params.q_proj_params
    monkeypatch.setattr(sizing.formulas.params, "q_proj_params", lambda cfg: original(cfg) + 1)
    result = _run("--params", "--preset", "gpt2")
    assert result.exit_code == 1
    assert "MISMATCH" in result.output
    line = next(ln for ln in result.output.splitlines() if ln.startswith("attn.q"))
    assert line.split()[3] == "-12"  # counted - formula: one extra parameter per layer in the formula
    json_result = _run("--params", "--preset", "gpt2", "--format", "json")
    assert json_result.exit_code == 1 and json.loads(json_result.output)["ok"] is False


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "no model given"),
        (("--preset", "nope"), "unknown preset"),
        (("--all", "--preset", "gpt2"), "--all alone"),
        (("--preset", "gpt2", "--set", "n_layers=0"), "n_layers"),
    ],
)
def test_user_errors_exit_2(args, message):
    result = _run("--params", *args)
    assert result.exit_code == 2
    assert message in result.output


def _one_error_line(result, *fragments):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("value", ["1e30", "1.5", "10" + "0" * 30, "0", "-3", "x"])
def test_seq_len_must_be_an_integer_in_bounds(value):
    """Issue 11: `--seq-len 1e30` was quietly a check at T = 1024."""
    _one_error_line(_run("--flops", "--preset", "gpt2", "--seq-len", value), "--seq-len")


def test_seq_len_beyond_the_learned_position_table_is_an_error():
    pytest.importorskip("torch")
    _one_error_line(_run("--flops", "--preset", "gpt2", "--seq-len", "1025"), "--seq-len", "max_positions 1,024")


def test_seq_len_too_long_for_the_meta_device_is_refused_before_any_work():
    """Issue 11: T = 1e9 on llama2-7b drew 8.T bytes of token ids on the CPU; at that length the
    (1, 32, T, T) fp32 score tensor cannot even be sized by torch (int64 bytes), so refuse it."""
    pytest.importorskip("torch")
    result = _run("--flops", "--preset", "llama2-7b", "--set", "n_layers=1", "--seq-len", "1000000000")
    _one_error_line(result, "--seq-len", "at most 268,435,455")


@pytest.mark.parametrize(
    "args, option", [(("--params", "--seq-len", "64"), "--seq-len"), (("--memory", "--counter", "torch"), "--counter")]
)
def test_flop_options_without_the_flop_check_are_errors(args, option):
    _one_error_line(_run(*args, "--preset", "gpt2"), option, "--flops")


def test_counter_and_format_choices_give_one_error_line():
    _one_error_line(_run("--flops", "--preset", "gpt2", "--counter", "fvcor"), "--counter", "torch, fvcore, both")
    _one_error_line(_run("--params", "--preset", "gpt2", "--format", "yaml"), "--format")


def test_flops_at_a_given_seq_len():
    pytest.importorskip("torch")
    result = _run(
        "--flops",
        "--preset",
        "gpt2",
        "--set",
        "n_layers=1",
        "--seq-len",
        "64",
        "--counter",
        "torch",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["results"][0]["rows"]
    full = [r for r in rows if r["run"] == "full size, meta"]
    assert full and all(r["difference"] == 0 for r in full)
    # attn.scores forward at T = 64, batch 1: 2.T.T.d FLOPs per layer (full convention)
    scores = next(r for r in full if r["phase"] == "forward" and r["component"] == "attn.scores")
    assert scores["formula"] == scores["torch"] == 2 * 64 * 64 * 768
