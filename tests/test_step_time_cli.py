"""`sizing parallel` with the per-operation step model: Llama 3's Table 4 layout entered exactly,
the 16K-GPU search, the constant-MFU mode, fp8 and the errors of the new options."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs import Workload
from sizing.inputs.presets import get_preset
from sizing.parallel.search import search_layout

LLAMA405 = ["parallel", "--preset", "llama3.1-405b", "--gpu", "h100", "-T", "8192", "--global-batch", "2048"]
META = ["--tp", "8", "--pp", "16", "--dp", "128", "--sp", "--schedule", "interleaved", "--v", "8", "--zero", "2"]


def _json(args: list[str]) -> dict:
    result = CliRunner().invoke(main, args + ["--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_llama3_table4_layout_entered_exactly():
    data = _json(LLAMA405 + META + ["--recompute", "full"])
    assert data["step_model"] == "per-operation"
    assert data["step"]["stage_layers"] == [7] + [8] * 14 + [7]  # 126 layers on 16 stages, first and last lighter
    assert data["fits"]
    assert abs(data["mfu"] - 0.41) <= 0.05  # Llama 3 Table 4: 41% BF16 MFU on 16,384 H100
    parts = data["step"]["seconds"]
    assert abs(sum(parts.values()) - data["step_seconds"]) < 1e-9 * data["step_seconds"]


def test_16k_gpu_search_is_at_least_as_fast_as_meta():
    meta = _json(LLAMA405 + META + ["--recompute", "full"])
    found = _json(LLAMA405 + ["--gpus", "16384"])
    assert found["fits"] and found["layout"]["world"] == 16384
    assert found["layout"]["dp"] * found["layout"]["micro_batches"] == 2048  # gradient accumulation
    assert found["step_seconds"] <= meta["step_seconds"]


def test_16k_gpu_search_time_in_process():
    """<= 0.15 s is the target on an idle core; this machine runs 8 jobs on 2 cores, so the bound
    here is 3 s and the measured figure is in docs/step-time.md."""
    cfg = get_preset("llama3.1-405b").config
    start = time.perf_counter()
    result = search_layout(cfg, Workload(8192, recompute=None, global_batch=2048, gpus=16384), gpu="h100")
    assert result.best is not None
    assert time.perf_counter() - start < 3.0


def test_constant_modes_are_named_and_mfu_has_one_meaning():
    data = _json(LLAMA405 + META + ["--recompute", "full", "--compute-efficiency", "0.5"])
    assert data["step_model"] == "constant compute efficiency 0.5"
    assert data["step"]["mfu_of_compute"] == 0.5
    # full recompute: 4 passes of hardware FLOPs against 3 of model FLOPs, plus exposed comms and bubble
    assert data["mfu"] < 0.5 * 3 / 4
    whole = _json(LLAMA405 + META + ["--recompute", "full", "--mfu", "0.4"])
    assert whole["step_model"] == "constant whole-run MFU 0.4"
    assert abs(whole["mfu"] - 0.4) < 1e-12  # the step's MFU is the constant given
    both = CliRunner().invoke(main, LLAMA405 + META + ["--mfu", "0.4", "--compute-efficiency", "0.5"])
    assert both.exit_code == 2 and "not both" in both.output and "Traceback" not in both.output


def test_fp8_on_h100_and_refused_without_an_fp8_peak():
    bf16 = _json(LLAMA405 + META + ["--recompute", "full"])
    fp8 = _json(LLAMA405 + META + ["--recompute", "full", "--precision", "fp8"])
    assert fp8["step_seconds"] < bf16["step_seconds"]
    # Transformer Engine keeps, for each GEMM weight, an fp8 copy and its fp8 transpose. A 405B layer
    # holds (16384 x 18432 QKV + 16384^2 o + 3 x 16384 x 53248 MLP) / tp 8 = 398,458,880 of them.
    # TE's default (--no-fp8-param-gather) keeps the bf16 weights too: stage 1 (8 layers) is the
    # most loaded, 2 B x 8 x 398,458,880 of copies and as much bf16, plus 8 layers' two norms
    te = _json(LLAMA405 + META + ["--recompute", "full", "--precision", "fp8", "--no-fp8-param-gather"])
    assert te["most_loaded_stage"] == 1 and bf16["per_gpu"]["fp8_weight_copies_bytes"] == 0
    assert te["per_gpu"]["fp8_weight_copies_bytes"] == 2 * 8 * 398_458_880 == 6_375_342_080
    assert te["per_gpu"]["weights_bytes"] == 2 * (8 * 398_458_880 + 8 * 2 * 16_384) == 6_375_866_368
    # Megatron's fp8 recipe (primary fp8 weights, the default) drops that bf16 copy; the last stage
    # (7 layers, the final norm, the lm_head's 128,256 / 8 x 16,384 bf16 weights) is then the heaviest
    assert fp8["most_loaded_stage"] == 15
    assert fp8["per_gpu"]["fp8_weight_copies_bytes"] == 2 * 7 * 398_458_880
    assert fp8["per_gpu"]["weights_bytes"] == 2 * (7 * 2 * 16_384 + 16_384 + 128_256 // 8 * 16_384) == 525_828_096
    args = ["parallel", "--preset", "llama2-7b", "--gpu", "a100-80gb", "--tp", "8", "--precision", "fp8"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "fp8" in result.output and "Traceback" not in result.output


def test_stage_layers_option():
    args = LLAMA405 + ["--tp", "8", "--pp", "2", "--dp", "1024", "--sp", "--fsdp", "full", "--recompute", "full"]
    data = _json(args + ["--stage-layers", "62,64"])
    assert data["step"]["stage_layers"] == [62, 64]
    for bad, message in ((["--stage-layers", "62,63"], "must sum to n_layers (126)"), (["--stage-layers", "x,1"], "")):
        result = CliRunner().invoke(main, args + bad)
        assert result.exit_code == 2 and result.output.startswith("Error:") and message in result.output
    result = CliRunner().invoke(main, LLAMA405 + ["--stage-layers", "62,64"])  # no layout: a search
    assert result.exit_code == 2 and "--stage-layers sets a layout" in result.output


def test_fp8_needs_fp8_tensor_cores_in_either_mode():
    args = ["parallel", "--preset", "llama2-7b", "--gpu", "v100", "--tp", "8", "--precision", "fp8"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "precision fp8 needs a GPU with fp8 tensor cores; v100" in result.output
