"""The CLI with click's CliRunner: outputs, formats and every bad input (one line, exit 2)."""

import csv
import io
import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sizing import estimate
from sizing.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _table_numbers(text: str) -> dict[str, list[int]]:
    """{row label: the integers of that row} of a text-table output, the first row of each
    label (the parameters table comes before the memory one)."""
    rows: dict[str, list[int]] = {}
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        rows.setdefault(cells[0], [int(c.replace(",", "")) for c in cells[1:] if re.fullmatch(r"-?\d[\d,]*", c)])
    return rows


def test_estimate_table_has_the_seed_numbers():
    result = run("estimate", "--preset", "llama2-7b")
    assert result.exit_code == 0, result.output
    rows = _table_numbers(result.output)
    assert rows["total"] == [6_738_415_616]
    assert rows["attn.q"] == [16_777_216, 16_777_216 * 32] and rows["mlp.up"][0] == 45_088_768
    # the seed's grouped table: per layer, whole model
    assert rows["attention"] == [67_108_864, 67_108_864 * 32] and rows["mlp"] == [135_266_304, 135_266_304 * 32]
    assert rows["norms"] == [266_240] and rows["embeddings"] == [262_144_000]
    assert "attention = full" in result.output and "6N (approximation)" in rows
    assert rows["GPU-hours (6N)"] == [round(estimate("llama2-7b").training.gpu_hours_6n)] == [179_979]


def test_estimate_json_contract():
    result = run("estimate", "--preset", "llama2-7b", "--format", "json", "--price", "1.5", "--gpus", "2048")
    data = json.loads(result.output)
    p, f, t = data["params"], data["flops"], data["training"]
    assert p["total"] == 6_738_415_616 and isinstance(p["total"], int)
    assert {"non_embedding", "active", "components"} <= set(p)
    assert sum(p["components"].values()) == p["total"]
    assert f["attention"] == "full" and f["seq_len"] == 4096
    for key in ("forward_per_token", "backward_per_token", "training_per_token", "kaplan_6n_per_token", "components"):
        assert key in f
    assert f["forward_per_token"] == 15_361_638_400
    assert f["decode_per_token"] == f["forward_per_token"]  # one token attending to 4096 cached keys
    assert sum(f["components"].values()) == f["forward_per_token"]
    for key in (
        "tokens",
        "flops",
        "gpu",
        "peak_flops_per_second",
        "mfu",
        "gpu_hours",
        "num_gpus",
        "wall_clock_days",
        "cost_usd",
    ):
        assert key in t
    assert t["tokens"] == 2 * 10**12 and t["num_gpus"] == 2048 and t["cost_usd"] == pytest.approx(1.5 * t["gpu_hours"])


def test_estimate_options_change_the_answer():
    base = json.loads(run("estimate", "-p", "llama2-7b", "--format", "json").output)
    causal = json.loads(
        run(
            "estimate",
            "-p",
            "llama2-7b",
            "--format",
            "json",
            "--attention",
            "causal",
            "--seq-len",
            "2048",
            "--recompute",
            "full",
            "--tokens",
            "1.4e12",
            "--gpu",
            "h100",
            "--mfu",
            "0.5",
        ).output
    )
    assert causal["flops"]["attention"] == "causal" and causal["flops"]["seq_len"] == 2048
    assert causal["flops"]["forward_per_token"] < base["flops"]["forward_per_token"]
    assert causal["flops"]["recompute_per_token"] > 0
    assert causal["training"]["tokens"] == 1_400_000_000_000 and causal["training"]["gpu"] == "h100-sxm"


@pytest.mark.parametrize(
    "text,value",
    [
        ("2T", 2 * 10**12),
        ("300B", 300 * 10**9),
        ("1.4e12", 1_400_000_000_000),
        ("2_000_000_000_000", 2 * 10**12),
        ("1.5M", 1_500_000),
    ],
)
def test_quantities(text, value):
    data = json.loads(run("estimate", "-p", "gpt2", "--tokens", text, "--format", "json").output)
    assert data["training"]["tokens"] == value


def test_set_overrides_and_rederives_head_dim():
    data = json.loads(
        run("estimate", "-p", "llama2-7b", "--set", "n_layers=2", "--set", "n_heads=16", "--format", "json").output
    )
    assert data["model"]["config"]["n_layers"] == 2
    assert data["params"]["per_layer"]["attn.q"] == 4096 * 4096  # head_dim re-derived as 256


def test_csv_and_markdown():
    rows = list(csv.reader(io.StringIO(run("estimate", "-p", "gpt2", "--format", "csv").output)))
    assert rows[0] == ["section", "key", "formula", "value"]
    assert ["params", "total", "", "124439808"] in rows
    md = run("estimate", "-p", "gpt2", "--format", "markdown").output
    assert "| component" in md and "## Parameters" in md


def test_no_training_tokens_says_how():
    out = run("estimate", "-p", "mistral-7b").output
    assert "pass --tokens" in out


def test_presets_and_gpus():
    out = run("presets").output
    for name in ("gpt2", "gpt3-175b", "llama3.1-405b", "mixtral-8x7b", "phi-2"):
        assert name in out
    listed = json.loads(run("presets", "--format", "json").output)
    assert {p["name"] for p in listed} >= {"llama2-7b", "gemma-2b"}
    gpus = json.loads(run("gpus", "--format", "json").output)
    assert {g["name"] for g in gpus} >= {"a100-80gb", "h100-sxm", "h200", "b200", "mi300x", "tpu-v5p", "rtx4090"}


BAD_INPUTS = [
    (["estimate", "--preset", "llama2-7c"], "did you mean llama2-7b"),
    (["estimate", "-p", "gpt2", "--gpu", "a200"], "unknown gpu 'a200'"),
    (["estimate", "-p", "gpt2", "--mfu", "1.5"], "--mfu (1.5) must be in (0, 1]"),
    (["estimate", "-p", "gpt2", "--mfu", "0"], "--mfu (0) must be in (0, 1]"),
    (["estimate", "-p", "gpt2", "--tokens", "0"], "--tokens (0) must be positive"),
    (["estimate", "-p", "gpt2", "--tokens", "-5B"], "is not a quantity"),
    (["estimate", "-p", "gpt2", "--tokens", "lots"], "is not a quantity"),
    (["estimate", "-p", "gpt2", "--seq-len", "0"], "--seq-len (0) must be a positive integer"),
    (["estimate", "-p", "gpt2", "--gpus", "-1"], "--gpus (-1) must be a positive integer"),
    (["estimate", "-p", "gpt2", "--gpu", "v100", "--dtype", "bf16"], "has no bf16 peak"),
    (["estimate", "-p", "llama2-7b", "--set", "n_kv_heads=6"], "n_heads (32) must be divisible by n_kv_heads (6)"),
    (["estimate", "-p", "llama2-7b", "--set", "n_heads=30"], "d_model (4096) must be divisible by n_heads (30)"),
    (["estimate", "-p", "gpt2", "--set", "n_layer=3"], "unknown config field 'n_layer'"),
    (["estimate", "-p", "gpt2", "--set", "n_layers"], "must look like FIELD=VALUE"),
    (["estimate", "-p", "gpt2", "--set", "n_layers=two"], "n_layers ('two') must be an integer"),
    (["estimate", "-p", "gpt2", "--set", "mlp=swish"], "mlp ('swish') must be one of"),
    (["estimate", "--config", "/nonexistent/config.json", "--seq-len", "8"], "not found"),
    (["estimate"], "no model given"),
    (["estimate", "-p", "gpt2", "--config", "x.json"], "either --preset or --config"),
]


@pytest.mark.parametrize("args,message", BAD_INPUTS)
def test_bad_input_is_one_line_exit_2(args, message):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:"), result.output
    assert message in lines[0]
    assert "Traceback" not in result.output


def test_bad_config_files(tmp_path):
    malformed = tmp_path / "bad.json"
    malformed.write_text("{not json")
    lacking = tmp_path / "lacking.json"
    lacking.write_text(json.dumps({"vocab_size": 10, "d_model": 8}))
    for path in (malformed, lacking):
        result = CliRunner().invoke(main, ["estimate", "--config", str(path), "--seq-len", "8"])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "n_layers" in CliRunner().invoke(main, ["estimate", "--config", str(lacking), "--seq-len", "8"]).output


def test_python_dash_m_and_no_heavy_imports():
    code = (
        "import sys, sizing.cli; heavy = [m for m in ('torch', 'pandas', 'numpy', 'fvcore', 'matplotlib', "
        "'reference_model') if m in sys.modules]; print(heavy)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
    result = subprocess.run(
        [sys.executable, "-m", "sizing", "estimate", "-p", "gpt2", "--format", "json"], capture_output=True, text=True
    )
    assert result.returncode == 0 and json.loads(result.stdout)["params"]["total"] == 124_439_808


def test_set_on_a_preset_keeps_its_context_and_tokens():
    data = json.loads(run("estimate", "-p", "llama2-7b", "--set", "n_layers=48", "--format", "json").output)
    assert data["flops"]["seq_len"] == 4096 and data["training"]["tokens"] == 2 * 10**12
    assert data["model"]["name"] == "llama2-7b (n_layers=48)"
