"""How far the step model is from published runs it was not fitted on: the leave-one-source-out
cross-validation (sizing.parallel.calibration), the stored fits and errors being fresh, and the
bands every time answer prints (sizing.parallel.band)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sizing.parallel.band import cv_report, step_band
from sizing.parallel.calibration import Observation, cross_validate, fit_overhead, fit_stacks, summarise

ROOT = Path(__file__).resolve().parents[1]
CV = cv_report()


def test_cross_validated_error_over_every_published_run():
    """Issue 36's bar for the development rows: leave-one-source-out median |error| <= 12%, worst
    <= 30%, and no one-sided bias (25-75% predicted too fast); every source of three runs or more
    within a median of 15%, a one-row source within 20% (DeepSeek-V2's single row, -16%: its partial
    recomputation is not counted and its GPU count is assumed, docs/step-time.md; its constant is
    the megatron family's, which the Megatron-LM README rows moved from +0.29 toward +0.2 when V2
    is left out). 275 dense runs and 61 mixture-of-experts runs (MoE Parallel Folding's 59,
    DeepSeek-V2, V3)."""
    overall = CV["summary"]["all"]
    assert overall["rows"] == 336 and sum(r["moe"] for r in CV["rows"]) == 61
    assert overall["median_abs"] <= 0.12
    assert abs(overall["worst"]) <= 0.30
    assert 0.25 <= overall["too_fast"] <= 0.75
    for source, s in CV["summary"].items():
        assert s["median_abs"] <= (0.15 if s["rows"] >= 3 else 0.20), (source, s)


def test_mixture_of_experts_runs_cross_validated_apart():
    """The MoE runs alone meet the same bar (their sources left out one at a time: MoE Parallel
    Folding's Megatron-Core runs predicted with the overheads NeMo's dense runs give, DeepSeek-V2's
    with V3's and the reverse)."""
    moe = summarise([r["cv_error"] for r in CV["rows"] if r["moe"]])
    assert moe.rows == 61 and moe.median_abs <= 0.12 and abs(moe.worst) <= 0.30


def test_stored_fits_and_errors_are_fresh():
    """sizing/data/step_time.json's stack overheads and step_time_cv.json are what the fit gives now."""
    run = subprocess.run([sys.executable, "tools/fit_step_overheads.py", "--check"], cwd=ROOT, capture_output=True)
    assert run.returncode == 0, run.stdout.decode() + run.stderr.decode()


def _obs(name, source, stack, base, kernels, measured):
    return Observation(name, source, stack, "h100-sxm", False, base, kernels, measured)


def test_fit_recovers_a_known_overhead_and_weights_sources_equally():
    """Rows measured at exactly base + 0.3 x kernels give back 0.3; a 10-row source and a 1-row source
    pull equally: the fit lands between their values, not at the big source's."""
    obs = [_obs(f"r{i}", "a", "megatron-core", 1.0, 0.5 + i / 10, 1.0 + 0.3 * (0.5 + i / 10)) for i in range(10)]
    assert fit_overhead(obs) == pytest.approx(0.3, abs=1e-3)
    mixed = [_obs(f"a{i}", "a", "fsdp", 1.0, 1.0, 1.1) for i in range(10)] + [_obs("b", "b", "fsdp", 1.0, 1.0, 1.5)]
    k = fit_overhead(mixed)
    assert 0.1 <= k <= 0.5


def test_own_constants_need_two_sources_and_cv_falls_back_to_the_family():
    """A stack whose runs come from one source takes its family's overhead (constants are fitted
    across sources); left out of the fit, a stack with no runs left takes the family's too."""
    obs = [_obs("a", "s1", "composer", 1.0, 1.0, 1.2), _obs("b", "s2", "torchtitan-eager", 1.0, 1.0, 1.4)]
    assert set(fit_stacks(obs)) == {"family:fsdp", "pooled"}
    two = [*obs, _obs("c", "s3", "composer", 1.0, 1.0, 1.2)]
    assert "composer" not in fit_stacks(two)  # two sources but two rows: a constant per row, not one
    fitted = fit_stacks(two, min_runs=2)
    assert fitted["composer"] == pytest.approx(0.2, abs=1e-3) and "torchtitan-eager" not in fitted
    mine = fit_stacks(obs, min_sources=1, min_runs=1)  # `sizing calibrate`: the user's one file fits their stacks
    assert mine["composer"] == pytest.approx(0.2, abs=1e-3) and mine["torchtitan-eager"] == pytest.approx(0.4, abs=1e-3)
    cv = cross_validate(obs, min_sources=1, min_runs=1)
    assert cv["a"] == pytest.approx((1.0 + 0.4) / 1.2 - 1, abs=1e-3)  # predicted with the family's, i.e. 0.4
    assert summarise(list(cv.values())).rows == 2


def test_band_of_a_covered_kind_and_of_an_uncovered_one():
    covered = step_band(3.0, "megatron-core", "h100", False)
    assert covered.covered and covered.runs >= 5 and covered.low_seconds < 3.0 < covered.high_seconds
    assert "published runs of this kind" in covered.text(3.0) and covered.text(3.0).startswith("3 s step (")
    h200 = step_band(3.0, "megatron-core", "h200", False)  # the H200 uses the H100's runs (same compute)
    assert h200.runs == covered.runs
    moe = step_band(3.0, "megatron-core", "h100", True)  # MoE Parallel Folding's 59 Megatron-Core runs
    assert moe.covered and moe.runs == 59 and "mixture of experts" in moe.kind
    fsdp_moe = step_band(3.0, "torchtitan-compile", "h100", True)  # no FSDP MoE run: every MoE run on H100
    assert fsdp_moe.covered and fsdp_moe.runs == 61 and fsdp_moe.kind.startswith("every stack on h100-sxm")
    a100_moe = step_band(3.0, "megatron-core", "a100", True)  # no MoE run on an A100
    assert not a100_moe.covered and "no published runs of this kind" in a100_moe.describe()
    assert a100_moe.high_seconds - a100_moe.low_seconds > covered.high_seconds - covered.low_seconds
    lo, hi = covered.scaled(0.5, inverse=True)  # an MFU's band: the step's, inverted
    assert lo < 0.5 < hi


def test_every_prediction_carries_its_band_in_json():
    from sizing.inputs.presets import get_preset
    from sizing.parallel.layout import ParallelLayout
    from sizing.parallel.steptime import predict_step

    pred = predict_step(get_preset("llama2-7b").config, ParallelLayout(dp=8, micro_batches=16), 4096, "h100")
    d = json.loads(json.dumps(pred.to_dict()))
    assert d["band"]["low_seconds"] < d["step_seconds"] < d["band"]["high_seconds"]
    assert d["mfu_band"][0] < d["mfu"] < d["mfu_band"][1]
