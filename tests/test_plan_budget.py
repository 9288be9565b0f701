"""`sizing plan` keeps its shapes within the budget or says they are over it, and its days
column names the GPUs it assumes."""

import json
import math

from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.hardware import get_gpu
from sizing.plan.compute_optimal import plan


def test_shapes_over_a_gpu_days_budget_are_marked_with_the_tokens_that_fit():
    p = plan(gpus=1024, days=30, gpu="h100", mfu=0.4)
    # C = 1,024 x 30 x 86,400 x 989.4e12 x 0.4 = 1.0503e24; D = C / 6N, and the exact FLOPs add
    # attention, so each shape needs ~31.4-32.0 days
    assert p.flops == 1024 * 30 * 86400 * get_gpu("h100").peak_flops_per_second("bf16") * 0.4
    for s in p.shapes:
        assert s.days > 30 and not s.within_budget
        assert s.tokens_within_budget == math.floor(p.flops / s.training_flops_per_token) < s.tokens
        assert s.tokens_within_budget * s.training_flops_per_token <= p.flops  # at most 30 days
    out = CliRunner().invoke(main, ["plan", "--gpus", "1024", "--days", "30", "--gpu", "h100"])
    assert out.output.count("(over budget: ") == 3 and "days on 1024 x h100-sxm" in out.output


def test_a_flops_budget_names_the_gpus_its_days_assume_and_json_carries_the_budget_check():
    out = CliRunner().invoke(main, ["plan", "--flops", "1e21", "--gpu", "h100", "--format", "json"])
    shapes = json.loads(out.output)["shapes"]
    for s in shapes:
        assert s["within_budget"] == (s["training_flops"] <= 1e21)
        assert s["tokens_within_budget"] <= s["tokens"]
    text = CliRunner().invoke(main, ["plan", "--flops", "1e21", "--gpu", "h100"]).output
    assert "days on 1 x h100-sxm" in text


def test_a_shape_that_does_not_fit_quotes_the_one_gpu_count():
    p = plan(flops=1e23, gpu="a100")
    assert all("the fewest GPUs: 8 (" in s.fit_setting for s in p.shapes)
