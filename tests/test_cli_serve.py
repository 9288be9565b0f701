"""`sizing serve`: the issue's command, every format, the Python API's object, bad input."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.render.serve import format_seconds, render_serve
from sizing.serve import serve

ISSUE = ["serve", "--preset", "llama2-7b", "--gpu", "h100", "--batch", "1", "--prompt", "4096", "--output", "256"]


def run(*args):
    return CliRunner().invoke(main, list(args))


def issue_with(extra: list[str]) -> list[str]:
    """The issue command with the options in `extra` replaced (an option may be given once)."""
    replaced = set(extra[::2])
    kept = ISSUE[:1]
    for option, value in zip(ISSUE[1::2], ISSUE[2::2], strict=True):
        if option not in replaced:
            kept += [option, value]
    return kept + extra


def test_the_issue_command_prints_latency_throughput_cost_and_bound():
    result = run(*ISSUE)
    assert result.exit_code == 0, result.output
    est = serve("llama2-7b", 4096, 256, gpu="h100")
    out = result.output
    for label in ("time to first token", "time per output token", "tokens/s per GPU", "$ per M output tokens"):
        assert label in out
    assert f"TTFT {format_seconds(est.ttft_seconds)} (compute-bound)" in out
    assert f"{format_seconds(est.tpot_seconds)} per output token (memory-bound)" in out
    assert "prefill FLOPs counted causal" in out


def test_json_is_the_api_object():
    result = run(*ISSUE, "--format", "json")
    assert result.exit_code == 0, result.output
    est = serve("llama2-7b", 4096, 256, gpu="h100")
    assert json.loads(result.output) == est.to_dict()
    assert result.output.rstrip("\n") == render_serve(est, "json")


def test_markdown_and_csv():
    md = run(*ISSUE, "--format", "markdown")
    assert md.exit_code == 0 and md.output.startswith("## Serving llama2-7b") and "| time to first token" in md.output
    rows = dict(csv.reader(io.StringIO(run(*ISSUE, "--format", "csv").output)))
    assert int(rows["prefill.flops"]) == 57_450_818_437_120 and rows["decode.bound"] == "memory"


def test_options_reach_the_estimate():
    args = ["--tp", "2", "--gpus", "4", "--weight-dtype", "int4", "--kv-dtype", "fp8", "--prefill-chunk", "1024"]
    args += ["--compute-efficiency", "1", "--bandwidth-efficiency", "1", "--price", "3.5", "--attention", "full"]
    data = json.loads(run(*ISSUE, *args, "--format", "json").output)
    expected = serve(
        "llama2-7b", 4096, 256, gpu="h100", tp=2, gpus=4, weight_dtype="int4", kv_dtype="fp8", prefill_chunk=1024,
        compute_efficiency=1, bandwidth_efficiency=1, price=3.5, attention="full",
    )  # fmt: skip
    assert data == expected.to_dict() and data["settings"]["replicas"] == 2


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--batch", "0"], "--batch (0) must be a positive integer"),
        (["--tp", "3"], "tp (3) must divide n_heads (32)"),
        (["--weight-dtype", "int3"], "--weight-dtype ('int3') must be one of"),
        (["--kv-dtype", "nf4"], "--kv-dtype ('nf4') must be one of"),
        (["--prompt", "8192"], "prompt (8192) exceeds the model's served context (4096)"),
        (["--gpu", "tpu9"], "tpu9"),
        (["--bandwidth-efficiency", "nan"], "--bandwidth-efficiency"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(extra, message):
    result = run(*issue_with(extra))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], result.output


def test_prompt_and_output_are_needed():
    result = run("serve", "--preset", "gpt2")
    assert (
        result.exit_code == 2
        and result.output.strip() == "Error: --prompt and --output needed, e.g. --prompt 4096 --output 256"
    )
    learned = run("serve", "--preset", "gpt2", "--prompt", "1000", "--output", "100")
    assert learned.exit_code == 2 and "exceeds the learned position table (max_positions 1024)" in learned.output
