"""Capacity planning (sizing/serve/capacity.py, `sizing serve --rate`): replicas from the most
requests/s one replica serves within the p99 SLOs, GPUs and $/M output tokens from their
arithmetic, the user's precision narrowing the search, every rejection naming its binding
constraint with numbers, bad input."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from sizing import get_preset
from sizing.cli import main
from sizing.serve.capacity import parse_seconds, plan_capacity
from sizing.validate import SizingError

L70 = get_preset("llama3-70b").config
L8 = get_preset("llama3-8b").config


@pytest.fixture(scope="module")
def bf16_plan():
    """The issue's question with the user's precision pinned: bf16 weights and KV."""
    return plan_capacity(
        L70, 10, 1000, 200, "h100", slo_tpot=0.05, name="llama3-70b", weight_dtypes=("bf16",), kv_dtypes=("bf16",)
    )


def test_every_feasible_row_is_replicas_times_tp_within_the_slo(bf16_plan):
    assert bf16_plan.feasible
    for row in bf16_plan.feasible:
        assert row.replicas == math.ceil(10 / row.limit.max_rate)
        assert row.gpus == row.replicas * row.tp and row.pp == 1
        assert row.usd_per_million_output_tokens == pytest.approx(row.gpus * 2.0 / (10 * 200 * 3600) * 1e6)
        assert row.load.rate == pytest.approx(10 / row.replicas)
        assert row.load.tpot[0.99] <= 0.05  # at its own load, below the most it serves


def test_bf16_is_answered_not_refused(bf16_plan):
    best = bf16_plan.best
    assert (best.tp, best.weight_dtype, best.kv_dtype, best.replicas, best.gpus) == (2, "bf16", "bf16", 4, 8)
    assert 4 * best.limit.max_rate >= 10 > 3 * best.limit.max_rate
    assert best.binding == "TPOT SLO"
    # tp 1 cannot hold the weights: the rejection names them with their numbers
    (tp1,) = [r for r in bf16_plan.rejected if r.tp == 1]
    assert tp1.binding == "weights"
    assert tp1.why_not == "the weights (bf16) need 131.42 GiB per GPU, more than h100-sxm (79.65 GiB) at tp 1"


def test_kv_for_one_sequence_and_slo_rejections_name_their_numbers():
    long = plan_capacity(
        L70, 1, 60000, 2000, "h100", slo_tpot=0.2, weight_dtypes=("fp8",), tps=(1,), kv_dtypes=("bf16",)
    )
    (row,) = long.rows
    assert row.binding == "KV for one sequence" and row.gpus is None
    # 2 (K, V) x 80 layers x 8 heads x 128 x 2 bytes = 327,680 B per token; 62,000 tokens in blocks of 16:
    # 3,875 blocks x 16 x 327,680 B = 20,316,160,000 B = 18.92 GiB
    assert row.why_not.startswith("KV cache for one sequence of 62000 tokens (18.92 GiB, bf16) exceeds the 10.42 GiB")
    fast = plan_capacity(
        L8, 1, 1000, 200, "h100", slo_tpot=0.003, weight_dtypes=("bf16",), tps=(1,), kv_dtypes=("bf16",)
    )
    (row,) = fast.rows
    assert row.binding == "TPOT SLO" and row.why_not.startswith("p99 TPOT ")
    assert row.why_not.endswith("even at the lowest load > SLO 3 ms")


def test_a_looser_percentile_needs_no_more_gpus():
    common = dict(slo_tpot=0.03, slo_ttft=0.5, weight_dtypes=("bf16",), kv_dtypes=("bf16",), tps=(1,))
    p99 = plan_capacity(L8, 30, 1000, 200, "h100", percentile=0.99, **common).best
    p50 = plan_capacity(L8, 30, 1000, 200, "h100", percentile=0.5, **common).best
    assert p50.limit.max_rate >= p99.limit.max_rate and p50.gpus <= p99.gpus


def test_parse_seconds_and_bad_input():
    assert parse_seconds("2s", "x") == 2 and parse_seconds("50ms", "x") == pytest.approx(0.05)
    assert parse_seconds("0.05", "x") == 0.05 and parse_seconds("500us", "x") == pytest.approx(5e-4)
    with pytest.raises(SizingError, match=r"--slo-tpot \('fast'\) must be a duration"):
        parse_seconds("fast", "--slo-tpot")
    with pytest.raises(SizingError, match="rate"):
        plan_capacity(L70, float("nan"), 1000, 200, "h100")
    with pytest.raises(SizingError, match=r"percentile \(1\) must be below 1"):
        plan_capacity(L70, 1, 1000, 200, "h100", percentile=1)


def _run(args: str):
    return CliRunner().invoke(main, ["serve", *args.split()])


def test_cli_keeps_the_users_precision():
    base = "--preset llama3-70b --gpu h100 --rate 10 --prompt 1000 --output 200 --slo-tpot 50ms"
    out = _run(base + " --weight-dtype bf16 --kv-dtype bf16")
    assert out.exit_code == 0, out.output
    assert "answer: 4 replica(s) x (tp 2, pp 1), bf16 weights, bf16 KV = 8 GPUs" in out.output
    data = json.loads(_run(base + " --quant fp8 --kv-dtype bf16 --tp 4 --format json").output)
    assert {(r["weight_dtype"], r["tp"]) for r in data["layouts"]} == {("fp8", 4)}
    assert data["percentile"] == 0.99 and data["slo_tpot_seconds"] == 0.05


def test_cli_refusals():
    base = "--preset llama3-70b --gpu h100 --rate 10 --prompt 1000 --output 200 --slo-tpot 50ms"
    for bad, message in (
        (base + " --batch 8", "--batch cannot be given with --rate: the capacity plan answers them"),
        (base.replace("50ms", "5xs"), "--slo-tpot ('5xs') must be a duration"),
        ("--preset llama3-70b --prompt 10 --output 20 --slo-tpot 1s", "--slo-tpot applies to capacity planning"),
        ("--preset llama3-70b --prompt 10 --output 20 --disaggregated", "--disaggregated applies to capacity"),
        (base.replace("--rate 10", "--rate -1"), "--rate"),
        (base + " --percentile 1.5", "--percentile"),
        (base + " --trace nothing.csv", "trace ('nothing.csv') cannot be read"),
        (base.replace("--prompt 1000", "--prompt 9000"), "prompt (9000) exceeds the model's served context (8192)"),
    ):
        result = _run(bad)
        assert result.exit_code == 2 and result.output.startswith("Error: ") and message in result.output, bad


def test_cli_trace_replaces_prompt_and_output(tmp_path):
    path = tmp_path / "mix.csv"
    path.write_text("prompt_tokens,output_tokens,weight\n512,128,3\n2048,256,1\n")
    out = _run(f"--preset llama3-8b --gpu h100 --rate 5 --trace {path} --slo-tpot 40ms --weight-dtype bf16 --tp 1")
    assert out.exit_code == 0, out.output
    assert "5 requests/s of mix.csv: 2 classes, mean 896 in / 160 out" in out.output


@pytest.mark.parametrize(("gpu", "kin"), [("l40s", "a100-80gb"), ("b200", "h200"), ("h100", None)])
def test_the_plan_says_when_the_gpus_efficiencies_are_borrowed(gpu, kin):
    """L40S and B200 have no published serving row of their own outside the kept sources: the
    plan names the GPU whose efficiencies it runs at (sizing/data/serve_efficiency.json), in the
    table's notes and in JSON; H100's are fitted on its own rows, so no note."""
    args = ["serve", "--preset", "llama3-8b", "--gpu", gpu, "--rate", "5", "--prompt", "512", "--output", "128"]
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    assert out.exit_code == 0, out.output
    note = json.loads(out.output)["efficiency_note"]
    text = CliRunner().invoke(main, args).output
    if kin is None:
        assert note is None and "not its own" not in text
    else:
        assert note.startswith(f"{gpu}'s efficiencies") and f"as {kin}:" in note
        assert f"note: {note}" in text
    pinned = plan_capacity(get_preset("llama3-8b").config, 5, 512, 128, gpu, compute_efficiency=0.5,
                           bandwidth_efficiency=0.8, tps=(1,))  # fmt: skip
    assert pinned.efficiency_note is None  # efficiencies given: nothing borrowed
