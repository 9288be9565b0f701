"""`sizing compare` and sizing.plan.comparison: one row per model, one context, every format."""

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner

from sizing import estimate
from sizing.cli import main
from sizing.plan.comparison import compare
from sizing.rows import COLUMNS

LLAMA3 = Path(__file__).resolve().parent / "fixtures" / "hf_configs" / "meta-llama__Meta-Llama-3-8B.json"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_compare_is_one_estimate_per_model_at_one_context():
    result = compare(["llama2-7b", "mistral-7b", str(LLAMA3)], seq_len=2048, tokens="1T", gpu="h100")
    assert [e.flops.seq_len for e in result.estimates] == [2048] * 3 and result.seq_len == 2048
    for e, name in zip(result.estimates, ["llama2-7b", "mistral-7b"], strict=False):
        alone = estimate(name, seq_len=2048, tokens=10**12, gpu="h100")
        assert e.to_row() == alone.to_row()
    assert result.estimates[2].params.total == 8_030_261_248  # Llama-3-8B's config.json
    assert result.context_note == "every model at T = 2048"


def test_compare_without_seq_len_says_each_model_has_its_own():
    result = compare(["gpt2", "llama2-7b"])
    assert [e.flops.seq_len for e in result.estimates] == [1024, 4096] and result.seq_len is None
    assert result.context_note.startswith("each model at its own context")


def test_cli_csv_is_one_row_per_model_with_every_column():
    out = run("compare", "-p", "llama2-7b", "--config", LLAMA3, "-p", "gpt2", "--format", "csv", "-T", "1024")
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert [r["model"] for r in rows] == ["llama2-7b", "gpt2", str(LLAMA3)]  # presets, then configs
    assert list(rows[0]) == list(COLUMNS)
    assert int(rows[0]["params_total"]) == 6_738_415_616 and int(rows[1]["params_total"]) == 124_439_808
    assert rows[1]["tokens"] == ""  # gpt2 has no published token count


def test_cli_json_and_table_say_which_context():
    data = json.loads(run("compare", "-p", "gpt2", "-p", "llama2-7b", "--format", "json").output)
    assert data["seq_len"] is None and data["notes"][0].startswith("each model at its own context")
    assert [r["seq_len"] for r in data["rows"]] == [1024, 4096]
    text = run("compare", "-p", "llama2-7b", "-p", "mistral-7b", "-T", "4096", "--tokens", "2T").output
    assert "every model at T = 4096" in text and "llama2-7b" in text and "mistral-7b" in text
    md = run("compare", "-p", "llama2-7b", "-p", "mistral-7b", "--format", "markdown").output
    assert md.startswith("| model") and "- each model at its own context" in md


def test_cli_refuses_repeats_of_single_value_options_and_bad_input():
    for args in (
        ("--gpu", "h100", "--gpu", "a100"),
        ("-T", "1024", "--seq-len", "2048"),
        ("--mfu", "0.4", "--mfu", "0.5"),
    ):
        out = run("compare", "-p", "gpt2", *args)
        assert out.exit_code == 2 and "given twice" in out.output and out.output.count("\n") == 1
    out = run("compare")
    assert out.exit_code == 2 and "no model given" in out.output
    out = run("compare", "-p", "gpt2", "-T", "4096")  # past gpt2's learned position table
    assert out.exit_code == 2 and "max_positions" in out.output
    out = run("compare", "-p", "gpt2", "--gpu", "h1000")
    assert out.exit_code == 2 and out.output.startswith("Error:")
