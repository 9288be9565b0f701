"""`sizing calibrate`: measured steps in, fitted stack overheads out (recovered from rows generated
with known overheads), one clear line per bad row and nothing written then, and --calibration."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.presets import get_preset
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.overhead import set_active
from sizing.parallel.steptime import StepOptions, predict_step

RUNS = [  # (preset, gpus, tp, seq, global batch, stack, precision)
    ("llama2-7b", 8, 1, 4096, 64, "megatron-core", "bf16"),
    ("llama2-13b", 16, 2, 4096, 64, "megatron-core", "fp8"),
    ("llama3-8b", 8, 1, 8192, 32, "megatron-core", "bf16"),
    ("llama2-7b", 8, 1, 2048, 128, "fsdp", "bf16"),
    ("llama3-8b", 16, 1, 4096, 64, "fsdp", "bf16"),
    ("gpt3-1.3b", 8, 1, 2048, 256, "fsdp", "bf16"),
]
TRUE = {"megatron-core": 0.31, "fsdp": 0.12}


def _row(preset, gpus, tp, seq, gb, stack, precision, source):
    cfg = get_preset(preset).config
    layout = ParallelLayout(dp=gpus // tp, tp=tp, micro_batches=gb // (gpus // tp))
    opts = StepOptions(stack=stack, precision=precision, overhead=TRUE[stack])
    seconds = predict_step(cfg, layout, seq, "h100", "none", opts).step_seconds
    return {"preset": preset, "gpu": "h100", "gpus": gpus, "tp": tp, "seq_len": seq, "global_batch": gb,
            "stack": stack, "precision": precision, "step_seconds": seconds, "source": source}  # fmt: skip


def test_calibrate_recovers_known_overheads(tmp_path):
    rows = [_row(*r, source=f"s{i % 2}") for i, r in enumerate(RUNS)]
    path = tmp_path / "steps.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "cal.json"
    result = CliRunner().invoke(main, ["calibrate", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    fitted = json.loads(out.read_text())["stacks"]
    for stack, value in TRUE.items():
        assert fitted[stack]["overhead"] == pytest.approx(value, abs=0.002)
    assert json.loads(out.read_text())["error_after"]["median_abs"] < 0.002
    assert "leave-one-source-out" in result.output


def test_bad_rows_get_one_line_each_and_nothing_is_written(tmp_path):
    good = _row(*RUNS[0], source="s")
    bad_tp = dict(good, tp=3)
    no_measure = {k: v for k, v in good.items() if k != "step_seconds"}
    bad_gpu = dict(good, gpu="v100")
    path = tmp_path / "steps.csv"
    keys = sorted(set(good) | {"name"})
    lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in (good, bad_tp, no_measure, bad_gpu)]
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "cal.json"
    result = CliRunner().invoke(main, ["calibrate", str(path), "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()
    errors = [line for line in result.output.splitlines() if line.startswith("Error: row")]
    assert [e.split(":")[1].strip() for e in errors] == ["row 2", "row 3", "row 4"]
    assert "give exactly one of step_seconds" in result.output and "v100" in result.output


def test_log_lines_of_torchtitan_and_megatron(tmp_path):
    from sizing.parallel.measured import measured_run

    base = {"preset": "llama3-8b", "gpu": "h100", "gpus": 8, "seq_len": 8192, "global_batch": 16, "stack": "fsdp"}
    tt = measured_run(dict(base, log="step: 10  loss: 8.1  memory: 30GiB  tps: 5,762  mfu: 33%"), 1, "f")
    assert tt.measured_seconds == pytest.approx(16 * 8192 / (5762 * 8))
    mg = measured_run(dict(base, log="iteration 10/100 | elapsed time per iteration (ms): 2843.5 |"), 2, "f")
    assert mg.measured_seconds == pytest.approx(2.8435)


def test_calibration_option_changes_the_step(tmp_path):
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"stacks": {"megatron-core": {"overhead": 0.5}}}))
    args = ["parallel", "--preset", "llama2-7b", "--gpu", "h100", "--gpus", "8", "--dp", "8", "--format", "json"]
    try:
        plain = json.loads(CliRunner().invoke(main, args).output)
        calibrated = json.loads(CliRunner().invoke(main, [*args, "--calibration", str(cal)]).output)
    finally:
        set_active({})
    step = plain["step"]
    expected = step["step_seconds"] - step["seconds"]["overhead"] + 0.5 * step["kernel_seconds"]
    assert calibrated["step"]["step_seconds"] == pytest.approx(expected)
    bad = CliRunner().invoke(main, [*args, "--calibration", str(tmp_path / "missing.json")])
    assert bad.exit_code == 2 and "not a calibration file" in bad.output
    assert replace(StepOptions(), overhead=0.0).overhead == 0.0
