"""Capacity planning (sizing/serve/capacity.py, `sizing serve --rate`): replicas from the
goodput of one replica, GPUs, $/M output tokens from their arithmetic, the issue's question
(llama3-70b at 10 requests/s, 1,000 in / 200 out, H100, TPOT <= 50 ms), bad input."""

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


@pytest.fixture(scope="module")
def issue_plan():
    return plan_capacity(L70, 10, 1000, 200, "h100", slo_tpot=0.05, name="llama3-70b")


def test_every_feasible_row_is_replicas_times_tp_at_its_goodput(issue_plan):
    for row in issue_plan.feasible:
        p = row.point
        assert p.tpot_seconds <= 0.05 and p.sustainable
        assert row.replicas == math.ceil(10 / p.requests_per_second)
        assert row.gpus == row.replicas * row.tp and row.pp == 1
        assert row.usd_per_million_output_tokens == pytest.approx(row.gpus * 2.0 / (10 * 200 * 3600) * 1e6)


def test_the_issue_answer(issue_plan):
    best = issue_plan.best
    # bf16 on one H100 does not fit (141 GB of weights), so tp 1 bf16 is rejected
    rejected = {(r.tp, r.weight_dtype) for r in issue_plan.rows if r.gpus is None}
    assert (1, "bf16") in rejected
    assert best.gpus == min(r.gpus for r in issue_plan.feasible) == 4
    # the least quantised layout at 4 GPUs: fp8 weights, one replica of tp 4 (int4 at tp 1 also needs 4)
    assert (best.tp, best.weight_dtype, best.kv_dtype, best.replicas) == (4, "fp8", "bf16", 1)
    assert best.point.requests_per_second >= 10
    assert best.usd_per_million_output_tokens == pytest.approx(4 * 2 / (10 * 200 * 3600) * 1e6)  # $1.111
    # the rejection names the binding constraint with its numbers: the weights, not the KV cache
    why = {(r.tp, r.weight_dtype, r.kv_dtype): r.why_not for r in issue_plan.rows if r.gpus is None}
    weights_alone = "the weights (bf16) need 131.42 GiB per GPU, more than h100-sxm (79.65 GiB) at tp 1"
    assert why[(1, "bf16", "bf16")] == weights_alone
    # the least quantised layout at the fewest GPUs it needs: bf16 weights on 6 GPUs
    bf16 = [r for r in issue_plan.feasible if r.weight_dtype == "bf16"]
    assert min(r.gpus for r in bf16) == 6


def test_tighter_slo_needs_more_gpus():
    loose = plan_capacity(L70, 10, 1000, 200, "h100", slo_tpot=0.05).best
    tight = plan_capacity(L70, 10, 1000, 200, "h100", slo_tpot=0.015).best
    assert tight.gpus > loose.gpus and tight.point.tpot_seconds <= 0.015


def test_parse_seconds_and_bad_input():
    assert parse_seconds("2s", "x") == 2 and parse_seconds("50ms", "x") == pytest.approx(0.05)
    assert parse_seconds("0.05", "x") == 0.05 and parse_seconds("500us", "x") == pytest.approx(5e-4)
    with pytest.raises(SizingError, match=r"--slo-tpot \('fast'\) must be a duration"):
        parse_seconds("fast", "--slo-tpot")
    with pytest.raises(SizingError, match="rate"):
        plan_capacity(L70, float("nan"), 1000, 200, "h100")


def _run(args: str):
    return CliRunner().invoke(main, ["serve", *args.split()])


def test_cli_capacity_answer_and_errors():
    base = "--preset llama3-70b --gpu h100 --rate 10 --prompt 1000 --output 200 --slo-tpot 50ms"
    out = _run(base)
    assert out.exit_code == 0, out.output
    assert "answer: 1 replica(s) x (tp 4, pp 1), fp8 weights, bf16 KV = 4 GPUs, $1.111/M output tokens" in out.output
    data = json.loads(_run(base + " --format json").output)
    assert data["best"]["gpus"] == 4 and data["slo_tpot_seconds"] == 0.05
    for bad, message in (
        (base + " --tp 8", "--tp cannot be given with --rate"),
        (base.replace("50ms", "5xs"), "--slo-tpot ('5xs') must be a duration"),
        ("--preset llama3-70b --prompt 10 --output 20 --slo-tpot 1s", "--slo-tpot applies to capacity planning"),
        (base.replace("--rate 10", "--rate -1"), "--rate"),
        (base.replace("--prompt 1000", "--prompt 9000"), "prompt (9000) exceeds the model's served context (8192)"),
    ):
        result = _run(bad)
        assert result.exit_code == 2 and result.output.startswith("Error: ") and message in result.output, bad
