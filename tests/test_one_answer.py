"""One answer per question (issue 36 item 5, issue 35 item 5): `sizing estimate --gpus N`,
`sizing parallel --gpus N`, the Python estimate(num_gpus=N) and the UI ask the same entry point
(sizing.parallel.predict_run) at the same default global batch, so they name the same layout and
batch and give the same step and GPU-hours; a constant MFU is only the explicit --mfu, and
without --gpus the estimate says what it assumed."""

import json

import pytest
from click.testing import CliRunner

import sizing
from sizing.cli import main
from sizing.formulas import flop_breakdown
from sizing.inputs import Workload, get_preset
from sizing.parallel import predict_run
from sizing.parallel.batches import default_global_batch


def _json(*args: str) -> dict:
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code in (0, 3), result.output
    return json.loads(result.output)


@pytest.mark.parametrize("preset,gpus", [("llama2-7b", 64), ("llama3-8b", 128)])
def test_estimate_and_parallel_give_one_answer(preset, gpus):
    est = _json("estimate", "--preset", preset, "--tokens", "1T", "--gpu", "h100", "--gpus", str(gpus), "--no-memory")
    par = _json("parallel", "--preset", preset, "--tokens", "1T", "--gpu", "h100", "--gpus", str(gpus))
    lay = est["training"]["mfu_layout"]
    T = est["flops"]["seq_len"]
    # the same layout, batch (4M tokens in sequences of T: 1,024 at 4,096, 512 at 8,192), recompute and step
    assert lay["layout"] == par["layout_label"] and lay["gpus"] == gpus
    assert lay["global_batch"] == par["global_batch"] == default_global_batch(T) == 4 * 2**20 // T
    assert lay["recompute"] == par["recompute"] and lay["step_seconds"] == par["step_seconds"]
    assert lay["predicted_mfu_causal"] == par["mfu"]
    # the same GPU-hours: parallel's steps x step x GPUs, estimate's model FLOPs / (peak x MFU)
    assert est["training"]["gpu_hours"] == pytest.approx(par["gpu_hours"], rel=1e-9)


def test_the_python_estimate_is_the_clis():
    cli = _json("estimate", "--preset", "llama2-7b", "--tokens", "2T", "--gpu", "h100", "--gpus", "64")
    api = sizing.estimate("llama2-7b", tokens="2T", gpu="h100", num_gpus=64).to_dict()
    assert api["training"] == cli["training"] and api["training"]["mfu_layout"] is not None
    work = Workload(4096, tokens=2 * 10**12, gpus=64, recompute=None)
    assert sizing.estimate("llama2-7b", work=work, gpu="h100").to_dict()["training"] == cli["training"]
    with pytest.raises(sizing.SizingError, match="not both"):
        sizing.estimate("llama2-7b", work=work, num_gpus=8)


def test_the_ui_asks_the_same_question():
    from sizing.ui.api import answer, js_safe

    pairs = [("preset", "llama2-7b"), ("gpu", "h100"), ("gpus", "64"), ("tokens", "2T")]
    ui = answer("estimate", pairs)["result"]["training"]
    cli = _json("estimate", "--preset", "llama2-7b", "--gpu", "h100", "--gpus", "64", "--tokens", "2T")["training"]
    assert ui == js_safe(cli)  # integers past 2^53 travel as strings to the page


def test_predict_run_converts_to_the_estimates_attention_convention():
    cfg = get_preset("llama2-7b").config
    plan = predict_run(cfg, Workload(4096, recompute=None, gpus=64), "h100")
    est = sizing.estimate(cfg, seq_len=4096, tokens=10**12, gpu="h100", num_gpus=64, memory=False)
    full, causal = (flop_breakdown(cfg, 4096, a, "none").model_training for a in ("full", "causal"))
    assert est.training.run.mfu == pytest.approx(plan.mfu * full / causal)  # same step, the estimate's FLOPs over it


def test_mfu_is_the_override_and_the_constant_is_stated():
    given = sizing.estimate("llama2-7b", gpu="h100", num_gpus=64, mfu=0.5)
    assert given.training.run.mfu == 0.5 and given.mfu_layout is None and given.mfu_source.startswith("given (--mfu)")
    plain = sizing.estimate("llama2-7b", gpu="h100")
    assert plain.training.run.mfu == 0.4 and plain.mfu_source.startswith("constant 0.4, assumed: no GPU count given")
    text = CliRunner().invoke(main, ["estimate", "--preset", "llama2-7b", "--gpu", "h100", "--no-memory"]).output
    assert "0.4 (constant 0.4, assumed: no GPU count given" in text and "MFU means" in text


def test_every_answer_says_what_mfu_means():
    est = CliRunner().invoke(main, ["estimate", "-p", "llama2-7b", "--gpus", "64", "--gpu", "h100", "--no-memory"])
    assert "MFU = model FLOPs (6N-style matmuls + attention counted full" in est.output
    assert "layout assumed" in est.output and "1,024 sequences x 4,096 = 4.19M tokens" in est.output
    par = CliRunner().invoke(main, ["parallel", "-p", "llama2-7b", "--gpus", "64", "--gpu", "h100"])
    assert "note: MFU = model FLOPs (6N-style matmuls + attention counted causal" in par.output


def test_the_memory_shown_is_the_assumed_layouts():
    """With --gpus the memory section is the most-loaded GPU of the layout the cost assumed (the
    plan `sizing parallel --gpus N` prints), not one GPU without ZeRO: llama3-70b's 1,051 GiB of
    model states cannot fit one H100, its dp 128 x tp 4 x pp 4 layout does."""
    args = ("--preset", "llama3-70b", "--tokens", "15T", "--gpu", "h100", "--gpus", "2048")
    est, par = _json("estimate", *args), _json("parallel", *args)
    mem = est["memory"]["training"]
    assert mem["layout_label"] == par["layout_label"] == est["training"]["mfu_layout"]["layout"]
    assert mem["per_gpu"] == par["per_gpu"] and mem["per_gpu_bytes"] == par["per_gpu_bytes"] and mem["fits"]
    text = CliRunner().invoke(main, ["estimate", *args]).output
    assert "ZeRO 0 over dp 1" not in text and f"Training memory per GPU: {par['layout_label']}" in text
    alone = _json("estimate", *args[:6])["memory"]["training"]  # no GPU count: one GPU, no ZeRO
    assert alone["fits"] is False and "layout_label" not in alone
