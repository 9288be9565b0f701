"""`sizing estimate --gpus N` quotes the predicted MFU of the fastest layout on N GPUs (the plan
sizing.parallel.predict_run finds, as `sizing parallel --gpus N`), names the layout and batch, and
falls back to the constant with a note."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.formulas.flops import flop_breakdown
from sizing.inputs import Workload
from sizing.inputs.presets import get_preset
from sizing.parallel.batches import DEFAULT_BATCH_TOKENS, batches_to_try, default_global_batch
from sizing.parallel.search import search_layout


def _training(*args: str) -> dict:
    result = CliRunner().invoke(main, ["estimate", "--preset", "llama2-7b", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["training"]


def test_search_batches():
    assert (
        DEFAULT_BATCH_TOKENS == 4_194_304 and default_global_batch(4096) == 1024 and default_global_batch(8192) == 512
    )
    assert batches_to_try(4096, 64, None) == (1024,)  # 64 divides 1024
    assert batches_to_try(8192, 16384, None) == (512, 16384)  # then one sequence per GPU
    assert batches_to_try(8192, 16384, 2048) == (2048,)  # a batch given is the batch searched
    assert default_global_batch(2**40) == 1  # at least one sequence


def test_estimate_quotes_the_best_layouts_mfu():
    t = _training("--gpu", "h100", "--gpus", "64")
    cfg = get_preset("llama2-7b").config
    best = search_layout(cfg, Workload(4096, recompute=None, global_batch=1024, gpus=64), gpu="h100-sxm").best
    # the same step time, the estimate's model FLOPs (attention "full") over it
    ratio = (
        flop_breakdown(cfg, 4096, "full", "none").model_training
        / flop_breakdown(cfg, 4096, "causal", "none").model_training
    )
    assert t["mfu"] == pytest.approx(best.predicted.mfu * ratio)
    assert t["mfu_layout"]["layout"] == best.layout.label()
    assert t["mfu_layout"]["global_batch"] == 1024
    assert t["mfu_source"].startswith(
        "predicted by the per-operation step model for 64 x h100-sxm: " + best.layout.label()
    )
    assert t["mfu_layout"]["gpus"] == 64 and "model FLOPs" in t["mfu_meaning"]


def test_estimate_falls_back_to_the_constant_and_says_so():
    t = _training("--gpu", "v100", "--gpus", "64")  # no step-time constants for the V100
    assert t["mfu"] == 0.4 and t["mfu_layout"] is None
    assert t["mfu_source"].startswith("constant 0.4, assumed: no layout on 64 x v100")
    given = _training("--gpu", "h100", "--gpus", "64", "--mfu", "0.5")
    assert given["mfu"] == 0.5 and given["mfu_source"].startswith("given (--mfu)") and given["mfu_layout"] is None
    plain = _training("--gpu", "h100")
    assert plain["mfu"] == 0.4 and plain["num_gpus"] == 1
    assert (
        plain["mfu_source"] == "constant 0.4, assumed: no GPU count given (--gpus N predicts the step, layout and MFU)"
    )


def test_estimate_without_gpus_does_not_load_the_search():
    code = (
        "import sys; from click.testing import CliRunner; from sizing.cli import main; "
        "r = CliRunner().invoke(main, ['estimate', '--preset', 'llama2-7b', '--gpu', 'h100']); "
        "assert r.exit_code == 0, r.output; print('sizing.parallel.search' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
