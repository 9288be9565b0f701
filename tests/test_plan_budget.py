"""`sizing plan` keeps its shapes within the budget or says they are over it, and its days
column names the GPUs it assumes."""

import json
import math

import pytest
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
    out = CliRunner().invoke(main, ["plan", "--gpus", "1024", "--days", "30", "--gpu", "h100", "--mfu", "0.4"])
    assert out.output.count("on 1,024 (over budget: ") == 3 and "days on N x h100-sxm" in out.output


def test_a_flops_budget_names_the_gpus_its_days_assume_and_json_carries_the_budget_check():
    out = CliRunner().invoke(main, ["plan", "--flops", "1e21", "--gpu", "h100", "--format", "json"])
    shapes = json.loads(out.output)["shapes"]
    for s in shapes:
        assert s["within_budget"] == (s["training_flops"] <= 1e21)
        assert s["tokens_within_budget"] <= s["tokens"]
    text = CliRunner().invoke(main, ["plan", "--flops", "1e21", "--gpu", "h100"]).output
    # without --gpus, each shape's days are on the fewest GPUs its layout needs, named in its row
    assert all(f"on {s['gpus']:,}" in text and f"on {s['gpus']} GPUs" in s["fit_setting"] for s in shapes)


def test_a_shape_that_does_not_fit_quotes_the_one_gpu_count():
    p = plan(flops=1e23, gpu="a100", mfu=0.4)  # --mfu: the ZeRO check on one GPU
    assert all("the fewest GPUs: 8 (" in s.fit_setting for s in p.shapes)


def test_the_shapes_are_timed_by_the_step_model_of_sizing_parallel():
    """One answer (issue 36 item 5): without --mfu, each shape's layout, MFU and GPU-hours are the
    plan `sizing parallel --gpus N` finds for it, with the step's band around the GPU-hours."""
    from sizing.inputs import Workload
    from sizing.parallel import layout_mfu, predict_run

    p = plan(flops=1e22, gpus=64, gpu="h100")
    for s in p.shapes:
        work = Workload(4096, recompute=None, gpus=64)
        best = predict_run(s.config, work, "h100")
        assert s.fit_setting.startswith(best.layout.label()) and s.fits and s.gpus == 64
        assert s.mfu == layout_mfu(s.config, work, best).mfu
        # the same GPU-hours as the parallel plan's steps x step x GPUs, at the shape's tokens
        steps = s.tokens / (best.layout.global_batch() * 4096)
        assert s.gpu_hours == pytest.approx(steps * best.step_seconds * 64 / 3600, rel=1e-9)
        assert s.gpu_hours_band == best.predicted.band.scaled(s.gpu_hours)
    given = plan(flops=1e22, gpus=64, gpu="h100", mfu=0.5)
    assert all(s.mfu == 0.5 and s.gpu_hours_band is None for s in given.shapes)
